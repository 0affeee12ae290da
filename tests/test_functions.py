"""The functions people expect (issue 25): sec, csc, cot, sinc, exp2, log(a, b), erfc, gamma,
lgamma, digamma, trigamma, floor, ceil, trunc, round.

Values and derivatives are compared with mpmath at 50 digits (an independent reference: its
own special functions, its own numerical derivative), second derivatives with SymPy, the batch
engine's columns with the single-point engine, and the command line through CliRunner and the
installed console script.
"""

import json
import math
import subprocess

import mpmath
import numpy as np
import pytest
import sympy as sp

from gradcli import derivatives, evaluate, evaluate_batch, hessian
from gradcli.engine.primitives import TABLE, lookup
from gradcli.views.latex import expression
from gradcli.language.parser import parse

mp = mpmath.mp

# (source, its mpmath counterpart in x, points): derivatives by mpmath.diff at 50 digits.
REFERENCE = [
    ("sec(x)", mpmath.sec, [-2.3, 0.3, 1.4, 4.0]),
    ("csc(x)", mpmath.csc, [-2.3, 0.3, 1.4, 4.0]),
    ("cot(x)", mpmath.cot, [-2.3, 0.3, 1.4, 4.0]),
    ("sinc(x)", mpmath.sinc, [-7.5, -0.3, 1e-3, 0.6, 0.99, 1.0, 2.5]),
    ("exp2(x)", lambda x: mpmath.power(2, x), [-3.5, 0.0, 0.7, 10.25]),
    ("log(x, 3)", lambda x: mpmath.log(x, 3), [0.01, 0.5, 7.0, 1e10]),
    ("log(2.5, x)", lambda x: mpmath.log(2.5, x), [0.2, 0.5, 3.0, 40.0]),
    ("erfc(x)", mpmath.erfc, [-2.0, 0.0, 0.5, 3.0, 10.0]),
    ("gamma(x)", mpmath.gamma, [-2.5, -0.3, 0.1, 1.0, 4.5, 20.0]),
    ("lgamma(x)", lambda x: mpmath.log(abs(mpmath.gamma(x))), [-2.5, 0.1, 0.5, 4.5, 300.0]),
    ("digamma(x)", mpmath.digamma, [-2.5, -0.3, 0.1, 1.0, 4.5, 300.0]),
    ("trigamma(x)", lambda x: mpmath.polygamma(1, x), [-2.5, -0.3, 0.1, 1.0, 4.5, 300.0]),
    ("floor(x)", mpmath.floor, [-2.3, -0.5, 0.6, 3.7]),
    ("ceil(x)", mpmath.ceil, [-2.3, -0.5, 0.6, 3.7]),
    ("trunc(x)", lambda x: mpmath.floor(x) if x >= 0 else mpmath.ceil(x), [-2.3, -0.5, 0.6]),
    ("round(x)", mpmath.nint, [-2.3, -0.7, 0.6, 3.2]),  # mpmath.nint: halves to even too
]


def test_every_new_row_has_a_reference_here():
    tested = {lookup(parse(s).statements[-1].name, len(parse(s).statements[-1].args)).name
              for s, _, _ in REFERENCE}
    new = {"sec", "csc", "cot", "sinc", "exp2", "log_base", "erfc", "gamma", "lgamma", "digamma",
           "trigamma", "floor", "ceil", "trunc", "round"}
    assert new <= set(TABLE) and new <= tested and "mod" in TABLE  # mod: its own test below


@pytest.mark.parametrize("source, f, points", REFERENCE, ids=[s for s, _, _ in REFERENCE])
def test_value_and_derivative_equal_mpmath(source, f, points):
    for x in points:
        with mpmath.workdps(50):
            value = float(f(mpmath.mpf(x)))
            slope = float(mpmath.diff(f, mpmath.mpf(x)))
        result = evaluate(source, {"x": x})
        # abs_tol: the C library's lgamma(-2.5) = -0.0562... is 5e-16 off (absolutely accurate)
        assert math.isclose(result.value, value, rel_tol=4e-15, abs_tol=1e-15), (x, value)
        assert math.isclose(result.gradient["x"], slope, rel_tol=1e-13, abs_tol=1e-300), (
            x, result.gradient["x"], slope)


@pytest.mark.parametrize("source, f, points", REFERENCE, ids=[s for s, _, _ in REFERENCE])
def test_batch_columns_equal_the_single_point_engine(source, f, points):
    batch = evaluate_batch(source, {"x": np.array(points, dtype=float)}, float64=True)
    for i, x in enumerate(points):
        one = evaluate(source, {"x": x}, float64=True)  # batch computes in float64
        assert math.isclose(batch.values[i], one.value, rel_tol=2e-16, abs_tol=0)
        assert math.isclose(batch.gradient["x"][i], one.gradient["x"], rel_tol=1e-15, abs_tol=0)


