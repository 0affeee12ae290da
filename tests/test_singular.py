"""A value whose gradient has a component that does not exist (issue 25): sqrt(x) at 0 prints
f = 0 and ∂f/∂x = +∞, exit 1; JSON has the value, null for that component and the reason.
Expected limits come from SymPy (the one-sided limit of the derivative, from the side where f is
defined), not from gradcli."""

from __future__ import annotations

import json
import math
import subprocess

import pytest
import sympy

import gradcli
from gradcli.errors import NumericalError, SingularGradientError

x, y = sympy.symbols("x y", real=True)

# (source, its SymPy form, the point, the side the limit is taken from: "+" or "-")
CASES = [
    ("sqrt(x)", sympy.sqrt(x), 0.0, "+"),
    ("cbrt(x)", sympy.cbrt(x), 0.0, "+"),
    ("asin(x)", sympy.asin(x), 1.0, "-"),
    ("asin(x)", sympy.asin(x), -1.0, "+"),
    ("acos(x)", sympy.acos(x), 1.0, "-"),
    ("acos(x)", sympy.acos(x), -1.0, "+"),
    ("x^0.5", x ** sympy.Rational(1, 2), 0.0, "+"),
    ("-3*sqrt(x) + x", -3 * sympy.sqrt(x) + x, 0.0, "+"),
    ("exp(sqrt(x))", sympy.exp(sympy.sqrt(x)), 0.0, "+"),
    ("sqrt(1 - x^2)", sympy.sqrt(1 - x ** 2), 1.0, "-"),
]


def _sympy_limit(expr, at: float, side: str) -> float:
    limit = sympy.limit(sympy.diff(expr, x), x, sympy.nsimplify(at), side)
    return float(limit) if limit.is_finite else (math.inf if limit == sympy.oo else -math.inf)


@pytest.mark.parametrize("source, expr, at, side", CASES, ids=lambda c: str(c))
def test_the_infinite_slope_has_the_sign_sympy_finds(source, expr, at, side):
    expected = _sympy_limit(expr, at, side)
    assert math.isinf(expected)
    with pytest.raises(SingularGradientError) as info:
        gradcli.evaluate(source, {"x": at})
    error = info.value
    assert error.result.gradient == {"x": expected}
    assert error.limits == {"x": expected}
    assert error.result.value == pytest.approx(float(expr.subs(x, sympy.nsimplify(at))),
                                               abs=1e-15)
    assert isinstance(error, NumericalError) and error.exit_code == 1


def test_a_component_with_no_limit_is_undefined_and_the_others_are_kept():
    with pytest.raises(SingularGradientError) as info:
        gradcli.evaluate("x^y", {"x": -2, "y": 3})  # (-2)^y·ln(-2): not real
    assert info.value.result.gradient["x"] == 12.0  # 3·(-2)²
    assert math.isnan(info.value.result.gradient["y"])
    assert "by y (the exponent, b)" in str(info.value)
    with pytest.raises(SingularGradientError) as info:
        gradcli.evaluate("atan2(y, x)", {"x": 0, "y": 0})
    assert all(math.isnan(g) for g in info.value.result.gradient.values())


def test_the_chain_carries_the_sign_and_zero_times_infinity_is_undefined():
    with pytest.raises(SingularGradientError) as info:
        gradcli.evaluate("sqrt(x)*y", {"x": 0, "y": -2})
    assert info.value.result.gradient == {"x": -math.inf, "y": 0.0}
    with pytest.raises(SingularGradientError) as info:
        gradcli.evaluate("sqrt(x)*y", {"x": 0, "y": 0})
    assert math.isnan(info.value.result.gradient["x"])


def test_a_component_not_asked_for_is_not_reported(run):
    result = run("eval", "sqrt(x)*y", "--at", "x=0,y=2", "--wrt", "y")
    assert result.exit_code == 0 and "∂f/∂y = 0" in result.stdout


def test_the_console_script_prints_the_value_and_the_infinite_slope(gradcli_script):
    proc = subprocess.run([gradcli_script, "eval", "sqrt(x)", "--at", "x=0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == ["f     = 0", "∂f/∂x = +∞"]
    assert proc.stderr.splitlines() == [
        "numerical error: ∂f/∂x is unbounded (+∞) at this point: v1 = sqrt(0) has an infinite "
        "slope (+∞)", "  sqrt(x)", "  ^^^^^^^ infinite slope here"]


def test_the_json_is_one_object_with_the_value_null_and_the_reason(gradcli_script):
    proc = subprocess.run([gradcli_script, "eval", "sqrt(x)*y", "--at", "x=0,y=2", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["value"] == 0.0 and data["gradient"] == {"x": None, "y": 0.0}
    assert data["singular"] == {"x": {"limit": "+inf",
                                      "reason": "v1 = sqrt(0) has an infinite slope (+∞)"}}
    assert data["error"]["kind"] == "numerical" and data["error"]["span"] == [0, 7]


def test_ascii_output_spells_infinity(run):
    result = run("eval", "acos(x)", "--at", "x=1", "--ascii")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == ["f     = 0", "df/dx = -inf"]
