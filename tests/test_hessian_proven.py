"""Every Hessian entry gradcli prints is proven: every row of the rule table, at 13 and 30
digits, at ordinary points and near each row's singularities, against mpmath.

The reference is mpmath's own numerical differentiation (``mpmath.diff``, at 120 digits, of the
row's mpmath counterpart from tests/references.py): no code shared with gradcli's duals or
balls. An entry must be the reference correctly rounded to its digits (``shows``), or, where
the proof falls short, fewer digits or ``0 ± bound`` that still hold the truth: never a wrong
digit.
"""

from __future__ import annotations

import math

import mpmath
import pytest

import gradcli
from gradcli.engine.primitives import FLOAT, TABLE
from gradcli.errors import NumericalError
from references import REFERENCES
from test_certified import shows

_MP = {name: ref.mp for name, ref in REFERENCES.items()}

# Ordinary points (each row keeps those in its domain and off its kinks), as typed.
UNARY = ["0.7", "-1.3", "2.25"]
BINARY = [("1.3", "0.6"), ("2.25", "-0.7"), ("0.4", "3.1")]

# Near each row's singularities, and where a float64 rule loses its digits (as typed).
NEAR = {
    "atanh": ["0.9999999", "-0.9999999"], "asin": ["0.9999999", "-0.999999999"],
    "acos": ["0.9999999", "-0.9999999"], "tan": ["1.5707963", "-1.5707964"],
    "sec": ["1.5707963"], "csc": ["3.1415926"], "cot": ["3.1415926", "1e-7"],
    "cbrt": ["3000", "1e8", "-1e12"], "sinc": ["0", "1e-8", "0.5", "1e6"],
    "log": ["1e-7"], "log1p": ["-0.9999999"], "log2": ["1e-7"], "log10": ["1e-7"],
    "sqrt": ["1e-10"], "acosh": ["1.0000001"], "asinh": ["1e8"], "atan": ["1e8"],
    "gamma": ["-2.9999999"], "lgamma": ["1e-7"], "digamma": ["1e-7", "-2.5"],
    "trigamma": ["-3.7", "1e8"], "tanh": ["20"], "sigmoid": ["-40"], "softplus": ["-40"],
    "erf": ["6"], "erfc": ["10"], "exp": ["-700"], "expm1": ["1e-9"], "exp2": ["1000"],
    "pow": [("0.9999999", "1e7"), ("1e-7", "0.5")], "div": [("1", "1e-8")],
    "hypot": [("1e-8", "1e8")], "atan2": [("1e-8", "1")],
    "log_base": [("1.0000001", "2"), ("3", "1.0000001")], "mod": [("7.3", "2.1")],
}


def _source(prim) -> str:
    names = ["x", "y"][:prim.arity]
    if prim.is_operator:
        return f"x {prim.symbol} y" if prim.arity == 2 else f"{prim.symbol}x"
    return f"{prim.name}({', '.join(names)})"


def _usable(prim, args: tuple[str, ...]) -> bool:
    """Whether the row is defined and smooth at ``args`` (its float primal and rules, its kink)."""
    xs = [float(a) for a in args]
    try:
        y = prim.primal(*xs)
        for k in range(prim.arity):
            prim.partials[k](FLOAT, *xs, y)
    except (ValueError, ZeroDivisionError, OverflowError):
        return False
    return prim.kink is None or prim.kink(*xs) != 0


def _points(prim) -> list[tuple[str, ...]]:
    ordinary = [(a,) for a in UNARY] if prim.arity == 1 else BINARY
    near = [a if isinstance(a, tuple) else (a,) for a in NEAR.get(prim.name, [])]
    return [p for p in ordinary if _usable(prim, p)] + near


def reference_hessian(name: str, args: tuple[str, ...]) -> list[list]:
    """∂²f/∂a_i∂a_j by mpmath.diff at 120 digits."""
    f = _MP[name]
    with mpmath.workdps(120):
        x = [mpmath.mpf(a) for a in args]
        n = len(x)
        return [[+mpmath.diff(f, x, tuple(int(k == i) + int(k == j) for k in range(n)))
                 for j in range(n)] for i in range(n)]


CASES = [(name, p) for name in sorted(TABLE) for p in _points(TABLE[name])]


def test_every_row_has_points():
    covered = {name for name, _ in CASES}
    assert covered == set(TABLE), set(TABLE) - covered


@pytest.mark.parametrize("digits", [13, 30])
@pytest.mark.parametrize("name, args", CASES, ids=[f"{n}{list(p)}" for n, p in CASES])
def test_every_entry_is_the_truth_rounded(name, args, digits):
    prim = TABLE[name]
    at = dict(zip(["x", "y"], args))
    try:
        got = gradcli.hessian(_source(prim), at, digits=digits)
    except NumericalError as exc:  # refused, with the reason: never a wrong digit
        pytest.fail(f"{name} at {args}: refused ({exc})")
    truth = reference_hessian(name, args)
    for i, row in enumerate(got.hessian):
        for j, entry in enumerate(row):
            assert entry.text != "?", (name, args, i, j)
            if entry.text == "0":  # exactly (mpmath's difference quotients leave ~1e-130)
                assert abs(truth[i][j]) < mpmath.mpf(10) ** -100
                continue
            assert shows(entry.text, truth[i][j], entry.digits), (
                name, args, i, j, entry.text, mpmath.nstr(truth[i][j], digits + 5))
            assert entry.digits == digits or "±" in entry.text, (name, args, entry.text)
