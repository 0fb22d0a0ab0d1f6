"""einsum: Einstein summation through ``opt_einsum``, for the op and for its derivatives.

Invariants:
- The op's static parameter is an *explicit* equation (``"ij,jk->ik"``) over single symbols:
  the public ``einsum`` resolves ellipses (each ellipsis dimension gets a fresh symbol), the
  implicit output and spaces once, caching the result per (equation, operand ranks).
- The contraction order is found once per (equation, operand shapes) with
  ``opt_einsum.contract_expression`` and kept in ``_PATH_CACHE``; the forward op, its JVP and its
  VJP (which are einsums themselves, called through the same op) all reuse it.
- Subscripts of one size may meet subscripts of size 1 (broadcasting, as in NumPy and PyTorch).
"""

from __future__ import annotations

import opt_einsum

from .._creation import as_tensor, eye
from .._dispatch import OpDef, dispatch, register
from .._tensor import Tensor
from ._exports import Exports
from ._helpers import conj
from .base import broadcast_to, move_bdim_to_front, reshape

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# (explicit equation, operand shapes) -> opt_einsum.ContractExpression (holds the path)
_PATH_CACHE: dict = {}
_PATH_CACHE_LIMIT = 4096
# (user equation, operand ranks) -> explicit equation
_PARSE_CACHE: dict = {}
# (explicit equation, operand index) -> how to build that operand's VJP contraction
_VJP_PLANS: dict = {}


def clear_einsum_caches() -> None:
    """Forget every cached contraction path and parsed equation (used by tests)."""
    _PATH_CACHE.clear()
    _PARSE_CACHE.clear()
    _VJP_PLANS.clear()


def _fresh_symbols(used, count: int) -> list[str]:
    """``count`` opt_einsum symbols that do not occur in ``used``."""
    out = []
    i = 0
    while len(out) < count:
        symbol = opt_einsum.get_symbol(i)
        if symbol not in used:
            out.append(symbol)
        i += 1
    return out


# ---------------------------------------------------------------------------------------------
# parsing (user equation -> explicit equation)


def _error(message: str) -> RuntimeError:
    return RuntimeError(f"dualad.einsum: {message}")


def _tokens(term: str, position: str):
    """The subscripts of one term as a list of letters, with ``...`` as the token ``None``."""
    if term.count("...") > 1:
        raise _error(f"found more than one ellipsis ('...') in {position}")
    tokens = []
    i = 0
    while i < len(term):
        char = term[i]
        if term.startswith("...", i):
            tokens.append(None)
            i += 3
            continue
        if not char.isascii() or not char.isalpha():
            raise _error(
                f"invalid subscript {char!r} in {position}: subscripts must be letters in "
                "[a-zA-Z] (or '...')"
            )
        tokens.append(char)
        i += 1
    return tokens


def _parse(equation: str, ndims: tuple) -> str:
    key = (equation, ndims)
    explicit = _PARSE_CACHE.get(key)
    if explicit is None:
        explicit = _PARSE_CACHE[key] = _parse_uncached(equation, ndims)
    return explicit


def _parse_uncached(equation: str, ndims: tuple) -> str:
    text = equation.replace(" ", "")
    if "->" in text:
        lhs, rhs = text.split("->", 1)
        if "->" in rhs:
            raise _error(f"invalid equation {equation!r}: more than one '->'")
    else:
        lhs, rhs = text, None
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        more = "more" if len(ndims) > len(terms) else "fewer"
        raise _error(
            f"{more} operands were provided than specified in the equation {equation!r} "
            f"({len(ndims)} operands, {len(terms)} terms)"
        )
    parsed = [_tokens(term, f"operand {k}'s subscripts") for k, term in enumerate(terms)]
    letters = {t for tokens in parsed for t in tokens if t is not None}
    ellipsis_dims = []
    for k, (tokens, ndim) in enumerate(zip(parsed, ndims)):
        named = sum(t is not None for t in tokens)
        if None in tokens:
            if named > ndim:
                raise _error(
                    f"operand {k} has {ndim} dimensions but the equation {equation!r} names "
                    f"{named} subscripts for it besides the ellipsis"
                )
            ellipsis_dims.append(ndim - named)
        else:
            if named != ndim:
                raise _error(
                    f"the number of subscripts in the equation ({named}) does not match the "
                    f"number of dimensions ({ndim}) for operand {k} and no ellipsis was given"
                )
            ellipsis_dims.append(0)
    n_ellipsis = max(ellipsis_dims, default=0)
    ellipsis_symbols = _fresh_symbols(letters, n_ellipsis)
    inputs = []
    for tokens, count in zip(parsed, ellipsis_dims):
        own = ellipsis_symbols[n_ellipsis - count :]  # ellipsis dims broadcast from the right
        inputs.append("".join("".join(own) if t is None else t for t in tokens))
    if rhs is None:
        counts: dict = {}
        for tokens in parsed:
            for t in tokens:
                if t is not None:
                    counts[t] = counts.get(t, 0) + 1
        output = "".join(ellipsis_symbols) + "".join(sorted(t for t, c in counts.items() if c == 1))
    else:
        out_tokens = _tokens(rhs, "the output subscripts")
        seen = set()
        for t in out_tokens:
            if t is None:
                continue
            if t in seen:
                raise _error(f"output subscript {t!r} appears more than once in the output")
            if t not in letters:
                raise _error(
                    f"output subscript {t!r} does not appear in the equation for any input operand"
                )
            seen.add(t)
        # an ellipsis missing from an explicit output sums its dimensions out (PyTorch)
        output = "".join("".join(ellipsis_symbols) if t is None else t for t in out_tokens)
    return ",".join(inputs) + "->" + output


