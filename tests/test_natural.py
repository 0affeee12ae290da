"""Math as it is written (docs/language.md, "Writing math naturally"): each natural form is read
as one explicit form, the same syntax tree, in every command, the repl and the option values;
gradcli says how it read the text (``source_read``, the first line of ``--trace``).

Expected values come from mpmath, evaluated on the formula as a person means it, never from
gradcli's own output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import mpmath
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcli.cli import main
from gradcli.engine.graph import parse_source
from gradcli.errors import GradcliError, ParseError
from gradcli.language.ast import Program
from gradcli.language.parser import parse
from strategies import cases, examples, natural_spellings

# (written, read as): both must parse to the same syntax tree
READINGS = [
    # implicit multiplication: a number, a name, a call and a group written side by side
    ("2x", "2*x"), ("2 x", "2*x"), ("x sin(x)", "x*sin(x)"), ("(x+1)(x-1)", "(x+1)*(x-1)"),
    ("2(x+1)", "2*(x+1)"), ("x^2 sin(x)", "(x^2)*sin(x)"), ("2x y", "(2*x)*y"),
    ("sin(x) cos(x)", "sin(x)*cos(x)"), ("x(x+1)", "x*(x+1)"), ("pi(x+1)", "pi*(x+1)"), ("2pi (x+1)", "2*pi*(x+1)"), ("2x(x+1)", "2*x*(x+1)"),
    ("x (x+1)", "x*(x+1)"), ("-x(x+1)", "-x*(x+1)"), ("x(x+1)²", "x*(x+1)^2"),
    ("x(x+1)^2", "x*(x+1)^2"), ("2^x(x+1)", "2^x*(x+1)"), ("2/x(x+1)", "2/x*(x+1)"),
    ("√x(x+1)", "sqrt(x)*(x+1)"), ("2^-x(x+1)^2", "2^(-x)*(x+1)^2"), ("(x(x+1))^2", "(x*(x+1))^2"),
    ("2 (x(x+1))", "2*(x*(x+1))"), ("2 3", "2*3"), ("(x)(y)(z)", "x*y*z"), ("2e", "2*e"),
    ("2pi x", "2*pi*x"), ("2e3x", "2e3*x"),
    # a multi-letter name stays one name
    ("xy", "xy"), ("x2", "x2"),
    # textbook precedence
    ("2x^2", "2*(x^2)"), ("-x^2", "-(x^2)"), ("-2x", "(-2)*x"), ("1/2x", "(1/2)*x"),
    ("x/2y", "(x/2)*y"), ("2^-x y", "(2^(-x))*y"), ("x^2y", "x^2*y"),
    # function powers and inverses
    ("sin^2(x)", "sin(x)^2"), ("sin²(x)", "sin(x)^2"), ("cos^3(2x)", "cos(2*x)^3"),
    ("sin^-1(x)", "asin(x)"), ("sin⁻¹(x)", "asin(x)"), ("tanh^-1(x)", "atanh(x)"),
    ("ln^2(x)", "ln(x)^2"), ("exp^-1(x)", "log(x)"), ("2sin^2(x)", "2*sin(x)^2"),
    ("sin^2((x))", "sin(x)^2"),
    # bars, roots, typeset operators, superscripts
    ("|x|", "abs(x)"), ("|x - 1| + |y|", "abs(x-1) + abs(y)"), ("||x|-1|", "abs(abs(x)-1)"),
    ("|x| y", "abs(x)*y"), ("|x|^2", "abs(x)^2"), ("√x", "sqrt(x)"), ("∛x", "cbrt(x)"),
    ("√(x+1)", "sqrt(x+1)"), ("√x^2", "sqrt(x^2)"), ("2√x", "2*sqrt(x)"), ("√-x", "sqrt(-x)"),
    ("x·y", "x*y"), ("x⋅y", "x*y"), ("x×y", "x*y"), ("x÷2", "x/2"), ("x−1", "x-1"),
    ("−x", "-x"), ("x²", "x^2"), ("x³", "x^3"), ("x⁻¹", "x^-1"), ("x¹⁰", "x^10"),
    ("(x+1)²", "(x+1)^2"), ("2x²", "2*(x^2)"), ("e^x²", "e^(x^2)"),
    # ln, degrees
    ("ln(x)", "ln(x)"), ("30°", "30*(pi/180)"), ("30 deg", "30*(pi/180)"),
    ("30deg", "30*deg"), ("sin(45°)", "sin(45*(pi/180))"), ("(x+1)°", "(x+1)*(pi/180)"),
    ("x/sin^2(x)", "x/sin(x)^2"), ("2 sin^2(x) cos(x)", "2*sin(x)^2*cos(x)"),
    # programs
    ("a = 2x\n3a²", "a = 2*x\n3*a^2"), ("t = |x|; t√t", "t = abs(x); t*sqrt(t)"),
]


@pytest.mark.parametrize("written, explicit", READINGS)
def test_each_natural_form_reads_as_its_explicit_form(written, explicit):
    assert parse_source(written) == parse_source(explicit)


@given(st.data())
@settings(max_examples=examples(300), deadline=None)
def test_natural_and_explicit_spellings_parse_to_the_same_tree(data):
    case = data.draw(cases())
    text = data.draw(natural_spellings(case.program))
    assert parse_source(text) == case.program, text


def test_without_the_function_table_the_grammar_alone_reads_the_text():
    # language.parser.parse knows no functions: sin^2(x) is then a product, x(y) a call
    assert parse("sin^2(x)") == parse("sin^2*(x)")
    assert parse("x(y)").statements[0].__class__.__name__ == "Call"


def test_deep_natural_forms_parse_without_recursion():
    depth = 100_000
    assert parse("√" * depth + "x").statements[0].args[0].__class__.__name__ == "Call"
    node = parse("|" * depth + "x" + "|" * depth).statements[0]
    for _ in range(depth):
        node = node.args[0]
    assert node == parse("x").statements[0]
    assert len(parse(" ".join(["x"] * depth)).statements) == 1


# -- what a person sees: values, warnings, the reading printed back ------------------------------

def _script() -> str:
    return shutil.which("gradcli", path=os.path.dirname(sys.executable)) or "gradcli"


def _f(x):
    """The issue's rows as a person means them, at x (mpmath)."""
    return {
        "2x^2 sin(x)": 2 * x**2 * mpmath.sin(x),
        "(x+1)(x-1)": (x + 1) * (x - 1),
        "2(x+1)": 2 * (x + 1),
        "sin^2(x)": mpmath.sin(x) ** 2,
        "sin^-1(x)": mpmath.asin(x),
        "|x| + √x + x·2 + x÷2 + x²": abs(x) + mpmath.sqrt(x) + 2 * x + x / 2 + x**2,
        "−x^2 + ∛x": -(x**2) + mpmath.cbrt(x),
        "ln(x) + x⁻¹": mpmath.log(x) + 1 / x,
        "sin(30°) + x deg": mpmath.sin(mpmath.pi / 6) + x * mpmath.pi / 180,
    }


