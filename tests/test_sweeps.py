"""The compiled sweeps (engine/_sweeps.c) compute what the Python loops compute.

The reference is the Python loops themselves (engine/forward.py, partials.py and certify.py's
bare sweep, with the extension switched off): the compiled loops call the same rule-table
functions and accumulate with Python's own ``*`` and ``+=``, so every value, every adjoint and
every certified digit must be the same, bit for bit, and where a point is outside a domain or a
derivative is not finite, the error must be the same, naming the same node. (The other tests,
which check the numbers against mpmath, run with the compiled loops on every tape: conftest.py.)
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from strategies import cases

from gradcli.api import evaluate
from gradcli.engine import sweeps
from gradcli.engine.primitives import CALLED, TABLE
from gradcli.errors import GradcliError
from gradcli.language.printer import to_source

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import families  # noqa: E402 - the benchmark's program families

COMPILED = sweeps.compiled_sweep("forward", sweeps.COMPILED_FROM) is not None
needs_build = pytest.mark.skipif(not COMPILED, reason="the optional C extension "
                                 "gradcli.engine._sweeps was not built")


def outcome(source: str, at: dict, **options):
    """What evaluate gives, compiled loops and Python loops: the numbers (as their exact
    bits and their printed digits) or the error (its kind, message, node)."""
    seen = []
    for threshold in (0, math.inf):
        sweeps.COMPILED_FROM = threshold
        try:
            r = evaluate(source, at, **options)
            seen.append(("ok", _bits(r.value), {k: _bits(v) for k, v in r.gradient.items()},
                         getattr(r.value, "text", None),
                         {k: getattr(v, "text", None) for k, v in r.gradient.items()}))
        except GradcliError as exc:
            seen.append(("error", type(exc).__name__, str(exc), exc.exit_code))
    return seen


def _bits(x) -> str:
    return float(x).hex()  # -0.0, nan and inf compare as what they are


@pytest.fixture(autouse=True)
def restore_threshold():
    saved = sweeps.COMPILED_FROM
    yield
    sweeps.COMPILED_FROM = saved


def _spelled(name: str) -> str:
    prim = TABLE[name]
    if prim.symbol and prim.arity == 2:
        return f"x {prim.symbol} y"
    if prim.symbol:
        return f"{prim.symbol}x"
    called = CALLED.get(name, name)
    return f"{called}(x)" if prim.arity == 1 else f"{called}(x, y)"


POINTS = [(-2.5, 0.5), (-1.0, 2.0), (-0.5, -3.0), (0.0, 0.0), (0.3, 1.0), (1.0, 1.0),
          (2.0, -0.5), (40.0, 3.0), (800.0, 1e-300)]


@needs_build
@pytest.mark.parametrize("name", sorted(TABLE))
def test_every_row_gives_the_same_numbers_and_errors_both_ways(name):
    source = _spelled(name)
    for x, y in POINTS:
        at = {"x": x, "y": y}
        for options in ({"float64": True}, {}):
            compiled, python = outcome(source, at, **options)
            assert compiled == python, (source, at, options)


@needs_build
@settings(max_examples=60, deadline=None, derandomize=True)
@given(cases())
def test_generated_programs_give_the_same_numbers_both_ways(case):
    source = to_source(case.program)
    for options in ({"float64": True}, {}):
        compiled, python = outcome(source, case.point, **options)
        assert compiled == python, (source, case.point, options)


@needs_build
@pytest.mark.parametrize("family,n", [("wide", 300), ("deep", 300), ("shared", 300)])
def test_the_families_give_the_same_numbers_both_ways(family, n):
    source = getattr(families, family)(n)
    compiled, python = outcome(source, dict(families.POINT))
    assert compiled == python
    assert compiled[0] == "ok"


@needs_build
@pytest.mark.parametrize("float64", [True, False])
def test_a_recorded_sweep_keeps_the_same_partials_both_ways(float64):
    """The trace's sweep keeps every partial (partials.py's keep): the compiled loop keeps the
    same numbers, so every contribution and adjoint the trace shows is the same."""
    source = "x*y + sin(x)/y - exp(x - y)*cos(y) + y^3"
    at = {"x": 0.7, "y": -1.3}
    seen = []
    for threshold in (0, math.inf):
        sweeps.COMPILED_FROM = threshold
        r = evaluate(source, at, float64=float64)
        trace = r.trace
        seen.append([(c.source, c.target, _bits(c.upstream), _bits(c.local),
                      _bits(c.contribution)) for c in trace.contributions]
                    + [_bits(a.adjoint) for a in trace.adjoints])
    assert seen[0] == seen[1]
    assert len(seen[0]) > 10


@needs_build
def test_an_error_names_the_node_that_failed():
    """The compiled loop marks the failing node on the exception: the message names it."""
    sweeps.COMPILED_FROM = 0
    with pytest.raises(GradcliError, match=r"^v3: log\(-1\) is outside") as domain:
        evaluate("sin(x) + log(x - 2) * 3", {"x": 1.0}, float64=True)
    assert domain.value.exit_code == 2
    with pytest.raises(GradcliError, match=r"v2 = sqrt\(0\) has an infinite slope") as slope:
        evaluate("x + sqrt(x - 1)", {"x": 1.0}, float64=True)
    assert slope.value.exit_code == 1


def test_a_small_tape_keeps_the_python_loop_and_a_stale_build_is_not_used(monkeypatch):
    assert sweeps.compiled_sweep("forward", sweeps.COMPILED_FROM - 1) is None
    monkeypatch.setattr(sweeps, "_module", False)
    monkeypatch.setattr(sweeps, "ABI", -1)
    assert sweeps.compiled_sweep("forward", 10 ** 9) is None


@needs_build
def test_the_compiled_loops_refuse_what_is_not_a_tape():
    from gradcli.engine import _sweeps
    kinds, codes, a0, a1 = _sweeps.pack([abs], [0], [-1])
    assert kinds == [abs] and codes == bytes(2) and a1 == b"\xff" * 4
    with pytest.raises(TypeError):
        _sweeps.forward((abs,), codes, a0, a1, [1.0, 0.0], 1)  # a tuple of primals
    with pytest.raises(TypeError):
        _sweeps.forward([abs], [0], a0, a1, [1.0, 0.0], 1)  # codes not packed
    _, codes5, a05, a15 = _sweeps.pack([abs], [5], [-1])
    with pytest.raises(ValueError):
        _sweeps.forward([abs], codes5, a05, a15, [1.0, 0.0], 1)  # an argument past its node
    with pytest.raises(ValueError):
        _sweeps.forward([], codes, a0, a1, [1.0, 0.0], 1)  # a node of no kind
    with pytest.raises(ValueError):
        _sweeps.forward([abs], codes + b"\0", a0, a1, [1.0, 0.0], 1)  # unequal lengths
    with pytest.raises(ValueError):
        _sweeps.reverse([(abs,)], b"\0", [None], codes, a0, a1, 1, sweeps.packed_slots([7]),
                        [1.0, 1.0], [0.0, 1.0], bytearray(2), None, False, None,
                        None)  # a slot that is no node
    with pytest.raises(TypeError):
        _sweeps.reverse([(abs,)], b"\0", [None], codes, a0, a1, 1, [1], [1.0, 1.0], [0.0, 1.0],
                        bytearray(2), None, False, None, None)  # slots not packed
    with pytest.raises(TypeError):
        _sweeps.reverse([(abs,)], b"\0", [None], codes, a0, a1, 1, sweeps.packed_slots([1]),
                        [1.0, 1.0], [0.0, 1.0], bytearray(2), None, False, None,
                        [None])  # a second kept, no first
    with pytest.raises(TypeError):
        _sweeps.reverse([(abs,)], b"\2", [None], codes, a0, a1, 1, sweeps.packed_slots([1]),
                        [1.0, 1.0], [0.0, 1.0], bytearray(b"\1\1"), None, False, None,
                        None)  # "the other argument" of one
    with pytest.raises(OverflowError):
        _sweeps.pack([abs], [2 ** 40], [-1])


@pytest.mark.parametrize("source", [families.wide(200), families.deep(200), families.shared(200),
                                    "x*y + sin(x)*x"])
def test_a_spent_sweep_leaves_the_inputs_adjoints_both_ways(source):
    """reverse(spend=True), as the certified sweep runs it: each visited node's adjoint is
    None afterwards (its ball freed), and every other slot's is the full sweep's, on floats and
    on bare balls, compiled loops and Python loops alike."""
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
        for threshold in (0, math.inf):
            sweeps.COMPILED_FROM = threshold
            full, _ = reverse(graph, values, m=m)
            spent, _ = reverse(graph, values, m=m, spend=True)
            assert [s for s, a in enumerate(spent) if a is None] == sorted(visited)
            assert all(repr(spent[s]) == repr(full[s]) for s in range(graph.n_slots)
                       if s not in visited)


@pytest.mark.parametrize("name", [name for name, prim in sorted(TABLE.items())
                                  if (prim.form or ("",))[0] == "sum"
                                  or prim.form == ("product", (1, 1))])
def test_a_shortcut_partial_is_what_the_rows_rules_return(name):
    """The compiled reverse loop does not call the partials of a row whose form is a sum or a
    two-factor product (sweeps.Tape.shortcuts): they must be exactly the sum's coefficients
    (equal floats) and the other factor (the same object), in every namespace the loop runs."""
    from flint import arb
    from gradcli.engine.ball import BALL, BARE, Real
    from gradcli.engine.primitives import FLOAT
    from gradcli.engine.sweeps import Tape
    prim = TABLE[name]
    (how,), (constants,) = Tape([prim], b"", b"", b"").shortcuts()
    for m, numbers in ((FLOAT, (0.75, -2.5)), (BARE, (arb(3) / 7, arb(-5) / 3)),
                       (BALL, (Real.of(arb(3) / 7), Real.of(arb(-5) / 3)))):
        args = numbers[:prim.arity]
        y = m.add(*args) if prim.arity == 2 else args[0]  # (the partials here ignore it)
        got = [rule(m, *args, y) for rule in prim.partials]
        if how == sweeps._CONSTANT:
            assert [type(p) for p in got] == [float] * prim.arity and got == list(constants)
        else:
            assert how == sweeps._OTHER and got[0] is args[1] and got[1] is args[0]


def test_an_exact_unit_keeps_the_ball_and_is_no_wider_than_arbs_product():
    """On bare balls (``exact_units``), ``adjoint += upstream · (±1)`` and a first contribution
    to the float 0.0 keep the ball itself (partials._accumulated; _sweeps.c does the same): the
    same number, in a ball inside the one Arb's multiplication and addition give."""
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
    # a float product is added as floats add: 0.0 + -0.0 is +0.0, as in the plain sweep
    assert _accumulated(0.0, 2.0, -1.0) == -2.0
    assert math.copysign(1.0, _accumulated(0.0, -0.0, 1.0)) == 1.0


