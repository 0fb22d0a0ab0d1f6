"""``torch.norm`` (``dualad.norm``, ``Tensor.norm``): the one function that picks a vector norm
(``ops/norms.py``) or, for ``p="nuc"``, the nuclear norm: the sum of singular values
(``ops/svd.py``). It sits above both in the layers of ``ops/``, so it needs no import from a
higher layer.
"""

from __future__ import annotations

from ._dims import normalize_dim, pick_dim, pick_keepdim
from ._exports import Exports
from ._reducing import _as_tensor, _sum
from .base import movedim, unsqueeze
from .norms import vector_norm
from .svd import svdvals

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _nuclear(x, dim, keepdim: bool):
    """The sum of the singular values of ``x`` over the two dims ``dim`` (the last two by
    default); zero singular values get gradient 0 (``svdvals``'s rule)."""
    dim = (-2, -1) if dim is None else dim
    if isinstance(dim, int) or len(dim) != 2:
        raise RuntimeError(f"dualad.norm: p='nuc' needs a 2-tuple dim, got {dim!r}")
    if x.ndim < 2:
        raise RuntimeError(
            f"dualad.norm: p='nuc' needs at least 2 dimensions (shape {tuple(x.shape)})"
        )
    row, col = (normalize_dim(int(d), x.ndim, op="norm") for d in dim)
    if row == col:
        raise RuntimeError(f"dualad.norm: p='nuc' needs two different dims, got {dim!r}")
    values = svdvals(movedim(x, (row, col), (-2, -1)))
    out = _sum(values, (values.ndim - 1,), False)
    if keepdim:
        for d in sorted((row, col)):
            out = unsqueeze(out, d)
    return out


@public.method
def norm(x, p="fro", dim=None, keepdim: bool = False, dtype=None, *, axis=None, keepdims=None):
    """``torch.norm``: the vector ``p``-norm over ``dim`` (all elements by default).

    ``p``: ``"fro"`` or 2 (default), 1, ``inf``, ``-inf``, 0, any other number: always a vector
    norm over ``dim``; ``"nuc"``: the nuclear norm (sum of singular values) over the two dims
    ``dim`` (the last two by default). The 2-norm's gradient at 0 is 0 (PyTorch's subgradient).

    >>> import dualad
    >>> dualad.norm(dualad.tensor([3.0, -4.0]))
    tensor(5.)
    >>> dualad.norm(dualad.tensor([3.0, -4.0]), p=1)
    tensor(7.)
    >>> dualad.norm(dualad.tensor([[3.0, 0.0], [0.0, -4.0]]), p="nuc")
    tensor(7.)
    """
    dim = pick_dim(dim, axis)
    keepdim = pick_keepdim(keepdim, keepdims)
    if p is None:
        p = 2.0
    if isinstance(p, str):
        if p == "fro":
            p = 2.0
        elif p == "nuc":
            x = _as_tensor(x)
            if dtype is not None:
                x = x.to(dtype=dtype)
            return _nuclear(x, dim, keepdim)
        else:
            raise ValueError(f"dualad.norm: unknown norm type {p!r} (use 'fro', 'nuc' or a number)")
    return vector_norm(x, p, dim, keepdim, dtype=dtype)
