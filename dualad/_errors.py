"""Exceptions of dualad's own (a leaf module: it imports nothing from dualad).

``TrackedConversionError`` is raised where a value that some level differentiates or batches
would leave dualad as a NumPy array or a Python number: the result would be a constant to that
level, so the derivative would be silently wrong (or, inside ``vmap``, there is no single value
to give). It subclasses ``RuntimeError`` (PyTorch raises RuntimeError for ``numpy()`` of a tensor
that requires grad) and ``TypeError`` (JAX's tracer conversion errors are TypeErrors), so code
written for either catches it.
"""

from __future__ import annotations


class TrackedConversionError(RuntimeError, TypeError):
    """A tracked value was converted to a NumPy array or a Python number.

    The message names the level that tracks the value, what was attempted and the fix: the
    dualad op instead of the NumPy function, or ``.detach()`` for a value meant as a constant.

    >>> import numpy as np, dualad
    >>> from dualad.func import grad
    >>> try:
    ...     grad(lambda x: (dualad.as_tensor(np.asarray(x)) * x).sum())(dualad.tensor([1.0]))
    ... except dualad.TrackedConversionError as e:
    ...     print(str(e).split(":")[0])
    dualad.func.grad
    """


# what a conversion attempted, as messages name it (keys: the conversion's short name)
ATTEMPTS = {
    "array": "conversion to a NumPy array (np.asarray, np.array, or a NumPy function such as "
    "np.exp called on it)",
    "numpy": ".numpy()",
    "item": ".item()",
    "tolist": ".tolist()",
    "float": "float()",
    "int": "int()",
    "complex": "complex()",
}


def conversion_error(title: str, tracked_by: str, kind: str) -> TrackedConversionError:
    """The error for conversion ``kind`` (a key of ``ATTEMPTS``) of a value ``tracked_by`` the
    level that ``title`` names (``"dualad.func.grad"``, ``"dualad.fwd.dual_level"`` ...)."""
    if kind in ("array", "numpy"):
        fix = (
            "Use the dualad op instead of the NumPy function (dualad.exp(x) for np.exp(x), "
            "x.sum() for np.sum(x)), or call .detach() first if the value is meant as a "
            "constant (np.asarray(x.detach()))."
        )
    else:
        example = (
            f"x.detach(){ATTEMPTS[kind]}" if kind in ("item", "tolist") else f"{kind}(x.detach())"
        )
        fix = (
            "Keep the value a tensor and compute with dualad ops on it, or call .detach() first "
            f"if the value is meant as a constant ({example})."
        )
    return TrackedConversionError(
        f"{title}: {ATTEMPTS[kind]} of a tensor {tracked_by} would drop its derivative (the "
        f"result is a constant to {title}, so derivatives through it would be silently wrong). "
        + fix
    )