@pytest.mark.parametrize("source", [families.wide(200), families.deep(200), families.shared(200),
                                    "a = sin(x)\nb = a*y\nc = exp(x)\nb + x"])  # c: dead
def test_the_packed_visit_order_is_the_visit_order(source, monkeypatch):
    """The compiled sweeps read Graph.packed_visit_order: made in C without the list where
    every node is live, else from the list; either way the same slots in the same order."""
    from array import array
    from gradcli.api import compile
    from gradcli.engine import graph as graphs
    monkeypatch.setattr(graphs, "_COMPILED_FROM", 0)
    g = compile(source)
    packed = g.packed_visit_order()
    assert array("i", packed) == array("i", compile(source).visit_order())
    assert len(packed) == 4 * len(g.visit_order()) <= 4 * len(g.ops)


@needs_build
@pytest.mark.parametrize("wrt", [None, ["x"], ["y"]])
def test_a_recorded_sweeps_edges_are_the_same_both_ways(wrt):
    """Recorded.edges (the trace's edges, in the sweep's order) in C and in Python: the same
    sources, targets and argument positions, an argument read twice (x*x) and arguments not
    differentiated (--wrt) included; and the same stable order by target."""
    from gradcli.api import compile
    from gradcli.engine.reverse import reverse
    source = "a = x*x + sin(y)\nb = a*y - exp(x)/(1 + a)\nb + x*y + " + families.wide(2)
    seen = []
    for threshold in (0, math.inf):
        sweeps.COMPILED_FROM = threshold
        g = compile(source)
        active = g.active([g.n_const + g.inputs.index(n) for n in wrt]) if wrt else None
        values = [0.5 + 0.1 * i for i in range(g.n_slots)]  # any numbers: only slots are read
        _, records = reverse(g, values, record=True, active=active)
        seen.append((records.edges(), records.by_target()))
    assert seen[0] == seen[1]
    (sources, targets, which), by_target = seen[0]
    assert len(sources) > 10 and sorted(by_target) == list(range(len(sources)))
    assert [targets[i] for i in by_target] == sorted(targets)


