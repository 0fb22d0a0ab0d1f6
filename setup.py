"""Build of dualad's optional compiled fast path (``dualad/_fastpath.c``).

Everything else is declared in pyproject.toml. The extension is optional: where it cannot be
built (no C compiler), the install goes on and dualad runs its Python fast path, which computes
the same results.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("dualad._fastpath", ["dualad/_fastpath.c"], optional=True)])
