"""Rich tables from plain records. The only module that imports rich.

Colour is used only on a terminal and never when ``NO_COLOR`` is set (rich's own rules);
off a terminal the console is widened to fit, so piped output is plain and no cell is cut.
"""

from __future__ import annotations

import math
import os

from rich.console import Console, Group
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from .text import format_number

EXPORT_SUFFIXES = (".svg", ".html", ".htm", ".txt", ".text")
BAR, DOT = "\u0304", "\u0307"  # combining marks: the adjoint v̄ and the tangent v̇


def make_console(record: bool = False, **options) -> Console:
    """A console for stdout; ``record=True`` keeps what is printed for :func:`export`."""
    if os.environ.get("NO_COLOR"):
        options.setdefault("no_color", True)
    return Console(record=record, **options)


def show(*renderables, console: Console | None = None) -> None:
    """Print renderables; off a terminal, widen the console so no cell is wrapped or cut."""
    console = console or make_console()
    if not console.is_terminal:
        wide = console.options.update_width(100_000)
        widest = max((Measurement.get(console, wide, r).maximum for r in renderables), default=0)
        console.width = max(console.width, widest)
    for r in renderables:
        console.print(r)


def export(console: Console, path: str) -> None:
    """Save what a recording console printed, as SVG, HTML or text by the file's suffix."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".svg":
        console.save_svg(path, title="gradcli")
    elif suffix in (".html", ".htm"):
        console.save_html(path)
    else:
        console.save_text(path)


def _table(title: str, *columns: tuple[str, str]) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold")
    for header, justify in columns:
        table.add_column(header, justify=justify, no_wrap=True)
    return table


def _limited(table: Table, rows: list, max_rows: int, add):
    """Add at most ``max_rows`` rows (0 = all); below the table, say how many were left out."""
    shown = rows if not max_rows else rows[:max_rows]
    for row in shown:
        add(row)
    left = len(rows) - len(shown)
    if not left:
        return table
    note = f"… {left:,} more row{'s' if left != 1 else ''} not shown (--max-rows 0 shows all)"
    return Group(table, Text(note, style="dim"))


def _sum(terms: list[float], digits: int) -> str:
    """``0.5 + 3`` or ``2 - 0.25``: contributions as a sum, signs folded into the operators."""
    text = format_number(terms[0], digits)
    for t in terms[1:]:
        text += (" - " if t < 0 else " + ") + format_number(abs(t), digits)
    return text


def forward_table(trace, digits: int, max_rows: int):
    """Forward evaluation trace: inputs, then v1..vk with their operation and value."""
    named = any(row.names for row in trace.forward)
    marked = any(row.is_output for row in (trace.forward[:max_rows] if max_rows else trace.forward))
    columns = [("node", "left")] + ([("name", "left")] if named else [])
    columns += [("operation", "left"), ("value", "right")] + ([("", "left")] if marked else [])
    table = _table("Forward evaluation trace", *columns)

    def add(row):
        cells = [Text(row.id, style="cyan")] + ([", ".join(row.names)] if named else [])
        cells += ["input" if row.op == "input" else f"{row.id} = {row.expr} = {row.step}",
                  format_number(row.value, digits)]
        if marked:
            cells.append(_output_mark(row))
        table.add_row(*cells)
    return _limited(table, trace.forward, max_rows, add)


def _output_mark(row) -> Text | str:
    """``← output``, or with several outputs ``← f1`` (the names of the outputs it is)."""
    if not row.is_output:
        return ""
    return Text("← " + (", ".join(row.outputs) if row.outputs else "output"), style="bold green")


def _formula(formula: str, value: str) -> str:
    """``1/x = 0.5``: a formula beside its value (a number alone when the formula is one)."""
    try:
        float(formula)
        return value
    except ValueError:
        return f"{formula} = {value}" if formula else value


def contributions_table(trace, digits: int, max_rows: int,
                        title: str = "Reverse sweep (contributions)"):
    """Reverse sweep: one row per edge, in the order the sweep visits them."""
    table = _table(title, ("from", "left"), ("to", "left"),
                   ("upstream adjoint", "right"), ("local derivative", "right"),
                   ("contribution", "right"))

    def add(row):
        table.add_row(row.equation, Text(row.target, style="cyan"),
                      format_number(row.upstream, digits),
                      _formula(row.local_expr, format_number(row.local, digits)),
                      format_number(row.contribution, digits))
    return _limited(table, trace.contributions, max_rows, add)


def adjoints_table(trace, digits: int, max_rows: int, title: str = "Adjoints"):
    """Adjoints: every node's total, with the sum of contributions that produced it."""
    named = any(row.names for row in trace.adjoints)
    columns = [("node", "left")] + ([("name", "left")] if named else [])
    table = _table(title, *columns, ("adjoint", "right"), ("sum of contributions", "left"))
    seeds = trace.seeds

    def add(row):
        if row.id in seeds:  # a vector-Jacobian product seeds every output with its weight
            how = f"seed {format_number(seeds[row.id], digits)}"
            if row.terms:
                how += " + " + _sum(list(row.terms[:8]), digits)
        elif row.id == trace.output and not row.terms:
            how = "seed"
        elif row.terms:
            how = _sum(list(row.terms[:8]), digits) + (" + …" if len(row.terms) > 8 else "")
        else:
            how = "(no path to the output)"
        bar = _accented(row.id, BAR)  # the textbook's adjoint bar: v̄5, x̄
        cells = [Text(bar, style="cyan")] + ([", ".join(row.names)] if named else [])
        table.add_row(*cells, format_number(row.adjoint, digits), how)
    return _limited(table, trace.adjoints, max_rows, add)


