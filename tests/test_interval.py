"""The quick proof of one point (``engine/bounds.py``, Bounded floats) proves long sums.

A sum's rounding errors are carried exactly (TwoSum) and bounded once, so a long sum of accurate
terms is proven without Arb; where float64 is not accurate (a cancelling sum) the sweep refuses
and the balls print the digits. References: exact rationals (``fractions``) for the sums
themselves, mpmath at 40+ digits for the programs, never gradcli's own output.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from hypothesis import given, settings, strategies as st

import gradcli
from gradcli.engine.forward import forward
from gradcli.engine import bounds
from gradcli.engine.bounds import Bounded, Interval, certify_quickly, ends, hopeless
from gradcli.engine.reverse import reverse
from gradcli.language.printer import to_source
from strategies import cases
from test_certified import check_digits, shows, truth
from references import REFERENCES
from test_startup import imported

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import families  # noqa: E402  (the benchmark's generated workloads)

# -- the sums themselves, against exact rationals ------------------------------------------------

FLOATS = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)
# magnitudes far apart make every addition round, and cancellation makes the errors matter
SPREAD = st.one_of(FLOATS, st.floats(-1.0, 1.0), st.sampled_from([1e16, -1e16, 1.0, 2.0 ** -60]))


def _holds(x: Bounded, low: Fraction, high: Fraction) -> bool:
    """Whether every real in [low, high] (the exact results) lies within x's ends."""
    try:
        lo, hi = ends(x)
    except ArithmeticError:  # an overflow: refused, as it must be
        return True
    return Fraction(lo) <= low and high <= Fraction(hi)


@settings(max_examples=300, derandomize=True, database=None)
@given(st.lists(st.tuples(SPREAD, SPREAD, st.booleans()), min_size=1, max_size=40))
def test_a_chain_of_additions_holds_the_exact_sum(terms):
    """Each term an uncertain number (its midpoint, and half the distance as its bound), added
    or subtracted: every exact sum of numbers within the terms' bounds is within the result's
    ends (the carried rounding error and the bound, rounded outward)."""
    total, low, high = Bounded(0.0), Fraction(0), Fraction(0)
    for a, b, minus in terms:
        lo, hi = min(a, b), max(a, b)
        mid = lo / 2 + hi / 2
        e = max(mid - lo, hi - mid)  # (rounded up below: an exact bound of the term)
        e = math.nextafter(e, math.inf) if e else 0.0
        x = Bounded(mid, e)
        if minus:
            total, low, high = total - x, low - Fraction(hi), high - Fraction(lo)
        else:
            total, low, high = total + x, low + Fraction(lo), high + Fraction(hi)
    assert _holds(total, low, high)


@settings(max_examples=200, derandomize=True, database=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=300))
def test_a_long_sum_of_points_is_bounded_once(xs):
    """Points added in a chain: the width is a few ulps of the result (the double sum and its
    carried error rounded outward once), not one per term."""
    total = Bounded(0.0)
    for x in xs:
        total = total + x
    exact = sum(map(Fraction, xs))
    lo, hi = ends(total)
    assert Fraction(lo) <= exact <= Fraction(hi)
    assert hi - lo <= 4 * math.ulp(max(abs(lo), abs(hi)))


@settings(max_examples=200, derandomize=True, database=None)
@given(st.lists(st.tuples(SPREAD, SPREAD), min_size=1, max_size=20))
def test_sums_of_sums_and_negations_hold_the_exact_sum(pairs):
    """Two running sums combined by subtraction and negation (the reverse sweep adds sums to
    sums): the exact difference is inside."""
    s, t = Bounded(0.0), Bounded(0.0)
    exact_s = exact_t = Fraction(0)
    for a, b in pairs:
        s, exact_s = s + a, exact_s + Fraction(a)
        t, exact_t = t - b, exact_t - Fraction(b)
    d = -(s - t)
    assert _holds(d, exact_t - exact_s, exact_t - exact_s)


