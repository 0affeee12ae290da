"""Hessians by forward-over-reverse: hand-derived matrices, every table row against differences
of the gradient, symmetry, the --check comparison, and the `gradcli hessian` command."""

import json
import math
import random

import pytest

from gradcli import evaluate
from gradcli.api import compile, hessian
from gradcli.errors import InputError, NumericalError
from gradcli.engine.forward import forward
from gradcli.engine.dual import DUAL, Dual, hessian_vector_product
from gradcli.engine.primitives import TABLE
from gradcli.engine.tangent import local_partials
from gradcli.views.json import hessian_check_json
from conftest import central_difference
from test_primitives import in_domain_points

log, sin, cos, exp = math.log, math.sin, math.cos, math.exp


def _hypot_hessian(x, y):
    r3 = math.hypot(x, y) ** 3
    return [[y * y / r3, -x * y / r3], [-x * y / r3, x * x / r3]]


# (source, point, Hessian): each matrix derived by hand with math.*
GOLDEN = [
    ("log(x)+x*y-sin(y)", {"x": 2, "y": 3}, [[-1 / 4, 1], [1, sin(3)]]),
    ("x^2*y", {"x": 2, "y": 3}, [[6, 4], [4, 0]]),
    ("exp(x*y)", {"x": 0.5, "y": -1},
     [[exp(-0.5) * 1, exp(-0.5) * (1 - 0.5)], [exp(-0.5) * (1 - 0.5), exp(-0.5) * 0.25]]),
    ("x^y", {"x": 2, "y": 3}, [[3 * 2 * 2 ** 1, 2 ** 2 * (1 + 3 * log(2))],
                               [2 ** 2 * (1 + 3 * log(2)), 8 * log(2) ** 2]]),
    ("hypot(x, y)", {"x": 1.5, "y": -0.5}, _hypot_hessian(1.5, -0.5)),
    ("c = x*y; c += c + 1; c", {"x": 2, "y": 3}, [[0, 2], [2, 0]]),
    ("x^3", {"x": 1.7}, [[6 * 1.7]]),
    ("tanh(x)", {"x": 0.7}, [[-2 * math.tanh(0.7) * (1 - math.tanh(0.7) ** 2)]]),
    ("x/y", {"x": 3, "y": 2}, [[0, -1 / 4], [-1 / 4, 2 * 3 / 8]]),
    ("sin(x)*cos(y)*z", {"x": 0.3, "y": 1.1, "z": 2},
     [[-sin(0.3) * cos(1.1) * 2, -cos(0.3) * sin(1.1) * 2, cos(0.3) * cos(1.1)],
      [-cos(0.3) * sin(1.1) * 2, -sin(0.3) * cos(1.1) * 2, -sin(0.3) * sin(1.1)],
      [cos(0.3) * cos(1.1), -sin(0.3) * sin(1.1), 0]]),
    ("7", {}, []),
]


@pytest.mark.parametrize("source, at, expected", GOLDEN)
def test_hand_derived_hessians(source, at, expected):
    result = hessian(source, at)
    assert result.inputs == list(at)
    assert len(result.hessian) == len(expected)
    for got_row, want_row in zip(result.hessian, expected):
        assert got_row == pytest.approx(want_row, rel=1e-13, abs=1e-14)
    first = evaluate(source, at)
    assert result.value == first.value and result.gradient == first.gradient


def test_seed_example_to_twelve_digits():
    h = hessian("log(x)+x*y-sin(y)", {"x": 2, "y": 3}).hessian
    assert h[0] == [-0.25, 1.0] and h[1][0] == 1.0
    assert f"{h[1][1]:.12f}" == "0.141120008060"


def test_wrt_picks_and_orders_rows_and_columns():
    result = hessian("x^2*y + z", {"x": 2, "y": 3, "z": 1}, wrt=["y", "x"])
    assert result.inputs == ["y", "x"]
    assert result.hessian == [[0, 4], [4, 6]]
    with pytest.raises(InputError):
        hessian("x*y", {"x": 1, "y": 1}, wrt=["q"])


