"""dualad.optimize against scipy.optimize's finite differences: evaluations and wall time.

Run: ``python benchmarks/optimize_evaluations.py`` (``--repeats N``, default 3). With JAX
importable (``PYTHONPATH=. /root/.venvs/ad-peers/bin/python benchmarks/optimize_evaluations.py``)
it adds ``jax.scipy.optimize.minimize`` (BFGS, jitted) and scipy with a jitted
``jax.value_and_grad`` as the peers' columns.

``dualad jit=True`` rows run ``minimize(..., jit=True)`` (their "calls" are the traces).
For each problem and method it prints scipy's counts (``nfev``/``njev``/``nhev``), the calls of
the user's function, the best wall time of ``--repeats`` runs (interleaved), and the optimum's
distance to the reference. The problems: Rosenbrock (n = 2, 100), a logistic regression
(1000 points, 20 features + bias, as a dict of parameters), an exponential fit with
``least_squares`` (30 residuals) and a constrained problem under trust-constr.
"""

from __future__ import annotations

import os

# One BLAS thread: BFGS's own n x n updates, on a shared machine, otherwise spend their time in
# thread contention and swamp what is compared (set before NumPy starts its BLAS).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.optimize as so  # noqa: E402
from scipy.optimize import NonlinearConstraint  # noqa: E402

import dualad  # noqa: E402
from dualad import optimize  # noqa: E402


class Counted:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args):
        self.calls += 1
        return self.fn(*args)


def rosen(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def rosen_start(n):
    return np.where(np.arange(n) % 2 == 0, -1.2, 1.0)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((1000, 20))
Y = np.where(X @ RNG.standard_normal(20) + 0.3 * RNG.standard_normal(1000) > 0, 1.0, -1.0)


def logistic(p):
    margins = Y * (X @ p["w"] + p["b"])
    return dualad.logaddexp(0.0, -margins).mean() + 1e-3 * (p["w"] ** 2).sum()


def logistic_np(v):
    margins = Y * (X @ v[:20] + v[20])
    return np.logaddexp(0.0, -margins).mean() + 1e-3 * (v[:20] ** 2).sum()


T = np.linspace(0.0, 3.0, 30)
DATA = 2.5 * np.exp(-1.3 * T) + 0.5


def decay(p):
    return p[0] * dualad.exp(-p[1] * T) + p[2] - DATA


def decay_np(p):
    return p[0] * np.exp(-p[1] * T) + p[2] - DATA


def best_time(run, repeats):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return min(times), out


def row(problem, method, who, res, calls, seconds, error):
    counts = "/".join(str(res.get(k, "-")) for k in ("nfev", "njev", "nhev"))
    print(
        f"{problem:<22} {method:<13} {who:<22} {counts:>13} {calls:>7} "
        f"{seconds * 1e3:>9.1f} ms  {error:.1e}"
    )


def compare(problem, method, ours, theirs, reference, repeats, peers=(), label="scipy 2-point"):
    """Interleave the runs (ours, scipy's finite differences, peers) ``repeats`` times."""
    entries = [("dualad.optimize", ours), (label, theirs), *peers]
    results = {name: [] for name, _ in entries}
    for _ in range(repeats):
        for name, make in entries:
            counted_run = make()
            start = time.perf_counter()
            res, calls = counted_run()
            results[name].append((time.perf_counter() - start, res, calls))
    for name, _ in entries:
        seconds = min(t for t, _, _ in results[name])
        _, res, calls = results[name][-1]
        x = res.x if not isinstance(res.x, dict) else np.append(res.x["w"], res.x["b"])
        row(problem, method, name, res, calls, seconds, np.abs(np.asarray(x) - reference).max())


def counted_minimize(fun, x0, **kw):
    def make():
        counted = Counted(fun)

        def run():
            return optimize.minimize(counted, x0, **kw), counted.calls

        return run

    return make


def counted_scipy(fun, x0, call=so.minimize, **kw):
    def make():
        counted = Counted(fun)

        def run():
            return call(counted, x0, **kw), counted.calls

        return run

    return make


def jax_peers(fun_np_like, x0):
    """JAX's own BFGS and scipy with a jitted jax.value_and_grad, when JAX is installed."""
    try:
        import jax
        import jax.numpy as jnp
        import jax.scipy.optimize as jso
    except ImportError:
        return ()
    jax.config.update("jax_enable_x64", True)
    value_and_grad = jax.jit(jax.value_and_grad(lambda v: fun_np_like(v, jnp)))
    value_and_grad(jnp.asarray(x0))  # (compiled once, outside the timings)
    solve = jax.jit(lambda v: jso.minimize(lambda u: fun_np_like(u, jnp), v, method="BFGS"))
    solve(jnp.asarray(x0))

    def jax_bfgs():
        def run():
            res = solve(jnp.asarray(x0))
            return so.OptimizeResult(
                x=np.asarray(res.x), nfev=int(res.nfev), njev=int(res.njev)
            ), -1

        return run

    def scipy_with_jax():
        counted = Counted(lambda v: tuple(np.asarray(a) for a in value_and_grad(v)))

        def run():
            return so.minimize(counted, x0, jac=True, method="BFGS"), counted.calls

        return run

    return (("jax.scipy BFGS (jit)", jax_bfgs), ("scipy + jax grad (jit)", scipy_with_jax))


def rosen_generic(v, xp):
    return xp.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1.0 - v[:-1]) ** 2)