ROWS = list(_f(mpmath.mpf(1)))
READ = {"2x^2 sin(x)": "2*x^2*sin(x)", "(x+1)(x-1)": "(x + 1)*(x - 1)",
        "2(x+1)": "2*(x + 1)", "sin^2(x)": "sin(x)^2", "sin^-1(x)": "asin(x)",
        "|x| + √x + x·2 + x÷2 + x²": "abs(x) + sqrt(x) + x*2 + x/2 + x^2",
        "−x^2 + ∛x": "-x^2 + cbrt(x)", "ln(x) + x⁻¹": "ln(x) + x^-1",
        "sin(30°) + x deg": "sin(30*(pi/180)) + x*(pi/180)"}


@pytest.mark.parametrize("source", ROWS)
def test_the_issues_rows_from_the_installed_console_script(source):
    x = mpmath.mpf("0.5")
    with mpmath.workdps(40):
        want = _f(x)[source]
        slope = mpmath.diff(lambda t: _f(t)[source], x)
    proc = subprocess.run([_script(), "eval", source, "--at", "x=0.5", "--json"],
                          capture_output=True, text=True, timeout=60, encoding="utf-8")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["source"] == source and data["source_read"] == READ[source]
    assert abs(mpmath.mpf(data["decimal"]["value"]) - want) <= 1e-12 * max(1, abs(want))
    assert abs(mpmath.mpf(data["decimal"]["gradient"]["x"]) - slope) <= 1e-10 * max(1, abs(slope))
    # the reading printed back reads as the source itself
    assert parse_source(data["source_read"]) == parse_source(source)


