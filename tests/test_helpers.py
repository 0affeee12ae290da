"""The helpers generated code defines for itself are printed from the engine's own float functions
(gradcli.engine.special): the Python, NumPy and C helpers give the engine's float to the last
bit, branch for branch, and the engine's float is mpmath's value to 13 digits."""

from __future__ import annotations

import ctypes
import math

import mpmath
import numpy as np
import pytest

from gradcli.code import helpers
from gradcli.code.printer import LANGUAGES, spelling
from gradcli.engine import special
from gradcli.engine.primitives import TABLE
from test_codegen import compile_c, load_module, needs

NAN, INF = math.nan, math.inf
POINTS = [-3.7, -0.5, 1e-9, 3e-5, -7e-5, 0.25, 1.0, 2.5, 9.99, 10.0, 37.2, 1e4, 1e-4, 5.0,
          0.0, -0.0, -800.0, 800.0, -40.0, 40.0]
PAIRS = [(1.0, 2.0), (2.0, 1.0), (-0.0, 0.0), (0.0, -0.0), (NAN, 1.0), (1.0, NAN), (-INF, 3.0),
         (3.0, 3.0)]
REFERENCE = {"digamma": mpmath.digamma, "trigamma": lambda x: mpmath.polygamma(1, x),
             "sinc": lambda x: mpmath.sin(x) / x if x else mpmath.mpf(1),
             "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x)),
             "softplus": lambda x: mpmath.log(1 + mpmath.exp(x)),
             "relu": lambda x: max(x, 0), "step": lambda x: mpmath.mpf(x > 0),
             "sign": mpmath.sign}
BINARY = {"min": min, "max": max}  # Python's own, which the definitions are


def _same(a: float, b: float) -> bool:
    """Equal to the last bit, the sign of 0 included; NaN (of either sign) is NaN's."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def test_every_helper_a_row_names_is_defined_in_every_language():
    """The checklist: a row spelled as a helper (_name, gc_name) has that helper's text."""
    missing = []
    for name in TABLE:
        for lang in LANGUAGES:
            helper = spelling(name, lang)
            if not (helper.startswith("_") or helper.startswith("gc_")):
                continue
            print_ = {"python": helpers.python_helper,
                      "c": helpers.c_helper}.get(lang, helpers.array_helper)
            try:
                assert f" {helper}(" in print_(helper)
            except (KeyError, AssertionError):
                missing.append(f"{name}: {lang} {helper}")
    assert not missing, "helpers without a definition: " + ", ".join(missing)


def test_helpers_are_printed_from_the_engines_primals():
    assert set(helpers.DEFINED) == {"sigmoid", "softplus", "relu", "sign", "step", "min", "max",
                                    "sinc", "digamma", "trigamma"}
    for name, function in helpers.DEFINED.items():
        assert TABLE[name].primal is function


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_the_engines_function_is_mpmaths(name):
    mpmath.mp.dps = 40
    for x in POINTS:
        if name in ("digamma", "trigamma") and x <= 0 and x == math.floor(x):
            continue  # a pole
        want = REFERENCE[name](mpmath.mpf(x))
        got = TABLE[name].primal(x)
        # the reflection loses a few digits below 0 (ψ(-3.7): 45 ulps); float64 elsewhere,
        # and 0 below the smallest double (sigmoid(-800))
        assert abs(got - want) <= 1e-13 * abs(want) or (got == 0 and abs(want) < 1e-307), \
            (name, x)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_min_and_max_are_pythons(name):
    for a, b in PAIRS:
        assert _same(TABLE[name].primal(a, b), BINARY[name](a, b)), (name, a, b)


def _helpers(name, tmp_path):
    """The Python helper and the NumPy helper of the row ``name``, each from its own module."""
    python = load_module("import math\n\n\n" + helpers.python_helper(f"_{name}"), tmp_path,
                         f"helper_{name}")
    array = load_module("import math\nimport numpy as np\n\n\n"
                        + helpers.array_helper(f"_{name}").replace("{np}", "np"), tmp_path,
                        f"array_helper_{name}")
    return getattr(python, f"_{name}"), getattr(array, f"_{name}")


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_the_printed_helpers_compute_the_engines_float(name, tmp_path):
    """Bit for bit, and where the engine's raises (a pole, sin(inf)), so does the Python
    helper, and the NumPy and C helpers give NaN."""
    helper, on_arrays = _helpers(name, tmp_path)
    primal = TABLE[name].primal
    points = POINTS + [-2.0, INF, -INF, NAN]
    engine = []
    for x in points:
        try:
            engine.append(primal(x))
        except (ValueError, OverflowError) as error:
            with pytest.raises(type(error)):
                helper(x)
            engine.append(NAN)
        else:
            assert _same(helper(x), engine[-1]), (name, x)
    with np.errstate(all="ignore"):
        assert all(map(_same, on_arrays(np.array(points)), engine))
    needs("c")
    lib = compile_c("#include <math.h>\n\n" + helpers.c_helper(f"gc_{name}")
                    + f"\n\ndouble call(double x) {{ return gc_{name}(x); }}\n", tmp_path)
    lib.call.restype, lib.call.argtypes = ctypes.c_double, [ctypes.c_double]
    assert all(map(_same, [lib.call(x) for x in points], engine))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_the_printed_min_and_max_compute_the_engines_float(name, tmp_path):
    helper, on_arrays = _helpers(name, tmp_path)
    engine = [TABLE[name].primal(a, b) for a, b in PAIRS]
    assert all(map(_same, [helper(a, b) for a, b in PAIRS], engine))
    columns = np.array(PAIRS).T
    assert all(map(_same, on_arrays(columns[0], columns[1]), engine))
    needs("c")
    lib = compile_c("#include <math.h>\n\n" + helpers.c_helper(f"gc_{name}")
                    + f"\n\ndouble call(double a, double b) {{ return gc_{name}(a, b); }}\n",
                    tmp_path)
    lib.call.restype = ctypes.c_double
    lib.call.argtypes = [ctypes.c_double, ctypes.c_double]
    assert all(map(_same, [lib.call(a, b) for a, b in PAIRS], engine))


def test_mod_in_c_is_pythons_percent(tmp_path):
    """gc_mod, the one helper written out in C: Python's a % b, the sign of b."""
    needs("c")
    lib = compile_c("#include <math.h>\n\n" + helpers.c_helper("gc_mod")
                    + "\n\ndouble call(double a, double b) { return gc_mod(a, b); }\n", tmp_path)
    lib.call.restype = ctypes.c_double
    lib.call.argtypes = [ctypes.c_double, ctypes.c_double]
    for a, b in [(5.5, 2.0), (-5.5, 2.0), (5.5, -2.0), (-5.5, -2.0), (4.0, 2.0), (-4.0, 2.0),
                 (4.0, -2.0), (-0.2, 1.4), (1e300, 3.0), (-3.0, INF), (3.0, INF)]:
        assert _same(lib.call(a, b), a % b), (a, b)


def test_the_definitions_are_read_from_the_source_of_a_compiled_module():
    """special.py is compiled by Cython (its primals run in every sweep): the printers read its
    source file, which ships beside the extension."""
    from gradcli.compiled import COMPILED
    assert special.__name__ in COMPILED
    assert helpers.python_helper("_relu") == "def _relu(x):\n    return x if x > 0 else 0.0"
