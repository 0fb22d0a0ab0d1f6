"""Array API conformance of dualad.array_api next to NumPy's own namespace (NumPy 2.x's main,
``linalg`` namespaces follow the standard).

Run: ``python benchmarks/array_api_conformance.py [--examples N]`` (default 50). For each
function group it prints how many of the standard's (2024.12) names each namespace has, and for
how many of the functions with a conformance case (``tests/array_api/array_api_cases.py``)
every one of N hypothesis-drawn inputs gives the reference implementation's
(``array_api_strict``) values, dtypes, shapes and exception classes. The inputs are the same
for both namespaces (one seed per function). The data-apis ``array-api-tests`` suite itself is
not installable from a package registry, so these are dualad's own cases, run against both.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

import numpy as np
from hypothesis import HealthCheck, given, seed, settings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "array_api"))

import array_api_cases as cases  # noqa: E402
import test_array_api_signatures as signatures  # noqa: E402

import dualad.array_api  # noqa: E402

NAMESPACES = {"dualad": dualad.array_api, "numpy": np}


def group_of(name: str) -> str:
    """A standard name's group, as the cases name them (names without a case: "other")."""
    if name.startswith("fft"):
        return "fft extension"
    if name.startswith("linalg"):
        return "linalg extension"
    if name in cases.CASES:
        return cases.CASES[name][0]
    if name in cases.ALL or name in ("can_cast", "finfo", "iinfo", "isdtype", "result_type"):
        return "data types"
    return "other (constants, Device, info)"


def passes(namespace, name: str, examples: int) -> tuple[bool, str]:
    """Whether every drawn input of case ``name`` agrees with the reference (and the first
    difference)."""
    failures = []
    _, strategy = cases.CASES[name]

    @seed(12345)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def run(case):
        if failures:
            return
        args, kwargs = case
        why = cases.check(namespace, name, args, kwargs)
        if why:
            failures.append(f"{name}(*{args!r}, **{kwargs!r}): {why}")

    run()
    return not failures, failures[0] if failures else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=50)
    parser.add_argument("--show", action="store_true", help="print each function's first failure")
    args = parser.parse_args()

    names = signatures.standard_names()
    present = collections.defaultdict(lambda: collections.Counter())
    for name in names:
        for label, namespace in NAMESPACES.items():
            has = cases.lookup(namespace, name) is not cases.MISSING
            present[group_of(name)][label] += has
            present[group_of(name)]["standard"] += 0 if label != "dualad" else 1

    passed = collections.defaultdict(lambda: collections.Counter())
    details = []
    start = time.perf_counter()
    for name in sorted(cases.CASES):
        group = cases.CASES[name][0]
        passed[group]["cases"] += 1
        for label, namespace in NAMESPACES.items():
            if cases.lookup(namespace, name) is cases.MISSING:
                details.append(f"{label:7s} {name}: missing")
                continue
            ok, why = passes(namespace, name, args.examples)
            passed[group][label] += ok
            if not ok:
                details.append(f"{label:7s} {why[:300]}")
    for name in cases.DTYPE_FUNCTIONS:
        passed["data types"]["cases"] += 1
        for label, namespace in NAMESPACES.items():
            why = cases.check_dtype_function(namespace, name)
            passed["data types"][label] += why is None
            if why:
                details.append(f"{label:7s} {name}: {why}")
    elapsed = time.perf_counter() - start

    columns = ("names", "dualad", "numpy", "cases", "dualad", "numpy")
    header = "{:32s} {:>6s} {:>7s} {:>6s} | {:>5s} {:>7s} {:>6s}".format("group", *columns)
    print(f"array API 2024.12 conformance, {args.examples} examples per function ({elapsed:.0f} s)")
    print("names: the standard's names in the group, and how many each namespace has;")
    print("cases: functions with a conformance case, and how many pass every example\n")
    print(header)
    print("-" * len(header))
    totals = collections.Counter()
    for group in sorted(set(present) | set(passed)):
        p, q = present[group], passed[group]
        row = (p["standard"], p["dualad"], p["numpy"], q["cases"], q["dualad"], q["numpy"])
        totals.update(dict(zip("abcdef", row)))
        print(
            f"{group:32s} {row[0]:6d} {row[1]:7d} {row[2]:6d} | {row[3]:5d} {row[4]:7d} {row[5]:6d}"
        )
    print("-" * len(header))
    t = [totals[k] for k in "abcdef"]
    print(f"{'total':32s} {t[0]:6d} {t[1]:7d} {t[2]:6d} | {t[3]:5d} {t[4]:7d} {t[5]:6d}")
    if args.show:
        print("\nfirst failure of each function:")
        print("\n".join(details))


if __name__ == "__main__":
    main()
