"""Backward with create_graph=False records nothing: the VJP rules run with grad mode off, so no
graph node is created during the pass and the gradients are plain tensors."""

import numpy as np

import dualad
from dualad.rev import node as graph_node


def nodes_created(fn) -> int:
    before = next(graph_node._sequence)
    fn()
    return next(graph_node._sequence) - before - 1


def test_backward_creates_no_nodes():
    x = dualad.tensor(np.linspace(0.5, 1.5, 8), requires_grad=True)
    w = dualad.tensor(np.ones((8, 8)), requires_grad=True)
    y = (dualad.tanh(w @ x) * dualad.sin(x) / x).sum()
    assert nodes_created(y.backward) == 0
    assert x.grad.grad_fn is None and not x.grad.requires_grad
    assert w.grad.grad_fn is None and not w.grad.requires_grad


def test_grad_creates_no_nodes_but_create_graph_does():
    x = dualad.tensor([0.3, 0.7], requires_grad=True)
    y = (dualad.exp(x) * x).sum()
    result = []
    assert nodes_created(lambda: result.extend(dualad.autograd.grad(y, x, retain_graph=True))) == 0
    assert result[0].grad_fn is None
    assert nodes_created(lambda: dualad.autograd.grad(y, x, create_graph=True)) > 0
