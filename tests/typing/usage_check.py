"""dualad's public API as a user's type-checked code uses it.

``tests/test_typing.py`` runs mypy over this file (with the strict flags below: a user's strict
project must accept dualad) and also runs it, so each ``assert_type`` claim is checked twice:
statically by mypy, and at run time by the ``isinstance`` next to it. A change that loses a
public type (``dualad.sin`` becoming ``Any``, ``Tensor`` losing ``+`` or ``.grad``) fails here.
"""

# mypy: disallow-untyped-defs, disallow-any-generics, warn-return-any, strict-equality

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import dualad
import dualad.func as func
import dualad.numpy as dnp
import dualad.testing
from dualad import Tensor
from dualad.autograd import Function
from dualad.tracing.api import Jitted

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # pragma: no cover - (mypy checks this file as 3.11: pyproject's [tool.mypy])
    from typing_extensions import assert_type


def loss(w: Tensor, x: Tensor) -> Tensor:
    """A model's loss written with operators, methods and op functions."""
    y = dualad.tanh(x @ w) * 2.0 - 1
    return (y**2).mean() + 0.1 * dualad.sum(w * w)


class Cube(Function):
    """A custom Function: y = x**3, dy/dx = 3 x**2."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> Tensor:
        x: Tensor = ctx.saved_tensors[0]
        return grad_output * 3 * x**2


def tensors() -> None:
    x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert_type(x, Tensor)
    for made in (dualad.zeros(2, 3), dualad.ones((2,)), dualad.randn(3, dtype=dualad.float32)):
        assert_type(made, Tensor)
        assert isinstance(made, Tensor)
    y = dualad.sin(x)  # a registry-made op: typed by its factory
    assert_type(y, Tensor)
    z = dualad.add(y, 1.0)
    assert_type(z, Tensor)
    for result in (x + 1, 2 * x, x @ x, -x, x**2, x / x, abs(x), x[0], x.T, x.mT):
        assert_type(result, Tensor)
        assert isinstance(result, Tensor)
    assert_type(x == 1.0, Tensor)  # (elementwise, as torch's)
    assert_type(x.requires_grad, bool)
    assert_type(x.shape, tuple[int, ...])
    assert isinstance(x.numpy(force=True), np.ndarray)
    assert_type(x.detach(), Tensor)
    assert_type(x.to(dualad.float32), Tensor)
    assert_type(x.exp(), Tensor)  # a registry-made op as a method
    assert_type(y.sin_(), Tensor)  # and its in-place variant


def reverse_mode() -> None:
    w = dualad.randn(2, requires_grad=True)
    x = dualad.randn(4, 2)
    value = loss(w, x)
    value.backward()
    grad = w.grad
    assert_type(grad, Tensor | None)
    assert isinstance(grad, Tensor)
    (g,) = dualad.autograd.grad(loss(w, x), w)
    assert_type(g, Tensor)  # (Tensor | None only with allow_unused=True)
    (maybe,) = dualad.autograd.grad(loss(w, x), [w], allow_unused=True)
    assert_type(maybe, Tensor | None)
    out = Cube.apply(w)
    assert isinstance(out, Tensor)
    dualad.autograd.backward(out.sum())


def transforms() -> None:
    w = dualad.randn(2)
    x = dualad.randn(4, 2)
    grad_fn = func.grad(loss)
    assert_type(grad_fn, Callable[..., Any])
    assert isinstance(grad_fn(w, x), Tensor)
    jacobian: Callable[..., Any] = func.jacrev(dualad.sin)
    assert jacobian(w).shape == (2, 2)
    per_example = func.vmap(func.grad(loss), in_dims=(None, 0))
    assert per_example(w, x[:, None]).shape == (4, 2)
    batched: Callable[..., Any] = dualad.vmap(dualad.sin)
    assert isinstance(batched(x), Tensor)
    _, tangent = func.jvp(dualad.sin, (w,), (dualad.ones(2),))
    assert isinstance(tangent, Tensor)
    _, pullback = func.vjp(dualad.sin, w)
    assert isinstance(pullback(dualad.ones(2))[0], Tensor)


@dualad.jit
def jitted(x: Tensor) -> Tensor:
    return dualad.sin(x) * x


def compiled() -> None:
    assert_type(jitted, Jitted)
    assert isinstance(jitted(dualad.randn(3)), Tensor)
    with_options = dualad.jit(static_argnums=1)
    assert isinstance(with_options(lambda x, n: x * n)(dualad.ones(2), 3), Tensor)


def checks() -> None:
    x = dualad.randn(3, requires_grad=True)
    assert_type(dualad.testing.gradcheck(dualad.sin, (x,)), bool)
    assert_type(dualad.autograd.gradcheck(dualad.sin, (x,)), bool)


def namespaces() -> None:
    """The facades' functions have result types: one Tensor, or their named results."""
    a = dualad.tensor([[2.0, 0.5], [0.5, 1.0]])
    tensors = [
        dualad.linalg.solve(a, a),
        dualad.linalg.inv(a),
        dualad.special.erf(a),
        dualad.special.gammaln(a),
        dualad.nn.functional.softmax(a, dim=0),
        dualad.nn.functional.relu(a),
        dualad.fft.fft(a),
        dualad.matmul(a, a),
        dualad.max(a),
        dualad.median(a),
    ]
    for t in tensors:
        assert_type(t, Tensor)
        assert isinstance(t, Tensor)
    eig = dualad.linalg.eigh(a)
    named = [eig.eigenvalues, eig.eigenvectors, dualad.linalg.svd(a).Vh, dualad.linalg.qr(a).R]
    named += [dualad.linalg.slogdet(a).logabsdet, dualad.linalg.lu(a).P, dualad.max(a, 0).indices]
    named += [dualad.topk(a, 1).values, dualad.sort(a).indices, dualad.median(a, dim=1).values]
    named += [a.max(0).values, a.topk(1).indices, a.reshape(4), a.matmul(a)]  # (as methods)
    for t in named:
        assert_type(t, Tensor)
        assert isinstance(t, Tensor)
    _, where = dualad.nn.functional.max_pool1d(a[None], 2, return_indices=True)
    assert_type(where, Tensor)
    assert isinstance(where, Tensor)
    assert_type(dualad.split(a, 1), tuple[Tensor, ...])
    assert_type(dualad.special.sici(a), tuple[Tensor, Tensor])
    numpy_results = [dnp.sin(a), dnp.add(a, 1.0), *dnp.frexp(a), dnp.linalg.solve(a, a)]
    numpy_results += [dnp.linalg.eigh(a).eigenvalues, dnp.linalg.slogdet(a).sign, dnp.fft.fft(a)]
    numpy_results += [dnp.linalg.qr(a, mode="r"), dnp.linalg.svd(a, compute_uv=False)]
    numpy_results += [dnp.sum(a), dnp.mean(a, axis=0), dnp.concatenate([a, a]), *dnp.split(a, 2)]
    assert_type(dnp.allclose(a, a), bool)
    assert_type(dnp.unique_counts(a).counts, Tensor)
    for t in numpy_results:  # (NumPy's ufuncs and sub-namespaces)
        assert_type(t, Tensor)
        assert isinstance(t, Tensor)


def main() -> None:
    """Run every use above (``tests/test_typing.py`` calls this)."""
    tensors()
    reverse_mode()
    transforms()
    compiled()
    checks()
    namespaces()
