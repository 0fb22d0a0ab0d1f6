"""jacrev, jacfwd, hessian, hvp, linearize: values against analytic formulas and finite
differences, jacrev == jacfwd, and compositions with vmap."""

import numpy as np
import pytest

import dualad
from dualad.func import grad, hessian, hvp, jacfwd, jacrev, jvp, linearize, vmap


def t(a):
    return dualad.tensor(np.asarray(a, dtype=np.float64))


def fd_jacobian(f, x: np.ndarray, eps=1e-6) -> np.ndarray:
    """Central FD Jacobian of an array -> array NumPy function, shape (*out, *in)."""
    out_shape = np.shape(f(x))
    cols = []
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    jac = np.stack(cols, axis=-1)
    return jac.reshape(*out_shape, *x.shape)


def numpy_fn(f):
    return lambda a: f(t(a)).numpy()


OPS = [
    ("sin", dualad.sin, (3,)),
    ("exp_times", lambda x: dualad.exp(x) * x[0], (4,)),
    ("matmul", lambda x: x @ x.T, (2, 3)),
    ("softmax", lambda x: dualad.exp(x) / dualad.exp(x).sum(), (4,)),
    ("tanh_sum_dim", lambda x: dualad.tanh(x).sum(dim=0), (3, 2)),
    ("to_scalar", lambda x: (x**2).sum(), (3,)),
]


@pytest.mark.parametrize("name, f, shape", OPS, ids=[o[0] for o in OPS])
def test_jacrev_equals_jacfwd_and_fd(name, f, shape, rng):
    x = rng.uniform(-1, 1, size=shape)
    jr = jacrev(f)(t(x)).numpy()
    jf = jacfwd(f)(t(x)).numpy()
    fd = fd_jacobian(numpy_fn(f), x)
    assert jr.shape == fd.shape == jf.shape
    np.testing.assert_allclose(jr, jf, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jr, fd, rtol=1e-6, atol=1e-8)


def test_jacobian_argnums_pytrees_and_has_aux(rng):
    a, b = rng.normal(size=3), rng.normal(size=2)

    def f(a, b):
        return {"outer": a[:, None] * b[None, :], "dot": (a**2).sum()}

    for jac in (jacrev, jacfwd):
        ja, jb = jac(f, argnums=(0, 1))(t(a), t(b))["outer"]
        assert ja.shape == (3, 2, 3) and jb.shape == (3, 2, 2)
        np.testing.assert_allclose(ja.numpy(), np.einsum("ik,j->ijk", np.eye(3), b))
        np.testing.assert_allclose(jb.numpy(), np.einsum("jk,i->ijk", np.eye(2), a))
        jdot = jac(f)(t(a), t(b))["dot"]
        np.testing.assert_allclose(jdot.numpy(), 2 * a)
        j, aux = jac(lambda x: (dualad.sin(x), x.sum()), has_aux=True)(t(a))
        np.testing.assert_allclose(j.numpy(), np.diag(np.cos(a)))
        assert aux.item() == pytest.approx(a.sum())
    jr = jacrev(dualad.sin, chunk_size=2)(t(a))
    np.testing.assert_allclose(jr.numpy(), np.diag(np.cos(a)))


def test_hessian_symmetric_and_equals_fd_jacobian_of_grad(rng):
    x = rng.uniform(-1, 1, size=4)

    def f(x):
        return (dualad.sin(x) * x[0]).sum() + (x[1:] * x[:-1]).sum() ** 2

    h = hessian(f)(t(x)).numpy()
    assert h.shape == (4, 4)
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-12)
    fd = fd_jacobian(lambda a: grad(f)(t(a)).numpy(), x)
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-7)
    # also jacrev of jacrev and jacfwd of jacfwd
    np.testing.assert_allclose(jacrev(jacrev(f))(t(x)).numpy(), h, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jacfwd(jacfwd(f))(t(x)).numpy(), h, rtol=1e-12, atol=1e-12)


def test_hvp_and_linearize(rng):
    x, v = rng.normal(size=3), rng.normal(size=3)
    y, w = rng.normal(size=3), rng.normal(size=3)

    def f(x, y):
        return (x**2 * y).sum() + dualad.sin(x).sum()

    value, (hx, hy) = hvp(f, (t(x), t(y)), (t(v), t(w)))
    assert value.item() == pytest.approx((x**2 * y).sum() + np.sin(x).sum())
    # H = [[diag(2y - sin x), diag(2x)], [diag(2x), 0]]
    np.testing.assert_allclose(hx.numpy(), (2 * y - np.sin(x)) * v + 2 * x * w, rtol=1e-12)
    np.testing.assert_allclose(hy.numpy(), 2 * x * v, rtol=1e-12)
    out, jvp_fn = linearize(dualad.sin, t(x))
    np.testing.assert_allclose(out.numpy(), np.sin(x))
    np.testing.assert_allclose(jvp_fn(t(v)).numpy(), np.cos(x) * v)
    np.testing.assert_allclose(jvp_fn(t(w)).numpy(), np.cos(x) * w)


