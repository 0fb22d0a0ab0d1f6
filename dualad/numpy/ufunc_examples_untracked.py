"""The examples of the ufuncs of ``dualad.numpy`` without a derivative (comparisons,
predicates, logical, bitwise and integer ufuncs: untracked results), appended to their
docstrings by ``ufunc_table``. The outputs were checked against NumPy's when written.

>>> import dualad.numpy as dnp
>>> ">>> dnp.gcd(x, y)" in dnp.gcd.__doc__
True
"""

# name: the doctest lines (``ufunc_table`` adds ``>>> import dualad, dualad.numpy as dnp``)
EXAMPLES = {
    "bitwise_and": """\
>>> x, y = dualad.tensor([12, 10]), dualad.tensor([10, 6])
>>> dnp.bitwise_and(x, y)
tensor([8, 2])
""",
    "bitwise_count": """\
>>> x = dualad.tensor([7, 8])
>>> dnp.bitwise_count(x)
tensor([3, 1], dtype=uint8)
""",
    "bitwise_or": """\
>>> x, y = dualad.tensor([12, 10]), dualad.tensor([10, 6])
>>> dnp.bitwise_or(x, y)
tensor([14, 14])
""",
    "bitwise_xor": """\
>>> x, y = dualad.tensor([12, 10]), dualad.tensor([10, 6])
>>> dnp.bitwise_xor(x, y)
tensor([ 6, 12])
""",
    "equal": """\
>>> x, y = dualad.tensor([0.5, 2.0]), dualad.tensor([1.5, 2.0])
>>> dnp.equal(x, y)
tensor([False,  True])
""",
    "floor_divide": """\
>>> x, y = dualad.tensor([2.5, 7.0]), dualad.tensor([2.0, 3.0])
>>> dnp.floor_divide(x, y)
tensor([1., 2.])
""",
    "gcd": """\
>>> x, y = dualad.tensor([12, 10]), dualad.tensor([8, 4])
>>> dnp.gcd(x, y)
tensor([4, 2])
""",
    "greater": """\
>>> x, y = dualad.tensor([0.5, 2.0]), dualad.tensor([1.5, 2.0])
>>> dnp.greater(x, y)
tensor([False, False])
""",
    "greater_equal": """\
>>> x, y = dualad.tensor([0.5, 2.0]), dualad.tensor([1.5, 2.0])
>>> dnp.greater_equal(x, y)
tensor([False,  True])
""",
    "invert": """\
>>> x = dualad.tensor([0, 5])
>>> dnp.invert(x)
tensor([-1, -6])
""",
    "isfinite": """\
>>> x = dualad.tensor([1.0, dnp.inf, dnp.nan])
>>> dnp.isfinite(x)
tensor([ True, False, False])
""",
    "isinf": """\
>>> x = dualad.tensor([1.0, dnp.inf, dnp.nan])
>>> dnp.isinf(x)
tensor([False,  True, False])
""",
    "isnan": """\
>>> x = dualad.tensor([1.0, dnp.inf, dnp.nan])
>>> dnp.isnan(x)
tensor([False, False,  True])
""",
    "lcm": """\
>>> x, y = dualad.tensor([12, 10]), dualad.tensor([8, 4])
>>> dnp.lcm(x, y)
tensor([24, 20])
""",
    "left_shift": """\
>>> x, y = dualad.tensor([1, 8]), dualad.tensor([2, 1])
>>> dnp.left_shift(x, y)
tensor([ 4, 16])
""",
    "less": """\
>>> x, y = dualad.tensor([0.5, 2.0]), dualad.tensor([1.5, 2.0])
>>> dnp.less(x, y)
tensor([ True, False])
""",
    "less_equal": """\
>>> x, y = dualad.tensor([0.5, 2.0]), dualad.tensor([1.5, 2.0])
>>> dnp.less_equal(x, y)
tensor([ True,  True])
""",
    "logical_and": """\
>>> x, y = dualad.tensor([True, True, False]), dualad.tensor([True, False, False])
>>> dnp.logical_and(x, y)
tensor([ True, False, False])
""",
    "logical_not": """\
>>> x = dualad.tensor([True, False])
>>> dnp.logical_not(x)
tensor([False,  True])
""",
    "logical_or": """\
>>> x, y = dualad.tensor([True, True, False]), dualad.tensor([True, False, False])
>>> dnp.logical_or(x, y)
tensor([ True,  True, False])
""",
    "logical_xor": """\
>>> x, y = dualad.tensor([True, True, False]), dualad.tensor([True, False, False])
>>> dnp.logical_xor(x, y)
tensor([False,  True, False])
""",
    "nextafter": """\
>>> x, y = dualad.tensor([1.0, 2.0]), dualad.tensor([2.0, 1.0])
>>> dnp.nextafter(x, y) - x
tensor([ 2.22044605e-16, -2.22044605e-16])
""",
    "not_equal": """\
>>> x, y = dualad.tensor([0.5, 2.0]), dualad.tensor([1.5, 2.0])
>>> dnp.not_equal(x, y)
tensor([ True, False])
""",
    "right_shift": """\
>>> x, y = dualad.tensor([1, 8]), dualad.tensor([2, 1])
>>> dnp.right_shift(x, y)
tensor([0, 4])
""",
    "signbit": """\
>>> x = dualad.tensor([-0.5, 0.0, 2.0])
>>> dnp.signbit(x)
tensor([ True, False, False])
""",
    "spacing": """\
>>> x = dualad.tensor([1.0, 1e10])
>>> dnp.spacing(x)
tensor([2.22044605e-16, 1.90734863e-06])
""",
}
