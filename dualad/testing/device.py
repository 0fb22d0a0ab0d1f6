"""The device the op-database tests run on, and the CuPy they run with.

``DUALAD_TEST_DEVICE=cuda`` makes the test helpers (``dualad.testing._numeric.to_tensor``,
``sample_to_tensors``, ``SampleInput.tensors``) put the samples' arrays on "cuda"; references and
finite differences stay NumPy (``as_numpy`` copies results back). CuPy is the real one when it
imports; otherwise, or with ``DUALAD_FAKE_CUPY=1``, the stand-in ``dualad.testing.fake_cupy``
(``select_cupy()``, called by the test suite's conftest before anything imports CuPy).

``CUDA_EXPECTED_FAILURES`` lists the ops that legitimately cannot run on CuPy, each with why,
``CUDA_HIGHER_ORDER_FAILURES`` those whose second derivatives cannot; the device test mode
marks their tests as expected failures raising NotImplementedError (never silent skips).

>>> device_under_test() in ("cpu", "cuda")
True
>>> sorted(CUDA_EXPECTED_FAILURES)[:1]
['airy_ai']
"""

from __future__ import annotations

import importlib.util
import os

from .._backend import Device, forget_cupy
from . import fake_cupy

__all__ = [
    "SECOND_ORDER_TESTS",
    "CUDA_EXPECTED_FAILURES",
    "CUDA_HIGHER_ORDER_FAILURES",
    "CUDA_OTHER_RESULTS",
    "ENV_DEVICE",
    "ENV_FAKE_CUPY",
    "expected_failure",
    "select_cupy",
    "device_under_test",
    "use_fake_cupy",
]

ENV_DEVICE = "DUALAD_TEST_DEVICE"
ENV_FAKE_CUPY = "DUALAD_FAKE_CUPY"

