"""The levels' wrappers share one base and the Level protocol (issue 12).

A level that wraps its values (vmap's ``BatchedTensor``, the ``func.grad`` tape's ``GradTensor``,
a later tracing level's tracer) subclasses ``dualad._wrapper.LevelTensor``: what every wrapper
forwards to its value is defined there once, and a level overrides only what it reports
differently. A custom Function call reaches a level through ``Level.apply_function``.
"""

from __future__ import annotations

import pytest

import dualad
from dualad._dispatch import Level
from dualad._wrapper import LevelTensor
from dualad.autograd import Function
from dualad.func.grad_level import GradLevel, GradTensor
from dualad.fwd.levels import DualLevel
from dualad.rev.function import run
from dualad.vmap.batched import BatchedTensor, VmapLevel

# forwarded to the value (or computed from ``shape``) by the base alone
SHARED = ("dim", "dtype", "device", "is_cuda", "size", "numel", "nelement", "__len__")
SHARED += ("requires_grad", "_version", "item", "tolist", "__array__", "__float__", "__int__")
SHARED += ("__complex__",)


@pytest.mark.parametrize("cls", [BatchedTensor, GradTensor])
@pytest.mark.parametrize("name", SHARED)
def test_wrappers_inherit_the_forwarding_members(cls, name):
    assert issubclass(cls, LevelTensor)
    assert name not in cls.__dict__, f"{cls.__name__} defines {name} again"
    assert getattr(cls, name) is getattr(LevelTensor, name)


@pytest.mark.parametrize("cls", [DualLevel, VmapLevel, GradLevel])
def test_each_level_has_its_own_function_rule(cls):
    assert cls.apply_function is not Level.apply_function


class _Bare(Level):
    """A level that owns everything and has no rule for custom Functions."""

    __slots__ = ()

    def owns(self, value) -> bool:
        return True


class _Double(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_a_level_without_a_function_rule_refuses_the_call():
    with pytest.raises(RuntimeError, match="_Double cannot run at"):
        _Bare().apply_function(_Double, (dualad.ones(2),))


def test_run_without_levels_is_the_eager_call():
    outputs, is_tuple, ctx, _ = run(_Double, (dualad.ones(2),))
    assert not is_tuple
    assert outputs[0].tolist() == [2.0, 2.0]
    assert ctx.name() == "_DoubleBackward"
