"""The columns and cells of each result table, once, for the terminal and for LaTeX.

Each function here takes records (a trace, a check, a Hessian) and a notation, and gives a
:class:`Table`: its columns and a function from a record to its cells. The notation says how a
number, a node, a formula or a word is written: :class:`Plain` for the terminal (styled cells),
:class:`gradcli.views.latex.Tex` for ``--export FILE.tex`` (math). :mod:`gradcli.views.tables`
lays a table out with its rows limited for the screen; :mod:`gradcli.views.latex` writes it as
booktabs. So a new column is one edit here, and both views show it.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple, Sequence

from .notation import adjoint, operation_adjoint, tangent
from .text import format_number

MOST_TERMS = 8  # an adjoint's sum on the screen: its first terms, then "+ …"


class Column(NamedTuple):  # not a slotted dataclass: cheaper to build at import (start-up)
    header: str
    justify: str = "left"  # "right": numbers (never broken; LaTeX's "r")
    kind: str | None = None  # the terminal's kind of text (:class:`gradcli.views.layout.Column`)
    tex: str | None = None  # the LaTeX header, where it is not ``header`` escaped
    math: bool = True  # LaTeX: the cells are math
    screen: bool = False  # on the terminal only (names, output marks, float64 digits, rules)


class Table(NamedTuple):
    title: str
    columns: list
    cells: Callable  # a record -> its cells, one per column (made only for the rows shown)
    rows: Sequence  # the records
    keep: Sequence = ()  # the rows a shortened table still shows (the output, the inputs)


def error_text(x: float) -> str:
    """A small error as ``2.3e-11`` (``0`` when exact, ``?`` when unknown)."""
    if not math.isfinite(x):
        return "?"
    return "0" if x == 0 else f"{x:.1e}"


class Plain:
    """The terminal's notation: numbers to ``digits``, node ids in cyan, formulas as printed."""

    most_terms = MOST_TERMS
    blank = "—"  # no tangent flows
    repeats = "its elements repeat: --elements shows them"
    name = formula = array_formula = word = staticmethod(str)
    node = staticmethod(lambda node_id: (node_id, "cyan"))
    bar = staticmethod(lambda node_id: (adjoint(node_id), "cyan"))
    array_bar = staticmethod(lambda node_id: (operation_adjoint(node_id), "cyan"))
    error = staticmethod(error_text)
    status = staticmethod({"agree": ("ok", "green"), "disagree": ("FAIL", "bold red"),
                           "inconclusive": ("inconclusive", "yellow")}.get)
    rule = staticmethod(lambda rule: rule.rule)

    def __init__(self, digits: int):
        self.digits = digits

    def number(self, value: float) -> str:
        return format_number(value, self.digits)

    def array(self, values, shape: tuple) -> str:
        from .arrays import preview
        return preview(values, shape)


def _node_columns(named: bool, marked: bool, *columns: Column) -> list:
    """A row per node: its id, (``named``) the names the program gave it, the ``columns``, and
    (``marked``) which output it is."""
    return [Column("node"), *([Column("name", screen=True)] if named else []), *columns,
            *([Column("", kind="label", screen=True)] if marked else [])]


def _node_cells(n, row, named: bool, marked: bool, *cells) -> list:
    return [n.node(row.id), *([", ".join(row.names)] if named else []), *cells,
            *([_output_mark(row)] if marked else [])]


def _output_mark(row):
    """``← output``, or with several outputs ``← f1`` (the names of the outputs it is)."""
    if not row.is_output:
        return ""
    outputs = getattr(row, "outputs", ())  # an array operation's: one output
    return ("← " + (", ".join(outputs) if outputs else "output"), "bold green")


def _operation(n, row, step: bool = True) -> str:
    """``v3 = v1 * v2 = 2 * 3`` (``step``: with the arguments' values), or ``input``."""
    if row.op == "input":
        return n.word("input")
    return " = ".join([n.name(row.id), n.formula(row.expr)] +
                      ([n.formula(row.step)] if step and row.step else []))


def forward(rows, n, title: str = "Forward evaluation trace") -> Table:
    """Forward evaluation trace: inputs, then v1..vk with their operation and value (and, for
    the trace's :class:`gradcli.records.Rows`, the names the program gave them and the
    output)."""
    named, marked = getattr(rows, "named", False), getattr(rows, "marked", False)
    return Table(title, _node_columns(
        named, marked, Column("operation"), Column("value", "right")),
        lambda row: _node_cells(n, row, named, marked, _operation(n, row), n.number(row.value)),
        rows, getattr(rows, "key", ()))


