"""The quick proof: a proven bound on the error of float64 results, for one point or many rows.

The single-point engine and the batch engine compute in float64. Here the same tape is swept
again, forward and reverse, with the same rules of the table (:mod:`gradcli.engine.primitives`),
over a namespace whose values are :class:`Bounded`: the float64 value (for a point, a float; for
a batch, a NumPy column computed by the batch engine's own operations, so the same bits) and a
bound ``err`` on its distance from the exact value of the expression at the point. Each
operation adds the error it inherits, bounded over the whole interval ``[x - err, x + err]``
(not to first order), and its own rounding:

- ``+ - * /``: the exact propagation formulas (``|x|·ey + |y|·ex + ex·ey`` for a product,
  ``(ex + |x/y|·ey) / (|y| - ey)`` for a quotient) and half an ulp of rounding; on a point, a
  sum's rounding error is carried exactly instead (TwoSum, in ``c``), so a long sum of accurate
  terms keeps its digits;
- a function: a rational bound of its change over the interval (:data:`BOUNDS`: ``e/(|x|-e)``
  for log, ``|v|·e·(1+e)`` for exp, ``|cos x|·e + e²/2`` for sin, ``e/sqrt(1-m²)`` for asin
  with m the interval's reach, ...), so that no function is evaluated again, plus its own error
  (:data:`ULPS` ulps); sec, csc, cot and log(a, b) are bounded as the compositions the engines
  compute (``1/cos(a)``); the gamma family on the positive axis, where the bounds of
  ψ and its derivatives hold (``ln t - 1/t <= ψ(t) <= ln t``); sign and step: exact where the
  interval does not reach the kink, unbounded where it does; floor, ceil, trunc, round and mod:
  exact where the interval's ends fall on one piece (``nextafter`` outward), unbounded where
  they do not.

The formulas are written once over :data:`xp`, NumPy's functions that a point's floats get from
``math`` (a plain ``eval`` never imports NumPy). The bound's own arithmetic rounds to nearest:
the factor 2 below covers it.

One point (:func:`certify_quickly`, tried before Arb by ``eval``): the output's value and
gradient are proven to ``digits`` digits where the whole interval ``[v + c - 2·err,
v + c + 2·err]`` rounds to the digits float64 printed; otherwise the balls prove them.

Many rows (``eval --points/--grid --with-digits``): a row's certain digits are
``floor(-log10(2·err/|value|))``, the least over its outputs; a bound below the smallest normal
double (2.2e-308: an exact zero, say) counts as all 17. A row whose bound is not finite (a kink
or a pole inside the interval) has none.

The quick test (:class:`QuickTest`, run beside the batch sweep by ``eval --points/--grid``;
``certain_digits(..., enough=k, results=...)`` after it): the same code swept once over a block
of rows, with each value an :class:`Interval` holding every row's value and each bound one
number, larger than every row's (each formula grows with ``|value|`` and ``err``, and shrinks
with the smallest ``|value|`` where it divides: :func:`_mag` and :func:`_low`; rounding to
nearest keeps that order; :data:`SAFETY` covers the few ulps by which NumPy's functions differ
between a column and one number). A row whose result is far enough from 0 for that one bound to
give it ``k`` digits has them by its own bound too; only the other rows are swept row by row.
So the rows sent to the certified engine, and every digit claimed, are the row-by-row bound's,
whichever rows share a block (tests/test_bounds_rules.py).

>>> import numpy as np
>>> from gradcli.engine.graph import compile
>>> digits = certain_digits(compile("(1-cos(x))/x^2"), {"x": np.array([1.0, 1e-8])})
>>> digits.tolist()  # at 1e-8, 1 - cos(x) cancels every digit
[12, 0]
>>> x = Bounded(2.0)  # an exact input
>>> y = POINT.log(x) + x * 3.0
>>> proven_text(y, 13), ends(y)[0] < 6.693147180559945 < ends(y)[1]
('6.693147180560', True)
"""

from __future__ import annotations

import math
import sys
from contextlib import nullcontext
from functools import cache
from types import SimpleNamespace
from typing import Iterable, Mapping

from ..errors import GradcliError, LimitError
from ..gcpause import gc_paused
from .graph import Graph
from .primitives import CONSTANTS, FLOAT, TABLE, Namespace, jumps
from .reverse import visit_order

U = 2.0 ** -53  # the unit roundoff: half an ulp, relative
TINY = 2.0 ** -1074  # the smallest subnormal: an absolute floor for every rounding
SMALLEST_NORMAL = 2.0 ** -1022
MIN_DIGITS = 10  # a row with fewer certain digits goes to the certified engine
# The largest error of each function as computed here (NumPy's, trig.sincos, CPython's math
# and gradcli.engine.special), in ulps; a generous bound where the library does not document
# one (tests/test_bounds.py measures each against mpmath).
ULPS = {"sin": 1.5, "cos": 1.5, "gamma": 64.0, "lgamma": 64.0, "digamma": 64.0,
        "trigamma": 64.0, "sinc": 8.0}
DEFAULT_ULPS = 4.0
# lgamma and digamma have roots (1, 2; 1.4616…), where their error is absolute, not relative:
# this many ulps of (|value| + 4) (the size of the terms that cancel there).
ABSOLUTE = {"lgamma", "digamma"}


def _numpy():
    import numpy
    return numpy


def _plain(*xs) -> bool:
    """Whether these are one point's numbers (floats, bools), for math; else NumPy's."""
    return all(type(x) is float or type(x) is bool or type(x) is int for x in xs)


def _unary(name: str, plain):
    def f(x, *more, **options):
        return plain(x) if type(x) is float else getattr(_numpy(), name)(x, *more, **options)
    return f


def _nan_max(a, b):
    return a if a >= b or a != a else b  # NaN wins, as in np.maximum


def _nan_min(a, b):
    return a if a <= b or a != a else b


def _fmin(a, b):
    return b if a != a else a if b != b or a <= b else b  # NaN loses, as in np.fmin


def _binary(name: str, plain):
    def f(a, b):
        return plain(a, b) if _plain(a, b) else getattr(_numpy(), name)(a, b)
    return f


def _choose(condition, x, y):
    return (x if condition else y) if type(condition) is bool else _numpy().where(condition, x, y)


def _errstate(**options):
    """NumPy's errstate, once NumPy is loaded (before, no NumPy operation can run)."""
    numpy = sys.modules.get("numpy")
    return nullcontext() if numpy is None else numpy.errstate(**options)


class _Functions(SimpleNamespace):
    """The NumPy functions the bounds are written with (:data:`xp`): on a point's plain floats
    computed by ``math`` (where NumPy would give NaN or inf, math may raise instead: the point is
    then left to the balls), on columns and a chunk's numbers by NumPy; any other name is
    NumPy's."""

    def __getattr__(self, name: str):
        return getattr(_numpy(), name)


xp = _Functions(
    where=_choose, maximum=_binary("maximum", _nan_max), minimum=_binary("minimum", _nan_min),
    fmin=_binary("fmin", _fmin), abs=_unary("abs", abs), sqrt=_unary("sqrt", math.sqrt),
    cbrt=_unary("cbrt", TABLE["cbrt"].primal), log=_unary("log", math.log),
    exp=_unary("exp", math.exp), expm1=_unary("expm1", math.expm1),
    sinh=_unary("sinh", math.sinh), isnan=_unary("isnan", math.isnan),
    asarray=_unary("asarray", float), ndim=lambda x: 0 if _plain(x) else _numpy().ndim(x),
    nextafter=_binary("nextafter", math.nextafter), power=_binary("power", math.pow),
    errstate=_errstate, inf=math.inf)


class Unbounded(ArithmeticError):
    """No bound here (a chunk's range the quick test cannot bound, a point the balls prove)."""


def _down(x: float, ulps: int = 1) -> float:
    for _ in range(ulps):
        x = math.nextafter(x, -math.inf)
    return x


def _up(x: float, ulps: int = 1) -> float:
    for _ in range(ulps):
        x = math.nextafter(x, math.inf)
    return x


