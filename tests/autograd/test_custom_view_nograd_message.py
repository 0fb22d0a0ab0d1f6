"""A view returned by a custom Function called with no input requiring grad has no grad_fn: when
it (or its base) is then written in place with grad, PyTorch's error starts "A view was created
in no_grad mode and ..." and goes on with the custom-Function sentence. dualad's said "A view its
base or another view of its base has been modified inplace" (no verb; not PyTorch's text), which
the composition fuzz test (checkpoint route, a Function's view of a non-differentiable output
written in place) took for an unexpected error.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import dualad
from dualad.autograd import Function

CUSTOM = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function."
)


class TailView(Function):
    @staticmethod
    def forward(ctx, x):
        return x[1:]

    @staticmethod
    def backward(ctx, g):
        out = dualad.zeros(g.shape[0] + 1, dtype=g.dtype)
        out[1:] = g
        return out


def test_base_written_then_view_used():
    z = dualad.tensor(np.arange(4.0))  # (no grad: the Function records nothing)
    x = dualad.tensor(np.ones(4), requires_grad=True)
    v = TailView.apply(z)
    assert v.grad_fn is None
    z.add_(x)
    expected = (
        "A view was created in no_grad mode and its base or another view of its base has been "
        f"modified inplace with grad mode enabled. {CUSTOM}"
    )
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        v.reshape(-1)


def test_view_written():
    z = dualad.tensor(np.arange(4.0))
    x = dualad.tensor(np.ones(3), requires_grad=True)
    v = TailView.apply(z)
    expected = (
        "A view was created in no_grad mode and is being modified inplace with grad mode "
        f"enabled. {CUSTOM}"
    )
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        v.add_(x)


def test_with_grad_fn_the_message_names_the_node():
    """(unchanged) a Function that records: the message names its backward node."""
    z = dualad.tensor(np.arange(4.0), requires_grad=True) * 1
    x = dualad.tensor(np.ones(3), requires_grad=True)
    v = TailView.apply(z)
    with pytest.raises(RuntimeError, match=r"^Output 0 of TailViewBackward is a view and is being"):
        v.add_(x)


def test_under_no_grad_the_view_is_a_constant():
    """Nothing is recorded under no_grad: the write and the use are allowed (PyTorch too)."""
    z = dualad.tensor(np.arange(4.0))
    x = dualad.tensor(np.ones(4), requires_grad=True)
    v = TailView.apply(z)
    with dualad.no_grad():
        z.add_(x)
        out = v.reshape(-1)
    np.testing.assert_allclose(out.numpy(), [2.0, 3.0, 4.0])
