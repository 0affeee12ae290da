"""pow's rules are one row that never asks who runs it: each namespace gives ``pow_by_base`` and
``pow_by_exponent`` (the engine's with their cases decided by values, generated code's decided
as the code runs), and every mode agrees with SymPy at the cases (a base 0, an exponent 0)."""

from __future__ import annotations

import pathlib

import pytest
import sympy

import gradcli
from gradcli.api import hessian
from gradcli.engine.primitives import FLOAT
from test_codegen import load_module

SOURCES = pathlib.Path(gradcli.__file__).parent


def test_no_rule_asks_which_mode_runs_it():
    found = [str(p) for p in SOURCES.rglob("*.py") if "builds_code" in p.read_text("utf-8")]
    assert found == []


def _sympy_hessian(source: str, point: dict[str, float]):
    """SymPy's gradient and Hessian, each entry as the limit at the point (along x after y is
    put in: 0·ln 0 has one)."""
    x, y = sympy.symbols("x y")
    f = sympy.sympify(source.replace("^", "**"))
    X, Y = sympy.Rational(point["x"]), sympy.Rational(point["y"])

    def at(e):
        return float(sympy.limit(e.subs(y, Y), x, X))
    return ([at(sympy.diff(f, v)) for v in (x, y)],
            [at(sympy.diff(f, a, b)) for a in (x, y) for b in (x, y)])


# y^x at x = 0: ∂/∂y = x·y^(x-1) is 0, but ∂²/∂x∂y = y^(x-1)·(1 + x·ln y) = 1/y; x^y at
# y = 0: ∂/∂x = 0 (x^0 = 1), ∂²/∂x∂y = x^(y-1)·(1 + y·ln x) = 1/x
CASES = [("y^x", {"x": 0.0, "y": 0.5}), ("y^x", {"x": 2.0, "y": 3.0}),
         ("x^y", {"x": 1.5, "y": 0.0})]


def _by_name(values: dict, rows) -> tuple[list, list]:
    """A gradient and Hessian in the inputs' order (y, x for y^x) put in the order x, y."""
    order = [list(values).index(name) for name in ("x", "y")]
    return [list(values.values())[i] for i in order], [rows[i][j] for i in order for j in order]


@pytest.mark.parametrize("source,point", CASES)
def test_engine_and_generated_code_agree_with_sympy(source, point, tmp_path):
    gradient, entries = _sympy_hessian(source, point)
    got = hessian(source, point, float64=True)
    assert _by_name(got.gradient, got.hessian) == (pytest.approx(gradient, abs=1e-15),
                                                   pytest.approx(entries, abs=1e-15))
    module = load_module(gradcli.codegen(source, "python", "hessian"), tmp_path)
    inputs = list(got.gradient)
    _, code_gradient, code_rows = module.f(*(point[name] for name in inputs))
    assert _by_name(dict(zip(inputs, code_gradient)), code_rows) == (
        pytest.approx(gradient, abs=1e-15), pytest.approx(entries, abs=1e-15))


def test_the_exponents_rule_at_base_0_in_the_engine_and_the_code(tmp_path):
    # x^y at x = 0, y = 2: ∂/∂y = x^y·ln x tends to 0 (0^y = 0 for every y > 0), as SymPy says
    x, y = sympy.symbols("x y")
    want = float(sympy.limit(sympy.diff(x ** y, y).subs(y, 2), x, 0, "+"))
    assert gradcli.evaluate("x^y", {"x": 0.0, "y": 2.0}, float64=True).gradient["y"] == want
    module = load_module(gradcli.codegen("x^y", "python"), tmp_path)
    assert module.f(0.0, 2.0)[1][1] == want


def test_the_float_rule_at_its_cases():
    # a^0 is 1 for every a: ∂/∂a is 0, also at a = 0; 0^b is 0 for b > 0: ∂/∂b is 0
    assert FLOAT.pow_by_base(0.0, 0.0) == 0.0
    assert FLOAT.pow_by_base(2.0, 3.0) == 12.0
    assert FLOAT.pow_by_exponent(0.0, 2.0, 0.0) == 0.0
    assert FLOAT.pow_by_exponent(2.0, 3.0, 8.0) == pytest.approx(float(8 * sympy.log(2)),
                                                                rel=1e-15)
