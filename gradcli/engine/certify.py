"""Certified evaluation: every digit gradcli prints is proven, by ball arithmetic at rising precision.

The same sweeps run on Arb balls (:mod:`gradcli.engine.ball`) instead of floats: constants and
inputs are what the user typed (``0.1`` is 1/10, ``pi`` is π), and every value, partial,
contribution and adjoint comes out as a ball that certainly holds the exact number. A number is
then rounded to ``digits`` significant digits; when the two ends of its ball round alike, those
digits are certain and correctly rounded. Where they do not, or a ball straddles a kink or a
domain boundary, the precision doubles and the sweeps run again (Ziv's strategy), up to a cap:
past it, a number shows the digits that are certain and says so.

The working precision starts at ``max(64, 3.33·digits + 32)`` bits (and a bit more for each
doubling of the graph past 256 nodes) and doubles up to :func:`cap_bits` (``max(4096, 4 ×``
:func:`start_bits`)). Each precision is tried first on bare balls (:data:`ball.BARE`), and on
Reals (balls with their exact rationals) where those cannot settle something.

>>> from gradcli.api import compile
>>> g = compile("(1-cos(x))/x^2")
>>> c = certify(g, ["1e-8"])
>>> c.value.text, c.gradient[0].text
('0.5000000000000', '-8.333333333333e-10')
"""

from __future__ import annotations

import math
import operator
from itertools import compress, count
from dataclasses import dataclass, field
from typing import Sequence

from flint import arb, ctx, fmpq

from ..errors import DomainError, InputError, NumericalError
from ..gcpause import gc_paused
from .ball import (_BARE, BALL, BARE, EXACT_BITS, Real, Uncertifiable, Undecided, parse_decimal,
                   precision)
from ..language.printer import format_constant
from .graph import Graph, domain_error, expression, spell
from .primitives import TABLE, jumps
from .reverse import Contribution, reverse
from .rounding import DEFAULT_DIGITS, Proven, decimal_text, round_significant
from .traceproof import Contributions, Numbers, at



@dataclass
class Certified:
    """What a certified sweep gives: the proven value of each output and gradient component,
    and (with ``record``) every slot's value, the contributions and the adjoints."""

    value: Proven
    gradient: list  # one Proven per input of ``wrt``, in its order
    digits: int  # significant digits asked for
    bits: int  # the working precision that certified them (or the cap)
    values: list = field(default_factory=list)  # every slot's Proven (with record)
    adjoint: list = field(default_factory=list)
    records: list = field(default_factory=list)  # Contributions of Proven numbers
    kinks: list = field(default_factory=list)  # slots of nodes exactly at their kink
    short: str | None = None  # why some number has fewer digits than asked
    reals: list = field(default_factory=list, repr=False)  # every slot's ball, the last sweep
    gradient_reals: list = field(default_factory=list, repr=False)  # the gradient's balls


def cap_bits(digits: int) -> int:
    """The most bits the precision loop works at, for ``digits`` significant digits."""
    return max(4096, 4 * start_bits(digits))


def short_digits(digits: int) -> str:
    """Why some number shows fewer than ``digits`` digits (a ``note:``)."""
    return (f"some numbers have fewer than {digits} certain digits: the working precision "
            f"reached its cap of {cap_bits(digits)} bits")


def start_bits(digits: int) -> int:
    return max(64, int(3.33 * digits) + 32)


# -- exact inputs and constants ----------------------------------------------------------------

def exact_real(spec) -> Real:
    """A Real at the working precision for what the user gave: a decimal or constant-expression
    string (``"0.1"``, ``"pi/4"``), an int, a float (its exact binary value), a Fraction or a
    Decimal."""
    if isinstance(spec, Real):
        return spec
    if isinstance(spec, bool):
        spec = int(spec)
    if isinstance(spec, (int, float)):
        return Real.of(spec)
    if hasattr(spec, "numerator") and hasattr(spec, "denominator"):  # Fraction
        return Real.of(fmpq(int(spec.numerator), int(spec.denominator)))
    text = str(spec).strip()  # a Decimal prints exactly
    q = parse_decimal(text)
    if q is not None:
        return Real(arb(q), q)
    from .graph import compile as compile_source
    graph = compile_source(text)
    if graph.inputs or graph.output >= graph.n_const:
        raise InputError(f"{text!r} is not a number or a constant expression")
    return _constants(graph)[graph.output]


def typed_real(number) -> Real:
    """A constant's number: a literal's text exactly (1/10 for 0.1), a float as it is."""
    return Real.exact(number) if isinstance(number, str) else Real.of(number)


def _constants(graph: Graph) -> list[Real]:
    """Every constant of ``graph`` as the number it is exactly (:meth:`Graph.exact_constants`)."""
    def failed(slot: int) -> Exception:
        # float64 folded it (a double such as pi - 5441592653589793 is an integer); the exact
        # number is outside the domain
        text = graph.constant_text(slot)
        fold = next((name for s, name, _, _ in graph.folds if s == slot), None)
        if fold is None:
            return InputError(f"the number {text} cannot be read exactly")
        return DomainError(f"the constant {text} is, exactly, outside the domain of {fold} "
                           f"({TABLE[fold].domain})",
                           hint="--float64 computes with the doubles instead")
    return graph.exact_constants(BALL, typed_real, failed)


