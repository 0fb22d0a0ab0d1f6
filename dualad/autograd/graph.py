"""Graph inspection and hooks on the backward pass.

``Node``, ``GradientEdge``, ``get_gradient_edge``, ``increment_version``; saved-tensor hooks
(``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``,
``allow_mutation_on_saved_tensors``);
``register_multi_grad_hook``; ``queue_callback`` (run a function when the current backward pass
ends; PyTorch spells it ``Variable._execution_engine.queue_callback``).
"""

from __future__ import annotations

from .._tensor import Tensor
from ..rev.entry import GradientEdgeType as GradientEdge
from ..rev.graph_task import current_graph_task, queue_callback
from ..rev.hooks import register_multi_grad_hook
from ..rev.node import Node, accumulator_of
from ..rev.saved import (
    SavedTensor,
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
    saved_tensors_hooks_enabled,
)


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The (node, output_nr) where ``tensor``'s gradient arrives in the graph.

    >>> import dualad
    >>> from dualad.autograd.graph import get_gradient_edge
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 2
    >>> get_gradient_edge(y).node.name()
    'MulBackward0'
    >>> dualad.autograd.grad((y * y).sum(), get_gradient_edge(y))  # d/dy of sum(y**2)
    (tensor([4., 8.]),)
    """
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
    """Bump ``tensor``'s version counter (as an in-place op would).

    A custom op that writes into a tensor's memory behind dualad's back calls it, so that
    backward passes which saved the tensor refuse to use the stale value.

    >>> import dualad
    >>> from dualad.autograd.graph import increment_version
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> y = x * x  # saves x (version 0)
    >>> increment_version(x)
    >>> x._version
    1
    >>> try:
    ...     y.backward()
    ... except RuntimeError as error:
    ...     print("modified by an inplace operation" in str(error))
    True
    """
    tensor._bump_version()


__all__ = [
    "GradientEdge",
    "Node",
    "SavedTensor",
    "allow_mutation_on_saved_tensors",
    "current_graph_task",
    "disable_saved_tensors_hooks",
    "get_gradient_edge",
    "increment_version",
    "queue_callback",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
    "saved_tensors_hooks_enabled",
]
