"""gradcli.engine.bounds, rule by rule: every primitive of the table has a bound, the bound is
never below the true error, and the quick test leaves exactly the rows the row-by-row bound
would find short, with or without the C extension.

The reference is mpmath at 50 digits on the doubles the batch engine read (each function and
its derivative written out here from mpmath's own functions, not from gradcli's rules). The
arguments are made inexact on purpose (``f(x/7)``: x/7 rounds), so each rule's propagation
formula is exercised, not only the function's own rounding; and cancelling rows
(``f(x/7) - f(y/7)`` with y the next double after x) check that what little is claimed there
holds.
"""

from __future__ import annotations

import math
import subprocess

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from references import REFERENCES
from strategies import cases

import gradcli
from gradcli.engine import bounds
from gradcli.engine.batch import block_namespace, evaluate_columns
from gradcli.engine.primitives import TABLE
from gradcli.language.printer import to_source

mpmath.mp.dps = 50
MP = mpmath.mp


# name -> (the function with mpmath, the range of its argument t = x/7, and its derivative
# where mpmath.diff at 50 digits would not do), from the one table of references. Ranges stay
# inside each function's domain; the gamma family also takes negative arguments, where the bound
# declines (no digits: STATED).
UNARY = {name: (ref.mp, ref.span, *([ref.slope] if ref.slope else []))
         for name, ref in REFERENCES.items() if TABLE[name].arity == 1 and name != "neg"}
BINARY = {name: (ref.mp, ref.sample) for name, ref in REFERENCES.items()
          if TABLE[name].arity == 2}
# Arguments where a function is hardest: near its roots (its error is absolute there), poles
# and the edges of its domain.
HARD = {"lgamma": [1 + 1e-9, 2 - 1e-9, 1.0000001, 1.9999999, 2.5],
        "digamma": [1.4616321449683622, 1.46163214496836, 1.5, 0.001],
        "gamma": [0.001, 171.5, 1.4616321449683622], "trigamma": [0.001, 1e6],
        "log": [1 + 1e-12, 1.0], "log1p": [-0.999999, 1e-300], "sqrt": [1e-300, 0.0],
        "asin": [0.999999, -0.999999], "acos": [0.999999, 1e-300], "atanh": [0.999999],
        "acosh": [1.000001], "tan": [1.5707963, 1.5707964], "sin": [3.141592653589793, 1e4],
        "erfc": [26.0, -5.0], "sinc": [3.141592653589793, 1e-5], "sec": [1.5707963],
        "cot": [3.1415926], "expm1": [1e-10, -1e-10]}
# Where a rule gives no digits on purpose, and why (the certified engine takes those rows).
STATED = {
    "gamma": "left of 0 (poles, reflection): bounded on the positive axis only",
    "lgamma": "left of 0 (poles, reflection): bounded on the positive axis only",
    "digamma": "left of 0 (poles, reflection): bounded on the positive axis only",
    "trigamma": "left of 0, and its gradient: ψ'' has no rule on bounded values",
    "sign": "an interval that holds 0 (the jump)", "step": "an interval that holds 0",
    "floor": "an interval that holds a jump", "ceil": "an interval that holds a jump",
    "trunc": "an interval that holds a jump", "round": "an interval that holds a jump",
    "mod": "an interval of a/b that holds a jump",
}


def test_every_primitive_of_the_table_has_a_bound_rule():
    assert set(UNARY) | set(BINARY) | {"neg"} == set(TABLE)
    m, batch = bounds._namespace(block_namespace()), block_namespace()
    for name, prim in TABLE.items():
        f = getattr(m, name)
        assert "_uncertain" not in f.__qualname__, name
        lo, hi = UNARY[name][1] if name in UNARY else (0.5, 3.0)
        inside = np.array([lo + 0.37 * (hi - lo), lo + 0.71 * (hi - lo)]) + 0.01
        args = [bounds.Bounded(inside, 1e-13),
                bounds.Bounded(np.array([1.3, 3.1]), 1e-13)][:prim.arity]
        with np.errstate(all="ignore"):
            got = f(*args)
        assert np.all(np.isfinite(got.e)), (name, got.e)  # finite at an ordinary point
        assert np.array_equal(got.v, getattr(batch, name)(*[a.v for a in args]),
                              equal_nan=True), name  # the batch engine's own value, bit for bit
    assert set(STATED) <= set(TABLE)


