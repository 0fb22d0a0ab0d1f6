"""The torch.autograd-shaped facade: backward, grad, grad modes and graph inspection.

>>> import dualad
>>> x = dualad.tensor(2.0, requires_grad=True)
>>> dualad.autograd.grad(x ** 3, x)
(tensor(12.),)
"""

from __future__ import annotations

from .. import fwd as forward_ad
from ..rev.anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from ..rev.entry import _calculate_shape, backward
from ..rev.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from ..rev.graph_task import execution_engine as _execution_engine
from ..rev.saved import SavedTensor
from . import function, functional, graph
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .gradients import grad

__all__ = [
    "Function",
    "FunctionCtx",
    "SavedTensor",
    "backward",
    "detect_anomaly",
    "forward_ad",
    "functional",
    "enable_grad",
    "grad",
    "GradcheckError",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "is_multithreading_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
    "set_multithreading_enabled",
]
