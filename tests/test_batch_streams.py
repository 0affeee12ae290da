"""gradcli eval --points/--grid where the streams go wrong: a full disk, a closed standard
output or input, an unwritable -o, a closed pipe, a mistake found after a big file was opened.

Each case runs the installed console script in a subprocess (the interpreter's own exit is part
of what is tested: a pyarrow reader left running as Python exits aborts it) or click's
CliRunner; the exit codes are those of docs/batch.md and docs/output.md: 2 with one line of
text for an unwritable output or an unreadable input, 141 for a pipe closed by its reader.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import check_reported

from gradcli import readers

EXPR = "log(x)+x*y-sin(y)"
POINTS = "id,x,y\na,2,3\nb,0.5,-1\n"

needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
posix_shell = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX shell")


def shell(script: str, gradcli: str, cwd: Path, stdin: str | None = None):
    """``script`` run by sh with $G the console script: redirections as a user types them."""
    return subprocess.run(["sh", "-c", script], env={**os.environ, "G": gradcli}, cwd=cwd,
                          input=stdin, capture_output=True, text=True, timeout=120)


def big_points(path: Path, header: str = "x,y", rows: int = 400_000) -> Path:
    """A CSV file several times pyarrow's block (readers.CSV_BLOCK_BYTES), so that its reader
    has a read-ahead thread running when gradcli stops."""
    width = len(header.split(","))
    line = ",".join(["1.5"] * width) + "\n"
    path.write_text(header + "\n" + line * rows)
    assert path.stat().st_size > 3 * readers.CSV_BLOCK_BYTES
    return path


def assert_one_line_error(proc, code: int, words: list[str]) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    for word in words:
        assert word in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Fatal Python error" not in proc.stderr


# -- standard output full or closed ---------------------------------------------------------------

@needs_dev_full
@posix_shell
@pytest.mark.parametrize("args", [
    ["--points", "p.csv"],
    ["--points", "p.csv", "--json"],
    ["--grid", "x=1:2:3,y=0:1:2"],
    ["--points", "big.csv"],  # the error comes after the reader has started
])
def test_a_full_disk_on_standard_output_is_an_io_error(gradcli_script, tmp_path, args):
    (tmp_path / "p.csv").write_text(POINTS)
    big_points(tmp_path / "big.csv")
    proc = shell(f'"$G" eval "{EXPR}" {" ".join(args)} > /dev/full', gradcli_script, tmp_path)
    assert_one_line_error(proc, 2, ["io error: cannot write to standard output: "
                                    "No space left on device"])


@posix_shell
def test_a_closed_standard_output_is_an_io_error(gradcli_script, tmp_path):
    (tmp_path / "p.csv").write_text(POINTS)
    proc = shell(f'"$G" eval "{EXPR}" --points p.csv >&-', gradcli_script, tmp_path)
    assert_one_line_error(proc, 2, ["io error: standard output is closed"])


# -- -o to a full disk or where no file can be made -----------------------------------------------

@needs_dev_full
@posix_shell
@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_output_to_a_full_disk_names_the_file(gradcli_script, tmp_path, suffix):
    (tmp_path / f"out{suffix}").symlink_to("/dev/full")
    proc = shell(f'"$G" eval "{EXPR}" --grid x=1:2:3,y=0:1:2 -o out{suffix}', gradcli_script,
                 tmp_path)
    assert_one_line_error(proc, 2, [f"cannot write out{suffix}: No space left on device"])


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_output_into_a_missing_directory_names_the_file(run, tmp_path, suffix):
    out = tmp_path / "no such directory" / f"out{suffix}"
    result = run("eval", EXPR, "--grid", "x=1:2:3,y=0:1:2", "-o", str(out))
    check_reported(result, 2, [f"cannot write {out}: No such file or directory"])
    assert not out.parent.exists()


# -- standard input closed ------------------------------------------------------------------------

@posix_shell
def test_points_from_a_closed_standard_input_is_an_input_error(gradcli_script, tmp_path):
    proc = shell(f'"$G" eval "{EXPR}" --points - <&-', gradcli_script, tmp_path)
    assert_one_line_error(proc, 2, ["input error: standard input is closed, so --points - has "
                                    "nothing to read"])


# -- a mistake found once a big file is open: no abort, no hang -----------------------------------

@pytest.mark.parametrize("how", ["file", "stdin"])
def test_a_mistake_in_a_big_file_is_reported_not_an_abort(gradcli_script, tmp_path, how):
    # f: a column the output adds; 24 MB, so that pyarrow is still reading ahead at the error
    path = big_points(tmp_path / "big.csv", header="x,y,f", rows=2_000_000)
    source = "-" if how == "stdin" else str(path)
    with open(path) as f:
        proc = subprocess.run([gradcli_script, "eval", EXPR, "--points", source],
                              stdin=f if how == "stdin" else subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)
    assert_one_line_error(proc, 2, ["the points have a column named 'f'"])


@pytest.mark.skipif(sys.platform == "win32", reason="needs bash")
def test_a_big_file_into_a_closed_pipe_ends_quietly_with_141(gradcli_script, tmp_path):
    big_points(tmp_path / "big.csv")
    proc = subprocess.run(
        ["bash", "-c", f'"$G" eval "{EXPR}" --points big.csv 2>err.txt | head -1 >/dev/null; '
                       'echo "${PIPESTATUS[0]}"; cat err.txt'],
        env={**os.environ, "G": gradcli_script}, cwd=tmp_path, capture_output=True, text=True,
        timeout=120)
    assert proc.stdout == "141\n", proc.stdout  # and nothing on gradcli's standard error


# -- Dask: the extra, reruns, unreachable schedulers, the same mistakes as the numpy engine -------

def test_dask_without_any_extra_names_the_dask_extra(run, tmp_path, monkeypatch):
    """A fresh install has neither NumPy nor pyarrow: the hint is still the dask extra (which
    brings them), not gradcli[batch], after which --engine dask would fail again."""
    (tmp_path / "p.csv").write_text(POINTS)
    for name in ("pyarrow", "dask", "dask.dataframe", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)
    result = run("eval", EXPR, "--points", str(tmp_path / "p.csv"), "--engine", "dask",
                 "-o", str(tmp_path / "out.parquet"))
    check_reported(result, 2, ['pip install "gradcli[dask]"'])


def test_dask_run_twice_replaces_its_parquet_directory(run, cluster, tmp_path):
    import pyarrow.parquet as pq
    (tmp_path / "p.csv").write_text(POINTS)
    out = tmp_path / "out.parquet"
    args = ("eval", EXPR, "--points", str(tmp_path / "p.csv"), "--engine", "dask",
            "--scheduler", cluster.scheduler_address, "-o", str(out))
    assert run(*args).exit_code == 0
    (out / "part.7.parquet").write_bytes((out / "part.0.parquet").read_bytes())  # a stale part
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert pq.read_table(out).column("id").to_pylist() == ["a", "b"]


def test_dask_will_not_write_parts_over_a_file(run, tmp_path):
    (tmp_path / "p.csv").write_text(POINTS)
    (tmp_path / "out.parquet").write_text("mine")
    result = run("eval", EXPR, "--points", str(tmp_path / "p.csv"), "--engine", "dask",
                 "-o", str(tmp_path / "out.parquet"))
    check_reported(result, 2, ["out.parquet: it is a file"])
    assert (tmp_path / "out.parquet").read_text() == "mine"


def test_an_unreachable_scheduler_leaves_no_output_behind(run, tmp_path):
    (tmp_path / "p.csv").write_text(POINTS)
    result = run("eval", EXPR, "--points", str(tmp_path / "p.csv"), "--engine", "dask",
                 "--scheduler", "not-an-address", "-o", str(tmp_path / "out.parquet"))
    check_reported(result, 2, ["cannot reach the Dask scheduler at not-an-address"])
    assert not (tmp_path / "out.parquet").exists()  # a second try is not refused


@pytest.mark.parametrize("text, words", [
    ("", ["has no header line"]),
    ("x,x,y\n1,2,3\n", ["two columns named 'x'"]),  # pandas would call the second x.1
])
def test_dask_reports_the_numpy_engines_mistakes(run, tmp_path, text, words):
    (tmp_path / "p.csv").write_text(text)
    result = run("eval", EXPR, "--points", str(tmp_path / "p.csv"), "--engine", "dask",
                 "-o", str(tmp_path / "out.parquet"))
    check_reported(result, 2, words)


def test_dask_names_a_missing_file_in_one_line(run, tmp_path):
    result = run("eval", EXPR, "--points", str(tmp_path / "nowhere.csv"), "--engine", "dask",
                 "-o", str(tmp_path / "out.parquet"))
    check_reported(result, 2, ["cannot read", "nowhere.csv"])
    assert "pandas backend" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_dask_parts_that_cannot_be_written_are_an_error(run, cluster, tmp_path):
    (tmp_path / "p.csv").write_text(POINTS)
    (tmp_path / "a file").write_text("")
    out = tmp_path / "a file" / "out-*.csv"  # Dask makes missing directories, not this one
    result = run("eval", EXPR, "--points", str(tmp_path / "p.csv"), "--engine", "dask",
                 "--scheduler", cluster.scheduler_address, "-o", str(out))
    check_reported(result, 2, ["cannot write", "a file"])


# -- the progress bar: Ctrl-C, and runs that end before it would show ------------------------------

def test_the_progress_bar_does_not_flash_when_the_work_is_already_done():
    import io

    from rich.console import Console

    from gradcli.views.tables import DelayedProgress
    out = io.StringIO()
    bar = DelayedProgress(console=Console(file=out, force_terminal=True, width=60),
                          clock=iter([0.0, 1.5, 1.6]).__next__)
    bar(100, 100)  # a slow start-up: the only chunk arrives after the delay
    assert bar.progress is None
    bar.close()
    assert out.getvalue() == ""


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_ctrl_c_during_the_progress_bar_gives_the_cursor_back(gradcli_script, tmp_path):
    """The bar hides the terminal's cursor; Ctrl-C must show it again (exit 130)."""
    import pty
    import select
    import time
    pid, fd = pty.fork()
    if pid == 0:  # the child: gradcli on the terminal, a grid that takes seconds
        os.chdir(tmp_path)
        os.execv(gradcli_script, [gradcli_script, "eval", EXPR,
                                  "--grid", "x=1:2:4000,y=1:2:4000", "-o", "out.parquet"])
    out, sent, deadline = b"", False, time.monotonic() + 120
    while time.monotonic() < deadline:
        if not sent and b"evaluating" in out:
            os.write(fd, b"\x03")  # Ctrl-C, as typed
            sent = True
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert sent, out
    assert os.waitstatus_to_exitcode(status) == 130
    hidden = out.rindex(b"\x1b[?25l")
    assert b"\x1b[?25h" in out[hidden:], out[-300:]
    assert b"Traceback" not in out


