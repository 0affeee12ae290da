"""Structured errors: fields (kind, span, node, names, values, option), not sentences; the
Python API never names a command-line flag; every option-value error of the CLI is printed
in gradcli's own format ("input error: ... hint: ..."), exit 2."""

import subprocess

import pytest

import gradcli
from gradcli.errors import (DomainError, FileError, GradcliError, InputError, LimitError,
                            MissingInputError, NameLookupError, NumericalError, ParseError,
                            describe)

from test_cli import _console_script

KINDS = {"syntax", "name", "input", "domain", "numerical", "limit", "io"}


@pytest.mark.parametrize("cls, kind, exit_code", [
    (ParseError, "syntax", 2), (NameLookupError, "name", 2), (InputError, "input", 2),
    (MissingInputError, "input", 2), (DomainError, "domain", 2), (NumericalError, "numerical", 1),
    (LimitError, "limit", 2), (FileError, "io", 2),
])
def test_every_error_class_has_a_kind_for_programs(cls, kind, exit_code):
    assert issubclass(cls, GradcliError) and cls.kind == kind and cls.kind in KINDS
    assert cls.exit_code == exit_code


def _raised(source, at=None, **options) -> GradcliError:
    with pytest.raises(GradcliError) as info:
        gradcli.evaluate(source, at, **options)
    return info.value


def test_a_missing_input_through_the_api_names_no_flag():
    exc = _raised("x*y", {"x": 1})
    assert type(exc) is MissingInputError and exc.kind == "input"
    assert exc.names == ("y",) and exc.span == (2, 3)  # the first read of y in "x*y"
    assert str(exc) == "no value for input y"
    assert "--" not in describe(exc, "x*y")


def test_an_unknown_wrt_name_through_the_api_names_the_parameter_not_the_flag():
    exc = _raised("x*y", {"x": 1, "y": 2}, wrt=["q"])
    assert exc.option == "wrt" and exc.names == ("q",)
    assert str(exc) == "wrt names q, which the expression does not read"
    assert exc.hint == "its inputs are: x, y"


def test_api_messages_never_mention_flags():
    cases = [("x*y", {"x": 1}, {}), ("x", {"x": 1}, {"wrt": ["q"]}),
             ("x", {"x": 1}, {"seed": float("nan")}),
             ("x", {"x": 1}, {"wrt": ["x"], "direction": {"x": 1}})]
    for source, at, options in cases:
        exc = _raised(source, at, **options)
        assert "--" not in str(exc) and "--" not in (exc.hint or ""), str(exc)


def test_a_domain_error_carries_its_node_and_values():
    exc = _raised("x + log(x - 3)", {"x": 1})
    # v1 = x - 3 = -2, v2 = log(v1): outside log's domain
    assert exc.kind == "domain" and exc.node == "v2" and exc.values == (-2.0,)
    assert exc.span == (4, 14)
    assert str(exc).startswith("v2: log(-2) is outside the domain of log")


def test_a_failed_derivative_carries_its_node():
    exc = _raised("sqrt(x)", {"x": 0})
    assert exc.kind == "numerical" and exc.node == "v1" and exc.values == (0.0,)
    assert "∂f/∂x is unbounded (+∞)" in str(exc)  # the one-sided slope at 0 (test_singular)


def test_a_failed_second_derivative_says_second():
    with pytest.raises(NumericalError) as info:
        gradcli.hessian("x^1.5", {"x": 0})
    assert info.value.node == "v1"
    # x^1.5: ∂/∂x = 1.5·x^0.5, whose derivative 0.75·x^-0.5 is infinite at 0; the error names x
    assert str(info.value) == ("v1 = 0 ^ 1.5: the second derivative by x (the base, a) is not "
                               "finite here")


def test_syntax_and_name_errors_have_their_kinds():
    assert _raised("2|x|", {"x": 1}).kind == "syntax"
    assert _raised("sinn(x)", {"x": 1}).kind == "name"


# -- the CLI: option-value errors in gradcli's own format ---------------------------------------

@pytest.mark.parametrize("args, first_line", [
    (["eval", "x", "--at", "x"], "input error: --at x: no value for x"),
    (["eval", "x", "--at", ","], "input error: --at ',' gives no values"),
    (["eval", "x", "--at", "x=1", "--at", "x=2"], "input error: --at gives x twice"),
    (["eval", "x", "--at", "x=1,x=2"], "input error: --at gives x twice"),
    (["eval", "x", "--at", "1x=2"], "input error: --at 1x=2: '1x' is not a valid name"),
    (["eval", "x", "--at", "x=1", "--direction", "x"],
     "input error: --direction x: no value for x"),
    (["eval", "x", "--at", "x=1", "--wrt", ","], "input error: --wrt gives no names"),
    (["eval", "x", "--at", "x=1", "--wrt", "q"],
     "input error: --wrt names q, which the expression does not read"),
    (["eval", "x", "--at", "x=1", "--expect", "x"],
     "input error: --expect 'x': expected NAME=FORMULA"),
    (["eval", "x", "--at", "x=1", "--expect", "q=1"],
     "input error: --expect q: ∂f/∂q is not part of the gradient"),
    (["eval", "x", "--at", "x=1", "--expect", "x=1/y"],
     "input error: --expect x: no value for input y"),
    (["eval", "x", "--at", "x=1", "--seed", "nan"],
     "input error: --seed is nan, which is not a finite number"),
    (["eval", "x", "--at", "x=y"], "input error: --at x: the value is not a number: it reads the name y"),
    (["eval", "x", "--at", "x=1e999"],
     "input error: --at x: the value is '1e999', which is not a finite number"),
    (["graph", "x", "--at", "x"], "input error: --at x: no value for x"),
    (["hessian", "x", "--at", "y"], "input error: --at y: no value for y"),
])
def test_option_value_errors_are_printed_in_gradclis_format(run, args, first_line):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines()[0] == first_line
    assert "Invalid value" not in result.stderr and "Usage:" not in result.stderr
    assert "Traceback" not in result.stderr