class Interval:
    """``[lo, hi]``, certainly holding the exact value: the quick test's summary of a chunk of
    rows (every row's value lies in it). Sums and products are rounded outward."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: float, hi: float):
        if not (lo <= hi) or lo == -math.inf or hi == math.inf:  # nan or overflow
            raise Unbounded("not a finite interval")
        self.lo, self.hi = lo, hi

    @staticmethod
    def of(x) -> "Interval":
        return x if isinstance(x, Interval) else Interval(float(x), float(x))

    def __add__(self, o):
        o = Interval.of(o)
        return Interval(_down(self.lo + o.lo), _up(self.hi + o.hi))

    __radd__ = __add__

    def __sub__(self, o):
        return self + -Interval.of(o)

    def __rsub__(self, o):
        return Interval.of(o) - self

    def __mul__(self, o):
        o = Interval.of(o)
        ps = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return Interval(_down(min(ps)), _up(max(ps)))  # a step out covers any rounding

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = Interval.of(o)
        if o.lo <= 0 <= o.hi:
            raise Unbounded("the divisor may be 0")
        qs = (self.lo / o.lo, self.lo / o.hi, self.hi / o.lo, self.hi / o.hi)
        return Interval(_down(min(qs)), _up(max(qs)))

    def __rtruediv__(self, o):
        return Interval.of(o) / self

    def __neg__(self):
        return Interval(-self.hi, -self.lo)

    def __pow__(self, o):
        return _interval_pow(self, Interval.of(o))

    def __rpow__(self, o):
        return _interval_pow(Interval.of(o), self)

    def __repr__(self) -> str:
        return f"Interval({self.lo!r}, {self.hi!r})"


def _ulp_error(value, ulps: float):
    """``ulps`` ulps of ``value``, as an absolute error (an ulp is at most 2u·|value|)."""
    return (2 * U * ulps) * _mag(value) + ulps * TINY


def _mag(v):
    """|v|: a column's, or the largest over an Interval of many rows' values."""
    if isinstance(v, Interval):
        return _numpy().float64(max(-v.lo, v.hi))
    return abs(v)


def _low(v):
    """|v|: a column's, or the smallest over an Interval (0 if it holds 0). Used only where a
    bound shrinks as |v| grows (a divisor), so that a chunk's bound exceeds every row's."""
    if isinstance(v, Interval):
        return _numpy().float64(0.0 if v.lo <= 0.0 <= v.hi else min(-v.hi, v.lo) if v.hi < 0
                                else v.lo)
    return abs(v)


def _square(r: Interval) -> Interval:
    low, mag = float(_low(r)), float(_mag(r))
    return Interval(_down(low * low), _up(mag * mag))


def _summary(*values) -> bool:
    return any(isinstance(v, Interval) for v in values)


class Bounded:
    """A float64 value (a float, a NumPy column, or an Interval holding a chunk's values) and a
    bound on its error: the exact value is within ``e`` of ``v + c``, where ``c``, on a point
    only, is the rounding error its sums made, carried exactly (0.0 elsewhere)."""

    __slots__ = ("v", "e", "c")
    __array_priority__ = 100  # NumPy hands ``array * Bounded`` to Bounded.__rmul__

    def __init__(self, v, e=0.0, c=0.0):
        self.v, self.e, self.c = v, e, c

    # -- arithmetic: the exact propagation formulas plus half an ulp of rounding ---------------
    # An exact operand's bound is the float 0.0 (the inputs, the rules' own constants): the
    # terms it would add are skipped, not computed as a pass over zeros.
    def __add__(self, other):
        if type(other) is float and other == 0.0:  # the reverse sweep's first contribution
            return self
        return _add(self, other if type(other) is Bounded else Bounded(other), 1.0)

    __radd__ = __add__

    def __sub__(self, other):
        return _add(self, other if type(other) is Bounded else Bounded(other), -1.0)

    def __rsub__(self, other):
        return _bounded(other) - self

    def __mul__(self, other):
        if type(other) is float and (other == 1.0 or other == -1.0):  # + and -'s partials
            return self if other == 1.0 else -self
        a, o = _bounded(self), _bounded(other)
        # a square over a chunk: not the product of two independent ranges (a·a >= 0)
        v = _square(a.v) if other is self and isinstance(a.v, Interval) else a.v * o.v
        if type(v) is float and (a.v == 0 and a.e == 0 or o.v == 0 and o.e == 0):
            return Bounded(v)  # a point's product by an exact 0 (a kink's slope): exact
        e = 0.0
        if _nonzero(o.e):
            e = _mag(a.v) * o.e
        if _nonzero(a.e):
            e = _plus(e, _mag(o.v) * a.e)
            if _nonzero(o.e):
                e = _plus(e, a.e * o.e)
        return Bounded(v, _rounded(e, v, TINY))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return _divide(_bounded(self), _bounded(other))

    def __rtruediv__(self, other):
        return _divide(_bounded(other), _bounded(self))

    def __neg__(self):
        return Bounded(-self.v, self.e, -self.c)

    def __pow__(self, other):
        return _pow(_bounded(self), _bounded(other))

    def __rpow__(self, other):
        return _pow(_bounded(other), _bounded(self))

    def __repr__(self) -> str:
        return f"Bounded({self.v!r}, {self.e!r}, {self.c!r})"


def _add(a: Bounded, b: Bounded, sign: float) -> Bounded:
    """``a + sign·b``. On a point, the sum's rounding error is kept exactly (Knuth's TwoSum, exact
    with round-to-nearest unless the sum overflows, and then the result is not finite) and
    added to ``c``, so that a long sum's errors cancel as they do, instead of each adding half
    an ulp; only the rounding of ``c``'s own additions goes into ``e``."""
    x, y = a.v, (b.v if sign > 0 else -b.v)
    v = x + y
    if type(v) is float:
        t = v - x
        r = (x - (v - t)) + (y - t)  # x + y = v + r exactly
        ac, bc = a.c, (b.c if sign > 0 else -b.c)
        e = a.e + b.e
        if ac or bc:
            s = ac + bc
            r = s + r
            e = e + (U * (abs(s) + abs(r)) + TINY)
        return Bounded(v, e, r)
    a, b = _bounded(a), _bounded(b)
    if _exact_sum(a, b, v, sign):
        return Bounded(v, 0.0)
    return Bounded(v, _rounded(_plus(a.e, b.e), v))


def _nonzero(e) -> bool:
    return not (type(e) is float and e == 0.0)


def _exact_sum(a: "Bounded", b: "Bounded", s, sign: float = 1.0) -> bool:
    """Whether ``s``, the double sum of two exact numbers (no error), is their exact sum: Knuth's
    TwoSum residual is 0. Only for single numbers, where it is decided once (a rule's own
    constants: pow's slope reads ``b - 1``, which must stay an exact integer exponent for a
    negative base); a column keeps its half-ulp."""
    if _nonzero(a.e) or _nonzero(b.e) or not isinstance(s, float):
        return False
    x, y = float(a.v), sign * float(b.v)
    back = s - x
    return (x - (s - back)) + (y - back) == 0.0 and s - s == 0.0


def _plus(a, b):
    """a + b, skipping an exact 0.0 (and adding in place into a fresh array)."""
    if not _nonzero(a):
        return b
    if not _nonzero(b):
        return a
    return a + b


def _rounded(e, v, floor: float = 0.0):
    """``e`` plus half an ulp of ``v`` (and ``floor``): the rounding of the operation that gave
    ``v``, computed with one temporary (the same operations, in the same order, on a column and
    on a chunk's one number)."""
    r = _mag(v)
    if not isinstance(r, float):  # a column
        r *= U
        if floor:
            r += floor
        if _nonzero(e):
            r += e
        return r
    r = r * U
    if floor:
        r = r + floor
    return r + e if _nonzero(e) else r


def _bounded(x) -> Bounded:
    """A Bounded with no carried sum error (``c`` moved into ``e``), for the operations that are
    not sums; a float or an array is exact (the rules' own constants, 1 or 0.5 or 2)."""
    if type(x) is Bounded:
        return Bounded(x.v, x.e + abs(x.c)) if x.c else x
    return Bounded(x, 0.0)


def _kept(x) -> Bounded:
    return x if type(x) is Bounded else Bounded(x)


def _not_finite_as_inf(e):
    """NaN bounds (an interval outside a domain) as infinite: nothing is certain there."""
    return xp.where(xp.isnan(e), xp.inf, e) if xp.ndim(e) else (math.inf if e != e else e)


def _divide(a: Bounded, b: Bounded) -> Bounded:
    v = a.v / b.v
    if not _nonzero(b.e):  # an exact divisor: the dividend's error, scaled
        e = a.e / _low(b.v) if _nonzero(a.e) else 0.0
        return Bounded(v, _rounded(e, v, TINY))
    with xp.errstate(divide="ignore", invalid="ignore"):
        e = _over(_plus(a.e, _mag(v) * b.e), _room(b.v, b.e))
    return Bounded(v, _rounded(e, v, TINY))


def _pow(a: Bounded, b: Bounded) -> Bounded:
    """a^b. An exact exponent (a constant of the source): for a whole number n >= 1,
    ``|A^n - a^n| <= n·(|a| + e)^(n-1)·e`` (the mean value theorem); otherwise, in size,
    ``|a^b|·expm1(|b|·e/(|a| - e))``. An inexact exponent: a^b = exp(b·ln|a|),
    ``|A^B - a^b| <= |a^b|·expm1(bound on |B ln|A| - b ln|a||)``, for a != 0 with the interval of
    a clear of 0 (and, for a < 0, b exact: an integer power)."""
    if _summary(a.v, b.v):
        v = RANGES.pow(a.v, b.v)  # widened: xp.power's rounding is not the interval's
    else:
        v = xp.power(a.v, b.v)
    own = _ulp_error(v, DEFAULT_ULPS)
    if not _nonzero(a.e) and not _nonzero(b.e):  # exact arguments: only pow's own error
        return Bounded(v, own)
    if not _nonzero(b.e) and type(b.v) is not Interval and xp.ndim(b.v) == 0:  # a constant
        n = float(b.v)
        with xp.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if n >= 1 and n == int(n) and n <= 64:
                e = n * (_mag(a.v) + a.e) ** (n - 1) * a.e
            else:
                e = _mag(v) * xp.expm1(abs(n) * _over(a.e, _room(a.v, a.e)))
        return Bounded(v, _not_finite_as_inf(e) + own)
    with xp.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = _over(a.e, _room(a.v, a.e))  # bound on |dln a|
        t = _log_size(a.v) * b.e + _mag(b.v) * rel + b.e * rel
        e = _mag(v) * xp.expm1(t)
        if _summary(a.v, b.v):  # a base that may be negative with an inexact exponent: unbounded
            if Interval.of(a.v).lo < 0 and _nonzero(b.e):
                raise Unbounded("a negative base")
            return Bounded(v, _not_finite_as_inf(e) + own)
        e = xp.where((xp.asarray(a.v) < 0) & (xp.asarray(b.e) > 0), xp.inf, e)
        exact_zero = (xp.asarray(a.v) == 0) & (xp.asarray(a.e) == 0) & (xp.asarray(b.v) > 0)
        e = xp.where(exact_zero, 0.0, e)
    return Bounded(v, _not_finite_as_inf(e) + own)


def _log_size(v):
    """|ln|v||: a column's, or the largest over an Interval (at one of its ends in size)."""
    if isinstance(v, Interval):
        low, mag = _low(v), _mag(v)
        return xp.maximum(xp.abs(xp.log(low)), xp.abs(xp.log(mag))) if low > 0 else xp.inf
    if type(v) is float and v == 0:
        return math.inf  # |ln 0|, as NumPy's log gives it (math's raises)
    return xp.abs(xp.log(xp.abs(v)))


