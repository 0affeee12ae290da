"""Plain records of an evaluation, for the trace tables, ``--json`` and LaTeX: the library
builds them, a view is handed them and returns text.

``build_trace`` names every slot as the tables do (inputs by name, ``v1``..``vk``, constants as
the numbers they are exactly: ``log(2)``, ``0.1``) and writes each node's operation in terms of its parents (``v4 = v1 + v2``). Rows are
built when first read, each once: a table of 40 rows out of 60,000 nodes builds about 40 (and
their local derivatives' formulas), ``--json`` builds them all.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from .engine.graph import Graph, expression, format_constant, spell
from .engine.partials import Partials, node_partials
from .engine.reverse import Contribution, Recorded, reverse
from .engine.rounding import compact

FEW = 1000  # rows a Rows keeps in a dict (a table cut to --max-rows reads fewer)


class Rows(Sequence):
    """A table's rows, each built by ``build(i)`` the first time it is read.

    ``named``: some row has names the program assigned; ``marked``: some row is an output;
    ``key``: the indices of the rows a shortened table always keeps (inputs and outputs; for
    contributions, those into an input, by input), ``last_key``: of those, the last one into
    each input. These are known without building a row.

    The first rows built are kept by index in a dict, not in a list of every row: the
    collector walks a young list whole, every row of it where a table shows 40. Past :data:`FEW` rows built (``--json``, ``--max-rows 0``) they move to a list,
    which holds a row in 8 bytes where a dict takes about 40."""

    __slots__ = ("_build", "_rows", "_n", "named", "marked", "key", "last_key")

    def __init__(self, n: int, build, named=False, marked=False, key=(), last_key=()):
        self._build, self._rows, self._n = build, {}, n
        self.named, self.marked, self.key, self.last_key = named, marked, key, last_key

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("row index out of range")
        rows = self._rows
        row = rows.get(i) if type(rows) is dict else rows[i]
        if row is None:
            row = self._build(i)
            if type(rows) is dict and len(rows) >= FEW:  # most rows will be read
                listed = [None] * self._n
                for k, built in rows.items():
                    listed[k] = built
                rows = self._rows = listed
            rows[i] = row
        return row

    def __iter__(self):
        return map(self.__getitem__, range(self._n))

    def __repr__(self) -> str:
        return f"Rows({list(self)!r})"


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
    outputs: tuple[str, ...] = ()  # with several outputs: the names of those this node is


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
    terms: Sequence[float]  # the contributions summed, in sweep order (empty for the output)
    names: tuple[str, ...] = ()


@dataclass(slots=True)
class Trace:
    forward: Rows  # of ForwardRow
    contributions: Rows  # of ContributionRow
    adjoints: Rows  # of AdjointRow, in sweep order: the output first, inputs last
    output: str
    seed: float = 1.0
    seeds: dict = field(default_factory=dict)  # a VJP's seeded ids -> their weights


def node_ids(graph: Graph):
    """``graph.node_id`` as the tables show ids: a constant as the number it is exactly, in
    canonical form (``log(2)``, ``(1/3)``, the ``0.1`` typed), made when first read."""
    texts: list[str] = []

    def node_id(slot: int) -> str:
        if slot >= graph.n_const:
            return graph.node_id(slot)
        if not texts:
            from .symbolic.printer import constant_texts
            texts.extend(constant_texts(graph))
        return texts[slot]
    return node_id


def forward_rows(graph: Graph, values: list) -> Rows:
    """One row per input and node, in tape order: id, operation, arguments, value, names."""
    node_id, labels = node_ids(graph), graph.labels
    n_const, base, n_inputs = graph.n_const, graph.base, len(graph.inputs)
    outputs: dict[int, tuple[str, ...]] = {}
    if graph.n_outputs > 1:
        for name, slot in zip(graph.output_names, graph.output_slots):
            outputs[slot] = outputs.get(slot, ()) + (name,)
    else:
        outputs[graph.output] = ()

    def build(i: int) -> ForwardRow:
        slot = n_const + i
        if i < n_inputs:
            name = graph.inputs[i]
            return ForwardRow(name, "input", (), name, values[slot], tuple(labels.get(slot, ())),
                              slot in outputs, outputs=outputs.get(slot, ()))
        k = slot - base
        return ForwardRow(node_id(slot), graph.ops[k].name, tuple(map(node_id, graph.args(k))),
                          expression(graph, slot, node_id), values[slot],
                          tuple(labels.get(slot, ())), slot in outputs,
                          substituted(graph, values, slot, node_id),
                          outputs=outputs.get(slot, ()))
    shown = [s - n_const for s in sorted(outputs) if s >= n_const]
    key = sorted(set(range(n_inputs)).union(shown))
    named = any(labels[s] for s in labels if s >= n_const)
    return Rows(n_inputs + len(graph.ops), build, named, bool(shown), key)


def _value_text(graph: Graph, values: list, slot: int, node_id) -> str:
    """An argument as the step shows it: a constant as written, a value in 12 significant digits."""
    if slot < graph.n_const:
        return node_id(slot)
    if hasattr(values[slot], "text"):  # a proven value: its proven digits
        return compact(values[slot])
    return format_constant(float(f"{values[slot]:.12g}"), named=False)


def substituted(graph: Graph, values: list, slot: int, node_id=None) -> str:
    """A node's operation with its arguments' values in place of their ids: ``log(2)``,
    ``0.69314718056 + 6``, ``2 * (-3)`` (a negative operand of an operator in parentheses);
    ``node_id`` writes a constant (:func:`node_ids`)."""
    k = slot - graph.base
    prim = graph.ops[k]
    node_id = node_id or node_ids(graph)
    args = [_value_text(graph, values, a, node_id) for a in graph.args(k)]
    if prim.symbol:
        args = [f"({a})" if a.startswith("-") else a for a in args]
        return f"{args[0]} {prim.symbol} {args[1]}" if len(args) == 2 else f"{prim.symbol}{args[0]}"
    return spell(prim, args)  # a call: log(2), and log(8, 2) for the log_base row


def local_formulas(graph: Graph, slot: int, names=None) -> list[str]:
    """A node's local derivatives by each argument as formulas in the node ids (``1/x``,
    ``cos(y)``, ``v2``), or in the arguments' ``names``: the rule table's rules, run on
    symbols instead of numbers."""
    from .symbolic.expr import constant_nodes, fresh_context, local_derivatives, symbol
    from .symbolic.printer import text
    k = slot - graph.base
    slots = graph.args(k)
    names = names or [graph.node_id(s) for s in slots]
    with fresh_context():
        constants = constant_nodes(graph) if min(slots) < graph.n_const else ()
        args = [constants[s] if s < graph.n_const else symbol(n) for s, n in zip(slots, names)]
        return [text(d) for d in local_derivatives(graph.ops[k], args)]


class Terms(Sequence):
    """An adjoint's contributions, each read from its record when wanted: the table shows the
    first eight of an input's thousands (a certified trace proves a number when it is read).
    Equal to any sequence of the same numbers."""

    __slots__ = ("_records", "_indices")

    def __init__(self, records, indices):
        # the edges' positions as given (a slice of an int32 array: an input's 4,000 are not
        # made into 4,000 ints to show eight)
        self._records, self._indices = records, indices

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, i):
        # only the contribution itself: neither its upstream nor its local partial is made
        if isinstance(i, slice):
            return tuple(map(self._records.contribution, self._indices[i]))
        return self._records.contribution(self._indices[i])

    def __eq__(self, other):
        if not isinstance(other, Sequence):
            return NotImplemented  # e.g. pytest.approx, which compares element by element
        return tuple(self) == tuple(other)

    __hash__ = None

    def __repr__(self) -> str:
        return repr(tuple(self))


def build_trace(graph: Graph, values: list[float], adjoint: list[float],
                records: Sequence[Contribution], seed: float = 1.0,
                forward: Rows | None = None) -> Trace:
    """The three tables' rows: forward values, contributions in sweep order, summed adjoints.

    ``records`` is a recorded sweep's contributions (:class:`~gradcli.engine.reverse.Recorded`,
    or a certified sweep's, whose ``raw`` is one): their slots are read without a number, and
    a row's numbers are made (and proven) only when the row is shown."""
    node_id, labels = node_ids(graph), graph.labels
    n_const, base = graph.n_const, graph.base
    forward = forward_rows(graph, values) if forward is None else forward

    formulas: dict[int, list[str]] = {}  # each shown node's, made once for its two rows

    def contribution(i: int) -> ContributionRow:
        r = records[i]
        s = r.source
        if s not in formulas:
            formulas[s] = local_formulas(graph, s)
        return ContributionRow(node_id(s), node_id(r.target),
                               f"{node_id(s)} = {expression(graph, s, node_id)}",
                               r.upstream, r.local, r.contribution, formulas[s][which[i]])
    edges = getattr(records, "raw", records)
    _, targets, which = edges.edges()
    # The edges by target, each target's in sweep order: an adjoint's terms, and the edges into
    # the inputs, are then a slice found by bisection.
    by_target = edges.by_target()

    def into(slot: int, end: int | None = None) -> list[int]:
        """The edges into the slots from ``slot`` up to ``end`` (default: ``slot`` alone)."""
        lo = bisect_left(by_target, slot, key=targets.__getitem__)
        hi = bisect_left(by_target, slot + 1 if end is None else end, lo,
                         key=targets.__getitem__)
        return by_target[lo:hi]
    inputs = into(n_const, base)  # by input: a table keeps them (in its own order) or not
    last = sorted(mine[-1] for mine in map(into, range(n_const, base)) if mine)
    contributions = Rows(len(targets), contribution, key=inputs, last_key=last)

    # the sweep's order, after the outputs it does not visit and before the inputs it does not
    visit = graph.visit_order()
    # of the slots asked about below (outputs, named ones), those the sweep visits: found by
    # one pass over the order, not a set of it
    seen = set(graph.output_slots).union(labels).intersection(visit)
    front: list[int] = []
    for out in reversed(graph.output_slots):
        if out not in seen and out >= n_const:
            front.insert(0, out)
            seen.add(out)
    back = [s for s in range(n_const, base) if s not in seen]
    n_front, n_visit = len(front), len(visit)  # the order: front, then visit, then back

    def adjoint_row(i: int) -> AdjointRow:
        s = (front[i] if i < n_front else visit[i - n_front] if i < n_front + n_visit
             else back[i - n_front - n_visit])
        return AdjointRow(node_id(s), adjoint[s], Terms(records, into(s)), tuple(labels.get(s, ())))
    # the output and the inputs: the sweep visits no input
    key = [i for i, s in enumerate(front) if s == graph.output or s < base]
    if graph.output >= base and graph.output not in front:
        key.append(len(front) + visit.index(graph.output))
    key += range(n_front + n_visit, n_front + n_visit + len(back))
    seen.update(back)
    named = any(labels[s] for s in labels if s in seen)
    adjoints = Rows(n_front + n_visit + len(back), adjoint_row, named, key=key)
    return Trace(forward, contributions, adjoints, node_id(graph.output), seed)