# -- messages that say what happened --------------------------------------------------------------

@pytest.mark.parametrize("args, stdin, words", [
    # a grid has ranges, not columns of points
    (["--grid", "x=1:2:2", "--at", "x=1,y=1"], None, ["--at gives x, which is also a range of "
                                                      "the grid"]),
    (["--grid", "x=1:2:2"], None, ["the grid has no range for y", "--at y=1"]),
    # options that shape one point's tables are not silently ignored
    (["--max-rows", "3", "--points", "-"], "x,y\n1,2\n", ["--max-rows shapes the tables of "
                                                          "one point", "--points writes every "
                                                          "number"]),
    (["--grid", "x=0:1:2,y=0:1:2", "--max-rows", "1"], None, ["--max-rows", "--grid"]),
    (["--points", "-", "--json", "-o", "out.csv"], "x,y\n1,2\n", ["write to out.jsonl instead"]),
])
def test_batch_mistakes_say_what_happened(run, tmp_path, monkeypatch, args, stdin, words):
    monkeypatch.chdir(tmp_path)
    check_reported(run("eval", EXPR, *args, input=stdin), 2, words)


def test_standard_input_cannot_hold_both_the_expression_and_the_points(run):
    result = run("eval", "-", "--points", "-", input="x,y\n1,2\n")
    check_reported(result, 2, ["'-' reads standard input once"])
    assert "syntax error" not in result.stderr  # the CSV was read as the expression


