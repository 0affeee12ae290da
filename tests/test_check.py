"""--check and --expect: AD against numerical differentiation, and hand-derived gradients.

Expected derivatives are derived by hand with math.* (or are the one-sided slopes of the
textbook kinks), never copied from gradcli's output.
"""

import json
import math
import subprocess

import pytest
from click.testing import CliRunner

from gradcli.api import compile, evaluate
from gradcli.check import (DEFAULT_ATOL, DEFAULT_RTOL, base_step, check, check_result,
                           expected_values, parse_expectations)
from gradcli.cli import main
from gradcli.errors import InputError, ParseError
from gradcli.engine.primitives import TABLE
from gradcli.engine.reverse import reverse
from gradcli.views.json import check_json
from conftest import readme_runs
from test_cli import _console_script
from test_primitives import in_domain_points

SEED = "log(x)+x*y-sin(y)"

import mpmath  # noqa: E402

# ∂/∂y of the seed at (2, 3), 2 - cos(3), exactly and correctly rounded (the certified value)
with mpmath.workdps(50):
    DY = float(2 - mpmath.cos(3))


def checked(source, at, **options):
    return check_result(evaluate(source, at), **options)


def run(*args):
    return CliRunner().invoke(main, list(args))


# -- the numerical side -------------------------------------------------------------------------

def test_seed_example_agrees_to_better_than_1e_8_relative():
    result = checked(SEED, {"x": 2, "y": 3})
    assert result.ok
    assert [row.input for row in result.rows] == ["x", "y"]
    exact = {"x": 1 / 2 + 3, "y": 2 - math.cos(3)}
    for row in result.rows:
        assert row.ad == pytest.approx(exact[row.input], rel=1e-15)
        assert row.rel_error < 1e-8
        assert abs(row.numeric - exact[row.input]) / exact[row.input] < 1e-8
        # the error estimate is honest: no smaller than the real error, and not wildly larger
        assert abs(row.numeric - exact[row.input]) <= row.numeric_error < 1e-7
        assert row.scheme == "central" and not row.note


def test_step_is_scaled_to_the_input():
    cube_root = 2.0 ** (-52 / 3)
    for x in (0.0, 0.5, 1.0, 3.0, -40.0, 1e12, -1e-9):
        h = base_step(x)
        assert math.frexp(h)[0] == 0.5  # a power of two: x ± h is exact
        assert cube_root * max(1, abs(x)) / 2 ** 0.5 <= h <= cube_root * max(1, abs(x)) * 2 ** 0.5


def catalogue_source(prim):
    if prim.symbol and prim.arity == 2:
        return f"x {prim.symbol} y"
    if prim.symbol:
        return f"{prim.symbol}x"
    return f"{prim.name}({', '.join('xy'[:prim.arity])})"


@pytest.mark.parametrize("name", sorted(TABLE))
def test_every_catalogue_row_passes_the_check_at_in_domain_points(name):
    prim = TABLE[name]
    graph = compile(catalogue_source(prim))
    points = in_domain_points(prim)
    assert len(points) >= 3
    for args in points:
        at = dict(zip("xy", args))
        result = check_result(evaluate(graph, at))
        assert result.ok, (name, args, [(r.input, r.ad, r.numeric, r.note) for r in result.rows])
        assert len(result.rows) == prim.arity


# Ill-conditioned for a fixed step: exp(30) is 1e13, sin(1000 x) turns every 6e-3, and at 1e12
# a step of 1e-6 is below the spacing of floats, so x + h == x.
ILL_CONDITIONED = [
    ("exp(x)", 30.0, math.exp(30)),
    ("sin(1000*x)", 0.3, 1000 * math.cos(300)),
    ("sin(1000*x)", 1.234, 1000 * math.cos(1234)),
    ("sin(1000*x)", -2.5, 1000 * math.cos(-2500)),
    ("log(x)", 1e12, 1e-12),
    ("x^3", 1e8, 3e16),
]


@pytest.mark.parametrize("source, x, derivative", ILL_CONDITIONED)
def test_ill_conditioned_cases_pass_thanks_to_the_scaled_step(source, x, derivative):
    row = checked(source, {"x": x}).rows[0]
    assert row.ok, row
    assert row.numeric == pytest.approx(derivative, rel=1e-8)
    assert row.rel_error < DEFAULT_RTOL / 10


