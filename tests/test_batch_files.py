"""Batch files you can trust (issue 23): outputs are all or nothing, input and output are compared
by device and inode, reading is bounded on any input, bad bytes fail rows, Dask leaves nothing in
the shared temporary directory.

Every case runs the installed console script in a subprocess, as a user would, on small
generated files; the one that needs a big file (Ctrl-C while writing) makes it once.
"""

from __future__ import annotations

import csv
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

posix = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals and links")


def gradcli(script: str, *args: str, cwd: Path, env: dict | None = None, stdin=None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([script, *args], cwd=cwd, env={**os.environ, **(env or {})},
                          input=stdin, capture_output=True, timeout=timeout)


def one_line_error(proc, code: int, *words: str) -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == code, (proc.returncode, err)
    for word in words:
        assert word in err, err
    assert "Traceback" not in err and "Fatal Python error" not in err
    return err


def leftovers(folder: Path) -> list[str]:
    """Staged files a run left behind (.NAME.XXXXXXXX.part)."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


def big_csv(path: Path, rows: int = 400_000) -> Path:
    path.write_text("x,y\n" + "1.5,2.5\n" * rows)
    return path


# -- outputs are all or nothing ------------------------------------------------------------------

@posix
@pytest.mark.parametrize("name", ["out.csv", "out.parquet"])
def test_ctrl_c_while_writing_leaves_no_file_at_the_final_name(gradcli_script, tmp_path, name):
    big_csv(tmp_path / "big.csv", rows=2_000_000)
    proc = subprocess.Popen([gradcli_script, "eval", "log(x)+x*y-sin(y)", "--points", "big.csv",
                             "-o", name], cwd=tmp_path, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not leftovers(tmp_path) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)  # until the staged file exists: rows are being written
    assert proc.poll() is None, "the run ended before it could be interrupted"
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert not (tmp_path / name).exists()
    assert leftovers(tmp_path) == []


@posix
def test_ctrl_c_leaves_an_earlier_output_untouched(gradcli_script, tmp_path):
    big_csv(tmp_path / "big.csv", rows=2_000_000)
    (tmp_path / "out.csv").write_text("mine\n")
    proc = subprocess.Popen([gradcli_script, "eval", "x*y", "--points", "big.csv", "-o",
                             "out.csv"], cwd=tmp_path, stderr=subprocess.PIPE)
    while not leftovers(tmp_path) and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert (tmp_path / "out.csv").read_text() == "mine\n"
    assert leftovers(tmp_path) == []


def test_an_input_error_late_in_the_file_leaves_no_output(gradcli_script, tmp_path):
    """A line past GRADCLI_MAX_LINE after many good rows: exit 2, and no file that looks done."""
    (tmp_path / "p.csv").write_text("x\n" + "1\n" * 100_000 + "9" * 5000 + "\n")
    (tmp_path / "out.csv").write_text("old\n")
    proc = gradcli(gradcli_script, "eval", "x", "--points", "p.csv", "-o", "out.csv",
                   cwd=tmp_path, env={"GRADCLI_MAX_LINE": "4096"})
    one_line_error(proc, 2, "row 100,001", "GRADCLI_MAX_LINE")
    assert (tmp_path / "out.csv").read_text() == "old\n"
    assert leftovers(tmp_path) == []


@posix
@pytest.mark.parametrize("tail", ["9" * 5000 + "\n", "abc\n" + "2\n" * 1000, ""])
def test_closing_the_rows_waits_until_pyarrow_lets_go_of_the_file(tmp_path, monkeypatch, tail):
    """pyarrow's read-ahead thread holds the file object it reads until its last task ends, and
    must take the GIL to let go: were Python exiting by then, the process would abort. So
    Rows.close() returns only once every file object pyarrow was given is freed: after a line
    too long (the error raised in the reading thread, none left inside pyarrow), after a cell
    that is not a number (a second reader), and after a whole file."""
    from gradcli.api import compile
    from gradcli.readers import read_csv
    from gradcli.errors import GradcliError
    monkeypatch.setenv("GRADCLI_MAX_LINE", "4096")
    (tmp_path / "p.csv").write_text("x\n" + "1\n" * 100_000 + tail)
    rows = read_csv(str(tmp_path / "p.csv"), compile("x"))
    try:
        count = sum(batch.num_rows for batch in rows.chunks)
    except GradcliError as exc:
        assert "row 100,001" in str(exc) and "GRADCLI_MAX_LINE" in str(exc)
        assert tail.startswith("9")
    else:
        assert count == 100_000 + tail.count("\n")
    finally:
        rows.close()
    handed = rows.chunks.handed
    assert handed and all(ref() is None for ref in handed)


def test_two_runs_writing_one_path_never_interleave(gradcli_script, tmp_path):
    rows = 100_000
    (tmp_path / "p.csv").write_text("x\n" + "".join(f"{i}\n" for i in range(rows)))
    procs = [subprocess.Popen([gradcli_script, "eval", expr, "--points", "p.csv", "-o",
                               "same.csv"], cwd=tmp_path, stderr=subprocess.PIPE)
             for expr in ("x", "2*x")]
    for proc in procs:
        proc.communicate(timeout=120)
        assert proc.returncode == 0
    with open(tmp_path / "same.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == rows
    factors = {float(row["f"]) / float(row["x"]) for row in table[1:]}
    assert factors in ({1.0}, {2.0})  # one run's rows, whole
    assert leftovers(tmp_path) == []


def test_a_new_output_gets_the_usual_permissions(gradcli_script, tmp_path):
    (tmp_path / "p.csv").write_text("x\n1\n")
    (tmp_path / "old.csv").write_text("old\n")
    os.chmod(tmp_path / "old.csv", 0o640)
    for name in ("new.csv", "old.csv"):
        assert gradcli(gradcli_script, "eval", "x", "--points", "p.csv", "-o", name,
                       cwd=tmp_path).returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "new.csv").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "old.csv").stat().st_mode & 0o777 == 0o640  # kept


# -- the same file, however it is named ----------------------------------------------------------

@posix
@pytest.mark.parametrize("how", ["hard link", "symlink"])
def test_an_output_that_is_the_input_under_another_name_is_refused(gradcli_script, tmp_path, how):
    (tmp_path / "p.csv").write_text("x,y\n1,2\n")
    (os.link if how == "hard link" else os.symlink)(tmp_path / "p.csv", tmp_path / "h.csv")
    proc = gradcli(gradcli_script, "eval", "x+y", "--points", "p.csv", "-o", "h.csv",
                   cwd=tmp_path)
    one_line_error(proc, 2, "names the points p.csv themselves")
    assert (tmp_path / "p.csv").read_text() == "x,y\n1,2\n"


def test_a_directory_as_output_is_named_as_such(gradcli_script, tmp_path):
    (tmp_path / "p.csv").write_text("x,y\n1,2\n")
    proc = gradcli(gradcli_script, "eval", "x+y", "--points", "p.csv", "-o", "./", cwd=tmp_path)
    err = one_line_error(proc, 2, "cannot write ./: it is a directory", "./out.csv")
    assert "points" not in err


# -- bounded reading ----------------------------------------------------------------------------

def _limited(script: str, *args: str, cwd: Path, stdin=None):
    """gradcli under a 1 GB address-space limit and a 60 s timeout."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    return subprocess.run([script, *args], cwd=cwd, preexec_fn=limit, stdin=stdin,
                          capture_output=True, timeout=60)


