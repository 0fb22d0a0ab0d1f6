"""Build of dualad's optional compiled fast path (``dualad/_fastpath.c``).

Everything else is declared in pyproject.toml. The extension is optional: where it cannot be
built (no C compiler), the install goes on and dualad runs its Python fast path, which computes
the same results.
"""

import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup

# CPython with its GIL only (the module reads and writes object slots at their offsets)
COMPILED = sys.implementation.name == "cpython" and not sysconfig.get_config_var("Py_GIL_DISABLED")
# (_fastpath.c includes its parts, one subject each: a change to one rebuilds the module)
PARTS = sorted(str(p) for p in Path("dualad").glob("_fastpath_*.c"))
extensions = [
    Extension("dualad._fastpath", ["dualad/_fastpath.c"], depends=PARTS, optional=True),
]
setup(ext_modules=extensions if COMPILED else [])