# -- decimal digits of a ball --------------------------------------------------------------------

def _ratio(point: arb) -> tuple[int, int]:
    """An exact ball's value as (numerator, denominator) Python ints."""
    m, e = point.man_exp()
    m, e = int(m), int(e)
    return (m << e, 1) if e >= 0 else (m, 1 << -e)


def _ends(ball: arb):
    lo, hi = _ratio(ball.lower()), _ratio(ball.upper())
    return lo, hi


def _nearest_double(num: int, den: int) -> float:
    try:
        return num / den  # Python's int division is correctly rounded
    except OverflowError:
        return math.inf if num > 0 else -math.inf


HUGE_EXPONENT = 1 << 16  # binary exponents past this are scaled before exact rounding


def _magnitude(x: arb) -> int:
    """The binary exponent of a non-zero exact number: 2^(m-1) <= |x| < 2^m."""
    man, exp = x.man_exp()
    return int(exp) + int(abs(man)).bit_length()


def _huge(ball: arb) -> bool:
    """Whether the ball's binary exponent is too large to write its ends as Python integers
    (beyond the working precision's own bits: a ball of 10^5 digits has ends of 10^5 digits)."""
    limit = HUGE_EXPONENT + ctx.prec + 64
    return abs(int(ball.mid().man_exp()[1])) > limit or (
        not ball.rad().is_zero() and abs(int(ball.rad().man_exp()[1])) > limit)


def _tame(ball: arb) -> arb:
    """The ball with a radius far below its midpoint (erf(30000) = 1 ± 1e-390865038) widened
    to 2^-(working precision + 64) of it: still a ball that holds the number, whose ends are
    integers of a few thousand bits, not of a billion."""
    mid, rad = ball.mid(), ball.rad()
    if mid.is_zero() or rad.is_zero():
        return ball
    floor = _magnitude(mid) - ctx.prec - 64
    if _magnitude(rad) >= floor:
        return ball
    return arb(mid, arb(2) ** floor)


def proven(x: Real, n: int, final: bool = False) -> Proven | None:
    """``x`` to ``n`` certain significant digits, or None if its ball is too wide (with
    ``final``, the digits that are certain however few)."""
    ball = x.b
    if x.q is not None and x.q == 0 or ball.is_zero():
        return Proven(0.0, "0", n, exact=True)
    if not ball.is_finite():
        return Proven(math.nan, "?", 0) if final else None
    ball, shift = _tame(ball), 0
    if _huge(ball) and 0 in ball:  # exp(x) - exp(x) at x = 1e5: 0 ± 1e42197, no digit
        if not final:
            return None
        k = _power_above(ball)  # a bound of 10^(10^2184) (5^5^5^5's ball) says nothing: ?
        return Proven(0.0, f"0 ± 1e{k}", 0) if abs(k) < 10 ** 100 else Proven(math.nan, "?", 0)
    if _huge(ball):
        # 10^(±10^200): the digits are those of ball / 10^shift, shift about log10 |ball| (the
        # floor of its midpoint's, exact, whichever way its ball lies), scaled in Arb, not in
        # integers; its double is 0 or ±inf
        log = abs(ball.mid()).log_base(10).mid()
        if not log.is_finite():  # the precision cannot take its logarithm yet
            return Proven(math.nan, "?", 0) if final else None
        man, exp = log.man_exp()
        shift = int(man) << int(exp) if exp >= 0 else int(man) >> -int(exp)
        ball = ball / arb(10) ** shift
        if not ball.is_finite() or _huge(ball):  # the precision cannot scale it yet
            return Proven(math.nan, "?", 0) if final else None
    (lo_n, lo_d), (hi_n, hi_d) = _ends(ball)
    double = _nearest_double(lo_n, lo_d) if shift == 0 else (
        0.0 if shift < 0 else math.copysign(math.inf, lo_n))

    def text(sign, d, k, m):
        return decimal_text(sign, d, k + shift, m)

    if (lo_n < 0) == (hi_n < 0) and lo_n != 0 and hi_n != 0:
        lo, hi = round_significant(lo_n, lo_d, n), round_significant(hi_n, hi_d, n)
        if lo == hi and (shift or double == _nearest_double(hi_n, hi_d)):
            return Proven(double, text(*lo, n), n, exact=lo_n * hi_d == hi_n * lo_d)
        if not final:
            return None
        # the digits the ball's width leaves (two more, where the ends sit either side of a
        # rounding boundary), then fewer: not every m below n, which is 10^5 tries at --digits 10^5
        width = ball.rad()
        certain = _magnitude(ball.mid()) - _magnitude(width) if not width.is_zero() else n
        for m in range(min(n - 1, int(certain * 0.30103) + 2), 0, -1):
            lo, hi = round_significant(lo_n, lo_d, m), round_significant(hi_n, hi_d, m)
            if lo == hi:
                return Proven(double, text(*lo, m), m)
    if not final:
        return None
    # no digit is certain: a power of ten above |x| (the ball's upper end, which may be far below
    # the doubles)
    return Proven(double, f"0 ± 1e{_power_above(ball) + shift}", 0)


