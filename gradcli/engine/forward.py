"""The primal sweep: every node's value, in tape order.

Errors name the node: a point outside a primitive's domain is a :class:`DomainError` (exit 2),
an overflow or a non-finite value is a :class:`NumericalError` (exit 1).
"""

from __future__ import annotations

import math
from operator import attrgetter
from typing import Sequence

from ..errors import NumericalError
from .graph import Graph, describe_node, domain_error, overflow_error

_PRIMAL = attrgetter("primal")


def forward(graph: Graph, point: Sequence[float]) -> list[float]:
    """Values of every slot (constants, inputs, nodes) at ``point`` (input values in graph order)."""
    base = graph.base
    values = graph.constants + list(point) + [0.0] * len(graph.ops)
    arg0, arg1 = graph.arg0, graph.arg1
    k = 0
    try:
        for k, f in enumerate(map(_PRIMAL, graph.ops)):
            b = arg1[k]
            if b < 0:
                values[base + k] = f(values[arg0[k]])
            else:
                values[base + k] = f(values[arg0[k]], values[b])
    except (ValueError, ZeroDivisionError):
        raise _located(graph, k, values, domain_error) from None
    except OverflowError:
        raise _located(graph, k, values, overflow_error) from None
    # One C-speed sum detects any inf or nan; only then look for the first one.
    if not math.isfinite(sum(values[base:])):
        first_non_finite(graph, values)
    return values


def _located(graph: Graph, k: int, values, make):
    """The error ``make`` builds for node k, naming the node."""
    args = [values[a] for a in graph.args(k)]
    slot = graph.base + k
    return make(graph.ops[k], args, graph.spans[k], node=graph.node_id(slot),
                shown=describe_node(graph, slot, values))  # (another node's double: marked)


def first_non_finite(graph: Graph, values: list[float]) -> None:
    """Raise a NumericalError naming the first node whose value is inf or nan, if any."""
    base = graph.base
    for k in range(len(graph.ops)):
        v = values[base + k]
        if not math.isfinite(v):
            node = graph.node_id(base + k)
            raise NumericalError(
                f"{node} = {describe_node(graph, base + k, values)} is {v}: the value is not a "
                "finite number", graph.spans[k], node=node, values=(v,),
                hint="an intermediate result overflowed; rescale the expression or evaluate at a "
                     "smaller point")
