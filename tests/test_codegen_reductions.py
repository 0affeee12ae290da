"""codegen of prod, max and min over arrays (issue 41): the generated NumPy, JAX and C code
gives the value and gradient of an independent reference, and what gradcli eval --float64 gives.

The reference is exact (Fractions): a product's derivative by one element is the product of the
others; a max or min over an array is the chain ``max(max(x0, x1), x2) ...`` of the scalar
function, differentiated by the chain rule with the scalar max's derivative by each argument
1/2 at a tie (its definition as (1 + sign(a - b))/2), written out here step by step.
"""

from __future__ import annotations

import ctypes
import itertools
import math
import pathlib
import shutil
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from test_codegen import CC, compile_c, load_module

from gradcli.code.arrays import generate_arrays
from gradcli.engine import arraynodes
from gradcli.errors import InputError

CONSOLE = pathlib.Path(sys.executable).with_name("gradcli")


# -- the exact reference ------------------------------------------------------------------------

def prod_grad(xs):
    """(the product, each element's derivative: the product of the others)."""
    return math.prod(xs), [math.prod(xs[:i] + xs[i + 1:]) for i in range(len(xs))]


def chain_grad(xs, kind):
    """(the max or min, each element's derivative) of the chain ``f(f(x0, x1), x2) ...``:
    forward the running value, then back along the chain, at each step the adjoint of the
    step's result to the running value before it and to the new element: all to the one that
    is the result, half to each at a tie."""
    better = (lambda a, b: a > b) if kind == "max" else (lambda a, b: a < b)
    running = [xs[0]]
    for x in xs[1:]:
        running.append(x if better(x, running[-1]) else running[-1])
    grad = [Fraction(0)] * len(xs)
    adjoint = Fraction(1)  # of the running value after step t
    for t in range(len(xs) - 1, 0, -1):
        prev, cur = running[t - 1], xs[t]
        if cur == prev:
            to_prev, to_cur = Fraction(1, 2), Fraction(1, 2)
        elif better(cur, prev):
            to_prev, to_cur = Fraction(0), Fraction(1)
        else:
            to_prev, to_cur = Fraction(1), Fraction(0)
        grad[t] += adjoint * to_cur
        adjoint *= to_prev
    grad[0] += adjoint
    return running[-1], grad


def columns(A):
    return [list(c) for c in zip(*A)]


def _f(v):
    return [Fraction(x) for x in v]


# (source, the inputs (exact in binary), the reference: inputs -> (value, {name: gradient}))
def _sum_max_columns(A):
    value, grad = 0, [[0] * len(A[0]) for _ in A]
    for j, col in enumerate(columns(A)):
        v, g = chain_grad(_f(col), "max")
        value += v
        for i in range(len(A)):
            grad[i][j] = g[i]
    return value, {"A": grad}


def _prod_rows_at_w(A, w):
    rows = [prod_grad(_f(r)) for r in A]
    value = sum(p * Fraction(wi) for (p, _), wi in zip(rows, w))
    return value, {"A": [[g * Fraction(wi) for g in gs] for (_, gs), wi in zip(rows, w)],
                   "w": [p for p, _ in rows]}


def _max_plus_min(x):
    (a, ga), (b, gb) = chain_grad(_f(x), "max"), chain_grad(_f(x), "min")
    return a + b, {"x": [p + q for p, q in zip(ga, gb)]}


def _min_rows_squared(A):
    value, grad = 0, []
    for r in A:
        v, g = chain_grad(_f(r), "min")
        value += v * v
        grad.append([2 * v * gi for gi in g])
    return value, {"A": grad}


def _prod_whole(A):
    flat = _f([v for r in A for v in r])
    p, g = prod_grad(flat)
    return p, {"A": [g[i * len(A[0]):(i + 1) * len(A[0])] for i in range(len(A))]}


