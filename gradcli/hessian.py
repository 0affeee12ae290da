"""Second derivatives: the Hessian by forward-over-reverse, one Hessian-vector product per input.

The reverse sweep never looks inside its numbers: it calls the table's rules with a namespace
``m`` and multiplies and adds what they return. Run it on *dual numbers* ``(value, tangent)`` —
the primal values with their tangents along a direction ``v`` — with the dual namespace
:data:`DUAL`, and every adjoint comes out as a dual number too: its value is the gradient and its
tangent the Hessian-vector product ``H·v`` (Pearlmutter 1994). Seeding ``v`` with each input in
turn gives the Hessian a column at a time, exact to rounding, with no finite differences.

:data:`DUAL` is derived from the table, not written by hand: a dual function's value is the
row's primal and its tangent is ``Σ_k partials[k](FLOAT, ...)·tangent_k``, the row's own rules.

>>> from gradcli.api import compile
>>> from gradcli.forward import forward
>>> g = compile("x^2*y")
>>> hessian_matrix(g, forward(g, [2.0, 3.0]), [0, 1])
[[6.0, 4.0], [4.0, 0.0]]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

from .errors import GradcliError, NumericalError
from .forward import forward
from .graph import Graph
from .primitives import CONSTANTS, FLOAT, TABLE, Primitive
from .reverse import check_gradient, reverse
from .tangent import local_partials, tangent_sweep


class Dual:
    """A value with a first-order tangent; arithmetic goes through the table's rows."""

    __slots__ = ("value", "tangent")

    def __init__(self, value: float, tangent: float):
        self.value = value
        self.tangent = tangent

    def __add__(self, o): return _ADD(self, o)
    def __radd__(self, o): return _ADD(o, self)
    def __sub__(self, o): return _SUB(self, o)
    def __rsub__(self, o): return _SUB(o, self)
    def __mul__(self, o): return _MUL(self, o)
    def __rmul__(self, o): return _MUL(o, self)
    def __truediv__(self, o): return _DIV(self, o)
    def __rtruediv__(self, o): return _DIV(o, self)
    def __pow__(self, o): return _POW(self, o)
    def __rpow__(self, o): return _POW(o, self)
    def __neg__(self): return _NEG(self)
    def __pos__(self): return self

    def __float__(self) -> float:  # error messages print the value part
        return float(self.value)

    def __repr__(self) -> str:
        return f"Dual({self.value!r}, {self.tangent!r})"


def lift(prim: Primitive) -> Callable:
    """The primitive on dual numbers: the primal on the values, the rules on the tangents."""
    primal, partials = prim.primal, prim.partials

    def dual(*args):
        if not any(type(a) is Dual for a in args):
            return primal(*args)  # plain floats stay plain floats: the common, fast case
        values = [a.value if type(a) is Dual else a for a in args]
        y = primal(*values)
        tangent = 0.0
        for k, a in enumerate(args):
            # A zero tangent contributes nothing; skipping it also skips rules that are
            # undefined where the argument does not vary (∂(a^b)/∂b for a < 0).
            if type(a) is Dual and a.tangent != 0:
                tangent += partials[k](FLOAT, *values, y) * a.tangent
        return Dual(y, tangent)

    dual.__name__ = prim.name
    return dual


DUAL = SimpleNamespace(**{name: lift(p) for name, p in TABLE.items()}, **CONSTANTS)
_ADD, _SUB, _MUL, _DIV, _POW, _NEG = (getattr(DUAL, n) for n in ("add", "sub", "mul", "div",
                                                                  "pow", "neg"))


def _parts(x) -> tuple[float, float]:
    return (x.value, x.tangent) if type(x) is Dual else (x, 0.0)


def hessian_vector_product(graph: Graph, values: list[float], partials, direction: list[float]):
    """``(gradient, H·direction)`` over the inputs, in graph order, from one dual reverse sweep."""
    tangents = tangent_sweep(graph, partials, direction)
    duals = [Dual(v, t) if t else v for v, t in zip(values, tangents)]
    try:
        adjoint, _ = reverse(graph, duals, 1.0, m=DUAL)
    except NumericalError as exc:
        # The row's note speaks of its first derivative; here the second one failed.
        head, found, _ = exc.message.partition(": the derivative is not finite")
        if found:
            exc.message = f"{head}: the second derivative is not finite here"
        raise
    inputs = [_parts(adjoint[graph.n_const + i]) for i in range(len(graph.inputs))]
    return [g for g, _ in inputs], [h for _, h in inputs]


def hessian_matrix(graph: Graph, values: list[float], columns: list[int]) -> list[list[float]]:
    """``H[i][j] = ∂²f/∂x_i∂x_j`` for the inputs at positions ``columns`` (graph order)."""
    partials = local_partials(graph, values)
    n = len(graph.inputs)
    result = []
    for j in columns:
        _, hv = hessian_vector_product(graph, values, partials,
                                       [1.0 if i == j else 0.0 for i in range(n)])
        result.append([hv[i] for i in columns])
    # result[j] is H·e_j, the j-th column: transpose it into rows
    matrix = [list(row) for row in zip(*result)] if result else []
    for a, i in enumerate(columns):
        for b, j in enumerate(columns):
            if not math.isfinite(matrix[a][b]):
                names = graph.inputs
                raise NumericalError(f"the Hessian is not finite: ∂²f/∂{names[i]}∂{names[j]} "
                                     f"is {matrix[a][b]}")
    return matrix


