"""``dualad.nn.functional``: PyTorch's functional neural-network API on dualad tensors.

The functions come from modules of one subject each: ``activations`` (relu, gelu, softmax, ...),
``losses`` (cross_entropy, mse_loss, ...), ``layers`` (linear, bilinear, layer_norm, normalize,
dropout, embedding, one_hot, pad), ``convolution`` (conv1d/2d/3d, conv_transpose1d/2d/3d) and
``pooling`` (max_pool1d/2d/3d, avg_pool1d/2d/3d).
"""

from __future__ import annotations

from . import activations, convolution, layers, losses, pooling
from .activations import *
from .convolution import *
from .layers import *
from .losses import *
from .pooling import *

__all__ = [
    *activations.__all__,
    *losses.__all__,
    *layers.__all__,
    *convolution.__all__,
    *pooling.__all__,
]
