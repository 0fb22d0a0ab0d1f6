"""Bessel functions of ``dualad.special`` with scipy's names and signatures: ``j0 j1 y0 y1 k0
k1 k0e k1e`` and, of real order ``v``, ``jv jve yv yve iv ive kv kve``.

``jv yv iv kv`` take complex arguments too (holomorphic rules, PyTorch's conjugate convention
for gradients; the order stays real); the others real ones only (complex raises TypeError).
Each is an op with VJP, JVP and batching rules (``dualad/ops/bessel_cylinder.py``,
``bessel_modified.py``), differentiable in ``x``/``z`` at every order. The order ``v`` is a
number or a tensor broadcast against ``z`` (scipy's rule), without a derivative: a tracked ``v``
raises ``NotImplementedError`` when its derivative is asked for.
"""

from __future__ import annotations

import numpy as np

from .._creation import as_tensor
from .._tensor import Tensor
from ..ops.bessel_cylinder import _j0, _j1, _jv, _jve, _y0, _y1, _yv, _yve
from ..ops.bessel_modified import _iv, _ive, _k0, _k0e, _k1, _k1e, _kv, _kve

__all__ = [
    "iv",
    "ive",
    "j0",
    "j1",
    "jv",
    "jve",
    "k0",
    "k0e",
    "k1",
    "k1e",
    "kv",
    "kve",
    "y0",
    "y1",
    "yv",
    "yve",
]


def order(v):
    """An order or shape parameter as the ops take it: a Python number, or a tensor (arrays and
    lists become constant tensors)."""
    if isinstance(v, Tensor):
        return v
    if isinstance(v, np.generic):
        v = v.item()
    if type(v) in (int, float):
        return v
    if isinstance(v, (bool, complex)) or (type(v) is not list and not hasattr(v, "shape")):
        raise TypeError(f"an order must be a real number or an array, got {type(v).__name__}")
    return as_tensor(v)


def j0(x):
    """Bessel function of the first kind of order 0; ``j0'(x) = -j1(x)``.

    >>> import dualad
    >>> from dualad.special import j0
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> j0(x)
    tensor([1.        , 0.76519769], grad_fn=<J0Backward0>)
    >>> dualad.autograd.grad(j0(x).sum(), x)
    (tensor([-0.        , -0.44005059]),)
    """
    return _j0(x)


def j1(x):
    """Bessel function of the first kind of order 1; ``j1'(x) = (j0(x) - jv(2, x)) / 2``.

    >>> import dualad
    >>> from dualad.special import j1
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(j1(x).sum(), x)
    (tensor([0.5      , 0.3251471]),)
    """
    return _j1(x)


def y0(x):
    """Bessel function of the second kind of order 0, for ``x > 0``: -inf at 0 (its derivative
    ``-y1(0) = +inf``), nan below. ``y0'(x) = -y1(x)``.

    >>> import dualad
    >>> from dualad.special import y0
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> y0(x)
    tensor([      -inf, 0.08825696], grad_fn=<Y0Backward0>)
    >>> dualad.autograd.grad(y0(x).sum(), x)
    (tensor([       inf, 0.78121282]),)
    """
    return _y0(x)


def y1(x):
    """Bessel function of the second kind of order 1, for ``x > 0``: -inf at 0, where its
    derivative is +inf and its second derivative -inf (the pole ``-2/(pi x)``'s); nan below.

    >>> import dualad
    >>> from dualad.special import y1
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(y1(x).sum(), x)
    (tensor([       inf, 0.86946979]),)
    """
    return _y1(x)


def jv(v, z):
    """Bessel function of the first kind of real order ``v``; ``d/dz = (jv(v-1, z) - jv(v+1,
    z)) / 2``. Nan for ``z < 0`` unless ``v`` is an integer; infinite derivative at 0 for
    ``0 < v < 1``. Complex ``z`` too. ``v`` has no derivative (a tracked one raises
    NotImplementedError).

    >>> import dualad
    >>> from dualad.special import jv
    >>> z = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> jv(2.5, z)
    tensor([0.04949681, 0.22392453], grad_fn=<JvBackward0>)
    >>> dualad.autograd.grad(jv(2.5, z).sum(), z)
    (tensor([0.11655581, 0.21138811]),)
    """
    return _jv(order(v), z)


def jve(v, z):
    """``jv(v, z) * exp(-|Im z|)``: for the real ``z`` taken here, ``jv`` (scipy's values of
    ``jve``); its derivative is ``jv``'s.

    >>> import dualad
    >>> from dualad.special import jve
    >>> jve(0.5, dualad.tensor([1.0, 2.0]))
    tensor([0.67139671, 0.51301614])
    """
    return _jve(order(v), z)