# op name (as in the op database) -> why it cannot run on CuPy: what CuPy lacks (dualad raises
# NotImplementedError there rather than copy the data to the host behind the caller's back)
CUDA_EXPECTED_FAILURES: dict[str, str] = {
    "airy_ai": "cupyx.scipy.special has no airy",
    "airy_aip": "cupyx.scipy.special has no airy",
    "airy_bi": "cupyx.scipy.special has no airy",
    "airy_bip": "cupyx.scipy.special has no airy",
    "bei": "cupyx.scipy.special has no bei",
    "beip": "cupyx.scipy.special has no beip",
    "ber": "cupyx.scipy.special has no ber",
    "berp": "cupyx.scipy.special has no berp",
    "bessel_in_2": "cupyx.scipy.special has no iv/ive",
    "bessel_in_3": "cupyx.scipy.special has no iv/ive",
    "bessel_ine_2": "cupyx.scipy.special has no iv/ive",
    "bessel_ine_3": "cupyx.scipy.special has no iv/ive",
    "betaincc": "cupyx.scipy.special has no betaincc",
    "chi": "cupyx.scipy.special has no spherical_in",
    "ci": "cupyx.scipy.special has no spherical_jn",
    "dawsn": "cupyx.scipy.special has no dawsn",
    "ellipe": "cupyx.scipy.special has no ellipe",
    "ellipk": "cupyx.scipy.special has no ellipe",
    "ellipkm1": "cupyx.scipy.special has no ellipe",
    "erfi": "cupyx.scipy.special has no erfi",
    "eval_chebyc_0": "cupyx.scipy.special has no eval_chebyc",
    "eval_chebyc_2": "cupyx.scipy.special has no eval_chebyc",
    "eval_chebyc_5": "cupyx.scipy.special has no eval_chebyc",
    "eval_chebys_0": "cupyx.scipy.special has no eval_chebys",
    "eval_chebys_2": "cupyx.scipy.special has no eval_chebys",
    "eval_chebys_5": "cupyx.scipy.special has no eval_chebys",
    "eval_chebyt_0": "cupyx.scipy.special has no eval_chebyt",
    "eval_chebyt_2": "cupyx.scipy.special has no eval_chebyt",
    "eval_chebyt_5": "cupyx.scipy.special has no eval_chebyt",
    "eval_chebyu_0": "cupyx.scipy.special has no eval_chebyu",
    "eval_chebyu_2": "cupyx.scipy.special has no eval_chebyu",
    "eval_chebyu_5": "cupyx.scipy.special has no eval_chebyu",
    "eval_gegenbauer_0": "cupyx.scipy.special has no eval_gegenbauer",
    "eval_gegenbauer_2": "cupyx.scipy.special has no eval_gegenbauer",
    "eval_gegenbauer_5": "cupyx.scipy.special has no eval_gegenbauer",
    "eval_genlaguerre_0": "cupyx.scipy.special has no eval_genlaguerre",
    "eval_genlaguerre_2": "cupyx.scipy.special has no eval_genlaguerre",
    "eval_genlaguerre_5": "cupyx.scipy.special has no eval_genlaguerre",
    "eval_hermite_0": "cupyx.scipy.special has no eval_hermite",
    "eval_hermite_2": "cupyx.scipy.special has no eval_hermite",
    "eval_hermite_5": "cupyx.scipy.special has no eval_hermite",
    "eval_hermitenorm_0": "cupyx.scipy.special has no eval_hermitenorm",
    "eval_hermitenorm_2": "cupyx.scipy.special has no eval_hermitenorm",
    "eval_hermitenorm_5": "cupyx.scipy.special has no eval_hermitenorm",
    "eval_jacobi_0": "cupyx.scipy.special has no eval_jacobi",
    "eval_jacobi_2": "cupyx.scipy.special has no eval_jacobi",
    "eval_jacobi_5": "cupyx.scipy.special has no eval_jacobi",
    "eval_laguerre_0": "cupyx.scipy.special has no eval_laguerre",
    "eval_laguerre_2": "cupyx.scipy.special has no eval_laguerre",
    "eval_laguerre_5": "cupyx.scipy.special has no eval_laguerre",
    "eval_legendre_0": "cupyx.scipy.special has no eval_legendre",
    "eval_legendre_2": "cupyx.scipy.special has no eval_legendre",
    "eval_legendre_5": "cupyx.scipy.special has no eval_legendre",
    "eval_sh_chebyt_0": "cupyx.scipy.special has no eval_sh_chebyt",
    "eval_sh_chebyt_2": "cupyx.scipy.special has no eval_sh_chebyt",
    "eval_sh_chebyt_5": "cupyx.scipy.special has no eval_sh_chebyt",
    "eval_sh_chebyu_0": "cupyx.scipy.special has no eval_sh_chebyu",
    "eval_sh_chebyu_2": "cupyx.scipy.special has no eval_sh_chebyu",
    "eval_sh_chebyu_5": "cupyx.scipy.special has no eval_sh_chebyu",
    "eval_sh_jacobi_0": "cupyx.scipy.special has no eval_sh_jacobi",
    "eval_sh_jacobi_2": "cupyx.scipy.special has no eval_sh_jacobi",
    "eval_sh_jacobi_5": "cupyx.scipy.special has no eval_sh_jacobi",
    "eval_sh_legendre_0": "cupyx.scipy.special has no eval_sh_legendre",
    "eval_sh_legendre_2": "cupyx.scipy.special has no eval_sh_legendre",
    "eval_sh_legendre_5": "cupyx.scipy.special has no eval_sh_legendre",
    "fresnel_c": "cupyx.scipy.special has no fresnel",
    "fresnel_s": "cupyx.scipy.special has no fresnel",
    "gdtrix": "cupyx.scipy.special has no gdtrix",
    "hyp0f1_-0.4": "cupyx.scipy.special has no hyp0f1",
    "hyp0f1_1.5": "cupyx.scipy.special has no hyp0f1",
    "hyp1f1_-1.5_2.5": "cupyx.scipy.special has no hyp1f1",
    "hyp1f1_0.7_1.3": "cupyx.scipy.special has no hyp1f1",
    "hyp2f1_0.5_1.2_2.1": "cupyx.scipy.special has no hyp2f1",
    "hyperu_0.6_1.4": "cupyx.scipy.special has no hyperu",
    "i1": "cupyx.scipy.special has no iv/ive",
    "i1e": "cupyx.scipy.special has no iv/ive",
    "iv": "cupyx.scipy.special has no iv",
    "iv_2": "cupyx.scipy.special has no iv",
    "iv_complex": "cupyx.scipy.special has no iv",
    "ive": "cupyx.scipy.special has no ive",
    "ive_2": "cupyx.scipy.special has no ive",
    "j1": "cupyx.scipy.special has no jv",
    "jv": "cupyx.scipy.special has no jv",
    "jv_3": "cupyx.scipy.special has no jv",
    "jv_complex": "cupyx.scipy.special has no jv",
    "jve": "cupyx.scipy.special has no jve",
    "k0e": "cupyx.scipy.special has no kve",
    "k1": "cupyx.scipy.special has no kv",
    "k1e": "cupyx.scipy.special has no kve",
    "kei": "cupyx.scipy.special has no kei",
    "keip": "cupyx.scipy.special has no keip",
    "ker": "cupyx.scipy.special has no ker",
    "kerp": "cupyx.scipy.special has no kerp",
    "kv": "cupyx.scipy.special has no kv",
    "kv_complex": "cupyx.scipy.special has no kv",
    "kve": "cupyx.scipy.special has no kve",
    "linalg.fractional_matrix_power": "CuPy has no Schur decomposition (scipy.linalg.schur)",
    "linalg.logm": "CuPy has no Schur decomposition (scipy.linalg.schur)",
    "linalg.polar": "CuPy has no Schur decomposition (scipy.linalg.schur)",
    "linalg.solve_continuous_are": "CuPy has no Schur decomposition (scipy.linalg.schur)",
    "linalg.solve_continuous_lyapunov": "CuPy has no Schur decomposition (scipy.linalg.schur)",
    "linalg.solve_discrete_lyapunov": "CuPy has no Schur decomposition (scipy.linalg.schur)",
    "linalg.solve_sylvester": "CuPy has no Schur decomposition (scipy.linalg.schur)",
    "linalg.solve_sylvester(a, a, q)": "CuPy has no Schur decomposition (scipy.linalg.schur)",
    "linalg.sqrtm": "CuPy has no Schur decomposition (scipy.linalg.schur)",
    "modstruve_0.5": "cupyx.scipy.special has no modstruve",
    "modstruve_1": "cupyx.scipy.special has no modstruve",
    "ndtri_exp": "cupyx.scipy.special has no ndtri_exp",
    "owens_t": "cupyx.scipy.special has no owens_t",
    "powm1": "cupyx.scipy.special has no powm1",
    "shi": "cupyx.scipy.special has no spherical_in",
    "si": "cupyx.scipy.special has no spherical_jn",
    "spence": "cupyx.scipy.special has no spence",
    "spherical_in_0": "cupyx.scipy.special has no spherical_in",
    "spherical_in_1": "cupyx.scipy.special has no spherical_in",
    "spherical_in_3": "cupyx.scipy.special has no spherical_in",
    "spherical_jn_0": "cupyx.scipy.special has no spherical_jn",
    "spherical_jn_1": "cupyx.scipy.special has no spherical_jn",
    "spherical_jn_2_derivative": "cupyx.scipy.special has no spherical_jn",
    "spherical_jn_3": "cupyx.scipy.special has no spherical_jn",
    "spherical_kn_0": "cupyx.scipy.special has no spherical_kn",
    "spherical_kn_1": "cupyx.scipy.special has no spherical_kn",
    "spherical_kn_3": "cupyx.scipy.special has no spherical_kn",
    "stdtr": "cupyx.scipy.special has no stdtr",
    "stdtrit": "cupyx.scipy.special has no stdtrit",
    "struve_0": "cupyx.scipy.special has no struve",
    "struve_1.5": "cupyx.scipy.special has no struve",
    "struve_2": "cupyx.scipy.special has no struve",
    "wrightomega": "cupyx.scipy.special has no wrightomega",
    "y1": "cupyx.scipy.special has no yv",
    "yv": "cupyx.scipy.special has no yv",
    "yv_complex": "cupyx.scipy.special has no yv",
    "yve": "cupyx.scipy.special has no yve",
}


