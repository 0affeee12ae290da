"""The one table of references for gradcli's rule table (``engine/primitives.py``): for each row,
the same function written with mpmath (any precision) and with SymPy (symbolic), from those
libraries' own functions, never from gradcli's rules. Every test that checks rows against an
independent reference reads it: the property tests (values, gradients, Hessians), the batch
bounds' rules, the LaTeX reader, the certified engine's tests. Adding a row to the table is
adding its line here (``tests/test_adding_a_row.py`` lists what else a row may lack).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import mpmath
import sympy as sp


@dataclass(frozen=True)
class Reference:
    """One row's references. ``sympy`` None: a row with kinks or jumps, whose SymPy reference is
    ``branch(at, *args)``, the ordinary expression that holds around the point (``at(a)`` is an
    argument's value there)."""

    mp: Callable  # the row in mpmath
    sympy: Callable | None = None
    branch: Callable | None = None
    span: tuple[float, float] = (-10.0, 10.0)  # arguments inside the domain, to sample (one-argument rows)
    slope: Callable | None = None  # its derivative in mpmath, where a difference at 50 digits cancels
    sample: str | None = None  # two-argument rows: the row on inexact arguments x/7, y/3 in its domain


def _round_half_even(t):
    return mpmath.nint(t)  # mpmath's nint rounds halves to even, as gradcli's round


def _sign_of_gamma(at, a):
    return 1 if math.floor(at(a)) % 2 == 0 else -1  # Γ < 0 on (-1, 0), (-3, -2), ...


def _erf_slope(t):
    return 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-t * t)


