"""gradcli eval --points/--grid: files in, files out, per-row failures, the summary, Dask.

Expected numbers come from the closed forms of the test expression (log(x) + x*y - sin(y):
1/x + y and x - cos(y)) computed with the math module, or from the in-memory batch engine
(itself tested against the single-point engine in test_batch.py) where the point is that a file
format or a runner changes nothing: those comparisons are bitwise.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from conftest import check_reported
from test_docs import runs as page_runs

import gradcli
from gradcli import batchdask, batchio, readers

EXPR = "log(x)+x*y-sin(y)"
HEADER = ["id", "x", "y", "f", "df/dx", "df/dy", "error"]


def closed_form(x: float, y: float) -> tuple[float, float, float]:
    return math.log(x) + x * y - math.sin(y), 1 / x + y, x - math.cos(y)


def points_table(n: int = 50, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-0.5, 3, n)  # some rows outside log's domain
    x[3] = 0.0
    return pa.table({"id": [f"p{i}" for i in range(n)], "x": x, "y": rng.uniform(-2, 2, n)})


def write_points(table: pa.Table, path: Path) -> Path:
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    elif path.suffix == ".jsonl":
        with open(path, "w") as f:
            for row in table.to_pylist():
                f.write(json.dumps(row) + "\n")
    else:
        pacsv.write_csv(table, path)
    return path


def read_back(path: Path) -> dict[str, list]:
    """An output file as columns: floats as floats (nan for NaN/null), errors as str or None."""
    if path.suffix == ".parquet":
        columns = pq.read_table(path).to_pydict()
    elif path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        columns = {k: [r[k] for r in rows] for k in rows[0]}
    else:
        return read_csv_text(path.read_text())
    for name, values in columns.items():
        if name not in ("id", "error"):
            columns[name] = [math.nan if v is None else v for v in values]
    return columns


def read_csv_text(text: str) -> dict[str, list]:
    rows = list(csv.reader(io.StringIO(text)))
    columns = {name: [r[i] for r in rows[1:]] for i, name in enumerate(rows[0])}
    for name in columns:
        if name == "error":
            columns[name] = [v or None for v in columns[name]]
        elif name != "id":
            columns[name] = [float(v) for v in columns[name]]
    return columns


def same(a: list[float], b: list[float]) -> bool:
    """Bitwise equality of float lists, NaN equal to NaN."""
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b))


# -- standard output ------------------------------------------------------------------------------

def test_csv_points_to_csv_on_stdout(run, tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("id,x,y\nfirst,2,3\nsecond,0.5,-1\n")
    result = run("eval", EXPR, "--points", str(path))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    cols = read_csv_text(result.stdout)
    assert list(cols) == HEADER
    assert cols["id"] == ["first", "second"]  # a column the expression does not read
    for i, (x, y) in enumerate([(2.0, 3.0), (0.5, -1.0)]):
        f, dx, dy = closed_form(x, y)
        assert cols["f"][i] == pytest.approx(f, rel=1e-15)
        assert cols["df/dx"][i] == pytest.approx(dx, rel=1e-15)
        assert cols["df/dy"][i] == pytest.approx(dy, rel=1e-15)
    assert cols["error"] == [None, None]


def test_failed_rows_are_written_with_nan_and_an_error_and_exit_1(run, tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("x,y\n2,3\n-1,3\nabc,1\n,1\n1e400,1\n0,1\n")
    result = run("eval", EXPR, "--points", str(path))
    assert result.exit_code == 1
    cols = read_csv_text(result.stdout)
    assert cols["error"] == [
        None,
        "v1: log(-1) is outside the domain of log (a > 0)",
        "the value of x is 'abc', not a number",
        "no value for input x",
        "the value of x is inf, which is not a finite number",
        "v1: log(0) is outside the domain of log (a > 0)",
    ]
    assert cols["f"][0] == pytest.approx(closed_form(2, 3)[0], rel=1e-15)
    assert all(math.isnan(v) for name in ("f", "df/dx", "df/dy") for v in cols[name][1:])
    assert result.stderr.startswith("error: 5 of 6 points failed")
    assert "row 2: v1: log(-1) is outside the domain of log (a > 0)" in result.stderr
    assert "row 3: the value of x is 'abc', not a number" in result.stderr
    assert "and 2 more" in result.stderr
    assert "Traceback" not in result.output


def test_failures_in_a_later_chunk_are_numbered_from_the_first_row(run, tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "CSV_BLOCK_BYTES", 256)  # many chunks
    n = 300
    x = [1.0 + i for i in range(n)]
    x[250] = -2.0
    cells = [repr(v) for v in x]
    cells[280] = "abc"  # a later chunk stops pyarrow's number parsing: read on as text
    path = tmp_path / "p.csv"
    path.write_text("x\n" + "\n".join(cells) + "\n")
    result = run("eval", "log(x)", "--points", str(path))
    assert result.exit_code == 1
    cols = read_csv_text(result.stdout)
    assert len(cols["x"]) == n
    assert same(cols["x"], [math.nan if i == 280 else v for i, v in enumerate(x)])
    assert cols["f"][:250] == [math.log(v) for v in x[:250]]
    assert cols["f"][281:] == [math.log(v) for v in x[281:]]
    assert cols["error"][280] == "the value of x is 'abc', not a number"
    assert "2 of 300 points failed" in result.stderr and "row 251: v1: log(-2)" in result.stderr
    assert "row 281: the value of x is 'abc'" in result.stderr


def test_standard_input_and_json_lines(run):
    result = run("eval", "x*y", "--points", "-", "--json", input="x,y,tag\n2,3,a\n-1,0.5,b\n")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows == [
        {"x": 2.0, "y": 3.0, "tag": "a", "f": 6.0, "df/dx": 3.0, "df/dy": 2.0, "error": None},
        {"x": -1.0, "y": 0.5, "tag": "b", "f": -0.5, "df/dx": 0.5, "df/dy": -1.0, "error": None},
    ]


def test_json_lines_write_null_for_nan(run):
    result = run("eval", "log(x)", "--points", "-", "--json", input="x\n-1\n")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "x": -1.0, "f": None, "df/dx": None,
        "error": "v1: log(-1) is outside the domain of log (a > 0)"}


def test_passthrough_text_with_commas_and_quotes_survives(run, tmp_path):
    path = tmp_path / "p.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["note", "x"])
        w.writerows([['a, "quoted" note', "1"], ["plain", "2"], ["", "3"]])
    result = run("eval", "x^2", "--points", str(path))
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["note", "x", "f", "df/dx", "error"]
    assert [r[0] for r in rows[1:]] == ['a, "quoted" note', "plain", ""]
    assert [float(r[2]) for r in rows[1:]] == [1.0, 4.0, 9.0]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_header_without_rows_gives_a_header_without_rows(run, tmp_path, suffix):
    source = tmp_path / "p.csv"
    source.write_text("id,x,y\n")
    out = tmp_path / f"out{suffix}"
    result = run("eval", EXPR, "--points", str(source), "-o", str(out))
    assert result.exit_code == 0, result.output
    if suffix == ".csv":
        assert out.read_text() == "id,x,y,f,df/dx,df/dy,error\n"
    else:
        table = pq.read_table(out)
        assert table.num_rows == 0 and table.column_names == HEADER


def test_at_fixes_inputs_the_points_do_not_hold(run):
    result = run("eval", "x*y", "--points", "-", "--at", "y=pi", input="x\n2\n")
    assert result.exit_code == 0, result.output
    assert read_csv_text(result.stdout) == {
        "x": [2.0], "y": [math.pi], "f": [2 * math.pi], "df/dx": [math.pi], "df/dy": [2.0],
        "error": [None]}


# -- formats: every input format to every output format, bitwise ---------------------------------

@pytest.mark.parametrize("source_suffix", [".csv", ".jsonl", ".parquet"])
@pytest.mark.parametrize("out_suffix", [".csv", ".jsonl", ".parquet"])
def test_each_format_round_trips(run, tmp_path, source_suffix, out_suffix):
    table = points_table()
    source = write_points(table, tmp_path / f"points{source_suffix}")
    out = tmp_path / f"out{out_suffix}"
    result = run("eval", EXPR, "--points", str(source), "-o", str(out))
    assert result.exit_code == 1  # rows with x <= 0 fail
    assert result.stdout == ""
    want = gradcli.evaluate_batch(EXPR, {"x": table["x"].to_numpy(), "y": table["y"].to_numpy()})
    got = read_back(out)
    assert list(got) == HEADER
    assert got["id"] == table["id"].to_pylist()
    assert same(got["x"], table["x"].to_pylist()) and same(got["y"], table["y"].to_pylist())
    assert same(got["f"], want.values.tolist())
    assert same(got["df/dx"], want.gradient["x"].tolist())
    assert same(got["df/dy"], want.gradient["y"].tolist())
    assert got["error"] == want.errors.tolist()
    assert f"{want.n_failed} of 50 points failed" in result.stderr


def test_parquet_output_types(run, tmp_path):
    out = tmp_path / "out.parquet"
    result = run("eval", "x*y", "--grid", "x=0:1:3,y=1:2:2", "-o", str(out))
    assert result.exit_code == 0, result.output
    schema = pq.read_schema(out)
    assert schema.names == ["x", "y", "f", "df/dx", "df/dy", "error"]
    assert [str(t) for t in schema.types] == ["double"] * 5 + ["string"]


# -- grids ---------------------------------------------------------------------------------------

def test_grid_row_order_is_the_first_name_slowest(run):
    result = run("eval", "x + 10*y + 100*z", "--grid", "x=0:1:3,y=-1:1:2", "--at", "z=2")
    assert result.exit_code == 0, result.output
    cols = read_csv_text(result.stdout)
    assert list(cols) == ["x", "y", "z", "f", "df/dx", "df/dy", "df/dz", "error"]
    assert list(zip(cols["x"], cols["y"])) == [(0.0, -1.0), (0.0, 1.0), (0.5, -1.0), (0.5, 1.0),
                                               (1.0, -1.0), (1.0, 1.0)]
    assert cols["z"] == [2.0] * 6
    assert cols["f"] == [x + 10 * y + 200 for x, y in zip(cols["x"], cols["y"])]


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_output_dash_is_standard_output(run, extra):
    args = ["eval", "x*y", "--grid", "x=1:2:2,y=0:1:2", *extra]
    plain, dashed = run(*args), run(*args, "-o", "-")
    assert dashed.exit_code == plain.exit_code == 0, dashed.output
    assert dashed.stdout == plain.stdout and plain.stdout.count("\n") == 4 + (not extra)


def test_grid_ranges_are_inclusive_like_linspace_and_take_constant_expressions(run):
    result = run("eval", "sin(t)", "--grid", "t=0:pi:5", "--grid", "s=1:1:1")
    assert result.exit_code == 0, result.output  # s: unread, warned about, one value
    cols = read_csv_text(result.stdout)
    assert cols["t"] == np.linspace(0, math.pi, 5).tolist()
    assert cols["t"][-1] == math.pi
    assert "s is not read by the expression" in result.stderr


def test_a_large_grid_streams_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "CHUNK_ROWS", 1000)
    from gradcli.engine.graph import compile
    graph = compile("x*y")
    rows = readers.grid_rows({"x": (0, 1, 101), "y": (-1, 1, 51)})
    chunks = list(rows.chunks)
    assert [c.num_rows for c in chunks] == [1000] * 5 + [151]
    table = pa.Table.from_batches(chunks)
    xs, ys = np.meshgrid(np.linspace(0, 1, 101), np.linspace(-1, 1, 51), indexing="ij")
    assert table["x"].to_pylist() == xs.ravel().tolist()
    assert table["y"].to_pylist() == ys.ravel().tolist()
    del graph


# -- mistakes: exit 2, a message, no traceback ----------------------------------------------------

@pytest.mark.parametrize("args, stdin, words", [
    (["--points", "nowhere.csv"], None, ["cannot read nowhere.csv"]),
    (["--points", "-"], "x\n1\n", ["no column for y", "--at y=1"]),
    (["--points", "-"], "x, y\n1,2\n", ["no column for y", "' y' has spaces around its name"]),
    (["--points", "-"], "x,y,f\n1,2,3\n", ["column named 'f'", "rename that column"]),
    (["--points", "-"], "x,x,y\n1,2,3\n", ["two columns named 'x'"]),
    (["--points", "-"], "", ["no header line"]),
    (["--points", "-", "--at", "x=1"], "x,y\n1,2\n", ["--at gives x, which is also a column"]),
    (["--points", "-", "-o", "out.txt"], "x,y\n1,2\n", ["--output out.txt: unknown file type"]),
    (["--points", "-", "--trace"], "x,y\n1,2\n", ["--trace", "does not go with --points"]),
    (["--points", "-", "--check"], "x,y\n1,2\n", ["--check", "does not go with --points"]),
    (["--points", "-", "--grid", "x=0:1:2"], "x,y\n1,2\n", ["--points or --grid, not both"]),
    (["--grid", "x=0:1"], None, ["START:STOP:COUNT"]),
    (["--grid", "x=0:1:0"], None, ["at least 1"]),
    (["--grid", "x=1:2:100000000000,y=0:1:2"], None, ["--grid gives x 100,000,000,000 samples",
                                                      "--points streams"]),
    (["--grid", "x=0:1:2", "--engine", "dask"], None, ["--engine dask reads --points"]),
    (["--at", "x=1,y=2", "-o", "out.csv"], None, ["-o goes with --points or --grid"]),
    (["--at", "x=1,y=2", "--engine", "dask"], None, ["--engine goes with --points"]),
    (["--points", "-", "--wrt", "z"], "x,y\n1,2\n", ["--wrt names z"]),
])
def test_mistakes_are_clear_errors(run, tmp_path, monkeypatch, args, stdin, words):
    monkeypatch.chdir(tmp_path)
    result = run("eval", EXPR, *args, input=stdin)
    check_reported(result, 2, words)


def test_a_bad_json_lines_file_is_an_input_error(run, tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"x": 1, "y": 2}\n{"x": "a", "y": 2}\n')
    check_reported(run("eval", EXPR, "--points", str(path)), 2, [str(path)])


# -- the missing extras ----------------------------------------------------------------------------

def test_without_pyarrow_the_error_names_the_batch_extra(run, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    check_reported(run("eval", "x", "--grid", "x=0:1:2"), 2, ['pip install "gradcli[batch]"'])


def test_without_dask_the_error_names_the_dask_extra(run, tmp_path, monkeypatch):
    path = write_points(points_table(5), tmp_path / "p.parquet")
    for name in ("dask", "dask.dataframe", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)
    result = run("eval", EXPR, "--points", str(path), "--engine", "dask", "-o", "out.parquet")
    check_reported(result, 2, ["--engine dask needs Dask", 'pip install "gradcli[dask]"'])


# -- the installed script, start-up, the progress bar ---------------------------------------------

def test_the_console_script_streams_a_file(gradcli_script, tmp_path):
    path = write_points(points_table(20), tmp_path / "p.csv")
    proc = subprocess.run([gradcli_script, "eval", EXPR, "--points", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    cols = read_csv_text(proc.stdout)
    want = gradcli.evaluate_batch(EXPR, {"x": cols["x"], "y": cols["y"]})
    assert same(cols["f"], want.values.tolist())
    assert re.match(r"error: \d+ of 20 points failed", proc.stderr)
    assert "\x1b" not in proc.stderr  # no progress bar off a terminal


def test_a_single_point_eval_imports_no_numpy_or_pyarrow():
    code = ("import sys; from gradcli.cli import main\n"
            "try:\n    main(['eval', 'x*x', '--at', 'x=2'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'pyarrow', 'dask', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.splitlines()[-1] == "[]"


def test_the_progress_bar_waits_a_second_and_needs_a_terminal():
    from rich.console import Console

    from gradcli.views.tables import DelayedProgress
    now = [0.0]
    for terminal, shown in ((True, True), (False, False)):
        out = io.StringIO()
        console = Console(file=out, force_terminal=terminal, width=60)
        bar = DelayedProgress(console=console, clock=lambda: now[0])
        now[0] = 0.5
        bar(10, 100)
        assert bar.progress is None  # under a second: nothing yet
        now[0] = 1.5
        bar(20, 100)
        assert (bar.progress is not None) == shown
        bar.close()
        assert ("evaluating" in out.getvalue()) == shown
        now[0] = 0.0


# -- Dask ------------------------------------------------------------------------------------------

def numpy_engine(path: Path, tmp_path: Path, expr: str = EXPR) -> dict[str, list]:
    from gradcli.engine.graph import compile
    graph = compile(expr)
    out = tmp_path / "numpy.parquet"
    batchio.run_batch(graph, readers.read_points(str(path), graph), str(out))
    return read_back(out)


def test_dask_on_a_partitioned_parquet_data_set_equals_the_numpy_engine(cluster, tmp_path):
    table = points_table(400, seed=3)
    parts = tmp_path / "points.parquet"
    parts.mkdir()
    for i in range(4):  # four partitions
        pq.write_table(table.slice(100 * i, 100), parts / f"part-{i}.parquet")
    single = write_points(table, tmp_path / "all.parquet")
    from gradcli.engine.graph import compile
    out = tmp_path / "out.parquet"
    summary = batchdask.run_dask(compile(EXPR), str(parts), str(out),
                               scheduler=cluster.scheduler_address)
    got = pq.read_table(out).to_pydict()  # a directory of parts, read as one table
    assert len(list(out.glob("*.parquet"))) == 4
    want = numpy_engine(single, tmp_path)
    assert list(got) == list(want) == HEADER
    for name in HEADER:
        if name in ("id", "error"):
            assert got[name] == want[name]
        else:
            assert same(got[name], want[name]), name
    failed = sum(e is not None for e in want["error"])
    assert 0 < failed == summary.failed and summary.rows == 400
    first = next(i for i, e in enumerate(want["error"]) if e is not None)
    assert summary.first_failures[0] == (first + 1, want["error"][first])


def test_dask_on_csv_through_the_command_line_writes_one_csv_per_partition(run, cluster,
                                                                         tmp_path, monkeypatch):
    table = points_table(300, seed=4)
    source = write_points(table, tmp_path / "points.csv")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(batchdask, "DASK_CSV_BLOCK_BYTES", 4000)  # several partitions
    result = run("eval", EXPR, "--points", str(source), "--engine", "dask",
                 "--scheduler", cluster.scheduler_address, "-o", "out-*.csv")
    assert result.exit_code == 1
    files = sorted(tmp_path.glob("out-*.csv"), key=lambda p: int(p.stem.split("-")[1]))
    assert len(files) > 1
    text = files[0].read_text() + "".join(f.read_text().partition("\n")[2] for f in files[1:])
    got = read_csv_text(text)
    want = numpy_engine(source, tmp_path)
    for name in HEADER:
        assert got[name] == want[name] if name in ("id", "error") else same(got[name], want[name])
    assert re.match(r"error: \d+ of 300 points failed", result.stderr)


def test_dask_reads_csv_blocks_as_the_numpy_engine_reads_the_file(tmp_path, monkeypatch):
    """Each block is read by pyarrow as the streaming engine reads a file: the inputs as
    numbers, and a block with a cell that is not one (text, an empty cell, bad bytes) read as
    text and parsed row by row, so the odd row fails and the others compute, in every block."""
    lines = [b"id,x,y"]
    odd = {7: b"a7,pi,1", 60: b"a60,,2", 130: b"a130,\xff,3", 131: b"a131,2,nan",
           200: b"a200,1e999,1", 201: b'"a,201",2,-1'}
    for i in range(240):
        lines.append(odd.get(i, f"a{i},{1 + i / 7:.17g},{i % 5 - 2}".encode()))
    source = tmp_path / "odd.csv"
    source.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.setattr(batchdask, "DASK_CSV_BLOCK_BYTES", 700)  # blocks of about 40 rows
    from gradcli.engine.graph import compile
    out = tmp_path / "dask.parquet"
    summary = batchdask.run_dask(compile(EXPR), str(source), str(out))
    got = pq.read_table(out).to_pydict()
    assert len(list(out.glob("*.parquet"))) > 5
    want = numpy_engine(source, tmp_path)
    assert list(got) == list(want)
    for name in want:
        assert got[name] == want[name] if name in ("id", "error") else same(got[name], want[name])
    assert summary.rows == 240 and summary.failed == sum(e is not None for e in want["error"])
    assert all(want["error"][i] is not None for i in (7, 60, 130, 200))


@pytest.mark.parametrize("output, words", [
    (None, ["--engine dask writes its result to files"]),
    ("out.csv", ["--output out.csv: the dask engine", "'out-*.csv'"]),
])
def test_dask_output_mistakes(run, tmp_path, output, words):
    source = write_points(points_table(5), tmp_path / "p.csv")
    args = ["-o", output] if output else []
    check_reported(run("eval", EXPR, "--points", str(source), "--engine", "dask", *args), 2,
                   words)


# -- the documentation shows real output ---------------------------------------------------------

def test_the_batch_page_shows_real_output(run, tmp_path, monkeypatch):
    import shlex
    monkeypatch.chdir(tmp_path)
    runs = page_runs(Path(__file__).parent.parent / "docs" / "batch.md")
    assert len(runs) >= 4
    for example in runs:
        for name, content in example.files.items():  # the files its `$ cat` lines showed
            Path(name).write_text(content, encoding="utf-8")
        words = shlex.split(example.command)
        assert words[0] == "gradcli", example.command
        result = run(*words[1:])
        assert result.exit_code in (0, 1), result.output
        assert result.stdout.splitlines() + result.stderr.splitlines() == example.shown, words


def test_dask_without_a_scheduler_runs_on_threads_without_a_cluster(tmp_path):
    """No --scheduler: Dask's threaded scheduler in the process itself (no cluster to start,
    distributed not even imported), and the numbers of the numpy engine."""
    source = write_points(points_table(300, seed=5), tmp_path / "points.csv")
    out = tmp_path / "out.parquet"
    code = ("import sys\nfrom gradcli import batchdask\nfrom gradcli.engine.graph import compile\n"
            f"s = batchdask.run_dask(compile({EXPR!r}), sys.argv[1], sys.argv[2])\n"
            "print(s.rows, s.failed, 'distributed' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code, str(source), str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rows, failed, distributed_imported = proc.stdout.split()
    assert rows == "300" and distributed_imported == "False"
    got, want = pq.read_table(out).to_pydict(), numpy_engine(source, tmp_path)
    assert list(got) == list(want) == HEADER
    for name in HEADER:
        assert got[name] == want[name] if name in ("id", "error") else same(got[name], want[name])
    assert int(failed) == sum(e is not None for e in want["error"]) > 0
