"""dualad's public functions pickle by reference (multiprocessing, dask's workers and
concurrent.futures send functions this way), so ``pickle.loads(pickle.dumps(f)) is f``."""

import pickle
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F

NAMESPACES = (dualad, dualad.special, dualad.linalg, dualad.fft, F)


def _public_functions():
    for namespace in NAMESPACES:
        for name in getattr(namespace, "__all__", None) or dir(namespace):
            fn = getattr(namespace, name, None)
            if not name.startswith("_") and callable(fn) and not isinstance(fn, type):
                yield f"{namespace.__name__}.{name}", fn


def test_every_public_function_pickles_by_reference():
    failures = []
    for label, fn in _public_functions():
        try:
            if pickle.loads(pickle.dumps(fn)) is not fn:
                failures.append(f"{label}: a copy came back")
        except Exception as error:  # (collect all of them: one message names every failure)
            failures.append(f"{label}: {type(error).__name__}: {error}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("fn", [dualad.sin, dualad.add, dualad.special.erf, dualad.matmul])
def test_op_functions_name_their_exporting_module(fn):
    assert fn.__module__ in ("dualad", "dualad.special")
    assert pickle.loads(pickle.dumps(fn)) is fn


def test_an_op_function_runs_in_another_process():
    with ProcessPoolExecutor(1) as pool:
        out = pool.submit(dualad.sin, dualad.tensor([0.0, np.pi / 2])).result()
    assert np.allclose(out.numpy(), [0.0, 1.0])
