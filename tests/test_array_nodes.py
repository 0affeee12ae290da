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
from gradcli.errors import GradcliError, InputError


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


# -- a program compiled once to array nodes (compile(..., arrays=True)), evaluated many times --

LOGISTIC = "p = sigmoid(X @ w + b); -sum(y*log(p) + (1-y)*log(1-p))"


def _logistic_point(n=200, k=5, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, k))
    w = rng.normal(size=k)
    y = (rng.random(n) < 0.5) * 1.0
    return {"X": X, "w": w, "b": -0.3, "y": y}


def _logistic_reference(at):
    """The loss and its gradient in closed form, NumPy alone: X'(p - y) and sum(p - y)."""
    a = at["X"] @ at["w"] + at["b"]
    p = 1 / (1 + np.exp(-a))
    loss = -np.sum(at["y"] * np.log(p) + (1 - at["y"]) * np.log(1 - p))
    return loss, at["X"].T @ (p - at["y"]), np.sum(p - at["y"])


def _compiled(at, source=LOGISTIC):
    return api.compile(source, {k: np.shape(v) for k, v in at.items() if np.ndim(v)},
                       arrays=True)


def test_a_graph_compiled_to_array_nodes_gives_what_the_text_gives():
    at = _logistic_point()
    graph = _compiled(at)
    assert isinstance(graph, arraynodes.ArrayGraph)
    loss, by_w, by_b = _logistic_reference(at)
    for _ in range(2):  # the same graph, called again
        r = api.evaluate(graph, at, wrt=["w", "b"], float64=True)
        assert r.value == pytest.approx(loss, rel=1e-13)
        assert r.shaped_gradient["w"] == pytest.approx(by_w, rel=1e-12)
        assert r.gradient["b"] == pytest.approx(by_b, rel=1e-12)
    text = api.evaluate(LOGISTIC, at, wrt=["w", "b"], float64=True)
    assert r.source == LOGISTIC and (r.value, r.gradient) == (text.value, text.gradient)
    # certified, the same proven digits from the graph as from the text
    proven = api.evaluate(graph, at, wrt=["w", "b"])
    proven_text = api.evaluate(LOGISTIC, at, wrt=["w", "b"])
    assert proven.value.text == proven_text.value.text
    assert [g.text for g in proven.gradient.values()] == \
        [g.text for g in proven_text.gradient.values()]
    assert float(proven.value) == pytest.approx(loss, rel=1e-13)


def test_a_compiled_graph_at_other_shapes_or_values_that_are_not_finite():
    at = _logistic_point(n=4, k=2)
    graph = _compiled(at)
    with pytest.raises(InputError, match=r"compiled with X of shape \(4, 2\), and the "
                                             r"point gives \(5, 2\)"):
        api.evaluate(graph, {**at, "X": np.ones((5, 2))}, float64=True)
    with pytest.raises(InputError, match=r"compiled with b as a scalar, and the point "
                                             r"gives \(2,\)"):
        api.evaluate(graph, {**at, "b": np.ones(2)}, float64=True)
    squares = api.compile("sum(w^2)", {"w": (2,)}, arrays=True)  # no array in the point
    with pytest.raises(InputError, match=r"compiled with w of shape \(2,\), and the point "
                                         r"gives a scalar"):
        api.evaluate(squares, {"w": 3.0})
    # a value that is not finite: the error the text gives, for the element (relu(-inf) is 0:
    # a finite result would hide it)
    X = at["X"].copy()
    X[2, 1] = np.nan
    words = r"the value of X\[2,1\] is nan, which is not a finite number"
    with pytest.raises(InputError, match=words):
        api.evaluate(graph, {**at, "X": X}, float64=True)
    with pytest.raises(InputError, match=words):
        api.evaluate(LOGISTIC, {**at, "X": X}, float64=True)
    hidden = api.compile("sum(relu(w))", {"w": (2,)}, arrays=True)
    with pytest.raises(InputError, match=r"w\[1\] is -inf, which is not a finite"):
        api.evaluate(hidden, {"w": np.array([1.0, -np.inf])}, float64=True)


def test_the_finite_check_of_a_sum_that_overflows_looks_at_each_element():
    w = np.array([1e308, 1e308, -1e308])  # finite, though their sum overflows
    r = api.evaluate(api.compile("sum(w / 4)", {"w": (3,)}, arrays=True), {"w": w},
                     float64=True)
    assert isinstance(r.graph, arraynodes.ArrayGraph)  # swept on array nodes, not refused
    assert r.value == 2.5e307 and r.shaped_gradient["w"] == [0.25] * 3
    assert arraynodes.finite(w) and not arraynodes.finite(np.array([1e308, np.inf, -np.inf]))


def test_what_array_nodes_leave_goes_to_the_scalar_tape_from_the_graphs_text():
    graph = api.compile("sum(log(w))", {"w": (2,)}, arrays=True)
    with pytest.raises(GradcliError, match=r"log\(-2\) is outside the domain of log"):
        api.evaluate(graph, {"w": [1.0, -2.0]}, float64=True)
    scalar = api.compile("x^2 + x", arrays=True)  # no array value: the scalar tape, certified
    assert api.evaluate(scalar, {"x": 3}).gradient == {"x": 7.0}


@pytest.mark.parametrize("call, words", [
    (lambda g: api.hessian(g, {"w": [1.0, 2.0]}), "taken by evaluate alone"),
    (lambda g: api.evaluate(g, {"w": [1.0, 2.0]}, direction={"w": [1.0, 0.0]}),
     "taken by evaluate alone"),
    (lambda g: api.compile("sum(w); sum(w^2)", {"w": (2,)}, arrays=True), "several"),
    (lambda g: api.compile("sum(w)", {"w": (2,)}, read=True, arrays=True), "no reading"),
])
def test_array_nodes_are_for_evaluate_and_one_output(call, words):
    graph = api.compile("sum(w^2)", {"w": (2,)}, arrays=True)
    with pytest.raises(InputError, match=words):
        call(graph)


def test_sigmoid_on_float64_columns_is_the_two_branch_formula_bit_for_bit():
    """The columns' sigmoid (one array, no branch per element) against the textbook two-branch
    form written here with np.where: the same IEEE operations, so the same bits, tails, ±0, ±inf
    and NaN included; and within a few ulps of mpmath."""
    import mpmath
    from gradcli.engine.primitives import TABLE
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(size=5000) * s for s in (1, 10, 300)] +
                       [[0.0, -0.0, np.inf, -np.inf, np.nan, 745.0, -745.0, 1e-300, -1e-300,
                         5e-324, 36.7, -36.7, 710.0, -710.0]])
    with np.errstate(all="ignore"):
        z = np.exp(-np.abs(x))
        want = np.where(x >= 0, 1 / (1 + z), z / (1 + z))
        got = TABLE["sigmoid"].numpy(np, x)
    assert np.array_equal(got.view(np.int64), want.view(np.int64))
    for v, s in zip(x[::500], got[::500]):
        exact = 1 / (1 + mpmath.exp(-mpmath.mpf(float(v))))
        assert abs(s - float(exact)) <= 4 * np.spacing(float(exact))  # exp, +, / rounded
