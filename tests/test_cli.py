"""The command line, through click's CliRunner and as the installed console script."""

import json
import math
import os
import shutil
import subprocess
import sys

import pytest

from gradcli.cli import main

SEED = "log(x)+x*y-sin(y)"

import mpmath  # noqa: E402

# ∂/∂y of the seed at (2, 3), 2 - cos(3), exactly and correctly rounded (the certified value)
with mpmath.workdps(50):
    DY = float(2 - mpmath.cos(3))


def test_seed_example_plain_output(run):
    result = run("eval", SEED, "--at", "x=2,y=3")
    assert result.exit_code == 0
    assert result.output == (
        "f     = 6.552027172500\n"
        "∂f/∂x = 3.500000000000\n"
        "∂f/∂y = 2.989992496600\n"
    )


def test_digits_changes_the_display(run):
    result = run("eval", SEED, "--at", "x=2", "--at", "y=3", "--digits", "3")  # significant
    assert result.output.splitlines() == ["f     = 6.55", "∂f/∂x = 3.50", "∂f/∂y = 2.99"]


def test_json_schema_and_full_precision(run):
    result = run("eval", SEED, "--at", "x=2,y=3", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["source"] == SEED
    assert data["inputs"] == {"x": 2.0, "y": 3.0}
    import mpmath  # the exact values, correctly rounded to doubles
    with mpmath.workdps(50):
        assert data["value"] == float(mpmath.log(2) + 6 - mpmath.sin(3))
        assert data["gradient"] == {"x": 3.5, "y": float(2 - mpmath.cos(3))}
    assert data["seed"] == 1.0


def test_stdin_and_file(run, tmp_path):
    assert run("eval", "-", "--at", "x=3", input="x*x\n").output == "f     = 9.000000000000\n∂f/∂x = 6.000000000000\n"
    program = tmp_path / "model.grad"
    program.write_text("c = a + b\nd = a * b + b**3\nd\n")
    data = json.loads(run("eval", "-f", str(program), "--at", "a=-4,b=2", "--json").output)
    assert data["value"] == -8 + 8
    assert data["gradient"] == {"a": 2, "b": -4 + 12}


def test_at_values_may_be_constant_expressions(run):
    data = json.loads(run("eval", "sin(x)", "--at", "x=pi/4", "--json").output)
    assert data["inputs"]["x"] == math.pi / 4
    data = json.loads(run("eval", "x", "--at", "x=atan2(1, 1),", "--json").output)
    assert data["inputs"]["x"] == math.pi / 4


def test_wrt_and_seed(run):
    data = json.loads(run("eval", SEED, "--at", "x=2,y=3", "--wrt", "y", "--seed", "2", "--json").output)
    assert data["gradient"] == {"y": 2 * DY}  # the exact value, correctly rounded


def test_unknown_name_in_at_is_a_warning(run):
    result = run("eval", "x+1", "--at", "x=1,z=2")
    assert result.exit_code == 0
    assert "warning: z is not read" in result.stderr
    assert "∂f/∂z" not in result.stdout


# (arguments, exit code, words the message must contain)
ERRORS = [
    (["eval", "log(x", "--at", "x=1"], 2, ["expected ')'", "log(x", "     ^"]),
    (["eval", "2|x|", "--at", "x=1"], 2, ["write 2*|x|"]),
    (["eval", "sinn(x)", "--at", "x=1"], 2, ["unknown function sinn", "did you mean sin"]),
    (["eval", "x*y", "--at", "x=1"], 2, ["no value for input y", "--at y=1"]),
    (["eval", "x", "--at", "x=abc"], 2, ["abc", "not a number"]),
    (["eval", "x", "--at", "x"], 2, ["no value for x"]),
    (["eval", "x", "--at", "x=1e999"], 2, ["not a finite number"]),
    (["eval", "x", "--at", "x=1", "--at", "x=2"], 2, ["x twice"]),
    (["eval", "log(x)", "--at", "x=-1"], 2, ["log(-1)", "domain of log"]),
    (["eval", "sqrt(x)", "--at", "x=-4"], 2, ["sqrt(-4)"]),
    (["eval", "1/x", "--at", "x=0"], 2, ["division by zero"]),
    (["eval", "asin(x)", "--at", "x=2"], 2, ["asin(2)"]),
    (["eval", "exp(x)", "--at", "x=1000", "--float64"], 1, ["v1", "exp(1000)", "overflows"]),
    (["eval", ""], 2, ["empty"]),
    (["eval"], 2, ["no expression given"]),
    (["eval", "atan2(x)", "--at", "x=1"], 2, ["atan2 takes 2 arguments"]),
    (["eval", "x", "--at", "x=1", "--wrt", "y"], 2, ["--wrt names y"]),
]


@pytest.mark.parametrize("args, code, words", ERRORS)
def test_bad_input_gets_a_message_and_exit_code(run, reported, args, code, words):
    reported(run(*args), code, words)


def test_help_has_examples_and_every_command_has_help(run):
    assert "Examples" in run("--help").output
    for command in main.commands:
        result = run(command, "--help")
        assert result.exit_code == 0
        assert "Usage" in result.output


def test_version(run):
    from gradcli import __version__
    result = run("--version")
    assert result.exit_code == 0 and __version__ in result.output


def test_functions_lists_every_primitive_with_its_rule(run):
    result = run("functions", "--json")
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert rows["sin"]["derivatives"] == {"d/da": "cos(a)"}
    assert "relu'(0) = 0" in rows["relu"]["note"]
    assert "tie" in rows["min"]["note"]
    table = run("functions").output
    for name in ("exp", "erf", "atan2", "hypot", "softplus", "abs"):
        assert name in table


# -- the real console script, installed, run from outside the source tree -----------------------

def _console_script():
    found = shutil.which("gradcli", path=os.path.dirname(sys.executable)) or shutil.which("gradcli")
    if not found:
        pytest.fail("the gradcli console script is not installed (pip install -e .)")
    return found


def test_installed_console_script(tmp_path):
    out = subprocess.run([_console_script(), "eval", SEED, "--at", "x=2,y=3", "--json"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["gradient"]["x"] == 3.5


def test_installed_console_script_reports_errors_without_traceback(tmp_path):
    out = subprocess.run([_console_script(), "eval", "log(x)", "--at", "x=-1"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 2
    assert "log(-1)" in out.stderr and "Traceback" not in out.stderr


def test_a_large_program_prints_everything(tmp_path):
    """The console script's output of a large program through pipes (block-buffered): standard
    output and the note on standard error whole, and the exit code 0. 60,000 terms x*y:
    120,000 nodes; at (0.5, 3) f = 60000·1.5, ∂f/∂x = 60000·3, ∂f/∂y = 60000·0.5."""
    program = tmp_path / "big.gc"
    program.write_text(" + ".join(["x*y"] * 60_000))
    out = subprocess.run([_console_script(), "eval", "-f", str(program), "--at", "x=0.5,y=3",
                          "--float64"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["f     = 90000.00000000", "∂f/∂x = 180000.0000000",
                                      "∂f/∂y = 30000.00000000"]
    assert out.stderr.startswith("note: computed in plain float64")
    out = subprocess.run([_console_script(), "eval", "-f", str(program), "--at", "x=0.5,y=3",
                          "--json"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["decimal"]["gradient"] == {"x": "180000.0000000", "y": "30000.00000000"}


def test_python_dash_m(tmp_path):
    out = subprocess.run([sys.executable, "-m", "gradcli", "eval", "x*x", "--at", "x=3", "--json"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["gradient"] == {"x": 6.0}


def test_stdin_through_the_console_script(tmp_path):
    out = subprocess.run([_console_script(), "eval", "-", "--at", "x=3"], input="x*x",
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.stdout.splitlines()[1] == "∂f/∂x = 6.000000000000"


def test_expression_starting_with_minus_is_not_an_option(run):
    # -(x^2) at 3: value -9, derivative -2x = -6
    result = run("eval", "-x^2", "--at", "x=3", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["gradient"] == {"x": -6.0}
    assert run("eval", "x", "--at", "x=1", "--jsn").exit_code == 2  # a typo is still an error


# -- eval's table of which options go with which mode: each entry's message, from the table -------

from gradcli.cli import EVAL_CONFLICTS, EVAL_OPTIONS  # noqa: E402

MODE_ARGS = {  # a call of each mode of eval
    "point": ["eval", "x*y", "--at", "x=1,y=2"],
    "outputs": ["eval", "x*y; x+y", "--at", "x=1,y=2"],
    "batch": ["eval", "x*y", "--grid", "x=0:1:2", "--at", "y=1"],
}
OPTION_ARGS = {
    "--seed": ["--seed", "2"], "--mode": ["--mode", "reverse"], "--direction": ["--direction", "x=1"],
    "--trace": ["--trace"], "--export": ["--export", "t.txt"], "--standalone": ["--standalone"],
    "--check": ["--check"], "--expect": ["--expect", "x=y"], "--with-digits": ["--with-digits"],
    "--max-rows": ["--max-rows", "3"], "-o": ["-o", "out.csv"],
    "--scheduler": ["--scheduler", "tcp://127.0.0.1:1"], "--engine": ["--engine", "dask"],
    "--export FILE.tex": ["--export", "t.tex"], "--elementwise": ["--elementwise"],
}


@pytest.mark.parametrize("flag, modes, message, hint", EVAL_OPTIONS,
                         ids=[option[0] for option in EVAL_OPTIONS])
def test_an_option_outside_its_modes_is_refused_with_the_tables_message(
        run, reported, tmp_path, monkeypatch, flag, modes, message, hint):
    monkeypatch.chdir(tmp_path)
    # a reading of an option (--export FILE.tex) is refused as itself where the option goes
    option = next(o for o in EVAL_OPTIONS if o[0] == flag.split()[0])
    tried = sorted((set(MODE_ARGS) if option[0] == flag else set(option[1])) - set(modes))
    assert tried
    for mode in tried:
        result = run(*MODE_ARGS[mode], *OPTION_ARGS[flag])
        expected = message.format(flag=flag, many="--grid")
        reported(result, 2, [expected] + ([hint.format(many="--grid")] if hint else []))
        assert not (tmp_path / "t.txt").exists() and not (tmp_path / "out.csv").exists()


def test_every_option_of_the_table_is_an_option_of_eval():
    names = {opt for p in main.commands["eval"].params for opt in p.opts}
    for flag, *_ in EVAL_OPTIONS:
        assert flag.split()[0] in names, flag
    for _, together, *_ in EVAL_CONFLICTS:
        for fact in together:
            assert fact.removeprefix("no ").split()[0] in names, fact