# -- the functions: a bound of each one's change over [x - e, x + e] ---------------------------
# bound(x, e, v) -> the largest |f(X) - f(x)| for |X - x| <= e (v = f(x) as computed), written
# with _mag and _low so that it also bounds a whole chunk (module docstring); inf where the
# interval may leave the domain. The function's own error is added by _bounded_function.

def _relative(v, e, scale=1.0):
    """|v|·expm1(scale·e), bounded by |v|·t·(1+t) for t = scale·e <= 1/2 (exp, sigmoid)."""
    t = e * scale
    return xp.where(t <= 0.5, _mag(v) * (t * (1 + t)), xp.inf)


def _room(x, e):
    return _low(x) - e


def _over(x, room):
    """``x / room`` where ``room > 0``, else inf (the interval may reach a pole or leave the
    domain)."""
    return xp.where(room > 0, x / xp.where(room > 0, room, 1.0), xp.inf)


def _log_bound(scale=1.0):
    def bound(x, e, v):  # |ln X - ln x| <= e/min(X, x) <= e/(x - e)
        return _over(e, _room(x, e)) * scale
    return bound


def _sqrt_bound(x, e, v):  # |√X - √x| <= min(e/√x, √e), for X >= 0
    return xp.where(_room(x, e) >= 0, xp.fmin(e / _low(v), xp.sqrt(e)), xp.inf)


def _cbrt_bound(x, e, v):  # A² + AB + B² >= 3B²/4; |∛X - ∛x| <= 2^(2/3)·∛|X - x|
    return xp.fmin(e / (0.75 * (_low(v) * _low(v))), 1.5874010519681996 * xp.cbrt(e))


def _sinh_bound(x, e, v):  # |sinh x|·(cosh e - 1) + cosh x·sinh e, for e <= 1
    m = _mag(v)
    return xp.where(e <= 1, m * (0.55 * (e * e)) + xp.sqrt(1 + m * m) * (e * (1 + 0.2 * (e * e))),
                    xp.inf)


def _reach(x, e):
    """|x| + e rounded up: the farthest the interval reaches from 0 (2^-53 above the sum's
    rounding, which is at most 2^-54 below 1), for the functions with poles at ±1."""
    return (_mag(x) + e) + 2.0 ** -53


def _inside_one(x, e, v):  # asin, acos: 1/sqrt(1 - ξ²) at the farthest ξ, inside (-1, 1)
    m = _reach(x, e)
    return xp.where(m < 1, e / xp.sqrt((1 - m) * (1 + m)), xp.inf)


def _atanh_bound(x, e, v):  # 1/(1 - ξ²) at the farthest ξ
    m = _reach(x, e)
    return xp.where(m < 1, e / ((1 - m) * (1 + m)), xp.inf)


def _acosh_bound(x, e, v):  # 1/sqrt(ξ² - 1) at the nearest ξ to 1, above 1
    lo = (_low(x) - e) * (1 - 2.0 ** -51)
    return xp.where(lo > 1, e / xp.sqrt((lo - 1) * (lo + 1)), xp.inf)


def _tan_bound(x, e, v):
    """|tan X - tan x| = |sin(X - x)|/|cos X cos x| <= e/(|cos x|(|cos x| - e)) = e·s²/(1 - e·s),
    s = 1/|cos x| = sqrt(1 + tan² x); no pole inside while e·s < 1."""
    s = xp.sqrt(1 + _mag(v) * _mag(v))
    return _over(e * (s * s), 1 - e * s)


def _erfc_bound(x, e, v):  # 2/√π·exp(-d²), d the interval's nearest distance to 0
    d = xp.maximum(_low(x) - e, 0.0)
    return 1.1283791670955126 * e * xp.exp(-(d * d))


def _positive_axis(f_of_lo):
    """The gamma family: on [x - e, x + e] inside (0, inf) only (left of 0 the poles and the
    reflection formula: those rows go to the certified engine)."""
    def bound(x, e, v):
        lo = xp.asarray(x - e, dtype=float) if not _summary(x) else x.lo - e
        if _summary(x):
            if not lo > 0:
                raise Unbounded("the gamma family left of 0")
            hi = x.hi + e
        else:
            hi = x + e
        with xp.errstate(divide="ignore", invalid="ignore"):
            # both ends made safe: a float's log of a negative end raises, where NumPy's is nan
            safe, safe_hi = xp.where(lo > 0, lo, 1.0), xp.where(lo > 0, hi, 1.0)
            return xp.where(lo > 0, f_of_lo(safe, safe_hi, e, v), xp.inf)
    return bound


def _psi_size(lo, hi):
    """sup |ψ(t)| over [lo, hi], lo > 0: ln t - 1/t <= ψ(t) <= ln t."""
    return xp.maximum(xp.abs(xp.log(lo)), xp.abs(xp.log(hi))) + 1 / lo


BOUNDS = {
    "exp": lambda x, e, v: _relative(v, e),
    "expm1": lambda x, e, v: xp.where(e <= 0.5, (1 + _mag(v)) * (e * (1 + e)), xp.inf),
    "exp2": lambda x, e, v: _relative(v, e, 0.6931471805599453),
    "log": _log_bound(), "log2": _log_bound(1.4426950408889634),
    "log10": _log_bound(0.43429448190325176),
    "log1p": lambda x, e, v: _over(e, _room(1.0 + x, e)),
    "sqrt": _sqrt_bound, "cbrt": _cbrt_bound,
    "atan": lambda x, e, v: e / (1 + xp.maximum(_room(x, e), 0) ** 2),
    "asinh": lambda x, e, v: e / xp.maximum(1.0, _room(x, e)),
    "sinh": _sinh_bound,
    "cosh": lambda x, e, v: xp.sinh(_mag(x) + e) * e,
    "tanh": lambda x, e, v: xp.minimum(e, 2.0),
    "sigmoid": lambda x, e, v: xp.fmin(0.25 * e, _relative(v, e)),
    "softplus": lambda x, e, v: xp.fmin(e, _relative(v, e)),
    "erf": lambda x, e, v: 1.1283791670955126 * e,  # 2/√π, the largest slope
    "erfc": _erfc_bound, "asin": _inside_one, "acos": _inside_one, "atanh": _atanh_bound,
    "acosh": _acosh_bound, "tan": _tan_bound,
    "sinc": lambda x, e, v: 0.5 * e,  # |sinc'| <= 0.4362
    # Γ(X)/Γ(x) = exp(lgamma X - lgamma x); |ψ'(t)| <= 1/t + 1/t²; |ψ''(t)| <= 1/t² + 2/t³
    "gamma": _positive_axis(lambda lo, hi, e, v: _relative(v, e, _psi_size(lo, hi))),
    "lgamma": _positive_axis(lambda lo, hi, e, v: e * _psi_size(lo, hi)),
    "digamma": _positive_axis(lambda lo, hi, e, v: e * ((1 + 1 / lo) / lo)),
    "trigamma": _positive_axis(lambda lo, hi, e, v: e * ((1 + 2 / lo) / (lo * lo))),
}
# The gamma family: its own error holds on the positive axis only (exact arguments too)
_POSITIVE_AXIS = frozenset(("gamma", "lgamma", "digamma", "trigamma"))


def _bounded_function(name, f):
    """A function with a rational bound (:data:`BOUNDS`): the change over the interval, and the
    function's own error (:data:`ULPS`)."""
    bound, ulps = BOUNDS[name], ULPS.get(name, DEFAULT_ULPS)

    def apply(a):
        a = _bounded(a)
        v = f(a.v)
        own = _ulp_error(v, ulps)
        if name in ABSOLUTE:
            own = own + (2 * U * ulps) * 4.0
        if name in _POSITIVE_AXIS:
            if _summary(a.v):
                if not a.v.lo > 0:
                    raise Unbounded(f"{name} left of 0")
            else:
                own = xp.where(a.v > 0, own, xp.inf)
        if not _nonzero(a.e):  # an exact argument: only the function's own error
            return Bounded(v, own)
        with xp.errstate(all="ignore"):
            e = bound(a.v, a.e, v)
        return Bounded(v, _not_finite_as_inf(e) + own)
    return apply


def _kinked(f):
    """sign and step: exact where the interval does not reach 0, unbounded where it does."""
    def apply(a):
        a = _bounded(a)
        v = f(a.v)
        if not _nonzero(a.e):  # an exact argument: exact, 0 included
            return Bounded(v, 0.0)
        return Bounded(v, xp.where(_low(a.v) > a.e, 0.0, xp.inf))
    return apply


def _piecewise_constant(f):
    """floor, ceil, trunc, round: exact where the interval's ends give the same value (it holds
    no jump), unbounded where they do not."""
    def apply(a):
        a = _bounded(a)
        if _summary(a.v):  # one piece for every row of the chunk, or no bound from it
            lo = f(xp.nextafter(a.v.lo - a.e, -xp.inf))
            hi = f(xp.nextafter(a.v.hi + a.e, xp.inf))
            if not lo == hi:
                raise Unbounded("a step function")
            # xp.float64, not the float 0.0 of an exact value: the rows' bound is a column of
            # zeros, and the sweeps must take the same steps on both
            return Bounded(Interval(float(lo), float(hi)), xp.float64(0.0))
        v = f(a.v)
        same = f(xp.nextafter(a.v - a.e, -xp.inf)) == f(xp.nextafter(a.v + a.e, xp.inf))
        if not _nonzero(a.e):
            same = f(a.v) == f(a.v)  # an exact argument: exact (NaN stays unbounded)
        return Bounded(v, xp.where(same, 0.0, xp.inf) if xp.ndim(same) else
                       (0.0 if same else math.inf))
    return apply