def _power_above(ball: arb) -> int:
    """A k with |x| <= 10^k for every x in the ball: |x| < 2^m <= 10^k (m·log10 2 rounded up:
    by a factor just above log10 2 for m > 0, just below it for m < 0)."""
    m = _magnitude(ball.abs_upper())  # in integers: m may be past the doubles (5^5^5^5)
    return -(-m * 30103 // 100000) if m > 0 else -(-m * 30102999 // 100000000)


# -- the sweeps on balls -----------------------------------------------------------------------

def _forward(graph: Graph, point: Sequence) -> list:
    """Every slot's ball; a primitive certainly outside its domain is a DomainError naming the
    node, a ball that cannot decide raises :class:`Undecided` (with ``slot``)."""
    base = graph.base
    values: list = _constants(graph)
    values += [exact_real(p) for p in point]
    ops, arg0, arg1 = graph.ops, graph.arg0, graph.arg1
    k = 0
    try:
        for k, prim in enumerate(ops):
            f = getattr(BALL, prim.name)
            b = arg1[k]
            values.append(f(values[arg0[k]]) if b < 0 else f(values[arg0[k]], values[b]))
    except (ValueError, ZeroDivisionError):
        args = [values[a] for a in graph.args(k)]
        raise domain_error(graph.ops[k], args, graph.spans[k], node=graph.node_id(base + k),
                           shown=spell(graph.ops[k], [_approximate(a) for a in args])) from None
    except ArithmeticError as exc:
        exc.slot = base + k
        raise
    return values


@gc_paused()  # the sweeps make millions of balls and no reference cycle
def certify(graph: Graph, point: Sequence, *, wrt_slots: Sequence[int] | None = None,
            seed: float = 1.0, digits: int = DEFAULT_DIGITS, record: bool = False,
            active=None, again: Certified | None = None) -> Certified:
    """The output's value and its gradient by the inputs at ``wrt_slots`` (default: all),
    each to ``digits`` certain significant digits; with ``record``, every number of the trace
    too. ``point`` holds each input's exact value (see :func:`exact_real`), in graph order.

    A point certainly outside a domain is a :class:`DomainError`; a gradient that is certainly
    not finite is the float engine's NumericalError; a kink or a boundary that no precision up
    to the cap can decide is a NumericalError that says so.

    ``again``: an earlier certificate of the same graph, point and seed (without ``record``);
    its last forward sweep's balls are reused at its precision, so a trace asked for after the
    values runs only the recorded reverse sweep.
    """
    if wrt_slots is None:
        wrt_slots = list(range(graph.n_const, graph.base))
    reused = again if again is not None and again.reals else None  # its balls, for the first try
    bare = reused is None  # bare balls first, at each precision, while they can

    def sweep(values=None):
        values = _forward(graph, point) if values is None else list(values)
        adjoint, records = reverse(graph, values, seed, record=record, m=BALL, active=active)
        return values, adjoint, records

    def attempt(bits: int, final: bool):
        nonlocal reused, bare
        if bare and not final:
            quick = _bare_attempt(graph, point, wrt_slots, seed, digits, active, record)
            if quick is None:  # proven nothing false, only too wide yet: twice the bits
                return None
            if quick is not _UNSETTLED:
                quick.bits = bits
                if record:  # the trace's numbers: the bare balls' (the Real sweeps' past them)
                    _traced(quick, sweep, quick.records, digits, bits)
                return quick
            bare = False  # a sign, a domain, an exact zero: the Real sweeps, from these bits on
        earlier = reused.reals if reused is not None and bits == reused.bits else None
        reused = None
        values, adjoint, records = sweep(earlier)
        result = _prove(graph, values, adjoint, records, wrt_slots, digits, False, final)
        if result is not None:
            result.bits = bits
            if record:
                _traced(result, sweep, (values, adjoint, records), digits, bits)
        return result
    # a large sweep's balls widen by about an ulp of the working precision a node: start with
    # that many bits more (log2 of the nodes, past 256), not with one attempt lost at 10^6 nodes
    first = start_bits(digits) + max(0, len(graph.ops).bit_length() - 8)
    return rising(graph, digits, attempt, reused.bits if reused is not None else first)


def _traced(result: Certified, sweep, balls, digits: int, bits: int) -> None:
    """The trace's numbers on ``result``, each proven when a table reads it (:class:`_Trace`)."""
    trace = _Trace(sweep, balls, digits, bits)
    result.values, result.adjoint = trace.sequence(0), trace.sequence(1)
    result.records = trace.contributions()


# -- the first attempt on bare balls ------------------------------------------------------------

# rows whose Real result never has a known rational (:data:`ball._BARE` computes their ball)
_NEVER_EXACT = frozenset(name for name in _BARE if name not in (
    "add", "sub", "mul", "div", "neg", "abs", "min", "max", "relu"))
_ZERO = fmpq(0)
# Rows whose Real result for known rationals is the rational these give (ball.py's Real
# functions: +, -, ·, and the piecewise-linear rows), while its height stays small: the bare
# sweep computes it here, without the Real function (a few microseconds a node, in Python).
_RATIONAL = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "neg": operator.neg,
             "abs": abs, "min": min, "max": max, "relu": lambda q: max(q, _ZERO),
             "sign": lambda q: fmpq((q > 0) - (q < 0)), "step": lambda q: fmpq(int(q > 0))}
