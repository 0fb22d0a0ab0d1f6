"""Writes whose value (or second operand) shares memory with the tensor being written.

dualad reads before it writes: ``y[mask] = y[0]`` writes the row as it was before the write,
as every recorded path (an out-of-place ``index_put`` then a copy into y) always did. NumPy's
own boolean-mask write reads the value after writing earlier elements, and the no-grad direct
write followed it: the function then had other values than the ones its gradient was computed
for. Each case is checked against an explicit copy-first NumPy computation: values (with and
without grad, under vmap) and derivatives at every level against finite differences of it.
(PyTorch raises "unsupported operation: some elements of the input tensor and the written-to
tensor refer to a single memory location" for most of these; dualad gives the copy-first result.)
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.func as F

T = dualad.tensor
MASK = np.array([[False, False, True], [False, True, True], [False, False, False]])
PERM = np.array([[2, 0, 1], [1, 2, 0], [0, 1, 2]])


def _scatter_ref(y):
    src = y.T.copy()
    for i in range(3):
        for j in range(3):
            y[PERM[i, j], j] = src[i, j]


# name: (write on dualad's y, the same write on a NumPy y with the operand copied first)
CASES = {
    "mask_select_row": (
        lambda y: y.__setitem__(T(MASK), y.select(0, 0)),
        lambda y: y.__setitem__(MASK, y[0].copy()),
    ),
    "mask_0d_view": (
        lambda y: y.__setitem__(T(MASK), y[0, 2]),
        lambda y: y.__setitem__(MASK, y[0, 2].copy()),
    ),
    "numpy_mask_row": (
        lambda y: y.__setitem__(MASK, y[0]),
        lambda y: y.__setitem__(MASK, y[0].copy()),
    ),
    "index_tensor_transpose": (
        lambda y: y.__setitem__(T(np.array([1, 2, 0])), y.T),
        lambda y: y.__setitem__(np.array([1, 2, 0]), y.T.copy()),
    ),
    "slice_shift": (
        lambda y: y.__setitem__((slice(None), slice(1, None)), y[:, :-1]),
        lambda y: y.__setitem__((slice(None), slice(1, None)), y[:, :-1].copy()),
    ),
    "rows_broadcast": (
        lambda y: y.__setitem__(slice(1, None), y[0]),
        lambda y: y.__setitem__(slice(1, None), y[0].copy()),
    ),
    "ellipsis_transpose": (
        lambda y: y.__setitem__(Ellipsis, y.T),
        lambda y: y.__setitem__(Ellipsis, y.T.copy()),
    ),
    "int_key_column": (
        lambda y: y.__setitem__(1, y[:, 0]),
        lambda y: y.__setitem__(1, y[:, 0].copy()),
    ),
    "add_shifted": (
        lambda y: y[1:].add_(y[:-1]),
        lambda y: y[1:].__iadd__(y[:-1].copy()),
    ),
    "iadd_slice": (
        lambda y: y.__setitem__(slice(1, None), y[1:].__iadd__(y[:-1])),
        lambda y: y[1:].__iadd__(y[:-1].copy()),
    ),
    "mul_transpose": (lambda y: y.mul_(y.T), lambda y: y.__imul__(y.T.copy())),
    "mul_self": (lambda y: y.mul_(y), lambda y: y.__imul__(y.copy())),
    "lerp_transpose": (
        lambda y: y.lerp_(y.T, 0.3),
        lambda y: y.__iadd__(0.3 * (y.T.copy() - y)),
    ),
    "copy_transpose": (
        lambda y: y.copy_(y.T),
        lambda y: y.__setitem__(Ellipsis, y.T.copy()),
    ),
    "copy_shifted": (
        lambda y: y[1:].copy_(y[:-1]),
        lambda y: y.__setitem__(slice(1, None), y[:-1].copy()),
    ),
    "masked_fill_view": (
        lambda y: y.masked_fill_(T(MASK), y[0, 2]),
        lambda y: y.__setitem__(MASK, y[0, 2].copy()),
    ),
    "scatter_transpose": (lambda y: y.scatter_(0, T(PERM), y.T), _scatter_ref),
    "index_add_self": (
        lambda y: y.index_add_(0, T(np.array([2, 0, 1])), y),
        lambda y: y.__iadd__(y[np.argsort([2, 0, 1])].copy()),
    ),
}


def _fn(write):
    def g(x):
        y = x * 1
        write(y)
        return y

    return g


def _ref(write):
    def r(x):
        y = x.copy()
        write(y)
        return y

    return r


def _fd(fn, x0, eps=1e-6):
    grad = np.zeros(x0.size)
    for i in range(x0.size):
        step = np.zeros(x0.size)
        step[i] = eps
        step = step.reshape(x0.shape)
        grad[i] = (fn(x0 + step) - fn(x0 - step)) / (2 * eps)
    return grad.reshape(x0.shape)


@pytest.fixture(params=sorted(CASES))
def case(request):
    write, ref_write = CASES[request.param]
    g, ref = _fn(write), _ref(ref_write)
    x0 = np.random.default_rng(1).standard_normal((3, 3))
    w = np.random.default_rng(2).standard_normal((3, 3))

    def loss(x):
        return (g(x) * T(w)).sum()

    def want(x):
        return _fd(lambda a: float((ref(a) * w).sum()), x)

    return g, ref, loss, want, x0, w


def test_values(case):
    g, ref, _, _, x0, _ = case
    np.testing.assert_allclose(g(T(x0)).numpy(), ref(x0))
    x = T(x0, requires_grad=True)
    np.testing.assert_allclose(g(x).detach().numpy(), ref(x0))
    with dualad.no_grad():
        np.testing.assert_allclose(g(x).numpy(), ref(x0))
    np.testing.assert_array_equal(x.detach().numpy(), x0)  # the input is never written


def test_eager_backward(case):
    _, _, loss, want, x0, _ = case
    x = T(x0, requires_grad=True)
    loss(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), want(x0), atol=1e-6)


@pytest.mark.parametrize("transform", [F.grad, F.jacrev, F.jacfwd])
def test_transforms(case, transform):
    _, _, loss, want, x0, _ = case
    np.testing.assert_allclose(transform(loss)(T(x0)).numpy(), want(x0), atol=1e-6)


def test_jvp(case):
    _, _, loss, want, x0, _ = case
    v = np.random.default_rng(3).standard_normal(x0.shape)
    _, tangent = F.jvp(loss, (T(x0),), (T(v),))
    np.testing.assert_allclose(tangent.item(), (want(x0) * v).sum(), atol=1e-6)


def test_vmap(case):
    g, ref, loss, want, x0, w = case
    xs = np.stack([x0, x0 + 0.5])
    np.testing.assert_allclose(F.vmap(g)(T(xs)).numpy(), np.stack([ref(x0), ref(x0 + 0.5)]))
    expected = np.stack([want(x0), want(x0 + 0.5)])
    np.testing.assert_allclose(F.vmap(F.grad(loss))(T(xs)).numpy(), expected, atol=1e-6)
    # eager backward through a vmapped write (the batched in-place path records)
    x = T(xs, requires_grad=True)
    (F.vmap(g)(x) * T(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-6)


def test_issue_reproducer():
    """The fuzz's case: eager backward and func.grad agreed with each other but not with
    finite differences of the no-grad forward (NumPy's sequential mask write)."""
    x0 = np.random.default_rng(1).standard_normal((2, 3))
    mask = np.array([[False, False, True], [False, True, True]])
    w = np.random.default_rng(2).standard_normal((2, 3))

    def f(x):
        y = x * 1
        y[T(mask)] = y.select(0, 0)  # writes y[0, 2], which the value's element 2 reads
        return (y * T(w)).sum()

    def ref(a):
        y = a.copy()
        y[mask] = a[0].copy()
        return float((y * w).sum())

    want = _fd(ref, x0)
    np.testing.assert_allclose(f(T(x0)).item(), ref(x0))
    x = T(x0, requires_grad=True)
    f(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), want, atol=1e-6)
    np.testing.assert_allclose(F.grad(f)(T(x0)).numpy(), want, atol=1e-6)
    # NumPy's own write differs here (it is what the no-grad path used to compute)
    y = x0.copy()
    y[mask] = y[0]
    assert not np.allclose(y, _copy_first(x0, mask))