def _mod(f, floor):
    """a mod b = a - b·floor(a/b): where floor(a/b) is the same over the intervals (no jump),
    ``ea + |floor(a/b)|·eb``, and the one rounding of the mod (fmod is exact)."""
    floor = _piecewise_constant(floor)

    def apply(a, b):
        a, b = _bounded(a), _bounded(b)
        if _summary(a.v, b.v):
            raise Unbounded("mod")
        v = f(a.v, b.v)
        with xp.errstate(all="ignore"):
            k = floor(a / b)  # a bound on a/b, its rounding included
            e = k.e + a.e + xp.abs(k.v) * b.e
        return Bounded(v, _rounded(_not_finite_as_inf(e), v, TINY))
    return apply


def _namespace(m: SimpleNamespace) -> SimpleNamespace:
    """The namespace of Bounded functions, whose values come from ``m``: :data:`FLOAT` for one
    point (:data:`POINT`), a block's NumPy namespace (so that sin and cos share one sincos call
    as in the batch engine), or :data:`RANGES` for a chunk's Intervals (the quick test)."""
    if m is FLOAT:
        steps = FLOAT
    else:
        from .batch import NUMPY as steps
    def binary_lipschitz(name, combine):
        def apply(a, b):
            a, b = _bounded(a), _bounded(b)
            v = getattr(m, name)(a.v, b.v)
            return Bounded(v, combine(a, b, v))
        return apply

    def atan2_error(a, b, v):
        r = _low(m.hypot(a.v, b.v))
        spread = a.e + b.e
        with xp.errstate(divide="ignore", invalid="ignore"):
            return _over(spread, r - spread) + _ulp_error(v, DEFAULT_ULPS)

    own = {
        # (a sum keeps the carried error of its arguments: Bounded's own operators)
        "add": lambda a, b: _kept(a) + b, "sub": lambda a, b: _kept(a) - b,
        "mul": lambda a, b: _kept(a) * b, "div": lambda a, b: _kept(a) / b,
        "neg": lambda a: -_kept(a), "pow": lambda a, b: _kept(a) ** b,
        "sin": _wave_bound(m.sin, m.cos, ULPS["sin"]),
        "cos": _wave_bound(m.cos, m.sin, ULPS["cos"]),
        # exact, and moving their result no farther than their argument
        "abs": lambda a: Bounded(m.abs(_bounded(a).v), _bounded(a).e),
        "relu": lambda a: Bounded(m.relu(_bounded(a).v), _bounded(a).e),
        "min": binary_lipschitz("min", lambda a, b, v: xp.maximum(a.e, b.e)),
        "max": binary_lipschitz("max", lambda a, b, v: xp.maximum(a.e, b.e)),
        "hypot": binary_lipschitz("hypot", lambda a, b, v: a.e + b.e
                                  + _ulp_error(v, DEFAULT_ULPS)),
        "atan2": binary_lipschitz("atan2", atan2_error),
        "sign": _kinked(m.sign), "step": _kinked(m.step),
        "mod": _mod(steps.mod, steps.floor),
        **{name: _piecewise_constant(getattr(steps, name))
           for name in ("floor", "ceil", "trunc", "round")},
        **{name: _bounded_function(name, getattr(m, name)) for name in BOUNDS},
    }
    # sec, csc, cot, log(a, b): the compositions the engines compute (1/cos(a), ...), on
    # Bounded values whose functions are the library's own (NumPy's or math's, bit for bit)
    values = RANGES if m is RANGES else steps
    library = SimpleNamespace(cos=_wave_bound(values.cos, values.sin, DEFAULT_ULPS),
                              sin=_wave_bound(values.sin, values.cos, DEFAULT_ULPS),
                              tan=_bounded_function("tan", values.tan),
                              log=_bounded_function("log", values.log))
    for name in ("sec", "csc", "cot", "log_base"):
        own[name] = _composed(TABLE[name].numpy, library)
    # np.float64 on columns, so that every operation on them is NumPy's, as in the batch engine
    constants = {name: Bounded(value if m is FLOAT else _numpy().float64(value), U * abs(value))
                 for name, value in CONSTANTS.items()}
    # a row with a definition: bounded through its definition's rows; a row with neither a
    # bound here nor a definition: its rows are not certified
    bounded = Namespace(lambda row: _uncertain(getattr(steps, row.name)), **own, **constants,
                        where=_where)
    # sinc's rule: the quotient, bounded as it is computed (its series has no bound here)
    bounded.sinc_slope = lambda a: (bounded.cos(a) - bounded.sinc(a)) / a
    return bounded


def _wave_bound(f, other, ulps: float):
    """sin or cos (``f``; ``other``, its partner): ``|f(X) - f(x)| <= |other(x)|·e + e²/2``,
    and 2 at most, plus ``ulps`` of its own error (trig.sincos's, or the C library's for sec,
    csc and cot, whose primals call cos and sin)."""
    def apply(a):
        a = _bounded(a)
        v = f(a.v)
        e = xp.minimum(2.0, _mag(other(a.v)) * a.e + 0.5 * a.e * a.e) if _nonzero(a.e) \
            else 0.0
        return Bounded(v, _plus(e, _ulp_error(v, ulps)))
    return apply


def _composed(columns, library):
    def apply(*args):
        return _bounded(columns(library, *[_bounded(a) for a in args]))
    return apply


def _where(condition, x, y):
    """A rule's branch (the pow rules'): the row's own, with the bound of the branch taken. A
    Bounded never equals a number, so a condition on one is False for every row, as on duals."""
    if type(condition) is bool:
        return x if condition else y
    x, y = _bounded(x), _bounded(y)
    if _summary(x.v, y.v):
        raise Unbounded("a branch")
    return Bounded(xp.where(condition, x.v, y.v), xp.where(condition, x.e, y.e))


def _uncertain(f):
    def apply(*args):
        values = [_bounded(a).v for a in args]
        if _summary(*values):
            raise Unbounded("no bound")
        return Bounded(f(*values), math.inf)
    return apply


# -- the chunk's values as Intervals (the quick test) ------------------------------------------

def _widened(r: Interval) -> Interval:
    """An Interval widened by 2^-48 of its ends: it holds the values the functions compute
    (within a few ulps of the exact ones), not only the exact ones."""
    return Interval(r.lo - abs(r.lo) * 2.0 ** -48 - TINY, r.hi + abs(r.hi) * 2.0 ** -48 + TINY)


_UNIT = Interval(-1.0 - 2.0 ** -48, 1.0 + 2.0 ** -48)
_FALLBACK = {"sin": _UNIT, "cos": _UNIT, "tanh": _UNIT, "erf": _UNIT,
             "sigmoid": Interval(0.0, 1.0 + 2.0 ** -48),
             "atan2": Interval(-3.1415926535897936, 3.1415926535897936)}
# Γ and ln Γ turn at x0 = 1.46163…: decreasing on (0, x0], increasing from there; a range across
# x0 holds their least values there (0.88560…, -0.12148…).
_X0, _GAMMA_X0, _LGAMMA_X0 = 1.4616321449683622, 0.8856031944108886, -0.1214862905358497


def _monotone(f, increasing: bool = True, lo_bound: float = -math.inf,
              hi_bound: float = math.inf):
    """An elementary function increasing (or decreasing) on [lo_bound, hi_bound], over an
    interval: its values at the ends, a few ulps outward (the library's error)."""
    def g(a):
        a = Interval.of(a)
        if a.lo < lo_bound or a.hi > hi_bound:
            raise Unbounded("at the edge of the domain")
        x, y = f(a.lo), f(a.hi)
        if not increasing:
            x, y = y, x
        if not (math.isfinite(x) and math.isfinite(y)) or x == 0 and a.lo != a.hi:
            raise Unbounded("not finite, or a result near 0")
        return Interval(_down(x, 4), _up(y, 4))
    return g


def _turning(f, least):
    down = _monotone(f, increasing=False, hi_bound=_X0)
    up = _monotone(f, lo_bound=_X0)

    def apply(a):
        a = Interval.of(a)
        if a.hi <= _X0:
            return down(a)
        if a.lo >= _X0:
            return up(a)
        if a.lo <= 0:
            raise Unbounded("left of 0")
        return Interval(least, max(f(a.lo), f(a.hi)))
    return apply


def _wave(f, top):
    """sin or cos over an interval: its values at the ends, and ±1 where the interval holds a
    peak (``top``: where f is 1; -1 half a turn on). A peak within 1e-9 of an end counts as
    held: that only widens the enclosure."""
    def apply(a):
        a = Interval.of(a)
        if not (a.hi - a.lo < 6.0 and abs(a.lo) < 1e6 and abs(a.hi) < 1e6):
            return _UNIT
        lo, hi = sorted((f(a.lo), f(a.hi)))
        for peak, value in ((top, 1.0), (top + math.pi, -1.0)):
            k = math.ceil((a.lo - 1e-9 - peak) / (2 * math.pi))
            if peak + 2 * math.pi * k <= a.hi + 1e-9:
                lo, hi = min(lo, value), max(hi, value)
        return Interval(lo, hi)
    return apply


def _tangent(a):
    """tan over an interval that holds no pole (π/2 + kπ, or within 1e-9 of one): increasing."""
    a = Interval.of(a)
    if not (a.hi - a.lo < 3.0 and abs(a.lo) < 1e6 and abs(a.hi) < 1e6):
        raise Unbounded("tan over a wide interval")
    k = math.ceil((a.lo - 1e-9 - math.pi / 2) / math.pi)
    if math.pi / 2 + math.pi * k <= a.hi + 1e-9:
        raise Unbounded("a pole of tan")
    return Interval(math.tan(a.lo), math.tan(a.hi))


def _interval_pow(a: Interval, b: Interval) -> Interval:
    if b.lo == b.hi and b.lo == int(b.lo) and abs(b.lo) <= 64:
        n = int(b.lo)
        if n < 0:
            return 1.0 / _interval_pow(a, Interval(-n, -n))
        if n and n % 2 == 0 and a.lo < 0 < a.hi:
            raise Unbounded("an even power of an interval holding 0")
        result = Interval(1.0, 1.0)
        for _ in range(n):  # by products (|n| <= 64)
            result = result * a
        return result
    if a.lo <= 0:
        raise Unbounded("a base that may not be positive")
    return _ENCLOSURES["exp"](b * _ENCLOSURES["log"](a))


