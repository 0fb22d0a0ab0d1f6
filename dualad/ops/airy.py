"""The Airy functions ``Ai``, ``Bi`` and their derivatives as four unary ops (scipy's
``airy`` returns the four at once: ``dualad.special.airy`` calls the four ops).

``Ai' = airy_aip``, ``airy_aip' = x Ai`` (Airy's equation ``w'' = x w``), likewise for ``Bi``,
so every order of derivative is exact. Real and complex arguments (holomorphic: the VJP takes
the conjugate, PyTorch's convention); entire functions, no singular points. Values are
``scipy.special.airy``'s (``cupyx.scipy.special`` on CuPy where it has it).
"""

from __future__ import annotations

from ._special_impls import scipy_unary

_airy_ai, _airy_aip, _airy_bi, _airy_bip = (
    scipy_unary(name, deriv, function="airy", index=index, complex_ok=True)
    for index, (name, deriv) in enumerate(
        (
            ("airy_ai", lambda x, y: _airy_aip(x)),
            ("airy_aip", lambda x, y: x * _airy_ai(x)),
            ("airy_bi", lambda x, y: _airy_bip(x)),
            ("airy_bip", lambda x, y: x * _airy_bi(x)),
        )
    )
)
