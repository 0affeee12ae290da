"""digamma, trigamma and sinc are written once (gradcli.engine.special) and generated code's
helpers are printed from them: the Python, NumPy and C helpers give the engine's float to the
last bit, and the engine's float is mpmath's value to 13 digits."""

from __future__ import annotations

import ctypes
import math

import mpmath
import numpy as np
import pytest

from gradcli.code import helpers
from gradcli.code.c import _C_HELPERS
from gradcli.code.python import _ARRAY_HELPERS, _PYTHON_HELPERS
from gradcli.engine import special
from test_codegen import compile_c, load_module, needs

POINTS = [-3.7, -0.5, 1e-9, 3e-5, -7e-5, 0.25, 1.0, 2.5, 9.99, 10.0, 37.2, 1e4, 1e-4, 5.0]
REFERENCE = {"digamma": mpmath.digamma, "trigamma": lambda x: mpmath.polygamma(1, x),
             "sinc": lambda x: mpmath.sin(x) / x if x else mpmath.mpf(1)}


def test_no_helper_is_written_out_in_the_code_printers():
    for name in helpers.DEFINED:
        assert _PYTHON_HELPERS[f"_{name}"] == helpers.python_helper(name)
        assert _C_HELPERS[f"gc_{name}"] == helpers.c_helper(name)
    assert _ARRAY_HELPERS["_sinc"] == helpers.array_helper("sinc")


@pytest.mark.parametrize("name", sorted(helpers.DEFINED))
def test_the_engines_function_is_mpmaths(name):
    mpmath.mp.dps = 40
    for x in POINTS:
        want = REFERENCE[name](mpmath.mpf(x))
        got = getattr(special, name)(x)
        # the reflection loses a few digits below 0 (ψ(-3.7): 45 ulps); float64 elsewhere
        assert abs(got - want) <= 1e-13 * abs(want), (name, x)


@pytest.mark.parametrize("name", sorted(helpers.DEFINED))
def test_the_printed_helpers_compute_the_engines_float(name, tmp_path):
    module = load_module("import math\nimport numpy as np\n\n\n" + _PYTHON_HELPERS[f"_{name}"]
                         + "\n\n\n" + _ARRAY_HELPERS[f"_{name}"].replace("{np}", "np"),
                         tmp_path, f"helper_{name}")
    engine = [getattr(special, name)(x) for x in POINTS]
    assert [getattr(module, f"_{name}")(x) for x in POINTS] == engine
    assert list(getattr(module, f"_{name}")(np.array(POINTS))) == engine
    needs("c")
    lib = compile_c("#include <math.h>\n\n" + _C_HELPERS[f"gc_{name}"]
                    + f"\n\ndouble call(double x) {{ return gc_{name}(x); }}\n", tmp_path)
    lib.call.restype, lib.call.argtypes = ctypes.c_double, [ctypes.c_double]
    assert [lib.call(x) for x in POINTS] == engine
    pole = -2.0 if name != "sinc" else None
    if pole is not None:  # a ValueError of Python is NaN in C
        with pytest.raises(ValueError):
            getattr(special, name)(pole)
        assert math.isnan(lib.call(pole))
