"""Ball arithmetic: the rule table's rows on numbers whose error is proven (Arb, via python-flint).

A :class:`Real` is an Arb ball ``[mid ± rad]`` that certainly holds the exact value, together
with the exact rational value when it is known (``0.1`` typed by the user, ``x - 0.1`` at
``x = 0.1``): exact rationals decide kinks and domain boundaries that no ball can (``abs`` at
exactly 0). :data:`BALL` is the namespace ``m`` the rules receive, built from the same rows as
the float, dual, symbolic and NumPy namespaces, so reverse mode, forward mode and the trace run
on balls unchanged.

Its functions behave as :mod:`math`'s do where the answer is certain — ``ValueError`` outside a
primitive's domain (the row's ``outside`` column), ``ZeroDivisionError`` for an exact zero
divisor — and raise :class:`Undecided` where the working precision cannot tell (a ball that
straddles a kink or a domain boundary): the caller raises the precision and tries again.

:data:`BARE` is the same namespace on bare balls (python-flint's ``arb``, no Real around each):
a large sweep's common case, at a fraction of the cost, for the rows and questions a ball alone
settles; anything else is :class:`Unsure`, and the Real sweep decides it.

>>> with precision(64):
...     x = Real.exact("0.1")  # the decimal 1/10, as typed
...     kink = BALL.abs(x - Real.exact("0.1"))  # exactly 0: abs at its kink, decided exactly
...     below = BALL.sign(x - 0.1)  # the double 0.1 is 0.1000000000000000055...
>>> kink.q, below.q
(0, -1)
"""

from __future__ import annotations

import math
import operator
from contextlib import contextmanager

from flint import arb, ctx, fmpq, fmpz

from .primitives import TABLE, Namespace, where

# An exact rational whose numerator or denominator grows past this many bits is dropped (its
# ball stays): repeated squaring would otherwise double its size at every node.
EXACT_BITS = 1 << 14


class Undecided(ArithmeticError):
    """The working precision cannot decide a kink, a jump or a domain boundary."""


class Uncertifiable(ArithmeticError):
    """A primitive the ball arithmetic has no enclosure for."""


@contextmanager
def precision(bits: int):
    """Arb's working precision set to ``bits`` for the block (it is global in python-flint)."""
    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


def _fit(q):
    """``q`` if it is small enough to keep exact, else None."""
    return q if q is not None and q.height_bits() <= EXACT_BITS else None


def parse_decimal(text: str):
    """The exact rational a decimal literal means (``1.5e-3`` -> 3/2000), or None."""
    text = text.strip().replace("_", "")
    mantissa, _, exponent = text.lower().partition("e")
    sign = -1 if mantissa.startswith("-") else 1
    mantissa = mantissa.lstrip("+-")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    if not digits or not digits.isdigit() or (exponent and not exponent.lstrip("+-").isdigit()):
        return None
    e = (int(exponent) if exponent else 0) - len(frac)
    if abs(e) > 100_000:
        return None
    # FLINT reads past Python's 4,300-digit limit on int(str) (a number typed to 5,000 digits)
    n = sign * (int(digits) if len(digits) <= 4000 else int(fmpz(digits)))
    return fmpq(n * 10 ** e) if e >= 0 else fmpq(n, 10 ** -e)


# Reals of the doubles met so far (a rule's 1.0, 0.5, a folded constant): a sweep of a large
# program converts the same few thousands of times. A double's Real is exact, whatever the
# precision, and a Real is never changed once made. 0.0 and -0.0 share one: a ball has no sign
# of zero.
_FLOATS: dict = {}


