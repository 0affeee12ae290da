"""The adjoint sweep (reverse mode), as in HIPS autograd's ``backward_pass``.

Starting from the output's adjoint (the seed), nodes are visited from the deepest level down
and left to right within a level; each node passes ``upstream * local`` to each argument that is
not a constant, where ``local`` is the node's partial derivative (:mod:`gradcli.engine.partials`).
Adjoints live in a list created for each call, never on the nodes, so two calls agree. With
``record=True`` the sweep keeps each local partial as it goes, and every contribution can be
read back as a :class:`Contribution` for the trace tables (:class:`Recorded`).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from typing import NamedTuple

from ..errors import NumericalError
from .graph import Graph, sweep_edges
from .partials import Partials, local_partials, not_differentiable  # noqa: F401 - re-exported
from .primitives import FLOAT


class Contribution(NamedTuple):
    """One edge of the reverse sweep: ``adjoint[target] += upstream * local``."""

    source: int  # the node whose adjoint flows back (slot)
    target: int  # the argument receiving it (slot)
    upstream: float
    local: float
    contribution: float


def visit_order(graph: Graph) -> list[int]:
    """Slots of the nodes the output depends on, deepest level first, left to right within one."""
    return graph.visit_order()


def reverse(graph: Graph, values: list, seed: float = 1.0, record: bool = False, m=FLOAT,
            order: int = 1, active=None, cotangent=None,
            spend: bool = False) -> tuple[list, Sequence[Contribution]]:
    """Adjoints of every slot for the output adjoint ``seed``, and the recorded contributions.

    The local partials are :func:`~gradcli.engine.partials.local_partials`'s, accumulated as
    they are computed (the batch engine runs the same loop on columns). ``m`` is the namespace
    the rules compute with: floats by default; given dual numbers as ``values`` and their
    namespace (:mod:`gradcli.engine.dual`), the sweep differentiates itself, and a rule that
    fails is a failed derivative of ``order`` 2 (the error says which). ``active``
    (:meth:`Graph.active`) marks the slots whose adjoints are wanted: a partial by any other
    argument is not computed (default: every slot that is not a constant). ``cotangent`` (one
    adjoint per output, in order) seeds every output at once instead: the inputs' adjoints are
    then the vector-Jacobian product ``cotangentᵀ·J``, in one sweep. ``spend`` (without
    ``record``): each node's adjoint is None once the sweep has passed it on, and only the
    inputs' and constants' are left; the sweep's memory is then what is still to pass on.
    """
    adjoint = [0.0] * graph.n_slots
    if cotangent is None:
        adjoint[graph.output] = seed
    else:
        for slot, w in zip(graph.output_slots, cotangent):
            adjoint[slot] += w  # two outputs may be one node: their seeds add
    if not record:  # the hot path: partials accumulated as computed, in the loop itself
        local_partials(graph, values, m, order, None, adjoint, active,  # None: visit_order's
                       spend=spend)
        return adjoint, []
    slots = graph.visit_order()
    if active is None:
        active = graph.active()
    partials = local_partials(graph, values, m, order, slots, adjoint, active, keep=True)
    return adjoint, Recorded(graph, slots, active, adjoint, partials)


class Recorded(Sequence):
    """The contributions of a recorded reverse sweep, in sweep order, each made when it is read
    from the adjoints and the local partials the sweep kept: a trace table showing 40 edges of
    100,000 multiplies 40 numbers, and no rule runs twice. ``sources`` and ``targets`` (the slots
    of every edge, computed on first use) serve what needs no number."""

    __slots__ = ("graph", "slots", "active", "adjoint", "partials", "_edges")

    def __init__(self, graph: Graph, slots: Sequence[int], active, adjoint: list,
                 partials: Partials):
        self.graph, self.slots, self.active = graph, slots, active
        self.adjoint, self.partials, self._edges = adjoint, partials, None

    def edges(self) -> tuple[array, array, array]:
        """Every edge's source slot, target slot and argument (0 or 1), in sweep order (int32
        columns: a trace reads a few dozen edges of 100,000)."""
        if self._edges is None:
            self._edges = self._made()
        return self._edges[:3]

    def by_target(self) -> array:
        """The edges' positions sorted stably by target: an adjoint's terms are a run of it."""
        if self._edges is None:
            self._edges = self._made()
        return self._edges[3]

    def _made(self) -> tuple[array, array, array, array]:
        graph = self.graph
        slots = self.slots  # int32, as the visit order is, so the compiled loop reads C integers
        if slots.__class__ is not array:
            slots = array("i", slots)
        return sweep_edges(slots, self.active, graph.arg0, graph.arg1, graph.base,
                           graph.n_slots)

    @property
    def sources(self) -> list[int]:
        return self.edges()[0]

    @property
    def targets(self) -> list[int]:
        return self.edges()[1]

    def __len__(self) -> int:
        return len(self.edges()[0])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        sources, targets, which = self.edges()
        s = sources[i]
        local = self.partials[which[i]][s - self.graph.base]
        g = self.adjoint[s]
        return Contribution(s, targets[i], g, local, g * local)  # the sweep's own product

    def contribution(self, i: int):
        """Edge ``i``'s contribution alone (upstream adjoint times local partial)."""
        sources, _, which = self.edges()
        s = sources[i]
        return self.adjoint[s] * self.partials[which[i]][s - self.graph.base]

    def __repr__(self) -> str:
        return f"Recorded({list(self)!r})"


