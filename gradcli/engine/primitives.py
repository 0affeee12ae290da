"""THE table of primitives: name -> arity, primal, one partial-derivative rule per argument, domain.

Every derivative in gradcli (reverse mode, forward mode, the trace's local derivatives, the
numerical check, symbolic ``diff``) reads the same row. A rule is a function ``(m, *args, ans)``
that returns the partial derivative of the primitive with respect to one argument, where ``ans``
is the primitive's own value and ``m`` is a namespace of the catalogue's functions. Because a
rule only uses ``m`` and arithmetic operators, the same rule computes on floats (``m = FLOAT``)
and builds expressions when given symbolic values: the rules are themselves differentiable,
as HIPS autograd's are.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

from . import special


@dataclass(frozen=True, slots=True)
class Primitive:
    name: str
    arity: int
    primal: Callable[..., float]
    partials: tuple[Callable, ...]  # partials[k](m, *args, ans) = d ans / d args[k]
    domain: str  # in words, for `gradcli functions` and domain errors
    symbol: str | None = None  # infix/prefix operator, for the arithmetic rows
    note: str = ""  # conventions at kinks and singular points
    # Which side of its kink the arguments lie on: -1 or +1, and 0 exactly at the kink (where
    # the rule returns a conventional subgradient); for a step function with many jumps, a
    # nonzero number naming the piece (_cell). None for primitives without a kink.
    kink: Callable[..., int] | None = None

    @property
    def is_operator(self) -> bool:
        return self.symbol is not None


# -- numerically careful primals ---------------------------------------------------------------

def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)  # no overflow for very negative x
    return z / (1.0 + z)


def _softplus(x: float) -> float:
    return math.log1p(math.exp(-abs(x))) + (x if x > 0 else 0.0)


def _relu(x: float) -> float:
    return x if x > 0 else 0.0


def _sign(x: float) -> float:
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


def _step(x: float) -> float:
    return 1.0 if x > 0 else 0.0


def _side(a: float, b: float = 0.0) -> int:
    """-1, 0 or +1 as a < b, a = b, a > b: where relu, abs, sign, step (b = 0), min, max turn."""
    return (a > b) - (a < b)


def _cell(a: float, offset: float = 0.0) -> float:
    """The piece of a step function a lies on: 0 exactly on a jump (an integer, or for
    ``offset`` 0.5 a half-integer), else a nonzero number naming the piece between two jumps, so
    that a step that crosses a jump changes it (floor, ceil, trunc; round with 0.5)."""
    below = math.floor(a - offset)
    return 0.0 if below == a - offset else below + 0.5


def _integer_valued(f):
    """A float for floor, ceil, round, trunc (Python's give ints; inf and NaN have none)."""
    def primal(a: float) -> float:
        return float(f(a)) if math.isfinite(a) else a
    primal.__name__ = f.__name__
    return primal


def _sinc_slope(m, a, y):
    """d sinc(a)/da = (cos a - sinc a)/a, by its series near 0, where that cancels (0/0 at 0)."""
    if type(a) is float:
        return special.sinc_derivative(a)
    if hasattr(a, "shape"):  # NumPy columns (the batch engine)
        import numpy as np
        near = np.abs(a) < 1.0
        safe = np.where(near, 1.0, a)
        return np.where(near, special.sinc_slope_series(np.where(near, a, 0.0)),
                        (m.cos(safe) - m.sinc(safe)) / safe)
    return (m.cos(a) - y) / a


def _trigamma_slope(m, a, y):
    """d trigamma(a)/da = ψ''(a), computed numerically on floats and NumPy columns, and with
    its own derivative ψ''' on dual numbers (trigamma's Hessian). No row of the table is ψ''
    (it has no closed form), so a symbolic derivative of trigamma is a LimitError saying so."""
    if type(a) is float:
        return special.polygamma(2, a)
    if hasattr(a, "shape"):  # NumPy columns (the batch engine)
        import numpy as np
        return np.vectorize(lambda x: _nan_outside(special.polygamma, 2, x), otypes=[float])(a)
    if hasattr(a, "tangent"):  # a dual number (trigamma's Hessian): ψ''(a) and ψ'''(a)·tangent
        return type(a)(special.polygamma(2, a.value), special.polygamma(3, a.value) * a.tangent)
    from ..errors import LimitError
    raise LimitError("the derivative of trigamma (ψ'', the third derivative of lgamma) has no "
                     "formula in gradcli's functions", hint="eval computes its value at a point")


def _nan_outside(f, *args):
    try:
        return f(*args)
    except (ValueError, ZeroDivisionError, OverflowError):
        return math.nan


def _cbrt(x: float) -> float:
    return math.copysign(abs(x) ** (1.0 / 3.0), x)


_cbrt = getattr(math, "cbrt", _cbrt)  # math.cbrt is exact to the last bit, Python >= 3.11


def _columns(*args) -> bool:
    """Whether a rule is given NumPy columns (the batch engine): its special cases then need
    NumPy's ``where``, imported only then."""
    return any(hasattr(x, "shape") for x in args)


def _pow_by_base(m, a, b, y):
    """∂(a^b)/∂a = b·a^(b-1); where b = 0 that is 0 for every a (a^0 = 1 is constant), also at
    a = 0, where the formula would be 0·0^(-1)."""
    if _columns(a, b):
        import numpy as np
        zero = np.asarray(b) == 0
        return np.where(zero, 0.0, b * m.pow(a, np.where(zero, 1.0, b) - 1))
    if type(b) is float and b == 0:
        return 0.0
    return b * m.pow(a, b - 1)


def _pow_by_exponent(m, a, b, y):
    """∂(a^b)/∂b = a^b·ln a; where a = 0 and b > 0 that is 0 (0^b = 0 for every b > 0), though
    ln 0 is not finite. Elsewhere ln a needs a > 0."""
    if _columns(a, b):
        import numpy as np
        zero = (np.asarray(a) == 0) & (np.asarray(b) > 0)
        return np.where(zero, 0.0, y * m.log(np.where(zero, 1.0, a)))
    if type(a) is float and a == 0 and type(b) is float and b > 0:
        return 0.0
    return y * m.log(a)


def _row(name, arity, primal, partials, domain="all reals", symbol=None, note="", kink=None):
    return Primitive(name, arity, primal, tuple(partials), domain, symbol, note, kink)


# -- the table: one line per primitive, rules as (m, args..., ans) -----------------------------
# Names of arguments in the rules: a (first), b (second), y (the primitive's value).

TABLE: dict[str, Primitive] = {p.name: p for p in (
    # arithmetic operators
    _row("add", 2, operator.add, (lambda m, a, b, y: 1.0, lambda m, a, b, y: 1.0), symbol="+"),
    _row("sub", 2, operator.sub, (lambda m, a, b, y: 1.0, lambda m, a, b, y: -1.0), symbol="-"),
    _row("mul", 2, operator.mul, (lambda m, a, b, y: b, lambda m, a, b, y: a), symbol="*"),
    _row("div", 2, operator.truediv, (lambda m, a, b, y: 1 / b, lambda m, a, b, y: -y / b),
         "b ≠ 0", symbol="/"),
    _row("neg", 1, operator.neg, (lambda m, a, y: -1.0,), symbol="-"),
    _row("pow", 2, math.pow, (_pow_by_base, _pow_by_exponent),
         "a > 0; a = 0 with b > 0; a < 0 with integer b", symbol="^",
         note="∂/∂a = b·a^(b-1) is 0 where b = 0. ∂/∂b = a^b·ln a needs a > 0 (it is 0 where "
              "a = 0 and b > 0). Each is computed only when its argument is differentiated"),
    # exponentials and logarithms
    _row("exp", 1, math.exp, (lambda m, a, y: y,)),
    _row("expm1", 1, math.expm1, (lambda m, a, y: m.exp(a),),
         note="d/da = exp(a), not expm1(a) + 1, which cancels to 0 for very negative a"),
    _row("log", 1, math.log, (lambda m, a, y: 1 / a,), "a > 0"),
    _row("log1p", 1, math.log1p, (lambda m, a, y: 1 / (1 + a),), "a > -1"),
    _row("log2", 1, math.log2, (lambda m, a, y: 1 / (a * m.log(2.0)),), "a > 0"),
    _row("log10", 1, math.log10, (lambda m, a, y: 1 / (a * m.log(10.0)),), "a > 0"),
    _row("sqrt", 1, math.sqrt, (lambda m, a, y: 0.5 / y,), "a ≥ 0",
         note="not differentiable at 0 (infinite slope)"),
    _row("cbrt", 1, _cbrt, (lambda m, a, y: 1 / (3 * y ** 2),),
         note="not differentiable at 0 (infinite slope)"),
    # trigonometric
    _row("sin", 1, math.sin, (lambda m, a, y: m.cos(a),)),
    _row("cos", 1, math.cos, (lambda m, a, y: -m.sin(a),)),
    _row("tan", 1, math.tan, (lambda m, a, y: 1 + y ** 2,), "a ≠ π/2 + kπ"),
    _row("asin", 1, math.asin, (lambda m, a, y: 1 / m.sqrt(1 - a ** 2),), "-1 ≤ a ≤ 1",
         note="not differentiable at ±1"),
    _row("acos", 1, math.acos, (lambda m, a, y: -1 / m.sqrt(1 - a ** 2),), "-1 ≤ a ≤ 1",
         note="not differentiable at ±1"),
    # a*a and hypot, not a**2: float ** raises OverflowError from |a| ≈ 1.3e154, where these
    # derivatives are still finite (or underflow to 0)
    _row("atan", 1, math.atan, (lambda m, a, y: 1 / (1 + a * a),)),
    _row("atan2", 2, math.atan2, (lambda m, a, b, y: b / m.hypot(a, b) / m.hypot(a, b),
                                  lambda m, a, b, y: -a / m.hypot(a, b) / m.hypot(a, b)),
         note="atan2(a, b) is the angle of the point (b, a); not differentiable at (0, 0)"),
    _row("hypot", 2, math.hypot, (lambda m, a, b, y: a / y, lambda m, a, b, y: b / y),
         note="not differentiable at (0, 0)"),
    # hyperbolic
    _row("sinh", 1, math.sinh, (lambda m, a, y: m.cosh(a),)),
    _row("cosh", 1, math.cosh, (lambda m, a, y: m.sinh(a),)),
    _row("tanh", 1, math.tanh, (lambda m, a, y: 4 * m.sigmoid(2 * a) * m.sigmoid(-2 * a),),
         note="d/da = 1 - tanh(a)^2, computed as 4·sigmoid(2a)·sigmoid(-2a), which keeps its "
              "precision for large |a| (1 - tanh(a)^2 cancels to 0 from |a| ≈ 19)"),
    _row("asinh", 1, math.asinh, (lambda m, a, y: 1 / m.hypot(a, 1),)),
    _row("acosh", 1, math.acosh, (lambda m, a, y: 1 / (m.sqrt(a - 1) * m.sqrt(a + 1)),),
         "a ≥ 1", note="not differentiable at 1"),
    _row("atanh", 1, math.atanh, (lambda m, a, y: 1 / (1 - a ** 2),), "-1 < a < 1"),
    # machine learning
    _row("sigmoid", 1, _sigmoid, (lambda m, a, y: y * m.sigmoid(-a),),
         note="d/da = sigmoid(a)·(1 - sigmoid(a)), computed as sigmoid(a)·sigmoid(-a), which "
              "keeps its precision for large a"),
    _row("softplus", 1, _softplus, (lambda m, a, y: m.sigmoid(a),)),
    _row("relu", 1, _relu, (lambda m, a, y: m.step(a),),
         note="relu'(0) = 0 (the conventional subgradient)", kink=_side),
    # piecewise
    _row("abs", 1, math.fabs, (lambda m, a, y: m.sign(a),),
         note="abs'(0) = 0 (the conventional subgradient)", kink=_side),
    _row("min", 2, min, (lambda m, a, b, y: (1 - m.sign(a - b)) / 2,
                         lambda m, a, b, y: (1 + m.sign(a - b)) / 2),
         note="at a tie a = b each argument gets 1/2", kink=_side),
    _row("max", 2, max, (lambda m, a, b, y: (1 + m.sign(a - b)) / 2,
                         lambda m, a, b, y: (1 - m.sign(a - b)) / 2),
         note="at a tie a = b each argument gets 1/2", kink=_side),
    _row("sign", 1, _sign, (lambda m, a, y: 0.0,),
         note="sign(0) = 0; derivative taken as 0 everywhere (used by the rules of abs, min, max)",
         kink=_side),
    _row("step", 1, _step, (lambda m, a, y: 0.0,),
         note="step(a) = 1 if a > 0 else 0; derivative taken as 0 everywhere (the rule of relu)",
         kink=_side),
    # reciprocal trigonometric
    _row("sec", 1, lambda a: 1 / math.cos(a), (lambda m, a, y: y * m.tan(a),),
         "a ≠ π/2 + kπ"),
    _row("csc", 1, lambda a: 1 / math.sin(a), (lambda m, a, y: -y * m.cot(a),), "a ≠ kπ"),
    _row("cot", 1, lambda a: 1 / math.tan(a), (lambda m, a, y: -(1 + y * y),), "a ≠ kπ"),
    _row("sinc", 1, special.sinc, (_sinc_slope,),
         note="sinc(a) = sin(a)/a and sinc(0) = 1, unnormalized as in SymPy and Wolfram|Alpha "
              "(NumPy's np.sinc is sin(πa)/(πa))"),
    # exponentials and logarithms with a base
    _row("exp2", 1, special.exp2, (lambda m, a, y: y * m.log(2.0),)),
    _row("log_base", 2, math.log, (lambda m, a, b, y: 1 / (a * m.log(b)),
                                   lambda m, a, b, y: -y / (b * m.log(b))),
         "a > 0; b > 0, b ≠ 1", note="written log(a, b): the logarithm of a to the base b"),
    # special
    _row("erf", 1, math.erf, (lambda m, a, y: 2 / m.sqrt(m.pi) * m.exp(-(a * a)),)),
    _row("erfc", 1, math.erfc, (lambda m, a, y: -2 / m.sqrt(m.pi) * m.exp(-(a * a)),),
         note="erfc(a) = 1 - erf(a), without the cancellation for large a"),
    _row("gamma", 1, math.gamma, (lambda m, a, y: y * m.digamma(a),), "a ≠ 0, -1, -2, …"),
    _row("lgamma", 1, math.lgamma, (lambda m, a, y: m.digamma(a),), "a ≠ 0, -1, -2, …",
         note="lgamma(a) = ln|Γ(a)|, finite where Γ(a) overflows (from a ≈ 171.6)"),
    _row("digamma", 1, special.digamma, (lambda m, a, y: m.trigamma(a),), "a ≠ 0, -1, -2, …",
         note="digamma(a) = ψ(a) = Γ'(a)/Γ(a)"),
    _row("trigamma", 1, special.trigamma, (_trigamma_slope,), "a ≠ 0, -1, -2, …",
         note="trigamma(a) = ψ'(a); its own derivative ψ''(a) is computed numerically, and has "
              "no formula in diff"),
    # rounding: piecewise constant, with a jump at each integer (round: each half-integer)
    _row("floor", 1, _integer_valued(math.floor), (lambda m, a, y: 0.0,),
         note="derivative 0 between the jumps at the integers (taken as 0 there too)",
         kink=_cell),
    _row("ceil", 1, _integer_valued(math.ceil), (lambda m, a, y: 0.0,),
         note="derivative 0 between the jumps at the integers (taken as 0 there too)",
         kink=_cell),
    _row("trunc", 1, _integer_valued(math.trunc), (lambda m, a, y: 0.0,),
         note="toward 0; derivative 0 between the jumps at the integers (taken as 0 there too)",
         kink=_cell),
    _row("mod", 2, operator.mod, (lambda m, a, b, y: 1.0, lambda m, a, b, y: -m.floor(a / b)),
         "b ≠ 0", note="a - b·floor(a/b), with the sign of b (as NumPy's mod, SymPy's Mod and "
                       "Wolfram|Alpha's Mod); it jumps where a/b is an integer",
         kink=lambda a, b: _cell(a / b)),
    _row("round", 1, _integer_valued(round), (lambda m, a, y: 0.0,),
         note="to the nearest integer, halves to even (as NumPy and Wolfram|Alpha); derivative "
              "0 between the jumps at the half-integers (taken as 0 there too)",
         kink=lambda a: _cell(a, 0.5)),
)}

ALIASES: dict[str, str] = {
    "ln": "log", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "fabs": "abs",
    "logistic": "sigmoid", "ceiling": "ceil", "cosec": "csc", "tgamma": "gamma",
    "loggamma": "lgamma", "psi": "digamma",
}

# A name whose row depends on how many arguments it is given: log(a, b) is log_base(a, b).
OVERLOADS: dict[tuple[str, int], str] = {("log", 2): "log_base", ("ln", 2): "log_base"}
# How such a row is written back (traces, diff): log(a, b), not log_base(a, b).
CALLED: dict[str, str] = {row: name for (name, _), row in reversed(OVERLOADS.items())}

CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}


