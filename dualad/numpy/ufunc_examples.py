"""The examples of the differentiable ufuncs of ``dualad.numpy`` (``ufunc_table`` appends each
to its ufunc's docstring, where ``help()`` shows it and doctest runs it): a call on a small
tensor and its gradient by ``dualad.autograd.grad``. The outputs were checked against NumPy's
values and central differences when written.

>>> import dualad.numpy as dnp
>>> ">>> dnp.sin(x)" in dnp.sin.__doc__
True
"""

# name: the doctest lines (``ufunc_table`` adds ``>>> import dualad, dualad.numpy as dnp``)
EXAMPLES = {
    "absolute": """\
>>> x = dualad.tensor([-0.5, 2.0], requires_grad=True)
>>> dnp.absolute(x)
tensor([0.5, 2. ], grad_fn=<AbsBackward0>)
>>> dualad.autograd.grad(dnp.absolute(x).sum(), x)
(tensor([-1.,  1.]),)
""",
    "add": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.add(x, y)
tensor([2., 5.], grad_fn=<AddBackward0>)
>>> dualad.autograd.grad(dnp.add(x, y).sum(), (x, y))
(tensor([1., 1.]), tensor([1., 1.]))
""",
    "arccos": """\
>>> x = dualad.tensor([0.25, 0.5], requires_grad=True)
>>> dnp.arccos(x)
tensor([1.31811607, 1.04719755], grad_fn=<AcosBackward0>)
>>> dualad.autograd.grad(dnp.arccos(x).sum(), x)
(tensor([-1.03279556, -1.15470054]),)
""",
    "arccosh": """\
>>> x = dualad.tensor([1.5, 2.0], requires_grad=True)
>>> dnp.arccosh(x)
tensor([0.96242365, 1.3169579 ], grad_fn=<AcoshBackward0>)
>>> dualad.autograd.grad(dnp.arccosh(x).sum(), x)
(tensor([0.89442719, 0.57735027]),)
""",
    "arcsin": """\
>>> x = dualad.tensor([0.25, 0.5], requires_grad=True)
>>> dnp.arcsin(x)
tensor([0.25268026, 0.52359878], grad_fn=<AsinBackward0>)
>>> dualad.autograd.grad(dnp.arcsin(x).sum(), x)
(tensor([1.03279556, 1.15470054]),)
""",
    "arcsinh": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.arcsinh(x)
tensor([0.48121183, 1.44363548], grad_fn=<AsinhBackward0>)
>>> dualad.autograd.grad(dnp.arcsinh(x).sum(), x)
(tensor([0.89442719, 0.4472136 ]),)
""",
    "arctan": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.arctan(x)
tensor([0.46364761, 1.10714872], grad_fn=<AtanBackward0>)
>>> dualad.autograd.grad(dnp.arctan(x).sum(), x)
(tensor([0.8, 0.2]),)
""",
    "arctan2": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.arctan2(x, y)
tensor([0.32175055, 0.5880026 ], grad_fn=<Atan2Backward0>)
>>> dualad.autograd.grad(dnp.arctan2(x, y).sum(), (x, y))
(tensor([0.6       , 0.23076923]), tensor([-0.2       , -0.15384615]))
""",
    "arctanh": """\
>>> x = dualad.tensor([0.25, 0.5], requires_grad=True)
>>> dnp.arctanh(x)
tensor([0.25541281, 0.54930614], grad_fn=<AtanhBackward0>)
>>> dualad.autograd.grad(dnp.arctanh(x).sum(), x)
(tensor([1.06666667, 1.33333333]),)
""",
    "cbrt": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.cbrt(x)
tensor([0.79370053, 1.25992105], grad_fn=<CbrtBackward0>)
>>> dualad.autograd.grad(dnp.cbrt(x).sum(), x)
(tensor([0.52913368, 0.20998684]),)
""",
    "ceil": """\
>>> x = dualad.tensor([0.5, 2.25], requires_grad=True)
>>> dnp.ceil(x)
tensor([1., 3.], grad_fn=<CeilBackward0>)
>>> dualad.autograd.grad(dnp.ceil(x).sum(), x)
(tensor([0., 0.]),)
""",
    "conjugate": """\
>>> z = dualad.tensor([1.0 + 2.0j, 3.0 - 1.0j], requires_grad=True)
>>> dnp.conjugate(z)
tensor([1.-2.j, 3.+1.j], grad_fn=<ConjBackward0>)
>>> dualad.autograd.grad(dnp.imag(dnp.conjugate(z)).sum(), z)
(tensor([0.-1.j, 0.-1.j]),)
""",
    "copysign": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([-1.0, 3.0], requires_grad=True)
>>> dnp.copysign(x, y)
tensor([-0.5,  2. ], grad_fn=<CopysignBackward0>)
>>> dualad.autograd.grad(dnp.copysign(x, y).sum(), (x, y))
(tensor([-1.,  1.]), tensor([0., 0.]))
""",
    "cos": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.cos(x)
tensor([ 0.87758256, -0.41614684], grad_fn=<CosBackward0>)
>>> dualad.autograd.grad(dnp.cos(x).sum(), x)
(tensor([-0.47942554, -0.90929743]),)
""",
    "cosh": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.cosh(x)
tensor([1.12762597, 3.76219569], grad_fn=<CoshBackward0>)
>>> dualad.autograd.grad(dnp.cosh(x).sum(), x)
(tensor([0.52109531, 3.62686041]),)
""",
    "deg2rad": """\
>>> x = dualad.tensor([90.0, 180.0], requires_grad=True)
>>> dnp.deg2rad(x)
tensor([1.57079633, 3.14159265], grad_fn=<Deg2radBackward0>)
>>> dualad.autograd.grad(dnp.deg2rad(x).sum(), x)
(tensor([0.01745329, 0.01745329]),)
""",
    "degrees": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.degrees(x)
tensor([ 28.64788976, 114.59155903], grad_fn=<Rad2degBackward0>)
>>> dualad.autograd.grad(dnp.degrees(x).sum(), x)
(tensor([57.29577951, 57.29577951]),)
""",
    "divide": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.divide(x, y)
tensor([0.33333333, 0.66666667], grad_fn=<DivBackward0>)
>>> dualad.autograd.grad(dnp.divide(x, y).sum(), (x, y))
(tensor([0.66666667, 0.33333333]), tensor([-0.22222222, -0.22222222]))
""",
    "divmod": """\
>>> x = dualad.tensor([2.5, 7.0], requires_grad=True)
>>> q, r = dnp.divmod(x, 2.0)
>>> q, r
(tensor([1., 3.]), tensor([0.5, 1. ], grad_fn=<RemainderBackward0>))
>>> dualad.autograd.grad(r.sum(), x)
(tensor([1., 1.]),)
""",
    "exp": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.exp(x)
tensor([1.64872127, 7.3890561 ], grad_fn=<ExpBackward0>)
>>> dualad.autograd.grad(dnp.exp(x).sum(), x)
(tensor([1.64872127, 7.3890561 ]),)
""",
    "exp2": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.exp2(x)
tensor([1.41421356, 4.        ], grad_fn=<Exp2Backward0>)
>>> dualad.autograd.grad(dnp.exp2(x).sum(), x)
(tensor([0.98025814, 2.77258872]),)
""",
    "expm1": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.expm1(x)
tensor([0.64872127, 6.3890561 ], grad_fn=<Expm1Backward0>)
>>> dualad.autograd.grad(dnp.expm1(x).sum(), x)
(tensor([1.64872127, 7.3890561 ]),)
""",
    "fabs": """\
>>> x = dualad.tensor([-0.5, 2.0], requires_grad=True)
>>> dnp.fabs(x)
tensor([0.5, 2. ], grad_fn=<AbsBackward0>)
>>> dualad.autograd.grad(dnp.fabs(x).sum(), x)
(tensor([-1.,  1.]),)
""",
    "float_power": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.float_power(x, y)
tensor([0.35355339, 8.        ], grad_fn=<PowBackward0>)
>>> dualad.autograd.grad(dnp.float_power(x, y).sum(), (x, y))
(tensor([ 1.06066017, 12.        ]), tensor([-0.24506454,  5.54517744]))
""",
    "floor": """\
>>> x = dualad.tensor([0.5, 2.25], requires_grad=True)
>>> dnp.floor(x)
tensor([0., 2.], grad_fn=<FloorBackward0>)
>>> dualad.autograd.grad(dnp.floor(x).sum(), x)
(tensor([0., 0.]),)
""",
    "fmax": """\
>>> x = dualad.tensor([0.5, 4.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.fmax(x, y)
tensor([1.5, 4. ], grad_fn=<FmaxBackward0>)
>>> dualad.autograd.grad(dnp.fmax(x, y).sum(), (x, y))
(tensor([0., 1.]), tensor([1., 0.]))
""",
    "fmin": """\
>>> x = dualad.tensor([0.5, 4.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.fmin(x, y)
tensor([0.5, 3. ], grad_fn=<FminBackward0>)
>>> dualad.autograd.grad(dnp.fmin(x, y).sum(), (x, y))
(tensor([1., 0.]), tensor([0., 1.]))
""",
    "fmod": """\
>>> x = dualad.tensor([2.5, -7.0], requires_grad=True)
>>> y = dualad.tensor([2.0, 3.0], requires_grad=True)
>>> dnp.fmod(x, y)
tensor([ 0.5, -1. ], grad_fn=<FmodBackward0>)
>>> dualad.autograd.grad(dnp.fmod(x, y).sum(), (x, y))
(tensor([1., 1.]), tensor([-1.,  2.]))
""",
    "frexp": """\
>>> x = dualad.tensor([0.5, 6.0], requires_grad=True)
>>> mantissa, exponent = dnp.frexp(x)
>>> mantissa, exponent
(tensor([0.5 , 0.75], grad_fn=<LdexpBackward0>), tensor([0, 3], dtype=int32))
>>> dualad.autograd.grad(mantissa.sum(), x)
(tensor([1.   , 0.125]),)
""",
    "heaviside": """\
>>> x = dualad.tensor([-0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([0.5, 0.5], requires_grad=True)
>>> dnp.heaviside(x, y)
tensor([0., 1.], grad_fn=<HeavisideBackward0>)
>>> dualad.autograd.grad(dnp.heaviside(x, y).sum(), (x, y))
(tensor([0., 0.]), tensor([0., 0.]))
""",
    "hypot": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.hypot(x, y)
tensor([1.58113883, 3.60555128], grad_fn=<HypotBackward0>)
>>> dualad.autograd.grad(dnp.hypot(x, y).sum(), (x, y))
(tensor([0.31622777, 0.5547002 ]), tensor([0.9486833 , 0.83205029]))
""",
    "ldexp": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.ldexp(x, dualad.tensor([1, 2]))
tensor([1., 8.], grad_fn=<LdexpBackward0>)
>>> dualad.autograd.grad(dnp.ldexp(x, dualad.tensor([1, 2])).sum(), x)
(tensor([2., 4.]),)
""",
    "log": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.log(x)
tensor([-0.69314718,  0.69314718], grad_fn=<LogBackward0>)
>>> dualad.autograd.grad(dnp.log(x).sum(), x)
(tensor([2. , 0.5]),)
""",
    "log10": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.log10(x)
tensor([-0.30103,  0.30103], grad_fn=<Log10Backward0>)
>>> dualad.autograd.grad(dnp.log10(x).sum(), x)
(tensor([0.86858896, 0.21714724]),)
""",
    "log1p": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.log1p(x)
tensor([0.40546511, 1.09861229], grad_fn=<Log1pBackward0>)
>>> dualad.autograd.grad(dnp.log1p(x).sum(), x)
(tensor([0.66666667, 0.33333333]),)
""",
    "log2": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.log2(x)
tensor([-1.,  1.], grad_fn=<Log2Backward0>)
>>> dualad.autograd.grad(dnp.log2(x).sum(), x)
(tensor([2.88539008, 0.72134752]),)
""",
    "logaddexp": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.logaddexp(x, y)
tensor([1.81326169, 3.31326169], grad_fn=<LogaddexpBackward0>)
>>> dualad.autograd.grad(dnp.logaddexp(x, y).sum(), (x, y))
(tensor([0.26894142, 0.26894142]), tensor([0.73105858, 0.73105858]))
""",
    "logaddexp2": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.logaddexp2(x, y)
tensor([2.0849625, 3.5849625], grad_fn=<Logaddexp2Backward0>)
>>> dualad.autograd.grad(dnp.logaddexp2(x, y).sum(), (x, y))
(tensor([0.33333333, 0.33333333]), tensor([0.66666667, 0.66666667]))
""",
    "matmul": """\
>>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> v = dualad.tensor([1.0, -1.0], requires_grad=True)
>>> dnp.matmul(a, v)
tensor([-1., -1.], grad_fn=<MmBackward0>)
>>> dualad.autograd.grad(dnp.matmul(a, v).sum(), (a, v))
(tensor([[ 1., -1.],
        [ 1., -1.]]), tensor([4., 6.]))
""",
    "matvec": """\
>>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> v = dualad.tensor([1.0, -1.0], requires_grad=True)
>>> dnp.matvec(a, v)
tensor([-1., -1.], grad_fn=<SliceBackward0>)
>>> dualad.autograd.grad(dnp.matvec(a, v).sum(), (a, v))
(tensor([[ 1., -1.],
        [ 1., -1.]]), tensor([4., 6.]))
""",
    "maximum": """\
>>> x = dualad.tensor([0.5, 4.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.maximum(x, y)
tensor([1.5, 4. ], grad_fn=<MaximumBackward0>)
>>> dualad.autograd.grad(dnp.maximum(x, y).sum(), (x, y))
(tensor([0., 1.]), tensor([1., 0.]))
""",
    "minimum": """\
>>> x = dualad.tensor([0.5, 4.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.minimum(x, y)
tensor([0.5, 3. ], grad_fn=<MinimumBackward0>)
>>> dualad.autograd.grad(dnp.minimum(x, y).sum(), (x, y))
(tensor([1., 0.]), tensor([0., 1.]))
""",
    "modf": """\
>>> x = dualad.tensor([0.5, 2.25], requires_grad=True)
>>> fractional, integral = dnp.modf(x)
>>> fractional, integral
(tensor([0.5 , 0.25], grad_fn=<FracBackward0>), tensor([0., 2.], grad_fn=<TruncBackward0>))
>>> dualad.autograd.grad(fractional.sum(), x)
(tensor([1., 1.]),)
""",
    "multiply": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.multiply(x, y)
tensor([0.75, 6.  ], grad_fn=<MulBackward0>)
>>> dualad.autograd.grad(dnp.multiply(x, y).sum(), (x, y))
(tensor([1.5, 3. ]), tensor([0.5, 2. ]))
""",
    "negative": """\
>>> x = dualad.tensor([-0.5, 2.0], requires_grad=True)
>>> dnp.negative(x)
tensor([ 0.5, -2. ], grad_fn=<NegBackward0>)
>>> dualad.autograd.grad(dnp.negative(x).sum(), x)
(tensor([-1., -1.]),)
""",
    "positive": """\
>>> x = dualad.tensor([-0.5, 2.0], requires_grad=True)
>>> dnp.positive(x)
tensor([-0.5,  2. ], requires_grad=True)
>>> dualad.autograd.grad(dnp.positive(x).sum(), x)
(tensor([1., 1.]),)
""",
    "power": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.power(x, y)
tensor([0.35355339, 8.        ], grad_fn=<PowBackward0>)
>>> dualad.autograd.grad(dnp.power(x, y).sum(), (x, y))
(tensor([ 1.06066017, 12.        ]), tensor([-0.24506454,  5.54517744]))
""",
    "rad2deg": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.rad2deg(x)
tensor([ 28.64788976, 114.59155903], grad_fn=<Rad2degBackward0>)
>>> dualad.autograd.grad(dnp.rad2deg(x).sum(), x)
(tensor([57.29577951, 57.29577951]),)
""",
    "radians": """\
>>> x = dualad.tensor([90.0, 180.0], requires_grad=True)
>>> dnp.radians(x)
tensor([1.57079633, 3.14159265], grad_fn=<Deg2radBackward0>)
>>> dualad.autograd.grad(dnp.radians(x).sum(), x)
(tensor([0.01745329, 0.01745329]),)
""",
    "reciprocal": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.reciprocal(x)
tensor([2. , 0.5], grad_fn=<ReciprocalBackward0>)
>>> dualad.autograd.grad(dnp.reciprocal(x).sum(), x)
(tensor([-4.  , -0.25]),)
""",
    "remainder": """\
>>> x = dualad.tensor([2.5, 7.0], requires_grad=True)
>>> y = dualad.tensor([2.0, 3.0], requires_grad=True)
>>> dnp.remainder(x, y)
tensor([0.5, 1. ], grad_fn=<RemainderBackward0>)
>>> dualad.autograd.grad(dnp.remainder(x, y).sum(), (x, y))
(tensor([1., 1.]), tensor([-1., -2.]))
""",
    "rint": """\
>>> x = dualad.tensor([0.25, 2.75], requires_grad=True)
>>> dnp.rint(x)
tensor([0., 3.], grad_fn=<RoundBackward0>)
>>> dualad.autograd.grad(dnp.rint(x).sum(), x)
(tensor([0., 0.]),)
""",
    "sign": """\
>>> x = dualad.tensor([-0.5, 2.0], requires_grad=True)
>>> dnp.sign(x)
tensor([-1.,  1.], grad_fn=<SignBackward0>)
>>> dualad.autograd.grad(dnp.sign(x).sum(), x)
(tensor([0., 0.]),)
""",
    "sin": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.sin(x)
tensor([0.47942554, 0.90929743], grad_fn=<SinBackward0>)
>>> dualad.autograd.grad(dnp.sin(x).sum(), x)
(tensor([ 0.87758256, -0.41614684]),)
""",
    "sinh": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.sinh(x)
tensor([0.52109531, 3.62686041], grad_fn=<SinhBackward0>)
>>> dualad.autograd.grad(dnp.sinh(x).sum(), x)
(tensor([1.12762597, 3.76219569]),)
""",
    "sqrt": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.sqrt(x)
tensor([0.70710678, 1.41421356], grad_fn=<SqrtBackward0>)
>>> dualad.autograd.grad(dnp.sqrt(x).sum(), x)
(tensor([0.70710678, 0.35355339]),)
""",
    "square": """\
>>> x = dualad.tensor([-0.5, 2.0], requires_grad=True)
>>> dnp.square(x)
tensor([0.25, 4.  ], grad_fn=<SquareBackward0>)
>>> dualad.autograd.grad(dnp.square(x).sum(), x)
(tensor([-1.,  4.]),)
""",
    "subtract": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = dualad.tensor([1.5, 3.0], requires_grad=True)
>>> dnp.subtract(x, y)
tensor([-1., -1.], grad_fn=<SubBackward0>)
>>> dualad.autograd.grad(dnp.subtract(x, y).sum(), (x, y))
(tensor([1., 1.]), tensor([-1., -1.]))
""",
    "tan": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.tan(x)
tensor([ 0.54630249, -2.18503986], grad_fn=<TanBackward0>)
>>> dualad.autograd.grad(dnp.tan(x).sum(), x)
(tensor([1.29844641, 5.7743992 ]),)
""",
    "tanh": """\
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> dnp.tanh(x)
tensor([0.46211716, 0.96402758], grad_fn=<TanhBackward0>)
>>> dualad.autograd.grad(dnp.tanh(x).sum(), x)
(tensor([0.78644773, 0.07065082]),)
""",
    "trunc": """\
>>> x = dualad.tensor([-0.5, 2.25], requires_grad=True)
>>> dnp.trunc(x)
tensor([-0.,  2.], grad_fn=<TruncBackward0>)
>>> dualad.autograd.grad(dnp.trunc(x).sum(), x)
(tensor([0., 0.]),)
""",
    "vecdot": """\
>>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
>>> y = dualad.tensor([3.0, -1.0], requires_grad=True)
>>> dnp.vecdot(x, y)
tensor(1., grad_fn=<SumBackward0>)
>>> dualad.autograd.grad(dnp.vecdot(x, y), (x, y))
(tensor([ 3., -1.]), tensor([1., 2.]))
""",
    "vecmat": """\
>>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> v = dualad.tensor([1.0, -1.0], requires_grad=True)
>>> dnp.vecmat(v, a)
tensor([-2., -2.], grad_fn=<SliceBackward0>)
>>> dualad.autograd.grad(dnp.vecmat(v, a).sum(), (v, a))
(tensor([3., 7.]), tensor([[ 1.,  1.],
        [-1., -1.]]))
""",
}
