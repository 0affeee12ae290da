"""Symbolic derivatives (`gradcli diff`): against SymPy's diff on generated expressions, every
table row against AD, readable output, common subexpressions, the round trip through eval."""

import json
import math
import pathlib
import random
import subprocess
import sys

import pytest
import sympy as sp
from hypothesis import event, example, given, note, settings

from gradcli import evaluate
from gradcli.api import compile, derivatives, point_vector
from gradcli.symbolic.diff import derivative, gradient, graph_expression, programs
from gradcli.symbolic.expr import fresh_context
from gradcli.errors import GradcliError, InputError
from gradcli.engine.forward import forward
from gradcli.engine.rounding import DEFAULT_DIGITS as DIGITS
from gradcli.language.parser import parse
from gradcli.language.printer import to_source
from gradcli.engine.primitives import TABLE
from conftest import readme_runs
from strategies import Case, cases, examples
from test_primitives import in_domain_points

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "benchmarks"))
from families import FAMILIES, POINT  # noqa: E402 - the benchmark's own workloads

SEED = "log(x)+x*y-sin(y)"
X, Y, Z = sp.symbols("x y z", real=True)
SYMBOLS = {"x": X, "y": Y, "z": Z}


def value_of(program: str, at: dict) -> float:
    """The value of a printed derivative at a point (primal sweep only)."""
    graph = compile(program)
    return forward(graph, point_vector(graph, at))[graph.output]


# -- generated expressions, written twice: in gradcli's syntax and as SymPy objects -------------
# Every function is applied to arguments inside its domain at every point (squares plus one
# under log and sqrt, ...), so any random point is a fair comparison point.

UNARY = [
    ("sin({})", sp.sin), ("cos({})", sp.cos), ("exp({})", sp.exp), ("tanh({})", sp.tanh),
    ("atan({})", sp.atan), ("sinh({})", sp.sinh), ("asinh({})", sp.asinh), ("erf({})", sp.erf),
    ("sigmoid({})", lambda a: 1 / (1 + sp.exp(-a))),
    ("softplus({})", lambda a: sp.log(1 + sp.exp(a))),
    ("log(1 + ({})^2)", lambda a: sp.log(1 + a ** 2)),
    ("sqrt(({})^2 + 1)", lambda a: sp.sqrt(a ** 2 + 1)),
    ("({})^3", lambda a: a ** 3), ("-({})", lambda a: -a),
    ("expm1({})", lambda a: sp.exp(a) - 1), ("log1p(({})^2)", lambda a: sp.log(1 + a ** 2)),
    ("cbrt(({})^2 + 1)", lambda a: sp.cbrt(a ** 2 + 1)),
]
BINARY = [
    ("({}) + ({})", lambda a, b: a + b), ("({}) - ({})", lambda a, b: a - b),
    ("({}) * ({})", lambda a, b: a * b), ("({}) / (1 + ({})^2)", lambda a, b: a / (1 + b ** 2)),
    ("(1 + ({})^2)^({})", lambda a, b: (1 + a ** 2) ** b),
    ("hypot({}, 1 + ({})^2)", lambda a, b: sp.sqrt(a ** 2 + (1 + b ** 2) ** 2)),
    ("atan2({}, 1 + ({})^2)", lambda a, b: sp.atan2(a, 1 + b ** 2)),
]


def generate(rng: random.Random, depth: int):
    """A random expression as (gradcli source, SymPy expression)."""
    if depth == 0 or rng.random() < 0.15:
        if rng.random() < 0.2:
            c = rng.choice([2, 3, 0.5])
            return str(c), sp.Rational(str(c))
        name = rng.choice("xyz")
        return name, SYMBOLS[name]
    if rng.random() < 0.55:
        text, f = rng.choice(UNARY)
        a_text, a = generate(rng, depth - 1)
        return text.format(a_text), f(a)
    text, f = rng.choice(BINARY)
    (a_text, a), (b_text, b) = generate(rng, depth - 1), generate(rng, depth - 1)
    return text.format(a_text, b_text), f(a, b)


def _sympy_value(expr, at) -> float:
    return float(expr.subs({SYMBOLS[k]: v for k, v in at.items()}).evalf(30))


@pytest.mark.parametrize("seed", range(60))
def test_first_derivatives_equal_sympys(seed):
    rng = random.Random(seed)
    source, expr = generate(rng, 4)
    graph = compile(source)
    printed = derivatives(source)
    assert list(printed) == graph.inputs
    _agree_with_sympy(rng, source, expr, printed)


