"""Bad input to vmap and the function transforms: a clear exception naming the transform (the
PyTorch wording where torch.func has one), never a silently wrong result. Errors tested
elsewhere: test_vmap.py (in_dims/out_dims, batch sizes, per-example values, randomness),
test_grad.py::test_errors (argnums, has_aux, non-scalar outputs), test_chunk_size.py,
test_jacobians.py (linearize tangents), tests/rev/test_functional.py (autograd.functional),
tests/rev/test_batched_grad.py (is_grads_batched)."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad.func import (
    grad,
    grad_and_value,
    hessian,
    hvp,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
    vmap,
)

X = dualad.tensor([1.0, 2.0])
BATCH = dualad.ones(3, 2)
INTS = dualad.tensor([1, 2])

CASES = [
    # not a function
    ("vmap(3)", lambda: vmap(3), TypeError, r"dualad\.vmap: expected a function"),
    ("grad(3)", lambda: grad(3), TypeError, r"dualad\.func\.grad: expected a function"),
    (
        "grad_and_value(3)",
        lambda: grad_and_value(3),
        TypeError,
        r"dualad\.func\.grad_and_value: expected a function",
    ),
    ("vjp(3, x)", lambda: vjp(3, X), TypeError, r"dualad\.func\.vjp: expected a function"),
    ("jvp(3, ...)", lambda: jvp(3, (X,), (X,)), TypeError, r"func\.jvp: expected a function"),
    ("jacrev(3)", lambda: jacrev(3), TypeError, r"dualad\.func\.jacrev: expected a function"),
    ("jacfwd(3)", lambda: jacfwd(3), TypeError, r"dualad\.func\.jacfwd: expected a function"),
    ("hessian(3)", lambda: hessian(3), TypeError, r"expected a function"),
    ("hvp(3, ...)", lambda: hvp(3, (X,), (X,)), TypeError, r"func\.hvp: expected a function"),
    ("linearize(3, x)", lambda: linearize(3, X), TypeError, r"linearize: expected a function"),
    # inputs that cannot be differentiated
    (
        "grad of an integer input",
        lambda: grad(lambda a: a.sum())(INTS),
        RuntimeError,
        r"only Tensors of floating point or complex dtype can be differentiated",
    ),
    (
        "vjp of a non-tensor",
        lambda: vjp(lambda a: a, "3.0"),
        TypeError,
        r"dualad\.func\.vjp: expected the differentiated arguments to be Tensors",
    ),
    (
        "jvp of an integer primal",
        lambda: jvp(lambda a: a, (INTS,), (INTS,)),
        ValueError,
        r"Expected primal to be floating point or complex, but got: int64",
    ),
    (
        "jvp with an integer tangent",
        lambda: jvp(lambda a: a, (X,), (INTS,)),
        ValueError,
        r"Expected tangent to be floating point or complex, but got: int64",
    ),
    (
        "jacfwd of a non-tensor",
        lambda: jacfwd(lambda a: a)("3.0"),
        RuntimeError,
        r"jacfwd: expected the differentiated arguments to be Tensors",
    ),
    (
        "linearize of a non-tensor",
        lambda: linearize(lambda a: a, "3.0"),
        TypeError,
        r"expected the differentiated arguments to be Tensors",
    ),
    # complex inputs and outputs: jacrev/jacfwd/hessian build real Jacobians only (PyTorch's
    # texts; before, jacrev kept the C-linear part and jacfwd another, and a real-to-complex
    # jacrev dropped the imaginary part: silently wrong for a non-holomorphic function)
    (
        "jacrev of a complex input",
        lambda: jacrev(lambda a: a * a.conj())(X * (1 + 1j)),
        RuntimeError,
        r"^jacrev: Expected all inputs to be real but received complex tensor at flattened "
        r"input idx: 0$",
    ),
    (
        "jacrev, a complex non-differentiated argument",
        lambda: jacrev(lambda a, b: a * b.real)(X, X * 1j),
        RuntimeError,
        r"^jacrev: Expected all inputs to be real but received complex tensor at flattened "
        r"input idx: 1$",
    ),
    (
        "jacrev of a complex output",
        lambda: jacrev(lambda a: a * (1 + 1j))(X),
        RuntimeError,
        r"^jacrev: Expected all outputs to be real but received complex tensor at flattened "
        r"input idx: 0$",
    ),
    (
        "jacfwd of a complex input",
        lambda: jacfwd(lambda a: a * a)(X * 1j),
        RuntimeError,
        r"^jacfwd: Expected all inputs to be real but received complex tensor at flattened "
        r"input idx: 0$",
    ),
    (
        "jacfwd of a complex second output",
        lambda: jacfwd(lambda a: (a, a * (1 + 1j)))(X),
        RuntimeError,
        r"^jacfwd: Expected all outputs to be real but received complex tensor at flattened "
        r"input idx: 1$",
    ),
    (
        "hessian of a complex input",
        lambda: hessian(lambda a: (a * a.conj()).real.sum())(X * 1j),
        RuntimeError,
        r"^jacfwd: Expected all inputs to be real but received complex tensor at flattened "
        r"input idx: 0$",
    ),
    # outputs that cannot be differentiated
    (
        "grad of a complex output",
        lambda: grad(lambda a: (a * 1j).sum())(X),
        RuntimeError,
        r"func\.grad: expected f\(\*args\) to return a real floating point scalar Tensor, got "
        r"dtype complex128",
    ),
    (
        "jvp returning a float",
        lambda: jvp(lambda a: 3.0, (X,), (X,)),
        RuntimeError,
        r"jvp\(f, primals, tangents\): expected f\(\*primals\) to return only tensors, got "
        r"unsupported type float",
    ),
    (
        "jacfwd returning a float",
        lambda: jacfwd(lambda a: 3.0)(X),
        RuntimeError,
        r"expected f\(\*primals\) to return only tensors",
    ),
    (
        "jacrev returning a float",
        lambda: jacrev(lambda a: 3.0)(X),
        RuntimeError,
        r"dualad\.func\.jacrev: expected f\(\*primals\) to return only Tensors",  # (its name)
    ),
    (
        "hvp of a vector function",
        lambda: hvp(lambda a: a * 2, (X,), (X,)),
        RuntimeError,
        r"dualad\.func\.hvp: expected f\(\*args\) to return a scalar Tensor, got shape \(2,\)",
    ),
    (
        "vmap returning None",
        lambda: vmap(lambda a: None)(BATCH),
        ValueError,
        r"`<lambda>` must only return Tensors, got type <class 'NoneType'>",
    ),
    # cotangents and tangents that do not fit
    (
        "vjp with a complex cotangent for a real output",
        lambda: vjp(lambda a: a * 2, X)[1](dualad.tensor([1j, 2.0])),
        RuntimeError,
        r"For complex Tensors, both grad_output and output are required to have the same dtype\. "
        r"Mismatch in dtype: grad_output\[0\] has a dtype of complex128 and output\[0\] has a "
        r"dtype of float64\.",
    ),
    (
        "vjp with a wrongly shaped cotangent",
        lambda: vjp(lambda a: a * 2, X)[1](dualad.ones(3)),
        RuntimeError,
        r"Mismatch in shape: cotangent 0 has shape \(3,\) but the output has shape \(2,\)",
    ),
    (
        "jvp with a wrongly shaped tangent",
        lambda: jvp(lambda a: a, (X,), (dualad.ones(3),)),
        RuntimeError,
        r"a primal has shape \(2,\) but its tangent has shape \(3,\)",
    ),
    (
        "hvp with tangents of another structure",
        lambda: hvp(lambda a: a.sum(), (X,), (X, X)),
        RuntimeError,
        r"Expected primals and tangents to have the same python structure",
    ),
    (
        "hvp with lists",
        lambda: hvp(lambda a: a.sum(), [X], [X]),
        RuntimeError,
        r"Expected primals and tangents to be tuples",
    ),
    # transform arguments
    (
        "jacfwd randomness",
        lambda: jacfwd(lambda a: a, randomness="sometimes")(X),
        RuntimeError,
        r"Only allowed values for randomness are 'error', 'different', or 'same'\. Got sometimes",
    ),
    (
        "jacrev argnums out of range",
        lambda: jacrev(lambda a: a, argnums=3)(X),
        RuntimeError,
        r"jacrev: Got argnums=3, but only 1 positional inputs",
    ),
    (
        "jacrev has_aux without aux",
        lambda: jacrev(lambda a: a, has_aux=True)(X),
        RuntimeError,
        r"output of function f should be a tuple: \(output, aux\)",
    ),
]


@pytest.mark.parametrize(
    "call, exception, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_raises_clearly(call, exception, pattern):
    with pytest.raises(exception, match=pattern):
        call()


def test_cotangents_and_tangents_of_other_float_widths_are_cast():
    # as torch: an integer or narrower cotangent is cast to the output's dtype, a narrower
    # tangent to the primal's
    _, vjp_fn = vjp(lambda a: a * 2, X)
    for ct in (dualad.tensor([1, 2]), dualad.tensor([1.0, 2.0], dtype=dualad.float32)):
        (g,) = vjp_fn(ct)
        assert g.dtype == np.float64
        np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    _, tangent = jvp(lambda a: a * 2, (X,), (dualad.tensor([1.0, 2.0], dtype=dualad.float32),))
    assert tangent.dtype == np.float64
    np.testing.assert_array_equal(tangent.numpy(), [2.0, 4.0])
