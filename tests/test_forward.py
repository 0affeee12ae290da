"""Forward mode (tangent sweeps): the same gradient as reverse mode, directional derivatives,
the tangent trace of Baydin et al. (2018), Table 2, and the CLI's --mode / --direction."""

import json
import math
import random

import pytest

from gradcli import evaluate
from gradcli.errors import InputError, NumericalError
from gradcli.engine.primitives import TABLE
from test_primitives import in_domain_points

SEED = "log(x)+x*y-sin(y)"

import mpmath  # noqa: E402

# ∂/∂y of the seed at (2, 3), 2 - cos(3), exactly and correctly rounded (the certified value)
with mpmath.workdps(50):
    DY = float(2 - mpmath.cos(3))


def _sources(prim):
    """The primitive alone and inside a larger expression (so tangents are chained through it)."""
    call = f"{prim.name}(x)" if prim.arity == 1 else f"{prim.name}(x, y)"
    if prim.is_operator and prim.arity == 2:
        call = f"(x {prim.symbol} y)"
    elif prim.is_operator:
        call = f"({prim.symbol}x)"
    return [call, f"{call} * y + x*x" if prim.arity == 1 else f"{call} * x - y"]


@pytest.mark.parametrize("name", sorted(TABLE))
def test_forward_equals_reverse_on_every_row(name):
    prim = TABLE[name]
    points = in_domain_points(prim)
    assert points, name
    for args in points:
        at = {"x": args[0], "y": args[1] if prim.arity == 2 else 1.3}
        for source in _sources(prim):
            rev = evaluate(source, at)
            fwd = evaluate(source, at, mode="forward")
            assert fwd.value == rev.value
            assert list(fwd.gradient) == list(rev.gradient)
            for k in rev.gradient:
                assert math.isclose(fwd.gradient[k], rev.gradient[k], rel_tol=1e-12,
                                     abs_tol=1e-14), (source, at, k)


PROGRAMS = [
    ("c = a + b\nd = a * b + b**3\nc += c + 1\nc += 1 + c + (-a)\nd += d * 2 + relu(b + a)\n"
     "d += 3 * d + relu(b - a)\ne = c - d\nf = e**2\ng = f / 2.0\ng += 10.0 / f", {"a": -4, "b": 2}),
    ("x^y + atan2(y, x)*hypot(x, y) - min(x, y)/max(x, 2*y)", {"x": 1.7, "y": 0.4}),
    ("exp(sin(x*y)) / (1 + x^2) + erf(y - x)", {"x": 0.3, "y": -1.1}),
]


@pytest.mark.parametrize("source, at", PROGRAMS)
def test_forward_equals_reverse_on_programs_and_directions(source, at):
    rev = evaluate(source, at)
    fwd = evaluate(source, at, mode="forward")
    assert fwd.gradient == pytest.approx(rev.gradient, rel=1e-12)
    rng = random.Random(5)
    for _ in range(3):
        d = {name: rng.uniform(-2, 2) for name in at}
        jvp = evaluate(source, at, direction=d)
        assert jvp.directional == pytest.approx(sum(rev.gradient[k] * d[k] for k in d), rel=1e-12)
        assert jvp.gradient == {} and jvp.direction == d


def test_direction_defaults_missing_inputs_to_zero():
    r = evaluate("x*y + y", {"x": 2, "y": 3}, direction={"y": 1})
    assert r.direction == {"x": 0.0, "y": 1.0}
    assert r.directional == 2 + 1


@pytest.mark.parametrize("direction, words", [
    ({"y": 1, "q": 7}, "names q, which the expression does not read"),  # a mistyped name
    ({"x": 0, "y": 0.0}, "zero in every input"),  # the derivative along 0 is 0 by definition
    ({}, "zero in every input"),
])
def test_a_direction_names_read_inputs_and_is_not_zero(direction, words):
    with pytest.raises(InputError, match=words):
        evaluate("x*y + y", {"x": 2, "y": 3}, direction=direction)


def test_seed_scales_forward_results():
    assert evaluate("x*x", {"x": 3}, mode="forward", seed=-2).gradient == {"x": -12.0}
    assert evaluate("x*x", {"x": 3}, direction={"x": 0.5}, seed=2).directional == 6.0


def test_baydin_table_2_tangent_trace():
    # log(x) + x*y - sin(y) at (2, 5) along (1, 0), by hand: v̇1 = ẋ/x = 0.5,
    # v̇2 = ẋ*y + x*ẏ = 5, v̇3 = cos(y)*ẏ = 0, v̇4 = v̇1 + v̇2 = 5.5, v̇5 = v̇4 - v̇3 = 5.5
    r = evaluate(SEED, {"x": 2, "y": 5}, direction={"x": 1, "y": 0})
    rows = r.trace.rows
    assert [row.row.id for row in rows] == ["x", "y", "v1", "v2", "v3", "v4", "v5"]
    assert [row.tangents[0] for row in rows] == [1, 0, 0.5, 5, 0, 5.5, 5.5]
    partials = {row.row.id: row.partials for row in rows}
    assert partials["v1"] == (0.5,)
    assert partials["v2"] == (5, 2)
    assert partials["v3"] == pytest.approx((math.cos(5),), rel=1e-15)
    assert partials["v4"] == (1, 1) and partials["v5"] == (1, -1)
    assert r.trace.sweeps == ["direction"] and r.trace.output == "v5"


