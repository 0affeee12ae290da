"""The tables a person reads: trace, check, Hessian and catalogue tables as :class:`Sheet` data.

Each function here turns plain records into blocks (sheets and prose) that
:mod:`gradcli.views.layout` lays out for a width and :mod:`gradcli.views.screen` writes: so a
table never loses a number at any width, and the same blocks give the text, SVG and HTML exports.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import name_list
from . import columns
from .columns import Plain, error_text
from .layout import Preformatted, Sheet
from .screen import crop, open_screen
from .text import compact

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

MAX_ROWS_HINT = "--max-rows 0 shows all"


def show(*blocks) -> None:
    """Print blocks on standard output, laid out for it (:func:`.screen.open_screen`)."""
    open_screen().show(*blocks)


PIPED = 80  # reference tables piped: folded to this width where no number is broken


def _limited(table: Sheet, rows, max_rows: int, add, keep=()) -> Sheet:
    """Add at most ``max_rows`` rows (0 = all): always the rows whose indices are in ``keep``
    (the output, the inputs), then the first ones; where rows are left out, one line says how
    many. Only the rows shown are read (the records build a row when it is first read)."""
    if not max_rows or len(rows) <= max_rows:
        for row in rows:
            add(row)
        return table
    chosen = set(keep)
    k = 0
    while len(chosen) < max_rows and k < len(rows):
        chosen.add(k)
        k += 1
    previous = -1
    for i in sorted(chosen):
        if i > previous + 1:
            table.add_gap(i - previous - 1, MAX_ROWS_HINT)
        add(rows[i])
        previous = i
    if previous < len(rows) - 1:
        table.add_gap(len(rows) - 1 - previous, MAX_ROWS_HINT)
    return table


def _sheet(spec, max_rows: int, keep=None, each=None) -> Sheet:
    """A table of :mod:`gradcli.views.columns` as a sheet: at most ``max_rows`` rows
    (:func:`_limited`; ``keep``: the table's own), each made when shown (then given to
    ``each``)."""
    table = Sheet(spec.title)
    for c in spec.columns:
        table.add_column(c.header, c.justify, c.kind)

    def add(row):
        table.add_row(*spec.cells(row))
        if each is not None:
            each(row)
    return _limited(table, spec.rows, max_rows, add, spec.keep if keep is None else keep)


def forward_table(trace, digits: int, max_rows: int):
    """Forward evaluation trace: inputs, then v1..vk with their operation and value."""
    return _sheet(columns.forward(trace.forward, Plain(digits)), max_rows)


def contributions_table(trace, digits: int, max_rows: int,
                        title: str = "Reverse sweep (contributions)"):
    """Reverse sweep: one row per edge, in the order the sweep visits them: where they are more
    than ``max_rows``, the rows into the inputs (the gradient's terms), or when those are more,
    the last one into each input (the one that completes its adjoint)."""
    rows, keep = trace.contributions, ()
    if max_rows and len(rows) > max_rows:
        keep = rows.key if len(rows.key) <= max_rows else rows.last_key
    return _sheet(columns.contributions(rows, Plain(digits), title), max_rows, keep)


def adjoints_table(trace, digits: int, max_rows: int, title: str = "Adjoints"):
    """Adjoints: every node's total, with the sum of contributions that produced it."""
    return _sheet(columns.adjoints(trace, Plain(digits), title), max_rows)


def tangent_table(trace, digits: int, max_rows: int):
    """Forward-mode trace (Baydin et al. 2018, Table 2): each node's value and tangent v̇."""
    return _sheet(columns.tangents(trace, Plain(digits)), max_rows)


def trace_tables(trace, digits: int, max_rows: int) -> list:
    return [forward_table(trace, digits, max_rows), contributions_table(trace, digits, max_rows),
            adjoints_table(trace, digits, max_rows)]


def array_trace_tables(trace, max_rows: int) -> list:
    """A program with array values (:mod:`gradcli.arraytrace`): the forward trace and the rules
    on arrays, one row per array operation, each array previewed (:func:`gradcli.views.arrays.
    preview`); the adjoints too where one sums several rules (an array read twice: else each
    adjoint is already the ḡ of its rules, an input's the gradient). ``--elements`` shows the
    scalar rows."""
    tables = columns.array_trace(trace, Plain(0))  # arrays show their proven digits
    if not any(len(a.terms) > 1 for a in trace.adjoints):  # each is a ḡ column's already
        tables.pop()
    return [_sheet(spec, max_rows) for spec in tables]


def elements_tables(trace, scalar, rows, digits: int, max_rows: int) -> list:
    """``--elements``: each array operation of ``rows`` as the scalar trace's rows of its
    elements: the forward rows of the nodes it made (of an input or a view: its elements),
    and the contributions from them (into an input: the contributions into it)."""
    items: list = []
    n_const, n = scalar.n_const, Plain(digits)
    contributions = scalar.trace.contributions
    for row in rows:
        made = row.members or row.slots
        forward = [scalar.forward[s - n_const] for s in dict.fromkeys(made) if s >= n_const]
        title = f"Elements of {row.id}" + ("" if row.kind == "input" else f" = {row.expr}")
        items.append(_sheet(columns.forward(forward, n, f"{title}: forward"), 0))
        edges = scalar.edges_from(made) if row.members else scalar.edges_into(row.slots)
        if edges:  # a row read when shown
            spec = columns.contributions(edges, n, f"{title}: reverse sweep (contributions)")
            items.append(_sheet(spec._replace(cells=lambda e, cells=spec.cells: cells(
                contributions[e])), max_rows))
    return items


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
                   digits: int, max_rows: int = 0) -> Sheet:
    """The Jacobian: a row per output, a column per input; row f, column x is ∂f/∂x. At most
    ``max_rows`` rows and as many columns (0 = all), as :func:`hessian_table`."""
    return hessian_table(outputs, matrix, digits, max_rows, "Jacobian",
                         [f"∂/∂{name}" for name in inputs])