# -- the tangent trace: plain records for the table and --json ----------------------------------

@dataclass(frozen=True, slots=True)
class TangentRow:
    row: ForwardRow  # id, operation, arguments, value: as in the reverse-mode forward trace
    partials: tuple  # ∂v/∂argument for each argument; None for a constant argument
    tangents: tuple  # v̇ in each sweep; None when the output does not depend on the node


@dataclass(slots=True)
class TangentTrace:
    rows: Rows  # of TangentRow
    sweeps: list[str]  # what each sweep seeds: an input's name (gradient) or "direction"
    output: str


def tangent_trace(graph: Graph, values: list[float], partials: Partials,
                  sweeps: list[tuple[str, list]]) -> TangentTrace:
    """The tangent table's rows for the given ``(label, tangents)`` sweeps."""
    forward = forward_rows(graph, values)

    def build(i: int) -> TangentRow:
        slot = graph.n_const + i
        local = () if slot < graph.base else node_partials(graph, partials, slot - graph.base)
        return TangentRow(forward[i], local, tuple(t[slot] for _, t in sweeps))
    rows = Rows(len(forward), build, forward.named, forward.marked, forward.key)
    return TangentTrace(rows, [label for label, _ in sweeps], node_ids(graph)(graph.output))


# -- several outputs: a trace per sweep -----------------------------------------------------------