def _sign(a):
    a = Interval.of(a)
    if a.lo > 0 or a.hi < 0 or a.lo == a.hi == 0:
        s = 1.0 if a.lo > 0 else -1.0 if a.hi < 0 else 0.0
        return Interval(s, s)
    raise Unbounded("the sign is not certain")


def _abs(a):
    a = Interval.of(a)
    return a if a.lo >= 0 else -a if a.hi <= 0 else Interval(0.0, max(-a.lo, a.hi))


def _ends(f):
    """min or max: of the ends, end by end (both are increasing in each argument)."""
    def apply(a, b):
        a, b = Interval.of(a), Interval.of(b)
        return Interval(f(a.lo, b.lo), f(a.hi, b.hi))
    return apply


def _cosh(a):
    a = Interval.of(a)
    if a.lo >= 0:
        return _monotone(math.cosh)(a)
    if a.hi <= 0:
        return _monotone(math.cosh, increasing=False)(a)
    raise Unbounded("cosh around its minimum")


def _hypot(a, b):
    a, b = _abs(a), _abs(b)
    return Interval(_down(math.hypot(a.lo, b.lo), 4), _up(math.hypot(a.hi, b.hi), 4))


def _atan2(a, b):
    """atan2(a, b) right of the vertical axis: atan(a/b) there; elsewhere not bounded here."""
    a, b = Interval.of(a), Interval.of(b)
    if b.lo <= 0:
        raise Unbounded("atan2 left of, or on, the vertical axis")
    return _ENCLOSURES["atan"](a / b)


_log = _monotone(math.log, lo_bound=0.0)
# (the arithmetic and sec, csc, cot, log(a, b) are not here: the quick test's Bounded values
# compute them with Interval's operators, as the compositions the engines compute)
_ENCLOSURES = {
    "pow": lambda a, b: Interval.of(a) ** b,
    "exp": _monotone(math.exp), "expm1": _monotone(math.expm1), "log": _log,
    "log1p": _monotone(math.log1p, lo_bound=-1.0), "log2": _monotone(math.log2, lo_bound=0.0),
    "log10": _monotone(math.log10, lo_bound=0.0), "sqrt": _monotone(math.sqrt, lo_bound=0.0),
    "cbrt": _monotone(TABLE["cbrt"].primal),
    "sin": _wave(math.sin, math.pi / 2), "cos": _wave(math.cos, 0.0), "tan": _tangent,
    "asin": _monotone(math.asin, lo_bound=-1.0, hi_bound=1.0),
    "acos": _monotone(math.acos, increasing=False, lo_bound=-1.0, hi_bound=1.0),
    "atan": _monotone(math.atan), "sinh": _monotone(math.sinh), "cosh": _cosh,
    "tanh": _monotone(math.tanh), "asinh": _monotone(math.asinh),
    "acosh": _monotone(math.acosh, lo_bound=1.0),
    "atanh": _monotone(math.atanh, lo_bound=-1.0, hi_bound=1.0),
    "sigmoid": _monotone(TABLE["sigmoid"].primal), "softplus": _monotone(TABLE["softplus"].primal),
    "erf": _monotone(math.erf), "erfc": _monotone(math.erfc, increasing=False),
    "exp2": _monotone(TABLE["exp2"].primal), "hypot": _hypot, "abs": _abs, "sign": _sign,
    "step": lambda a: Interval(1.0, 1.0) if _sign(a).lo > 0 else Interval(0.0, 0.0),
    "relu": lambda a: _ends(max)(a, 0.0), "min": _ends(min), "max": _ends(max),
    "atan2": _atan2,
    "digamma": _monotone(TABLE["digamma"].primal, lo_bound=2.0 ** -1000),
    "trigamma": _monotone(TABLE["trigamma"].primal, increasing=False, lo_bound=2.0 ** -1000),
    "gamma": _turning(math.gamma, _GAMMA_X0), "lgamma": _turning(math.lgamma, _LGAMMA_X0),
}


def _enclosure(name):
    f = _ENCLOSURES.get(name)
    fallback = _FALLBACK.get(name)

    def apply(*args):
        try:
            if f is None:
                raise Unbounded(f"no enclosure of {name}")
            r = f(*args)
        except (Unbounded, OverflowError, ValueError, ZeroDivisionError):
            if fallback is None:
                raise Unbounded(name) from None
            return fallback
        return _widened(r)
    return apply


RANGES = Namespace(lambda row: _enclosure(row.name), **{
    name: _enclosure(name) for name, p in TABLE.items() if p.definition is None}, **CONSTANTS)


@cache
def _ranges_namespace() -> SimpleNamespace:
    """The Bounded functions of Intervals (the quick test's), built once: :data:`RANGES` is a
    constant and the namespace holds no state."""
    return _namespace(RANGES)


def _decimal_is_double(text: str, value: float) -> bool:
    """Whether the decimal literal ``text`` is exactly the double ``value`` (0.5, 1.25e3).
    Decimal, not Fraction: ``1e-999999999`` is compared by its exponent, never expanded into
    a billion-digit integer."""
    from decimal import Decimal
    try:
        return Decimal(text) == Decimal(value)
    except (ArithmeticError, ValueError):  # not a plain decimal, or not finite
        return False


def table_errors(constants, exact, folds, m: SimpleNamespace) -> list[float]:
    """A bound on each constant's error, from a table of constants (their floats, what each is
    exactly, the folds: :func:`gradcli.engine.graph.exact_numbers`'s, as a :class:`Graph` and
    array nodes keep them). A literal (0.1, pi) is the number typed (1/10, π), as the certified
    engine reads it: its double is within an ulp; a constant folded at lowering (``ln(e)``,
    ``1 + 1e-16``) carries the rounding of its folds, replayed here with Bounded arithmetic (to
    a fixed point: one slot can hold the values of a literal and of several folds), plus the
    distance between the value folded by the scalar primal and the one replayed with NumPy."""
    errors = [0.0] * len(constants)
    folded = {fold[0] for fold in folds}
    # a literal, pi, e: the number typed, not its double (which is within an ulp of it)
    for slot, typed in exact.items():
        if slot in folded or (type(typed) is str and _decimal_is_double(typed, constants[slot])):
            continue  # a fold (replayed below), exactly its double: 0.5, 2.5e-3 * 4
        errors[slot] = math.ulp(constants[slot])
    typed = list(errors)
    for _ in range(8):
        changed = False
        for slot, name, a, b in folds:
            f = getattr(m, name)
            args = [Bounded(constants[a], errors[a])]
            if b >= 0:
                args.append(Bounded(constants[b], errors[b]))
            try:
                with xp.errstate(all="ignore"):
                    got = _bounded(f(*args))
                    e = float(got.e) + abs(float(got.v) - constants[slot])
            except (ArithmeticError, ValueError):  # math raised where NumPy gives inf or NaN
                e = math.inf
            if not e <= errors[slot]:  # larger, or nan
                errors[slot] = e if e == e else math.inf
                changed = True
        if not changed:
            return errors
    return [math.inf if i in folded else typed[i] for i in range(len(errors))]


# -- the sweeps ------------------------------------------------------------------------------

def relative_error(value, err):
    """``err / |value|``; 0 where ``err`` is below the smallest normal double (an exact 0 and
    the floor of float64 itself count as exact), inf where nothing is known."""
    import numpy as np
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.asarray(err / np.abs(value), dtype=float)
    rel = np.where(np.asarray(err) < SMALLEST_NORMAL, 0.0, rel)
    return np.where(np.isnan(rel), np.inf, rel)


def digits_from_relative(rel):
    """Certain significant digits for a relative error bound (0 to 17)."""
    import numpy as np
    with np.errstate(divide="ignore", invalid="ignore"):
        digits = np.floor(-np.log10(2 * rel))
    digits = np.where(np.isnan(digits), 0, digits)
    return np.clip(digits, 0, 17).astype(np.int64)


def forward(graph: Graph, block: list, m: SimpleNamespace, errors: list | None = None) -> list:
    """Every slot as a Bounded for one block: the batch engine's forward sweep (the same
    operations in the same order, so the same values) with a bound carried beside each.
    ``errors``: the constants' (:func:`table_errors`), when already known."""
    if errors is None:
        errors = table_errors(graph.constants, graph.exact, graph.folds, m)
    if m is POINT:
        slots = [Bounded(c, e) for c, e in zip(graph.constants, errors)]
    else:  # np.float64, as the namespace's constants
        import numpy as np
        slots = [Bounded(np.float64(c), e) for c, e in zip(graph.constants, errors)]
    slots += [x if type(x) is Bounded else Bounded(np.asarray(x, dtype=float), 0.0)
              for x in block]  # a point's and a chunk's inputs come as Bounded
    append, arg0, arg1 = slots.append, graph.arg0, graph.arg1
    for k, prim in enumerate(graph.ops):
        f, b = getattr(m, prim.name), arg1[k]
        append(f(slots[arg0[k]]) if b < 0 else f(slots[arg0[k]], slots[b]))
    return slots