def jacobian_check_tables(check, digits: int) -> list:
    """One check table per row of the Jacobian: that output's gradient against numerical
    derivatives."""
    return [check_table(row, digits, title=f"Jacobian check, row {name}: AD against numerical "
                                           f"derivatives of {name}")
            for name, row in check.rows.items()]


def hessian_table(names: list[str], matrix: list[list[float]], digits: int,
                  max_rows: int = 0, title: str = "Hessian", headers: list[str] | None = None
                  ) -> Sheet:
    """The Hessian with the inputs as row and column headers: row x, column y is ∂²f/∂x∂y (or
    another matrix, its columns headed ``headers``). At most ``max_rows`` rows and as many
    columns (0 = all); the title says what was left out."""
    headers = headers or names
    shown = len(headers) if not max_rows else min(max_rows, len(headers))
    title = title if shown == len(headers) else (
        f"{title} (the first {shown:,} of {len(headers):,} columns; --max-rows 0 shows all)")
    return _sheet(columns.matrix(names, matrix, Plain(digits), title, headers[:shown]), max_rows)


def hessian_check_tables(check, digits: int, max_rows: int = 0) -> list:
    """One check table per row of the Hessian: that gradient component, differentiated
    numerically along each input, against the row (at most ``max_rows`` tables of as many rows)."""
    from rich.text import Text
    items: list = []
    rows = list(check.rows.items())
    for name, row in rows[:max_rows or len(rows)]:
        items.append(check_table(row, digits, title=f"Hessian check, row {name}: AD against "
                                                     f"numerical derivatives of ∂f/∂{name}",
                                 max_rows=max_rows))
    if max_rows and len(rows) > max_rows:
        failed = [name for name, row in rows[max_rows:] if not row.ok]
        items.append(Text(f"… {len(rows) - max_rows:,} more rows of the Hessian checked, not "
                          "shown (--max-rows 0 shows all)" + (
                              f"; failed: {name_list(failed)}" if failed else ""), style="dim"))
    if not check.ok and any(r.note for row in check.rows.values() for r in row.rows):
        items.append(Text("(in a row's notes, f is that row's gradient component)", style="dim"))
    return items


def graph_drawing(picture, digits: int, ascii: bool = False, layout: str = "lr"):
    """The drawing of a picture (gradcli.views.drawing) as preformatted lines of styled runs."""
    from .drawing import draw_with_boxes
    return Preformatted(*draw_with_boxes(picture, digits, ascii=ascii, layout=layout))


