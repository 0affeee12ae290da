"""Vectors and matrices (docs/arrays.md): literals, indexing, broadcasting, reductions, ``@``,
array inputs on the command line and in the API, gradients in the inputs' shapes, shape errors.

The references are independent of gradcli: NumPy central differences in doubles, and mpmath
at 50 digits (closed forms such as ∇w mean((Xw - y)²) = 2 Xᵀ(Xw - y)/n, and central differences
of the same expression evaluated on mpmath numbers in NumPy object arrays).
"""

from __future__ import annotations

import json
import random
import subprocess

import mpmath
import numpy as np
import pytest

from gradcli import api
from gradcli.errors import NameLookupError, ShapeError
from gradcli.language.ast import ArrayLit, Binary, Index, Num, Unary, Var
from gradcli.language.parser import parse


# -- the language ---------------------------------------------------------------------------

@pytest.mark.parametrize("source, tree", [
    ("[1, 2]", ArrayLit((Num(1.0), Num(2.0)))),
    ("[[1], [x]]", ArrayLit((ArrayLit((Num(1.0),)), ArrayLit((Var("x"),))))),
    ("x[0]", Index(Var("x"), (Num(0.0),))),
    ("A[1, -1]", Index(Var("A"), (Num(1.0), Unary("-", Num(1.0))))),
    ("x[0]^2", Binary("^", Index(Var("x"), (Num(0.0),)), Num(2.0))),
    ("X @ w + b", Binary("+", Binary("@", Var("X"), Var("w")), Var("b"))),
    ("2 * X @ w", Binary("@", Binary("*", Num(2.0), Var("X")), Var("w"))),  # NumPy's order
    ("[1,\n 2]", ArrayLit((Num(1.0), Num(2.0)))),  # a new line inside brackets continues
])
def test_parses(source, tree):
    assert parse(source).statements == (tree,)


def _point(**arrays):
    return {name: np.asarray(value, dtype=float) if isinstance(value, list) else value
            for name, value in arrays.items()}


# (source, point, value and gradient by a closed form in NumPy)
X3 = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
W = [0.5, -1.0]
Y3 = [1.0, 2.0, 3.0]
CASES = [
    ("sum(w)", dict(w=[1.0, 2.0, 3.0]), lambda w: (w.sum(), {"w": np.ones(3)})),
    ("mean(w^2)", dict(w=[1.0, -2.0]), lambda w: ((w ** 2).mean(), {"w": w})),
    ("prod(w)", dict(w=[2.0, 3.0, 4.0]), lambda w: (24.0, {"w": np.array([12.0, 8.0, 6.0])})),
    ("dot(w, x)", dict(w=[1.0, 2.0], x=[3.0, 4.0]),
     lambda w, x: (w @ x, {"w": x, "x": w})),
    ("w @ x", dict(w=[1.0, 2.0], x=[3.0, 4.0]), lambda w, x: (w @ x, {"w": x, "x": w})),
    ("sum(A @ x)", dict(A=X3, x=W),
     lambda A, x: ((A @ x).sum(), {"A": np.outer(np.ones(3), x), "x": A.sum(axis=0)})),
    ("sum(A @ B)", dict(A=[[1.0, 2.0], [3.0, 4.0]], B=[[5.0, 6.0], [7.0, 8.0]]),
     lambda A, B: ((A @ B).sum(), {"A": np.ones((2, 2)) @ B.T, "B": A.T @ np.ones((2, 2))})),
    ("norm(w)", dict(w=[3.0, 4.0]), lambda w: (5.0, {"w": w / 5.0})),
    ("logsumexp(z)", dict(z=[1.0, 2.0, 3.0]),
     lambda z: (np.log(np.exp(z).sum()), {"z": np.exp(z) / np.exp(z).sum()})),
    ("w[0] * w[-1]", dict(w=[2.0, 3.0, 5.0]), lambda w: (10.0, {"w": np.array([5.0, 0, 2.0])})),
    ("A[1, 0] + A[0][1]", dict(A=[[1.0, 2.0], [3.0, 4.0]]),
     lambda A: (5.0, {"A": np.array([[0.0, 1.0], [1.0, 0.0]])})),
    ("sum(sin(w) * [1, 2])", dict(w=[0.5, 1.5]),
     lambda w: ((np.sin(w) * [1, 2]).sum(), {"w": np.cos(w) * [1, 2]})),
    ("sum(A * x)", dict(A=[[1.0, 2.0], [3.0, 4.0]], x=[10.0, 20.0]),  # x broadcast over rows
     lambda A, x: ((A * x).sum(), {"A": np.tile(x, (2, 1)), "x": A.sum(axis=0)})),
    ("z = w * 2; sum(z) + c", dict(w=[1.0, 2.0], c=3.0),
     lambda w, c: (9.0, {"w": np.array([2.0, 2.0]), "c": 1.0})),
]