def _agree_with_sympy(rng, source, expr, printed: dict[str, str]) -> None:
    """Each printed derivative, evaluated at two random points, is SymPy's to 1e-9."""
    for _ in range(2):
        at = {name: rng.uniform(-1.5, 1.5) for name in "xyz"}
        for name, program in printed.items():
            want = _sympy_value(sp.diff(expr, SYMBOLS[name]), at)
            got = value_of(program, at)
            assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-11), (source, name, program)


def _by_one_adjoint_sweep(source: str) -> dict[str, str]:
    """Every first derivative from the adjoint sweep and printed named together, whatever the
    expression's size (derivatives() takes that road only for large expressions)."""
    graph = compile(source)
    with fresh_context():
        grad = gradient(graph_expression(graph), graph.inputs)
        return dict(zip(graph.inputs, programs([grad[n] for n in graph.inputs], graph.inputs)))


@pytest.mark.parametrize("seed", range(60))
def test_the_adjoint_sweep_equals_sympys(seed):
    rng = random.Random(seed)
    source, expr = generate(rng, 4)
    _agree_with_sympy(rng, source, expr, _by_one_adjoint_sweep(source))


@pytest.mark.parametrize("family, n", [("deep", 300), ("shared", 120), ("wide", 400)])
def test_a_large_gradient_is_whole_programs_equal_to_ad(family, n):
    source = FAMILIES[family](n)
    assert len(compile(source).inputs) == 10
    printed = derivatives(source)  # large: one adjoint sweep, printed named together
    gradient_ad = evaluate(source, POINT).gradient
    for name, program in printed.items():  # each a whole program, read alone
        assert math.isclose(value_of(program, POINT), gradient_ad[name], rel_tol=1e-9,
                            abs_tol=1e-12), (family, name)


def _work(n: int, one_sweep: bool = True) -> tuple[int, int]:
    """Nodes built and characters printed for every first derivative of deep(n)."""
    graph = compile(FAMILIES["deep"](n))
    with fresh_context() as context:
        f = graph_expression(graph)
        if one_sweep:
            grad = gradient(f, graph.inputs)
            texts = programs([grad[name] for name in graph.inputs], graph.inputs)
        else:
            texts = [programs([derivative(f, name)], graph.inputs)[0] for name in graph.inputs]
        return context.serial, sum(map(len, texts))


def test_a_deep_gradient_is_linear_work():
    # work counted, not timed: nodes built (every multiply and add builds at most a few) and
    # characters printed grow as n does, for all ten inputs together
    (n1, c1), (n2, c2), (n4, c4) = _work(250), _work(500), _work(1000)
    assert n2 / n1 < 2.1 and n4 / n2 < 2.1, (n1, n2, n4)
    # (the names t1..tN grow by a digit now and then: a little over 2, far from 4)
    assert c2 / c1 < 2.25 and c4 / c2 < 2.25, (c1, c2, c4)
    # and one sweep, where a tangent sweep per input builds each input's own chain
    assert _work(120)[0] * 3 < _work(120, one_sweep=False)[0]


@pytest.mark.parametrize("seed", range(20))
def test_second_and_third_derivatives_equal_sympys(seed):
    rng = random.Random(1000 + seed)
    source, expr = generate(rng, 3)
    graph = compile(source)
    if not graph.inputs:
        source, expr = f"({source}) * x", expr * X
    name = compile(source).inputs[0]
    at = {n: rng.uniform(-1.2, 1.2) for n in "xyz"}
    for order in (2, 3):
        program = derivatives(source, [name], order)[name]
        want = _sympy_value(sp.diff(expr, SYMBOLS[name], order), at)
        assert math.isclose(value_of(program, at), want, rel_tol=1e-8, abs_tol=1e-10), (
            source, order, program)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_every_row_against_reverse_mode(name):
    """The printed derivative of each primitive evaluates to the AD gradient (new rows included)."""
    prim = TABLE[name]
    names = ["x", "y"][:prim.arity]
    if prim.is_operator:
        source = f"x {prim.symbol} y" if prim.arity == 2 else f"{prim.symbol}x"
    else:
        source = f"{name}({', '.join(names)})"
    if name == "trigamma":  # ψ'' has no formula in the table: said, not guessed (docs/functions.md)
        with pytest.raises(GradcliError, match="derivative of trigamma"):
            derivatives(source)
        return
    printed = derivatives(source)
    for args in in_domain_points(prim):
        at = dict(zip(names, args))
        gradient = evaluate(source, at).gradient
        for n in names:
            assert math.isclose(value_of(printed[n], at), gradient[n], rel_tol=1e-12,
                                abs_tol=1e-14), (source, n, printed[n], args)


