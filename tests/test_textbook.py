"""Textbook formulas (issue 42): ``gradcli diff`` prints what a textbook or SymPy's
``simplify`` prints for the issue's table, in text, LaTeX and the trace; rational functions of
one input are reduced; ``--simplify`` hands a derivative to SymPy, and says how to install it
when it is missing. The reference is SymPy (``diff`` then ``simplify``), never gradcli."""

import json
import math
import random
import subprocess
import sys

import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from gradcli import evaluate
from gradcli.api import all_derivatives, derivatives
from strategies import examples

X = sp.Symbol("x", real=True)


def _sympy(text: str):
    return sp.sympify(text.replace("^", "**"), locals={"x": X, "e": sp.E})


def _gradcli(text: str) -> str:
    return text.replace("**", "^")


# the issue's table: f, and what a textbook / SymPy's simplify prints (in gradcli's syntax)
ISSUE = [
    ("e^x", "e^x"),
    ("x^(1/3)", "1/(3*x^(2/3))"),
    ("(x^2-1)/(x+1)", "1"),
    ("atan(1/x)", "-1/(x^2 + 1)"),
    ("x^3-3*x^2+2*x-5", "3*x^2 - 6*x + 2"),
]


@pytest.mark.parametrize("source, textbook", ISSUE)
def test_the_issue_table_prints_the_textbook_formula(source, textbook):
    printed = derivatives(source)["x"]
    assert printed == textbook
    # the textbook column is SymPy's: its simplify of its diff is the same expression
    want = sp.simplify(sp.diff(_sympy(source), X))
    assert sp.simplify(_sympy(printed) - want) == 0
    assert len(printed) <= len(_gradcli(sp.sstr(want)).replace("E^", "e^").replace(
        "exp(x)", "e^x"))


@pytest.mark.parametrize("source, textbook", ISSUE)
def test_the_issue_table_from_the_installed_script(source, textbook, gradcli_script, tmp_path):
    done = subprocess.run([gradcli_script, "diff", source], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, textbook + "\n", "")


def test_e_to_the_x_in_latex_and_in_the_trace(run):
    latex = run("diff", "e^x", "--latex").output
    assert "{e}^{x}" in latex and "log" not in latex
    trace = json.loads(run("eval", "e^x", "--at", "x=1", "--trace", "--json").output)
    assert "e^x" in json.dumps(trace) and "log(e)" not in json.dumps(trace)
    assert "log(e)" not in run("eval", "e^x", "--at", "x=1", "--trace").output


@pytest.mark.parametrize("source, expected", [
    ("x/(x^2-1)", "-(x^2 + 1)/(x^2 - 1)^2"),
    ("x/(1+x)", "1/(x + 1)^2"),
    ("(x^3+2)/(3*x^2-0.5*x)", "4*(3*x^4 - x^3 - 12*x + 1)/(x^2*(6*x - 1)^2)"),
    ("1/(2*x+1)", "-2/(2*x + 1)^2"),
    ("x^4/4 - x^2 + 1 - x", "x^3 - 2*x - 1"),
    ("1 - x^2", "-2*x"),
    ("log(x) - log(1-x)", "-1/(x*(x - 1))"),  # the power of x taken out: x*(x - 1)
])
def test_rational_functions_are_reduced_and_polynomials_descend(source, expected):
    printed = derivatives(source)["x"]
    assert printed == expected
    assert sp.simplify(_sympy(printed) - sp.diff(_sympy(source), X)) == 0


def test_a_sum_that_is_not_a_polynomial_in_one_input_keeps_its_order():
    assert derivatives("log(1 + exp(w*x + b))", ["w"])["w"] == "t1 = exp(b + w*x)\nx*t1/(t1 + 1)"
    assert derivatives("x - x^2", ["x"])["x"] == "1 - 2*x"


def _polynomial(rng: random.Random) -> str:
    terms = [f"{rng.randint(-5, 5)}*x^{k}" for k in range(rng.randint(1, 4), -1, -1)]
    return " + ".join(terms)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 10 ** 6), st.floats(-3, 3))
def test_reduced_rational_functions_equal_sympys_derivative(seed, x):
    """p/q for random polynomials: the printed derivative is SymPy's (symbolically), and
    evaluates to eval's proven derivative wherever both are defined."""
    rng = random.Random(seed)
    source = f"({_polynomial(rng)})/({_polynomial(rng)})"
    printed = derivatives(source)["x"]
    assert sp.simplify(_sympy(printed) - sp.diff(_sympy(source), X)) == 0, (source, printed)


# -- --simplify -----------------------------------------------------------------------------------

def test_simplify_calls_sympy_and_says_so(run):
    done = run("diff", "x*sin(x)^2 + x*cos(x)^2", "--simplify")
    assert done.exit_code == 0 and done.stdout == "1\n"
    assert "SymPy" in done.stderr
    plain = run("diff", "x*sin(x)^2 + x*cos(x)^2")
    assert plain.stdout == "cos(x)^2 + sin(x)^2\n" and plain.stderr == ""


def test_simplify_keeps_the_shorter_and_never_a_wrong_formula():
    for source in ["sin(x)/x", "sigmoid(x)*x", "x/(x^2-1)", "exp(x)*cos(x) + sqrt(x^2+1)"]:
        ours = all_derivatives(source)["f"]["x"]
        theirs = all_derivatives(source, simplify=True)["f"]["x"]
        assert len(theirs) <= len(ours)
        for x in (0.3, 1.7):
            a, b = evaluate(ours, {"x": x}).value, evaluate(theirs, {"x": x}).value
            assert math.isclose(float(a), float(b), rel_tol=1e-12), source


def test_simplify_without_sympy_names_the_install_command(run, reported, monkeypatch):
    monkeypatch.setitem(sys.modules, "sympy", None)  # import sympy now raises ImportError
    done = run("diff", "x^2", "--simplify")
    reported(done, 2, ["SymPy is not installed", 'pip install "gradcli[sympy]"'])
    done = run("diff", "x^2", "--simplify", "--json")
    assert done.exit_code == 2 and "gradcli[sympy]" in json.loads(done.stdout)["error"]["hint"]


# a rational function of one input times factors free of it: the terms that share such a factor
# are reduced together (SymPy's simplify prints each row; two inputs are not one polynomial)
SEVERAL = [("x*y/(x+1)", "x"), ("y*(x^2-1)/(x+1) + z*x", "x"), ("x*y/(x+1) + x*sin(y)", "x"),
           ("x*y*z/(x+1)/(y+1)", "x"), ("x*y*z/(x+1)/(y+1)", "y")]
XYZ = {name: sp.Symbol(name, real=True) for name in "xyz"}


@pytest.mark.parametrize("source, wrt", SEVERAL)
def test_a_rational_function_of_one_of_several_inputs_is_reduced(source, wrt):
    want = sp.simplify(sp.diff(sp.sympify(source.replace("^", "**"), locals=XYZ), XYZ[wrt]))
    assert derivatives(source)[wrt] == _gradcli(sp.sstr(want))


def test_the_two_input_fraction_from_the_installed_script(gradcli_script, tmp_path):
    f = XYZ["x"] * XYZ["y"] / (XYZ["x"] + 1)
    done = subprocess.run([gradcli_script, "diff", "x*y/(x+1)"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    shown = "".join(f"# ∂f/∂{v}\n{_gradcli(sp.sstr(sp.simplify(sp.diff(f, XYZ[v]))))}\n"
                    for v in "xy")
    assert (done.returncode, done.stdout, done.stderr) == (0, shown, "")