@posix
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_as_points_is_a_limit_error_in_bounded_memory(gradcli_script, tmp_path):
    started = time.monotonic()
    proc = _limited(gradcli_script, "eval", "x", "--points", "/dev/zero", cwd=tmp_path)
    err = one_line_error(proc, 2, "/dev/zero: its header line is longer than 1,048,576 bytes",
                         "GRADCLI_MAX_LINE")
    assert "GRADCLI_MAX_NODES" not in err
    assert time.monotonic() - started < 30


@posix
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_row_that_never_ends_on_standard_input_is_a_limit_error(gradcli_script, tmp_path):
    feed = subprocess.Popen(["sh", "-c", "printf 'x\\n1\\n'; cat /dev/zero"],
                            stdout=subprocess.PIPE)
    try:
        proc = _limited(gradcli_script, "eval", "x", "--points", "-", cwd=tmp_path,
                        stdin=feed.stdout)
    finally:
        feed.kill()
        feed.wait()
    one_line_error(proc, 2, "standard input: row 2 is longer than 1,048,576 bytes")


def test_a_field_up_to_the_limit_is_read_and_one_past_it_named(gradcli_script, tmp_path):
    """pyarrow's block is sized to the limit: a 3 MB cell is read when the limit allows it."""
    text = "y" * 3_000_000
    (tmp_path / "p.csv").write_text(f"id,x\na,1\n{text},2\n")
    proc = gradcli(gradcli_script, "eval", "x", "--points", "p.csv", "-o", "out.csv",
                   cwd=tmp_path, env={"GRADCLI_MAX_LINE": "4000000"})
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "out.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in lines] == ["id", "a", text]
    proc = gradcli(gradcli_script, "eval", "x", "--points", "p.csv", cwd=tmp_path)
    one_line_error(proc, 2, "p.csv: row 2 is longer than 1,048,576 bytes",
                   "GRADCLI_MAX_LINE=4194304")


def test_a_header_of_too_many_columns_is_refused_from_the_header(gradcli_script, tmp_path):
    (tmp_path / "p.csv").write_text(",".join(f"c{i}" for i in range(20_001)) + "\n")
    proc = gradcli(gradcli_script, "eval", "x", "--points", "p.csv", cwd=tmp_path)
    one_line_error(proc, 2, "has 20,001 columns, more than the 10,000", "GRADCLI_MAX_COLUMNS")