_NO_JV = "their second derivatives call {} of order 2, which cupyx.scipy.special has no"
# ops whose values and first derivatives run on CuPy but whose higher derivatives need a
# function cupyx lacks (the op tests of second order are expected to fail on "cuda")
CUDA_HIGHER_ORDER_FAILURES: dict[str, str] = {
    "i0": _NO_JV.format("iv"),
    "i0e": _NO_JV.format("ive"),
    "j0": _NO_JV.format("jv"),
    "y0": _NO_JV.format("yv"),
    "k0": _NO_JV.format("kv"),
}


# ops whose results on CuPy may legitimately differ from NumPy's reference (marked as expected
# failures raising AssertionError on "cuda")
CUDA_OTHER_RESULTS: dict[str, str] = {
    "argsort": "CuPy's sort is stable: ties come in input order, NumPy's default sort orders "
    "them otherwise (both valid for kind=None)",
}


def device_under_test() -> str:
    """The device the test helpers put samples on: ``$DUALAD_TEST_DEVICE``, "cpu" by default."""
    return str(Device(os.environ.get(ENV_DEVICE) or "cpu"))


def use_fake_cupy() -> bool:
    """Whether the stand-in replaces CuPy: ``DUALAD_FAKE_CUPY=1``, or a "cuda" test device
    without an importable CuPy."""
    flag = os.environ.get(ENV_FAKE_CUPY, "")
    if flag:
        return flag not in ("0", "false", "no")
    return device_under_test() != "cpu" and importlib.util.find_spec("cupy") is None


