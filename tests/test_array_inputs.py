"""Array inputs from files (``--at X=@data.npy``, ``@data.csv``, ``@data.csv[price]``,
``@data.parquet``) and every command mode on arrays: ``--points``/``--grid`` beside fixed arrays,
``--expect`` with array formulas, ``--check`` element by element, ``hessian`` of a vector (whole,
and ``--direction``: the Hessian-vector product), ``--elementwise``, vector outputs' Jacobian;
the element limit (GRADCLI_MAX_ELEMENTS). docs/arrays.md describes them.

References are independent of gradcli: closed forms evaluated by mpmath at 50 digits, or by
NumPy in doubles; files are written in ``tmp_path`` by NumPy and pyarrow.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import mpmath
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gradcli import api

RNG = np.random.default_rng(41)
X = RNG.normal(size=(7, 3)).round(3)
Y = RNG.normal(size=7).round(3)
W = np.array([0.5, -1.25, 2.0])
LOSS = "mean((X @ w - y)^2)"


def _write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


@pytest.fixture
def files(tmp_path):
    """X as .npy, X and y as one CSV (columns a, b, c, price), and as Parquet."""
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", Y)
    np.save(tmp_path / "w.npy", W)
    table = np.column_stack([X, Y])
    _write_csv(tmp_path / "data.csv", ["a", "b", "c", "price"], [[repr(float(v)) for v in row]
                                                                  for row in table])
    pq.write_table(pa.table({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "price": Y}),
                   tmp_path / "data.parquet")
    return tmp_path


def _loss_gradient_mp(X, y, w):
    """∇w mean((Xw - y)²) = 2 Xᵀ(Xw - y)/n, in mpmath at 50 digits from the doubles."""
    with mpmath.workdps(50):
        Xm = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in X])
        r = Xm * mpmath.matrix([mpmath.mpf(float(v)) for v in w]) - mpmath.matrix(
            [mpmath.mpf(float(v)) for v in y])
        n = len(y)
        value = sum(r[i] ** 2 for i in range(n)) / n
        grad = [2 * sum(Xm[i, j] * r[i] for i in range(n)) / n for j in range(len(w))]
        return value, grad


def _digits_agree(text: str, exact) -> None:
    """Every printed digit of ``text`` is right: it is within half a unit of its last digit of
    the exact value (a printed 0 is an exact 0)."""
    with mpmath.workdps(60):
        shown = mpmath.mpf(text)
        if shown == 0:
            assert abs(exact) < mpmath.mpf(10) ** -45, (text, exact)
            return
        digits = len(text.lstrip("-").split("e")[0].replace(".", "").lstrip("0"))
        exponent = mpmath.floor(mpmath.log10(abs(shown)))
        assert abs(shown - exact) <= mpmath.mpf(10) ** (exponent - digits + 1) / 2, (text, exact)


# -- reading files ----------------------------------------------------------------------------

@pytest.mark.parametrize("at, shape, expected", [
    ("X=@{d}/X.npy", [7, 3], X),
    ("X=@{d}/data.csv[a, b, c]", [7, 3], X),
    ("X=@{d}/data.parquet[a,b,c]", [7, 3], X),
    ("X=@{d}/data.csv", [7, 4], np.column_stack([X, Y])),
    ("X=@{d}/data.parquet", [7, 4], np.column_stack([X, Y])),
    ("X=@{d}/data.csv[price]", [7], Y),
    ("X=@{d}/data.parquet[price]", [7], Y),
    ("X=@{d}/data.csv[\"price\"]", [7], Y),
])
def test_a_file_gives_an_array_of_its_documented_shape(run, files, at, shape, expected):
    result = run("eval", "sum(X^2)/2", "--at", at.format(d=files), "--json", "--float64")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["shapes"] == {"X": shape}
    assert np.array_equal(np.array(data["inputs"]["X"]), expected)  # the doubles as stored
    assert np.array_equal(np.array(data["gradient"]["X"]), expected)  # ∇ sum(X²)/2 = X


def test_npy_of_one_number_is_a_scalar_and_any_numeric_dtype_is_read(run, tmp_path):
    np.save(tmp_path / "s.npy", np.float64(2.5))
    np.save(tmp_path / "i.npy", np.array([[1, 2], [3, 4]], dtype=np.int16))
    np.save(tmp_path / "f.npy", np.array([0.1, 0.2], dtype=np.float32))
    result = run("eval", "s^2 + sum(i) + sum(f)", "--at",
                 f"s=@{tmp_path}/s.npy,i=@{tmp_path}/i.npy,f=@{tmp_path}/f.npy", "--json")
    data = json.loads(result.output)
    assert data["inputs"]["s"] == 2.5 and data["gradient"]["s"] == 5.0
    assert data["inputs"]["i"] == [[1.0, 2.0], [3.0, 4.0]]
    assert data["inputs"]["f"] == [float(np.float32(0.1)), float(np.float32(0.2))]


def test_least_squares_from_files_every_digit_proven(run, files):
    """The loss and its gradient from .npy and CSV inputs, against mpmath at 50 digits."""
    at = f"X=@{files}/X.npy,y=@{files}/data.csv[price],w=@{files}/w.npy"
    result = run("eval", LOSS, "--at", at, "--wrt", "w", "--json", "--digits", "15")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    value, grad = _loss_gradient_mp(X, Y, W)
    _digits_agree(data["decimal"]["value"], value)
    for text, exact in zip(data["decimal"]["gradient"]["w"], grad):
        _digits_agree(text, exact)


def test_file_arrays_beside_literals_and_scalars(run, files):
    result = run("eval", "dot(w, [y[0], y[1], y[2]]) + b",
                 "--at", f"w=[1,2,3],y=@{files}/y.npy", "--at", "b=0.5", "--json", "--float64")
    data = json.loads(result.output)
    assert data["value"] == pytest.approx(Y[:3] @ [1, 2, 3] + 0.5, rel=1e-15)
    assert data["gradient"]["w"] == pytest.approx(list(Y[:3]), rel=1e-15)


def test_a_file_name_may_hold_commas_and_a_tilde(run, files, monkeypatch):
    (files / "a,b.npy").write_bytes((files / "w.npy").read_bytes())
    monkeypatch.setenv("HOME", str(files))
    for text in (f"w=@{files}/a,b.npy,c=2", "w=@~/a,b.npy,c=2"):
        data = json.loads(run("eval", "sum(w)*c", "--at", text, "--json", "--float64").output)
        assert data["inputs"] == {"w": list(W), "c": 2.0}


def _caret(stderr: str, shown: str, start: int, end: int) -> None:
    """The caret line under ``shown`` marks [start, end)."""
    lines = stderr.splitlines()
    i = next(k for k, line in enumerate(lines) if line.strip() == shown)
    pad = lines[i].index(shown)
    assert lines[i + 1] == " " * (pad + start) + "^" * (end - start), stderr


def _bad(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    else:
        content(path)
    return str(path)


BAD = [  # (file name, content, the @-text after the path, message words, caret: "value"/"column")
    ("missing.csv", None, "", ["cannot read", "no such file"], "value"),
    ("data.txt", "a\n1\n", "", ["reads arrays from .npy, .csv, .tsv and .parquet"], "value"),
    ("p.csv", "price,qty\n1,2\n", "[prise]", ["has no column 'prise'", "did you mean 'price'?"],
     "column"),
    ("p.csv", "price,qty\n1,2\n", "[zzz]", ["has no column 'zzz'", "its columns: 'price', 'qty'"],
     "column"),
    ("p.csv", "price,qty\n1,2\n3,abc\n", "", ["row 2 (line 3), column 'qty' is 'abc', not a number"],
     "value"),
    ("p.csv", "price,qty\n1,2\n3,\n", "[qty]", ["row 2 (line 3), column 'qty' is empty"], "value"),
    ("p.csv", "price,qty\n1,2\n3,inf\n", "", ["row 2 (line 3), column 'qty' is inf, not a finite"],
     "value"),
    ("p.csv", "price,qty\n1,2\n\n3\n", "", ["row 2 (line 4) has 1 cell where the header has 2"],
     "value"),
    ("p.csv", "price,qty\n", "", ["has a header and no rows"], "value"),
    ("p.parquet", lambda p: pq.write_table(pa.table({"x": [1.0, None]}), p), "",
     ["row 2, column 'x' is empty"], "value"),
    ("p.parquet", lambda p: pq.write_table(pa.table({"x": ["1", "a"]}), p), "",
     ["row 2, column 'x' is 'a', not a number"], "value"),
    ("p.parquet", b"not parquet", "", ["is not a Parquet file"], "value"),
    ("o.npy", lambda p: np.save(p, np.array([1, "a", None], dtype=object)), "",
     ["holds Python objects, which gradcli never loads"], "value"),
    ("s.npy", lambda p: np.save(p, np.array(["a", "b"])), "", ["holds <U1 values, not numbers"],
     "value"),
    ("c.npy", lambda p: np.save(p, np.ones(2, dtype=complex)), "", ["complex128 values"],
     "value"),
    ("e.npy", lambda p: np.save(p, np.zeros((0, 2))), "", ["holds an empty array"], "value"),
    ("t.npy", lambda p: np.save(p, np.zeros((2, 2, 2))), "", ["shape (2, 2, 2)",
                                                              "at most 2 dimensions"], "value"),
    ("n.npy", lambda p: np.save(p, np.array([[1.0, 2.0], [3.0, np.nan]])), "",
     ["the element [1, 1] is nan, not a finite number"], "value"),
    ("bad.npy", b"hello world", "", ["is not a NumPy .npy file"], "value"),
    ("z.npy", b"PK\x03\x04 zipped", "", ["(a .npz archive?)"], "value"),
    ("cut.npy", lambda p: p.write_bytes(_npy_bytes(np.arange(100.0))[:300]), "",
     ["is cut short: its header says shape (100,) of float64 (8 bytes each), 800 bytes of data, "
      "and the file has 172"], "value"),
    ("head.npy", lambda p: p.write_bytes(_npy_bytes(np.arange(100.0))[:100]), "",
     ["cannot be read as a .npy file", "cut short"], "value"),
    ("X.npy", lambda p: np.save(p, np.ones(3)), "[a]", ["is read whole, without a [column]"],
     "value"),
    ("p.csv", "price,qty\n1,2\n", "[price,]", ["a column name is empty"], "end"),
]


def _npy_bytes(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize("name, content, selection, words, caret", BAD,
                         ids=[f"{b[0]}{b[2]}:{b[3][0][:30]}" for b in BAD])
def test_a_bad_file_is_an_input_error_with_a_caret_and_a_json_object(run, reported, tmp_path,
                                                                     name, content, selection,
                                                                     words, caret):
    path = str(tmp_path / name) if content is None else _bad(tmp_path, name, content)
    text = f"T=@{path}{selection}"
    result = run("eval", "sum(T)", "--at", text)
    reported(result, 2, ["input error: --at T: ", *words])
    if caret == "value":
        _caret(result.stderr, text, 2, len(text))
    elif caret == "column":  # under the column's name, in the brackets
        start = text.index("[") + 1
        _caret(result.stderr, text, start, start + len(selection[1:-1]))
    else:  # at the end: where a name is missing
        _caret(result.stderr, text, len(text) - 1, len(text))
    data = json.loads(run("eval", "sum(T)", "--at", text, "--json").stdout)
    assert data["error"]["kind"] == "input" and data["error"]["message"].startswith("--at T: ")
    assert data["error"]["span"][1] <= len(text) and data["error"]["line"] == 1


def test_a_missing_column_suggests_a_fix_in_json(run, tmp_path):
    path = _write_csv(tmp_path / "p.csv", ["price", "qty"], [[1, 2]])
    text = f"y=@{path}[Price]"
    data = json.loads(run("eval", "sum(y)", "--at", text, "--json").stdout)
    start = text.index("[") + 1
    assert data["error"]["span"] == [start, start + 5]
    assert data["error"]["hint"] == "did you mean 'price'?"


def test_without_pyarrow_a_csv_asks_for_the_batch_extra(run, reported, tmp_path, monkeypatch):
    path = _write_csv(tmp_path / "p.csv", ["x"], [[1]])
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now fails
    reported(run("eval", "sum(x)", "--at", f"x=@{path}"), 2,
             ["needs NumPy and pyarrow, which are not installed", 'pip install "gradcli[batch]"'])


# -- the element limit --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["npy", "csv", "parquet", "literal"])
def test_an_array_past_the_element_limit_is_refused(run, reported, tmp_path, kind):
    values = np.arange(12.0).reshape(6, 2)
    if kind == "npy":
        np.save(tmp_path / "a.npy", values)
        text = f"a=@{tmp_path}/a.npy"
    elif kind == "csv":
        text = f"a=@{_write_csv(tmp_path / 'a.csv', ['p', 'q'], values.tolist())}"
    elif kind == "parquet":
        pq.write_table(pa.table({"p": values[:, 0], "q": values[:, 1]}), tmp_path / "a.parquet")
        text = f"a=@{tmp_path}/a.parquet"
    else:
        text = "a=" + json.dumps(values.tolist()).replace(" ", "")
    env = {"GRADCLI_MAX_ELEMENTS": "10"}
    result = run("eval", "sum(a)", "--at", text, env=env)
    reported(result, 2, ["limit exceeded: --at a: ", "12", "elements, more than the 10 an array "
                         "input may have (GRADCLI_MAX_ELEMENTS)", "GRADCLI_MAX_ELEMENTS=24"])
    data = json.loads(run("eval", "sum(a)", "--at", text, "--json", env=env).stdout)
    assert data["error"]["kind"] == "limit"
    assert run("eval", "sum(a)", "--at", text, env={"GRADCLI_MAX_ELEMENTS": "12"}).exit_code == 0


def test_the_element_limit_holds_in_the_api(monkeypatch):
    from gradcli.errors import LimitError
    monkeypatch.setenv("GRADCLI_MAX_ELEMENTS", "5")
    with pytest.raises(LimitError, match="the value of w has 6 elements"):
        api.evaluate("sum(w)", {"w": np.ones(6)})
    with pytest.raises(LimitError, match="the value of w has 6 elements"):
        api.evaluate("sum(w)", {"w": [[1, 2], [3, 4], [5, 6]]})
    assert float(api.evaluate("sum(w)", {"w": np.ones(5)}).value) == 5.0


def test_a_bad_element_limit_names_the_variable(run, reported):
    reported(run("eval", "sum(w)", "--at", "w=[1,2]", env={"GRADCLI_MAX_ELEMENTS": "0"}), 2,
             ["GRADCLI_MAX_ELEMENTS='0' is not a whole number of at least 1"])


def test_api_reads_numpy_arrays_of_any_numeric_dtype():
    r = api.evaluate("sum(w^2)", {"w": np.array([1, 2, 3], dtype=np.int8)})
    assert [float(g) for g in r.gradient.values()] == [2.0, 4.0, 6.0]
    r = api.evaluate("sum(X)", {"X": np.ones((2, 3), dtype=np.float32)})
    assert r.graph.arrays == {"X": (2, 3)}
    with pytest.raises(Exception, match="not a finite number"):
        api.evaluate("sum(w)", {"w": np.array([1.0, np.nan])})


# -- --points and --grid beside fixed arrays -----------------------------------------------------

def test_grid_over_a_scalar_beside_fixed_array_inputs(run, files):
    x = np.load(files / "w.npy")
    result = run("eval", "sum(w*x)+b^2", "--at", f"w=[1,2,3],x=@{files}/w.npy",
                 "--grid", "b=0:1:3")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [float(r["b"]) for r in rows] == [0.0, 0.5, 1.0]
    for r in rows:
        b = float(r["b"])
        assert float(r["f"]) == pytest.approx(x @ [1, 2, 3] + b * b, rel=1e-15)
        assert float(r["df/db"]) == 2 * b
        assert [float(r[f"df/dw[{i}]"]) for i in range(3)] == list(x)
        assert [float(r[f"x[{i}]"]) for i in range(3)] == list(x)


def test_a_grid_over_an_array_given_by_at_is_an_input_error(run, reported):
    reported(run("eval", "sum(w)*b", "--at", "w=[1,2]", "--grid", "w=0:1:3,b=0:1:2"), 2,
             ["--grid gives w, which --at gives as an array of shape (2,)"])


def test_points_beside_fixed_array_inputs(run, tmp_path):
    points = _write_csv(tmp_path / "pts.csv", ["b"], [[1.5], [-2]])
    result = run("eval", "dot(w, w) * b", "--at", "w=[3,4]", "--points", points, "--wrt", "b")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [float(r["f"]) for r in rows] == [37.5, -50.0]
    assert [float(r["df/db"]) for r in rows] == [25.0, 25.0]


# -- --expect and --check element by element -----------------------------------------------------

def test_expect_an_array_formula_agrees_element_by_element(run):
    result = run("eval", "sum(x * w^2)", "--at", "w=[1,-2,0.5],x=[3,1,2]",
                 "--expect", "w=2*x*w", "--expect", "x=w^2", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["check"]["rows"]
    expected = {"w[0]": 6.0, "w[1]": -4.0, "w[2]": 2.0, "x[0]": 1.0, "x[1]": 4.0, "x[2]": 0.25}
    assert {r["input"]: r["expected"]["value"] for r in rows} == expected
    formulas = {r["input"]: r["expected"]["formula"] for r in rows}
    assert formulas["w[1]"] == "(2*x*w)[1]" and formulas["x[2]"] == "(w^2)[2]"


def test_expect_a_wrong_array_formula_fails_with_exit_1(run):
    result = run("eval", "sum(w^3)", "--at", "w=[1,2]", "--expect", "w=2*w")
    assert result.exit_code == 1
    assert "your formula for ∂f/∂w[1] is off" in result.output


def test_expect_a_number_stands_for_every_element(run):
    assert run("eval", "sum(w) + 2*w[0]", "--at", "w=[1,2]", "--expect", "w=1").exit_code == 1
    assert run("eval", "sum(w)", "--at", "w=[1,2]", "--expect", "w=1").exit_code == 0


def test_expect_an_array_of_another_shape_is_an_input_error(run, reported):
    result = run("eval", "sum(w^2)", "--at", "w=[1,2]", "--expect", "w=[1,2,3]")
    reported(result, 2, ["--expect w: the formula's value has the shape (3,), and ∂f/∂w has (2,)"])
    assert "  [1,2,3]\n  ^^^^^^^" in result.stderr
    data = json.loads(run("eval", "sum(w^2)", "--at", "w=[1,2]", "--expect", "w=[1,2,3]",
                          "--json").stdout)
    assert data["error"]["kind"] == "input" and data["error"]["span"] == [0, 7]


def test_check_compares_every_element(run):
    result = run("eval", "logsumexp(z)", "--at", "z=[1,2,3]", "--check", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["check"]["rows"]
    e = np.exp([1.0, 2.0, 3.0])
    assert [r["input"] for r in rows] == ["z[0]", "z[1]", "z[2]"]
    assert [r["numeric"] for r in rows] == pytest.approx(list(e / e.sum()), rel=1e-8)
    assert all(r["ok"] for r in rows)


# -- hessian of a vector, and the Hessian-vector product ------------------------------------------

def _logsumexp_hessian_mp(z):
    """∇² logsumexp(z) = diag(p) - p pᵀ, p = softmax(z), at 50 digits."""
    with mpmath.workdps(50):
        e = [mpmath.exp(mpmath.mpf(float(v))) for v in z]
        p = [v / sum(e) for v in e]
        return p, [[(i == j) * p[i] - p[i] * p[j] for j in range(len(z))] for i in range(len(z))]


def test_hessian_of_a_vector_prints_the_gradient_in_shape_and_the_matrix(run):
    result = run("hessian", "logsumexp(z)", "--at", "z=[1,2,3]", "--json")
    data = json.loads(result.output)
    p, h = _logsumexp_hessian_mp([1, 2, 3])
    assert data["shapes"] == {"z": [3]} and data["wrt"] == ["z[0]", "z[1]", "z[2]"]
    for text, exact in zip(data["decimal"]["gradient"]["z"], p):
        _digits_agree(text, exact)
    for row, exact_row in zip(data["decimal"]["hessian"], h):
        for text, exact in zip(row, exact_row):
            _digits_agree(text, exact)
    text = run("hessian", "logsumexp(z)", "--at", "z=[1,2,3]").output
    assert "∂f/∂z, shape (3,)\n  [0]" in text and "Hessian" in text


def test_a_whole_hessian_past_the_limit_points_to_direction(run, reported):
    from gradcli.limits import MAX_HESSIAN_INPUTS
    n = MAX_HESSIAN_INPUTS + 1
    result = run("hessian", "sum(w^3)", "--at", f"w={[1.0] * n}".replace(" ", ""))
    reported(result, 2, [f"the Hessian by {n:,} inputs", "--direction w=[1,0,…]"])
    data = json.loads(run("hessian", "sum(w^3)", "--at", f"w={[1.0] * n}".replace(" ", ""),
                          "--json").stdout)
    assert data["error"]["kind"] == "limit"


def test_hessian_vector_product_of_a_long_vector(run, tmp_path):
    """H·v of logsumexp for 2,000 elements, certified, against mpmath's (diag(p) - p pᵀ)v."""
    n = 2000
    z = np.sin(np.arange(n) * 0.7)
    v = np.cos(np.arange(n) * 0.3)
    np.save(tmp_path / "z.npy", z)
    np.save(tmp_path / "v.npy", v)
    result = run("hessian", "logsumexp(z)", "--at", f"z=@{tmp_path}/z.npy", "--direction",
                 f"z=@{tmp_path}/v.npy", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    with mpmath.workdps(50):
        e = [mpmath.exp(mpmath.mpf(float(x))) for x in z]
        s = sum(e)
        p = [x / s for x in e]
        pv = mpmath.fsum(p[i] * mpmath.mpf(float(v[i])) for i in range(n))
        hv = [p[i] * mpmath.mpf(float(v[i])) - p[i] * pv for i in range(n)]
    texts = data["decimal"]["product"]["z"]
    assert len(texts) == n and data["shapes"] == {"z": [n]}
    for i in range(0, n, 97):
        _digits_agree(texts[i], hv[i])


def test_hessian_vector_product_in_shape_with_scalars(run):
    """f = x·sum(w³): H·v with v = (w: [1,0,2], x: 1) is (6x w∘v + 3w², 3 w²·v) by hand."""
    result = run("hessian", "x * sum(w^3)", "--at", "w=[1,2,3],x=2", "--direction",
                 "w=[1,0,2],x=1")
    assert result.exit_code == 0, result.output
    w, v, x = np.array([1.0, 2, 3]), np.array([1.0, 0, 2]), 2.0
    product_w = 6 * x * w * v + 3 * w ** 2
    product_x = 3 * w ** 2 @ v
    data = json.loads(run("hessian", "x * sum(w^3)", "--at", "w=[1,2,3],x=2", "--direction",
                          "w=[1,0,2],x=1", "--json", "--float64").stdout)
    assert data["product"] == {"w": list(product_w), "x": product_x}
    assert "∂(∇f·v)/∂w, shape (3,)" in result.output
    assert f"∂(∇f·v)/∂x = {product_x:.1f}" in result.output.replace("0000000000", "")


def test_hessian_direction_of_another_shape_is_an_input_error(run, reported):
    result = run("hessian", "sum(w^3)", "--at", "w=[1,2,3]", "--direction", "w=[1,0]")
    reported(result, 2, ["--direction gives w the shape (2,), and the input w is (3,)"])
    reported(run("hessian", "sum(w^3)", "--at", "w=[1,2]", "--direction", "w=[1,0]", "--export",
                 "h.tex"), 2, ["--export goes with the whole Hessian"])
    # --check of the product: H·v = (6·w[0]·1, 0) = (6, 0) against the gradient's differences
    checked = run("hessian", "sum(w^3)", "--at", "w=[1,2]", "--direction", "w=[1,0]", "--check",
                  "--json")
    assert checked.exit_code == 0, checked.output
    rows = json.loads(checked.stdout)["check"]["rows"]
    assert [(r["input"], r["status"]) for r in rows] == [("w[0]", "agree"), ("w[1]", "agree")]
    assert abs(rows[0]["numeric"] - 6) < 1e-8 and abs(rows[1]["numeric"]) < 1e-8
    reported(run("hessian", "w^2", "--at", "w=[1,2]", "--direction", "w=[1,0]"),
             2, ["--direction gives the product of one output's Hessian"])


def test_api_hvp_agrees_with_the_whole_hessian():
    z = [0.3, -1.0, 2.0, 0.5]
    v = [1.0, -2.0, 0.0, 0.25]
    r = api.hvp("logsumexp(z) + z[0]*z[3]", {"z": z}, {"z": v})
    h = api.hessian("logsumexp(z) + z[0]*z[3]", {"z": z})
    by_rows = [sum(float(h.hessian[i][j]) * v[j] for j in range(4)) for i in range(4)]
    assert [float(x) for x in r.product.values()] == pytest.approx(by_rows, rel=1e-14)
    assert r.proven and all(x.text for x in r.product.values())


# -- --elementwise and vector outputs ------------------------------------------------------------

def test_elementwise_is_the_gradient_of_the_sum(run):
    result = run("eval", "sin(X) * x", "--at", "X=[[1,2],[3,4]],x=2", "--elementwise", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    with mpmath.workdps(50):
        dX = [[2 * mpmath.cos(int(v)) for v in row] for row in X.tolist()]
        dx = mpmath.fsum(mpmath.sin(int(v)) for v in X.ravel().tolist())
    for row, exact_row in zip(data["decimal"]["vjp"]["X"], dX):
        for text, exact in zip(row, exact_row):
            _digits_agree(text, exact)
    _digits_agree(data["decimal"]["vjp"]["x"], dx)
    assert data["output_shapes"] == {"f": [2, 2]} and data["shapes"] == {"X": [2, 2]}
    text = run("eval", "sin(X) * x", "--at", "X=[[1,2],[3,4]],x=2", "--elementwise").output
    assert "f, shape (2, 2)" in text and "∂sum(f)/∂X, shape (2, 2)" in text


def test_elementwise_refuses_what_does_not_go_with_it(run, reported):
    reported(run("eval", "w^2", "--at", "w=[1,2]", "--elementwise", "--check"), 2,
             ["--elementwise gives only their sums"])
    reported(run("eval", "w^2", "--at", "w=[1,2]", "--elementwise", "--grid", "w=0:1:2"), 2,
             ["--elementwise gives one point's details"])


def test_vector_output_values_in_shape_and_a_limited_jacobian(run):
    result = run("eval", "w^2", "--at", f"w={list(range(12))}".replace(" ", ""),
                 "--max-rows", "4", "--digits", "3")
    assert "f, shape (12,)" in result.output and "(8 more, not shown" in result.output
    assert "the first 4 of 12 columns" in result.output
    data = json.loads(run("eval", "w^2", "--at", "w=[1,2,3]", "--json", "--float64").stdout)
    assert data["jacobian"]["f[2]"] == {"w[0]": 0.0, "w[1]": 0.0, "w[2]": 6.0}
    assert data["output_shapes"] == {"f": [3]} and data["inputs"] == {"w": [1.0, 2.0, 3.0]}


class _Planted:
    """Unpickled, it creates the file ``marker``: the proof that a pickle ran."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_pickle_in_a_npy_file_never_runs(gradcli_script, tmp_path):
    marker = tmp_path / "ran"
    np.save(tmp_path / "evil.npy", np.array([_Planted(str(marker))], dtype=object),
            allow_pickle=True)
    out = subprocess.run([gradcli_script, "eval", "sum(X)", "--at", f"X=@{tmp_path}/evil.npy"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "holds Python objects, which gradcli never loads" in out.stderr
    assert not marker.exists()


def test_a_npy_file_cut_short_is_an_input_error_from_the_console_script(gradcli_script, tmp_path):
    """Its header's size against the bytes there (800 of float64 wanted, 400 there), exit 2."""
    path = tmp_path / "cut.npy"
    np.save(path, np.arange(100.0))
    header = len(_npy_bytes(np.arange(100.0))) - 800
    subprocess.run(["truncate", "-s", str(header + 400), str(path)], check=True)
    for extra in ([], ["--json"]):
        out = subprocess.run([gradcli_script, "eval", "sum(X^2)", "--at", f"X=@{path}", *extra],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and "Traceback" not in out.stderr + out.stdout
        message = ("cut.npy is cut short: its header says shape (100,) of float64 (8 bytes "
                   "each), 800 bytes of data, and the file has 400")
        if extra:
            assert message in json.loads(out.stdout)["error"]["message"]
        else:
            assert message in out.stderr


def test_a_npy_file_cut_short_after_it_is_read_changes_nothing(tmp_path):
    """The array is read, not mapped: a file truncated while gradcli holds it (another program
    writing it again) no longer kills the process with SIGBUS on the next read of the array."""
    path = tmp_path / "x.npy"
    np.save(path, np.arange(100_000.0))
    script = ("import os, sys; from gradcli.readers import read_array\n"
              "x = read_array(sys.argv[1], 'x'); os.truncate(sys.argv[1], 200)\n"
              "print(repr(float(x.sum())))")
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr)  # -7 (SIGBUS) with a map
    assert float(out.stdout) == 99_999 * 100_000 / 2


# -- the installed console script ----------------------------------------------------------------

def test_installed_console_script_reads_files(gradcli_script, files):
    at = f"X=@{files}/X.npy,y=@{files}/data.csv[price],w=@{files}/w.npy"
    out = subprocess.run([gradcli_script, "eval", LOSS, "--at", at, "--wrt", "w", "--json",
                          "--float64"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    r = X @ W - Y
    assert json.loads(out.stdout)["gradient"]["w"] == pytest.approx(list(2 * X.T @ r / 7),
                                                                    rel=1e-13)
    out = subprocess.run([gradcli_script, "eval", LOSS, "--at", f"X=@{files}/data.csv[q]"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "has no column 'q'" in out.stderr
    assert "Traceback" not in out.stderr
    out = subprocess.run([gradcli_script, "hessian", "sum(w^3)", "--at", "w=[1,2]",
                          "--direction", "w=[1,1]", "--json"], capture_output=True, text=True,
                         timeout=120)
    assert json.loads(out.stdout)["product"] == {"w": [6.0, 12.0]}