CASES = [
    ("prod(x)", {"x": [3.0, 0.0, -2.0, 5.0]},
     lambda x: (lambda p, g: (p, {"x": g}))(*prod_grad(_f(x)))),
    ("prod(x)", {"x": [0.0, 1.5, 0.0, 2.0]},  # two zeros: every derivative 0
     lambda x: (lambda p, g: (p, {"x": g}))(*prod_grad(_f(x)))),
    ("max(x) + min(x)", {"x": [1.0, 3.0, 3.0, -1.0, 3.0, -1.0]}, _max_plus_min),
    ("max(x) + min(x)", {"x": [2.0, 2.0, 2.0]}, _max_plus_min),  # all tied
    ("sum(max(A, axis=0))", {"A": [[1.0, 4.0, 2.0], [1.0, 0.5, 2.0], [0.0, 4.0, 2.0]]},
     _sum_max_columns),
    ("prod(A, axis=1) @ w", {"A": [[2.0, 0.0, 3.0], [1.5, -2.0, 4.0]], "w": [0.5, -3.0]},
     _prod_rows_at_w),
    ("sum(min(A, axis=1)^2)", {"A": [[1.0, -2.0, -2.0], [0.25, 3.0, 0.25]]}, _min_rows_squared),
    ("prod(A)", {"A": [[1.5, -2.0], [0.0, 4.0]]}, _prod_whole),
    ("max(x)", {"x": [7.0]}, lambda x: (Fraction(x[0]), {"x": [Fraction(1)]})),
]
IDS = [f"{c[0]} at {list(c[1].values())}" for c in CASES]


def _inputs(at):
    return {n: np.asarray(v, dtype=np.float64) for n, v in at.items()}


def _shapes(at):
    return {n: np.shape(v) for n, v in at.items()}


def _exact(got, want):
    """Every element of ``got`` (floats) is the exact ``want`` (Fractions, nested lists)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=object)
    assert got.shape == want.shape
    for g, w in zip(got.ravel(), want.ravel()):
        assert Fraction(float(g)) == w, (got, want)


def _run_python(generated, at, tmp_path, name):
    module = load_module(generated.code, tmp_path, name)
    return module.f(*[at[n] for n in generated.parameters])


def _run_c(generated, at, shapes, tmp_path):
    lib = compile_c(generated.code, tmp_path, "g")  # -Wall -Wextra -Werror -pedantic
    buffers = [np.ascontiguousarray(np.atleast_1d(at[n])) for n in generated.parameters]
    value = np.zeros(1)
    grads = [np.zeros(max(1, int(np.prod(shapes[n])))) for n in generated.wrt]
    pointer = ctypes.POINTER(ctypes.c_double)
    status = lib.f(*[b.ctypes.data_as(pointer) for b in buffers + [value] + grads])
    assert status == 0
    return value[0], [g.reshape(shapes[n]) for n, g in zip(generated.wrt, grads)]


def _run(lang, generated, at, shapes, tmp_path):
    if lang == "c":
        return _run_c(generated, at, shapes, tmp_path)
    return _run_python(generated, at, tmp_path, f"g_{lang}")


def _need(lang):
    if lang == "jax":
        pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")
    if lang == "c" and (CC is None or shutil.which(CC) is None):
        pytest.skip("no C compiler (cc) on PATH")


@pytest.mark.parametrize("lang", ["numpy", "jax", "c"])
@pytest.mark.parametrize("source, point, reference", CASES, ids=IDS)
def test_generated_code_gives_the_exact_gradient(lang, source, point, reference, tmp_path):
    _need(lang)
    at, shapes = _inputs(point), _shapes(point)
    generated = generate_arrays(source, shapes, lang)
    value, gradient = _run(lang, generated, at, shapes, tmp_path)
    want_value, want = reference(*[point[n] for n in generated.parameters])
    assert Fraction(float(value)) == want_value
    for name, g in zip(generated.wrt, gradient):
        _exact(g, want[name])


RANDOM = [
    ("prod(x)", {"x": (7,)}),
    ("max(x) * min(x)", {"x": (6,)}),
    ("sum(max(A, axis=0)) + sum(min(A, axis=1))", {"A": (4, 3)}),
    ("prod(A, axis=1) @ w + sum(prod(A, axis=0))", {"A": (3, 4), "w": (3,)}),
    ("sum(prod(exp(A), axis=1) * max(A, axis=1))", {"A": (3, 2)}),
    ("logsumexp(z) + max(z)", {"z": (5,)}),  # softmax's shift left out, this max kept
]


@pytest.mark.parametrize("lang", ["numpy", "jax", "c"])
@pytest.mark.parametrize("source, shapes", RANDOM, ids=[c[0] for c in RANDOM])
def test_generated_code_computes_what_eval_computes(lang, source, shapes, tmp_path):
    """Away from ties, against the float64 sweep of gradcli eval: within a few ulps (the same
    operations in the same order), and each element's weight the same 0 or 1."""
    _need(lang)
    rng = np.random.default_rng(3)
    at = {n: rng.uniform(-2, 2, s) for n, s in shapes.items()}
    generated = generate_arrays(source, shapes, lang)
    value, gradient = _run(lang, generated, at, shapes, tmp_path)
    want_value, want = arraynodes.evaluate(source, at)[1:3]
    assert float(value) == pytest.approx(want_value, rel=4e-15)
    for name, g in zip(generated.wrt, gradient):
        np.testing.assert_allclose(np.asarray(g), want[name], rtol=4e-15, atol=0,
                                   err_msg=f"{source}: d/d{name}")


