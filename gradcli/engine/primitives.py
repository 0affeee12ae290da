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
from dataclasses import dataclass, field
from functools import partial
from types import SimpleNamespace
from typing import Callable, Mapping
from weakref import WeakSet

from . import special


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
    # the rule returns a conventional subgradient); for a step function with many jumps, a
    # nonzero number naming the piece (_cell). None for primitives without a kink.
    kink: Callable[..., int] | None = None
    # The primal on NumPy columns: a NumPy function's name ("arcsin"), or f(np, *columns)
    # written with NumPy's functions; None: the scalar primal row by row (slower, same digits).
    numpy: str | Callable | None = None
    latex: str | None = None  # its LaTeX command (\sin); None: \operatorname{name}
    # SymPy's function of the same meaning (diff --simplify); None: SymPy gets an opaque function
    sympy: str | None = None
    roles: tuple[str, ...] = ()  # each argument's role, for error messages ("the base")
    parity: str | None = None  # "odd": f(-a) = -f(a), "even": f(-a) = f(a), exactly in floats
    undoes: str | None = None  # the function g with f(g(a)) = a wherever g(a) is defined
    complement: bool = False  # f(-a) = 1 - f(a): the symbolic form writes 1 - f(a) as f(-a)
    # The arguments through which inf or nan always passes (non-finite in, non-finite out,
    # whatever the other argument is): not exp (exp(-inf) = 0), nor div's divisor (1/inf = 0).
    propagates: tuple[int, ...] = ()
    exact: bool = False  # the float primal is exact for every argument (sign, abs, min, max)
    # The row as a combination of its arguments, for the symbolic form: ("sum", signs) is
    # Σ sign_k·arg_k (sub: (1, -1)), ("product", powers) is Π arg_k^power_k (div: (1, -1)).
    form: tuple[str, tuple[int, ...]] | None = None
    # Whether the arguments are certainly outside the domain, ``outside(m, *args)``, for balls
    # (:mod:`gradcli.engine.ball`), whose comparisons are true only when certain. None: every
    # argument is inside, or no ball can ever be certainly outside (tan's poles are irrational).
    outside: Callable[..., bool] | None = None
    # How generated code spells the primal, by language (gradcli codegen): a function's name, or
    # a template over the arguments {0}, {1}. A language not named calls it by the row's name.
    code: Mapping[str, str] = field(default_factory=dict)
    # The primal written with other rows, ``definition(m, *args)`` (logit: ``m.log(a / (1 - a))``):
    # a mode with no function of its own for the row (balls, bounded numbers and columns, NumPy,
    # generated code) computes this with its own rows (:class:`Namespace`), and the float primal
    # is it on floats unless the row gives one. None: the row is a primitive of its own.
    definition: Callable | None = None

    @property
    def is_operator(self) -> bool:
        return self.symbol is not None


# -- numerically careful primals ---------------------------------------------------------------
# (sigmoid, softplus, relu, sign, step, min, max, sinc, digamma, trigamma are in special.py, from
# which gradcli.code.helpers prints them as generated code's own helpers)

def _side(a: float, b: float = 0.0) -> int:
    """-1, 0 or +1 as a < b, a = b, a > b: where relu, abs, sign, step (b = 0), min, max turn."""
    return (a > b) - (a < b)


def _cell(a: float, offset: float = 0.0) -> float:
    """The piece of a step function a lies on: 0 exactly on a jump (an integer, or for
    ``offset`` 0.5 a half-integer), else a nonzero number naming the piece between two jumps, so
    that a step that crosses a jump changes it (floor, ceil, trunc; round with 0.5)."""
    below = math.floor(a - offset)
    return 0.0 if below == a - offset else below + 0.5


def jumps(prim) -> bool:
    """Whether the row's kink is a jump of a step function (floor, ceil, trunc, round, mod),
    where its kink column names the piece an argument lies on, rather than a turn (abs, relu,
    min, max, sign, step) at a zero gap."""
    return prim.kink is not None and prim.kink is not _side


