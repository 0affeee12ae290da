"""A cheap proven bound on the float64 result: interval arithmetic in doubles, outward rounded.

The certified engine (:mod:`gradcli.engine.certify`) is exact but imports python-flint, which
costs more than a whole plain evaluation of a small expression. Most points are benign: the
float64 digits are already right, and an interval sweep in doubles proves it. Each value is an
:class:`Interval` ``[lo, hi]`` that certainly holds the exact one: sums and products are rounded
outward (``math.nextafter``); an elementary function is evaluated at the ends of a piece where it
is monotone and widened by :data:`ULPS` units in the last place, more than the documented error
of the C library's ``exp``, ``log``, ``sin`` … (glibc: at most 2 ulp on x86-64 for these). The
same rows' rules run on intervals through :data:`INTERVAL`. Anything it cannot bound (a kink
straddled, a wide interval, a function without a bound here) raises :class:`Unbounded`, and the
caller goes to the balls.

>>> x = Interval.point(2.0)
>>> y = INTERVAL.log(x) + x * 3.0
>>> y.lo < 6.693147180559945 < y.hi, y.hi - y.lo < 1e-14
(True, True)
"""

from __future__ import annotations

import math

from ..gcpause import gc_paused
from .primitives import TABLE, Namespace, jumps, where

ULPS = 4  # widening of a libm result: glibc's bounds are at most 2 ulp for these functions
# Past this many nodes the balls prove a program sooner than
# this sweep in Python, even counting python-flint's import: the sweep is not tried there.
QUICK_NODES = 4096
_INF = math.inf
_down = math.nextafter


class Unbounded(ArithmeticError):
    """The interval sweep cannot bound this (the balls can)."""


def _lower(x: float, ulps: int = 1) -> float:
    for _ in range(ulps):
        x = _down(x, -_INF)
    return x


def _upper(x: float, ulps: int = 1) -> float:
    for _ in range(ulps):
        x = _down(x, _INF)
    return x