class Real:
    """A ball ``b`` (at the working precision) and, when known, its exact rational value ``q``."""

    __slots__ = ("b", "q")

    def __init__(self, b, q=None):
        self.b = b
        self.q = q

    @staticmethod
    def of(x) -> "Real":
        """``x`` as a Real: a float or an int is exact."""
        if type(x) is Real:
            return x
        if isinstance(x, float):  # a Proven float too: its double
            known = _FLOATS.get(x)
            if known is not None:
                return known
            if not math.isfinite(x):
                return Real(arb("nan"))
            x = float(x)
            made = Real(arb(x), fmpq(*x.as_integer_ratio()))  # exact at any precision
            if len(_FLOATS) < 4096:
                _FLOATS[x] = made
            return made
        if isinstance(x, int):
            return Real(arb(x), fmpq(x))
        if isinstance(x, fmpq):
            return Real(arb(x), x)
        if type(x) is arb:  # a bare ball (a sweep on BARE): no rational known
            return Real(x)
        raise TypeError(f"not a number: {x!r}")

    @staticmethod
    def _other(x):
        """``x`` as a Real for an operator, or None for a type that knows better (a Dual)."""
        if type(x) is Real:
            return x
        known = _FLOATS.get(x) if type(x) is float else None
        if known is not None:
            return known
        return Real.of(x) if isinstance(x, (int, float, fmpq)) else None

    @staticmethod
    def exact(text: str) -> "Real":
        """A decimal literal, exactly."""
        q = parse_decimal(text)
        if q is not None:
            return Real(arb(q), q)
        try:  # an exponent too large to hold exactly (1e-330000000000000004): Arb's own ball
            return Real(arb(text.strip().replace("_", "")))
        except (ValueError, TypeError):
            raise ValueError(f"not a decimal number: {text!r}") from None

    def is_zero(self) -> bool:
        return self.q == 0 if self.q is not None else self.b.is_zero()

    # -- arithmetic: exact where both sides are, a ball always -------------------------------
    # (a sweep's operands are Reals, most of them inexact: that case first, in a few steps)
    def __add__(self, o):
        if type(o) is Real:
            if self.q is None or o.q is None:
                return Real(self.b + o.b)
        elif type(o) is float and o == 0.0:  # an adjoint's first contribution: nothing to add
            return self
        else:
            o = Real._other(o)
            if o is None:
                return NotImplemented
        q = _fit(self.q + o.q) if self.q is not None and o.q is not None else None
        return Real(arb(q) if q is not None else self.b + o.b, q)

    __radd__ = __add__

    def __sub__(self, o):
        if type(o) is Real:
            if self.q is None or o.q is None:
                return Real(self.b - o.b)
        else:
            o = Real._other(o)
            if o is None:
                return NotImplemented
        q = _fit(self.q - o.q) if self.q is not None and o.q is not None else None
        return Real(arb(q) if q is not None else self.b - o.b, q)

    def __rsub__(self, o):
        o = Real._other(o)
        return NotImplemented if o is None else o - self

    def __mul__(self, o):
        if type(o) is Real:
            if self.q is None or o.q is None:
                return Real(self.b * o.b)
        elif type(o) is float and (o == 1.0 or o == -1.0):  # the partials of + and -: exact
            return self if o > 0 else -self
        else:
            o = Real._other(o)
            if o is None:
                return NotImplemented
        q = _fit(self.q * o.q) if self.q is not None and o.q is not None else None
        return Real(arb(q) if q is not None else self.b * o.b, q)

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = Real._other(o)
        if o is None:
            return NotImplemented
        if o.is_zero():
            raise ZeroDivisionError("division by zero")
        if self.q is not None and o.q is not None:
            q = _fit(self.q / o.q)
            if q is not None:
                return Real(arb(q), q)
        if 0 in o.b:
            raise Undecided("the divisor's ball holds 0")
        return Real(self.b / o.b)

    def __rtruediv__(self, o):
        o = Real._other(o)
        return NotImplemented if o is None else o / self

    def __neg__(self):
        return Real(-self.b, -self.q if self.q is not None else None)

    def __abs__(self):
        return _abs(self)

    def __pos__(self):
        return self

    def __pow__(self, o):
        o = Real._other(o)
        return NotImplemented if o is None else _pow(self, o)

    def __rpow__(self, o):
        o = Real._other(o)
        return NotImplemented if o is None else _pow(o, self)

    # -- comparisons: true only when certain -------------------------------------------------
    def __lt__(self, o):
        o = Real.of(o)
        return self.q < o.q if self.q is not None and o.q is not None else self.b < o.b

    def __le__(self, o):
        o = Real.of(o)
        return self.q <= o.q if self.q is not None and o.q is not None else self.b <= o.b

    def __gt__(self, o):
        return Real.of(o) < self

    def __ge__(self, o):
        return Real.of(o) <= self

    def __eq__(self, o):
        o = Real.of(o)
        return self.q == o.q if self.q is not None and o.q is not None else self.b == o.b

    __hash__ = None

    def __float__(self) -> float:  # error messages print the value
        if self.q is not None:
            try:
                return int(self.q.p) / int(self.q.q)  # int / int: correctly rounded
            except OverflowError:
                return math.inf if self.q > 0 else -math.inf
        return float(self.b)

    def __repr__(self) -> str:
        return f"Real({self.b}{', exact' if self.q is not None else ''})"