def test_gradient_trace_has_one_sweep_per_input():
    r = evaluate(SEED, {"x": 2, "y": 3}, mode="forward")
    assert r.trace.sweeps == ["x", "y"]
    out = r.trace.rows[-1]
    assert out.tangents == pytest.approx((1 / 2 + 3, 2 - math.cos(3)), rel=1e-15)


def test_dead_node_has_no_tangent():
    r = evaluate("a = sqrt(x); b = x*x; b", {"x": 0}, mode="forward")
    assert r.gradient == {"x": 0.0}  # sqrt is not differentiable at 0, but the output never reads it
    assert r.trace.rows[1].tangents == (None,)


@pytest.mark.parametrize("source, at, words", [
    ("sqrt(x)", {"x": 0}, ["sqrt(0)", "derivative is not finite"]),
    ("1/x", {"x": 1e-200}, ["tangent of v1", "-inf"]),  # float64's overflow (balls: -1e400)
])
def test_forward_mode_names_the_node_where_the_derivative_fails(source, at, words):
    with pytest.raises(NumericalError) as info:
        evaluate(source, at, mode="forward", float64=True)
    for word in words:
        assert word in info.value.message


def test_direction_and_wrt_do_not_combine():
    with pytest.raises(InputError):
        evaluate("x*y", {"x": 1, "y": 2}, wrt=["x"], direction={"x": 1})
    with pytest.raises(InputError):
        evaluate("x", {"x": 1}, mode="sideways")


# -- the command line -----------------------------------------------------------------------------

def test_cli_forward_mode_prints_what_reverse_mode_prints(run):
    rev = run("eval", SEED, "--at", "x=2,y=3")
    fwd = run("eval", SEED, "--at", "x=2,y=3", "--mode", "forward")
    assert fwd.exit_code == 0 and fwd.output == rev.output
    assert run("eval", SEED, "--at", "x=2,y=3", "--mode", "reverse").output == rev.output


def test_cli_forward_json(run):
    data = json.loads(run("eval", SEED, "--at", "x=2,y=3", "--mode", "forward", "--json").output)
    assert data["mode"] == "forward"
    assert data["gradient"] == {"x": 3.5, "y": DY}
    assert data["value"] == math.log(2) + 6 - math.sin(3)
    assert "directional" not in data


def test_cli_direction_human_and_json(run):
    result = run("eval", SEED, "--at", "x=2,y=5", "--direction", "x=1,y=0")
    assert result.exit_code == 0
    assert result.output.splitlines()[1:] == ["∇f·d = 5.500000000000", "d    = (x=1, y=0)"]
    data = json.loads(run("eval", SEED, "--at", "x=2,y=5", "--direction", "y=pi/2",
                          "--json").output)
    assert data["mode"] == "forward" and "gradient" not in data
    assert data["direction"] == {"x": 0.0, "y": math.pi / 2}
    assert data["directional"] == pytest.approx((2 - math.cos(5)) * math.pi / 2, rel=1e-15)


def test_cli_forward_trace_table_and_json(run):
    result = run("eval", SEED, "--at", "x=2,y=5", "--direction", "x=1,y=0", "--trace")
    lines = result.output.splitlines()
    assert "Forward-mode tangent trace" in result.output
    row = next(line for line in lines if line.startswith("│ v2 "))
    dot = "\u0307"  # combining dot above: v̇2, ẋ as the table prints them
    assert f"v{dot}2 = 5·x{dot} + 2·y{dot}" in row and "5.000000000000" in row
    assert f"v{dot}5 = v{dot}4 - v{dot}3" in next(line for line in lines if line.startswith("│ v5 "))
    data = json.loads(run("eval", SEED, "--at", "x=2,y=5", "--direction", "x=1,y=0",
                          "--trace", "--json").output)
    assert [r["tangent"] for r in data["trace"]["forward"]] == [1, 0, 0.5, 5, 0, 5.5, 5.5]
    assert data["trace"]["forward"][3]["partials"] == [5, 2]
    assert "contributions" not in data["trace"]
    data = json.loads(run("eval", SEED, "--at", "x=2,y=3", "--mode", "forward", "--trace",
                          "--json").output)
    assert data["trace"]["forward"][-1]["tangents"] == {"x": 3.5, "y": DY}


def test_cli_check_in_forward_mode_checks_the_forward_gradient(run):
    result = run("eval", SEED, "--at", "x=2,y=3", "--mode", "forward", "--check", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["check"]["ok"] is True
    assert [r["ad"] for r in data["check"]["rows"]] == list(data["gradient"].values())


@pytest.mark.parametrize("args, code, words", [
    (["--direction", "x"], 2, ["--direction x: no value for x", "write x=2"]),
    (["--direction", "x=1", "--check"], 2, ["--direction gives none"]),
    (["--direction", "x=1", "--expect", "x=1/x+y"], 2, ["--direction gives none"]),
    (["--direction", "x=1", "--mode", "reverse"], 2, ["forward-mode option"]),
    (["--direction", "x=1", "--wrt", "x"], 2, ["cannot be combined"]),
    (["--mode", "sideways"], 2, ["sideways"]),
])
def test_cli_forward_errors(run, reported, args, code, words):
    reported(run("eval", SEED, "--at", "x=2,y=3", *args), code, words)


def test_cli_direction_refuses_names_not_read(run):
    result = run("eval", "x*x", "--at", "x=3", "--direction", "x=1,z=1")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "input error: --direction names z, which the expression does not read",
        "  x=1,z=1",
        "      ^",
        "hint: its inputs are: x"]
    assert run("eval", "x*x", "--at", "x=3", "--direction", "x=2").stdout.splitlines()[1] == \
        "∇f·d = 12.00000000000"
