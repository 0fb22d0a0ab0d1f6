"""Anomaly mode: detect_anomaly / set_detect_anomaly, NaN checks naming the node, forward traces
in the errors' warnings (spec/reverse.md section 11, ANOM-1..4).

Ported from PyTorch's test_anomaly_* tests; where the seeds make NaN with a custom Function, a
built-in op does it here: sqrt's derivative is inf at 0 (times a zero gradient: NaN) and mul's
gradient for its second operand is NaN when the first is inf and the incoming gradient is 0.
"""

from __future__ import annotations

import gc
import io
import sys
import warnings
import weakref

import numpy as np
import pytest

import dualad
from dualad import autograd
from dualad._state import RECORD_HOOKS
from dualad.autograd import detect_anomaly, set_detect_anomaly


@pytest.fixture(autouse=True)
def quiet_numpy():
    # NumPy's own "invalid value" RuntimeWarnings would interleave with the ones asserted here
    with np.errstate(all="ignore"):
        yield
    assert not autograd.is_anomaly_enabled()
    assert not RECORD_HOOKS  # every test leaves the recording path as fast as it found it


def user_warnings(records):
    return [str(r.message) for r in records if r.category is UserWarning]


def sqrt_nan_loss(x):
    return (dualad.sqrt(x) * 0.0).sum()  # SqrtBackward0 returns 0 * inf = nan


def test_anomaly_detect_nan():
    x = dualad.tensor([0.0, 1.0], requires_grad=True)
    out = sqrt_nan_loss(x)
    out.backward()  # outside anomaly mode: no check

    x = dualad.tensor([0.0, 1.0], requires_grad=True)
    out = sqrt_nan_loss(x)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with (
            pytest.raises(
                RuntimeError,
                match=r"Function 'SqrtBackward0' returned nan values in its 0th output\.",
            ),
            detect_anomaly(),
        ):
            out.backward()
    messages = user_warnings(w)
    assert "Anomaly Detection has been enabled" in messages[0]
    assert "Error detected in SqrtBackward0" in messages[1]
    assert "No forward pass information" in messages[1]

    a = dualad.tensor([float("inf"), 1.0], requires_grad=True)
    b = dualad.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with (
            pytest.raises(
                RuntimeError,
                match=r"Function 'MulBackward0' returned nan values in its 1th output\.",
            ),
            detect_anomaly(),
        ):
            product = a * b  # the forward line the trace must show
            (product * 0.0).sum().backward()
    messages = user_warnings(w)
    assert len(messages) == 2
    assert messages[1].startswith(
        "Error detected in MulBackward0. Traceback of forward call that caused the error:\n"
    )
    assert "product = a * b  # the forward line the trace must show" in messages[1]
    assert __file__ in messages[1]
    assert a.grad is None and b.grad is None  # the pass stopped at the failing node


