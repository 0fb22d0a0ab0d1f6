"""unfold/fold, adaptive pooling and max_unpool of ``dualad.nn.functional``: the values at
PyTorch's conventions (ties, NaN, repeated indices), the adjoint pair, and bad input.

Values against loops, gradients against finite differences, JVPs and vmap are checked for every
sample by the registry tests from ``dualad/testing/opdb/nn_primitives.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.testing.opdb.nn_primitives import ref_adaptive_avg, ref_fold, ref_unfold


def _t(values, **kwargs):
    return dualad.tensor(np.asarray(values, dtype=float), **kwargs)


def test_unfold_and_fold_are_adjoint():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 6, 5))
    kw = {"kernel_size": (3, 2), "dilation": (2, 1), "padding": 1, "stride": (1, 2)}
    cols = F.unfold(_t(x), **kw).numpy()
    c = rng.normal(size=cols.shape)
    back = F.fold(_t(c), (6, 5), **kw).numpy()
    assert np.allclose((cols * c).sum(), (x * back).sum())
    assert np.allclose(cols, ref_unfold(x, **kw))
    assert np.allclose(back, ref_fold(c, (6, 5), **kw))


def test_unfold_gradient_is_fold_of_the_cotangent():
    x = _t(np.arange(16.0).reshape(1, 1, 4, 4), requires_grad=True)
    F.unfold(x, 2).sum().backward()
    # each pixel counts once per block holding it
    assert np.array_equal(
        x.grad.numpy()[0, 0], [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2], [1, 2, 2, 1]]
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: F.unfold(dualad.ones(1, 1, 2, 2, 2), 2), "Expected 3D or 4D"),
        (lambda: F.unfold(dualad.ones(1, 1, 3, 3), 4), "calculated shape of the array"),
        (lambda: F.unfold(dualad.ones(1, 1, 3, 3), (2, 2, 2)), "kernel_size equals to 2"),
        (lambda: F.unfold(dualad.ones(1, 1, 3, 3), 0), "kernel size should be greater"),
        (lambda: F.unfold(dualad.ones(1, 1, 3, 3), 2, stride=0), "stride should be greater"),
        (lambda: F.unfold(dualad.ones(1, 1, 3, 3), 2, padding=-1), "padding should be non"),
        (lambda: F.fold(dualad.ones(1, 5, 4), (3, 3), 2), "divisible by the product"),
        (lambda: F.fold(dualad.ones(1, 4, 5), (3, 3), 2), r"sliding blocks 2 \* 2 = 4"),
        (lambda: F.fold(dualad.ones(1, 4, 4, 1), (3, 3), 2), "Expected 2D or 3D"),
        (lambda: F.fold(dualad.ones(4, 4), (1, 1), 2), r"sliding blocks 0 \* 0 = 0"),
    ],
)
def test_unfold_and_fold_reject_bad_geometry(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_fold_of_an_unbatched_input():
    out = F.fold(dualad.ones(4, 4), (3, 3), 2)
    assert out.shape == (1, 3, 3)


def test_adaptive_windows_follow_pytorchs_rule():
    # L = 5, out = 3: [0, 2), [1, 4), [3, 5)
    x = _t([[1.0, 2.0, 3.0, 4.0, 5.0]])
    assert np.allclose(F.adaptive_avg_pool1d(x, 3).numpy(), [[1.5, 3.0, 4.5]])
    values, indices = F.adaptive_max_pool1d(_t([[1.0, 5.0, 3.0, 4.0, 2.0]]), 3, True)
    assert np.array_equal(values.numpy(), [[5.0, 5.0, 4.0]])
    assert np.array_equal(indices.numpy(), [[1, 1, 3]])


def test_adaptive_avg_pool_matches_loops_with_none_and_growing_sizes():
    x = np.random.default_rng(1).normal(size=(2, 3, 5, 4))
    out = F.adaptive_avg_pool2d(_t(x), (None, 7)).numpy()
    assert out.shape == (2, 3, 5, 7)
    assert np.allclose(out, ref_adaptive_avg(x, (None, 7), nd=2))


def test_adaptive_avg_pool_of_complex_input():
    x = np.arange(6.0).reshape(1, 6) * (1 + 2j)
    out = F.adaptive_avg_pool1d(dualad.tensor(x), 2).numpy()
    assert np.allclose(out, [[1 + 2j, 4 + 8j]])


def test_adaptive_max_pool_ties_pick_the_first_and_nan_the_last():
    x = _t([[[0.0, 1.0, 0.0, 1.0, 0.0]]], requires_grad=True)
    values, indices = F.adaptive_max_pool1d(x, 1, return_indices=True)
    assert indices.item() == 1
    values.sum().backward()
    assert np.array_equal(x.grad.numpy(), [[[0.0, 1.0, 0.0, 0.0, 0.0]]])
    _, indices = F.adaptive_max_pool1d(_t([[1.0, np.nan, 2.0, np.nan, 0.0]]), 2, True)
    assert np.array_equal(indices.numpy(), [[1, 3]])


def test_adaptive_pool_of_empty_output_size():
    x = dualad.ones(2, 3, 4)
    assert F.adaptive_avg_pool1d(x, 0).shape == (2, 3, 0)
    values, indices = F.adaptive_max_pool1d(x, 0, True)
    assert values.shape == indices.shape == (2, 3, 0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: F.adaptive_avg_pool2d(dualad.ones(5), 2), r"Expected 3D or 4D tensor"),
        (lambda: F.adaptive_max_pool3d(dualad.ones(2, 2), 1), r"Expected 4D or 5D tensor"),
        (lambda: F.adaptive_avg_pool1d(dualad.ones(5), 2), "Expected 2 to 3 dimensions"),
        (lambda: F.adaptive_avg_pool2d(dualad.ones(1, 3, 3), (2,)), "output_size must be 2"),
        (lambda: F.adaptive_max_pool2d(dualad.ones(1, 0, 3), 2), "non-zero size"),
        (lambda: F.adaptive_avg_pool1d(dualad.ones(1, 3), -1), "non-negative"),
        (lambda: F.adaptive_max_pool1d(dualad.ones(1, 3, dtype="int64"), 1), "not supported"),
    ],
)
def test_adaptive_pools_reject_bad_input(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_max_unpool_inverts_max_pool_on_the_maxima():
    x = dualad.arange(16.0).reshape(1, 4, 4)
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    out = F.max_unpool2d(values, indices, 2).numpy()
    expected = np.zeros((1, 4, 4))
    expected[0, 1::2, 1::2] = [[5, 7], [13, 15]]
    assert np.array_equal(out, expected)
    assert F.max_unpool2d(values, indices, 2, output_size=(5, 5)).shape == (1, 5, 5)


def test_max_unpool_repeated_index_last_write_wins_and_alone_gets_the_gradient():
    # overlapping windows choose the element 3.0 twice: both copies aim at position 1
    values = _t([[[3.0, 4.0, 2.0]]], requires_grad=True)
    indices = dualad.tensor(np.array([[[1, 1, 2]]]))
    out = F.max_unpool1d(values, indices, 2, stride=1)
    assert np.array_equal(out.detach().numpy(), [[[0.0, 4.0, 2.0, 0.0]]])
    out.sum().backward()
    assert np.array_equal(values.grad.numpy(), [[[0.0, 1.0, 1.0]]])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda v, i: F.max_unpool2d(v, i, 2, output_size=(7, 7)), ValueError, "between 2 and 6"),
        (lambda v, i: F.max_unpool2d(v, i, 2, output_size=(5,)), ValueError, "2 or 4 elements"),
        (lambda v, i: F.max_unpool2d(v, i + 100, 2), RuntimeError, "invalid max index: 1"),
        (lambda v, i: F.max_unpool2d(v, i[:1], 2), RuntimeError, "same as that of the input"),
        (lambda v, i: F.max_unpool2d(v[0, 0], i[0, 0], 2), RuntimeError, "3d or 4d Tensor"),
        (lambda v, i: F.max_unpool2d(v, v, 2), RuntimeError, "should be type int64"),
    ],
)
def test_max_unpool_rejects_bad_input(call, error, message):
    x = dualad.tensor(np.random.default_rng(2).normal(size=(2, 3, 4, 4)))
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    with pytest.raises(error, match=message):
        call(values, indices)


def test_interpolate_area_is_adaptive_average_pooling():
    # PyTorch 2.13's values
    x = dualad.arange(10.0).reshape(1, 1, 10)
    assert np.allclose(F.interpolate(x, size=4, mode="area").numpy(), [[[1.0, 3.0, 6.0, 8.0]]])
    assert np.allclose(F.interpolate(x, scale_factor=0.45, mode="area").numpy(), [[[1, 3, 6, 8]]])
    y = F.interpolate(dualad.arange(12.0).reshape(1, 1, 3, 4), scale_factor=(1.5, 0.5), mode="area")
    assert np.allclose(y.numpy()[0, 0], [[0.5, 2.5], [2.5, 4.5], [6.5, 8.5], [8.5, 10.5]])
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=4, mode="area", align_corners=True)
