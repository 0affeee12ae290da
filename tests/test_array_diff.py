"""diff and codegen with array inputs (issue 41, "Everywhere else").

The printed formulas are read back by gradcli eval with the same inputs and must give the
gradient, against an independent reference: the function written again in NumPy here and
differentiated by central differences in mpmath (50 digits), and the array nodes' float64
sweep. Generated NumPy and JAX code is imported and run, and gives the same gradient.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import mpmath
import numpy as np
import pytest
from test_codegen import compile_c, load_module
from click.testing import CliRunner

from gradcli.api import array_derivatives, jacobian
from gradcli.cli import main
from gradcli.engine import arraynodes

CONSOLE = pathlib.Path(sys.executable).with_name("gradcli")


def _sigmoid(t):
    return 1 / (1 + mpmath.exp(-t))


def _logsumexp(z):
    return mpmath.log(sum(mpmath.exp(v) for v in z))


# (source, shapes, the same function in mpmath over nested lists of mpf, value range)
CASES = [
    ("mean((X @ w - y)^2)", {"X": (3, 2), "w": (2,), "y": (3,)},
     lambda X, w, y: sum((sum(X[i][j] * w[j] for j in range(2)) - y[i]) ** 2
                         for i in range(3)) / 3),
    ("sum(w^2)", {"w": (3,)}, lambda w: sum(v ** 2 for v in w)),
    ("logsumexp(z) - z[2]", {"z": (3,)}, lambda z: _logsumexp(z) - z[2]),
    ("w[0]*w[1]", {"w": (3,)}, lambda w: w[0] * w[1]),
    ("p = sigmoid(X @ w + b); -sum(y*log(p) + (1-y)*log(1-p))",
     {"X": (3, 2), "w": (2,), "y": (3,), "b": ()},
     lambda X, w, y, b: -sum(y[i] * mpmath.log(_sigmoid(X[i][0] * w[0] + X[i][1] * w[1] + b))
                             + (1 - y[i]) * mpmath.log(1 - _sigmoid(X[i][0] * w[0]
                                                                    + X[i][1] * w[1] + b))
                             for i in range(3))),
    ("dot(u, v)", {"u": (3,), "v": (3,)}, lambda u, v: sum(a * b for a, b in zip(u, v))),
    ("sum(A @ B)", {"A": (2, 3), "B": (3, 2)},
     lambda A, B: sum(A[i][k] * B[k][j] for i in range(2) for j in range(2) for k in range(3))),
    ("sum(outer(u, v))", {"u": (3,), "v": (2,)}, lambda u, v: sum(u) * sum(v)),
    ("sum(A, axis=1) @ v", {"A": (3, 2), "v": (3,)},
     lambda A, v: sum((A[i][0] + A[i][1]) * v[i] for i in range(3))),
    ("sum(log_softmax(z))", {"z": (3,)}, lambda z: sum(z) - 3 * _logsumexp(z)),
    ("norm(x)", {"x": (3,)}, lambda x: mpmath.sqrt(sum(v ** 2 for v in x))),
    ("sum(softmax(z) * c)", {"z": (3,), "c": (3,)},
     lambda z, c: sum(mpmath.exp(a) * b for a, b in zip(z, c)) / sum(mpmath.exp(a) for a in z)),
    ("sum(tanh(X @ W1 + b1) @ w2)", {"X": (4, 3), "W1": (3, 2), "b1": (2,), "w2": (2,)},
     lambda X, W1, b1, w2: sum(mpmath.tanh(sum(X[i][k] * W1[k][j] for k in range(3)) + b1[j])
                               * w2[j] for i in range(4) for j in range(2))),
    ("sum(A[:, 0]) + A[1,1] + sum(x[1:3])", {"A": (2, 2), "x": (4,)},
     lambda A, x: A[0][0] + A[1][0] + A[1][1] + x[1] + x[2]),
    ("sum([x, 2*x] @ v)", {"x": (2,), "v": (2,)},
     lambda x, v: 3 * (x[0] * v[0] + x[1] * v[1])),
    ("sum(X' @ v)", {"X": (3, 2), "v": (3,)},
     lambda X, v: sum(X[i][j] * v[i] for i in range(3) for j in range(2))),
    ("sum(mean(A, axis=0)^2)", {"A": (3, 2)},
     lambda A: sum((sum(A[i][j] for i in range(3)) / 3) ** 2 for j in range(2))),
    ("sum(sin(A) * B) + b*sum(A)", {"A": (2, 2), "B": (2,), "b": ()},
     lambda A, B, b: sum(mpmath.sin(A[i][j]) * B[j] + b * A[i][j]
                         for i in range(2) for j in range(2))),
    ("u @ A @ v", {"A": (2, 3), "u": (2,), "v": (3,)},
     lambda A, u, v: sum(u[i] * A[i][j] * v[j] for i in range(2) for j in range(3))),
    ("norm(x, 1) + max(a, b)", {"x": (3,), "a": (), "b": ()},
     lambda x, a, b: sum(abs(v) for v in x) + max(a, b)),
    # vectors of one element, rows and literals indexed
    ("u @ v", {"u": (1,), "v": (1,)}, lambda u, v: u[0] * v[0]),
    ("sum([u, u] * [v])", {"u": (2,), "v": (2,)}, lambda u, v: 2 * (u[0] * v[0] + u[1] * v[1])),
    ("sum(A[0]) + u @ A @ [1, 2]", {"A": (2, 2), "u": (2,)},
     lambda A, u: A[0][0] + A[0][1] + sum(u[i] * (A[i][0] + 2 * A[i][1]) for i in range(2))),
    # contributions merged: two (X @ w) nodes' adjoints, literals added item by item
    ("-mean(y*log(sigmoid(X@w+b)) + (1-y)*log(1-sigmoid(X@w+b)))",
     {"X": (3, 2), "w": (2,), "y": (3,), "b": ()},
     lambda X, w, y, b: -sum(y[i] * mpmath.log(_sigmoid(X[i][0] * w[0] + X[i][1] * w[1] + b))
                             + (1 - y[i]) * mpmath.log(1 - _sigmoid(X[i][0] * w[0]
                                                                    + X[i][1] * w[1] + b))
                             for i in range(3)) / 3),
    ("w[0]*x + 2*w[2] + w[1]*w[0]", {"w": (3,), "x": ()},
     lambda w, x: w[0] * x + 2 * w[2] + w[1] * w[0]),
    ("sum(sin(s*u))/3 + s*sum(u)", {"u": (3,), "s": ()},
     lambda u, s: sum(mpmath.sin(s * v) for v in u) / 3 + s * sum(u)),
]


def _point(shapes: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(0.1, 0.9, shape) if shape else float(rng.uniform(0.1, 0.9))
            for name, shape in shapes.items()}


def _reference(f, shapes: dict, at: dict) -> dict:
    """Each input's gradient by central differences of ``f`` in mpmath, 50 digits."""
    names = list(shapes)
    out = {}
    with mpmath.workdps(50):
        base = {n: (np.asarray(at[n]).tolist() if shapes[n] else at[n]) for n in names}
        h = mpmath.mpf("1e-20")
        for name in names:
            shape = shapes[name]
            grad = np.zeros(shape)
            for index in (np.ndindex(shape) if shape else [()]):
                def moved(step):
                    args = {n: _mp(base[n]) for n in names}
                    if shape:
                        cell = args[name]
                        for i in index[:-1]:
                            cell = cell[i]
                        cell[index[-1]] += step
                    else:
                        args[name] += step
                    return f(*[args[n] for n in names])
                grad[index] = float((moved(h) - moved(-h)) / (2 * h))
            out[name] = grad
    return out


