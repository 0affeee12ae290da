"""THE table of primitives: one row per primitive, and every mode reads it.

A row holds the primitive's arity, primal, one partial-derivative rule per argument and domain,
and the facts the other modes need (:class:`Primitive`): its NumPy function (the batch engine),
its LaTeX command, its arguments' roles (error messages), its kink (the numerical check), its
parity and inverse (the symbolic form), whether inf and nan pass through it. Every derivative in
gradcli (reverse mode, forward mode, the trace's local derivatives, the numerical check, symbolic
``diff``, the batch engine) reads the same row. A rule is a function ``(m, *args, ans)`` that
returns the partial derivative of the primitive with respect to one argument, where ``ans`` is
the primitive's own value and ``m`` is a namespace of the catalogue's functions, the constants
and ``where`` (a rule's branch). Because a rule only uses ``m`` and arithmetic operators, the
same rule computes on floats (``m = FLOAT``), dual numbers, NumPy columns, and builds
expressions when given symbolic values: the rules are themselves differentiable, as HIPS
autograd's are.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable


@dataclass(frozen=True, slots=True, eq=False)  # a row is one object: identity is equality
class Primitive:
    """One row: everything gradcli knows about a primitive, read by every mode (forward, reverse,
    tangent, dual, batch, symbolic, LaTeX, the catalogue). Columns after ``domain`` are keywords
    with defaults, so a new row names only what it has."""

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
    # The primal on NumPy columns: a NumPy function's name ("arcsin"), or f(np, *columns)
    # written with NumPy's functions; None: the scalar primal row by row (slower, same digits).
    numpy: str | Callable | None = None
    latex: str | None = None  # its LaTeX command (\sin); None: \operatorname{name}
    roles: tuple[str, ...] = ()  # each argument's role, for error messages ("the base")
    parity: str | None = None  # "odd": f(-a) = -f(a), "even": f(-a) = f(a), exactly in floats
    undoes: str | None = None  # the function g with f(g(a)) = a wherever g(a) is defined
    # The arguments through which inf or nan always passes (non-finite in, non-finite out,
    # whatever the other argument is): not exp (exp(-inf) = 0), nor div's divisor (1/inf = 0).
    propagates: tuple[int, ...] = ()
    exact: bool = False  # the float primal is exact for every argument (sign, abs, min, max)
    # The row as a combination of its arguments, for the symbolic form: ("sum", signs) is
    # Σ sign_k·arg_k (sub: (1, -1)), ("product", powers) is Π arg_k^power_k (div: (1, -1)).
    form: tuple[str, tuple[int, ...]] | None = None

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


def _pow_by_base(m, a, b, y):
    """∂(a^b)/∂a = b·a^(b-1); where b = 0 that is 0 for every a (a^0 = 1 is constant), also at
    a = 0, where the formula would be 0·0^(-1)."""
    zero = b == 0
    return m.where(zero, 0.0, b * m.pow(a, m.where(zero, 1.0, b) - 1))


def _pow_by_exponent(m, a, b, y):
    """∂(a^b)/∂b = a^b·ln a; where a = 0 and b > 0 that is 0 (0^b = 0 for every b > 0), though
    ln 0 is not finite. Elsewhere ln a needs a > 0."""
    zero = (a == 0) & (m.step(b) == 1)  # step, not b > 0: expressions and duals do not compare
    return m.where(zero, 0.0, y * m.log(m.where(zero, 1.0, a)))


def where(condition, x, y):
    """x where the condition holds, else y: NumPy's ``where`` for one number (both are computed,
    as NumPy's are: a rule guards the branch it does not take, as the pow rules do)."""
    return x if condition else y


_DEFAULT_ROLES = {1: ("the argument",), 2: ("the first argument", "the second argument")}


def _row(name, arity, primal, partials, domain="all reals", symbol=None, note="", kink=None,
         **columns):
    columns.setdefault("roles", _DEFAULT_ROLES[arity])
    return Primitive(name, arity, primal, tuple(partials), domain, symbol, note, kink, **columns)


# -- the primals of the piecewise rows on NumPy columns: f(np, *columns) -----------------------
# Each mirrors its scalar primal above (same branches, same IEEE operations), so that the two
# engines agree to the last bit wherever NumPy and the C library compute the same function.

def _sigmoid_columns(np, x):
    z = np.exp(-np.abs(x))  # exp(-x) for x >= 0, exp(x) below: never overflows
    return np.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


def _softplus_columns(np, x):
    return np.log1p(np.exp(-np.abs(x))) + np.where(x > 0, x, 0.0)


def _relu_columns(np, x):
    return np.where(x > 0, x, 0.0)


def _sign_columns(np, x):
    return np.where(x > 0, 1.0, np.where(x < 0, -1.0, 0.0))


def _step_columns(np, x):
    return np.where(x > 0, 1.0, 0.0)


def _min_columns(np, a, b):
    return np.where(b < a, b, a)  # Python's min: the first argument unless the second is smaller


def _max_columns(np, a, b):
    return np.where(b > a, b, a)


