"""The trace of a program with array values, one row per array operation, as plain records.

The scalar tape computes an array program element by element (a node per element per
operation), and records each base operation's call (:attr:`gradcli.engine.graph.Graph.
array_calls`, and what it was called on, :attr:`~gradcli.engine.graph.Graph.array_operands`).
:func:`build_array_trace` groups the scalar trace's nodes by those calls: a row per input, per
call and per scalar node made outside any call (``mean``'s ``/ 3``), each with its shape and
its elements' values; then a rule row per operation and argument, autograd's vector-Jacobian
rule acting on arrays (``Xᵀ ḡ``; for a broadcast operand, the sum over the broadcast axes), with
its upstream adjoint ḡ and its contribution as arrays.

Every number is one the scalar trace proves: a value or an adjoint is a slot's; a contribution
element is the sum of the scalar edges from the operation's nodes into that element, proven as
one sum of balls (:meth:`gradcli.engine.traceproof.Contributions.total`). ``take`` and ``stack``
(indexing, transpose, literals) make no node: their rows are views of their argument's elements,
and their ḡ is what their users' rules give them.

>>> from gradcli import api
>>> result = api.evaluate(api.compile("sum(w^2)", {"w": (2,)}), {"w[0]": 1, "w[1]": 2},
...                       record=True)
>>> t = build_array_trace(result.graph, result.trace_values, *result.sweep)
>>> [(row.id, row.expr, row.shape) for row in t.forward]
[('w', 'input', (2,)), ('a1', 'w ^ 2', (2,)), ('a2', 'sum(a1)', ())]
>>> [(rule.target, rule.rule) for rule in t.rules]
[('a1', 'ḡ broadcast to (2,)'), ('w', 'ḡ·(2*w)')]
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

from .engine.arrays import element_names, shape_text
from .engine.graph import Graph, spell
from .engine.primitives import TABLE
# Rows: an array's numbers, row-major, each read (and proven) when first read
from .records import Rows, local_formulas

BAR = "g\u0304"  # ḡ, the upstream adjoint of an array operation (autograd's ``g``), with the
# combining macron the tables' v̄5 has (ASCII output: bar(g))
REDUCED = {"add": "sum", "mul": "prod", "max": "max", "min": "min"}


@dataclass(slots=True)
class ArrayRow:
    """One array operation (or input): ``id`` (``a3``, or an input's name), ``kind``
    (``input``, ``constant``, a base operation, or ``scalar`` for a node made outside any
    call), ``expr`` in the other rows' ids (``a1 - y``), ``source`` (the text it was read
    from), its ``shape`` and its elements' ``slots`` and ``values``."""

    id: str
    kind: str
    expr: str
    source: str
    shape: tuple
    slots: tuple
    values: Sequence = ()
    args: tuple = ()  # the argument rows' ids (a constant's: its text)
    names: tuple = ()  # names the program assigned to it
    is_output: bool = False
    members: tuple = ()  # the scalar nodes it made (outputs and intermediates), by slot
    parameter: object = None  # an elementwise call's row name, a reduction's (kind, axis)
    arg_shapes: tuple = ()


@dataclass(slots=True)
class RuleRow:
    """One local rule acting on arrays: operation ``source`` (``equation``: ``a1 = X @ w``) to
    its argument ``target``; ``upstream`` is ḡ (of the operation's shape), ``contribution`` of
    the argument's shape, None where it cannot be told apart by element (an argument whose
    elements repeat: ``--elements`` shows the scalar edges)."""

    source: str
    target: str
    equation: str
    rule: str
    upstream: Sequence | None
    upstream_shape: tuple
    contribution: Sequence | None
    shape: tuple
    edges: tuple = ()  # the scalar edges (positions in the sweep's records) it groups
    parts: tuple = ()  # the rule as parts (see rule_text), for views that write it otherwise


@dataclass(slots=True)
class AdjointArray:
    id: str
    shape: tuple
    adjoint: Sequence | None
    terms: tuple  # the operations whose rules gave it (or "seed")
    names: tuple = ()


class ScalarRows:
    """The scalar trace's rows of an array operation (``--elements``): its forward rows by
    slot, the contributions from its nodes or into its elements."""

    def __init__(self, trace, graph: Graph, records):
        self.trace, self.n_const = trace, graph.n_const
        self.forward = trace.forward
        edges = getattr(records, "raw", records)
        self._sources, self._targets, _ = edges.edges() if len(edges) else ((), (), ())

    def edges_from(self, slots) -> list[int]:
        mine = set(slots)
        return [e for e, s in enumerate(self._sources) if s in mine]

    def edges_into(self, slots) -> list[int]:
        mine = set(slots)
        return [e for e, s in enumerate(self._targets) if s in mine]


