"""Version counters: bumped by every in-place op, shared by views and detached aliases,
checked when saved tensors are unpacked.

Ported from PyTorch's test/test_autograd.py (spec/reverse.md ATTR-10, ATTR-12, INPL-1, 2, 6).
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import autograd


def test_version_counter():
    x = dualad.randn(1, 2)

    # In-place op bumps version
    x_saved_version = x._version
    x.add_(1).add_(1)
    assert x._version > x_saved_version

    # Differentiable view shares version counter
    xz = x[:]
    assert x._version == xz._version
    xz.add_(1)
    assert x._version == xz._version

    # `x.data = y` preserves version counter of `x`
    x_saved_version = x._version
    x.data = dualad.randn(2, 3)
    assert x._version == x_saved_version
    x.add_(1)
    assert x._version > x_saved_version
    # Make sure `x` is still using the same version counter it shares with `xz`
    assert x._version == xz._version

    # In-place op on `xz` also updates version of `x`,
    # because they share the version counter
    xz.add_(1)
    assert x._version == xz._version


def test_version_counter_counts_each_inplace_op():
    x = dualad.zeros(3)
    assert x._version == 0
    x.add_(1)
    assert x._version == 1
    x.mul_(2).sub_(1)
    assert x._version == 3
    x[0] = 5.0
    assert x._version == 4
    x.zero_()
    x.fill_(1.0)
    x.copy_(dualad.ones(3))
    assert x._version == 7
    x += 1
    x *= 2
    x -= 1
    x /= 2
    assert x._version == 11


def test_out_of_place_ops_do_not_bump():
    x = dualad.ones(3)
    x.add(1)
    x * 2
    x.clone()
    x[1:]
    x.detach()
    assert x._version == 0


def test_increment_version():
    a = dualad.rand(5, requires_grad=True)
    v = a._version
    autograd.graph.increment_version(a)
    assert a._version == v + 1

    a = dualad.zeros(5, dtype=dualad.int32)
    v = a._version
    autograd.graph.increment_version(a)
    assert a._version == v + 1


def test_increment_version_invalidates_saved():
    a = dualad.rand(5, requires_grad=True)
    y = (a * a).sum()
    autograd.graph.increment_version(a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_views_and_detach_share_the_counter():
    x = dualad.ones(2, 3)
    views = [x[0], x.view(6), x.transpose(0, 1), x.narrow(1, 1, 2), x.select(1, 0), x.detach()]
    x.mul_(2)
    assert all(v._version == 1 for v in views)
    views[1].add_(1)
    assert x._version == 2
    assert all(v._version == 2 for v in views)
    # a view of a view also shares it
    w = views[0][1:]
    w.sub_(1)
    assert x._version == 3 == w._version


def test_data_is_outside_the_version_counter():
    # writes through .data are invisible to autograd (as in torch)
    x = dualad.ones(3, requires_grad=True)
    y = (x * x).sum()
    x.data.mul_(2)
    assert x._version == 0
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0, 4.0])


def test_saved_output_version():
    # saving the output of an in-place op is fine (INPL-2); changing it afterwards is not
    x = dualad.ones(3, requires_grad=True)
    z = x * 1
    w = z.exp_()  # exp saves its result: the version after the op
    w.sum().backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, np.e))
    w.add_(1)
    with pytest.raises(RuntimeError, match="which is output 0 of ExpBackward0"):
        w.sum().backward()


def test_version_message_names_input():
    a = dualad.ones(2, requires_grad=True)
    b = a * 1
    c = b.sin()
    b.add_(1)
    with pytest.raises(RuntimeError) as info:
        c.sum().backward()
    text = str(info.value)
    assert "which is input 0 of SinBackward0, is at version 1; expected version 0 instead." in text


def test_setitem_bumps_version():
    y = dualad.ones(4) * 1
    v = y._version
    y[1] = 2
    assert y._version == v + 1
    y[[0, 2]] = dualad.tensor([5.0, 6.0])
    assert y._version == v + 2
    y[y > 5] = 0.0
    assert y._version == v + 3
    np.testing.assert_allclose(y.detach().numpy(), [5.0, 2.0, 0.0, 1.0])


def test_detach_then_inplace_invalidates_saved():
    x = dualad.tensor(3.0, requires_grad=True)
    y = x**2
    z = x.detach()
    z.zero_()
    with pytest.raises(RuntimeError, match="has been modified by an inplace"):
        y.backward()


def test_increment_version_inference_tensor():
    if not hasattr(dualad.Tensor, "is_inference"):
        pytest.skip("dualad has no inference tensors yet (inference_mode only turns grad off)")
    with dualad.inference_mode():
        a = dualad.rand(5, requires_grad=True)
    with pytest.raises(RuntimeError, match="update to inference tensor outside InferenceMode"):
        autograd.graph.increment_version(a)