def test_ties_split_as_eval_splits_them(tmp_path):
    """At ties, the generated code and gradcli eval give the same shares (the chain's)."""
    source, at = "sum(max(A, axis=1)) + min(x)", {"A": np.array([[1.0, 1.0, 1.0], [0.0, 2.0, 2.0]]),
                                                  "x": np.array([4.0, -1.0, -1.0, -1.0])}
    want = arraynodes.evaluate(source, at)[2]
    for lang in ["numpy", "c"] + (["jax"] if _has("jax") else []):
        if lang == "c" and (CC is None or shutil.which(CC) is None):
            continue
        generated = generate_arrays(source, _shapes(at), lang)
        (tmp_path / lang).mkdir()
        _, gradient = _run(lang, generated, at, _shapes(at), tmp_path / lang)
        for name, g in zip(generated.wrt, gradient):
            assert np.array_equal(np.asarray(g), want[name]), (lang, name, g, want[name])
    # by hand: a row of three tied: 1/4, 1/4, 1/2; [0, 2, 2]: 0, 1/2, 1/2
    assert want["A"].tolist() == [[0.25, 0.25, 0.5], [0.0, 0.5, 0.5]]
    assert want["x"].tolist() == [0.0, 0.25, 0.25, 0.5]


def _has(module):
    import importlib.util
    return importlib.util.find_spec(module) is not None


def test_the_tie_convention_is_the_rows(tmp_path):
    """The shares at a tie are printed from the max row's partials (its _sign), not written
    again in the generated code's algorithm."""
    code = generate_arrays("max(x)", {"x": (3,)}, "numpy").code
    assert "_sign(" in code and "np.maximum.accumulate" in code
    c = generate_arrays("min(x)", {"x": (3,)}, "c").code
    assert "gc_sign(" in c and "gc_min(" in c


def test_c_refuses_an_axis_of_three_dimensions_clearly():
    with pytest.raises(InputError) as caught:
        generate_arrays("sum(max(x, axis=0))", {"x": (2, 2, 2)}, "c")
    assert "--lang numpy" in (caught.value.hint or "") or "numpy" in str(caught.value)


def test_console_script(tmp_path):
    out = subprocess.run([str(CONSOLE), "codegen", "prod(x) + max(x)", "--shape", "x=3",
                          "--lang", "numpy"], capture_output=True, text=True, check=True).stdout
    module = load_module(out, tmp_path, "console")
    value, (g,) = module.f([2.0, 0.0, 2.0])
    p, gp = prod_grad(_f([2.0, 0.0, 2.0]))
    m, gm = chain_grad(_f([2.0, 0.0, 2.0]), "max")
    assert Fraction(float(value)) == p + m
    _exact(g, [a + b for a, b in zip(gp, gm)])


def test_generated_python_is_clean():
    pyflakes = pytest.importorskip("pyflakes.api")
    from pyflakes.reporter import Reporter
    import io
    for (source, point, _), lang in itertools.product(CASES, ["numpy", "jax"]):
        code = generate_arrays(source, _shapes(point), lang).code
        warnings = io.StringIO()
        assert pyflakes.check(code, "generated.py", Reporter(warnings, warnings)) == 0, \
            warnings.getvalue()


def test_cli_writes_c_for_an_axis(tmp_path):
    from click.testing import CliRunner
    from gradcli.cli import main
    _need("c")
    r = CliRunner().invoke(main, ["codegen", "sum(max(A, axis=0))", "--shape", "A=3x2",
                                  "--lang", "c"])
    assert r.exit_code == 0, r.output
    lib = compile_c(r.stdout, tmp_path, "cli")
    A = [[1.0, 5.0], [3.0, 5.0], [3.0, -1.0]]  # column 0: 3 tied at the end; column 1: 5, 5
    flat = np.ascontiguousarray(np.array(A).ravel())
    value, grad = np.zeros(1), np.zeros(6)
    pointer = ctypes.POINTER(ctypes.c_double)
    assert lib.f(flat.ctypes.data_as(pointer), value.ctypes.data_as(pointer),
                 grad.ctypes.data_as(pointer)) == 0
    want_value, want = _sum_max_columns(A)
    assert Fraction(value[0]) == want_value
    _exact(grad.reshape(3, 2), want["A"])
