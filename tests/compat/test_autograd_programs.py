"""Programs written in HIPS autograd's style, run unchanged but for the two imports
(``import autograd.numpy as np`` -> ``import dualad.numpy as np``, ``from autograd import ...``
-> ``from dualad.compat.autograd import ...``), each checked against closed forms, NumPy/SciPy
or finite differences. Plain NumPy (``onp``) computes the references only."""

from __future__ import annotations

import numpy as onp
import pytest
import scipy.optimize
import scipy.special

import dualad.numpy as np
from dualad.compat.autograd import (
    checkpoint,
    elementwise_grad,
    grad,
    hessian,
    hessian_vector_product,
    holomorphic_grad,
    jacobian,
    value_and_grad,
)
from dualad.compat.autograd.test_util import check_grads

npr = np.random


def _finite_difference(f, x, eps=1e-6):
    """Central differences of a scalar f of a real array (plain NumPy, for the references)."""
    x = onp.asarray(x, dtype=float)
    out = onp.zeros_like(x)
    for i in range(x.size):
        step = onp.zeros_like(x)
        step.flat[i] = eps
        out.flat[i] = (float(f(x + step)) - float(f(x - step))) / (2 * eps)
    return out


# 1. logistic regression trained by gradient descent and by scipy.optimize (autograd's tutorial)
def test_logistic_regression():
    def sigmoid(x):
        return 0.5 * (np.tanh(x / 2.0) + 1.0)

    def logistic_predictions(weights, inputs):
        return sigmoid(np.dot(inputs, weights))

    def training_loss(weights, inputs, targets):
        preds = logistic_predictions(weights, inputs)
        label_probabilities = preds * targets + (1 - preds) * (1 - targets)
        return -np.sum(np.log(label_probabilities))

    rs = npr.RandomState(0)
    inputs = rs.randn(40, 3)
    targets = (inputs @ onp.array([1.5, -2.0, 0.5]) + 0.3 * rs.randn(40) > 0).astype(float)
    training_gradient_fun = grad(training_loss)
    weights = onp.zeros(3)
    losses = []
    for _ in range(100):
        losses.append(training_loss(weights, inputs, targets))
        g = training_gradient_fun(weights, inputs, targets)
        assert type(g) is onp.ndarray
        p = 1 / (1 + onp.exp(-inputs @ weights))
        onp.testing.assert_allclose(g, inputs.T @ (p - targets), rtol=1e-10, atol=1e-12)
        weights -= 0.05 * g
    assert losses[-1] < 0.5 * losses[0]
    result = scipy.optimize.minimize(
        value_and_grad(training_loss), onp.zeros(3), args=(inputs, targets), jac=True
    )
    assert result.success
    assert onp.abs(grad(training_loss)(result.x, inputs, targets)).max() < 1e-4


# 2. derivatives of tanh up to the fourth order, on a grid (autograd's tanh example)
def test_tanh_derivatives_for_plotting():
    def tanh(x):
        y = np.exp(-2.0 * x)
        return (1.0 - y) / (1.0 + y)

    x = np.linspace(-7, 7, 200)
    d1 = elementwise_grad(tanh)
    d2 = elementwise_grad(d1)
    d3 = elementwise_grad(d2)
    d4 = elementwise_grad(d3)
    t = onp.tanh(onp.linspace(-7, 7, 200))
    onp.testing.assert_allclose(tanh(x), t, atol=1e-12)
    onp.testing.assert_allclose(d1(x), 1 - t**2, atol=1e-12)
    onp.testing.assert_allclose(d2(x), -2 * t * (1 - t**2), atol=1e-12)
    onp.testing.assert_allclose(d3(x), (1 - t**2) * (6 * t**2 - 2), atol=1e-11)
    onp.testing.assert_allclose(d4(x), (1 - t**2) * (16 * t - 24 * t**3), atol=1e-10)
    # (np.linspace of dualad.numpy makes a Tensor, so the results are Tensors: plotting code
    # converts them as it converts arrays)
    assert all(type(onp.asarray(d(x))) is onp.ndarray for d in (d1, d2, d3, d4))
    onp.testing.assert_allclose(d1(onp.linspace(-7, 7, 200)), 1 - t**2, atol=1e-12)
    assert type(d4(onp.linspace(-7, 7, 200))) is onp.ndarray


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_hessian(x):
    """The closed form (SciPy's rosen_hess)."""
    return scipy.optimize.rosen_hess(x)