# -- finite-difference check of the Hessian ------------------------------------------------------
# Central differences of the AD gradient. gradcli/check.py (eval --check, built on another branch)
# does the same for the gradient; the two belong together once both are merged.

@dataclass(frozen=True, slots=True)
class HessianCheckRow:
    row: str  # H[row][column] = ∂²f/∂row∂column
    column: str
    ad: float
    numeric: float
    numeric_error: float  # estimate of the difference quotient's own error
    abs_error: float
    rel_error: float
    ok: bool
    note: str = ""


@dataclass(slots=True)
class HessianCheck:
    ok: bool
    rtol: float
    atol: float
    rows: list[HessianCheckRow]


def _gradient(graph: Graph, point: list[float], columns: list[int]) -> list[float]:
    values = forward(graph, point)
    adjoint, _ = reverse(graph, values)
    check_gradient(graph, values, adjoint, 1.0)
    return [adjoint[graph.n_const + i] for i in columns]


def _difference_column(graph: Graph, point: list[float], j: int, columns: list[int]):
    """``(∂g/∂x_j for each g in the gradient, error estimates, note)`` by differences.

    Central differences at steps h, h/2 and h/4; Richardson extrapolation of the first two is
    the estimate and its distance from the extrapolation of the last two (plus the rounding
    error) estimates its error. A step that leaves the domain shrinks; as a last resort the
    differences become one-sided. The note says so.
    """
    x = point[j]

    def g(t: float) -> list[float]:
        moved = list(point)
        moved[j] = x + t
        return _gradient(graph, moved, columns)

    def estimate(h: float, quotient) -> tuple[list[float], list[float]]:
        d = [quotient(h / 2 ** k) for k in range(3)]  # difference quotients at h, h/2, h/4
        ones = [[(4 * b - a) / 3 for a, b in zip(d[k], d[k + 1])] for k in range(2)]
        scale = max((abs(v) for v in g(0.0)), default=0.0)
        rounding = 2.2e-16 * scale / h * 8
        return ones[0], [abs(a - b) + rounding for a, b in zip(*ones)]

    def central(h: float) -> list[float]:
        return [(a - b) / (2 * h) for a, b in zip(g(h), g(-h))]

    # ε^(1/3)·max(1, |x|) to start: small enough for sin(1000*x), large enough for rounding
    h, shrunk = 6e-6 * max(1.0, abs(x)), False
    while h > 1e-14 * max(1.0, abs(x)):
        try:
            g(h), g(-h)
        except GradcliError:
            h, shrunk = h / 10, True
            continue
        # Smaller steps while the error estimate improves: a function that varies on a scale
        # below 1 (sqrt(x) near 0) needs a step below that scale.
        best = None
        for step in (h, h / 10, h / 100, h / 1000):
            try:
                numeric, error = estimate(step, central)
            except GradcliError:
                break
            if best is not None and max(error) >= max(best[1]):
                break
            best = (numeric, error, step)
        if best is None:
            break
        note = f"step shrunk to {best[2]:.0e} to stay in the domain" if shrunk else ""
        return best[0], best[1], note
    h = 1e-5 * max(1.0, abs(x))
    for s in (1.0, -1.0):  # second-order one-sided differences
        def one_sided(h: float, s: float = s) -> list[float]:
            return [s * (-3 * a + 4 * b - c) / (2 * h)
                    for a, b, c in zip(g(0.0), g(s * h), g(s * 2 * h))]
        try:
            numeric, error = estimate(h, one_sided)
        except GradcliError:
            continue
        return numeric, error, f"one-sided ({'forward' if s > 0 else 'backward'}) differences"
    nan = [math.nan] * len(columns)
    return nan, nan, "the gradient is not defined near the point"


def check_hessian(graph: Graph, point: list[float], columns: list[int],
                  matrix: list[list[float]], rtol: float = 1e-6,
                  atol: float = 1e-8) -> HessianCheck:
    """Compare each AD entry with central differences of the AD gradient:
    agreement is ``|ad - numeric| <= atol + rtol·|numeric|``."""
    names = graph.inputs
    rows: list[HessianCheckRow] = []
    numeric_columns = [_difference_column(graph, point, j, columns) for j in columns]
    for a, i in enumerate(columns):
        for b, j in enumerate(columns):
            numeric_col, error_col, note = numeric_columns[b]
            ad, numeric = matrix[a][b], numeric_col[a]
            abs_error = abs(ad - numeric)
            rel_error = abs_error / abs(numeric) if numeric else (0.0 if ad == 0 else math.inf)
            ok = abs_error <= atol + rtol * abs(numeric)  # False for nan
            rows.append(HessianCheckRow(names[i], names[j], ad, numeric, error_col[a],
                                        abs_error, rel_error, ok, note))
    return HessianCheck(all(r.ok for r in rows), rtol, atol, rows)