@dataclass(slots=True)
class ArrayTrace:
    forward: list  # of ArrayRow, in an order that evaluates them
    rules: list  # of RuleRow, in reverse order
    adjoints: list  # of AdjointArray, the output first, the inputs last
    output: str
    by_id: dict = field(default_factory=dict)  # row id -> ArrayRow (and its names)
    scalar: ScalarRows | None = None  # the scalar trace's rows, for --elements


ELEMENTS_ALL = 200  # --elements all expands at most this many scalar nodes


def chosen(trace: ArrayTrace, names) -> list[ArrayRow]:
    """The rows ``--elements`` names (a row's id, an input's or an assigned name, a scalar
    node's id such as ``v7``: the operation that made it, or ``all``); an unknown name is an InputError with the names it may have meant, and ``all``
    past :data:`ELEMENTS_ALL` scalar nodes is refused."""
    from difflib import get_close_matches

    from .errors import InputError
    out: list[ArrayRow] = []
    for name in names:
        if name == "all":
            n = sum(len(r.members or r.slots) for r in trace.forward)
            if n > ELEMENTS_ALL:
                raise InputError(f"--elements all would show {n:,} scalar rows, past the "
                                 f"{ELEMENTS_ALL} it expands",
                                 hint="name one array operation of the trace: --elements "
                                      f"{trace.forward[-1].id}")
            out += trace.forward
            continue
        row = trace.by_id.get(name)
        if row is None:
            close = get_close_matches(name, [r.id for r in trace.forward], n=3, cutoff=0.5)
            raise InputError(f"--elements {name}: the trace has no array operation or input "
                             f"{name}", hint=f"did you mean {' or '.join(close)}?" if close else
                             "the trace's node column names them (a1, a2, ..., the inputs), or "
                             "--elements all")
        out.append(row)
    return list({id(r): r for r in out}.values())


def has_array_values(graph: Graph) -> bool:
    """Whether the program computes with arrays (an array input, literal or result): its
    trace is by array operation. ``sum(x)`` of a scalar is a scalar program."""
    return bool(graph.arrays) or any(shape for _, shape, _, _ in graph.array_calls) or any(
        any(shapes) for _, _, shapes in graph.array_operands)


def _members(graph: Graph, outputs, stop: set[int]) -> list[int]:
    """The nodes an operation made: its outputs and the nodes behind them, back to its
    arguments' elements (``stop``), constants and inputs. Iterative."""
    base, seen, order = graph.base, set(), []
    todo = [s for s in outputs if s >= base and s not in stop]
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        order.append(s)
        for a in graph.args(s - base):
            if a >= base and a not in stop and a not in seen:
                todo.append(a)
    return sorted(order)


def _span_text(source: str, span) -> str:
    return source[span[0]:span[1]] if span else ""


def _number(records):
    """The sum of scalar edges' contributions: proven in one (a certified sweep), else the
    float64 sweep's sum."""
    prove = getattr(records, "total", None)
    if prove is not None:
        return lambda edges: prove(edges) if edges else 0.0
    return lambda edges: sum(records.contribution(i) for i in edges) if edges else 0.0