@pytest.mark.parametrize("source, x", [
    ("gamma(x)", -0.5), ("lgamma(x)", -2.5), ("digamma(x)", -0.3), ("trigamma(x)", -1.5),
    ("sign(x - 0.1*3 + 0.3)", 5.551115123125783e-17), ("floor(x/7)", 21.0),
    ("mod(x/7, 1)", 21.0)])
def test_the_stated_exceptions_claim_nothing(source, x):
    graph = gradcli.compile(source)
    assert bounds.certain_digits(graph, {"x": np.array([x])}, gradient=False)[0] == 0
    assert source.split("(")[0] in STATED


def _exact(f, *args):
    try:
        with mpmath.workdps(50):
            value = f(*[mpmath.mpf(a) for a in args])
            return None if not mpmath.isfinite(value) else value
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


def _claims_hold(graph, columns, exact_value, exact_slopes):
    """Every row's claimed digits hold for its value and gradient (mpmath references)."""
    result = evaluate_columns(graph, columns)
    digits = bounds.certain_digits(graph, columns)
    wrong = []
    for r, d in enumerate(digits):
        if d == 0 or result.errors[r] is not None:
            continue
        got = [(float(result.values[r]), exact_value(r))] + [
            (float(result.gradient[name][r]), slope(r)) for name, slope in exact_slopes.items()]
        for value, exact in got:
            if exact is None:
                continue
            allowed = max(abs(value) * 10.0 ** -int(d) / 2, bounds.SMALLEST_NORMAL)
            if not abs(mpmath.mpf(value) - exact) <= allowed:
                wrong.append((r, value, exact, int(d)))
    assert not wrong, wrong[:3]
    return digits


