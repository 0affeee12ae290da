"""gradcli codegen: the generated code runs and computes what gradcli eval computes.

Each language's code is run as its users would run it: the Python, NumPy and JAX code imported
as a module from a file, the C code compiled with ``cc -std=c99 -O2 -Wall -Wextra -Werror
-pedantic`` and called through ctypes. Values and derivatives are compared with the engine's
(``gradcli eval``, ``gradcli hessian``) at the generated point: equal within 1e-14 relative,
where an entry's scale is the largest magnitude among the terms it sums (the generated NumPy
and JAX code computes sin, exp, … with their own libraries, an ulp or so apart from the C
library's, and a sum that cancels carries that ulp).
"""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
import math
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradcli
from gradcli.api import compile, evaluate_graph, evaluate_hessian, evaluate_jvp
from gradcli.engine.graph import output_names
from gradcli.engine.primitives import TABLE
from gradcli.language.printer import to_source
from gradcli.symbolic.adjoint import build
from strategies import Case, cases, multi_output_cases

CC = shutil.which("cc") or shutil.which("gcc")
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"]
SEED = "log(x)+x*y-sin(y)"
FAST = settings(max_examples=30, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# One program that calls every row of the table (each at a point inside its domain at x=0.3,
# y=0.6, z=1.4), a reassignment and two outputs: what the lint and compile checks read.
EVERY_ROW = "\n".join([
    "a = " + " + ".join(
        f"{name}(x, y)" if p.arity == 2 and not p.symbol else
        {"add": "x + y", "sub": "x - y", "mul": "x * y", "div": "x / y", "neg": "-x",
         "pow": "x ^ y", "acosh": "acosh(z)"}.get(name, f"{name}(x)")
        for name, p in TABLE.items()),
    "a *= x^2 + x^0 + 2^y",
    "a",
    "hypot(a, z) - min(x, 0.3)",
])
POINT = {"x": 0.3, "y": 0.6, "z": 1.4}


# -- running the generated code -------------------------------------------------------------------

def load_module(text: str, directory: pathlib.Path, name: str = "generated"):
    """The generated Python text imported from a file (so tracebacks read its lines)."""
    path = directory / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_c(text: str, directory: pathlib.Path, name: str = "generated") -> ctypes.CDLL:
    source, library = directory / f"{name}.c", directory / f"{name}.so"
    source.write_text(text, encoding="utf-8")
    done = subprocess.run([CC, *CFLAGS, "-shared", "-fPIC", "-o", str(library), str(source),
                           "-lm"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr + text
    return ctypes.CDLL(str(library))


def doubles(values) -> ctypes.Array:
    return (ctypes.c_double * max(1, len(values)))(*values)


def run_reverse(lang: str, source: str, point: dict[str, float], directory) -> tuple:
    """(values, Jacobian rows) from the generated code of ``lang`` at ``point``."""
    graph = compile(source)
    args = [point[name] for name in graph.inputs]
    m, n = graph.n_outputs, len(graph.inputs)
    text = gradcli.codegen(source, lang)
    if lang == "c":
        lib = compile_c(text, directory)
        out, grad = doubles([0.0] * m), doubles([0.0] * (m * n))
        status = lib.f(doubles(args), out, grad)
        assert status == 0, status
        return list(out)[:m], [list(grad)[i * n:(i + 1) * n] for i in range(m)]
    if lang == "numpy":  # two rows: the point, and the point again (a column, not a scalar)
        import numpy as np
        args = [np.array([v, v]) for v in args]
    module = load_module(text, directory, f"generated_{lang}")
    values, gradients = module.f(*args)
    if m == 1:
        values, gradients = (values,), (gradients,)
    rows = [[_scalar(g, lang, n) for g in row] for row in gradients]
    return [_scalar(v, lang, n) for v in values], rows


def _scalar(v, lang: str, n_inputs: int) -> float:
    if lang == "numpy":  # a column of the inputs' shape (a scalar's, with none)
        assert v.shape == ((2,) if n_inputs else ()), v
        assert v.size == 1 or v[0] == v[1]
        v = v.reshape(-1)[0]
    return float(v)


def engine_reverse(source: str, point: dict[str, float]) -> tuple:
    """(values, Jacobian rows, magnitudes) by the engine: each output by evaluate_graph, the
    magnitudes the largest |value| and |contribution| of its sweep (the scale of its sums)."""
    graph = compile(source)
    values, rows, scales = [], [], []
    for i in range(graph.n_outputs):
        result = evaluate_graph(graph.only(i), point)
        values.append(result.value)
        rows.append([result.gradient[name] for name in graph.inputs])
        _, records = result.sweep
        sweep_values = result.values
        scales.append(max([abs(v) for v in sweep_values] +
                          [abs(r.contribution) for r in records] + [1e-300]))
    return values, rows, scales


def assert_close(got: float, want: float, scale: float, lang: str, what: str) -> None:
    """Equal within 1e-14 relative; the code in the C library's functions (Python, C) to the
    entry's own magnitude, NumPy's and JAX's to the scale of the terms it sums."""
    tolerance = 1e-14 * (abs(want) if lang in ("python", "c") else max(abs(want), scale))
    assert abs(got - want) <= tolerance, f"{what}: {got!r} != {want!r} ({lang})"


LANGS = ["python", "numpy", "c", "jax"]


def needs(lang: str) -> None:
    if lang == "c" and CC is None:
        pytest.skip("no C compiler (cc) on PATH")
    if lang == "jax":
        pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")


# -- the property: every language computes what eval computes --------------------------------------

def check_case(lang: str, case: Case) -> None:
    source = to_source(case.program)
    want_values, want_rows, scales = engine_reverse(source, case.point)
    with tempfile.TemporaryDirectory() as directory:
        values, rows = run_reverse(lang, source, case.point, pathlib.Path(directory))
    for j, (got, want) in enumerate(zip(values, want_values)):
        assert_close(got, want, scales[j], lang, f"value {j} of {source!r} at {case.point}")
    for j, (row, want_row) in enumerate(zip(rows, want_rows)):
        for got, want in zip(row, want_row):
            assert_close(got, want, scales[j], lang, f"gradient {j} of {source!r}")


@pytest.mark.parametrize("lang", LANGS)
def test_generated_code_computes_what_eval_computes(lang):
    needs(lang)

    # a compiler run or JAX's first dispatch of each operation per example: fewer of those
    @settings(FAST, max_examples={"c": 15, "jax": 12}.get(lang, 40))
    @given(st.one_of(cases(max_statements=2, max_depth=3), multi_output_cases(max_outputs=3)))
    def prop(case):
        check_case(lang, case)
    prop()


DIRECTION = (0.5, -1.25, 2.0, 0.75)  # the tangent of the 1st, 2nd, ... input


def run_mode(lang: str, source: str, mode: str, point: dict[str, float], directory) -> tuple:
    """Forward mode: (values, derivatives along DIRECTION); hessian: (value, gradient, Hessian
    rows), from the generated code of ``lang``."""
    graph = compile(source)
    args = [point[name] for name in graph.inputs]
    m, n = graph.n_outputs, len(graph.inputs)
    direction = list(DIRECTION[:n])
    text = gradcli.codegen(source, lang, mode)
    if lang == "c":
        lib = compile_c(text, directory)
        if mode == "forward":
            out, dout = doubles([0.0] * m), doubles([0.0] * m)
            assert lib.f(doubles(args), doubles(direction), out, dout) == 0
            return list(out)[:m], list(dout)[:m]
        out, grad, hess = doubles([0.0]), doubles([0.0] * n), doubles([0.0] * (n * n))
        assert lib.f(doubles(args), out, grad, hess) == 0
        return out[0], list(grad)[:n], [list(hess)[i * n:(i + 1) * n] for i in range(n)]
    module = load_module(text, directory, f"generated_{lang}_{mode}")
    if mode == "forward":
        values, derivatives = module.f(*args, *direction)
        if m == 1:
            values, derivatives = (values,), (derivatives,)
        return [float(v) for v in values], [float(d) for d in derivatives]
    value, gradient, hessian = module.f(*args)
    return float(value), [float(g) for g in gradient], [[float(h) for h in row]
                                                        for row in hessian]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("mode", ["forward", "hessian"])
def test_forward_mode_and_the_hessian_compute_what_eval_computes(lang, mode):
    needs(lang)

    @settings(FAST, max_examples={"c": 6, "jax": 6}.get(lang, 20))
    @given(cases(max_statements=2, max_depth=3) if mode == "hessian" else
           st.one_of(cases(max_statements=2, max_depth=3), multi_output_cases(max_outputs=3)))
    def prop(case):
        source = to_source(case.program)
        graph = compile(source)
        _, _, scales = engine_reverse(source, case.point)
        scale = max(scales)
        with tempfile.TemporaryDirectory() as directory:
            got = run_mode(lang, source, mode, case.point, pathlib.Path(directory))
        if mode == "forward":
            want = evaluate_jvp(graph, case.point, dict(zip(graph.inputs, DIRECTION)))
            pairs = [*zip(got[0], want.values.values()), *zip(got[1], want.product.values())]
        else:
            want = evaluate_hessian(graph, case.point)
            pairs = [(got[0], want.value), *zip(got[1], want.gradient.values()),
                     *zip(itertools.chain(*got[2]), itertools.chain(*want.hessian))]
            scale = max([scale, *(abs(h) for row in want.hessian for h in row)])
        for a, b in pairs:
            assert abs(a - b) <= 1e-14 * max(abs(b), scale), (source, case.point, got, want)
    prop()
