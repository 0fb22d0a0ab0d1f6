"""NumPy's 1-D convolution as one op: ``convolve_full(a, v)``, the full discrete convolution
``out[i] = sum_k a[k] v[i - k]`` of the last axes (leading dims are batch dims, equal on both),
behind ``dualad.numpy``'s ``convolve``, ``correlate`` and ``polymul``.

Its rules are convolutions too (so they compose to any order): the VJP correlates the
cotangent with the other factor (``grad a = full(ct, flip(conj v))[m-1 : m-1+n]``, likewise
for ``v``), the JVP is ``full(ta, v) + full(a, tv)``. The impl is NumPy's ``convolve`` for 1-D
inputs and, with batch dims, one ``einsum`` over a sliding-window view of the zero-padded
``a`` (no copy of the windows), so vmap runs it in one call.
"""

from __future__ import annotations

from .._dispatch import OpDef, dispatch, register
from ._batching import leading_batch
from ._helpers import conj
from .reordering import flip

__all__: list[str] = []


def _convolve_impl(xp, a, v):
    if a.ndim == 1:
        return xp.convolve(a, v)
    n, m = a.shape[-1], v.shape[-1]
    padded = xp.zeros((*a.shape[:-1], n + 2 * (m - 1)), dtype=xp.result_type(a, v))
    padded[..., m - 1 : m - 1 + n] = a
    windows = xp.lib.stride_tricks.sliding_window_view(padded, m, axis=-1)
    return xp.einsum("...ij,...j->...i", windows, xp.flip(v, axis=-1))


def _convolve_vjp(cts, outs, args, params, needs):
    a, v = args
    ct = cts[0]
    n, m = a.shape[-1], v.shape[-1]
    grad_a = _full(ct, flip(conj(v), -1))[..., m - 1 : m - 1 + n] if needs[0] else None
    grad_v = _full(ct, flip(conj(a), -1))[..., n - 1 : n - 1 + m] if needs[1] else None
    return grad_a, grad_v


def _convolve_jvp(tangents, outs, args, params):
    a, v = args
    ta, tv = tangents
    out = None if ta is None else _full(ta, v)
    if tv is not None:
        out = _full(a, tv) if out is None else out + _full(a, tv)
    return out


convolve_full_op = register(
    OpDef(
        "convolve_full",
        _convolve_impl,
        vjp=_convolve_vjp,
        jvp=_convolve_jvp,
        batch=leading_batch,
        sparsity=("convolve", "bilinear"),
    )
)


def _full(a, v):
    return dispatch(convolve_full_op, (a, v), {})
