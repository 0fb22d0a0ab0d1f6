"""Tensor's reverse-mode members, attached to the class by the tape.

``requires_grad`` (which refreshes a view's grad_fn), ``grad_fn``, ``grad``, ``retain_grad``,
the hooks, ``backward`` and ``detach_`` need the graph machinery of this package; the Tensor
layer below holds only data and metadata, so these members are written here as the body of
``_ReverseModeMembers`` and copied onto ``Tensor`` when ``dualad.rev`` is imported (every
``import dualad`` does).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

from .._meta import get_meta
from .._tensor import Tensor, attach_members
from .entry import backward
from .hooks import (
    drop_retain_grad,
    install_retain_grad,
    register_post_accumulate_hook,
    register_tensor_hook,
)
from .node import Node, RemovableHandle
from .views import refresh_view_node


class _ReverseModeMembers:
    """The members below, as they read on ``Tensor`` (``self`` is a Tensor)."""

    @property
    def requires_grad(self) -> bool:
        view = self._view
        if view is not None and not self._rg:
            # like torch, a view requires grad when its base does (the base may also have
            # gained history in place since the view was made: refresh its grad_fn)
            refresh_view_node(self)
            return self._rg or view.base._rg
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("dualad: the requires_grad attribute cannot be deleted")

    @property
    def grad_fn(self) -> Node | None:
        if self._view is not None:
            return refresh_view_node(self)
        return self._node

    @property
    def _grad_fn(self):
        return self.grad_fn

    @_grad_fn.deleter
    def _grad_fn(self) -> None:
        raise RuntimeError("dualad: the _grad_fn attribute cannot be deleted")

    @property
    def grad(self) -> Tensor | None:
        meta = self._meta
        if self._node is not None and not (meta is not None and meta.retains_grad):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() "
                "on the non-leaf Tensor.",
                UserWarning,
                stacklevel=2,
            )
        return None if meta is None else meta.grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: got {tuple(value.shape)}, "
                    f"expected {tuple(self.shape)}"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type: got {value.dtype}, "
                    f"expected {self.dtype}"
                )
            if value.device != self.device:
                raise RuntimeError(
                    f"assigned grad has data located on a different device: got {value.device}, "
                    f"expected {self.device}"
                )
        meta = self._meta
        if meta is None:
            if value is None:
                return
            meta = get_meta(self)
        meta.grad = value

    @grad.deleter
    def grad(self) -> None:
        if self._meta is not None:
            self._meta.grad = None

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``.grad`` during ``backward()`` (no-op on leaves).

        >>> import dualad
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> y.retain_grad()
        >>> (y * y).sum().backward()
        >>> y.grad, x.grad
        (tensor([ 6., 12.]), tensor([18., 36.]))
        """
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._node is None:
            return
        install_retain_grad(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Register ``hook(grad) -> Tensor | None`` run when this tensor's gradient is computed.

        Returns a handle whose ``remove()`` unregisters it. A hook that returns a tensor
        replaces the gradient.

        >>> import dualad
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> handle = x.register_hook(lambda g: g * 10)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([20., 40.])
        >>> handle.remove()
        """
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> RemovableHandle:
        """Register ``hook(tensor)`` run on a leaf after its ``.grad`` was accumulated.

        >>> import dualad
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> seen = []
        >>> handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        >>> (2 * x).sum().backward()
        >>> seen
        [[2.0, 2.0]]
        """
        return register_post_accumulate_hook(self, hook)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Tensor | Sequence[Tensor] | None = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into the leaves' ``.grad`` (``dualad.autograd.backward``).

        ``gradient`` is the cotangent (needed when ``self`` is not a scalar); ``create_graph``
        records the backward pass itself, for higher derivatives.

        >>> import dualad
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> (x ** 3).sum().backward()
        >>> x.grad
        tensor([ 3., 12.])
        >>> (x * x).backward(gradient=dualad.tensor([1.0, 0.0]))  # (gradients accumulate)
        >>> x.grad
        tensor([ 5., 12.])
        """
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach_(self) -> Tensor:
        """Detach in place: ``self`` becomes a leaf that requires no grad and has no tangents.

        Nodes that saved ``self`` refuse to use it afterwards; views of ``self`` keep theirs.

        >>> import dualad
        >>> y = dualad.tensor([1.0], requires_grad=True) * 2
        >>> y.detach_() is y, y.requires_grad, y.grad_fn
        (True, False, None)
        """
        if self._view is not None and self._node is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. (dualad: this tensor is a "
                "view with gradient history; detach() gives a detached alias of it.)"
            )
        meta = self._meta
        if meta is not None and meta.retains_grad:
            drop_retain_grad(self)
        self._node = None
        self._out_nr = 0
        self._rg = False
        self._fw = None
        return self


attach_members(Tensor, _ReverseModeMembers)