@pytest.mark.parametrize("source, point, reference", CASES, ids=[c[0] for c in CASES])
def test_value_and_gradient_against_closed_forms(source, point, reference):
    point = _point(**point)
    value, gradient = reference(**point)
    r = api.evaluate(source, point)
    assert float(r.value) == pytest.approx(float(value), rel=1e-14, abs=1e-300)
    for name, expected in gradient.items():
        expected = np.asarray(expected, dtype=float)
        names = _elements(name, expected.shape)
        got = np.array([float(r.gradient[n]) for n in names]).reshape(expected.shape)
        assert got == pytest.approx(expected, rel=1e-13, abs=1e-15), name


def _elements(name, shape):
    if not shape:
        return [name]
    return [f"{name}[{','.join(map(str, i))}]" for i in np.ndindex(*shape)]


def test_least_squares_gradient_against_mpmath_every_digit():
    """∇w mean((Xw + b - y)²) = 2 Xᵀ(Xw + b - y)/n and ∂b = 2 mean(Xw + b - y), computed in
    mpmath from the decimal inputs: every printed digit of gradcli's proven text agrees."""
    rng = random.Random(7)
    n, k = 6, 3
    X = [[f"{rng.uniform(-2, 2):.3f}" for _ in range(k)] for _ in range(n)]
    w = [f"{rng.uniform(-1, 1):.2f}" for _ in range(k)]
    y = [f"{rng.uniform(-1, 1):.2f}" for _ in range(n)]
    b = "0.1"
    r = api.evaluate("mean((X @ w + b - y)^2)", {"X": X, "w": w, "b": b, "y": y}, digits=15)
    with mpmath.workdps(60):
        Xm = [[mpmath.mpf(v) for v in row] for row in X]
        wm, ym, bm = [mpmath.mpf(v) for v in w], [mpmath.mpf(v) for v in y], mpmath.mpf(b)
        res = [sum(Xm[i][j] * wm[j] for j in range(k)) + bm - ym[i] for i in range(n)]
        value = sum(e * e for e in res) / n
        grad_w = [2 * sum(Xm[i][j] * res[i] for i in range(n)) / n for j in range(k)]
        grad_b = 2 * sum(res) / n
        expected = {"b": grad_b, **{f"w[{j}]": grad_w[j] for j in range(k)},
                    **{f"X[{i},{j}]": 2 * res[i] * wm[j] / n for i in range(n) for j in range(k)},
                    **{f"y[{i}]": -2 * res[i] / n for i in range(n)}}
        assert _agrees(r.value.text, value)
        for name, exact in expected.items():
            assert _agrees(r.gradient[name].text, exact), (name, r.gradient[name].text)


def _agrees(text: str, exact) -> bool:
    """Every digit of ``text`` is right: ``exact`` lies within half a unit of its last digit
    (a proven text is correctly rounded or faithful: within one unit)."""
    digits = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    value = mpmath.mpf(text)
    if value == 0:
        return abs(exact) < mpmath.mpf(10) ** -12
    unit = abs(value) * mpmath.mpf(10) ** (1 - len(digits)) / abs(mpmath.mpf(digits[0]))
    return abs(value - exact) <= unit


# -- generated array expressions ------------------------------------------------------------

UNARY = {  # name -> (NumPy on floats, mpmath)
    "sin": (np.sin, mpmath.sin), "cos": (np.cos, mpmath.cos), "exp": (np.exp, mpmath.exp),
    "tanh": (np.tanh, mpmath.tanh), "sigmoid": (lambda a: 1 / (1 + np.exp(-a)),
                                                lambda a: 1 / (1 + mpmath.exp(-a))),
    "atan": (np.arctan, mpmath.atan),
}


