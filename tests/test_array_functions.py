"""The array functions written on base operations (docs/arrays.md): reductions along an axis,
max/min, slicing, transpose, outer, log_softmax, the shifted logsumexp, norm(x, 1), zeros, ones,
arange; their errors.

References are independent of gradcli: closed forms in NumPy, and mpmath at 50 digits where
float64 cannot say (logsumexp of 1000).
"""

from __future__ import annotations

import json
import subprocess

import mpmath
import numpy as np
import pytest

from gradcli import api
from gradcli.errors import NameLookupError, ParseError, ShapeError
from gradcli.language.ast import Call, Index, Keyword, Num, Slice, Unary, Var
from gradcli.language.parser import parse
from gradcli.language.printer import to_source


@pytest.mark.parametrize("source, tree", [
    ("x[1:3]", Index(Var("x"), (Slice(Num(1.0), Num(3.0)),))),
    ("A[:, 0]", Index(Var("A"), (Slice(None, None), Num(0.0)))),
    ("x[:-1]", Index(Var("x"), (Slice(None, Unary("-", Num(1.0))),))),
    ("x[2:]", Index(Var("x"), (Slice(Num(2.0), None),))),
    ("sum(X, axis=0)", Call("sum", (Var("X"), Keyword("axis", Num(0.0))))),
    ("X'", Call("transpose", (Var("X"),))),
    ("X' @ w", None),
])
def test_parses_and_reads_back(source, tree):
    program = parse(source)
    if tree is not None:
        assert program.statements == (tree,)
    assert parse(to_source(program)).statements == program.statements


def _point(**arrays):
    return {name: np.asarray(value, dtype=float) if isinstance(value, list) else value
            for name, value in arrays.items()}


def _elements(name, shape):
    if not shape:
        return [name]
    return [f"{name}[{','.join(map(str, i))}]" for i in np.ndindex(*shape)]


X = [[1.0, -2.0], [3.0, 4.5], [0.5, 6.0]]
Z = [[0.3, -1.2, 2.0], [1.5, 0.1, -0.4]]


def _softmax(z, axis=None):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# (source, point, value and gradient by a closed form in NumPy)
CASES = [
    ("sum(X, axis=0) @ [1, 2]", dict(X=X),
     lambda X: (X.sum(axis=0) @ [1, 2], {"X": np.tile([1.0, 2.0], (3, 1))})),
    ("sum(mean(X, axis=1)^2)", dict(X=X),
     lambda X: ((X.mean(axis=1) ** 2).sum(),
                {"X": np.repeat(X.mean(axis=1)[:, None], 2, axis=1) * 2 / 2})),
    ("sum(prod(X, axis=-1))", dict(X=X),
     lambda X: (X.prod(axis=1).sum(), {"X": X[:, ::-1]})),
    ("max(x)", dict(x=[1.0, 5.0, 3.0]), lambda x: (5.0, {"x": np.array([0.0, 1.0, 0.0])})),
    ("min(x)", dict(x=[1.0, 5.0, -3.0]), lambda x: (-3.0, {"x": np.array([0.0, 0.0, 1.0])})),
    ("sum(max(X, axis=1))", dict(X=X),
     lambda X: (X.max(axis=1).sum(), {"X": (X == X.max(axis=1, keepdims=True)) * 1.0})),
    ("sum(min(X, axis=0))", dict(X=X),
     lambda X: (X.min(axis=0).sum(), {"X": (X == X.min(axis=0, keepdims=True)) * 1.0})),
    ("max(x, 0, 2)", dict(x=[3.0]), lambda x: (3.0, {"x": np.array([1.0])})),
    ("sum(X' @ y)", dict(X=X, y=[1.0, 2.0, 3.0]),
     lambda X, y: ((X.T @ y).sum(), {"X": np.tile(y[:, None], (1, 2)), "y": X.sum(axis=1)})),
    ("sum(transpose(X)[1] * [1, 2, 3])", dict(X=X),
     lambda X: ((X[:, 1] * [1, 2, 3]).sum(), {"X": np.array([[0, 1], [0, 2], [0, 3.0]])})),
    ("sum(x[1:3]^2)", dict(x=[1.0, 2.0, 3.0, 4.0]),
     lambda x: (13.0, {"x": np.array([0.0, 4.0, 6.0, 0.0])})),
    ("sum(x[:-1] * x[1:])", dict(x=[1.0, 2.0, 3.0]),
     lambda x: (8.0, {"x": np.array([2.0, 4.0, 2.0])})),
    ("sum(X[:, 0]) + X[1:, 1:][0, 0]", dict(X=X),
     lambda X: (X[:, 0].sum() + X[1, 1], {"X": np.array([[1, 0], [1, 1], [1, 0.0]])})),
    ("sum(outer(u, v)^2)", dict(u=[1.0, 2.0], v=[3.0, -1.0, 0.5]),
     lambda u, v: ((np.outer(u, v) ** 2).sum(),
                   {"u": 2 * u * (v ** 2).sum(), "v": 2 * v * (u ** 2).sum()})),
    ("log_softmax(z)[1]", dict(z=[0.5, 2.0, -1.0]),
     lambda z: (np.log(_softmax(z)[1]), {"z": np.eye(3)[1] - _softmax(z)})),
    ("sum(logsumexp(Z, axis=1))", dict(Z=Z),
     lambda Z: (np.log(np.exp(Z).sum(axis=1)).sum(), {"Z": _softmax(Z, axis=1)})),
    ("sum(softmax(Z, axis=0) * [[1, 2, 3], [4, 5, 6]])", dict(Z=Z),
     lambda Z: ((_softmax(Z, 0) * [[1, 2, 3], [4, 5, 6]]).sum(),
                {"Z": _softmax(Z, 0) * (np.array([[1, 2, 3], [4, 5, 6.0]])
                                        - (_softmax(Z, 0) * [[1, 2, 3], [4, 5, 6]]).sum(0))})),
    ("norm(x, 1)", dict(x=[1.0, -2.0, 3.0]), lambda x: (6.0, {"x": np.sign(x)})),
    ("sum(norm(X, axis=1))", dict(X=X),
     lambda X: (np.linalg.norm(X, axis=1).sum(),
                {"X": X / np.linalg.norm(X, axis=1, keepdims=True)})),
    ("sum((zeros(3) + ones(3) + arange(3)) * x)", dict(x=[1.0, 2.0, 3.0]),
     lambda x: (14.0, {"x": np.array([1.0, 2.0, 3.0])})),
    ("sum(ones(2, 3) * Z) + 2 * x[0]", dict(Z=Z, x=[2.0, 1.0]),
     lambda Z, x: (Z.sum() + 4.0, {"Z": np.ones((2, 3)), "x": np.array([2.0, 0.0])})),
]