def _integer(x: Real):
    """``x`` as a Python int when it is exactly an integer, else None."""
    if x.q is not None:
        return int(x.q.p) if x.q.q == 1 else None
    if x.b.is_exact() and x.b.is_integer():
        return int(x.b.unique_fmpz())
    return None


def _pow(a: Real, b: Real) -> Real:
    """``a^b`` as gradcli defines it (math.pow): a < 0 only with an integer exponent."""
    n = _integer(b)
    if n is not None:
        if n < 0 and a.is_zero():
            raise ValueError("0 to a negative power")
        if a.q is not None and abs(n) * max(a.q.height_bits(), 1) <= EXACT_BITS:
            q = a.q ** n
            return Real(arb(q), q)
        if n < 0 and 0 in a.b:
            raise Undecided("a negative power of a ball that holds 0")
        return Real(a.b ** n)
    if a > 0:
        return Real(a.b ** b.b)
    if a.is_zero():
        if b > 0:
            return Real(arb(0), fmpq(0))
        if b < 0:
            raise ValueError("0 to a negative power")
        raise Undecided("0 to an exponent whose sign is not certain")
    if a < 0 and not b.b.contains_integer():
        raise ValueError("a negative number to a non-integer power")
    raise Undecided("the base's sign or the exponent's integrality is not certain")


def _sign(a) -> Real:
    a = Real.of(a)
    if a.q is not None:
        s = (a.q > 0) - (a.q < 0)
    elif a.b > 0:
        s = 1
    elif a.b < 0:
        s = -1
    elif a.b.is_zero():
        s = 0
    else:
        raise Undecided("sign of a ball that holds 0")
    return Real(arb(s), fmpq(s))


def _step(a) -> Real:
    a = Real.of(a)
    s = int(_sign(a).q)
    return Real(arb(int(s > 0)), fmpq(int(s > 0)))


def _abs(a) -> Real:
    a = Real.of(a)
    return Real(abs(a.b), abs(a.q) if a.q is not None else None)


def _min(a, b) -> Real:
    a, b = Real.of(a), Real.of(b)
    if a.q is not None and b.q is not None:
        return Real.of(min(a.q, b.q))
    return Real(a.b.min(b.b))


def _max(a, b) -> Real:
    a, b = Real.of(a), Real.of(b)
    if a.q is not None and b.q is not None:
        return Real.of(max(a.q, b.q))
    return Real(a.b.max(b.b))


def _relu(a) -> Real:
    return _max(a, 0)


def _cbrt(a) -> Real:
    a = Real.of(a)
    if a.is_zero():
        return Real(arb(0), fmpq(0))
    if a > 0:
        return Real(a.b.root(3))
    if a < 0:
        return Real(-((-a.b).root(3)))
    return Real(arb(0).union(a.b.abs_upper().root(3)).union(-a.b.abs_upper().root(3)))


def _atan2(a, b) -> Real:
    a, b = Real.of(a), Real.of(b)
    if a.is_zero() and b.is_zero():
        return Real(arb(0), fmpq(0))  # math.atan2(0, 0) = 0
    return _checked("atan2", Real(arb.atan2(a.b, b.b)), (a, b))


def _hypot(a, b) -> Real:
    a, b = Real.of(a), Real.of(b)
    return Real((a.b * a.b + b.b * b.b).sqrt())


def _sigmoid(a) -> Real:
    a = Real.of(a)
    return Real(1 / (1 + (-a.b).exp()))


def _softplus(a) -> Real:
    a = Real.of(a)
    return Real(a.b.exp().log1p())


