"""Spherical Bessel functions of ``dualad.special`` with scipy's signatures ``f(n, z,
derivative=False)``: ``spherical_jn spherical_yn spherical_in spherical_kn`` (the ops of
``dualad/ops/spherical_bessel.py``). The order ``n`` is a static integer >= 0 (a tracked tensor
raises NotImplementedError); real ``z`` only. With ``derivative=True`` the result is the
derivative, itself differentiable."""

from __future__ import annotations

from ..ops.spherical_bessel import spherical

__all__ = ["spherical_in", "spherical_jn", "spherical_kn", "spherical_yn"]


def spherical_jn(n, z, derivative=False):
    """Spherical Bessel function of the first kind ``j_n(z)``, or ``j_n'(z)`` with
    ``derivative=True`` (``j_0 = sin(z)/z``, 1 at 0; every derivative exact there too).

    >>> import dualad
    >>> from dualad.special import spherical_jn
    >>> z = dualad.tensor([0.0, 2.0], requires_grad=True)
    >>> spherical_jn(0, z)
    tensor([1.        , 0.45464871], grad_fn=<SphericalJnBackward0>)
    >>> dualad.autograd.grad(spherical_jn(1, z).sum(), z)
    (tensor([0.33333333, 0.01925094]),)
    """
    return spherical("jn", n, z, derivative)


def spherical_yn(n, z, derivative=False):
    """Spherical Bessel function of the second kind ``y_n(z)`` (or ``y_n'``): -inf at 0, where
    its derivative is +inf for n = 0 and nan for n >= 1 (as scipy's ``derivative=True``).

    >>> import dualad
    >>> from dualad.special import spherical_yn
    >>> z = dualad.tensor([0.0, 2.0], requires_grad=True)
    >>> dualad.autograd.grad(spherical_yn(1, z).sum(), z)
    (tensor([       nan, 0.55868542]),)
    """
    return spherical("yn", n, z, derivative)


def spherical_in(n, z, derivative=False):
    """Modified spherical Bessel function of the first kind ``i_n(z)`` (or ``i_n'``);
    ``i_0 = sinh(z)/z``.

    >>> import dualad
    >>> from dualad.special import spherical_in
    >>> spherical_in(1, dualad.tensor([0.0, 2.0]), derivative=True)
    tensor([0.33333333, 0.83904746])
    """
    return spherical("in", n, z, derivative)


def spherical_kn(n, z, derivative=False):
    """Modified spherical Bessel function of the second kind ``k_n(z)`` (or ``k_n'``), for
    ``z > 0``: inf at 0 with derivative -inf.

    >>> import dualad
    >>> from dualad.special import spherical_kn
    >>> spherical_kn(0, dualad.tensor([0.0, 2.0]))
    tensor([       inf, 0.10629208])
    """
    return spherical("kn", n, z, derivative)