def build_array_trace(graph: Graph, values, adjoint, records, scalar=None,
                      node_id=None) -> ArrayTrace:
    """The array trace's rows (see the module's docstring) from the scalar trace's numbers:
    ``values`` and ``adjoint`` of every slot and the recorded sweep's ``records`` (all None: the
    rows alone, without numbers or rules); ``scalar``,
    the scalar trace (:func:`gradcli.records.build_trace`) whose rows ``--elements`` shows."""
    from .records import node_ids
    node_id = node_id or node_ids(graph)
    n_const, base, source = graph.n_const, graph.base, graph.source
    total = _number(records)

    # -- the rows: inputs, the calls, the scalar nodes made outside any call ----------------
    rows: list[ArrayRow] = []
    keyed: dict[tuple, int] = {}  # the slots of an array value -> its row
    operands: dict[int, list] = {}  # a row -> its arguments, each (slots, shape)

    def add(row: ArrayRow) -> int:
        rows.append(row)
        keyed[row.slots, row.shape] = len(rows) - 1
        return len(rows) - 1
    position = {name: n_const + i for i, name in enumerate(graph.inputs)}
    owned: set[str] = set()
    for name, shape in graph.arrays.items():
        elements = element_names(name, shape)
        owned.update(elements)
        add(ArrayRow(name, "input", "input", name, shape, tuple(position[e] for e in elements)))
    for name in graph.inputs:
        if name not in owned:
            add(ArrayRow(name, "input", "input", name, (), (position[name],)))
    calls = []  # (kind, shape, slots, span, parameter, args, members, the args' shapes)
    member_of: dict[int, int] = {}
    for (kind, shape, slots, span), (parameter, args, shapes) in zip(graph.array_calls,
                                                                      graph.array_operands):
        made: list[int] = []
        if kind in ("elementwise", "reduce", "matmul"):
            made = _members(graph, slots, {s for a in args for s in a})
            for s in made:
                member_of[s] = len(calls)
        calls.append((kind, shape, tuple(slots), span, parameter, args, tuple(made),
                      tuple(map(tuple, shapes))))
    # a row per scalar node made outside any call, then per call
    outside = [s for s in range(base, graph.n_slots) if s not in member_of]
    order_key: list[tuple] = [(0, i) for i in range(len(rows))]
    for s in outside:
        k = s - base
        operands[add(ArrayRow("", "scalar", "", _span_text(source, graph.spans[k]), (), (s,),
                              members=(s,)))] = [((a,), ()) for a in graph.args(k)]
        order_key.append((graph.depth[k], s))
    call_row: list[int | None] = []
    for kind, shape, slots, span, parameter, args, made, shapes in calls:
        if not made and (slots, shape) in keyed:  # no new number: the same array (a
            # view of the elements a row holds, the sum of one number)
            call_row.append(None)
            continue
        if kind != "stack" and made == () and all(s < n_const for s in slots):
            kind_shown = "constant"
        else:
            kind_shown = kind
        row = ArrayRow("", kind_shown, "", _span_text(source, span), shape, slots,
                       members=made, parameter=parameter)
        call_row.append(add(row))
        operands[call_row[-1]] = list(zip(map(tuple, args), shapes))
        depth = max((graph.depth[s - base] if s >= base else 0 for s in slots), default=0)
        order_key.append((depth, base + len(call_row)))

    # -- their arguments, each an earlier row (or a constant), and an order that evaluates --
    def argument(slots: tuple, shape: tuple):
        r = keyed.get((slots, shape))
        if r is not None:
            return r
        if len(slots) == 1 and slots[0] < n_const:
            return node_id(slots[0])  # a constant, as the tables write it
        return None
    arg_rows = [[argument(*a) for a in operands.get(i, ())] for i in range(len(rows))]
    users: list[list[int]] = [[] for _ in rows]
    needs = [0] * len(rows)
    for i, args in enumerate(arg_rows):
        for a in set(a for a in args if isinstance(a, int) and a != i):
            users[a].append(i)
            needs[i] += 1
    heap = [(order_key[i], i) for i in range(len(rows)) if needs[i] == 0]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        _, i = heapq.heappop(heap)
        order.append(i)
        for u in users[i]:
            needs[u] -= 1
            if needs[u] == 0:
                heapq.heappush(heap, (order_key[u], u))
    k = 0
    for i in order:
        if rows[i].kind != "input":
            k += 1
            rows[i].id = f"a{k}"

    def name(a) -> str:
        return rows[a].id if isinstance(a, int) else (a or "…")

    output_slots = set(graph.output_slots)
    labels = graph.labels
    for i in order:
        row = rows[i]
        args = arg_rows[i]
        row.values = None if values is None else Rows(
            len(row.slots), lambda j, slots=row.slots: values[slots[j]])
        row.is_output = bool(output_slots.intersection(row.slots)) and (
            len(row.slots) == 1 or row.kind != "input")
        row.names = tuple(dict.fromkeys(n.partition("[")[0] for s in row.slots[:1]
                                        for n in labels.get(s, ())))
        if row.kind == "input":
            continue
        if row.kind == "scalar":
            prim = graph.ops[row.slots[0] - base]
            row.expr = spell(prim, [_operand(name(a), prim) for a in args])
            row.args = tuple(name(a) for a in args)
            row.arg_shapes = tuple(() for a in args)
            continue
        kind, parameter = row.kind, row.parameter
        row.args = tuple(name(a) for a in args)
        if kind == "take" and isinstance(args[0], int) and rows[args[0]].slots == row.slots:
            row.expr = f"{row.args[0]} as {shape_text(row.shape)}"  # NumPy's keepdims, a reshape
            row.arg_shapes = (rows[args[0]].shape,)
            continue
        row.arg_shapes = tuple(rows[a].shape if isinstance(a, int) else () for a in args)
        row.expr = _call_text(kind, parameter, row.args, row.source)

    forward = [rows[i] for i in order]
    if records is None:  # the structure alone (gradcli graph without a point)
        return ArrayTrace(forward, [], [], next((r.id for r in forward if r.is_output), ""),
                          {r.id: r for r in forward})

    # -- the reverse sweep: each rule's edges, per argument element -------------------------
    edges = getattr(records, "raw", records)
    sources, targets, which = edges.edges() if len(edges) else ((), (), ())
    row_of = {s: keyed[(s,), ()] for s in outside}
    for i, c in enumerate(calls):
        if call_row[i] is not None:
            for s in c[6]:
                row_of[s] = call_row[i]
    from_row: dict[int, list[int]] = {}
    for e, s in enumerate(sources):
        r = row_of.get(s)
        if r is not None:
            from_row.setdefault(r, []).append(e)

    # ḡ of each row, element by element: a slot's adjoint (a node's or an input's: every use
    # of its elements goes through it), or for a view, the edges its users' rules give it
    upstream_edges: dict[int, list[list[int]] | None] = {}
    rules: list[RuleRow] = []
    given: dict[int, list[str]] = {}  # row -> the operations whose rules feed its adjoint
    for i in reversed(order):
        row = rows[i]
        if row.kind in ("input", "constant"):
            continue
        args = arg_rows[i]
        view = row.kind in ("take", "stack")
        if view:
            grads = upstream_edges.get(i)
            if grads is None and i not in upstream_edges:
                continue  # nothing reads it: no adjoint flows
        for p, a in enumerate(args):
            if not isinstance(a, int) or all(s < n_const for s in rows[a].slots):
                continue  # a constant (a literal of constants too): no adjoint flows to it
            target = rows[a]
            if view:
                contribution = _view_edges(row, target, p, args, upstream_edges.get(i))
            else:
                contribution = _rule_edges(row, target, p, args, from_row.get(i, ()), sources,
                                           targets, which)
            if contribution is None and not _active_any(target, adjoint):
                continue
            if contribution is not None and not any(contribution):
                continue  # no edge: the argument does not depend on a differentiated input
            if row.id not in given.setdefault(a, []):
                given[a].append(row.id)
            if rows[a].kind in ("take", "stack"):
                mine = upstream_edges.setdefault(a, [[] for _ in target.slots])
                if mine is not None and contribution is not None:
                    for j, es in enumerate(contribution):
                        mine[j].extend(es)
                else:
                    upstream_edges[a] = None
            rules.append(RuleRow(
                row.id, target.id, f"{row.id} = {row.expr}",
                rule_text(parts := _rule_parts(row, target, p, graph)),
                _upstream(row, i, view, upstream_edges, adjoint, total), row.shape,
                None if contribution is None else Rows(
                    len(contribution), lambda j, es=contribution: total(es[j])),
                target.shape, tuple(e for es in (contribution or ()) for e in es),
                tuple(parts)))

    adjoints = []
    for i in reversed(order):
        row = rows[i]
        if row.kind == "constant":
            continue
        if row.is_output:
            terms = ("seed",)
        elif i in given:
            terms = tuple(given[i])
        else:
            continue  # no adjoint flows to it
        g = _upstream(row, i, row.kind in ("take", "stack"), upstream_edges, adjoint, total)
        adjoints.append(AdjointArray(row.id, row.shape, g, terms, row.names))
    rank = {row.id: i for i, row in enumerate(rows)}  # the inputs last, in input order
    inputs = [a for a in adjoints if rows[rank[a.id]].kind == "input"]
    adjoints = [a for a in adjoints if rows[rank[a.id]].kind != "input"] + sorted(
        inputs, key=lambda a: rank[a.id])
    forward = [rows[i] for i in order]
    out = next((r.id for r in forward if r.is_output), node_id(graph.output))
    by_id = {r.id: r for r in forward}
    for r in forward:
        for n in r.names:
            by_id.setdefault(n, r)
    for r in forward:  # a scalar node's id (v7) names the operation that made it
        for s in r.members:
            by_id.setdefault(graph.node_id(s), r)
    return ArrayTrace(forward, rules, adjoints, out, by_id,
                      None if scalar is None else ScalarRows(scalar, graph, records))


