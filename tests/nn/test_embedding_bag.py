"""embedding_bag of ``dualad.nn.functional``: PyTorch's values and gradients for each mode and
layout (offsets, include_last_offset, 2-D input, padding_idx, empty bags), and bad input.

Finite differences, JVPs and vmap over the weight are checked by the registry tests from
``dualad/testing/opdb/nn_primitives.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.func import grad, vmap

W = np.arange(10.0).reshape(5, 2)
IDX = dualad.tensor([1, 2, 4, 4, 3])
OFFSETS = dualad.tensor([0, 2, 2])


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"mode": "sum"}, [[6.0, 8.0], [0.0, 0.0], [22.0, 25.0]]),
        ({"mode": "mean"}, [[3.0, 4.0], [0.0, 0.0], [22 / 3, 25 / 3]]),
        ({"mode": "max"}, [[4.0, 5.0], [0.0, 0.0], [8.0, 9.0]]),
        ({"mode": "sum", "padding_idx": 4}, [[6.0, 8.0], [0.0, 0.0], [6.0, 7.0]]),
        ({"mode": "mean", "padding_idx": 4}, [[3.0, 4.0], [0.0, 0.0], [6.0, 7.0]]),
        ({"mode": "max", "padding_idx": 4}, [[4.0, 5.0], [0.0, 0.0], [6.0, 7.0]]),
    ],
)
def test_values_match_pytorch(kwargs, expected):
    out = F.embedding_bag(IDX, dualad.tensor(W), OFFSETS, **kwargs)
    assert np.allclose(out.numpy(), expected)


def test_layouts_agree():
    w = dualad.tensor(W)
    last = F.embedding_bag(IDX, w, dualad.tensor([0, 2, 5]), include_last_offset=True)
    assert np.allclose(last.numpy(), [[3.0, 4.0], [22 / 3, 25 / 3]])
    two_d = F.embedding_bag(dualad.tensor([[1, 2], [4, 3]]), w, mode="sum")
    assert np.allclose(two_d.numpy(), [[6.0, 8.0], [14.0, 16.0]])
    empty = F.embedding_bag(dualad.tensor(np.zeros(0, np.int64)), w, dualad.tensor([0, 0]))
    assert np.array_equal(empty.numpy(), np.zeros((2, 2)))


def test_gradients_in_weight_and_per_sample_weights():
    w = dualad.tensor(W, requires_grad=True)
    psw = dualad.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
    out = F.embedding_bag(IDX, w, OFFSETS, mode="sum", per_sample_weights=psw)
    assert np.allclose(
        out.detach().numpy(), [[2 + 8, 3 + 10], [0, 0], [24 + 32 + 30, 27 + 36 + 35]]
    )
    gw, gp = dualad.autograd.grad(out.sum(), (w, psw))
    assert np.allclose(gw.numpy(), [[0, 0], [1, 1], [2, 2], [5, 5], [7, 7]])
    assert np.allclose(gp.numpy(), [5.0, 9.0, 17.0, 17.0, 13.0])  # the rows' sums
    # max: the whole gradient to the first maximum of a bag (row 4 twice in bag 2: the first)
    w2 = dualad.tensor(W, requires_grad=True)
    F.embedding_bag(IDX, w2, OFFSETS, mode="max").sum().backward()
    assert np.allclose(w2.grad.numpy(), [[0, 0], [0, 0], [1, 1], [0, 0], [1, 1]])


def test_per_example_gradients_over_the_weight():
    ws = dualad.tensor(np.stack([W, 2 * W]))

    def loss(w):
        return F.embedding_bag(IDX, w, OFFSETS, mode="mean").square().sum()

    per = vmap(grad(loss))(ws)
    for i in range(2):
        assert np.allclose(per[i].numpy(), grad(loss)(ws[i]).numpy())


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda w: F.embedding_bag(IDX, w, OFFSETS, mode="foo"), ValueError, "mode has to be"),
        (lambda w: F.embedding_bag(IDX, w), ValueError, "offsets has to be a 1D Tensor"),
        (
            lambda w: F.embedding_bag(dualad.tensor([[1, 2]]), w, OFFSETS),
            ValueError,
            "offsets has to be None",
        ),
        (
            lambda w: F.embedding_bag(IDX, w, OFFSETS, per_sample_weights=dualad.ones(5)),
            NotImplementedError,
            "only supported for mode='sum'",
        ),
        (
            lambda w: F.embedding_bag(
                IDX, w, OFFSETS, mode="sum", per_sample_weights=dualad.ones(4)
            ),
            ValueError,
            "same shape as the input",
        ),
        (lambda w: F.embedding_bag(IDX, w, dualad.tensor([1, 2])), RuntimeError, r"offsets\[0\]"),
        (lambda w: F.embedding_bag(IDX, w, dualad.tensor([0, 6])), RuntimeError, r"offsets\[-1\]"),
        (lambda w: F.embedding_bag(IDX, w, dualad.tensor([0, 3, 2])), RuntimeError, "non-decr"),
        (lambda w: F.embedding_bag(IDX + 5, w, OFFSETS), IndexError, "not in the valid range"),
        (lambda w: F.embedding_bag(IDX.float(), w, OFFSETS), TypeError, "integer dtype"),
        (lambda w: F.embedding_bag(IDX, w.reshape(10), OFFSETS), ValueError, "2D Tensor"),
        (lambda w: F.embedding_bag(IDX, w, OFFSETS, sparse=True), ValueError, "sparse=True"),
        (lambda w: F.embedding_bag(IDX.reshape(5, 1, 1), w), ValueError, "1D or 2D"),
    ],
)
def test_bad_input_raises(call, error, message):
    with pytest.raises(error, match=message):
        call(dualad.tensor(W))


def test_a_batched_bag_layout_is_refused():
    idx = dualad.tensor([[0, 1], [2, 3]])
    with pytest.raises(ValueError, match="concrete tensor"):
        vmap(lambda i: F.embedding_bag(i, dualad.tensor(W), dualad.tensor([0])))(idx)