def _accented(node_id: str, mark: str) -> str:
    """``v5`` -> ``v̄5`` or ``v̇5``: a combining mark over the id's first letter."""
    return node_id[0] + mark + node_id[1:]


def _tangent_rule(row, digits: int) -> str:
    """``v̇2 = 5·ẋ + 2·ẏ``: the tangent as the sum of local partial × argument tangent."""
    terms = []
    for arg, partial in zip(row.row.args, row.partials):
        if partial is None:
            continue  # a constant argument: its tangent is 0
        dot = _accented(arg, DOT)
        magnitude = abs(partial)
        coefficient = "" if magnitude == 1 else f"{magnitude:.{max(digits, 1)}g}·"
        sign = "-" if partial < 0 else "+"
        terms.append((sign, coefficient + dot))
    if not terms:
        return "(no path to the output)"
    text = ("-" if terms[0][0] == "-" else "") + terms[0][1]
    for sign, term in terms[1:]:
        text += f" {sign} {term}"
    return f"{_accented(row.row.id, DOT)} = {text}"


def tangent_table(trace, digits: int, max_rows: int):
    """Forward-mode trace (Baydin et al. 2018, Table 2): each node's value and tangent v̇."""
    rows = trace.rows
    named = any(r.row.names for r in rows)
    marked = any(r.row.is_output for r in (rows[:max_rows] if max_rows else rows))
    if trace.sweeps == ["direction"]:
        sweep_headers = ["tangent v̇"]
    else:
        sweep_headers = [f"v̇ ({_accented(name, DOT)} = 1)" for name in trace.sweeps]
    columns = [("node", "left")] + ([("name", "left")] if named else [])
    columns += [("operation", "left"), ("value", "right"), ("tangent rule", "left")]
    columns += [(h, "right") for h in sweep_headers] + ([("", "left")] if marked else [])
    table = _table("Forward-mode tangent trace", *columns)

    def add(r):
        row = r.row
        cells = [Text(row.id, style="cyan")] + ([", ".join(row.names)] if named else [])
        is_input = row.op == "input"
        cells += ["input" if is_input else f"{row.id} = {row.expr}",
                  format_number(row.value, digits), "seed" if is_input else _tangent_rule(r, digits)]
        cells += ["—" if t is None else format_number(t, digits) for t in r.tangents]
        if marked:
            cells.append(_output_mark(row))
        table.add_row(*cells)
    return _limited(table, rows, max_rows, add)


def trace_tables(trace, digits: int, max_rows: int) -> list:
    return [forward_table(trace, digits, max_rows), contributions_table(trace, digits, max_rows),
            adjoints_table(trace, digits, max_rows)]


