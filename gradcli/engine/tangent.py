"""Forward mode: tangents, swept through the tape in order (Baydin et al. 2018, Table 2).

A tangent sweep carries, beside each node's value ``v``, its tangent ``v̇`` — the derivative of
``v`` along a chosen direction of the inputs: ``v̇ = Σ_k ∂v/∂arg_k · arg_k̇``. The partial
derivatives are the ones reverse mode multiplies by adjoints, evaluated once per node
(:func:`~gradcli.engine.partials.local_partials`) and reused by every sweep. One sweep gives one
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
from .partials import Partials, local_partials  # noqa: F401 - re-exported


def tangent_sweep(graph: Graph, partials: Partials, direction: Sequence[float]) -> list:
    """Tangents of every slot for the input tangents ``direction`` (graph order).

    Constants have tangent 0; a node the output does not depend on has ``None``. The same sweep
    runs on NumPy columns: partials of a block (the batch engine's namespace) and a column of
    tangents per input give each node's tangent column.
    """
    base, n_const = graph.base, graph.n_const
    tangent: list = [0.0] * n_const + [t * 1.0 for t in direction] + [None] * len(graph.ops)
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