# -- readable output: derived by hand -------------------------------------------------------------

PRINTED = [
    (SEED, {}, {"x": "1/x + y", "y": "x - cos(y)"}),
    ("x^10", {}, {"x": "10*x^9"}),
    ("x^10", {"order": 3}, {"x": "720*x^7"}),
    ("x^10", {"order": 10}, {"x": "3628800"}),
    ("x^10", {"order": 11}, {"x": "0"}),
    ("sin(x)*cos(x)", {}, {"x": "cos(x)^2 - sin(x)^2"}),
    ("exp(x*y)", {}, {"x": "y*exp(x*y)", "y": "x*exp(x*y)"}),
    ("1/x", {}, {"x": "-1/x^2"}),
    ("sin(x^2)", {}, {"x": "2*x*cos(x^2)"}),
    ("sqrt(x^2 + y^2)", {"wrt": ["y"]}, {"y": "y/sqrt(x^2 + y^2)"}),
    ("x*x*x*x", {}, {"x": "4*x^3"}),
    ("x + 0*y + 1*x - -x", {"wrt": ["x"]}, {"x": "3"}),
    ("c = x*y; c += c + 1; c", {}, {"x": "2*y", "y": "2*x"}),
    ("x^y", {}, {"x": "y*x^(y - 1)", "y": "x^y*log(x)"}),
    ("2*pi*x", {}, {"x": "2*pi"}),
    # constants stay exact: a named constant, a call of numbers, a fraction, a typed decimal
    ("(log(cosh(x))-x+log(2))/(y+z)", {"wrt": ["y"]},
     {"y": "-(log(2) + log(cosh(x)) - x)/(y + z)^2"}),
    ("sqrt(2)*x + x/3 + 0.1*x", {}, {"x": "sqrt(2) + 13/30"}),
    ("x^(1/3) + 0.1*y", {}, {"x": "1/(3*x^(2/3))", "y": "0.1"}),
    ("(3*x)^40 + x/30000000 + 1.5e20*y", {}, {"x": "486306618362277152040*x^39 + 1/30000000",
                                               "y": "1.5e+20"}),
    ("abs(-1/3)*x + floor(7/2)*y", {}, {"x": "1/3", "y": "3"}),
    ("sin(pi*x)", {}, {"x": "pi*cos(pi*x)"}),
    ("abs(x)", {}, {"x": "sign(x)"}),
    ("2^x*y + x", {}, {"x": "y*2^x*log(2) + 1", "y": "2^x"}),  # a number for base
]


@pytest.mark.parametrize("source, options, expected", PRINTED)
def test_printed_derivatives(source, options, expected):
    assert derivatives(source, **options) == expected


@settings(max_examples=examples(500))  # 100 by default and in CI (a few seconds)
@given(cases(max_statements=2, max_depth=3))
@example(Case(parse("(log(cosh(x))-x+log(2))/(y+z)"), {"x": 20.0, "y": 1.047, "z": 4.73}))
def test_printed_formulas_agree_with_eval_in_every_digit(case):
    """Each formula diff prints, evaluated (certified) at the point, prints the same digits as
    the derivative eval proves there: its constants are the exact numbers (``log(2)``, not
    0.6931471805599453, whose error a cancellation shows in the printed digits)."""
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    try:
        formulas = derivatives(source)
    except GradcliError as exc:  # trigamma's derivative ψ'' has no formula (documented)
        assert "trigamma" in str(exc), exc
        return
    try:
        gradient = evaluate(source, case.point).gradient
    except GradcliError as exc:  # exactly outside a domain float64 is inside (floor(sigmoid(100)))
        event(f"eval refuses: {type(exc).__name__}")
        return
    for name, formula in formulas.items():
        note(f"d/d{name}:\n{formula}")
        try:
            got = evaluate(formula, case.point).value
        except GradcliError as exc:  # the formula may cross a singularity AD avoids
            event(f"formula not evaluable: {type(exc).__name__}")
            continue
        want = gradient[name]
        if got.digits < DIGITS or want.digits < DIGITS:  # a number short of proven digits
            event("not every digit proven")
            continue
        assert got.text == want.text, (name, formula)


