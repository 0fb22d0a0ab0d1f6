"""``chunk_size="auto"`` with ``max_memory`` on jacrev / jacfwd / hessian / vmap: the measured
peak (tracemalloc, which sees NumPy's arrays) of the whole call stays within the budget where
the unchunked call's does not, the result is the unchunked one, and bad budgets raise;
``progress=True`` (tqdm)."""

from __future__ import annotations

import gc
import sys
import threading
import tracemalloc

import numpy as np
import pytest
from test_chunk_size import HIDDEN, RNG, mlp, peak_mib, weights  # (tests/func's helpers)

import dualad
from dualad.func import hessian, jacfwd, jacrev, vmap
from dualad.vmap.chunking import parse_memory

BUDGET = 3 * 2**20


def peak_bytes(fn):
    mib, result = peak_mib(fn)
    return mib * 2**20, result


def cases():
    f = mlp(8, 200)  # jacrev: 200 cotangents
    x = dualad.tensor(RNG.standard_normal(8))
    yield "jacrev", lambda **kw: jacrev(f, **kw)(x)
    g = mlp(200, 8)  # jacfwd: 200 tangents
    y = dualad.tensor(RNG.standard_normal(200))
    yield "jacfwd", lambda **kw: jacfwd(g, **kw)(y)
    w = weights(HIDDEN, 64)  # hessian: 64 tangents through a backward pass of width HIDDEN
    z = dualad.tensor(RNG.standard_normal(64))
    yield "hessian", lambda **kw: hessian(lambda v: (dualad.tanh(w @ v) ** 2).sum(), **kw)(z)
    h = mlp(8, 4)  # vmap: 200 examples
    xs = dualad.tensor(RNG.standard_normal((200, 8)))
    yield "vmap", lambda **kw: vmap(h, **kw)(xs)


CASES = list(cases())


@pytest.mark.parametrize("name, run", CASES, ids=[c[0] for c in CASES])
def test_auto_chunks_keep_the_measured_peak_within_the_budget(name, run):
    whole_peak, whole = peak_bytes(run)
    assert whole_peak > 1.5 * BUDGET, (name, whole_peak)  # the case needs chunking
    peak, chunked = peak_bytes(lambda: run(chunk_size="auto", max_memory="3MiB"))
    assert peak <= BUDGET, (name, peak)
    np.testing.assert_allclose(chunked.numpy(), whole.numpy(), rtol=1e-12, atol=1e-12)
    assert not tracemalloc.is_tracing()


def test_auto_uses_the_budget_rather_than_the_smallest_chunks():
    _, run = CASES[0]
    small, _ = peak_bytes(lambda: run(chunk_size="auto", max_memory=BUDGET))
    large, _ = peak_bytes(lambda: run(chunk_size="auto", max_memory=4 * BUDGET))
    assert large > 1.5 * small  # larger chunks (faster) when the budget allows them


def test_auto_without_a_budget_and_on_small_problems():
    x = dualad.tensor([0.5, 1.0, 2.0])
    expected = jacrev(dualad.sin)(x)
    for transform in (jacrev, jacfwd):
        got = transform(dualad.sin, chunk_size="auto")(x)
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    got = vmap(lambda v: v * 2, chunk_size="auto")(np.arange(3.0))
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, [0.0, 2.0, 4.0])
    one = jacfwd(lambda v: v**2, chunk_size="auto", max_memory="1MB")(dualad.tensor([3.0]))
    np.testing.assert_array_equal(one.numpy(), [[6.0]])


def test_auto_composes_with_pytrees_grad_and_randomness():
    def f(x, y):
        return {"a": dualad.sin(x) * y.sum(), "b": (x[:, None] * y).sum(0)}

    x, y = dualad.tensor(RNG.standard_normal(30)), dualad.tensor(RNG.standard_normal(20))
    for transform in (jacrev, jacfwd):
        whole = transform(f, argnums=(0, 1))(x, y)
        auto = transform(f, argnums=(0, 1), chunk_size="auto", max_memory="200kB")(x, y)
        for key in ("a", "b"):
            for k in range(2):
                np.testing.assert_allclose(auto[key][k].numpy(), whole[key][k].numpy(), rtol=1e-13)
    # differentiated through (the chunks' results are tracked: joined by cat)
    xg = dualad.tensor(RNG.standard_normal(30), requires_grad=True)
    loss = jacrev(dualad.sin, chunk_size="auto", max_memory="1MB")(xg).sum()
    (grad,) = dualad.autograd.grad(loss, xg)
    np.testing.assert_allclose(grad.numpy(), -np.sin(xg.detach().numpy()), rtol=1e-13)
    # inside vmap (the basis rows are batched values) and under grad of vmap
    xs = dualad.tensor(RNG.standard_normal((5, 6)))
    inner = vmap(jacfwd(dualad.sin, chunk_size="auto", max_memory="10MB"))(xs)
    np.testing.assert_array_equal(inner.numpy(), vmap(jacrev(dualad.sin))(xs).numpy())
    outer = dualad.func.grad(lambda v: vmap(dualad.sin, chunk_size="auto")(v).sum())(xs)
    np.testing.assert_allclose(outer.numpy(), np.cos(xs.numpy()), rtol=1e-14)
    # randomness="same": every chunk draws what the first one drew
    dualad.manual_seed(0)
    noisy = jacfwd(
        lambda v: v * dualad.rand(()), randomness="same", chunk_size="auto", max_memory="1MB"
    )(dualad.tensor(np.ones(12)))
    diag = np.diag(noisy.numpy())
    assert np.all(diag == diag[0]) and np.count_nonzero(noisy.numpy()) == 12