def _integer_valued(f):
    """A float for floor, ceil, round, trunc (Python's give ints; inf and NaN have none)."""
    def primal(a: float) -> float:
        return float(f(a)) if math.isfinite(a) else a
    primal.__name__ = f.__name__
    return primal


def _sinc_slope(m, a, y):
    """d sinc(a)/da = (cos a - sinc a)/a, which cancels near 0 (0/0 at 0): the namespace's
    ``sinc_slope`` (:meth:`Namespace.sinc_slope`, the series near 0; Arb's on balls; the
    quotient itself on symbolic values, exact there)."""
    return m.sinc_slope(a)


def _tanh_slope(m, a, y):
    """d tanh(a)/da = 1 - tanh(a)^2, which cancels to 0 from |a| ≈ 19: the namespace's
    ``tanh_slope`` (:meth:`Namespace.tanh_slope`, 4·sigmoid(2a)·sigmoid(-2a); sech(a)^2 on
    NumPy columns, :func:`tanh_slope_columns`)."""
    return m.tanh_slope(a)


def _trigamma_slope(m, a, y):
    """d trigamma(a)/da = ψ''(a), by the namespace's ``polygamma`` (:meth:`Namespace.polygamma`).
    No row of the table is ψ'' (it has no closed form), so where the namespace has none (a
    symbolic derivative, generated code) it is a LimitError saying so."""
    return m.polygamma(2, a)


def _no_trigamma_slope():
    from ..errors import LimitError
    return LimitError("the derivative of trigamma (ψ'', the third derivative of lgamma) has no "
                      "formula in gradcli's functions", hint="eval computes its value at a point")


def _cbrt(x: float) -> float:
    return math.copysign(abs(x) ** (1.0 / 3.0), x)


_cbrt = getattr(math, "cbrt", _cbrt)  # math.cbrt is exact to the last bit, Python >= 3.11


def _pow_by_base(m, a, b, y):
    """∂(a^b)/∂a = b·a^(b-1), with its case b = 0 (where it is 0 for every a): the namespace's
    own :meth:`Namespace.pow_by_base` (generated code decides the case as it runs)."""
    return m.pow_by_base(a, b)


def _pow_by_exponent(m, a, b, y):
    """∂(a^b)/∂b = a^b·ln a, with its case a = 0 < b (where it is 0): the namespace's own
    :meth:`Namespace.pow_by_exponent`."""
    return m.pow_by_exponent(a, b, y)


def where(condition, x, y):
    """x where the condition holds, else y: NumPy's ``where`` for one number (both are computed,
    as NumPy's are: a rule guards the branch it does not take, as the pow rules do)."""
    return x if condition else y


def _helper(name: str) -> dict[str, str]:
    """The spelling of a primitive that generated code defines itself (gradcli codegen), printed
    from its float primal by :mod:`gradcli.code.helpers`."""
    return {"python": f"_{name}", "numpy": f"_{name}", "jax": f"_{name}", "c": f"gc_{name}"}


def _arc(name: str) -> dict[str, str]:
    """NumPy's and jax.numpy's name of an inverse function: arcsin for asin."""
    return {"numpy": f"np.arc{name}", "jax": f"jnp.arc{name}"}


def _template(python: str, array: str, c: str) -> dict[str, str]:
    """A spelling written out over the arguments {0}, {1} (gradcli codegen); ``array`` with
    {np} for np or jnp."""
    return {"python": python, "numpy": array.replace("{np}", "np"),
            "jax": array.replace("{np}", "jnp"), "c": c}


_DEFAULT_ROLES = {1: ("the argument",), 2: ("the first argument", "the second argument")}


