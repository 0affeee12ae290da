"""Every digit gradcli prints is proven: certified values and gradients (docs/precision.md).

The references are mpmath at 200 digits, evaluating the same source text with its own functions
(decimal literals and inputs as the exact decimals typed), and Python's ``decimal`` module for the
rounding to the printed number of significant digits: neither shares code with gradcli's engine.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from decimal import MAX_EMAX, MIN_EMIN, ROUND_HALF_EVEN, Context, Decimal

import mpmath
import pytest
from hypothesis import given, settings, strategies as st

import gradcli
from gradcli.language.ast import Assign, Binary, Call, Num, Unary, Var
from gradcli.language.parser import parse
from gradcli.language.printer import to_source
from gradcli.engine.primitives import ALIASES
from strategies import cases
from references import REFERENCES

# -- an independent reference: mpmath on the source text ----------------------------------------

# the table of references' mpmath counterparts, one per row, with the aliases and log's base
_MP = {name: ref.mp for name, ref in REFERENCES.items()}
_MP.update({alias: _MP[name] for alias, name in ALIASES.items() if name in _MP})
_MP["log"] = lambda a, b=None: mpmath.log(a) if b is None else mpmath.log(a) / mpmath.log(b)


def reference(source: str, point: dict) -> callable:
    """The program's output as a function of its inputs (mpf), evaluated by mpmath."""
    program = parse(source)

    def value(node, env):
        t = type(node)
        if t is Num:
            return mpmath.mpf(source[node.span[0]:node.span[1]] or repr(node.value))
        if t is Var:
            if node.name in env:
                return env[node.name]
            return {"pi": mpmath.pi, "e": mpmath.e}[node.name]
        if t is Unary:
            v = value(node.operand, env)
            return -v if node.op == "-" else v
        if t is Binary:
            a, b = value(node.left, env), value(node.right, env)
            return {"+": a + b, "-": a - b, "*": a * b}.get(node.op) if node.op in "+-*" else (
                a / b if node.op == "/" else mpmath.power(a, b))
        if t is Call:
            return _MP[node.name](*(value(arg, env) for arg in node.args))
        raise TypeError(node)

    def run(inputs: dict):
        env = dict(inputs)
        last = None
        bare = []
        for stmt in program.statements:
            if type(stmt) is Assign:
                v = value(stmt.value, env)
                if stmt.op != "=":
                    v = {"+=": env[stmt.name] + v, "-=": env[stmt.name] - v,
                         "*=": env[stmt.name] * v, "/=": env[stmt.name] / v}[stmt.op]
                env[stmt.name] = last = v
            else:
                last = value(stmt, env)
                bare.append(last)
        return bare[-1] if bare else last
    return run


def rounded(x, digits: int) -> Decimal:
    """``x`` (mpf) correctly rounded, half-even, to ``digits`` significant digits."""
    return Context(prec=digits, rounding=ROUND_HALF_EVEN, Emax=MAX_EMAX, Emin=MIN_EMIN).plus(
        Decimal(mpmath.nstr(x, digits + 60, strip_zeros=False)))


def shows(text: str, x, digits: int) -> bool:
    """Whether the printed ``text`` is ``x`` correctly rounded to ``digits`` digits (or, past the
    precision cap, fewer: the digits it shows, or ``0 ± bound`` holding x)."""
    if "±" in text:  # beside the reference's own error at 200 digits
        return abs(x) <= mpmath.mpf(text.split("±")[1]) + mpmath.mpf(10) ** -150
    if text == "0":  # exactly 0 (mpmath's numerical derivative of 0 is about 1e-200, not 0)
        return abs(x) < mpmath.mpf(10) ** -150
    if x == 0:  # below what the reference resolves at 200 digits (sech(1e5)^2, not 0)
        return abs(Decimal(text)) < Decimal("1e-150")
    return Decimal(text) == rounded(x, digits) and len(Decimal(text).as_tuple().digits) == digits


