"""The op record and the registry: what an op is, defined once.

An op is an ``OpDef``: its array impl and its rules (VJP, JVP, batching), plus what its graph
node saves. Every op module of ``dualad.ops`` makes its ops with these and registers them by
name (``register``); the tests' op database and the registry test read ``REGISTRY``.
"""

from __future__ import annotations

from collections.abc import Callable

REGISTRY: dict[str, OpDef] = {}

# sparsity rules the op families share (see ``OpDef``)
GATHER = ("gather", "affine")
ELEMENTWISE_AFFINE = ("elementwise", "affine")
REDUCE_AFFINE = ("reduce", "affine")
LINEAR_DENSE = ("dense", "affine")  # linear, every output element depending on every input
SCAN = ("scan", "affine")  # cumsum: lower triangular along params["dim"]
LINES = ("lines", "affine")  # FFTs: whole lines along the axes
SELECT = ("select", "affine")  # values at the index output (sort, topk, max along a dim)


class OpDef:
    """One op: its array impl and its rules, defined once.

    impl(xp, *arrays, **params) -> array | tuple of arrays
    vjp(cts, outs, args, params, needs) -> tuple with one cotangent (or None) per argument.
        ``cts``/``outs`` are tuples over the outputs; ``args`` are the saved arguments (Tensors,
        Python scalars, or ``ArgMeta`` stand-ins carrying shape/dtype when not saved);
        ``needs[i]`` says whether argument i needs a cotangent. Written in dualad ops.
    jvp(tangents, outs, args, params) -> output tangent (tuple for several outputs); tangents
        has None for arguments without one. Written in dualad ops.
    batch(args, bdims, params) -> (outs, out_bdims) for vmap; written in dualad ops.
    sparsity: ``(family, curvature)``, how each output element depends on the arguments'
        elements (read by ``dualad.func.sparse_jacobian``'s detection, DESIGN.md 10), set by
        the family helpers: family "elementwise" (broadcasting), "gather" (the output's elements
        are copies of the arguments' elements, or zeros: views, slicing, joining, padding),
        "reduce" (over ``params["dims"]``), "matmul" (products of matrices and vectors: the
        arguments' patterns combined through the other argument's nonzeros where it is
        constant; stacks broadcast), "einsum", "conv", "conv_transpose" and "convolve" (sums
        of products over the index sets their parameters give), "scan" (element ``t`` of a
        line along ``params["dim"]`` depends on elements ``s <= t``: cumsum, cumprod),
        "lines" (on the whole line along the axes: FFTs, softmax), "select" (the values at
        the positions of the op's index output: sort, topk, max along a dim) (the rules of
        these: ``dualad.tracing.sparsity_rules``), "zero" (zero derivative); curvature "affine" (no
        second derivative), "bilinear" (none unless two arguments vary), "linear_in_first"
        (none unless an argument after the first varies: ``a / b``), "nonlinear". None,
        the default, is the conservative rule: every output element depends on every element
        of every argument, nonlinearly.
    """

    __slots__ = (
        "batch",
        "differentiable",
        "fast",
        "impl",
        "inline",
        "jvp",
        "kernel",
        "name",
        "node_cls",
        "node_name",
        "nondiff_outputs",
        "nout",
        "save_args",
        "save_mask",
        "save_masks",
        "save_out",
        "sparsity",
        "view",
        "vjp",
    )

    def __init__(
        self,
        name: str,
        impl: Callable | None,
        *,
        vjp: Callable | None = None,
        jvp: Callable | None = None,
        batch: Callable | None = None,
        differentiable: bool = True,
        save_args: bool = True,
        save_out: bool = False,
        save_mask: Callable | None = None,
        nout: int = 1,
        nondiff_outputs: tuple[int, ...] = (),
        view: bool | str = False,
        node_name: str | None = None,
        kernel: Callable | None = None,
        sparsity: tuple[str, str] | None = None,
    ) -> None:
        if impl is None:  # defined by its kernel alone
            impl = _impl_of_kernel(kernel)
        # (plain field assignments: alike rev.node's slot setups by shape only)
        self.name = name
        self.impl = impl
        # the impl as a function of the arrays alone, for ops whose impl needs no array module
        # (operator.add for add): the fast callers call it directly, without a Python frame
        self.kernel = kernel
        self.vjp = vjp
        self.jvp = jvp
        self.batch = batch
        self.differentiable = differentiable
        self.save_args = save_args
        self.save_out = save_out
        # save_mask(needs) -> one bool per argument: whether the VJP reads that argument's
        # value given which arguments need gradients (mul: a only for b's gradient). Arguments
        # it does not read are kept as shape/dtype stand-ins: no reference, no version check.
        self.save_mask = save_mask
        self.save_masks = None if save_mask is None else _MaskTable(save_mask)
        self.nout = nout
        self.nondiff_outputs = nondiff_outputs
        self.sparsity = sparsity
        self.view = view  # False, True (always a view of argument 0) or "maybe"
        # the impl on floating arrays as steps computing the same values with the same
        # operations, for ``dualad.jit``'s code generator to write inline (no Python frame per
        # call): ``((name, args), ...)``, each step the array module's function ``name`` on
        # ``args`` (an int: the op's argument; ``("r", k)``: step k's result, used once;
        # ``("c", value)``: a Python number), the last step's result the op's. None for most
        # ops (set after registration, e.g. ``sin_backward``'s)
        self.inline = None
        self.fast = None  # the public caller with a fast path, for ops without parameters
        # the graph node class (``AddBackward0``): the tape makes it when it first records
        # this op (``rev.record.node_class``); the core knows nothing of nodes
        self.node_name = node_name or _node_name(name)
        self.node_cls = None

    def __repr__(self) -> str:
        return f"<dualad op {self.name}>"


class _MaskTable(dict):
    """``save_mask(needs)`` tabulated per ``needs`` tuple as nodes are recorded (a dict lookup
    on the recording path instead of a call)."""

    __slots__ = ("save_mask",)

    def __init__(self, save_mask: Callable) -> None:
        super().__init__()
        self.save_mask = save_mask

    def __missing__(self, needs: tuple) -> tuple:
        keep = self[needs] = tuple(bool(k) for k in self.save_mask(needs))
        return keep


def _impl_of_kernel(kernel: Callable) -> Callable:
    def impl(xp, *arrays):
        return kernel(*arrays)

    return impl


def _node_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Backward0"


def register(op: OpDef) -> OpDef:
    if op.name in REGISTRY:
        raise ValueError(f"dualad: op {op.name!r} is registered twice")
    REGISTRY[op.name] = op
    return op