def test_the_trace_starts_with_the_reading():
    result = CliRunner().invoke(main, ["eval", "2x² + |x|", "--at", "x=-3", "--trace"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "read as: 2*x^2 + abs(x)"
    assert "f     = 21.00000000000" in result.stdout  # 2*9 + 3


@pytest.mark.parametrize("command", [
    ["hessian", "x²y", "--at", "x=2,y=3"], ["diff", "x²y"], ["graph", "x²y", "--at", "x=2,y=3"],
    ["codegen", "x²y", "--lang", "c"], ["plot", "x²y", "--over", "x=1:2:3", "--at", "y=1"],
])
def test_every_command_reads_natural_input_and_says_how(command):
    result = CliRunner().invoke(main, [*command, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["source"] == "x²y" and data["source_read"] == "x^2*y"


def test_option_values_read_natural_input():
    runner = CliRunner()
    for value in ("30°", "30deg", "30 deg", "π/6".replace("π", "pi"), "|−30|°"):
        result = runner.invoke(main, ["eval", "sin(x)", "--at", f"x={value}", "--json"])
        assert result.exit_code == 0, (value, result.output)
        assert abs(mpmath.mpf(json.loads(result.stdout)["decimal"]["value"]) - 0.5) < 1e-12
    result = runner.invoke(main, ["eval", "x^2", "--at", "x=3", "--check", "--expect", "x=2x"])
    assert result.exit_code == 0, result.output


def test_one_over_two_x_is_read_left_to_right_with_a_warning():
    runner = CliRunner()
    result = runner.invoke(main, ["eval", "1/2x", "--at", "x=4"])
    assert result.exit_code == 0
    assert "f     = 2.000000000000" in result.stdout  # (1/2)*4
    assert "warning: 1/2x is read as (1/2)*x" in result.stderr
    assert "write 1/(2x)" in result.stderr
    for unambiguous in ("(1/2)x", "1/(2x)", "x/2", "1/2*x", "a/bc"):
        result = runner.invoke(main, ["eval", unambiguous, "--at", "x=4,a=1,bc=2"])
        assert "warning: " + unambiguous not in result.stderr, result.stderr
    # the console script says it too
    proc = subprocess.run([_script(), "eval", "x/2y", "--at", "x=1,y=2"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "x/2y is read as (x/2)*y" in proc.stderr


def test_several_values_for_one_name_is_a_clear_message():
    result = CliRunner().invoke(main, ["eval", "x^2", "--at", "x=1,2,3"])
    assert result.exit_code == 2
    assert "a point has one value per name, and 2 has no name" in result.stderr
    assert "use --grid x=1:3:3" in result.stderr
    proc = subprocess.run([_script(), "eval", "x^2", "--at", "x=1,2,5"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "--points FILE" in proc.stderr


def test_there_is_no_control_flow_and_the_message_names_the_branch_functions():
    result = CliRunner().invoke(main, ["eval", "if x > 0 then x else -x", "--at", "x=1"])
    assert result.exit_code == 2
    assert "no control flow" in result.stderr
    for name in ("abs", "max", "min", "step"):
        assert name in result.stderr
    assert "where" not in result.stderr.split("hint:")[1]  # not a function of the table


@pytest.mark.parametrize("source, suggested, not_suggested", [
    ("sni(x)", "sin", None), ("cso(x)", "cos", None), ("sqr(x)", "sqrt", None),
    ("cott(w, x)", None, "cot"), ("smax(a)", "max", None), ("maxx(a, b)", "max", None),
    ("sinn(x)", "sin", "max"),
])
def test_did_you_mean_only_a_function_that_fits_the_call(source, suggested, not_suggested):
    with pytest.raises(GradcliError) as info:
        parse_and_lower(source)
    hint = info.value.hint or ""
    if suggested:
        assert hint.startswith("did you mean ") and suggested in hint.replace("?", "").split()
    else:
        assert "did you mean" not in hint
    if not_suggested:
        assert not_suggested not in hint.replace("`gradcli functions`", "")


def parse_and_lower(source: str):
    from gradcli.engine.graph import lower
    return lower(parse_source(source), source)


def test_xy_when_x_and_y_have_values_hints_the_product():
    import gradcli
    with pytest.raises(GradcliError) as info:
        gradcli.evaluate("xy + 1", {"x": 2, "y": 3})
    assert "xy is one name" in info.value.hint and "x*y" in info.value.hint
    with pytest.raises(GradcliError) as info:
        gradcli.evaluate("xy + 1", {"x": 2})
    assert "x*y" not in (info.value.hint or "")


@pytest.mark.parametrize("source, hint", [
    ("sin x", "write sin(x)"), ("sin^2 x", "write sin(x)^2"), ("2 sin x", "write sin(x)"),
    ("sqrt^-1(x)", "sqrt(x)^-1"), ("deg = 1", "deg_"),
])
def test_a_function_written_without_parentheses_says_how(source, hint):
    with pytest.raises(ParseError) as info:
        parse_source(source)
    assert hint in info.value.hint


def test_the_repl_reads_natural_input():
    from gradcli.repl import Session
    calls: list = []
    session = Session(run=lambda args: calls.append(args) or 0, out=calls.append,
                      err=calls.append)
    session.execute("f = 2x²")
    session.execute("at x=30°")
    session.execute("diff f x")  # a target and a name, not the product f*x
    assert calls[-1][0] == "diff" and calls[-1][-2:] == ["--wrt", "x"], calls
    assert parse_source(calls[-1][1]) == parse_source("f = 2*x^2")
    session.execute("f")
    at = calls[-1][calls[-1].index("--at") + 1]
    assert at.startswith("x=") and abs(float(at[2:]) - mpmath.pi / 6) < 1e-15, calls[-1]


def test_a_program_reads_the_same_from_a_file(tmp_path):
    path = tmp_path / "model.grad"
    path.write_text("a = 2x\nb = |a|√a\nb + 30°\n", encoding="utf-8")
    proc = subprocess.run([_script(), "eval", "-f", str(path), "--at", "x=2", "--json"],
                          capture_output=True, text=True, timeout=60, encoding="utf-8")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    with mpmath.workdps(30):
        want = 4 * mpmath.sqrt(4) + mpmath.pi / 6
    assert abs(mpmath.mpf(data["decimal"]["value"]) - want) < 1e-12
    assert data["source_read"] == "a = 2*x\nb = abs(a)*sqrt(a)\nb + 30*(pi/180)"


def test_the_program_as_read_is_a_program():
    assert isinstance(parse_source("2x"), Program)


# -- a number after ^ with a factor right after it: 2^3x ------------------------------------------

def _note(source: str) -> list:
    from gradcli.engine.graph import read_back
    return read_back(source)[1]


@pytest.mark.parametrize("source, meant, base, exponent, at", [
    ("2^3x", lambda x, y: 2 ** 3 * x, "2", "3x", 1.5),
    ("e^2x", lambda x, y: mpmath.e ** 2 * x, "e", "2x", 0.5),
    ("2^-3x", lambda x, y: mpmath.mpf(2) ** -3 * x, "2", "-3x", 2.0),
    ("x^2y", lambda x, y: x ** 2 * y, "x", "2y", 1.5),
    ("2**3x", lambda x, y: 2 ** 3 * x, "2", "3x", 1.5),
    ("(x+1)^2x", lambda x, y: (x + 1) ** 2 * x, "(x+1)", "2x", 0.5),
    ("2^3(x+1)", lambda x, y: 2 ** 3 * (x + 1), "2", "3(x+1)", 0.5),
])
def test_a_power_then_a_factor_is_read_as_their_product_with_a_warning(source, meant, base,
                                                                       exponent, at):
    result = CliRunner().invoke(main, ["eval", source, "--at", "x=%r,y=0.75" % at, "--json"])
    assert result.exit_code == 0, result.output
    want = meant(mpmath.mpf(at), mpmath.mpf("0.75"))  # as a person means the reading
    assert abs(mpmath.mpf(json.loads(result.stdout)["decimal"]["value"]) - want) < 1e-11 * abs(want)
    assert f"warning: {source} is read as (" in result.stderr
    assert f"to raise {base} to {exponent}, write {base}^({exponent})" in result.stderr
    (span, text, fix), = _note(source)
    assert span == (0, len(source)) and fix  # the whole reading, and the other one's rewrite


@pytest.mark.parametrize("source", ["2^3 x", "(2^3)x", "2³x", "x²y", "2^(3x)", "2x^3", "x^y z",
                                    "2^3*x", "e^x(x+1)", "x^2 sin(x)"])
def test_a_power_whose_reading_is_plain_is_not_warned_about(source):
    assert _note(source) == []
    result = CliRunner().invoke(main, ["eval", source, "--at", "x=1,y=2,z=3"])
    assert result.exit_code == 0 and "warning: " + source not in result.stderr, result.output


def test_the_console_script_warns_about_a_power_then_a_factor():
    proc = subprocess.run([_script(), "eval", "e^2x", "--at", "x=1"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "e^2x is read as (e^2)*x" in proc.stderr and "write e^(2x)" in proc.stderr
    assert f"f     = {mpmath.nstr(mpmath.e ** 2, 13)}" in proc.stdout


# -- an escaped superscript: x\u00b2 ---------------------------------------------------------------

@pytest.mark.parametrize("source, column, rewrite", [
    ("x\\u00b2", 1, "x^2"), ("\\u03b8\\u00b2", 6, "\\u03b8^2"), ("x\\u207b\\u00b9", 1, "x^-1"),
    ("x\\U000000b3 + 1", 1, "x^3"),
])
def test_an_escaped_superscript_is_an_error_whose_fix_writes_the_power(source, column, rewrite):
    with pytest.raises(ParseError) as caught:
        parse_source(source)
    error = caught.value
    assert error.span[0] == column and "superscript" in str(error.message)
    assert error.hint == f"write {rewrite.split(' ')[0]}"
    (start, end), text = error.fix[0]
    fixed = source[:start] + text + source[end:]
    # the fixed text means what the superscript means: x² is x^2 (SymPy's value at 1.5)
    import sympy as sp
    names = {"x": 1.5, "θ": 1.5}
    plain = source.encode().decode("unicode_escape")  # the characters the escapes stand for
    assert parse_source(fixed) == parse_source(plain)
    want = sp.sympify(fixed.replace("\\u03b8", "t").replace("^", "**")).subs(
        {"x": names["x"], "t": names["θ"]})
    result = CliRunner().invoke(main, ["eval", fixed, "--at", "x=1.5,θ=1.5"])
    assert f"f     = {mpmath.nstr(mpmath.mpf(float(want)), 13)}" in result.stdout, result.output


def test_an_escaped_superscript_from_the_command_line():
    result = CliRunner().invoke(main, ["eval", "x\\u00b2", "--at", "x=3"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "syntax error: \\u00b2 is the superscript '²' written as an escape; an escape stands "
        "only for a letter of a name", "  x\\u00b2", "   ^^^^^^", "hint: write x^2"]
    proc = subprocess.run([_script(), "eval", "x\\u00b2", "--at", "x=3", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "superscript" in json.loads(proc.stdout or proc.stderr)["error"]["message"]
    # an escape of a letter is still a name: \u03b8 is θ
    result = CliRunner().invoke(main, ["eval", "\\u03b8^2", "--at", "θ=3"])
    assert result.exit_code == 0 and "9.000000000000" in result.stdout


# -- the warnings on a reading come from the parse that is lowered ---------------------------------

@pytest.mark.parametrize("args", [["eval", "1/2x + 2^3y", "--at", "x=4,y=0.5"],
                                  ["eval", "1/2x + 2^3y", "--at", "x=4,y=0.5", "--json"],
                                  ["hessian", "1/2x + 2^3y", "--at", "x=4,y=0.5"],
                                  ["graph", "1/2x + 2^3y"],
                                  ["codegen", "1/2x + 2^3y"],
                                  ["plot", "1/2x + 2^3y", "--over", "x=1:2", "--at", "y=0.5",
                                   "--format", "csv", "--samples", "3"]])
def test_a_source_is_parsed_once_and_its_readings_warned_in_order(args, monkeypatch):
    from gradcli.engine import graph as graph_module
    calls = []
    for name in ("parse", "one_pass"):  # the parser's two drivers (one_pass: with callbacks)
        def counted(source, *rest, real=getattr(graph_module, name), **options):
            calls.append(source)
            return real(source, *rest, **options)
        monkeypatch.setattr(graph_module, name, counted)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert calls == ["1/2x + 2^3y"]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert [w.split(" is read as ")[0] for w in warnings] == ["warning: 1/2x", "warning: 2^3y"]
    if args[0] == "eval" and "--json" not in args:  # (1/2)*4 + (2^3)*0.5 = 6, as read
        assert "f     = 6.000000000000\n" in result.stdout


def test_explore_parses_its_source_once(monkeypatch):
    """explore's Walk steps through the graph the CLI compiled (whose parse said the warnings);
    off a terminal it then stops with its input error."""
    pytest.importorskip("textual")
    from gradcli.engine import graph as graph_module
    calls = []
    for name in ("parse", "one_pass"):
        def counted(source, *rest, real=getattr(graph_module, name), **options):
            calls.append(source)
            return real(source, *rest, **options)
        monkeypatch.setattr(graph_module, name, counted)
    result = CliRunner().invoke(main, ["explore", "1/2x + 2^3y", "--at", "x=4,y=0.5"])
    assert result.exit_code == 2 and "run it in a terminal" in result.stderr, result.output
    assert calls == ["1/2x + 2^3y"]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert [w.split(" is read as ")[0] for w in warnings] == ["warning: 1/2x", "warning: 2^3y"]