def _generate(rng: random.Random, depth: int):
    """(source, f(env, mp)) of an array-valued expression over v (3,), u (3,), M (2, 3), s ()."""
    if depth == 0 or rng.random() < 0.25:
        name = rng.choice(["v", "u", "M", "s", "v", "M"])
        return name, lambda env, mp, name=name: env[name]
    kind = rng.choice(["unary", "binary", "binary", "matmul"])
    if kind == "unary":
        fname = rng.choice(list(UNARY))
        src, f = _generate(rng, depth - 1)
        numpy_f, mp_f = UNARY[fname]
        vec = np.vectorize(mp_f, otypes=[object])
        return f"{fname}({src})", lambda env, mp: (vec if mp else numpy_f)(f(env, mp))
    if kind == "matmul":  # (M @ vector) @ M: of shape (3,), as v
        src, f = _generate_vector(rng, depth - 1)
        return f"(M @ ({src})) @ M", lambda env, mp: (env["M"] @ f(env, mp)) @ env["M"]
    op = rng.choice(["+", "-", "*"])
    (ls, lf), (rs, rf) = _generate(rng, depth - 1), _generate(rng, depth - 1)
    ops = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
    return f"({ls} {op} {rs})", lambda env, mp: ops[op](lf(env, mp), rf(env, mp))


def _generate_vector(rng, depth):
    """An expression of shape (3,) (v, u, s broadcast, elementwise functions)."""
    if depth == 0 or rng.random() < 0.3:
        name = rng.choice(["v", "u"])
        return name, lambda env, mp, name=name: env[name]
    src, f = _generate_vector(rng, depth - 1)
    if rng.random() < 0.5:
        fname = rng.choice(list(UNARY))
        numpy_f, mp_f = UNARY[fname]
        vec = np.vectorize(mp_f, otypes=[object])
        return f"{fname}({src})", lambda env, mp: (vec if mp else numpy_f)(f(env, mp))
    other = rng.choice(["u", "v", "s"])
    return f"({src} * {other})", lambda env, mp: f(env, mp) * env[other]


def _reduced(rng, src, f):
    name = rng.choice(["sum", "mean", "norm", "logsumexp"])

    def value(env, mp):
        a = np.asarray(f(env, mp), dtype=object if mp else float)
        if name == "sum":
            return a.sum()
        if name == "mean":
            return a.sum() / a.size
        if name == "norm":
            return mpmath.sqrt((a * a).sum()) if mp else np.sqrt((a * a).sum())
        return (mpmath.log(np.vectorize(mpmath.exp, otypes=[object])(a).sum()) if mp
                else np.log(np.exp(a).sum()))
    return f"{name}({src})", value


POINT = {"v": [0.3, -0.7, 1.1], "u": [0.9, 0.2, -0.4], "M": [[0.5, -0.25, 0.1], [0.3, 0.8, -0.6]],
         "s": 0.7}


@pytest.mark.parametrize("seed", range(24))
def test_generated_expressions_against_numpy_and_mpmath(seed):
    rng = random.Random(seed)
    src, f = _reduced(rng, *_generate(rng, 3))
    r = api.evaluate(src, POINT)
    float_env = {k: np.asarray(v, dtype=float) for k, v in POINT.items()}
    assert float(r.value) == pytest.approx(float(f(float_env, False)), rel=1e-12, abs=1e-14), src
    for name, value in POINT.items():
        shape = np.shape(value)
        for index in np.ndindex(*shape) if shape else [()]:
            element = _elements(name, shape)[np.ravel_multi_index(index, shape)] if shape else name
            got = float(r.gradient.get(element, 0.0))  # an input not read: 0
            # NumPy central difference, in doubles
            h = 1e-6
            plus, minus = ({k: v.copy() for k, v in float_env.items()} for _ in range(2))
            plus[name][index] += h
            minus[name][index] -= h
            numeric = (f(plus, False) - f(minus, False)) / (2 * h)
            assert got == pytest.approx(float(numeric), rel=1e-6, abs=1e-8), (src, element)
            # mpmath central difference at 50 digits: the same expression on mpf numbers
            with mpmath.workdps(50):
                hm = mpmath.mpf("1e-20")
                envs = []
                for sign in (1, -1):
                    env = {k: np.array(np.asarray(v, dtype=float).tolist(), dtype=object)
                           for k, v in POINT.items()}
                    env = {k: (np.vectorize(mpmath.mpf, otypes=[object])(v) if v.shape
                               else mpmath.mpf(float(v))) for k, v in env.items()}
                    if shape:
                        env[name][index] += sign * hm
                    else:
                        env[name] += sign * hm
                    envs.append(f(env, True))
                exact = (envs[0] - envs[1]) / (2 * hm)
            assert got == pytest.approx(float(exact), rel=1e-12, abs=1e-14), (src, element)


