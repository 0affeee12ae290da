"""A proven bound on the error of every batch row: how many significant digits are certain.

The batch engine computes in float64. Here the same tape is swept again, forward and reverse,
with the same rules of the table (:mod:`gradcli.engine.primitives`), over a namespace whose
values are :class:`Bounded` columns: the float64 value the batch engine computes (the same NumPy
operations, so the same bits) and a bound ``err`` on its distance from the exact value of the
expression at the row's point (the inputs are taken as the doubles read). Each operation adds
the error it inherits, bounded over the whole interval ``[x - err, x + err]`` (not to first
order), and its own rounding:

- ``+ - * /``: the exact propagation formulas (``|x|·ey + |y|·ex + ex·ey`` for a product,
  ``(ex + |x/y|·ey) / (|y| - ey)`` for a quotient) and half an ulp of rounding;
- a monotone function (exp, log, sqrt, atan, tanh, sigmoid, erf, ...): evaluated at the interval's
  ends, rounded outward with ``np.nextafter``; the exact value lies between them, give or take
  the function's own error at each end (:data:`ULPS`);
- sin and cos: ``|cos x|·e + e²/2`` (Taylor with the remainder), and 1.5 ulp of rounding
  (tests/test_trig.py); cosh, hypot, atan2, min, max, abs: their Lipschitz constants over the
  interval; sign and step: exact where the interval does not reach the kink, unbounded where
  it does.

A row's certain digits are ``floor(-log10(2·err/|value|))``, the least over its outputs (the
factor 2 covers the rounding of the bound's own arithmetic); a bound below the smallest normal
double (2.2e-308: an exact zero, say) counts as all 17. A row whose bound is not finite (a kink
or a pole inside the interval) has none.

>>> import numpy as np
>>> from gradcli.engine.graph import compile
>>> digits = certain_digits(compile("(1-cos(x))/x^2"), {"x": np.array([1.0, 1e-8])})
>>> digits.tolist()  # at 1e-8, 1 - cos(x) cancels every digit
[12, 0]
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Iterable, Mapping

import numpy as np

from ..errors import LimitError
from .batch import NUMPY, as_columns, block_namespace, reverse_block
from .graph import Graph
from .primitives import CONSTANTS, TABLE
from .reverse import visit_order

U = 2.0 ** -53  # the unit roundoff: half an ulp, relative
TINY = 2.0 ** -1074  # the smallest subnormal: an absolute floor for every rounding
SMALLEST_NORMAL = 2.0 ** -1022
MIN_DIGITS = 10  # a row with fewer certain digits goes to the certified engine
# The largest error of each function as computed here (NumPy's and trig.sincos), in ulps; a
# generous bound where the library does not document one.
ULPS = {"sin": 1.5, "cos": 1.5}
DEFAULT_ULPS = 4.0


def _ulp_error(value, ulps: float):
    """``ulps`` ulps of ``value``, as an absolute error (an ulp is at most 2u·|value|)."""
    return (2 * U * ulps) * np.abs(value) + ulps * TINY


class Bounded:
    """A float64 value (a NumPy column or a float) and a bound on its error, ``err >= 0``."""

    __slots__ = ("v", "e")
    __array_priority__ = 100  # NumPy hands ``array * Bounded`` to Bounded.__rmul__

    def __init__(self, v, e=0.0):
        self.v, self.e = v, e

    # -- arithmetic: the exact propagation formulas plus half an ulp of rounding ---------------
    # An exact operand's bound is the float 0.0 (the inputs, the rules' own constants): the
    # terms it would add are skipped, not computed as a pass over zeros.
    def __add__(self, other):
        o = _bounded(other)
        v = self.v + o.v
        return Bounded(v, _rounded(_plus(self.e, o.e), v))

    __radd__ = __add__

    def __sub__(self, other):
        o = _bounded(other)
        v = self.v - o.v
        return Bounded(v, _rounded(_plus(self.e, o.e), v))

    def __rsub__(self, other):
        return _bounded(other) - self

    def __mul__(self, other):
        o = _bounded(other)
        v = self.v * o.v
        e = 0.0
        if _nonzero(o.e):
            e = np.abs(self.v) * o.e
        if _nonzero(self.e):
            e = _plus(e, np.abs(o.v) * self.e)
            if _nonzero(o.e):
                e = _plus(e, self.e * o.e)
        return Bounded(v, _rounded(e, v, TINY))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return _divide(self, _bounded(other))

    def __rtruediv__(self, other):
        return _divide(_bounded(other), self)

    def __neg__(self):
        return Bounded(-self.v, self.e)

    def __pow__(self, other):
        return _pow(self, _bounded(other))

    def __rpow__(self, other):
        return _pow(_bounded(other), self)


def _nonzero(e) -> bool:
    return not (type(e) is float and e == 0.0)


def _plus(a, b):
    """a + b, skipping an exact 0.0 (and adding in place into a fresh array)."""
    if not _nonzero(a):
        return b
    if not _nonzero(b):
        return a
    return a + b


def _rounded(e, v, floor: float = 0.0):
    """``e`` plus half an ulp of ``v`` (and ``floor``): the rounding of the operation that gave
    ``v``, computed with one temporary."""
    r = np.abs(v)
    if type(r) is np.ndarray:
        r *= U
        if floor:
            r += floor
        if _nonzero(e):
            r += e
        return r
    return e + U * r + floor


def _bounded(x) -> Bounded:
    """A Bounded, a float or an array (exact: the rules' own constants, 1 or 0.5 or 2)."""
    return x if isinstance(x, Bounded) else Bounded(x, 0.0)


def _not_finite_as_inf(e):
    """NaN bounds (an interval outside a domain) as infinite: nothing is certain there."""
    return np.where(np.isnan(e), np.inf, e) if np.ndim(e) else (math.inf if e != e else e)


def _divide(a: Bounded, b: Bounded) -> Bounded:
    v = a.v / b.v
    if not _nonzero(b.e):  # an exact divisor: the dividend's error, scaled
        e = a.e / np.abs(b.v) if _nonzero(a.e) else 0.0
        return Bounded(v, _rounded(e, v, TINY))
    room = np.abs(b.v) - b.e
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(room > 0, _plus(a.e, np.abs(v) * b.e) / np.where(room > 0, room, 1.0),
                     np.inf)
    return Bounded(v, _rounded(e, v, TINY))


def _pow(a: Bounded, b: Bounded) -> Bounded:
    """a^b = exp(b·ln|a|) in size: |A^B - a^b| <= |a^b|·expm1(bound on |B ln|A| - b ln|a||), for
    a != 0 with the interval of a clear of 0 (and, for a < 0, b exact: an integer power)."""
    v = np.power(a.v, b.v)
    size = np.abs(a.v)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        room = size - a.e
        log_a = np.log(size)
        rel = np.where(room > 0, a.e / np.where(room > 0, room, 1.0), np.inf)  # bound on |dln a|
        t = np.abs(log_a) * b.e + np.abs(b.v) * rel + b.e * rel
        e = np.abs(v) * np.expm1(t)
        e = np.where((np.asarray(a.v) < 0) & (np.asarray(b.e) > 0), np.inf, e)
        exact_zero = (np.asarray(a.v) == 0) & (np.asarray(a.e) == 0) & (np.asarray(b.v) > 0)
        e = np.where(exact_zero, 0.0, e)
    return Bounded(v, _not_finite_as_inf(e) + _ulp_error(v, DEFAULT_ULPS))


# -- the namespace the rules compute with --------------------------------------------------------

def _monotone(f, ulps: float = DEFAULT_ULPS):
    """A monotone function: the exact value over the interval lies between its values at the
    interval's ends (rounded outward), each off by at most ``ulps`` ulps."""
    def apply(a, v=None):
        a = _bounded(a)
        if v is None:
            v = f(a.v)
        if not _nonzero(a.e):  # an exact argument: only the function's own rounding
            return Bounded(v, _ulp_error(v, ulps))
        exact = np.asarray(a.e) == 0
        lo = np.where(exact, a.v, np.nextafter(a.v - a.e, -np.inf))
        hi = np.where(exact, a.v, np.nextafter(a.v + a.e, np.inf))
        f_lo, f_hi = f(lo), f(hi)
        e = np.maximum(np.abs(f_hi - v), np.abs(f_lo - v))
        e = e + _ulp_error(np.maximum(np.abs(f_lo), np.abs(f_hi)), ulps)
        return Bounded(v, _not_finite_as_inf(e))
    return apply


def _lipschitz(f, slope):
    """``|f(X) - f(x)| <= slope(x, e)·e`` (``slope``: the largest |f'| over the interval)."""
    def apply(a):
        a = _bounded(a)
        v = f(a.v)
        return Bounded(v, _not_finite_as_inf(slope(a.v, a.e) * a.e) + _ulp_error(v, DEFAULT_ULPS))
    return apply


def _kinked(f):
    """sign and step: exact where the interval does not reach 0, unbounded where it does."""
    def apply(a):
        a = _bounded(a)
        v = f(a.v)
        return Bounded(v, np.where(np.abs(a.v) > a.e, 0.0, np.inf) if np.ndim(a.v) or
                       np.ndim(a.e) else (0.0 if abs(a.v) > a.e else math.inf))
    return apply


def _piecewise_constant(f):
    """floor, ceil, trunc, round: exact where the interval's ends give the same value (it holds
    no jump), unbounded where they do not."""
    def apply(a):
        a = _bounded(a)
        v = f(a.v)
        same = f(np.nextafter(a.v - a.e, -np.inf)) == f(np.nextafter(a.v + a.e, np.inf))
        if not _nonzero(a.e):
            same = f(a.v) == f(a.v)  # an exact argument: exact (NaN stays unbounded)
        return Bounded(v, np.where(same, 0.0, np.inf) if np.ndim(same) else
                       (0.0 if same else math.inf))
    return apply


def _namespace(m: SimpleNamespace) -> SimpleNamespace:
    """The namespace of Bounded functions, whose values come from ``m`` (a block's NumPy
    namespace, so that sin and cos share one sincos call as in the batch engine)."""
    def trig(own, other, name):
        def apply(a):
            a = _bounded(a)
            v, c = getattr(m, own)(a.v), getattr(m, other)(a.v)
            e = np.minimum(2.0, np.abs(c) * a.e + 0.5 * a.e * a.e)
            return Bounded(v, e + _ulp_error(v, ULPS[name]))
        return apply

    def binary_lipschitz(f, combine):
        def apply(a, b):
            a, b = _bounded(a), _bounded(b)
            v = f(a.v, b.v)
            return Bounded(v, combine(a, b, v))
        return apply

    def atan2_error(a, b, v):
        r = np.hypot(a.v, b.v)
        spread = a.e + b.e
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.where(r > spread, spread / np.where(r > spread, r - spread, 1.0), np.inf)
        return e + _ulp_error(v, DEFAULT_ULPS)

    monotone = {name: _monotone(getattr(NUMPY, name)) for name in (
        "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "asin", "acos", "atan",
        "sinh", "asinh", "acosh", "atanh", "tanh", "sigmoid", "softplus", "relu", "erf",
        "erfc", "exp2")}
    own = {
        "add": lambda a, b: _bounded(a) + b, "sub": lambda a, b: _bounded(a) - b,
        "mul": lambda a, b: _bounded(a) * b, "div": lambda a, b: _bounded(a) / b,
        "neg": lambda a: -_bounded(a), "pow": lambda a, b: _bounded(a) ** b,
        "sin": trig("sin", "cos", "sin"), "cos": trig("cos", "sin", "cos"),
        "tan": _monotone_between_poles(np.tan),
        "cosh": _lipschitz(np.cosh, lambda x, e: np.sinh(np.abs(x) + e)),
        "abs": lambda a: Bounded(np.abs(_bounded(a).v), _bounded(a).e),
        "min": binary_lipschitz(NUMPY.min, lambda a, b, v: np.maximum(a.e, b.e)),
        "max": binary_lipschitz(NUMPY.max, lambda a, b, v: np.maximum(a.e, b.e)),
        "hypot": binary_lipschitz(np.hypot, lambda a, b, v: a.e + b.e
                                  + _ulp_error(v, DEFAULT_ULPS)),
        "atan2": binary_lipschitz(np.arctan2, atan2_error),
        "sign": _kinked(NUMPY.sign), "step": _kinked(NUMPY.step),
        **{name: _piecewise_constant(getattr(NUMPY, name))
           for name in ("floor", "ceil", "trunc", "round")},
        **monotone,
    }
    missing = set(TABLE) - set(own)
    if missing:  # a new row of the table without a bound here: its rows are not certified
        for name in missing:
            own[name] = _uncertain(getattr(NUMPY, name))
    constants = {name: Bounded(value, U * abs(value)) for name, value in CONSTANTS.items()}
    return SimpleNamespace(**own, **constants, where=_where)


def _where(condition, x, y):
    """A rule's branch (the pow rules'): the row's own, with the bound of the branch taken. A
    Bounded never equals a number, so a condition on one is False for every row, as on duals."""
    if type(condition) is bool:
        return x if condition else y
    x, y = _bounded(x), _bounded(y)
    return Bounded(np.where(condition, x.v, y.v), np.where(condition, x.e, y.e))


def _monotone_between_poles(f):
    """tan: increasing between its poles; an interval whose ends are out of order holds one."""
    base = _monotone(f)

    def apply(a):
        a = _bounded(a)
        result = base(a)
        lo = f(np.nextafter(a.v - a.e, -np.inf))
        hi = f(np.nextafter(a.v + a.e, np.inf))
        result.e = np.where(hi >= lo, result.e, np.inf)
        return result
    return apply


def _uncertain(f):
    def apply(*args):
        return Bounded(f(*[_bounded(a).v for a in args]), math.inf)
    return apply


def constant_errors(graph: Graph, m: SimpleNamespace) -> list[float]:
    """A bound on each constant's error. A literal (0.1, pi) is the number typed (1/10, π), as
    the certified engine reads it: its double is within an ulp; a
    constant folded at lowering (``ln(e)``, ``1 + 1e-16``) carries the rounding of its folds,
    replayed here with Bounded arithmetic (to a fixed point: one slot can hold the values of a
    literal and of several folds), plus the distance between the value folded by the scalar
    primal and the one replayed with NumPy."""
    constants = graph.constants
    errors = [0.0] * graph.n_const
    for slot, recipe in graph.exact.items():  # a literal, pi, e: the number typed, not its double
        if isinstance(recipe, str) or len(recipe) == 1:  # (the double is within an ulp of it)
            errors[slot] = math.ulp(constants[slot])
    typed = list(errors)
    for _ in range(8):
        changed = False
        for slot, name, a, b in graph.folds:
            f = getattr(m, name)
            args = [Bounded(constants[a], errors[a])]
            if b >= 0:
                args.append(Bounded(constants[b], errors[b]))
            with np.errstate(all="ignore"):
                got = f(*args)
                e = float(got.e) + abs(float(got.v) - constants[slot])
            if not e <= errors[slot]:  # larger, or nan
                errors[slot] = e if e == e else math.inf
                changed = True
        if not changed:
            return errors
    return [math.inf if any(f[0] == i for f in graph.folds) else typed[i]
            for i in range(len(errors))]


# -- the sweeps ------------------------------------------------------------------------------

def relative_error(value, err):
    """``err / |value|``; 0 where ``err`` is below the smallest normal double (an exact 0 and
    the floor of float64 itself count as exact), inf where nothing is known."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.asarray(err / np.abs(value), dtype=float)
    rel = np.where(np.asarray(err) < SMALLEST_NORMAL, 0.0, rel)
    return np.where(np.isnan(rel), np.inf, rel)


def digits_from_relative(rel) -> np.ndarray:
    """Certain significant digits for a relative error bound (0 to 17)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        digits = np.floor(-np.log10(2 * rel))
    digits = np.where(np.isnan(digits), 0, digits)
    return np.clip(digits, 0, 17).astype(np.int64)


def digits_of(value, err) -> np.ndarray:
    """Certain significant digits of ``value`` given the bound ``err`` (0 to 17)."""
    return digits_from_relative(relative_error(value, err))


def forward(graph: Graph, block: list, m: SimpleNamespace) -> list:
    """Every slot as a Bounded for one block: the batch engine's forward sweep (the same
    operations in the same order, so the same values) with a bound carried beside each."""
    slots = [Bounded(c, e) for c, e in zip(graph.constants, constant_errors(graph, m))]
    slots += [Bounded(np.asarray(x, dtype=float), 0.0) for x in block]
    append, arg0, arg1 = slots.append, graph.arg0, graph.arg1
    for k, prim in enumerate(graph.ops):
        f, b = getattr(m, prim.name), arg1[k]
        append(f(slots[arg0[k]]) if b < 0 else f(slots[arg0[k]], slots[b]))
    return slots


def block_digits(graph: Graph, block: list, wrt: list[str], order=None,
                 outputs: list[Graph] | None = None) -> np.ndarray:
    """Certain digits of each row of one block (``block``: the inputs in graph order): the least
    over every output's value and its gradient by ``wrt``."""
    n = len(block[0]) if block else 1
    m = _namespace(block_namespace())
    slots = forward(graph, block, m)
    worst = np.zeros(n)  # the largest relative error bound over the row's results
    singles = outputs or [graph]
    for one in singles:
        out = _bounded(slots[one.output])
        worst = np.maximum(worst, relative_error(out.v, out.e))
        if not wrt:
            continue
        try:
            adjoint = reverse_block(one, list(slots), order if len(singles) == 1 and order
                                    else visit_order(one), m=m)
        except LimitError:  # a rule with no formula to bound (trigamma's ψ''): none proven
            return digits_from_relative(np.full(n, np.inf))
        for name in wrt:
            g = adjoint[one.n_const + one.inputs.index(name)]
            if g is None:
                continue  # nothing flows: the derivative is an exact 0
            g = _bounded(g)
            if _nonzero(g.e):
                worst = np.maximum(worst, relative_error(g.v, g.e))
    return digits_from_relative(worst)


def certain_digits(graph: Graph, columns: Mapping[str, object], *,
                   wrt: Iterable[str] | None = None, gradient: bool = True,
                   block_rows: int = 1 << 14) -> np.ndarray:
    """For every row of ``columns``, how many significant digits of the batch engine's value
    and gradient (all of ``graph``'s outputs) are proven correct: an int array."""
    from .graph import wrt_names
    wrt = wrt_names(graph, wrt) if gradient else []
    n, arrays = as_columns(graph, columns)
    outputs = [graph.only(i) for i in range(graph.n_outputs)] if graph.n_outputs > 1 else None
    order = visit_order(graph) if outputs is None else None
    digits = np.empty(n, dtype=np.int64)
    with np.errstate(all="ignore"):
        for start in range(0, n, block_rows):
            stop = min(n, start + block_rows)
            block = [arrays[name][start:stop] for name in graph.inputs]
            digits[start:stop] = block_digits(graph, block, wrt, order, outputs)
    return digits


__all__ = ["MIN_DIGITS", "Bounded", "certain_digits", "digits_of"]