def test_batch_rows_outside_the_domain_fail_with_the_single_point_message():
    batch = evaluate_batch("gamma(x) + log(x, y)", {"x": [2.0, 0.0, 3.0], "y": [2.0, 2.0, 1.0]})
    assert batch.errors[0] is None and np.isfinite(batch.values[0])
    assert "gamma(0)" in batch.errors[1] and "domain of gamma" in batch.errors[1]
    assert batch.errors[2] is not None and "log_base" in batch.errors[2]


X, Y = sp.symbols("x y", real=True)
SECOND = [  # (source, SymPy expression, point): the Hessian, by dual numbers
    ("gamma(x)*y", sp.gamma(X) * Y, {"x": 2.5, "y": 0.7}),
    ("sinc(x)*y^2", sp.sinc(X) * Y ** 2, {"x": 0.4, "y": 1.3}),
    ("log(x, y)", sp.log(X) / sp.log(Y), {"x": 3.0, "y": 5.0}),
    ("digamma(x) + sec(y)", sp.digamma(X) + sp.sec(Y), {"x": 1.7, "y": 0.4}),
    ("cot(x)*csc(y) + erfc(x*y)", sp.cot(X) * sp.csc(Y) + sp.erfc(X * Y), {"x": 0.8, "y": 1.1}),
    ("exp2(x)*lgamma(y)", 2 ** X * sp.log(sp.gamma(Y)), {"x": 0.3, "y": 3.5}),
]


@pytest.mark.parametrize("source, expr, at", SECOND, ids=[s for s, _, _ in SECOND])
def test_hessian_equals_sympy(source, expr, at):
    result = hessian(source, at)
    names = list(result.gradient)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            want = float(sp.diff(expr, sp.Symbol(a, real=True), sp.Symbol(b, real=True))
                         .evalf(30, subs={X: at["x"], Y: at["y"]}))
            assert math.isclose(result.hessian[i][j], want, rel_tol=1e-12, abs_tol=1e-14), (
                a, b, result.hessian[i][j], want)


def test_trigammas_second_derivative_is_computed_numerically():
    # the dual numbers use ψ'' (special.polygamma(2, ·)); SymPy's polygamma(3, x) is ψ'''
    result = hessian("trigamma(x)", {"x": 1.5})
    with mpmath.workdps(40):
        assert math.isclose(result.hessian[0][0], float(mpmath.polygamma(3, 1.5)), rel_tol=1e-12)


def test_diff_prints_derivatives_that_parse_back():
    printed = derivatives("gamma(x)*sinc(y) + log(x, y) + floor(x)")
    assert printed["x"] == "1/(x*log(y)) + digamma(x)*gamma(x)*sinc(y)"
    at = {"x": 2.2, "y": 3.0}
    for name, program in printed.items():
        want = evaluate("gamma(x)*sinc(y) + log(x, y) + floor(x)", at).gradient[name]
        assert math.isclose(evaluate(program, at).value, want, rel_tol=1e-14)


# The kinks of the step functions: the check sees the jump, AD takes 0.
def test_a_jump_is_reported_by_the_check(run):
    result = run("eval", "floor(x)", "--at", "x=2", "--check")
    assert result.exit_code == 1
    assert "f is not differentiable along x (at v1 = floor(2))" in result.stderr + result.output


def test_between_jumps_the_check_agrees(run):
    for source in ("floor(x)*x", "ceil(x)*x", "trunc(x)*x", "round(x)*x"):
        result = run("eval", source, "--at", "x=2.3", "--check")
        assert result.exit_code == 0, (source, result.output)
        assert "∂f/∂x = " in result.output


@pytest.mark.parametrize("a, b", [(-7.5, 2.0), (7.5, -2.0), (5.25, 0.5), (1e10 + 0.3, 3.0)])
def test_mod_has_the_sign_of_its_divisor(a, b):
    with mpmath.workdps(50):
        want = float(mpmath.mpf(a) - mpmath.mpf(b) * mpmath.floor(mpmath.mpf(a) / b))
    result = evaluate("mod(a, b)", {"a": a, "b": b})
    assert result.value == want
    assert result.gradient == {"a": 1.0, "b": -math.floor(a / b)}


def test_round_halves_to_even():
    assert [evaluate("round(x)", {"x": v}).value for v in (0.5, 1.5, 2.5, -2.5)] == [
        0.0, 2.0, 2.0, -2.0]