# -- shape errors and names -----------------------------------------------------------------

@pytest.mark.parametrize("source, shapes, words, span", [
    ("v + u", {"v": (3,), "u": (2,)}, ["(3,) and (2,)", "do not broadcast"], (0, 5)),
    ("sum(M * u)", {"M": (2, 3), "u": (2,)}, ["(2, 3) and (2,)"], (4, 9)),
    ("M @ u", {"M": (2, 3), "u": (2,)}, ["(2, 3) and (2,)", "do not fit"], (0, 5)),
    ("s @ u", {"u": (2,)}, ["a scalar"], (0, 5)),
    ("v[3]", {"v": (3,)}, ["index 3 is out of range", "(3,)"], (2, 3)),
    ("v[-4]", {"v": (3,)}, ["index -4 is out of range"], (2, 4)),
    ("M[0, 0, 0]", {"M": (2, 3)}, ["3 indices", "(2, 3)"], (0, 10)),
    ("v[s]", {"v": (3,)}, ["integer constant"], (2, 3)),
    ("v[0.5]", {"v": (3,)}, ["integer constant"], (2, 5)),
    ("s[0]", {}, ["s is a scalar"], (0, 4)),
    ("[[1, 2], [3]]", {}, ["ragged", "(1,)", "(2,)"], (9, 12)),
    ("[1, [2, 3]]", {}, ["ragged"], (4, 10)),
])
def test_shape_errors_name_shapes_and_place(source, shapes, words, span):
    with pytest.raises(ShapeError) as caught:
        api.compile(source, shapes)
    for word in words:
        assert word in str(caught.value)
    assert caught.value.span == span
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("source, words", [
    ("sum(x, y)", ["sum takes 1 argument, got 2"]),
    ("dot(x)", ["dot takes 2 arguments, got 1"]),
    ("sum + 1", ["sum is a function"]),
    ("dot = 1", ["dot is a function and cannot be assigned"]),
])
def test_array_function_names(source, words):
    with pytest.raises(NameLookupError) as caught:
        api.compile(source)
    for word in words:
        assert word in str(caught.value)


def test_array_names_are_suggested_not_cot(run):
    result = run("eval", "dott(w, x)", "--at", "w=1,x=2")
    assert result.exit_code == 2
    assert "did you mean dot?" in result.stderr and "cot" not in result.stderr
    result = run("eval", "summ(x)", "--at", "x=1")
    assert "did you mean sum?" in result.stderr


def test_array_functions_of_scalars_work():
    """NumPy's reading: sum, dot and mean of scalars are the scalar, the product, the scalar."""
    r = api.evaluate("sum(x) + dot(x, y) + mean(y)", {"x": 2.0, "y": 3.0})
    assert float(r.value) == 2 + 6 + 3
    assert {k: float(v) for k, v in r.gradient.items()} == {"x": 4.0, "y": 3.0}


# -- the command line -----------------------------------------------------------------------

LOSS = "mean((X @ w + b - y)^2)"
AT = "X=[[1,2],[3,4],[5,6]],w=[0.5,-1],b=0.1,y=[1,2,3]"


def _loss_reference():
    with mpmath.workdps(50):
        X = mpmath.matrix([[1, 2], [3, 4], [5, 6]])
        w = mpmath.matrix([mpmath.mpf("0.5"), -1])
        y = mpmath.matrix([1, 2, 3])
        res = X * w + mpmath.matrix([mpmath.mpf("0.1")] * 3) - y
        value = sum(e ** 2 for e in res) / 3
        gw = X.T * res * 2 / 3
        return float(value), [float(gw[0]), float(gw[1])], float(2 * sum(res) / 3), res