def truth(source: str, point: dict[str, str], dps: int = 200):
    """(value, {input: ∂f/∂input}) at ``dps`` digits, by mpmath."""
    with mpmath.workdps(dps):
        f = reference(source, point)
        at = {name: mpmath.mpf(v) for name, v in point.items()}
        value = f(at)
        gradient = {}
        for name in at:
            def along(t, name=name):
                return f({**at, name: t})
            gradient[name] = mpmath.diff(along, at[name])
        return value, gradient


# -- the issue's table, on the installed console script ----------------------------------------

TABLE = [
    # command, expected f, expected ∂f/∂x, exit code
    (["(1-cos(x))/x^2", "--at", "x=1e-8"], "0.5000000000000", "-8.333333333333e-10", 0),
    (["sqrt(x^2+1)-x", "--at", "x=1e8"], "5.000000000000e-9", "-5.000000000000e-17", 0),
    (["(exp(x)-1)/x", "--at", "x=1e-12"], "1.000000000001", "0.5000000000003", 0),
    (["1/(1-cos(x))", "--at", "x=1e-8"], "2.000000000000e16", "-4.000000000000e24", 0),
    (["x^50", "--at", "x=1e-7"], "1.000000000000e-350", "5.000000000000e-342", 0),
    (["exp(x)", "--at", "x=1000"], "1.970071114017e434", "1.970071114017e434", 0),
    (["x", "--at", "x=123456789.123456789"], "123456789.1235", "1.000000000000", 0),
]


def lines(out: str) -> dict[str, str]:
    return {k.strip(): v.strip() for k, _, v in (line.partition("=") for line in out.splitlines())
            if _}


@pytest.mark.parametrize("args, f, df, code", TABLE, ids=[t[0][0] for t in TABLE])
def test_the_issues_table_prints_only_proven_digits(gradcli_script, args, f, df, code):
    done = subprocess.run([gradcli_script, "eval", *args], capture_output=True, text=True,
                          encoding="utf-8")
    assert done.returncode == code, done.stderr
    shown = lines(done.stdout)
    assert shown["f"] == f and shown["∂f/∂x"] == df
    # independently: mpmath's value rounds to what is printed
    value, gradient = truth(args[0], {"x": args[2].partition("=")[2]})
    assert shows(shown["f"], value, 13) and shows(shown["∂f/∂x"], gradient["x"], 13)


def test_the_seed_example_prints_as_before(gradcli_script):
    done = subprocess.run([gradcli_script, "eval", "log(x)+x*y-sin(y)", "--at", "x=2,y=3"],
                          capture_output=True, text=True, encoding="utf-8")
    assert done.stdout == ("f     = 6.552027172500\n∂f/∂x = 3.500000000000\n"
                           "∂f/∂y = 2.989992496600\n")
    assert done.stderr == "" and done.returncode == 0