def _mp(value):
    if isinstance(value, list):
        return [_mp(v) for v in value]
    return mpmath.mpf(value)


def _evaluated(text: str, at: dict, shape: tuple) -> np.ndarray:
    """The formula ``text`` evaluated by gradcli eval's engine (certified) at ``at``."""
    result = jacobian(text, at)
    return np.array([float(result.values[o]) for o in result.outputs]).reshape(shape)


@pytest.mark.parametrize("source, shapes, f", CASES, ids=[c[0] for c in CASES])
def test_printed_gradient_evaluates_to_the_gradient(source, shapes, f):
    formulas = array_derivatives(source, shapes)
    assert set(formulas) == set(shapes)
    for seed in (1, 2):
        at = _point(shapes, seed)
        reference = _reference(f, shapes, at)
        swept = arraynodes.evaluate(source, at)[2]
        for name, text in formulas.items():
            got = _evaluated(text, at, shapes[name])
            np.testing.assert_allclose(got, reference[name], rtol=1e-12, atol=1e-12,
                                       err_msg=f"{source}: ∂/∂{name} = {text}")
            np.testing.assert_allclose(got, swept[name], rtol=1e-12, atol=1e-13)


def test_the_classic_losses_print_as_array_formulas():
    shapes = {"X": (3, 2), "w": (2,), "y": (3,)}
    assert array_derivatives("mean((X @ w - y)^2)", shapes, ["w"]) == \
        {"w": "2*(X' @ (X @ w - y))/3"}
    assert array_derivatives("sum(w^2)", {"w": (3,)}) == {"w": "2*w"}
    assert array_derivatives("logsumexp(z) - z[2]", {"z": (3,)}) == \
        {"z": "softmax(z) - [0, 0, 1]"}
    # the logistic loss as the textbook writes it, Xᵀ(p - y)/n (1 - p is sigmoid(-t), and the
    # two sigmoid(X @ w + b) nodes' adjoints are one X' @ (...))
    loss = "-mean(y*log(sigmoid(X@w+b)) + (1-y)*log(1-sigmoid(X@w+b)))"
    assert array_derivatives(loss, {**shapes, "b": ()}, ["w", "b"]) == \
        {"w": "X' @ (sigmoid(X @ w + b) - y)/3", "b": "sum(sigmoid(X @ w + b) - y)/3"}
    assert array_derivatives("w[0]*w[1]", {"w": (3,)}) == {"w": "[w[1], w[0], 0]"}
    assert array_derivatives("w[0]*x + 2*w[2]", {"w": (3,)}, ["w"]) == {"w": "[x, 0, 2]"}