def test_a_fixed_step_would_fail_where_the_scaled_step_does_not():
    # the reason for scaling: with h = 1e-6 the difference quotient of log at 1e12 is 0
    x, h = 1e12, 1e-6
    assert (math.log(x + h) - math.log(x - h)) / (2 * h) == 0.0
    assert checked("log(x)", {"x": x}).rows[0].numeric == pytest.approx(1 / x, rel=1e-9)


# (source, point, exact derivative, words the note must contain)
DOMAIN_EDGES = [
    ("log(x)", 1e-9, 1e9, ["step shrunk", "x − ≈7.6e-06", "domain of log"]),
    ("log(x)", 1e-300, 1e300, ["step shrunk", "domain of log"]),
    ("sqrt(x)", 1e-12, 0.5 / 1e-6, ["step shrunk", "domain of sqrt"]),
    ("asin(x)", 1 - 2 ** -30, 1 / math.sqrt(1 - (1 - 2 ** -30) ** 2), ["step shrunk", "asin"]),
    ("acosh(x)", 1 + 2 ** -30, 1 / math.sqrt((1 + 2 ** -30) ** 2 - 1), ["step shrunk", "acosh"]),
    ("x^2.5", 0.0, 0.0, ["one-sided (forward)", "domain of pow"]),
    ("exp(x)", 709.78, math.exp(709.78), ["step shrunk", "overflows"]),
    ("1 + relu(x)", 1e-12, 1.0, ["one-sided (forward)", "crosses its kink"]),
]


@pytest.mark.parametrize("source, x, derivative, words", DOMAIN_EDGES)
def test_steps_near_a_domain_edge_shrink_or_become_one_sided(source, x, derivative, words):
    row = checked(source, {"x": x}).rows[0]
    assert row.ok, row
    assert row.numeric == pytest.approx(derivative, rel=1e-8, abs=1e-9)
    for word in words:
        assert word in row.note, row.note


def test_no_difference_quotient_is_an_inconclusive_row_not_a_crash():
    graph = compile("x + y")
    # a function defined at the point only: every shifted sample is rejected
    only_here = lambda values: values[graph.output] if values[graph.n_const] == 2 else math.nan  # noqa: E731
    result = check(graph, [2.0, 3.0], lambda p: {"x": 1.0}, function=only_here)
    row = result.rows[0]
    assert row.status == "inconclusive" and not row.ok
    assert result.ok and result.inconclusive == ["x"]  # only a confident disagreement fails
    strict = check(graph, [2.0, 3.0], lambda p: {"x": 1.0}, function=only_here, strict=True)
    assert not strict.ok
    assert math.isnan(row.numeric) and "no difference quotient" in row.note
    assert check_json(result)["rows"][0]["numeric"] is None  # JSON never carries NaN


def test_a_step_lost_to_rounding_is_reported_as_inconclusive():
    # y - 1e30 swallows any step in y: the float function is flat although its derivative is 1
    row = checked("sin(y - 1e30)", {"y": 1.0}).rows[0]
    assert not row.ok
    # AD's ∂f/∂y is cos(1 - 10^30) exactly (1e30 is the decimal typed), by mpmath
    import mpmath
    with mpmath.workdps(60):
        assert row.ad == pytest.approx(float(mpmath.cos(1 - mpmath.mpf(10) ** 30)), rel=1e-15)
    assert "inconclusive" in row.note and "lost to rounding" in row.note


def _atanh_near_minus_one(x, y):
    u = math.exp(y * x)  # 1 + a for a = expm1(y*x); atanh(a) = (y*x - log(2 - u)) / 2
    theta = (y * x - math.log(2 - u)) / 2 + y
    return {"x": -math.sin(theta) * y / (2 - u), "y": -math.sin(theta) * (x / (2 - u) + 1)}


def _acos_near_one(x):
    # 1 - erf(x)^2 = erfc(x) (1 + erf(x)), without the cancellation
    return {"x": -2 / math.sqrt(math.pi) * math.exp(-x * x) / math.sqrt(math.erfc(x) * (1 + math.erf(x)))}


