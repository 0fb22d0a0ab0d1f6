"""Named checks of ``topk``, ``kthvalue``, ``cummax``/``cummin``, ``logcumsumexp`` and
``cdist`` beyond the op database: PyTorch's tie and NaN conventions, the singular points
(a prefix of -inf in ``logcumsumexp``, coincident rows in ``cdist``) and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dualad
from dualad import func


def test_topk_takes_ties_in_input_order_and_nan_first_like_pytorch():
    values, index = dualad.topk(dualad.tensor([1.0, 3.0, 3.0, 2.0]), 2)
    assert index.tolist() == [1, 2]
    values, index = dualad.topk(dualad.tensor([1.0, math.nan, 2.0]), 2)
    assert index.tolist() == [1, 2] and math.isnan(values.tolist()[0])
    assert dualad.topk(dualad.tensor([3.0, 1.0, 2.0]), 2, largest=False).indices.tolist() == [1, 2]


def test_cummax_points_at_the_last_position_reached_and_propagates_nan_like_pytorch():
    x = dualad.tensor([1.0, 3.0, 3.0, 2.0, 3.0, math.nan, 1.0, math.nan])
    assert dualad.cummax(x, 0).indices.tolist() == [0, 1, 2, 2, 4, 5, 5, 7]
    assert dualad.cummin(dualad.tensor([2.0, 1.0, 1.0, 3.0]), 0).indices.tolist() == [0, 1, 2, 2]


def test_cummax_gradient_accumulates_where_an_element_stays_the_maximum():
    x = dualad.tensor([[1.0, 3.0, 2.0, 5.0]], requires_grad=True)
    dualad.cummax(x, 1).values.sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0, 0.0, 1.0]]


def test_logcumsumexp_of_a_prefix_of_minus_inf_has_gradient_zero_there():
    x = dualad.tensor([-math.inf, -math.inf, 0.0, 1.0], requires_grad=True)
    y = dualad.logcumsumexp(x, 0)
    assert y.tolist()[:2] == [-math.inf, -math.inf]
    np.testing.assert_allclose(y.tolist()[2:], [0.0, np.logaddexp(0.0, 1.0)])
    (grad,) = dualad.autograd.grad(y[2:].sum(), (x,))
    expected = [0.0, 0.0, 1 + math.exp(-np.logaddexp(0, 1)), math.exp(1 - np.logaddexp(0, 1))]
    np.testing.assert_allclose(grad.numpy(), expected)
    _, tangent = func.jvp(lambda v: dualad.logcumsumexp(v, 0), (x.detach(),), (dualad.ones(4),))
    assert tangent.tolist()[:2] == [0.0, 0.0]
    np.testing.assert_allclose(tangent.numpy()[2:], [1.0, 1.0])


def test_logcumsumexp_does_not_overflow():
    x = dualad.tensor([1000.0, 1000.0, -1000.0], requires_grad=True)
    y = dualad.logcumsumexp(x, 0)
    np.testing.assert_allclose(y.tolist(), [1000.0, 1000.0 + math.log(2), 1000.0 + math.log(2)])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 1.0, 0.0])


@pytest.mark.parametrize("rows", [2, 30])  # (30: the value by matrix products)
def test_cdist_gradient_is_zero_at_coincident_rows(rows):
    a = np.random.default_rng(0).normal(size=(rows, 3))
    x1 = dualad.tensor(a, requires_grad=True)
    x2 = dualad.tensor(a[:1])  # row 0 of x1 coincides with it
    d = dualad.cdist(x1, x2)
    assert d.tolist()[0][0] == 0.0
    (grad,) = dualad.autograd.grad(d.sum(), (x1,))
    assert grad.numpy()[0].tolist() == [0.0, 0.0, 0.0]
    expected = (a[1:] - a[:1]) / np.linalg.norm(a[1:] - a[:1], axis=1, keepdims=True)
    np.testing.assert_allclose(grad.numpy()[1:], expected)
    _, tangent = func.jvp(lambda v: dualad.cdist(v, x2), (x1.detach(),), (dualad.ones(rows, 3),))
    assert tangent.tolist()[0] == [0.0]


def test_errors_name_the_op_and_the_shapes():
    with pytest.raises(RuntimeError, match=r"topk.*k \(4\).*size 3"):
        dualad.topk(dualad.ones(3), 4)
    with pytest.raises(RuntimeError, match="kthvalue"):
        dualad.kthvalue(dualad.ones(3), 0)
    with pytest.raises(RuntimeError, match="complex"):
        dualad.cummax(dualad.tensor([1j]), 0)
    with pytest.raises(RuntimeError, match=r"cdist.*\(2, 3\).*\(2, 4\)"):
        dualad.cdist(dualad.ones(2, 3), dualad.ones(2, 4))
    with pytest.raises(RuntimeError, match="p must be positive"):
        dualad.cdist(dualad.ones(2, 3), dualad.ones(2, 3), p=0)


def test_diff_matches_numpy_and_differentiates():
    a = np.random.default_rng(1).normal(size=(3, 5))
    x = dualad.tensor(a, requires_grad=True)
    got = dualad.diff(x, n=2, dim=0, append=dualad.ones(1, 5))
    np.testing.assert_allclose(got.tolist(), np.diff(a, n=2, axis=0, append=np.ones((1, 5))))
    assert x.diff().shape == (3, 4)
    assert dualad.autograd.gradcheck(lambda v: dualad.diff(v, 2, prepend=v[:, :1]), (x,))
    assert dualad.diff(dualad.tensor([True, True, False])).tolist() == [False, True]


def test_median_is_the_lower_middle_and_nan_propagates_like_pytorch():
    x = dualad.tensor([[3.0, 1.0, 2.0, 4.0], [1.0, math.nan, 0.0, 2.0]], requires_grad=True)
    values, index = dualad.median(x, 1)
    assert values.tolist()[0] == 2.0 and math.isnan(values.tolist()[1])
    assert index.tolist() == [2, 1]
    assert math.isnan(dualad.median(x).item())
    values[0].backward()
    assert x.grad.tolist()[0] == [0.0, 0.0, 1.0, 0.0]


def test_quantile_q_is_a_plain_value_and_bad_input_raises():
    x = dualad.tensor([3.0, 1.0, 2.0])
    with pytest.raises(dualad.TrackedConversionError):  # (q picks positions: no derivative)
        dualad.quantile(x, dualad.tensor(0.5, requires_grad=True))
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\]"):
        dualad.quantile(x, 1.5)
    with pytest.raises(RuntimeError, match="interpolation"):
        dualad.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(RuntimeError, match="floating-point"):
        dualad.quantile(dualad.tensor([1, 2]), 0.5)
    assert math.isnan(dualad.quantile(dualad.tensor([1.0, math.nan]), 0.5).item())
    assert dualad.nanquantile(dualad.tensor([1.0, math.nan, 3.0]), 0.5).item() == 2.0
