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
import unicodedata

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import gradcli
from gradcli.api import compile, evaluate, hessian, jvp
from gradcli.engine.primitives import TABLE
from gradcli.errors import LimitError
from gradcli.language.printer import to_source
from strategies import Case, cases, multi_output_cases

CC = shutil.which("cc") or shutil.which("gcc")
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"]
SEED = "log(x)+x*y-sin(y)"
FAST = settings(max_examples=30, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# Rows whose derivative no row of the table writes: trigamma's is ψ'' (computed numerically by
# eval), so code for its gradient is a LimitError, and for digamma's Hessian too.
NO_GRADIENT = {"trigamma"}
NO_HESSIAN = {"digamma", "trigamma"}


def every_row(skip: set[str] = NO_GRADIENT) -> str:
    """One program that calls every row of the table but ``skip`` (each at a point inside its
    domain at x=0.3, y=0.6, z=1.4), a reassignment and two outputs: what the lint and compile
    checks read."""
    return "\n".join([
        "a = " + " + ".join(
            f"{name}(x, y)" if p.arity == 2 and not p.symbol else
            {"add": "x + y", "sub": "x - y", "mul": "x * y", "div": "x / y", "neg": "-x",
             "pow": "x ^ y", "acosh": "acosh(z)"}.get(name, f"{name}(x)")
            for name, p in TABLE.items() if name not in skip),
        "a *= x^2 + x^0 + 2^y",
        "a",
        "hypot(a, z) - min(x, 0.3)",
    ])


EVERY_ROW = every_row()
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
    """(values, Jacobian rows, magnitudes) by the engine: each output by evaluate, the
    magnitudes the largest |value| and |contribution| of its sweep (the scale of its sums)."""
    graph = compile(source)
    values, rows, scales = [], [], []
    for i in range(graph.n_outputs):
        result = evaluate(graph.only(i), point, float64=True)  # code computes in float64
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
        reject_rows(case, NO_GRADIENT)
        check_case(lang, case)
    prop()


def reject_rows(case: Case, rows: set[str]) -> None:
    """Hypothesis skips a program that calls one of ``rows`` (no code for its derivative)."""
    if any(p.name in rows for p in compile(to_source(case.program)).ops):
        reject()


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
        reject_rows(case, NO_HESSIAN if mode == "hessian" else NO_GRADIENT)
        source = to_source(case.program)
        graph = compile(source)
        _, _, scales = engine_reverse(source, case.point)
        scale = max(scales)
        with tempfile.TemporaryDirectory() as directory:
            got = run_mode(lang, source, mode, case.point, pathlib.Path(directory))
        if mode == "forward":
            want = jvp(graph, case.point, dict(zip(graph.inputs, DIRECTION)), float64=True)
            pairs = [*zip(got[0], want.values.values()), *zip(got[1], want.product.values())]
        else:
            want = hessian(graph, case.point, float64=True)  # the code computes in float64
            pairs = [(got[0], want.value), *zip(got[1], want.gradient.values()),
                     *zip(itertools.chain(*got[2]), itertools.chain(*want.hessian))]
            scale = max([scale, *(abs(h) for row in want.hessian for h in row)])
        for a, b in pairs:
            assert abs(a - b) <= 1e-14 * max(abs(b), scale), (source, case.point, got, want)
    prop()


# -- the seed, bit for bit ----------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["python", "c"])
def test_the_seed_gradient_is_evals_to_the_last_bit(lang, tmp_path):
    # the same operations in the same order on the same C library: the same bits
    needs(lang)
    values, rows = run_reverse(lang, SEED, {"x": 2.0, "y": 3.0}, tmp_path)
    result = gradcli.evaluate(SEED, {"x": 2.0, "y": 3.0}, float64=True)  # the same float64
    assert values == [result.value] and rows == [[result.gradient["x"], result.gradient["y"]]]


def test_the_code_is_the_tape_one_statement_per_node_and_per_contribution():
    text = gradcli.codegen(SEED)
    assert "        v2 = x * y  # v2 = x * y\n" in text
    assert "        vb_x += vb2 * y  # vb_x += vb2 * ∂v2/∂x\n" in text
    trace = gradcli.evaluate(SEED, {"x": 2.0, "y": 3.0}).trace
    statements = [line for line in text.splitlines() if "  # v" in line]
    assert len(statements) == len(trace.forward) - 2 + 1 + len(trace.contributions)  # +1: seed


# -- clean code: compiles, no warnings -------------------------------------------------------------

def _hessian_source() -> str:
    """EVERY_ROW with one output (the Hessian's), without the rows whose second derivative has
    no code."""
    return every_row(NO_HESSIAN).replace("\na\n", "\n")


MODES = [("reverse", False), ("forward", False), ("hessian", False), ("hessian", True)]


@pytest.mark.parametrize("lang", ["python", "numpy", "jax"])
@pytest.mark.parametrize("mode,hvp", MODES)
def test_generated_python_passes_pyflakes_and_ruff(lang, mode, hvp, tmp_path):
    pyflakes = pytest.importorskip("pyflakes.api")
    from pyflakes.reporter import Reporter
    import io
    source = _hessian_source() if mode == "hessian" else EVERY_ROW
    text = gradcli.codegen(source, lang, mode, hvp=hvp)
    builtins_compile = __builtins__["compile"] if isinstance(__builtins__, dict) else \
        __builtins__.compile
    builtins_compile(text, "generated.py", "exec")  # what python -m py_compile does
    warnings = io.StringIO()
    assert pyflakes.check(text, "generated.py", Reporter(warnings, warnings)) == 0, \
        warnings.getvalue()
    ruff = shutil.which("ruff")
    if ruff:  # the default rules and more: the imports sorted, no bugbear
        path = tmp_path / "generated.py"
        path.write_text(text, encoding="utf-8")
        done = subprocess.run([ruff, "check", "--isolated", "--no-cache", "--select",
                               "E,F,W,B,I", "--ignore", "E501", str(path)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout


@pytest.mark.parametrize("mode,hvp", MODES)
def test_generated_c_compiles_with_every_warning_an_error(mode, hvp, tmp_path):
    needs("c")
    source = _hessian_source() if mode == "hessian" else EVERY_ROW
    (tmp_path / "f.h").write_text(gradcli.codegen(source, "c", mode, hvp=hvp, header=True))
    (tmp_path / "f.c").write_text('#include "f.h"\n' + gradcli.codegen(source, "c", mode,
                                                                       hvp=hvp))
    done = subprocess.run([CC, *CFLAGS, "-c", "f.c", "-o", "f.o"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_code_for_trigammas_derivative_is_a_limit_error_saying_why():
    with pytest.raises(LimitError, match="derivative of trigamma"):
        gradcli.codegen("trigamma(x) + x")
    with pytest.raises(LimitError, match="derivative of trigamma"):
        gradcli.codegen("digamma(x)*y", mode="hessian")
    assert "trigamma" in gradcli.codegen("digamma(x)*y")  # its derivative: trigamma's value


def test_every_row_in_every_language_computes_what_eval_computes(tmp_path):
    # the catalogue program, run: every row's spelling and helper in each language
    want_values, want_rows, scales = engine_reverse(EVERY_ROW, POINT)
    for lang in ["python", "numpy", "c"] + (["jax"] if _has_jax() else []):
        if lang == "c" and CC is None:
            continue
        values, rows = run_reverse(lang, EVERY_ROW, POINT, tmp_path)
        for got, want, scale in zip(values + sum(rows, []), want_values + sum(want_rows, []),
                                    scales + [s for s, row in zip(scales, rows) for _ in row]):
            assert_close(got, want, scale, lang, f"{lang}: every row")


def _has_jax() -> bool:
    return importlib.util.find_spec("jax") is not None


# -- failures: each language's own, naming the node --------------------------------------------

FAILURES = [  # (source, point, the node eval names, Python's exception and message, C's status)
    ("log(x)", {"x": -1.0}, "v1", ValueError, "v1 = log(x): math domain error", 1),
    ("x + 1/(x - 2)", {"x": 2.0}, "v2", ValueError, "v2 = 1 / v1: float division by zero", 2),
    ("exp(x)*exp(x)", {"x": 400.0}, "v3", OverflowError, "v3 is inf", 3),
    ("exp(x)", {"x": 1000.0}, "v1", OverflowError, "v1 = exp(x): math range error", 1),
    ("sqrt(x)", {"x": 0.0}, "v1", ValueError, "vb_x = vb1 * ∂v1/∂x: float division by zero",
     -1),
]


@pytest.mark.parametrize("source,point,node,error,words,status", FAILURES)
def test_a_failure_names_the_node_eval_names(source, point, node, error, words, status,
                                             tmp_path, run):
    result = run("eval", source, "--at", ",".join(f"{k}={v}" for k, v in point.items()),
                 "--float64")  # the generated code computes in float64, as eval --float64
    assert result.exit_code in (1, 2) and f"{node}" in result.stderr
    module = load_module(gradcli.codegen(source), tmp_path)
    with pytest.raises(error) as raised:
        module.f(*point.values())
    assert words in str(raised.value) and node in str(raised.value)
    if CC is None:
        return
    lib = compile_c(gradcli.codegen(source, "c"), tmp_path)
    out, grad = doubles([0.0]), doubles([0.0])
    assert lib.f(doubles(list(point.values())), out, grad) == status
    assert math.isnan(out[0]) and math.isnan(grad[0])


def test_numpy_code_gives_nan_in_the_rows_that_fail(tmp_path):
    np = pytest.importorskip("numpy")
    module = load_module(gradcli.codegen("log(x)*y", "numpy"), tmp_path)
    value, (dx, dy) = module.f(np.array([1.0, -1.0]), 3.0)
    assert value[0] == 0.0 and dx[0] == 3.0 and math.isnan(value[1]) and math.isnan(dx[1])


# -- kinks: eval's subgradients ------------------------------------------------------------------

KINKS = [("abs(x)", {"x": 0.0}), ("relu(x)", {"x": 0.0}), ("max(x, y)", {"x": 1.0, "y": 1.0}),
         ("min(x, y)", {"x": 1.0, "y": 1.0}), ("sign(x)*y", {"x": 0.0, "y": 2.0}),
         ("x^y", {"x": 0.0, "y": 2.0}), ("x^y", {"x": 2.0, "y": 0.0}), ("x^0 + 0^x", {"x": 1.5})]


@pytest.mark.parametrize("source,point", KINKS)
@pytest.mark.parametrize("lang", LANGS)
def test_kinks_take_evals_subgradient(lang, source, point, tmp_path):
    needs(lang)
    want_values, want_rows, _ = engine_reverse(source, point)
    assert run_reverse(lang, source, point, tmp_path) == (want_values, want_rows)


# -- names: inputs that are the generated code's own words -------------------------------------

def test_inputs_named_like_the_codes_own_variables_are_renamed(tmp_path):
    source = "v1*vb_x + math*in + θ*x - shape"
    point = {"v1": 1.5, "vb_x": 2.0, "math": 0.5, "in": 3.0, "θ": 0.25, "x": 4.0, "shape": 1.0}
    want_values, want_rows, _ = engine_reverse(source, point)
    for lang in ["python", "numpy"] + (["c"] if CC else []):
        assert run_reverse(lang, source, point, tmp_path) == (want_values, want_rows), lang


# -- size: linear in the tape, where the symbolic derivative swells ------------------------------

def _family(name: str, n: int) -> str:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "benchmarks"))
    from families import FAMILIES
    return FAMILIES[name](n)


@pytest.mark.parametrize("family", ["wide", "deep", "shared"])
def test_the_code_grows_linearly_with_the_tape(family):
    ratios = []
    for n in (100, 1000):
        source = _family(family, n)
        lines = gradcli.codegen(source, "c").count("\n")
        ratios.append(lines / len(compile(source).ops))
    assert ratios[1] <= 1.1 * ratios[0] and ratios[1] < 5, ratios  # lines per node stay put


# -- the faces: the CLI, the console script, JAX's jit ------------------------------------------

def test_cli_prints_the_api_text_and_writes_c_with_its_header(run, tmp_path, monkeypatch):
    result = run("codegen", SEED, "--lang", "numpy", "--mode", "forward")
    assert result.exit_code == 0 and result.output == gradcli.codegen(SEED, "numpy", "forward")
    monkeypatch.chdir(tmp_path)
    result = run("codegen", SEED, "--lang", "c", "--name", "grad_seed", "-o", "seed.c")
    assert result.exit_code == 0 and result.output == ""
    assert (tmp_path / "seed.c").read_text() == gradcli.codegen(SEED, "c", name="grad_seed")
    header = (tmp_path / "seed.h").read_text()
    assert "int grad_seed(const double *in, double *out, double *grad);" in header
    assert "in[0] = x, in[1] = y" in header


def test_cli_reads_a_file_and_standard_input_and_names_the_function(run, tmp_path,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.grad").write_text("a = x*y\nsin(a); a^2\n", encoding="utf-8")
    from_file = run("codegen", "-f", "model.grad", "--name", "model", "--mode", "forward")
    assert from_file.output == gradcli.codegen("a = x*y\nsin(a); a^2\n", mode="forward",
                                               name="model")
    assert "def model(x, y, vd_x, vd_y):" in from_file.output
    piped = run("codegen", "-", "--mode", "hessian", "--name", "g", input="x^2*y\n")
    assert "def g_hvp(x, y, vd_x, vd_y):" in piped.output and "def g(x, y):" in piped.output


@pytest.mark.parametrize("args,words", [
    (["x*y", "--lang", "fortran"], ["'fortran' is not one of"]),
    (["x*y", "--name", "2f"], ["--name", "'2f' is not a function name"]),
    (["x*y", "--mode", "forward", "--hvp"], ["--hvp", "goes with the Hessian"]),
    (["x; y", "--mode", "hessian"], ["hessian is of one output"]),
    (["log(x"], ["never closed"]),
    ([], ["no expression given"]),
])
def test_bad_input_is_a_clear_error_exit_2(run, reported, args, words):
    reported(run("codegen", *args), 2, words)


def test_console_script_prints_the_code(gradcli_script):
    done = subprocess.run([gradcli_script, "codegen", SEED, "--lang", "c"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == gradcli.codegen(SEED, "c")


def test_jax_code_jits(tmp_path):
    pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")
    import jax
    module = load_module(gradcli.codegen(SEED, "jax"), tmp_path, "generated_jit")
    value, (dx, dy) = jax.jit(module.f)(2.0, 3.0)
    result = gradcli.evaluate(SEED, {"x": 2.0, "y": 3.0}, float64=True)
    for got, want in [(value, result.value), (dx, 3.5), (dy, result.gradient["y"])]:
        assert abs(float(got) - want) <= 1e-14 * abs(want)


def test_numpy_code_over_columns_is_the_batch_engine(tmp_path):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(7)
    x, y = rng.uniform(0.1, 4.0, 1000), rng.uniform(-4.0, 4.0, 1000)
    module = load_module(gradcli.codegen(SEED, "numpy"), tmp_path)
    value, (dx, dy) = module.f(x, y)
    batch = gradcli.evaluate_batch(SEED, {"x": x, "y": y})
    scale = np.abs(x * y) + 2  # the terms summed: log x, x·y, sin y
    assert np.all(np.abs(value - batch.values) <= 1e-14 * scale)
    assert np.array_equal(dx, batch.gradient["x"])
    assert np.all(np.abs(dy - batch.gradient["y"]) <= 1e-14 * (np.abs(x) + 1))


# -- names: adversarial inputs and function names, in every language ------------------------------

# Inputs that are the code's own names, or become them in the language: after Python's NFKC
# (ｖ１ is v1, 𝑥 is x, ﬁ is fi), C's macros and library names, keywords, builtins, the renamed
# inputs' own prefixes (u_, u0_) and the functions' names
ADVERSARIAL = ["ｖ１", "v1", "ｍａｔｈ", "math", "ｎｐ", "np", "𝑥", "x", "ﬁ", "fi", "gc_fail",
               "GC_FAIL", "HUGE_VAL", "FP_NAN", "NAN", "F_INPUTS", "vb_x", "vd_x", "u_v1", "u0_",
               "u1_v1", "_finite", "_STATEMENTS", "None", "True", "class", "int", "main", "in",
               "i", "count", "shape", "INPUTS", "float", "isfinite", "printf", "dict", "zip",
               "θ", "row1", "f", "f_hvp", "f_points", "exc", "jnp", "jax", "value", "_"]
# each name times the next (every partial derivative a different number) and the issue's log
ADVERSARIAL_SOURCE = "log(x)*ｖ１ + " + " + ".join(
    f"{a}*{b}" for a, b in zip(ADVERSARIAL, ADVERSARIAL[1:]))
ADVERSARIAL_POINT = {name: 1.0 + k / 8 for k, name in enumerate(ADVERSARIAL)}


@pytest.mark.parametrize("lang", LANGS)
def test_adversarial_input_names_compute_what_eval_computes(lang, tmp_path):
    needs(lang)
    want_values, want_rows, scales = engine_reverse(ADVERSARIAL_SOURCE, ADVERSARIAL_POINT)
    values, rows = run_reverse(lang, ADVERSARIAL_SOURCE, ADVERSARIAL_POINT, tmp_path)
    for got, want in zip(values + rows[0], want_values + want_rows[0]):
        assert_close(got, want, scales[0], lang, "adversarial names")


@pytest.mark.parametrize("lang", ["python", "c"])
def test_adversarial_input_names_in_the_hessian(lang, tmp_path):
    needs(lang)
    source = "log(x)*ｖ１*𝑥 + vd_x*x^2 + u0_*θ*ﬁ + fi*v1 + vbx*vbdx*vdx + sin(vbx)"
    point = {name: 1.0 + k / 8 for k, name in enumerate(compile(source).inputs)}
    value, gradient, hessian_rows = run_mode(lang, source, "hessian", point, tmp_path)
    want = hessian(compile(source), point, float64=True)
    assert abs(value - want.value) <= 1e-14 * abs(want.value)
    for got, exact in zip([*gradient, *itertools.chain(*hessian_rows)],
                          [*want.gradient.values(), *itertools.chain(*want.hessian)]):
        assert abs(got - exact) <= 1e-14 * max(1.0, abs(exact))


def test_renamed_inputs_are_distinct_and_none_is_the_codes_own():
    from gradcli.code import names
    for lang in ["python", "c"]:
        variables = names.variables(ADVERSARIAL, lang, "f")
        spelled = [unicodedata.normalize("NFKC", v) for v in variables.values()]
        assert len(set(spelled)) == len(ADVERSARIAL), variables
        assert not [v for v in spelled if names.own(v, lang, "f")]
        if lang == "c":
            assert all(v.isascii() and v.isidentifier() for v in spelled)
    assert names.variables(["ｖ１", "v1", "θ"], "python", "f") == \
        {"ｖ１": "u0_v1", "v1": "u_v1", "θ": "θ"}
    assert names.variables(["θ", "NAN"], "c", "f") == {"θ": "u0_", "NAN": "u_NAN"}


@FAST
@given(st.lists(st.from_regex(r"[^\W\d]\w{0,3}", fullmatch=True), unique=True, max_size=8),
       st.sampled_from(["python", "c"]))
def test_any_inputs_get_distinct_variables_the_code_does_not_use(inputs, lang):
    from gradcli.code import names
    spelled = [unicodedata.normalize("NFKC", v)
               for v in names.variables(inputs, lang, "f").values()]
    assert len(set(spelled)) == len(inputs)
    for v in spelled:
        assert v.isidentifier() and not names.own(v, lang, "f"), v
        assert v.isascii() or lang != "c", v


REFUSED_NAMES = [("python", n) for n in ["return", "None", "True", "class", "math", "_finite",
                                          "dict", "INPUTS", "u_x", "v1", "ｆ"]] + \
    [("c", n) for n in ["int", "main", "sin", "printf", "NAN", "isfinite", "gc_fail", "i",
                        "count", "HUGE_VAL", "u0_x"]]


@pytest.mark.parametrize("lang,name", REFUSED_NAMES)
def test_a_function_name_the_code_or_language_owns_is_refused(lang, name, run, reported):
    reported(run("codegen", "x*y", "--lang", lang, "--name", name), 2,
             ["--name", f"{name!r} is not a function name in {lang}"])


def test_a_function_named_like_a_suffixed_one_still_compiles(tmp_path):
    needs("c")
    lib = compile_c(gradcli.codegen("x*y", "c", name="f_points"), tmp_path)
    out, grad = doubles([0.0]), doubles([0.0, 0.0])
    assert lib.f_points(doubles([2.0, 3.0]), out, grad) == 0 and list(grad) == [3.0, 2.0]
    assert lib.f_points_points(2, doubles([2.0, 3.0, 1.0, 5.0]), doubles([0.0] * 2),
                               doubles([0.0] * 4)) == 0


@pytest.mark.parametrize("source,point,node,error,words,status", FAILURES)
def test_code_run_from_a_string_names_the_node_too(source, point, node, error, words, status):
    # exec of the text gradcli.codegen returns: no file to read lines back from
    namespace: dict = {}
    exec(gradcli.codegen(source), namespace)
    with pytest.raises(error) as raised:
        namespace["f"](*point.values())
    assert words in str(raised.value) and node in str(raised.value)


# -- the engineer's options: --wrt, --inputs, --returns dict, --json -------------------------------

MODEL = "log(1 + exp(-(w1*x1 + w2*x2 + b)))"
MODEL_POINT = {"w1": 0.5, "w2": -1.25, "b": 0.75, "x1": 2.0, "x2": -3.0}
MODEL_INPUTS, MODEL_WRT = ["w1", "w2", "b", "x1", "x2"], ["w1", "w2", "b"]


@pytest.mark.parametrize("lang", LANGS)
def test_wrt_differentiates_by_the_parameters_only_in_the_order_given(lang, tmp_path):
    needs(lang)
    text = gradcli.codegen(MODEL, lang, inputs=MODEL_INPUTS, wrt=MODEL_WRT)
    args = [MODEL_POINT[name] for name in MODEL_INPUTS]
    want = gradcli.evaluate(MODEL, MODEL_POINT, wrt=MODEL_WRT, float64=True)
    if lang == "c":
        lib = compile_c(text, tmp_path)
        out, grad = doubles([0.0]), doubles([0.0] * 3)
        assert lib.f(doubles(args), out, grad) == 0
        value, gradient = out[0], list(grad)
    else:
        value, gradient = load_module(text, tmp_path, f"model_{lang}").f(*args)
    assert len(gradient) == 3
    for got, exact in zip([value, *gradient], [want.value, *want.gradient.values()]):
        assert abs(float(got) - exact) <= 1e-14 * abs(exact)
    if lang != "c":
        assert f"def f({', '.join(MODEL_INPUTS)}):" in text and "WRT = ('w1', 'w2', 'b')" in text


@pytest.mark.parametrize("lang", ["python", "numpy", "jax"])
def test_returns_dict_keys_the_results_by_name(lang, tmp_path):
    needs(lang)
    module = load_module(gradcli.codegen(MODEL, lang, inputs=MODEL_INPUTS, wrt=MODEL_WRT,
                                         returns="dict"), tmp_path, f"model_dict_{lang}")
    value, gradient = module.f(*(MODEL_POINT[name] for name in MODEL_INPUTS))
    want = gradcli.evaluate(MODEL, MODEL_POINT, wrt=MODEL_WRT, float64=True)
    assert list(gradient) == MODEL_WRT
    for name in MODEL_WRT:
        assert abs(float(gradient[name]) - want.gradient[name]) <= 1e-14 * abs(want.gradient[name])
    # several outputs: values and Jacobian rows by output name; the Hessian by input name
    jacobian = load_module(gradcli.codegen("x*y; x + y", lang, returns="dict"), tmp_path,
                           f"two_{lang}")
    values, rows = jacobian.f(2.0, 3.0)
    assert {k: float(v) for k, v in values.items()} == {"f1": 6.0, "f2": 5.0}
    assert {k: {i: float(d) for i, d in row.items()} for k, row in rows.items()} == \
        {"f1": {"x": 3.0, "y": 2.0}, "f2": {"x": 1.0, "y": 1.0}}
    hessian = load_module(gradcli.codegen("x^2*y", lang, "hessian", returns="dict"), tmp_path,
                          f"hessian_dict_{lang}")
    _, gradient, rows = hessian.f(2.0, 3.0)
    assert {k: float(v) for k, v in gradient.items()} == {"x": 12.0, "y": 4.0}
    assert {k: {i: float(h) for i, h in row.items()} for k, row in rows.items()} == \
        {"x": {"x": 6.0, "y": 4.0}, "y": {"x": 4.0, "y": 0.0}}


def test_wrt_in_forward_mode_and_the_hessian(tmp_path):
    forward = load_module(gradcli.codegen("x*y*z", "python", "forward", wrt=["z", "x"]), tmp_path,
                          "forward_wrt")
    assert forward.f(2.0, 3.0, 5.0, 1.0, 0.0) == (30.0, 6.0)  # along z: x*y
    hessian = load_module(gradcli.codegen("x^2*y*z", "python", "hessian", wrt=["y", "x"]),
                          tmp_path, "hessian_wrt")
    value, gradient, rows = hessian.f(2.0, 3.0, 5.0)
    assert value == 60.0 and gradient == (20.0, 60.0) and rows == ((0.0, 20.0), (20.0, 30.0))


@pytest.mark.parametrize("args,words", [
    (["x*y", "--inputs", "y"], ["--inputs leaves out x", "--inputs x,y"]),
    (["x*y", "--inputs", "y,x,z"], ["--inputs names z", "its inputs are: x, y"]),
    (["x*y", "--inputs", "y,x,x"], ["--inputs names x twice"]),
    (["x*y", "--wrt", "z"], ["--wrt names z"]),
    (["x*y", "--wrt", "x,x"], ["--wrt names x twice"]),
    (["x*y", "--lang", "c", "--returns", "dict"], ["--returns", "tuple"]),
])
def test_the_engineers_options_refuse_what_they_cannot_do(run, reported, args, words):
    reported(run("codegen", *args), 2, words)


def test_json_gives_the_code_and_how_to_call_it(run, tmp_path, monkeypatch):
    import json
    result = run("codegen", "log(x)*ｖ１", "--lang", "c", "--inputs", "ｖ１,x", "--wrt", "x",
                 "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data == {
        "source": "log(x)*ｖ１", "source_read": "log(x)*ｖ１", "lang": "c", "mode": "reverse", "functions": ["f", "f_points"],
        "parameters": {"ｖ１": "u0_v1", "x": "x"}, "wrt": ["x"], "outputs": ["f"],
        "returns": "tuple", "code": gradcli.codegen("log(x)*ｖ１", "c", inputs=["ｖ１", "x"],
                                                    wrt=["x"]),
        "header": gradcli.codegen("log(x)*ｖ１", "c", inputs=["ｖ１", "x"], wrt=["x"],
                                  header=True)}
    monkeypatch.chdir(tmp_path)
    written = json.loads(run("codegen", "x*y", "--lang", "c", "-o", "g.c", "--json").output)
    assert written["files"] == ["g.c", "g.h"] and (tmp_path / "g.c").read_text() == \
        written["code"] and (tmp_path / "g.h").read_text() == written["header"]


# -- -o: the code and its header staged, both or neither, never over the source ----------------

@pytest.mark.parametrize("args,words", [
    (["-f", "m.grad", "-o", "m.grad"], ["--output names m.grad, which this command reads"]),
    (["-f", "m.h", "--lang", "c", "-o", "m.c"], ["--output names m.h, which this command reads"]),
    (["-f", "m.grad", "--lang", "c", "-o", "out.h"], ["out.h: the C code and its header",
                                                       "-o out.c"]),
])
def test_o_never_writes_over_the_source_nor_half_of_the_output(args, words, run, reported,
                                                                tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("m.grad", "m.h"):
        (tmp_path / name).write_text("x*y\n")
    reported(run("codegen", *args), 2, words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.grad", "m.h"]  # nothing written
    assert (tmp_path / "m.grad").read_text() == (tmp_path / "m.h").read_text() == "x*y\n"


@pytest.mark.parametrize("lang", ["python", "numpy", "jax"])
@pytest.mark.parametrize("mode", ["reverse", "forward", "hessian"])
def test_code_with_wrt_and_dicts_passes_pyflakes(lang, mode):
    pyflakes = pytest.importorskip("pyflakes.api")
    from pyflakes.reporter import Reporter
    import io
    source = "log(x)*ｖ１ + y" + ("" if mode == "hessian" else "; x*y")
    text = gradcli.codegen(source, lang, mode, wrt=["x", "ｖ１"], inputs=["y", "x", "ｖ１"],
                           returns="dict")
    warnings = io.StringIO()
    assert pyflakes.check(text, "generated.py", Reporter(warnings, warnings)) == 0, \
        warnings.getvalue()
