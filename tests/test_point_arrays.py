"""Arrays held whole in a point (issue 41): ``--at X=@X.npy`` keeps one read-only float64 array by
name, not a dict entry per element; the entries ``X[0,0]`` are made only when a scalar path reads
the point, and ``eval --float64`` on array nodes never makes them.

References are independent of gradcli: the closed forms ∇w mean((Xw - y)²) = 2/n Xᵀ(Xw - y) and,
for the logistic loss, Xᵀ(σ(Xw + b) - y)/n, evaluated by NumPy in extended precision
(``np.longdouble``) from the same doubles.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from gradcli import api
from gradcli.points import Point, merge_points, parse_point

LOSS = "mean((X @ w - y)^2)"
LOGISTIC = "-mean(y*log(sigmoid(X@w+b)) + (1-y)*log(1-sigmoid(X@w+b)))"
ROWS, COLUMNS = 100_000, 20


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """X (10^5 x 20, standard normal, seed 0), y, labels in {0, 1} and w, as .npy files, and
    X's first 20,000 rows as CSV and Parquet (columns c0..c19)."""
    folder = tmp_path_factory.mktemp("point-arrays")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((ROWS, COLUMNS))
    y = rng.standard_normal(ROWS)
    w = rng.standard_normal(COLUMNS)
    labels = (rng.random(ROWS) < 0.5).astype(float)
    for name, value in {"X": X, "y": y, "w": w, "labels": labels}.items():
        np.save(folder / f"{name}.npy", value)
    part = X[:20_000]
    table = pa.table({f"c{j}": part[:, j] for j in range(COLUMNS)})
    pacsv.write_csv(table, folder / "X.csv")
    pq.write_table(table, folder / "X.parquet")
    np.save(folder / "y20k.npy", y[:20_000])
    np.save(folder / "X20k.npy", part)
    return folder, X, y, w, labels


def _least_squares(X, y, w):
    """(value, gradient) of mean((Xw - y)²) in long double from the doubles."""
    X, y, w = (np.asarray(a, dtype=np.longdouble) for a in (X, y, w))
    r = X @ w - y
    return np.mean(r * r), 2 * (X.T @ r) / len(y)


def _logistic(X, y, w, b):
    """(value, ∇w, ∂b) of the mean logistic loss in long double from the doubles."""
    X, y, w = (np.asarray(a, dtype=np.longdouble) for a in (X, y, w))
    z = X @ w + np.longdouble(b)
    s = 1 / (1 + np.exp(-z))
    value = -np.mean(y * np.log(s) + (1 - y) * np.log(1 - s))
    return value, X.T @ (s - y) / len(y), np.mean(s - y)


def _agree(found, expected, rel=1e-12):
    """float64 results within ``rel`` of the long double reference, relative to the largest
    component (a sum of 10^5 products rounds to about 1e-14 of it)."""
    found = np.asarray(found, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.longdouble)
    scale = float(np.max(np.abs(expected)))
    assert float(np.max(np.abs(found - expected))) <= rel * scale, (found, expected)


def _printed(stdout: str) -> dict:
    """The numbers of eval's text output: ``f``, ``∂f/∂b`` and each array's elements in order
    (``∂f/∂w`` -> list)."""
    found: dict = {}
    array = None
    for line in stdout.splitlines():
        if ", shape (" in line:
            array = found[line.split(",")[0]] = []
        elif line.lstrip().startswith("[") and array is not None:
            array.append(float(line.split()[1]))
        elif " = " in line:
            name, _, number = line.partition(" = ")
            found[name.strip()] = float(number)
    return found


# -- the point holds arrays, not elements --------------------------------------------------------

def test_a_million_element_npy_is_one_read_only_array_with_no_element_entries(tmp_path):
    values = np.arange(1_000_000, dtype=np.float64).reshape(1000, 1000) / 7
    np.save(tmp_path / "big.npy", values)
    point = parse_point(f"a=2,X=@{tmp_path}/big.npy,b=pi")
    assert dict.__len__(point) == 3  # a, X and b: an entry each, none per element yet
    held = point.arrays["X"]
    assert held.shape == (1000, 1000) and held.dtype == np.float64
    assert not held.flags.writeable
    # read into memory, not mapped: a map of a file cut short later kills the process (SIGBUS)
    assert not isinstance(held, np.memmap) and not isinstance(held.base, np.memmap)
    assert point.names() == ["a", "X", "b"] and point.scalars() == {"a": 2.0, "b": np.pi}
    assert point.shapes == {"X": (1000, 1000)}
    merged = merge_points([point, parse_point("c=1")])
    assert dict.__len__(merged) == 4 and merged.arrays["X"] is held  # not copied
    assert merged.names() == ["a", "X", "b", "c"]


