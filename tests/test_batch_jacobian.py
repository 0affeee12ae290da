"""Several outputs at many points: ``gradcli.jacobian_batch`` and ``eval --points/--grid`` of a
program with several outputs (docs/batch.md).

References: the single-point Jacobian (``gradcli.jacobian``, itself tested against SymPy in
test_jacobian.py) row by row, to the batch engine's stated tolerance (test_batch.py: bitwise for
exactly rounded operations, relative 2e-14 otherwise); hand-derived numbers for the CLI cases.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from strategies import Case, multi_output_cases
from test_batch import RTOL

import gradcli
from gradcli.engine.bounds import certain_digits
from gradcli.errors import GradcliError, InputError
from gradcli.language.printer import to_source


def close(a: float, b: float, digits: int = 17) -> bool:
    """Equal to the batch engine's tolerance, or in every digit the row's proven bound certifies
    (gradcli.engine.bounds: where a sum cancels, fewer digits are certain in either engine)."""
    return a == b or math.isclose(a, b, rel_tol=max(RTOL, 10.0 ** -digits), abs_tol=1e-300)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(multi_output_cases(), multi_output_cases())
def test_every_row_is_the_single_point_jacobian(case: Case, other: Case):
    """Two rows per case: the case's point and, when it reads the same inputs, another case's
    point (outside the domain, perhaps: then the row fails alone, as eval fails there)."""
    source = to_source(case.program)
    rows = [case.point] + ([other.point] if set(other.point) == set(case.point) else [])
    columns = {name: np.array([row[name] for row in rows]) for name in case.point}
    batch = gradcli.jacobian_batch(source, columns, float64=True)  # the float64 engine's rows
    assert batch.outputs == gradcli.compile(source).output_names
    for i, row in enumerate(rows):
        try:
            want = gradcli.jacobian(source, row, float64=True)  # batch computes in float64
        except GradcliError as exc:
            assert batch.errors[i] is not None, exc.message
            assert all(math.isnan(batch.values[o][i]) for o in batch.outputs)
            continue
        if batch.errors[i] is not None:  # NumPy's last ulp at the very edge of the range
            assert "not a finite number" in batch.errors[i] or "not finite" in batch.errors[i]
            continue
        graph = gradcli.compile(source)
        digits = int(certain_digits(graph, {n: np.array([row[n]]) for n in graph.inputs})[0])
        for o in batch.outputs:
            assert close(batch.values[o][i], want.values[o], digits), (o, i, digits)
            for x in batch.inputs:
                assert close(batch.jacobian[o][x][i], want.jacobian[o][x], digits), (o, x, i)


def test_by_hand_and_a_failed_row():
    # u = log(x): 1/x; v = x*y: (y, x). At x = -1, log fails: the whole row is NaN.
    r = gradcli.jacobian_batch("u = log(x); v = x*y", {"x": [1.0, -1.0, 4.0], "y": 2.0},
                               of=["u", "v"])
    assert r.outputs == ["u", "v"] and r.inputs == ["x", "y"]
    assert r.values["u"][[0, 2]].tolist() == [0.0, math.log(4.0)]
    assert r.jacobian["u"]["x"][[0, 2]].tolist() == [1.0, 0.25]
    assert r.jacobian["v"]["x"][[0, 2]].tolist() == [2.0, 2.0]
    assert r.jacobian["v"]["y"][[0, 2]].tolist() == [1.0, 4.0]
    assert r.errors[1] == "v1: log(-1) is outside the domain of log (a > 0)"
    assert np.isnan(r.values["v"][1]) and np.isnan(r.jacobian["v"]["y"][1])
    assert r.n_failed == 1 and len(r) == 3


def test_evaluate_batch_of_several_outputs_names_jacobian_batch():
    with pytest.raises(InputError, match="2 outputs") as info:
        gradcli.evaluate_batch("x*y; x+y", {"x": [1.0], "y": [2.0]})
    assert "jacobian_batch" in info.value.hint
    # of= picks one: d(x+y)/dx = 1
    assert gradcli.evaluate_batch("x*y; x+y", {"x": [1.0], "y": [2.0]},
                                  of="f2").gradient["x"].tolist() == [1.0]


def test_grid_of_several_outputs_gives_a_column_per_jacobian_entry(run):
    result = run("eval", "x*y; x+y", "--grid", "x=1:2:2,y=3:3:1")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "x,y,f1,df1/dx,df1/dy,f2,df2/dx,df2/dy,error"
    # x*y: (y, x); x+y: (1, 1)
    assert lines[1:] == ["1,3,3,3,1,4,1,1,", "2,3,6,3,2,5,1,1,"]


def test_points_of_several_named_outputs_in_json_lines(run, tmp_path):
    points = tmp_path / "p.csv"
    points.write_text("id,x,y\na,1,2\nb,-1,3\n")
    result = run("eval", "u = log(x); v = x*y", "--of", "u,v", "--points", str(points),
                 "--json")
    assert result.exit_code == 1  # row b failed; every row is still written
    a, b = (json.loads(line) for line in result.stdout.splitlines())
    assert a == {"id": "a", "x": 1.0, "y": 2.0, "u": 0.0, "du/dx": 1.0, "du/dy": 0.0,
                 "v": 2.0, "dv/dx": 2.0, "dv/dy": 1.0, "error": None}
    assert b["u"] is None and b["dv/dy"] is None and "log(-1)" in b["error"]
    assert "1 of 2 points failed" in result.stderr


def test_a_points_column_named_like_an_output_column_is_an_input_error(run, tmp_path):
    points = tmp_path / "p.csv"
    points.write_text("x,df2/dx\n1,2\n")
    result = run("eval", "x; 2*x", "--points", str(points))
    assert result.exit_code == 2 and "df2/dx" in result.output


def test_dask_with_several_outputs_equals_the_numpy_engine(cluster, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gradcli import batchdask, batchio, readers
    from gradcli.engine.graph import compile, select_outputs
    rng = np.random.default_rng(5)
    table = pa.table({"x": rng.uniform(-0.5, 3, 60), "y": rng.uniform(-2, 2, 60)})
    parts = tmp_path / "points.parquet"
    parts.mkdir()
    for i in range(3):
        pq.write_table(table.slice(20 * i, 20), parts / f"part-{i}.parquet")
    pq.write_table(table, tmp_path / "all.parquet")
    source = "a = log(x); b = a*y; c = sin(b)"
    graph = select_outputs(compile(source), ["c", "a"])
    out, ref = tmp_path / "out.parquet", tmp_path / "ref.parquet"
    summary = batchdask.run_dask(graph, str(parts), str(out), of=["c", "a"],
                               scheduler=cluster.scheduler_address)
    batchio.run_batch(graph, readers.read_points(str(tmp_path / "all.parquet"), graph), str(ref))
    got, want = pq.read_table(out).to_pydict(), pq.read_table(ref).to_pydict()
    assert list(got) == list(want) == ["x", "y", "c", "dc/dx", "dc/dy", "a", "da/dx", "da/dy",
                                       "error"]
    for name in want:
        assert all(p == q or (p != p and q != q) for p, q in zip(got[name], want[name])), name
    assert summary.failed == sum(e is not None for e in want["error"]) > 0