def test_diff_cli_with_shape_and_with_array_values():
    runner = CliRunner()
    r = runner.invoke(main, ["diff", "sum(w^2)", "--shape", "w=3"])
    assert r.exit_code == 0 and r.output == "2*w\n"
    r = runner.invoke(main, ["diff", "sum(w^2)", "--at", "w=[1,2]"])
    assert r.exit_code == 0
    assert r.output.splitlines()[0] == "2*w"
    assert "∂f/∂w[1] = 4.000000000000" in r.output
    r = runner.invoke(main, ["diff", "mean((X @ w - y)^2)", "--shape", "X=3x2,w=2,y=3",
                             "--json"])
    data = json.loads(r.output)
    assert data["shapes"] == {"X": [3, 2], "w": [2], "y": [3]}
    assert set(data["derivatives"]) == {"X", "w", "y"}
    r = runner.invoke(main, ["diff", "sum(w^2)", "--at", "w=[1,2]", "--json"])
    assert json.loads(r.output)["values"] == {"w": [2.0, 4.0]}


def test_several_printed_derivatives_are_one_program_eval_reads():
    runner = CliRunner()
    shapes = {"X": (3, 2), "w": (2,), "y": (3,)}
    r = runner.invoke(main, ["diff", "mean((X @ w - y)^2)", "--shape", "X=3x2,w=2,y=3"])
    assert r.exit_code == 0 and r.output.startswith("# ∂f/∂X\n")
    at = _point(shapes, 3)
    want = arraynodes.evaluate("mean((X @ w - y)^2)", at)[2]
    result = jacobian(r.output, at)
    got = np.array([float(result.values[o]) for o in result.outputs])
    np.testing.assert_allclose(got, np.concatenate([want[n].ravel() for n in "Xwy"]),
                               rtol=1e-12)


@pytest.mark.parametrize("args, words", [
    (["max(z)", "--shape", "z=3"], "max over an array has no array formula"),
    (["prod(z)", "--shape", "z=3"], "prod over an array has no array formula"),
    (["z", "--shape", "z=3"], "its gradient is a Jacobian"),
    (["sum(w^2)", "--shape", "w=3x"], "is not NAME=N or NAME=NxM"),
    (["sum(w^2)", "--shape", "w=3", "--order", "2"], "not there for array inputs"),
    (["sum(w^2)", "--shape", "w=3", "--steps"], "not there for array inputs"),
    (["sum(w^2)", "--shape", "w=3", "--at", "w=[1,2]"], "and --at a value of shape (2,)"),
    (["sum(w^2)", "--shape", "w=3", "--wrt", "v"], "names v, which the expression does not read"),
])
def test_diff_refuses_clearly(args, words):
    r = CliRunner().invoke(main, ["diff", *args])
    assert r.exit_code == 2, r.output
    assert words in r.output
    assert "Traceback" not in r.output
    r = CliRunner().invoke(main, ["diff", *args, "--json"])
    assert r.exit_code == 2
    error = json.loads(r.stdout.splitlines()[0])["error"]
    assert words in error["message"] or words in json.dumps(error, ensure_ascii=False)


def test_refusal_points_at_the_construct():
    r = CliRunner().invoke(main, ["diff", "sum(x) + max(x)", "--shape", "x=3"])
    assert r.exit_code == 2
    lines = r.output.splitlines()
    assert lines[1] == "  sum(x) + max(x)"
    assert lines[2].strip() .startswith("^^^^^^") and lines[2].index("^") == 11


