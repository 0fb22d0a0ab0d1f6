"""``grid_sample`` (4-D inputs; modes ``bilinear`` and ``nearest``; padding ``zeros``,
``border``, ``reflection``) and ``affine_grid`` (2-D and 3-D), with PyTorch's signatures and
errors.

``grid_sample`` is the op of ``dualad/ops/grid_sampling.py`` (differentiable in the input and,
for ``bilinear``, in the grid, at every order; ``nearest`` has a zero grid derivative);
``affine_grid`` is a product of ``theta`` with the base grid of normalised pixel coordinates
(a composition of ops: its derivative in ``theta`` is exact).
"""

from __future__ import annotations

import numpy as np

from ... import ops
from ..._creation import as_tensor
from ...ops.grid_sampling import grid_sample as _grid_sample

__all__ = ["affine_grid", "grid_sample"]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` ``(N, C, H, W)`` at ``grid`` ``(N, Ho, Wo, 2)`` of normalised
    ``(x, y)`` coordinates in ``[-1, 1]`` (``torch.nn.functional.grid_sample``): ``(N, C, Ho,
    Wo)``.

    ``mode``: ``"bilinear"`` or ``"nearest"`` (half-way ties to even); ``padding_mode``:
    ``"zeros"``, ``"border"`` (clamp to the edge) or ``"reflection"``; ``align_corners`` (None
    means False, PyTorch's default) maps -1 and 1 to the centres of the corner pixels instead of
    their outer edges. Differentiable in ``input``, and in ``grid`` for bilinear (the one-sided
    derivative PyTorch gives where a coordinate is an integer or on a clamped border); nearest
    sampling has a zero grid derivative.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid = dualad.tensor([[[[0.0, 0.0], [1.0, -1.0]]]])
    >>> F.grid_sample(x, grid, align_corners=True)
    tensor([[[[1.5, 1. ]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if mode == "bicubic":
        raise NotImplementedError(
            "dualad.nn.functional.grid_sample: mode='bicubic' is not supported"
        )
    input, grid = as_tensor(input), as_tensor(grid)
    shapes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.ndim != grid.ndim or input.ndim not in (4, 5):
        if input.ndim == grid.ndim - 1 and input.ndim >= 1:
            raise RuntimeError(
                f"grid_sampler(): expected grid and input to have same batch size, but got {shapes}"
            )
        raise RuntimeError(
            "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
            f"but got {shapes}"
        )
    if input.ndim == 5:
        raise NotImplementedError(
            "dualad.nn.functional.grid_sample: 5-D (volumetric) inputs are not supported"
        )
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got {shapes}"
        )
    if grid.shape[-1] != 2:
        raise RuntimeError(
            "grid_sampler(): expected grid to have size 2 in last dimension, but got grid with "
            f"sizes {list(grid.shape)}"
        )
    for name, t in (("input", input), ("grid", grid)):
        if t.dtype.kind != "f":
            raise RuntimeError(
                f"grid_sampler(): expected {name} of a real floating dtype, got {t.dtype}"
            )
    if input.dtype != grid.dtype:
        raise RuntimeError(
            f"grid_sampler(): expected input and grid to have the same dtype, but got "
            f"{input.dtype} and {grid.dtype}"
        )
    if 0 in input.shape[2:]:
        raise RuntimeError(
            f"grid_sampler(): expected input to have non-empty spatial dimensions, but {shapes}"
        )
    params = {"mode": mode, "padding_mode": padding_mode, "align_corners": bool(align_corners)}
    return _grid_sample(input, grid, params)


def _base(n: int, align_corners: bool) -> np.ndarray:
    """Normalised coordinates of ``n`` pixel centres (PyTorch's ``_linspace_from_neg_one``)."""
    if n <= 1:
        return np.zeros(max(n, 0))
    steps = np.linspace(-1.0, 1.0, n)
    return steps if align_corners else steps * (n - 1) / n


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps ``theta`` for an output of ``size``
    (``torch.nn.functional.affine_grid``): ``theta`` ``(N, 2, 3)`` and ``size`` ``(N, C, H, W)``
    give ``(N, H, W, 2)``; ``(N, 3, 4)`` and ``(N, C, D, H, W)`` give ``(N, D, H, W, 3)``.

    Each entry is ``theta @ (x, y, [z,] 1)`` at the normalised coordinates of a pixel centre
    (``align_corners`` as in ``grid_sample``); linear in ``theta``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> theta = dualad.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> F.affine_grid(theta, (1, 1, 2, 2), align_corners=True)
    tensor([[[[-1., -1.],
              [ 1., -1.]],
    <BLANKLINE>
             [[-1.,  1.],
              [ 1.,  1.]]]])
    """
    theta = as_tensor(theta)
    size = tuple(int(s) for s in size)
    if theta.dtype.kind != "f":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) not in (4, 5):
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    nd = len(size) - 2
    if tuple(theta.shape) != (size[0], nd, nd + 1):
        raise ValueError(
            f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} for size "
            f"{size}. Got {tuple(theta.shape)}."
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    spatial = size[2:]
    # (*spatial, nd + 1): the coordinates x (last dim), y, [z], then 1
    axes = [_base(n, bool(align_corners)) for n in spatial]
    coords = np.stack(np.meshgrid(*axes, indexing="ij")[::-1], axis=-1)
    base = np.concatenate([coords, np.ones((*spatial, 1))], axis=-1).reshape(-1, nd + 1)
    base = as_tensor(base.astype(theta.dtype), device=theta.device)
    grid = ops.matmul(base, ops.transpose(theta, 1, 2))  # (N, prod(spatial), nd)
    return ops.reshape(grid, (size[0], *spatial, nd))
