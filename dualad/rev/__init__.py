"""Reverse mode: graph nodes, the executor, hooks, grad modes, in-place and view handling."""
