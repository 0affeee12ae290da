"""Inputs that never mislead (issue 13): each finding, as typed by a user, through the installed
console script (a real process: exit code, stdout and stderr apart) and, where useful, CliRunner.

Expected values are derived by hand in the comments, never copied from gradcli's output.
"""

from __future__ import annotations

import json
import math
import os
import subprocess

import mpmath
import pytest

from gradcli import evaluate, hessian
from gradcli.errors import InputError, NumericalError
from gradcli.views.errors import KINDS
from test_cli import _console_script


def gradcli(*args: str, input: str | None = None, env=None) -> subprocess.CompletedProcess:
    """The installed console script; never a traceback."""
    out = subprocess.run([_console_script(), *args], input=input, capture_output=True, text=True,
                         timeout=120, env={**os.environ, **(env or {})})
    assert "Traceback" not in out.stderr, out.stderr
    return out


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


# -- point values are one constant expression ---------------------------------------------------

@pytest.mark.parametrize("args, expected", [
    # a ';' was a statement separator: x=1;y=2 evaluated the program "1;y=2" and gave f = 2
    (["eval", "x", "--at", "x=1;y=2"],
     ["input error: --at x: the value is not one expression: it holds ';', which separates "
      "statements",
      "  x=1;y=2",
      "     ^"]),
    # an assignment inside a value: once x = 6 (a=3; a*2) and "no value for input y" with x*y
    (["eval", "x*y", "--at", "x=a=3;a*2"],
     ["input error: --at x: the value is not one expression: it holds ';', which separates "
      "statements",
      "  x=a=3;a*2",
      "       ^"]),
    (["eval", "x", "--at", "x=a=3"],
     ["input error: --at x: the value is an assignment, not an expression",
      "  x=a=3",
      "    ^^^"]),
    # an input name inside a value
    (["eval", "x+y", "--at", "y=2,x=y+1"],
     ["input error: --at x: the value is not a number: it reads the name y",
      "  y=2,x=y+1",
      "        ^"]),
    (["eval", "x", "--at", "x:1"],
     ["input error: --at x:1: a name and its value are joined by '='",
      "  x:1",
      "  ^^^",
      "hint: write x=1"]),
])
def test_a_point_value_that_is_not_one_constant_expression_is_an_input_error(args, expected):
    out = gradcli(*args)
    assert out.returncode == 2 and out.stdout == ""
    assert lines(out.stderr)[:len(expected)] == expected