# -- the language: log with a base, aliases, arity messages ----------------------------------

def test_log_with_a_base_is_written_back_as_log(run):
    # traces and diff write the log_base row as the user did, and it reads back
    assert derivatives("log(x, y)")["y"] == "-log(x, y)/(y*log(y))"
    trace = run("eval", "log(x, 2)", "--at", "x=8", "--trace").output
    assert "v1 = log(x, 2) = log(8, 2)" in trace


def test_log_takes_one_or_two_arguments(run, reported):
    result = run("eval", "log(x, 2, 3)", "--at", "x=1")
    reported(result, 2, ["log takes 1 or 2 arguments, got 3", "hint: call it as log(a) or log(a, b)"])
    result = run("eval", "sin(x, 2)", "--at", "x=1")
    reported(result, 2, ["sin takes 1 argument, got 2"])
    assert "hint" not in result.stderr


@pytest.mark.parametrize("alias, name", [("ceiling", "ceil"), ("cosec", "csc"),
                                         ("tgamma", "gamma"), ("loggamma", "lgamma"),
                                         ("psi", "digamma"), ("ln", "log")])
def test_aliases(alias, name):
    assert evaluate(f"{alias}(x)", {"x": 2.7}).value == evaluate(f"{name}(x)", {"x": 2.7}).value


def test_a_base_of_one_is_outside_the_domain(run, reported):
    reported(run("eval", "log(x, 1)", "--at", "x=2"), 2, ["domain"])


# -- LaTeX: each function's own notation --------------------------------------------------------

LATEX = [
    ("sec(x) + csc(x) + cot(x)", r"\sec\left(x\right) + \csc\left(x\right) + \cot\left(x\right)"),
    ("log(x, 2)", r"\log_{2}\left(x\right)"),
    ("floor(x) - ceil(y)", r"\left\lfloor x\right\rfloor - \left\lceil y\right\rceil"),
    ("gamma(x)/lgamma(y)", r"\frac{\Gamma\left(x\right)}{\ln\left|\Gamma\left(y\right)\right|}"),
    ("digamma(x)*trigamma(x)", r"\psi\left(x\right) \, \psi'\left(x\right)"),
    ("exp2(x)^2", r"{\left(2^{x}\right)}^{2}"),
    ("erfc(x) + sinc(x) + round(x) + trunc(x)",
     r"\operatorname{erfc}\left(x\right) + \operatorname{sinc}\left(x\right) + "
     r"\operatorname{round}\left(x\right) + \operatorname{trunc}\left(x\right)"),
]


@pytest.mark.parametrize("source, latex", LATEX)
def test_latex_of_the_new_functions(source, latex):
    assert expression(parse(source).statements[-1]) == latex


# -- gradcli functions lists them ---------------------------------------------------------------

NEW_SYNTAX = ["sec(a)", "csc(a)", "cot(a)", "sinc(a)", "exp2(a)", "log(a, b)", "erfc(a)",
              "gamma(a)", "lgamma(a)", "digamma(a)", "trigamma(a)", "floor(a)", "ceil(a)",
              "trunc(a)", "round(a)", "mod(a, b)"]


def test_gradcli_functions_lists_them(run):
    listed = json.loads(run("functions", "--json").output)
    syntax = " ".join(row["syntax"] for row in listed)
    for form in NEW_SYNTAX:
        assert form in syntax, form
    rows = {row["name"]: row for row in listed}
    assert rows["gamma"]["derivatives"] == {"d/da": "digamma(a)*gamma(a)"}
    assert rows["log_base"]["derivatives"]["d/da"] == "1/(a*log(b))"
    assert "kπ" in rows["cot"]["domain"]


def test_the_console_script_lists_and_computes_them(gradcli_script):
    listed = subprocess.run([gradcli_script, "functions"], capture_output=True, text=True,
                            timeout=60, env={"COLUMNS": "200", "PATH": ""})
    assert listed.returncode == 0, listed.stderr
    for form in NEW_SYNTAX:
        assert form.split("(")[0] + "(" in listed.stdout, form
    # piped (| head), the catalogue fits 80 columns: its prose folds, no rule is broken
    assert max(len(line) for line in listed.stdout.splitlines()) <= 80
    out = subprocess.run([gradcli_script, "eval", "log(x, 2) + gamma(y)", "--at", "x=8,y=5",
                          "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["value"] == 27.0  # log2(8) + 4!
    assert math.isclose(result["gradient"]["x"], 1 / (8 * math.log(2)), rel_tol=1e-15)
