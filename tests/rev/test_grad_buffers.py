"""Gradients that reach a node along several edges: the engine's sums (rev/engine.py).

Without ``create_graph`` the engine adds further gradients in place into a sum it made itself
and lets a leaf keep such a sum as its first ``.grad``. These tests pin what must hold whatever
the engine does internally: the values, no aliasing of anything the user or another gradient
holds, and no change to tensors handed to hooks or returned by ``grad()``.
"""

import numpy as np

import dualad
from dualad.autograd import grad


def _chain(x, w):
    """x used five times, w twice; the add's cotangent goes to both of its inputs unchanged."""
    h = x * w
    h = dualad.sin(h) + x
    h = (h + x) * x
    return (h / x + x * w).sum()


def _chain_numpy_grads(x, w, eps=1e-6):
    def f(xv, wv):
        h = xv * wv
        h = np.sin(h) + xv
        h = (h + xv) * xv
        return float((h / xv + xv * wv).sum())

    gx, gw = np.zeros_like(x), np.zeros_like(w)
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        gx.flat[i] = (f(x + d, w) - f(x - d, w)) / (2 * eps)
        gw.flat[i] = (f(x, w + d) - f(x, w - d)) / (2 * eps)
    return gx, gw


def test_leaf_used_many_times_gets_the_summed_gradient():
    rng = np.random.default_rng(0)
    x0, w0 = rng.uniform(0.5, 1.5, 4), rng.uniform(0.5, 1.5, 4)
    x = dualad.tensor(x0, requires_grad=True)
    w = dualad.tensor(w0, requires_grad=True)
    _chain(x, w).backward()
    gx, gw = _chain_numpy_grads(x0, w0)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-6)
    # a second backward accumulates into .grad (in place, as before)
    first = x.grad
    _chain(x, w).backward()
    assert x.grad is first
    np.testing.assert_allclose(x.grad.numpy(), 2 * gx, rtol=1e-6)


def test_a_gradient_passed_on_unchanged_to_two_inputs_is_not_modified():
    # y = a + a: add's VJP hands one cotangent object to both edges; a hook on a sees the sum
    # and every tensor a hook was given keeps its value after the pass
    a = dualad.tensor([1.0, 2.0], requires_grad=True)
    b = dualad.tensor([3.0, 4.0], requires_grad=True)
    seen = []
    m = a * 1.0
    m.register_hook(lambda g: seen.append((g, g.detach().numpy().copy())))
    y = (m + m) * b + m
    y.register_hook(lambda g: seen.append((g, g.detach().numpy().copy())))
    y.sum().backward()
    for g, snapshot in seen:
        np.testing.assert_array_equal(g.detach().numpy(), snapshot)
    np.testing.assert_allclose(a.grad.numpy(), 2 * b.detach().numpy() + 1)
    np.testing.assert_allclose(b.grad.numpy(), 2 * a.detach().numpy())


def test_first_grad_aliases_nothing_the_user_holds():
    x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    user = dualad.tensor([10.0, 20.0, 30.0])
    x.register_hook(lambda g: user)  # the hook's tensor becomes the incoming gradient
    (x * 2 + x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [10.0, 20.0, 30.0])
    assert x.grad is not user
    x.grad.add_(1.0)
    np.testing.assert_array_equal(user.numpy(), [10.0, 20.0, 30.0])


def test_a_sum_a_hook_kept_is_not_changed_by_later_accumulation():
    # the leaf's gradient is a sum the engine made; hooks that keep it must not see .grad's
    # later in-place accumulation
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    kept = []
    x.register_hook(lambda g: kept.append(g))
    y = dualad.tensor([1.0, 2.0], requires_grad=True)
    (y * 1.0).sum().backward()  # y's AccumulateGrad exists while y.grad's graph is alive
    node = (y * 1.0).grad_fn.next_functions[0][0]
    kept_by_prehook = []
    node.register_prehook(lambda grads: kept_by_prehook.append(grads[0]))
    y.grad = None
    for _ in range(2):
        (x * 2 + x * 3).sum().backward()
        (y * 2 + y * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [10.0, 10.0])
    np.testing.assert_array_equal(y.grad.numpy(), [10.0, 10.0])
    np.testing.assert_array_equal(kept[0].numpy(), [5.0, 5.0])
    np.testing.assert_array_equal(kept_by_prehook[0].numpy(), [5.0, 5.0])


def test_two_leaves_never_share_a_grad():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    y = dualad.tensor([1.0, 2.0], requires_grad=True)
    s = x + y  # the same cotangent reaches both leaves
    (s + s).sum().backward()
    assert x.grad is not y.grad
    x.grad.add_(1.0)
    np.testing.assert_array_equal(y.grad.numpy(), [2.0, 2.0])


def test_grad_results_are_not_changed_by_the_rest_of_the_pass():
    x = dualad.tensor([0.5, 1.5], requires_grad=True)
    h = x * x
    out = (h * 3 + h * 4 + x).sum()
    gh, gx = grad(out, (h, x))
    np.testing.assert_array_equal(gh.numpy(), [7.0, 7.0])
    np.testing.assert_allclose(gx.detach().numpy(), 14 * x.detach().numpy() + 1)


def test_create_graph_sums_are_differentiable():
    x = dualad.tensor([0.5, 1.5], requires_grad=True)
    y = (x * x * x + dualad.sin(x) * x).sum()
    (g,) = grad(y, x, create_graph=True)
    xv = x.detach().numpy()
    np.testing.assert_allclose(g.detach().numpy(), 3 * xv**2 + np.cos(xv) * xv + np.sin(xv))
    (gg,) = grad(g.sum(), x)
    np.testing.assert_allclose(gg.detach().numpy(), 6 * xv - np.sin(xv) * xv + 2 * np.cos(xv))


def test_broadcast_and_dtype_mixes_still_sum_correctly():
    # a gradient of another shape (reduced by the engine first) or dtype is added out of place
    x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = dualad.tensor([1.0, 1.0], requires_grad=True)
    y = (x * b + x + b * 2.0 + b).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 2), 2.0))
    np.testing.assert_allclose(b.grad.numpy(), x.detach().numpy().sum(0) + 2 * 3.0)