@dataclass(slots=True)
class JacobianTrace:
    """The forward evaluation once, then each sweep: ``sweeps`` pairs an output's name with its
    reverse sweep's :class:`Trace` (reverse mode); in forward mode ``tangents`` holds one
    :class:`TangentTrace` with a sweep per input."""

    forward: Rows
    mode: str
    sweeps: list[tuple[str, Trace]] = field(default_factory=list)
    tangents: TangentTrace | None = None
    outputs: dict[str, str] = field(default_factory=dict)  # output name -> its node's id


def jacobian_trace(graph: Graph, values: list[float], mode: str, inputs: list[str],
                   detail) -> JacobianTrace:
    """The records of a Jacobian's sweeps: ``detail`` is each output's ``(adjoints,
    contributions)`` (reverse: swept again, recorded, where they were not) or ``(partials,
    tangents per input)`` (forward)."""
    rows = forward_rows(graph, values)
    node_id = node_ids(graph)
    outputs = {name: node_id(s) for name, s in zip(graph.output_names, graph.output_slots)}
    if mode == "forward":
        partials, tangents = detail
        return JacobianTrace(rows, mode, tangents=tangent_trace(
            graph, values, partials, list(zip(inputs, tangents))), outputs=outputs)
    sweeps = []
    for i, name in enumerate(graph.output_names):
        one = graph.only(i)
        adjoint, records = detail[i]
        if not isinstance(records, Recorded):  # the sweep that gave the row did not record
            adjoint, records = reverse(one, values, record=True)
        sweeps.append((name, build_trace(one, values, adjoint, records, forward=rows)))
    return JacobianTrace(rows, mode, sweeps, outputs=outputs)


def product_trace(graph: Graph, values: list[float], kind: str, detail):
    """The one sweep of a product: a :class:`Trace` seeded on every output (``"vjp"``, detail
    ``(adjoints, weights)``) or a :class:`TangentTrace` along the direction (``"jvp"``)."""
    if kind == "jvp":
        partials, sweeps = detail
        return tangent_trace(graph, values, partials, sweeps)
    adjoint, weights, records = detail
    if not isinstance(records, Recorded):  # the product's sweep did not record
        adjoint, records = reverse(graph, values, record=True, cotangent=weights)
    trace = build_trace(graph, values, adjoint, records)
    node_id = node_ids(graph)
    for slot, w in zip(graph.output_slots, weights):
        trace.seeds[node_id(slot)] = trace.seeds.get(node_id(slot), 0.0) + w
    return trace
