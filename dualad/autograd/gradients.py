"""``grad()``: gradients of outputs with respect to inputs, ``.grad`` left untouched.

The tape (``dualad.rev``) checks the arguments and runs the pass; batched grad_outputs
(``is_grads_batched=True``) run that one pass under a vmap level (``dualad.vmap.batched_grad``),
a decision made here, above both, so the tape never knows about vmap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, overload

from .._tensor import Tensor
from ..rev.engine import run
from ..rev.entry import grad_allow_unused, grad_pass, grad_results
from ..vmap.batched_grad import batched_grad

__all__ = ["grad"]


# an input the outputs do not depend on gets None with allow_unused (unless materialize_grads)
@overload
def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: Literal[False] | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor, ...]: ...
@overload
def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    *,
    materialize_grads: Literal[True],
) -> tuple[Tensor, ...]: ...
@overload
def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]: ...
def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs`` (``.grad`` is left untouched).

    >>> import dualad
    >>> x = dualad.tensor(3.0, requires_grad=True)
    >>> dualad.autograd.grad(x ** 2, x)
    (tensor(6.),)
    """
    allow_unused = grad_allow_unused(allow_unused, materialize_grads, only_inputs)
    flat_inputs, roots, grads, edges = grad_pass(outputs, inputs, grad_outputs, is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        results = batched_grad(roots, grads, edges, retain_graph, create_graph)
    else:
        results = run(roots, grads, retain_graph, create_graph, accumulate=False, capture=edges)
    return grad_results(
        results, flat_inputs, grads, create_graph, allow_unused, materialize_grads, is_grads_batched
    )
