"""Error messages a user can act on (issue 17 item 6): each names what the user called and says
what to do."""

import pytest

import dualad
import dualad.fwd as fwAD
from dualad import func
from dualad.autograd import GradcheckError, gradcheck


def test_random_ops_inside_vmap_point_to_randomness():
    with pytest.raises(RuntimeError, match=r"randomness='different'.*randomness='same'"):
        dualad.vmap(lambda x: x + dualad.randn(2))(dualad.ones(3, 2))
    # and the advice works
    out = dualad.vmap(lambda x: x + dualad.randn(2), randomness="different")(dualad.ones(3, 2))
    assert tuple(out.shape) == (3, 2)


@pytest.mark.parametrize(
    ("transform", "name"),
    [(func.jacrev, "jacrev"), (func.hessian, "hessian"), (func.jacfwd, "jacfwd")],
)
def test_errors_name_the_transform_the_user_called(transform, name):
    with pytest.raises(RuntimeError, match=rf"dualad\.func\.{name}\b"):
        transform(lambda x: "not a tensor")(dualad.ones(3))


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_names_a_nan_input(fast_mode):
    x = dualad.tensor([1.0, float("nan"), 2.0], requires_grad=True)
    with pytest.raises(GradcheckError, match=r"input 0 contains NaN \(first at index \(1,\)\)"):
        gradcheck(lambda x: x * 2, (x,), fast_mode=fast_mode)


def test_gradcheck_without_nan_inputs_adds_no_nan_note():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda x: dualad.abs(x) * 0 + x.detach() * x, (x,))
    assert "contains NaN" not in str(info.value)


def test_make_dual_casts_another_float_width_and_rejects_a_complex_tangent_for_a_real_primal():
    with fwAD.dual_level():
        x = fwAD.make_dual(dualad.ones(3), dualad.ones(3, dtype=dualad.float32))
        assert fwAD.unpack_dual(x).tangent.dtype == dualad.float64
        with pytest.raises(ValueError, match=r"make_dual: the primal is real \(float64\)"):
            fwAD.make_dual(dualad.ones(3), dualad.ones(3, dtype=dualad.complex128))
        z = fwAD.make_dual(dualad.ones(3, dtype=dualad.complex128), dualad.ones(3))
        assert fwAD.unpack_dual(z).tangent.dtype == dualad.complex128


@pytest.mark.parametrize("transform", ["grad", "jacrev"])
def test_writing_a_tracked_value_into_an_untracked_tensor_names_the_transform(transform):
    # (it said "vmap: ... being vmapped over" under func.grad, where no vmap is involved)
    def f(x):
        y = dualad.zeros(2)
        y[0] = x[0]
        return (y * y).sum()

    with pytest.raises(
        RuntimeError, match=rf"dualad.func.{transform}: in-place op .* shape \(2,\)"
    ):
        getattr(func, transform)(f)(dualad.tensor([3.0, 4.0]))

    def g(x):  # the fix the message suggests
        y = x * 0
        y[0] = x[0]
        return (y * y).sum()

    assert func.grad(g)(dualad.tensor([3.0, 4.0])).tolist() == [6.0, 0.0]