def test_console_script_diff_reads_back_in_eval():
    out = subprocess.run([str(CONSOLE), "diff", "logsumexp(z) - z[2]", "--shape", "z=3"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "softmax(z) - [0, 0, 1]"
    value = subprocess.run([str(CONSOLE), "eval", out, "--at", "z=[1,2,0.5]", "--json",
                            "--float64"], capture_output=True, text=True, check=True).stdout
    z = np.array([1, 2, 0.5])
    want = np.exp(z) / np.exp(z).sum() - [0, 0, 1]
    got = json.loads(value)["values"]
    np.testing.assert_allclose(np.array(list(got.values()), dtype=float), want, rtol=1e-14)
    bad = subprocess.run([str(CONSOLE), "diff", "max(z)", "--shape", "z=3"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no array formula" in bad.stderr + bad.stdout


# -- codegen -----------------------------------------------------------------------------------

CODE_CASES = [c for c in CASES if c[0] not in ("norm(x, 1) + max(a, b)",)] + [
    ("logsumexp(z) - z[2]", {"z": (4,)}, None),
    ("sum(softmax(A, axis=1) * B)", {"A": (2, 3), "B": (2, 3)}, None),
]


@pytest.mark.parametrize("lang", ["numpy", "jax"])
@pytest.mark.parametrize("source, shapes, f", CODE_CASES, ids=[c[0] for c in CODE_CASES])
def test_generated_array_code_gives_evals_gradient(lang, source, shapes, f, tmp_path):
    if lang == "jax":
        pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")
    from gradcli.code.arrays import generate_arrays
    try:
        generated = generate_arrays(source, shapes, lang)
    except Exception as exc:  # a refusal is an input error, named
        from gradcli.errors import InputError
        assert isinstance(exc, InputError) and "array" in str(exc)
        return
    module = load_module(generated.code, tmp_path, f"g_{lang}")
    at = _point(shapes, 5)
    value, gradient = module.f(*[at[n] for n in generated.parameters])
    want_value, want = arraynodes.evaluate(source, at)[1:3]
    assert float(value) == pytest.approx(want_value, rel=1e-13)
    for name, g in zip(generated.wrt, gradient):
        np.testing.assert_allclose(np.asarray(g), want[name], rtol=1e-12, atol=1e-14,
                                   err_msg=f"{source}: ∂/∂{name}")
    pyflakes = pytest.importorskip("pyflakes.api")
    from pyflakes.reporter import Reporter
    import io
    warnings = io.StringIO()
    assert pyflakes.check(generated.code, "generated.py", Reporter(warnings, warnings)) == 0, \
        warnings.getvalue()


@pytest.mark.parametrize("source, shapes, f", CODE_CASES, ids=[c[0] for c in CODE_CASES])
def test_generated_c_array_code_gives_evals_gradient(source, shapes, f, tmp_path):
    import ctypes
    import shutil
    from test_codegen import CC
    if shutil.which(CC) is None:
        pytest.skip("no C compiler")
    from gradcli.code.arrays import generate_arrays
    from gradcli.errors import InputError
    try:
        generated = generate_arrays(source, shapes, "c")
    except InputError as exc:  # a refusal names what C code has not
        assert "array" in str(exc) or "C code" in str(exc)
        return
    lib = compile_c(generated.code, tmp_path, "g")  # -Wall -Wextra -Werror -pedantic
    at = _point(shapes, 7)
    buffers = [np.ascontiguousarray(np.atleast_1d(np.asarray(at[n], dtype=np.float64)))
               for n in generated.parameters]
    value = np.zeros(1)
    grads = [np.zeros(max(1, int(np.prod(shapes[n])))) for n in generated.wrt]
    pointer = ctypes.POINTER(ctypes.c_double)
    status = lib.f(*[b.ctypes.data_as(pointer) for b in buffers + [value] + grads])
    assert status == 0
    want_value, want = arraynodes.evaluate(source, at)[1:3]
    assert value[0] == pytest.approx(want_value, rel=1e-13)
    for name, g in zip(generated.wrt, grads):
        np.testing.assert_allclose(g.reshape(shapes[name]), want[name], rtol=1e-12, atol=1e-14,
                                   err_msg=f"{source}: ∂/∂{name}")


def test_codegen_cli_with_shape(tmp_path):
    r = CliRunner().invoke(main, ["codegen", "mean((X @ w - y)^2)", "--shape", "X=3x2,w=2,y=3",
                                  "--lang", "numpy", "--returns", "dict"])
    assert r.exit_code == 0, r.output
    assert "#     X: (3, 2)" in r.output
    module = load_module(r.output, tmp_path, "cli_numpy")
    X, w, y = np.array([[1, 2], [3, 4], [5, 6.0]]), np.array([0.5, -1]), np.array([1, 2, 3.0])
    value, gradient = module.f(X, w, y)
    np.testing.assert_allclose(gradient["w"], 2 * X.T @ (X @ w - y) / 3, rtol=1e-14)
    np.testing.assert_allclose(gradient["X"], 2 * np.outer(X @ w - y, w) / 3, rtol=1e-14)
    assert value == pytest.approx(np.mean((X @ w - y) ** 2), rel=1e-15)
    r = CliRunner().invoke(main, ["codegen", "sum(w^2)", "--shape", "w=3", "--lang", "c",
                                  "-o", str(tmp_path / "g.c")])
    assert r.exit_code == 0, r.output
    assert "int f(const double *w, double *out, double *grad_w);" in \
        (tmp_path / "g.h").read_text()
    r = CliRunner().invoke(main, ["codegen", "sum(w^2)", "--shape", "w=3", "--mode", "forward"])
    assert r.exit_code == 2 and "reverse" in r.output
    out = subprocess.run([str(CONSOLE), "codegen", "sum(w^3)", "--shape", "w=3", "--lang", "jax"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "jnp.sum" in out.stdout


# -- generated array expressions -----------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SHAPES = {"u": (3,), "v": (3,), "A": (2, 3), "s": ()}
_UNARY = ["sin({})", "exp({})", "tanh({})", "log(1 + ({})^2)", "sigmoid({})", "({})^2",
          "sqrt(1 + ({})^2)", "-({})"]
_BINARY = ["({}) + ({})", "({}) - ({})", "({}) * ({})", "({}) / (2 + sin({}))"]
_VECTOR_LEAVES = ["u", "v", "s*u", "A' @ [s, 1]", "softmax(v)", "u[0]*v", "[u[2], v[1], s]",
                  "(A @ u)[1] + v", "log_softmax(u)"]
_REDUCE = ["sum({})", "logsumexp({})", "norm({})", "dot({}, v)", "mean({}) * s",
           "sum(A @ ({}))", "[1, 2] @ A @ ({})"]


@st.composite
def vector_expressions(draw, depth=3):
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(_VECTOR_LEAVES))
    if draw(st.booleans()):
        return draw(st.sampled_from(_UNARY)).format(draw(vector_expressions(depth - 1)))
    template = draw(st.sampled_from(_BINARY))
    a, b = draw(vector_expressions(depth - 1)), draw(vector_expressions(depth - 1))
    return template.format(a, b, b) if template.count("{}") == 3 else template.format(a, b)


@st.composite
def losses(draw):
    return draw(st.sampled_from(_REDUCE)).format(draw(vector_expressions()))


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(losses())
def test_generated_losses_print_formulas_that_give_the_gradient(source):
    from gradcli.api import evaluate
    from gradcli.symbolic.arrays import NoArrayFormula
    shapes = {name: shape for name, shape in _SHAPES.items()
              if name in source.replace("sum", "").replace("sin", "").replace("sigmoid", "")
              .replace("sqrt", "")}
    graph_inputs = arraynodes.lower(source, {n: s for n, s in shapes.items() if s})
    shapes = {name: _SHAPES[name] for name in graph_inputs.inputs_by_name}
    try:
        formulas = array_derivatives(source, shapes)
    except NoArrayFormula as exc:  # a refusal names the construct
        assert "has no array formula" in str(exc)
        return
    at = _point(shapes, 11)
    swept = arraynodes.evaluate(source, at)[2]
    for name, text in formulas.items():
        got = _evaluated(text, at, shapes[name])
        np.testing.assert_allclose(got, swept[name], rtol=1e-10, atol=1e-12,
                                   err_msg=f"{source}: ∂/∂{name} = {text}")
        # central differences of the value alone, an independent check of the derivative
        h = 1e-6
        numeric = np.zeros(shapes[name])
        for index in (np.ndindex(shapes[name]) if shapes[name] else [()]):
            moved = []
            for step in (h, -h):
                point = {n: np.array(v, dtype=float) if np.ndim(v) else float(v)
                         for n, v in at.items()}
                if shapes[name]:
                    point[name][index] += step
                else:
                    point[name] += step
                moved.append(evaluate(source, point, float64=True).value)
            numeric[index] = (moved[0] - moved[1]) / (2 * h)
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{source}: ∂/∂{name} = {text}")
