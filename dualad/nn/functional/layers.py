"""Layers of ``torch.nn.functional`` as functions: linear, bilinear, layer_norm, normalize,
dropout (and its channel-wise forms), embedding, one_hot, pad.

All are composites of dualad ops with exact derivatives. Random masks (dropout) are drawn with
``dualad.rand``, so under ``dualad.vmap`` they follow its ``randomness`` mode: ``"error"``
raises, ``"same"`` draws one mask for the whole batch, ``"different"`` one per example.
"""

from __future__ import annotations

import numbers

from ... import ops
from ..._creation import arange, as_tensor, zeros
from ..._dtypes import get_default_dtype, real_dtype
from ..._random import rand
from ..._tensor import Tensor
from ...numpy.padding import pad as np_pad
from ...rev.grad_mode import no_grad
from ...rev.inplace import apply_inplace

__all__ = [
    "alpha_dropout",
    "bilinear",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "embedding",
    "feature_alpha_dropout",
    "layer_norm",
    "linear",
    "normalize",
    "one_hot",
    "pad",
]


def _tensor(x):
    return x if isinstance(x, Tensor) else as_tensor(x)


def _shape(x) -> tuple:
    return tuple(x.shape)


# ---------------------------------------------------------------------------------------------
# affine layers


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (``torch.nn.functional.linear``): ``input`` ``(*, in)``,
    ``weight`` ``(out, in)`` (or ``(in,)``), ``bias`` ``(out,)``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.linear(dualad.tensor([[1.0, 2.0]]), dualad.tensor([[1.0, 0.0], [1.0, 1.0]]),
    ...          dualad.tensor([0.5, 0.0]))
    tensor([[1.5, 3. ]])
    """
    input, weight = _tensor(input), _tensor(weight)
    if weight.ndim not in (1, 2) or input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise ValueError(
            f"dualad.nn.functional.linear: mat1 and mat2 shapes cannot be multiplied (input "
            f"{_shape(input)}, weight {_shape(weight)}: the weight must be (out, "
            f"{input.shape[-1] if input.ndim else '?'}))"
        )
    out = ops.matmul(input, ops.transpose(weight, 0, 1) if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``
    (``torch.nn.functional.bilinear``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.bilinear(dualad.tensor([[1.0, 2.0]]), dualad.tensor([[3.0]]),
    ...            dualad.ones(1, 2, 1))
    tensor([[9.]])
    """
    input1, input2, weight = _tensor(input1), _tensor(input2), _tensor(weight)
    if (
        weight.ndim != 3
        or input1.ndim == 0
        or input2.ndim == 0
        or _shape(input1)[:-1] != _shape(input2)[:-1]
        or input1.shape[-1] != weight.shape[1]
        or input2.shape[-1] != weight.shape[2]
    ):
        raise ValueError(
            f"dualad.nn.functional.bilinear: expected input1 (*, in1), input2 (*, in2) with "
            f"equal batch dims and weight (out, in1, in2); got {_shape(input1)}, "
            f"{_shape(input2)} and {_shape(weight)}"
        )
    out = ops.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


