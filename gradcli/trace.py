"""Plain records of a reverse-mode evaluation, for the trace tables and ``--json``.

``build_trace`` names every slot as the tables do (inputs by name, ``v1``..``vk``, constants by
value) and writes each node's operation in terms of its parents (``v4 = v1 + v2``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .graph import Graph
from .reverse import Contribution, visit_order


@dataclass(frozen=True, slots=True)
class ForwardRow:
    id: str
    op: str  # the primitive's name, or "input"
    args: tuple[str, ...]  # ids of the arguments (a constant's id is its value)
    expr: str  # "log(x)", "v1 + v2"; an input's expr is its name
    value: float
    names: tuple[str, ...] = ()  # names the program assigned to this node
    is_output: bool = False


@dataclass(frozen=True, slots=True)
class ContributionRow:
    source: str  # id of the node whose adjoint flows back
    target: str  # id of the argument receiving it
    equation: str  # "v5 = v4 - v3"
    upstream: float
    local: float
    contribution: float


@dataclass(frozen=True, slots=True)
class AdjointRow:
    id: str
    adjoint: float
    terms: tuple[float, ...]  # the contributions summed, in sweep order (empty for the output)
    names: tuple[str, ...] = ()


@dataclass(slots=True)
class Trace:
    forward: list[ForwardRow]
    contributions: list[ContributionRow]
    adjoints: list[AdjointRow]  # in sweep order: the output first, inputs last
    output: str
    seed: float = 1.0
    extras: dict = field(default_factory=dict)


def expression(graph: Graph, slot: int) -> str:
    """A node's operation written with its parents' ids: ``log(x)``, ``v1 + v2``, ``-v3``."""
    k = slot - graph.base
    prim = graph.ops[k]
    args = [graph.node_id(graph.arg0[k])]
    if graph.arg1[k] >= 0:
        args.append(graph.node_id(graph.arg1[k]))
    if prim.symbol and len(args) == 2:
        return f"{args[0]} {prim.symbol} {args[1]}"
    if prim.symbol:
        return f"{prim.symbol}{args[0]}"
    return f"{prim.name}({', '.join(args)})"


def forward_rows(graph: Graph, values: list) -> list[ForwardRow]:
    """One row per input and node, in tape order: id, operation, arguments, value, names."""
    node_id, labels = graph.node_id, graph.labels
    forward = []
    for i, name in enumerate(graph.inputs):
        slot = graph.n_const + i
        forward.append(ForwardRow(name, "input", (), name, values[slot],
                                  tuple(labels.get(slot, ())), slot == graph.output))
    for k, prim in enumerate(graph.ops):
        slot = graph.base + k
        args = (node_id(graph.arg0[k]),) + ((node_id(graph.arg1[k]),) if graph.arg1[k] >= 0 else ())
        forward.append(ForwardRow(node_id(slot), prim.name, args, expression(graph, slot),
                                  values[slot], tuple(labels.get(slot, ())),
                                  slot == graph.output))
    return forward


def build_trace(graph: Graph, values: list[float], adjoint: list[float],
                records: list[Contribution], seed: float = 1.0) -> Trace:
    """The three tables' rows: forward values, contributions in sweep order, summed adjoints."""
    node_id, labels = graph.node_id, graph.labels
    forward = forward_rows(graph, values)
    contributions = [
        ContributionRow(node_id(r.source), node_id(r.target),
                        f"{node_id(r.source)} = {expression(graph, r.source)}",
                        r.upstream, r.local, r.contribution)
        for r in records
    ]
    terms: dict[int, list[float]] = {}
    for r in records:
        terms.setdefault(r.target, []).append(r.contribution)
    order = [s for s in visit_order(graph)]
    if graph.output not in order and graph.output >= graph.n_const:
        order.insert(0, graph.output)
    seen = set(order)
    order += [graph.n_const + i for i in range(len(graph.inputs)) if graph.n_const + i not in seen]
    adjoints = [AdjointRow(node_id(s), adjoint[s], tuple(terms.get(s, ())),
                           tuple(labels.get(s, ()))) for s in order]
    output = node_id(graph.output)
    return Trace(forward, contributions, adjoints, output, seed)