# -- the Python API -------------------------------------------------------------------------------

@pytest.mark.parametrize("points", [None, [[2.0, 3.0]], [(2.0, 3.0)], 5.0])
@pytest.mark.parametrize("function", ["evaluate_batch", "jacobian_batch"])
def test_points_that_are_not_a_mapping_are_named_as_such(points, function):
    """Before: None was a TypeError from deep inside the engine, and a list of rows was
    'no values for inputs x, y', as if the user had forgotten them."""
    import gradcli
    from gradcli.errors import InputError
    with pytest.raises(InputError, match=f"points is a {type(points).__name__}, not a mapping"):
        getattr(gradcli, function)("x*y", points)


def test_a_data_frame_is_still_a_mapping_of_columns():
    pd = pytest.importorskip("pandas")
    import gradcli
    r = gradcli.evaluate_batch("x*y", pd.DataFrame({"x": [1.0, 2.0], "y": [3.0, 4.0]}))
    assert r.values.tolist() == [3.0, 8.0] and r.gradient["x"].tolist() == [3.0, 4.0]


# -- what a cell holds ----------------------------------------------------------------------------

@pytest.mark.parametrize("source", ["file", "stdin"])
def test_a_nan_cell_is_named_for_what_it_holds(run, tmp_path, source):
    """pyarrow reads "nan", "NA" and "null" as missing: the row said "no value for input x",
    and said otherwise when another cell of the file was not a number (read as text)."""
    text = "x,y\nnan,1\nNA,2\n,3\n2,8\n"
    (tmp_path / "p.csv").write_text(text)
    args = ["--points", "-"] if source == "stdin" else ["--points", str(tmp_path / "p.csv")]
    result = run("eval", EXPR, *args, input=text if source == "stdin" else None)
    assert result.exit_code == 1
    errors = [line.partition(",nan,nan,nan,")[2] for line in result.stdout.splitlines()[1:]]
    assert errors == ['"the value of x is nan, which is not a finite number"',
                      '''"the value of x is 'NA', not a number"''',
                      '"no value for input x"', ""]


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_a_cell_that_is_not_utf8_fails_its_row(run, tmp_path, source):
    """Issue 23: a bad byte marks its row (it was an input error that stopped the file)."""
    data = b"x,y,name\n1,2,caf\xe9\n3,4,ok\n"  # Latin-1
    (tmp_path / "p.csv").write_bytes(data)
    args = ["--points", "-"] if source == "stdin" else ["--points", str(tmp_path / "p.csv")]
    result = run("eval", EXPR, *args, input=data if source == "stdin" else None)
    check_reported(result, 1, ["row 1: the cell of column 'name' is not UTF-8 text"])
    bad, good = result.stdout.splitlines()[1:]
    assert bad == "1,2,caf\ufffd,nan,nan,nan,the cell of column 'name' is not UTF-8 text"
    assert good.startswith("3,4,ok,13.85541478397") and good.endswith(",")


