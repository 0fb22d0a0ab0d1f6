"""Reverse mode: graph nodes, the executor, hooks, grad modes, in-place and view handling.

Importing the package installs the tape into the core (``record``: the bottom level's graph
recorder) and attaches Tensor's reverse-mode members (``tensor_members``).
"""

from . import record, tensor_members  # noqa: F401 (imported for what they install)
