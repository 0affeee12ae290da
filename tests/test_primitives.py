"""Every row of the primitive table against central differences, parametrised over the table."""

import itertools
import math
from fractions import Fraction

import mpmath
import pytest

from gradcli import evaluate
from gradcli.engine.primitives import FLOAT, TABLE, function_names, lookup
from conftest import central_difference

CANDIDATES = [-2.3, -0.7, -0.2, 0.3, 0.6, 0.85, 1.4, 2.5, 3.7]  # three in (0, 1): logit's domain


def in_domain_points(prim):
    """Points where the primal is defined and smooth: every row gets tested, new rows included."""
    points = []
    for args in itertools.product(CANDIDATES, repeat=prim.arity):
        if prim.arity == 2 and abs(args[0] - args[1]) < 1e-9:
            continue  # ties of min/max are kinks
        if prim.kink is not None and _near_a_kink(prim, args):
            continue  # on a kink or a jump (round at 2.5), or within a step of one
        try:
            y = prim.primal(*args)
            for k in range(prim.arity):  # the rule must be defined too
                prim.partials[k](FLOAT, *args, y)
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        points.append(args)
    return points


def _near_a_kink(prim, args) -> bool:
    """Whether a central difference at ``args`` (the step below) would cross a kink or jump:
    mod(0.6, -0.2) is 2e-17 from one, though 0.6/-0.2 rounds to no integer."""
    side = prim.kink(*args)
    if side == 0:
        return True
    for k in range(prim.arity):
        h = 1e-4 * max(1.0, abs(args[k]))
        for t in (args[k] - h, args[k] + h):
            if prim.kink(*args[:k], t, *args[k + 1:]) != side:
                return True
    return False


@pytest.mark.parametrize("name", sorted(TABLE))
def test_rule_matches_central_differences(name):
    prim = TABLE[name]
    points = in_domain_points(prim)
    assert len(points) >= 3, f"{name}: too few in-domain sample points"
    for args in points:
        y = prim.primal(*args)
        for k in range(prim.arity):
            def along(t, k=k):
                moved = list(args)
                moved[k] = t
                return prim.primal(*moved)
            numeric = central_difference(along, args[k], h=1e-4 * max(1.0, abs(args[k])))
            ad = prim.partials[k](FLOAT, *args, y)
            assert math.isclose(ad, numeric, rel_tol=1e-6, abs_tol=1e-8), (name, args, k, ad, numeric)


@pytest.mark.parametrize("name", function_names())
def test_every_function_name_is_callable_from_the_language(name):
    prim = lookup(name)
    args = in_domain_points(prim)[0]
    names = ["x", "y"][:prim.arity]
    source = f"{name}({', '.join(names)})"
    result = evaluate(source, dict(zip(names, args)))
    assert result.value == pytest.approx(prim.primal(*args), rel=1e-15)


# Conventions at kinks, stated in `gradcli functions`.
KINKS = [
    ("relu(x)", {"x": 0.0}, {"x": 0.0}),
    ("abs(x)", {"x": 0.0}, {"x": 0.0}),
    ("min(x, y)", {"x": 1.0, "y": 1.0}, {"x": 0.5, "y": 0.5}),
    ("max(x, y)", {"x": 1.0, "y": 1.0}, {"x": 0.5, "y": 0.5}),
    ("min(x, x)", {"x": 2.0}, {"x": 1.0}),
]


@pytest.mark.parametrize("source, at, gradient", KINKS)
def test_subgradient_conventions(source, at, gradient):
    assert evaluate(source, at).gradient == gradient


def test_numerically_careful_primals():
    assert TABLE["sigmoid"].primal(-800.0) == 0.0
    assert TABLE["sigmoid"].primal(800.0) == 1.0
    assert TABLE["softplus"].primal(800.0) == 800.0
    assert TABLE["softplus"].primal(-800.0) == 0.0
    assert TABLE["cbrt"].primal(-8.0) == -2.0


# Derivatives in the tails: written as 1 - tanh(a)^2, sigmoid(a)*(1 - sigmoid(a)) or
# expm1(a) + 1 they cancel to 0, and written with a**2 they overflow (an exception, in Python)
# from |a| ≈ 1.3e154 although the derivative is finite or underflows to 0. Expected values are
# the textbook derivatives evaluated by mpmath at 50 digits.
TAILS = [
    ("sigmoid(x)", 17.0, lambda x: mpmath.exp(-x) / (1 + mpmath.exp(-x)) ** 2),
    ("sigmoid(x)", 40.0, lambda x: mpmath.exp(-x) / (1 + mpmath.exp(-x)) ** 2),
    ("sigmoid(x)", -1e200, lambda x: mpmath.exp(x) / (1 + mpmath.exp(x)) ** 2),
    ("tanh(x)", 10.0, lambda x: mpmath.sech(x) ** 2),
    ("tanh(x)", -20.0, lambda x: mpmath.sech(x) ** 2),
    ("tanh(x)", 1e200, lambda x: mpmath.sech(x) ** 2),
    ("expm1(x)", -40.0, mpmath.exp),
    ("atan(x)", 1e150, lambda x: 1 / (1 + x ** 2)),
    ("atan(x)", 1e200, lambda x: 1 / (1 + x ** 2)),
    ("atan2(x, 1e200)", 1e200, lambda x: mpmath.mpf(1e200) / (x ** 2 + mpmath.mpf(1e200) ** 2)),
    ("atan2(1e200, x)", 1e200, lambda x: -mpmath.mpf(1e200) / (x ** 2 + mpmath.mpf(1e200) ** 2)),
    ("asinh(x)", -1e200, lambda x: 1 / mpmath.sqrt(x ** 2 + 1)),
    ("acosh(x)", 1e200, lambda x: 1 / mpmath.sqrt(x ** 2 - 1)),
    ("acosh(x)", 1 + 2 ** -40, lambda x: 1 / mpmath.sqrt(x ** 2 - 1)),
    ("erf(x)", 1e200, lambda x: 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-x ** 2)),
    ("erf(x)", 26.0, lambda x: 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-x ** 2)),
]