def check_gradient(graph: Graph, values: list[float], adjoint: list[float], seed: float,
                   active=None, cotangent=None) -> None:
    """Raise a NumericalError naming the first edge whose contribution is not finite, if any."""
    n_const = graph.n_const
    if math.isfinite(sum(adjoint[n_const:graph.base])):  # one C-speed pass finds any inf or nan
        return
    _, records = reverse(graph, values, seed, record=True, active=active, cotangent=cotangent)
    for rec in records:
        if not math.isfinite(rec.contribution):
            k, node = rec.source - graph.base, graph.node_id(rec.source)
            raise NumericalError(
                f"the gradient is not finite: the contribution of {node} "
                f"to {graph.node_id(rec.target)} is {rec.contribution}", graph.spans[k],
                node=node, values=(rec.contribution,))
    raise NumericalError("the gradient is not finite")


def reverse_to_limits(graph: Graph, values: list[float], seed: float = 1.0, active=None):
    """The reverse sweep where a local partial does not exist: it takes the value it tends to
    (:func:`~gradcli.engine.partials.limit_slope`: ±inf for an infinite slope, else nan), and the
    adjoints follow IEEE arithmetic (∞·2 = ∞, ∞ − ∞ and 0·∞ are nan). Gives the adjoint of every
    slot and the :class:`~gradcli.engine.partials.Singular` nodes, in sweep order; an input's
    adjoint is then finite, ±inf (the gradient is unbounded that way) or nan (undefined)."""
    from .partials import Singular, limit_slope
    if active is None:
        active = graph.active()
    adjoint = [0.0] * graph.n_slots
    adjoint[graph.output] = seed
    base, singular = graph.base, []
    for s in graph.visit_order():
        k, g = s - base, adjoint[s]
        prim, arg_slots = graph.ops[k], graph.args(k)
        args = [values[a] for a in arg_slots]
        for which, a in enumerate(arg_slots):
            if not active[a]:
                continue
            try:
                p = prim.partials[which](FLOAT, *args, values[s])
            except (ValueError, ZeroDivisionError, OverflowError):
                p = limit_slope(prim, args, which)
                singular.append(Singular(s, which, p))
            adjoint[a] += g * p
    return adjoint, singular


def singular_error(graph: Graph, values: list[float], gradient: dict[str, float],
                   singular: list, failed: NumericalError) -> NumericalError:
    """The error of a value whose ``gradient`` (from :func:`reverse_to_limits`) has components
    that are not finite: each named with what it tends to (+∞, −∞, or undefined), the caret at
    the first node whose slope does not exist. ``failed`` is the first sweep's error, whose
    words say why a derivative with no limit has none."""
    from ..errors import SingularGradientError
    from .graph import describe_call
    if not singular:  # defensive: the limits sweep found nothing the first sweep tripped on
        return failed
    limits = {name: g for name, g in gradient.items() if not math.isfinite(g)}
    parts = [f"∂f/∂{name} is unbounded ({'+' if g > 0 else '−'}∞)" if math.isinf(g)
             else f"∂f/∂{name} is undefined" for name, g in limits.items()]
    s, which, slope = singular[0]
    k = s - graph.base
    prim, args = graph.ops[k], [values[a] for a in graph.args(k)]
    # no limit: the first sweep's own message says why (the rule's note, the argument's role)
    why = (f"{graph.node_id(s)} = {describe_call(prim, args)} has an infinite slope "
           f"({'+' if slope > 0 else '−'}∞)" if math.isinf(slope) else failed.sentence)
    return SingularGradientError(
        f"{' and '.join(parts) or 'the gradient is not finite'} at this point: {why}",
        graph.spans[k], label="infinite slope here" if math.isinf(slope)
        else "not differentiable at this point", node=graph.node_id(s),
        values=tuple(float(a) for a in args), limits=limits, reason=why)