def test_products_by_the_signs_hold_the_exact_product():
    """The quick test's chunk summaries (Interval): a product rounded outward holds every
    product of the ends."""
    values = [-3.5, -1.0, -0.1, 0.0, 0.1, 0.3, 2.0, 1e300, -1e-300]
    for a in values:
        for b in values:
            for c in values:
                for d in values:
                    if a > b or c > d:
                        continue
                    try:
                        p = Interval(a, b) * Interval(c, d)
                    except ArithmeticError:
                        continue  # an overflow or underflow, refused
                    ends = [Fraction(x) * Fraction(y) for x in (a, b) for y in (c, d)]
                    assert Fraction(p.lo) <= min(ends) and max(ends) <= Fraction(p.hi)
                    assert p.lo < p.hi or p.lo == p.hi == min(ends) == max(ends)


# -- long sums as programs, against mpmath -------------------------------------------------------

POINT = {"x": "0.3", "y": "0.7"}


def long_sum(n: int) -> tuple[str, list[tuple[str, str]]]:
    """``Σ c·sin(a·x + y)`` over ``n`` terms (every term positive: float64 is accurate), and its
    terms' (c, a) as the decimals written."""
    terms = [(f"{(i % 7 + 1) / 4:g}", f"{(i % 5 + 1) / 2:g}") for i in range(n)]
    return " + ".join(f"{c}*sin({a}*x + y)" for c, a in terms), terms


def long_sum_truth(terms, minus: str | None = None):
    """Value and gradient of :func:`long_sum` (minus the decimal ``minus``), by mpmath from the
    formula: ∂/∂x = Σ c·a·cos(a·x + y), ∂/∂y = Σ c·cos(a·x + y)."""
    with mpmath.workdps(50):
        x, y = mpmath.mpf(POINT["x"]), mpmath.mpf(POINT["y"])
        value = dx = dy = mpmath.mpf(0)
        for c, a in terms:
            c, a = mpmath.mpf(c), mpmath.mpf(a)
            value += c * mpmath.sin(a * x + y)
            dx += c * a * mpmath.cos(a * x + y)
            dy += c * mpmath.cos(a * x + y)
        if minus is not None:
            value -= mpmath.mpf(minus)
        return [value, dx, dy]


def quickly(source: str, point: dict[str, str], digits: int = 13):
    """certify_quickly as the API calls it (with the float64 sweeps), or None."""
    graph = gradcli.compile(source)
    slots = [graph.n_const + i for i in range(len(graph.inputs))]
    values = forward(graph, [float(point[name]) for name in graph.inputs])
    adjoint, _ = reverse(graph, values, 1.0)
    found = certify_quickly(graph, [point[name] for name in graph.inputs], slots, 1.0, digits,
                            floats=(values, adjoint))
    return graph, found


def test_a_long_sum_of_accurate_terms_is_proven_quickly_and_right(monkeypatch):
    """10,000 terms: the chain's rounding (20,000 ulps of the partial sum, once) no longer hides
    the 13th digit; the digits are mpmath's. (The API leaves a program this large to the
    balls, past QUICK_NODES: the sweep itself is tested here.)"""
    monkeypatch.setattr(bounds, "QUICK_NODES", 1 << 20)
    source, terms = long_sum(10_000)
    graph, found = quickly(source, POINT)
    assert found is not None
    value, gradient, kinks = found
    want = long_sum_truth(terms)
    for text, x in zip([value, *gradient], want):
        assert shows(text, x, 13), (text, x)


def test_a_long_sum_is_proven_without_importing_flint(tmp_path):
    """The console script, counting imports: the text is proven by the quick sweep alone."""
    source, terms = long_sum(800)  # 3,999 nodes: at most QUICK_NODES
    path = tmp_path / "sum.gc"
    path.write_text(source, encoding="utf-8")
    names = imported(("eval", "-f", str(path), "--at", "x=0.3,y=0.7"))
    assert "flint" not in names and "gradcli.engine.certify" not in names