def _active_any(row: ArrayRow, adjoint) -> bool:
    return any(adjoint[s] is not None for s in row.slots[:1])


def _operand(text: str, prim) -> str:
    """An operand as an operator's argument: a negative constant in parentheses."""
    return f"({text})" if prim.symbol and text.startswith("-") else text


def _call_text(kind: str, parameter, args: tuple, source: str) -> str:
    """A call written with its arguments' ids: ``a1 - y``, ``X @ w``, ``sum(a3, axis=0)``; a
    view (indexing, transpose, a literal) as the source wrote it."""
    if kind == "elementwise":
        prim = TABLE[parameter]
        return spell(prim, [_operand(a, prim) for a in args])
    if kind == "reduce":
        what, axis = parameter
        return f"{REDUCED[what]}({args[0]}" + ("" if axis is None else f", axis={axis}") + ")"
    if kind == "matmul":
        return f"{args[0]} @ {args[1]}"
    if kind == "take" and args:  # indexing and transpose on the argument's id
        if source.endswith("]"):
            depth = 0
            for k in range(len(source) - 1, -1, -1):
                depth += (source[k] == "]") - (source[k] == "[")
                if depth == 0:
                    return args[0] + source[k:]
        if source.endswith("'"):
            return f"{args[0]}'"
        if source.startswith("transpose("):
            return f"transpose({args[0]})"
    return source  # a literal, a constant, or a reshaping inside a function: as written