def cut_note(drawing: Preformatted, width: int | None) -> str | None:
    """What cutting the drawing at ``width`` leaves out, in a sentence (None if it fits)."""
    from .layout import width_of
    wide = max((sum(width_of(t) for t, _ in line) for line in drawing.lines), default=0)
    if width is None or wide <= width:
        return None
    cut = sorted({node for node, left, right in getattr(drawing, "boxes", ()) if right > width},
                 key=_node_order)
    what = (f": {_names(cut)} {'is' if len(cut) == 1 else 'are'} cut or hidden" if cut else "")
    return (f"the drawing is {wide} columns wide and is cut at {width}{what}; "
            "--layout tb draws it top to bottom, --width {wide} or a pipe "
            "(gradcli graph ... | less -S) shows it whole, --format dot gives it to Graphviz"
            ).replace("{wide}", str(wide))


def _node_order(node_id: str):
    return (0, int(node_id[1:])) if node_id[:1] == "v" and node_id[1:].isdigit() else (1, 0)


def _names(ids: list[str]) -> str:
    return ", ".join(ids) if len(ids) <= 6 else ", ".join(ids[:5]) + f" and {len(ids) - 5} more"


def show_graph(picture, digits: int, note: str | None = None, screen=None,
               layout: str | None = "lr") -> str | None:
    """Print the drawing, then ``note``. On a screen with a width, the drawing is cut at it,
    never wrapped (its line count does not depend on the width); returns a sentence saying
    what was cut, for standard error (None when nothing was). ``layout`` None: left to right
    where that fits the width, else top to bottom where that does."""
    screen = screen or open_screen()
    drawing = _fitted(picture, digits, layout, screen.width, screen.ascii)
    cut = cut_note(drawing, screen.width)
    if screen.width:
        drawing = Preformatted(crop(drawing.lines, screen.width))
    screen.show(drawing, note)
    return cut


def _fitted(picture, digits: int, layout: str | None, width: int | None, ascii: bool):
    """The drawing in ``layout``; None: left to right, unless that is cut at ``width`` and
    top to bottom is not."""
    drawing = graph_drawing(picture, digits, ascii=ascii, layout=layout or "lr")
    if layout is None and width and cut_note(drawing, width):
        tall = graph_drawing(picture, digits, ascii=ascii, layout="tb")
        if not cut_note(tall, width):
            return tall
    return drawing


def functions_table(rows: list[dict]) -> Sheet:
    """The catalogue: syntax, derivative rules (each rule on its line, never broken inside a
    bracket), domain, note (prose, wrapped)."""
    table = Sheet("gradcli functions and operators", piped=PIPED)  # `| head`: prose folds
    table.add_column("syntax", kind="formula")
    table.add_column("derivatives", kind="formula")
    table.add_column("domain; note", kind="text", max_width=40)
    for row in rows:
        rules = "\n".join(f"{k} = {v}" for k, v in row["derivatives"].items())
        syntax = "\n".join(_alternatives(row["syntax"]) + [f"{a}(…)" for a in row["aliases"]])
        about = row["domain"] + (f"\n{row['note']}" if row["note"] else "")
        table.add_row((syntax, "bold"), rules, about)
    return table