def jacobian_trace_tables(trace, digits: int, max_rows: int) -> list:
    """A Jacobian's sweeps: the forward trace once, then each output's reverse sweep (titled
    with the output), or the tangent trace with one column per input's sweep."""
    if trace.mode == "forward":
        return [tangent_table(trace.tangents, digits, max_rows)]
    items = [forward_table(trace, digits, max_rows)]
    for name, sweep in trace.sweeps:
        node = trace.outputs[name]
        items.append(contributions_table(sweep, digits, max_rows,
                                         title=f"Reverse sweep for {name} = {node} (contributions)"))
        items.append(adjoints_table(sweep, digits, max_rows,
                                    title=f"Adjoints of {name}: ∂{name}/∂v"))
    return items


def jacobian_table(outputs: list[str], inputs: list[str], matrix: list[list[float]],
                   digits: int) -> Table:
    """The Jacobian: a row per output, a column per input; row f, column x is ∂f/∂x."""
    table = _table("Jacobian", ("", "left"), *[(f"∂/∂{name}", "right") for name in inputs])
    for name, row in zip(outputs, matrix):
        table.add_row(Text(name, style="cyan"), *[format_number(v, digits) for v in row])
    return table


def jacobian_check_tables(check, digits: int) -> list:
    """One check table per row of the Jacobian: that output's gradient against numerical
    derivatives."""
    return [check_table(row, digits, title=f"Jacobian check, row {name}: AD against numerical "
                                           f"derivatives of {name}")
            for name, row in check.rows.items()]


def hessian_table(names: list[str], matrix: list[list[float]], digits: int,
                  title: str = "Hessian") -> Table:
    """The Hessian with the inputs as row and column headers: row x, column y is ∂²f/∂x∂y."""
    table = _table(title, ("", "left"),
                   *[(name, "right") for name in names])
    for name, row in zip(names, matrix):
        table.add_row(Text(name, style="cyan"), *[format_number(v, digits) for v in row])
    return table


def hessian_check_tables(check, digits: int) -> list:
    """One check table per row of the Hessian: that gradient component, differentiated
    numerically along each input, against the row."""
    items: list = []
    for name, row in check.rows.items():
        items.append(check_table(row, digits, title=f"Hessian check, row {name}: AD against "
                                                     f"numerical derivatives of ∂f/∂{name}"))
    if not check.ok and any(r.note for row in check.rows.values() for r in row.rows):
        items.append(Text("(in a row's notes, f is that row's gradient component)", style="dim"))
    return items


# Styles of the graph drawing's parts (gradcli.views.drawing names them).
GRAPH_STYLES = {"box": "blue", "output": "bold green", "hidden": "dim", "unused": "dim",
                "id": "cyan", "text": "", "edge": "", "label": "yellow"}


def graph_drawing(picture, digits: int) -> Text:
    """The layered drawing of a picture (gradcli.views.drawing) as one rich Text, never wrapped."""
    from .drawing import draw
    text = Text(no_wrap=True, overflow="crop")
    for k, runs in enumerate(draw(picture, digits)):
        if k:
            text.append("\n")
        for chunk, style in runs:
            text.append(chunk, GRAPH_STYLES[style] or None)
    return text


def show_graph(picture, digits: int, note: str | None = None,
               console: Console | None = None) -> None:
    """Print the drawing, then ``note``; on a terminal too narrow for it, say where it is cut."""
    console = console or make_console()
    drawing = graph_drawing(picture, digits)
    items: list = [drawing]
    wide = Measurement.get(console, console.options.update_width(100_000), drawing).maximum
    if console.is_terminal and wide > console.width:
        items.append(Text(f"the drawing is {wide} columns wide and is cut at {console.width}: "
                          "pipe it (gradcli graph ... | less -S) or use --format dot",
                          style="dim"))
    if note:
        items.append(Text(note, style="dim"))
    show(*items, console=console)


def functions_table(rows: list[dict]) -> Table:
    table = Table(title="gradcli functions and operators", show_lines=False)
    table.add_column("syntax", style="bold", no_wrap=True)
    table.add_column("derivatives")
    table.add_column("domain")
    table.add_column("note")
    for row in rows:
        rules = "\n".join(f"{k} = {v}" for k, v in row["derivatives"].items())
        syntax = row["syntax"] + "".join(f"\n{a}(…)" for a in row["aliases"])
        table.add_row(syntax, rules, row["domain"], row["note"])
    return table