def test_a_ragged_first_row_fails_before_the_header_is_written(run):
    result = run("eval", EXPR, "--points", "-", input="x,y\n1,2,3\n")
    check_reported(result, 2, ["Expected 2 columns, got 3"])
    assert result.stdout == ""


def test_a_column_of_lists_fails_before_the_header_is_written(run, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"x": pa.array([[1.0]], pa.list_(pa.float64())), "y": [1.0]}),
                   tmp_path / "p.parquet")
    result = run("eval", EXPR, "--points", str(tmp_path / "p.parquet"))
    check_reported(result, 2, ["the column x holds list<element: double> values, not numbers"])
    assert result.stdout == ""


# -- a points file that is a pipe; an output that is the points file itself ----------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_with_a_cell_that_is_not_a_number(gradcli_script, tmp_path):
    """A FIFO (or /dev/stdin) cannot be read twice: it is read as text from the start, as '-'
    is (the re-read after the odd cell was a seek on a pipe: a traceback)."""
    fifo = tmp_path / "points.csv"
    os.mkfifo(fifo)
    proc = subprocess.Popen([gradcli_script, "eval", EXPR, "--points", str(fifo)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(fifo, "w") as f:
        f.write("x,y\n2,3\nabc,3\n")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert out.splitlines()[2] == '''nan,3,nan,nan,nan,"the value of x is 'abc', not a number"'''
    assert "Traceback" not in err


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_writing_over_the_points_file_is_refused(run, tmp_path, suffix):
    """A big CSV written over itself lost rows silently (2,000,000 in, 476,086 out, exit 0)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq
    path = tmp_path / f"p{suffix}"
    table = pa.table({"x": [1.0, 2.0], "y": [3.0, 4.0]})
    if suffix == ".parquet":
        pq.write_table(table, path)
    elif suffix == ".jsonl":
        path.write_text('{"x": 1.0, "y": 3.0}\n{"x": 2.0, "y": 4.0}\n')
    else:
        pacsv.write_csv(table, path)
    before = path.read_bytes()
    result = run("eval", EXPR, "--points", str(path), "-o", str(tmp_path / "." / path.name))
    check_reported(result, 2, ["--output names the points", "themselves"])
    assert path.read_bytes() == before


def test_dask_writing_over_its_own_parts_is_refused(run, tmp_path):
    """Dask's overwrite removed the directory it was about to read: the data set was gone."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    (tmp_path / "data.parquet").mkdir()
    pq.write_table(pa.table({"x": [1.0], "y": [3.0]}), tmp_path / "data.parquet" / "part.0.parquet")
    result = run("eval", EXPR, "--points", str(tmp_path / "data.parquet"), "--engine", "dask",
                 "-o", str(tmp_path / "data.parquet"))
    check_reported(result, 2, ["--output names the points"])
    assert pq.read_table(tmp_path / "data.parquet").to_pydict() == {"x": [1.0], "y": [3.0]}