# 3. the Hessian of Rosenbrock's function
def test_rosenbrock_hessian():
    x = onp.array([-1.2, 1.0, 0.5, 2.0])
    H = hessian(rosenbrock)(x)
    assert H.shape == (4, 4) and type(H) is onp.ndarray
    onp.testing.assert_allclose(H, rosenbrock_hessian(x), rtol=1e-12)
    onp.testing.assert_allclose(grad(rosenbrock)(x), scipy.optimize.rosen_der(x), rtol=1e-12)


# 4. Newton-CG with exact Hessian-vector products
def test_newton_cg_with_hessian_vector_products():
    x0 = onp.array([-1.2, 1.0, -0.5, 0.8])
    hvp = hessian_vector_product(rosenbrock)
    p = onp.array([1.0, -1.0, 2.0, 0.5])
    onp.testing.assert_allclose(hvp(x0, p), rosenbrock_hessian(x0) @ p, rtol=1e-12)
    result = scipy.optimize.minimize(
        rosenbrock, x0, method="Newton-CG", jac=grad(rosenbrock), hessp=hvp, tol=1e-10
    )
    assert result.success
    onp.testing.assert_allclose(result.x, onp.ones(4), atol=1e-6)


# 5. a Gaussian-process marginal log-likelihood (Cholesky and triangular solves by hand)
def test_gaussian_process_log_likelihood():
    def cholesky(K):
        n = K.shape[0]
        L = [[0.0] * n for _ in range(n)]
        for i in range(n):
            for j in range(i + 1):
                s = sum(L[i][k] * L[j][k] for k in range(j))
                L[i][j] = np.sqrt(K[i, i] - s) if i == j else (K[i, j] - s) / L[j][j]
        return L

    def forward_substitution(L, y):
        z = []
        for i in range(len(L)):
            z.append((y[i] - sum(L[i][k] * z[k] for k in range(i))) / L[i][i])
        return np.array(z)

    def log_marginal_likelihood(params, x, y):
        log_length, log_noise = params[0], params[1]
        sq_dists = (x[:, None] - x[None, :]) ** 2
        K = np.exp(-0.5 * sq_dists / np.exp(2 * log_length)) + np.exp(2 * log_noise) * np.eye(
            len(x)
        )
        L = cholesky(K)
        alpha = forward_substitution(L, y)  # L alpha = y, so y^T K^-1 y = |alpha|^2
        log_det = 2 * np.sum(np.log(np.array([L[i][i] for i in range(len(x))])))
        return -0.5 * np.dot(alpha, alpha) - 0.5 * log_det - 0.5 * len(x) * np.log(2 * np.pi)

    x = onp.linspace(0, 3, 6)
    y = onp.sin(x)
    params = onp.array([-0.2, -1.0])

    def reference(params):
        K = onp.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / onp.exp(2 * params[0]))
        K = K + onp.exp(2 * params[1]) * onp.eye(len(x))
        return (
            -0.5 * y @ onp.linalg.solve(K, y)
            - 0.5 * onp.linalg.slogdet(K)[1]
            - 3 * onp.log(2 * onp.pi)
        )

    onp.testing.assert_allclose(log_marginal_likelihood(params, x, y), reference(params))
    onp.testing.assert_allclose(
        grad(log_marginal_likelihood)(params, x, y),
        _finite_difference(reference, params),
        rtol=1e-6,
    )