# -- the table: one line per primitive, rules as (m, args..., ans) -----------------------------
# Names of arguments in the rules: a (first), b (second), y (the primitive's value).
# Columns: see Primitive. BOTH = (0, 1): a non-finite value passes through either argument.
BOTH, FIRST = (0, 1), (0,)

TABLE: dict[str, Primitive] = {p.name: p for p in (
    # arithmetic operators
    _row("add", 2, operator.add, (lambda m, a, b, y: 1.0, lambda m, a, b, y: 1.0), symbol="+",
         numpy="add", propagates=BOTH, form=("sum", (1, 1))),
    _row("sub", 2, operator.sub, (lambda m, a, b, y: 1.0, lambda m, a, b, y: -1.0), symbol="-",
         numpy="subtract", propagates=BOTH, form=("sum", (1, -1))),
    _row("mul", 2, operator.mul, (lambda m, a, b, y: b, lambda m, a, b, y: a), symbol="*",
         numpy="multiply", propagates=BOTH, form=("product", (1, 1))),
    _row("div", 2, operator.truediv, (lambda m, a, b, y: 1 / b, lambda m, a, b, y: -y / b),
         "b ≠ 0", symbol="/", numpy="true_divide", propagates=FIRST, form=("product", (1, -1))),
    _row("neg", 1, operator.neg, (lambda m, a, y: -1.0,), symbol="-", numpy="negative",
         propagates=FIRST, form=("sum", (-1,))),
    _row("pow", 2, math.pow, (_pow_by_base, _pow_by_exponent),
         "a > 0; a = 0 with b > 0; a < 0 with integer b", symbol="^",
         note="∂/∂a = b·a^(b-1) is 0 where b = 0. ∂/∂b = a^b·ln a needs a > 0 (it is 0 where "
              "a = 0 and b > 0). Each is computed only when its argument is differentiated",
         numpy="power", roles=("the base", "the exponent")),
    # exponentials and logarithms
    _row("exp", 1, math.exp, (lambda m, a, y: y,), numpy="exp", latex=r"\exp", undoes="log"),
    _row("expm1", 1, math.expm1, (lambda m, a, y: m.exp(a),),
         note="d/da = exp(a), not expm1(a) + 1, which cancels to 0 for very negative a",
         numpy="expm1"),
    _row("log", 1, math.log, (lambda m, a, y: 1 / a,), "a > 0", numpy="log", latex=r"\log",
         undoes="exp", propagates=FIRST),
    _row("log1p", 1, math.log1p, (lambda m, a, y: 1 / (1 + a),), "a > -1", numpy="log1p",
         propagates=FIRST),
    _row("log2", 1, math.log2, (lambda m, a, y: 1 / (a * m.log(2.0)),), "a > 0", numpy="log2",
         propagates=FIRST),
    _row("log10", 1, math.log10, (lambda m, a, y: 1 / (a * m.log(10.0)),), "a > 0",
         numpy="log10", propagates=FIRST),
    _row("sqrt", 1, math.sqrt, (lambda m, a, y: 0.5 / y,), "a ≥ 0",
         note="not differentiable at 0 (infinite slope)", numpy="sqrt", propagates=FIRST),
    _row("cbrt", 1, _cbrt, (lambda m, a, y: 1 / (3 * y ** 2),),
         note="not differentiable at 0 (infinite slope)", numpy="cbrt", propagates=FIRST,
         parity="odd"),
    # trigonometric
    _row("sin", 1, math.sin, (lambda m, a, y: m.cos(a),), numpy="sin", latex=r"\sin",
         propagates=FIRST, parity="odd", undoes="asin"),
    _row("cos", 1, math.cos, (lambda m, a, y: -m.sin(a),), numpy="cos", latex=r"\cos",
         propagates=FIRST, parity="even", undoes="acos"),
    _row("tan", 1, math.tan, (lambda m, a, y: 1 + y ** 2,), "a ≠ π/2 + kπ", numpy="tan",
         latex=r"\tan", propagates=FIRST, parity="odd", undoes="atan"),
    _row("asin", 1, math.asin, (lambda m, a, y: 1 / m.sqrt(1 - a ** 2),), "-1 ≤ a ≤ 1",
         note="not differentiable at ±1", numpy="arcsin", latex=r"\arcsin", propagates=FIRST,
         parity="odd"),
    _row("acos", 1, math.acos, (lambda m, a, y: -1 / m.sqrt(1 - a ** 2),), "-1 ≤ a ≤ 1",
         note="not differentiable at ±1", numpy="arccos", latex=r"\arccos", propagates=FIRST),
    # a*a and hypot, not a**2: float ** raises OverflowError from |a| ≈ 1.3e154, where these
    # derivatives are still finite (or underflow to 0)
    _row("atan", 1, math.atan, (lambda m, a, y: 1 / (1 + a * a),), numpy="arctan",
         latex=r"\arctan", parity="odd"),
    _row("atan2", 2, math.atan2, (lambda m, a, b, y: b / m.hypot(a, b) / m.hypot(a, b),
                                  lambda m, a, b, y: -a / m.hypot(a, b) / m.hypot(a, b)),
         note="atan2(a, b) is the angle of the point (b, a); not differentiable at (0, 0)",
         numpy="arctan2"),
    _row("hypot", 2, math.hypot, (lambda m, a, b, y: a / y, lambda m, a, b, y: b / y),
         note="not differentiable at (0, 0)", numpy="hypot", propagates=BOTH),
    # hyperbolic
    _row("sinh", 1, math.sinh, (lambda m, a, y: m.cosh(a),), numpy="sinh", latex=r"\sinh",
         propagates=FIRST, parity="odd", undoes="asinh"),
    _row("cosh", 1, math.cosh, (lambda m, a, y: m.sinh(a),), numpy="cosh", latex=r"\cosh",
         propagates=FIRST, parity="even", undoes="acosh"),
    _row("tanh", 1, math.tanh, (lambda m, a, y: 4 * m.sigmoid(2 * a) * m.sigmoid(-2 * a),),
         note="d/da = 1 - tanh(a)^2, computed as 4·sigmoid(2a)·sigmoid(-2a), which keeps its "
              "precision for large |a| (1 - tanh(a)^2 cancels to 0 from |a| ≈ 19)",
         numpy="tanh", latex=r"\tanh", parity="odd", undoes="atanh"),
    _row("asinh", 1, math.asinh, (lambda m, a, y: 1 / m.hypot(a, 1),), numpy="arcsinh",
         propagates=FIRST, parity="odd"),
    _row("acosh", 1, math.acosh, (lambda m, a, y: 1 / (m.sqrt(a - 1) * m.sqrt(a + 1)),),
         "a ≥ 1", note="not differentiable at 1", numpy="arccosh", propagates=FIRST),
    _row("atanh", 1, math.atanh, (lambda m, a, y: 1 / (1 - a ** 2),), "-1 < a < 1",
         numpy="arctanh", propagates=FIRST, parity="odd"),
    # machine learning
    _row("sigmoid", 1, _sigmoid, (lambda m, a, y: y * m.sigmoid(-a),),
         note="d/da = sigmoid(a)·(1 - sigmoid(a)), computed as sigmoid(a)·sigmoid(-a), which "
              "keeps its precision for large a", numpy=_sigmoid_columns),
    _row("softplus", 1, _softplus, (lambda m, a, y: m.sigmoid(a),), numpy=_softplus_columns),
    _row("relu", 1, _relu, (lambda m, a, y: m.step(a),),
         note="relu'(0) = 0 (the conventional subgradient)", kink=_side, numpy=_relu_columns),
    # piecewise
    _row("abs", 1, math.fabs, (lambda m, a, y: m.sign(a),),
         note="abs'(0) = 0 (the conventional subgradient)", kink=_side, numpy="abs",
         propagates=FIRST, parity="even", exact=True),
    _row("min", 2, min, (lambda m, a, b, y: (1 - m.sign(a - b)) / 2,
                         lambda m, a, b, y: (1 + m.sign(a - b)) / 2),
         note="at a tie a = b each argument gets 1/2", kink=_side, numpy=_min_columns,
         latex=r"\min", exact=True),
    _row("max", 2, max, (lambda m, a, b, y: (1 + m.sign(a - b)) / 2,
                         lambda m, a, b, y: (1 - m.sign(a - b)) / 2),
         note="at a tie a = b each argument gets 1/2", kink=_side, numpy=_max_columns,
         latex=r"\max", exact=True),
    _row("sign", 1, _sign, (lambda m, a, y: 0.0,),
         note="sign(0) = 0; derivative taken as 0 everywhere (used by the rules of abs, min, max)",
         kink=_side, numpy=_sign_columns, parity="odd", exact=True),
    _row("step", 1, _step, (lambda m, a, y: 0.0,),
         note="step(a) = 1 if a > 0 else 0; derivative taken as 0 everywhere (the rule of relu)",
         kink=_side, numpy=_step_columns, exact=True),
    # special
    _row("erf", 1, math.erf, (lambda m, a, y: 2 / m.sqrt(m.pi) * m.exp(-(a * a)),),
         parity="odd"),
)}

ALIASES: dict[str, str] = {
    "ln": "log", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "fabs": "abs",
    "logistic": "sigmoid",
}

CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}

# Infix operators of the language and the rows that compute them.
BINARY_OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow"}

# The float namespace the rules compute with: every primitive's primal, by name, the constants,
# and ``where`` (a rule's branch: NumPy's where on columns, a choice between two numbers here).
FLOAT = SimpleNamespace(**{p.name: p.primal for p in TABLE.values()}, **CONSTANTS, where=where)


def function_names() -> list[str]:
    """Every name that can be called, including aliases, sorted."""
    return sorted([n for n, p in TABLE.items() if not p.is_operator or n == "pow"] + list(ALIASES))


def lookup(name: str) -> Primitive | None:
    """The primitive callable as ``name(...)`` (aliases resolved), or None."""
    p = TABLE.get(ALIASES.get(name, name))
    if p is None or (p.is_operator and p.name != "pow"):
        return None
    return p
