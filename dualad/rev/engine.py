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
- Only nodes on a path from the roots to a requested input run when ``inputs`` are given
  (``grad()`` always; ``backward(inputs=...)``). In ``grad()`` a non-leaf input is a capture
  point: its tensor hooks run, its node does not (unless needed further down). In
  ``backward(inputs=...)`` a non-leaf input retains its grad and its node runs (PyTorch).
- Tensor hooks run only for nodes that execute or capture; saved values are freed only for nodes
  that executed (so ``grad()`` towards an intermediate leaves the graph below it intact).
- A node reached without any gradient (all undefined) runs as in PyTorch where that shows: its
  tensor hooks see None and a custom Function's backward runs (with zeros, or None when it
  does not materialize grads); an op node's result would be undefined too, so it is skipped.
- Each pass is a GraphTask on this thread's stack (``GRAD.tasks``): hooks and custom backwards
  see it (``queue_callback``, per-pass hook state, checkpoint recomputation). A pass started
  inside another (reentrant) finishes first; past half the recursion limit it runs on a fresh
  thread that inherits this thread's autograd state (grad modes, anomaly mode, saved-tensor
  hooks, a copy of its transform level stack), so reentrancy nests thousands deep. Levels the
  fresh thread pushes are popped by it; the waiting thread's stack is never touched. Nesting
  deeper than ``MAX_REENTRANT_DEPTH`` raises (a hook that starts a pass from every pass would
  otherwise start OS threads without bound).
- Anomaly mode is read once per pass (no cost per node otherwise): it checks returned gradients
  for NaN and warns with the forward trace of the node an error escaped from.
- Deep graphs are freed by reference counting alone (no cycles: graph -> tensor references are
  weak where a tensor points back at the graph); CPython's deferred deallocation keeps freeing a
  1,000,000-node chain within the C stack (tests/rev/test_deep_graphs.py).