def test_eval_prints_the_gradient_in_each_inputs_shape(run):
    result = run("eval", LOSS, "--at", AT, "--wrt", "w,b,X")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    value, gw, gb, res = _loss_reference()
    assert lines[0].split("=")[1].strip() == "22.02666666667" == f"{value:.13g}"
    assert lines[1].split("=")[1].strip() == "-8.800000000000"
    assert float(lines[1].split("=")[1]) == pytest.approx(gb, rel=1e-13)
    at = lines.index("∂f/∂w, shape (2,)")
    assert [float(line.split()[1]) for line in lines[at + 1:at + 3]] == pytest.approx(gw, rel=1e-12)
    assert [line.split()[0] for line in lines[at + 1:at + 3]] == ["[0]", "[1]"]
    assert "∂f/∂X, shape (3, 2)" in lines and any("[:,1]" in line for line in lines)


def test_long_vectors_are_elided_with_their_count(run):
    at = "w=[" + ",".join(str(i) for i in range(100)) + "]"
    result = run("eval", "sum(w^2)/2", "--at", at, "--max-rows", "6")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert "(94 more, not shown; --max-rows 0 shows all)" in result.output
    assert [line.split()[0] for line in lines[2:5]] == ["[0]", "[1]", "[2]"]
    assert lines[-1].split() == ["[99]", "99"] or lines[-1].split()[0] == "[99]"
    full = run("eval", "sum(w^2)/2", "--at", at, "--max-rows", "0").output
    assert "not shown" not in full and len(full.splitlines()) == 102