def test_a_tracing_caller_keeps_its_own_peak():
    _, run = CASES[0]
    gc.collect()
    tracemalloc.start()
    try:
        big = np.ones(4 * 2**20 // 8)  # 4 MiB, freed before the call
        del big
        run(chunk_size="auto", max_memory=BUDGET)
        assert tracemalloc.is_tracing()
        assert tracemalloc.get_traced_memory()[1] >= 4 * 2**20
    finally:
        tracemalloc.stop()


def test_a_budget_too_small_for_one_row_raises():
    _, run = CASES[0]
    with pytest.raises(ValueError, match=r"jacrev: max_memory=.* is too small.*one row"):
        run(chunk_size="auto", max_memory="100kB")
    assert not tracemalloc.is_tracing()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1GB", 10**9),
        ("512MiB", 512 * 2**20),
        ("1.5 kB", 1500),
        ("2gib", 2 * 2**30),
        ("100", 100),
        ("1e6B", 10**6),
        (4096, 4096),
        (1e9, 10**9),
    ],
)
def test_memory_sizes(text, expected):
    assert parse_memory(text, "jacrev") == expected


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "hessian", "vmap"])
def test_bad_chunking_arguments(transform):
    make = {"jacrev": jacrev, "jacfwd": jacfwd, "hessian": hessian, "vmap": vmap}[transform]
    with pytest.raises(ValueError, match=rf"{transform}: chunk_size must be None, a positive int"):
        make(dualad.sin, chunk_size="big")
    with pytest.raises(ValueError, match="positive number of bytes, got -1"):
        make(dualad.sin, chunk_size="auto", max_memory=-1)
    with pytest.raises(ValueError, match=r"max_memory='1XB' is not a memory size"):
        make(dualad.sin, chunk_size="auto", max_memory="1XB")
    for bad in ([1], True, None.__class__):
        with pytest.raises(TypeError, match="max_memory must be a number of bytes"):
            make(dualad.sin, chunk_size="auto", max_memory=bad)
    with pytest.raises(ValueError, match="max_memory='1GB' is the budget of chunk_size='auto'"):
        make(dualad.sin, chunk_size=4, max_memory="1GB")
    with pytest.raises(ValueError, match="budget of chunk_size='auto'"):
        make(dualad.sin, max_memory="1GB")
    with pytest.raises(TypeError, match="progress must be True or False"):
        make(dualad.sin, progress="yes")
    with pytest.raises(ValueError, match="max_memory must be a positive number of bytes"):
        make(dualad.sin, chunk_size="auto", max_memory=float("nan"))


def test_progress_bar(capsys):
    pytest.importorskip("tqdm")
    x = dualad.tensor(np.arange(6.0))
    got = jacfwd(dualad.sin, chunk_size=2, progress=True)(x)
    np.testing.assert_allclose(got.numpy(), np.diag(np.cos(np.arange(6.0))))
    err = capsys.readouterr().err
    assert "jacfwd" in err and "6/6" in err
    vmap(dualad.sin, chunk_size="auto", progress=True)(x)
    assert "vmap" in capsys.readouterr().err
    hessian(lambda v: (v**3).sum(), progress=True)(x)
    assert "hessian" in capsys.readouterr().err


def test_progress_without_tqdm_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(ImportError, match=r"jacrev: progress=True .* `pip install tqdm`"):
        jacrev(dualad.sin, chunk_size=2, progress=True)(dualad.tensor([1.0, 2.0, 3.0]))


@pytest.mark.gpu
def test_auto_on_the_gpu_keeps_the_device_peak_within_the_budget():
    import cupy

    class Peak(cupy.cuda.MemoryHook):
        """The peak of the bytes CuPy's pool hands out (measured here, not by dualad)."""

        name = "test_peak"

        def __init__(self):
            self.used = self.peak = 0

        def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id):
            self.used += mem_size
            self.peak = max(self.peak, self.used)

        def free_postprocess(self, device_id, mem_size, mem_ptr, pmem_id):
            self.used -= mem_size

    w1 = weights(1 << 14, 8).cuda()  # 128 KiB per basis vector per op
    w2 = weights(256, 1 << 14).cuda()
    x = dualad.tensor(RNG.standard_normal(8)).cuda()

    def f(v):
        return w2 @ dualad.tanh(w1 @ v)

    budget = 32 * 2**20
    with Peak() as whole_peak:
        whole = jacrev(f)(x)
    assert whole_peak.peak > 1.5 * budget
    with Peak() as auto_peak:
        auto = jacrev(f, chunk_size="auto", max_memory=budget)(x)
    assert auto_peak.peak <= budget, auto_peak.peak
    assert auto.device == "cuda:0"
    np.testing.assert_allclose(auto.cpu().numpy(), whole.cpu().numpy(), rtol=1e-12, atol=1e-12)


def test_auto_in_several_threads_at_once():
    _, run = CASES[0]
    expected = run().numpy()
    results = []

    def work():
        results.append(run(chunk_size="auto", max_memory=BUDGET).numpy())

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and not tracemalloc.is_tracing()
    for result in results:
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)
