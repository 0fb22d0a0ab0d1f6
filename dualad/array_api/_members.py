"""The array API's members of ``Tensor``: ``__array_namespace__``, ``to_device``,
``__dlpack__``, ``__dlpack_device__`` and the shift operators ``<<``, ``>>`` (``device`` and
``mT`` are Tensor's own), attached with
``attach_members`` when ``dualad.array_api`` is imported (``import dualad`` imports it).

DLPack hands over the array alone, so exporting a tensor that a level tracks (requires grad,
a dual level's tangent, vmap's batch, a ``func.grad`` tape) would drop its derivative: that
raises ``TrackedConversionError``, as ``np.asarray`` does.

>>> import dualad, numpy as np
>>> t = dualad.tensor([1.0, 2.0])
>>> t.__array_namespace__().__name__
'dualad.array_api'
>>> np.from_dlpack(t)
array([1., 2.])
"""

from __future__ import annotations

import sys

from .._backend import Device
from .._errors import TrackedConversionError
from .._state import GRAD
from .._tensor import Tensor, attach_members
from ..ops import to_device_op
from ._elementwise import bitwise_left_shift, bitwise_right_shift

# the standard versions this namespace answers for (its behaviour is 2024.12's throughout)
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def _exportable_data(t: Tensor):
    # Tensor.__array__'s checks, deliberately repeated: the message names DLPack, and the data
    # is exported as it is (CuPy's too), not converted to a NumPy array
    if GRAD.levels:
        t._refuse_if_tracked("array")
    if t.requires_grad and GRAD.enabled:
        raise TrackedConversionError(
            "Can't export a Tensor that requires grad through DLPack (__dlpack__, "
            "np.from_dlpack): the array alone would drop the graph. Use tensor.detach() first."
        )
    return t._data


class _ArrayAPIMembers:
    """Tensor's members of the array API standard."""

    def __array_namespace__(self, *, api_version: str | None = None):
        """``dualad.array_api``, the namespace of the array API standard (2024.12) over
        tensors; ``api_version`` one of the versions it supports (ValueError otherwise)."""
        if api_version is not None and api_version not in SUPPORTED_VERSIONS:
            raise ValueError(
                f"dualad.array_api: unsupported array API version {api_version!r} (supported: "
                f"{', '.join(SUPPORTED_VERSIONS)})"
            )
        return sys.modules["dualad.array_api"]

    def to_device(self, device, /, *, stream=None) -> Tensor:
        """This tensor on ``device`` (``"cpu"``, ``"cuda"``, a ``dualad.Device``); the move is
        an op, so it keeps the graph. ``stream`` must be None (dualad uses CuPy's current
        stream).

        >>> import dualad
        >>> x = dualad.tensor([1.0])
        >>> x.to_device("cpu") is x
        True
        """
        if stream is not None:
            raise ValueError("Tensor.to_device: stream must be None (dualad has no streams)")
        device = Device(device)
        return self if device == self.device else to_device_op(self, device=device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        data = _exportable_data(self)
        kwargs = {"stream": stream}
        for name, value in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy)):
            if value is not None:
                kwargs[name] = value
        return data.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    # the standard's shift operators (integer tensors: no derivative, see bitwise_left_shift)
    def __lshift__(self, other) -> Tensor:
        return bitwise_left_shift(self, other)

    def __rlshift__(self, other) -> Tensor:
        return bitwise_left_shift(other, self)

    def __ilshift__(self, other) -> Tensor:
        return self.copy_(bitwise_left_shift(self, other))

    def __rshift__(self, other) -> Tensor:
        return bitwise_right_shift(self, other)

    def __rrshift__(self, other) -> Tensor:
        return bitwise_right_shift(other, self)

    def __irshift__(self, other) -> Tensor:
        return self.copy_(bitwise_right_shift(self, other))


attach_members(Tensor, _ArrayAPIMembers)