def row(name, arity, primal, partials, domain="all reals", symbol=None, note="", kink=None,
        **columns) -> Primitive:
    """A row of the table, with default roles; ``primal`` None: the row's ``definition``
    computed on floats."""
    columns.setdefault("roles", _DEFAULT_ROLES[arity])
    if primal is None:
        definition = columns["definition"]

        def primal(*args):
            return definition(FLOAT, *args)
        primal.__name__ = name
    return Primitive(name, arity, primal, tuple(partials), domain, symbol, note, kink, **columns)




# -- the primals of the piecewise rows on NumPy columns: f(np, *columns) -----------------------
# Each mirrors its scalar primal (special.py: same branches, same IEEE operations), so that the
# two engines agree to the last bit wherever NumPy and the C library compute the same function.

def _sigmoid_columns(np, x):
    if np.ndim(x) == 0 or x.dtype != np.float64:
        z = np.exp(-np.abs(x))  # exp(-x) for x >= 0, exp(x) below: never overflows
        return np.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))
    # The same operations in one new array and one temporary: each new array of a large column
    # is memory the kernel pages in on first touch, which cost more than the arithmetic
    # (the rule of a sigmoid node computes one).
    z = np.abs(x)
    np.negative(z, out=z)
    np.exp(z, out=z)
    d = z + 1.0
    # the numerator: 1 for x >= 0, exp(x) ≤ 1 below, as the larger of z and the comparison
    # (the same numbers as a copy where x >= 0, without a branch per element on the sign)
    np.maximum(z, x >= 0, out=z)
    return np.divide(z, d, out=z)


def tanh_slope_columns(np, a):
    """:meth:`Namespace.tanh_slope` on a float64 column, as sech(a)^2 = (1/cosh a)^2: a
    quotient and a square of a positive number, so no cancellation, within a few ulps of
    4·sigmoid(2a)·sigmoid(-2a) and five times faster than it (NumPy's cosh is one vectorized
    pass). 1/cosh(a) is finite and normal up to |a| ≈ 710, where the square has long
    underflowed; beyond, cosh overflows to inf (under the sweeps' errstate) and the slope is 0."""
    if np.ndim(a) == 0 or a.dtype != np.float64:
        return 4 * _sigmoid_columns(np, 2 * a) * _sigmoid_columns(np, -2 * a)
    s = np.cosh(a)
    np.divide(1.0, s, out=s)
    return np.multiply(s, s, out=s)


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


def _sec_columns(np, a):
    return 1 / np.cos(a)


def _csc_columns(np, a):
    return 1 / np.sin(a)


def _cot_columns(np, a):
    return 1 / np.tan(a)


def _log_base_columns(np, a, b):
    return np.log(a) / np.log(b)


# -- the table: one line per primitive, rules as (m, args..., ans) -----------------------------
# Names of arguments in the rules: a (first), b (second), y (the primitive's value).
# Columns: see Primitive. BOTH = (0, 1): a non-finite value passes through either argument.
BOTH, FIRST = (0, 1), (0,)