def _exact_log(a: Real, base: int):
    """log_base(a) when a is exactly an integer power of ``base`` (log2(8) = 3), else None."""
    if a.q is None or a.q <= 0:
        return None
    p, q = int(a.q.p), int(a.q.q)
    if q == 1:
        n, m = p, 1
    elif p == 1:
        n, m = q, -1
    else:
        return None
    k = 0
    while n > 1 and n % base == 0:
        n //= base
        k += 1
    return Real.of(m * k) if n == 1 else None


def _log2(a) -> Real:
    a = Real.of(a)
    exact = _exact_log(a, 2)
    return exact if exact is not None else _checked("log2", Real(a.b.log() / arb(2).log()), (a,))


def _log10(a) -> Real:
    a = Real.of(a)
    exact = _exact_log(a, 10)
    return exact if exact is not None else _checked("log10", Real(a.b.log() / arb(10).log()),
                                                    (a,))


def _checked(name: str, r: Real, args: tuple) -> Real:
    """``r`` if its ball is finite; else the argument is certainly outside the row's domain
    (ValueError, as math says) or the precision cannot tell (:class:`Undecided`)."""
    if r.b.is_finite():
        return r
    outside = TABLE[name].outside
    if outside is not None and outside(BALL, *args):
        raise ValueError(f"outside the domain of {name}")
    raise Undecided(f"{name}: the ball is not finite")


def _method(name: str, method: str):
    """The row ``name`` computed by Arb's method ``method`` of one ball."""
    call = getattr(arb, method)

    def f(a):
        a = Real.of(a)
        r = Real(call(a.b))
        return r if r.b.is_finite() else _checked(name, r, (a,))
    f.__name__ = name
    return f


def _uncertifiable(row):
    def f(*args):
        raise Uncertifiable(f"gradcli has no ball arithmetic for {row.name}")
    f.__name__ = row.name
    return f


def _exp2(a) -> Real:
    return _pow(Real.of(2), Real.of(a))


def _log_base(a, b) -> Real:
    a, b = Real.of(a), Real.of(b)
    top = _checked("log", Real(a.b.log()), (a,)) if not (a == 1) else Real.of(0)
    bottom = _checked("log", Real(b.b.log()), (b,)) if not (b == 1) else Real.of(0)
    try:
        return top / bottom
    except ZeroDivisionError:
        raise ValueError("log to the base 1") from None


def _polygamma(n: int, b: arb) -> arb:
    """ψ^(n)(b), n >= 1, by Arb; below 0 by the reflection formula
    ψ^(n)(b) = (-1)^n ψ^(n)(1 - b) - π dⁿ/dbⁿ cot(πb), since Arb's series from the left of 0
    is not finite far from it (b = -1e8 + 1/2)."""
    from flint import acb
    if not b < 0:
        return acb(b).polygamma(n).real
    from flint import arb_series
    cot = arb_series([b, 1], prec=n + 1).cot_pi().coeffs()  # Taylor coefficients at b
    slope = cot[n] * math.factorial(n) if n < len(cot) else 0  # a zero coefficient is left off
    return (-1) ** n * acb(1 - b).polygamma(n).real - arb.pi() * slope


def _trigamma(a) -> Real:
    a = Real.of(a)
    return _checked("trigamma", Real(_polygamma(1, a.b)), (a,))


def _lgamma(a) -> Real:
    a = Real.of(a)
    if a > 0:
        return _checked("lgamma", Real(a.b.lgamma()), (a,))
    return _checked("lgamma", Real(abs(a.b.gamma()).log()), (a,))  # log|Γ(a)| below 0


def _whole(a: Real, f, exact) -> Real:
    """A step function with jumps at integers (floor, ceil, trunc), or ``exact`` on a known
    rational: a ball that straddles a jump cannot be decided."""
    if a.q is not None:
        return Real.of(exact(a.q))
    r = f(a.b)
    if not r.is_exact():
        raise Undecided("a ball that holds a jump of a step function")
    return Real(r)


def _floor(a) -> Real:
    return _whole(Real.of(a), lambda b: b.floor(), lambda q: fmpq(int(q.floor())))


def _ceil(a) -> Real:
    return _whole(Real.of(a), lambda b: b.ceil(), lambda q: fmpq(int(q.ceil())))


