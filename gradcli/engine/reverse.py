"""The adjoint sweep (reverse mode), as in HIPS autograd's ``backward_pass``.

Starting from the output's adjoint (the seed), nodes are visited from the deepest level down
and left to right within a level; each node passes ``upstream * local`` to each argument that is
not a constant, where ``local`` is the node's partial derivative (:mod:`gradcli.engine.partials`).
Adjoints live in a list created for each call, never on the nodes, so two calls agree. With
``record=True`` every contribution is kept as a :class:`Contribution` for the trace tables.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ..errors import NumericalError
from .graph import Graph
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


def reverse(graph: Graph, values: list, seed: float = 1.0, record: bool = False,
            m=FLOAT, order: int = 1, active=None, cotangent=None) -> tuple[list, list[Contribution]]:
    """Adjoints of every slot for the output adjoint ``seed``, and the recorded contributions.

    The local partials are :func:`~gradcli.engine.partials.local_partials`'s, accumulated as
    they are computed (the batch engine runs the same loop on columns). ``m`` is the namespace
    the rules compute with: floats by default; given dual numbers as ``values`` and their
    namespace (:mod:`gradcli.engine.dual`), the sweep differentiates itself, and a rule that
    fails is a failed derivative of ``order`` 2 (the error says which). ``active``
    (:meth:`Graph.active`) marks the slots whose adjoints are wanted: a partial by any other
    argument is not computed (default: every slot that is not a constant). ``cotangent`` (one
    adjoint per output, in order) seeds every output at once instead: the inputs' adjoints are
    then the vector-Jacobian product ``cotangentᵀ·J``, in one sweep.
    """
    adjoint = [0.0] * graph.n_slots
    if cotangent is None:
        adjoint[graph.output] = seed
    else:
        for slot, w in zip(graph.output_slots, cotangent):
            adjoint[slot] += w  # two outputs may be one node: their seeds add
    slots = graph.visit_order()
    if not record:  # the hot path: partials accumulated as computed, in the loop itself
        local_partials(graph, values, m, order, slots, adjoint, active)
        return adjoint, []
    records: list[Contribution] = []

    def each(s: int, a: int, local) -> None:  # each node passes its adjoint times the local
        g = adjoint[s]  # partial to its arguments
        adjoint[a] += g * local
        records.append(Contribution(s, a, g, local, g * local))

    local_partials(graph, values, m, order, slots, active=active, each=each)
    return adjoint, records


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