@needs_build
def test_the_compiled_edges_refuse_a_bad_tape():
    from gradcli.engine import _sweeps
    _, _, a0, a1 = _sweeps.pack([abs, abs], [0, 5], [-1, -1])
    with pytest.raises(ValueError):  # node 1's argument is past it
        _sweeps.edges(a0, a1, sweeps.packed_slots([2, 1]), bytearray(b"\1" * 3), 1)
    assert _sweeps.edges(a0, a1, sweeps.packed_slots([1]), bytearray(b"\1" * 3), 1) == tuple(
        sweeps.packed_slots(column) for column in ([1], [0], [0], [0]))
    with pytest.raises(ValueError):  # a slot that is no node
        _sweeps.edges(a0, a1, sweeps.packed_slots([9]), bytearray(b"\1" * 3), 1)
    with pytest.raises(TypeError):
        _sweeps.edges(a0, a1, [1], bytearray(b"\1" * 3), 1)


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


@needs_build
@pytest.mark.parametrize("family", ["wide", "deep", "shared"])
def test_hopeless_adds_up_the_same_both_ways(family):
    """interval.hopeless's sums of |adjoint·value| by kind of row: the compiled loop's are the
    Python sums, bit for bit."""
    from gradcli.api import compile, point_vector
    from gradcli.engine.forward import forward
    from gradcli.engine.interval import _magnitudes
    from gradcli.engine.reverse import reverse
    graph = compile(getattr(families, family)(600))
    values = forward(graph, point_vector(graph, families.POINT))
    adjoint, _ = reverse(graph, values)
    sums = []
    for threshold in (0, math.inf):
        sweeps.COMPILED_FROM = threshold
        sums.append(tuple(map(_bits, _magnitudes(graph, values, adjoint))))
    assert sums[0] == sums[1] and all(float.fromhex(x) > 0 for x in sums[0])