def yv(v, z):
    """Bessel function of the second kind of real order ``v``, for ``z > 0``; ``d/dz = (yv(v-1,
    z) - yv(v+1, z)) / 2``. At 0 (``v >= 0``): -inf, with derivative +inf, second derivative
    -inf, ...; nan for ``z < 0``.

    >>> import dualad
    >>> from dualad.special import yv
    >>> z = dualad.tensor([0.0, 2.0], requires_grad=True)
    >>> yv(1.5, z)
    tensor([       -inf, -0.39562328], grad_fn=<YvBackward0>)
    >>> dualad.autograd.grad(yv(1.5, z).sum(), z)
    (tensor([       inf, 0.53150317]),)
    """
    return _yv(order(v), z)


def yve(v, z):
    """``yv(v, z) * exp(-|Im z|)``: for the real ``z`` taken here, ``yv`` (scipy's values of
    ``yve``, which may differ from ``yv``'s in the last bit); its derivative is ``yv``'s.

    >>> import dualad
    >>> from dualad.special import yve
    >>> yve(0.5, dualad.tensor([1.0]))
    tensor([-0.43109887])
    """
    return _yve(order(v), z)


def iv(v, z):
    """Modified Bessel function of the first kind of real order ``v``; ``d/dz = (iv(v-1, z) +
    iv(v+1, z)) / 2``. Nan for ``z < 0`` unless ``v`` is an integer.

    >>> import dualad
    >>> from dualad.special import iv
    >>> z = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dualad.autograd.grad(iv(2.5, z).sum(), z)
    (tensor([0.15077805, 0.60318934]),)
    """
    return _iv(order(v), z)


def ive(v, z):
    """``exp(-|z|) iv(v, z)``; its derivative ``(ive(v-1, z) + ive(v+1, z)) / 2 - sign(z)
    ive(v, z)`` (the asymptotic series beyond ``|z| = 50 + 10 v**2``, where that cancels) jumps
    at 0 by the kink of ``exp(-|z|)``; there it is the mean of the one-sided derivatives.

    >>> import dualad
    >>> from dualad.special import ive
    >>> z = dualad.tensor([1.0, 100.0], requires_grad=True)
    >>> dualad.autograd.grad(ive(1.5, z).sum(), z)
    (tensor([ 0.07499648, -0.00019349]),)
    """
    return _ive(order(v), z)


def kv(v, z):
    """Modified Bessel function of the second kind of real order ``v``, for ``z > 0``; ``d/dz
    = -(kv(v-1, z) + kv(v+1, z)) / 2``. ``kv(v, 0) = inf`` with derivative -inf; nan below 0.

    >>> import dualad
    >>> from dualad.special import kv
    >>> z = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(kv(0.5, z).sum(), z)
    (tensor([       -inf, -0.69160276]),)
    """
    return _kv(order(v), z)


def kve(v, z):
    """``exp(z) kv(v, z)``, for ``z > 0``; its derivative ``kve(v, z) - (kve(v-1, z) +
    kve(v+1, z)) / 2`` (the asymptotic series beyond ``z = 50 + 10 v**2``). ``inf`` at 0 with
    derivative -inf (and the signs of the pole's derivatives at higher orders).

    >>> import dualad
    >>> from dualad.special import kve
    >>> kve(0.5, dualad.tensor([0.0, 100.0]))
    tensor([       inf, 0.12533141])
    """
    return _kve(order(v), z)


def k0(x):
    """Modified Bessel function of the second kind of order 0, for ``x > 0``: inf at 0, where
    its derivative ``-k1(0)`` is -inf; nan below.

    >>> import dualad
    >>> from dualad.special import k0
    >>> k0(dualad.tensor([0.0, 1.0]))
    tensor([       inf, 0.42102444])
    """
    return _k0(x)


def k1(x):
    """Modified Bessel function of the second kind of order 1, for ``x > 0``: inf at 0, where
    its derivative ``-(k0 + kv(2, .)) / 2`` is -inf; nan below.

    >>> import dualad
    >>> from dualad.special import k1
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> dualad.autograd.grad(k1(x).sum(), x)
    (tensor([-1.02293167]),)
    """
    return _k1(x)


def k0e(x):
    """``exp(x) k0(x)``, for ``x > 0``; its derivative ``k0e - k1e`` (the asymptotic series
    beyond 50); inf at 0 with derivative -inf.

    >>> import dualad
    >>> from dualad.special import k0e
    >>> x = dualad.tensor([1.0, 100.0], requires_grad=True)
    >>> dualad.autograd.grad(k0e(x).sum(), x)
    (tensor([-0.49169041, -0.00062433]),)
    """
    return _k0e(x)


def k1e(x):
    """``exp(x) k1(x)``, for ``x > 0``; its derivative ``k1e - (k0e + kve(2, .)) / 2`` (the
    asymptotic series beyond 60); inf at 0 with derivative -inf.

    >>> import dualad
    >>> from dualad.special import k1e
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> dualad.autograd.grad(k1e(x).sum(), x)
    (tensor([-1.14446308]),)
    """
    return _k1e(x)
