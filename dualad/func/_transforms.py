"""``grad``, ``grad_and_value``, ``vjp`` (grad levels), and the transforms built from them and
from ``jvp``/``vmap``: ``jacrev``, ``jacfwd``, ``hessian``, ``hvp``, ``linearize``.

>>> import dualad
>>> from dualad.func import grad
>>> grad(lambda x: (x ** 3).sum())(dualad.tensor([1.0, 2.0]))
tensor([ 3., 12.])
"""

from __future__ import annotations

import functools

from .._tensor import Tensor
from .._tree import flatten, tree_map
from .grad_level import backward, enter, leave, track, unwrap


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_callable(func, name: str) -> None:
    """A transform's function argument must be callable (a clear error at once, not later)."""
    if not callable(func):
        raise TypeError(
            f"dualad.func.{name}: expected a function as the first argument, got "
            f"{type(func).__name__}"
        )


def _normalize_argnums(argnums, count: int, name: str) -> tuple[int, ...]:
    """``argnums`` as a tuple of non-negative positions (checked against ``count`` inputs)."""
    if _is_int(argnums):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and argnums and all(_is_int(a) for a in argnums):
        nums = argnums
    else:
        raise RuntimeError(
            f"{name}: argnums must be int or Tuple[int, ...], got: {argnums!r}"
            + (" (an empty tuple)" if argnums == () else "")
        )
    result = []
    for a in nums:
        if not -count <= a < count:
            raise RuntimeError(
                f"{name}: Got argnums={a}, but only {count} positional inputs (expected argnums "
                f"in range [{-count}, {count - 1}])"
            )
        result.append(a % count)
    if len(set(result)) != len(result):
        # (PyTorch's text; one slot named twice would ask for one derivative in two places: to
        # differentiate with respect to one tensor in two slots, pass it in both slots)
        raise RuntimeError(
            f"{name}: argnums elements must be unique, got {tuple(result)} (argnums={argnums!r} "
            "names one argument more than once; each argument slot gets its own derivative, so "
            "pass a tensor in two slots to differentiate each use of it)"
        )
    return tuple(result)


def _split_aux(result, name: str):
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(
            f"{name}(f, ...)(*args): output of function f should be a tuple: (output, aux) if "
            "has_aux is True"
        )
    return result


