"""The batch engine (gradcli.batch): the tape swept over NumPy columns equals the single-point
engine row by row, for every row of the rule table, and a row outside a domain fails alone.

Reference: the single-point API (``gradcli.evaluate``), itself tested against SymPy. Agreement
is stated per primitive:
- bitwise (``==``, so -0.0 equals 0.0) where both engines run the same IEEE operations:
  + - * / neg, sqrt, abs, min, max, relu, sign, step (correctly rounded or exact);
- otherwise to 4 ulp per operation (relative 1e-15 x the operations of value and derivative,
  stated as ``rtol`` below), because NumPy may use its own (SIMD) implementations of exp, log,
  sin, pow, ... which differ from the C library's by an ulp or two.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradcli
from gradcli.api import compile
from gradcli.engine import batch
from gradcli.engine.batch import NUMPY, BatchResult, evaluate_columns
from gradcli.errors import GradcliError, InputError
from gradcli.engine.primitives import TABLE

EXACT = {"add", "sub", "mul", "div", "neg", "sqrt", "abs", "min", "max", "relu", "sign", "step"}
RTOL = 2e-14  # ~90 ulp: bounds a few ulp in each of the handful of operations per row


def source_of(name: str) -> str:
    prim = TABLE[name]
    if prim.symbol and prim.arity == 2:
        return f"x {prim.symbol} y"
    if prim.symbol:
        return f"{prim.symbol}x"
    return f"{name}(x, y)" if prim.arity == 2 else f"{name}(x)"


def sample(rng, n: int) -> np.ndarray:
    """Random values with the hard ones mixed in: 0, ±1, integers, kinks, large magnitudes."""
    x = np.concatenate([rng.uniform(-3, 3, n), rng.integers(-3, 4, n // 4).astype(float),
                        [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-300, -1e-300, 700.0, 800.0, -800.0,
                         1e200, -1e200]])
    return rng.permutation(x)


def single(source: str, point: dict) -> tuple[float | None, dict | None, str | None]:
    try:
        r = gradcli.evaluate(source, point, float64=True)  # batch computes in float64
    except GradcliError as exc:
        return None, None, exc.message
    return r.value, r.gradient, None


def assert_rows_equal(source: str, columns: dict[str, np.ndarray], result: BatchResult,
                      exact: bool) -> None:
    names = list(columns)
    for i in range(len(result)):
        point = {name: float(columns[name][i]) for name in names}
        value, gradient, error = single(source, point)
        if error is not None:
            assert result.errors[i] == error, (point, result.errors[i])
            assert math.isnan(result.values[i])
            assert all(math.isnan(g[i]) for g in result.gradient.values())
            continue
        assert result.errors[i] is None, (point, result.errors[i])
        got = [result.values[i]] + [result.gradient[n][i] for n in gradient]
        want = [value] + list(gradient.values())
        for g, w in zip(got, want):
            if exact:
                assert g == w, (point, got, want)
            else:
                assert g == pytest.approx(w, rel=RTOL, abs=1e-300), (point, got, want)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_every_primitive_equals_the_single_point_engine_row_by_row(name):
    rng = np.random.default_rng(sorted(TABLE).index(name))
    source = source_of(name)
    x = sample(rng, 200)
    columns = {"x": x}
    if TABLE[name].arity == 2:
        # y: independent values, and ties with x (min, max at a kink), and integers (pow)
        y = sample(rng, 200)[:len(x)]
        y[::7] = x[::7]
        columns["y"] = y
    result = evaluate_columns(compile(source), columns, block_rows=64)  # many blocks
    assert_rows_equal(source, columns, result, exact=name in EXACT)


def test_the_numpy_namespace_has_every_primitive_and_constant():
    for name in TABLE:
        assert callable(getattr(NUMPY, name))
    assert NUMPY.pi == math.pi and NUMPY.e == math.e


def test_domain_failures_are_per_row_with_the_single_point_message():
    r = gradcli.evaluate_batch("log(x) + 1/y", {"x": [1.0, -1.0, 2.0, 0.0], "y": [1, 1, 0, 0]})
    assert r.errors.tolist() == [
        None,
        "v1: log(-1) is outside the domain of log (a > 0)",
        "v2: division by zero: 1 / 0",
        "v1: log(0) is outside the domain of log (a > 0)",  # the first failing node in tape order
    ]
    assert r.values[0] == 1.0 and np.isnan(r.values[1:]).all()
    assert r.gradient["x"][0] == 1.0 and r.gradient["y"][0] == -1.0
    assert np.isnan(r.gradient["x"][1:]).all() and np.isnan(r.gradient["y"][1:]).all()
    assert r.failed.tolist() == [False, True, True, True] and r.n_failed == 3


def test_overflow_and_non_finite_gradients_fail_their_rows_only():
    r = gradcli.evaluate_batch("exp(x)", {"x": [1.0, 1000.0]})
    assert r.errors[0] is None and r.values[0] == math.exp(1.0)
    assert r.errors[1] == "v1: exp(1000) overflows: the result is too large for a 64-bit float"
    # sqrt at 0: the value is 0, the derivative infinite: the single-point engine's message
    r = gradcli.evaluate_batch("sqrt(x)", {"x": [4.0, 0.0]})
    assert r.values[0] == 2.0 and r.gradient["x"][0] == 0.25
    assert r.errors[1] == single("sqrt(x)", {"x": 0.0})[2]
    assert "∂f/∂x is unbounded (+∞)" in r.errors[1]
    assert np.isnan(r.values[1]) and np.isnan(r.gradient["x"][1])


def test_non_finite_inputs_fail_their_rows():
    r = gradcli.evaluate_batch("x + y", {"x": [1.0, np.nan, np.inf], "y": 1.0})
    assert r.errors.tolist() == [None, "the value of x is nan, which is not a finite number",
                                 "the value of x is inf, which is not a finite number"]


def test_an_intermediate_inf_fails_the_row_even_when_the_output_is_finite():
    # exp(-exp(x)) is 0.0 at x = 1000 in floats, but exp(1000) overflowed on the way
    r = gradcli.evaluate_batch("exp(-exp(x))", {"x": [0.0, 1000.0]})
    assert r.errors[0] is None and r.values[0] == math.exp(-1.0)
    assert r.errors[1] == single("exp(-exp(x))", {"x": 1000.0})[2]


def test_scalars_broadcast_and_wrt_chooses_the_gradient():
    r = gradcli.evaluate_batch("x*y + z", {"x": np.arange(3.0), "y": 2, "z": 1}, wrt=["y"])
    assert r.values.tolist() == [1.0, 3.0, 5.0]
    assert list(r.gradient) == ["y"] and r.gradient["y"].tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("source, want, grad", [
    ("2 + 3", [5.0, 5.0], {}),  # reads no input: still one row per row of the columns
    ("x", [1.0, 2.0], {"x": [1.0, 1.0]}),  # the output is an input
    ("x + 0*y", [1.0, 2.0], {"x": [1.0, 1.0], "y": [0.0, 0.0]}),
])
def test_outputs_that_are_inputs_or_constants(source, want, grad):
    r = gradcli.evaluate_batch(source, {"x": [1.0, 2.0], "y": [5.0, 6.0]})
    assert r.values.tolist() == want
    assert {k: v.tolist() for k, v in r.gradient.items()} == grad


def test_values_only():
    r = evaluate_columns(compile("log(x)"), {"x": [1.0, -1.0]}, gradient=False)
    assert r.gradient == {} and r.values[0] == 0.0 and np.isnan(r.values[1])
    assert r.errors[1] == "v1: log(-1) is outside the domain of log (a > 0)"


@pytest.mark.parametrize("columns, words", [
    ({"x": [1.0]}, "no values for input y"),
    ({"x": [1.0, 2.0], "y": [1.0]}, "different lengths"),
    ({"x": [[1.0]], "y": 1.0}, "2-dimensional"),
    ({"x": ["a"], "y": 1.0}, "not numbers"),
])
def test_bad_columns_are_input_errors(columns, words):
    with pytest.raises(InputError, match=words):
        gradcli.evaluate_batch("x*y", columns)


def test_a_deep_graph_and_many_rows():
    source = "+".join(f"sin({k}*x)" for k in range(1, 301))
    x = np.linspace(-1, 1, 5000)
    r = gradcli.evaluate_batch(source, {"x": x})
    k = np.arange(1, 301)[:, None]
    assert r.values == pytest.approx(np.sin(k * x).sum(axis=0), rel=1e-12, abs=1e-12)
    assert r.gradient["x"] == pytest.approx((k * np.cos(k * x)).sum(axis=0), rel=1e-12, abs=1e-9)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_generated_programs_equal_the_single_point_engine(data):
    from strategies import cases

    from gradcli.language.printer import to_source
    case = data.draw(cases())
    source = to_source(case.program)
    graph = compile(source)
    rng = np.random.default_rng(0)
    base = np.array([case.point.get(name, 0.0) for name in graph.inputs])
    # the generated point (inside every domain) and points around it (some outside)
    rows = [base] + [base + rng.normal(0, s, len(base)) for s in (1e-3, 0.1, 1.0, 3.0)]
    columns = {name: np.array([row[i] for row in rows]) for i, name in enumerate(graph.inputs)}
    columns["row"] = np.arange(len(rows))  # a column it does not read: fixes the row count
    result = evaluate_columns(graph, columns)
    for i in range(len(rows)):
        point = {name: float(columns[name][i]) for name in graph.inputs}
        value, gradient, error = single(source, point)
        if error is not None:
            assert result.errors[i] is not None, (source, point, error)
            continue
        assert result.errors[i] is None, (source, point, result.errors[i])
        assert result.values[i] == pytest.approx(value, rel=1e-12, abs=1e-12)
        for name, want in gradient.items():
            assert result.gradient[name][i] == pytest.approx(want, rel=1e-9, abs=1e-12)


# -- speed without changing a bit: threads, the shared sine and cosine, the quick check ---------

def test_any_number_of_threads_gives_the_same_bits_and_messages():
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 10, 5000)  # some rows outside the domain of log
    y = rng.uniform(-5, 5, 5000)
    source = "log(x) + x*y - sin(y) + cos(x*y)"
    graph = compile(source)
    results = [evaluate_columns(graph, {"x": x, "y": y}, block_rows=256, threads=t)
               for t in (1, 2, 3)]
    first = results[0]
    assert 0 < first.n_failed < 5000
    for r in results[1:]:
        assert np.array_equal(r.values, first.values, equal_nan=True)
        for name in ("x", "y"):
            assert np.array_equal(r.gradient[name], first.gradient[name], equal_nan=True)
        assert r.errors.tolist() == first.errors.tolist()


def test_sin_and_cos_of_one_column_computed_once_equal_the_closed_form():
    # sin(x) and cos(x) read the same column: one sincos call serves both nodes and both
    # derivatives; the numbers are the closed form's to a few ulp
    x = np.random.default_rng(12).uniform(-40, 40, 3 * 256 + 17)
    r = evaluate_columns(compile("sin(x)*cos(x) + sin(x)"), {"x": x}, block_rows=256)
    s, c = np.sin(x), np.cos(x)
    assert r.values == pytest.approx(s * c + s, rel=RTOL, abs=1e-15)
    assert r.gradient["x"] == pytest.approx(c * c - s * s + c, rel=RTOL, abs=1e-14)
    assert r.n_failed == 0


@pytest.mark.parametrize("name", sorted(n for n, p in TABLE.items() if p.propagates))
def test_propagating_primitives_never_turn_inf_or_nan_into_a_finite_value(name):
    # what the quick check relies on: a non-finite value read in these arguments shows again
    others = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-300, 1e300, -1e300, np.inf, -np.inf, np.nan]
    arity = TABLE[name].arity
    f = getattr(NUMPY, name)
    with np.errstate(all="ignore"):
        for i in TABLE[name].propagates:
            for bad in (np.inf, -np.inf, np.nan):
                if arity == 1:
                    values = f(np.array([bad]))
                else:
                    column = np.full(len(others), bad)
                    args = (column, np.array(others)) if i == 0 else (np.array(others), column)
                    values = f(*args)
                assert not np.isfinite(values).any(), (name, i, bad, values)


@pytest.mark.parametrize("source, point", [
    ("exp(-exp(x))", 1000.0), ("1/(1/x)", 0.0), ("tanh(exp(x))", 800.0),
    ("min(log(x), 1)", -1.0), ("atan(1/x) + y", 0.0), ("step(log(x)) * y", 0.0),
    ("0^(x - x + log(x))", -2.0), ("sigmoid(exp(x)) + relu(-exp(x))", 1000.0),
])
def test_a_hidden_non_finite_intermediate_still_fails_its_row(source, point):
    graph = compile(source)
    columns = {name: np.array([point, 0.5]) for name in graph.inputs}
    result = evaluate_columns(graph, columns)
    want = single(source, {name: point for name in graph.inputs})[2]
    assert want is not None and result.errors[0] == want
    assert result.errors[1] == single(source, {name: 0.5 for name in graph.inputs})[2]


def test_checked_slots_skip_what_a_later_node_shows():
    g = compile("log(x)+x*y-sin(y)")
    assert batch.checked_slots(g) == [g.output]  # everything on the way propagates
    g = compile("exp(-exp(x))")  # exp(-inf) = 0: exp's argument must be checked
    assert batch.checked_slots(g) == [g.n_const, g.base + 1, g.output]


def test_the_errors_column_is_built_when_read_and_can_be_amended():
    # the plain sweep (the certified rows read the errors to mark the rows they fail)
    r = gradcli.evaluate_batch("log(x)", {"x": [1.0, -1.0, 2.0]}, float64=True)
    assert "errors" not in vars(r)  # not built by the sweep
    assert r.n_failed == 1 and r.failed.tolist() == [False, True, False]
    r.errors[2] = "amended"  # the array is built once and kept: changes stay
    assert r.errors.tolist() == [None, "v1: log(-1) is outside the domain of log (a > 0)",
                                 "amended"]


def test_an_exception_in_a_block_on_the_pool_reaches_the_caller(monkeypatch):
    real = batch._evaluate_block

    def failing(graph, block, order, checked, offset, *rest):
        if offset == 3 * 256:
            raise RuntimeError("block 3")
        return real(graph, block, order, checked, offset, *rest)

    monkeypatch.setattr(batch, "_evaluate_block", failing)
    x = np.linspace(1, 2, 40 * 256)
    with pytest.raises(RuntimeError, match="block 3"):
        evaluate_columns(compile("log(x)"), {"x": x}, block_rows=256, threads=2)
    monkeypatch.setattr(batch, "_evaluate_block", real)
    r = evaluate_columns(compile("log(x)"), {"x": x}, block_rows=256, threads=2)
    assert np.array_equal(r.values, np.log(x))  # the pool still serves


def test_the_default_is_one_thread(monkeypatch):
    """No helper thread unless the caller asks for one: on a machine whose cores are busy a
    second thread only costs CPU time."""
    def no_pool(threads):
        raise AssertionError("a helper thread was asked for")
    monkeypatch.setattr(batch, "_pool", no_pool)
    x = np.linspace(1, 2, 8 * batch.BLOCK_ROWS)
    r = evaluate_columns(compile("log(x)*x"), {"x": x}, block_rows=batch.BLOCK_ROWS)
    assert np.array_equal(r.values, np.log(x) * x)


def test_a_helper_that_gets_no_core_does_not_hold_the_blocks_up(monkeypatch):
    """Where other work holds every core, the helper threads may not run at all: the calling
    thread then takes every block, and does not wait for helpers that never started."""
    from concurrent.futures import ThreadPoolExecutor
    import threading
    release = threading.Event()
    busy = ThreadPoolExecutor(1)
    busy.submit(release.wait)  # its one worker is taken: what is submitted next never starts
    monkeypatch.setattr(batch, "_pool", lambda threads: busy)
    x = np.linspace(1, 2, 8 * batch.BLOCK_ROWS)
    graph = compile("log(x)*x")
    rescue = threading.Timer(60, release.set)  # were the helper waited for: no hang, a failure
    rescue.start()
    try:
        r = evaluate_columns(graph, {"x": x}, threads=2, block_rows=batch.BLOCK_ROWS)
        assert not release.is_set()  # returned without the helper ever starting
    finally:
        rescue.cancel()
        release.set()
        busy.shutdown()
    one = evaluate_columns(graph, {"x": x}, threads=1, block_rows=batch.BLOCK_ROWS)
    assert np.array_equal(r.values, one.values)
    assert np.array_equal(r.gradient["x"], one.gradient["x"])


def test_an_exception_in_a_block_on_several_threads_reaches_the_caller(monkeypatch):
    real = batch._evaluate_block
    rows = batch.BLOCK_ROWS

    def failing(graph, block, order, checked, offset, *rest):
        if offset == 5 * rows:
            raise RuntimeError("block 5")
        return real(graph, block, order, checked, offset, *rest)

    monkeypatch.setattr(batch, "_evaluate_block", failing)
    x = np.linspace(1, 2, 12 * rows)
    with pytest.raises(RuntimeError, match="block 5"):
        evaluate_columns(compile("log(x)"), {"x": x}, block_rows=rows, threads=2)


def test_blocks_shared_by_threads_give_the_same_bits():
    x = np.random.default_rng(5).uniform(0.1, 10, 20 * batch.BLOCK_ROWS + 7)
    graph = compile("log(x)+x*sin(x)")
    one = evaluate_columns(graph, {"x": x}, threads=1, block_rows=batch.BLOCK_ROWS)
    for threads in (2, 3):
        r = evaluate_columns(graph, {"x": x}, threads=threads, block_rows=batch.BLOCK_ROWS)
        assert np.array_equal(r.values, one.values)
        assert np.array_equal(r.gradient["x"], one.gradient["x"])


def test_the_single_point_tangent_sweep_runs_on_columns():
    # one tangent sweep for points and columns: each row's directional derivative is the
    # gradient's dot product with the direction, as the reverse sweep computes it
    from gradcli.engine.batch import block_namespace, forward_block
    from gradcli.engine.tangent import local_partials, tangent_sweep
    graph = compile("log(x)*y^2 + sin(x*y) - x/y")
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0.5, 3.0, 300), rng.uniform(0.5, 3.0, 300)
    dx, dy = rng.uniform(-1, 1, 300), rng.uniform(-1, 1, 300)
    m = block_namespace()
    slots = forward_block(graph, [x, y], m)
    with np.errstate(all="ignore"):
        tangents = tangent_sweep(graph, local_partials(graph, slots, m), [dx, dy])
    gradient = evaluate_columns(graph, {"x": x, "y": y}).gradient
    expected = gradient["x"] * dx + gradient["y"] * dy
    assert tangents[graph.output] == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_the_api_rows_are_certified_as_eval_writes_them():
    """evaluate_batch/jacobian_batch: every number has 10 proven digits or the row fails.
    (1-cos(x))/x^2 at 1e-8 is 0.5 and -x/12 + O(x^3) (float64 alone: 0 at 1e-8)."""
    xs = [1e-8, 1.75e-5, 1.0]
    r = gradcli.evaluate_batch("(1-cos(x))/x^2", {"x": xs}, with_digits=True)
    plain = gradcli.evaluate_batch("(1-cos(x))/x^2", {"x": xs}, float64=True)
    assert plain.values[0] == 0  # what the certified rows correct (cos(1e-8) rounds to 1)
    with mpmath.workdps(60):
        for i, x in enumerate(xs):
            t = mpmath.mpf(x)
            f, d = (1 - mpmath.cos(t)) / t**2, mpmath.diff(lambda u: (1 - mpmath.cos(u)) / u**2, t)
            assert r.digits[i] >= 10
            for got, want in ((r.values[i], f), (r.gradient["x"][i], d)):
                assert abs(got - want) <= abs(want) * 10.0 ** -int(r.digits[i]) / 2
    assert r.n_failed == 0 and gradcli.evaluate_batch("(1-cos(x))/x^2", {"x": xs}).digits is None
    j = gradcli.jacobian_batch("(1-cos(x))/x^2; x", {"x": xs[:1]})
    assert j.values["f1"].tolist() == [0.5]