def test_hvp_of_single_tensors(rng):
    # a bare Tensor primal and tangent give a bare Tensor product (torch.autograd.functional form)
    x, v = rng.normal(size=4), rng.normal(size=4)
    value, product = hvp(lambda a: (dualad.exp(a) * a).sum(), t(x), t(v))
    assert isinstance(product, dualad.Tensor)
    assert value.item() == pytest.approx((np.exp(x) * x).sum())
    np.testing.assert_allclose(product.numpy(), np.exp(x) * (x + 2) * v, rtol=1e-12)


def test_jacobians_under_vmap_and_of_vmap(rng):
    X = rng.uniform(-1, 1, size=(5, 3))
    per = vmap(jacrev(dualad.exp))(t(X)).numpy()
    np.testing.assert_allclose(per, np.stack([np.diag(np.exp(r)) for r in X]))
    perf = vmap(jacfwd(dualad.tanh))(t(X)).numpy()
    np.testing.assert_allclose(perf, np.stack([np.diag(1 - np.tanh(r) ** 2) for r in X]))
    full = jacrev(vmap(dualad.sin))(t(X)).numpy()
    np.testing.assert_allclose(full, np.diag(np.cos(X).ravel()).reshape(5, 3, 5, 3))
    # per-example Hessians
    f = lambda x: (x**3).sum()
    hs = vmap(hessian(f))(t(X)).numpy()
    np.testing.assert_allclose(hs, np.stack([np.diag(6 * r) for r in X]))
    # jvp of jacrev
    v = rng.normal(size=3)
    _, dj = jvp(jacrev(dualad.sin), (t(X[0]),), (t(v),))
    np.testing.assert_allclose(dj.numpy(), np.diag(-np.sin(X[0]) * v))


def test_linearize_runs_the_function_once_and_matches_jvp(rng):
    calls = []

    def f(x, pair):
        calls.append(1)
        a, b = pair
        return {"u": dualad.sin(x) * a, "v": (x @ b).exp(), "n": (x > 0).sum()}

    x, a, b = rng.normal(size=3), rng.normal(size=3), rng.normal(size=(3, 2))
    primals = (t(x), (t(a), t(b)))
    out, jvp_fn = linearize(f, *primals)
    assert len(calls) == 1
    reference = f(*primals)
    for key in ("u", "v"):
        np.testing.assert_allclose(out[key].numpy(), reference[key].numpy())
    for _ in range(3):
        tangents = (t(rng.normal(size=3)), (t(rng.normal(size=3)), t(rng.normal(size=(3, 2)))))
        got = jvp_fn(*tangents)
        expected = jvp(f, primals, tangents)[1]
        np.testing.assert_allclose(got["u"].numpy(), expected["u"].numpy(), rtol=1e-12)
        np.testing.assert_allclose(got["v"].numpy(), expected["v"].numpy(), rtol=1e-12)
        assert got["n"].numpy() == 0  # an integer output has a zero tangent
    assert len(calls) == 5  # (the three jvp references)


def test_linearize_under_vmap_gives_the_jacobian_and_handles_complex(rng):
    calls = []

    def f(x):
        calls.append(1)
        return dualad.tanh(x) * x.sum()

    x = rng.normal(size=4)
    _, jvp_fn = linearize(f, t(x))
    jac = vmap(jvp_fn)(dualad.eye(4)).numpy().T  # columns J e_i
    np.testing.assert_allclose(jac, jacfwd(f)(t(x)).numpy(), rtol=1e-12)
    assert len(calls) == 2  # linearize once, jacfwd once
    for g in (lambda z: z**2 * dualad.sin(z), lambda z: z * z.conj() + z.real):
        z = rng.normal(size=3) + 1j * rng.normal(size=3)
        dz = rng.normal(size=3) + 1j * rng.normal(size=3)
        _, jvp_fn = linearize(g, dualad.tensor(z))
        expected = jvp(g, (dualad.tensor(z),), (dualad.tensor(dz),))[1]
        np.testing.assert_allclose(jvp_fn(dualad.tensor(dz)).numpy(), expected.numpy(), rtol=1e-12)


def test_linearize_tangent_errors():
    _, jvp_fn = linearize(dualad.sin, t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"tangent 0 has shape \(3,\) but its primal has shape"):
        jvp_fn(t([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="structure of the primals"):
        jvp_fn(t([1.0, 2.0]), t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="tangent 0 must be a Tensor"):
        jvp_fn("1.0")


def test_jacrev_of_a_one_element_output_is_one_backward_pass(rng):
    # (no vmap level: a scalar loss, or one element spread over leaves, some of them empty)
    x = rng.normal(size=(2, 3))

    def f(v):
        return {
            "s": (v**2).sum().reshape(1, 1),
            "empty": v[:0].sum(1),
            "i": (v > 0).sum()[None][:0],
        }

    jac = jacrev(f)(t(x))
    np.testing.assert_allclose(jac["s"].numpy(), (2 * x).reshape(1, 1, 2, 3))
    assert jac["empty"].shape == (0, 2, 3)
    assert jac["i"].shape == (0, 2, 3)
    g, aux = jacrev(lambda v: ((v**3).sum(), v.mean()), has_aux=True)(t(x))
    np.testing.assert_allclose(g.numpy(), 3 * x**2)
    np.testing.assert_allclose(aux.numpy(), x.mean())