# Values a few ulps from a singularity of the next function: f's computed values are quantised
# far more coarsely than one ulp of f, so difference quotients are accurate to 1e-5 .. 1e-9 only.
NEAR_SINGULARITIES = [
    ("cos(atanh(expm1(y*x)) + y)", {"x": -2.206455074020534, "y": 7.947440407245331},
     _atanh_near_minus_one(-2.206455074020534, 7.947440407245331)),
    ("acos(erf(x))", {"x": 4.2669}, _acos_near_one(4.2669)),
    ("acos(erf(x))", {"x": 3.615}, _acos_near_one(3.615)),
]


@pytest.mark.parametrize("source, at, exact", NEAR_SINGULARITIES)
def test_error_estimates_stay_honest_near_a_singularity(source, at, exact):
    for row in checked(source, at).rows:
        assert abs(row.numeric - exact[row.input]) <= row.numeric_error, row
        assert row.ok or "inconclusive" in row.note


# -- kinks --------------------------------------------------------------------------------------

# (source, point, input, AD's subgradient, slope from the left, slope from the right, words)
KINKS = [
    ("relu(x)", {"x": 0}, "x", 0.0, 0.0, 1.0, ["v1 = relu(0)", "relu'(0) = 0"]),
    ("abs(x)", {"x": 0}, "x", 0.0, -1.0, 1.0, ["v1 = abs(0)", "abs'(0) = 0"]),
    ("min(x, y)", {"x": 1, "y": 1}, "x", 0.5, 1.0, 0.0, ["min(1, 1)", "∂min/∂a = 0.5"]),
    ("min(x, y)", {"x": 1, "y": 1}, "y", 0.5, 1.0, 0.0, ["min(1, 1)", "∂min/∂b = 0.5"]),
    ("max(x, y)", {"x": -2, "y": -2}, "y", 0.5, 0.0, 1.0, ["max(-2, -2)", "∂max/∂b = 0.5"]),
    ("3*abs(x - 1) + x", {"x": 1}, "x", 1.0, -2.0, 4.0, ["abs(0)"]),
]


@pytest.mark.parametrize("source, at, name, ad, left, right, words", KINKS)
def test_kinks_fail_with_an_explanation(source, at, name, ad, left, right, words):
    result = checked(source, at)
    row = next(r for r in result.rows if r.input == name)
    assert not result.ok and not row.ok
    assert row.ad == ad
    assert row.kink is not None and not row.kink.differentiable
    assert row.kink.left == pytest.approx(left, abs=1e-9)
    assert row.kink.right == pytest.approx(right, abs=1e-9)
    assert row.numeric == pytest.approx((left + right) / 2, abs=1e-9)
    for word in words + [f"slope {left:g} from the left and {right:g} from the right",
                         "not differentiable"]:
        assert word in row.note, row.note


@pytest.mark.parametrize("source", ["sign(x)", "step(x) + 1"])
def test_a_jump_is_a_kink_without_slopes(source):
    row = checked(source, {"x": 0}).rows[0]
    assert not row.ok and row.kink.jump
    assert "jumps" in row.note and "derivative taken" not in row.note


def test_a_kink_node_where_f_is_smooth_passes():
    # relu(x)*x is x^2 on the right and 0 on the left: slope 0 on both sides, as AD says
    row = checked("relu(x)*x", {"x": 0}).rows[0]
    assert row.ok and row.kink.differentiable and "differentiable here" in row.note


def test_subgradients_that_do_not_add_up_to_the_slope_fail():
    # relu(x) + min(x, 0) is x on both sides of 0; AD's conventions give 0 + 1/2
    row = checked("relu(x) + min(x, y)", {"x": 0, "y": 0}).rows[0]
    assert not row.ok and row.kink.differentiable
    assert row.ad == 0.5 and row.numeric == pytest.approx(1.0)
    assert "v1 = relu(0) and v2 = min(0, 0) are at their kinks" in row.note
    assert "add up to 0.5" in row.note


# Where each row with a kink has one: 0 for relu, abs, sign, step, floor, ceil; 1 for trunc (at 0
# it is continuous, 0 on both sides); a tie for min and max; a half-integer for round; a/b an
# integer for mod.
KINK_AT = {"trunc": (1.0,), "round": (0.5,), "mod": (0.0, 1.0)}


