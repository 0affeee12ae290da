"""The computational graph as plain records, for ``gradcli graph``: nodes, edges and layers.

:func:`build_picture` reads a :class:`~gradcli.engine.graph.Graph` (and, given a point's values,
their adjoints and the local partial derivatives) and gives a :class:`Picture` that every format draws
from: the terminal drawing (``drawing.py``), DOT and Mermaid (``diagrams.py``). Nodes carry the
trace tables' ids (inputs by name, ``v1``..``vk``) and their operation written with their
arguments' ids; constants appear inside those operations (``v1 + 1``), never as nodes.

>>> from gradcli.api import compile
>>> p = build_picture(compile("x*x"))
>>> [(p.nodes[e.source].id, p.nodes[e.target].id, e.position) for e in p.edges]
[('x', 'v1', 0), ('x', 'v1', 1)]
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ..engine.graph import Graph, expression
from ..engine.partials import Partials, node_partials
from .text import short_number


@dataclass(frozen=True, slots=True)
class Node:
    id: str  # the trace tables' id: an input's name, v1..vk (a constant output: its value)
    kind: str  # "input", "operation", "constant" (only a constant output) or "hidden"
    label: str  # "input", "log(x)", "v1 + 1"; a hidden node's is "…"
    layer: int  # depth: 0 for inputs, 1 + the deepest argument for an operation
    names: tuple[str, ...] = ()  # names the program assigned to this node (c, c#2)
    is_output: bool = False
    live: bool = True  # an output depends on it
    value: float | None = None  # with a point: the node's value ...
    adjoint: float | None = None  # ... and its adjoint (∂output/∂node)
    outputs: tuple[str, ...] = ()  # with several outputs: the names of those this node is
    shape: tuple | None = None  # an array operation's (value and adjoint: its elements)


@dataclass(frozen=True, slots=True)
class Edge:
    source: int  # index in Picture.nodes of the argument
    target: int  # index of the operation that reads it
    position: int  # which argument of the target it is: 0 or 1
    local: float | None = None  # with a point: ∂target/∂source there (the local derivative)


@dataclass(slots=True)
class Picture:
    """What a drawing shows. A node of kind ``hidden`` stands for one left out by the cap."""

    nodes: list[Node]  # in tape order: inputs, then v1..vk
    edges: list[Edge]  # by target in tape order, then argument position
    output: int  # index of the output node
    annotated: bool  # values, adjoints and local derivatives are known
    total: int  # inputs and operations in the whole graph
    left_out: int = 0  # of those, how many the cap left out

    def layers(self) -> list[list[int]]:
        """Node indices by layer, inputs first, the output's side last; empty layers skipped."""
        by_layer: dict[int, list[int]] = {}
        for i, node in enumerate(self.nodes):
            by_layer.setdefault(node.layer, []).append(i)
        return [by_layer[layer] for layer in sorted(by_layer)]

    def count(self, kind: str) -> int:
        return sum(1 for node in self.nodes if node.kind == kind)


def build_picture(graph: Graph, values: list[float] | None = None, max_nodes: int = 0,
                  adjoint: list[float] | None = None, partials: Partials | None = None) -> Picture:
    """The picture of ``graph``: annotated when ``values`` (a forward sweep), ``adjoint`` (the
    reverse sweep's) and ``partials`` (:func:`~gradcli.engine.partials.local_partials`, the
    edges' labels) are given; with ``max_nodes`` > 0, only that many inputs and operations, the
    ones nearest the output."""
    n_const, base = graph.n_const, graph.base
    total = graph.n_slots - n_const
    if 0 < max_nodes < total:
        starts = [s for s in dict.fromkeys(graph.output_slots) if s >= n_const]
        shown = set(_nearest(starts, lambda s: _args(graph, s) if s >= base else (),
                             range(graph.n_slots - 1, n_const - 1, -1), max_nodes))
    else:
        shown = set(range(n_const, graph.n_slots))
    # A hidden node stands for an argument left out; it sits one layer before its first user.
    hidden: dict[int, int] = {}
    for s in shown:
        if s >= base:
            for a in _args(graph, s):
                if a not in shown:
                    layer = graph.depth[s - base] - 1
                    hidden[a] = min(hidden.get(a, layer), layer)
    live = _live_slots(graph)
    slots = sorted(shown | hidden.keys())
    for out in dict.fromkeys(graph.output_slots):
        if out < n_const:  # a constant result: the only constants drawn as nodes
            slots.append(out)
    index = {s: i for i, s in enumerate(slots)}
    nodes = []
    for s in slots:
        if s in hidden:
            nodes.append(Node(graph.node_id(s), "hidden", "…", hidden[s], live=s in live))
        else:
            nodes.append(_node(graph, s, s in live, values, adjoint))
    edges = []
    for s in slots:
        if s >= base and s not in hidden:
            k = s - base
            local = node_partials(graph, partials, k) if partials is not None else (None, None)
            edges += [Edge(index[a], index[s], p, local[p])
                      for p, a in enumerate(graph.args(k)) if a >= n_const]
    return Picture(nodes, edges, index[graph.output], values is not None, total,
                   total - len(shown))


def _args(graph: Graph, slot: int) -> list[int]:
    """The arguments of a node that are inputs or nodes (constants are not)."""
    return [a for a in graph.args(slot - graph.base) if a >= graph.n_const]