class Interval:
    """``[lo, hi]``, certainly holding the exact value."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: float, hi: float):
        if not (lo <= hi) or lo == -_INF or hi == _INF:  # nan or overflow
            raise Unbounded("not a finite interval")
        self.lo, self.hi = lo, hi

    @staticmethod
    def point(x: float) -> "Interval":
        return Interval(x, x)

    @staticmethod
    def of(x) -> "Interval":
        return x if isinstance(x, Interval) else Interval(float(x), float(x))

    @staticmethod
    def around(x: float) -> "Interval":
        """The interval of a correctly rounded double: the exact value is within half an ulp."""
        return Interval(_lower(x), _upper(x))

    def __add__(self, o):
        if type(o) is float and o == 0.0:  # the reverse sweep's first contribution to an adjoint
            return self
        return _sum(self, o if isinstance(o, Interval) else Interval.of(o), 1.0)

    __radd__ = __add__

    def __sub__(self, o):
        return _sum(self, o if isinstance(o, Interval) else Interval.of(o), -1.0)

    def __rsub__(self, o):
        return Interval.of(o) - self

    def __mul__(self, o):
        if type(o) is float and (o == 1.0 or o == -1.0):  # the partials of + and -: exact
            return self if o > 0 else -self
        if not isinstance(o, Interval):
            o = Interval.of(o)
        a, b, c, d = self.lo, self.hi, o.lo, o.hi
        if a == b and c == d:
            p = a * c
            if p == 0:
                return Interval(0.0, 0.0) if a == 0 or c == 0 else _underflow()
            return Interval(_down(p, -_INF), _down(p, _INF))
        # the ends' products by the signs (one product an end, as a rule), else all four
        if a >= 0.0 and c >= 0.0:
            lo, hi = a * c, b * d
        elif b <= 0.0 and d <= 0.0:
            lo, hi = b * d, a * c
        elif a >= 0.0 and d <= 0.0:
            lo, hi = b * c, a * d
        elif b <= 0.0 and c >= 0.0:
            lo, hi = a * d, b * c
        else:
            ps = (a * c, a * d, b * c, b * d)
            lo, hi = min(ps), max(ps)
        return Interval(_down(lo, -_INF), _down(hi, _INF))

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = Interval.of(o)
        if o.lo <= 0 <= o.hi:
            raise Unbounded("the divisor may be 0")
        qs = (self.lo / o.lo, self.lo / o.hi, self.hi / o.lo, self.hi / o.hi)
        return Interval(_lower(min(qs)), _upper(max(qs)))

    def __rtruediv__(self, o):
        return Interval.of(o) / self

    def __neg__(self):
        return Interval(-self.hi, -self.lo)

    def __pos__(self):
        return self

    def __pow__(self, o):
        return _pow(self, Interval.of(o))

    def __rpow__(self, o):
        return _pow(Interval.of(o), self)

    # certain comparisons, as the balls' (the rows' ``outside`` column reads them)
    def __lt__(self, o):
        return self.hi < Interval.of(o).lo

    def __le__(self, o):
        return self.hi <= Interval.of(o).lo

    def __gt__(self, o):
        return self.lo > Interval.of(o).hi

    def __ge__(self, o):
        return self.lo >= Interval.of(o).hi

    def __float__(self) -> float:
        return 0.5 * self.lo + 0.5 * self.hi

    def __repr__(self) -> str:
        return f"Interval({self.lo!r}, {self.hi!r})"


class Sum(Interval):
    """An interval made by additions, with its ends also held exactly as unevaluated sums:
    the exact value is in ``[slo + elo, shi + ehi]`` (real sums, not rounded), where ``slo``,
    ``shi`` are the doubles the additions rounded to and ``elo``, ``ehi`` their accumulated
    rounding errors, themselves rounded outward. A chain of additions (a long sum, or many
    contributions to one adjoint) carries its rounding errors exactly (TwoSum) and bounds them
    once, at the ends ``lo``, ``hi``: its width is the sum of the terms' widths, not n ulps of
    the partial sums."""

    __slots__ = ("slo", "elo", "shi", "ehi")

    def __neg__(self):
        r = Sum(-self.hi, -self.lo)
        r.slo, r.elo, r.shi, r.ehi = -self.shi, -self.ehi, -self.slo, -self.elo
        return r


def _two_sum(a: float, b: float) -> tuple[float, float]:
    """``a + b`` rounded to nearest, and its rounding error: ``s + e == a + b`` exactly
    (Knuth's TwoSum; exact in binary floating point with round-to-nearest, as Python's floats
    are, unless ``s`` overflows, and then the interval refuses it)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _sum(a: Interval, b: Interval, sign: float) -> Interval:
    """``a + sign*b`` (sign ±1.0) with its ends' rounding errors carried exactly (:class:`Sum`):
    each end is a double plus an error term; TwoSum makes the new double's error exact, and only
    the addition of the (tiny) error terms is rounded, outward, so each end stays a bound."""
    if type(a) is Sum:
        al, ael, ah, aeh = a.slo, a.elo, a.shi, a.ehi
    else:
        al, ah, ael, aeh = a.lo, a.hi, 0.0, 0.0
    if type(b) is Sum:
        bl, bel, bh, beh = b.slo, b.elo, b.shi, b.ehi
    else:
        bl, bh, bel, beh = b.lo, b.hi, 0.0, 0.0
    if sign < 0:
        bl, bel, bh, beh = -bh, -beh, -bl, -bel
    # TwoSum of each end (:func:`_two_sum`, inlined: this is the sweep's most common operation)
    sl = al + bl
    t = sl - al
    el = (al - (sl - t)) + (bl - t)
    sh = ah + bh
    t = sh - ah
    eh = (ah - (sh - t)) + (bh - t)
    # the error terms, rounded outward (each is an ulp or so of the sum: the rounding of their
    # own sums is some 2^-53 of that, and is kept on the safe side too)
    if ael:
        el = _down(el + ael, -_INF)
    if bel:
        el = _down(el + bel, -_INF)
    if aeh:
        eh = _down(eh + aeh, _INF)
    if beh:
        eh = _down(eh + beh, _INF)
    if not el and not eh:  # exact: no widening at all
        return Interval(sl, sh)
    # the ends as doubles: slo + elo rounded down (exact when elo is 0), shi + ehi rounded up
    r = Sum(_down(sl + el, -_INF) if el else sl, _down(sh + eh, _INF) if eh else sh)
    r.slo, r.elo, r.shi, r.ehi = sl, el, sh, eh
    return r


def _underflow():
    raise Unbounded("a product underflows")


def _monotone(f, increasing: bool = True, lo_bound: float = -_INF, hi_bound: float = _INF):
    """An elementary function increasing (or decreasing) on [lo_bound, hi_bound]."""
    def g(a):
        a = Interval.of(a)
        if a.lo < lo_bound or a.hi > hi_bound:
            raise Unbounded("at the edge of the domain")
        try:
            x, y = f(a.lo), f(a.hi)
        except (ValueError, OverflowError, ZeroDivisionError):
            raise Unbounded("outside the domain or overflows") from None
        if not increasing:
            x, y = y, x
        if x == 0 and a.lo != a.hi or not math.isfinite(x) or not math.isfinite(y):
            raise Unbounded("a result near 0 or not finite")
        return Interval(_lower(x, ULPS), _upper(y, ULPS))
    return g


