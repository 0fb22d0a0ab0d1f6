"""Products and contractions: matmul and friends (more in dualad.linalg)."""

from __future__ import annotations

from .._dispatch import EMPTY, OpDef, dispatch, register
from .elementwise import conj


def _matmul_vjp(cts, outs, args, params, needs):
    from .shape import matrix_transpose, reshape, unsqueeze

    ct = cts[0]
    a, b = args
    grad_a = grad_b = None
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    # promote vectors to matrices so one formula serves every case, then undo the promotion
    a2 = unsqueeze(a, 0) if a_vec else a
    b2 = unsqueeze(b, -1) if b_vec else b
    ct2 = ct
    if a_vec:
        ct2 = unsqueeze(ct2, -2 if not b_vec else 0)
    if b_vec:
        ct2 = unsqueeze(ct2, -1)
    if needs[0]:
        grad_a = matmul(ct2, conj(matrix_transpose(b2)))
        if a_vec:
            grad_a = reshape(grad_a, grad_a.shape[:-2] + grad_a.shape[-1:]) if grad_a.ndim > 2 else (
                reshape(grad_a, (grad_a.shape[-1],))
            )
    if needs[1]:
        grad_b = matmul(conj(matrix_transpose(a2)), ct2)
        if b_vec:
            grad_b = reshape(grad_b, grad_b.shape[:-1])
    return grad_a, grad_b


def _matmul_jvp(tangents, outs, args, params):
    a, b = args
    t_a, t_b = tangents
    total = None
    if t_a is not None:
        total = matmul(t_a, b)
    if t_b is not None:
        term = matmul(a, t_b)
        total = term if total is None else total + term
    return total


_matmul_op = register(
    OpDef(
        "matmul",
        lambda xp, a, b: xp.matmul(a, b),
        vjp=_matmul_vjp,
        jvp=_matmul_jvp,
        node_name="MmBackward0",
    )
)


def matmul(a, b):
    """Matrix product with NumPy's broadcasting rules (``a @ b``)."""
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and "
            f"{b.ndim}D"
        )
    return dispatch(_matmul_op, (a, b), EMPTY)


TENSOR_METHODS = ("matmul",)
