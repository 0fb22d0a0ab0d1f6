"""Losses of ``torch.nn.functional`` with its signatures and reductions.

Every loss is a composite of dualad ops whose derivative is exact (no clamped or floored
gradient unless the value is clamped too), so every transform composes: per-example gradients
are ``vmap(grad(loss))``. Reductions: ``"none"``, ``"sum"``, ``"mean"`` (``kl_div`` adds
``"batchmean"``); the deprecated ``size_average``/``reduce`` pair maps to them as in PyTorch.

Conventions, PyTorch's unless said:

- class-index losses (``nll_loss``, ``cross_entropy``): classes along dim 1 of ``(N, C, d1, ...)``
  inputs (dim 0 of an unbatched ``(C,)`` input); ``ignore_index`` entries contribute 0 and drop
  out of the mean; ``weight[c]`` scales class ``c`` and the mean divides by the summed weights of
  the targets (all ignored: 0 / 0 = NaN).
- ``binary_cross_entropy`` clamps each log at -100; its gradient is the derivative of that
  clamped function (0 where a log is clamped: at inputs of exactly 0 or 1), where PyTorch floors
  ``x (1 - x)`` at 1e-12 in its gradient formula. Elsewhere both are exact.
- ``binary_cross_entropy_with_logits`` is ``(1 - y) x - (1 + (pos_weight - 1) y) logsigmoid(x)``:
  finite for every finite logit.
"""

from __future__ import annotations

import math
import warnings

from ... import ops
from ..._creation import as_tensor
from ..._tensor import Tensor
from .activations import log_softmax

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "mse_loss",
    "nll_loss",
    "smooth_l1_loss",
]

_REDUCTIONS = ("none", "mean", "sum")
_LOG_FLOOR = -100.0  # PyTorch's clamp of the logs of binary_cross_entropy
_EXP_LOG_FLOOR = math.exp(_LOG_FLOOR)


# ---------------------------------------------------------------------------------------------
# shared argument handling


def _tensor(x):
    return x if isinstance(x, Tensor) else as_tensor(x)


