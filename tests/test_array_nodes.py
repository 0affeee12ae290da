"""--float64 on array nodes (gradcli.engine.arraynodes): one node per array operation, swept in
NumPy. For generated array expressions, its value and gradient agree with the certified scalar
tape's to 1e-12 and with central differences of an independent NumPy reference; the API, the
command line and the console script take that road, and fall back to the scalar tape where it
words an error.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest

from gradcli import api
from gradcli.engine import arraynodes


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


# expressions of shape (3,) over A (3, 2), u (2,), v (3,), s (); each (source, NumPy function)
def _vector(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        return rng.choice([("v", lambda e: e["v"]), ("A @ u", lambda e: e["A"] @ e["u"]),
                           ("A[:, 1]", lambda e: e["A"][:, 1]),
                           ("max(A, axis=1)", lambda e: e["A"].max(axis=1)),
                           ("sum(A, axis=-1)", lambda e: e["A"].sum(axis=1))])
    src, f = _vector(rng, depth - 1)
    kind = rng.randrange(7)
    if kind == 0:
        name, g = rng.choice([("sin", np.sin), ("tanh", np.tanh), ("exp", np.exp),
                              ("sigmoid", lambda x: 1 / (1 + np.exp(-x)))])
        return f"{name}({src})", lambda e: g(f(e))
    if kind == 1:
        other, o = rng.choice([("v", lambda e: e["v"]), ("s", lambda e: e["s"]),
                               ("[1, -2, 0.5]", lambda e: np.array([1, -2, 0.5]))])
        op = rng.choice(["+", "-", "*"])
        fn = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
        return f"({src} {op} {other})", lambda e: fn(f(e), o(e))
    if kind == 2:
        return f"softmax({src})", lambda e: _softmax(f(e))
    if kind == 3:
        return f"log_softmax({src})", lambda e: np.log(_softmax(f(e)))
    if kind == 4:
        return f"A @ (A' @ {src})", lambda e: e["A"] @ (e["A"].T @ f(e))
    if kind == 5:
        return f"[({src})[2], ({src})[0], s]", lambda e: np.array([f(e)[2], f(e)[0], e["s"]])
    return f"sum(outer({src}, u), axis=1)", lambda e: np.outer(f(e), e["u"]).sum(axis=1)


REDUCE = [("sum", np.sum), ("mean", np.mean), ("norm", np.linalg.norm),
          ("logsumexp", lambda x: x.max() + np.log(np.exp(x - x.max()).sum())),
          ("max", np.max), ("prod", np.prod), ("dot(v, {})", lambda x: None)]


def _generated(seed):
    rng = random.Random(seed)
    src, f = _vector(rng, 3)
    name, g = rng.choice(REDUCE)
    if name.startswith("dot"):
        return f"dot(v, {src})", lambda e: e["v"] @ f(e)
    return f"{name}({src})", lambda e: g(f(e))


POINT = {"A": np.array([[0.5, -0.25], [0.3, 0.8], [-0.6, 0.1]]), "u": np.array([0.9, -0.4]),
         "v": np.array([0.3, -0.7, 1.1]), "s": 0.7}


@pytest.mark.parametrize("seed", range(30))
def test_generated_expressions_against_the_certified_tape_and_differences(seed):
    src, f = _generated(seed)
    nodes = api.evaluate(src, POINT, float64=True)
    assert isinstance(nodes.graph, arraynodes.ArrayGraph), src
    certified = api.evaluate(src, POINT)
    assert nodes.value == pytest.approx(float(certified.value), rel=1e-12, abs=1e-14), src
    assert nodes.value == pytest.approx(float(f(POINT)), rel=1e-12, abs=1e-14), src
    assert list(nodes.gradient) == list(certified.gradient)
    for name, value in POINT.items():
        shape = np.shape(value)
        for index in np.ndindex(*shape) if shape else [()]:
            element = name + (f"[{','.join(map(str, index))}]" if shape else "")
            got = nodes.gradient.get(element, 0.0)
            assert got == pytest.approx(float(certified.gradient.get(element, 0.0)),
                                        rel=1e-12, abs=1e-14), (src, element)
            h = 1e-6
            plus, minus = ({k: np.array(v, dtype=float) for k, v in POINT.items()}
                           for _ in range(2))
            if shape:
                plus[name][index] += h
                minus[name][index] -= h
            else:
                plus[name], minus[name] = value + h, value - h
            numeric = (f(plus) - f(minus)) / (2 * h)
            assert got == pytest.approx(float(numeric), rel=1e-6, abs=1e-8), (src, element)


def test_logistic_loss_against_its_closed_form():
    """∇w of the logistic loss is Xᵀ(p - y), ∂b is Σ(p - y)."""
    rng = np.random.default_rng(3)
    X, w, y = rng.normal(size=(200, 5)), rng.normal(size=5), (rng.random(200) < 0.5) * 1.0
    r = api.evaluate("p = sigmoid(X @ w + b); -sum(y*log(p) + (1-y)*log(1-p))",
                     {"X": X, "w": w, "b": 0.25, "y": y}, wrt=["w", "b"], float64=True)
    p = 1 / (1 + np.exp(-(X @ w + 0.25)))
    assert isinstance(r.graph, arraynodes.ArrayGraph)
    assert r.value == pytest.approx(-(y * np.log(p) + (1 - y) * np.log(1 - p)).sum(), rel=1e-13)
    assert r.shaped_gradient["w"] == pytest.approx(X.T @ (p - y), rel=1e-12)
    assert r.shaped_gradient["b"] == pytest.approx((p - y).sum(), rel=1e-12)


def test_ties_of_max_follow_the_rows_convention():
    """max(x) at a three-way tie: the scalar tape's chain max(max(a, b), c) gives 1/4, 1/4,
    1/2; the array node reads the same rows."""
    r = api.evaluate("max(x) + min(x, axis=0)", {"x": [2.0, 2.0, 2.0]}, float64=True)
    assert isinstance(r.graph, arraynodes.ArrayGraph)
    assert r.shaped_gradient["x"] == [0.5, 0.5, 1.0]
    certified = api.evaluate("max(x) + min(x, axis=0)", {"x": [2.0, 2.0, 2.0]})
    assert [float(v) for v in certified.shaped_gradient["x"]] == [0.5, 0.5, 1.0]


def test_memory_is_proportional_to_the_arrays():
    """One node per operation: the logistic loss of a 1000 × 20 X is 12 nodes, not 40,000."""
    graph = arraynodes.lower("p = sigmoid(X @ w + b); -sum(y*log(p) + (1-y)*log(1-p))",
                             {"X": (1000, 20), "w": (20,), "y": (1000,)})
    assert len(graph) < 25
    assert graph.shapes[graph.args[graph.output][0]] in ((), (1000,))


@pytest.mark.parametrize("source, at", [
    ("sum(log(w))", {"w": [1.0, -2.0]}),  # a domain error: the scalar tape words it
    ("softmax(w)", {"w": [1.0, 2.0]}),  # an array output: the Jacobian
    ("sum(w); sum(w^2)", {"w": [1.0, 2.0]}),  # several outputs
])
def test_the_scalar_tape_takes_what_array_nodes_leave(source, at):
    assert api.on_array_nodes(source, at, None, 1.0) is None


def test_a_scalar_program_does_not_import_numpy():
    code = ("import sys; from gradcli import api; api.evaluate('x^2', {'x': 3}, float64=True);"
            "print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_cli_float64_on_array_nodes(run, reported):
    result = run("eval", "loss = mean((X @ w - y)^2)", "--at",
                 "X=[[1,2],[3,4],[5,6]],w=[0.5,-1],y=[1,2,3]", "--float64", "--wrt", "w",
                 "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    X, w, y = np.array([[1, 2], [3, 4], [5, 6.0]]), np.array([0.5, -1]), np.array([1, 2, 3.0])
    assert data["value"] == pytest.approx(((X @ w - y) ** 2).mean(), rel=1e-15)
    assert data["gradient"]["w"] == pytest.approx(2 * X.T @ (X @ w - y) / 3, rel=1e-15)
    assert data["certified"] is False and data["shapes"]["X"] == [3, 2]
    text = run("eval", "loss = sum(w^2)", "--at", "w=[1,2]", "--float64")
    assert text.exit_code == 0 and text.output.startswith("loss = 5.0")
    reported(run("eval", "sum(log(w))", "--at", "w=[1,-2]", "--float64"), 2,
             ["log(-2) is outside the domain of log"])


def test_console_script_float64_on_array_nodes(gradcli_script, tmp_path):
    out = subprocess.run([gradcli_script, "eval", "logsumexp(z) - z[1]", "--at",
                          "z=[1000,1001,999]", "--float64", "--json"], capture_output=True,
                         text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    z = np.array([1000.0, 1001.0, 999.0])
    expected = _softmax(z) - [0, 1, 0]
    assert json.loads(out.stdout)["gradient"]["z"] == pytest.approx(expected, rel=1e-14)


def test_array_nodes_keep_the_points_limits(monkeypatch):
    """An array input past GRADCLI_MAX_ELEMENTS is the LimitError the scalar tape's point gives;
    an empty one, the point's InputError."""
    from gradcli.errors import InputError, LimitError
    monkeypatch.setenv("GRADCLI_MAX_ELEMENTS", "10")
    with pytest.raises(LimitError, match="20 elements"):
        api.evaluate("sum(w)", {"w": np.ones(20)}, float64=True)
    with pytest.raises(InputError, match="empty array"):
        api.evaluate("sum(w)", {"w": []}, float64=True)
