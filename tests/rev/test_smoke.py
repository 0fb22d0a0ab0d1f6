import numpy as np

import dualad


def test_backward_of_product_matches_analytic():
    x0 = np.array([0.5, 1.0, 2.0])
    x = dualad.tensor(x0, requires_grad=True)
    (dualad.sin(x) * x**2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x0) * x0**2 + 2 * x0 * np.sin(x0))


def test_second_derivative_with_create_graph():
    x = dualad.tensor([0.5, 1.0, 2.0], requires_grad=True)
    (g,) = dualad.autograd.grad((x**3).sum(), x, create_graph=True)
    (h,) = dualad.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x.detach().numpy())