def _trunc(a) -> Real:
    a = Real.of(a)
    if a > 0 or (a.q is not None and a.q >= 0):
        return _floor(a)
    if a < 0 or a.q is not None:
        return _ceil(a)
    raise Undecided("trunc of a ball that holds 0")


def _round(a) -> Real:
    """Python's round: half to even (exactly, on a known rational; a ball at a tie cannot be
    decided)."""
    a = Real.of(a)
    if a.q is not None:
        from fractions import Fraction
        return Real.of(round(Fraction(int(a.q.p), int(a.q.q))))
    return _whole(a, lambda b: (b + arb("0.5")).floor(), None)


def _mod(a, b) -> Real:
    """a - b·floor(a/b): Python's %, the sign of b."""
    a, b = Real.of(a), Real.of(b)
    return a - b * _floor(a / b)


_SPECIAL = {
    "add": lambda a, b: (a if type(a) is Real else Real.of(a)) + b,
    "sub": lambda a, b: (a if type(a) is Real else Real.of(a)) - b,
    "mul": lambda a, b: (a if type(a) is Real else Real.of(a)) * b,
    "div": lambda a, b: Real.of(a) / b,
    "neg": lambda a: -Real.of(a), "pow": lambda a, b: _pow(Real.of(a), Real.of(b)),
    "abs": _abs, "sign": _sign, "step": _step, "relu": _relu, "min": _min, "max": _max,
    "cbrt": _cbrt, "atan2": _atan2, "hypot": _hypot, "sigmoid": _sigmoid,
    "softplus": _softplus, "log2": _log2, "log10": _log10, "exp2": _exp2,
    "log_base": _log_base, "trigamma": _trigamma, "lgamma": _lgamma, "floor": _floor,
    "ceil": _ceil, "trunc": _trunc, "round": _round, "mod": _mod,
}


class _Namespace(Namespace):
    """The rules' ``m`` for balls: each row's primal, the constants at the working precision,
    and the two questions only balls need answered."""

    @property
    def pi(self) -> Real:
        return Real(arb.pi())

    @property
    def e(self) -> Real:
        return Real(arb(1).exp())

    # the rules' branch: a certain condition (a comparison is true only when certain) picks
    # one side, as for floats
    where = staticmethod(where)

    @staticmethod
    def is_zero(x) -> bool:
        return Real.of(x).is_zero()

    @staticmethod
    def polygamma(n: int, x) -> Real:
        """ψ^(n)(x), by Arb (trigamma's derivative, which no row is)."""
        x = Real.of(x)
        return _checked("trigamma", Real(_polygamma(n, x.b)), (x,))

    @staticmethod
    def noninteger(x) -> bool:
        """Whether ``x`` is certainly not an integer."""
        x = Real.of(x)
        return _integer(x) is None and not x.b.contains_integer()

    @staticmethod
    def sinc_slope(x) -> Real:
        """sinc'(x) (sinc's rule, which (cos x - sinc x)/x is only away from 0)."""
        return Real(_sinc_slope(Real.of(x).b))

    @staticmethod
    def sinc_curvature(x) -> Real:
        """sinc''(x) = -sinc(x) + (2/3)·0F1(;5/2;-x²/4): the derivative of sinc's rule, for
        its Hessian, finite at 0 too (-1/3)."""
        b = Real.of(x).b
        return Real(2 * _bessel(b) / 3 - b.sinc())


def _bessel(b: arb) -> arb:
    """0F1(;5/2;-b²/4) = 3·j1(b)/b, the spherical Bessel function over its argument: 1 at 0."""
    return (-(b * b) / 4).hypgeom_0f1(arb(5) / 2)


def _sinc_slope(b: arb) -> arb:
    """sinc'(b) = -j1(b) = -(b/3)·0F1(;5/2;-b²/4): one Arb function, finite and without
    cancellation for every b (0 at 0)."""
    return -(b / 3) * _bessel(b)


# A row with neither a function here nor a definition (:class:`Namespace`) cannot be proven.
BALL = _Namespace(_uncertifiable, **_SPECIAL, **{
    name: _method(name, name) for name, p in TABLE.items()
    if name not in _SPECIAL and p.arity == 1 and p.definition is None and hasattr(arb, name)})


