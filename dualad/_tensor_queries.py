"""Tensor's size queries and the Python list of its values: ``size``, ``dim``, ``numel``,
``nelement``, ``element_size``, ``is_complex``, ``is_floating_point``, ``tolist``.

They read the array and nothing else (no op runs), and sit here, attached to ``Tensor`` by
``attach_members`` when ``dualad`` is imported, so that ``_tensor`` holds the class, its
autograd state and the conversion of Python data.
"""

from __future__ import annotations

import numpy as np

from ._state import GRAD
from ._tensor import Tensor, attach_members


class _QueryMembers:
    """The members above, written as they read on ``Tensor``."""

    def is_complex(self) -> bool:
        """Whether the dtype is complex.

        >>> import dualad
        >>> dualad.tensor([1j]).is_complex(), dualad.tensor([1.0]).is_complex()
        (True, False)
        """
        return self._data.dtype.kind == "c"

    def is_floating_point(self) -> bool:
        """Whether the dtype is a real floating-point one (complex is not).

        >>> import dualad
        >>> dualad.tensor([1.0]).is_floating_point(), dualad.tensor([1]).is_floating_point()
        (True, False)
        """
        return self._data.dtype.kind == "f"

    def size(self, dim: int | None = None):
        """The shape, or its length along ``dim`` (PyTorch's ``size``).

        >>> import dualad
        >>> x = dualad.zeros(2, 3)
        >>> x.size(), x.size(1), x.size(-1)
        ((2, 3), 3, 3)
        """
        if dim is None:
            return self._data.shape
        try:
            return self._data.shape[dim]
        except IndexError:
            ndim = max(self._data.ndim, 1)
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                f"but got {dim})"
            ) from None

    def dim(self) -> int:
        """The number of dimensions (``ndim``).

        >>> import dualad
        >>> dualad.zeros(2, 3).dim()
        2
        """
        return self._data.ndim

    def numel(self) -> int:
        """The number of elements.

        >>> import dualad
        >>> dualad.zeros(2, 3).numel()
        6
        """
        return int(self._data.size)

    def nelement(self) -> int:
        """The number of elements (an alias of ``numel``).

        >>> import dualad
        >>> dualad.zeros(4).nelement()
        4
        """
        return int(self._data.size)

    def element_size(self) -> int:
        """The size of one element in bytes.

        >>> import dualad
        >>> dualad.zeros(2, dtype=dualad.float32).element_size()
        4
        """
        return self._data.itemsize

    def tolist(self):
        """The values as (nested) Python lists of numbers.

        >>> import dualad
        >>> dualad.tensor([[1.0, 2.0], [3.0, 4.0]]).tolist()
        [[1.0, 2.0], [3.0, 4.0]]
        """
        if GRAD.levels:
            self._refuse_if_tracked("tolist")
        data = self._data
        return (data if type(data) is np.ndarray else data.get()).tolist()


attach_members(Tensor, _QueryMembers)