@pytest.mark.parametrize("source, point, reference", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("float64", [False, True])
def test_value_and_gradient_against_closed_forms(source, point, reference, float64):
    point = _point(**point)
    value, gradient = reference(**point)
    r = api.evaluate(source, point, float64=float64)
    assert float(r.value) == pytest.approx(float(value), rel=1e-14, abs=1e-300)
    for name, expected in gradient.items():
        expected = np.asarray(expected, dtype=float)
        got = np.array([float(r.gradient[n]) for n in _elements(name, expected.shape)])
        assert got.reshape(expected.shape) == pytest.approx(expected, rel=1e-13, abs=1e-15), name


def test_logsumexp_is_shifted_and_its_gradient_is_proven():
    """logsumexp([1000, 1001, 999.5]) overflows unshifted; shifted, every printed digit agrees
    with mpmath, and so does the gradient softmax(z)."""
    z = ["1000", "1001", "999.5"]
    r = api.evaluate("logsumexp(z)", {"z": z}, digits=15)
    with mpmath.workdps(60):
        e = [mpmath.exp(mpmath.mpf(v)) for v in z]
        lse = mpmath.log(sum(e))
        soft = [v / sum(e) for v in e]
    assert r.value.text == mpmath.nstr(lse, 15, strip_zeros=False)
    for i, expected in enumerate(soft):
        text = r.gradient[f"z[{i}]"].text
        assert mpmath.mpf(text) == pytest.approx(float(expected), rel=1e-14)
        assert abs(mpmath.mpf(text) - expected) <= 10 ** (mpmath.floor(mpmath.log10(
            abs(expected))) - 14)  # the 15 digits printed are right


@pytest.mark.parametrize("source, shapes, words, span", [
    ("sum(X, axis=2)", {"X": (3, 2)}, ["axis 2 is out of range", "(3, 2)"], (12, 13)),
    ("mean(x, axis=-2)", {"x": (3,)}, ["axis -2 is out of range"], (13, 15)),
    ("sum(s, axis=0)", {}, ["axis 0 is out of range", "a scalar"], (12, 13)),
    ("x[1:5]", {"x": (3,)}, ["slice end 5 is out of range", "(3,)"], (4, 5)),
    ("x[2:1]", {"x": (3,)}, ["slice 2:1", "is empty"], (2, 5)),
    ("x[a:2]", {"x": (3,)}, ["integer constants"], (2, 3)),
    ("A[:, 2]", {"A": (2, 2)}, ["index 2 is out of range for axis 1"], (5, 6)),
    ("sum(X, axis=k)", {"X": (2, 2)}, ["axis is an integer constant"], (12, 13)),
    ("outer(X, u)", {"X": (2, 2), "u": (2,)}, ["two vectors", "(2, 2) and (2,)"], (0, 11)),
    ("norm(x, 3)", {"x": (2,)}, ["1-norm"], (8, 9)),
    ("zeros(0)", {}, ["positive integer"], (6, 7)),
    ("max(x, y, axis=0)", {"x": (2,), "y": (2,)}, ["element by element"], (15, 16)),
    ("X' @ v", {"X": (3, 2), "v": (2,)}, ["(2, 3) and (2,)", "do not fit"], (0, 6)),
])
def test_errors_name_shapes_and_place(source, shapes, words, span):
    with pytest.raises(ShapeError) as caught:
        api.compile(source, shapes)
    for word in words:
        assert word in str(caught.value)
    assert caught.value.span == span
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("source, words", [
    ("sum(x, axes=0)", ["sum has no option axes="]),
    ("zeros(1, 2, 3)", ["zeros takes 1 or 2 sizes, got 3"]),
    ("norm(x, 1, 2)", ["norm takes 1 to 2 arguments, got 3"]),
    ("outer(x)", ["outer takes 2 arguments, got 1"]),
])
def test_wrong_calls_say_how_to_call(source, words):
    with pytest.raises(NameLookupError) as caught:
        api.compile(source, {"x": (2,)})
    for word in words:
        assert word in str(caught.value)


def test_an_option_is_written_with_equals():
    with pytest.raises(ParseError, match="written axis=value"):
        parse("sum(x, axis+=1)")


def test_cli_prints_and_reports(run, reported):
    result = run("eval", "sum(X' @ y) + max(x[1:])", "--at", "X=[[1,2],[3,4]],y=[1,2],x=[5,1,2]",
                 "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["value"] == 7 + 10 + 2 and data["gradient"]["x"] == [0.0, 0.0, 1.0]
    assert data["gradient"]["X"] == [[1.0, 1.0], [2.0, 2.0]]
    result = run("eval", "sum(X, axis=2)", "--at", "X=[[1,2],[3,4]]")
    reported(result, 2, ["axis 2 is out of range for sum's argument, of shape (2, 2)"])
    assert "  sum(X, axis=2)\n              ^ valid: -2 to 1" in result.stderr
    data = json.loads(run("eval", "x[0:9]", "--at", "x=[1,2]", "--json").stdout)
    assert data["error"]["kind"] == "input" and data["error"]["span"] == [4, 5]
    assert data["error"]["shapes"] == [[2]]


def test_functions_lists_the_array_functions(run):
    listed = {row["name"]: row for row in json.loads(run("functions", "--json").output)}
    for name in ("sum", "logsumexp", "log_softmax", "outer", "transpose", "zeros", "arange"):
        assert name in listed
    assert "axis=k" in listed["sum"]["note"]


def test_installed_console_script(gradcli_script, tmp_path):
    out = subprocess.run([gradcli_script, "eval", "logsumexp(z) - z[2]", "--at",
                          "z=[1000,1001,1000.5]", "--json"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    with mpmath.workdps(50):
        e = [mpmath.exp(v) for v in (1000, 1001, mpmath.mpf("1000.5"))]
        expected = [float(v / sum(e)) - (i == 2) for i, v in enumerate(e)]
    assert json.loads(out.stdout)["gradient"]["z"] == pytest.approx(expected, rel=1e-15)
    out = subprocess.run([gradcli_script, "eval", "A[:, 3]", "--at", "A=[[1,2],[3,4]]",
                          "--json"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 2 and json.loads(out.stdout)["error"]["kind"] == "input"


def test_the_scalar_tape_records_each_base_operation():
    """Each base operation's call on arrays is recorded with its kind, shape and elements'
    slots (what a trace of array operations reads); scalar operations are the tape's nodes."""
    graph = api.compile("mean((X @ w - y)^2)", {"X": (3, 2), "w": (2,), "y": (3,)})
    kinds = [(kind, shape) for kind, shape, _, _ in graph.array_calls]
    assert kinds == [("matmul", (3,)), ("elementwise", (3,)), ("elementwise", (3,)),
                     ("reduce", ())]
    assert graph.kind(graph.array_calls[-1][2][0]) == "node"
    matmul_slots = graph.array_calls[0][2]
    assert all(graph.kind(s) == "node" for s in matmul_slots)


def test_an_index_by_an_inputs_value_points_to_a_one_hot_vector_which_gives_the_gradient():
    """``z[k]`` with ``k`` given at run time cannot be lowered (the tape is built before the
    values); the hint's rewrite, ``dot(z, onehot)``, gives softmax(z) - onehot by z."""
    import mpmath
    from click.testing import CliRunner

    from gradcli import evaluate
    from gradcli.cli import main
    result = CliRunner().invoke(main, ["eval", "logsumexp(z) - z[k]", "--at", "z=[1,2,0.5],k=2"])
    assert result.exit_code == 2
    assert "one-hot" in result.output and "dot(x, onehot)" in result.output
    z, onehot = [1, 2, 0.5], [0, 0, 1]
    r = evaluate("logsumexp(z) - dot(z, onehot)", {"z": z, "onehot": onehot}, wrt=["z"])
    total = mpmath.fsum(mpmath.exp(mpmath.mpf(v)) for v in z)
    for i, v in enumerate(z):
        expected = mpmath.exp(mpmath.mpf(v)) / total - onehot[i]
        assert abs(mpmath.mpf(r.gradient[f"z[{i}]"].text) - expected) <= abs(expected) * 1e-12