_KINK = operator.attrgetter("kink")


class _Reals:
    """A sweep's bare balls (and the rationals known exactly, if kept) read as Reals; ``shared``
    (a bytearray over the slots, if kept) is 1 at a node that shares an earlier node's ball
    (:func:`_bare_forward`): the same row of the same rationals."""

    __slots__ = ("balls", "exact", "shared")

    def __init__(self, balls: list, exact: list | None = None, shared: bytearray | None = None):
        self.balls, self.exact, self.shared = balls, exact, shared

    def __getitem__(self, i: int) -> Real:
        x = self.balls[i]
        if type(x) is not arb:
            return Real.of(x)  # an adjoint no contribution reached: 0.0
        return Real(x, self.exact[i] if self.exact is not None else None)

    def __len__(self) -> int:
        return len(self.balls)

    def __iter__(self):
        return (self[i] for i in range(len(self.balls)))


def _approximate(x: Real) -> str:
    """A ball's number for a message: its double's shortest decimal, marked ``≈`` unless that
    decimal is the number exactly (``log(-0.2)`` for log(x - 0.3) at x = 0.1, but
    ``log(≈-0.14159265358979323)`` for log(x - pi) at x = 3)."""
    text = format_constant(float(x))
    return text if x.q is not None and x.q == parse_decimal(text) else "≈" + text


def _bare_forward(graph: Graph, point: Sequence) -> tuple[list, list, bytearray]:
    """Every slot's ball, and its exact rational where the Real sweep would know one: the same
    balls and rationals as :func:`_forward`'s Reals. A node whose Real function could give a
    rational (every argument is one) runs that function (:func:`_exact_node`); the others run
    on bare balls.

    A node of exact arguments is a function of those rationals alone, so the same rational
    objects give the same ball and rational: each is computed once a sweep (a wide sum's
    ``x0*x1 + 0.5``, ``exp`` of it and ``x0 - x1`` recur a million times), and the nodes share
    the one ball, which no sweep changes; the third column is 1 at each such later node."""
    reals = _constants(graph) + [exact_real(p) for p in point]
    balls, exact = [r.b for r in reals], [r.q for r in reals]
    bare = _BARE
    ops, arg0, arg1 = graph.ops, graph.arg0, graph.arg1
    known: dict = {}  # (row, id of each argument's rational) -> the slot that computed it
    base = len(balls)
    shared = bytearray(base + len(ops))
    for k in range(len(ops)):
        prim, a, b = ops[k], arg0[k], arg1[k]
        qa = exact[a]
        qb = exact[b] if b >= 0 else _ZERO  # (_ZERO: no second argument)
        if qa is not None and qb is not None:
            # the rationals are kept alive by ``exact`` for the whole sweep: their ids are theirs
            key = (prim, id(qa), id(qb))
            s = known.get(key)
            if s is not None:
                balls.append(balls[s])
                exact.append(exact[s])
                shared[base + k] = 1
                continue
            _exact_node(prim.name, a, b, qa, qb, balls, exact)
            if len(known) < _KNOWN:
                known[key] = len(balls) - 1
            continue
        f = bare.get(prim.name)
        if f is not None:
            balls.append(f(balls[a]) if b < 0 else f(balls[a], balls[b]))
            exact.append(None)
            continue
        _real_node(prim.name, a, b, balls, exact)
    return balls, exact, shared


_KNOWN = 1 << 16  # nodes of exact arguments remembered a sweep: the recurring ones, bounded


def _exact_node(name: str, a: int, b: int, qa, qb, balls: list, exact: list) -> None:
    """A node whose arguments are exact rationals ``qa`` and ``qb`` (``_ZERO`` for a unary row),
    appended to :func:`_bare_forward`'s columns as its Real function gives it: a row that is
    never exact on bare balls, +, -, · and the piecewise-linear rows on the rationals (while
    they stay small), any other by its Real function."""
    f = _BARE.get(name)
    if f is not None and name in _NEVER_EXACT:
        balls.append(f(balls[a]) if b < 0 else f(balls[a], balls[b]))
        exact.append(None)
        return
    r = _RATIONAL.get(name)
    if r is not None:
        q = r(qa) if b < 0 else r(qa, qb)  # as the Real function: the rational, if small
        if q.height_bits() <= EXACT_BITS:
            balls.append(arb(q))
            exact.append(q)
            return
        if f is not None:
            balls.append(f(balls[a]) if b < 0 else f(balls[a], balls[b]))
            exact.append(None)
            return
    _real_node(name, a, b, balls, exact)