def contributions(rows, n, title: str = "Reverse sweep (contributions)", keep=()) -> Table:
    """Reverse sweep: one row per edge: the edge, its upstream adjoint, local derivative and
    their product."""
    def cells(row):
        node, _, equation = row.equation.partition(" = ")
        return [f"{n.name(node)} = {n.formula(equation)}", n.node(row.target),
                n.number(row.upstream), _formula(n, row.local_expr, n.number(row.local)),
                n.number(row.contribution)]
    return Table(title, [Column("from"), Column("to"), Column("upstream adjoint", "right"),
                         Column("local derivative", "right", "text"),
                         Column("contribution", "right")], cells, rows, keep)


def _formula(n, formula: str, value: str) -> str:
    """``1/x = 0.5``: a formula beside its value (a number alone when the formula is one)."""
    try:
        float(formula)
        return value
    except ValueError:
        return f"{n.formula(formula)} = {value}" if formula else value


def adjoints(trace, n, title: str = "Adjoints") -> Table:
    """Adjoints: every node's total, with the sum of contributions that produced it."""
    named, seeds, most = trace.adjoints.named, trace.seeds, n.most_terms

    def how(row) -> str:
        terms = row.terms if most is None else row.terms[:most]
        more = " + …" if most is not None and len(row.terms) > most else ""
        if row.id in seeds:  # a vector-Jacobian product seeds every output with its weight
            return f"{n.word('seed')} {n.number(seeds[row.id])}" + (
                " + " + _sum(n, list(terms)) if row.terms else "")
        if row.id == trace.output and not row.terms:
            return n.word("seed")
        if row.terms:
            return _sum(n, list(terms)) + more
        return n.word("(no path to the output)")
    return Table(title, _node_columns(named, False, Column("adjoint", "right"),
                                      Column("sum of contributions")),
                 lambda row: [n.bar(row.id), *([", ".join(row.names)] if named else []),
                              n.number(row.adjoint), how(row)], trace.adjoints, trace.adjoints.key)


def _sum(n, terms: list) -> str:
    """``0.5 + 3`` or ``2 - 0.25``: contributions as a sum, signs folded into the operators."""
    text = n.number(terms[0])
    for t in terms[1:]:
        text += (" - " if t < 0 else " + ") + n.number(abs(t))
    return text


def tangents(trace, n) -> Table:
    """Forward-mode trace (Baydin et al. 2018, Table 2): each node's value and tangent v̇ in
    every sweep."""
    rows = trace.rows
    named, marked = rows.named, rows.marked
    if trace.sweeps == ["direction"]:
        sweeps = [Column("tangent v̇", "right", tex="tangent (direction)")]
    else:
        sweeps = [Column(f"v̇ ({tangent(s)} = 1)", "right", tex=f"tangent ({s})")
                  for s in trace.sweeps]

    def cells(r):
        row = r.row
        rule = "seed" if row.op == "input" else tangent_rule(r, n.digits)
        return _node_cells(n, row, named, marked, _operation(n, row, step=False),
                           n.number(row.value), rule,
                           *[n.blank if t is None else n.number(t) for t in r.tangents])
    return Table("Forward-mode tangent trace", _node_columns(
        named, marked, Column("operation"), Column("value", "right"),
        Column("tangent rule", screen=True), *sweeps), cells, rows, rows.key)


def tangent_rule(row, digits: int) -> str:
    """``v̇2 = 5·ẋ + 2·ẏ``: the tangent as the sum of local partial × argument tangent."""
    terms = []
    for arg, partial in zip(row.row.args, row.partials):
        if partial is None:
            continue  # a constant argument: its tangent is 0
        magnitude = abs(partial)
        coefficient = "" if magnitude == 1 else f"{magnitude:.{max(digits, 1)}g}·"
        terms.append(("-" if partial < 0 else "+", coefficient + tangent(arg)))
    if not terms:
        return "(no path to the output)"
    text = ("-" if terms[0][0] == "-" else "") + terms[0][1]
    for sign, term in terms[1:]:
        text += f" {sign} {term}"
    return f"{tangent(row.row.id)} = {text}"


def array_forward(trace, n) -> Table:
    """A program with array values (:mod:`gradcli.arraytrace`): the forward trace, one row per
    array operation, each array previewed (a long axis elided with the count)."""
    rows = trace.forward
    named, marked = any(row.names for row in rows), any(row.is_output for row in rows)

    def cells(row):
        operation = (n.word("input") if row.kind == "input" else
                     f"{n.name(row.id)} = {n.array_formula(row.expr)}")
        return _node_cells(n, row, named, marked, operation, shape_text(row.shape),
                           n.array(row.values, row.shape))
    return Table("Forward evaluation trace (array operations)", _node_columns(
        named, marked, Column("operation"), Column("shape", math=False), Column("value")),
        cells, rows, [i for i, row in enumerate(rows) if row.kind == "input" or row.is_output])