class _Rows:
    """The rows of ``columns`` to bound, and what each block's sweep reads: the results (each
    output's value, then its gradient by ``wrt``), their visit order, the constants' errors."""

    def __init__(self, graph: Graph, columns: Mapping[str, object],
                 wrt: Iterable[str] | None, gradient: bool):
        from .batch import as_columns, block_namespace
        from .graph import wrt_names
        self.graph, self.wrt = graph, (wrt_names(graph, wrt) if gradient else [])
        self.n, self.arrays = as_columns(graph, columns)
        self.outputs = ([graph.only(i) for i in range(graph.n_outputs)]
                        if graph.n_outputs > 1 else None)
        self.order = visit_order(graph) if self.outputs is None else None
        # the folds replayed as a block's sweep computes them: a namespace only if there are any
        self.errors = table_errors(graph.constants, graph.exact, graph.folds,
                                   _namespace(block_namespace()) if graph.folds else None)

    def bounds(self, block: list, m) -> list:
        """(value, bound) of every result over ``block`` (the inputs in graph order), in
        batchio's order; a bound None for a result that is exact (nothing flows into it, or no
        error)."""
        from .batch import reverse_block
        slots = forward(self.graph, block, m, self.errors)
        found = []
        singles = self.outputs or [self.graph]
        for one in singles:
            out = _bounded(slots[one.output])
            found.append((out.v, out.e if _nonzero(out.e) else None))
            if not self.wrt:
                continue
            order = self.order if len(singles) == 1 and self.order else visit_order(one)
            adjoint = reverse_block(one, list(slots), order, m=m)
            for name in self.wrt:
                g = adjoint[one.n_const + one.inputs.index(name)]
                g = None if g is None else _bounded(g)
                found.append((None if g is None else g.v,
                              g.e if g is not None and _nonzero(g.e) else None))
        return found

    def digits(self, block: list):
        """Certain digits of each row of ``block``: the least over its results."""
        import numpy as np
        from .batch import block_namespace
        n = len(block[0]) if block else 1
        worst = np.zeros(n)  # the largest relative error bound over the row's results
        try:
            found = self.bounds(block, _namespace(block_namespace()))
        except LimitError:  # a rule with no formula to bound (trigamma's ψ''): none proven
            return digits_from_relative(np.full(n, np.inf))
        for value, err in found:
            if err is not None:
                worst = np.maximum(worst, relative_error(value, err))
        return digits_from_relative(worst)


# A margin over the digits' own log10 and floor, and over the few ulps by which NumPy's
# functions on a column and on one number (pow, expm1, log in the bounds' formulas) may differ.
SAFETY = 1.0 + 2.0 ** -10


# What ends the quick test for a block (its rows are then all left to the row-by-row bound, which
# decides alone): a range it cannot bound, a rule with no formula, or anything a sweep over
# Intervals may meet (Unbounded, OverflowError and ZeroDivisionError are ArithmeticErrors).
_QUICK_FAILS = (ArithmeticError, LimitError, ValueError, TypeError, LookupError, AttributeError)


class QuickTest(_Rows):
    """The quick test (module docstring) of the rows of ``columns``: which of them the
    row-by-row bound must sweep to know whether they have ``enough`` certain digits.

    Called on each block of rows as the batch engine writes its results (``watch`` of
    :func:`~gradcli.engine.batch.evaluate_columns`), while they are in the processor's cache:
    the block's inputs' ranges (one pass), then one bound per result for ranges holding them,
    kept and reused by the next blocks while their ranges stay inside (a bound grows with the
    ranges: it holds for every row inside them), then one pass per result marks the rows left.
    A block where the kept ranges leave more than an eighth of the rows, or cannot be bounded,
    is tried with its own ranges; if that fails too, all its rows are left."""

    def __init__(self, graph: Graph, columns: Mapping[str, object], *,
                 wrt: Iterable[str] | None = None, gradient: bool = True,
                 enough: int = MIN_DIGITS):
        import numpy as np
        super().__init__(graph, columns, wrt, gradient)
        self.inputs = [self.arrays[name] for name in graph.inputs]
        self.scale = 2.0 * 10.0 ** enough * SAFETY
        self.m = _ranges_namespace()
        self.suspect = np.zeros(self.n, dtype=bool)
        self.kept = None  # (ranges, thresholds) reused while the blocks' ranges stay inside

    def _thresholds(self, ranges: list) -> list:
        """[(result, t)]: a row whose inputs lie in ``ranges`` and whose |result| >= t has
        enough digits by its own bound (results that are exact are left out)."""
        import numpy as np
        block = [Bounded(Interval(lo, hi), 0.0) for lo, hi in ranges]
        with np.errstate(all="ignore"):
            found = self.bounds(block, self.m)
        thresholds = []
        for k, (_, err) in enumerate(found):
            if err is not None:
                threshold = float(err) * self.scale
                if not threshold < math.inf:  # inf or nan
                    raise Unbounded("no finite bound")
                thresholds.append((k, threshold))
        return thresholds

    def __call__(self, start: int, stop: int, results: list) -> None:
        """Mark the rows left among ``start:stop``, whose results (each output's value, then
        its gradient by ``wrt``) are ``results``. NaN inputs are not in the ranges: those rows
        fail in the batch engine, and a failed row is never recomputed."""
        part = self.suspect[start:stop]
        ranges = [_extent(column[start:stop]) for column in self.inputs]
        kept = self.kept
        inside = kept is not None and all(
            k[0] <= r[0] and r[1] <= k[1] for k, r in zip(kept[0], ranges))
        if not inside:  # the kept ranges grown to hold the block's, and a little more
            grown = ranges if kept is None else [
                (min(k[0], r[0]), max(k[1], r[1])) for k, r in zip(kept[0], ranges)]
            kept = None  # the kept ones stay for the next blocks if these fail
            for tried in (_widened_ranges(grown), grown):
                try:
                    kept = self.kept = (tried, self._thresholds(tried))
                    break
                except _QUICK_FAILS:
                    continue
        if kept is not None:
            left = _mark_small([(results[k], t) for k, t in kept[1]], part)
            if left * 8 <= stop - start:
                return
            part[:] = False
        try:  # the block's own ranges
            thresholds = self._thresholds(ranges)
        except _QUICK_FAILS:
            part[:] = True
            return
        _mark_small([(results[k], t) for k, t in thresholds], part)

    def suspects(self):
        """The rows left (a boolean mask)."""
        return self.suspect


def _widened_ranges(ranges: list) -> list:
    """Each range widened by a sixteenth of its width on both sides, never across 0 (a domain's
    edge, often): the next blocks' values fall inside, and need no new sweep."""
    wider = []
    for lo, hi in ranges:
        w = (hi - lo) / 16
        wider.append((lo - w if lo < 0 or lo - w >= 0 else lo / 2,
                      hi + w if hi > 0 or hi + w <= 0 else hi / 2))
    return wider


def _extent(column) -> tuple[float, float]:
    """The least and greatest value of a column, NaN skipped ((inf, -inf): every value NaN)."""
    import numpy as np
    lo, hi = float(np.fmin.reduce(column)), float(np.fmax.reduce(column))
    return (lo, hi) if lo == lo else (math.inf, -math.inf)


def _mark_small(thresholds: list, part) -> int:
    """``part[i] = True`` where some ``|column[i]| < threshold`` (NaN: not marked), for the
    (column, threshold) pairs, by NumPy in cache-sized pieces. How many rows are marked."""
    import numpy as np
    n, step = len(part), MARK_ROWS
    size = np.empty(min(step, n))
    small = np.empty(len(size), dtype=bool)
    less, absolute, either = np.less, np.abs, np.bitwise_or
    for at in range(0, n, step):
        end = min(n, at + step)
        k, mark = end - at, part[at:end]
        s, b = (size, small) if k == step else (size[:k], small[:k])
        for column, threshold in thresholds:
            absolute(column[at:end], s)
            less(s, threshold, b)
            either(mark, b, mark)
    return int(np.count_nonzero(part))


MARK_ROWS = 1 << 15  # rows a pass at a time: 256 KiB, in the processor's cache


def certain_digits(graph: Graph, columns: Mapping[str, object], *,
                   wrt: Iterable[str] | None = None, gradient: bool = True,
                   block_rows: int = 1 << 14, enough: int | None = None,
                   results: list | None = None, rows=None):
    """For every row of ``columns``, how many significant digits of the batch engine's value
    and gradient (all of ``graph``'s outputs) are proven correct: an int array.

    ``enough`` and ``results`` (the batch engine's result columns, each output's value then its
    gradient by ``wrt``): a row with at least ``enough`` certain digits may be given as
    ``enough``, found by the quick test (:class:`QuickTest`) without its own sweep. The rows
    given fewer are the same, with the same digits, as without it. ``rows`` (an index array):
    the digits of these rows only, one per index."""
    import numpy as np
    if enough is not None and results is not None:
        quick = QuickTest(graph, columns, wrt=wrt, gradient=gradient, enough=enough)
        for start in range(0, quick.n, block_rows):
            stop = min(quick.n, start + block_rows)
            quick(start, stop, [column[start:stop] for column in results])
        digits = np.full(quick.n, enough, dtype=np.int64)
        some = np.flatnonzero(quick.suspects())
        digits[some] = certain_digits(graph, columns, wrt=wrt, gradient=gradient, rows=some)
        return digits
    every = _Rows(graph, columns, wrt, gradient)
    n_rows = every.n if rows is None else len(rows)
    digits = np.empty(n_rows, dtype=np.int64)
    with np.errstate(all="ignore"):
        for start in range(0, n_rows, block_rows):
            taken = slice(start, start + block_rows) if rows is None else \
                rows[start:start + block_rows]
            digits[start:start + block_rows] = every.digits(
                [every.arrays[name][taken] for name in graph.inputs])
    return digits


# -- one point: the quick certificate --------------------------------------------------------

POINT = _namespace(FLOAT)  # the Bounded functions of one point's floats
# Past this many nodes the balls prove a program sooner than
# this sweep in Python, even counting python-flint's import: the sweep is not tried there.
QUICK_NODES = 4096


def exact_input(spec) -> Bounded | None:
    """What the user gave as a Bounded (a decimal's double within an ulp of it), or None if
    only the balls can read it (a constant expression such as pi/4)."""
    if isinstance(spec, (bool, int)):
        x = float(spec)
        return Bounded(x) if x == spec else Bounded(x, math.ulp(x))
    if isinstance(spec, float):
        return Bounded(spec)
    if isinstance(spec, str):
        text = spec.strip()
        try:
            x = float(text)  # a decimal: float() rounds it correctly
        except ValueError:
            return None
        digits = text[1:] if text[:1] in "+-" else text
        if digits.isascii() and digits.isdigit() and len(digits) < 16:
            return Bounded(x)  # a whole number below 10^15: its double is exact
        return Bounded(x, math.ulp(x)) if math.isfinite(x) else None
    return None