def constant_words(name: str) -> str:
    """``e is the constant e = 2.718281828459…`` for a named constant, else "": for the
    errors about a value given to one (it would be silently unused: the source reads the
    constant)."""
    if name not in CONSTANTS:
        return ""
    digits = f"{CONSTANTS[name]:.15f}"[:14]  # cut, not rounded: 3.141592653589…
    return f"{name} is the constant {'π' if name == 'pi' else name} = {digits}…"

# Infix operators of the language and the rows that compute them.
BINARY_OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow"}

# The float namespace the rules compute with: every primitive's primal, by name, and the constants.
FLOAT = SimpleNamespace(**{p.name: p.primal for p in TABLE.values()}, **CONSTANTS)


def function_names() -> list[str]:
    """Every name that can be called, including aliases, sorted."""
    return sorted([n for n, p in TABLE.items() if not p.is_operator or n == "pow"] + list(ALIASES))


def lookup(name: str, n_args: int | None = None) -> Primitive | None:
    """The primitive callable as ``name(...)`` (aliases resolved; with ``n_args``, the row
    that many arguments reach: ``log(a, b)`` is log_base), or None."""
    name = OVERLOADS.get((name, n_args), name)
    p = TABLE.get(ALIASES.get(name, name))
    if p is None or (p.is_operator and p.name != "pow"):
        return None
    return p
