"""dualad.special.logsumexp: scipy's signature (axis, b, keepdims, return_sign) and PyTorch's
spellings (dim, keepdim), values against scipy, gradients against finite differences and the
softmax-weight formula, and the singular cases (all -inf, b == 0, a sum that cancels)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd, func

CALLS = [
    {},
    {"axis": 0},
    {"axis": -1, "keepdims": True},
    {"axis": (0, 1)},
    {"b": "weights"},
    {"axis": 1, "b": "row"},
    {"axis": 0, "b": "weights", "keepdims": True},
    {"b": "signed", "return_sign": True},
    {"axis": 1, "b": "signed", "return_sign": True},
    {"return_sign": True},
]


def _weights(kind, rng):
    if kind == "weights":
        return rng.uniform(0.1, 2.0, (3, 4))
    if kind == "row":
        return rng.uniform(0.1, 2.0, (4,))
    b = rng.uniform(-1.0, 1.0, (3, 4))
    b[:, 0] = 3.0  # the sums clear of 0, negative in some rows below
    b[1, 0] = -3.0
    return b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("call", CALLS, ids=[str(c) for c in CALLS])
def test_values_match_scipy(call, dtype, rng):
    a = rng.uniform(-3.0, 3.0, (3, 4)).astype(dtype)
    kwargs = dict(call)
    if "b" in kwargs:
        kwargs["b"] = _weights(kwargs["b"], rng).astype(dtype)
    expected = sp.logsumexp(a, **kwargs)
    tensors = {k: dualad.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    actual = special.logsumexp(dualad.tensor(a), **tensors)
    if not kwargs.get("return_sign"):
        actual, expected = (actual,), (expected,)
    for got, want in zip(actual, expected):
        assert got.dtype == dtype
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6 if dtype == np.float32 else 1e-13)


def test_gradient_is_the_weighted_softmax(rng):
    a = rng.uniform(-3.0, 3.0, (3, 4))
    b = _weights("weights", rng)
    at = dualad.tensor(a, requires_grad=True)
    bt = dualad.tensor(b, requires_grad=True)
    out = special.logsumexp(at, axis=1, b=bt)
    ga, gb = autograd.grad(out.sum(), (at, bt))
    lse = sp.logsumexp(a, axis=1, b=b, keepdims=True)
    np.testing.assert_allclose(ga.numpy(), b * np.exp(a - lse), rtol=1e-13)
    np.testing.assert_allclose(gb.numpy(), np.exp(a - lse), rtol=1e-13)
    # with signs: d log|s| = b exp(a) / s
    b = _weights("signed", rng)
    bt = dualad.tensor(b)
    out, sign = special.logsumexp(at, axis=1, b=bt, return_sign=True)
    (ga,) = autograd.grad(out.sum(), at)
    s = np.sum(b * np.exp(a), axis=1, keepdims=True)
    np.testing.assert_allclose(ga.numpy(), b * np.exp(a) / s, rtol=1e-12)
    np.testing.assert_array_equal(sign.detach().numpy(), np.sign(s[:, 0]))


def test_second_order_and_forward_mode(rng):
    a = dualad.tensor(rng.uniform(-1.0, 1.0, 4))
    b = dualad.tensor(rng.uniform(0.5, 2.0, 4))
    h = func.hessian(lambda t: special.logsumexp(t, b=b))(a)
    w = b.numpy() * np.exp(a.numpy())
    w = w / w.sum()
    np.testing.assert_allclose(h.numpy(), np.diag(w) - np.outer(w, w), rtol=1e-12, atol=1e-15)
    _, tangent = func.jvp(lambda t: special.logsumexp(t, b=b), (a,), (dualad.ones(4),))
    np.testing.assert_allclose(tangent.numpy(), 1.0, rtol=1e-13)


def test_vmap_matches_a_loop(rng):
    a = dualad.tensor(rng.uniform(-2.0, 2.0, (5, 3)))
    b = dualad.tensor(rng.uniform(0.5, 2.0, (5, 3)))
    out = func.vmap(lambda s, t: special.logsumexp(s, b=t))(a, b)
    rows = [special.logsumexp(a[k], b=b[k]).item() for k in range(5)]
    np.testing.assert_allclose(out.numpy(), rows, rtol=1e-14)


def test_pytorch_spellings():
    a = dualad.tensor([[0.0, 1.0], [2.0, 3.0]])
    expected = sp.logsumexp(a.numpy(), axis=1, keepdims=True)
    np.testing.assert_allclose(special.logsumexp(a, dim=1, keepdim=True).numpy(), expected)
    np.testing.assert_allclose(special.logsumexp(a, 1, keepdims=True).numpy(), expected)
    with pytest.raises(TypeError, match="both axis= and dim="):
        special.logsumexp(a, axis=0, dim=1)


def test_all_minus_inf_gives_minus_inf_and_gradient_0():
    ninf = -np.inf
    for kwargs in ({}, {"b": dualad.tensor([1.0, 2.0])}, {"return_sign": True}):
        a = dualad.tensor([ninf, ninf], requires_grad=True)
        out = special.logsumexp(a, **kwargs)
        value = out[0] if kwargs.get("return_sign") else out
        assert value.item() == ninf
        (g,) = autograd.grad(value, a)
        np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])
        if kwargs.get("return_sign"):
            assert out[1].item() == sp.logsumexp([ninf, ninf], return_sign=True)[1] == 0.0


def test_terms_with_zero_weight_are_left_out_even_at_inf():
    a = dualad.tensor([np.inf, 1.0], requires_grad=True)
    b = dualad.tensor([0.0, 2.0])
    out = special.logsumexp(a, b=b)
    np.testing.assert_allclose(out.item(), sp.logsumexp([np.inf, 1.0], b=[0.0, 2.0]))
    (g,) = autograd.grad(out, a)
    np.testing.assert_array_equal(g.numpy(), [0.0, 1.0])


def test_negative_sum_without_return_sign_is_nan_as_scipy():
    a = dualad.tensor([0.0, 1.0])
    b = dualad.tensor([1.0, -2.0])
    assert np.isnan(special.logsumexp(a, b=b).item())
    assert np.isnan(sp.logsumexp([0.0, 1.0], b=[1.0, -2.0]))


def test_a_sum_that_cancels_gives_minus_inf_and_an_infinite_gradient():
    a = dualad.tensor([0.0, 0.0], requires_grad=True)
    b = dualad.tensor([1.0, -1.0])
    with np.errstate(divide="ignore"):
        out, sign = special.logsumexp(a, b=b, return_sign=True)
        assert out.item() == -np.inf and sign.item() == 0.0
        (g,) = autograd.grad(out, a)
    assert not np.isfinite(g.numpy()).any()  # not a finite wrong number


def test_complex_input_only_without_b_and_return_sign():
    z = dualad.tensor([1.0 + 1.0j, 2.0])
    np.testing.assert_allclose(special.logsumexp(z).numpy(), sp.logsumexp(z.numpy()))
    with pytest.raises(TypeError, match="complex"):
        special.logsumexp(z, return_sign=True)
    with pytest.raises(TypeError, match="complex"):
        special.logsumexp(dualad.tensor([1.0, 2.0]), b=z)


def test_integer_input_and_weights():
    out = special.logsumexp(dualad.tensor([1, 2]), b=dualad.tensor([1, 2]))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.item(), sp.logsumexp([1, 2], b=[1, 2]))
