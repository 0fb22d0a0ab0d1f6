"""The reverse-mode executor: a loop over a ready-queue, never recursion.

The pass's other parts live beside it: ``entry`` (``backward()`` and ``grad()``'s argument
checks), ``graph_task`` (the pass as hooks see it), ``run_hooks`` (hooks around a node) and
``accumulate`` (``.grad`` accumulation). ``grad(..., is_grads_batched=True)`` is decided above
the tape (``dualad.autograd.gradients`` runs this engine under a vmap level).

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
- A plain ``backward()`` (one root, no ``inputs``, no ``create_graph``) is first offered to the
  compiled-pass provider installed from above (``tracing.graphs``): it runs graphs of plain op
  nodes without hooks as straight-line array code with this loop's results, and declines
  (this loop runs) everything else.
- Deep graphs are freed by reference counting alone (no cycles: graph -> tensor references are
  weak where a tensor points back at the graph); CPython's deferred deallocation keeps freeing a
  1,000,000-node chain within the C stack (tests/rev/test_deep_graphs.py).
"""

from __future__ import annotations

import sys
import threading
from heapq import heappop, heappush, heapreplace
from itertools import repeat

from .._state import ACTIVE, GRAD, adopt_levels, drop_levels
from .._tensor import Tensor
from .anomaly import check_returned_nan, report_error_node
from .graph_task import GraphTask
from .node import AccumulateGrad, GradSum
from .run_hooks import _run_post_hooks, _run_pre_hooks, _run_tensor_hooks, _undefined_grads

# Reentrant passes (a backward started inside a running one) nest at most this deep.
MAX_REENTRANT_DEPTH = 5000

# The compiled-pass provider (``tracing.graphs.raw_backward``, installed from above: rev must
# not import the trace level), or None. ``_execute`` offers it every plain ``backward()`` that
# records nothing; it returns False when this engine must run the pass.
_RAW_GRAPH = None


def install_raw_graph(provider) -> None:
    """Install (or, with None, remove) the provider of compiled backward passes."""
    global _RAW_GRAPH
    _RAW_GRAPH = provider


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
    if (
        _RAW_GRAPH is not None
        and not create_graph
        and accumulate
        and capture is None
        and inputs is None
        and len(roots) == 1
        and _RAW_GRAPH(roots[0], root_grads[0], retain_graph)
    ):
        return []
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
                if release:
                    out = node._apply_release(grads, None, create_graph)
                else:
                    out = node._apply(grads, None, create_graph)
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
