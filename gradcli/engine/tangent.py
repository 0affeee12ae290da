"""Forward mode: tangents, swept through the tape in order (Baydin et al. 2018, Table 2).

A tangent sweep carries, beside each node's value ``v``, its tangent ``v̇`` — the derivative of
``v`` along a chosen direction of the inputs: ``v̇ = Σ_k ∂v/∂arg_k · arg_k̇``. The partial
derivatives are the table's rules, the very ones reverse mode multiplies by adjoints, evaluated
once per node (:func:`local_partials`) and reused by every sweep. One sweep gives one
directional derivative (a Jacobian-vector product); the gradient takes one sweep per input.

>>> from gradcli.api import compile
>>> from gradcli.engine.forward import forward
>>> g = compile("log(x)+x*y-sin(y)")
>>> values = forward(g, [2.0, 5.0])
>>> tangents = tangent_sweep(g, local_partials(g, values), [1.0, 0.0])
>>> [tangents[s] for s in range(g.base, g.n_slots)]
[0.5, 5.0, 0.0, 5.5, 5.5]
"""

from __future__ import annotations

import math
from typing import Sequence

from ..errors import NumericalError
from .graph import Graph, expression
from .primitives import FLOAT
from .reverse import not_differentiable

Partials = tuple[list, list]  # (∂/∂first argument, ∂/∂second argument) per node; None = not needed


def local_partials(graph: Graph, values: list[float], active=None) -> Partials:
    """Each node's partial derivatives at ``values``, for the nodes the output depends on.

    An argument that is not ``active`` (:meth:`Graph.active`; default: a constant) gets ``None``
    (its tangent is 0, and the rule may not even be defined there: ∂(a^b)/∂b needs a > 0), as
    does every argument of a node the output does not read: exactly the rules the reverse sweep
    evaluates, so both modes fail at the same points.
    """
    if active is None:
        active = graph.active()
    n = len(graph.ops)
    first: list = [None] * n
    second: list = [None] * n
    base, m = graph.base, FLOAT
    ops, arg0, arg1 = graph.ops, graph.arg0, graph.arg1
    live = graph.live_nodes()
    k = which = 0
    try:
        for k in range(n):
            if not live[k]:
                continue
            a, b, y = arg0[k], arg1[k], values[base + k]
            rules = ops[k].partials
            which = 0
            if b < 0:
                if active[a]:
                    first[k] = rules[0](m, values[a], y)
                continue
            va, vb = values[a], values[b]
            if active[a]:
                first[k] = rules[0](m, va, vb, y)
            which = 1
            if active[b]:
                second[k] = rules[1](m, va, vb, y)
    except (ValueError, ZeroDivisionError, OverflowError):
        raise not_differentiable(graph, base + k, values, which) from None
    return first, second


def tangent_sweep(graph: Graph, partials: Partials, direction: Sequence[float]) -> list:
    """Tangents of every slot for the input tangents ``direction`` (graph order).

    Constants have tangent 0; a node the output does not depend on has ``None``.
    """
    base, n_const = graph.base, graph.n_const
    tangent: list = [0.0] * n_const + [float(t) for t in direction] + [None] * len(graph.ops)
    first, second = partials
    arg0, arg1 = graph.arg0, graph.arg1
    for k in range(len(graph.ops)):
        p = first[k]
        q = second[k]
        if p is None and q is None:
            continue  # dead node (a one-argument node always has its first partial)
        t = 0.0  # adding to +0.0 turns a product's -0.0 into 0.0, as the reverse sweep's sums do
        if p is not None:
            t += p * tangent[arg0[k]]
        if q is not None:
            t += q * tangent[arg1[k]]
        tangent[base + k] = t
    return tangent


def check_tangent(graph: Graph, values: list[float], tangent: list) -> None:
    """Raise a NumericalError naming the first node whose tangent is not finite, if any."""
    if all(tangent[out] is None or math.isfinite(tangent[out]) for out in graph.output_slots):
        return
    for s in range(graph.base, graph.n_slots):
        t = tangent[s]
        if t is not None and not math.isfinite(t):
            k, node = s - graph.base, graph.node_id(s)
            raise NumericalError(
                f"the derivative is not finite: the tangent of {node} = "
                f"{expression(graph, s)} is {t}", graph.spans[k], node=node, values=(t,))
    raise NumericalError("the derivative is not finite")