def _zeros_for_unused(grads: list, inputs: list) -> list:
    for g in grads:
        if g is None:
            break
    else:
        return grads
    from .._creation import zeros_like

    return [zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


def _wrap_argnums(args: tuple, nums: tuple, level, name: str):
    """Replace the differentiated arguments by leaves of ``level``; returns the new argument
    list, the input leaves, their capture nodes and one rebuild function per argnum."""
    args = list(args)
    inputs: list = []
    nodes: list = []
    rebuilds = []
    for i in nums:
        leaves, rebuild = flatten(args[i])
        wrapped = [track(leaf, level, name) for leaf in leaves]
        inputs.extend(leaves)
        nodes.extend(w._gnode for w in wrapped)
        rebuilds.append((len(leaves), rebuild))
        args[i] = rebuild(wrapped)
    return args, inputs, nodes, rebuilds


def _rebuild_per_argnum(flat: list, rebuilds: list) -> list:
    out = []
    start = 0
    for count, rebuild in rebuilds:
        out.append(rebuild(flat[start : start + count]))
        start += count
    return out


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """``(gradient, value)`` of a scalar-valued ``func`` (``(gradient, (value, aux))`` with
    ``has_aux``). The gradient is with respect to ``argnums`` (an int: that argument's pytree;
    a tuple: a tuple of them)."""
    return _grad_transform(func, argnums, has_aux, "grad_and_value", with_value=True)


def grad(func, argnums=0, has_aux: bool = False):
    """The gradient of a scalar-valued ``func`` with respect to ``argnums`` (``(gradient, aux)``
    with ``has_aux``). Composes with every transform (``vmap(grad(f))`` gives per-example
    gradients; ``grad(grad(f))`` second derivatives).

    >>> import dualad
    >>> from dualad.func import grad
    >>> grad(grad(dualad.sin))(dualad.tensor(0.0))
    tensor(-0.)
    """
    return _grad_transform(func, argnums, has_aux, "grad", with_value=False)


def _grad_transform(func, argnums, has_aux: bool, name: str, with_value: bool):
    _check_callable(func, name)

    @functools.wraps(func, updated=())
    def wrapper(*args, **kwargs):
        nums = _normalize_argnums(argnums, len(args), name)
        level = enter(f"dualad.func.{name}")
        try:
            args, inputs, nodes, rebuilds = _wrap_argnums(args, nums, level, name)
            result = func(*args, **kwargs)
            aux = None
            if has_aux:
                result, aux = _split_aux(result, name)
            _check_scalar(result, name)
        finally:
            leave(level)
        from .._creation import ones_like

        value = unwrap(result, level)
        grads = backward(level, [result], [ones_like(value)], nodes, retain=False)
        grads = _rebuild_per_argnum(_zeros_for_unused(grads, inputs), rebuilds)
        gradient = grads[0] if _is_int(argnums) else tuple(grads)
        if has_aux:
            aux = tree_map(lambda v: unwrap(v, level), aux)
            return (gradient, (value, aux)) if with_value else (gradient, aux)
        return (gradient, value) if with_value else gradient

    return wrapper


def _check_scalar(result, name: str) -> None:
    if not isinstance(result, Tensor):
        raise RuntimeError(
            f"dualad.func.{name}: expected f(*args) to return a scalar Tensor, got "
            f"{type(result).__name__}"
        )
    if tuple(result.shape) != ():
        raise RuntimeError(
            f"dualad.func.{name}: expected f(*args) to return a scalar Tensor, got shape "
            f"{tuple(result.shape)}. Maybe you wanted to use the vjp or jacrev APIs instead?"
        )
    if result.dtype.kind != "f":
        raise RuntimeError(
            f"dualad.func.{name}: expected f(*args) to return a real floating point scalar "
            f"Tensor, got dtype {result.dtype}"
        )


def vjp(func, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` returns a tuple with one gradient
    (pytree) per primal. ``vjp_fn`` can be called many times, under other transforms too
    (``jacrev`` vmaps it).

    >>> import dualad
    >>> from dualad.func import vjp
    >>> out, vjp_fn = vjp(dualad.sin, dualad.tensor([0.0]))
    >>> vjp_fn(dualad.tensor([2.0]))
    (tensor([2.]),)
    """
    _check_callable(func, "vjp")
    return _vjp(func, primals, has_aux, "vjp")


def _vjp(func, primals: tuple, has_aux: bool, name: str):
    """``vjp``; ``name``: the transform the user called (``jacrev``, ``linearize`` ...), which
    error messages name."""
    level = enter(f"dualad.func.{name}")
    try:
        leaves, rebuild = flatten(primals)
        wrapped = [track(leaf, level, "vjp") for leaf in leaves]
        nodes = [w._gnode for w in wrapped]
        result = func(*rebuild(wrapped))
        aux = None
        if has_aux:
            result, aux = _split_aux(result, "vjp")
        out_leaves, rebuild_out = flatten(result)
        for leaf in out_leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(
                    "dualad.func.vjp: expected f(*primals) to return only Tensors (or pytrees of "
                    f"Tensors), got {type(leaf).__name__}"
                )
    finally:
        leave(level)
    values = [unwrap(o, level) for o in out_leaves]

    def vjp_fn(cotangents, *, retain_graph: bool = True):
        ct_leaves, _ = flatten(cotangents)
        if len(ct_leaves) != len(out_leaves):
            raise RuntimeError(
                "dualad.func.vjp: Expected pytree structure of cotangents to be the same as "
                f"pytree structure of outputs to the function ({len(ct_leaves)} cotangents for "
                f"{len(out_leaves)} outputs)"
            )
        for i, (ct, v) in enumerate(zip(ct_leaves, values)):
            if not isinstance(ct, Tensor):
                raise RuntimeError(
                    f"dualad.func.vjp: cotangent {i} must be a Tensor, got {type(ct).__name__}"
                )
            if tuple(ct.shape) != tuple(v.shape):
                raise RuntimeError(
                    f"dualad.func.vjp: Mismatch in shape: cotangent {i} has shape "
                    f"{tuple(ct.shape)} but the output has shape {tuple(v.shape)}"
                )
            if ct.dtype != v.dtype and v.dtype.kind in "fc":
                if (ct.dtype.kind == "c") != (v.dtype.kind == "c"):
                    raise RuntimeError(
                        "For complex Tensors, both grad_output and output are required to have "
                        f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                        f"{ct.dtype} and output[{i}] has a dtype of {v.dtype}."
                    )
                ct_leaves[i] = ct.to(dtype=v.dtype)  # (as backward does: integers, widths)
        grads = backward(level, out_leaves, ct_leaves, nodes, retain=retain_graph)
        return tuple(rebuild(_zeros_for_unused(grads, leaves)))

    out = rebuild_out(values)
    if has_aux:
        return out, vjp_fn, tree_map(lambda v: unwrap(v, level), aux)
    return out, vjp_fn


def _restricted(func, args: tuple, nums: tuple):
    """``func`` as a function of the arguments at ``nums`` only (the others fixed)."""

    def restricted(*diff):
        full = list(args)
        for i, value in zip(nums, diff):
            full[i] = value
        return func(*full)

    return restricted


def _basis(total: int, like: Tensor, start: int = 0, stop: int | None = None):
    """Rows ``start:stop`` of the ``total x total`` identity (all of them by default), made
    without the others: a chunked Jacobian holds one chunk of the basis at a time."""
    from .._creation import eye, zeros

    if stop is None or (start == 0 and stop == total):
        return eye(total, dtype=like.dtype, device=like.device)
    rows = zeros(stop - start, total, dtype=like.dtype, device=like.device)
    rows[:, start:stop] = eye(stop - start, dtype=like.dtype, device=like.device)
    return rows


def _error_if_complex(name: str, leaves, what: str) -> None:
    """``jacrev``/``jacfwd`` build real Jacobians, as PyTorch's: a complex input or output has
    no real Jacobian of this layout (the derivative is R-linear, not C-linear, in general), so
    it raises PyTorch's error rather than return the C-linear part or a truncated real one."""
    for idx, leaf in enumerate(flatten(leaves)[0]):
        if isinstance(leaf, Tensor) and leaf.dtype.kind == "c":
            raise RuntimeError(
                f"{name}: Expected all {what} to be real but received complex tensor at "
                f"flattened input idx: {idx}"
            )


def _check_chunk_size(chunk_size, name: str) -> None:
    if chunk_size is not None and (not _is_int(chunk_size) or chunk_size <= 0):
        raise ValueError(f"{name}: `chunk_size` should be greater than 0. (got {chunk_size!r})")


def _over_basis(run, total: int, leaves: list, chunk_size):
    """``run(blocks)`` (a vmapped function of the basis blocks of ``leaves``) over the rows of
    the identity, ``chunk_size`` rows at a time (all at once for None); returns the output
    leaves, each ``(total, ...)``, and the first chunk's whole result."""
    if chunk_size is None or chunk_size >= total:
        result = run(_columns(_basis(total, leaves[0]), leaves))
        return flatten(result)[0], result
    from ..ops import cat

    pieces = []
    first = None
    for start in range(0, total, chunk_size):
        basis = _basis(total, leaves[0], start, min(start + chunk_size, total))
        result = run(_columns(basis, leaves))
        first = result if first is None else first
        pieces.append(flatten(result)[0])
    joined = [cat([piece[k] for piece in pieces], 0) for k in range(len(pieces[0]))]
    return joined, first


def _columns(basis, leaves: list) -> list:
    """The identity's columns split into one block per leaf, shaped ``(total, *leaf.shape)``."""
    total = basis.shape[0]
    if len(leaves) == 1:  # the usual case: one input (or output) leaf takes the whole basis
        return [_reshaped(basis, (total, *leaves[0].shape))]
    blocks = []
    offset = 0
    for leaf in leaves:
        n = leaf.numel()
        block = basis[:, offset : offset + n].reshape(total, *leaf.shape)
        if block.dtype != leaf.dtype:
            block = block.to(dtype=leaf.dtype)
        blocks.append(block)
        offset += n
    return blocks


def _reshaped(x: Tensor, shape: tuple) -> Tensor:
    """``x.reshape(shape)``, or ``x`` itself when it has that shape already (no extra op)."""
    return x if tuple(x.shape) == shape else x.reshape(*shape)


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None):
    """The Jacobian of ``func`` by reverse mode: ``vmap`` of ``vjp_fn`` over the standard basis
    of the output. Each output leaf gets ``(*out.shape, *in.shape)`` blocks (a tuple over
    ``argnums`` when it is a tuple).

    >>> import dualad
    >>> from dualad.func import jacrev
    >>> jacrev(lambda x: x * x)(dualad.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    _check_callable(func, "jacrev")
    return _jacrev(func, argnums, has_aux, chunk_size, "jacrev")


def _jacrev(func, argnums, has_aux: bool, chunk_size, title: str):
    """``jacrev``; ``title``: the transform the user called (``hessian`` calls this)."""
    from ..vmap.api import vmap

    _check_chunk_size(chunk_size, "jacrev")

    @functools.wraps(func, updated=())
    def wrapper(*args):
        _error_if_complex("jacrev", args, "inputs")
        nums = _normalize_argnums(argnums, len(args), "jacrev")
        diff = tuple(args[i] for i in nums)
        res = _vjp(_restricted(func, args, nums), diff, has_aux, title)
        out, vjp_fn = res[0], res[1]
        out_leaves, rebuild_out = flatten(out)
        _error_if_complex("jacrev", out_leaves, "outputs")
        in_leaves, rebuild_in = flatten(diff)
        total = sum(o.numel() for o in out_leaves)
        if total == 0:
            flat = [[_empty_block(o, x) for x in in_leaves] for o in out_leaves]
        elif total == 1:
            # one output element (a scalar loss, e.g. the inner jacrev of hessian): the basis has
            # one row, so a single backward pass is the whole vmap (one transform level less)
            from .._creation import ones_like

            row_leaves, _ = flatten(vjp_fn(rebuild_out([ones_like(o) for o in out_leaves])))
            flat = [
                [
                    _reshaped(r, (*o.shape, *x.shape)) if o.numel() else _empty_block(o, x)
                    for r, x in zip(row_leaves, in_leaves)
                ]
                for o in out_leaves
            ]
        else:
            batched_vjp = vmap(vjp_fn)
            # one (total, *in.shape) per input leaf
            row_leaves = _over_basis(
                lambda cts: batched_vjp(rebuild_out(cts)), total, out_leaves, chunk_size
            )[0]
            flat = []
            offset = 0
            for o in out_leaves:
                n = o.numel()
                flat.append(
                    [
                        _reshaped(r if n == total else r[offset : offset + n], (*o.shape, *x.shape))
                        for r, x in zip(row_leaves, in_leaves)
                    ]
                )
                offset += n
        jac = rebuild_out([_per_argnum(rebuild_in(blocks), argnums) for blocks in flat])
        return (jac, res[2]) if has_aux else jac

    return wrapper


def _per_argnum(per_arg: tuple, argnums):
    return per_arg[0] if _is_int(argnums) else per_arg


def _empty_block(out: Tensor, x: Tensor, dtype=None):
    from .._creation import zeros

    return zeros(*out.shape, *x.shape, dtype=x.dtype if dtype is None else dtype, device=x.device)


def jacfwd(
    func,
    argnums=0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
    chunk_size: int | None = None,
):
    """The Jacobian of ``func`` by forward mode: ``vmap`` of ``jvp`` over the standard basis of
    the inputs. Same layout as ``jacrev``. ``chunk_size`` (a dualad extension, as in
    ``jacrev``) pushes that many basis tangents at a time, bounding the memory of the batched
    intermediate values.

    >>> import dualad
    >>> from dualad.func import jacfwd
    >>> jacfwd(lambda x: x * x)(dualad.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    _check_callable(func, "jacfwd")
    _check_chunk_size(chunk_size, "jacfwd")
    return _jacfwd(func, argnums, has_aux, randomness, chunk_size, "jacfwd")


def _jacfwd(func, argnums, has_aux: bool, randomness: str, chunk_size, title: str):
    """``jacfwd``; ``title``: the transform the user called (``hessian`` calls this)."""
    from ..vmap.api import vmap
    from . import _jvp

    @functools.wraps(func, updated=())
    def wrapper(*args):
        _error_if_complex("jacfwd", args, "inputs")
        nums = _normalize_argnums(argnums, len(args), "jacfwd")
        diff = tuple(args[i] for i in nums)
        in_leaves, rebuild_in = flatten(diff)
        for leaf in in_leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(
                    "dualad.func.jacfwd: expected the differentiated arguments to be Tensors, "
                    f"got {type(leaf).__name__}"
                )
        restricted = _restricted(func, args, nums)
        total = sum(x.numel() for x in in_leaves)

        def push(*tangents):
            res = _jvp(
                restricted,
                diff,
                rebuild_in(list(tangents)),
                has_aux,
                copy_tangents=False,
                name=title,
            )
            _error_if_complex("jacfwd", res[0], "outputs")
            return (res[1], res[2]) if has_aux else res[1]

        if total == 0:
            # no basis to push: one call finds the outputs (and aux); every block is empty
            res = _jvp(
                restricted,
                diff,
                rebuild_in([x.detach() * 0 for x in in_leaves]),
                has_aux,
                copy_tangents=False,
                name=title,
            )
            out_leaves, rebuild_out = flatten(res[0])
            _error_if_complex("jacfwd", out_leaves, "outputs")
            jac = rebuild_out(
                [
                    _per_argnum(
                        rebuild_in([_empty_block(o, x, o.dtype) for x in in_leaves]), argnums
                    )
                    for o in out_leaves
                ]
            )
            return (jac, res[2]) if has_aux else jac
        # (randomness="same": vmap's own chunks replay the random state, so that every chunk
        # draws what the first one drew; they need the whole basis)
        replayed = randomness == "same"
        batched_push = vmap(
            push,
            out_dims=(0, None) if has_aux else 0,
            randomness=randomness,
            chunk_size=chunk_size if replayed else None,
        )
        auxes = []

        def run(tangents):
            result = batched_push(*tangents)
            if has_aux:
                result, aux = result
                auxes.append(aux)
            return result

        # one (total, *out.shape) per output leaf
        col_leaves, columns = _over_basis(run, total, in_leaves, None if replayed else chunk_size)
        _, rebuild_out = flatten(columns)
        aux = auxes[0] if has_aux else None
        flat = []
        for c in col_leaves:
            out_shape = tuple(c.shape[1:])
            m = 1
            for s in out_shape:
                m *= s
            blocks = []
            offset = 0
            for x in in_leaves:
                n = x.numel()
                block = c if n == total else c[offset : offset + n]
                block = _reshaped(block, (n, m)).transpose(0, 1)
                blocks.append(_reshaped(block, (*out_shape, *x.shape)))
                offset += n
            flat.append(_per_argnum(rebuild_in(blocks), argnums))
        jac = rebuild_out(flat)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func))`` (forward-over-reverse).

    >>> import dualad
    >>> from dualad.func import hessian
    >>> hessian(lambda x: (x**3).sum())(dualad.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    _check_callable(func, "hessian")
    inner = _jacrev(func, argnums, False, None, "hessian")
    return _jacfwd(inner, argnums, False, "error", None, "hessian")


def hvp(func, primals, tangents):
    """``(func(*primals), H·tangents)`` for a scalar ``func``: forward mode over the gradient
    (``jvp`` of ``grad``). With tuples the product is a tuple with one entry per primal, like
    ``jvp``; a single Tensor primal and tangent give a single Tensor product, as in
    ``torch.autograd.functional.hvp``.

    >>> import dualad
    >>> from dualad.func import hvp
    >>> cube = lambda x: (x**3).sum()
    >>> hvp(cube, (dualad.tensor([1.0, 2.0]),), (dualad.tensor([1.0, 1.0]),))[1]
    (tensor([ 6., 12.]),)
    >>> hvp(cube, dualad.tensor([1.0, 2.0]), dualad.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    from . import _jvp

    _check_callable(func, "hvp")
    single = isinstance(primals, Tensor) and isinstance(tangents, Tensor)
    if single:
        primals, tangents = (primals,), (tangents,)
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError(
            "dualad.func.hvp: Expected primals and tangents to be tuples (or both single "
            "Tensors). E.g. hvp(f, (x,), (t,))"
        )
    nums = tuple(range(len(primals)))
    if not nums:
        raise RuntimeError("dualad.func.hvp: expected at least one primal")

    def gradient_and_value(*p):
        return _grad_transform(func, nums, False, "hvp", with_value=True)(*p)

    (_, value), (product, _) = _jvp(
        gradient_and_value, primals, tangents, False, copy_tangents=True, name="hvp"
    )
    return value, (product[0] if single else product)


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the JVP at ``primals``.

    ``func`` runs once. Its reverse graph is recorded by ``vjp``; ``vjp_fn`` is linear in the
    cotangent, so the VJP of ``vjp_fn`` itself (recorded once, at a zero cotangent) is its
    transpose, the JVP: every ``jvp_fn`` call is one backward pass of that recorded graph.

    >>> import dualad
    >>> from dualad.func import linearize
    >>> out, jvp_fn = linearize(dualad.sin, dualad.tensor([0.0, 1.0]))
    >>> jvp_fn(dualad.tensor([2.0, 1.0]))
    tensor([2.        , 0.54030231])
    """
    from .._creation import zeros_like

    _check_callable(func, "linearize")
    out, vjp_fn = _vjp(func, primals, False, "linearize")
    out_leaves, rebuild_out = flatten(out)
    in_leaves, _ = flatten(primals)
    # outputs without a derivative (integer, boolean) get zero tangents, as in jvp
    diff = [k for k, o in enumerate(out_leaves) if o.dtype.kind in "fc"]
    fixed = [zeros_like(o) for o in out_leaves]

    def pullback(*cotangents):
        cts = list(fixed)
        for k, ct in zip(diff, cotangents):
            cts[k] = ct
        return vjp_fn(rebuild_out(cts))

    transpose = vjp(pullback, *[fixed[k] for k in diff])[1] if diff else None

    def jvp_fn(*tangents):
        tangent_leaves, _ = flatten(tangents)
        if len(tangent_leaves) != len(in_leaves):
            raise RuntimeError(
                "dualad.func.linearize: expected the tangents to have the structure of the "
                f"primals ({len(in_leaves)} tensors), got {len(tangent_leaves)}"
            )
        for i, (tangent, primal) in enumerate(zip(tangent_leaves, in_leaves)):
            if not isinstance(tangent, Tensor):
                raise RuntimeError(
                    f"dualad.func.linearize: tangent {i} must be a Tensor, got "
                    f"{type(tangent).__name__}"
                )
            if tuple(tangent.shape) != tuple(primal.shape):
                raise RuntimeError(
                    f"dualad.func.linearize: tangent {i} has shape {tuple(tangent.shape)} but "
                    f"its primal has shape {tuple(primal.shape)}"
                )
        result = [zeros_like(o) for o in out_leaves]
        if transpose is not None:
            for k, value in zip(diff, transpose(tuple(tangents))):
                result[k] = value
        return rebuild_out(result)

    return out, jvp_fn


__all__ = [
    "grad",
    "grad_and_value",
    "hessian",
    "hvp",
    "jacfwd",
    "jacrev",
    "linearize",
    "vjp",
]
