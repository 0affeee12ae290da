"""The sweeps' shortcuts: a spent reverse sweep keeps the adjoints that matter, an exact unit
keeps the ball, and the bare sweep's rational shortcut of a row is its Real function's rational.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from gradcli.engine.primitives import TABLE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import families  # noqa: E402 - the benchmark's program families


@pytest.mark.parametrize("source", [families.wide(200), families.deep(200), families.shared(200),
                                    "x*y + sin(x)*x"])
def test_a_spent_sweep_leaves_the_inputs_adjoints(source):
    """reverse(spend=True), as the certified sweep runs it: each visited node's adjoint is
    None afterwards (its ball freed), and every other slot's is the full sweep's, on floats and
    on bare balls alike."""
    from gradcli.api import compile, point_vector
    from gradcli.engine.ball import BARE
    from gradcli.engine.certify import exact_real
    from gradcli.engine.forward import forward
    from gradcli.engine.primitives import FLOAT
    from gradcli.engine.reverse import reverse
    graph = compile(source)
    at = {name: 0.25 + 0.05 * i for i, name in enumerate(graph.inputs)}
    floats = forward(graph, point_vector(graph, at))
    balls = [exact_real(v).b for v in floats]  # balls for the bare namespace's rules
    visited = set(graph.visit_order())
    for values, m in ((floats, FLOAT), (balls, BARE)):
        full, _ = reverse(graph, values, m=m)
        spent, _ = reverse(graph, values, m=m, spend=True)
        assert [s for s, a in enumerate(spent) if a is None] == sorted(visited)
        assert all(repr(spent[s]) == repr(full[s]) for s in range(graph.n_slots)
                   if s not in visited)


@pytest.mark.parametrize("source", [families.wide(300), families.deep(300), families.shared(300),
                                    "a = sin(x)*y\nb = x*y + exp(a)\nc = cos(b)\nb*x + 1",
                                    "f = x*y; g = exp(x); h = f - g; f + 1; h*2", "x", "2"])
def test_the_reverse_order_is_a_stable_sort_by_depth_of_the_live_nodes(source):
    """visit_order (a counting sort) is the definition: the nodes some output reads, deepest
    first, in tape order within a depth; live_nodes marks exactly the nodes an output reaches."""
    from gradcli.api import compile
    graph = compile(source)
    base, n = graph.base, len(graph.ops)
    reached, stack = set(), [s for s in graph.output_slots if s >= base]
    while stack:  # the nodes an output reaches, by following arguments
        s = stack.pop()
        if s not in reached:
            reached.add(s)
            stack += [a for a in graph.args(s - base) if a >= base]
    assert graph.live_nodes() == [base + k in reached for k in range(n)]
    by_depth = sorted(range(n), key=lambda k: -graph.depth[k])  # sorted() is stable
    assert list(graph.visit_order()) == [base + k for k in by_depth if base + k in reached]


def test_an_exact_unit_keeps_the_ball_and_is_no_wider_than_arbs_product():
    """On bare balls (``exact_units``), ``adjoint += upstream · (±1)`` and a first contribution
    to the float 0.0 keep the ball itself (partials._accumulated): the same number, in a ball
    inside the one Arb's multiplication and addition give."""
    from flint import arb
    from gradcli.engine.ball import BARE
    from gradcli.engine.partials import _accumulated
    assert BARE.exact_units
    upstream, old = arb(1) / 3, arb(2) / 7
    for p in (1.0, -1.0, 0.5, 3.0):
        first = _accumulated(0.0, upstream, p)
        plain = 0.0 + upstream * p
        assert plain.contains(first) and first.rad() <= plain.rad()
        if p == 1.0:
            assert first is upstream
        later = _accumulated(old, upstream, p)
        assert (old + upstream * p).contains(later)
    for seed in (1.0, -1.0):  # an upstream ±1.0 (a sum's terms): the partial's ball itself
        first = _accumulated(0.0, seed, upstream)
        assert (0.0 + seed * upstream).contains(first) and first.rad() <= upstream.rad()
        assert (old + seed * upstream).contains(_accumulated(old, seed, upstream))
    assert _accumulated(0.0, 1.0, upstream) is upstream
    # a float product is added as floats add: 0.0 + -0.0 is +0.0, as in the plain sweep
    assert _accumulated(0.0, 2.0, -1.0) == -2.0
    assert math.copysign(1.0, _accumulated(0.0, -0.0, 1.0)) == 1.0


@pytest.mark.parametrize("name", sorted(__import__("gradcli.engine.certify",
                                                   fromlist=["_RATIONAL"])._RATIONAL))
def test_a_rows_rational_shortcut_is_its_real_functions_rational(name):
    """The bare sweep's rational shortcut of a row (certify._RATIONAL) gives what the row's
    Real function gives for the same rationals: the same rational, and a ball that holds it."""
    from flint import fmpq
    from gradcli.engine.ball import BALL, Real, precision
    from gradcli.engine.certify import _RATIONAL
    rationals = [fmpq(0), fmpq(1), fmpq(-1), fmpq(3, 7), fmpq(-22, 5), fmpq(1, 10**9)]
    arity = TABLE[name].arity
    with precision(64):
        for args in ([(q,) for q in rationals] if arity == 1 else
                     [(q, r) for q in rationals for r in rationals]):
            real = getattr(BALL, name)(*(Real.of(q) for q in args))
            assert real.q is not None and _RATIONAL[name](*args) == real.q, (name, args)
            assert real.q in real.b
