"""scaled_dot_product_attention: values and gradients against numbers taken from PyTorch 2.13
(float64): boolean and float masks, causal masking, grouped-query attention, fully masked rows
(output 0, gradient 0), dropout under vmap, per-example gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.func import grad, jacfwd, jacrev, vmap


def close(actual, expected, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual.detach().numpy()), expected, rtol=rtol, atol=atol)


def qkv():
    q = dualad.sin(dualad.arange(24.0)).reshape(1, 2, 3, 4)
    k = dualad.cos(dualad.arange(40.0)).reshape(1, 2, 5, 4)
    v = dualad.sin(dualad.arange(40.0) * 0.7).reshape(1, 2, 5, 4)
    return q, k, v


MASK = [[True, True, False, False, True], [False] * 5, [True, False, True, False, False]]


def test_boolean_mask_with_a_fully_masked_row_matches_pytorch():
    q, k, v = qkv()
    q.requires_grad_()
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=dualad.tensor(MASK))
    close(
        y[0, 0, 0],
        [-0.15783192194434265, -0.19964881394570155, -0.14756774914962528, -0.026083266118795342],
    )
    close(y[0, 0, 1], [0.0] * 4)  # no key: output 0 (PyTorch too), no NaN
    (g,) = dualad.autograd.grad(y.sum(), q)
    close(
        g[0, 0, 0],
        [0.6085932891344517, 0.12367784194877157, -0.4749464427550184, -0.6369071583175853],
        rtol=1e-8,
    )
    close(g[0, 0, 1], [0.0] * 4)
    assert np.isfinite(g.numpy()).all()


def test_causal_float_mask_and_gqa_match_pytorch():
    q, k, v = qkv()
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)
    close(
        y[0, 1, 0],
        [0.9906073556948704, 0.8457468311429343, 0.303118356745704, -0.38207141718400583],
    )
    close(
        y[0, 1, 2],
        [0.024520038365399, -0.020124967128569204, -0.05530488612068509, -0.06447405300755964],
    )
    mask = dualad.sin(dualad.arange(15.0)).reshape(3, 5)
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    close(
        y[0, 1, 0],
        [0.020021614117441168, 0.1640150678911429, 0.2308696724295099, 0.18914266258613663],
    )
    y = F.scaled_dot_product_attention(q, k[:, :1], v[:, :1], enable_gqa=True)
    close(
        y[0, 1, 0],
        [-0.1590085950841098, -0.2586881931675071, -0.23670269188970613, -0.1033922160345922],
    )


def test_second_order_and_forward_mode_at_masked_rows():
    q, k, v = qkv()
    mask = dualad.tensor(MASK)

    def f(q):
        return (F.scaled_dot_product_attention(q, k, v, attn_mask=mask) ** 2).sum()

    h_rev = jacrev(jacrev(f))(q).numpy()
    h_fwd = jacfwd(jacrev(f))(q).numpy()
    assert np.isfinite(h_rev).all()
    np.testing.assert_allclose(h_rev, h_fwd, atol=1e-12)
    assert not h_rev[0, :, 1].any()  # the fully masked query has no second derivatives


def test_per_example_gradients_and_dropout_under_vmap():
    q, k, v = qkv()
    qs = q[0]  # a batch of 2 "examples" (the heads), each (3, 4)

    def loss(k, q):
        return F.scaled_dot_product_attention(q, k, v[0, 0]).sum()

    per_example = vmap(grad(loss), in_dims=(None, 0))(k[0, 0], qs)
    for i in range(2):
        close(per_example[i], grad(loss)(k[0, 0], qs[i]).numpy())
    with pytest.raises(RuntimeError, match=r"vmap: .*random"):
        vmap(lambda q: F.scaled_dot_product_attention(q, k[0, 0], v[0, 0], dropout_p=0.5))(qs)
    out = vmap(
        lambda q: F.scaled_dot_product_attention(q, k[0, 0], v[0, 0], dropout_p=0.5),
        randomness="different",
    )(qs)
    assert out.shape == (2, 3, 4)


def test_attention_errors():
    q, k, v = qkv()
    with pytest.raises(ValueError, match="Explicit attn_mask should not be set when is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=dualad.tensor(MASK), is_causal=True)
    with pytest.raises(ValueError, match="do not fit"):
        F.scaled_dot_product_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match="enable_gqa"):
        F.scaled_dot_product_attention(q, k[:, :1].expand(1, 3, 5, 4), v, enable_gqa=True)