"""

from __future__ import annotations

import itertools
import sys
import threading
import warnings
from heapq import heappop, heappush, heapreplace
from itertools import repeat

from .._creation import as_tensor, ones_like
from .._state import ACTIVE, GRAD, adopt_levels, drop_levels
from .._tensor import Tensor, accumulator_of, get_meta
from .anomaly import check_returned_nan, report_error_node
from .node import AccumulateGrad, GradSum

# Serialises .grad accumulation (leaves, retained grads): threads running backward passes into
# shared leaves add their gradients one at a time.
_accumulate_lock = threading.RLock()

# Reentrant passes (a backward started inside a running one) nest at most this deep.
MAX_REENTRANT_DEPTH = 5000


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
    for level in GRAD.levels:
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
                from .._creation import zeros, zeros_like

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


class GraphTask:
    """One backward pass, as seen by code running inside it (hooks, callbacks, checkpoints).

    ``dependencies`` has every node the pass may run or capture at; ``callbacks`` are run once
    the pass finished (``queue_callback``); ``state`` holds per-pass state of hooks (a
    ``register_multi_grad_hook`` registration's progress), so it dies with the pass.
    """

    __slots__ = ("__weakref__", "callbacks", "dependencies", "id", "restricted", "state")

    def __init__(self, restricted: bool) -> None:
        self.id = next(_task_ids)
        self.restricted = restricted  # grad() or backward(inputs=...)
        self.callbacks: list = []
        self.state: dict = {}
        self.dependencies: dict = {}

    def will_execute(self, node) -> bool:
        """Whether ``node`` runs (or is a capture point) in this pass, if it gets gradients."""
        return node in self.dependencies

    def __repr__(self) -> str:
        return f"<GraphTask {self.id}>"


_task_ids = itertools.count()


def current_graph_task() -> GraphTask | None:
    """The innermost backward pass running in this thread, or None."""
    tasks = GRAD.tasks
    return tasks[-1] if tasks else None


def queue_callback(callback) -> None:
    """Run ``callback()`` once the innermost backward pass running in this thread has finished.

    Only valid during a backward pass (from a hook or a custom backward). Callbacks may queue
    more callbacks; an exception raised by one propagates from ``backward()``/``grad()``.

    >>> import dualad
    >>> from dualad.autograd.graph import queue_callback
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> y = x * 2
    >>> log = []
    >>> def hook(grad):
    ...     queue_callback(lambda: log.append("done"))
    ...     log.append("hook")
    >>> _ = y.register_hook(hook)
    >>> y.sum().backward()
    >>> log
    ['hook', 'done']
    """
    tasks = GRAD.tasks
    if not tasks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    tasks[-1].callbacks.append(callback)


class _ExecutionEngine:
    """PyTorch's ``Variable._execution_engine`` shape: ``queue_callback(fn)``."""

    __slots__ = ()

    @staticmethod
    def queue_callback(callback) -> None:
        queue_callback(callback)

    @staticmethod
    def _current_graph_task_id() -> int:
        task = current_graph_task()
        return -1 if task is None else task.id


execution_engine = _ExecutionEngine()


def run(roots, root_grads, retain_graph, create_graph, *, accumulate, capture=None, inputs=None):
    """Execute the graph from ``roots`` (a list of (node, output_nr)) with ``root_grads``.

    ``capture``: edges whose incoming gradient is returned (``grad``). ``inputs``: nodes that
    ``backward(inputs=...)`` must run (the AccumulateGrad of a leaf input, the grad_fn of a
    non-leaf one); with either, only nodes on a path from a root to one of those run. Returns the
    captured gradients.

    A pass started from inside another one (a hook or a custom backward calling ``backward``)
    runs to completion first; when the Python stack is already deep it runs on a fresh thread
    (this thread waits), so reentrant passes nest thousands deep.
    """
    tasks = GRAD.tasks
    if tasks and len(tasks) >= MAX_REENTRANT_DEPTH:
        raise RuntimeError(
            f"dualad: reentrant backward nested {len(tasks)} deep (the limit is "
            "dualad.rev.engine.MAX_REENTRANT_DEPTH): a backward() or autograd.grad() called "
            "inside a running backward pass (from a hook or a custom Function's backward) "
            "started another pass, again and again. A hook that runs backward on a graph that "
            "reaches the same hook never ends: stop that recursion (remove or guard the hook), "
            "or raise MAX_REENTRANT_DEPTH if the nesting is meant to be this deep."
        )
    if tasks and _stack_depth() > sys.getrecursionlimit() // 2:
        return _run_on_fresh_thread(
            roots, root_grads, retain_graph, create_graph, accumulate, capture, inputs
        )
    task = GraphTask(capture is not None or inputs is not None)
    tasks.append(task)
    outer_node = GRAD.current_node
    try:
        results = _execute(
            task, roots, root_grads, retain_graph, create_graph, accumulate, capture, inputs
        )
        callbacks = task.callbacks
        i = 0
        while i < len(callbacks):  # a callback may queue more
            callbacks[i]()
            i += 1
    finally:
        tasks.pop()
        GRAD.current_node = outer_node
    return results


def _stack_depth() -> int:
    frame = sys._getframe(1)
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def _run_on_fresh_thread(
    roots, root_grads, retain_graph, create_graph, accumulate, capture, inputs
):
    """Run a reentrant pass on a new thread that inherits this thread's autograd state, wait for
    it and return its result or raise its exception (PyTorch escapes deep stacks likewise)."""
    state = GRAD
    inherited = (
        state.enabled,
        state.inference,
        state.fw_enabled,
        state.anomaly,
        state.saved_hooks,
        state.saved_hooks_disabled,
        state.current_node,
        list(state.tasks),
    )
    levels, duals = state.levels, state.duals
    outcome: list = []

    def target() -> None:
        worker = GRAD
        (
            worker.enabled,
            worker.inference,
            worker.fw_enabled,
            worker.anomaly,
            worker.saved_hooks,
            worker.saved_hooks_disabled,
            worker.current_node,
            worker.tasks,
        ) = inherited
        # a copy of the waiting thread's levels: what this thread pushes it pops itself
        adopt_levels(levels, duals)
        try:
            outcome.append(
                (
                    True,
                    run(
                        roots,
                        root_grads,
                        retain_graph,
                        create_graph,
                        accumulate=accumulate,
                        capture=capture,
                        inputs=inputs,
                    ),
                )
            )
        except BaseException as error:  # re-raised in the waiting thread
            outcome.append((False, error))
        finally:
            drop_levels()

    worker = threading.Thread(target=target, name="dualad-reentrant-backward", daemon=True)
    worker.start()
    worker.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def _execute(task, roots, root_grads, retain_graph, create_graph, accumulate, capture, inputs):
    # ---- discovery: count, for each node, the edges that reach it from the roots (iteratively)
    dependencies: dict = {}
    root_nodes = []
    for node, _ in roots:
        if node not in dependencies:
            dependencies[node] = 0
            root_nodes.append(node)
    stack = list(root_nodes)
    pop, push = stack.pop, stack.append
    get = dependencies.get
    while stack:
        for child, _ in pop()._edges:
            if child is not None:
                count = get(child)
                if count is None:
                    dependencies[child] = 1
                    push(child)
                else:
                    dependencies[child] = count + 1

    # ---- restricted runs: which nodes execute, which are only capture points
    captures = needed = masks = None
    if capture is not None or inputs is not None:
        captures = {}
        for index, (node, nr) in enumerate(capture or ()):
            if node in dependencies:
                captures.setdefault(node, []).append((nr, index))
        must_run = {node for node in inputs or () if node in dependencies}
        needed = _needed_nodes(root_nodes, dependencies, captures, must_run)
        dependencies, masks = _restricted_dependencies(needed, captures)
        root_nodes = [n for n in root_nodes if n in needed or n in captures]
        for node in root_nodes:
            dependencies.setdefault(node, 0)

    task.dependencies = dependencies

    # ---- seed the roots
    buffers: dict = {}
    for (node, nr), g in zip(roots, root_grads):
        if node not in dependencies:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._nout
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    results = [None] * (len(capture) if capture is not None else 0)

    ready: list = []
    for node in root_nodes:
        if dependencies[node] == 0:
            heappush(ready, (-node._seq, node))

    previous_mode = GRAD.enabled
    GRAD.enabled = bool(create_graph)
    release = not retain_graph
    # anomaly mode: nodes made inside a node's backward record it as parent
    anomaly = GRAD.anomaly[0]
    # Nodes that need more than "apply, release, pass gradients on" take the careful path
    # (``_Careful.run``): nodes reached without gradients, nodes with hooks or retain-grad
    # captures (``_extra`` set), leaves (AccumulateGrad always has ``_extra``), capture points
    # and masked nodes of restricted runs, and every node in anomaly mode.
    special = None
    if captures is not None:
        special = set(captures)
        special.update(masks)
    careful = _Careful(captures, needed, masks, results, accumulate, create_graph, release, anomaly)
    get = dependencies.get
    pop = buffers.pop
    successor = None  # a node made ready by the last one that may run next without the heap
    node = None
    try:
        while True:
            if successor is not None:
                node = successor
                successor = None
                if ready and -ready[0][0] > node._seq:
                    node = heapreplace(ready, (-node._seq, node))[1]
            elif ready:
                node = heappop(ready)[1]
            else:
                break
            grads = pop(node, None)
            if (
                grads is not None
                and node._extra is None
                and not anomaly
                and (special is None or node not in special)
            ):
                out = node._apply(grads, None, create_graph)
                if release:
                    node._release()
            else:
                out = careful.run(node, grads)
                if out is _SKIP:
                    continue
            for (child, nr), g in zip(node._edges, repeat(None) if out is None else out):
                if child is None:
                    continue
                remaining = get(child)
                if remaining is None:
                    continue  # not needed in a restricted run
                if g is not None:
                    buf = buffers.get(child)
                    if buf is None:
                        if nr == 0 and child._nout == 1:
                            buffers[child] = [g]
                        else:
                            buf = buffers[child] = [None] * child._nout
                            buf[nr] = g
                    else:
                        previous = buf[nr]
                        if previous is None:
                            buf[nr] = g
                        else:
                            _add_to_buffer(buffers, child, buf, nr, previous, g, create_graph)
                if remaining == 1:
                    dependencies[child] = 0
                    if successor is None:
                        successor = child
                    elif child._seq > successor._seq:
                        heappush(ready, (-successor._seq, successor))
                        successor = child
                    else:
                        heappush(ready, (-child._seq, child))
                else:
                    dependencies[child] = remaining - 1
    except BaseException:
        if anomaly and node is not None:
            report_error_node(node)
        raise
    finally:
        GRAD.enabled = previous_mode
    return results


def _add_to_buffer(buffers, child, buf, nr, previous, g, create_graph: bool) -> None:
    """Add a further gradient ``g`` for output ``nr`` of ``child`` to the buffered one.

    Out of place, except into a sum this pass made itself for a one-output node (a ``GradSum``
    buffer's ``owned``: nobody else holds it) when no graph is recorded and both are plain
    arrays of one shape and dtype: then in place, which changes no value (same additions, same
    order) and saves an array and a Tensor per gradient.
    """
    if (
        type(buf) is GradSum
        and buf.owned is previous
        and not create_graph
        and (not ACTIVE or not GRAD.levels)
        and type(g) is Tensor
        and g._fw is None
    ):
        total, data = previous._data, g._data
        if type(total) is type(data) and total.shape == data.shape and total.dtype == data.dtype:
            total += data
            return
    total = previous + g
    if child._nout == 1:
        if type(buf) is not GradSum:
            buf = buffers[child] = GradSum(buf)
        buf.owned = total
    buf[nr] = total


_SKIP = object()  # _Careful.run: the node does not pass gradients on


class _Careful:
    """The engine's per-node path for nodes that need more than apply-and-release: tensor
    hooks, retain-grad captures, pre/post hooks, leaves (AccumulateGrad), capture points and
    masks of restricted runs, anomaly mode. ``run`` returns the node's input gradients (None
    when it got none) or ``_SKIP`` when nothing goes on to its edges."""

    __slots__ = (
        "accumulate",
        "anomaly",
        "captures",
        "check_nan",
        "create_graph",
        "masks",
        "needed",
        "release",
        "results",
    )

    def __init__(
        self, captures, needed, masks, results, accumulate, create_graph, release, anomaly
    ):
        self.captures = captures
        self.needed = needed
        self.masks = masks
        self.results = results
        self.accumulate = accumulate
        self.create_graph = create_graph
        self.release = release
        self.anomaly = anomaly
        self.check_nan = anomaly and GRAD.anomaly[1]

    def run(self, node, grads):
        leaf_node = type(node) is AccumulateGrad
        if grads is None:
            if leaf_node or node._extra is not None or node._runs_undefined:
                grads = _undefined_grads(node)
        elif leaf_node or node._extra is not None:
            _run_tensor_hooks(node, grads)
        needs = None
        captures = self.captures
        if captures is not None:
            if grads is not None:
                hits = captures.get(node)
                if hits is not None:
                    results = self.results
                    for nr, index in hits:
                        results[index] = grads[nr]
            if node not in self.needed:
                return _SKIP  # only a capture point
            needs = self.masks.get(node)
        elif leaf_node and not self.accumulate:
            return _SKIP
        out = None
        if grads is not None:
            extra = node._extra
            if extra is not None and extra.pre_hooks:
                grads = _run_pre_hooks(node, grads)
            if self.anomaly:
                out = _apply_in_anomaly_mode(node, grads, needs, self.create_graph, self.check_nan)
            else:
                out = node._apply(grads, needs, self.create_graph)
                if extra is not None and extra.post_hooks:
                    out = _run_post_hooks(node, out, grads)
        if self.release:
            node._release()
        return _SKIP if leaf_node else out


def _apply_in_anomaly_mode(node, grads: list, needs, create_graph: bool, check_nan: bool):
    """``node._apply`` and its post hooks, as the loop runs them, in anomaly mode: nodes made
    meanwhile record ``node`` as their parent; NaN in what it returns raises."""
    GRAD.current_node = node
    out = node._apply(grads, needs, create_graph)
    extra = node._extra
    if extra is not None and extra.post_hooks:
        out = _run_post_hooks(node, out, grads)
    if check_nan:
        check_returned_nan(node, out)
    return out


def _needed_nodes(root_nodes, dependencies, captures, must_run) -> set:
    """Nodes that must execute: those in ``must_run`` and those with a path to a capture point or
    to a node that must execute. Computed bottom-up over a topological order (iteratively)."""
    order = _topological(root_nodes, dependencies)
    needed: set = set()
    for node in reversed(order):
        if node in must_run:
            needed.add(node)
            continue
        for child, _ in node._edges:
            if child is not None and (child in needed or child in captures):
                needed.add(node)
                break
    return needed


def _topological(root_nodes, dependencies) -> list:
    remaining = dict(dependencies)
    order = []
    stack = [n for n in root_nodes if remaining[n] == 0]
    while stack:
        node = stack.pop()
        order.append(node)
        for child, _ in node._edges:
            if child is not None:
                remaining[child] -= 1
                if remaining[child] == 0:
                    stack.append(child)
    return order


def _restricted_dependencies(needed, captures) -> tuple:
    """Dependency counts of a restricted run (edges out of executing nodes into nodes that
    execute or capture), and the ``needs`` masks of executing nodes with an input gradient
    nobody needs (the node then skips computing it)."""
    counts: dict = {}
    masks: dict = {}
    get = counts.get
    for node in needed:
        skipped = False
        for child, _ in node._edges:
            if child is not None:
                if child in needed or child in captures:
                    counts[child] = get(child, 0) + 1
                else:
                    skipped = True
        if skipped:
            masks[node] = [
                child is not None and (child in needed or child in captures)
                for child, _ in node._edges
            ]
    for node in needed:
        counts.setdefault(node, 0)
    for node in captures:
        counts.setdefault(node, 0)
    return counts, masks


def _undefined_grads(node) -> list | None:
    """The gradients of a node none of whose outputs received one (all undefined), or None
    when it has nothing to run. PyTorch still runs such a node: its tensor hooks see None, a
    custom Function's backward runs (with zeros, or None after ``set_materialize_grads(False)``);
    an op node's or a leaf's result is undefined in turn unless a hook gave a gradient."""
    grads = [None] * node._nout
    _run_tensor_hooks(node, grads)
    if node._runs_undefined:
        return grads
    for g in grads:
        if g is not None:
            return grads
    return None


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
        if meta.grad is None:  # a copy, as PyTorch's retain_grad hook: never the user's tensor
            meta.grad = g.clone() if create_graph else g.detach().clone()
        elif create_graph:
            meta.grad = meta.grad + g
        else:
            meta.grad = meta.grad + g.detach()


def _clone(g):
    """``ops.elementwise.clone`` (bound on first use: the ops import the engine's package)."""
    global _clone
    from ..ops import clone

    _clone = clone
    return clone(g)


def accumulate_into_leaf(node: AccumulateGrad, g, create_graph: bool, owned: bool = False):
    """AccumulateGrad: add ``g`` into ``variable.grad`` (PyTorch's rules on copying and aliasing).

    ``owned``: ``g`` is a sum this pass made (nobody else holds it), so a first ``.grad`` can be
    ``g`` itself, as PyTorch steals an incoming buffer no one else references.
    Returns the new ``.grad`` tensor when this call created it (``.grad`` was None), else None.
    """
    var = node.variable
    if g is None:
        return
    data, var_data = g._data, var._data
    if data.dtype != var_data.dtype:
        from ..ops import astype, real

        if data.dtype.kind == "c" and var_data.dtype.kind != "c":
            g = real(g)
        g = astype(g, var_data.dtype)
    if data.shape != var_data.shape:
        from ..ops import sum_to

        g = sum_to(g, var_data.shape)
    meta = var._meta
    if meta is None:
        meta = get_meta(var)
    created = None
    with _accumulate_lock:
        current = meta.grad
        if current is None:
            # clone() keeps forward-mode tangents (forward-over-reverse gives dual grads);
            # without create_graph grad mode is off here, so it records nothing (nor does
            # the plain clone: a copy that shares no version counter with g)
            if create_graph or g._fw:
                created = g.clone()
            elif GRAD.levels:  # inside a transform of this thread
                created = g.detach().clone()
            elif owned and type(g) is Tensor and g._rg is False:
                created = g
            else:
                created = _clone(g)
            meta.grad = created
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