def test_constant_expressions_still_work():
    out = gradcli("eval", "x*y", "--at", "x=atan2(1, 1)*4,y=-2^2", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["inputs"] == {"x": math.pi, "y": -4.0}  # -2^2 is -(2^2)


def test_expect_formulas_are_one_expression():
    out = gradcli("eval", "x*y", "--at", "x=2,y=3", "--expect", "x=y;y")
    assert out.returncode == 2
    assert lines(out.stderr)[:3] == [
        "input error: --expect x: the formula is not one expression: it holds ';', which "
        "separates statements",
        "  y;y",
        "   ^"]


# -- a direction names inputs the source reads --------------------------------------------------

def test_a_mistyped_direction_is_an_input_error_not_a_zero_derivative():
    out = gradcli("eval", "x", "--at", "x=1", "--direction", "q=1")
    assert out.returncode == 2 and out.stdout == ""
    assert lines(out.stderr) == ["input error: --direction names q, which the expression does "
                                 "not read",
                                 "  q=1",
                                 "  ^",
                                 "hint: its inputs are: x"]


def test_a_direction_zero_everywhere_is_an_input_error():
    out = gradcli("eval", "x*y", "--at", "x=1,y=2", "--direction", "x=0,y=0")
    assert out.returncode == 2 and "zero in every input" in out.stderr


# -- the seed scales the output's adjoint; --expect is a formula for ∂f/∂x ----------------------

def test_seed_and_expect_compare_like_with_like():
    # f = x*y: ∂f/∂x = y = 3. With --seed 2 the gradient shown is 2·∇f = (6, 4), and the formula
    # "y" for ∂f/∂x is right: it is compared with ∂f/∂x = 3, not with 6.
    out = gradcli("eval", "x*y", "--at", "x=2,y=3", "--seed", "2", "--expect", "x=y")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "∂f/∂x = 6.000000000000" in out.stdout and "your formula for x agrees" in out.stdout
    wrong = gradcli("eval", "x*y", "--at", "x=2,y=3", "--seed", "2", "--expect", "x=2*y")
    assert wrong.returncode == 1
    assert "your formula for ∂f/∂x is off by +3 (2*y = 6, AD gives 3)" in wrong.stdout
    data = json.loads(gradcli("eval", "x*y", "--at", "x=2,y=3", "--seed", "2", "--expect", "x=y",
                              "--json").stdout)
    assert data["gradient"] == {"x": 6.0, "y": 4.0}
    assert data["check"]["rows"][0]["expected"] == {"formula": "y", "value": 3.0, "ad": 3.0,
                                                    "abs_error": 0.0, "rel_error": 0.0, "ok": True}


# -- --json errors are JSON on stdout -----------------------------------------------------------

KEYS = {"kind", "message", "line", "column", "span", "hint"}


@pytest.mark.parametrize("args, kind, code, env", [
    (["eval", "x+", "--json"], "syntax", 2, None),
    (["eval", "foo(x)", "--at", "x=1", "--json"], "name", 2, None),
    (["eval", "x*y", "--at", "x=1", "--json"], "input", 2, None),
    (["eval", "log(x)", "--at", "x=-1", "--json"], "domain", 2, None),
    (["eval", "exp(x)", "--at", "x=1000", "--json", "--float64"], "numerical", 1, None),
    (["eval", "x+x+x", "--at", "x=1", "--json"], "limit", 2, {"GRADCLI_MAX_NODES": "2"}),
    (["hessian", "x+", "--json"], "syntax", 2, None),
    (["diff", "sin(", "--json"], "syntax", 2, None),
    (["eval", "x", "--digits", "99", "--json"], "input", 2, None),  # click's own usage error
])
def test_json_errors_are_one_object_on_stdout(args, kind, code, env):
    out = gradcli(*args, env=env)
    assert out.returncode == code
    data = json.loads(out.stdout)
    assert set(data) == {"error"} and set(data["error"]) == KEYS
    assert data["error"]["kind"] == kind and kind in KINDS
    assert data["error"]["message"] and data["error"]["message"] in out.stderr  # human text too


def test_json_error_fields_locate_the_mistake():
    # log(x) at x = -1: the whole call, line 1, column 1, characters 0-6
    out = gradcli("eval", "x + log(x)", "--at", "x=-1", "--json")
    error = json.loads(out.stdout)["error"]
    assert (error["line"], error["column"], error["span"]) == (1, 5, [4, 10])
    out = gradcli("eval", "-", "--at", "a=1", "--json", input="b = a\nc = b +* 2\n")
    error = json.loads(out.stdout)["error"]
    assert (error["kind"], error["line"], error["column"]) == ("syntax", 2, 8)
    out = gradcli("eval", "x", "--at", "x:1", "--json")
    error = json.loads(out.stdout)["error"]
    assert error["hint"] == "write x=1" and error["span"] == [0, 3]  # in the value "x:1"
    assert error["message"] == "--at x:1: a name and its value are joined by '='"


def test_json_io_kind_is_mapped():
    from gradcli.errors import GradcliError
    from gradcli.views.errors import error_object

    class Broken(GradcliError):
        kind = "io error"
    assert error_object(Broken("cannot write to standard output"))["error"]["kind"] == "io"


# -- hints that help ----------------------------------------------------------------------------

@pytest.mark.parametrize("source, expected", [
    ("sin x", ["syntax error: sin is a function: its argument goes in parentheses",
               "  sin x",
               "  ^^^",
               "hint: write sin(x)"]),
    ("2|x|", ["syntax error: unexpected '|': a bar after an operand needs an operator",
              "  2|x|",
              "   ^",
              "hint: write 2*|x|"]),
    # a '(' left open across lines: the next statement was read inside it
    ("b = a + (a\nc = b^2", ["syntax error: unexpected '=' on a later line: the '(' at line 1, "
                             "column 9 is never closed",
                             "1 | b = a + (a",
                             "            ^ never closed",
                             "hint: close it with ')' (inside parentheses a new line continues "
                             "the expression)"]),
    ("(x + 1", ["syntax error: unexpected end of input: expected ')'",
                "  (x + 1",
                "  ^ never closed",
                "hint: the '(' at column 1 is never closed"]),
])
def test_hints_point_the_right_way(source, expected):
    out = gradcli("eval", "-", "--at", "x=1,a=1", input=source)
    assert out.returncode == 2
    assert lines(out.stderr) == expected


def test_long_lists_of_names_are_cut_at_ten():
    source = "+".join(f"v{i}" for i in range(3000))
    out = gradcli("eval", "-", input=source)
    assert out.returncode == 2
    first = lines(out.stderr)[0]
    assert first == ("input error: no value for inputs v0, v1, v2, v3, v4, v5, v6, v7, v8, v9 "
                     "and 2,990 more")
    assert len(out.stderr) < 1000
    hint = lines(out.stderr)[-1]
    assert hint == "hint: add --at " + ",".join(f"v{i}=1" for i in range(10)) + ",..."


# -- pow where the derivative exists --------------------------------------------------------------

@pytest.mark.parametrize("source, at, wrt, gradient", [
    ("x^0", "x=0", None, {"x": 0.0}),  # x^0 = 1 everywhere
    ("0^x", "x=2", None, {"x": 0.0}),  # 0^x = 0 for every x > 0
    ("x^y", "x=0,y=2", None, {"x": 0.0, "y": 0.0}),  # ∂x: 2·0^1 = 0; ∂y: 0^y = 0 for y > 0
    ("x^y", "x=-2,y=3", "x", {"x": 12.0}),  # ∂f/∂x = 3·(-2)^2; ∂f/∂y is not asked for
])
def test_pow_derivatives_that_exist(source, at, wrt, gradient):
    args = ["eval", source, "--at", at, "--json"] + (["--wrt", wrt] if wrt else [])
    for mode in ("reverse", "forward"):
        out = gradcli(*args, "--mode", mode)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["gradient"] == gradient


def test_an_undefined_pow_derivative_names_the_argument_at_fault():
    out = gradcli("eval", "x^y", "--at", "x=-2,y=3")
    assert out.returncode == 1
    assert "the derivative by y (the exponent, b) is not finite" in out.stderr
    assert "∂/∂b = a^b·ln a needs a > 0" in out.stderr and "∂/∂a" not in out.stderr
    out = gradcli("eval", "x^0.5", "--at", "x=0")
    assert out.returncode == 1 and "v1 = 0 ^ 0.5 has an infinite slope (+∞)" in out.stderr
    with pytest.raises(NumericalError, match="by y"):
        evaluate("x^y", {"x": -2, "y": 3})


def test_hessian_of_x_to_the_1_at_0():
    out = gradcli("hessian", "x^1", "--at", "x=0", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["hessian"] == [[0.0]]  # f = x: f'' = 0
    # x^2·y at (0, 3), by hand: H = [[2y, 2x], [2x, 0]] = [[6, 0], [0, 0]]
    assert hessian("x^2*y", {"x": 0, "y": 3}).hessian == [[6.0, 0.0], [0.0, 0.0]]


# -- --check: agree, disagree, inconclusive -------------------------------------------------------

@pytest.mark.parametrize("source, at", [
    ("sin(x)", "x=1e22"),  # AD 0.523214785395 (mpmath agrees); the quotient's step spans periods
    ("cos(x)", "x=1e16"),
    ("x^x", "x=1e-300"),  # x^x·(ln x + 1) changes from -690 to -15 across the smallest step
])
def test_check_is_inconclusive_where_differences_cannot_decide(source, at):
    out = gradcli("eval", source, "--at", at, "--check")
    assert out.returncode == 0, out.stdout
    assert "inconclusive" in out.stdout and "FAIL" not in out.stdout
    assert "? inconclusive for x: the difference quotient cannot decide there" in out.stdout
    strict = gradcli("eval", source, "--at", at, "--check", "--strict")
    assert strict.returncode == 1 and "check failed" in strict.stdout
    data = json.loads(gradcli("eval", source, "--at", at, "--check", "--json").stdout)
    assert data["check"]["ok"] is True and data["check"]["inconclusive"] == ["x"]
    assert data["check"]["rows"][0]["status"] == "inconclusive"


def test_sin_at_1e22_ad_value_is_right():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    assert evaluate("sin(x)", {"x": 1e22}).gradient["x"] == pytest.approx(
        float(mpmath.cos(mpmath.mpf(10) ** 22)), rel=1e-15)


def test_a_confident_disagreement_still_fails():
    # A hand-written wrong "gradient" at an ordinary point: the difference quotient is sure.
    from gradcli.api import compile
    from gradcli.check import check
    graph = compile("x*x")
    result = check(graph, [3.0], lambda p: {"x": 7.0})  # the truth is 6
    assert result.rows[0].status == "disagree" and not result.ok


# -- linear in the number of inputs; forward mode; capped tables ----------------------------------

def test_many_inputs(run):
    # 20,000 inputs v0 + v1 + ...: every partial is 1 (a quadratic path took minutes here)
    n = 20_000
    source = "+".join(f"v{i}" for i in range(n))
    at = ",".join(f"v{i}={i}" for i in range(n))
    result = run("eval", source, "--at", at, "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["value"] == n * (n - 1) / 2 and set(data["gradient"].values()) == {1.0}
    assert len(data["gradient"]) == n
    result = run("eval", source, "--at", at, "--wrt", ",".join(f"v{i}" for i in range(0, n, 2)),
                 "--json")
    assert len(json.loads(result.stdout)["gradient"]) == n // 2


def test_forward_mode_keeps_one_sweep():
    from gradcli.api import compile, evaluate
    r = evaluate(compile("x*y + y"), {"x": 2, "y": 3}, mode="forward")
    assert "sweeps" not in r.__dict__  # not kept by the evaluation; made again for a trace
    assert r.gradient == {"x": 3.0, "y": 3.0}
    assert [label for label, _ in r.sweeps] == ["x", "y"]


def test_hessian_table_has_the_row_cap():
    source = "+".join(f"v{i}*v{i}" for i in range(60))  # H = 2·I
    at = ",".join(f"v{i}=1" for i in range(60))
    out = gradcli("hessian", source, "--at", at, "--max-rows", "5")
    assert out.returncode == 0
    assert "Hessian (the first 5 of 60 columns; --max-rows 0 shows all)" in out.stdout
    assert "55 rows not shown (--max-rows 0 shows all)" in out.stdout
    assert "v5 " not in out.stdout.split("Hessian")[1]
    full = json.loads(gradcli("hessian", source, "--at", at, "--max-rows", "5", "--json").stdout)
    assert full["hessian"] == [[2.0 if i == j else 0.0 for j in range(60)] for i in range(60)]


# -- out of memory is a limit error ---------------------------------------------------------------

def test_out_of_memory_is_a_limit_error(run, monkeypatch):
    import gradcli.api

    def exhausted(*args, **kwargs):
        raise MemoryError
    monkeypatch.setattr(gradcli.api, "evaluate", exhausted)
    result = run("eval", "x", "--at", "x=1", "--trace", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["kind"] == "limit"
    assert "out of memory" in result.stderr and "drop --trace" in result.stderr


def test_out_of_memory_in_a_real_process(tmp_path):
    import resource
    source = "+".join(f"sin({k}*x+y)" for k in range(17, 100_017))
    path = tmp_path / "big.grad"
    path.write_text(source)

    def small():
        resource.setrlimit(resource.RLIMIT_AS, (200 << 20, 200 << 20))
    out = subprocess.run([_console_script(), "graph", "-f", str(path), "--format", "dot",
                          "--max-nodes", "0"], capture_output=True, text=True, timeout=300,
                         preexec_fn=small)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "limit exceeded: out of memory" in out.stderr and "--max-nodes" in out.stderr


def test_point_api_errors_are_input_errors():
    from gradcli.points import parse_point
    with pytest.raises(InputError) as info:
        parse_point("x=1,y=(2")
    assert info.value.source == "x=1,y=(2" and info.value.span == (6, 7)
    assert info.value.option == "at" and str(info.value).startswith("at y: the value")


# -- the docs show real runs -------------------------------------------------------------------

def docs_runs():
    """(file, environment, command, printed lines) of every ``$ gradcli ...`` run, optionally
    after ``NAME=value`` settings, in the console blocks of the docs this issue wrote."""
    import re
    import shlex
    from pathlib import Path
    found = []
    for name in ("inputs.md", "errors.md", "limits.md"):
        text = (Path(__file__).parent.parent / "docs" / name).read_text(encoding="utf-8")
        for block in re.findall(r"```console\n(.*?)```", text, re.S):
            for run_text in re.split(r"^(?=\$ )", block, flags=re.M):
                command, _, output = run_text.partition("\n")
                if not command.startswith("$ "):
                    continue
                words = shlex.split(command[2:])
                env = {}
                while "=" in words[0]:
                    key, _, value = words.pop(0).partition("=")
                    env[key] = value
                assert words[0] == "gradcli"
                found.append((name, env, words[1:], lines(output)))
    return found


@pytest.mark.parametrize("name, env, args, expected", docs_runs())
def test_docs_examples_are_real_runs(run, name, env, args, expected):
    assert lines(run(*args, env=env).output) == expected


# -- the API reads a string value as --at reads it ------------------------------------------------

@pytest.mark.parametrize("text, exact", [("pi/4", mpmath.pi / 4), ("pi", mpmath.pi),
                                          ("1/3", mpmath.mpf(1) / 3), ("sqrt(2)", mpmath.sqrt(2)),
                                          ("0.1", mpmath.mpf("0.1"))])
def test_the_api_takes_what_at_takes(text, exact):
    import gradcli
    with mpmath.workdps(40):
        want_value = mpmath.exp(exact) * (2 + mpmath.sin(exact))
        want_slope = mpmath.exp(exact) * (2 + mpmath.sin(exact) + mpmath.cos(exact))
        r = gradcli.evaluate("exp(x)*(2 + sin(x))", {"x": text})
        assert abs(mpmath.mpf(r.value.text) - want_value) <= 1e-12 * abs(want_value)
        assert abs(mpmath.mpf(r.gradient["x"].text) - want_slope) <= 1e-12 * abs(want_slope)
    h = gradcli.hessian("x^2*y", {"x": text, "y": 1})
    assert h.hessian[0][1] == float(2 * exact)
    with pytest.raises(gradcli.GradcliError, match="reads the name abc"):
        gradcli.evaluate("x", {"x": "abc"})