def test_a_cancelling_long_sum_is_refused_and_the_balls_print_it_right():
    """The same sum minus its value to 16 digits: float64 keeps no digit of the difference, the
    quick sweep refuses (quickly), and the balls' digits are mpmath's."""
    source, terms = long_sum(2_000)
    with mpmath.workdps(50):
        near = mpmath.nstr(long_sum_truth(terms)[0], 16)
    source = f"{source} - {near}"
    _, found = quickly(source, POINT)
    assert found is None
    r = gradcli.evaluate(source, dict(POINT))
    want = long_sum_truth(terms, minus=near)
    for number, x in zip([r.value, r.gradient["x"], r.gradient["y"]], want):
        assert shows(number.text, x, 13), (number.text, x)
    assert abs(float(r.value) - float(want[0])) < 1e-3 * abs(float(want[0]))


# -- whatever the sweep claims is right ----------------------------------------------------------

def _claims_are_right(source: str, point: dict[str, str], digits: int = 13) -> None:
    graph, found = quickly(source, point, digits)
    if found is None:
        return
    value, gradient = truth(source, point, dps=60)
    for text, x in zip([found[0], *found[1]], [value, *(gradient[n] for n in graph.inputs)]):
        assert shows(text, x, digits), (source, point, text, mpmath.nstr(x, 30))


@settings(max_examples=80, derandomize=True, database=None)
@given(cases(max_statements=2, max_depth=3))
def test_the_quick_sweep_claims_only_right_digits_on_generated_programs(case):
    source = to_source(case.program)
    read = gradcli.compile(source).inputs
    point = {name: repr(float(v)) for name, v in case.point.items() if name in read}
    if read:
        _claims_are_right(source, point)


TERMS = st.tuples(st.sampled_from(["sin", "cos", "exp", "log1p", "atan", "sqrt", "tanh"]),
                  st.sampled_from(["x", "y", "x*y", "x - y"]), st.sampled_from(["+", "-"]),
                  st.sampled_from(["0.25", "1", "3", "0.1", "7.5"]))


@settings(max_examples=60, derandomize=True, database=None)
@given(st.lists(TERMS, min_size=2, max_size=25), st.sampled_from(["0.5", "1.25", "3.1"]),
       st.sampled_from(["0.75", "0.2", "2"]), st.sampled_from([13, 15, 16]))
def test_the_quick_sweep_claims_only_right_digits_on_sums(terms, x, y, digits):
    """Sums and differences of function terms, cancelling or not, up to 16 digits (where the
    sweep must refuse when float64 does not round to the digits)."""
    parts = [f"{sign} {c}*{f}(abs({arg}) + 0.5)" for f, arg, sign, c in terms]
    source = " ".join(parts).lstrip("+ ")
    _claims_are_right(source, {"x": x, "y": y}, digits)


# -- the wide family -----------------------------------------------------------------------------

AT = ",".join(f"{k}={v}" for k, v in families.POINT.items())


def test_the_wide_family_at_13_digits_is_left_to_the_balls_without_a_sweep():
    """wide 10^3: its terms' own rounding (libm's ulps, the inputs' rounding) is wider than the
    13th digit, to first order, so the sweep is not even run: hopeless() says so first."""
    graph = gradcli.compile(families.wide(1_000))
    values = forward(graph, [families.POINT[name] for name in graph.inputs])
    adjoint, _ = reverse(graph, values, 1.0)
    assert hopeless(graph, values, adjoint, 13)
    assert not hopeless(graph, values, adjoint, 10)
    small = gradcli.compile("log(x)+x*y-sin(y)")
    v = forward(small, [2.0, 3.0])
    assert not hopeless(small, v, reverse(small, v, 1.0)[0], 15)