def _copy_first(x0, mask):
    y = x0.copy()
    y[mask] = x0[0].copy()
    return y


def test_value_not_sharing_memory_is_written_as_given():
    y = dualad.zeros(2, 3)
    v = T(np.array([1.0, 2.0, 3.0]))
    y[0] = v
    v[0] = 9.0  # the write copied v's values: later changes to v do not reach y
    np.testing.assert_array_equal(y.numpy(), [[1, 2, 3], [0, 0, 0]])


def test_view_destination_mask_write():
    """``y[1:][mask] = y[:, 1]``: the destination is a view, the value a view of its base that
    reads y[1, 1] after the mask writes it; values and derivatives (eager, jacrev, jacfwd,
    a dual level) are the copy-first function's."""
    import dualad.fwd as fwad

    mask = np.array([[False, True, True], [True, False, False]])
    x0 = np.random.default_rng(1).standard_normal((3, 3))
    v0 = np.random.default_rng(4).standard_normal((3, 3))

    def g(x):
        y = x * 1
        y[1:][T(mask)] = y[:, 1]
        return y

    def ref(a):
        y = a.copy()
        y[1:][mask] = a[:, 1].copy()
        return y

    jac = np.stack([_fd(lambda a, k=k: ref(a).ravel()[k], x0).ravel() for k in range(9)])
    np.testing.assert_allclose(g(T(x0)).numpy(), ref(x0))
    np.testing.assert_allclose(F.jacrev(g)(T(x0)).numpy().reshape(9, 9), jac, atol=1e-6)
    np.testing.assert_allclose(F.jacfwd(g)(T(x0)).numpy().reshape(9, 9), jac, atol=1e-6)
    with fwad.dual_level():
        primal, tangent = fwad.unpack_dual(g(fwad.make_dual(T(x0), T(v0))))
        np.testing.assert_allclose(primal.numpy(), ref(x0))
        np.testing.assert_allclose(tangent.numpy().ravel(), jac @ v0.ravel(), atol=1e-6)
    x = T(x0, requires_grad=True)
    g(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy().ravel(), jac.sum(0), atol=1e-6)