@pytest.mark.parametrize("c", ["1e-160", "3.2e-192"])
def test_tiny_constants_keep_the_formula(c):
    """In lowest terms with integer coefficients, (x + c)^2 would be scaled by 1/c^2, beyond
    the doubles: the formula as built prints (it was a LimitError). By hand: d/dx atan(x + c)
    is 1/((x + c)^2 + 1), d/dx (x + c)^-2 is -2/(x + c)^3."""
    assert derivatives(f"atan(x + {c})")["x"] == f"1/((x + {c})^2 + 1)"
    assert derivatives(f"1/(x + {c})^2")["x"] == f"-2/(x + {c})^3"


def test_powers_do_not_explode():
    for order in range(1, 13):
        text = derivatives("x^10", order=order)["x"]
        assert len(text) <= 12 and "\n" not in text, (order, text)


def test_sin_cos_stays_short():
    assert len(derivatives("sin(x)*cos(x)", order=2)["x"]) < 40
    assert len(derivatives("sin(x)*cos(x)", order=4)["x"]) < 200


def test_repeated_subexpressions_become_assignments():
    # d/db log(1 + exp(u)) = exp(u)/(1 + exp(u)), u = a*x + b: exp(u) is read twice
    program = derivatives("log(1 + exp(a*x + b))", ["b"])["b"]
    assert program == "t1 = exp(a*x + b)\nt1/(t1 + 1)"
    statements = parse(program).statements
    assert len(statements) == 2 and statements[0].name == "t1"
    s = 1 / (1 + math.exp(-(0.5 * 2 + 0.3)))  # = sigmoid(u)
    assert value_of(program, {"a": 0.5, "x": 2, "b": 0.3}) == pytest.approx(s, rel=1e-15)


def test_assignment_names_avoid_the_inputs():
    program = derivatives("log(1 + exp(t1*x + t2))", ["x"])["x"]
    assert program.startswith("t3 = exp(t1*x + t2)\n")
    at = {"t1": 0.7, "x": -0.4, "t2": 0.2}
    s = 1 / (1 + math.exp(-(0.7 * -0.4 + 0.2)))
    assert value_of(program, at) == pytest.approx(0.7 * s, rel=1e-14)


def test_nested_exponentials_stay_linear():
    # d³/dx³ of exp(exp(exp(x))): the tree would repeat exp(exp(x)) many times; the program names it
    program = derivatives("exp(exp(exp(x)))", order=3)["x"]
    assert len(program) < 400
    e1 = sp.exp(sp.exp(sp.exp(X)))
    assert value_of(program, {"x": 0.3}) == pytest.approx(_sympy_value(sp.diff(e1, X, 3), {"x": 0.3}),
                                                          rel=1e-12)


def test_deep_input_100000():
    depth = 100_000
    assert derivatives("-(" * depth + "x" + ")" * depth) == {"x": "1"}
    chain = "sin(" * 2000 + "x" + ")" * 2000
    program = derivatives(chain)["x"]
    value, slope = 0.4, 1.0
    for _ in range(2000):
        slope *= math.cos(value)
        value = math.sin(value)
    assert value_of(program, {"x": 0.4}) == pytest.approx(slope, rel=1e-11)


def test_unknown_wrt_is_an_error():
    with pytest.raises(InputError):
        derivatives("x*y", ["q"])


# -- the command line, and the round trip through eval -------------------------------------------

def test_cli_round_trip_through_eval(run):
    printed = run("diff", SEED, "--wrt", "x")
    assert printed.exit_code == 0 and printed.output == "1/x + y\n"
    result = run("eval", printed.output.strip(), "--at", "x=2,y=3", "--json")
    assert json.loads(result.output)["value"] == 3.5
    # a derivative that no longer reads y: the point's extra name is only a warning
    printed = run("diff", "x^2 + y", "--wrt", "x").output.strip()
    result = run("eval", printed, "--at", "x=2,y=3")
    assert result.exit_code == 0 and result.stdout.startswith("f     = 4.000000000000")
    assert "warning: y is not read" in result.stderr