def test_anomaly_pow_nan_names_the_node_with_the_forward_trace():
    # issue 6's example: PowBackward0 returns 0 * inf = nan for x ** 0.5 at 0 under a zero
    # incoming gradient; the error names the node, the warning shows the forward line
    x = dualad.tensor([0.0, 4.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with (
            pytest.raises(
                RuntimeError,
                match=r"^Function 'PowBackward0' returned nan values in its 0th output\.$",
            ),
            detect_anomaly(),
        ):
            root = x**0.5  # the forward line of the failing node
            (root * 0.0).sum().backward()
    messages = user_warnings(w)
    assert len(messages) == 2
    assert messages[1].startswith(
        "Error detected in PowBackward0. Traceback of forward call that caused the error:\n"
    )
    assert "root = x**0.5  # the forward line of the failing node" in messages[1]
    assert x.grad is None
    # the same graph outside anomaly mode: no check, the NaN reaches .grad
    (x**0.5 * 0.0).sum().backward()
    assert np.isnan(x.grad.numpy()[0]) and x.grad.numpy()[1] == 0.0


def test_nested_anomaly_detect_nan():
    # nodes made by a create_graph backward remember the node whose backward made them
    u = dualad.tensor([0.0, 1.0], requires_grad=True)
    y = u.sqrt()
    (g,) = autograd.grad(y.sum(), u, create_graph=True)
    (g * 0.0).sum().backward()  # outside anomaly mode: no check

    u = dualad.tensor([0.0, 1.0], requires_grad=True)
    y = u.sqrt()
    (g,) = autograd.grad(y.sum(), u, create_graph=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with (
            pytest.raises(RuntimeError, match=r"returned nan values in its 1th output\."),
            detect_anomaly(),
        ):
            (g * 0.0).sum().backward()
    messages = user_warnings(w)
    assert len(messages) == 2
    assert "No forward pass information" in messages[1]

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with (
            pytest.raises(
                RuntimeError,
                match=r"Function 'DivBackward0' returned nan values in its 1th output\.",
            ),
            detect_anomaly(),
        ):
            u = dualad.tensor([0.0, 1.0], requires_grad=True)
            y = u.sqrt()  # forward of the parent
            (g,) = autograd.grad(y.sum(), u, create_graph=True)  # forward of the failing node
            (g * 0.0).sum().backward()
    messages = user_warnings(w)
    assert len(messages) == 3
    assert "Error detected in DivBackward0. Traceback of forward call" in messages[1]
    assert "# forward of the failing node" in messages[1]
    assert "Previous calculation was induced by SqrtBackward0" in messages[2]
    assert "Traceback of forward call that induced the previous calculation" in messages[2]
    assert "y = u.sqrt()  # forward of the parent" in messages[2]


def test_anomaly_grad_warnings():
    class StdErrDiverter:
        def __enter__(self):
            self.stderr_orig = sys.stderr
            self.stderr_new = io.StringIO()
            sys.stderr = self.stderr_new
            return self

        def __exit__(self, *args):
            self.captured = self.stderr_new.getvalue()
            sys.stderr = self.stderr_orig

    with (
        pytest.raises(
            RuntimeError,
            match="one of the variables needed for gradient computation has been modified by an "
            "inplace operation",
        ),
        warnings.catch_warnings(record=True) as w,
        detect_anomaly(),
    ):
        a = dualad.randn(5, requires_grad=True)
        d1 = a + 1
        d2 = d1**2
        d1 += 1
        autograd.grad(d2.sum(), a)
    assert len(w) == 2
    assert "Anomaly Detection has been enabled" in str(w[0].message)
    assert "Error detected in PowBackward0" in str(w[1].message)
    assert "d2 = d1**2" in str(w[1].message)

    # warnings as errors: the text goes to stderr, the original error is raised
    with (
        pytest.raises(
            RuntimeError,
            match="one of the variables needed for gradient computation has been modified by an "
            "inplace operation",
        ),
        warnings.catch_warnings(record=True) as w,
        detect_anomaly(),
    ):
        warnings.simplefilter("error")
        with StdErrDiverter() as s:
            a = dualad.randn(5, requires_grad=True)
            d1 = a + 1
            d2 = d1**2
            d1 += 1
            autograd.grad(d2.sum(), a)
    assert len(w) == 1
    assert "Anomaly Detection has been enabled" in str(w[0].message)
    assert "Error detected in PowBackward0" in s.captured


def test_anomaly_assign_parent_cleanup():
    def get_ref():
        x = dualad.randn(2, 2, requires_grad=True)
        t = x.exp()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with detect_anomaly():
                grad = autograd.grad(t, x, dualad.ones_like(t), create_graph=True)
        assert grad[0].grad_fn.metadata["parent_"] is t.grad_fn

        class Foo:
            pass

        my_obj = Foo()
        meta_dict = t.grad_fn.metadata
        meta_dict[0] = my_obj
        return t, weakref.ref(my_obj)

    t, ref = get_ref()
    assert ref() is not None
    del t
    assert ref() is None


def test_nested_anomaly_printstack_cleanup():
    def get_ref():
        inp = dualad.tensor([0.0], requires_grad=True)
        out = inp.sqrt()
        (ginp,) = autograd.grad(out, (inp,), create_graph=True)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="returned nan values in its"), detect_anomaly():
                (ginp * 0.0).backward()

        class Foo:
            pass

        my_obj = Foo()
        meta_dict = out.grad_fn.metadata
        meta_dict[0] = my_obj
        return out, weakref.ref(my_obj)

    t, ref = get_ref()
    assert ref() is not None
    del t
    assert ref() is None


def test_anomaly_mode_no_check_nan():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        with detect_anomaly(check_nan=False):
            inp = dualad.tensor([0.0, 4.0], requires_grad=True)
            out = sqrt_nan_loss(inp)
            out.backward(retain_graph=True)
            assert not autograd.is_anomaly_check_nan_enabled()
            with (
                detect_anomaly(check_nan=True),
                pytest.raises(
                    RuntimeError,
                    match=r"Function 'SqrtBackward0' returned nan values in its 0th output\.",
                ),
            ):
                out.backward(retain_graph=True)
            assert autograd.is_anomaly_enabled()
            out.backward()
    assert np.isnan(inp.grad.numpy()[0])


def test_set_detect_anomaly():
    assert not autograd.is_anomaly_enabled()
    setter = set_detect_anomaly(True)  # takes effect when called
    assert autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()
    x = dualad.tensor([1.0], requires_grad=True)
    y = x * 2
    assert "traceback_" in y.grad_fn.metadata
    set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()
    z = x * 2
    assert z.grad_fn._metadata is None  # nothing recorded outside anomaly mode
    with setter:
        pass
    assert not autograd.is_anomaly_enabled()

    with set_detect_anomaly(True, check_nan=False):
        assert autograd.is_anomaly_enabled() and not autograd.is_anomaly_check_nan_enabled()
        with set_detect_anomaly(False):
            assert not autograd.is_anomaly_enabled()
        assert autograd.is_anomaly_enabled()
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()


def test_detect_anomaly_as_decorator():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):

        @detect_anomaly()
        def loss(x):
            assert autograd.is_anomaly_enabled()
            return sqrt_nan_loss(x)

    x = dualad.tensor([0.0], requires_grad=True)
    out = loss(x)
    assert not autograd.is_anomaly_enabled()
    assert "traceback_" in out.grad_fn.metadata
    out.backward()  # checks happen only while anomaly mode is on


def test_anomaly_mode_errors_from_hooks_name_the_node():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with detect_anomaly():
            y = x.exp()
            y.grad_fn.register_prehook(lambda grads: 1 / 0)
            with pytest.raises(ZeroDivisionError):
                y.sum().backward()
    messages = user_warnings(w)
    assert "Error detected in ExpBackward0" in messages[1]
    assert "y = x.exp()" in messages[1]


def test_anomaly_mode_result_is_unchanged():
    x = dualad.tensor([0.5, 1.5], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with detect_anomaly():
            (g,) = autograd.grad((x.sin() * x.exp()).sum(), x, create_graph=True)
            (h,) = autograd.grad(g.sum(), x)
    xs = np.array([0.5, 1.5])
    np.testing.assert_allclose(g.detach().numpy(), np.exp(xs) * (np.sin(xs) + np.cos(xs)))
    np.testing.assert_allclose(h.numpy(), 2 * np.exp(xs) * np.cos(xs))
    gc.collect()


# ------------------------------------------------------------------------- with custom Functions
# (the seeds' own forms: the NaN comes from a Function's backward)


def test_anomaly_detect_nan_function():
    size = 10

    class MyFunc(autograd.Function):
        @staticmethod
        def forward(ctx, inp1, inp2, fail_0th):
            ctx.fail_0th = fail_0th
            return inp1.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g_out):
            g_in = g_out.clone().expand(size).clone()
            g_in[0] = 0
            g_in[0] /= 0  # a nan
            if ctx.fail_0th:
                return g_in, None, None
            return None, g_in, None

    inp = dualad.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, inp, True)
    out.backward()  # no check outside anomaly mode

    inp = dualad.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, inp, True)
    with (
        pytest.raises(
            RuntimeError, match=r"Function 'MyFuncBackward' returned nan values in its 0th output\."
        ),
        warnings.catch_warnings(record=True) as w,
    ):
        warnings.simplefilter("always")
        with detect_anomaly():
            out.backward()
    assert "No forward pass information" in user_warnings(w)[1]

    inp = dualad.rand(size, requires_grad=True)
    with (
        pytest.raises(
            RuntimeError, match=r"Function 'MyFuncBackward' returned nan values in its 1th output\."
        ),
        warnings.catch_warnings(record=True) as w,
    ):
        warnings.simplefilter("always")
        with detect_anomaly():
            out = MyFunc.apply(inp, inp, False)
            out.backward()
    assert "MyFunc.apply" in user_warnings(w)[1]