def _alternatives(syntax: str) -> list[str]:
    """``a ^ b, a ** b, pow(a, b)`` -> its three spellings (commas inside brackets stay)."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(syntax):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(syntax[start:k].strip())
            start = k + 1
    return out + [syntax[start:].strip()]


def check_verdict(check) -> Text:
    """The one-line verdict under the check table: agreement, the inconclusive inputs (which
    fail only with --strict) and every confident disagreement."""
    from rich.text import Text
    if not check.rows:
        return Text("nothing to check: the gradient has no components", style="bold")
    tolerance = f"(rtol {check.rtol:g}, atol {check.atol:g})"
    agreeing = [row.input for row in check.rows if row.status == "agree"]
    unsure = [row.input for row in check.rows if row.status == "inconclusive"]
    undecided = (f"inconclusive for {name_list(unsure)}: the difference quotient cannot decide "
                 "there (see the note" + ("s" if len(unsure) > 1 else "") + ")")
    if check.ok:
        formulas = [row.input for row in check.rows if row.expected is not None]
        parts = []
        if agreeing:
            parts.append(f"AD agrees with numerical differentiation for {name_list(agreeing)}")
        if formulas:
            parts.append(f"your formula{'s' if len(formulas) > 1 else ''} for "
                         f"{name_list(formulas)} agree{'s' if len(formulas) == 1 else ''} with AD")
        if unsure:
            parts.append(undecided)
        mark, style = ("✓", "bold green") if not unsure else ("?", "bold yellow")
        return Text(f"{mark} " + "; ".join(parts) + f" {tolerance}", style=style)
    problems = []
    for row in check.rows:
        if row.status == "disagree" and row.kink is not None and not row.kink.differentiable:
            problems.append(f"f is not differentiable along {row.input} (at {row.kink.nodes[0]})")
        elif row.unproven:
            problems.append(f"the printed ∂f/∂{row.input} is not the proven "
                            f"{row.certified} (float64 gets {row.float64_digits} of its digits)")
        elif row.status == "disagree":
            problems.append(f"AD and the difference quotient disagree for {row.input} "
                            f"by {error_text(row.abs_error)}")
        e = row.expected
        if e is not None and not e.ok:
            problems.append(f"your formula for ∂f/∂{row.input} is off by {e.value - e.ad:+.3g} "
                            f"({e.formula} = {compact(e.value)}, AD gives {compact(e.ad)})")
        if len(problems) >= 10:
            problems.append("…")
            break
    if unsure:
        problems.append(undecided + (" (--strict)" if check.strict else ""))
    return Text(f"✗ check failed {tolerance}: " + "; ".join(problems), style="bold red")


def check_table(check, digits: int,
                title: str = "Gradient check: AD against numerical differentiation",
                max_rows: int = 0):
    """AD against numerical derivatives (and hand-derived formulas), notes, and the verdict;
    at most ``max_rows`` rows (0 = all), the rows that do not agree first."""
    from rich.text import Text
    if not check.rows:
        return check_verdict(check)
    notes = []
    rows = check.rows
    if max_rows and len(rows) > max_rows:  # the rows a reader must see come first
        rows = sorted(rows, key=lambda r: (r.status == "agree" and (
            r.expected is None or r.expected.ok)))

    def note(row):
        if row.note:
            notes.append(Text(f"{row.input}: {row.note}", style="dim"))
    table = _sheet(columns.check(check, Plain(digits), title)._replace(rows=rows), max_rows,
                   each=note)
    table.piped = PIPED  # `| less`: headers fold so the numbers fit
    return [table, *notes, check_verdict(check)]


class DelayedProgress:
    """A progress bar on standard error for a long batch: shown only when standard error is a
    terminal and the work has already run ``delay`` seconds (a quick run prints nothing), and
    removed when done. Call it with ``(done, total)`` after each chunk; ``total`` None when
    unknown (standard input)."""

    def __init__(self, description: str = "evaluating", delay: float = 1.0,
                 console: Console | None = None, clock=None):
        import time
        if console is None:
            from rich.console import Console
            console = Console(stderr=True, no_color=bool(os.environ.get("NO_COLOR")) or None)
        self.console = console
        self.description, self.delay = description, delay
        self.clock = clock or time.monotonic
        self.start = self.clock()
        self.progress = self.task = self.previous_handler = None

    def __call__(self, done: int, total: int | None) -> None:
        if self.progress is None:
            if not self.console.is_terminal or self.clock() - self.start < self.delay:
                return
            if total is not None and done >= total:
                return  # finished (a slow start-up, one chunk): no bar flashing at 100%
            from rich.progress import (BarColumn, Progress, TaskProgressColumn, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)
            self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                     TaskProgressColumn(), TimeElapsedColumn(),
                                     TimeRemainingColumn(), console=self.console, transient=True)
            self._catch_interrupt()
            self.progress.start()
            self.task = self.progress.add_task(self.description, total=total)
        self.progress.update(self.task, completed=done, total=total)

    def _catch_interrupt(self) -> None:
        """While the bar is up, Ctrl-C shows the cursor again before gradcli ends as it does on
        any signal it handles (:func:`gradcli.files.end_on_signal`: exit 130, what is staged
        removed): the bar hides the cursor, and the usual immediate exit would leave the
        terminal without one."""
        import signal

        from ..files import end_on_signal

        def interrupted(signum, frame):  # tests/test_batch_streams.py runs it in a terminal
            try:
                self.console.show_cursor(True)
                self.console.file.write("\n")
                self.console.file.flush()
            except (OSError, ValueError):
                pass  # a terminal gone: the output is still removed
            end_on_signal(signum, frame)
        try:
            self.previous_handler = signal.signal(signal.SIGINT, interrupted)
        except ValueError:  # not the main thread: leave Ctrl-C as it is
            self.previous_handler = None

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            if self.previous_handler is not None:
                import signal
                signal.signal(signal.SIGINT, self.previous_handler)