def test_the_kink_column_marks_rows_that_turn_or_jump_at_their_kink():
    h = 1e-6
    for name, prim in TABLE.items():
        if prim.kink is None:
            continue
        args = list(KINK_AT.get(name, [0.0] * prim.arity))
        assert prim.kink(*args) == 0, name
        a, rest = args[0], args[1:]
        left = (prim.primal(*args) - prim.primal(a - h, *rest)) / h
        right = (prim.primal(a + h, *rest) - prim.primal(*args)) / h
        jump = abs(prim.primal(a + h, *rest) - prim.primal(a - h, *rest)) > 0.5
        assert left != right or jump, name
        # off the kink, each side has a side of its own (-1 and +1 for a single kink; a
        # step function names the piece between two of its jumps)
        below, above = prim.kink(a - 0.25, *rest), prim.kink(a + 0.25, *rest)
        assert below != 0 and above != 0 and below != above, name
        if name not in ("floor", "ceil", "trunc", "round", "mod"):
            assert prim.kink(1.0, *rest) == 1 and prim.kink(-1.0, *rest) == -1, name


# -- --expect -----------------------------------------------------------------------------------

def test_a_right_formula_passes_and_a_wrong_one_fails_by_how_much():
    at = {"x": 2.0, "y": 3.0}
    result = evaluate(SEED, at)
    formulas = parse_expectations(["x=1/x+y", "y= x+cos(y)"])
    report = check_result(result, expected=expected_values(formulas, at, ["x", "y"]))
    x, y = report.rows
    assert x.expected.ok and x.expected.value == 3.5
    assert not y.expected.ok and not report.ok
    assert y.ok  # AD itself agrees with the difference quotient
    # (x + cos y) - (x - cos y) = 2 cos y
    assert y.expected.abs_error == pytest.approx(abs(2 * math.cos(3)), rel=1e-12)
    assert y.expected.formula == "x+cos(y)"


@pytest.mark.parametrize("texts, words", [
    (["x"], "NAME=FORMULA"),
    (["=x"], "NAME=FORMULA"),
    (["x="], "NAME=FORMULA"),
    (["2x=1"], "not a valid name"),
    (["x=1", "x=2"], "x twice"),
])
def test_malformed_expectations(texts, words):
    with pytest.raises(InputError, match=words):
        parse_expectations(texts)


def test_formula_errors_point_into_the_formula():
    with pytest.raises(ParseError) as info:
        expected_values({"x": "1/x+"}, {"x": 1.0}, ["x"])
    assert info.value.source == "1/x+" and str(info.value).startswith("expect x: the formula")
    assert info.value.span == (4, 5) and info.value.option == "expect"
    with pytest.raises(InputError, match="holds ';'") as info:
        expected_values({"x": "1;y=2"}, {"x": 1.0}, ["x"])
    assert info.value.span == (1, 2)
    with pytest.raises(InputError, match="assignment"):
        expected_values({"x": "a=y"}, {"x": 1.0}, ["x"])
    with pytest.raises(InputError, match="no value for input q"):
        expected_values({"x": "q"}, {"x": 1.0}, ["x"])
    with pytest.raises(InputError, match="not part of the gradient"):
        expected_values({"z": "1"}, {"x": 1.0}, ["x"])


# -- the same comparison for other derivatives (a Hessian row) ---------------------------------

def test_check_compares_any_derivative_of_any_function_of_the_forward_values():
    graph = compile("x^3*y")
    x_slot = graph.n_const + graph.inputs.index("x")
    gradient_x = lambda values: reverse(graph, values)[0][x_slot]  # noqa: E731  ∂f/∂x by AD
    hessian_row = lambda p: {"x": 6 * p[0] * p[1], "y": 3 * p[0] ** 2}  # noqa: E731  by hand
    assert check(graph, [2.0, 3.0], hessian_row, function=gradient_x).ok
    wrong = lambda p: {"x": 6 * p[0] * p[1], "y": 3 * p[0]}  # noqa: E731
    assert [r.ok for r in check(graph, [2.0, 3.0], wrong, function=gradient_x).rows] == [True, False]


def test_negative_tolerances_are_rejected():
    with pytest.raises(InputError):
        checked("x", {"x": 1}, rtol=-1)


# -- the command line ---------------------------------------------------------------------------