def _real_node(name: str, a: int, b: int, balls: list, exact: list) -> None:
    """The node's Real function, appended to :func:`_bare_forward`'s columns: what a bare ball
    cannot know."""
    f = getattr(BALL, name)
    r = f(Real(balls[a], exact[a])) if b < 0 else f(Real(balls[a], exact[a]),
                                                     Real(balls[b], exact[b]))
    balls.append(r.b)
    exact.append(r.q)


_UNSETTLED = object()  # what only the Real sweeps can settle


def _bare_attempt(graph, point, wrt_slots, seed, digits, active, record: bool = False):
    """The value and gradient at the working precision, the reverse sweep's rules on bare
    balls (python-flint's arb, no Real around each: half the time); None where a number's ball
    is too wide yet but clear of 0 (more bits will do), :data:`_UNSETTLED` where anything is
    not simply settled (a sign, a domain, a kink, a ball that holds 0: maybe an exact zero):
    then the Real sweeps decide, as they always did. Every ball holds the exact number (Arb's
    arithmetic), so what it proves is proven; it proves nothing a Real sweep would not. With
    ``record``, the result's ``records`` holds the sweep's (values, adjoints, contributions), for
    a trace."""
    try:
        balls, exact, shared = _bare_forward(graph, point)
        # spent: only the inputs' adjoints are read (a ball a node was half the sweep's memory)
        adjoint, records = reverse(graph, balls, seed, record=record, m=BARE, active=active,
                                   spend=not record)
        values, adjoints = _Reals(balls, exact, shared), _Reals(adjoint)
        result = _prove(graph, values, adjoints, [], wrt_slots, digits, False, False)
        if result is not None:
            if record:
                result.records = (values, adjoints, records)
            return result
        shown = [values[graph.output].b] + [adjoints[s].b for s in wrt_slots]
        return None if all(x.is_finite() and 0 not in x for x in shown) else _UNSETTLED
    except Exception:  # noqa: BLE001 - anything unsettled here, the Real sweeps settle
        return _UNSETTLED


class _Trace:
    """Every number of a recorded certified sweep, proven the first time it is read: a trace
    table of a large program shows 40 rows of its tens of thousands, and proving a number's
    digits costs more than its ball. A number the current precision cannot prove sends the
    whole sweep round again at twice the bits (up to the cap, where the digits that are certain
    are shown); what was proven before stays proven."""

    def __init__(self, sweep, balls, digits: int, bits: int):
        self.sweep, self.balls, self.digits, self.bits = sweep, list(balls), digits, bits
        self.proven: dict = {}

    def number(self, where: tuple):
        """The number at ``where`` (:func:`~gradcli.engine.traceproof.at`), proven."""
        got = self.proven.get(where)
        while got is None:
            cap = cap_bits(self.digits)
            # Arb reads a ball's ends, and multiplies a contribution out of the sweep's upstream
            # adjoint and local partial, at the sweep's working precision
            with precision(self.bits):
                got = proven(Real.of(at(self.balls, where)), self.digits, self.bits >= cap)
            if got is None:  # more bits: the whole sweep again
                self.bits = min(2 * self.bits, cap)
                with precision(self.bits):
                    self.balls = list(self.sweep())
        self.proven[where] = got
        return got

    def sequence(self, which: int) -> Numbers:
        return Numbers(self, which)

    def contributions(self) -> Contributions:
        return Contributions(self)


def rising(graph: Graph, digits: int, attempt, first: int | None = None):
    """Ziv's loop: ``attempt(bits, final)`` at the working precision ``bits``, doubling from
    :func:`start_bits` (or ``first``) to :func:`cap_bits` while it returns None or cannot decide
    (``final``: the last try, which must return what is certain)."""
    bits, cap = first or start_bits(digits), cap_bits(digits)
    while True:
        with precision(bits):
            try:
                result = attempt(bits, bits >= cap)
                stuck = None
            except Undecided as exc:
                result, stuck = None, exc
            except Uncertifiable as exc:
                raise NumericalError(f"{exc}: its digits cannot be certified",
                                     hint="--float64 computes without certification") from None
        if result is not None:
            return result
        if bits >= cap:
            raise _stuck_error(graph, stuck, cap)
        bits = min(2 * bits, cap)


def _prove(graph, values, adjoint, records, wrt_slots, n, record, final) -> Certified | None:
    """Every number to show, proven to ``n`` digits; None when one is not yet (before the cap)."""
    def p(x):
        return proven(Real.of(x), n, final)

    value = p(values[graph.output])
    gradient = [p(adjoint[s]) for s in wrt_slots]
    if value is None or any(g is None for g in gradient):
        return None
    shown_values = shown_adjoint = shown_records = []
    if record:
        shown_values = [p(v) for v in values]
        shown_adjoint = [p(a) for a in adjoint]
        shown_records = [Contribution(r.source, r.target, p(r.upstream), p(r.local),
                                      p(r.contribution)) for r in records]
        if (any(v is None for v in shown_values) or any(a is None for a in shown_adjoint)
                or any(x is None for r in shown_records for x in r[2:])):
            return None
    everything = [value, *gradient, *shown_values, *shown_adjoint,
                  *(x for r in shown_records for x in r[2:])]
    short = None
    if any(x.digits < n for x in everything):
        short = short_digits(n)
    return Certified(value, gradient, n, 0, shown_values, shown_adjoint, shown_records,
                     _kinks(graph, values, adjoint), short, values,
                     [Real.of(adjoint[s]) for s in wrt_slots])