def test_the_cli_adds_the_flag_hint_for_a_missing_input(run):
    result = run("eval", "x*y*z", "--at", "x=1")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "input error: no value for inputs y, z", "  x*y*z", "    ^", "hint: add --at y=1,z=1"]


def test_the_console_script_prints_an_option_error_in_gradclis_format(tmp_path):
    out = subprocess.run([_console_script(), "eval", "x", "--at", "x=,"], capture_output=True,
                         text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == "input error: --at x: the value is missing\n  x=,\n    ^\n"
    assert "Traceback" not in out.stderr and "Invalid value" not in out.stderr


def test_a_cube_root_of_a_negative_number_points_to_cbrt(gradcli_script):
    import subprocess
    done = subprocess.run([gradcli_script, "eval", "x^(1/3)", "--at", "x=-8"],
                          capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 2
    assert "outside the domain of pow" in done.stderr
    assert "hint: the real cube root of a negative number is cbrt(x)" in done.stderr


# -- a number in a message is exact or marked (≈, in float64) ------------------------------------

MARKED = [  # (command line, the message's number(s) as written, their reference)
    # certified: decided on balls; x - pi is irrational, so its double is marked ≈
    (["eval", "log(x - pi)", "--at", "x=3"], "log(≈-0.14159265358979323) is outside",
     lambda mp: mp.mpf(3) - mp.pi),
    (["eval", "log(x/3 - 1)", "--at", "x=1"], "log(≈-0.6666666666666666) is outside",
     lambda mp: mp.mpf(1) / 3 - 1),
    # an exact rational with a short decimal is written exactly, unmarked
    (["eval", "log(x - 0.3)", "--at", "x=0.1"], "log(-0.2) is outside", None),
    (["eval", "sum(log(x - pi))", "--at", "x=[3,5]"], "log(≈-0.14159265358979323) is outside",
     lambda mp: mp.mpf(3) - mp.pi),
    # float64: another node's double, marked in float64 (Python's doubles are the reference)
    (["eval", "log(x - 0.3)", "--at", "x=0.1", "--float64"],
     f"log({0.1 - 0.3!r}) in float64 is outside", None),
    (["eval", "exp(x*x*1.1)", "--at", "x=30", "--float64"],
     f"exp({30 * 30 * 1.1!r}) in float64 overflows", None),
    (["hessian", "log(x - 0.3)", "--at", "x=0.1", "--float64"],
     f"log({0.1 - 0.3!r}) in float64 is outside", None),
    # an input's own value is the number given: no mark
    (["eval", "exp(x)", "--at", "x=1000", "--float64"], "v1: exp(1000) overflows", None),
]


@pytest.mark.parametrize("args, words, reference", MARKED, ids=[" ".join(m[0]) for m in MARKED])
def test_a_number_in_a_domain_or_overflow_message_is_exact_or_marked(run, args, words,
                                                                     reference):
    import json

    import mpmath
    result = run(*args)
    assert result.exit_code in (1, 2) and "Traceback" not in result.output
    assert words in result.stderr, result.stderr
    data = json.loads(run(*args, "--json").stdout)
    assert words in data["error"]["message"]
    if reference is not None:  # the double after ≈ is the exact number's, to 15 digits
        with mpmath.workdps(50):
            exact = reference(mpmath)
        shown = float(words.split("≈")[1].split(")")[0])
        assert abs(shown - exact) <= abs(exact) * 1e-15


def test_a_batch_row_marks_a_nodes_double(gradcli_script, tmp_path):
    (tmp_path / "p.csv").write_text("x\n0.1\n0.5\n")
    out = subprocess.run([gradcli_script, "eval", "log(x - 0.3)", "--points", "p.csv"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 1, out.stderr
    message = f"v2: log({0.1 - 0.3!r}) in float64 is outside the domain of log"
    assert message in out.stdout.splitlines()[1] and message in out.stderr
    out = subprocess.run([gradcli_script, "eval", "log(x - pi)", "--at", "x=3"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 2 and "log(≈-0.14159265358979323)" in out.stderr


@pytest.mark.parametrize("args", [
    ["eval", "abs(x=2.3)", "--at", "x=0.5"], ["eval", "abs(x= - 2.3)", "--at", "x=0.5", "--json"],
    ["diff", "abs(x=2.3)"], ["hessian", "abs(x=2.3)", "--at", "x=0.5"],
    ["codegen", "abs(x=2.3)"], ["graph", "abs(x=2.3)"],
    ["eval", "abs(abs(x= - 2.3))", "--at", "x=0.5"],  # a row already looked up: still checked
])
def test_an_option_in_a_scalar_functions_call_is_a_name_error_under_it(run, args):
    """abs(x=2.3) parses (options are array functions': sum(X, axis=0)); it was a TypeError
    traceback from the lowering in every command (found by test_fuzz's thorough profile)."""
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr
    assert "name error: abs has no option x=" in result.stderr
    line, caret = result.stderr.splitlines()[1:3]
    assert caret.index("^") == line.index("x=")


def test_an_option_in_a_scalar_call_through_the_console_script():
    out = subprocess.run([_console_script(), "eval", "atan2(y=1, x)", "--at", "x=1,y=2"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith("name error: atan2 has no option y=")
    exc = _raised("atan2(y=1, x)", {"x": 1, "y": 2})
    assert type(exc) is NameLookupError and exc.span == (6, 9)