# -- bare balls: the common case of a large sweep, without the Real around each ball ---------------

class Unsure(ArithmeticError):
    """A bare ball cannot settle this (a sign, a domain, an exact value): the Real sweep does."""


def _bare_method(method: str):
    call = getattr(arb, method)

    def f(a):
        r = call(a if type(a) is arb else arb(a))  # a rule's 2.0 (log's) is exact as a ball
        if not r.is_finite():  # outside the domain, or not decided: the Real sweep says which
            raise Unsure(method)
        return r
    return f


def _bare_div(a, b):
    if 0 in b:
        raise Unsure("a divisor's ball holds 0")
    return a / b


def _bare_sign(a):
    if type(a) is not arb:
        a = arb(a)
    if a > 0:
        return arb(1)
    if a < 0:
        return arb(-1)
    if a.is_zero():
        return arb(0)
    raise Unsure("sign of a ball that holds 0")


def _bare_pow(a, b):
    """``a^b`` as :func:`_pow` computes a ball with no known rational: an integer exponent
    (an exact integer ball), else a positive base; anything else is for the Real sweep."""
    a = a if type(a) is arb else arb(a)
    b = b if type(b) is arb else arb(b)
    if b.is_exact() and b.is_integer():
        n = int(b.unique_fmpz())
        if n < 0 and 0 in a:
            raise Unsure("a negative power of a ball that holds 0")
        return a ** n
    if a > 0:
        return a ** b
    raise Unsure("the base's sign or the exponent's integrality")


def _bare_unsure(name: str):
    def f(*args):
        raise Unsure(name)
    return f


def _bare_unsure_row(row):
    return _bare_unsure(row.name)


# Rows whose Real result is exact for no inexact argument, computed on bare balls exactly as the
# Real functions above compute their ``.b`` (so a sweep's balls are the same either way); every
# other row, or any argument with a known rational, goes through its Real function.
_BARE = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": _bare_div,
    "neg": operator.neg, "abs": abs, "min": lambda a, b: a.min(b),
    "max": lambda a, b: a.max(b), "relu": lambda a: a.max(arb(0)),
    "hypot": lambda a, b: (a * a + b * b).sqrt(),
    "sigmoid": lambda a: 1 / (1 + (-a).exp()), "softplus": lambda a: a.exp().log1p(),
    **{name: _bare_method(name) for name, p in TABLE.items()
       if name not in _SPECIAL and p.arity == 1 and p.definition is None and hasattr(arb, name)},
}


def _bare_finite(f):
    def g(*args):
        r = f(*args)
        if not r.is_finite():
            raise Unsure("not finite")
        return r
    return g


class _BareNamespace(Namespace):
    """The rules' ``m`` on bare balls (python-flint's arb): the rows of :data:`_BARE`, sign and
    step where the ball decides them; any other question is :class:`Unsure`."""

    # The reverse sweep takes a ball times ±1 and 0 + a ball as the ball itself (partials.py's
    # _accumulated): exact, where Arb's multiplication would round the radius up.
    exact_units = True

    @property
    def pi(self):
        return arb.pi()

    @property
    def e(self):
        return arb(1).exp()

    where = staticmethod(where)

    @staticmethod
    def is_zero(x) -> bool:
        return x.is_zero() if type(x) is arb else x == 0

    @staticmethod
    def noninteger(x) -> bool:
        return not x.contains_integer() if type(x) is arb else x != int(x)

    @staticmethod
    def sinc_slope(x):
        return _sinc_slope(x if type(x) is arb else arb(x))

    @staticmethod
    def tanh_slope(x):
        """tanh'(x) = sech(x)^2: one Arb function and a square, where the rows' generic
        4·sigmoid(2x)·sigmoid(-2x) is six operations (nothing cancels either way)."""
        s = (x if type(x) is arb else arb(x)).sech()
        return s * s


BARE = _BareNamespace(_bare_unsure_row, **{
    name: _bare_finite(_BARE[name]) if name in ("sigmoid", "softplus", "hypot") else _BARE[name]
    for name in _BARE}, sign=_bare_sign, step=lambda a: arb(int(_bare_sign(a) > 0)),
    pow=_bare_pow, polygamma=_bare_unsure("polygamma"))
