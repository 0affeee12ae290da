"""Plain records of a reverse-mode evaluation, for the trace tables and ``--json``.

``build_trace`` names every slot as the tables do (inputs by name, ``v1``..``vk``, constants by
value) and writes each node's operation in terms of its parents (``v4 = v1 + v2``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.graph import Graph, expression, format_constant
from ..engine.reverse import Contribution, visit_order
from ..symbolic.expr import fresh_context, local_derivatives, number, symbol, text


@dataclass(frozen=True, slots=True)
class ForwardRow:
    id: str
    op: str  # the primitive's name, or "input"
    args: tuple[str, ...]  # ids of the arguments (a constant's id is its value)
    expr: str  # "log(x)", "v1 + v2"; an input's expr is its name
    value: float
    names: tuple[str, ...] = ()  # names the program assigned to this node
    is_output: bool = False
    step: str = ""  # the operation with its arguments' values substituted: "log(2)", "2 * 3"


@dataclass(frozen=True, slots=True)
class ContributionRow:
    source: str  # id of the node whose adjoint flows back
    target: str  # id of the argument receiving it
    equation: str  # "v5 = v4 - v3"
    upstream: float
    local: float
    contribution: float
    local_expr: str = ""  # the local derivative as a formula, from the rule table: "1/x"


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
                                  slot == graph.output, substituted(graph, values, slot)))
    return forward


def _value_text(graph: Graph, values: list, slot: int) -> str:
    """An argument as the step shows it: a constant as written, a value in 12 significant digits."""
    if slot < graph.n_const:
        return graph.node_id(slot)
    return format_constant(float(f"{values[slot]:.12g}"), named=False)


def substituted(graph: Graph, values: list, slot: int) -> str:
    """A node's operation with its arguments' values in place of their ids: ``log(2)``,
    ``0.69314718056 + 6``, ``2 * (-3)`` (a negative operand of an operator in parentheses)."""
    k = slot - graph.base
    prim = graph.ops[k]
    args = [_value_text(graph, values, a) for a in (graph.arg0[k], graph.arg1[k]) if a >= 0]
    if prim.symbol:
        args = [f"({a})" if a.startswith("-") else a for a in args]
        return f"{args[0]} {prim.symbol} {args[1]}" if len(args) == 2 else f"{prim.symbol}{args[0]}"
    return f"{prim.name}({', '.join(args)})"


def local_formulas(graph: Graph, records: list[Contribution]) -> list[str]:
    """Each record's local derivative as a formula in the node ids (``1/x``, ``cos(y)``, ``v2``):
    the rule table's rule for that argument, run on symbols instead of numbers."""
    base, n_const = graph.base, graph.n_const
    formulas, first = [], set()
    with fresh_context():
        def operand(s):
            if s < n_const:
                name = graph.node_id(s)
                return symbol(name) if name in ("pi", "e") else number(graph.constants[s])
            return symbol(graph.node_id(s))
        for r in records:
            k = r.source - base
            a, b = graph.arg0[k], graph.arg1[k]
            if b < 0 or (r.target == a and (a != b or r.source not in first)):
                index = 0
            else:
                index = 1
            first.add(r.source)
            args = [operand(a)] + ([operand(b)] if b >= 0 else [])
            formulas.append(text(local_derivatives(graph.ops[k], args)[index]))
    return formulas


def build_trace(graph: Graph, values: list[float], adjoint: list[float],
                records: list[Contribution], seed: float = 1.0) -> Trace:
    """The three tables' rows: forward values, contributions in sweep order, summed adjoints."""
    node_id, labels = graph.node_id, graph.labels
    forward = forward_rows(graph, values)
    contributions = [
        ContributionRow(node_id(r.source), node_id(r.target),
                        f"{node_id(r.source)} = {expression(graph, r.source)}",
                        r.upstream, r.local, r.contribution, formula)
        for r, formula in zip(records, local_formulas(graph, records))
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


# -- the tangent trace: plain records for the table and --json ----------------------------------

@dataclass(frozen=True, slots=True)
class TangentRow:
    row: ForwardRow  # id, operation, arguments, value: as in the reverse-mode forward trace
    partials: tuple  # ∂v/∂argument for each argument; None for a constant argument
    tangents: tuple  # v̇ in each sweep; None when the output does not depend on the node


@dataclass(slots=True)
class TangentTrace:
    rows: list[TangentRow]
    sweeps: list[str]  # what each sweep seeds: an input's name (gradient) or "direction"
    output: str


def tangent_trace(graph: Graph, values: list[float], partials,
                  sweeps: list[tuple[str, list]]) -> TangentTrace:
    """The tangent table's rows for the given ``(label, tangents)`` sweeps."""
    first, second = partials
    rows = []
    for i, row in enumerate(forward_rows(graph, values)):
        slot = graph.n_const + i
        if slot < graph.base:
            local: tuple = ()
        else:
            k = slot - graph.base
            local = (first[k],) + ((second[k],) if graph.arg1[k] >= 0 else ())
        rows.append(TangentRow(row, local, tuple(t[slot] for _, t in sweeps)))
    return TangentTrace(rows, [label for label, _ in sweeps], graph.node_id(graph.output))