def _sublist_equation(args) -> tuple[str, list]:
    """torch's sublist form ``einsum(op0, [0, 1], op1, [1, 2], [0, 2])``."""
    operands, terms = [], []
    items = list(args)
    output = None
    if len(items) % 2 == 1:
        output = items.pop()
    for i in range(0, len(items), 2):
        operands.append(items[i])
        terms.append(_sublist_term(items[i + 1]))
    equation = ",".join(terms)
    if output is not None:
        equation += "->" + _sublist_term(output)
    return equation, operands


def _sublist_term(sublist) -> str:
    parts = []
    for s in sublist:
        if s is Ellipsis:
            parts.append("...")
        elif isinstance(s, int) and 0 <= s < 52:
            parts.append(opt_einsum.get_symbol(s))
        else:
            raise _error(f"subscript in a sublist must be an int in [0, 52) or Ellipsis, got {s!r}")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# the op


def _check_sizes(equation: str, shapes: tuple) -> None:
    lhs, _ = equation.split("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise _error(f"equation {equation!r} has {len(terms)} terms for {len(shapes)} operands")
    sizes: dict = {}
    where: dict = {}
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        if len(term) != len(shape):
            raise _error(
                f"operand {k} has shape {tuple(shape)} but the subscripts {term!r} of equation "
                f"{equation!r} name {len(term)} dimensions"
            )
        own: dict = {}
        for letter, size in zip(term, shape):
            if letter in own and own[letter] != size:
                raise _error(
                    f"subscript {letter!r} is repeated for operand {k} but the sizes don't match, "
                    f"{own[letter]} != {size} (equation {equation!r}, shape {tuple(shape)})"
                )
            own[letter] = size
            known = sizes.get(letter)
            if known is None or known == 1:
                sizes[letter] = size
                where[letter] = k
            elif size not in (1, known):
                described = ", ".join(str(tuple(s)) for s in shapes)
                raise _error(
                    f"operands do not broadcast with remapped shapes: subscript {letter!r} has "
                    f"size {known} for operand {where[letter]} but size {size} for operand {k} "
                    f"(equation {equation!r}, shapes {described})"
                )


def contraction(equation: str, shapes: tuple):
    """The cached ``opt_einsum`` expression (contraction path) for an explicit equation."""
    key = (equation, shapes)
    expression = _PATH_CACHE.get(key)
    if expression is None:
        _check_sizes(equation, shapes)
        if len(_PATH_CACHE) >= _PATH_CACHE_LIMIT:
            _PATH_CACHE.clear()
        expression = _PATH_CACHE[key] = opt_einsum.contract_expression(equation, *shapes)
    return expression


def _root(array):
    base = array.base
    return array if base is None else base


def _einsum_impl(xp, *arrays, equation):
    expression = contraction(equation, tuple(a.shape for a in arrays))
    out = expression(*arrays, backend=xp.__name__)
    # one-operand equations ("ij->ji", "ii->i") can come back as views of the input; the op
    # promises a fresh array (writing into the result must not change the operand)
    if len(arrays) == 1 and (out is arrays[0] or _root(out) is _root(arrays[0])):
        out = out.copy()
    return out


def _einsum_jvp(tangents, outs, args, params):
    equation = params["equation"]
    total = None
    for k, tangent in enumerate(tangents):
        if tangent is None:
            continue
        operands = (*args[:k], tangent, *args[k + 1 :])
        term = contract(equation, operands)
        total = term if total is None else total + term
    return total


def _vjp_plan(equation: str, k: int):
    """How operand k's cotangent is contracted: (equation, eye specs, kept dims, other ops)."""
    key = (equation, k)
    plan = _VJP_PLANS.get(key)
    if plan is not None:
        return plan
    lhs, output = equation.split("->")
    terms = lhs.split(",")
    term = terms[k]
    others = [j for j in range(len(terms)) if j != k]
    fresh = iter(_fresh_symbols(set(equation), len(term)))
    # a subscript repeated within operand k (a diagonal) becomes distinct subscripts tied
    # together by identity matrices: "ii->i" has cotangent "i,ia->ia"
    renamed, eyes, seen = [], [], set()
    for position, letter in enumerate(term):
        if letter in seen:
            new = next(fresh)
            eyes.append((letter, new, position))
            renamed.append(new)
        else:
            seen.add(letter)
            renamed.append(letter)
    available = set(output)
    for j in others:
        available.update(terms[j])
    for letter, new, _ in eyes:
        available.update((letter, new))
    # subscripts found only in operand k were summed out: the cotangent is constant along them,
    # so they are left out of the contraction and restored by broadcasting
    kept = tuple(i for i, letter in enumerate(renamed) if letter in available)
    inputs = [output] + [terms[j] for j in others] + [letter + new for letter, new, _ in eyes]
    grad_equation = ",".join(inputs) + "->" + "".join(renamed[i] for i in kept)
    plan = _VJP_PLANS[key] = (grad_equation, tuple(eyes), kept, tuple(others))
    return plan


def _real_dtype(dtype):
    import numpy as np

    return np.empty(0, dtype).real.dtype


def _einsum_vjp(cts, outs, args, params, needs):
    equation = params["equation"]
    ct = cts[0]
    grads = []
    for k, need in enumerate(needs):
        if not need:
            grads.append(None)
            continue
        grad_equation, eyes, kept, others = _vjp_plan(equation, k)
        shape = tuple(args[k].shape)
        operands = [ct]
        operands.extend(conj(args[j]) for j in others)
        if eyes:
            dtype = _real_dtype(ct.dtype)
            operands.extend(
                eye(shape[position], dtype=dtype, device=ct.device) for _, _, position in eyes
            )
        grad = contract(grad_equation, operands)
        if len(kept) != len(shape):
            grad_shape = tuple(grad.shape)
            full = [1] * len(shape)
            for i, size in zip(kept, grad_shape):
                full[i] = size
            grad = reshape(grad, tuple(full))
        # a subscript of size 1 in every other operand but not in operand k: broadcast back
        # (the opposite case, size 1 in operand k only, is summed by the engine's unbroadcast)
        if tuple(grad.shape) != shape:
            target = tuple(max(g, s) for g, s in zip(grad.shape, shape))
            if target != tuple(grad.shape):
                grad = broadcast_to(grad, target)
        grads.append(grad)
    return tuple(grads)


def _einsum_batch(op, args, bdims, params):
    equation = params["equation"]
    lhs, output = equation.split("->")
    terms = lhs.split(",")
    (batch,) = _fresh_symbols(set(equation), 1)
    new_terms, moved = [], []
    for term, arg, bdim in zip(terms, args, bdims):
        if bdim is None:
            new_terms.append(term)
            moved.append(arg)
        else:
            new_terms.append(batch + term)
            moved.append(move_bdim_to_front(arg, bdim))
    return contract(",".join(new_terms) + "->" + batch + output, moved), 0


# (sparsity: an output element reads the operand elements whose labels agree with its own)
_RULE = ("einsum", "bilinear")
_einsum_op = register(
    OpDef(
        "einsum",
        _einsum_impl,
        vjp=_einsum_vjp,
        jvp=_einsum_jvp,
        batch=_einsum_batch,
        sparsity=_RULE,
    )
)


def contract(equation: str, operands) -> Tensor:
    """Run the einsum op on an explicit equation (no parsing); used by rules and other ops."""
    return dispatch(_einsum_op, tuple(operands), {"equation": equation})


@public.function
def einsum(equation, *operands) -> Tensor:
    """Einstein summation, contracted in the order ``opt_einsum`` finds best (path cached).

    ``einsum("ij,jk->ik", a, b)``; the operands may also be passed as one list, and torch's
    sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` works too. ``...`` stands for
    broadcast dimensions; without ``->`` the output holds the ellipsis dimensions and then the
    subscripts that appear once, in alphabetical order. A subscript repeated in one operand
    takes a diagonal (``"ii->i"``); subscripts missing from the output are summed.

    Gradients (both modes, any order) are einsums themselves and go through the same cached
    contraction paths.

    >>> import dualad
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> dualad.einsum("ij,j->i", a, dualad.tensor([1.0, 1.0]))
    tensor([3., 7.])
    >>> dualad.einsum("ii", a)
    tensor(5.)
    """
    if not isinstance(equation, str):
        equation, operands = _sublist_equation((equation, *operands))
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    if not operands:
        raise _error("must provide at least one operand")
    tensors = []
    for operand in operands:
        if not isinstance(operand, Tensor):
            operand = as_tensor(operand)
        tensors.append(operand)
    explicit = _parse(equation, tuple(t.ndim for t in tensors))
    return dispatch(_einsum_op, tuple(tensors), {"equation": explicit})