def test_nested_anomaly_detect_nan_function():
    size = 10

    class MyFunc(autograd.Function):
        @staticmethod
        def forward(ctx, inp1, fail_0th):
            ctx.fail_0th = fail_0th
            ctx.save_for_backward(inp1)
            return inp1.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g_out):
            (inp,) = ctx.saved_tensors
            g = g_out.clone().expand(size)
            g_in = MyFunc2.apply(g * inp, g + inp, ctx.fail_0th)
            return g_in, None

    class MyFunc2(autograd.Function):
        @staticmethod
        def forward(ctx, inp1, inp2, fail_0th):
            ctx.fail_0th = fail_0th
            return inp1 * 2.0 + inp2

        @staticmethod
        def backward(ctx, g_out):
            g1 = g_out.clone()
            g2 = g_out.clone()
            g1[0] = 0
            g2[0] = 0
            if ctx.fail_0th:
                g1[0] /= 0
            else:
                g2[0] /= 0
            return g1, g2, None

    inp = dualad.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, True)
    (ginp,) = autograd.grad(out, (inp,), create_graph=True)
    ginp.sum().backward()  # no check outside anomaly mode

    inp = dualad.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, True)
    (ginp,) = autograd.grad(out, (inp,), create_graph=True)
    gsum = ginp.sum()
    with (
        warnings.catch_warnings(record=True) as w,
        pytest.raises(
            RuntimeError,
            match=r"Function 'MyFunc2Backward' returned nan values in its 0th output\.",
        ),
    ):
        warnings.simplefilter("always")
        with detect_anomaly():
            gsum.backward()
    assert "No forward pass information" in user_warnings(w)[1]

    inp = dualad.rand(size, requires_grad=True)
    with (
        warnings.catch_warnings(record=True) as w,
        pytest.raises(
            RuntimeError,
            match=r"Function 'MyFunc2Backward' returned nan values in its 1th output\.",
        ),
    ):
        warnings.simplefilter("always")
        with detect_anomaly():
            out = MyFunc.apply(inp, False)
            (ginp,) = autograd.grad(out, (inp,), create_graph=True)
            gsum = ginp.sum()
            gsum.backward()
    messages = user_warnings(w)
    assert "MyFunc2.apply" in messages[1]
    assert "MyFunc.apply" in messages[2]