R = Reference
REFERENCES: dict[str, Reference] = {
    # arithmetic operators
    "add": R(lambda a, b: a + b, lambda a, b: a + b, sample="x/7 + y/3"),
    "sub": R(lambda a, b: a - b, lambda a, b: a - b, sample="x/7 - y/3"),
    "mul": R(lambda a, b: a * b, lambda a, b: a * b, sample="(x/7) * (y/3)"),
    "div": R(lambda a, b: a / b, lambda a, b: a / b, sample="(x/7) / (y/3)"),
    "neg": R(lambda a: -a, lambda a: -a),
    "pow": R(mpmath.power, lambda a, b: a ** b, sample="abs(x/7)^(y/30)"),
    # exponentials and logarithms
    "exp": R(mpmath.exp, sp.exp, span=(-50, 50)),
    "expm1": R(mpmath.expm1, lambda a: sp.exp(a) - 1, span=(-5, 5)),
    "log": R(mpmath.log, sp.log, span=(0.01, 100)),
    "log1p": R(mpmath.log1p, lambda a: sp.log(1 + a), span=(-0.99, 50)),
    "log2": R(lambda a: mpmath.log(a, 2), lambda a: sp.log(a) / sp.log(2), span=(0.01, 100)),
    "log10": R(mpmath.log10, lambda a: sp.log(a) / sp.log(10), span=(0.01, 100)),
    "sqrt": R(mpmath.sqrt, sp.sqrt, span=(0.0, 100), slope=lambda t: 1 / (2 * mpmath.sqrt(t))),
    "cbrt": R(lambda a: mpmath.sign(a) * mpmath.cbrt(abs(a)),  # the real root
              branch=lambda at, a: a ** sp.Rational(1, 3) if at(a) >= 0
              else -(-a) ** sp.Rational(1, 3), span=(-100, 100)),
    # trigonometric
    "sin": R(mpmath.sin, sp.sin, span=(-60, 60)),
    "cos": R(mpmath.cos, sp.cos, span=(-60, 60)),
    "tan": R(mpmath.tan, sp.tan),
    "asin": R(mpmath.asin, sp.asin, span=(-0.99, 0.99)),
    "acos": R(mpmath.acos, sp.acos, span=(-0.99, 0.99)),
    "atan": R(mpmath.atan, sp.atan, span=(-100, 100)),
    "atan2": R(mpmath.atan2, sp.atan2, sample="atan2(x/7, y/3)"),
    "hypot": R(mpmath.hypot, lambda a, b: sp.sqrt(a ** 2 + b ** 2), sample="hypot(x/7, y/3)"),
    # hyperbolic
    "sinh": R(mpmath.sinh, sp.sinh, span=(-30, 30)),
    "cosh": R(mpmath.cosh, sp.cosh, span=(-30, 30)),
    "tanh": R(mpmath.tanh, sp.tanh, span=(-30, 30)),
    "asinh": R(mpmath.asinh, sp.asinh, span=(-100, 100)),
    "acosh": R(mpmath.acosh, sp.acosh, span=(1.01, 100)),
    "atanh": R(mpmath.atanh, sp.atanh, span=(-0.99, 0.99)),
    # machine learning
    "sigmoid": R(lambda a: 1 / (1 + mpmath.exp(-a)), lambda a: 1 / (1 + sp.exp(-a)),
                 span=(-100, 100)),
    "softplus": R(lambda a: mpmath.log1p(mpmath.exp(a)), lambda a: sp.log(1 + sp.exp(a)),
                  span=(-100, 100)),
    "relu": R(lambda a: a if a > 0 else mpmath.mpf(0),
              branch=lambda at, a: a if at(a) > 0 else sp.Integer(0)),
    # piecewise
    "abs": R(abs, branch=lambda at, a: a if at(a) >= 0 else -a),
    "min": R(lambda a, b: a if a <= b else b, branch=lambda at, a, b: a if at(a) <= at(b) else b,
             sample="min(x/7, y/3)"),
    "max": R(lambda a, b: a if a >= b else b, branch=lambda at, a, b: a if at(a) >= at(b) else b,
             sample="max(x/7, y/3)"),
    "sign": R(mpmath.sign, branch=lambda at, a: sp.Integer((at(a) > 0) - (at(a) < 0))),
    "step": R(lambda a: mpmath.mpf(a > 0), branch=lambda at, a: sp.Integer(at(a) > 0)),
    # reciprocal trigonometric
    "sec": R(mpmath.sec, sp.sec, span=(-20, 20)),
    "csc": R(mpmath.csc, sp.csc, span=(-20, 20)),
    "cot": R(mpmath.cot, sp.cot, span=(-20, 20)),
    "sinc": R(mpmath.sinc, sp.sinc, span=(-60, 60)),  # both sin(a)/a, as gradcli's
    # exponentials and logarithms with a base
    "exp2": R(lambda a: mpmath.power(2, a), lambda a: 2 ** a, span=(-50, 50)),
    "log_base": R(lambda a, b: mpmath.log(a) / mpmath.log(b), lambda a, b: sp.log(a) / sp.log(b),
                  sample="log(abs(x/7), abs(y/3) + 1.5)"),
    # special (erf's slope by difference cancels at 50 digits: erf(30) = 1 - 1e-393)
    "erf": R(mpmath.erf, sp.erf, span=(-30, 30), slope=_erf_slope),
    "erfc": R(mpmath.erfc, sp.erfc, span=(-30, 50), slope=lambda t: -_erf_slope(t)),
    "gamma": R(mpmath.gamma, sp.gamma, span=(-20, 150)),
    "lgamma": R(lambda a: mpmath.log(abs(mpmath.gamma(a))),
                branch=lambda at, a: sp.loggamma(a) if at(a) > 0
                else sp.log(sp.gamma(a) * _sign_of_gamma(at, a)), span=(-20, 300)),
    "digamma": R(mpmath.digamma, sp.digamma, span=(-20, 300)),
    "trigamma": R(lambda a: mpmath.polygamma(1, a), lambda a: sp.polygamma(1, a),
                  span=(-20, 300)),
    # rounding
    "floor": R(mpmath.floor, branch=lambda at, a: sp.Integer(math.floor(at(a))), span=(-30, 30)),
    "ceil": R(mpmath.ceil, branch=lambda at, a: sp.Integer(math.ceil(at(a))), span=(-30, 30)),
    "trunc": R(lambda a: mpmath.floor(a) if a >= 0 else mpmath.ceil(a),
               branch=lambda at, a: sp.Integer(math.trunc(at(a))), span=(-30, 30)),
    "mod": R(lambda a, b: a - b * mpmath.floor(a / b),
             branch=lambda at, a, b: a - b * sp.Integer(math.floor(at(a) / at(b))),
             sample="mod(x/7, y/3)"),
    "round": R(_round_half_even, branch=lambda at, a: sp.Integer(round(at(a))), span=(-30, 30)),
}
del R


def missing(table) -> list[str]:
    """The rows of ``table`` (gradcli's) with no line here, or an incomplete one, as a checklist."""
    lines = []
    for name, row in table.items():
        ref = REFERENCES.get(name)
        if ref is None:
            lines.append(f"{name}: no line in tests/references.py (its mpmath and SymPy forms)")
        elif (ref.sympy is None) == (ref.branch is None):
            lines.append(f"{name}: give exactly one of sympy= and branch= in tests/references.py")
        elif row.arity == 2 and ref.sample is None:
            lines.append(f"{name}: give sample= (the row on x/7, y/3 inside its domain)")
    return lines
