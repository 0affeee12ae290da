"""Every row of the primitive table against central differences, parametrised over the table."""

import itertools
import math

import pytest

from gradcli import evaluate
from gradcli.primitives import FLOAT, TABLE, function_names, lookup
from conftest import central_difference

CANDIDATES = [-2.3, -0.7, -0.2, 0.3, 0.6, 1.4, 2.5, 3.7]


def in_domain_points(prim):
    """Points where the primal is defined and smooth: every row gets tested, new rows included."""
    points = []
    for args in itertools.product(CANDIDATES, repeat=prim.arity):
        if prim.arity == 2 and abs(args[0] - args[1]) < 1e-9:
            continue  # ties of min/max are kinks
        try:
            y = prim.primal(*args)
            for k in range(prim.arity):  # the rule must be defined too
                prim.partials[k](FLOAT, *args, y)
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        points.append(args)
    return points


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