def _periodic(f, slope):
    """sin, cos or tan on an interval shorter than π where ``slope`` keeps one sign."""
    def g(a):
        a = Interval.of(a)
        if a.hi - a.lo > 1.0 or abs(a.lo) > 1e8:
            raise Unbounded("wide or far from 0")
        s0, s1 = slope(a.lo), slope(a.hi)
        if not (s0 > 1e-6 and s1 > 1e-6 or s0 < -1e-6 and s1 < -1e-6):
            raise Unbounded("near a turning point")
        x, y = f(a.lo), f(a.hi)
        if s0 < 0:
            x, y = y, x
        if x == 0 and a.lo != a.hi:
            raise Unbounded("a result near 0")
        return Interval(_lower(x, ULPS), _upper(y, ULPS))
    return g


def _pow(a: Interval, b: Interval) -> Interval:
    if b.lo == b.hi and b.lo == int(b.lo) and abs(b.lo) <= 64:
        n = int(b.lo)
        if n == 0:
            return Interval(1.0, 1.0)
        if n < 0:
            return 1.0 / _pow(a, Interval(-n, -n))
        result = Interval(1.0, 1.0)
        for _ in range(n):  # exact bounds for integer powers, by products (|n| <= 64)
            result = result * a
        if n % 2 == 0 and a.lo < 0 < a.hi:
            raise Unbounded("an even power of an interval holding 0")
        return result
    if a.lo <= 0:
        raise Unbounded("a base that may not be positive")
    return INTERVAL.exp(b * INTERVAL.log(a))


def _sign(a):
    a = Interval.of(a)
    if a.lo > 0:
        return Interval(1.0, 1.0)
    if a.hi < 0:
        return Interval(-1.0, -1.0)
    if a.lo == a.hi == 0:
        return Interval(0.0, 0.0)
    raise Unbounded("the sign is not certain")


def _step(a):
    s = _sign(a)
    return Interval(1.0, 1.0) if s.lo > 0 else Interval(0.0, 0.0)


def _abs(a):
    a = Interval.of(a)
    if a.lo >= 0:
        return a
    if a.hi <= 0:
        return -a
    return Interval(0.0, max(-a.lo, a.hi))


def _min(a, b):
    a, b = Interval.of(a), Interval.of(b)
    return Interval(min(a.lo, b.lo), min(a.hi, b.hi))


def _max(a, b):
    a, b = Interval.of(a), Interval.of(b)
    return Interval(max(a.lo, b.lo), max(a.hi, b.hi))


def _cosh(a):
    a = Interval.of(a)
    if a.lo >= 0:
        return _monotone(math.cosh)(a)
    if a.hi <= 0:
        return _monotone(math.cosh, increasing=False)(a)
    raise Unbounded("cosh around its minimum")


def _hypot(a, b):
    a, b = _abs(a), _abs(b)
    return Interval(_lower(math.hypot(a.lo, b.lo), ULPS), _upper(math.hypot(a.hi, b.hi), ULPS))


def _atan2(a, b):
    """atan2(a, b) right of the branch cut's axis: for b > 0 it is atan(a/b), exactly (the
    quotient's interval, then atan's); elsewhere the balls decide."""
    a, b = Interval.of(a), Interval.of(b)
    if b.lo <= 0:
        raise Unbounded("atan2 left of, or on, the vertical axis")
    return _FUNCTIONS["atan"](a / b)


def _reciprocal_of(name):
    """sec, csc, cot: 1/cos, 1/sin, 1/tan, as the rule table defines them (the divisor's
    interval clear of 0, or the division refuses)."""
    def f(a):
        return 1.0 / _FUNCTIONS[name](a)
    return f


def _unbounded(row):
    def f(*args):
        raise Unbounded(f"no interval bound for {row.name}")
    return f


