"""``dualad.numpy``'s printing, saving and loading against NumPy's on the same values; NumPy's
own functions answering on tensors; tracked tensors refused (``TrackedConversionError``) rather
than written or printed without what they track."""

from __future__ import annotations

import io

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad import func
from dualad._errors import TrackedConversionError

A = np.random.default_rng(7).normal(size=(3, 4))


@pytest.mark.parametrize("via", [dnp, np])
def test_printing_is_numpys_text_of_the_values(via):
    t = dualad.tensor(A)
    assert via.array2string(t, precision=3, separator=", ") == np.array2string(
        A, precision=3, separator=", "
    )
    assert via.array2string(t, suffix=")", prefix="x(") == np.array2string(
        A, suffix=")", prefix="x("
    )
    assert via.array_repr(t, precision=2) == np.array_repr(A, precision=2)
    assert via.array_str(t, max_line_width=30) == np.array_str(A, max_line_width=30)
    x = dualad.tensor(np.float32(1 / 3))
    assert dnp.format_float_positional(x, precision=4) == np.format_float_positional(
        np.float32(1 / 3), precision=4
    )
    assert dnp.format_float_scientific(x, exp_digits=3) == np.format_float_scientific(
        np.float32(1 / 3), exp_digits=3
    )
    assert dnp.format_float_positional(2.5, pad_left=3) == np.format_float_positional(
        2.5, pad_left=3
    )


@pytest.mark.parametrize("via", [dnp, np])
def test_saving_writes_the_values(via, tmp_path):
    t, u = dualad.tensor(A), dualad.tensor(np.arange(3))
    f = io.BytesIO()
    via.save(f, t)
    f.seek(0)
    np.testing.assert_array_equal(np.load(f), A)
    for saver in (via.savez, via.savez_compressed):
        path = tmp_path / f"{saver.__name__}.npz"
        saver(path, t, ints=u)
        with np.load(path) as data:
            np.testing.assert_array_equal(data["arr_0"], A)
            assert data["ints"].dtype == np.arange(3).dtype
    ours, theirs = io.StringIO(), io.StringIO()
    via.savetxt(ours, t, fmt="%.6f", delimiter=",", header="h")
    np.savetxt(theirs, A, fmt="%.6f", delimiter=",", header="h")
    assert ours.getvalue() == theirs.getvalue()


def test_loading_returns_untracked_tensors(tmp_path):
    text = io.StringIO("1 2\n3 4\n")
    got = dnp.loadtxt(text, dtype=np.int32)
    assert isinstance(got, dualad.Tensor) and got.dtype == np.int32 and not got.requires_grad
    np.testing.assert_array_equal(got.numpy(), [[1, 2], [3, 4]])
    cols = dnp.loadtxt(io.StringIO("1 2\n3 4\n"), unpack=True)
    np.testing.assert_array_equal(cols[1].numpy(), [2.0, 4.0])
    assert dnp.fromiter((i * i for i in range(4)), np.int16).dtype == np.int16
    buffer = np.arange(4, dtype=np.float32).tobytes()
    np.testing.assert_array_equal(dnp.frombuffer(buffer, np.float32, offset=4).numpy(), [1, 2, 3])
    np.testing.assert_array_equal(dnp.fromstring("1,2,3", sep=",").numpy(), [1.0, 2.0, 3.0])
    path = tmp_path / "raw.bin"
    A.tofile(path)
    np.testing.assert_array_equal(dnp.fromfile(path, count=5).numpy(), A.ravel()[:5])
    like = np.fromiter(range(3), int, like=dualad.tensor(A))  # NumPy's like= dispatches to ours
    assert isinstance(like, dualad.Tensor)


def test_tracked_values_are_refused():
    t = dualad.tensor(A, requires_grad=True)
    for call in (
        lambda: dnp.array2string(t),
        lambda: np.array_repr(t),
        lambda: dnp.save(io.BytesIO(), t),
        lambda: np.savetxt(io.StringIO(), t),
        lambda: dnp.savez(io.BytesIO(), a=t),
        lambda: dnp.format_float_positional(t[0, 0]),
    ):
        with pytest.raises(TrackedConversionError):
            call()
    with pytest.raises(TrackedConversionError):
        func.grad(lambda x: (dnp.array_str(x), x.sum())[1])(dualad.tensor(A))
    np.testing.assert_array_equal(A, t.detach().numpy())  # untouched