def _reduction(reduction, size_average, reduce, allowed=_REDUCTIONS) -> str:
    """The reduction string; the deprecated ``size_average``/``reduce`` override it (PyTorch's
    ``_Reduction.legacy_get_string``)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use "
            f"reduction='{reduction}' instead.",
            UserWarning,
            stacklevel=3,
        )
    if reduction not in allowed:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(losses, reduction):
    if reduction == "none":
        return losses
    if reduction == "sum":
        return ops.sum(losses)
    return ops.mean(losses)


def _concrete(*values) -> bool:
    """Whether every tensor here is a plain tensor whose values may be read for a check (not a
    transform's wrapper: a vmap batch has no values to read)."""
    return all(v is None or type(v) is Tensor for v in values)


def _broadcast_pair(name, input, target):
    input, target = _tensor(input), _tensor(target)
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({tuple(target.shape)}) that is different to the input size "
            f"({tuple(input.shape)}). This will likely lead to incorrect results due to "
            f"broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )
        try:
            input, target = ops.broadcast_tensors(input, target)
        except (ValueError, RuntimeError) as exc:
            raise ValueError(
                f"dualad.nn.functional.{name}: the input of shape {tuple(input.shape)} and the "
                f"target of shape {tuple(target.shape)} do not broadcast"
            ) from exc
    return input, target


def _times(losses, weight):
    """``losses * weight`` (broadcast), or ``losses`` without a weight."""
    return losses if weight is None else losses * _tensor(weight)


def _weighted(name, losses, weight, reduction, mean):
    """``losses`` times ``weight`` (same shape as the input), reduced; ``mean`` says how the
    weighted mean divides: by the summed weights ("weights", mse and l1) or by the count."""
    if weight is None:
        return _reduce(losses, reduction)
    weight = _tensor(weight)
    if tuple(weight.shape) != tuple(losses.shape):
        raise ValueError(
            f"dualad.nn.functional.{name}: Weights and input must have the same size "
            f"(weight {tuple(weight.shape)}, input {tuple(losses.shape)})."
        )
    weighted = losses * weight
    if reduction == "mean" and mean == "weights":
        return ops.sum(weighted) / ops.sum(weight)
    return _reduce(weighted, reduction)


# ---------------------------------------------------------------------------------------------
# regression losses


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """Mean squared error ``(input - target)**2``, reduced (``torch.nn.functional.mse_loss``).

    ``weight`` (the input's shape) scales each term; its ``"mean"`` divides by ``sum(weight)``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.mse_loss(dualad.tensor([1.0, 2.0]), dualad.tensor([0.0, 0.0]))
    tensor(2.5)
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair("mse_loss", input, target)
    diff = input - target
    return _weighted("mse_loss", diff * diff, weight, reduction, "weights")


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """Mean absolute error ``|input - target|``, reduced; the gradient at ``input == target``
    is 0 (``sign(0)``, PyTorch's convention).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.l1_loss(dualad.tensor([1.0, -3.0]), dualad.tensor([0.0, 0.0]), reduction="sum")
    tensor(4.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair("l1_loss", input, target)
    return _weighted("l1_loss", ops.abs(input - target), weight, reduction, "weights")


def _huber(diff, delta):
    """``0.5 d**2`` for ``|d| < delta``, else ``delta (|d| - delta / 2)``: both branches finite,
    so ``where`` passes exact derivatives (the first derivative is continuous at ``delta``)."""
    a = ops.abs(diff)
    return ops.where(a < delta, 0.5 * (diff * diff), delta * (a - 0.5 * delta))


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """Huber loss with threshold ``delta > 0`` (``torch.nn.functional.huber_loss``); with
    ``weight`` its ``"mean"`` is the mean of the weighted terms (PyTorch's rule here).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.huber_loss(dualad.tensor([0.5, 3.0]), dualad.tensor([0.0, 0.0]), reduction="none")
    tensor([0.125, 2.5  ])
    """
    reduction = _reduction(reduction, None, None)
    if not delta > 0:
        raise ValueError(
            f"dualad.nn.functional.huber_loss: huber_loss does not support non-positive values "
            f"for delta (got delta={delta})."
        )
    input, target = _broadcast_pair("huber_loss", input, target)
    return _weighted("huber_loss", _huber(input - target, delta), weight, reduction, "count")


def smooth_l1_loss(
    input, target, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0
):
    """``huber_loss / beta``: ``0.5 d**2 / beta`` for ``|d| < beta``, else ``|d| - beta / 2``;
    ``beta == 0`` is ``l1_loss``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.smooth_l1_loss(dualad.tensor([0.5, 3.0]), dualad.tensor([0.0, 0.0]), reduction="none")
    tensor([0.125, 2.5  ])
    """
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise ValueError(
            f"dualad.nn.functional.smooth_l1_loss: smooth_l1_loss does not support negative "
            f"values for beta (got beta={beta})."
        )
    input, target = _broadcast_pair("smooth_l1_loss", input, target)
    diff = input - target
    if beta == 0:
        return _reduce(ops.abs(diff), reduction)
    return _reduce(_huber(diff, beta) / beta, reduction)


# ---------------------------------------------------------------------------------------------
# binary cross entropy


def _clamped_log(p, one_minus: bool):
    """``max(log(p), -100)`` (or of ``log1p(-p)``), with the derivative of that clamped function:
    0 where the clamp binds (``p <= exp(-100)``), never ``0 * inf`` (the log is taken of a safe
    stand-in there)."""
    rest = (1 - p) if one_minus else p
    keep = ops.gt(rest, _EXP_LOG_FLOOR)
    if one_minus:
        value = ops.log1p(-ops.where(keep, p, 0.0))
    else:
        value = ops.log(ops.where(keep, p, 1.0))
    return ops.where(keep, value, _LOG_FLOOR)


def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction: str = "mean"
):
    """``-w (y log x + (1 - y) log(1 - x))`` with each log clamped at -100, reduced
    (``torch.nn.functional.binary_cross_entropy``).

    ``input`` must lie in [0, 1] and have the target's shape; ``weight`` broadcasts to it. The
    gradient is exact where no log is clamped, and 0 through a clamped log (module docstring).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.binary_cross_entropy(dualad.tensor([0.5, 1.0]), dualad.tensor([1.0, 1.0]))
    tensor(0.34657359)
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _tensor(input), _tensor(target)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({tuple(target.shape)}) that is different to the input size "
            f"({tuple(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    if _concrete(input) and bool(ops.any((input < 0) | (input > 1))):
        raise ValueError(
            "dualad.nn.functional.binary_cross_entropy: all elements of input should be between "
            "0 and 1"
        )
    losses = -(target * _clamped_log(input, False) + (1 - target) * _clamped_log(input, True))
    return _reduce(_times(losses, weight), reduction)


def binary_cross_entropy_with_logits(
    input,
    target,
    weight=None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight=None,
):
    """Binary cross entropy of ``sigmoid(input)``, computed from the logits without overflow
    (``torch.nn.functional.binary_cross_entropy_with_logits``).

    ``pos_weight`` (broadcast along the last dim, one per class) weighs the positive term;
    ``weight`` each element.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(dualad.tensor([1000.0, -1000.0]),
    ...                                    dualad.tensor([0.0, 1.0]), reduction="none")
    tensor([1000., 1000.])
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _tensor(input), _tensor(target)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({tuple(target.shape)}) must be the same as input size "
            f"({tuple(input.shape)})"
        )
    log_weight = 1 if pos_weight is None else 1 + (_tensor(pos_weight) - 1) * target
    losses = (1 - target) * input - log_weight * ops.logsigmoid(input)
    return _reduce(_times(losses, weight), reduction)


# ---------------------------------------------------------------------------------------------
# KL divergence


def kl_div(
    input,
    target,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    log_target: bool = False,
):
    """Pointwise ``target (log target - input)`` (``input`` holds log-probabilities), reduced
    (``torch.nn.functional.kl_div``); ``log_target=True`` takes ``target`` as log-probabilities.

    Entries with ``target == 0`` contribute 0 (``xlogy``). ``"batchmean"`` divides the sum by
    the batch size (the KL divergence per example); ``"mean"`` by the number of elements, with
    PyTorch's warning.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> p = dualad.tensor([[0.5, 0.5]])
    >>> F.kl_div(dualad.log(dualad.tensor([[0.25, 0.75]])), p, reduction="batchmean")
    tensor(0.14384104)
    """
    allowed = (*_REDUCTIONS, "batchmean")
    legacy = size_average is not None or reduce is not None
    reduction = _reduction(reduction, size_average, reduce, allowed)
    if reduction == "mean" and not legacy:
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    input, target = _broadcast_pair("kl_div", input, target)
    if log_target:
        pointwise = ops.exp(target) * (target - input)
    else:
        pointwise = ops.xlogy(target, target) - target * input
    if reduction == "batchmean":
        total = ops.sum(pointwise)
        return total / input.shape[0] if input.ndim else total
    return _reduce(pointwise, reduction)


# ---------------------------------------------------------------------------------------------
# class-index losses: nll_loss and cross_entropy


def _class_dim(input) -> int:
    if input.ndim == 0:
        raise ValueError("dualad.nn.functional: Expected 1 or more dimensions (got 0)")
    return 0 if input.ndim == 1 else 1


def _check_class_target(name, input, target, weight, ignore_index):
    """PyTorch's checks of a class-index target: integer dtype, shape ``input.shape`` without
    the class dim, values in [0, C) or ``ignore_index`` (values only when they can be read)."""
    if target.dtype.kind not in "iu":
        raise TypeError(
            f"dualad.nn.functional.{name}: expected an integer (class index) target, got dtype "
            f"{target.dtype} (expected scalar type Long but found {target.dtype})"
        )
    dim = _class_dim(input)
    expected = tuple(input.shape[:dim]) + tuple(input.shape[dim + 1 :])
    if tuple(target.shape) != expected:
        if input.ndim >= 2 and (target.ndim == 0 or target.shape[0] != input.shape[0]):
            batch = target.shape[0] if target.ndim else "none"
            raise ValueError(
                f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                f"({batch})."
            )
        raise ValueError(
            f"dualad.nn.functional.{name}: size mismatch (got input: {tuple(input.shape)}, "
            f"target: {tuple(target.shape)}); the target must have the input's shape without "
            f"its class dim {dim}"
        )
    classes = input.shape[dim]
    if weight is not None and tuple(weight.shape) != (classes,):
        raise ValueError(
            f"dualad.nn.functional.{name}: weight tensor should be defined either for all "
            f"{classes} classes or no classes but got weight tensor of shape: "
            f"{tuple(weight.shape)}"
        )
    if _concrete(target) and target.numel():
        bad = (target != ignore_index) & ((target < 0) | (target >= classes))
        if bool(ops.any(bad)):
            value = int(target[bad].reshape(-1)[0])
            raise IndexError(f"dualad.nn.functional.{name}: Target {value} is out of bounds.")
    return dim


def _nll(input, target, weight, ignore_index, reduction, dim):
    """The negative log-likelihood terms of a checked class target and their reduction."""
    ignored = ops.eq(target, ignore_index)
    safe = ops.where(ignored, 0, target)
    picked = ops.squeeze(ops.take_along_dim(input, ops.unsqueeze(safe, dim), dim), dim)
    # where, not a multiplication by 0: an ignored entry may pick -inf (0 * -inf is NaN)
    picked = ops.where(ignored, 0.0, picked)
    if weight is None:
        w = ops.astype(ops.logical_not(ignored), input.dtype)
    else:
        w = ops.where(ignored, 0.0, weight[safe])
        picked = picked * w
    losses = ops.where(ignored, 0.0, -picked)  # (+0, not -0, where ignored)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return ops.sum(losses)
    return ops.sum(losses) / ops.sum(w)  # PyTorch's weighted mean (all ignored: NaN)


def nll_loss(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
):
    """Negative log-likelihood of class indices: ``-weight[t] * input[n, t]`` per entry
    (``torch.nn.functional.nll_loss``); ``input`` holds log-probabilities, classes along dim 1
    (``(N, C)`` or ``(N, C, d1, ...)``) or dim 0 of an unbatched ``(C,)`` input.

    ``"mean"`` divides by the summed weights of the non-ignored targets.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> logp = dualad.log(dualad.tensor([[0.5, 0.5], [0.25, 0.75]]))
    >>> F.nll_loss(logp, dualad.tensor([0, 1]), weight=dualad.tensor([1.0, 3.0]))
    tensor(0.38904835)
    >>> F.nll_loss(logp, dualad.tensor([0, -100]), reduction="none")
    tensor([0.69314718, 0.        ])
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _tensor(input), _tensor(target)
    weight = None if weight is None else _tensor(weight)
    dim = _check_class_target("nll_loss", input, target, weight, ignore_index)
    return _nll(input, target, weight, ignore_index, reduction, dim)


def _class_shaped(weight, input, dim):
    """``weight`` (one per class) shaped to broadcast along ``input``'s class dim."""
    shape = [1] * input.ndim
    shape[dim] = weight.shape[0]
    return ops.reshape(weight, tuple(shape))


def _probability_targets(logp, target, weight, reduction, smoothing, dim):
    classes = logp.shape[dim]
    if smoothing > 0:
        target = target * (1 - smoothing) + smoothing / classes
    terms = logp * target
    if weight is not None:
        terms = terms * _class_shaped(weight, logp, dim)
    if reduction == "none":
        return -ops.sum(terms, dim)
    total = -ops.sum(terms)
    if reduction == "sum":
        return total
    return total / (logp.numel() // classes) if logp.numel() else total * math.nan


def _smoothed(logp, target, weight, ignore_index, reduction, smoothing, dim):
    """PyTorch's label smoothing of class-index targets: ``(1 - eps) nll + eps / C *
    smooth``, ``smooth`` being ``-sum_c w_c logp_c`` per entry (0 where ignored)."""
    nll = _nll(logp, target, weight, ignore_index, reduction, dim)
    classes = logp.shape[dim]
    ignored = ops.eq(target, ignore_index)
    per_class = logp if weight is None else logp * _class_shaped(weight, logp, dim)
    smooth = ops.where(ignored, 0.0, -ops.sum(per_class, dim))
    if reduction == "sum":
        smooth = ops.sum(smooth)
    elif reduction == "mean":
        if weight is None:
            count = ops.sum(ops.astype(ops.logical_not(ignored), logp.dtype))
        else:
            count = ops.sum(ops.where(ignored, 0.0, weight[ops.where(ignored, 0, target)]))
        smooth = ops.sum(smooth) / count
    return (1 - smoothing) * nll + smooth * (smoothing / classes)


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
):
    """Cross entropy of unnormalised scores ``input`` (``torch.nn.functional.cross_entropy``):
    ``nll_loss(log_softmax(input, class_dim), target)`` for class indices; a floating target of
    the input's shape holds class probabilities instead.

    ``label_smoothing`` in [0, 1] mixes the target with the uniform distribution (PyTorch's
    formulas, weights included). Classes along dim 1 (dim 0 of an unbatched ``(C,)`` input).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> scores = dualad.tensor([[2.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    >>> F.cross_entropy(scores, dualad.tensor([0, 1]))
    tensor(0.36064537)
    >>> F.cross_entropy(scores, dualad.tensor([0, 1]), label_smoothing=0.1)
    tensor(0.47731203)
    >>> F.cross_entropy(scores, F.one_hot(dualad.tensor([0, 1]), 3).double())
    tensor(0.36064537)
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _tensor(input), _tensor(target)
    weight = None if weight is None else _tensor(weight)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(
            f"dualad.nn.functional.cross_entropy: label_smoothing must be between 0.0 and 1.0. "
            f"Got: {label_smoothing}"
        )
    dim = _class_dim(input)
    if tuple(target.shape) == tuple(input.shape) and target.dtype.kind != "b":
        if target.dtype.kind not in "fc":
            raise TypeError(
                f"dualad.nn.functional.cross_entropy: Expected floating point type for target "
                f"with class probabilities, got {target.dtype}"
            )
        if ignore_index >= 0:
            raise ValueError(
                "dualad.nn.functional.cross_entropy: ignore_index is not supported for floating "
                "point target"
            )
        if weight is not None and tuple(weight.shape) != (input.shape[dim],):
            raise ValueError(
                f"dualad.nn.functional.cross_entropy: weight must have shape "
                f"({input.shape[dim]},), got {tuple(weight.shape)}"
            )
        logp = log_softmax(input, dim)
        return _probability_targets(logp, target, weight, reduction, label_smoothing, dim)
    _check_class_target("cross_entropy", input, target, weight, ignore_index)
    logp = log_softmax(input, dim)
    if label_smoothing > 0:
        return _smoothed(logp, target, weight, ignore_index, reduction, label_smoothing, dim)
    return _nll(logp, target, weight, ignore_index, reduction, dim)