def _wide_truth(n: int, dps: int = 30):
    """wide(n)'s value and gradient by mpmath, term by term (each term's partials by
    mpmath.diff: the terms are smooth at the point)."""
    point = {name: mpmath.mpf(str(v)) for name, v in families.POINT.items()}
    mp = {name: ref.mp for name, ref in REFERENCES.items()}
    with mpmath.workdps(dps):
        value, gradient = mpmath.mpf(0), {name: mpmath.mpf(0) for name in point}
        for i in range(n):
            name, arity, k = families.CATALOGUE[i % len(families.CATALOGUE)]
            a, b = families._pair(i)
            c = mpmath.mpf(f"{(i % 7 + 1) / 4:g}")
            k = mpmath.mpf(str(k))
            f = mp[name]
            sign = -1 if i % 3 == 2 and i else 1

            def term(u, v, f=f, arity=arity, c=c, k=k, sign=sign):
                inner = f(u * v + k) if arity == 1 else f(u, v + k)
                return sign * c * inner * (u - v)
            u, v = point[a], point[b]
            value += term(u, v)
            gradient[a] += mpmath.diff(term, (u, v), (1, 0))
            gradient[b] += mpmath.diff(term, (u, v), (0, 1))
        return value, gradient


def test_wide_500_at_10_digits_is_proven_quickly_and_right(tmp_path):
    """With fewer digits asked the quick sweep proves the wide family, without flint."""
    source = families.wide(500)  # 3,424 nodes: at most QUICK_NODES
    path = tmp_path / "wide.gc"
    path.write_text(source, encoding="utf-8")
    names = imported(("eval", "-f", str(path), "--at", AT, "--digits", "10"))
    assert "flint" not in names and "gradcli.engine.certify" not in names
    graph, found = quickly(source, {k: str(v) for k, v in families.POINT.items()}, 10)
    assert found is not None
    value, gradient = _wide_truth(500)
    for text, x in zip([found[0], *found[1]], [value, *(gradient[n] for n in graph.inputs)]):
        assert shows(text, x, 10), (text, x)


def test_past_quick_nodes_the_sweep_is_not_tried_and_the_balls_prove_the_digits(tmp_path):
    """A program larger than QUICK_NODES goes to the balls at once, which prove it sooner than
    the quick sweep in Python would; its digits are mpmath's all the same."""
    source, terms = long_sum(900)  # 4,499 nodes
    graph, found = quickly(source, POINT)
    assert len(graph.ops) > bounds.QUICK_NODES and found is None
    result = gradcli.evaluate(source, at=POINT)
    assert type(result.certified).__name__ == "Certified"  # the balls', not the quick pass's
    for got, x in zip([result.value, result.gradient["x"], result.gradient["y"]],
                      long_sum_truth(terms)):
        assert shows(got.text, x, 13), (got.text, x)


@pytest.mark.parametrize("source, x", [("sin(x)-x", "1e-5"), ("exp(x)-1-x", "1e-4")])
def test_cancelling_points_still_print_right_digits(source, x):
    check_digits(source, {"x": x})


# -- every row on one point: the same bound formulas as the batch's columns ----------------------

@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_every_row_has_a_point_bound_whose_value_is_the_float_primal(name):
    """The point namespace (bounds.POINT) bounds every row of the table at an ordinary point of
    its domain, with an inexact argument (the propagation formula's turn), and its value is the
    float64 primal's, bit for bit; the exact value (mpmath) lies within the claimed ends."""
    from gradcli.engine.bounds import POINT
    from gradcli.engine.primitives import TABLE
    prim, ref = TABLE[name], REFERENCES[name]
    lo, hi = ref.span if prim.arity == 1 else (0.5, 3.0)
    points = [lo + 0.37 * (hi - lo) + 0.01, 1.3][:prim.arity]
    got = getattr(POINT, name)(*[Bounded(x, 1e-13) for x in points])
    assert got.e < 1e-6 * (1 + abs(got.v)), (name, got)  # finite, near the argument's error
    assert got.v == prim.primal(*points), name
    with mpmath.workdps(40):
        exact = ref.mp(*[mpmath.mpf(x) for x in points])
    low, high = ends(got)
    assert low <= exact <= high, (name, low, exact, high)
