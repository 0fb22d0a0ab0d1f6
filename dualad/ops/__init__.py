"""The op library. Importing this package registers every op.

``MODULES`` are the modules with public ops; each one's ``__all__``, ``TENSOR_METHODS`` and
``INPLACE_METHODS`` come from its registrations (``_exports.py``), and this package exports every
public op (other layers ``from ..ops import clone``; ``dualad`` exports ``__all__``).
``dualad._operators`` attaches the Tensor methods and operators (from ``dualad/__init__``).

Inside ``ops/`` the modules form layers: a module imports only from the rows above it (and
from ``_backend``, ``_dtypes``, ``_state``, ``_tensor``, ``_dispatch``, ``_creation``,
``_tracked_values``)::

    _dims, _exports, _keys, _promotion      no ops: dims, export lists, index keys, dtypes,
    _xp_compat                              the NumPy calls CuPy lacks
    base                                    reshape/view, permute/movedim/unsqueeze,
                                            broadcast_to/sum_to, the ``linear`` helper
    _batching                               the shared batching rules
    _helpers                                the unary/binary/... helpers, conj, clone
    arithmetic, comparison, diagonals, einsums, tensor_index
    activations, complex_parts, exp_log, floating, minmax, rounding, slicing, trigonometric
    casts, gather_scatter, joining, special
    bessel, entropies, gamma_functions, normal_distribution    (special functions)
    _special_impls, _special_calls          scipy.special calls of the rows below
    special_gamma, incomplete_beta, elementary_special    (ops of dualad.special only)
    distributions, orthogonal_polynomials   (on incomplete_beta's densities; dualad.special)
    bessel_cylinder, bessel_modified, airy, spherical_bessel, integrals, elliptic, hypergeometric,
    kelvin
                                        (scipy.special's Bessel family and friends)
    _reducing, indexing, smooth_activations, views
    piecewise_activations                   hardswish, hardshrink, ..., glu (nn.functional)
    extrema, fft, linalg, norms, order_statistics, reductions, scans, selection, softmaxes
    moments, mutation, products, quantiles, reordering
    convolve, distances
    triangular                              (and _lapack, the LAPACK calls of linalg ops)
    factorizations
    solvers
    determinants
    closeness, searching                    non-differentiable ops of dualad.numpy
    counting, sets                          (with searching's shared batching rules)
    convolution                             conv and its two transposes (nn.functional)
    pooling                                 max/avg pooling (with convolution's windows)
    im2col, adaptive_pooling, unpooling     unfold/fold, adaptive pools, max_unpool (nn)
    grid_sampling                           grid_sample and its transpose (nn)
    _spectral, eigen, svd, qr, matrix_functions  spectral linear algebra (dualad.linalg)
    eigen_general                           (eig, eigvals: on qr's solves)
    matrix_equations                        Sylvester and Lyapunov equations (scipy.linalg)
    analytic_functions                      logm, sqrtm, signm, cosm, ... (on the two above)
    polar                                   the polar decomposition (on matrix_equations)
    torch_norm                              torch.norm: vector norms and 'nuc' (svdvals)
    least_squares                           (its residuals and singular values: svdvals)
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from .. import _tracked_values
from . import (
    _helpers,
    activations,
    adaptive_pooling,
    airy,
    analytic_functions,
    arithmetic,
    base,
    bessel,
    bessel_cylinder,
    bessel_modified,
    casts,
    closeness,
    comparison,
    complex_parts,
    convolution,
    convolve,
    counting,
    determinants,
    diagonals,
    distances,
    distributions,
    eigen,
    eigen_general,
    einsums,
    elementary_special,
    elliptic,
    entropies,
    exp_log,
    extrema,
    factorizations,
    fft,
    floating,
    gamma_functions,
    gather_scatter,
    grid_sampling,
    hypergeometric,
    im2col,
    incomplete_beta,
    indexing,
    integrals,
    joining,
    kelvin,
    least_squares,
    linalg,
    matrix_equations,
    matrix_functions,
    minmax,
    moments,
    mutation,
    normal_distribution,
    norms,
    order_statistics,
    orthogonal_polynomials,
    piecewise_activations,
    polar,
    pooling,
    products,
    qr,
    quantiles,
    reductions,
    reordering,
    rounding,
    scans,
    searching,
    selection,
    sets,
    slicing,
    smooth_activations,
    softmaxes,
    solvers,
    special,
    special_gamma,
    spherical_bessel,
    svd,
    tensor_index,
    torch_norm,
    triangular,
    trigonometric,
    unpooling,
    views,
)
from ._helpers import *
from .activations import *
from .analytic_functions import *
from .arithmetic import *
from .base import *
from .bessel import *
from .casts import *
from .comparison import *
from .complex_parts import *
from .determinants import *
from .diagonals import *
from .distances import *
from .einsums import *
from .entropies import *
from .exp_log import *
from .extrema import *
from .factorizations import *
from .fft import *
from .floating import *
from .gamma_functions import *
from .gather_scatter import *
from .indexing import *
from .joining import *
from .least_squares import *
from .linalg import *
from .matrix_equations import *
from .matrix_functions import *
from .minmax import *
from .moments import *
from .normal_distribution import *
from .norms import *
from .order_statistics import *
from .piecewise_activations import *
from .polar import *
from .products import *
from .quantiles import *
from .reductions import *
from .reordering import *
from .rounding import *
from .scans import *
from .selection import *
from .slicing import *
from .smooth_activations import *
from .softmaxes import *
from .solvers import *
from .special import *
from .torch_norm import *
from .triangular import *
from .trigonometric import *
from .views import *

if TYPE_CHECKING:
    # ``__all__`` below is computed, so type checkers read the public ops from a generated stub
    # (tests/typing/stubgen.py)
    from ._public_names import *

# the modules with public ops (those that register exports), in import order
MODULES = tuple(
    module
    for module in list(globals().values())
    if isinstance(module, ModuleType) and hasattr(module, "TENSOR_METHODS")
)
__all__ = [name for module in MODULES for name in module.__all__]

# tensors made of tracked values (dualad.tensor([x[0], 2 * x[1]]) inside a transform) are built
# with these ops: the creation layer below asks for them
_tracked_values.install_ops(joining.stack, base.broadcast_to, joining.cat)
