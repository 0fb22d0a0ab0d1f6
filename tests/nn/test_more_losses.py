"""Distances, margin and likelihood losses of dualad.nn.functional: values and gradients against
numbers taken from PyTorch 2.13 (float64) and errors. (Finite differences, JVPs, vmap against
loops and second order come from the op database entries.)"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F

VAR = [
    [0.9700530018065531, 0.707819864399788, 0.45938294312745087, 0.9207476841219603],
    [0.6450241201227648, 0.7911478921803037, 0.17860617520075095, 0.3511076243939284],
    [0.5813409198075745, 0.2882358921361502, 0.4528688488811142, 0.17679952620371409],
]
SIGNS = [[1.0, -1, 1, -1]] * 3
Y = [1.0, -1.0, 1.0]

CASES = [
    (
        "cosine_similarity",
        lambda a, b, c: F.cosine_similarity(a, b),
        [-0.03254670551323871, 0.2248430046788241, -0.03456404875579326],
        [0.5128673211016592, 0.2947178357969782, -0.19439386857850915, -0.5047807466761712],
    ),
    (
        "pairwise_distance",
        lambda a, b, c: F.pairwise_distance(a, b),
        [2.031483222213776, 1.7608586150176857, 2.0334207925283443],
        [-0.49225068120930243, 0.14825112786881003, 0.6524519862529021, 0.5567919499860303],
    ),
    (
        "pairwise_distance p=1",
        lambda a, b, c: F.pairwise_distance(a, b, p=1.0),
        [3.7577274469728934, 2.6822427750444886, 3.7575753502842657],
        [-1.0, 1.0, 1.0, 1.0],
    ),
    (
        "margin_ranking_loss",
        lambda a, b, c: F.margin_ranking_loss(a[:, 0], b[:, 0], dualad.tensor(Y), margin=0.3),
        0.4989470418518946,
        [-1 / 3, 0.0, 0.0, 0.0],
    ),
    (
        "hinge_embedding_loss",
        lambda a, b, c: F.hinge_embedding_loss(a, dualad.tensor(SIGNS), margin=0.5),
        0.3103410464137548,
        [1 / 12, 0.0, 1 / 12, -1 / 12],
    ),
    (
        "soft_margin_loss",
        lambda a, b, c: F.soft_margin_loss(a, dualad.tensor(SIGNS)),
        0.7443593554968476,
        [-1 / 24, 0.05823124432755626, -0.023928635580183207, 0.04460179739161259],
    ),
    (
        "multilabel_soft_margin_loss",
        lambda a, b, c: F.multilabel_soft_margin_loss(
            a, dualad.astype(b > 0, "float64"), weight=dualad.tensor([1.0, 2, 3, 4])
        ),
        2.095011238303329,
        [-1 / 24, -0.05020417801155414, 0.17821409325945037, 0.17840718956645035],
    ),
    (
        "cosine_embedding_loss",
        lambda a, b, c: F.cosine_embedding_loss(a, b, dualad.tensor(Y), margin=0.1),
        0.7306512529825694,
        [-0.17095577370046314, -0.09823927859893727, 0.06479795619280636, 0.1682602488919692],
    ),
    (
        "triplet_margin_loss",
        lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=1.5),
        2.7537066959959104,
        [0.04348161783165011, 0.11696665589643729, 0.08291284275821037, -0.027370902830950367],
    ),
    (
        "triplet_margin_loss swap p=1",
        lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=1.5, swap=True, p=1),
        3.6237845523298113,
        [0.0, 2 / 3, 0.0, 0.0],
    ),
    (
        "gaussian_nll_loss full",
        lambda a, b, c: F.gaussian_nll_loss(a, b, dualad.tensor(VAR) + 0.5, full=True),
        1.4226629486684983,
        [-0.05668729850619312, 0.020779083579750734, 0.11512992742432841, 0.0663449086996843],
    ),
    (
        "gaussian_nll_loss homoscedastic",
        lambda a, b, c: F.gaussian_nll_loss(a, b, dualad.tensor([0.5, 1, 2]), reduction="sum"),
        6.710933935466828,
        [-2.0, 0.6023373578795135, 2.650888526745648, 2.262225009320625],
    ),
    (
        "poisson_nll_loss full",
        lambda a, b, c: F.poisson_nll_loss(a, dualad.abs(b) * 3, full=True),
        1.9834054555065361,
        [-1 / 6, 0.0582391589259528, 0.1028447681977978, -0.1515345544405668],
    ),
    (
        "poisson_nll_loss rates",
        lambda a, b, c: F.poisson_nll_loss(dualad.abs(a) + 0.1, dualad.abs(b) * 3, log_input=False),
        2.206826786612821,
        [0.0, -0.060139569402875334, -0.01974501140515038, -0.94311866406433],
    ),
]


@pytest.mark.parametrize("name, fn, value, grad_row0", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch(name, fn, value, grad_row0):
    a = dualad.sin(dualad.arange(12.0)).reshape(3, 4).requires_grad_()
    b = dualad.cos(dualad.arange(12.0)).reshape(3, 4)
    c = dualad.sin(dualad.arange(12.0) + 0.5).reshape(3, 4)
    y = fn(a, b, c)
    (g,) = dualad.autograd.grad(y.sum(), a)
    np.testing.assert_allclose(y.detach().numpy(), value, rtol=1e-10)
    np.testing.assert_allclose(g[0].numpy(), grad_row0, rtol=1e-9, atol=1e-15)


def test_soft_margin_loss_is_stable_for_large_inputs():
    x = dualad.tensor([1000.0, -1000.0], requires_grad=True)
    loss = F.soft_margin_loss(x, dualad.tensor([-1.0, -1.0]), reduction="sum")
    np.testing.assert_allclose(loss.item(), 1000.0)
    (g,) = dualad.autograd.grad(loss, x)
    np.testing.assert_allclose(g.numpy(), [1.0, 0.0])


def test_gaussian_nll_clamped_variance_gets_no_gradient():
    # the derivative of the value computed: var < eps is clamped, so var gets 0 there
    var = dualad.tensor([1e-9, 2.0], requires_grad=True)
    loss = F.gaussian_nll_loss(dualad.tensor([1.0, 1.0]), dualad.tensor([0.0, 0.0]), var)
    (g,) = dualad.autograd.grad(loss, var)
    np.testing.assert_allclose(g.numpy(), [0.0, 0.5 * (1 / 2 - 1 / 4) / 2])


def test_errors():
    x = dualad.ones(2, 3)
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(x, x, -1.0)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, x, dualad.ones(3, 2))
    with pytest.raises(ValueError, match="is not valid"):
        F.gaussian_nll_loss(x, x, 1.0, reduction="avg")
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.triplet_margin_loss(x, x, x, reduction="avg")
    with pytest.raises(ValueError, match="same number of dimensions"):
        F.triplet_margin_loss(x, x, dualad.ones(3))
    with pytest.raises(ValueError, match="should have same dimension"):
        F.margin_ranking_loss(x, x, dualad.ones(3))


@pytest.mark.parametrize(
    "kwargs, value, grad_row2",
    [
        ({}, 0.5480488740021857, [1 / 12, -1 / 6, 1 / 12, 0.0]),
        (
            {"p": 2, "margin": 0.5},
            0.44642866738126513,
            [0.17953996023027086, -0.17953996023027086, 0, 0],
        ),
        (
            {"weight": [1.0, 2, 3, 4], "reduction": "none"},
            [1.2229721049233613, 0.06359790308228508, 0.8105500826252495],
            [0.5, -1.0, 0.5, 0.0],
        ),
    ],
)
def test_multi_margin_loss_matches_pytorch(kwargs, value, grad_row2):
    kwargs = {k: dualad.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
    x = dualad.sin(dualad.arange(12.0)).reshape(3, 4).requires_grad_()
    y = F.multi_margin_loss(x, dualad.tensor([0, 3, 1]), **kwargs)
    (g,) = dualad.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(y.detach().numpy(), value, rtol=1e-10)
    np.testing.assert_allclose(g[2].numpy(), grad_row2, rtol=1e-9, atol=1e-15)