# 6. a recurrent network over a sequence (autograd's rnn example, shortened)
def test_rnn_over_a_sequence():
    def sigmoid(x):
        return 0.5 * (np.tanh(x) + 1.0)

    def update_rnn(input, hiddens, params):
        return np.tanh(np.dot(np.concatenate((input, hiddens), axis=1), params["W"]) + params["b"])

    def rnn_loss(params, inputs, targets):
        hiddens = np.zeros((inputs.shape[1], params["W"].shape[1]))
        loss = 0.0
        for t in range(inputs.shape[0]):
            hiddens = update_rnn(inputs[t], hiddens, params)
            output = sigmoid(np.dot(hiddens, params["out"]))
            loss = loss + np.sum((output - targets[t]) ** 2)
        return loss / inputs.shape[0]

    rs = npr.RandomState(1)
    params = {"W": 0.5 * rs.randn(3 + 4, 4), "b": 0.1 * rs.randn(4), "out": rs.randn(4, 2)}
    inputs, targets = rs.randn(5, 2, 3), rs.rand(5, 2, 2)
    g = grad(rnn_loss)(params, inputs, targets)
    assert set(g) == {"W", "b", "out"} and all(type(v) is onp.ndarray for v in g.values())
    for name in ("W", "b", "out"):

        def as_function_of(value, name=name):
            return rnn_loss({**params, name: value}, inputs, targets)

        onp.testing.assert_allclose(
            g[name], _finite_difference(as_function_of, params[name]), rtol=1e-5, atol=1e-8
        )
    check_grads(rnn_loss, modes=["rev"], order=1)(params, inputs, targets)


# 7. a mixture-density log-likelihood with a hand-written logsumexp
def test_mixture_density_log_likelihood():
    def logsumexp(x, axis):
        max_x = np.max(x, axis=axis, keepdims=True)
        return np.squeeze(max_x, axis=axis) + np.log(np.sum(np.exp(x - max_x), axis=axis))

    def log_likelihood(params, data):
        means, log_stds, logits = params
        log_weights = logits - logsumexp(logits, axis=0)
        z = (data[:, None] - means[None, :]) / np.exp(log_stds)
        log_probs = -0.5 * z**2 - log_stds - 0.5 * np.log(2 * np.pi) + log_weights
        return np.sum(logsumexp(log_probs, axis=1))

    rs = npr.RandomState(2)
    data = onp.concatenate([rs.randn(20) - 2.0, 0.5 * rs.randn(30) + 1.0])
    params = (onp.array([-1.0, 0.5]), onp.array([0.1, -0.3]), onp.array([0.2, -0.1]))
    means, log_stds, logits = params
    weights = onp.exp(logits) / onp.exp(logits).sum()
    z = (data[:, None] - means) / onp.exp(log_stds)
    log_probs = -0.5 * z**2 - log_stds - 0.5 * onp.log(2 * onp.pi) + onp.log(weights)
    reference = scipy.special.logsumexp(log_probs, axis=1).sum()
    onp.testing.assert_allclose(log_likelihood(params, data), reference, rtol=1e-12)
    # d/dmeans: sum over data of responsibility * z / std
    resp = onp.exp(log_probs - scipy.special.logsumexp(log_probs, axis=1, keepdims=True))
    g = grad(log_likelihood)(params, data)
    assert isinstance(g, tuple) and len(g) == 3
    onp.testing.assert_allclose(g[0], (resp * z / onp.exp(log_stds)).sum(0), rtol=1e-10)
    check_grads(log_likelihood, modes=["fwd", "rev"], order=2)(params, data)


