"""Per-tensor metadata records: how a view was made, the autograd extras few tensors need,
and the version counter shared by a base, its views and detached aliases.

The lowest part of the Tensor layer: it imports only ``_state`` (for ``LOCK``).
"""

from __future__ import annotations

from ._state import LOCK


class ViewInfo:
    """How a view was made from its base: the root base and the view ops that replay it.

    ``chain`` is a linked list ``(parent_chain, op, params, index)`` (None ends it; ``index``:
    which output of a multi-output view op, else None), so that making a view of a view costs
    O(1) however deep the chain; ``replay`` unrolls it into the ``(op, params, index)`` steps
    that, applied in order to the base, give the view again (used to rebase history after an
    in-place op on a view, and to derive a view's tangent from its base's).
    """

    __slots__ = (
        "base",
        "chain",
        "created_without_grad",
        "fw_derivable",
        "in_custom_function",
        "multi_output",
        "version",
    )

    def __init__(
        self,
        base,
        chain,
        version,
        created_without_grad=False,
        multi_output=False,
        in_custom_function=False,
        fw_derivable=True,
    ):
        self.base = base
        self.chain = chain
        self.version = version  # base version when this view's grad_fn was last made
        self.created_without_grad = created_without_grad
        self.multi_output = multi_output
        # an output (or a view of an output) of a custom Function: in-place on it is an error
        self.in_custom_function = in_custom_function
        # False for unpack_dual's primal (and views of it): PyTorch's forward-non-differentiable
        # view, whose tangent is never derived from its base's (see DualLevel.view_tangent)
        self.fw_derivable = fw_derivable

    @property
    def replay(self) -> tuple:
        steps = []
        link = self.chain
        while link is not None:
            link, op, params, index = link
            steps.append((op, params, index))
        steps.reverse()
        return tuple(steps)


class AutogradMeta:
    """Per-tensor autograd extras that most tensors never need."""

    __slots__ = (
        "accumulator",
        "grad",
        "leaf_hooks",
        "post_accumulate_hooks",
        "retain_key",
        "retains_grad",
    )

    def __init__(self) -> None:
        self.grad = None
        self.leaf_hooks = None  # HookDict of tensor hooks on a leaf (run before AccumulateGrad)
        self.retains_grad = False
        self.retain_key = None  # (node, output_nr) the retain-grad capture is registered on
        self.accumulator = None  # weakref to the leaf's AccumulateGrad node
        self.post_accumulate_hooks = None  # dict id -> fn


def _version_box(t) -> list:
    """``t``'s version counter, made on first use. Made under ``LOCK`` (checked again there):
    two threads saving or viewing one shared tensor must not each make one, or a later
    in-place write would bump one while a graph checks the other."""
    box = t._vc
    if box is None:
        with LOCK:
            box = t._vc
            if box is None:
                box = t._vc = [0]
    return box


def get_meta(t) -> AutogradMeta:
    """``t``'s AutogradMeta, made on first use under ``LOCK`` (checked again there): threads
    running their first backward into one shared leaf must all accumulate into one ``.grad``,
    not each into a metadata object that another thread's then replaces."""
    meta = t._meta
    if meta is None:
        with LOCK:
            meta = t._meta
            if meta is None:
                meta = t._meta = AutogradMeta()
    return meta