_log = _monotone(math.log, lo_bound=0.0)
_FUNCTIONS = {
    "add": lambda a, b: Interval.of(a) + b, "sub": lambda a, b: Interval.of(a) - b,
    "mul": lambda a, b: Interval.of(a) * b, "div": lambda a, b: Interval.of(a) / b,
    "neg": lambda a: -Interval.of(a), "pow": lambda a, b: _pow(Interval.of(a), Interval.of(b)),
    "exp": _monotone(math.exp), "expm1": _monotone(math.expm1), "log": _log,
    "log1p": _monotone(math.log1p, lo_bound=-1.0), "log2": _monotone(math.log2, lo_bound=0.0),
    "log10": _monotone(math.log10, lo_bound=0.0), "sqrt": _monotone(math.sqrt, lo_bound=0.0),
    "cbrt": _monotone(TABLE["cbrt"].primal),
    "sin": _periodic(math.sin, math.cos), "cos": _periodic(math.cos, lambda x: -math.sin(x)),
    "tan": _periodic(math.tan, lambda x: 1.0 if abs(math.cos(x)) > 1e-6 else 0.0),
    "asin": _monotone(math.asin, lo_bound=-1.0, hi_bound=1.0),
    "acos": _monotone(math.acos, increasing=False, lo_bound=-1.0, hi_bound=1.0),
    "atan": _monotone(math.atan), "sinh": _monotone(math.sinh), "cosh": _cosh,
    "tanh": _monotone(math.tanh), "asinh": _monotone(math.asinh),
    "acosh": _monotone(math.acosh, lo_bound=1.0),
    "atanh": _monotone(math.atanh, lo_bound=-1.0, hi_bound=1.0),
    "sigmoid": _monotone(TABLE["sigmoid"].primal), "softplus": _monotone(TABLE["softplus"].primal),
    "erf": _monotone(math.erf), "hypot": _hypot,
    "abs": _abs, "sign": _sign, "step": _step, "relu": lambda a: _max(a, 0.0),
    "min": _min, "max": _max, "atan2": _atan2,
    "sec": _reciprocal_of("cos"), "csc": _reciprocal_of("sin"), "cot": _reciprocal_of("tan"),
}


class _Namespace(Namespace):
    # the rules' branch: a certain condition (a comparison is true only when certain) picks
    # one side, as for floats
    where = staticmethod(where)

    @staticmethod
    def is_zero(x) -> bool:
        x = Interval.of(x)
        return x.lo == x.hi == 0

    @staticmethod
    def noninteger(x) -> bool:
        x = Interval.of(x)
        return math.floor(x.lo) == math.floor(x.hi) and x.lo != math.floor(x.lo)


INTERVAL = _Namespace(_unbounded, **_FUNCTIONS, pi=Interval.around(math.pi), e=Interval.around(math.e))


# -- the quick certificate ------------------------------------------------------------------------

def _exact_input(spec) -> Interval | None:
    """An interval holding what the user gave, or None if only the balls can read it."""
    if isinstance(spec, bool):
        spec = int(spec)
    if isinstance(spec, int):
        x = float(spec)
        return Interval(x, x) if x == spec else Interval.around(x)
    if isinstance(spec, float):
        return Interval(spec, spec)
    if isinstance(spec, str):
        text = spec.strip()
        if text.isdigit() and len(text) < 16:
            return Interval.point(float(text))
        try:
            return Interval.around(float(text))  # a decimal: float() rounds it correctly
        except ValueError:
            return None  # a constant expression (pi/4)
    return None


def _recipe(recipe) -> Interval:
    from .graph import evaluate_recipe
    return evaluate_recipe(
        recipe, lambda r: _exact_input(r) if isinstance(r, str) else Interval.point(r),
        lambda name, args: getattr(INTERVAL, name)(*args) if args else getattr(INTERVAL, name))


# How many ulps each way a primitive's interval is widened at least: none where its result is
# exact or a compensated sum, one for a rounded product or quotient, ULPS for a function
_EXACT = frozenset(("add", "sub", "neg", "abs", "min", "max", "relu", "sign", "step"))
_ROUNDED = frozenset(("mul", "div"))


def _magnitudes(graph, values, adjoint) -> tuple[float, float]:
    """The sums of |adjoint·value| over the nodes of rounded rows and over those of functions
    (:func:`hopeless`), in tape order."""
    from itertools import compress
    from operator import mul
    base = graph.base
    classes = [_size_class(p.name) for p in graph.ops]
    sizes = list(map(abs, map(mul, adjoint[base:], values[base:])))
    return (sum(compress(sizes, [c == 1 for c in classes])),
            sum(compress(sizes, [c == 2 for c in classes])))


def _size_class(name: str) -> int:
    """How :func:`hopeless` counts a row's nodes: 0 exact, 1 rounded once, 2 a function."""
    return 0 if name in _EXACT else 1 if name in _ROUNDED else 2