def array_rules(trace, n) -> Table:
    """The reverse sweep's rules on arrays, one row per rule."""
    def cells(r):
        return [f"{n.name(r.source)} = {n.array_formula(r.equation.partition(' = ')[2])}",
                n.node(r.target), n.array(r.upstream, r.upstream_shape), n.rule(r),
                n.array(r.contribution, r.shape) if r.contribution is not None
                else n.word(n.repeats)]
    inputs = _inputs(trace)
    return Table("Reverse sweep (rules on arrays)", [
        Column("from"), Column("to"), Column("upstream adjoint g\u0304", tex="upstream adjoint"),
        Column("local rule", kind="formula"), Column("contribution")], cells, trace.rules,
        [i for i, rule in enumerate(trace.rules) if rule.target in inputs])


def array_adjoints(trace, n) -> Table:
    """Each array's adjoint and the rules summed into it."""
    inputs = _inputs(trace)
    return Table("Adjoints (arrays)", [
        Column("node"), Column("shape", math=False), Column("adjoint"),
        Column("sum of the rules of")],
        lambda a: [n.array_bar(a.id), shape_text(a.shape), n.array(a.adjoint, a.shape),
                   n.word(", ".join(a.terms))], trace.adjoints,
        [i for i, a in enumerate(trace.adjoints) if a.id in inputs or a.terms == ("seed",)])


def _inputs(trace) -> set:
    return {row.id for row in trace.forward if row.kind == "input"}


def shape_text(shape: tuple) -> str:
    """A row's shape: ``(3, 2)``, ``(3,)``, or ``scalar``."""
    from ..engine.arrays import shape_text
    return shape_text(shape) if shape else "scalar"


def check(check, n, title: str = "Gradient check: AD against numerical differentiation"
          ) -> Table:
    """AD against numerical derivatives (and hand-derived formulas), one row per input, with
    the status."""
    expect = any(row.expected is not None for row in check.rows)
    certified = any(row.float64_digits is not None for row in check.rows)
    columns = [Column("input"), Column("AD", "right"), Column("numerical", "right"),
               Column("± (est.)", "right", tex=r"$\pm$ (est.)"),
               Column("|AD − num.|", "right", tex=r"$|\text{AD} - \text{num.}|$"),
               Column("rel. error", "right", tex=r"rel.\ error")]
    if expect:
        columns += [Column("your formula"), Column("formula − AD", "right", tex=r"formula $-$ AD")]
    if certified:  # what plain float64 gets of the proven digits
        columns += [Column("float64 digits", "right", screen=True)]
    columns.append(Column("status"))

    def cells(row):
        e = row.expected
        cells = [n.node(row.input), n.number(row.ad), n.number(row.numeric),
                 n.error(row.numeric_error), n.error(row.abs_error), n.error(row.rel_error)]
        if expect:
            cells += ["", ""] if e is None else [f"{n.formula(e.formula)} = {n.number(e.value)}",
                                                 n.number(e.value - e.ad)]
        if certified:
            cells.append("" if row.float64_digits is None else f"{row.float64_digits}/{n.digits}")
        cells.append(n.status("disagree" if e is not None and not e.ok else row.status))
        return cells
    return Table(title, columns, cells, check.rows)


def matrix(names: list[str], matrix: list[list[float]], n, title: str = "Hessian",
           headers: list[str] | None = None) -> Table:
    """The Hessian with the inputs as row and column headers: row x, column y is ∂²f/∂x∂y (or
    another matrix, its columns headed ``headers``: as many numbers of each row are shown)."""
    headers = headers or names
    return Table(title, [Column(""), *[
        Column(h, "right", tex=f"${n.name(h)}$") for h in headers]],
        lambda item: [n.node(item[0]), *map(n.number, item[1][:len(headers)])],
        list(zip(names, matrix)))


def trace(trace, n) -> list:
    """The reverse-mode trace: the forward trace, the contributions, the adjoints."""
    return [forward(trace.forward, n), contributions(trace.contributions, n), adjoints(trace, n)]


def array_trace(trace, n) -> list:
    """The trace of a program with array values: forward, the rules, the adjoints."""
    return [array_forward(trace, n), array_rules(trace, n), array_adjoints(trace, n)]