# 8. Euler integration of an ODE and a fixed-point iteration
def test_euler_integration_and_fixed_point():
    def euler_decay(k, x0, dt=0.01, steps=100):
        x = x0
        for _ in range(steps):
            x = x + dt * (-k * x)
        return x

    k, x0 = 1.3, 2.0
    onp.testing.assert_allclose(euler_decay(k, x0), x0 * (1 - k * 0.01) ** 100)
    onp.testing.assert_allclose(
        grad(euler_decay)(k, x0), x0 * 100 * (1 - k * 0.01) ** 99 * (-0.01), rtol=1e-12
    )
    onp.testing.assert_allclose(grad(euler_decay, 1)(k, x0), (1 - k * 0.01) ** 100)

    def fixed_point(a, iterations=200):
        x = 0.0
        for _ in range(iterations):
            x = a * np.cos(x)
        return x

    a = 0.5
    x_star = fixed_point(a)
    onp.testing.assert_allclose(x_star, a * onp.cos(x_star), atol=1e-14)
    # implicit function theorem: dx*/da = cos(x*) / (1 + a sin(x*))
    expected = onp.cos(x_star) / (1 + a * onp.sin(x_star))
    onp.testing.assert_allclose(grad(fixed_point)(a), expected, rtol=1e-10)


# 9. checkpointed layers of a deep network give the same gradients
def test_checkpointed_network():
    def layer(W, h):
        return np.tanh(np.dot(h, W))

    checkpointed_layer = checkpoint(layer)

    def network(weights, inputs, block=layer):
        h = inputs
        for W in weights:
            h = block(W, h)
        return np.sum(h**2)

    rs = npr.RandomState(3)
    weights = [rs.randn(4, 4) * 0.5 for _ in range(6)]
    inputs = rs.randn(3, 4)
    plain = grad(network)(weights, inputs)
    saved = grad(network)(weights, inputs, checkpointed_layer)
    assert isinstance(saved, list) and len(saved) == 6
    for a, b in zip(plain, saved):
        onp.testing.assert_allclose(a, b, rtol=1e-12)
    onp.testing.assert_allclose(
        network(weights, inputs, checkpointed_layer), network(weights, inputs)
    )


# 10. check_grads on assorted functions
@pytest.mark.parametrize(
    "fun, x",
    [
        (np.sin, onp.array([0.3, -1.2, 2.0])),
        (lambda x: np.exp(x) * np.cos(x), onp.array([0.3, -1.2])),
        (lambda x: np.sum(np.tanh(np.dot(onp.arange(6.0).reshape(2, 3), x))), onp.ones(3)),
        (lambda x: np.linalg.norm(x), onp.array([3.0, -4.0, 1.0])),
        (lambda x: np.einsum("ij,jk->ik", x, x.T), onp.arange(6.0).reshape(2, 3) / 4),
        (lambda x: np.mean(x**2, axis=0) / np.std(x), onp.array([[1.0, 2.0], [3.0, 5.0]])),
        (lambda x: np.prod(np.cumsum(x)), onp.array([0.5, 1.5, 2.0])),
    ],
)
def test_check_grads_on_functions(fun, x):
    check_grads(fun, modes=["fwd", "rev"], order=2)(x)


# 11. holomorphic_grad of a complex polynomial
def test_holomorphic_grad_of_a_polynomial():
    coefficients = [1.0, -2.0 + 1.0j, 0.0, 3.0]  # z^3 + (-2 + i) z^2 + 3

    def polynomial(z):
        result = 0.0
        for c in coefficients:
            result = result * z + c
        return result

    z = 0.7 - 1.1j
    expected = 3 * z**2 + 2 * (-2 + 1j) * z
    onp.testing.assert_allclose(holomorphic_grad(polynomial)(z), expected)
    zs = onp.array([0.5 + 0.5j, -1.0 + 2.0j])
    # autograd's convention: the gradient of the real part u is du/dx - i du/dy, which for a
    # holomorphic polynomial is its derivative
    onp.testing.assert_allclose(
        elementwise_grad(lambda z: np.real(polynomial(z)))(zs), 3 * zs**2 + 2 * (-2 + 1j) * zs
    )


# 12. the Jacobian of a softmax
def test_softmax_jacobian():
    def softmax(x):
        e = np.exp(x - np.max(x))
        return e / np.sum(e)

    x = onp.array([0.5, -1.0, 2.0, 0.0])
    s = onp.exp(x - x.max()) / onp.exp(x - x.max()).sum()
    onp.testing.assert_allclose(jacobian(softmax)(x), onp.diag(s) - onp.outer(s, s), atol=1e-15)
