"""Graph inspection: Node, GradientEdge, get_gradient_edge, increment_version."""

from __future__ import annotations

from .._tensor import Tensor, accumulator_of
from ..rev.engine import GradientEdgeType as GradientEdge
from ..rev.node import Node


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The (node, output_nr) where ``tensor``'s gradient arrives in the graph."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    node = tensor.grad_fn
    if node is None:
        return GradientEdge(accumulator_of(tensor), 0)
    return GradientEdge(node, tensor.output_nr)


def increment_version(tensor: Tensor) -> None:
    """Bump ``tensor``'s version counter (as an in-place op would)."""
    tensor._bump_version()


__all__ = ["GradientEdge", "Node", "get_gradient_edge", "increment_version"]
