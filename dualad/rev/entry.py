"""Where a backward pass starts: ``backward()``, and the checks and preparation ``grad()``
(``dualad.autograd.gradients``) runs before and after its pass.

Invariants:
- ``grad_outputs`` are checked against their outputs (count, shape, complex-ness, device); a
  missing one is ``ones_like`` of a real scalar output. With ``is_grads_batched`` the first dim
  of each grad_output is the batch (not checked against the output).
- Only nodes on a path from the roots to a requested input run when ``inputs`` are given
  (``grad()`` always; ``backward(inputs=...)``). In ``grad()`` a non-leaf input is a capture
  point: its tensor hooks run, its node does not (unless needed further down). In
  ``backward(inputs=...)`` a non-leaf input retains its grad and its node runs (PyTorch).
- ``backward()`` / ``grad()`` inside a transform that forbids them (vmap) is an error.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._creation import as_tensor, ones_like, zeros, zeros_like
from .._state import GRAD
from .._tensor import Tensor
from .engine import run
from .node import accumulator_of


class _EmptyInputsError(ValueError, RuntimeError):
    """grad() with no inputs (ValueError in older PyTorch, RuntimeError in newer)."""


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (Tensor, GradientEdgeType)):
        return (value,)
    return tuple(value)


class GradientEdgeType(tuple):
    """``GradientEdge(node, output_nr)``: a place in the graph usable as ``inputs=``.

    >>> import dualad
    >>> from dualad.autograd.graph import get_gradient_edge
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x.exp()
    >>> edge = get_gradient_edge(y)
    >>> edge.node.name(), edge.output_nr
    ('ExpBackward0', 0)
    >>> dualad.autograd.grad((3 * y).sum(), edge)  # the gradient with respect to y
    (tensor([3., 3.]),)
    """

    __slots__ = ()

    def __new__(cls, node, output_nr: int):
        return super().__new__(cls, (node, output_nr))

    @property
    def node(self):
        return self[0]

    @property
    def output_nr(self) -> int:
        return self[1]

    def __repr__(self) -> str:
        return f"GradientEdge(node={self[0]!r}, output_nr={self[1]})"


def _grads_tuple(grad_tensors, n: int) -> tuple:
    if grad_tensors is None:
        return (None,) * n
    if isinstance(grad_tensors, Tensor) or hasattr(grad_tensors, "__array_namespace__"):
        return (grad_tensors,)  # one tensor or one NumPy/CuPy array
    return tuple(grad_tensors)


def _calculate_shape(output, grad, is_grads_batched: bool) -> tuple:
    """The shapes compared when checking a grad_output against its output (batch dim dropped)."""
    grad_shape = tuple(grad.shape)
    return tuple(output.shape), grad_shape[1:] if is_grads_batched else grad_shape


def _make_grads(outputs: tuple, grads: tuple, is_grads_batched: bool) -> list:
    if len(grads) != len(outputs):
        raise RuntimeError(
            f"Mismatch in number of gradients: got {len(grads)} gradients for "
            f"{len(outputs)} outputs"
        )
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if out._rg:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out.dtype.kind != "f":
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype}"
                    )
                g = ones_like(out)
            result.append(g)
            continue
        if not isinstance(g, Tensor):
            if isinstance(g, (np.ndarray, float, int)):
                g = as_tensor(g)
            else:
                raise TypeError(
                    "gradients can be either Tensors or None, but got " + type(g).__name__
                )
        first_shape = g.shape[1:] if is_grads_batched else g.shape
        if tuple(first_shape) != tuple(out.shape):
            if is_grads_batched:
                raise RuntimeError(
                    "If `is_grads_batched=True`, we interpret the first dimension of each "
                    "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                    f"expected to match the shape of corresponding output, but a mismatch was "
                    f"detected: grad_output[{i}] has a shape of {tuple(g.shape)} and output[{i}] "
                    f"has a shape of {tuple(out.shape)}. If you only want some tensors in "
                    "`grad_output` to be considered batched, consider using vmap."
                )
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                f"output[{i}] has a shape of {tuple(out.shape)}."
            )
        if (out.dtype.kind == "c") != (g.dtype.kind == "c"):
            raise RuntimeError(
                "For complex Tensors, both grad_output and output are required to have the same "
                f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and "
                f"output[{i}] has a dtype of {out.dtype}."
            )
        if g.device != out.device:
            raise RuntimeError(
                f"dualad: grad_output[{i}] is on device {g.device} but output[{i}] is on "
                f"{out.device}"
            )
        result.append(g)
    return result


def _root_edge(t: Tensor, index: int):
    if not t._rg:
        raise RuntimeError(
            f"element {index} of tensors does not require grad and does not have a grad_fn"
        )
    node = t.grad_fn
    return (accumulator_of(t), 0) if node is None else (node, t._out_nr)


def _input_edge(t, index: int):
    if isinstance(t, GradientEdgeType):
        return tuple(t)
    if not isinstance(t, Tensor):
        raise TypeError(f"dualad: inputs[{index}] must be a Tensor, got {type(t).__name__}")
    if not t._rg:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    node = t.grad_fn
    return (accumulator_of(t), 0) if node is None else (node, t._out_nr)


def _check_not_in_transform(what: str) -> None:
    for level in GRAD.levels:
        if getattr(level, "forbids_backward", False):
            raise RuntimeError(
                f"{what}() called inside a dualad.{level.kind} transform. This is not supported, "
                "please use dualad.func.grad or dualad.func.vjp instead or call "
                f"{what}() outside of dualad transforms."
            )


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Accumulate the gradients of ``tensors`` into ``.grad`` of the leaves of their graph.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dualad.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    _check_not_in_transform("backward")
    if grad_variables is not None:
        warnings.warn(
            "`grad_variables` is deprecated. Use `grad_tensors` instead.",
            FutureWarning,
            stacklevel=2,
        )
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
        grad_tensors = grad_variables
    if (
        inputs is not None
        and not isinstance(inputs, (Tensor, GradientEdgeType))
        and len(inputs) == 0
    ):
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs = _as_tuple(tensors)
    input_list = _as_tuple(inputs) if inputs is not None else None
    grads = _make_grads(outputs, _grads_tuple(grad_tensors, len(outputs)), False)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.",
            UserWarning,
            stacklevel=3,
        )
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    input_nodes = None
    if input_list is not None:
        # PyTorch semantics: a non-leaf input retains its grad (permanently) and its grad_fn runs;
        # a leaf input's AccumulateGrad runs; nothing that leads to no input runs.
        input_nodes = []
        for i, t in enumerate(input_list):
            node, _ = _input_edge(t, i)
            if isinstance(t, Tensor) and t._node is not None:
                t.retain_grad()
            input_nodes.append(node)
    run(roots, grads, retain_graph, create_graph, accumulate=True, inputs=input_nodes)


# ---------------------------------------------------------------------------------------------
# grad(): its pass is started by dualad.autograd.gradients (batched grad_outputs run it under
# a vmap level, which this layer does not know)


def grad_allow_unused(allow_unused, materialize_grads: bool, only_inputs: bool) -> bool:
    """``grad()``'s ``allow_unused`` after checking it against ``materialize_grads`` (and the
    deprecation warning for ``only_inputs``)."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False."
        )
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=3,
        )
    return materialize_grads if allow_unused is None else allow_unused