def _gradient_along(source, names, at, j):
    """The AD gradient as a function of input j alone (for differences of it)."""
    def g(t, i):
        moved = dict(at)
        moved[names[j]] = t
        return evaluate(source, moved).gradient[names[i]]
    return g


@pytest.mark.parametrize("name", sorted(TABLE))
def test_every_row_against_differences_of_the_gradient(name):
    prim = TABLE[name]
    names = ["x", "y"][:prim.arity]
    source = f"{name}({', '.join(names)})" if not prim.is_operator else (
        f"x {prim.symbol} y" if prim.arity == 2 else f"{prim.symbol}x")
    points = in_domain_points(prim)
    compared = 0
    for args in points:
        at = dict(zip(names, args))
        try:
            h = hessian(source, at).hessian
        except NumericalError:
            continue  # the second derivative may be singular where the first is not
        for j in range(len(names)):
            g = _gradient_along(source, names, at, j)
            for i in range(len(names)):
                try:
                    numeric = central_difference(lambda t: g(t, i), args[j],
                                                 h=1e-4 * max(1.0, abs(args[j])))
                except Exception:
                    continue  # the difference stencil left the domain
                assert math.isclose(h[i][j], numeric, rel_tol=1e-6, abs_tol=1e-7), (
                    name, args, i, j, h[i][j], numeric)
                compared += 1
    assert compared >= 3, f"{name}: too few second derivatives compared"


def _random_expression(rng, names, depth):
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(names + [str(rng.randint(1, 4))])
    kind = rng.random()
    a = _random_expression(rng, names, depth - 1)
    if kind < 0.4:
        return f"{rng.choice(['sin', 'cos', 'exp', 'atan', 'tanh', 'sigmoid', 'softplus'])}({a})"
    b = _random_expression(rng, names, depth - 1)
    if kind < 0.55:
        return f"log(1 + ({a})^2) * {b}"
    return f"({a}) {rng.choice(['+', '-', '*'])} ({b})"


@pytest.mark.parametrize("seed", range(12))
def test_hessians_are_symmetric_and_match_hessian_vector_products(seed):
    rng = random.Random(seed)
    names = ["x", "y", "z"]
    source = " + ".join(_random_expression(rng, names, 4) for _ in range(3)) + " + x*y*z"
    at = {n: rng.uniform(-1.5, 1.5) for n in names}
    result = hessian(source, at)
    h = result.hessian
    for i in range(3):
        for j in range(3):
            assert math.isclose(h[i][j], h[j][i], rel_tol=1e-11, abs_tol=1e-12), source
    graph = compile(source)
    assert result.inputs == graph.inputs  # rows and columns in order of first appearance
    values = forward(graph, [at[n] for n in graph.inputs])
    v = [rng.uniform(-1, 1) for _ in names]
    gradient, hv = hessian_vector_product(graph, values, local_partials(graph, values), v)
    assert gradient == pytest.approx(list(evaluate(source, at).gradient.values()), rel=1e-14)
    assert hv == pytest.approx([sum(h[i][j] * v[j] for j in range(3)) for i in range(3)],
                               rel=1e-11, abs=1e-12)


def test_dual_namespace_follows_the_table():
    # d/dt sin(t*t) at t = 0.5 is cos(0.25) * 2 * 0.5; floats pass straight through
    t = Dual(0.5, 1.0)
    r = DUAL.sin(t * t)
    assert r.value == sin(0.25) and r.tangent == pytest.approx(cos(0.25) * 1.0, rel=1e-15)
    assert DUAL.sin(0.5) == sin(0.5) and type(DUAL.sin(0.5)) is float
    p = DUAL.pow(Dual(2.0, 1.0), 3.0)  # ∂/∂b is not evaluated for a constant exponent
    assert (p.value, p.tangent) == (8.0, 12.0)


def test_second_derivative_failure_names_the_node():
    with pytest.raises(NumericalError) as info:
        hessian("x^1.5", {"x": 0})
    assert "second derivative" in info.value.message and "v1" in info.value.message


