"""The sparsity rules of ``dualad.tracing.sparsity_rules`` through ``sparse_jacobian``: exact
patterns (equal to the nonzeros of dense ``jacfwd``) for convolutions of every stride,
padding, dilation and groups, einsum equations, broadcast stacks of matrices, scans, FFT lines
and selections; and the rules themselves where no public op reaches them (reverse scans)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dualad
from dualad.func import jacfwd, sparse_jacobian
from dualad.nn import functional as F
from dualad.tracing import sparsity_rules as rules


def _exact(f, x, exact=True):
    """The sparse Jacobian equals the dense one, its pattern holds every nonzero and (``exact``)
    nothing else."""
    dense = np.asarray(jacfwd(f)(x)).reshape(-1, x.size)
    jac = sparse_jacobian(f)
    np.testing.assert_allclose(jac(x).toarray(), dense, rtol=1e-12, atol=1e-13)
    pattern = jac.pattern.toarray()
    assert not ((dense != 0) & ~pattern).any()
    if exact:
        np.testing.assert_array_equal(pattern, dense != 0)


def _x(size, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 1.5, size)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"stride": 2},
        {"padding": 2},
        {"dilation": 2, "padding": 1},
        {"groups": 2},
        {"stride": 3, "padding": 1, "dilation": 2, "groups": 2},
    ],
)
def test_conv1d_with_a_constant_kernel(options):
    kernel = dualad.tensor(_x(4 * (4 // options.get("groups", 1)) * 3, 1).reshape(4, -1, 3))
    _exact(lambda v: F.conv1d(v.reshape(2, 4, 9), kernel, **options).reshape(-1), _x(72))


def test_conv2d_and_a_varying_kernel():
    kernel = dualad.tensor(_x(2 * 3 * 3, 2).reshape(2, 1, 3, 3))
    f = lambda v: F.conv2d(v.reshape(1, 1, 5, 6), kernel, padding=(1, 0), stride=(2, 1))
    _exact(lambda v: f(v).reshape(-1), _x(30))
    # the kernel varies too: no padding, so every kernel entry is read (exact)
    g = lambda v: F.conv1d(v[:12].reshape(1, 1, 12), v[12:].reshape(1, 1, 3))
    _exact(lambda v: g(v).reshape(-1), _x(15))


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        ("ii->i", [(4, 4)]),
        ("ij->ji", [(3, 4)]),
        ("ij,ij->i", [(3, 4), (3, 4)]),
        ("i,j->ij", [(3,), (4,)]),
        ("ijk,k->ij", [(2, 3, 4), (4,)]),
    ],
)
def test_einsum(equation, shapes):
    sizes = [int(np.prod(s)) for s in shapes]
    bounds = np.cumsum([0, *sizes])

    def f(v):
        operands = [v[a:b].reshape(s) for a, b, s in zip(bounds, bounds[1:], shapes)]
        return dualad.einsum(equation, *operands).reshape(-1)

    _exact(f, _x(int(bounds[-1])))


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((2, 3, 4), (4, 2)), ((4,), (2, 4, 3)), ((2, 1, 2, 3), (3, 3, 2)), ((2, 3), (3,))],
)
def test_broadcast_stacks_of_matrices(a_shape, b_shape):
    na = int(np.prod(a_shape))
    _exact(
        lambda v: (v[:na].reshape(a_shape) @ v[na:].reshape(b_shape)).reshape(-1),
        _x(na + int(np.prod(b_shape))),
    )


def test_scans_lines_and_selections_along_negative_dims():
    _exact(lambda v: dualad.cumsum(v.reshape(3, 4), -1).reshape(-1), _x(12))
    _exact(lambda v: dualad.cumprod(v.reshape(3, 4), -2).reshape(-1), _x(12))
    _exact(lambda v: dualad.softmax(v.reshape(3, 4), -1).reshape(-1), _x(12))
    _exact(lambda v: dualad.fft.fftn(v.reshape(2, 3, 2), dim=(0, 2)).real.reshape(-1), _x(12))
    _exact(lambda v: dualad.max(v.reshape(3, 4), -1).values, _x(12))
    _exact(lambda v: dualad.median(v.reshape(3, 5), -1).values, _x(15))


def test_reverse_scan_rule():
    identity = sp.identity(6, dtype=bool, format="csr")
    forward = rules.scan({"dim": -1, "reverse": False}, (2, 3), identity).toarray()
    backward = rules.scan({"dim": 1, "reverse": True}, (2, 3), identity).toarray()
    block = np.tril(np.ones((3, 3), dtype=bool))
    np.testing.assert_array_equal(forward, np.kron(np.eye(2, dtype=bool), block))
    np.testing.assert_array_equal(backward, np.kron(np.eye(2, dtype=bool), block.T))
    # shapes a rule does not understand give None (the caller's dense rule)
    assert rules.lines({"dim": 0}, (3, 4), (5,), identity) is None
    assert rules.matmul((2, 3), (4, 2), (2, 2), np.ones((2, 3)), np.ones((4, 2))) is None
    assert rules.einsum("...i,i->...", [(2, 3), (3,)], (2,)) is None


@pytest.mark.parametrize(
    "options", [{}, {"stride": 2}, {"padding": 1, "dilation": 2}, {"groups": 2, "stride": 2}]
)
def test_transposed_convolutions(options):
    groups = options.get("groups", 1)
    size = 4 * (4 // groups) * 3
    kernel = dualad.tensor(_x(size, 3).reshape(4, 4 // groups, 3))
    _exact(lambda v: F.conv_transpose1d(v.reshape(2, 4, 5), kernel, **options).reshape(-1), _x(40))

    def both(v):  # the kernel varies too (its entries counted whole near the borders)
        w = v[40:].reshape(4, 4 // groups, 3)
        return F.conv_transpose1d(v[:40].reshape(2, 4, 5), w, **options).reshape(-1)

    _exact(both, _x(40 + size), exact=False)
