"""gradcli for scripts: one JSON document per run, io errors as io errors, and the human text on
stderr naming the same kind as the JSON object (issue 25)."""

from __future__ import annotations

import json
import subprocess

import pytest

from gradcli import errors
from gradcli.views.errors import KINDS

COMMANDS_WITH_FILE = [["eval", "--at", "x=1"], ["hessian", "--at", "x=1"], ["diff"],
                      ["graph"], ["plot", "--over", "x=0:1"], ["explore", "--at", "x=1"]]


@pytest.mark.parametrize("cls", [c for c in vars(errors).values()
                                 if isinstance(c, type) and issubclass(c, errors.GradcliError)
                                 and c is not errors.GradcliError])
def test_the_title_people_read_names_the_kind_programs_read(cls):
    # "io error: ..." on stderr and "kind": "io" in the JSON: the first word is the kind
    assert cls.kind in KINDS
    assert cls.title.split()[0] == cls.kind


@pytest.mark.parametrize("command", COMMANDS_WITH_FILE, ids=lambda c: c[0])
def test_a_missing_file_is_an_io_error_in_gradclis_format(run, command, tmp_path):
    missing = str(tmp_path / "missing.grad")
    result = run(command[0], "-f", missing, *command[1:])
    assert result.exit_code == 2
    first = result.stderr.splitlines()[0]
    assert first == f"io error: cannot read {missing}: No such file or directory"
    assert "Invalid value" not in result.stderr and "Usage:" not in result.stderr


@pytest.mark.parametrize("command", [c for c in COMMANDS_WITH_FILE if c[0] in
                                     ("eval", "hessian", "diff")], ids=lambda c: c[0])
def test_a_missing_file_with_json_is_one_io_error_object(gradcli_script, command, tmp_path):
    missing = str(tmp_path / "missing.grad")
    proc = subprocess.run([gradcli_script, command[0], "-f", missing, *command[1:], "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    data = json.loads(proc.stdout)  # one document: json.loads refuses a second one
    assert data["error"]["kind"] == "io"
    assert data["error"]["message"] == f"cannot read {missing}: No such file or directory"
    assert proc.stderr.startswith("io error: ")


def test_a_missing_repl_script_is_an_io_error_in_gradclis_format(run, tmp_path):
    missing = str(tmp_path / "lesson.txt")
    result = run("repl", missing)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        f"io error: cannot read {missing}: No such file or directory")
    assert "Invalid value" not in result.stderr and "Usage:" not in result.stderr


def test_a_directory_given_to_f_is_an_io_error(run, tmp_path):
    result = run("diff", "-f", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"io error: cannot read {tmp_path}: Is a directory")


def test_f_dash_reads_standard_input(run):
    result = run("diff", "-f", "-", input="x*x\n")
    assert result.exit_code == 0 and result.stdout == "2*x\n"


@pytest.mark.parametrize("command", [
    ["eval", "x", "--at", "x=1", "--json", "--export", "{missing}/out.json"],
    ["eval", "x; 2*x", "--at", "x=1", "--json", "--export", "{missing}/out.json"],
    ["eval", "x", "--at", "x=1", "--json", "--export", "{missing}/out.tex"],
    ["hessian", "x^2", "--at", "x=1", "--json", "--export", "{missing}/out.tex"],
], ids=["eval", "eval-outputs", "eval-tex", "hessian"])
def test_an_export_that_fails_prints_one_json_document(gradcli_script, command, tmp_path):
    missing = str(tmp_path / "missing")
    args = [a.format(missing=missing) for a in command]
    proc = subprocess.run([gradcli_script, *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert len(proc.stdout.splitlines()) == 1
    data = json.loads(proc.stdout)
    assert data["error"]["kind"] == "io"
    assert proc.stderr.splitlines()[0] == (f"io error: cannot write {args[-1]}: "
                                           "No such file or directory")


FAILURES = [
    ["eval", "2|x|", "--at", "x=1"],  # syntax
    ["eval", "sinn(x)", "--at", "x=1"],  # name
    ["eval", "x*y", "--at", "x=1"],  # input
    ["eval", "log(x)", "--at", "x=-1"],  # domain
    ["eval", "exp(x)", "--at", "x=1000", "--float64"],  # numerical (float64 overflows)
    ["eval", "sqrt(x)", "--at", "x=0"],  # numerical, with the value
    ["eval", "relu(x)", "--at", "x=0", "--check"],  # a failed check: the result, exit 1
    ["eval", "x", "--at", "x=1", "--digits", "0"],  # click's own usage error
    ["hessian", "x^1.5", "--at", "x=0"],  # a second derivative that does not exist
    ["diff", "x +"],  # syntax
    ["eval", "-f", "missing.grad", "--at", "x=1"],  # io
]


@pytest.mark.parametrize("args", FAILURES, ids=lambda a: " ".join(a[:2]))
def test_every_failure_prints_one_json_document_whose_kind_stderr_names(gradcli_script, args,
                                                                        tmp_path):
    proc = subprocess.run([gradcli_script, *args, "--json"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode in (1, 2), proc.stderr
    assert len(proc.stdout.splitlines()) == 1, proc.stdout
    data = json.loads(proc.stdout)
    if "error" in data:
        kind = data["error"]["kind"]
        first = next(line for line in proc.stderr.splitlines() if not line.startswith(
            ("Usage:", "Try ", "warning:")) and line.strip())
        # click's usage error is printed by click ("Error: ..."); every other is gradcli's
        assert first.startswith(f"{kind} error: ") or first.startswith(f"{kind} exceeded: ") \
            or first.startswith("Error: ") and kind == "input", (kind, proc.stderr)
    else:
        assert data["check"]["ok"] is False  # a failed check is a result, not an error