# -- the finite-difference check --------------------------------------------------------------

@pytest.mark.parametrize("source, at", [
    ("log(x)+x*y-sin(y)", {"x": 2, "y": 3}),
    ("exp(x*y)", {"x": 1, "y": 2}),
    ("sin(1000*x)", {"x": 0.3}),
    ("exp(x)", {"x": 30}),
    ("log(x)*y", {"x": 1e-9, "y": 2}),  # the step must shrink to stay in log's domain
])
def test_check_passes_on_smooth_functions(source, at):
    result = hessian(source, at)
    check = result.check()
    assert check.ok, hessian_check_json(check)
    assert list(check.rows) == result.inputs
    for a, row in enumerate(check.rows.values()):  # row a of H, one entry per column
        assert [r.input for r in row.rows] == result.inputs
        assert [r.ad for r in row.rows] == result.hessian[a]
    assert (check.rtol, check.atol) == (1e-7, 1e-9)  # eval --check's defaults
    entries = hessian_check_json(check)["rows"]
    assert [(e["row"], e["column"]) for e in entries] == [(i, j) for i in at for j in at]


def test_check_fails_at_a_kink():
    # relu(x)^2: the gradient 2*relu(x) has a kink at 0; AD's convention gives 0, the
    # difference quotient slopes 0 from the left and 2 from the right
    check = hessian("relu(x)^2", {"x": 0}).check()
    assert not check.ok
    row = check.rows["x"].rows[0]
    assert row.ad == 0 and (row.kink.left, row.kink.right) == pytest.approx((0, 2), abs=1e-6)
    assert "relu(0) is at its kink" in row.note


# -- the command line -------------------------------------------------------------------------

def test_cli_table(run):
    result = run("hessian", "log(x)+x*y-sin(y)", "--at", "x=2,y=3")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[:3] == ["f     = 6.552027172500", "∂f/∂x = 3.500000000000",
                         "∂f/∂y = 2.989992496600"]
    assert lines[3].strip() == "Hessian"
    assert lines[5].split() == ["┃", "┃", "x", "┃", "y", "┃"]
    assert lines[7].split() == ["│", "x", "│", "-0.2500000000000", "│", "1.000000000000", "│"]
    assert lines[8].split() == ["│", "y", "│", "1.000000000000", "│", "0.1411200080599", "│"]


def test_cli_json_from_stdin_and_file(run, tmp_path):
    data = json.loads(run("hessian", "-", "--at", "x=2,y=3", "--json", input="x^2*y").output)
    proven = {"certified": True, "decimal": {"value": "12.00000000000", "gradient": {
        "x": "12.00000000000", "y": "4.000000000000"}, "hessian": [
        ["6.000000000000", "4.000000000000"], ["4.000000000000", "0"]]}, "digits": 13}
    assert data == {"source": "x^2*y", "source_read": "x^2*y", "inputs": {"x": 2.0, "y": 3.0}, "wrt": ["x", "y"],
                    "value": 12.0,
                    "gradient": {"x": 12.0, "y": 4.0}, "hessian": [[6.0, 4.0], [4.0, 0.0]],
                    **proven}
    program = tmp_path / "f.grad"
    program.write_text("a = x*y\nb = a*a\nb\n")  # x²y²: [[2y², 4xy], [4xy, 2x²]]
    data = json.loads(run("hessian", "-f", str(program), "--at", "x=1,y=2", "--json").output)
    assert data["hessian"] == [[8.0, 8.0], [8.0, 2.0]]