def _kinks(graph: Graph, values: list, adjoint=None) -> list[int]:
    """Slots of the nodes whose arguments are exactly at their primitive's kink, leaving out a
    turn (not a jump) whose adjoint is exactly 0: there either side's slope is multiplied by 0;
    and a shift's max (:attr:`Graph.shifts`: logsumexp's and softmax's m, whose path carries
    1 - Σ softmax, exactly 0 though a ball of it holds 0 only as 0 ± 1e-1232 where exp(x - m)
    is irrational)."""
    found = []
    base, arg0, arg1 = graph.base, graph.arg0, graph.arg1
    balls = values.balls if type(values) is _Reals else None
    shifts = graph.shifts
    # the nodes of rows with a kink, picked at C speed: most nodes of a large tape have none
    for k in compress(count(), map(_KINK, graph.ops)):  # a kink is a function: never false
        if jumps(graph.ops[k]):  # on a jump: every argument exactly a double, on the jump
            doubles = [_double(values[a]) for a in graph.args(k)]
            if None not in doubles and graph.ops[k].kink(*doubles) == 0:
                found.append(base + k)
            continue
        if base + k in shifts:
            continue
        if balls is not None:  # a gap whose ball (which holds it) is clear of 0 is no kink
            a, b = arg0[k], arg1[k]
            gap = balls[a] if b < 0 else balls[a] - balls[b]
            if type(gap) is arb and 0 not in gap:
                continue
        args = [values[a] for a in graph.args(k)]
        gap = args[0] - args[1] if len(args) == 2 else args[0]
        if Real.of(gap).is_zero() and (adjoint is None or not _exactly_zero(adjoint[base + k])):
            found.append(base + k)
    return found


def _exactly_zero(x) -> bool:
    """Whether an adjoint is certainly 0 (a Real that is exactly 0; None: not swept)."""
    return x is not None and (x == 0 if type(x) in (int, float) else Real.of(x).is_zero())


def _double(x: Real) -> float | None:
    """The double that ``x`` is exactly, or None (a ball, or a rational no double holds)."""
    if x.q is None:
        return None
    try:
        f = int(x.q.p) / int(x.q.q)  # correctly rounded
    except OverflowError:
        return None
    return f if fmpq(*f.as_integer_ratio()) == x.q else None


def _stuck_error(graph: Graph, exc: Exception, cap: int) -> NumericalError:
    slot = getattr(exc, "slot", None)
    if slot is None or slot < graph.base:
        return NumericalError(f"the digits could not be certified at up to {cap} bits ({exc})",
                              hint="--float64 computes without certification")
    k = slot - graph.base
    node = graph.node_id(slot)
    prim = graph.ops[k]
    if "not finite" in str(exc) and prim.domain == "all reals":
        return NumericalError(
            f"{node} = {expression(graph, slot)} is too large in magnitude to compute at up to "
            f"{cap} bits of precision", graph.spans[k], node=node,
            hint="--float64 computes in plain float64 without certification")
    if "not finite" in str(exc) and "≠" in prim.domain:
        # a pole at an irrational point (tan at π/2): said as the function's own fact
        args = [graph.node_id(a) for a in graph.args(k)]
        return NumericalError(
            f"{node} = {expression(graph, slot)}: {prim.name} is undefined where "
            f"{prim.domain.replace('≠', '=')}, and {', '.join(args)} is such a point, or "
            f"closer to one than {cap} bits of precision can tell apart", graph.spans[k],
            node=node, hint="--float64 computes in plain float64 without certification")
    return NumericalError(
        f"{node} = {expression(graph, slot)} cannot be decided at up to {cap} bits of "
        f"precision: {exc} (the exact value may sit on a kink, a jump or a domain boundary "
        "that is not a rational number)", graph.spans[k], node=node,
        hint="--float64 computes in plain float64 without certification")


# -- what plain float64 gets right ---------------------------------------------------------------

def agreement(x: float | None, exact: Real, n: int) -> int:
    """How many of the ``n`` leading significant digits of ``x`` (a float64 result) are right:
    the most m <= n for which ``x`` and the exact value round alike to m digits."""
    if x is None or not math.isfinite(x):
        return 0
    ball = exact.b
    if exact.is_zero() or ball.is_zero():
        return n if x == 0 else 0
    if x == 0 or not ball.is_finite() or _huge(ball):
        return 0
    (lo_n, lo_d), (hi_n, hi_d) = _ends(ball)
    if (lo_n < 0) != (hi_n < 0) or lo_n == 0 or hi_n == 0:
        return 0
    xn, xd = x.as_integer_ratio()
    for m in range(n, 0, -1):
        mine = round_significant(xn, xd, m)
        if mine == round_significant(lo_n, lo_d, m) == round_significant(hi_n, hi_d, m):
            return m
    return 0