def _positions(slots: tuple) -> dict[int, int] | None:
    """slot -> its position in an argument, or None when an element repeats."""
    where = {}
    for j, s in enumerate(slots):
        if s in where:
            return None
        where[s] = j
    return where


def _rule_edges(row, target, p, args, mine, sources, targets, which):
    """For each element of argument ``p``, the scalar edges from the operation's nodes into it
    (None when the argument's elements repeat)."""
    where = _positions(target.slots)
    if where is None:
        return None
    # both arguments the same array (x * x): an edge's argument position tells them apart
    by_which = row.kind in ("elementwise", "matmul", "scalar") and sum(
        1 for a in args if a == args[p]) > 1
    out: list[list[int]] = [[] for _ in target.slots]
    for e in mine:
        j = where.get(targets[e])
        if j is not None and (not by_which or which[e] == p):
            out[j].append(e)
    return out


def _view_edges(row, target, p, args, grads):
    """A view's contribution to its argument: its ḡ put back where each element came from
    (take: a scatter-add; stack: item ``p``'s part)."""
    if grads is None:
        return None
    out: list[list[int]] = [[] for _ in target.slots]
    if row.kind == "stack":
        n = len(target.slots)  # every item has the first one's shape
        offset = p * n
        for j in range(n):
            out[j].extend(grads[offset + j])
        return out
    where = _positions(target.slots)
    if where is None:
        return None
    for i, s in enumerate(row.slots):
        out[where[s]].extend(grads[i])
    return out


def _upstream(row, i, view, upstream_edges, adjoint, total):
    if view:
        grads = upstream_edges.get(i)
        if grads is None:
            return None
        return Rows(len(grads), lambda j: total(grads[j]))
    return Rows(len(row.slots), lambda j, slots=row.slots: adjoint[slots[j]])


# -- the rules, written out ----------------------------------------------------------------------

# A rule is a list of parts, so that each view writes it its way (text: ``Xᵀ ḡ``; LaTeX:
# ``X^{\top} \bar{g}``): ("g",) the upstream adjoint, ("T",) a transpose, ("dot",) a product,
# ("name", id) a row's id, ("formula", f) a local derivative in gradcli's syntax, ("text", s).
G, TRANSPOSED, TIMES = ("g",), ("T",), ("dot",)


def _words(s: str) -> tuple:
    return ("text", s)


def rule_text(parts, marks=(BAR, "ᵀ", "·"), name=str, formula=str, words=str,
              brackets=("(", ")")) -> str:
    """A rule's parts as the tables print it: ``sum over axis 0 of ḡ·1``, ``Xᵀ ḡ``; another
    view gives its own ``marks`` (upstream, transpose, product), spellings and ``brackets``."""
    spelled = dict(zip(("g", "T", "dot"), marks))
    out = []
    for kind, *value in parts:
        if kind == "formula":
            f = formula(value[0])
            out.append(brackets[0] + f + brackets[1] if bracketed(value[0]) else f)
        else:
            out.append(spelled.get(kind) or (name if kind == "name" else words)(value[0]))
    return "".join(out)