def hopeless(graph, values, adjoint, digits: int) -> bool:
    """Whether the interval sweep certainly cannot prove ``digits`` digits of the value, judged
    from the float64 sweeps (``values``, and ``adjoint`` of every slot) before running it.

    A rounded product or quotient widens its node's interval by at least an ulp each way, a
    function by ULPS ulps: more than ``2u·|v|`` or ``2·ULPS·u·|v|`` in all (u = 2^-53), and the
    output's interval grows by that times |∂output/∂node|, to first order. When the sum over the
    nodes already exceeds a unit in the last digit asked, the output interval's two ends cannot
    round alike. Only a shortcut: skipping the sweep sends the numbers to the balls, which prove
    them anyway."""
    y = values[graph.output]
    if not y or not math.isfinite(y):
        return False
    rounded, functions = _magnitudes(graph, values, adjoint)
    floor = 2.0 * 2.0 ** -53 * (rounded + ULPS * functions)
    return floor > 10.0 ** (math.floor(math.log10(abs(y))) - digits + 1)


def _proven_text(x, digits: int, rounded=None) -> str | None:
    """The ``digits`` digits every number in the interval ``x`` rounds to, or None; with
    ``rounded`` (the float64 result), only if that double rounds to them too."""
    from .rounding import float_text
    x = Interval.of(x)
    if x.lo == x.hi == 0:
        return "0" if rounded is None or rounded == 0 else None
    if not (x.lo > 0 or x.hi < 0):
        return None
    text = float_text(x.lo, digits)
    if float_text(x.hi, digits) != text:
        return None
    if rounded is not None and float_text(rounded, digits) != text:
        return None  # the balls say how many digits float64 got
    return text


@gc_paused()  # a sweep of intervals makes no reference cycle
def certify_quickly(graph, point, wrt_slots, seed: float, digits: int, active=None,
                    floats=None, record: bool = False):
    """The output's value and gradient as proven decimal texts, by one interval sweep, with
    the kinks met exactly; None when the intervals are too wide to prove ``digits`` digits (or
    cannot be computed here): then only the balls can. With ``floats``, the float64 sweeps'
    ``(values, adjoint)`` at the point: the digits are given only where those float64 results
    round to them too (the result reports them as float64's), and the sweep is not run where
    :func:`hopeless` says it cannot succeed, nor past :data:`QUICK_NODES` nodes. With
    ``record``, a fourth item: the sweep's ``(values, adjoint, records)``, from which a trace
    proves its numbers."""
    from .reverse import reverse
    if len(graph.ops) > QUICK_NODES:
        return None
    inputs = [_exact_input(p) for p in point]
    if any(x is None for x in inputs):
        return None
    if floats is not None and hopeless(graph, floats[0], floats[1], digits):
        return None
    y64 = grads64 = None
    if floats is not None:
        y64, grads64 = floats[0][graph.output], [floats[1][s] for s in wrt_slots]
    try:
        values = [_recipe(graph.exact[s]) if s in graph.exact else Interval.point(c)
                  for s, c in enumerate(graph.constants)] + inputs
        for k, prim in enumerate(graph.ops):
            f = getattr(INTERVAL, prim.name)
            b = graph.arg1[k]
            values.append(f(values[graph.arg0[k]]) if b < 0
                          else f(values[graph.arg0[k]], values[b]))
        value = _proven_text(values[graph.output], digits, y64)
        if value is None:  # before the reverse sweep, which costs twice the forward one
            return None
        adjoint, records = reverse(graph, values, seed, m=INTERVAL, active=active, record=record)
    except (ArithmeticError, ValueError, TypeError):
        return None
    texts = [value]
    for i, s in enumerate(wrt_slots):
        text = _proven_text(adjoint[s], digits, None if grads64 is None else grads64[i])
        if text is None:
            return None
        texts.append(text)
    kinks = []
    for k, prim in enumerate(graph.ops):
        if prim.kink is not None:
            args = [values[a] for a in graph.args(k)]
            if jumps(prim):  # a step function exactly on a jump
                if all(a.lo == a.hi for a in args) and prim.kink(*(a.lo for a in args)) == 0:
                    kinks.append(graph.base + k)
                continue
            gap = args[0] - args[1] if len(args) == 2 else args[0]
            if gap.lo == gap.hi == 0:
                kinks.append(graph.base + k)
    if record:
        return texts[0], texts[1:], kinks, (values, adjoint, records)
    return texts[0], texts[1:], kinks
