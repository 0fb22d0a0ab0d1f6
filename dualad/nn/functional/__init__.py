"""``dualad.nn.functional``: PyTorch's functional neural-network API on dualad tensors.

The functions come from modules of one subject each: ``activations`` (relu, gelu, softmax, ...),
``losses`` (cross_entropy, mse_loss, ...), ``layers`` (linear, bilinear, layer_norm, normalize,
dropout, embedding, one_hot, pad), ``normalization`` (batch_norm, instance_norm, group_norm,
rms_norm), ``attention`` (scaled_dot_product_attention), ``sampling`` (interpolate),
``distances`` (cosine_similarity, pairwise_distance), ``margin_losses`` (margin_ranking_loss,
triplet_margin_loss, ...), ``likelihood_losses`` (gaussian_nll_loss, poisson_nll_loss),
``convolution`` (conv1d/2d/3d, conv_transpose1d/2d/3d), ``pooling`` (max_pool1d/2d/3d,
avg_pool1d/2d/3d), ``adaptive_pooling`` (adaptive_avg/max_pool1d/2d/3d), ``unpooling``
(max_unpool1d/2d/3d), ``folding`` (unfold, fold), ``grid_sampling`` (grid_sample,
affine_grid), ``bags`` (embedding_bag), ``shuffling`` (pixel_shuffle, pixel_unshuffle,
channel_shuffle) and ``power_pooling`` (lp_pool1d/2d/3d, local_response_norm).
"""

from __future__ import annotations

from . import (
    activations,
    attention,
    convolution,
    distances,
    layers,
    likelihood_losses,
    losses,
    margin_losses,
    normalization,
    pooling,
    sampling,
)
from .activations import *
from .attention import *
from .convolution import *
from .distances import *
from .layers import *
from .likelihood_losses import *
from .losses import *
from .margin_losses import *
from .normalization import *
from .pooling import *
from .sampling import *

__all__ = [
    *activations.__all__,
    *attention.__all__,
    *losses.__all__,
    *margin_losses.__all__,
    *likelihood_losses.__all__,
    *layers.__all__,
    *normalization.__all__,
    *distances.__all__,
    *convolution.__all__,
    *pooling.__all__,
    *sampling.__all__,
]
from . import adaptive_pooling, bags, folding, grid_sampling, power_pooling, shuffling, unpooling
from .adaptive_pooling import *
from .bags import *
from .folding import *
from .grid_sampling import *
from .power_pooling import *
from .shuffling import *
from .unpooling import *

__all__ += [
    *adaptive_pooling.__all__,
    *bags.__all__,
    *folding.__all__,
    *grid_sampling.__all__,
    *power_pooling.__all__,
    *shuffling.__all__,
    *unpooling.__all__,
]