def test_read_as_a_mapping_a_file_array_gives_its_elements_in_the_order_given(tmp_path):
    values = np.arange(12, dtype=np.float64).reshape(4, 3) / 7
    np.save(tmp_path / "X.npy", values)
    point = merge_points([parse_point(f"a=2,X=@{tmp_path}/X.npy,b=pi"), parse_point("c=1")])
    # as the scalar tape reads it: every element, where the array was given
    assert point["X[3,1]"] == values[3, 1]
    assert list(point.items()) == [("a", 2.0), *((f"X[{i},{j}]", values[i, j])
                                                 for i in range(4) for j in range(3)),
                                   ("b", np.pi), ("c", 1.0)]
    assert type(point) is Point and point.names() == ["a", "X", "b", "c"]
    assert point.scalars() == {"a": 2.0, "b": np.pi, "c": 1.0}


def test_elements_stand_in_the_order_given_as_literals_and_keep_their_typed_text():
    point = parse_point("a=1,w=[0.1,pi],b=2,M=[[1,2],[3,4]]")
    assert dict.__len__(point) == 4  # an entry per name, none per element yet
    assert point.exact("w[0]") == "0.1" and point.exact("w[1]") == "pi"
    assert list(point.items()) == [("a", 1.0), ("w[0]", 0.1), ("w[1]", np.pi), ("b", 2.0),
                                   ("M[0,0]", 1.0), ("M[0,1]", 2.0), ("M[1,0]", 3.0),
                                   ("M[1,1]", 4.0)]
    assert point.array("M").tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_the_api_holds_a_numpy_array_without_copying_or_changing_it():
    from gradcli.api import _point
    w = np.array([1.0, 2.0, 3.0])
    point = _point({"w": w, "x": "0.5"})
    assert dict.__len__(point) == 2 and np.shares_memory(point.arrays["w"], w)
    assert w.flags.writeable  # the caller's array is left writeable
    assert point["w[2]"] == 3.0 and point.texts["x"] == "0.5"


def test_eval_float64_on_arrays_makes_no_element_entries(run, data, monkeypatch):
    folder, X, y, w, _ = data

    def refuse(self):
        raise AssertionError("element entries made")
    monkeypatch.setattr(Point, "make_elements", refuse)
    done = run("eval", LOSS, "--at", f"X=@{folder}/X.npy,y=@{folder}/y.npy,w=@{folder}/w.npy",
               "--wrt", "w", "--float64")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[1] == "∂f/∂w, shape (20,)"
    found = _printed(done.stdout)  # 13 significant digits
    value, gradient = _least_squares(X, y, w)
    assert found["f"] == pytest.approx(float(value), rel=1e-12)
    assert len(found["∂f/∂w"]) == COLUMNS
    _agree(found["∂f/∂w"], gradient, rel=1e-11)


@pytest.mark.parametrize("extra", [["--float64"], ["--float64", "--json"], [], ["--json"]])
def test_a_gradient_by_a_large_array_is_kept_an_array_to_the_output(run, tmp_path, monkeypatch,
                                                                      extra):
    """∇ sum(x^2) = 2x by a 10^5-element x, float64 and certified, text and JSON: the result
    holds the gradient as arrays (arraynodes.Elements) and no view names its elements (it made
    a dict entry per element: 4.3 s and 405 MB at 10^6 with --float64 --json, 1.1 s and 217 MB
    now)."""
    from gradcli.engine import arraynodes
    x = np.random.default_rng(3).normal(size=100_000)
    np.save(tmp_path / "x.npy", x)

    def refuse(self):
        raise AssertionError("an entry made per element")
    monkeypatch.setattr(arraynodes.Elements, "_items", refuse)
    monkeypatch.setattr(Point, "make_elements", refuse)
    done = run("eval", "sum(x^2)", "--at", f"x=@{tmp_path}/x.npy", *extra)
    assert done.exit_code == 0, done.output
    if "--json" in extra:
        data = json.loads(done.stdout)
        assert data["shapes"] == {"x": [100_000]}
        assert data["gradient"]["x"] == (2 * x).tolist()  # 2x is exact in doubles
        if "--float64" not in extra:
            texts = data["decimal"]["gradient"]["x"]
            assert len(texts) == 100_000 and data["float64_digits"]["gradient"]["x"][:3] == [13] * 3
            _agree([float(t) for t in texts], 2 * x, rel=1e-12)
            assert data["float64"]["gradient"]["x"] == (2 * x).tolist()
    else:
        lines = done.stdout.splitlines()
        assert lines[1] == "∂f/∂x, shape (100000,)" and "(99,960 more, not shown" in done.stdout
        shown = [float(line.split()[1]) for line in lines[2:] if line.lstrip().startswith("[")]
        _agree(shown, np.concatenate([2 * x[:20], 2 * x[-20:]]), rel=1e-12)