def test_cli_check_json_and_exit_codes(run):
    ok = run("hessian", "exp(x*y)", "--at", "x=1,y=2", "--check", "--json")
    assert ok.exit_code == 0
    check = json.loads(ok.output)["check"]
    assert check["ok"] is True and len(check["rows"]) == 4
    assert set(check["rows"][0]) == {"row", "column", "ad", "numeric", "numeric_error",
                                     "abs_error", "rel_error", "ok", "status", "step", "scheme"}
    human = run("hessian", "exp(x*y)", "--at", "x=1,y=2", "--check").output
    assert "Hessian check, row x" in human and "Hessian check, row y" in human
    bad = run("hessian", "relu(x)^2 + y", "--at", "x=0,y=1", "--check")
    assert bad.exit_code == 1
    assert "✗ check failed" in bad.output and "f is not differentiable along x" in bad.output
    assert "✓ AD agrees with numerical differentiation for x, y" in bad.output  # row y
    data = json.loads(run("hessian", "relu(x)^2", "--at", "x=0", "--check", "--json").output)
    assert data["check"]["ok"] is False and "kink" in data["check"]["rows"][0]["note"]
    loose = run("hessian", "x^2*y", "--at", "x=2,y=3", "--check", "--rtol", "0", "--atol", "0")
    assert loose.exit_code == 0  # exact: the differences of a quadratic gradient are exact


@pytest.mark.parametrize("args, code, words", [
    (["hessian", "x*y", "--at", "x=1"], 2, ["no value for input y"]),
    (["hessian", "log(x)", "--at", "x=-1"], 2, ["log(-1)"]),
    (["hessian", "x^1.5", "--at", "x=0"], 1, ["second derivative by x (the base, a) is not finite"]),
    (["hessian", "x", "--at", "x=1", "--wrt", "y"], 2, ["--wrt names y"]),
    (["hessian"], 2, ["no expression given"]),
])
def test_cli_errors(run, reported, args, code, words):
    reported(run(*args), code, words)


# -- hessian --direction --check: H·v against central differences of the gradient along v -------

def _sympy_product(source: str, point: dict, direction: dict) -> dict:
    import sympy
    names = sorted(point)
    symbols = sympy.symbols(names)
    f = sympy.sympify(source.replace("^", "**"))
    at = {s: sympy.Rational(str(point[n])) for s, n in zip(symbols, names)}
    return {n: float(sum(sympy.diff(f, s, t).subs(at) * sympy.Rational(str(direction[m]))
                         for t, m in zip(symbols, names))) for s, n in zip(symbols, names)}


def test_check_of_the_hessian_vector_product_agrees_with_central_differences(run):
    source, point, v = "x^2*y + sin(x*y)", {"x": 0.7, "y": 1.3}, {"x": 0.5, "y": -2.0}
    want = _sympy_product(source, point, v)
    result = run("hessian", source, "--at", "x=0.7,y=1.3", "--direction", "x=0.5,y=-2",
                 "--check", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rows = {row["input"]: row for row in data["check"]["rows"]}
    assert data["check"]["ok"] and set(rows) == {"x", "y"}
    for name in ("x", "y"):
        assert rows[name]["status"] == "agree"
        assert abs(rows[name]["numeric"] - want[name]) <= 1e-8 * abs(want[name])
        assert abs(data["product"][name] - want[name]) <= 1e-14 * abs(want[name])
    text = run("hessian", source, "--at", "x=0.7,y=1.3", "--direction", "x=0.5,y=-2", "--check")
    assert "H·v check: AD against central differences of the gradient along v" in text.stdout


def test_check_of_the_product_at_a_kink_fails_with_exit_1(gradcli_script):
    import subprocess
    # relu(x)*y at x = 0: ∂f/∂y = relu(x) has slope 0 on the left, 1 on the right; along v =
    # (0.5, -2) the component ∂f/∂y changes by 0 and 0.5 per unit t: no derivative, AD's 0 fails
    done = subprocess.run([gradcli_script, "hessian", "relu(x)*y", "--at", "x=0,y=1.3",
                           "--direction", "x=0.5,y=-2", "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "sees slope 0 from the left and 0.5 from the right" in done.stdout


def test_direction_and_export_are_still_refused_together(run, reported):
    result = run("hessian", "x*y", "--at", "x=1,y=2", "--direction", "x=1", "--export", "h.tex")
    reported(result, 2, ["--export goes with the whole Hessian"])