# How a row's node adds to the first-order error of the output (:func:`hopeless`): exact, a
# rounded product or quotient (half an ulp), or a function (its ULPS, at least 1.5 ulps).
_EXACT = frozenset(("add", "sub", "neg", "abs", "min", "max", "relu", "sign", "step"))
_ROUNDED = frozenset(("mul", "div"))


def hopeless(graph, values, adjoint, digits: int) -> bool:
    """Whether the point's sweep certainly cannot prove ``digits`` digits of the value, judged
    from the float64 sweeps (``values``, and ``adjoint`` of every slot) before running it.

    A rounded product or quotient adds at least ``u·|v|`` to its node's bound, a function
    ``3u·|v|``, and the output's bound grows by that times |∂output/∂node|, to first order; the
    proof reads an interval of twice the bound on either side. When that width already exceeds
    a unit in the last digit asked, its two ends cannot round alike. Only a shortcut: skipping
    the sweep sends the numbers to the balls, which prove them anyway."""
    from itertools import compress
    from operator import mul
    y = values[graph.output]
    if not y or not math.isfinite(y):
        return False
    base = graph.base
    sizes = list(map(abs, map(mul, adjoint[base:], values[base:])))
    names = [p.name for p in graph.ops]
    rounded = sum(compress(sizes, [n in _ROUNDED for n in names]))
    functions = sum(compress(sizes, [n not in _ROUNDED and n not in _EXACT for n in names]))
    floor = 4.0 * U * (rounded + 3.0 * functions)
    return floor > 10.0 ** (math.floor(math.log10(abs(y))) - digits + 1)


def ends(x) -> tuple[float, float]:
    """Doubles ``lo <= hi`` between which the exact value of ``x`` (a Bounded, or an exact
    float) certainly lies: ``v + c`` rounded outward, then twice the bound (which covers the
    rounding of the bound's own arithmetic) either side, rounded outward."""
    if type(x) is not Bounded:
        x = float(x)
        return x, x
    lo = hi = x.v
    if x.c:
        lo = hi = x.v + x.c
        lo, hi = _down(lo), _up(hi)
    if x.e:
        lo, hi = _down(lo - 2.0 * x.e), _up(hi + 2.0 * x.e)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise Unbounded("not finite")
    return lo, hi


def proven_text(x, digits: int, rounded=None) -> str | None:
    """The ``digits`` digits every number within ``x``'s bound rounds to, or None; with
    ``rounded`` (the float64 result), only if that double rounds to them too."""
    from .rounding import float_text
    lo, hi = ends(x)
    if lo == hi == 0:
        return "0" if rounded is None or rounded == 0 else None
    if not (lo > 0 or hi < 0):
        return None
    text = float_text(lo, digits)
    if float_text(hi, digits) != text:
        return None
    if rounded is not None and float_text(rounded, digits) != text:
        return None  # the balls say how many digits float64 got
    return text


def _exact(x) -> bool:
    return type(x) is not Bounded or not (x.e or x.c)


# -- array nodes: the array operations over Bounded arrays -----------------------------------
# A sum computed by a tree of additions in which each term passes through at most d of them is
# within γ_d·Σ|x_i| of the exact sum of its doubles (Higham, Accuracy and Stability of Numerical
# Algorithms, §4.2); a product adds one rounding per term, and n·TINY where products fall below
# the normal range. NumPy's own sums (and BLAS's dot products) promise no order, so the sums
# here are by halves (d = ⌈log2 n⌉), and a long dot product is BLAS's on blocks of
# :data:`BLOCK` terms then summed by halves (d = BLOCK + ⌈log2(n/BLOCK)⌉). The inputs' errors
# add to that.

BLOCK = 4


@cache
def bounded_columns() -> SimpleNamespace:
    """The Bounded functions of NumPy arrays (the batch engine's values): array nodes' rows,
    built once (as :func:`_ranges_namespace`)."""
    from .batch import NUMPY
    return _namespace(NUMPY)


def exact_bound(e) -> bool:
    """Whether a bound is the exact float 0.0 (a value with no error: no array of zeros)."""
    return not _nonzero(e)


def gamma(n: int) -> float:
    """γ_n = n·u/(1 - n·u), rounded up (two ulps over its own two roundings)."""
    return _up(n * U / (1.0 - n * U), 2) if n > 0 else 0.0


def full(e, v):
    """The bound ``e`` in the shape of ``v`` (an exact 0.0 stays the float 0.0)."""
    return e if not _nonzero(e) else _numpy().broadcast_to(e, _numpy().shape(v))


def _by_halves(v, axis=None, keepdims: bool = False):
    """The sum of ``v`` over ``axis`` (None: all) by halves, and the most additions a term
    passes through."""
    np = _numpy()
    x = np.ravel(v) if axis is None else np.moveaxis(v, axis, 0)
    depth = 0
    while x.shape[0] > 1:
        half = x.shape[0] // 2
        top = x[:half] + x[half:2 * half]
        x = np.concatenate((top, x[2 * half:])) if x.shape[0] % 2 else top
        depth += 1
    total = x[0] if x.shape[0] else np.zeros(x.shape[1:])
    if keepdims:
        total = np.reshape(total, (1,) * np.ndim(v)) if axis is None else \
            np.expand_dims(total, axis)
    return total, depth


def bounded_sum(x, axis=None, keepdims: bool = False) -> Bounded:
    """The sum of ``x`` (a Bounded array) over ``axis`` (None: all), by halves."""
    np = _numpy()
    x = _bounded(x)
    v, depth = _by_halves(x.v, axis, keepdims)
    e = gamma(depth) * np.sum(np.abs(x.v), axis=axis, keepdims=keepdims) if depth else 0.0
    if _nonzero(x.e):
        e = _plus(np.sum(full(x.e, x.v), axis=axis, keepdims=keepdims), e)
    return Bounded(v, e)


def _product(a, b):
    """``a @ b`` and the most roundings a product term passes through: BLAS's for an inner
    dimension up to :data:`BLOCK`, else BLAS's on blocks of it (and the rest), summed by
    halves."""
    np = _numpy()
    n = np.shape(a)[-1]
    if n <= BLOCK:
        return np.matmul(a, b), n
    a2 = np.reshape(a, (1, n)) if np.ndim(a) == 1 else a
    b2 = np.reshape(b, (n, 1)) if np.ndim(b) == 1 else b
    blocks = n // BLOCK
    whole = blocks * BLOCK
    if blocks <= 16:  # a few: one BLAS product each (X @ W of many rows)
        parts = np.stack([np.matmul(a2[:, k:k + BLOCK], b2[k:k + BLOCK])
                          for k in range(0, n, BLOCK)])
    else:  # many: the blocks of a's transpose, a view where a is one (X' of the reverse sweep)
        left = np.reshape(a2.T[:whole], (blocks, BLOCK, a2.shape[0])).transpose(0, 2, 1)
        parts = np.matmul(left, np.reshape(b2[:whole], (blocks, BLOCK, b2.shape[1])))
        if whole < n:
            parts = np.concatenate((parts, np.matmul(a2[:, whole:], b2[whole:])[None]))
    total, depth = _by_halves(parts, 0)
    return np.reshape(total, np.shape(a)[:-1] + np.shape(b)[1:]), BLOCK + depth


def bounded_matmul(a, b, magnitude=None) -> Bounded:
    """``a @ b`` (inner dimension n, each term through at most d roundings): its error is
    within ``γ_d·|A|@|B| + |A|@eB + eA@|B| + eA@eB``, computed as ``|A|@(γ_d·|B| + eB) +
    eA@(|B| + eB)``; ``magnitude`` gives ``|A|`` (a cache of an input's, read twice)."""
    np = _numpy()
    a, b = _bounded(a), _bounded(b)
    magnitude = magnitude or np.abs
    v, depth = _product(a.v, b.v)
    n = np.shape(a.v)[-1]
    mag_b = magnitude(b.v)
    right = gamma(depth) * mag_b
    if _nonzero(b.e):
        right = right + b.e
    e = np.matmul(magnitude(a.v), right)
    if _nonzero(a.e):
        e = e + np.matmul(full(a.e, a.v), mag_b + b.e if _nonzero(b.e) else mag_b)
    return Bounded(v, e + n * TINY)


def bounded_scatter(g, index, size: int) -> Bounded:
    """The adjoint of a gather: ``g``'s elements summed at the flat positions ``index``
    (NumPy's bincount), each a sum of at most as many terms as a position is taken."""
    np = _numpy()
    g = _bounded(g)
    v = np.bincount(index, weights=np.ravel(g.v), minlength=size)
    most = int(np.bincount(index).max()) if len(index) else 0
    e = gamma(most - 1) * np.bincount(index, weights=np.abs(np.ravel(g.v)), minlength=size) \
        if most > 1 else 0.0
    if _nonzero(g.e):
        e = _plus(np.bincount(index, weights=np.ravel(full(g.e, g.v)), minlength=size), e)
    return Bounded(v, e)


def _last_axis(x: Bounded, axis):
    """``x``'s value and bound with ``axis`` (None: all, flattened) moved last."""
    np = _numpy()
    e = full(x.e, x.v)
    if axis is None:
        return np.ravel(x.v), (np.ravel(e) if _nonzero(e) else 0.0)
    return np.moveaxis(x.v, axis, -1), (np.moveaxis(e, axis, -1) if _nonzero(e) else 0.0)


def _item(v, e, i):
    return Bounded(v[..., i], e[..., i] if _nonzero(e) else 0.0)


FOLD_MOST = 1024  # a product folded one factor at a time (a loop in Python) up to this length