def logistic_generic(v, xp):
    margins = Y * (X @ v[:20] + v[20])
    return xp.mean(xp.logaddexp(0.0, -margins)) + 1e-3 * xp.sum(v[:20] ** 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    repeats = parser.parse_args().repeats
    print(
        f"{'problem':<22} {'method':<13} {'who':<22} {'nfev/njev/nhev':>13} {'calls':>7} "
        f"{'best time':>12}  |x - x*|"
    )
    for n in (2, 100):
        x0, ones = rosen_start(n), np.ones(n)
        for method in ("BFGS", "L-BFGS-B"):
            peers = [("dualad jit=True", counted_minimize(rosen, x0, method=method, jit=True))]
            if method == "BFGS":
                peers += jax_peers(rosen_generic, x0)
            compare(
                f"rosenbrock n={n}",
                method,
                counted_minimize(rosen, x0, method=method),
                counted_scipy(so.rosen, x0, method=method),
                ones,
                repeats,
                peers,
            )
        compare(
            f"rosenbrock n={n}",
            "Newton-CG",
            counted_minimize(rosen, x0, method="Newton-CG", hessp=True),
            # (Newton-CG needs a gradient: scipy's run gets the exact one, and differences
            # of gradients for its Hessian-vector products)
            counted_scipy(so.rosen, x0, method="Newton-CG", jac=so.rosen_der),
            ones,
            repeats,
            label="scipy exact jac, FD hessp",
        )
    reference = so.minimize(logistic_np, np.zeros(21), method="BFGS", jac="3-point").x
    x0 = {"w": np.zeros(20), "b": np.float64(0.0)}
    for method in ("BFGS", "L-BFGS-B", "trust-exact"):
        theirs = counted_scipy(logistic_np, np.zeros(21), method=method)
        label = "scipy 2-point"
        if method == "trust-exact":  # (it needs exact derivatives: scipy's run is trust-constr)
            theirs = counted_scipy(logistic_np, np.zeros(21), method="trust-constr")
            label = "scipy 2-point t-constr"
        peers = [("dualad jit=True", counted_minimize(logistic, x0, method=method, jit=True))]
        if method == "BFGS":
            peers += jax_peers(logistic_generic, np.zeros(21))
        compare(
            "logistic 1000x21",
            method,
            counted_minimize(logistic, x0, method=method),
            theirs,
            reference,
            repeats,
            peers,
            label=label,
        )
    start = np.array([1.0, 1.0, 0.0])
    for method in ("trf", "lm"):
        compare(
            "exp fit (30 residuals)",
            method,
            lambda method=method: _least_squares(decay, start, method),
            counted_scipy(decay_np, start, call=so.least_squares, method=method),
            np.array([2.5, 1.3, 0.5]),
            repeats,
        )
    optimum = np.array([2**-0.5, 2**-0.5, 3 - 2**0.5])
    ours_constraints = [
        NonlinearConstraint(lambda v: v.sum(), 3.0, 3.0),
        NonlinearConstraint(lambda v: (v[:2] ** 2).sum(), -np.inf, 1.0),
    ]
    compare(
        "constrained (3 vars)",
        "trust-constr",
        counted_minimize(
            lambda v: ((v - 2.0) ** 2).sum(),
            np.array([0.1, 0.2, 0.5]),
            method="trust-constr",
            constraints=ours_constraints,
        ),
        counted_scipy(
            lambda v: ((v - 2.0) ** 2).sum(),
            np.array([0.1, 0.2, 0.5]),
            method="trust-constr",
            constraints=ours_constraints,
        ),
        optimum,
        repeats,
    )


def _least_squares(fun, x0, method):
    counted = Counted(fun)

    def run():
        return optimize.least_squares(counted, x0, method=method), counted.calls

    return run


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore", UserWarning)  # (scipy's quasi-Newton on linear constraints)
    main()