TABLE: dict[str, Primitive] = {p.name: p for p in (
    # arithmetic operators
    row("add", 2, operator.add, (lambda m, a, b, y: 1.0, lambda m, a, b, y: 1.0), symbol="+",
         numpy="add", propagates=BOTH, form=("sum", (1, 1))),
    row("sub", 2, operator.sub, (lambda m, a, b, y: 1.0, lambda m, a, b, y: -1.0), symbol="-",
         numpy="subtract", propagates=BOTH, form=("sum", (1, -1))),
    row("mul", 2, operator.mul, (lambda m, a, b, y: b, lambda m, a, b, y: a), symbol="*",
         numpy="multiply", propagates=BOTH, form=("product", (1, 1))),
    row("div", 2, operator.truediv, (lambda m, a, b, y: 1 / b, lambda m, a, b, y: -y / b),
         "b ≠ 0", symbol="/", numpy="true_divide", propagates=FIRST, form=("product", (1, -1)),
         outside=lambda m, a, b: b == 0),
    row("neg", 1, operator.neg, (lambda m, a, y: -1.0,), symbol="-", numpy="negative",
         propagates=FIRST, form=("sum", (-1,))),
    row("pow", 2, math.pow, (_pow_by_base, _pow_by_exponent),
         "a > 0; a = 0 with b > 0; a < 0 with integer b", symbol="^",
         code={"python": "math.pow", "numpy": "np.power", "jax": "jnp.power"},
         note="∂/∂a = b·a^(b-1) is 0 where b = 0. ∂/∂b = a^b·ln a needs a > 0 (it is 0 where "
              "a = 0 and b > 0). Each is computed only when its argument is differentiated",
         numpy="power", roles=("the base", "the exponent"),
         outside=lambda m, a, b: (a < 0 and m.noninteger(b)) or (a == 0 and b < 0)),
    # exponentials and logarithms
    row("exp", 1, math.exp, (lambda m, a, y: y,), sympy="exp", numpy="exp", latex=r"\exp",
         undoes="log"),
    row("expm1", 1, math.expm1, (lambda m, a, y: m.exp(a),),
         note="d/da = exp(a), not expm1(a) + 1, which cancels to 0 for very negative a",
         numpy="expm1"),
    row("log", 1, math.log, (lambda m, a, y: 1 / a,), "a > 0", sympy="log", numpy="log",
         latex=r"\log",
         undoes="exp", propagates=FIRST,
         outside=lambda m, a: a <= 0),
    row("log1p", 1, math.log1p, (lambda m, a, y: 1 / (1 + a),), "a > -1", numpy="log1p",
         propagates=FIRST,
         outside=lambda m, a: a <= -1),
    row("log2", 1, math.log2, (lambda m, a, y: 1 / (a * m.log(2.0)),), "a > 0", numpy="log2",
         propagates=FIRST,
         outside=lambda m, a: a <= 0),
    row("log10", 1, math.log10, (lambda m, a, y: 1 / (a * m.log(10.0)),), "a > 0",
         numpy="log10", propagates=FIRST,
         outside=lambda m, a: a <= 0),
    row("sqrt", 1, math.sqrt, (lambda m, a, y: 0.5 / y,), "a ≥ 0",
         note="not differentiable at 0 (infinite slope)", numpy="sqrt", propagates=FIRST,
         outside=lambda m, a: a < 0),
    row("cbrt", 1, _cbrt, (lambda m, a, y: 1 / (3 * y ** 2),),
         note="not differentiable at 0 (infinite slope)", numpy="cbrt", propagates=FIRST,
         parity="odd"),
    # trigonometric
    row("sin", 1, math.sin, (lambda m, a, y: m.cos(a),), sympy="sin", numpy="sin", latex=r"\sin",
         propagates=FIRST, parity="odd", undoes="asin"),
    row("cos", 1, math.cos, (lambda m, a, y: -m.sin(a),), sympy="cos", numpy="cos", latex=r"\cos",
         propagates=FIRST, parity="even", undoes="acos"),
    row("tan", 1, math.tan, (lambda m, a, y: 1 + y ** 2,), "a ≠ π/2 + kπ", sympy="tan", numpy="tan",
         latex=r"\tan", propagates=FIRST, parity="odd", undoes="atan"),
    row("asin", 1, math.asin, (lambda m, a, y: 1 / m.sqrt(1 - a ** 2),), "-1 ≤ a ≤ 1",
         sympy="asin", note="not differentiable at ±1", numpy="arcsin", latex=r"\arcsin",
         propagates=FIRST,
         parity="odd", code=_arc("sin"),
         outside=lambda m, a: a < -1 or a > 1),
    row("acos", 1, math.acos, (lambda m, a, y: -1 / m.sqrt(1 - a ** 2),), "-1 ≤ a ≤ 1",
         sympy="acos", note="not differentiable at ±1", numpy="arccos", latex=r"\arccos",
         propagates=FIRST,
         code=_arc("cos"), outside=lambda m, a: a < -1 or a > 1),
    # a*a and hypot, not a**2: float ** raises OverflowError from |a| ≈ 1.3e154, where these
    # derivatives are still finite (or underflow to 0)
    row("atan", 1, math.atan, (lambda m, a, y: 1 / (1 + a * a),), sympy="atan", numpy="arctan",
         latex=r"\arctan", parity="odd", code=_arc("tan")),
    row("atan2", 2, math.atan2, (lambda m, a, b, y: b / m.hypot(a, b) / m.hypot(a, b),
                                  lambda m, a, b, y: -a / m.hypot(a, b) / m.hypot(a, b)),
         sympy="atan2",
         note="atan2(a, b) is the angle of the point (b, a); not differentiable at (0, 0)",
         numpy="arctan2", code=_arc("tan2")),
    row("hypot", 2, math.hypot, (lambda m, a, b, y: a / y, lambda m, a, b, y: b / y),
         note="not differentiable at (0, 0)", numpy="hypot", propagates=BOTH),
    # hyperbolic
    row("sinh", 1, math.sinh, (lambda m, a, y: m.cosh(a),), sympy="sinh", numpy="sinh",
         latex=r"\sinh",
         propagates=FIRST, parity="odd", undoes="asinh"),
    row("cosh", 1, math.cosh, (lambda m, a, y: m.sinh(a),), sympy="cosh", numpy="cosh",
         latex=r"\cosh",
         propagates=FIRST, parity="even", undoes="acosh"),
    row("tanh", 1, math.tanh, (_tanh_slope,),
         sympy="tanh",
         note="d/da = 1 - tanh(a)^2, computed as 4·sigmoid(2a)·sigmoid(-2a), which keeps its "
              "precision for large |a| (1 - tanh(a)^2 cancels to 0 from |a| ≈ 19)",
         numpy="tanh", latex=r"\tanh", parity="odd", undoes="atanh"),
    row("asinh", 1, math.asinh, (lambda m, a, y: 1 / m.hypot(a, 1),), sympy="asinh",
         numpy="arcsinh",
         propagates=FIRST, parity="odd", code=_arc("sinh")),
    row("acosh", 1, math.acosh, (lambda m, a, y: 1 / (m.sqrt(a - 1) * m.sqrt(a + 1)),),
         "a ≥ 1", sympy="acosh", note="not differentiable at 1", numpy="arccosh", propagates=FIRST,
         code=_arc("cosh"), outside=lambda m, a: a < 1),
    row("atanh", 1, math.atanh, (lambda m, a, y: 1 / (1 - a ** 2),), "-1 < a < 1",
         sympy="atanh", numpy="arctanh", propagates=FIRST, parity="odd", code=_arc("tanh"),
         outside=lambda m, a: a <= -1 or a >= 1),
    # machine learning
    row("sigmoid", 1, special.sigmoid, (lambda m, a, y: y * m.sigmoid(-a),),
         note="d/da = sigmoid(a)·(1 - sigmoid(a)), computed as sigmoid(a)·sigmoid(-a), which "
              "keeps its precision for large a", numpy=_sigmoid_columns,
         code=_helper("sigmoid"), complement=True),
    row("softplus", 1, special.softplus, (lambda m, a, y: m.sigmoid(a),), numpy=_softplus_columns,
         code=_helper("softplus")),
    row("relu", 1, special.relu, (lambda m, a, y: m.step(a),),
         note="relu'(0) = 0 (the conventional subgradient)", kink=_side, numpy=_relu_columns,
         code=_helper("relu")),
    # piecewise
    row("abs", 1, math.fabs, (lambda m, a, y: m.sign(a),),
         sympy="Abs", note="abs'(0) = 0 (the conventional subgradient)", kink=_side, numpy="abs",
         propagates=FIRST, parity="even", exact=True,
         code={"python": "math.fabs", "c": "fabs"}),
    row("min", 2, special.minimum, (lambda m, a, b, y: (1 - m.sign(a - b)) / 2,
                         lambda m, a, b, y: (1 + m.sign(a - b)) / 2),
         note="at a tie a = b each argument gets 1/2", kink=_side, numpy=_min_columns,
         latex=r"\min", exact=True, code={**_helper("min"), "python": "min"}),
    row("max", 2, special.maximum, (lambda m, a, b, y: (1 + m.sign(a - b)) / 2,
                         lambda m, a, b, y: (1 - m.sign(a - b)) / 2),
         note="at a tie a = b each argument gets 1/2", kink=_side, numpy=_max_columns,
         latex=r"\max", exact=True, code={**_helper("max"), "python": "max"}),
    row("sign", 1, special.sign, (lambda m, a, y: 0.0,),
         sympy="sign",
         note="sign(0) = 0; derivative taken as 0 everywhere (used by the rules of abs, min, max)",
         kink=_side, numpy=_sign_columns, parity="odd", exact=True, code=_helper("sign")),
    row("step", 1, special.step, (lambda m, a, y: 0.0,),
         note="step(a) = 1 if a > 0 else 0; derivative taken as 0 everywhere (the rule of relu)",
         kink=_side, numpy=_step_columns, exact=True, code=_helper("step")),
    # reciprocal trigonometric
    row("sec", 1, lambda a: 1 / math.cos(a), (lambda m, a, y: y * m.tan(a),),
         "a ≠ π/2 + kπ", sympy="sec", numpy=_sec_columns, latex=r"\sec", parity="even",
         code=_template("(1 / math.cos({0}))", "(1 / {np}.cos({0}))", "(1 / cos({0}))")),
    row("csc", 1, lambda a: 1 / math.sin(a), (lambda m, a, y: -y * m.cot(a),), "a ≠ kπ",
         sympy="csc", numpy=_csc_columns, latex=r"\csc", parity="odd",
         code=_template("(1 / math.sin({0}))", "(1 / {np}.sin({0}))", "(1 / sin({0}))")),
    row("cot", 1, lambda a: 1 / math.tan(a), (lambda m, a, y: -(1 + y * y),), "a ≠ kπ",
         sympy="cot", numpy=_cot_columns, latex=r"\cot", parity="odd",
         code=_template("(1 / math.tan({0}))", "(1 / {np}.tan({0}))", "(1 / tan({0}))")),
    row("sinc", 1, special.sinc, (_sinc_slope,),
         note="sinc(a) = sin(a)/a and sinc(0) = 1, unnormalized as in SymPy and Wolfram|Alpha "
              "(NumPy's np.sinc is sin(πa)/(πa))", parity="even", code=_helper("sinc")),
    # exponentials and logarithms with a base
    row("exp2", 1, special.exp2, (lambda m, a, y: y * m.log(2.0),), numpy="exp2",
         code={"python": "math.pow(2.0, {0})"}),
    row("log_base", 2, math.log, (lambda m, a, b, y: 1 / (a * m.log(b)),
                                   lambda m, a, b, y: -y / (b * m.log(b))),
         "a > 0; b > 0, b ≠ 1", note="written log(a, b): the logarithm of a to the base b",
         numpy=_log_base_columns, code=_template(
             "math.log({0}, {1})", "({np}.log({0}) / {np}.log({1}))", "(log({0}) / log({1}))")),
    # special
    row("erf", 1, math.erf, (lambda m, a, y: 2 / m.sqrt(m.pi) * m.exp(-(a * a)),),
         sympy="erf", parity="odd", code={"numpy": "_erf", "jax": "jax.scipy.special.erf"}),
    row("erfc", 1, math.erfc, (lambda m, a, y: -2 / m.sqrt(m.pi) * m.exp(-(a * a)),),
         sympy="erfc", note="erfc(a) = 1 - erf(a), without the cancellation for large a",
         code={"numpy": "_erfc", "jax": "jax.scipy.special.erfc"}),
    row("gamma", 1, math.gamma, (lambda m, a, y: y * m.digamma(a),), "a ≠ 0, -1, -2, …",
         sympy="gamma", code={"numpy": "_gamma", "jax": "jax.scipy.special.gamma", "c": "tgamma"}),
    row("lgamma", 1, math.lgamma, (lambda m, a, y: m.digamma(a),), "a ≠ 0, -1, -2, …",
         note="lgamma(a) = ln|Γ(a)|, finite where Γ(a) overflows (from a ≈ 171.6)",
         code={"numpy": "_lgamma", "jax": "jax.scipy.special.gammaln"}),
    row("digamma", 1, special.digamma, (lambda m, a, y: m.trigamma(a),), "a ≠ 0, -1, -2, …",
         note="digamma(a) = ψ(a) = Γ'(a)/Γ(a)",
         code={**_helper("digamma"), "jax": "jax.scipy.special.digamma"}),
    row("trigamma", 1, special.trigamma, (_trigamma_slope,), "a ≠ 0, -1, -2, …",
         note="trigamma(a) = ψ'(a); its own derivative ψ''(a) is computed numerically, and has "
              "no formula in diff",
         code={**_helper("trigamma"), "jax": "jax.scipy.special.polygamma(1, {0})"}),
    # rounding: piecewise constant, with a jump at each integer (round: each half-integer)
    row("floor", 1, _integer_valued(math.floor), (lambda m, a, y: 0.0,),
         sympy="floor",
         note="derivative 0 between the jumps at the integers (taken as 0 there too)",
         kink=_cell, numpy="floor", exact=True, code={"python": "float(math.floor({0}))"}),
    row("ceil", 1, _integer_valued(math.ceil), (lambda m, a, y: 0.0,),
         sympy="ceiling",
         note="derivative 0 between the jumps at the integers (taken as 0 there too)",
         kink=_cell, numpy="ceil", exact=True, code={"python": "float(math.ceil({0}))"}),
    row("trunc", 1, _integer_valued(math.trunc), (lambda m, a, y: 0.0,),
         note="toward 0; derivative 0 between the jumps at the integers (taken as 0 there too)",
         kink=_cell, numpy="trunc", parity="odd", exact=True,
         code={"python": "float(math.trunc({0}))"}),
    row("mod", 2, operator.mod, (lambda m, a, b, y: 1.0, lambda m, a, b, y: -m.floor(a / b)),
         "b ≠ 0", note="a - b·floor(a/b), with the sign of b (as NumPy's mod, SymPy's Mod and "
                       "Wolfram|Alpha's Mod); it jumps where a/b is an integer",
         kink=lambda a, b: _cell(a / b), numpy="mod",  # not exact: mod(-0.2, 1.4) rounds
         code={"python": "({0} % {1})", "numpy": "np.mod", "jax": "jnp.mod", "c": "gc_mod"}),
    row("round", 1, _integer_valued(round), (lambda m, a, y: 0.0,),
         note="to the nearest integer, halves to even (as NumPy and Wolfram|Alpha); derivative "
              "0 between the jumps at the half-integers (taken as 0 there too)",
         kink=lambda a: _cell(a, 0.5), numpy="rint", parity="odd", exact=True,
         code={"python": "float(round({0}))", "numpy": "np.rint", "jax": "jnp.rint",
               "c": "rint"}),
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

class Namespace(SimpleNamespace):
    """The rules' ``m`` for one kind of number (floats, balls, bounded numbers, columns, code): the
    functions it is given, by row name, beside its constants and ``where``. A row it was not
    given is found when first asked: its ``definition`` computed with this namespace's own rows,
    else ``fallback(row)`` (the mode's "cannot", or its generic way), so a row added to
    :data:`TABLE`, even at run time (:func:`add`), works in every mode at once."""

    def __init__(self, fallback: Callable[[Primitive], Callable] | None = None, /, **functions):
        super().__init__(**functions)
        self.__dict__["_fallback"] = fallback
        self.__dict__["_derived"] = set()  # the names found by __getattr__, which remove forgets
        _NAMESPACES.add(self)

    __eq__, __hash__ = object.__eq__, object.__hash__  # one namespace is one object

    # Operations the rules ask for besides the rows: the namespace's own where it has better.
    def sinc_slope(self, a):
        """sinc'(a) = (cos a - sinc a)/a, by its series where |a| < 1 (the quotient cancels
        there), the case chosen by the namespace's own ``greater`` and ``where`` (NumPy's on
        columns; generated code chooses as it runs)."""
        near = self.greater(1.0, self.abs(a))
        safe = self.where(near, 1.0, a)
        return self.where(near, special.sinc_slope_series(self.where(near, a, 0.0)),
                          (self.cos(safe) - self.sinc(safe)) / safe)

    def tanh_slope(self, a):
        """tanh'(a) = 1 - tanh(a)^2, computed as 4·sigmoid(2a)·sigmoid(-2a), which keeps its
        precision for large |a| (the difference cancels to 0 from |a| ≈ 19). NumPy float64
        columns compute it as sech(a)^2 (:func:`tanh_slope_columns`)."""
        return 4 * self.sigmoid(2 * a) * self.sigmoid(-2 * a)

    def pow_by_base(self, a, b):
        """∂(a^b)/∂a = b·a^(b-1); where b = 0 that is 0 for every a (a^0 = 1 is constant), also
        at a = 0, where the formula would be 0·0^(-1). The case is Python's ``b == 0`` (a dual
        or symbolic value is never equal to 0 there: its derivative is the formula's)."""
        zero = b == 0
        return self.where(zero, 0.0, b * self.pow(a, self.where(zero, 1.0, b) - 1))

    def pow_by_exponent(self, a, b, y):
        """∂(a^b)/∂b = a^b·ln a (``y`` = a^b); where a = 0 and b > 0 that is 0 (0^b = 0 for every
        b > 0), though ln 0 is not finite. Elsewhere ln a needs a > 0."""
        # step, not b > 0: duals and expressions do not compare
        zero = (a == 0) & (self.step(b) == 1)
        return self.where(zero, 0.0, y * self.log(self.where(zero, 1.0, a)))

    def polygamma(self, n: int, a):
        """ψ^(n)(a), for trigamma's rule (ψ''): none here (a namespace that has it gives it)."""
        raise _no_trigamma_slope()

    def __getattr__(self, name: str):
        row = TABLE.get(name)
        fallback = self.__dict__.get("_fallback")  # (absent while unpickling)
        if row is None or (row.definition is None and fallback is None):
            raise AttributeError(name)
        f = partial(row.definition, self) if row.definition is not None else fallback(row)
        setattr(self, name, f)
        self._derived.add(name)
        return f


_NAMESPACES: WeakSet[Namespace] = WeakSet()


def add(new: Primitive) -> None:
    """``new`` as a row of the table, from now on, in every mode (a test's row, a plug-in's)."""
    if new.name in TABLE:
        raise ValueError(f"{new.name} is a row already")
    TABLE[new.name] = new


def remove(name: str) -> None:
    """The row ``name`` out of the table, and out of every namespace that derived it."""
    del TABLE[name]
    for m in list(_NAMESPACES):
        if name in m._derived:
            m._derived.discard(name)
            del m.__dict__[name]


# The float namespace the rules compute with: every primitive's primal, by name, the constants,
# and ``where`` (a rule's branch: NumPy's where on columns, a choice between two numbers here).
FLOAT = Namespace(lambda row: row.primal, **{p.name: p.primal for p in TABLE.values()},
                  **CONSTANTS, where=where, greater=operator.gt,
                  polygamma=special.polygamma)


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