# -- the gradients of 10^5-row programs against the closed forms ---------------------------------

def test_least_squares_from_npy_files_in_json_is_the_closed_form(run, data):
    folder, X, y, w, _ = data
    X, y = X[:20_000], y[:20_000]  # (10^5 rows are 43 MB of JSON)
    at = f"w=@{folder}/w.npy,y=@{folder}/y20k.npy,X=@{folder}/X20k.npy"
    done = run("eval", LOSS, "--at", at, "--wrt", "w", "--float64", "--json")
    assert done.exit_code == 0, done.output
    found = json.loads(done.stdout)
    value, gradient = _least_squares(X, y, w)
    assert found["value"] == pytest.approx(float(value), rel=1e-13)
    _agree(found["gradient"]["w"], gradient)
    assert found["shapes"] == {"X": [20_000, COLUMNS], "y": [20_000], "w": [COLUMNS]}
    assert found["inputs"] == {"w": w.tolist(), "y": y.tolist(), "X": X.tolist()}


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_least_squares_from_a_table_file_is_the_closed_form(run, data, suffix):
    folder, X, y, w, _ = data
    done = run("eval", LOSS, "--at",
               f"X=@{folder}/X.{suffix},y=@{folder}/y20k.npy,w=@{folder}/w.npy", "--wrt", "w",
               "--float64", "--json")
    assert done.exit_code == 0, done.output
    found = json.loads(done.stdout)
    value, gradient = _least_squares(X[:20_000], y[:20_000], w)
    assert found["value"] == pytest.approx(float(value), rel=1e-13)
    _agree(found["gradient"]["w"], gradient)


def test_logistic_loss_from_files_is_the_closed_form(run, data):
    folder, X, _, w, labels = data
    done = run("eval", LOGISTIC, "--at",
               f"X=@{folder}/X.npy,y=@{folder}/labels.npy,w=@{folder}/w.npy,b=0.25", "--wrt",
               "w,b", "--float64")
    assert done.exit_code == 0, done.output
    found = _printed(done.stdout)  # 13 significant digits
    value, grad_w, grad_b = _logistic(X, labels, w, 0.25)
    assert found["f"] == pytest.approx(float(value), rel=1e-12)
    _agree(found["∂f/∂w"], grad_w, rel=1e-11)
    assert found["∂f/∂b"] == pytest.approx(float(grad_b), rel=1e-10, abs=1e-15)


def test_the_api_takes_numpy_arrays_and_points_with_arrays(data):
    folder, X, y, w, _ = data
    value, gradient = _least_squares(X, y, w)
    r = api.evaluate(LOSS, {"X": X, "y": y, "w": w}, wrt=["w"], float64=True)
    assert r.value == pytest.approx(float(value), rel=1e-13)
    _agree(r.shaped_gradient["w"], gradient)
    point = parse_point(f"X=@{folder}/X.npy,y=@{folder}/y.npy,w=@{folder}/w.npy")
    r = api.evaluate(LOSS, point, wrt=["w"], float64=True)
    assert dict.__len__(point) == 3  # read whole, no element entries
    _agree(r.shaped_gradient["w"], gradient)