def _half_tolerance(n: int) -> float:
    """Half a unit in digit m = ceil(n/2) + 1 of a number, relative to the number: at least
    0.05·10^-(m-1) (its leading digit's decade is above a tenth of it), and a tenth of that, a
    margin for the floats' own rounding."""
    return 0.005 * 10.0 ** -((n + 1) // 2)


def _keeping_half(floats: Sequence[float], balls: Sequence[arb], n: int) -> list[bool]:
    """For each double and ball, a quick sufficient test (floats only) that :func:`agreement`
    is at least ``n/2`` (n >= 2): their span is below half a unit in digit m = ceil(n/2) + 1
    <= n, so it holds at most one of the rounding boundaries of m - 1 and of m digits (the
    former lie on the m-digit grid, half a unit from the latter), and the two round alike to
    m - 1 >= n/2 digits or to m. The ball's radius is below |midpoint|·2^-accuracy (Arb's
    relative accuracy in bits); False means only "not decided here"."""
    if n < 2:
        return [False] * len(floats)
    tolerance, inf = _half_tolerance(n), math.inf
    mids = map(float, balls)  # the midpoints' nearest doubles
    accuracies = map(arb.rel_accuracy_bits, balls)
    return [acc >= 20 and 0.0 < x * m < inf
            and abs(x - m) + abs(m) * (2.0 ** -acc + 4.5e-16) + 4.5e-16 * abs(x)
            < tolerance * min(abs(x), abs(m) * 0.999)
            for x, m, acc in zip(floats, mids, accuracies)]


_VECTOR_FROM = 50_000  # nodes: from here float64_loss's quick test runs on NumPy columns


def _not_keeping_half(floats: Sequence[float], balls: Sequence[arb], n: int, start: int = 0,
                      skip: bytearray | None = None):
    """The positions from ``start`` where :func:`_keeping_half` is False, in order (counted
    from ``start``), as they are found, leaving out those where ``skip`` is 1. A large tape's
    test runs on NumPy columns where NumPy is installed: the same IEEE operations on the same
    doubles (2^-acc is exact both ways), so the same positions, at a third of the time; a block
    of 65,536 nodes at a time, so a caller that stops at the first position it wants tests no
    more, and the columns are the size of a block, not of the tape (at 10^6 terms, a second of
    the system's time making them)."""
    np = None
    if n >= 2 and len(balls) - start >= _VECTOR_FROM:
        try:
            import numpy as np  # the batch extra's: a plain install keeps the scalar test
        except ImportError:
            np = None
    for lo in range(start, len(balls), _BLOCK):
        hi = min(lo + _BLOCK, len(balls))
        block, x = balls[lo:hi], floats[lo:hi]
        tested = None if skip is None else skip[lo:hi].translate(_UNSHARED)
        if tested is not None:
            block = list(compress(block, tested))
        if np is None:
            at = range(lo - start, hi - start)  # each position tested, counted from start
            if tested is not None:
                x, at = list(compress(x, tested)), list(compress(at, tested))
            keeping = _keeping_half(x, block, n)
            yield from (at[k] for k, keep in enumerate(keeping) if not keep)
            continue
        x = np.array(x, dtype=float)
        at = np.arange(lo - start, hi - start)
        if tested is not None:
            mask = np.frombuffer(tested, np.bool_)
            x, at = x[mask], at[mask]
        m = np.fromiter(map(float, block), float, len(block))
        acc = np.fromiter(map(arb.rel_accuracy_bits, block), float, len(block))
        with np.errstate(all="ignore"):  # inf and nan compare False, as for Python's floats
            xm = x * m
            keep = ((acc >= 20) & (0.0 < xm) & (xm < math.inf)
                    & (np.abs(x - m) + np.abs(m) * (np.exp2(-acc) + 4.5e-16) + 4.5e-16 * np.abs(x)
                       < _half_tolerance(n) * np.minimum(np.abs(x), np.abs(m) * 0.999)))
        yield from at[~keep].tolist()


_BLOCK = 1 << 16
_UNSHARED = bytes.maketrans(b"\0\1", b"\1\0")  # a shared column's 0 and 1 swapped: nodes tested


@gc_paused()
def float64_loss(graph: Graph, float_values: Sequence[float], reals: Sequence[Real],
                 n: int) -> int | None:
    """The first node (in tape order) where float64 keeps fewer than half of ``n`` digits while
    its arguments keep them all: where the digits are lost (a cancellation, mostly).

    A node that shares an earlier node's ball (:attr:`_Reals.shared`: the same row of the same
    exact arguments, which float64 computes from the same doubles) keeps what that node keeps,
    and is not where the digits are first lost: only the others are tested."""
    base = graph.base
    bare = type(reals) is _Reals
    balls = reals.balls if bare else [r.b for r in reals]
    skip = reals.shared if bare else None
    for k in _not_keeping_half(float_values, balls, n, base, skip):  # at float speed, mostly
        s = base + k
        if agreement(float_values[s], reals[s], n) < n / 2 and all(
                a < base or agreement(float_values[a], reals[a], n) >= n for a in graph.args(k)):
            return s
    return None


def certify_tangents(graph: Graph, point: Sequence, directions: Sequence[Sequence[float]], *,
                     seed: float = 1.0, digits: int = DEFAULT_DIGITS, active=None,
                     record: bool = False) -> tuple:
    """Forward mode on balls: the output's proven value and, for each direction (input tangents
    in graph order), the proven derivative along it, scaled by ``seed``; then the balls (value,
    derivatives, every slot's value, the partials). With ``record``, every slot's value, partial
    and tangent is proven too (the trace shows them) and comes last: (values, partials,
    sweeps) as Proven numbers."""
    from .partials import local_partials
    from .tangent import tangent_sweep
    out = graph.output

    def attempt(bits: int, final: bool):
        values = _forward(graph, point)
        partials = local_partials(graph, values, BALL, active=active)
        derivatives, sweeps = [], []
        for direction in directions:
            sweep = tangent_sweep(graph, partials, direction)
            t = sweep[out]
            derivatives.append(seed * (0.0 if t is None else t))
            if record:
                sweeps.append(sweep)
        shown = [proven(Real.of(x), digits, final) for x in [values[out], *derivatives]]
        if any(x is None for x in shown):
            return None
        balls = (values[out], derivatives, values, partials)
        if not record:
            return shown[0], shown[1:], balls
        columns = (values, *partials, *sweeps)
        every = [[None if x is None else proven(Real.of(x), digits, final) for x in column]
                 for column in columns]
        if any(p is None and x is not None for column, raw in zip(every, columns)
               for p, x in zip(column, raw)):
            return None
        return shown[0], shown[1:], balls, every
    return rising(graph, digits, attempt)


def certify_hessian(graph: Graph, point: Sequence, columns: Sequence[int], *,
                    digits: int = DEFAULT_DIGITS, active=None) -> tuple:
    """The value, the gradient and the Hessian by the inputs at positions ``columns`` (graph
    order), every entry proven to ``digits`` digits: forward-over-reverse on dual balls."""
    from .dual import hessian_matrix
    n_const = graph.n_const

    def attempt(bits: int, final: bool):
        values = _forward(graph, point)
        adjoint, _ = reverse(graph, values, 1.0, m=BALL, active=active)
        matrix = hessian_matrix(graph, values, list(columns), active, base=BALL)
        numbers = [values[graph.output], *(adjoint[n_const + j] for j in columns),
                   *(x for row in matrix for x in row)]
        shown = [proven(Real.of(x), digits, final) for x in numbers]
        if any(x is None for x in shown):
            return None
        k = len(columns)
        return shown[0], shown[1:1 + k], [shown[1 + k + i * k:1 + k + (i + 1) * k]
                                          for i in range(k)]
    return rising(graph, digits, attempt)


def certify_product(graph: Graph, point: Sequence, *, cotangent: Sequence[float] | None = None,
                    direction: Sequence[float] | None = None, columns: Sequence[int] = (),
                    digits: int = DEFAULT_DIGITS) -> tuple[list, list]:
    """A Jacobian product of a program with several outputs, every number proven: each
    output's value, and ``wᵀJ`` (one reverse sweep seeded with ``cotangent`` on the outputs,
    read at the inputs in positions ``columns``) or ``J·d`` (one tangent sweep along
    ``direction``, read at every output)."""
    from .partials import local_partials
    from .tangent import tangent_sweep

    def attempt(bits: int, final: bool):
        values = _forward(graph, point)
        if cotangent is not None:
            adjoint, _ = reverse(graph, values, cotangent=cotangent, m=BALL)
            product = [adjoint[graph.n_const + j] for j in columns]
        else:
            sweep = tangent_sweep(graph, local_partials(graph, values, BALL), direction)
            product = [0.0 if sweep[s] is None else sweep[s] for s in graph.output_slots]
        shown = [proven(Real.of(x), digits, final)
                 for x in [*(values[s] for s in graph.output_slots), *product]]
        if any(x is None for x in shown):
            return None
        return shown[:graph.n_outputs], shown[graph.n_outputs:]
    return rising(graph, digits, attempt)


def certify_hvp(graph: Graph, point: Sequence, direction: Sequence[float],
                columns: Sequence[int], *, digits: int = DEFAULT_DIGITS, active=None) -> tuple:
    """The value, the gradient and the Hessian-vector product H·``direction`` (input tangents in
    graph order), both read at the inputs at positions ``columns``, every number proven to
    ``digits`` digits: one tangent sweep and one reverse sweep on dual balls, whatever the
    number of inputs (forward-over-reverse, as :func:`certify_hessian` column by column)."""
    from .dual import hessian_vector_product
    from .partials import local_partials

    def attempt(bits: int, final: bool):
        values = _forward(graph, point)
        partials = local_partials(graph, values, BALL, active=active)
        gradient, product = hessian_vector_product(graph, values, partials, list(direction),
                                                   active, base=BALL)
        numbers = [values[graph.output], *(gradient[j] for j in columns),
                   *(product[j] for j in columns)]
        shown = [proven(Real.of(x), digits, final) for x in numbers]
        if any(x is None for x in shown):
            return None
        k = len(columns)
        return shown[0], shown[1:1 + k], shown[1 + k:]
    return rising(graph, digits, attempt)
