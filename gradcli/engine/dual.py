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
>>> from gradcli.engine.forward import forward
>>> g = compile("x^2*y")
>>> hessian_matrix(g, forward(g, [2.0, 3.0]), [0, 1])
[[6.0, 4.0], [4.0, 0.0]]
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Callable

from ..errors import NumericalError
from .graph import Graph
from .primitives import FLOAT, TABLE, Namespace, Primitive, where
from .reverse import reverse
from .tangent import local_partials, tangent_sweep


class Dual:
    """A value with a first-order tangent; arithmetic goes through the table's rows, in the
    namespace ``ops`` of its numbers (a subclass per namespace: floats, balls)."""

    __slots__ = ("value", "tangent")
    ops: SimpleNamespace  # the dual namespace its operators run (set by dual_namespace)

    def __init__(self, value: float, tangent: float):
        self.value = value
        self.tangent = tangent

    def __add__(self, o): return self.ops.add(self, o)
    def __radd__(self, o): return self.ops.add(o, self)
    def __sub__(self, o): return self.ops.sub(self, o)
    def __rsub__(self, o): return self.ops.sub(o, self)
    def __mul__(self, o): return self.ops.mul(self, o)
    def __rmul__(self, o): return self.ops.mul(o, self)
    def __truediv__(self, o): return self.ops.div(self, o)
    def __rtruediv__(self, o): return self.ops.div(o, self)
    def __pow__(self, o): return self.ops.pow(self, o)
    def __rpow__(self, o): return self.ops.pow(o, self)
    def __neg__(self): return self.ops.neg(self)
    def __pos__(self): return self

    def __float__(self) -> float:  # error messages print the value part
        return float(self.value)

    def __repr__(self) -> str:
        return f"Dual({self.value!r}, {self.tangent!r})"


def lift(prim: Primitive, base=FLOAT, kind: type = Dual) -> Callable:
    """The primitive on dual numbers of class ``kind``: the primal on the values, the rules on
    the tangents (both in the namespace ``base``: floats, or balls for certified Hessians)."""
    primal, partials = getattr(base, prim.name), prim.partials

    def dual(*args):
        if not any(type(a) is kind for a in args):
            return primal(*args)  # plain numbers stay plain numbers: the common, fast case
        values = [a.value if type(a) is kind else a for a in args]
        y = primal(*values)
        tangent = 0.0
        for k, a in enumerate(args):
            # A zero tangent contributes nothing; skipping it also skips rules that are
            # undefined where the argument does not vary (∂(a^b)/∂b for a < 0).
            if type(a) is kind and a.tangent != 0:
                tangent += partials[k](base, *values, y) * a.tangent
        return kind(y, tangent)

    dual.__name__ = prim.name
    return dual


def _greater(a, b) -> bool:
    """A rule's comparison of duals (sinc's series near 0): by their values."""
    return (a.value if isinstance(a, Dual) else a) > (b.value if isinstance(b, Dual) else b)


def _lifted_polygamma(base, kind):
    """ψ^(n) of a dual: its value and ψ^(n+1)·tangent (``base``'s polygamma, or its error)."""
    def polygamma(n, a):
        if type(a) is not kind:
            return base.polygamma(n, a)
        return kind(base.polygamma(n, a.value), base.polygamma(n + 1, a.value) * a.tangent)
    return polygamma


def _lifted_tanh_slope(base, kind):
    """tanh' of a dual: its value and tanh''·tangent = -2·tanh·tanh'·tangent, a product with no
    cancellation (the dual of tanh's product of sigmoids cancels near 0: 8 digits at 1e-8)."""
    def tanh_slope(a):
        if type(a) is not kind:
            return base.tanh_slope(a)
        slope = base.tanh_slope(a.value)
        return kind(slope, -2 * base.tanh(a.value) * slope * a.tangent)
    return tanh_slope


_DUALS: dict = {}


def dual_namespace(base) -> SimpleNamespace:
    """The dual-number namespace over ``base`` (made once per base), with its class of dual
    numbers as ``Dual`` (:class:`Dual` itself over floats): their operators run ``base``'s rows
    too (a ball's square is a ball)."""
    found = _DUALS.get(id(base))
    if found is None:
        kind = Dual if base is FLOAT else type("Dual", (Dual,), {"__slots__": ()})
        # pi and e read from the base each time: a ball's π is made at the working precision
        namespace = type("DualNamespace", (Namespace,), {
            "pi": property(lambda self: base.pi), "e": property(lambda self: base.e)})
        found = _DUALS[id(base)] = namespace(
            lambda p, base=base, kind=kind: lift(p, base, kind),
            **{name: lift(p, base, kind) for name, p in TABLE.items()}, where=where,
            greater=_greater, polygamma=_lifted_polygamma(base, kind),
            tanh_slope=_lifted_tanh_slope(base, kind), Dual=kind)
        kind.ops = found
        if hasattr(base, "sinc_curvature"):  # sinc's rule of a dual: sinc' and sinc''·tangent
            def sinc_slope(a, base=base):
                if type(a) is not kind:
                    return base.sinc_slope(a)
                return kind(base.sinc_slope(a.value), base.sinc_curvature(a.value) * a.tangent)
            found.sinc_slope = sinc_slope
    return found


DUAL = dual_namespace(FLOAT)


def _parts(x) -> tuple[float, float]:
    return (x.value, x.tangent) if isinstance(x, Dual) else (x, 0.0)


def hessian_vector_product(graph: Graph, values: list[float], partials, direction: list[float],
                           active=None, base=FLOAT):
    """``(gradient, H·direction)`` over the inputs, in graph order, from one dual reverse sweep
    (over the ``active`` slots, :meth:`Graph.active`; default all)."""
    tangents = tangent_sweep(graph, partials, direction)
    m = dual_namespace(base)
    duals = [m.Dual(v, t) if t is not None and t != 0 else v for v, t in zip(values, tangents)]
    adjoint, _ = reverse(graph, duals, 1.0, m=m, order=2, active=active)
    inputs = [_parts(adjoint[graph.n_const + i]) for i in range(len(graph.inputs))]
    return [g for g, _ in inputs], [h for _, h in inputs]


def hessian_matrix(graph: Graph, values: list[float], columns: list[int],
                   active=None, base=FLOAT) -> list[list[float]]:
    """``H[i][j] = ∂²f/∂x_i∂x_j`` for the inputs at positions ``columns`` (graph order);
    ``active`` (:meth:`Graph.active`) should mark the slots that depend on those inputs.
    ``base`` is the namespace of the numbers: floats, or balls (certified)."""
    partials = local_partials(graph, values, base, active=active)
    n = len(graph.inputs)
    result = []
    for j in columns:
        direction = [0.0] * n
        direction[j] = 1.0
        _, hv = hessian_vector_product(graph, values, partials, direction, active, base)
        result.append([hv[i] for i in columns])
    # result[j] is H·e_j, the j-th column: transpose it into rows
    matrix = [list(row) for row in zip(*result)] if result else []
    if base is not FLOAT:
        return matrix  # balls: a number that is not finite has already raised
    for a, i in enumerate(columns):
        for b, j in enumerate(columns):
            if not math.isfinite(matrix[a][b]):
                names = graph.inputs
                raise NumericalError(f"the Hessian is not finite: ∂²f/∂{names[i]}∂{names[j]} "
                                     f"is {matrix[a][b]}", names=(names[i], names[j]),
                                     values=(matrix[a][b],))
    return matrix
