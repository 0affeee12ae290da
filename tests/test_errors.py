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