def _error(x: float) -> str:
    """A small error as ``2.3e-11`` (``0`` when exact, ``?`` when unknown)."""
    if not math.isfinite(x):
        return "?"
    return "0" if x == 0 else f"{x:.1e}"


def check_verdict(check) -> Text:
    """The one-line verdict under the check table."""
    if not check.rows:
        return Text("nothing to check: the gradient has no components", style="bold")
    names = ", ".join(row.input for row in check.rows)
    tolerance = f"(rtol {check.rtol:g}, atol {check.atol:g})"
    if check.ok:
        formulas = [row.input for row in check.rows if row.expected is not None]
        text = (f"✓ AD agrees with numerical differentiation for {names}"
                + (f", and your formula{'s' if len(formulas) > 1 else ''} for "
                   f"{', '.join(formulas)} agree{'s' if len(formulas) == 1 else ''} with AD"
                   if formulas else "") + f" {tolerance}")
        return Text(text, style="bold green")
    problems = []
    for row in check.rows:
        if not row.ok and row.kink is not None and not row.kink.differentiable:
            problems.append(f"f is not differentiable along {row.input} (at {row.kink.nodes[0]})")
        elif not row.ok and math.isnan(row.numeric):
            problems.append(f"no difference quotient for {row.input}")
        elif not row.ok:
            problems.append(f"AD and the difference quotient disagree for {row.input} "
                            f"by {_error(row.abs_error)}")
        e = row.expected
        if e is not None and not e.ok:
            problems.append(f"your formula for ∂f/∂{row.input} is off by {e.value - row.ad:+.3g} "
                            f"({e.formula} = {e.value:.12g}, AD gives {row.ad:.12g})")
    return Text(f"✗ check failed {tolerance}: " + "; ".join(problems), style="bold red")


def check_table(check, digits: int,
                title: str = "Gradient check: AD against numerical differentiation"):
    """AD against numerical derivatives (and hand-derived formulas), notes, and the verdict."""
    if not check.rows:
        return check_verdict(check)
    expect = any(row.expected is not None for row in check.rows)
    columns = [("input", "left"), ("AD", "right"), ("numerical", "right"), ("± (est.)", "right"),
               ("|AD − num.|", "right"), ("rel. error", "right")]
    if expect:
        columns += [("your formula", "left"), ("formula − AD", "right")]
    table = _table(title, *columns, ("status", "left"))
    notes = []
    for row in check.rows:
        cells = [Text(row.input, style="cyan"), format_number(row.ad, digits),
                 format_number(row.numeric, digits), _error(row.numeric_error),
                 _error(row.abs_error), _error(row.rel_error)]
        e = row.expected
        if expect:
            cells += ["", ""] if e is None else [f"{e.formula} = {format_number(e.value, digits)}",
                                                 format_number(e.value - row.ad, digits)]
        ok = row.ok and (e is None or e.ok)
        cells.append(Text("ok", style="green") if ok else Text("FAIL", style="bold red"))
        table.add_row(*cells)
        if row.note:
            notes.append(Text(f"{row.input}: {row.note}", style="dim"))
    return Group(table, *notes, check_verdict(check))


class DelayedProgress:
    """A progress bar on standard error for a long batch: shown only when standard error is a
    terminal and the work has already run ``delay`` seconds (a quick run prints nothing), and
    removed when done. Call it with ``(done, total)`` after each chunk; ``total`` None when
    unknown (standard input)."""

    def __init__(self, description: str = "evaluating", delay: float = 1.0,
                 console: Console | None = None, clock=None):
        import time
        self.console = console or make_console(stderr=True)
        self.description, self.delay = description, delay
        self.clock = clock or time.monotonic
        self.start = self.clock()
        self.progress = self.task = None

    def __call__(self, done: int, total: int | None) -> None:
        if self.progress is None:
            if not self.console.is_terminal or self.clock() - self.start < self.delay:
                return
            from rich.progress import (BarColumn, Progress, TaskProgressColumn, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)
            self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                     TaskProgressColumn(), TimeElapsedColumn(),
                                     TimeRemainingColumn(), console=self.console, transient=True)
            self.progress.start()
            self.task = self.progress.add_task(self.description, total=total)
        self.progress.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
