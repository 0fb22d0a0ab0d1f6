"""Error and warning texts of backward()/grad() and tensor attributes (spec/reverse.md §3.1, §22).

Ports test_grad_badcalls, test_grad_empty_inputs, test_complex_scalar_backward (message part),
test_multi_backward_no_grad, test_backward_no_grad and the argument checks of seed 004.
"""

import re
import warnings

import numpy as np
import pytest

import dualad
from dualad.autograd import backward, grad

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def test_grad_badcalls():
    x = dualad.ones(1)
    y = x**2
    with pytest.raises(RuntimeError, match="does not require grad"):
        grad(x, y)
    with pytest.raises(RuntimeError, match="does not require grad"):
        grad(y, x)
    x = dualad.ones(1, requires_grad=True)
    y = x**2
    grad(y, x)  # this should succeed now


def test_grad_input_does_not_require_grad():
    x = dualad.ones(1, requires_grad=True)
    z = dualad.ones(1)
    with pytest.raises(
        RuntimeError, match="One of the differentiated Tensors does not require grad"
    ):
        grad(x * 2, [x, z])


def test_grad_empty_inputs():
    x = dualad.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"grad requires non-empty inputs\."):
        grad(2 * x, [], grad_outputs=dualad.tensor([1.0]))
    # current PyTorch raises a RuntimeError with another text: both are satisfied
    with pytest.raises(
        RuntimeError, match=re.escape("`inputs` argument to `grad()` cannot be empty.")
    ):
        grad(2 * x, [], grad_outputs=dualad.tensor([1.0]))


def test_backward_empty_inputs():
    x = dualad.tensor([1.0], requires_grad=True)
    with pytest.raises(
        RuntimeError, match=re.escape("`inputs` argument to `backward()` cannot be empty.")
    ):
        backward((2 * x).sum(), inputs=[])


def test_root_without_grad_message():
    a = dualad.randn(3)
    with pytest.raises(RuntimeError) as info:
        a.sum().backward()
    assert str(info.value) == (
        "element 0 of tensors does not require grad and does not have a grad_fn"
    )
    x = dualad.randn(3, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="element 1 of tensors does not require grad and does not have a grad_fn"
    ):
        backward([x.sum(), a.sum()])


def test_implicit_grad_only_for_scalars():
    x = dualad.randn(3, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        (x * 2).backward()
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        grad(x * 2, x)
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        backward([x * 2], [None])


def test_complex_scalar_backward():
    a = dualad.zeros(1, dtype=dualad.complex128, requires_grad=True)
    b = a * 0.5j
    msg = "grad can be implicitly created only for real scalar outputs"
    with pytest.raises(RuntimeError, match=msg):
        b.backward()
    with pytest.raises(RuntimeError, match=msg):
        grad(b, a)


def test_mismatch_in_shape_message():
    x = dualad.randn(2, 2, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError) as info:
        y.backward(dualad.ones(2))
    assert str(info.value) == (
        "Mismatch in shape: grad_output[0] has a shape of (2,) and output[0] has a shape of (2, 2)."
    )
    with pytest.raises(RuntimeError, match=re.escape("Mismatch in shape: grad_output[1]")):
        grad([y, y], x, [dualad.ones(2, 2), dualad.ones(3)])


def test_mismatch_in_number_of_gradients():
    x = dualad.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in number of gradients"):
        backward([x * 2, x * 3], [dualad.ones(2)])


def test_grad_outputs_wrong_type():
    x = dualad.randn(2, requires_grad=True)
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got str"):
        grad(x * 2, x, ["oops"])


def test_complex_grad_output_for_real_output():
    x = dualad.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="For complex Tensors, both grad_output and output"):
        grad(x * 2, x, dualad.ones(2, dtype=dualad.complex128))


def test_freed_graph_message_is_pytorchs():
    x = dualad.randn(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert str(info.value) == FREED


def test_saved_tensors_after_free():
    x = dualad.randn(3, requires_grad=True)
    y = x * x
    node = y.grad_fn
    assert all(t is x for t in node.saved_tensors)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        node.saved_tensors  # noqa: B018


def test_allow_unused_message():
    x = dualad.randn(1, requires_grad=True)
    y = dualad.randn(1, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        grad(x * 2, [x, y])
    assert str(info.value) == (
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior."
    )


def test_materialize_grads_with_allow_unused_false():
    x = dualad.randn(1, requires_grad=True)
    with pytest.raises(ValueError) as info:
        grad(x * 2, x, allow_unused=False, materialize_grads=True)
    assert str(info.value) == (
        "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
        "allow_unused=False."
    )


def test_materialize_grads_with_gradient_edge():
    from dualad.autograd.graph import get_gradient_edge

    x = dualad.randn(1, requires_grad=True)
    y = dualad.randn(1, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="materialize_grads cannot be used when the given input is a GradientEdge",
    ):
        grad(x * 2, [x, get_gradient_edge(y * 1)], materialize_grads=True)


def test_grad_variables_deprecated():
    x = dualad.randn(2, requires_grad=True)
    with pytest.warns(FutureWarning, match="`grad_variables` is deprecated. Use `grad_tensors`"):
        backward(x * 2, grad_variables=dualad.ones(2))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    with (
        pytest.raises(RuntimeError, match="`grad_tensors` and `grad_variables` \\(deprecated\\)"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        backward(x * 2, dualad.ones(2), grad_variables=dualad.ones(2))


def test_only_inputs_deprecated():
    x = dualad.randn(2, requires_grad=True)
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        grad((x * 2).sum(), x, only_inputs=False)


def test_requires_grad_non_leaf_message():
    z = dualad.randn(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as info:
        z.requires_grad_(False)
    assert str(info.value) == (
        "you can only change requires_grad flags of leaf variables. If you want to use a computed "
        "variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach()."
    )


def test_register_hook_without_grad_message():
    with pytest.raises(
        RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"
    ):
        dualad.randn(2).register_hook(lambda g: g)


def test_grad_fn_wrong_arity_is_type_error():
    x = dualad.ones(2, requires_grad=True)
    node = (x * 2).grad_fn
    with pytest.raises(TypeError, match="expected 1 arguments, got 2 instead"):
        node(dualad.ones(2), dualad.ones(2))


def test_errors_leave_grad_mode_and_graph_usable():
    x = dualad.randn(3, requires_grad=True)
    y = x * x

    def hook(g):
        raise ValueError("hook failed")

    handle = y.register_hook(hook)
    with pytest.raises(ValueError, match="hook failed"):
        y.sum().backward()
    assert dualad.is_grad_enabled()
    handle.remove()
    y.sum().backward()  # the failed pass freed nothing
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_not_implemented_derivative_is_reported_at_backward():
    from dualad._dispatch import OpDef

    op = OpDef("no_vjp_test_op", lambda xp, a: a * 1.0, vjp=None)
    x = dualad.randn(2, requires_grad=True)
    from dualad._dispatch import apply

    y = apply(op, x)
    assert y.requires_grad
    with pytest.raises(NotImplementedError, match=r"the derivative for .* is not implemented"):
        y.sum().backward()