def _points(lo, hi, n, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(lo, hi, n)


# The argument of each function: exact (the function's own error), rounded once (x/7), and off
# by up to 2^-33 (an addition and subtraction of 2^20: the propagation formula's turn).
FORMS = {"exact": ("{f}(x)", 1.0), "rounded": ("{f}(x/7)", 7.0),
         "perturbed": ("{f}((x/7 + 1048576) - 1048576)", 7.0)}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_each_function_bound_is_never_below_the_true_error(name, form):
    f, (lo, hi), *written = UNARY[name]
    source, scale = FORMS[form]
    graph = gradcli.compile(source.format(f=name))
    x = _points(lo * scale, hi * scale, 24, seed=len(name))
    x = np.concatenate([x, [0.7 * scale, 1.0], np.array(HARD.get(name, [])) * scale])
    columns = {"x": x}

    def exact(r):
        return _exact(lambda t: f(t / scale), x[r])

    # the raw bound of the value: never below the true error (times 2: the bound's own rounding)
    with np.errstate(all="ignore"):
        slots = bounds.forward(graph, [x], bounds._namespace(block_namespace()))
    out = slots[graph.output]
    for r in range(len(x)):
        ref = exact(r)
        value = float(np.broadcast_to(out.v, x.shape)[r])
        e = float(np.broadcast_to(out.e, x.shape)[r])
        if ref is None or not math.isfinite(value):
            continue
        assert abs(mpmath.mpf(value) - ref) <= 2 * e, (x[r], value, ref, e)

    def slope(r):
        if name in ("floor", "ceil", "trunc", "round", "sign", "step"):
            return mpmath.mpf(0)
        with mpmath.workdps(50):
            try:
                if written:
                    return written[0](mpmath.mpf(x[r]) / scale) / scale
                return mpmath.diff(lambda t: f(t / scale), mpmath.mpf(x[r]))
            except (ValueError, ZeroDivisionError):
                return None

    _claims_hold(graph, columns, exact, {"x": slope})


@pytest.mark.parametrize("name", sorted(UNARY))
def test_cancelling_rows_claim_only_what_holds(name):
    """f(x/7) - f(y/7), y the double after x: the difference is a few ulps of f, or 0."""
    f, (lo, hi), *_ = UNARY[name]
    graph = gradcli.compile(f"{name}(x/7) - {name}(y/7)")
    x = _points(lo * 7, hi * 7, 12, seed=1 + len(name))
    y = np.nextafter(x, np.inf)
    columns = {"x": x, "y": y}
    _claims_hold(graph, columns, lambda r: _exact(lambda a, b: f(a / 7) - f(b / 7), x[r], y[r]),
                 {})


@pytest.mark.parametrize("name", sorted(BINARY))
def test_each_binary_rule_is_never_below_the_true_error(name):
    f, source = BINARY[name]
    graph = gradcli.compile(source)
    x, y = _points(-30, 30, 24, seed=3), _points(-30, 30, 24, seed=4)
    x[:3], y[:3] = [7.0, -3.5, 0.0], [3.0, 3.0, 2.0]
    columns = {"x": x, "y": y}
    result = evaluate_columns(graph, columns)

    def exact(r):
        return _exact(lambda a, b: _source_value(name, a, b), x[r], y[r])

    with np.errstate(all="ignore"):
        slots = bounds.forward(graph, [x, y], bounds._namespace(block_namespace()))
    out = slots[graph.output]
    for r in range(len(x)):
        ref = exact(r)
        if ref is None or result.errors[r] is not None:
            continue
        e = float(np.broadcast_to(out.e, x.shape)[r])
        assert abs(mpmath.mpf(float(out.v[r])) - ref) <= 2 * e, (x[r], y[r], out.v[r], ref, e)
    _claims_hold(graph, columns, exact, {})


def _source_value(name, a, b):
    f, _ = BINARY[name]
    a, b = a / 7, b / 3
    if name == "pow":
        return f(abs(a), b * 3 / 30)
    if name == "log_base":
        return f(abs(a), abs(b) + mpmath.mpf(1.5))
    return f(a, b)


# -- the quick test -------------------------------------------------------------------------------

QUICK_CASES = [
    ("log(x)+x*y-sin(y)", lambda rng, n: {"x": rng.uniform(0.1, 10, n),
                                          "y": rng.uniform(-5, 5, n)}),
    ("(1-cos(x))/x^2", lambda rng, n: {"x": 10.0 ** rng.uniform(-9, 1, n)}),
    # x - cos(y) cancelling to 10^-16 .. 10^-2 of cos(y): rows on both sides of 10 digits, and
    # the quick test's bound as tight as it gets (y near 0, cos(y) near 1)
    ("x - cos(y)", lambda rng, n: (lambda y: {
        "x": np.cos(y) * (1 + rng.choice([-1, 1], n) * 10.0 ** rng.uniform(-16, -2, n)),
        "y": y})(rng.uniform(-0.3, 0.3, n))),
    ("sqrt(x)*exp(-x) + log1p(x)/(1+x^2)", lambda rng, n: {"x": rng.uniform(-0.5, 40, n)}),
    ("tanh(x)*sigmoid(y) - atan(x*y)", lambda rng, n: {"x": rng.normal(0, 3, n),
                                                       "y": rng.normal(0, 3, n)}),
    ("gamma(x) + sec(x) + mod(x, 0.3)", lambda rng, n: {"x": rng.uniform(-3, 6, n)}),
    # compositions, the gamma family and a step, cancelling on both sides of 10 digits
    ("(sec(x) - cot(y)) * log(x, 2.5) + floor(x/3)", lambda rng, n: (lambda x: {
        "x": x, "y": np.arctan(np.cos(x)) * (1 + 10.0 ** rng.uniform(-16, -2, n))})(
        rng.uniform(0.2, 1.3, n))),
    ("(gamma(x) - gamma(y)) * digamma(x*y) + lgamma(y)/100", lambda rng, n: (lambda x: {
        "x": x, "y": x * (1 + 10.0 ** rng.uniform(-16, -2, n))})(rng.uniform(2.5, 3.5, n))),
]


@pytest.mark.parametrize("source, make", QUICK_CASES, ids=[c[0] for c in QUICK_CASES])
def test_the_quick_test_leaves_the_rows_the_row_by_row_bound_finds_short(source, make):
    graph = gradcli.compile(source)
    columns = make(np.random.default_rng(11), 6000)
    result = evaluate_columns(graph, columns, block_rows=512)
    results = [result.values] + [result.gradient[name] for name in graph.inputs]
    full = bounds.certain_digits(graph, columns)
    quick = bounds.certain_digits(graph, columns, enough=10, results=results, block_rows=512)
    ok = np.equal(result.errors, None)
    short = (full < 10) & ok
    assert np.array_equal(short, (quick < 10) & ok)
    assert np.array_equal(full[short], quick[short])
    # and beside the batch sweep (its watch), on several threads
    watch = bounds.QuickTest(graph, columns)
    evaluate_columns(graph, columns, block_rows=512, threads=2, watch=watch)
    left = watch.suspects()
    assert not np.any(short & ~left)


def test_batch_rows_do_not_depend_on_the_digits_column(gradcli_script, tmp_path):
    """The quick test (without --with-digits) recomputes the same rows as every row's own
    bound (--with-digits): the same bytes."""
    rng = np.random.default_rng(8)
    x = np.concatenate([10.0 ** rng.uniform(-9, 1, 3000), rng.uniform(-3, 3, 3000)])
    (tmp_path / "p.csv").write_text("x\n" + "\n".join(repr(float(v)) for v in x) + "\n")
    outputs = []
    for digits in ([], ["--with-digits"]):
        proc = subprocess.run([gradcli_script, "eval", "(1-cos(x))/x^2", "--points", "p.csv",
                               *digits], cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        if digits:  # drop the digits column: x,f,df/dx,digits,error
            lines = [",".join(line.split(",")[:3] + line.split(",")[4:]) for line in lines]
        outputs.append(lines)
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) == 6001


def test_the_quick_test_beside_the_jacobian_sweep():
    """Several outputs: each output's value, then its gradient, as batchio orders them."""
    from gradcli.engine.batch import jacobian_columns
    from gradcli.engine.graph import select_outputs
    graph = select_outputs(gradcli.compile("a = log(x) - y; b = a*y - cos(x); c = b - 1"),
                           ["c", "a"])
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(0.5, 3, 3000), np.exp(rng.uniform(-1, 1, 1000))])
    y = np.concatenate([rng.uniform(-2, 2, 3000), np.log(x[3000:])])  # a cancels to ~0
    columns = {"x": x, "y": y}
    watch = bounds.QuickTest(graph, columns)
    batch = jacobian_columns(graph, columns, block_rows=512, watch=watch)
    full = bounds.certain_digits(graph, columns)
    short = (full < 10) & np.equal(batch.errors, None)
    assert short.sum() > 100  # the cancelling rows are there
    assert not np.any(short & ~watch.suspects())
    rows = np.flatnonzero(watch.suspects())
    assert np.array_equal(bounds.certain_digits(graph, columns, rows=rows), full[rows])


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.integers(0, 2 ** 32 - 1))
def test_the_quick_test_never_passes_a_row_its_own_bound_finds_short(case, seed):
    """Random programs (tests/strategies.py), 600 rows within 10^-16 .. 10^-6 of the case's
    point (narrow, so that the quick test's interval sweep holds and its bound is near each
    row's), blocks of 64: every row the row-by-row bound gives fewer than 10 digits is left."""
    source = to_source(case.program)
    graph = gradcli.compile(source)
    if not graph.inputs:
        return
    rng = np.random.default_rng(seed)
    columns = {}
    for name in graph.inputs:
        at = case.point[name]
        spread = 10.0 ** rng.uniform(-16, -6, 600) * rng.choice([-1, 1], 600)
        columns[name] = at * (1 + spread)
    with np.errstate(all="ignore"):
        result = evaluate_columns(graph, columns, block_rows=64)
    results = [result.values] + [result.gradient[name] for name in graph.inputs]
    note(f"source:\n{source}")
    full = bounds.certain_digits(graph, columns)
    quick = bounds.QuickTest(graph, columns)
    for start in range(0, 600, 64):
        quick(start, min(600, start + 64), [c[start:start + 64] for c in results])
    short = (full < 10) & np.equal(result.errors, None)
    assert not np.any(short & ~quick.suspects()), np.flatnonzero(short & ~quick.suspects())