def test_cli_several_derivatives_are_commented_programs(run):
    out = run("diff", "log(1 + exp(a*x + b))", "--wrt", "x,b").output
    assert out == ("# ∂f/∂x\nt1 = exp(a*x + b)\na*t1/(t1 + 1)\n"
                   "# ∂f/∂b\nt1 = exp(a*x + b)\nt1/(t1 + 1)\n")
    parse(out)  # the whole text is a program too: comments and statements
    assert run("diff", "x^3*y", "--order", "2").output == "# ∂²f/∂x²\n6*x*y\n# ∂²f/∂y²\n0\n"


def test_cli_json_stdin_and_file(run, tmp_path):
    data = json.loads(run("diff", "-", "--json", input=SEED).output)
    assert data == {"source": SEED, "source_read": "log(x) + x*y - sin(y)",
                    "derivatives": {"x": "1/x + y", "y": "x - cos(y)"}, "order": 1}
    program = tmp_path / "f.grad"
    program.write_text("a = x*x\nb = a*x\nb\n")
    data = json.loads(run("diff", "-f", str(program), "--order", "2", "--json").output)
    assert data["derivatives"] == {"x": "6*x"} and data["order"] == 2


@pytest.mark.parametrize("args, code, words", [
    (["diff", "x*y", "--wrt", "q"], 2, ["--wrt names q"]),
    (["diff", "x", "--order", "0"], 2, ["--order"]),
    (["diff", "log(x"], 2, ["expected ')'"]),
    (["diff", "2"], 0, ["no partial derivatives"]),
    # 2^1100*exp(...)/sqrt(pi)^1100: no double holds the coefficient, so no literal prints it
    (["diff", "erf(" * 1100 + "x" + ")" * 1100], 2, ["beyond the double range"]),
    (["diff", "(x^1e300)^1e300"], 2, ["beyond the double range"]),
])
def test_cli_errors(run, reported, args, code, words):
    reported(run(*args), code, words)


def test_round_trip_through_the_installed_script(tmp_path, gradcli_script):
    script = gradcli_script
    printed = subprocess.run([script, "diff", SEED, "--wrt", "x"], capture_output=True, text=True,
                             cwd=tmp_path, timeout=60)
    assert printed.returncode == 0, printed.stderr
    out = subprocess.run([script, "eval", printed.stdout.strip(), "--at", "x=2,y=3", "--json"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["value"] == 3.5


@pytest.mark.parametrize("args", [[], ["--json"], ["--wrt", "x3"]])
def test_the_installed_script_prints_a_large_gradient_whole(
        tmp_path, gradcli_script, run, args):
    """What the console script prints of a large diff, through a pipe, is what an in-process
    run prints, and the exit code is 0. deep(300) is 900 nodes: the one adjoint
    sweep, ten programs of 16-27 KB."""
    program = tmp_path / "deep.gc"
    program.write_text(FAMILIES["deep"](300), encoding="utf-8")
    printed = subprocess.run([gradcli_script, "diff", "-f", str(program), *args],
                             capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert printed.returncode == 0, printed.stderr
    in_process = run("diff", "-f", str(program), *args)
    assert in_process.exit_code == 0
    assert printed.stdout == in_process.output and len(printed.stdout) > 10_000


def _beyond_the_gradient(command: str) -> bool:
    """Runs in the README and docs/ of hessian, diff and forward mode (tests/test_docs.py replays
    them all)."""
    words = command.split()
    ours = words[1] in ("hessian", "diff") or "--mode" in words or "--direction" in words
    return ours and "$(" not in command and "--check" not in words


def test_the_docs_have_examples_of_every_new_command():
    commands = " ".join(c for c, _ in readme_runs(_beyond_the_gradient))
    for words in ("gradcli hessian", "gradcli diff", "--order", "--direction", "--mode forward"):
        assert words in commands


def test_diff_at_evaluates_each_derivative_there(gradcli_script):
    import subprocess
    import mpmath
    done = subprocess.run([gradcli_script, "diff", "x^3*sin(y)", "--at", "x=pi/4,y=1/3",
                           "--digits", "20"], capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0, done.stderr
    values = dict(line.split(" = ") for line in done.stdout.split(":\n")[-1].splitlines())
    with mpmath.workdps(40):
        x, y = mpmath.pi / 4, mpmath.mpf(1) / 3
        want = {"∂f/∂x": 3 * x**2 * mpmath.sin(y), "∂f/∂y": x**3 * mpmath.cos(y)}
        for label, value in want.items():
            assert mpmath.mpf(values[label].strip()) == mpmath.mpf(mpmath.nstr(value, 20)), label
