"""Jacobians, Hessians and per-example gradients as dask arrays (``pip install
'dualad[dask]'``): work larger than one process, or one machine, split into dask tasks.

- ``jacobian(f, x, mode="rev" | "fwd", block_size=..., client=None)``: blocks of rows (output
  basis vectors through a vmap'd ``vjp``) or of columns (input basis vectors through a vmap'd
  ``jvp``);
- ``hessian(f, x, block_size=..., client=None)``: blocks of rows by vmap'd Hessian-vector
  products;
- ``per_example_grad(loss, params, batch, chunk_size=..., client=None)``: chunks of examples
  through a vmap'd ``grad``.

Each returns a ``dask.array.Array`` (a pytree of them for ``per_example_grad``): lazy on dask's
default scheduler, or started on a ``dask.distributed.Client`` passed as ``client=``; the
values equal ``dualad.func``'s on one machine. ``docs/dask.md`` shows the same code on a
cluster of many machines.

>>> import numpy as np
>>> import dualad, dualad.dask
>>> dualad.dask.jacobian(lambda x: x**2, np.array([1.0, 2.0])).compute()
array([[2., 0.],
       [0., 4.]])
"""

from __future__ import annotations

try:
    import dask.array  # noqa: F401 (checked here, with the extra to install in the message)
except ImportError as error:  # pragma: no cover - the extra not installed
    raise ImportError(
        "dualad.dask needs dask: install it with `pip install 'dualad[dask]'` (dask[array] and "
        "distributed)"
    ) from error

from .api import hessian, jacobian, per_example_grad

__all__ = ["hessian", "jacobian", "per_example_grad"]
