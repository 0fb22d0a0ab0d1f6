"""Arguments of dualad.special without a derivative, and integer orders.

gammainc's/gammaincc's ``a`` and zeta's ``x`` have no derivative here: when one is tracked and
its derivative is needed (reverse mode asks for it, forward mode carries a tangent for it,
func.grad/jacfwd differentiate it) the call raises NotImplementedError naming the op and the
argument, never a silent zero. Untracked (plain tensors, numbers, vmap batches) they are fine.
polygamma's ``n`` and multigammaln's ``d`` are static Python integers.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd, func, fwd

CASES = [
    ("gammainc", "a", lambda a: special.gammainc(a, dualad.tensor([0.5, 2.0]))),
    ("gammaincc", "a", lambda a: special.gammaincc(a, dualad.tensor([0.5, 2.0]))),
    ("zeta", "x", lambda x: special.zeta(x + 1.5, dualad.tensor([0.5, 2.0]))),
    ("zeta", "x", lambda x: special.zeta(x + 1.5)),
]
IDS = ["gammainc", "gammaincc", "hurwitz-zeta", "riemann-zeta"]


def _order():
    return dualad.tensor([1.5, 2.5], requires_grad=True)


@pytest.mark.parametrize("name, argument, fn", CASES, ids=IDS)
def test_reverse_mode_raises_when_the_derivative_is_needed(name, argument, fn):
    s = _order()
    out = fn(s)
    with pytest.raises(NotImplementedError, match=f"dualad.{name}.*respect to {argument}"):
        out.sum().backward()
    with pytest.raises(NotImplementedError, match=f"dualad.{name}"):
        autograd.grad(fn(s).sum(), s)


@pytest.mark.parametrize("name, argument, fn", CASES, ids=IDS)
def test_func_grad_and_jacobians_raise(name, argument, fn):
    s = dualad.tensor([1.5, 2.5])
    for transform in (func.grad(lambda t: fn(t).sum()), func.jacrev(fn), func.jacfwd(fn)):
        with pytest.raises(NotImplementedError, match=f"dualad.{name}.*respect to {argument}"):
            transform(s)


@pytest.mark.parametrize("name, argument, fn", CASES, ids=IDS)
def test_forward_mode_raises_at_the_call(name, argument, fn):
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([1.5, 2.5]), dualad.ones(2))
        with pytest.raises(NotImplementedError, match=f"dualad.{name}.*respect to {argument}"):
            fn(dual)
    with pytest.raises(NotImplementedError, match=f"dualad.{name}"):
        func.jvp(fn, (dualad.tensor([1.5, 2.5]),), (dualad.ones(2),))


def test_the_message_says_how_to_use_a_constant():
    with pytest.raises(NotImplementedError, match=r"a\.detach\(\)"):
        func.grad(lambda a: special.gammainc(a, 1.0))(dualad.tensor(2.0))


def test_a_tracked_argument_not_differentiated_is_fine():
    # a requires grad, but only x's gradient is asked for (PyTorch's behaviour likewise)
    a = dualad.tensor([1.5, 2.0], requires_grad=True)
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    (gx,) = autograd.grad(special.gammainc(a, x).sum(), x)
    expected = np.exp(
        (np.array([0.5, 1.0])) * np.log([0.5, 1.0]) - [0.5, 1.0] - sp.gammaln([1.5, 2.0])
    )
    np.testing.assert_allclose(gx.numpy(), expected)
    # and a detached order under a transform
    q = dualad.tensor([0.5, 2.0])
    g = func.grad(lambda t: special.zeta(dualad.tensor(3.0), t).sum())(q)
    np.testing.assert_allclose(g.numpy(), -3.0 * sp.zeta(4.0, q.numpy()))


def test_a_gradient_for_q_and_the_error_for_x_together():
    x = dualad.tensor(3.0, requires_grad=True)
    q = dualad.tensor([0.5, 2.0], requires_grad=True)
    (gq,) = autograd.grad(special.zeta(x, q).sum(), q)
    np.testing.assert_allclose(gq.numpy(), -3.0 * sp.zeta(4.0, q.detach().numpy()))
    with pytest.raises(NotImplementedError, match=r"dualad\.zeta"):
        autograd.grad(special.zeta(x, q).sum(), (x, q))


# ---------------------------------------------------------------------------------------------
# integer orders


def test_polygamma_order_is_a_static_integer():
    x = dualad.tensor([1.5, 2.5])
    expected = sp.polygamma(2, x.numpy())
    for n in (2, np.int64(2), 2.0, dualad.tensor(2)):
        np.testing.assert_allclose(special.polygamma(n, x).numpy(), expected)
    np.testing.assert_allclose(special.polygamma(0, x).numpy(), sp.psi(x.numpy()))
    for bad in (-1, 1.5, True, "2", None):
        with pytest.raises(ValueError, match=r"dualad\.polygamma: n must be an integer >= 0"):
            special.polygamma(bad, x)
    with pytest.raises(ValueError, match="one integer"):
        special.polygamma(dualad.tensor([1, 2]), x)


def test_a_tracked_order_raises():
    x = dualad.tensor([1.5, 2.5])
    n = dualad.tensor(2.0, requires_grad=True)
    with pytest.raises(NotImplementedError, match=r"dualad\.polygamma: n is an integer order"):
        special.polygamma(n, x)
    with pytest.raises(NotImplementedError, match=r"dualad\.polygamma: n"):
        func.grad(lambda m: special.polygamma(m, x).sum())(dualad.tensor(2.0))
    with pytest.raises(NotImplementedError, match=r"dualad\.multigammaln: d"):
        func.vmap(lambda d: special.multigammaln(x, d))(dualad.tensor([1, 2]))


def test_multigammaln_checks_its_dimension_and_domain_as_scipy():
    a = dualad.tensor([2.0, 3.0])
    for bad in (0, -2, 1.5):
        with pytest.raises(ValueError, match=r"dualad\.multigammaln: d must be an integer >= 1"):
            special.multigammaln(a, bad)
    with pytest.raises(ValueError, match=r"condition a > \(d - 1\) / 2"):
        special.multigammaln(dualad.tensor([2.0, 0.9]), 3)
    with pytest.raises(ValueError):  # scipy raises too
        sp.multigammaln(np.array([2.0, 0.9]), 3)
    np.testing.assert_allclose(
        special.multigammaln(a, 3).numpy(), sp.multigammaln(a.numpy(), 3), rtol=1e-14
    )