def test_check_approves_only_proven_digits(gradcli_script):
    done = subprocess.run([gradcli_script, "eval", "sqrt(x^2+1)-x", "--at", "x=1e8", "--check",
                           "--float64"], capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 1
    assert "is not the proven -5.000000000000e-17" in done.stdout
    done = subprocess.run([gradcli_script, "eval", "sqrt(x^2+1)-x", "--at", "x=1e8", "--check"],
                          capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0 and "0/13" in done.stdout  # float64's digits, per component


def test_expect_cannot_pass_a_formula_wrong_by_100_percent(gradcli_script):
    done = subprocess.run([gradcli_script, "eval", "1e-10*x^3", "--at", "x=1", "--expect",
                           "x=0"], capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 1 and "your formula for ∂f/∂x is off" in done.stdout
    done = subprocess.run([gradcli_script, "eval", "1e-10*x^3", "--at", "x=1", "--expect",
                           "x=3e-10*x^2"], capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0


def test_true_domain_errors_stay_errors(gradcli_script):
    for expression, at in (("log(x)", "x=-1"), ("1/x", "x=0"), ("1/(x-0.1)", "x=0.1")):
        done = subprocess.run([gradcli_script, "eval", expression, "--at", at],
                              capture_output=True, text=True, encoding="utf-8")
        assert done.returncode == 2, (expression, done.stderr)
        assert "domain" in done.stderr or "division by zero" in done.stderr


def test_a_kink_met_exactly_uses_the_convention_and_says_so(gradcli_script):
    # x - 0.1 is exactly 0 at x = 0.1 (decided in rational arithmetic, not in floats)
    done = subprocess.run([gradcli_script, "eval", "abs(x-0.1)", "--at", "x=0.1"],
                          capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0
    assert lines(done.stdout) == {"f": "0", "∂f/∂x": "0"}
    assert "exactly at its kink" in done.stderr


# A turn met exactly whose adjoint is exactly 0 takes neither side's slope: logsumexp's and
# softmax's max shift at a tie carries 1 - 1/2 - 1/2 = 0 (no note); a tie that reaches the
# output (max itself, or scaled) keeps its note. Expected gradients: softmax by hand (1/2 each;
# for softmax(z)[0] at a tie, s(1 - s) = 1/4 and -s·s = -1/4).
def _softmax(z):
    exps = [mpmath.exp(mpmath.mpf(v)) for v in z]
    return [e / sum(exps) for e in exps]


def _softmax_row(z, i):  # ∂softmax(z)[i]/∂z_j = s_i (δ_ij - s_j)
    s = _softmax(z)
    return [float(s[i] * ((1 if i == j else 0) - s[j])) for j in range(len(z))]


# A tie of the shift where exp(x - m) is irrational (exp(-1)): the path through m carries
# 1 - Σ softmax, 0 exactly though no ball shows it; the shift's max is no kink at all
# (Graph.shifts). A max of the user's own at the same tie keeps its note.
SHIFT_TIES = [
    ("logsumexp(z)", "z=[2,2,1]", False, [float(s) for s in _softmax([2, 2, 1])]),
    ("softmax(z)[0]", "z=[2,2,1]", False, _softmax_row([2, 2, 1], 0)),
    ("log_softmax(z)[1]", "z=[3,3,1]", False,
     [float((1 if j == 1 else 0) - s) for j, s in enumerate(_softmax([3, 3, 1]))]),
    ("softmax(z)[0] + max(z)", "z=[2,2,1]", True,
     [g + h for g, h in zip(_softmax_row([2, 2, 1], 0), [0.5, 0.5, 0.0])]),
]

KINK_NOTES = SHIFT_TIES + [
    ("logsumexp(z)", "z=[2,2]", False, [0.5, 0.5]),
    ("softmax(z)[0]", "z=[2,2]", False, [0.25, -0.25]),
    ("log_softmax(z)[1]", "z=[3,3]", False, [-0.5, 0.5]),
    ("max(x)", "x=[2,2]", True, [0.5, 0.5]),
    ("max(x, y)*0.1", "x=1,y=1", True, [0.05, 0.05]),
    ("abs(x - 0.1)", "x=0.1", True, [0.0]),
]


@pytest.mark.parametrize("expression, at, noted, gradient", KINK_NOTES)
def test_a_kink_note_only_where_the_kink_can_matter(expression, at, noted, gradient):
    from click.testing import CliRunner
    from gradcli.cli import main
    done = CliRunner().invoke(main, ["eval", expression, "--at", at])
    assert done.exit_code == 0, done.output
    assert ("exactly at its kink" in done.output) == noted, done.output
    result = gradcli.evaluate(expression, dict(_point(at)), quick=True)
    got = [float(v) for v in result.gradient.values()]
    assert got == pytest.approx(gradient, abs=1e-15)
    assert bool(result.certified.kinks) == noted
    assert bool(gradcli.evaluate(expression, dict(_point(at))).certified.kinks) == noted


def _point(at: str):
    for item in at.replace("],", "];").split(";") if "[" in at else at.split(","):
        name, value = item.split("=")
        yield name, (json.loads(value) if value.startswith("[") else value)  # "0.1": exact


def test_a_kink_note_only_where_the_kink_can_matter_installed(gradcli_script):
    for expression, at, noted, _ in KINK_NOTES[:1] + KINK_NOTES[3:5]:
        done = subprocess.run([gradcli_script, "eval", expression, "--at", at],
                              capture_output=True, text=True, encoding="utf-8")
        assert done.returncode == 0 and ("exactly at its kink" in done.stderr) == noted


@pytest.mark.parametrize("expression, at, jump", [
    ("floor(x)", "x=1", True), ("ceil(x)", "x=-2", True), ("trunc(x)", "x=3", True),
    ("round(x)", "x=2.5", True), ("mod(x, 0.5)", "x=1.5", True), ("floor(x)", "x=1.2", False),
    ("round(x)", "x=2", False), ("mod(x, 0.5)", "x=1.25", False)])
@pytest.mark.parametrize("digits", ["13", "30"])  # the quick proof, and the balls
def test_a_jump_met_exactly_says_so_as_a_kink_does(gradcli_script, expression, at, jump, digits):
    done = subprocess.run([gradcli_script, "eval", expression, "--at", at, "--digits", digits],
                          capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0
    assert ("exactly at a jump" in done.stderr) == jump, done.stderr


def test_undecidable_says_so_instead_of_guessing(gradcli_script):
    done = subprocess.run([gradcli_script, "eval", "sign(sin(pi*x))", "--at", "x=1"],
                          capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 1 and "cannot be decided" in done.stderr
    assert "Traceback" not in done.stderr


def test_float64_mode_says_its_digits_are_not_certified(gradcli_script):
    done = subprocess.run([gradcli_script, "eval", "(1-cos(x))/x^2", "--at", "x=1e-8",
                           "--float64"], capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0
    assert lines(done.stdout)["f"] == "0"  # float64's answer, shown as computed
    assert "not certified" in done.stderr


def test_the_note_names_where_float64_loses_its_digits(gradcli_script):
    done = subprocess.run([gradcli_script, "eval", "(1-cos(x))/x^2", "--at", "x=1e-8"],
                          capture_output=True, text=True, encoding="utf-8")
    assert "float64 gets 0 of 13 digits of f" in done.stderr
    assert "cancellation in v3 = 1 - v1" in done.stderr


def test_the_note_counts_many_numbers_instead_of_naming_each(gradcli_script):
    """(1 - cos w)/w^2 at w = 1e-8: float64's 1 - cos w is 0, so it gets no digit of the value
    (1/2 - w^2/24 + ...) nor of any slope (-w/12 + ...). Eight elements and the value are nine
    numbers: the note counts them and names the worst, where three would be named one by one."""
    at = "w=[" + ",".join(["1e-8"] * 8) + "]"
    done = subprocess.run([gradcli_script, "eval", "sum((1-cos(w))/w^2)", "--at", at],
                          capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0, done.stderr
    note = [line for line in done.stderr.splitlines() if "float64 gets" in line]
    assert len(note) == 1 and "fewer digits for 9 numbers here" in note[0], done.stderr
    assert "as few as 0 of" in note[0] and len(note[0]) < 160, note
    at = "w=[1e-8,1e-8]"
    done = subprocess.run([gradcli_script, "eval", "sum((1-cos(w))/w^2)", "--at", at],
                          capture_output=True, text=True, encoding="utf-8")
    assert "0 of 13 digits of f, 0 of ∂f/∂w[0], 0 of ∂f/∂w[1]" in done.stderr, done.stderr


@pytest.mark.parametrize("digits", [1, 5, 50, 300])
def test_digits_means_significant_digits_all_proven(gradcli_script, digits):
    done = subprocess.run([gradcli_script, "eval", "log(x)+x*y-sin(y)", "--at", "x=2,y=3",
                           "--digits", str(digits)], capture_output=True, text=True,
                          encoding="utf-8")
    assert done.returncode == 0
    shown = lines(done.stdout)
    value, gradient = truth("log(x)+x*y-sin(y)", {"x": "2", "y": "3"}, dps=2 * digits + 100)
    assert shows(shown["f"], value, digits)
    assert shows(shown["∂f/∂y"], gradient["y"], digits)


def test_json_keeps_numbers_and_adds_the_proven_strings(gradcli_script):
    done = subprocess.run([gradcli_script, "eval", "exp(x)", "--at", "x=1000", "--json"],
                          capture_output=True, text=True, encoding="utf-8")
    data = json.loads(done.stdout)
    assert data["value"] is None  # beyond the double range
    assert data["decimal"] == {"value": "1.970071114017e434",
                               "gradient": {"x": "1.970071114017e434"}}
    assert data["digits"] == 13 and data["certified"] is True
    assert data["float64"]["value"] is None and data["float64_digits"]["value"] == 0
    done = subprocess.run([gradcli_script, "eval", "(1-cos(x))/x^2", "--at", "x=1e-8", "--json"],
                          capture_output=True, text=True, encoding="utf-8")
    data = json.loads(done.stdout)
    assert data["value"] == 0.5  # the exact value correctly rounded to a double
    assert data["float64"]["value"] == 0.0 and data["float64_digits"] == {
        "value": 0, "gradient": {"x": 0}}


def test_inputs_mean_the_decimals_typed():
    # 0.1 is 1/10: 10*x - 1 is exactly 0 there (the double 0.1 would give 5.55e-17)
    r = gradcli.evaluate("10*x - 1", {"x": "0.1"})
    assert r.value.text == "0" and r.value == 0
    r = gradcli.evaluate("10*x - 1", {"x": 0.1})  # a float means its exact binary value
    exact = Context(prec=100).subtract(Context(prec=100).multiply(10, Decimal(0.1)), 1)
    # Decimal(float) is the float's exact binary value
    assert Decimal(r.value.text) == Context(prec=13).plus(exact)


def test_api_digits_and_float64():
    r = gradcli.evaluate("log(x)+x*y-sin(y)", {"x": 2, "y": 3}, digits=30)
    assert r.gradient["y"].text == "2.98999249660044545727157279473"
    assert r.gradient["y"].digits == 30 and r.proven
    plain = gradcli.evaluate("log(x)+x*y-sin(y)", {"x": 2, "y": 3}, float64=True)
    assert not plain.proven and not hasattr(plain.value, "text")


def test_hessian_is_certified():
    h = gradcli.hessian("x^2*y + sin(x*y)", {"x": "2", "y": "3"})
    with mpmath.workdps(60):
        def f(x, y):
            return x ** 2 * y + mpmath.sin(x * y)
        want = mpmath.diff(f, (2, 3), (1, 1))
    assert shows(h.hessian[0][1].text, want, 13)


def test_forward_mode_is_certified():
    r = gradcli.evaluate("(1-cos(x))/x^2", {"x": "1e-8"}, mode="forward")
    assert r.gradient["x"].text == "-8.333333333333e-10"


# -- a property: every printed digit of value and gradient is right -----------------------------

CANCELLING = st.sampled_from(["1e-8", "-1e-8", "1e8", "1.4142135623730951", "3.0000001",
                              "1e-5"])
CANCELLING_SOURCES = st.sampled_from([
    "(1-cos(x))/x^2", "sqrt(x^2+1)-x", "(exp(x)-1)/x", "x^2-2", "log(x)-log(3)",
    "sin(x)-x", "1/(1-cos(x))", "(x-3)^3", "exp(x)-1-x", "atan(x)-pi/2", "x*x*x-x^3",
    "cosh(x)-1", "tanh(x)-x", "log1p(x)-x",
])


def check_digits(source: str, point: dict[str, str], digits: int = 13) -> None:
    try:
        r = gradcli.evaluate(source, dict(point), digits=digits)
    except gradcli.GradcliError as exc:  # outside a domain at the exact point, or undecidable
        assert exc.exit_code in (1, 2) and "Traceback" not in str(exc)
        return
    value, gradient = truth(source, point)
    shown = [(r.value, value)] + [(r.gradient[n], gradient[n]) for n in point]
    for number, x in shown:
        assert shows(number.text, x, number.digits if number.digits < digits else digits), (
            source, point, number.text, mpmath.nstr(x, 30))


@settings(max_examples=60)
@given(CANCELLING_SOURCES, CANCELLING)
def test_every_printed_digit_is_right_at_cancelling_points(source, x):
    check_digits(source, {"x": x})


@settings(max_examples=60)
@given(cases(max_statements=2, max_depth=3))
def test_every_printed_digit_is_right_on_generated_programs(case):
    source = to_source(case.program)
    read = gradcli.compile(source).inputs
    check_digits(source, {name: repr(float(v)) for name, v in case.point.items() if name in read})


@pytest.mark.parametrize("source, point", [
    ("atan2(x, y)", {"x": "0.3", "y": "1.7"}), ("atan2(x, y)", {"x": "-2.5", "y": "1e-3"}),
    ("sec(x)", {"x": "0.7"}), ("csc(x)", {"x": "-2.1"}), ("cot(x)", {"x": "0.4"}),
    ("atan2(x*y, y + 1) * sec(y) - cot(x)", {"x": "1.25", "y": "0.5"}),
])
def test_the_quick_sweep_proves_atan2_and_the_reciprocal_trig(source, point):
    """The quick sweep (no Arb) bounds atan2 and sec, csc,
    cot (the wide family's atan2 sent every wide sum to the balls); its digits are mpmath's."""
    from gradcli.engine.bounds import certify_quickly
    graph = gradcli.compile(source)
    exact = [point[name] for name in graph.inputs]  # decimal texts, as --at gives them
    found = certify_quickly(graph, exact, list(range(graph.n_const, graph.base)), 1.0, 13)
    assert found is not None
    value, gradient, _ = found
    with mpmath.workdps(60):
        env = {name: mpmath.mpf(point[name]) for name in graph.inputs}
        funcs = {"atan2": mpmath.atan2, "sec": mpmath.sec, "csc": mpmath.csc, "cot": mpmath.cot}

        def f(**kw):
            return eval(source, {**funcs, "__builtins__": {}}, kw)  # our own fixed sources

        want = [f(**env)] + [mpmath.diff(lambda t, n=n: f(**{**env, n: t}), env[n])
                             for n in graph.inputs]
    for text, exact_value in zip([value, *gradient], want):  # 13 digits, correctly rounded
        digits = text.lstrip("-").replace(".", "").split("e")[0].lstrip("0")
        assert len(digits) <= 13, text
        with mpmath.workdps(60):
            unit = mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(abs(exact_value))) - 12)
            assert abs(mpmath.mpf(text) - exact_value) <= unit / 2, (text, exact_value)


def _first_losing_node(graph, floats, reals, n):
    """float64_loss by its definition: the first node keeping fewer than half of ``n`` digits
    whose arguments keep them all, every node's agreement computed exactly."""
    from gradcli.engine.certify import agreement
    base, good = graph.base, [True] * graph.n_slots
    for k in range(len(graph.ops)):
        kept = agreement(floats[base + k], reals[base + k], n)
        good[base + k] = kept >= n
        if kept < n / 2 and all(good[a] for a in graph.args(k)):
            return base + k
    return None


@settings(max_examples=40, derandomize=True, database=None)
@given(CANCELLING_SOURCES, CANCELLING, st.sampled_from([2, 3, 7, 13, 15, 17]))
def test_the_node_where_float64_loses_its_digits_is_found_as_by_the_definition(source, x, n):
    """float64_loss skips, at float speed, the nodes that certainly keep half the digits: it
    names the same node as the definition, every node's agreement computed exactly."""
    from gradcli.engine.certify import certify, float64_loss
    from gradcli.engine.forward import forward
    graph = gradcli.compile(source)
    try:
        floats = forward(graph, [float(x)])
        reals = certify(graph, [x]).reals
    except gradcli.GradcliError:
        return
    assert float64_loss(graph, floats, reals, n) == _first_losing_node(graph, floats, reals, n)


@pytest.mark.parametrize("source, x", [
    ("sin(x) + ((x + 1) - 1)*3 + ((x + 1) - 1)*3 + exp((x + 1) - 1)", "1e-12"),
    ("((x + 1) - 1) + ((x + 1) - 1)", "1e-12"),
    ("exp(x*x + 0.5) + exp(x*x + 0.5) + (exp(x*x + 0.5) - exp(x*x + 0.5))*x", "0.3"),
    ("cos(x) - 1 + (cos(x) - 1) + sqrt(x*x + 1) - 1", "1e-5"),
])
def test_a_shared_ball_leaves_the_node_where_float64_loses_its_digits_as_it_was(source, x):
    """The bare sweep gives the nodes of the same row and exact arguments one ball (marked in
    ``shared``); float64_loss tests only the first of them, and names the node the definition
    names, every node's agreement computed exactly."""
    from gradcli.engine.certify import certify, float64_loss
    from gradcli.engine.forward import forward
    graph = gradcli.compile(source)
    floats = forward(graph, [float(x)])
    reals = certify(graph, [x]).reals
    assert any(reals.shared) or "cos" in source
    for n in (3, 13, 17):
        assert float64_loss(graph, floats, reals, n) == _first_losing_node(graph, floats, reals, n)


# -- the first attempt on bare balls gives what the Real sweeps give ----------------------------

def _both_ways(source: str, point: list[str], monkeypatch):
    """certify() as it runs (bare balls first) and with the Real sweeps only: (result or the
    error's type, whether the bare attempt proved it) for each."""
    from gradcli.engine import certify as C
    graph = gradcli.compile(source)
    outcomes = []
    for bare in (True, False):
        calls = []
        real_forward = C._forward
        monkeypatch.setattr(C, "_forward", lambda *a: calls.append(1) or real_forward(*a))
        if not bare:
            monkeypatch.setattr(C, "_bare_attempt", lambda *a: C._UNSETTLED)
        try:
            outcomes.append((C.certify(graph, point), not calls))
        except gradcli.GradcliError as exc:
            outcomes.append((type(exc), not calls))
        monkeypatch.undo()
    return outcomes


def _same(a, b) -> None:
    if isinstance(a, type) or isinstance(b, type):
        assert a == b
        return
    for x, y in zip([a.value, *a.gradient], [b.value, *b.gradient]):
        assert (x.text, float(x), x.digits, x.exact) == (y.text, float(y), y.digits, y.exact)
    assert a.kinks == b.kinks and a.short == b.short and a.bits == b.bits
    for x, y in zip(a.reals, b.reals):  # the same balls, the same rationals known
        assert x.q == y.q and x.b.mid() == y.b.mid() and x.b.rad() == y.b.rad()


@settings(max_examples=60, derandomize=True, database=None)
@given(cases(max_statements=2, max_depth=3))
def test_bare_balls_certify_as_the_real_sweeps_do(case):
    source = to_source(case.program)
    names = gradcli.compile(source).inputs
    point = [repr(float(case.point[name])) for name in names]
    with pytest.MonkeyPatch.context() as monkeypatch:
        (bare, _), (real, _) = _both_ways(source, point, monkeypatch)
    _same(bare, real)


@pytest.mark.parametrize("source, x", [
    ("abs(x - 0.1) + x", "0.1"), ("log(x - 1)", "1"), ("sqrt(x^2+1)-x", "1e8"),
    ("x^0.5 * max(x, 0.3)", "0.3"), ("0.1*3 - 0.3 + x*0", "2"), ("sign(x - 1/3) * x", "0.5"),
    ("(1-cos(x))/x^2", "1e-8"), ("atan2(x - 0.5, x - 0.5)", "0.5"), ("step(x) * x^2", "0"),
])
def test_bare_balls_leave_kinks_domains_and_exact_zeros_to_the_real_sweeps(source, x):
    with pytest.MonkeyPatch.context() as monkeypatch:
        (bare, _), (real, _) = _both_ways(source, [x], monkeypatch)
    _same(bare, real)


def test_a_wide_sum_is_certified_by_bare_balls_alone():
    """wide 10^3: the bare attempt proves value and gradient; the Real sweep never runs."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from families import POINT, wide
    source = wide(1_000)
    graph = gradcli.compile(source)
    point = [str(POINT[name]) for name in graph.inputs]
    with pytest.MonkeyPatch.context() as monkeypatch:
        (bare, proved_bare), (real, _) = _both_ways(source, point, monkeypatch)
    assert proved_bare
    _same(bare, real)


@settings(max_examples=400, derandomize=True, database=None)
@given(st.floats(-1e300, 1e300).filter(lambda v: v != 0), st.integers(-60, 0),
       st.integers(-20, 60), st.integers(1, 17))
def test_the_quick_half_digits_test_never_overstates(x, shift, accuracy, n):
    """_keeping_half says "at least n/2 digits agree" only where agreement (exact) says so: a
    double near a ball whose midpoint is x moved by 2^shift of it, of relative radius
    2^-accuracy."""
    from flint import arb
    from gradcli.engine.ball import Real
    from gradcli.engine.certify import _keeping_half, agreement
    mid = x * (1 + 2.0 ** shift) if shift > -60 else x
    ball = arb(mid, abs(mid) * 2.0 ** -accuracy)
    if _keeping_half([x], [ball], n)[0]:
        assert agreement(x, Real(ball), n) >= n / 2


def test_the_quick_half_digits_test_on_columns_decides_as_the_scalar_one(monkeypatch):
    """A large tape's quick test runs on NumPy columns (certify._not_keeping_half): it must
    decide every node as the scalar test does: near its thresholds (the gap at the tolerance,
    the accuracy at 20 bits) and at the edge cases (exact and infinite balls, zeros,
    infinities, nan, subnormals, opposite signs)."""
    import random
    from flint import arb
    from gradcli.engine import certify as c
    rng = random.Random(7)
    for n in (1, 2, 3, 7, 13, 17):
        tolerance = c._half_tolerance(n)
        floats, balls = [], []
        for _ in range(3000):
            x = rng.choice([rng.uniform(-1e3, 1e3), rng.uniform(-1, 1) * 10.0 ** rng.randint(-300, 0),
                            0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 1e-310, 1e300])
            gap = tolerance * rng.uniform(0.0, 1.2) * rng.choice([1, -1])
            mid = x * (1 + rng.choice([gap, gap, 0.0, 2.0 ** -rng.randint(1, 60), -2.0]))
            mid = mid if math.isfinite(mid) else 1.0
            radius = abs(mid) * 2.0 ** -rng.choice([rng.randint(17, 23), rng.randint(-5, 100)])
            balls.append(rng.choice([arb(mid, radius), arb(mid, radius), arb(mid), arb("nan"),
                                     arb(mid, math.inf)]))
            floats.append(x)
        scalar = [k for k, keep in enumerate(c._keeping_half(floats, balls, n)) if not keep]
        monkeypatch.setattr(c, "_VECTOR_FROM", 0)
        assert list(c._not_keeping_half(floats, balls, n)) == scalar
        with monkeypatch.context() as without:  # a plain install: no NumPy, the scalar test
            without.setitem(sys.modules, "numpy", None)
            assert list(c._not_keeping_half(floats, balls, n)) == scalar
        monkeypatch.setattr(c, "_VECTOR_FROM", 10 ** 9)
        assert list(c._not_keeping_half(floats, balls, n)) == scalar
        assert 0 < len(scalar) < len(floats) or n == 1
        with monkeypatch.context() as blocks:  # blocks of 700 from position 100, both ways
            blocks.setattr(c, "_BLOCK", 700)
            from_100 = [k - 100 for k in scalar if k >= 100]
            assert list(c._not_keeping_half(floats, balls, n, 100)) == from_100
            blocks.setattr(c, "_VECTOR_FROM", 0)
            assert list(c._not_keeping_half(floats, balls, n, 100)) == from_100
        # the positions a shared column marks are left out, both ways
        skip = bytearray(rng.choice([0, 0, 1]) for _ in floats)
        unshared = [k - 100 for k in scalar if k >= 100 and not skip[k]]
        with monkeypatch.context() as blocks:
            blocks.setattr(c, "_BLOCK", 700)
            for vector_from in (0, 10 ** 9):
                blocks.setattr(c, "_VECTOR_FROM", vector_from)
                assert list(c._not_keeping_half(floats, balls, n, 100, skip)) == unshared
