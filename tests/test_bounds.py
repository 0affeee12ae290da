"""gradcli.engine.bounds: every digit a batch row claims is right.

The reference is test_properties' (the program translated to SymPy independently of gradcli's
rules, differentiated symbolically, evaluated with mpmath at a precision raised until stable).
A row that claims d certain digits must be within ``|value|·10^-d / 2`` of the exact value
(plus the reference's own error): that is what ``floor(-log10(2·err/|value|))`` promises. Rows
the engine fails (outside a domain) claim nothing. The examples the issue named are kept: the
batch rows of ``(1-cos(x))/x^2`` near 0 are the ones that cancel, and must claim almost nothing.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, note

import gradcli
from gradcli.engine.batch import evaluate_columns
from gradcli.engine.bounds import MIN_DIGITS, SMALLEST_NORMAL, certain_digits
from gradcli.language.printer import to_source
from strategies import Case, cases
from test_properties import case, reference, sympy_examples, sympy_program, sympy_time_limit


def claimed_digits_hold(got: float, digits: int, ref) -> bool:
    if digits == 0:  # nothing claimed
        return True
    allowed = max(abs(got) * 10.0 ** -digits / 2, SMALLEST_NORMAL)
    return abs(mpmath.mpf(got) - ref.value) <= allowed + ref.own_error


@sympy_examples(25)  # the SymPy reference is slow (~1.7 s an example)
@given(cases())
@example(case("(1-cos(x))/x^2", x=1e-8))
@example(case("(1-cos(x))/x^2", x=1.75e-5))
@example(case("log(x)+x*y-sin(y)", x=4, y=-1))
@example(case("x - cos(y)", x=0.5403023058681398, y=1))  # cancels to about 1e-17
def test_every_claimed_digit_is_right(case: Case):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    graph = gradcli.compile(source)
    columns = {name: np.array([case.point[name]]) for name in graph.inputs}
    result = evaluate_columns(graph, columns)
    if result.errors[0] is not None:
        return
    digits = int(certain_digits(graph, columns)[0])
    note(f"digits claimed: {digits}")
    with sympy_time_limit():
        prog = sympy_program(case.program, case.point)
        got = [((), float(result.values[0]))] + [((name,), float(result.gradient[name][0]))
                                                  for name in graph.inputs]
        for wrt, value in got:
            ref = reference(prog, case.point, wrt)
            if not mpmath.isfinite(ref.value):
                continue
            assert claimed_digits_hold(value, digits, ref), (wrt, value, ref.value, digits)


@pytest.mark.parametrize("x, most", [(1e-8, 0), (1.75e-5, 2), (1e-3, 9)])
def test_the_cancelling_rows_claim_little(x, most):
    """(1-cos(x))/x^2: float64 gets 1.11 and -1.2e8 at 1e-8 (truth 0.5, -8.3e-10)."""
    graph = gradcli.compile("(1-cos(x))/x^2")
    assert certain_digits(graph, {"x": np.array([x])})[0] <= most


def test_well_conditioned_rows_claim_nearly_every_digit():
    graph = gradcli.compile("log(x)+x*y-sin(y)")
    rng = np.random.default_rng(5)
    columns = {"x": rng.uniform(0.1, 10, 5000), "y": rng.uniform(-5, 5, 5000)}
    digits = certain_digits(graph, columns)
    assert np.median(digits) >= 14 and np.mean(digits >= MIN_DIGITS) > 0.99


def test_a_kink_inside_the_interval_is_not_certified():
    # abs(x - 0.1*3 + 0.3): x - 0.30000000000000004 + 0.3 is about 1e-17, where abs turns; the
    # derivative's sign is not known
    graph = gradcli.compile("abs(x - 0.1*3 + 0.3)")
    assert certain_digits(graph, {"x": np.array([5.551115123125783e-17])})[0] == 0


@pytest.mark.parametrize("source", ["x; tgamma(0 - 2.3)", "x + lgamma(-2.5)", "x*digamma(-0.5)"])
def test_a_gamma_family_constant_left_of_0_is_left_to_the_certified_engine(source):
    """The gamma family's bound holds right of 0 only: a constant folded left of it (a float,
    whose log of a negative end raises where NumPy's gives nan) certifies no digit, and the
    row's numbers are still computed."""
    graph = gradcli.compile(source)
    assert certain_digits(graph, {"x": np.array([0.5])})[0] == 0


@pytest.mark.parametrize("source", ["x + 0^e", "x*0^e", "y = 0^e; x + y", "pow(0, e) + x"])
def test_zero_to_an_inexact_power_is_an_exact_zero(source):
    """0^e folds to 0, exactly 0 whatever the exponent's rounding (e is within an ulp of the
    double): its bound is 0, not the ValueError of math's log(0) (hypothesis found it)."""
    graph = gradcli.compile(source)
    xs = np.array([1.5, -2.0])
    digits = certain_digits(graph, {"x": xs})
    assert (digits >= 15).all()
    r = evaluate_columns(graph, {"x": xs})
    want = (xs + 0.0, np.ones(2)) if "+" in source else (0 * xs, np.zeros(2))
    assert (r.values == want[0]).all() and (r.gradient["x"] == want[1]).all()