def test_nested_anomaly_printstack_cleanup_function():
    def get_ref():
        class MyFunc(autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, g_out):
                (x,) = ctx.saved_tensors
                return MyFunc2.apply(x)

        class MyFunc2(autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g_out):
                return g_out + float("nan")

        inp = dualad.rand(1, requires_grad=True)
        out = MyFunc.apply(inp)
        (ginp,) = autograd.grad(out, (inp,), create_graph=True)
        with (
            warnings.catch_warnings(record=True),
            pytest.raises(
                RuntimeError,
                match=r"Function 'MyFunc2Backward' returned nan values in its 0th output\.",
            ),
        ):
            warnings.simplefilter("always")
            with detect_anomaly():
                ginp.backward()

        class Foo:
            pass

        my_obj = Foo()
        out.grad_fn.metadata[0] = my_obj
        return out, weakref.ref(my_obj)

    t, ref = get_ref()
    assert ref() is not None
    del t
    assert ref() is None


def test_anomaly_mode_no_check_nan_function():
    class MyFunc(autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, g_out):
            return dualad.tensor(float("nan")).expand(10, 10)

    def run_fn(a):
        return MyFunc.apply(a).sum()

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        with detect_anomaly(check_nan=False):
            inp = dualad.rand(10, 10, requires_grad=True)
            out = run_fn(inp)
            out.backward(retain_graph=True)
            with (
                detect_anomaly(check_nan=True),
                pytest.raises(
                    RuntimeError,
                    match=r"Function 'MyFuncBackward' returned nan values in its 0th output\.",
                ),
            ):
                out.backward(retain_graph=True)
            out.backward()


def test_naughty_anomaly_access():
    # a Function node outlives its output: its metadata dict stays usable (the seed notes that
    # PyTorch fails here, "but shouldn't")
    class MyFunction(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = dualad.zeros(1, requires_grad=True)
    y = MyFunction.apply(x)
    y.backward()
    g = y.grad_fn
    del y
    assert g.metadata == {}
    g.metadata["key"] = 1
    assert g.metadata == {"key": 1}
    np.testing.assert_allclose(x.grad.numpy(), [1.0])
