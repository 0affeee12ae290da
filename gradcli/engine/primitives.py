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
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable, Mapping


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
    # the rule returns a conventional subgradient). None for primitives without a kink.
    kink: Callable[..., int] | None = None
    # How generated code spells the primal, by language (gradcli codegen): a function's name, or
    # a template over the arguments {0}, {1}. A language not named calls it by the row's name.
    code: Mapping[str, str] = field(default_factory=dict)

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
    if getattr(m, "builds_code", False):  # gradcli codegen: the case is chosen as the code runs
        zero = m.equal(b, 0.0)
        return m.where(zero, 0.0, b * m.pow(a, m.where(zero, 1.0, b) - 1))
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
    if getattr(m, "builds_code", False):  # gradcli codegen, as above
        zero = m.both(m.equal(a, 0.0), m.greater(b, 0.0))
        return m.where(zero, 0.0, y * m.log(m.where(zero, 1.0, a)))
    return y * m.log(a)


def _helper(name: str) -> dict[str, str]:
    """The spelling of a primitive that generated code defines itself (gradcli codegen)."""
    return {"python": f"_{name}", "numpy": f"_{name}", "jax": f"_{name}", "c": f"gc_{name}"}


def _arc(name: str) -> dict[str, str]:
    """NumPy's and jax.numpy's name of an inverse function: arcsin for asin."""
    return {"numpy": f"np.arc{name}", "jax": f"jnp.arc{name}"}


def _row(name, arity, primal, partials, domain="all reals", symbol=None, note="", kink=None,
         code=None):
    return Primitive(name, arity, primal, tuple(partials), domain, symbol, note, kink, code or {})


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
         code={"python": "math.pow", "numpy": "np.power", "jax": "jnp.power"},
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
         note="not differentiable at ±1", code=_arc("sin")),
    _row("acos", 1, math.acos, (lambda m, a, y: -1 / m.sqrt(1 - a ** 2),), "-1 ≤ a ≤ 1",
         note="not differentiable at ±1", code=_arc("cos")),
    # a*a and hypot, not a**2: float ** raises OverflowError from |a| ≈ 1.3e154, where these
    # derivatives are still finite (or underflow to 0)
    _row("atan", 1, math.atan, (lambda m, a, y: 1 / (1 + a * a),), code=_arc("tan")),
    _row("atan2", 2, math.atan2, (lambda m, a, b, y: b / m.hypot(a, b) / m.hypot(a, b),
                                  lambda m, a, b, y: -a / m.hypot(a, b) / m.hypot(a, b)),
         note="atan2(a, b) is the angle of the point (b, a); not differentiable at (0, 0)",
         code=_arc("tan2")),
    _row("hypot", 2, math.hypot, (lambda m, a, b, y: a / y, lambda m, a, b, y: b / y),
         note="not differentiable at (0, 0)"),
    # hyperbolic
    _row("sinh", 1, math.sinh, (lambda m, a, y: m.cosh(a),)),
    _row("cosh", 1, math.cosh, (lambda m, a, y: m.sinh(a),)),
    _row("tanh", 1, math.tanh, (lambda m, a, y: 4 * m.sigmoid(2 * a) * m.sigmoid(-2 * a),),
         note="d/da = 1 - tanh(a)^2, computed as 4·sigmoid(2a)·sigmoid(-2a), which keeps its "
              "precision for large |a| (1 - tanh(a)^2 cancels to 0 from |a| ≈ 19)"),
    _row("asinh", 1, math.asinh, (lambda m, a, y: 1 / m.hypot(a, 1),), code=_arc("sinh")),
    _row("acosh", 1, math.acosh, (lambda m, a, y: 1 / (m.sqrt(a - 1) * m.sqrt(a + 1)),),
         "a ≥ 1", note="not differentiable at 1", code=_arc("cosh")),
    _row("atanh", 1, math.atanh, (lambda m, a, y: 1 / (1 - a ** 2),), "-1 < a < 1",
         code=_arc("tanh")),
    # machine learning
    _row("sigmoid", 1, _sigmoid, (lambda m, a, y: y * m.sigmoid(-a),),
         note="d/da = sigmoid(a)·(1 - sigmoid(a)), computed as sigmoid(a)·sigmoid(-a), which "
              "keeps its precision for large a", code=_helper("sigmoid")),
    _row("softplus", 1, _softplus, (lambda m, a, y: m.sigmoid(a),), code=_helper("softplus")),
    _row("relu", 1, _relu, (lambda m, a, y: m.step(a),),
         note="relu'(0) = 0 (the conventional subgradient)", kink=_side, code=_helper("relu")),
    # piecewise
    _row("abs", 1, math.fabs, (lambda m, a, y: m.sign(a),),
         note="abs'(0) = 0 (the conventional subgradient)", kink=_side,
         code={"python": "math.fabs", "c": "fabs"}),
    _row("min", 2, min, (lambda m, a, b, y: (1 - m.sign(a - b)) / 2,
                         lambda m, a, b, y: (1 + m.sign(a - b)) / 2),
         note="at a tie a = b each argument gets 1/2", kink=_side,
         code={**_helper("min"), "python": "min"}),
    _row("max", 2, max, (lambda m, a, b, y: (1 + m.sign(a - b)) / 2,
                         lambda m, a, b, y: (1 - m.sign(a - b)) / 2),
         note="at a tie a = b each argument gets 1/2", kink=_side,
         code={**_helper("max"), "python": "max"}),
    _row("sign", 1, _sign, (lambda m, a, y: 0.0,),
         note="sign(0) = 0; derivative taken as 0 everywhere (used by the rules of abs, min, max)",
         kink=_side, code=_helper("sign")),
    _row("step", 1, _step, (lambda m, a, y: 0.0,),
         note="step(a) = 1 if a > 0 else 0; derivative taken as 0 everywhere (the rule of relu)",
         kink=_side, code=_helper("step")),
    # special
    _row("erf", 1, math.erf, (lambda m, a, y: 2 / m.sqrt(m.pi) * m.exp(-(a * a)),),
         code={"numpy": "_erf", "jax": "jax.scipy.special.erf"}),
)}

ALIASES: dict[str, str] = {
    "ln": "log", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "fabs": "abs",
    "logistic": "sigmoid",
}

CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}

# Infix operators of the language and the rows that compute them.
BINARY_OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow"}

# The float namespace the rules compute with: every primitive's primal, by name, and the constants.
FLOAT = SimpleNamespace(**{p.name: p.primal for p in TABLE.values()}, **CONSTANTS)


def function_names() -> list[str]:
    """Every name that can be called, including aliases, sorted."""
    return sorted([n for n, p in TABLE.items() if not p.is_operator or n == "pow"] + list(ALIASES))


def lookup(name: str) -> Primitive | None:
    """The primitive callable as ``name(...)`` (aliases resolved), or None."""
    p = TABLE.get(ALIASES.get(name, name))
    if p is None or (p.is_operator and p.name != "pow"):
        return None
    return p