def test_rows_without_rounding_error_claim_nearly_all_digits():
    # the bound allows half an ulp per operation: it cannot know that 3*4 + 2 is exact
    graph = gradcli.compile("x*y + 2")
    assert certain_digits(graph, {"x": np.array([3.0]), "y": np.array([4.0])})[0] >= 15
    graph = gradcli.compile("0*x")  # folded to an exact 0, the gradient too
    assert certain_digits(graph, {"x": np.array([3.0])})[0] == 17


@pytest.mark.parametrize("source", ["x^2", "x^3 - x", "x^-2", "1/x^4"])
def test_a_whole_power_of_a_negative_base_is_bounded(source):
    """pow's slope reads ``b - 1``: computed from the exact constant 2 it is the exact 1, so a
    negative base keeps its bound (it claimed 0 digits, and every such row was recomputed)."""
    graph = gradcli.compile(source)
    xs = np.array([-1.5, -2.0, -0.3])
    digits = certain_digits(graph, {"x": xs})
    assert (digits >= 14).all()
    f = {"x^2": lambda x: (x**2, 2*x), "x^3 - x": lambda x: (x**3 - x, 3*x**2 - 1),
         "x^-2": lambda x: (x**-2, -2*x**-3), "1/x^4": lambda x: (x**-4, -4*x**-5)}[source]
    r = evaluate_columns(graph, {"x": xs})
    with mpmath.workdps(50):
        for i, x in enumerate(xs):
            value, slope = f(mpmath.mpf(float(x)))
            for got, want in ((r.values[i], value), (r.gradient["x"][i], slope)):
                assert abs(mpmath.mpf(float(got)) - want) <= abs(want) * 10.0 ** -int(digits[i]) / 2


# -- the command line -----------------------------------------------------------------------------

def test_with_digits_adds_the_column_and_cancelling_rows_are_recomputed_certified(run):
    # at 1e-8 float64 keeps no digit of f (1 - cos(x) cancels): the row goes to the certified
    # engine, and f is 1/2 - x^2/24 = 0.49999999999999999583 (mpmath), 0.5 as a double
    result = run("eval", "(1-cos(x))/x^2", "--grid", "x=1e-8:1:3", "--with-digits")
    assert result.exit_code == 0, result.stderr
    header, tiny, half, one = result.stdout.splitlines()
    assert header == "x,f,df/dx,digits,error"
    x, f, dfdx, digits, error = tiny.split(",")
    assert float(f) == 0.5 and int(digits) >= 10 and error == ""
    import mpmath
    with mpmath.workdps(50):
        slope = mpmath.diff(lambda t: (1 - mpmath.cos(t)) / t ** 2, mpmath.mpf("1e-8"))
    assert math.isclose(float(dfdx), float(slope), rel_tol=1e-10)
    assert half.split(",")[3] == one.split(",")[3] == "12"
    assert math.isclose(float(one.split(",")[1]), 1 - math.cos(1.0), rel_tol=1e-12)


def test_digits_asks_for_that_many_in_every_row(run):
    result = run("eval", "x - cos(y)", "--grid", "x=0.5:2:2,y=1:1:1", "--digits", "15",
                 "--with-digits", "--json")
    import json
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(row["digits"] >= 15 or row["error"].startswith("not certified") for row in rows)


def test_with_digits_is_refused_for_one_point(run, reported):
    reported(run("eval", "x", "--at", "x=1", "--with-digits"), 2, ["--with-digits"])


def test_uncertain_rows_go_to_the_certified_engine(run, monkeypatch):
    """engine.rows.recompute speaks gradcli.engine.certify.certify's API (issue 22: a value and a
    gradient of Proven floats, each with its digits). A stand-in of that API computed with
    mpmath (an independent reference) takes the rows float64 cannot vouch for."""
    import sys
    import types

    class Proven(float):
        def __new__(cls, value, digits):
            self = super().__new__(cls, value)
            self.digits = digits
            return self

    calls = []

    def certify(graph, point, *, wrt_slots=None, digits=15):
        calls.append(point)
        with mpmath.workdps(60):
            x = mpmath.mpf(point[0])
            f = (1 - mpmath.cos(x)) / x ** 2
            df = mpmath.diff(lambda t: (1 - mpmath.cos(t)) / t ** 2, x)
        return types.SimpleNamespace(value=Proven(float(f), 15), gradient=[Proven(float(df), 15)])

    monkeypatch.setitem(sys.modules, "gradcli.engine.certify",
                        types.SimpleNamespace(certify=certify))
    result = run("eval", "(1-cos(x))/x^2", "--grid", "x=1e-8:1:3", "--with-digits")
    assert result.exit_code == 0, result.output
    tiny = result.stdout.splitlines()[1].split(",")
    assert calls == [[1e-8]]  # only the row that needed it
    assert float(tiny[1]) == 0.5 and math.isclose(float(tiny[2]), -8.333333333333e-10,
                                                  rel_tol=1e-12)
    assert tiny[3] == "15"