def test_the_certified_scalar_path_reads_the_same_file_arrays(run, tmp_path):
    """The default (certified) eval reads the elements of a file's array: the same point, made
    into entries when the scalar tape asks."""
    rng = np.random.default_rng(5)
    X, y, w = rng.standard_normal((40, 3)), rng.standard_normal(40), rng.standard_normal(3)
    for name, value in {"X": X, "y": y, "w": w}.items():
        np.save(tmp_path / f"{name}.npy", value)
    at = f"X=@{tmp_path}/X.npy,y=@{tmp_path}/y.npy,w=@{tmp_path}/w.npy"
    certified = json.loads(run("eval", LOSS, "--at", at, "--wrt", "w", "--json").stdout)
    assert certified["certified"]
    from test_array_inputs import _digits_agree, _loss_gradient_mp  # mpmath at 50 digits
    value, gradient = _loss_gradient_mp(X, y, w)
    _digits_agree(certified["decimal"]["value"], value)
    for text, exact in zip(certified["decimal"]["gradient"]["w"], gradient):
        _digits_agree(text, exact)
    plain = json.loads(run("eval", LOSS, "--at", at, "--wrt", "w", "--float64", "--json").stdout)
    assert plain["inputs"] == certified["inputs"]


def test_an_unread_array_is_named_once_in_the_order_given(run, tmp_path):
    np.save(tmp_path / "Z.npy", np.ones((3, 2)))
    for plain in (["--float64"], []):  # on array nodes, and on the scalar tape
        done = run("eval", "sum(w)", "--at", f"a=1,w=[1,2],Z=@{tmp_path}/Z.npy,c=2", *plain)
        assert done.exit_code == 0
        assert "warning: a, Z, c are not read by the expression; they are ignored" in done.stderr


# -- memory in a real process --------------------------------------------------------------------

def _peak_kib(args, folder) -> tuple[int, str]:
    """The peak resident memory (KiB, Linux's ru_maxrss) of the command ``args``, and what it
    printed (kept in a file in ``folder``: the process is reaped by ``wait4``)."""
    with open(folder / "out.txt", "w+") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        assert process.returncode == 0
        out.seek(0)
        return usage.ru_maxrss, out.read()


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="ru_maxrss in KiB: Linux")
def test_the_console_script_needs_memory_near_the_arrays_not_per_element(gradcli_script, data,
                                                                         tmp_path):
    """10^5 x 20 from .npy on array nodes: its peak is that of the same command on a 20-element
    problem plus a few times X's 16 MB (the map, X @ w and the sweep's temporaries); an entry
    per element would be hundreds of MB (about 270 bytes for each of 2 * 10^6 elements)."""
    folder, X, y, w, _ = data
    small, _ = _peak_kib([gradcli_script, "eval", "mean((w - w)^2)", "--at",
                          f"w=@{folder}/w.npy", "--float64"], tmp_path)
    large, printed = _peak_kib([gradcli_script, "eval", LOSS, "--at",
                                f"X=@{folder}/X.npy,y=@{folder}/y.npy,w=@{folder}/w.npy",
                                "--wrt", "w", "--float64"], tmp_path)
    x_kib = ROWS * COLUMNS * 8 // 1024
    assert large - small < 3 * x_kib, (small, large)
    _agree(_printed(printed)["∂f/∂w"], _least_squares(X, y, w)[1], rel=1e-11)


# -- a Parquet file read a column at a time reports the cell a read row by row meets first -------

@pytest.mark.parametrize("b, c, words", [
    # chunks of 2 rows; in each, its columns' cells that are no number, then its non-finite ones
    (["1", "2", "x", "4"], [0.0, np.inf, 0.0, 0.0], "row 2, column 'c' is inf"),
    (["1", "2", "x", "4"], [0.0, 0.0, 0.0, np.inf], "row 3, column 'b' is 'x'"),
    (["1", "2", "3", "x"], [0.0, 0.0, np.nan, 0.0], "row 4, column 'b' is 'x'"),
    (["1", "2", "3", "4"], [0.0, 0.0, np.nan, 0.0], "row 3, column 'c' is nan"),
    (["1", None, "3", "4"], [0.0, 0.0, 0.0, 0.0], "row 2, column 'b' is empty"),
])
def test_a_bad_parquet_cell_is_the_first_a_read_row_by_row_meets(run, reported, tmp_path,
                                                                 monkeypatch, b, c, words):
    monkeypatch.setattr("gradcli.readers.CHUNK_ROWS", 2)
    pq.write_table(pa.table({"a": [1.0, 2.0, 3.0, np.nan], "b": b, "c": c}), tmp_path / "t.pq")
    done = run("eval", "sum(X)", "--at", f"X=@{tmp_path}/t.pq", "--float64")
    reported(done, 2, [words])