def test_cli_check_table_and_exit_code_0():
    piped = run("eval", SEED, "--at", "x=2,y=3", "--check")
    assert piped.exit_code == 0, piped.output
    assert max(len(line) for line in piped.output.splitlines()) <= 80  # headers fold, numbers whole
    assert "2.989992496532" in piped.output and "6.9e-11" in piped.output
    result = run("eval", SEED, "--at", "x=2,y=3", "--check", "--width", "120")
    out = result.output
    assert out.startswith("f     = 6.552027172500\n∂f/∂x = 3.500000000000\n")
    for text in ("Gradient check: AD against numerical differentiation", "input", "AD",
                 "numerical", "± (est.)", "|AD − num.|", "rel. error", "status",
                 "2.989992496600", "✓ AD agrees with numerical differentiation for x, y "
                 "(rtol 1e-07, atol 1e-09)"):
        assert text in out, text
    assert "FAIL" not in out and "\x1b[" not in out


def test_cli_check_of_a_constant_has_nothing_to_check():
    result = run("eval", "2*pi", "--check")
    assert result.exit_code == 0
    assert result.output.splitlines()[1:] == ["nothing to check: the gradient has no components"]


def test_cli_kink_fails_with_exit_1_and_still_prints_the_gradient():
    result = run("eval", "relu(x)", "--at", "x=0", "--check")
    assert result.exit_code == 1
    out = result.output
    assert "f     = 0\n∂f/∂x = 0\n" in out
    assert "FAIL" in out and "relu'(0) = 0" in out
    assert "slope 0 from the left and 1 from the right" in out
    assert "✗ check failed" in out and "not differentiable along x" in out


def test_cli_expect_implies_check_and_a_wrong_formula_fails():
    ok = run("eval", SEED, "--at", "x=2,y=3", "--expect", "x=1/x+y", "--expect", "y=x-cos(y)")
    assert ok.exit_code == 0, ok.output
    assert "Gradient check" in ok.output and "1/x+y = 3.500000000000" in ok.output
    assert "your formulas for x, y agree with AD" in ok.output
    wrong = run("eval", SEED, "--at", "x=2,y=3", "--expect", "y=x+cos(y)")
    assert wrong.exit_code == 1
    assert f"is off by {2 * math.cos(3):+.3g}" in wrong.output  # (x+cos y) - (x-cos y)


def test_cli_tolerances():
    # with no tolerance at all only exact agreement passes, and ∂f/∂y differs in the 11th digit,
    # less than the difference quotient's own error: it cannot decide (exit 0 unless --strict)
    result = run("eval", SEED, "--at", "x=2,y=3", "--check", "--rtol", "0", "--atol", "0")
    assert result.exit_code == 0
    assert "inconclusive for x, y" in result.output and "(rtol 0, atol 0)" in result.output
    result = run("eval", SEED, "--at", "x=2,y=3", "--check", "--rtol", "0", "--atol", "0",
                 "--strict")
    assert result.exit_code == 1
    assert "check failed (rtol 0, atol 0)" in result.output and "inconclusive for x, y" in result.output
    assert run("eval", SEED, "--at", "x=2,y=3", "--check", "--rtol", "1e-9").exit_code == 0
    assert run("eval", "x", "--at", "x=1", "--check", "--rtol", "-1").exit_code == 2
    help_text = " ".join(run("eval", "--help").output.split())
    assert f"default {DEFAULT_RTOL:g}".replace("e-07", "e-7") in help_text
    assert f"default {DEFAULT_ATOL:g}".replace("e-09", "e-9") in help_text


def test_cli_check_json():
    result = run("eval", SEED, "--at", "x=2,y=3", "--json", "--check", "--expect", "y=x+cos(y)")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["gradient"] == {"x": 3.5, "y": DY}
    check_data = data["check"]
    assert check_data["ok"] is False
    assert (check_data["rtol"], check_data["atol"]) == (DEFAULT_RTOL, DEFAULT_ATOL)
    x, y = check_data["rows"]
    assert set(x) == {"input", "ad", "numeric", "numeric_error", "abs_error", "rel_error", "ok",
                      "status", "step", "scheme"}  # no note, no expected: none to give
    assert x["input"] == "x" and x["ad"] == 3.5 and x["ok"] is True and x["status"] == "agree"
    assert check_data["inconclusive"] == [] and check_data["strict"] is False
    assert abs(x["numeric"] - 3.5) <= x["numeric_error"]
    assert y["ok"] is True and y["expected"]["ok"] is False
    assert y["expected"]["formula"] == "x+cos(y)" and y["expected"]["ad"] == DY
    assert y["expected"]["value"] == pytest.approx(2 + math.cos(3), rel=1e-15)
    assert y["expected"]["abs_error"] == pytest.approx(abs(2 * math.cos(3)), rel=1e-12)


