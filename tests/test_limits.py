"""The stated limits (docs/limits.md): inputs up to them work, inputs past them get a clear error.

The largest inputs run as the installed console script under a 2 GiB address-space limit and a
generous timeout: a hang or unbounded memory use fails the test (the timeout is a hang guard, not
a performance assertion; the figures are measured by hand, see docs/performance.md).
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings

import gradcli
from gradcli.cli import main
from gradcli.errors import InputError, LimitError
from gradcli.language.parser import parse
from gradcli.engine.primitives import CONSTANTS
from gradcli.language.printer import to_source
from gradcli.limits import (DEFAULT_MAX_NODES, DEFAULT_MAX_SOURCE, max_nodes, max_source,
                            nodes_at_least)
from strategies import cases
from test_properties import case
from test_cli import _console_script

MEMORY = 2 << 30  # bytes of address space a run may use
HANG = 300  # seconds: far beyond the slowest input here (about 8 s on a 2-core machine)


def run_script(*args: str | bytes, input: bytes | None = None, env=None,
               cwd=None) -> subprocess.CompletedProcess:
    """The console script in a subprocess with bounded memory; a hang fails the test."""
    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    out = subprocess.run([_console_script(), *args], input=input, capture_output=True,
                         timeout=HANG, preexec_fn=limit_memory, cwd=cwd,
                         env={**os.environ, **(env or {})})
    assert out.returncode in (0, 1, 2), out.stderr[-2000:]
    assert b"Traceback" not in out.stderr
    return out


def invoke(*args: str, input: str | None = None):
    result = CliRunner().invoke(main, list(args), input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


MAX_SOURCE = 1 << 20  # the source limit the tests below set (GRADCLI_MAX_SOURCE), 1 MiB


@pytest.fixture
def one_mebibyte(monkeypatch):
    monkeypatch.setenv("GRADCLI_MAX_SOURCE", str(MAX_SOURCE))


# -- the defaults and the variables that change them -------------------------------------------

def test_the_default_limits_are_sized_to_the_engine(monkeypatch):
    monkeypatch.delenv("GRADCLI_MAX_SOURCE", raising=False)
    monkeypatch.delenv("GRADCLI_MAX_NODES", raising=False)
    assert max_source() == DEFAULT_MAX_SOURCE >= 64 << 20
    assert max_nodes() == DEFAULT_MAX_NODES >= 20_000_000
    monkeypatch.setenv("GRADCLI_MAX_SOURCE", "1_000")
    monkeypatch.setenv("GRADCLI_MAX_NODES", " 7 ")
    assert (max_source(), max_nodes()) == (1000, 7)


@pytest.mark.parametrize("value", ["0", "-3", "lots", "1.5"])
def test_a_bad_limit_variable_is_an_input_error_naming_it(monkeypatch, value):
    monkeypatch.setenv("GRADCLI_MAX_NODES", value)
    with pytest.raises(InputError, match="GRADCLI_MAX_NODES"):
        max_nodes()
    result = invoke("eval", "x", "--at", "x=1")
    assert result.exit_code == 2 and "GRADCLI_MAX_NODES" in result.stderr


# -- source length ---------------------------------------------------------------------------

def test_a_source_of_exactly_the_limit_is_read(one_mebibyte):
    assert parse("x" + " " * (MAX_SOURCE - 1)).statements == parse("x").statements


def test_a_source_past_the_limit_is_a_limit_error(one_mebibyte):
    with pytest.raises(LimitError) as info:
        gradcli.evaluate("x" + " " * MAX_SOURCE, {"x": 1})
    assert info.value.exit_code == 2
    assert f"longer than {MAX_SOURCE:,} characters" in info.value.message
    assert "GRADCLI_MAX_SOURCE" in info.value.message  # the message names the limit


def test_a_file_past_the_limit_is_refused(tmp_path, one_mebibyte):
    path = tmp_path / "big.grad"
    path.write_text("x+" * MAX_SOURCE + "1")
    result = invoke("eval", "-f", str(path), "--at", "x=1")
    assert result.exit_code == 2
    assert f"limit exceeded: the source is longer than {MAX_SOURCE:,}" in result.stderr
    assert "hint: raise the limit for this run: GRADCLI_MAX_SOURCE=4194304" in result.stderr


def test_stdin_is_read_only_up_to_the_default_limit(tmp_path, monkeypatch):
    # 64 MiB and one character on stdin: refused after reading one character past the limit
    monkeypatch.delenv("GRADCLI_MAX_SOURCE", raising=False)
    out = run_script("eval", "-", "--at", "x=1", input=b"x+" * (32 << 20) + b"1", cwd=tmp_path)
    assert out.returncode == 2
    assert b"longer than 67,108,864 characters" in out.stderr
    out = run_script("eval", "-", "--at", "x=1", input=b"x+" * 1000 + b"1", cwd=tmp_path,
                     env={"GRADCLI_MAX_SOURCE": "100"})
    assert out.returncode == 2 and b"longer than 100 characters" in out.stderr


def test_a_100000_term_generated_sum_of_1_4_megabytes(tmp_path):
    # sin(17*x+y) + sin(18*x+y) + ...: 1.4 MB, one expression (it cannot be split), once refused
    # by a 1 MiB limit. The gradient agrees with an independent evaluation in plain Python.
    ks = range(17, 100_017)
    source = "+".join(f"sin({k}*x+y)" for k in ks)
    assert len(source) > 1_400_000
    path = tmp_path / "sum.grad"
    path.write_text(source)
    x, y = 0.001, 0.5
    out = run_script("eval", "-f", str(path), "--at", f"x={x},y={y}", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    value = math.fsum(math.sin(k * x + y) for k in ks)
    dx = math.fsum(k * math.cos(k * x + y) for k in ks)
    dy = math.fsum(math.cos(k * x + y) for k in ks)
    # a sum of 100,000 rounded terms: relative to the sum of the magnitudes, not to the result
    assert data["value"] == pytest.approx(value, abs=1e-9 * len(ks))
    assert data["gradient"]["x"] == pytest.approx(dx, abs=1e-9 * sum(ks))
    assert data["gradient"]["y"] == pytest.approx(dy, abs=1e-9 * len(ks))


def test_a_one_megabyte_program(tmp_path, one_mebibyte):
    # 1 MB of statements reusing the input: a0 = x*0 + sin(x), a1 = x*1 + sin(x), ...
    lines, size, i = [], 0, 0
    while size < 1_000_000:
        lines.append(f"a{i} = x*{i} + sin(x)")
        size += len(lines[-1]) + 1
        i += 1
    program = "\n".join(lines) + f"\na{i - 1}"
    assert 1_000_000 <= len(program) <= MAX_SOURCE
    path = tmp_path / "big.grad"
    path.write_text(program)
    out = run_script("eval", "-f", str(path), "--at", "x=0.5", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["value"] == pytest.approx((i - 1) * 0.5 + math.sin(0.5), rel=1e-15)
    assert data["gradient"] == {"x": pytest.approx(i - 1 + math.cos(0.5), rel=1e-15)}


def test_a_syntax_error_at_the_end_of_a_megabyte_is_explained(tmp_path):
    # The hint for a missing operator reads the text before the error; it once searched all of
    # it with a regular expression that is quadratic here (hours for 1 MB: the hang guard fails).
    out = run_script("eval", "-", input=b"a" * 1_000_000 + b" + 2|3|", cwd=tmp_path)
    assert out.returncode == 2
    assert b"write 2*|3|" in out.stderr


# -- nesting depth ---------------------------------------------------------------------------

def test_100000_deep_parentheses_through_the_console_script(tmp_path):
    depth = 100_000
    out = run_script("eval", "-", "--at", "x=3", "--json", cwd=tmp_path,
                     input=("(" * depth + "x*x" + ")" * depth).encode())
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["gradient"] == {"x": 6.0}


@pytest.mark.parametrize("source, words", [
    ("(" * 100_000 + "x" + ")" * 99_999, ["expected ')'", "the '(' at column 1 is never closed"]),
    ("(" * 100_000 + "x" + ")" * 100_001, ["unmatched ')'"]),
    ("(" * 100_000, ["ends too early"]),
    ("-" * 100_000, ["ends too early"]),
], ids=["unclosed", "unmatched", "only-opening", "only-minus"])
def test_100000_deep_mistakes_get_a_message(source, words):
    result = invoke("eval", "-", "--at", "x=1", input=source)
    assert result.exit_code == 2
    for word in words:
        assert word in result.stderr


def test_nesting_at_the_source_limit(one_mebibyte):
    depth = (MAX_SOURCE - 1) // 2  # the deepest parenthesised expression the limit allows
    result = invoke("eval", "-", "--at", "x=2", "--json", input="(" * depth + "x" + ")" * depth)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["gradient"] == {"x": 1.0}


# -- graph nodes -----------------------------------------------------------------------------

def test_too_many_nodes_is_a_limit_error(monkeypatch):
    monkeypatch.setenv("GRADCLI_MAX_NODES", "10")
    result = invoke("eval", "+".join(["x"] * 20), "--at", "x=1")
    assert result.exit_code == 2
    assert ("limit exceeded: the expression's graph has more than 10 nodes, the most gradcli "
            "builds (GRADCLI_MAX_NODES)") in result.stderr
    assert "hint: raise the limit for this run: GRADCLI_MAX_NODES=40" in result.stderr
    out = run_script("eval", "+".join(["x"] * 20), "--at", "x=1", env={"GRADCLI_MAX_NODES": "20"})
    assert out.returncode == 0 and out.stdout.splitlines()[0].endswith(b"= 20.00000000000")


# -- long names and long numbers ---------------------------------------------------------------

def test_very_long_names():
    name = "a" * 100_000
    result = invoke("eval", f"{name}*2", "--at", f"{name}=3", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["gradient"] == {name: 2.0}
    assert invoke("eval", f"{name}(1)").exit_code == 2  # an unknown function
    assert invoke("eval", f"{name}*2").exit_code == 2  # no value for the input


@pytest.mark.parametrize("number, code, words", [
    ("9" * 400, 2, ["is too large for a 64-bit float"]),
    ("1e309", 2, ["is too large for a 64-bit float"]),
    ("0." + "0" * 400 + "1", 0, []),  # rounds to 0, as float("1e-401") does
    ("1" + "0" * 308 + "*10", 1, ["overflows"]),
    ("1" * 100_000, 2, ["is too large"]),
], ids=["400-digits", "1e309", "tiny", "1e308*10", "100000-digits"])
def test_huge_numbers(number, code, words):
    result = invoke("eval", number)
    assert result.exit_code == code
    for word in words:
        assert word in result.stderr


# -- bytes only a real process can pass -------------------------------------------------------

def test_stray_bytes_in_argv_stdin_and_files(tmp_path):
    path = tmp_path / "latin1.grad"
    path.write_bytes(b"x * 2 # caf\xe9\n")
    for args, stdin in [([b"eval", b"x*\xff", b"--at", b"x=1"], None),
                        ([b"eval", b"x # \xff", b"--at", b"x=1", b"--json"], None),
                        ([b"eval", b"-", b"--at", b"x=1"], b"x*\xff"),
                        ([b"eval", b"-f", str(path).encode(), b"--at", b"x=1"], None)]:
        # PYTHONIOENCODING=utf-8 makes stdout strict: a stray byte echoed there would crash
        out = run_script(*args, input=stdin, env={"PYTHONIOENCODING": "utf-8"}, cwd=tmp_path)
        assert out.returncode == 2, (args, out.stderr)
        assert b"is not UTF-8 text" in out.stderr


# -- never eval or exec user text --------------------------------------------------------------

# A call of the builtin: not preceded by a dot or a name character (so ``r.evaluate(`` and
# ``self.exec(`` do not count).
BUILTIN_CALL = re.compile(r"(?<![\w.])(eval|exec)\s*\(")


def test_the_pattern_finds_builtin_calls_only():
    assert BUILTIN_CALL.search("value = eval(text)") and BUILTIN_CALL.search("exec (code)")
    assert not BUILTIN_CALL.search("evaluate(x); r.eval(x); self.exec(y); evaluate_graph(g)")


def test_the_package_never_calls_eval_or_exec():
    package = Path(gradcli.__file__).parent
    sources = sorted(package.rglob("*.py"))
    assert len(sources) >= 10
    found = [f"{path.name}:{n}: {line.strip()}" for path in sources
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if BUILTIN_CALL.search(line)]
    assert not found, found


# -- a source too large for the node limit, refused before parsing -------------------------------

@settings(max_examples=200, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(cases(max_statements=4, max_depth=5))
@example(case("x+x+x+x"))
@example(case("sin(x)+cos(x)+x*y"))
def test_the_bound_from_the_text_never_exceeds_the_graph(case):
    # the promise that makes refusing early safe: no legal source below the limit is refused
    source = to_source(case.program)
    operations = len(gradcli.compile(source).ops)
    assert nodes_at_least(source, tuple(CONSTANTS)) <= operations, source


@pytest.mark.parametrize("source", [
    "pi*e*pi*e*pi*e*pi*e", "a = 1; a*a*a*a*a*a*a*a*a", "x;x;x;x;x;x;x;x;x;x;x;x",
    "(x)\n(x)\n(x)\n(x)\n(x)\n(x)", "(sin (x) + sin\n(x) + sin\\\n(x))", "1.e5+1.e5+1.e5+x",
    "θ*θ*θ*θ*θ*θ*θ", "x\\u03b8+x\\u03b8+x\\u03b8", "a\\u0061 = 2\naa*aa*aa*aa*aa*aa",
    "# x*x*x*x*x*x*x*x*x*x*x*x\nx", "y = x\ny += x\ny += x\ny += x\ny",
])
def test_sources_of_few_operations_are_not_counted_high(source):
    assert nodes_at_least(source, tuple(CONSTANTS)) <= len(gradcli.compile(source).ops)


def test_a_source_whose_text_implies_too_many_nodes_is_refused_before_parsing(monkeypatch):
    monkeypatch.setenv("GRADCLI_MAX_NODES", "1000")
    source = "+".join(["x*y"] * 2000)
    result = invoke("eval", source, "--at", "x=1,y=2")
    assert result.exit_code == 2
    assert ("the expression's graph has more than 1,000 nodes, the most gradcli builds "
            "(GRADCLI_MAX_NODES): its text alone shows it") in result.stderr
    assert "GRADCLI_MAX_NODES=4000" in result.stderr
    parsed = []
    import gradcli.engine.graph as graph_module
    monkeypatch.setattr(graph_module, "parse", lambda text: parsed.append(text))
    with pytest.raises(LimitError):
        gradcli.compile(source)
    assert parsed == []  # never parsed
    # the same number of nodes in fewer names (one statement per term) is not refused early
    spread = "\n".join(f"t{i} = x*y" for i in range(2000)) + "\nx"
    assert nodes_at_least(spread, tuple(CONSTANTS)) <= 1000


def test_a_64_mebibyte_source_is_refused_quickly_in_bounded_memory(tmp_path):
    # the probe: refused after 300 s and 9.3 GB before; now from its text, unparsed
    # (a run takes about a second of CPU on the shared 2-core machine; the limits below are the
    # memory cap of run_script, 2 GiB, and its hang timeout)
    big = tmp_path / "big.grad"
    big.write_bytes(b"x+" * (32 << 20) + b"x")  # 64 MiB + 1 byte: past GRADCLI_MAX_SOURCE
    out = run_script("eval", "-f", str(big), "--at", "x=1")
    assert out.returncode == 2 and b"longer than 67,108,864 characters" in out.stderr
    big.write_bytes(b"x+" * ((32 << 20) - 1) + b"x")  # 64 MiB - 1 byte: read, then refused
    # the run's own peak: a child forked from this process (a pytest worker that may hold a
    # gigabyte of other tests' arrays and JAX) starts with this process's peak as its own, so
    # a small launcher forks the run and reports its peak (os.wait4)
    done = subprocess.run([sys.executable, "-c", _OWN_PEAK, str(MEMORY), str(HANG),
                           _console_script(), "eval", "-f", str(big), "--at", "x=1"],
                          capture_output=True, timeout=HANG + 60)
    returncode, peak = map(int, done.stdout.split())
    stderr = done.stderr
    assert returncode == 2, stderr
    assert b"its text alone shows it" in stderr and b"GRADCLI_MAX_NODES" in stderr
    assert peak < 1 << 20  # KB: well under a gibibyte (the source itself is 64 MiB)


# argv: the memory cap (bytes), the hang timeout (s), the command; prints its exit code and peak
# (KB). A hang is killed by the alarm, which outlives exec (SIGALRM: not exit code 2).
_OWN_PEAK = """
import os, resource, signal, sys
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
    signal.alarm(int(sys.argv[2]))
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[3], sys.argv[3:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_every_points_format_checks_its_column_count_before_any_row(tmp_path, suffix):
    import pyarrow as pa
    import pyarrow.parquet as pq
    names = [f"c{i}" for i in range(11)] + ["x"]
    path = tmp_path / f"wide{suffix}"
    if suffix == ".csv":
        path.write_text(",".join(names) + "\n" + ",".join("1" * len(names)) + "\n")
    elif suffix == ".jsonl":
        path.write_text(json.dumps({name: 1.0 for name in names}) + "\n")
    else:
        pq.write_table(pa.table({name: [1.0] for name in names}), path)
    env = {"GRADCLI_MAX_COLUMNS": "10"}
    out = run_script("eval", "x", "--points", str(path), env=env)
    assert out.returncode == 2
    assert f"has 12 columns, more than the 10 gradcli reads (GRADCLI_MAX_COLUMNS)".encode() \
        in out.stderr
    result = CliRunner().invoke(main, ["eval", "x", "--points", str(path)],
                                env={"GRADCLI_MAX_COLUMNS": "12"})
    assert result.exit_code == 0, result.output
    import csv
    import io
    row, = csv.DictReader(io.StringIO(result.stdout))
    assert float(row["f"]) == 1.0 and float(row["df/dx"]) == 1.0 and row["error"] == ""
