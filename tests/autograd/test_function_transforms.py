"""Custom ``autograd.Function`` under every transform: func.grad/vjp levels, vmap (the ``vmap``
staticmethod and ``generate_vmap_rule = True``), jacrev, jacfwd, hessian, hvp, per-example
gradients, grad of vmap, and tangents derived from a backward when there is no jvp.

Values are checked against analytic derivatives and Python loops.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import autograd, fwd
from dualad.autograd import Function, once_differentiable
from dualad.func import grad, hessian, hvp, jacfwd, jacrev, jvp, vjp

F64 = dualad.float64


def assert_equal(actual, expected, rtol=1e-10, atol=1e-10):
    a = actual.detach().numpy() if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    e = expected.detach().numpy() if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def randn(*shape, seed=0):
    return dualad.tensor(np.random.default_rng(seed).standard_normal(shape))


def _cube_class(name: str, jvp: bool, rule: str | None):
    """x ** 3 as a Function: backward in dualad ops, optionally a jvp, and a vmap rule
    (``"generate"``, ``"staticmethod"`` or None)."""

    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x**3

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x**2

    def jvp_rule(ctx, t):
        (x,) = ctx.saved_tensors
        return t * 3 * x**2

    def vmap_rule(info, in_dims, x):
        return cls.apply(x), in_dims[0]

    body = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    if jvp:
        body["jvp"] = staticmethod(jvp_rule)
    if rule == "generate":
        body["generate_vmap_rule"] = True
    elif rule == "staticmethod":
        body["vmap"] = staticmethod(vmap_rule)
    cls = type(name, (Function,), body)
    return cls


Cube = _cube_class("Cube", jvp=False, rule=None)  # reverse mode only, no vmap rule
CubeGen = _cube_class("CubeGen", jvp=True, rule="generate")
CubeGenNoJvp = _cube_class("CubeGenNoJvp", jvp=False, rule="generate")
CubeRule = _cube_class("CubeRule", jvp=True, rule="staticmethod")


class Exp(Function):
    """exp, saving its OUTPUT (unpacked at every level as that level's output)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        ctx.save_for_forward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out

    @staticmethod
    def jvp(ctx, t):
        (out,) = ctx.saved_tensors
        return t * out


class Linear(Function):
    """x @ W.T + b in the setup_context style, with a vmap staticmethod that folds the batch."""

    @staticmethod
    def forward(x, W, b):
        return x @ W.T + b

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, W, _b = inputs
        ctx.save_for_backward(x, W)
        ctx.save_for_forward(x, W)  # (jvp reads ctx.saved_tensors too)

    @staticmethod
    def backward(ctx, g):
        x, W = ctx.saved_tensors
        return g @ W, g.T @ x if g.ndim == 2 else dualad.outer(g, x), g

    @staticmethod
    def jvp(ctx, x_t, W_t, b_t):
        x, W = ctx.saved_tensors
        return x_t @ W.T + x @ W_t.T + b_t

    @staticmethod
    def vmap(info, in_dims, x, W, b):
        if in_dims[1] is not None or in_dims[2] is not None:
            raise NotImplementedError("only x batched")
        x = dualad.movedim(x, in_dims[0], 0)
        return Linear.apply(x, W, b), 0


# ---------------------------------------------------------------------------------------------
# func.grad / func.vjp levels


def test_grad_and_grad_of_grad():
    x = randn(4, seed=1)
    assert_equal(grad(lambda x: Cube.apply(x).sum())(x), 3 * x**2)
    # the backward is written in dualad ops: the outer grad level differentiates it
    second = grad(lambda x: grad(lambda x: Cube.apply(x).sum())(x).sum())(x)
    assert_equal(second, 6 * x)
    third = grad(lambda x: grad(lambda x: grad(lambda x: Cube.apply(x).sum())(x).sum())(x).sum())
    assert_equal(third(x), np.full(4, 6.0))


def test_grad_of_a_function_saving_its_output():
    x = randn(3, seed=2)
    assert_equal(grad(lambda x: Exp.apply(x).sum())(x), np.exp(x.numpy()))
    g2 = grad(lambda x: grad(lambda x: Exp.apply(x).sum())(x).sum())(x)
    assert_equal(g2, np.exp(x.numpy()))


@pytest.mark.parametrize("materialize", [True, False])
def test_grad_level_runs_a_function_that_gets_no_gradient(materialize):
    # as in the eager engine: a Function whose outputs receive no gradient still runs its
    # backward, with zeros (or None when it does not materialize grads)
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return 2 * x

        @staticmethod
        def backward(ctx, g):
            seen.append(g)
            return None if g is None else 2 * g

    class Undefined(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    x = dualad.tensor([1.0, 2.0])
    g = grad(lambda t: Undefined.apply(Scale.apply(t)).sum() + t.sum())(x)
    assert_equal(g, [1.0, 1.0])
    assert len(seen) == 1
    if materialize:
        assert_equal(seen[0], [0.0, 0.0])
    else:
        assert seen[0] is None


def test_grad_level_needs_input_grad_and_constants():
    seen = []

    class Mul(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            x, y = ctx.saved_tensors
            return g * y, g * x

    x = randn(3, seed=3)
    y = randn(3, seed=4)
    assert_equal(grad(lambda x: Mul.apply(x, y).sum())(x), y)
    assert seen[-1] == (True, False)
    assert_equal(grad(lambda y: Mul.apply(x, y).sum())(y), x)
    assert seen[-1] == (False, True)
    gx, gy = grad(lambda x, y: Mul.apply(x, y).sum(), argnums=(0, 1))(x, y)
    assert_equal(gx, y)
    assert_equal(gy, x)


def test_vjp_multi_output_with_non_tensor_output():
    class SplitScale(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k, "tag", x.sin()

        @staticmethod
        def backward(ctx, g1, _tag, g2):
            return g1 * ctx.k, None

    x = randn(3, seed=5)

    def f(x):
        a, tag, b = SplitScale.apply(x, 2.0)
        assert tag == "tag"
        return a, b

    (a, _b), vjp_fn = vjp(f, x)
    assert_equal(a, 2 * x)
    (g,) = vjp_fn((dualad.ones(3), dualad.ones(3)))
    assert_equal(g, np.full(3, 2.0))  # this backward ignores the second output on purpose


def test_mark_dirty_under_grad_level():
    class MulInplace(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(3)

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = randn(3, seed=6)

    def f(x):
        y = x * 2
        z = MulInplace.apply(y)
        assert z is y
        return (z * z).sum()

    assert_equal(grad(f)(x), 2 * 36 * x)


def test_once_differentiable_under_nested_grad_levels():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = randn(3, seed=7)
    assert_equal(grad(lambda x: Square.apply(x).sum())(x), 2 * x)  # first order is fine
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        grad(lambda x: grad(lambda x: Square.apply(x).sum())(x).sum())(x)


# ---------------------------------------------------------------------------------------------
# vmap


def _loop(fn, *args, in_dims):
    size = next(a.shape[d] for a, d in zip(args, in_dims) if d is not None)
    outs = []
    for i in range(size):
        sliced = [a if d is None else a.select(d, i) for a, d in zip(args, in_dims)]
        outs.append(fn(*sliced))
    return dualad.stack(outs)


@pytest.mark.parametrize("cls", [CubeGen, CubeRule], ids=["generate", "staticmethod"])
@pytest.mark.parametrize("in_dim", [0, 1])
def test_vmap_matches_a_loop(cls, in_dim):
    x = randn(3, 4, seed=8)
    out = dualad.vmap(cls.apply, in_dims=in_dim)(x)
    assert_equal(out, _loop(cls.apply, x, in_dims=(in_dim,)))


def test_vmap_staticmethod_sees_info_and_in_dims():
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k, y):
            return x * k + y

        @staticmethod
        def vmap(info, in_dims, x, k, y):
            seen.append((info.batch_size, info.randomness, in_dims))
            x = dualad.movedim(x, in_dims[0], 0)
            y = y if in_dims[2] is None else dualad.movedim(y, in_dims[2], 0)
            out = Scale.apply(x, k, y)  # batch first
            if in_dims[2] is not None:
                return out, 1  # wrong on purpose: the batch is at dim 0
            return dualad.movedim(out, 0, 1), 1

    x = randn(3, 5, seed=9)
    y = randn(3, seed=10)
    out = dualad.vmap(Scale.apply, in_dims=(1, None, None), randomness="same")(x, 2.0, y)
    assert seen == [(5, "same", (1, None, None))]
    assert_equal(out, (x * 2 + y[:, None]).T)
    # a rule whose out_dims do not match its output
    with pytest.raises(RuntimeError, match="with out_dim 1, but the batch size"):
        dualad.vmap(Scale.apply, in_dims=(1, None, 1))(x, 2.0, randn(3, 5, seed=1))


def test_vmap_without_a_rule_raises_pytorch_text():
    with pytest.raises(
        RuntimeError,
        match=r"To use autograd\.Function with vmap, you must either override the vmap "
        r"staticmethod or set generate_vmap_rule=True",
    ):
        dualad.vmap(Cube.apply)(randn(2, 3))

    class Both(Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def vmap(info, in_dims, x):
            return x, in_dims[0]

    with pytest.raises(RuntimeError, match="has both generate_vmap_rule=True and an overridden"):
        dualad.vmap(Both.apply)(randn(2, 3))

    class BadReturn(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def vmap(info, in_dims, x):
            return x

    with pytest.raises(RuntimeError, match="Expected the vmap staticmethod to have two returns"):
        dualad.vmap(BadReturn.apply)(randn(2, 3))


def test_custom_function_vmap_defaults():
    # test_custom_function_vmap_defaults (FN-22, C12)
    class MySquare(Function):
        @staticmethod
        def forward(x):
            return x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, gO):
            (x,) = ctx.saved_tensors
            return gO * 2 * x

    assert not MySquare.generate_vmap_rule
    assert hasattr(MySquare, "vmap")


def test_generated_rule_multi_output_mixed_in_dims_and_nested_vmap():
    class Mix(Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_backward(x, y)
            ctx.k = k
            return x * y * k, k, x.sin()

        @staticmethod
        def backward(ctx, g1, _k, g2):
            x, y = ctx.saved_tensors
            return g1 * y * ctx.k + g2 * x.cos(), g1 * x * ctx.k, None

    x = randn(3, 4, seed=11)
    y = randn(4, seed=12)
    a, k, b = dualad.vmap(Mix.apply, in_dims=(0, None, None), out_dims=(0, None, 0))(x, y, 2.0)
    assert k == 2.0
    assert_equal(a, x * y * 2)
    assert_equal(b, x.sin())
    nested = dualad.vmap(dualad.vmap(lambda x, y: Mix.apply(x, y, 3.0)[0]))(
        randn(2, 3, 4, seed=13), randn(2, 3, 4, seed=14)
    )
    assert_equal(nested, randn(2, 3, 4, seed=13) * randn(2, 3, 4, seed=14) * 3)


def test_generated_rule_randomness_follows_vmap():
    class Noisy(Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(ctx, x):
            return x + dualad.randn_like(x)

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="We do not yet support calling random operations"):
        dualad.vmap(Noisy.apply)(randn(3, 2))
    out = dualad.vmap(Noisy.apply, randomness="same")(dualad.zeros(3, 2))
    assert_equal(out[0], out[1])


def test_generated_rule_inplace_keeps_identity():
    class AddInplace(Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            return x.add_(y)

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = randn(3, 2, seed=15)
    y = randn(3, 2, seed=16)
    expected = x + y

    def f(x, y):
        out = AddInplace.apply(x, y)
        assert out is x
        return out

    assert_equal(dualad.vmap(f)(x.clone(), y), expected)


@pytest.mark.parametrize("cls", [CubeGen, CubeRule], ids=["generate", "staticmethod"])
def test_grad_of_vmap_through_the_eager_tape(cls):
    # vmap's batched physical values require grad: the Function's node is recorded eagerly
    # (the generated one, or the user's when the vmap staticmethod calls apply)
    x = randn(3, 4, seed=17).requires_grad_()
    y = dualad.vmap(cls.apply, in_dims=1, out_dims=1)(x)
    y.sum().backward()
    assert_equal(x.grad, 3 * x.detach() ** 2)


def test_grad_of_vmap_reduces_an_unbatched_input_gradient():
    class Mul(Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, g * x

    x = randn(5, 3, seed=18).requires_grad_()
    w = randn(3, seed=19).requires_grad_()
    dualad.vmap(Mul.apply, in_dims=(0, None))(x, w).sum().backward()
    assert_equal(w.grad, x.detach().sum(0))  # the per-example gradients, summed
    assert_equal(x.grad, w.detach().expand(5, 3))


def test_is_grads_batched_runs_backward_once():
    calls = []

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            calls.append(g.shape)
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = autograd.grad(Square.apply(x), x, dualad.eye(3), is_grads_batched=True)
    assert_equal(g, np.diag([2.0, 4.0, 6.0]))
    assert len(calls) == 1


# ---------------------------------------------------------------------------------------------
# per-example gradients: vmap(grad(f)) with an unbatched weight


def _loss(cls):
    def loss(w, x):
        return cls.apply(w * x).sum()

    return loss


@pytest.mark.parametrize("cls", [CubeGen, CubeGenNoJvp], ids=["jvp", "no-jvp"])
def test_per_example_gradients_generated_rule(cls):
    w = randn(3, seed=20)
    X = randn(5, 3, seed=21)
    per_example = dualad.vmap(grad(_loss(cls)), in_dims=(None, 0))(w, X)
    expected = 3 * (w.numpy() * X.numpy()) ** 2 * X.numpy()
    assert_equal(per_example, expected)


def test_per_example_gradients_vmap_staticmethod_with_setup_context():
    W = randn(2, 3, seed=22)
    b = randn(2, seed=23)
    X = randn(4, 3, seed=24)

    def loss(W, b, x):
        return Linear.apply(x, W, b).sin().sum()

    gW, gb = dualad.vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(W, b, X)
    for i in range(4):
        z = W.numpy() @ X.numpy()[i] + b.numpy()
        assert_equal(gW[i], np.outer(np.cos(z), X.numpy()[i]))
        assert_equal(gb[i], np.cos(z))


def test_ctx_style_function_with_vmap_staticmethod_under_grad_is_an_error():
    w = randn(3, seed=25)
    X = randn(5, 3, seed=26)
    with pytest.raises(RuntimeError, match="ran its vmap staticmethod below <grad level"):
        dualad.vmap(grad(_loss(CubeRule)), in_dims=(None, 0))(w, X)


# ---------------------------------------------------------------------------------------------
# jacrev, jacfwd, hessian, hvp


def test_jacrev_without_a_vmap_rule():
    # jacrev vmaps only the backward (written in dualad ops): no rule needed for forward
    x = randn(4, seed=27)
    assert_equal(jacrev(Cube.apply)(x), np.diag(3 * x.numpy() ** 2))
    assert_equal(jacrev(Exp.apply)(x), np.diag(np.exp(x.numpy())))


@pytest.mark.parametrize("cls", [CubeGen, CubeGenNoJvp, CubeRule], ids=["jvp", "no-jvp", "rule"])
def test_jacfwd(cls):
    x = randn(4, seed=28)
    assert_equal(jacfwd(cls.apply)(x), np.diag(3 * x.numpy() ** 2))


def test_jacfwd_and_hessian_without_any_rule():
    # jacfwd batches only the tangents (the primal is not batched), and the tangents are
    # derived from the backward: neither a jvp nor a vmap rule is needed
    x = randn(3, seed=41)
    assert_equal(jacfwd(Cube.apply)(x), np.diag(3 * x.numpy() ** 2))
    assert_equal(hessian(lambda x: Cube.apply(x).sin().sum())(x), _expected_hessian(x))
    # but a batched primal needs a rule
    with pytest.raises(RuntimeError, match=r"To use autograd\.Function with vmap"):
        dualad.vmap(jacfwd(Cube.apply))(randn(2, 3))


def _expected_hessian(x):
    # f(x) = sum(sin(x ** 3)): d2f/dx2 = diag(6x cos(x^3) - 9x^4 sin(x^3))
    x = x.numpy()
    return np.diag(6 * x * np.cos(x**3) - 9 * x**4 * np.sin(x**3))


@pytest.mark.parametrize("cls", [CubeGen, CubeGenNoJvp], ids=["jvp", "backward-only"])
def test_hessian_forward_over_reverse(cls):
    # func.hessian = jacfwd(jacrev(f)): with a jvp, or with tangents derived from the backward
    x = randn(3, seed=29)
    assert_equal(hessian(lambda x: cls.apply(x).sin().sum())(x), _expected_hessian(x))


def test_hessian_reverse_over_reverse_without_any_rule():
    x = randn(3, seed=30)
    h = jacrev(jacrev(lambda x: Cube.apply(x).sin().sum()))(x)
    assert_equal(h, _expected_hessian(x))
    h = autograd.functional.hessian(lambda x: Cube.apply(x).sin().sum(), x)
    assert_equal(h, _expected_hessian(x))


def test_hvp_and_jvp_of_grad():
    x = randn(3, seed=31)
    v = randn(3, seed=32)
    _, product = hvp(lambda x: CubeGen.apply(x).sin().sum(), (x,), (v,))
    assert_equal(product[0], _expected_hessian(x) @ v.numpy())
    # jvp of grad with the backward-derived tangents (no jvp, no vmap needed)
    _, tangent = jvp(grad(lambda x: Cube.apply(x).sin().sum()), (x,), (v,))
    assert_equal(tangent, _expected_hessian(x) @ v.numpy())


def test_linear_jacobians_and_hessian_of_setup_context_function():
    W = randn(2, 3, seed=33)
    b = randn(2, seed=34)
    x = randn(3, seed=35)
    assert_equal(jacrev(lambda x: Linear.apply(x, W, b))(x), W)
    assert_equal(jacfwd(lambda x: Linear.apply(x, W, b))(x), W)
    h = hessian(lambda x: Linear.apply(x, W, b).sin().sum())(x)
    z = W.numpy() @ x.numpy() + b.numpy()
    assert_equal(h, -(W.numpy().T * np.sin(z)) @ W.numpy())


# ---------------------------------------------------------------------------------------------
# tangents derived from backward (no jvp)


def test_dual_level_derives_tangents_from_backward():
    x = randn(3, seed=36)
    t = randn(3, seed=37)
    with fwd.dual_level():
        out = Cube.apply(fwd.make_dual(x, t))
        assert_equal(fwd.unpack_dual(out).tangent, 3 * x**2 * t)

    class TwoOut(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y, x + y, "meta"

        @staticmethod
        def backward(ctx, g1, g2, _):
            x, y = ctx.saved_tensors
            return g1 * y + g2, g1 * x + g2

    y = randn(3, seed=38)
    s = randn(3, seed=39)
    with fwd.dual_level():
        a, b, meta = TwoOut.apply(fwd.make_dual(x, t), fwd.make_dual(y, s))
        assert meta == "meta"
        assert_equal(fwd.unpack_dual(a).tangent, t * y + x * s)
        assert_equal(fwd.unpack_dual(b).tangent, t + s)


def test_backward_not_in_dualad_ops_cannot_give_tangents():
    class NumpyCube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return dualad.tensor(3 * x.detach().numpy() ** 2 * g.detach().numpy())

    class OnceCube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

    x = randn(2, seed=40)
    with fwd.dual_level():
        d = fwd.make_dual(x, dualad.ones(2))
        with pytest.raises(RuntimeError, match="backward is not a differentiable function"):
            NumpyCube.apply(d)
        with pytest.raises(RuntimeError, match="once_differentiable"):
            OnceCube.apply(d)


# ---------------------------------------------------------------------------------------------
# levels in the other order, and saved outputs lifted through several levels


@pytest.mark.parametrize("cls", [CubeGen, CubeGenNoJvp, CubeRule], ids=["jvp", "no-jvp", "rule"])
def test_jvp_of_vmap(cls):
    # the dual level sits below the vmap level: the generated (or user) rule runs on dual values
    X = randn(4, 3, seed=42)
    T = randn(4, 3, seed=43)
    out, tangent = jvp(dualad.vmap(cls.apply), (X,), (T,))
    assert_equal(out, X**3)
    assert_equal(tangent, 3 * X**2 * T)


@pytest.mark.parametrize("cls", [CubeGen, CubeRule], ids=["generate", "staticmethod"])
def test_grad_of_vmap_through_a_grad_level(cls):
    X = randn(4, 3, seed=44)
    g = grad(lambda X: dualad.vmap(cls.apply)(X).sin().sum())(X)
    assert_equal(g, np.cos(X.numpy() ** 3) * 3 * X.numpy() ** 2)


def test_saved_output_lifted_through_levels():
    x = randn(3, seed=45)
    e = np.exp(x.numpy())
    assert_equal(hessian(lambda x: Exp.apply(x).sum())(x), np.diag(e))
    assert_equal(jacfwd(jacfwd(Exp.apply))(x), np.einsum("ij,jk->ijk", np.diag(e), np.eye(3)))
    w = randn(3, seed=46)
    X = randn(5, 3, seed=47)
    per_example = dualad.vmap(grad(lambda w, x: Exp.apply(w * x).sum()), in_dims=(None, 0))(w, X)
    assert_equal(per_example, np.exp(w.numpy() * X.numpy()) * X.numpy())


@pytest.mark.gpu
def test_cuda_matches_cpu():
    # a Function on CuPy arrays: eager backward, materialised zero gradients (created on the
    # output's device), a jvp derived from backward, and the generated vmap rule
    class TwoOut(Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3, x.sin()

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return g1 * 3 * x**2 + g2 * x.cos()

    values = np.random.default_rng(48).standard_normal((2, 3))

    def run(device):
        x = dualad.tensor(values, device=device, requires_grad=True)
        a, _ = TwoOut.apply(x)
        (g,) = autograd.grad(a.sum(), x)  # the second output's gradient is materialised zeros
        jac = jacfwd(lambda v: TwoOut.apply(v)[1])(x.detach()[0])
        batched = dualad.vmap(lambda v: TwoOut.apply(v)[0])(x.detach())
        return [np.asarray(t.detach().cpu()._data) for t in (g, jac, batched)]

    for got, expected in zip(run("cuda"), run("cpu")):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