def test_json_nested_lists_and_shapes(run):
    result = run("eval", LOSS, "--at", AT, "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    value, gw, gb, res = _loss_reference()
    assert data["value"] == value
    assert data["shapes"] == {"X": [3, 2], "w": [2], "y": [3]}
    assert data["inputs"]["X"] == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert data["gradient"]["w"] == pytest.approx(gw, rel=1e-15)
    assert data["gradient"]["b"] == pytest.approx(gb, rel=1e-15)
    assert np.shape(data["gradient"]["X"]) == (3, 2)
    assert np.shape(data["decimal"]["gradient"]["X"]) == (3, 2)


def test_scalar_json_has_no_shapes(run):
    data = json.loads(run("eval", "x*y", "--at", "x=2,y=3", "--json").output)
    assert "shapes" not in data and data["gradient"] == {"x": 3.0, "y": 2.0}


def test_shape_error_on_the_command_line_and_in_json(run, reported):
    result = run("eval", "sum(w + y)", "--at", "w=[1,2,3],y=[1,2]")
    reported(result, 2, ["(3,) and (2,)", "do not broadcast"])
    assert "  sum(w + y)\n      ^^^^^" in result.stderr
    data = json.loads(run("eval", "sum(w + y)", "--at", "w=[1,2,3],y=[1,2]", "--json").stdout)
    assert data["error"]["kind"] == "input"
    assert data["error"]["span"] == [4, 9] and data["error"]["shapes"] == [[3], [2]]


def test_ragged_and_bad_array_values_on_the_command_line(run, reported):
    result = run("eval", "sum(w)", "--at", "w=[[1,2],[3]]")
    reported(result, 2, ["--at w: the value is a ragged array"])
    assert "w=[[1,2],[3]]\n           ^^^" in result.stderr
    reported(run("eval", "sum(w)", "--at", "w=[1,q]"), 2, ["reads the name q"])
    reported(run("eval", "w[0]", "--at", "w=2"), 2, ["w is a scalar"])


def test_array_values_are_exact_decimals(run):
    """0.1 in an array is the decimal 0.1, as a scalar value is: sum([0.1]*3 inputs) - 0.3 is 0."""
    result = run("eval", "sum(w) - 0.3", "--at", "w=[0.1,0.1,0.1]", "--json")
    data = json.loads(result.output)
    assert data["decimal"]["value"] == "0"


def test_check_and_float64_and_hessian_work_on_elements(run):
    result = run("eval", "sum(exp(w) * x)", "--at", "w=[0.1,0.2],x=[1,2]", "--check")
    assert result.exit_code == 0, result.output
    result = run("eval", "sum(exp(w) * x)", "--at", "w=[0.1,0.2],x=[1,2]", "--float64", "--json")
    assert json.loads(result.output)["certified"] is False
    h = api.hessian("sum(w^3) + w[0]*w[1]", {"w": [1.0, 2.0]})
    assert [[float(v) for v in row] for row in h.hessian] == [[6.0, 1.0], [1.0, 12.0]]


def test_vector_output_gives_the_jacobian(run):
    """softmax(z) is a vector: its elements are the outputs f[0], f[1], f[2], and the Jacobian
    is diag(p) - p pᵀ."""
    r = api.jacobian("softmax(z)", {"z": [1.0, 2.0, 3.0]})
    with mpmath.workdps(50):
        e = [mpmath.exp(k) for k in (1, 2, 3)]
        p = [v / sum(e) for v in e]
        expected = [[float((i == j) * p[i] - p[i] * p[j]) for j in range(3)] for i in range(3)]
    assert r.outputs == ["f[0]", "f[1]", "f[2]"]
    got = [float(v) for row in r.matrix for v in row]
    assert got == pytest.approx([v for row in expected for v in row], rel=1e-14)


def test_api_takes_numpy_arrays_and_lists():
    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    a = api.evaluate(LOSS, {"X": X, "w": np.array([0.5, -1.0]), "b": 0.1, "y": [1, 2, 3]},
                     wrt=["w"])
    value, gw, gb, res = _loss_reference()
    assert list(a.gradient) == ["w[0]", "w[1]"]
    assert [float(a.gradient["w[0]"]), float(a.gradient["w[1]"])] == pytest.approx(gw, rel=1e-15)
    graph = api.compile(LOSS, {"X": (3, 2), "w": (2,), "y": (3,)})
    with pytest.raises(Exception, match="compiled with w of shape"):
        api.evaluate(graph, {"X": X, "w": [1.0, 2.0, 3.0], "b": 0.0, "y": [1, 2, 3]})


def test_installed_console_script_with_arrays(gradcli_script, tmp_path):
    out = subprocess.run([gradcli_script, "eval", LOSS, "--at", AT, "--json"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    value, gw, gb, res = _loss_reference()
    assert json.loads(out.stdout)["gradient"]["w"] == pytest.approx(gw, rel=1e-15)
    out = subprocess.run([gradcli_script, "eval", "v @ u", "--at", "v=[1,2],u=[1,2,3]"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 2 and "(2,) and (3,)" in out.stderr
    assert "Traceback" not in out.stderr


def test_an_input_without_a_value_is_missing_not_a_scalar(run, reported):
    """X given no value reads as a scalar at lowering; the message is the missing value."""
    result = run("eval", "sum(X @ w)", "--at", "w=[1,2]")
    reported(result, 2, ["no value for input X"])
    assert "  sum(X @ w)\n      ^\n" in result.stderr
    with pytest.raises(Exception, match="no value for input X"):
        api.evaluate("X[0] + sum(w)", {"w": [1.0, 2.0]})


def test_a_direction_of_another_shape(run, reported):
    result = run("eval", "sum(w^2)", "--at", "w=[1,2]", "--direction", "w=[1,0,3]")
    reported(result, 2, ["--direction gives w the shape (3,), and the input w is (2,)"])
    result = run("eval", "sum(w^2)", "--at", "w=[1,2]", "--direction", "w=[1,0.5]")
    assert result.exit_code == 0
    assert "∇f·d = 4.000000000000" in result.output  # 2·1·1 + 2·2·0.5


def test_shaped_gradient():
    r = api.evaluate("sum(A @ x) + c", {"A": [[1.0, 2.0], [3.0, 4.0]], "x": [1.0, 1.0], "c": 2.0})
    assert r.shaped_gradient == {"A": [[1.0, 1.0], [1.0, 1.0]], "x": [4.0, 6.0], "c": 1.0}


@pytest.mark.parametrize("ats", [["w=[1,2]", "w=[1,2]"], ["w=[1,2]", "w=3"], ["w=3,w=[1,2]"],
                                 ["w=[1],w=2"]])
def test_an_array_given_twice(run, reported, ats):
    args = [item for at in ats for item in ("--at", at)]
    reported(run("eval", "sum(w^2)", *args), 2, ["--at gives w twice"])


@pytest.mark.parametrize("call", [lambda g: api.codegen(g), lambda g: api.derivatives(g),
                                  lambda g: api.all_derivatives(g)])
def test_what_does_not_take_arrays_yet_says_so(call):
    graph = api.compile("sum(w^2)", {"w": (2,)})
    with pytest.raises(Exception, match="does not take array inputs yet"):
        call(graph)


# -- every row of the catalogue, element by element -------------------------------------------

def _rows(arity):
    from gradcli.engine.primitives import TABLE
    return [name for name, row in TABLE.items()
            if row.arity == arity and (not row.is_operator or name == "pow")]


@pytest.mark.parametrize("name", _rows(1))
def test_every_one_argument_row_applies_element_by_element(name):
    """sum(f(w)) at three points of the row's domain: its gradient is f' at each element,
    against mpmath (tests/references.py) at 50 digits."""
    from gradcli.engine.primitives import CALLED
    from references import REFERENCES
    ref = REFERENCES[name]
    lo, hi = ref.span
    values = [f"{lo + (hi - lo) * q:.3f}" for q in (0.2307, 0.5113, 0.7717)]
    r = api.evaluate(f"sum({CALLED.get(name, name)}(w))", {"w": values})
    with mpmath.workdps(50):
        points = [mpmath.mpf(v) for v in values]
        value = sum(ref.mp(t) for t in points)
        slopes = [ref.slope(t) if ref.slope else mpmath.diff(ref.mp, t) for t in points]
    assert float(r.value) == pytest.approx(float(value), rel=1e-13)
    for i, slope in enumerate(slopes):
        assert float(r.gradient[f"w[{i}]"]) == pytest.approx(float(slope), rel=1e-12,
                                                            abs=1e-300), (name, values[i])


@pytest.mark.parametrize("name", _rows(2))
def test_every_two_argument_row_broadcasts(name):
    """sum(f(w, s)) with a vector w and a scalar s (broadcast), and sum(f(s, w))."""
    from gradcli.engine.primitives import CALLED
    from references import REFERENCES
    ref = REFERENCES[name]
    w, s = ["1.3", "2.7", "0.4"], "0.9"
    called = CALLED.get(name, name)
    for source, first_is_w in ((f"sum({called}(w, s))", True), (f"sum({called}(s, w))", False)):
        r = api.evaluate(source, {"w": w, "s": s})
        with mpmath.workdps(50):
            sm = mpmath.mpf(s)
            pairs = [(mpmath.mpf(v), sm) if first_is_w else (sm, mpmath.mpf(v)) for v in w]
            d_first = [mpmath.diff(lambda t: ref.mp(t, b), a) for a, b in pairs]
            d_second = [mpmath.diff(lambda t: ref.mp(a, t), b) for a, b in pairs]
            by_w = d_first if first_is_w else d_second
            by_s = sum(d_second if first_is_w else d_first)
            value = sum(ref.mp(a, b) for a, b in pairs)
        assert float(r.value) == pytest.approx(float(value), rel=1e-13), source
        for i in range(3):
            assert float(r.gradient[f"w[{i}]"]) == pytest.approx(float(by_w[i]), rel=1e-12,
                                                                abs=1e-300), source
        assert float(r.gradient["s"]) == pytest.approx(float(by_s), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("source", ["[1, [2, x]]", "x[0]^2", "(a + b)[1, -1]", "2*X @ w + b",
                                    "X @ (w + b)", "A @ (B @ c)", "-x[0]"])
def test_printed_source_reads_back(source):
    from gradcli.language.printer import to_source
    assert to_source(parse(source)) == source
    assert parse(to_source(parse(source))) == parse(source)


def test_some_elements_of_an_array_stay_elements(run):
    """--wrt w[2]: the one component, under its own name, not a vector of one."""
    result = run("eval", "sum(w^2)", "--at", "w=[1,2,3]", "--wrt", "w[2]")
    assert result.output.splitlines()[1].split() == ["∂f/∂w[2]", "=", "6.000000000000"]
    data = json.loads(run("eval", "sum(w^2)", "--at", "w=[1,2,3]", "--wrt", "w[2]",
                          "--json").output)
    assert data["gradient"] == {"w[2]": 6.0}
