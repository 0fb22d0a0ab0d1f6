"""A griffe extension for the API reference: fences the doctest examples of docstrings.

dualad's docstrings are prose followed by ``>>>`` examples (run by pytest's
``--doctest-modules``). Markdown would read a ``>>>`` line as three nested block quotes, so each
run of example lines (a ``>>>`` line, its ``...`` continuations and its output, up to a blank
line) is wrapped in a ``pycon`` code fence before mkdocstrings renders the docstring.
"""

from __future__ import annotations

import griffe


def fence_doctests(text: str) -> str:
    """The docstring ``text`` with every run of doctest lines inside a ```` ```pycon ```` fence."""
    out: list[str] = []
    in_example = False
    for line in text.splitlines():
        stripped = line.strip()
        if not in_example and stripped.startswith(">>>"):
            out.append("```pycon")
            in_example = True
        elif in_example and not stripped:
            out.append("```")
            in_example = False
        out.append(line)
    if in_example:
        out.append("```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Fence the examples of every docstring griffe loads."""

    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