def _prefix_products(v, e) -> list:
    """The products of the first 0, 1, ..., n-1 factors along the last axis, each by the
    product's own formula (a fold, as NumPy's cumprod multiplies)."""
    n = v.shape[-1]
    if n > FOLD_MOST:
        raise Unbounded("a product of too many factors")
    out = [Bounded(_numpy().ones(v.shape[:-1]))]
    for i in range(n - 1):
        out.append(out[-1] * _item(v, e, i) if i else _item(v, e, 0))
    return out


def bounded_prod(x, axis=None) -> Bounded:
    """The product of ``x`` over ``axis``, folded one factor at a time."""
    v, e = _last_axis(_bounded(x), axis)
    first = _prefix_products(v, e)[-1]
    n = v.shape[-1]
    return first * _item(v, e, n - 1) if n > 1 else _item(v, e, 0)


def bounded_others_product(x, axis=None) -> Bounded:
    """For each element, the product of the others along ``axis`` (the product's adjoint): the
    products before it times those after it."""
    np = _numpy()
    x = _bounded(x)
    v, e = _last_axis(x, axis)
    before = _prefix_products(v, e)
    after = _prefix_products(v[..., ::-1], e[..., ::-1] if _nonzero(e) else 0.0)[::-1]
    each = [p * q for p, q in zip(before, after)]
    out_v = np.stack([np.asarray(p.v, dtype=float) for p in each], axis=-1)
    out_e = np.stack([np.broadcast_to(p.e, np.shape(p.v)) for p in each], axis=-1)
    if axis is None:
        return Bounded(np.reshape(out_v, np.shape(x.v)), np.reshape(out_e, np.shape(x.v)))
    return Bounded(np.moveaxis(out_v, -1, axis), np.moveaxis(out_e, -1, axis))


def clear_of_ties(kind: str, x, axis) -> None:
    """Unbounded where the chain ``max(max(x0, x1), x2) ...`` (or min's) may meet a tie: where
    the running extreme and the next element are not certainly apart by their bounds (each
    twice, and a difference that is not 0 is not 0 exactly: its rounding keeps its sign)."""
    np = _numpy()
    v, e = _last_axis(_bounded(x), axis)
    if v.shape[-1] < 2:
        return
    running = (np.maximum if kind == "max" else np.minimum).accumulate(v, axis=-1)
    gap = np.abs(running[..., :-1] - v[..., 1:])
    reach = 0.0
    if _nonzero(e):
        reach = 2.0 * (np.maximum.accumulate(e, axis=-1)[..., :-1] + e[..., 1:])
    if not np.all(gap > reach):  # (NaN: not apart)
        raise Unbounded(f"a tie of {kind}")


def bounded_extreme(kind: str, x, axis) -> Bounded:
    """max or min of ``x`` over ``axis``, with no tie met (:func:`clear_of_ties`): within the
    largest of the elements' bounds (each is 1-Lipschitz in every element), and exact."""
    np = _numpy()
    x = _bounded(x)
    clear_of_ties(kind, x, axis)
    f = np.max if kind == "max" else np.min
    return Bounded(f(x.v, axis=axis), np.max(full(x.e, x.v), axis=axis)
                   if _nonzero(x.e) else 0.0)


def clear_of_kink(*xs) -> None:
    """Unbounded where a turn (abs, relu, sign, step at 0; min, max at a tie) may be met:
    where its argument (the two arguments' difference) is not certainly apart from 0 by twice
    its bound. A kink met exactly is the balls' and the scalar tape's to decide and note."""
    np = _numpy()
    xs = [_bounded(x) for x in xs]
    if len(xs) == 1:
        gap, reach = np.abs(xs[0].v), xs[0].e
    else:
        gap, reach = np.abs(xs[0].v - xs[1].v), _plus(xs[0].e, xs[1].e)
    if not np.all(gap > 2.0 * reach if _nonzero(reach) else gap > 0):
        raise Unbounded("a kink")


def proven_texts(x: Bounded, rounded, digits: int) -> list:
    """:func:`proven_text` of every element of the Bounded array ``x`` (a float64 value and a
    bound per element), each with its float64 result in ``rounded``: the texts, row-major,
    None for each element not proven so (the balls decide those).

    Most are decided at once, in NumPy: with ``M = rint(|r|/10^q)`` of ``digits`` digits
    (``r`` the float64 result, ``q`` its last digit's place), an element whose ends
    (:func:`ends`) and ``r`` lie strictly inside ``((M - 1/2)·10^q, (M + 1/2)·10^q)`` — each
    boundary a double moved one ulp inward past its one rounding — rounds to M's text at every
    point of its interval, which is the text :func:`proven_text` gives it
    (tests/test_quick_arrays.py); one whose ends do not is not proven. Where that test does not
    apply (more than 15 digits, a place beyond 10^±22, M not of ``digits`` digits) each
    element is asked of :func:`proven_text` itself; an exact 0 is ``0``."""
    from .rounding import decimal_text
    np = _numpy()
    v = np.ravel(np.asarray(x.v, dtype=float))
    r = np.ravel(np.broadcast_to(np.asarray(rounded, dtype=float), np.shape(x.v)))
    e = np.ravel(np.asarray(full(x.e, x.v) if _nonzero(x.e) else np.zeros(np.shape(x.v)),
                            dtype=float))
    texts: list = [None] * len(v)
    with np.errstate(all="ignore"):
        lo = np.where(e > 0, np.nextafter(v - 2.0 * e, -np.inf), v)
        hi = np.where(e > 0, np.nextafter(v + 2.0 * e, np.inf), v)
        finite = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(r)
        zero = finite & (v == 0) & (e == 0) & (r == 0)
        for i in np.flatnonzero(zero).tolist():
            texts[i] = "0"
        size = np.abs(r)
        applies = np.zeros(len(v), dtype=bool)
        if digits <= 15:
            place = np.floor(np.log10(np.where(size > 0, size, 1.0))).astype(np.int64) \
                - (digits - 1)
            low_end, high_end = np.where(r > 0, lo, -hi), np.where(r > 0, hi, -lo)
            scale = 10.0 ** np.minimum(np.abs(place), 22)  # exact: 10^0 .. 10^22
            mantissa = np.rint(np.where(place >= 0, size / scale, size * scale))
            applies = (finite & (size > 0) & (np.abs(place) <= 22)
                       & (mantissa >= 10.0 ** (digits - 1)) & (mantissa < 10.0 ** digits))

            def boundary(m, inward):
                return np.nextafter(np.where(place >= 0, m * scale, m / scale), inward)
            top, bottom = boundary(mantissa + 0.5, -np.inf), boundary(mantissa - 0.5, np.inf)
            decided = (applies & (bottom < low_end) & (high_end < top) & (bottom < size)
                       & (size < top))
            signs, mantissas, places = np.sign(r).tolist(), mantissa.tolist(), place.tolist()
            for i in np.flatnonzero(decided).tolist():
                texts[i] = decimal_text(signs[i], int(mantissas[i]), places[i] + digits - 1,
                                        digits)
        for i in np.flatnonzero(finite & ~applies & ~zero).tolist():
            texts[i] = proven_text(Bounded(float(v[i]), float(e[i])), digits, float(r[i]))
    return texts


@gc_paused()  # a sweep of Bounded numbers makes no reference cycle
def certify_quickly(graph, point, wrt_slots, seed: float, digits: int, active=None,
                    floats=None, record: bool = False):
    """The output's value and gradient as proven decimal texts, by one sweep of :data:`POINT`,
    with the kinks met exactly; None when the bounds are too wide to prove ``digits`` digits (or
    cannot be computed here): then only the balls can. With ``floats``, the float64 sweeps'
    ``(values, adjoint)`` at the point: the digits are given only where those float64 results
    round to them too (the result reports them as float64's), and the sweep is not run where
    :func:`hopeless` says it cannot succeed, nor past :data:`QUICK_NODES` nodes. With
    ``record``, a fourth item: the sweep's ``(values, adjoint, records)``, from which a trace
    proves its numbers."""
    from .reverse import reverse
    if len(graph.ops) > QUICK_NODES:
        return None
    inputs = [exact_input(p) for p in point]
    if any(x is None for x in inputs):
        return None
    if floats is not None and hopeless(graph, floats[0], floats[1], digits):
        return None
    y64 = grads64 = None
    if floats is not None:
        y64, grads64 = floats[0][graph.output], [floats[1][s] for s in wrt_slots]
    try:
        values = forward(graph, inputs, POINT)
        value = proven_text(values[graph.output], digits, y64)
        if value is None:  # before the reverse sweep, which costs twice the forward one
            return None
        adjoint, records = reverse(graph, values, seed, m=POINT, active=active, record=record)
        texts = [value]
        for i, s in enumerate(wrt_slots):
            text = proven_text(adjoint[s], digits, None if grads64 is None else grads64[i])
            if text is None:
                return None
            texts.append(text)
    except (ArithmeticError, ValueError, TypeError, GradcliError):
        return None
    kinks = []
    for k, prim in enumerate(graph.ops):
        args = [values[a] for a in graph.args(k)]
        if prim.kink is None or not all(map(_exact, args)):
            continue  # an inexact argument: a kink inside its bound leaves it unproven
        xs = [a.v for a in args]
        if jumps(prim):
            if prim.kink(*xs) == 0:
                kinks.append(graph.base + k)
        elif (xs[0] - xs[1] if len(xs) == 2 else xs[0]) == 0:
            # a turn whose adjoint is exactly 0 takes neither side's slope: no kink to note
            # (logsumexp's max shift at a tie); one whose bound holds 0 is for the balls to decide
            up = adjoint[graph.base + k]
            if type(up) is Bounded and not _exact(up):
                if not abs(up.v + up.c) > 1.01 * up.e:  # not certainly nonzero
                    return None
                kinks.append(graph.base + k)
            elif (up.v if type(up) is Bounded else up) != 0:
                kinks.append(graph.base + k)
    if record:
        return texts[0], texts[1:], kinks, (values, adjoint, records)
    return texts[0], texts[1:], kinks


__all__ = ["MIN_DIGITS", "Bounded", "QuickTest", "certain_digits", "certify_quickly"]
