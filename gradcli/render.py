"""Rich tables from plain records. The only module that imports rich."""

from __future__ import annotations

import os

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table


def make_console(**options) -> Console:
    """A console that respects NO_COLOR and prints plain, untruncated text when not on a terminal."""
    if os.environ.get("NO_COLOR"):
        options.setdefault("no_color", True)
    return Console(**options)


def show(*renderables, console: Console | None = None) -> None:
    """Print renderables; off a terminal, widen the console so no cell is wrapped or cut."""
    console = console or make_console()
    if not console.is_terminal:
        wide = console.options.update_width(100_000)
        widest = max((Measurement.get(console, wide, r).maximum for r in renderables), default=0)
        console.width = max(console.width, widest)
    for r in renderables:
        console.print(r)


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