def test_vmap_batched_mask_write_keeps_selection_order():
    """Under vmap a batched mask write ``y[y > 0] = v`` is a ``where``; that is only the same
    write when every selected element gets the same value. A value with one entry per selected
    element went in by column instead of in selection order (silently other values than the
    eager write): it now raises vmap's batched-mask error."""
    x = np.array([[-1.0, -1, 1], [1, 1, -1], [-1, -1, -1]])
    v = np.array([10.0, 20, 30])

    def h(x, v):
        y = x * 1
        y[y > 0] = v
        return y

    np.testing.assert_array_equal(h(T(x), T(v)).numpy()[:2], [[-1, -1, 10], [20, 30, -1]])
    with pytest.raises(RuntimeError, match="batched boolean mask"):
        F.vmap(h)(T(x[None]), T(v[None]))

    def one_value(x, v):
        y = x * 1
        y[y > 0] = v[:1]  # one value for every selected element: where is the same write
        return y

    np.testing.assert_array_equal(
        F.vmap(one_value)(T(x[None]), T(v[None])).numpy()[0], one_value(T(x), T(v)).numpy()
    )

    def row_value(x):
        y = x * 1
        y[y[:, 2] > 0] = y[2]  # a row mask and a row value (a view of y) for each row
        return y

    np.testing.assert_array_equal(F.vmap(row_value)(T(x[None])).numpy()[0], row_value(T(x)).numpy())
