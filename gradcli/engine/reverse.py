"""The adjoint sweep (reverse mode), as in HIPS autograd's ``backward_pass``.

Starting from the output's adjoint (the seed), nodes are visited from the deepest level down
and left to right within a level; each node passes ``upstream * local`` to each argument that is
not a constant, where ``local`` is the primitive's partial-derivative rule from the table.
Adjoints live in a list created for each call, never on the nodes, so two calls agree. With
``record=True`` every contribution is kept as a :class:`Contribution` for the trace tables.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ..errors import NumericalError
from .graph import Graph, describe_call
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
    live, base, depth = graph.live_nodes(), graph.base, graph.depth
    # A stable sort by depth, deepest first, keeps each level left to right; it runs in C (a
    # loop over the levels costs a Python step per level, and a deep graph has one per node).
    order = sorted(range(len(depth)), key=depth.__getitem__, reverse=True)
    if not all(live):
        order = [k for k in order if live[k]]
    return list(map(base.__add__, order))


def reverse(graph: Graph, values: list[float], seed: float = 1.0, record: bool = False,
            m=FLOAT, order: int = 1, active=None, cotangent=None) -> tuple[list[float], list[Contribution]]:
    """Adjoints of every slot for the output adjoint ``seed``, and the recorded contributions.

    ``m`` is the namespace the rules compute with: floats by default; given dual numbers as
    ``values`` and their namespace (:mod:`gradcli.engine.dual`), the sweep differentiates itself,
    and a rule that fails is a failed derivative of ``order`` 2 (the error says which).
    ``active`` (:meth:`Graph.active`) marks the slots whose adjoints are wanted: a partial by any
    other argument is not computed (default: every slot that is not a constant).
    ``cotangent`` (one adjoint per output, in order) seeds every output at once instead: the
    inputs' adjoints are then the vector-Jacobian product ``cotangentᵀ·J``, in one sweep.
    """
    if active is None:
        active = graph.active()
    adjoint = [0.0] * graph.n_slots
    if cotangent is None:
        adjoint[graph.output] = seed
    else:
        for slot, w in zip(graph.output_slots, cotangent):
            adjoint[slot] += w  # two outputs may be one node: their seeds add
    records: list[Contribution] = []
    base = graph.base
    ops, arg0, arg1 = graph.ops, graph.arg0, graph.arg1
    s, which = base, 0  # the node and the argument whose partial is being computed
    try:
        for s in visit_order(graph):
            k = s - base
            g = adjoint[s]
            a, b, y = arg0[k], arg1[k], values[s]
            rules = ops[k].partials
            if b < 0:
                if active[a]:
                    local = rules[0](m, values[a], y)
                    adjoint[a] += g * local
                    if record:
                        records.append(Contribution(s, a, g, local, g * local))
                continue
            va, vb = values[a], values[b]
            which = 0
            if active[a]:
                local = rules[0](m, va, vb, y)
                adjoint[a] += g * local
                if record:
                    records.append(Contribution(s, a, g, local, g * local))
            which = 1
            if active[b]:
                local = rules[1](m, va, vb, y)
                adjoint[b] += g * local
                if record:
                    records.append(Contribution(s, b, g, local, g * local))
    except (ValueError, ZeroDivisionError, OverflowError):
        raise not_differentiable(graph, s, values, order, which) from None
    return adjoint, records


_ROLES = {"pow": ("the base", "the exponent")}


def not_differentiable(graph: Graph, s: int, values: list, order: int = 1,
                       which: int = 0) -> NumericalError:
    """The error of node ``s``, whose derivative (``order`` 2: second derivative) by argument
    ``which`` is not finite: it names that argument (``x``, ``v3``) and its role."""
    k = s - graph.base
    prim, node = graph.ops[k], graph.node_id(s)
    arg_slots = graph.args(k)
    args = [values[a] for a in arg_slots]
    two = len(arg_slots) == 2
    by = ""
    if two:
        role = _ROLES.get(prim.name, ("the first argument", "the second argument"))[which]
        by = f" by {graph.node_id(arg_slots[which])} ({role}, {'ab'[which]})"
    if order == 1:
        # The row's note, without its sentences about the other argument's rule.
        note = ". ".join(part for part in prim.note.split(". ")
                         if not (two and part.startswith(f"∂/∂{'ba'[which]}")))
        what = f"the derivative{by} is not finite here" + (f" ({note})" if note else "")
    else:  # the primitive's note is about its first derivative
        what = f"the second derivative{by} is not finite here"
    return NumericalError(f"{node} = {describe_call(prim, args)}: {what}", graph.spans[k],
                          label="not differentiable at this point", node=node,
                          values=tuple(float(a) for a in args))


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