# -- bad bytes are row errors ------------------------------------------------------------------

@pytest.mark.parametrize("data, failed", [
    (b"x,y\n2,3\n\xff\xfe,1\n", "row 2: the cell of column 'x' is not UTF-8 text"),
    (b"id,x\n\xffa,2\nb,3\n", "row 1: the cell of column 'id' is not UTF-8 text"),
])
@pytest.mark.parametrize("json_", [False, True])
def test_invalid_utf8_in_a_csv_fails_its_row(gradcli_script, tmp_path, data, failed, json_):
    import json
    (tmp_path / "b.csv").write_bytes(data)
    proc = gradcli(gradcli_script, "eval", "x", "--points", "b.csv", *(["--json"] * json_),
                   cwd=tmp_path)
    one_line_error(proc, 1, "1 of 2 points failed", failed)
    out = proc.stdout.decode("utf-8")
    if json_:  # JSON, always
        rows = [json.loads(line) for line in out.splitlines()]
        assert [row["error"] is None for row in rows].count(True) == 1
    else:
        assert len(list(csv.reader(io.StringIO(out)))) == 3


def test_invalid_utf8_late_in_a_big_file_fails_that_row_only(gradcli_script, tmp_path):
    rows = 200_000
    (tmp_path / "b.csv").write_bytes(b"id,x\n" + b"a,1\n" * rows + b"\xff,2\n" + b"b,3\n")
    proc = gradcli(gradcli_script, "eval", "x", "--points", "b.csv", "-o", "out.csv",
                   cwd=tmp_path)
    one_line_error(proc, 1, f"1 of {rows + 2} points failed", f"row {rows + 1}:")
    assert sum(1 for _ in open(tmp_path / "out.csv", "rb")) == rows + 3


def test_invalid_utf8_in_json_lines_fails_its_row(gradcli_script, tmp_path):
    (tmp_path / "b.jsonl").write_bytes(b'{"x": 2, "id": "a\xff"}\n{"x": 3, "id": "b"}\n')
    proc = gradcli(gradcli_script, "eval", "x", "--points", "b.jsonl", "--json", cwd=tmp_path)
    one_line_error(proc, 1, "row 1: the cell of column 'id' is not UTF-8 text")
    assert proc.stdout.decode("utf-8").count("\n") == 2


# -- Dask leaves nothing in the shared temporary directory ---------------------------------------

def test_dask_writes_nothing_to_the_temporary_directory(gradcli_script, tmp_path):
    pytest.importorskip("distributed")
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    (tmp_path / "p.csv").write_text("x,y\n1,2\n3,4\n")
    proc = gradcli(gradcli_script, "eval", "x*y", "--points", "p.csv", "--engine", "dask",
                   "-o", "out.parquet", cwd=tmp_path, env={"TMPDIR": str(shared)}, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert list(shared.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet", "p.csv", "shared-tmp"]


def test_dask_fails_the_rows_with_bad_bytes_too(gradcli_script, tmp_path):
    pytest.importorskip("distributed")
    import pyarrow.parquet as pq
    (tmp_path / "b.csv").write_bytes(b"id,x,y\n\xff,2,3\nb,4,1\n")
    proc = gradcli(gradcli_script, "eval", "x+y", "--points", "b.csv", "--engine", "dask",
                   "-o", "out.parquet", cwd=tmp_path, timeout=180)
    one_line_error(proc, 1, "row 1: the cell of column 'id' is not UTF-8 text")
    table = pq.read_table(tmp_path / "out.parquet").to_pydict()
    assert table["id"] == ["\ufffd", "b"] and table["f"][1] == 5.0


# -- the file's format: its delimiter sniffed, a missing header said as such ----------------------

@pytest.mark.parametrize("text", ["x;y\n1.5;2\n3;4\n", "x\ty\n1.5\t2\n3\t4\n", "x,y\n1.5,2\n3,4\n"])
@pytest.mark.parametrize("where", ["-", "p.csv"])
def test_a_semicolon_or_a_tab_separates_cells_as_a_comma_does(gradcli_script, tmp_path, text,
                                                               where):
    (tmp_path / "p.csv").write_text(text)
    proc = gradcli(gradcli_script, "eval", "x*y", "--points", where, cwd=tmp_path,
                   stdin=text.encode() if where == "-" else None)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().splitlines() == ["x,y,f,df/dx,df/dy,error", "1.5,2,3,2,1.5,",
                                                 "3,4,12,4,3,"]


def test_points_without_a_header_say_so(gradcli_script, tmp_path):
    proc = gradcli(gradcli_script, "eval", "x*y", "--points", "-", cwd=tmp_path,
                   stdin=b"1,2\n3,4\n")
    err = one_line_error(proc, 2, "the first line of the points is a row of numbers (1, 2), "
                                  "not a header", "x,y")
    assert "--at" not in err