def select_cupy() -> str | None:
    """Install the stand-in when ``use_fake_cupy()``; returns "fake", "real" (a "cuda" test
    device with CuPy) or None (cpu)."""
    if use_fake_cupy():
        fake_cupy.install()
        forget_cupy()
        return "fake"
    return "real" if device_under_test() != "cpu" else None


# the op-database tests that differentiate an op's rules (where CUDA_HIGHER_ORDER_FAILURES apply)
SECOND_ORDER_TESTS = frozenset(
    (
        "test_grad_of_grad_matches_finite_differences",
        "test_jvp_of_jvp_matches_finite_differences",
        "test_forward_over_reverse_matches_finite_differences",
        "test_reverse_mode_through_the_jvp_rule_gives_the_vjp",
    )
)


def expected_failure(name: str, test: str | None = None) -> tuple[str, type] | None:
    """Why the op tests of ``name`` are expected to fail on the test device, and with which
    exception class (None: they must pass there). ``test``, the test function's name, limits
    CUDA_HIGHER_ORDER_FAILURES to the second-order tests (None: every test).

    >>> expected_failure("sin", "test_vjp_matches_finite_differences") is None
    True
    """
    if device_under_test() == "cpu":
        return None
    reason = CUDA_EXPECTED_FAILURES.get(name)
    if reason is None and (test is None or test in SECOND_ORDER_TESTS):
        reason = CUDA_HIGHER_ORDER_FAILURES.get(name)
    if reason:
        return reason, NotImplementedError
    if name in CUDA_OTHER_RESULTS:
        return CUDA_OTHER_RESULTS[name], AssertionError
    return None
