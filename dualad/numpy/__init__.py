"""NumPy's namespace over dualad tensors: ``import dualad.numpy as np`` keeps NumPy code
differentiable.

Every name follows NumPy's signature and semantics (``axis``, ``keepdims``, ``dtype``, ``out``,
NEP 50 promotion); arguments may be tensors of any level (requires-grad, dual, batched, inside
``func.grad``), NumPy/CuPy arrays, Python scalars or lists, and results are tensors.
Differentiable functions record derivatives like the dualad ops they are made of; functions
without a derivative (``argsort``, ``isclose``, ``unique`` ...) return untracked results.
``dualad.numpy.linalg`` and ``dualad.numpy.fft`` are NumPy's sub-namespaces; ``random`` passes
through to NumPy's. The same implementations answer NumPy's own functions called on tensors
(``np.sum(t)``, ``np.exp(t)``) through ``__array_function__`` and ``__array_ufunc__``.

>>> import numpy as np
>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> dnp.sum(dnp.mean(x, axis=0) ** 2).backward()
>>> x.grad
tensor([[2., 3.],
        [2., 3.]])
>>> np.linalg.norm(x, axis=1)  # NumPy's own function, answered by dualad.numpy.linalg.norm
tensor([2.23606798, 5.        ], grad_fn=<LinalgVectorNormBackward0>)
>>> dualad.func.grad(lambda t: np.sum(np.cumsum(t) ** 2))(dualad.tensor([1.0, 2.0]))
tensor([8., 6.])
"""

from __future__ import annotations

# The namespace is assembled from modules of one subject each (see ARCHITECTURE.md).
from . import protocol_ufuncs as protocol_ufuncs  # Tensor.__array_ufunc__
from .counting import *
from .predicates import *
from .rounding import *
from .searching import *
from .sets import *
from .ufunc_table import *
from .ufuncs import ufunc as ufunc
from .reductions import *
from .manipulation import *
from .joining import *
from .padding import *
from .functional import *
from .assignment import *
from .indexing import *
from .products import *
from .creation import *
from .calculus import *
from .elementwise import *
from .index_builders import *
from .pieces import *
from .text_and_files import *
from .statistics import *
from .polynomials import *
from .order_statistics import *
from .matrices import *
from .constants import *
from .constants import bool
from . import fft, linalg

# Keep last: NumPy's functions answer through the namespaces as assembled above.
import numpy as _np
import sys as _sys

from . import protocol_functions as _protocol_functions

_protocol_functions.install((_sys.modules[__name__], _np), (linalg, _np.linalg), (fft, _np.fft))