def bracketed(formula: str) -> bool:
    """Whether a local derivative is written in parentheses after ``ḡ·``: one with an
    operator (``ḡ·(2*a2)``), not a name or a number (``ḡ·w``, ``ḡ·1``)."""
    bare = formula.replace("_", "").replace(".", "").replace("[", "").replace("]", "")
    return not bare.isalnum()


def _times(formula: str) -> list:
    """``ḡ·formula``: the upstream times a local derivative."""
    return [G, TIMES, ("formula", formula)]


def broadcast_axes(own: tuple, shape: tuple) -> list[int]:
    """The axes of ``shape`` an operand of shape ``own`` was stretched along (NumPy's rule)."""
    lead = len(shape) - len(own)
    return list(range(lead)) + [lead + k for k, d in enumerate(own)
                                if d == 1 and shape[lead + k] != 1]


def _summed(parts: list, own: tuple, shape: tuple) -> list:
    """autograd's ``unbroadcast``: the rule summed over the axes the operand was stretched
    along, written out."""
    axes = broadcast_axes(own, shape)
    if not axes:
        return parts
    if not own or len(axes) == len(shape):
        return [_words("sum of ")] + parts
    which = " and ".join(map(str, axes))
    return [_words(f"sum over axis{'es' if len(axes) > 1 else ''} {which} of ")] + parts


def _rule_parts(row, target, p, graph) -> list:
    """The rule of ``row`` by its argument ``p`` (``target``), written out on arrays."""
    kind = row.kind
    if kind in ("elementwise", "scalar"):
        slot = row.slots[0] if kind == "scalar" else next(
            (s for s in row.members if s in set(row.slots)), None)
        formula = local_formulas(graph, slot, row.args)[p] if slot is not None else "?"
        return _summed(_times(formula), target.shape, row.shape)
    if kind == "reduce":
        what, axis = row.parameter
        along = "" if axis is None else f" along axis {axis}"
        if what == "add":
            return [G, _words(f" broadcast{along} to {shape_text(target.shape)}")]
        if what == "mul":
            return [G, TIMES, _words("(product of the other elements), broadcast")]
        return [G, _words(f" to the {'largest' if what == 'max' else 'smallest'} element "
                          "(a tie: shared), 0 elsewhere")]
    if kind == "matmul":
        a, b = row.args
        return _matmul_rule(p, a, b, *row.arg_shapes)
    if kind == "take":
        if row.slots == target.slots:
            return [G, _words(f" as {shape_text(target.shape)}")]
        if len(row.slots) == 1:
            return [G, _words(" at its element, 0 elsewhere")]
        if _is_transpose(row.slots, target.slots, target.shape):
            return [G, TRANSPOSED]
        return [G, _words(" put back where each element was taken (a scatter-add)")]
    if kind == "stack":
        return [G, _words(f"[{p}]")]
    return [_words("?")]




def _matmul_rule(p: int, a: str, b: str, sa: tuple, sb: tuple) -> list:
    """``a @ b``'s rule by ``a`` (p 0) or ``b``: products with the other operand, transposed
    where NumPy's shapes need it (autograd's ``matmul`` rules)."""
    A, B, space = ("name", a), ("name", b), _words(" ")
    if len(sa) == 1 and len(sb) == 1:  # the inner product
        return [G, TIMES, B] if p == 0 else [G, TIMES, A]
    if len(sa) == 1:  # vector @ matrix: ḡ is a vector of sb[1]
        return [B, space, G] if p == 0 else [_words("outer("), A, _words(", "), G, _words(")")]
    if len(sb) == 1:  # matrix @ vector: ḡ is a vector of sa[0]
        return ([_words("outer("), G, _words(", "), B, _words(")")] if p == 0
                else [A, TRANSPOSED, space, G])
    return [G, space, B, TRANSPOSED] if p == 0 else [A, TRANSPOSED, space, G]


def _is_transpose(slots: tuple, of: tuple, shape: tuple) -> bool:
    if len(shape) != 2:
        return False
    n, m = shape
    return list(slots) == [of[i * m + j] for j in range(m) for i in range(n)]


