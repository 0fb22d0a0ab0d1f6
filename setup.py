"""Build of dualad's optional compiled fast path (``dualad/_fastpath.c``).

Everything else is declared in pyproject.toml. The extension is optional: where it cannot be
built (no C compiler), the install goes on and dualad runs its Python fast path, which computes
the same results.
"""

import sys
import sysconfig

from setuptools import Extension, setup

# CPython with its GIL only (the module reads and writes object slots at their offsets)
COMPILED = sys.implementation.name == "cpython" and not sysconfig.get_config_var("Py_GIL_DISABLED")
extensions = [Extension("dualad._fastpath", ["dualad/_fastpath.c"], optional=True)]
setup(ext_modules=extensions if COMPILED else [])
