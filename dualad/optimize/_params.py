"""Parameters as pytrees: the user's ``x0`` (an array, a Tensor, a number, or a dict/tuple/list
of them, nested) flattened to the ONE float64 NumPy vector that scipy.optimize works on, and
scipy's vectors turned back into what the user's functions take.

Invariants:

- scipy only ever sees float64 NumPy vectors on the host (scipy#18730: L-BFGS-B crashes on a
  float32 gradient), whatever the leaves' dtype and device;
- the user's functions see the user's structure, with each leaf's dtype and on the leaves'
  device (CuPy leaves: every vector crosses to the GPU and back with an explicit transfer,
  ``dualad._backend.to_device``);
- ``x0`` is never written to: the flat vector is a new array.

Integer and boolean leaves become float64, as scipy.optimize makes an integer ``x0`` float64.
Complex leaves are refused (scipy's methods are real).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._backend import CPU, device_of, to_device, xp_of
from .._tensor import Tensor, wrap
from .._tree import flatten
from ..ops import astype


def host64(value) -> np.ndarray:
    """``value`` (an array of any backend, a Tensor, a number) as a float64 NumPy array."""
    if isinstance(value, Tensor):
        value = value.detach()._data
    if sp.issparse(value):
        return value.astype(np.float64)
    if not isinstance(value, np.ndarray) and xp_of(value) is not np:
        value = to_device(value, CPU)  # (CuPy: the explicit transfer to the host)
    return np.asarray(value, dtype=np.float64)


def host_sparse64(value):
    """A ``scipy.sparse`` (or ``cupyx.scipy.sparse``) matrix as a float64 ``scipy.sparse`` CSR."""
    if not sp.issparse(value):  # cupyx.scipy.sparse: the explicit transfer to the host
        value = value.get()
    return sp.csr_matrix(value, dtype=np.float64)


class Params:
    """The leaves of ``x0``: their shapes, dtypes, device, and where each sits in the flat
    vector. ``name`` is the public function, for the error messages."""

    def __init__(self, x0, name: str) -> None:
        self.name = name
        leaves, self._rebuild = flatten(x0)
        self._structure = x0  # (read by ``pairs``, never written)
        if not leaves:
            raise ValueError(
                f"dualad.optimize.{name}: x0 holds no parameters (an empty {type(x0).__name__})"
            )
        arrays, self.kinds = [], []
        for leaf in leaves:
            arrays.append(self._leaf_array(leaf))
            self.kinds.append(
                "tensor"
                if isinstance(leaf, Tensor)
                else "number"
                if isinstance(leaf, (int, float, np.generic))
                else "array"
            )
        # (a number has no device: it goes where the arrays are)
        devices = {device_of(a) for a, k in zip(arrays, self.kinds) if k != "number"} or {CPU}
        if len(devices) > 1:
            raise ValueError(
                f"dualad.optimize.{name}: the leaves of x0 are on several devices "
                f"({sorted(map(str, devices))}); put them on one"
            )
        self.device = devices.pop()
        self.shapes = [tuple(a.shape) for a in arrays]
        self.dtypes = [a.dtype for a in arrays]
        self.sizes = [int(a.size) for a in arrays]
        self.offsets = np.cumsum([0, *self.sizes]).tolist()
        self.size = self.offsets[-1]
        # the dtype the flat vector has on the device: the leaves' common one
        self.dtype = np.result_type(*self.dtypes)
        self.x0 = np.concatenate([host64(a).ravel() for a in arrays])

    def _leaf_array(self, leaf):
        if isinstance(leaf, Tensor):
            if type(leaf) is not Tensor:
                raise TypeError(
                    f"dualad.optimize.{self.name}: a leaf of x0 is tracked by an active "
                    f"transform ({type(leaf).__name__}); pass its value"
                )
            data = leaf._data
        else:
            try:
                data = xp_of(leaf).asarray(leaf)
            except TypeError:
                raise TypeError(
                    f"dualad.optimize.{self.name}: x0 must be an array, a Tensor, a number or "
                    f"a dict/tuple/list of them; found a leaf of type {type(leaf).__name__}"
                ) from None
        kind = data.dtype.kind
        if kind == "c":
            raise TypeError(
                f"dualad.optimize.{self.name}: x0 has a complex leaf (dtype {data.dtype}); "
                "scipy.optimize works on real numbers: optimize the real and imaginary parts "
                "as two real arrays"
            )
        if kind in "biu":
            return xp_of(data).asarray(data, dtype=np.float64)  # scipy's rule for integer x0
        if kind != "f":
            raise TypeError(
                f"dualad.optimize.{self.name}: x0 has a leaf of dtype {data.dtype}; parameters "
                "are floating point numbers"
            )
        return data

    # ---------------------------------------------------------------- scipy's vectors
    def device_vector(self, x):
        """scipy's float64 vector (or a direction of the same size) as an array of the flat
        dtype on the leaves' device."""
        return self.on_device(np.reshape(x, self.size))

    def on_device(self, array):
        """A host array in the flat dtype on the leaves' device (an explicit transfer)."""
        return to_device(np.array(array, dtype=self.dtype), self.device)  # (a copy: scipy keeps x)

    def tree(self, x):
        """A flat float64 vector as the user's structure: each leaf with its shape and dtype,
        on its device, a Tensor where x0 had a Tensor, a NumPy scalar where it had a number."""
        x = np.asarray(x, dtype=np.float64)
        leaves = []
        for i, kind in enumerate(self.kinds):
            piece = x[self.offsets[i] : self.offsets[i + 1]].reshape(self.shapes[i])
            piece = to_device(piece.astype(self.dtypes[i]), self.device)
            if kind == "tensor":
                piece = wrap(piece)
            elif kind == "number" and self.device == CPU:
                piece = piece[()]
            leaves.append(piece)
        return self._rebuild(leaves)

    # ---------------------------------------------------------------- the user's functions
    def flat(self, fn):
        """``fn`` (a function of the user's structure, then ``*args``) as a function of the
        flat tensor ``z`` (``device_vector``'s dtype and device): what the transforms
        differentiate."""
        if len(self.sizes) == 1 and self.dtypes[0] == self.dtype:
            shape = self.shapes[0]

            def of_flat(z, *args):
                return fn(self._rebuild([z.reshape(shape)]), *args)

            return of_flat

        def of_flat(z, *args):
            leaves = []
            for i, dtype in enumerate(self.dtypes):
                leaf = z[self.offsets[i] : self.offsets[i + 1]].reshape(self.shapes[i])
                leaves.append(leaf if dtype == self.dtype else astype(leaf, dtype))
            return fn(self._rebuild(leaves), *args)

        return of_flat

    def pairs(self, tree) -> list:
        """``tree``, with the structure of x0 and a ``(low, high)`` pair (or None) where x0 has
        a leaf, as the list of the leaves' pairs."""
        out: list = []
        _pairs(self._structure, tree, out)
        return out

    def plain_tensor(self, x):
        """scipy's vector as a plain (untracked) Tensor for a value-only evaluation."""
        return wrap(self.device_vector(x))


def _pairs(structure, tree, out: list) -> None:
    if isinstance(structure, dict):
        if not isinstance(tree, dict) or set(tree) != set(structure):
            raise ValueError(f"expected a dict with the keys {sorted(structure, key=str)}")
        for key in structure:
            _pairs(structure[key], tree[key], out)
    elif isinstance(structure, (tuple, list)):
        if not isinstance(tree, (tuple, list)) or len(tree) != len(structure):
            raise ValueError(f"expected a sequence of {len(structure)} entries")
        for item, sub in zip(structure, tree):
            _pairs(item, sub, out)
    elif tree is None:
        out.append((None, None))
    elif isinstance(tree, (tuple, list)) and len(tree) == 2:
        out.append(tuple(tree))
    else:
        raise ValueError(f"expected a (low, high) pair for a leaf, got {type(tree).__name__}")


__all__ = ["Params", "host64", "host_sparse64"]