@pytest.mark.parametrize("source, x, derivative", TAILS, ids=[f"{s} at {x!r}" for s, x, _ in TAILS])
def test_derivatives_keep_their_precision_in_the_tails(source, x, derivative):
    with mpmath.workdps(50):
        expected = float(derivative(mpmath.mpf(x)))
    got = evaluate(source, {"x": x}).gradient["x"]
    assert math.isclose(got, expected, rel_tol=1e-13, abs_tol=0), (got, expected)


# -- the row's other columns: each fact checked against the primal, for every row that states it

@pytest.mark.parametrize("name", sorted(TABLE))
def test_each_argument_has_a_role(name):
    prim = TABLE[name]
    assert len(prim.roles) == prim.arity and all(prim.roles)


@pytest.mark.parametrize("name", sorted(n for n, p in TABLE.items() if p.parity))
def test_parity_holds_exactly_in_floats(name):
    # the symbolic form takes the sign out (sin(-y) is -sin(y)): exact, not to rounding
    prim, sign = TABLE[name], {"odd": -1.0, "even": 1.0}[TABLE[name].parity]
    for (a,) in in_domain_points(prim):
        assert prim.primal(-a) == sign * prim.primal(a), (name, a)


@pytest.mark.parametrize("name", sorted(n for n, p in TABLE.items() if p.complement))
def test_complement_holds(name):
    # the symbolic form writes 1 - f(a) as f(-a): equal to rounding, as exact numbers
    prim = TABLE[name]
    for (a,) in in_domain_points(prim):
        assert prim.primal(-a) == pytest.approx(1 - prim.primal(a), rel=1e-12, abs=1e-15), \
            (name, a)


@pytest.mark.parametrize("name", sorted(n for n, p in TABLE.items() if p.undoes))
def test_a_row_undoes_the_function_it_names(name):
    prim, inner = TABLE[name], TABLE[TABLE[name].undoes]
    for (a,) in in_domain_points(inner):
        assert prim.primal(inner.primal(a)) == pytest.approx(a, rel=1e-12, abs=1e-12), (name, a)


@pytest.mark.parametrize("name", sorted(n for n, p in TABLE.items() if p.form))
def test_a_sum_or_product_form_computes_the_primal(name):
    prim = TABLE[name]
    kind, ks = prim.form
    assert len(ks) == prim.arity
    for args in in_domain_points(prim):
        if kind == "sum":
            expected = sum(k * a for k, a in zip(ks, args))
        else:
            expected = math.prod(a ** k for k, a in zip(ks, args))
        assert prim.primal(*args) == pytest.approx(expected, rel=1e-15), (name, args)


@pytest.mark.parametrize("name", sorted(n for n, p in TABLE.items() if p.exact))
def test_an_exact_primal_returns_one_of_a_few_exact_values(name):
    # what lets the symbolic form fold it for any number: abs(-0.3) is 0.3, sign(x) one of -1, 0, 1,
    # floor(-2.3) the integer -3: the float primal gives what it gives on the exact rationals
    prim = TABLE[name]
    for args in in_domain_points(prim):
        y = prim.primal(*args)
        assert Fraction(y) == prim.primal(*map(Fraction, args)), (name, args, y)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_a_numpy_column_names_a_numpy_function_or_is_one(name):
    numpy = TABLE[name].numpy
    if isinstance(numpy, str):
        np = pytest.importorskip("numpy")
        assert callable(getattr(np, numpy)), (name, numpy)
    else:
        assert numpy is None or callable(numpy)


def test_pow_rules_branch_through_the_namespace():
    # m.where picks the guarded branch for floats as NumPy's where does for columns
    by_base, by_exponent = TABLE["pow"].partials
    assert by_base(FLOAT, 0.0, 0.0, 1.0) == 0.0  # b = 0: 0, not 0·0^(-1)
    assert by_base(FLOAT, 2.0, 3.0, 8.0) == 12.0
    assert by_exponent(FLOAT, 0.0, 2.0, 0.0) == 0.0  # a = 0 < b: 0, though ln 0 is not finite
    assert by_exponent(FLOAT, 2.0, 3.0, 8.0) == 8.0 * math.log(2.0)
    with pytest.raises(ValueError):
        by_exponent(FLOAT, 0.0, 0.0, 1.0)  # 0^b at b = 0 is no derivative