def test_cli_check_json_note_and_trace():
    result = run("eval", "log(x)", "--at", "x=1e-9", "--check", "--json", "--trace")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert "trace" in data and data["check"]["ok"] is True
    assert "step shrunk" in data["check"]["rows"][0]["note"]
    text = run("eval", SEED, "--at", "x=2,y=3", "--check", "--trace").output
    assert text.index("Adjoints") < text.index("Gradient check")


def test_cli_check_with_wrt_seed_and_export(tmp_path):
    path = tmp_path / "check.txt"
    result = run("eval", SEED, "--at", "x=2,y=3", "--wrt", "y", "--seed", "2", "--check",
                 "--json", "--export", str(path))
    assert result.exit_code == 0
    rows = json.loads(result.output)["check"]["rows"]
    assert [r["input"] for r in rows] == ["y"]
    assert rows[0]["ad"] == pytest.approx(2 * (2 - math.cos(3)), rel=1e-15)
    assert abs(rows[0]["numeric"] - rows[0]["ad"]) < 1e-8
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(result.output)
    result = run("eval", SEED, "--at", "x=2,y=3", "--check", "--export", str(path))
    assert result.exit_code == 0
    assert "Gradient check" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("args, words", [
    (["--expect", "x"], "NAME=FORMULA"),
    (["--expect", "z=1"], "not part of the gradient"),
    (["--expect", "x=1/x+"], "1/x+"),
    (["--expect", "x=1/q"], "no value for input q"),
])
def test_cli_expect_errors_exit_2(args, words):
    result = run("eval", SEED, "--at", "x=2,y=3", *args)
    assert result.exit_code == 2
    assert words in result.stderr and "Traceback" not in result.output


def test_installed_console_script_check(tmp_path):
    script = _console_script()
    ok = subprocess.run([script, "eval", SEED, "--at", "x=2,y=3", "--check"],
                        capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert "✓ AD agrees" in ok.stdout
    kink = subprocess.run([script, "eval", "abs(x)", "--at", "x=0", "--check", "--json"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert kink.returncode == 1
    row = json.loads(kink.stdout)["check"]["rows"][0]
    assert row["ok"] is False and "slope -1 from the left and 1 from the right" in row["note"]


def test_the_docs_show_check_and_expect_runs():
    """tests/test_docs.py replays every example; here: the pages have --check and --expect ones."""
    commands = [command for command, _ in readme_runs(lambda c: "--check" in c or "--expect" in c)]
    assert any("--expect" in c for c in commands) and any("relu" in c for c in commands)


# -- the numbers in the check's notes and the engine's messages: the double's digits or marked ----

def test_a_rounded_number_in_a_note_is_marked_and_an_exact_one_is_not():
    from gradcli.check import _shown
    step = 2.0 ** -26  # 1.4901161193847656e-08: 1.5e-08 is not it
    assert _shown(step, 2) == "≈1.5e-08"
    assert _shown(1e-06, 2) == "1e-06" and _shown(0.5, 12) == "0.5" and _shown(2.0, 12) == "2"
    assert _shown(math.inf, 3) == "inf"


def test_a_kink_of_a_computed_argument_is_shown_as_float64s():
    # x*x - 1 at x = 1 is 0 in float64: the kink's argument is a double, marked so
    result = run("eval", "relu(x*x - 1)", "--at", "x=1", "--check")
    assert "v3 = relu(0) in float64 is at its kink, where AD uses relu'(0) = 0" in result.output
    # an input's own value is the number given: no mark
    result = run("eval", "relu(x)", "--at", "x=0", "--check")
    assert "v1 = relu(0) is at its kink" in result.output


def test_a_derivative_that_is_not_finite_names_float64s_arguments():
    # ∂(a^b)/∂b = a^b·ln a at a = x + 1 = -1: ln(-1) is not real (mpmath: a complex number)
    assert mpmath.log(-1).imag != 0
    result = run("eval", "(x+1)^(y-2)", "--at", "x=-2,y=3")
    assert result.exit_code == 1
    assert "v3 = -1 ^ 1 in float64: the derivative by v2" in result.stderr
    result = run("hessian", "x^1.5", "--at", "x=0")
    assert "v1 = 0 ^ 1.5: the second derivative by x" in result.stderr