# ---------------------------------------------------------------------------------------------
# normalisation


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalise over the trailing ``normalized_shape`` dims: ``(x - mean) / sqrt(var + eps)``
    (biased variance), then ``* weight + bias`` (``torch.nn.functional.layer_norm``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.layer_norm(dualad.tensor([[1.0, 3.0]]), (2,), eps=0.0)
    tensor([[-1.,  1.]])
    """
    input = _tensor(input)
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(int(s) for s in normalized_shape)
    k = len(normalized_shape)
    if k == 0 or _shape(input)[input.ndim - k :] != normalized_shape or k > input.ndim:
        raise ValueError(
            f"dualad.nn.functional.layer_norm: Given normalized_shape={list(normalized_shape)}, "
            f"expected input with shape [*, {', '.join(map(str, normalized_shape))}], but got "
            f"input of size{list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and _shape(t) != normalized_shape:
            raise ValueError(
                f"dualad.nn.functional.layer_norm: {name} must have shape {normalized_shape}, "
                f"got {_shape(t)}"
            )
    dims = tuple(range(input.ndim - k, input.ndim))
    mean = ops.mean(input, dims, keepdim=True)
    centred = input - mean
    var = ops.mean(centred * centred, dims, keepdim=True)
    out = centred * ops.rsqrt(var + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """``input / max(norm_p(input, dim), eps)`` (``torch.nn.functional.normalize``).

    At a zero vector the norm's subgradient is 0 and the clamp binds, so the gradient is
    ``1 / eps`` times the cotangent (PyTorch's value); ``out=`` receives the result.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.normalize(dualad.tensor([[3.0, 4.0], [0.0, 0.0]]))
    tensor([[0.6, 0.8],
            [0. , 0. ]])
    """
    input = _tensor(input)
    denom = ops.clamp_min(ops.norm(input, p, dim, keepdim=True), eps)
    result = input / denom
    if out is not None:
        out.copy_(result)
        return out
    return result


# ---------------------------------------------------------------------------------------------
# dropout


def _check_p(p):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropped(input, p, mask_shape, inplace):
    """``input * mask / (1 - p)`` with a Bernoulli(1 - p) mask of ``mask_shape`` (broadcast
    over the rest), drawn through ``dualad.rand`` (vmap's randomness modes apply)."""
    dtype = input.dtype
    dtype = real_dtype(dtype) if dtype.kind in "fc" else get_default_dtype()
    if p == 1:  # PyTorch multiplies by 0: zeros, gradient 0
        noise = zeros((), dtype=dtype, device=input.device)
    else:
        keep = ops.lt(rand(mask_shape, dtype=dtype, device=input.device), 1 - p)
        noise = ops.astype(keep, dtype) / (1 - p)
    if inplace:
        return apply_inplace(ops.mul, input, noise)
    return input * noise


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (``torch.nn.functional.dropout``); the identity (``input`` itself) when not ``training`` or
    ``p == 0``.

    Under ``dualad.vmap``: ``randomness="error"`` raises, ``"same"`` one mask for every example,
    ``"different"`` a mask per example.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> y = F.dropout(dualad.ones(1000), p=0.25)
    >>> sorted(set(y.tolist())) == [0.0, 4 / 3]
    True
    >>> F.dropout(dualad.ones(2), p=0.5, training=False)
    tensor([1., 1.])
    """
    _check_p(p)
    input = _tensor(input)
    if not training or p == 0 or input.numel() == 0:
        return input
    return _dropped(input, p, _shape(input), inplace)


def _feature_dropout(name, input, p, training, inplace, spatial):
    """Channel-wise dropout of ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` inputs: one
    draw per channel, broadcast over its ``spatial`` dims."""
    _check_p(p)
    input = _tensor(input)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise ValueError(
            f"dualad.nn.functional.{name}: Expected {spatial + 1}D or {spatial + 2}D input, but "
            f"received a {input.ndim}D input"
        )
    if not training or p == 0 or input.numel() == 0:
        return input
    channels = input.ndim - spatial
    return _dropped(input, p, _shape(input)[:channels] + (1,) * spatial, inplace)


_SELU_ALPHA_PRIME = 1.7580993408473766  # -scale * alpha of SELU: the value dropped units take


def _alpha_dropped(input, p, mask_shape, inplace):
    """PyTorch's alpha dropout: dropped units take SELU's saturation value, and an affine map
    ``a x + b`` restores mean 0 and variance 1 for SELU-normalised inputs."""
    dtype = input.dtype if input.dtype.kind == "f" else get_default_dtype()
    if p == 1:
        scale = shift = zeros((), dtype=dtype, device=input.device)
    else:
        keep = ops.astype(ops.lt(rand(mask_shape, dtype=dtype, device=input.device), 1 - p), dtype)
        a = 1.0 / ((_SELU_ALPHA_PRIME**2 * p + 1) * (1 - p)) ** 0.5
        scale = keep * a
        shift = (keep - 1) * (_SELU_ALPHA_PRIME * a) + _SELU_ALPHA_PRIME * a * p

    def affine(x):
        return x * scale + shift

    return apply_inplace(affine, input) if inplace else affine(input)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout for SELU networks (``torch.nn.functional.alpha_dropout``; note ``training``
    defaults to False there too): dropped elements take ``-1.7581...`` and the result is scaled
    and shifted to keep zero mean and unit variance.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> y = F.alpha_dropout(dualad.randn(100_000), 0.2, training=True)
    >>> abs(float(y.mean())) < 0.02, abs(float(y.var()) - 1) < 0.05
    (True, True)
    """
    _check_p(p)
    input = _tensor(input)
    if not training or p == 0 or input.numel() == 0:
        return input
    return _alpha_dropped(input, p, _shape(input), inplace)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Alpha dropout of whole channels (dim 1 of ``(N, C, ...)``, one draw per channel).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.ones(2, 3, 4)
    >>> F.feature_alpha_dropout(x, 0.5) is x  # training=False by default: the input itself
    True
    >>> dualad.manual_seed(0)
    >>> F.feature_alpha_dropout(x, 0.5, training=True).shape
    (2, 3, 4)
    """
    _check_p(p)
    input = _tensor(input)
    if not training or p == 0 or input.numel() == 0:
        return input
    if input.ndim < 2:
        raise ValueError(
            f"dualad.nn.functional.feature_alpha_dropout: Feature dropout requires at least 2 "
            f"dimensions in the input, got {input.ndim}"
        )
    return _alpha_dropped(input, p, _shape(input)[:2] + (1,) * (input.ndim - 2), inplace)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` inputs with probability ``p``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> dualad.manual_seed(0)
    >>> y = F.dropout1d(dualad.ones(1, 4, 3), p=0.5)
    >>> sorted(set(y.flatten().tolist()))  # whole channels zeroed, the rest scaled by 2
    [0.0, 2.0]
    >>> bool((F.dropout1d(dualad.ones(4, 3), training=False) == 1).all())
    True
    """
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, H, W)`` or ``(C, H, W)`` inputs with probability ``p``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> y = F.dropout2d(dualad.ones(8, 16, 3, 3))
    >>> bool((y.amax(dim=(2, 3)) == y.amin(dim=(2, 3))).all())
    True
    """
    return _feature_dropout("dropout2d", input, p, training, inplace, 2)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs with probability
    ``p``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> dualad.manual_seed(0)
    >>> y = F.dropout3d(dualad.ones(1, 4, 2, 2, 2), p=0.5)
    >>> sorted(set(y.flatten().tolist()))  # whole channels zeroed, the rest scaled by 2
    [0.0, 2.0]
    """
    return _feature_dropout("dropout3d", input, p, training, inplace, 3)


# ---------------------------------------------------------------------------------------------
# lookups: embedding, one_hot


def _check_indices(name, argument, t):
    if t.dtype.kind not in "iu":
        raise TypeError(
            f"dualad.nn.functional.{name}: Expected tensor for argument '{argument}' to have an "
            f"integer dtype (Long, Int), but got {t.dtype}"
        )


def _renorm_rows(weight, input, max_norm, norm_type):
    """PyTorch's ``embedding_renorm_``: the rows of ``weight`` that ``input`` looks up and
    whose ``norm_type``-norm exceeds ``max_norm`` are scaled in place to ``max_norm`` (norm +
    1e-7), outside the graph."""
    if type(weight) is not Tensor or type(input) is not Tensor:
        raise ValueError(
            "dualad.nn.functional.embedding: max_norm renormalises the weight in place, which "
            "is not supported inside a transform (vmap, grad, jvp); renormalise outside it"
        )
    with no_grad():
        rows = as_tensor(sorted(set(input.reshape(-1).tolist())), device=input.device)
        selected = weight[rows]
        norms = ops.norm(selected, norm_type, 1, keepdim=True)
        scale = ops.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = selected * scale


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
):
    """Rows of ``weight`` (``(num_embeddings, dim)``) looked up by the integer ``input``
    (``torch.nn.functional.embedding``): the result has shape ``input.shape + (dim,)``.

    ``padding_idx``: lookups of that row give it unchanged but carry no derivative to it (a
    constant, in reverse and forward mode alike; PyTorch zeroes only its gradient).
    ``max_norm``: rows looked up whose norm exceeds it are renormalised in place first, outside
    the graph, as PyTorch does (not inside a transform). ``scale_grad_by_freq`` and ``sparse``
    change PyTorch's backward pass only; they are refused (ValueError) rather than ignored.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> w = dualad.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> F.embedding(dualad.tensor([[1, 2], [0, 1]]), w, padding_idx=0).sum().backward()
    >>> w.grad
    tensor([[0., 0.],
            [2., 2.],
            [1., 1.]])
    """
    input, weight = _tensor(input), _tensor(weight)
    _check_indices("embedding", "indices", input)
    if weight.ndim != 2:
        raise ValueError(
            f"dualad.nn.functional.embedding: 'weight' must be 2-D, got shape {_shape(weight)}"
        )
    if sparse or scale_grad_by_freq:
        which = "sparse=True" if sparse else "scale_grad_by_freq=True"
        raise ValueError(
            f"dualad.nn.functional.embedding: {which} is not supported (it changes only "
            f"PyTorch's backward pass, so it would not be the derivative of the lookup)"
        )
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise ValueError(
                f"dualad.nn.functional.embedding: Padding_idx must be within num_embeddings "
                f"(got {padding_idx} for {rows} embeddings)"
            )
        padding_idx %= rows
    concrete = type(input) is Tensor and input.numel()
    if concrete and bool(ops.any((input < 0) | (input >= rows))):
        raise IndexError(
            f"dualad.nn.functional.embedding: index out of range in self (indices in "
            f"[{int(input.min())}, {int(input.max())}] for {rows} embeddings)"
        )
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    out = weight[input]
    if padding_idx is None:
        return out
    padded = ops.unsqueeze(ops.eq(input, padding_idx), -1)
    return ops.where(padded, out.detach(), out)


def one_hot(tensor, num_classes: int = -1):
    """``int64`` one-hot encoding of an integer tensor: a trailing dim of ``num_classes``
    (``max + 1`` when -1) (``torch.nn.functional.one_hot``); not differentiable.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.one_hot(dualad.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    tensor = _tensor(tensor)
    if tensor.dtype.kind not in "iu":
        raise TypeError(
            f"dualad.nn.functional.one_hot: one_hot is only applicable to index tensor of "
            f"integer type (got {tensor.dtype})"
        )
    concrete = type(tensor) is Tensor
    if num_classes == -1:
        if not concrete:
            raise ValueError(
                "dualad.nn.functional.one_hot: num_classes=-1 reads the largest class from the "
                "values, which a transform (vmap) does not have: pass num_classes"
            )
        if tensor.numel() == 0:
            raise ValueError(
                "dualad.nn.functional.one_hot: Can not infer total number of classes from "
                "empty tensor."
            )
        num_classes = int(tensor.max()) + 1
    if concrete and tensor.numel():
        if int(tensor.min()) < 0:
            raise ValueError("dualad.nn.functional.one_hot: Class values must be non-negative.")
        if int(tensor.max()) >= num_classes:
            raise ValueError(
                "dualad.nn.functional.one_hot: Class values must be smaller than num_classes."
            )
    classes = arange(num_classes, device=tensor.device)
    return ops.astype(ops.eq(ops.unsqueeze(tensor, -1), classes), "int64")


# ---------------------------------------------------------------------------------------------
# pad

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _check_pad_sizes(mode, input, widths):
    for axis, (before, after) in enumerate(widths):
        size = input.shape[axis]
        if mode == "reflect" and (before >= size or after >= size) and (before or after):
            raise ValueError(
                f"dualad.nn.functional.pad: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({before}, {after}) at dimension {axis} of "
                f"input {list(input.shape)}"
            )
        if mode == "circular" and (before > size or after > size):
            raise ValueError(
                "dualad.nn.functional.pad: Padding value causes wrapping around more than once."
            )
        if mode == "replicate" and size == 0 and (before or after):
            raise ValueError(
                f"dualad.nn.functional.pad: cannot replicate-pad the empty dimension {axis} of "
                f"input {list(input.shape)}"
            )


def pad(input, pad, mode: str = "constant", value=None):
    """Pad (or, with negative sizes, crop) the last ``len(pad) // 2`` dims of ``input``
    (``torch.nn.functional.pad``): ``pad`` lists ``(left, right)`` of the last dim first, then
    of the one before, and so on.

    Modes: ``"constant"`` (``value``, default 0), ``"reflect"`` (no edge repeat; sizes below
    the dim's size), ``"replicate"`` (the edge), ``"circular"`` (wrap around once at most). The
    gradient of a padded entry goes to the entry it copies; constant entries get none.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.pad(dualad.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect")
    tensor([[3., 2., 1., 2., 3., 2.]])
    >>> F.pad(dualad.tensor([[1.0, 2.0, 3.0]]), (1, -1), value=9.0)
    tensor([[9., 1., 2.]])
    """
    input = _tensor(input)
    pad = [int(v) for v in pad]
    if len(pad) % 2:
        raise ValueError("dualad.nn.functional.pad: Padding length must be divisible by 2")
    k = len(pad) // 2
    if k > input.ndim:
        raise ValueError(
            f"dualad.nn.functional.pad: Padding length too large ({len(pad)} values for an "
            f"input of {input.ndim} dims)"
        )
    if mode not in _PAD_MODES:
        raise ValueError(
            f"dualad.nn.functional.pad: Unrecognised padding mode {mode!r} (use 'constant', "
            f"'reflect', 'replicate' or 'circular')"
        )
    if mode != "constant":
        if value is not None and value != 0:
            raise ValueError(
                f'dualad.nn.functional.pad: Padding mode "{mode}" doesn\'t take in value argument.'
            )
        if k > 3 or input.ndim not in (k + 1, k + 2):
            raise ValueError(
                f"dualad.nn.functional.pad: {mode} padding of the last {k} dims needs a "
                f"{k + 1}D or {k + 2}D input, got {input.ndim}D (PyTorch's rule: batch and "
                f"channel dims are never padded)"
            )
    widths = [(0, 0)] * input.ndim
    for i in range(k):
        widths[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    # negative sizes crop first; the rest pads what is left
    for axis, (before, after) in enumerate(widths):
        if before < 0 or after < 0:
            start, stop = max(-before, 0), input.shape[axis] - max(-after, 0)
            if stop < start:
                raise ValueError(
                    f"dualad.nn.functional.pad: the padding {tuple(pad)} crops dimension {axis} "
                    f"of input {list(input.shape)} below size 0"
                )
            input = ops.narrow(input, axis, start, stop - start)
    widths = [(max(b, 0), max(a, 0)) for b, a in widths]
    _check_pad_sizes(mode, input, widths)
    if not any(b or a for b, a in widths):
        return input
    if mode == "constant":
        return np_pad(input, widths, constant_values=0 if value is None else value)
    return np_pad(input, widths, mode=_PAD_MODES[mode])
