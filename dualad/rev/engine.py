"""The reverse-mode executor: a loop over a ready-queue, never recursion.

Invariants:
- Graph discovery and execution are iterative (explicit stack and heap), so graphs of any depth
  run without RecursionError.
- Among ready nodes the one created last (highest sequence number) runs first.
- Gradients arriving at one (node, output) are summed out of place; a leaf's first ``.grad`` is a
  copy (never an alias of a user's tensor or another leaf's grad); later accumulation is in place
  unless ``create_graph``.
- The pass runs with grad mode = ``create_graph``; VJP rules are dualad ops, so with
  ``create_graph`` the pass itself is recorded and can be differentiated again, and with it off
  the rules take the fast path and build no graph.
- Only nodes on a path from the roots to a requested input run when ``inputs`` are given.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from heapq import heappop, heappush

from .._state import GRAD, LEVELS
from .._tensor import Tensor, accumulator_of, get_meta
from .node import AccumulateGrad

_accumulate_lock = threading.RLock()


class _EmptyInputsError(ValueError, RuntimeError):
    """grad() with no inputs (ValueError in older PyTorch, RuntimeError in newer)."""


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (Tensor, GradientEdgeType)):
        return (value,)
    return tuple(value)


class GradientEdgeType(tuple):
    """``GradientEdge(node, output_nr)``: a place in the graph usable as ``inputs=``."""

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
    if isinstance(grad_tensors, Tensor):
        return (grad_tensors,)
    return tuple(grad_tensors)


def _make_grads(outputs: tuple, grads: tuple, is_grads_batched: bool) -> list:
    from .._creation import as_tensor, ones_like

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
            import numpy as np

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
    for level in LEVELS:
        if getattr(level, "forbids_backward", False):
            raise RuntimeError(
                f"{what}() called inside a dualad.{level.kind} transform. This is not supported, "
                "please use dualad.func.grad or dualad.func.vjp instead or call "
                f"{what}() outside of dualad transforms."
            )


def backward(
    tensors,
    grad_tensors=None,
    retain_graph=None,
    create_graph: bool = False,
    grad_variables=None,
    inputs=None,
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
    input_tensors = None
    if input_list is not None:
        input_tensors = [t for t in input_list if isinstance(t, Tensor)]
        for i, t in enumerate(input_list):
            _input_edge(t, i)
    run(roots, grads, retain_graph, create_graph, accumulate=True, inputs=input_tensors)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused=None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
):
    """Gradients of ``outputs`` with respect to ``inputs`` (``.grad`` is left untouched).

    >>> import dualad
    >>> x = dualad.tensor(3.0, requires_grad=True)
    >>> dualad.autograd.grad(x ** 2, x)
    (tensor(6.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if len(inputs) == 0:
        raise _EmptyInputsError(
            "grad requires non-empty inputs. (`inputs` argument to `grad()` cannot be empty.)"
        )
    grads = _make_grads(outputs, _grads_tuple(grad_outputs, len(outputs)), is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    edges = [_input_edge(t, i) for i, t in enumerate(inputs)]
    if is_grads_batched:
        from ..vmap.batched_grad import batched_grad

        results = batched_grad(roots, grads, edges, retain_graph, create_graph)
    else:
        results = run(roots, grads, retain_graph, create_graph, accumulate=False, capture=edges)
    out = []
    for i, (g, t) in enumerate(zip(results, inputs)):
        if g is None:
            if materialize_grads:
                if isinstance(t, GradientEdgeType):
                    raise RuntimeError(
                        "materialize_grads cannot be used when the given input is a GradientEdge"
                    )
                from .._creation import zeros_like

                g = zeros_like(t, requires_grad=True)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        out.append(g)
    return tuple(out)


def run(roots, root_grads, retain_graph, create_graph, *, accumulate, capture=None, inputs=None):
    """Execute the graph from ``roots`` (a list of (node, output_nr)) with ``root_grads``.

    ``capture``: edges whose incoming gradient is returned (``grad``); ``inputs``: tensors that
    ``backward(inputs=...)`` accumulates into. Returns the captured gradients.
    """
    # ---- discovery: count, for each node, the edges that reach it from the roots
    dependencies: dict = {}
    root_nodes = []
    for node, _ in roots:
        if node not in dependencies:
            dependencies[node] = 0
            root_nodes.append(node)
    stack = list(root_nodes)
    while stack:
        node = stack.pop()
        for child, _ in node._edges:
            if child is not None:
                if child in dependencies:
                    dependencies[child] += 1
                else:
                    dependencies[child] = 1
                    stack.append(child)

    # ---- what to capture and which nodes must run
    captures: dict = {}
    if capture is not None:
        for index, (node, nr) in enumerate(capture):
            captures.setdefault(node, []).append((nr, index))
    retained_inputs: dict = {}
    run_leaves = None
    if inputs is not None:
        run_leaves = set()
        for t in inputs:
            if t._node is None:
                run_leaves.add(accumulator_of(t))
            else:
                retained_inputs.setdefault(t.grad_fn, []).append((t._out_nr, weakref.ref(t)))
    executes = None  # None: every discovered node runs (plain backward)
    if capture is not None or inputs is not None:
        executes = _needed_nodes(
            root_nodes, dependencies, captures, retained_inputs, run_leaves, accumulate
        )
        dependencies = _restricted_dependencies(root_nodes, executes, dependencies)

    # ---- seed the roots
    buffers: dict = {}
    for (node, nr), g in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._nout
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    results = [None] * (len(capture) if capture is not None else 0)

    root_set = set(root_nodes)
    ready: list = []
    for node in root_nodes:
        if dependencies.get(node, 0) == 0:
            heappush(ready, (-node._seq, node))

    previous_mode = GRAD.enabled
    GRAD.enabled = bool(create_graph)
    release = not retain_graph
    filtered = executes is not None
    try:
        while ready:
            node = heappop(ready)[1]
            grads = buffers.pop(node, None)
            is_leaf_node = type(node) is AccumulateGrad
            if is_leaf_node:
                runs = accumulate and (run_leaves is None or node in run_leaves)
            else:
                runs = not filtered or node in executes
            if grads is not None:
                # tensor hooks belong to the node's execution (or to a capture at it): a node
                # that neither runs nor is captured does not call them (HOOK-8, HOOK-11)
                if (node._extra is not None or is_leaf_node) and (
                    runs or node in captures or node in retained_inputs
                ):
                    _run_tensor_hooks(node, grads)
                if captures:
                    for nr, index in captures.get(node, ()):
                        results[index] = grads[nr]
                if retained_inputs:
                    for nr, ref in retained_inputs.get(node, ()):
                        t = ref()
                        if t is not None and grads[nr] is not None:
                            _accumulate_retained(t, grads[nr], create_graph)
            out = None
            if runs:
                if grads is not None:
                    extra = node._extra
                    if extra is not None and extra.pre_hooks:
                        grads = _run_pre_hooks(node, grads)
                    out = node._apply(grads, None, create_graph)
                    if extra is not None and extra.post_hooks:
                        out = _run_post_hooks(node, out, grads)
                if release:
                    node._release()
            elif filtered and node not in root_set:
                continue  # its edges were not counted: it is only a capture point
            if out is None:
                for child, nr in node._edges:
                    if child is not None and child in dependencies:
                        remaining = dependencies[child] - 1
                        dependencies[child] = remaining
                        if remaining == 0:
                            heappush(ready, (-child._seq, child))
                continue
            for (child, nr), g in zip(node._edges, out):
                if child is None or child not in dependencies:
                    continue
                if g is not None:
                    buf = buffers.get(child)
                    if buf is None:
                        buf = buffers[child] = [None] * child._nout
                        buf[nr] = g
                    else:
                        previous = buf[nr]
                        buf[nr] = g if previous is None else previous + g
                remaining = dependencies[child] - 1
                dependencies[child] = remaining
                if remaining == 0:
                    heappush(ready, (-child._seq, child))
    finally:
        GRAD.enabled = previous_mode
    return results


def _needed_nodes(root_nodes, dependencies, captures, retained_inputs, run_leaves, accumulate):
    """Nodes that must execute: those with a path to a capture, a retained input or a leaf to
    accumulate. Computed bottom-up over a topological order (iteratively)."""
    order = _topological(root_nodes, dependencies)
    targets = set(captures) | set(retained_inputs)
    needed: set = set()
    for node in reversed(order):
        if type(node) is AccumulateGrad:
            if accumulate and run_leaves is not None and node in run_leaves:
                needed.add(node)
            continue
        for child, _ in node._edges:
            if child is not None and (child in needed or child in targets):
                needed.add(node)
                break
    # backward(inputs=[non_leaf]) runs the non-leaf's grad_fn too (its pre/post hooks fire, as
    # in PyTorch), but nothing below it unless needed for another input (HOOK-8)
    needed.update(retained_inputs)
    return needed


def _topological(root_nodes, dependencies) -> list:
    remaining = dict(dependencies)
    order = []
    stack = [n for n in root_nodes if remaining.get(n, 0) == 0]
    while stack:
        node = stack.pop()
        order.append(node)
        for child, _ in node._edges:
            if child is not None:
                remaining[child] -= 1
                if remaining[child] == 0:
                    stack.append(child)
    return order


def _restricted_dependencies(root_nodes, executes, dependencies) -> dict:
    """Dependency counts counting only edges out of nodes that execute or are roots."""
    counts = {}
    for node in dependencies:
        counts.setdefault(node, 0)
    for node in dependencies:
        if node in executes or node in root_nodes:
            for child, _ in node._edges:
                if child is not None:
                    counts[child] += 1
    return {n: c for n, c in counts.items() if n in executes or n in root_nodes or c}


def _run_tensor_hooks(node, grads: list) -> None:
    if type(node) is AccumulateGrad:
        meta = node.variable._meta
        hooks = None if meta is None else meta.leaf_hooks
        if hooks:
            grads[0] = _call_tensor_hooks(hooks, grads[0])
    else:
        table = node._tensor_hooks
        if table:
            for nr, hooks in list(table.items()):
                if hooks:
                    grads[nr] = _call_tensor_hooks(hooks, grads[nr])
    retain = node._retain
    if retain:
        for nr, ref in list(retain.items()):
            t = ref()
            if t is not None and grads[nr] is not None:
                _accumulate_retained(t, grads[nr], GRAD.enabled)


def _call_tensor_hooks(hooks, g):
    for fn in list(hooks.values()):
        replaced = fn(g)
        if replaced is not None:
            g = replaced
    return g


def _run_pre_hooks(node, grads: list) -> list:
    for fn in list(node._pre_hooks.values()):
        replaced = fn(tuple(grads))
        if replaced is not None:
            if not isinstance(replaced, (tuple, list)) or len(replaced) != len(grads):
                raise RuntimeError(
                    f"hook '{getattr(fn, '__name__', fn)}' has returned an incorrect number of "
                    f"values (got {len(replaced) if isinstance(replaced, (tuple, list)) else 1}, "
                    f"but expected {len(grads)})"
                )
            grads = list(replaced)
    return grads


def _run_post_hooks(node, out: tuple, grads: list) -> tuple:
    for fn in list(node._post_hooks.values()):
        replaced = fn(tuple(out), tuple(grads))
        if replaced is not None:
            if not isinstance(replaced, (tuple, list)) or len(replaced) != len(out):
                raise RuntimeError(
                    f"hook '{getattr(fn, '__name__', fn)}' has returned an incorrect number of "
                    f"values (got {len(replaced) if isinstance(replaced, (tuple, list)) else 1}, "
                    f"but expected {len(out)})"
                )
            out = tuple(replaced)
    return out


def _accumulate_retained(t: Tensor, g, create_graph: bool) -> None:
    meta = get_meta(t)
    with _accumulate_lock:
        if meta.grad is None:
            meta.grad = g if create_graph else g.detach().clone()
        elif create_graph:
            meta.grad = meta.grad + g
        else:
            meta.grad = meta.grad + g.detach()


def accumulate_into_leaf(node: AccumulateGrad, g, create_graph: bool):
    """AccumulateGrad: add ``g`` into ``variable.grad`` (PyTorch's rules on copying and aliasing).

    Returns the new ``.grad`` tensor when this call created it (``.grad`` was None), else None.
    """
    from ..ops.elementwise import astype

    var = node.variable
    if g is None:
        return
    if g.dtype != var.dtype:
        if g.dtype.kind == "c" and var.dtype.kind != "c":
            from ..ops.elementwise import real

            g = real(g)
        g = astype(g, var.dtype)
    if g.shape != var.shape:
        from ..ops.reductions import sum_to

        g = sum_to(g, var.shape)
    meta = get_meta(var)
    created = None
    with _accumulate_lock:
        current = meta.grad
        if current is None:
            # clone() keeps forward-mode tangents (forward-over-reverse gives dual grads);
            # without create_graph grad mode is off here, so it records nothing
            meta.grad = created = g.clone() if create_graph or g._fw else g.detach().clone()
        elif create_graph or current._rg or g._fw or current._fw:
            meta.grad = current + g
        else:
            data = current._data
            data += g._data
            current._bump_version()
    hooks = meta.post_accumulate_hooks
    if hooks:
        for fn in list(hooks.values()):
            if fn(var) is not None:
                raise RuntimeError("hooks should return None.")
    return created