def _nearest(starts: list, arguments, rest, limit: int) -> list:
    """``limit`` nodes (slots of a tape, ids of an array trace), breadth first from the
    outputs ``starts`` over their ``arguments``; when those run out, the others of ``rest``
    (the nodes from the end)."""
    order, seen, queue = [], set(starts), deque(starts)
    while queue and len(order) < limit:
        node = queue.popleft()
        order.append(node)
        for a in arguments(node):
            if a not in seen:
                seen.add(a)
                queue.append(a)
    for node in rest:
        if len(order) >= limit:
            break
        if node not in seen:
            order.append(node)
    return order


def _live_slots(graph: Graph) -> set[int]:
    """Slots of the output, and of the inputs and nodes it depends on."""
    base = graph.base
    live = {base + k for k, is_live in enumerate(graph.live_nodes()) if is_live}
    live |= {a for s in live for a in _args(graph, s)}
    live.update(graph.output_slots)
    return live


def _node(graph: Graph, s: int, live: bool, values, adjoint) -> Node:
    kind = graph.kind(s)
    if kind == "node":
        kind, label, layer = "operation", expression(graph, s), graph.depth[s - graph.base]
    else:
        label, layer = kind, 0
    outputs = ()
    if graph.n_outputs > 1:
        outputs = tuple(n for n, o in zip(graph.output_names, graph.output_slots) if o == s)
    return Node(graph.node_id(s), kind, label, layer, tuple(graph.labels.get(s, ())),
                s in graph.output_slots, live, None if values is None else values[s],
                None if adjoint is None else adjoint[s], outputs)


def node_lines(node: Node, digits: int) -> list[str]:
    """A node's text, line by line: its id (and assigned names), its operation, and with a
    point micrograd's ``data`` (the value) and ``grad`` (the adjoint)."""
    title = node.id + (f" ({', '.join(node.names)})" if node.names else "")
    if node.outputs:
        title += " → " + ", ".join(node.outputs)
    lines = [title, node.label]
    if node.shape is not None:  # an array operation: its shape, its arrays previewed
        from ..engine.arrays import shape_text
        from .arrays import preview
        lines.append(f"shape {shape_text(node.shape) if node.shape else 'scalar'}")

        def short(x):
            return short_number(x, digits)
        if node.value is not None:
            lines.append(f"data {preview(node.value, node.shape, 3, short)}".replace("\n", ""))
        if node.adjoint is not None:
            lines.append(f"grad {preview(node.adjoint, node.shape, 3, short)}".replace("\n", ""))
        return lines
    if node.value is not None:
        lines.append(f"data {short_number(node.value, digits)}")
    if node.adjoint is not None:
        lines.append(f"grad {short_number(node.adjoint, digits)}")
    return lines


def array_picture(trace, max_nodes: int = 0) -> Picture:
    """The graph of a program with array values (:class:`gradcli.arraytrace.ArrayTrace`): a
    node per input and array operation, with its shape (at a point, its value and adjoint as
    arrays), an edge per argument; the edges carry no number (a rule on arrays is a row of
    the --trace tables, not one derivative). With ``max_nodes`` > 0, only that many inputs and
    operations, those nearest the output, as :func:`build_picture` draws a scalar tape."""
    rows = trace.forward
    adjoints = {a.id: a.adjoint for a in trace.adjoints}
    layer: dict[str, int] = {}
    arguments: dict[str, list[int]] = {}  # an operation's argument positions that are drawn
    for row in rows:
        args = [a for a in row.args if a in layer] if row.kind != "input" else []
        layer[row.id] = 1 + max((layer[a] for a in args), default=-1)
        arguments[row.id] = [p for p, a in enumerate(row.args)
                             if row.kind != "input" and a in layer and a != row.id]
    output = next((row.id for row in rows if row.is_output), rows[-1].id if rows else None)
    shown = {row.id for row in rows}
    if 0 < max_nodes < len(rows):
        by_id = {row.id: row for row in rows}
        shown = set(_nearest([output], lambda r: [by_id[r].args[p] for p in arguments[r]],
                             [row.id for row in reversed(rows)], max_nodes))
    # A hidden node stands for an argument left out; it sits one layer before its first user.
    hidden: dict[str, int] = {}
    for row in rows:
        if row.id in shown:
            for p in arguments[row.id]:
                a = row.args[p]
                if a not in shown:
                    hidden[a] = min(hidden.get(a, layer[row.id] - 1), layer[row.id] - 1)
    kept = [row for row in rows if row.id in shown or row.id in hidden]
    index = {row.id: i for i, row in enumerate(kept)}
    nodes, edges = [], []
    for i, row in enumerate(kept):
        if row.id in hidden:
            nodes.append(Node(row.id, "hidden", "…", hidden[row.id]))
            continue
        nodes.append(Node(row.id, "input" if row.kind == "input" else "operation",
                          "input" if row.kind == "input" else row.expr, layer[row.id],
                          row.names, row.is_output, True, row.values, adjoints.get(row.id),
                          shape=row.shape))
        edges += [Edge(index[row.args[p]], i, p) for p in arguments[row.id]]
    return Picture(nodes, edges, index.get(output, len(nodes) - 1),
                   rows[0].values is not None if rows else False, len(rows),
                   len(rows) - len(shown))


def edge_text(edge: Edge, digits: int) -> str:
    """An edge's label: its local derivative, or nothing without a point."""
    return "" if edge.local is None else short_number(edge.local, digits)


def cap_note(picture: Picture) -> str | None:
    """What the cap left out, in a sentence, or None when the picture is complete."""
    if not picture.left_out:
        return None
    shown = picture.total - picture.left_out
    return (f"showing the {shown:,} nodes nearest the output, of {picture.total:,}; "
            "a node marked … stands for a part left out (--max-nodes 0 shows all)")