def grad_pass(outputs, inputs, grad_outputs, is_grads_batched: bool) -> tuple:
    """``grad()``'s inputs as a tuple and its pass: ``(inputs, roots, root_grads, edges)`` with
    the checked grad_outputs as root gradients and the inputs' edges as capture points."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if len(inputs) == 0:
        raise _EmptyInputsError(
            "grad requires non-empty inputs. (`inputs` argument to `grad()` cannot be empty.)"
        )
    grads = _make_grads(outputs, _grads_tuple(grad_outputs, len(outputs)), is_grads_batched)
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    edges = [_input_edge(t, i) for i, t in enumerate(inputs)]
    return inputs, roots, grads, edges


def grad_results(
    results,
    inputs: tuple,
    grads: list,
    create_graph: bool,
    allow_unused: bool,
    materialize_grads: bool,
    is_grads_batched: bool,
) -> tuple:
    """``grad()``'s result from its pass's captured gradients: an unused input's None becomes
    zeros (``materialize_grads``) or an error (unless ``allow_unused``)."""
    out = []
    for i, (g, t) in enumerate(zip(results, inputs)):
        if g is None:
            if materialize_grads:
                if isinstance(t, GradientEdgeType):
                    raise RuntimeError(
                        "materialize_grads cannot be used when the given input is a GradientEdge"
                    )
                if is_grads_batched:
                    # deliberate deviation from upstream (which fills the UNbatched shape): the
                    # zeros carry the batch dim like every other batched result
                    size = next(go.shape[0] for go in grads if go is not None)
                    g = zeros(
                        (size, *t.shape),
                        dtype=t.dtype,
                        device=t.device,
                        requires_grad=bool(create_graph),
                    )
                else:
                    g = zeros_like(t, requires_grad=bool(create_graph))  # current PyTorch
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        out.append(g)
    return tuple(out)
