"""Text laid out for a width, drawn by rich: tables that never cut a number, prose wrapped
between words.

A :class:`Sheet` is a table as plain data (a title, columns that say whether they hold numbers
or text, rows, and gaps where rows were left out). :func:`render` lays out a list of blocks
(sheets, prose, drawings) for a width, or for their natural width when the width is ``None``
(a pipe or a file), and gives a :class:`Page` of rich renderables; the screen prints it in
colour, or :func:`plain_text` gives its text.

gradcli chooses the layout, rich draws it (``rich.table.Table``, ``rich.box``). Cells are
measured in terminal cells with ``rich.cells.cell_len``, the measure rich's own ``Measurement``
of a text gives (a test checks that ``Console.measure`` agrees). A table meets a width in the
first of these ways that fits:

1. at its natural width, in a box;
2. in a box with text wrapped: numbers keep their full width (``no_wrap`` columns; only their
   headers wrap), text is broken between its pieces (a piece is a word, or a bracketed formula
   kept whole, ``sin(a, b)``); then without the box, columns two spaces, then one space apart;
3. as records: each row a block of ``column: value`` lines, and one line says so.

No number is ever cut or wrapped, and no column is ever dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .notation import to_ascii


Line = list  # of (text, style) runs; style is a name the screen colours, or None
LONG_PIECE = 32  # a bracketed piece of text longer than this is broken between its words
TEXT_FLOOR = 10  # a text column is not squeezed below this (or its natural width): records read
# better than a column of one word per line
WHOLE = ("number", "label")  # kinds never broken


@dataclass(slots=True)
class Column:
    header: str
    justify: str = "left"  # "left" or "right"
    # "number" and "label": never broken; "text": broken between pieces; "formula": broken only
    # at spaces outside brackets, however long a bracketed piece is
    kind: str = "text"
    max_width: int | None = None  # text wider than this wraps even at natural width (prose)


@dataclass(frozen=True, slots=True)
class Gap:
    """Rows left out of a table: shown as one line saying how many and how to see them."""

    count: int
    hint: str = ""

    def text(self) -> str:
        rows = "row" if self.count == 1 else "rows"
        return f"⋮ {self.count:,} {rows} not shown" + (f" ({self.hint})" if self.hint else "")


@dataclass(slots=True)
class Sheet:
    """A table as data: columns, rows of cells (str, or rich ``Text`` for a styled cell), gaps."""

    title: str = ""
    columns: list[Column] = field(default_factory=list)
    rows: list = field(default_factory=list)  # tuples of cells, or Gap
    # With no width (a pipe, a file): the width the table folds its text to where it can
    # (a reference table, `functions | head`), else None: its natural width.
    piped: int | None = None

    def add_column(self, header: str, justify: str = "left", kind: str | None = None,
                   max_width: int | None = None) -> None:
        kind = kind or ("number" if justify == "right" else "text")
        self.columns.append(Column(header, justify, kind, max_width))

    def add_row(self, *cells) -> None:
        self.rows.append(cells)

    def add_gap(self, count: int, hint: str = "") -> None:
        self.rows.append(Gap(count, hint))


@dataclass(slots=True)
class Prose:
    """Text wrapped between words at the width (never inside a number), in one style."""

    text: str
    style: str | None = None


@dataclass(slots=True)
class Preformatted:
    """Lines never wrapped (a drawing): cut at the width instead, by the caller."""

    lines: list[Line]
    boxes: list = field(default_factory=list)  # (name, first column, past the last one)


# -- measuring and breaking text ----------------------------------------------------------------

def width_of(text: str) -> int:
    """Columns ``text`` takes in a terminal (wide characters count two, combining marks none)."""
    if text.isascii():
        return len(text)
    from rich.cells import cell_len  # only for text that is not ASCII: plain output stays light
    return cell_len(text)


def pieces(line: str, formula: bool = False) -> list[str]:
    """``line`` cut at the spaces outside brackets; each piece keeps the spaces before it. In
    text (not a ``formula``), a bracketed piece longer than LONG_PIECE is cut at its own spaces
    (it is prose)."""
    out, start, depth = [], 0, 0
    for k, ch in enumerate(line):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0 and k > start and line[k - 1] != " ":
            out.append(line[start:k])
            start = k
    out.append(line[start:])
    if formula:
        return out
    fine = []
    for piece in out:
        if width_of(piece.strip()) > LONG_PIECE and " " in piece.strip():
            fine += re.findall(r"\s*\S+", piece)
        else:
            fine.append(piece)
    return fine


def narrowest(text: str, formula: bool = False) -> int:
    """The narrowest width ``text`` wraps to without breaking a piece."""
    if text.isascii() and not any(b in text for b in "([{"):
        return max(map(len, text.split()), default=0)  # the pieces are the words
    return max((width_of(p.strip()) for line in text.split("\n") for p in pieces(line, formula)),
               default=0)


def wrap(text: str, width: int, formula: bool = False) -> list[str]:
    """``text`` in lines of at most ``width`` columns, broken between pieces; a piece wider
    than the width is folded, unless it is a number (kept whole: a number is never cut)."""
    out = []
    for line in text.split("\n"):
        if width_of(line) <= width:
            out.append(line)
            continue
        current = ""
        queue = pieces(line, formula)[::-1]
        while queue:
            piece = queue.pop()
            joined = current + piece if current else piece.lstrip()
            if width_of(joined) <= width:
                current = joined
                continue
            if width_of(piece.strip()) > width and " " in piece.strip():
                queue += re.findall(r"\s*\S+", piece)[::-1]  # too wide: its words, then
                continue
            if current:
                out.append(current.rstrip())
            current = piece.lstrip()
            while width_of(current) > width and not re.match(NUMBER, current):
                head = _fold(current, width)  # a word wider than the line: folded
                out.append(head)
                current = current[len(head):]
        out.append(current.rstrip())
    return out


# a number (compiled on first use, by re's cache: a table that fits never needs it)
NUMBER = r"[-+]?(\d[\d,]*\.?\d*|\.\d+)(e[-+]?\d+)?[,;]?\Z|[-+]?(inf|nan)\Z"


def _fold(text: str, width: int) -> str:
    """The longest head of ``text`` at most ``width`` columns wide (at least one character)."""
    k, used = 0, 0
    while k < len(text):
        w = width_of(text[k])
        if used + w > width and k:
            break
        used += w
        k += 1
    while k < len(text) and width_of(text[k]) == 0:
        k += 1  # a combining mark stays with its letter
    return text[:k]


def _pad(text: str, width: int, justify: str) -> str:
    room = width - width_of(text)
    return " " * room + text if justify == "right" else text + " " * room


# -- tables: gradcli measures and chooses ---------------------------------------------------------

class _Cells:
    """A sheet's text after the ASCII rewrite, with its measurements (the narrowest widths
    are measured only when the natural ones do not fit)."""

    def __init__(self, sheet: Sheet, ascii: bool):
        fix = to_ascii if ascii else None
        self.columns = sheet.columns
        self.piped = sheet.piped
        self.kinds = [c.kind for c in sheet.columns]
        self.headers = [fix(c.header) if fix else c.header for c in sheet.columns]
        natural = [_text_width(h) for h in self.headers]
        rows: list = []  # (cells as (text, style), their widths, no cell holds a line break)
        for row in sheet.rows:
            if isinstance(row, Gap):
                rows.append(Gap(row.count, fix(row.hint) if fix else row.hint))
                continue
            cells = tuple(c if type(c) is tuple else (c, None) if type(c) is str
                          else (c.plain, str(c.style) or None) for c in row)
            if fix:
                cells = tuple((fix(t), s) for t, s in cells)
            widths = tuple(len(t) if t.isascii() and "\n" not in t else _text_width(t)
                           for t, _ in cells)
            simple = not any("\n" in t for t, _ in cells)
            rows.append((cells, widths, simple))
            for k, w in enumerate(widths):
                if w > natural[k]:
                    natural[k] = w
        for k, c in enumerate(sheet.columns):
            if c.max_width and c.kind not in WHOLE:
                natural[k] = max(self._narrowest_in(k, rows, 0), min(natural[k], c.max_width))
        self.rows = rows
        self.natural = natural
        self._minimum: list[int] | None = None

    @property
    def minimum(self) -> list[int]:
        if self._minimum is None:
            minimum = []
            for k, kind in enumerate(self.kinds):
                if kind in WHOLE:
                    minimum.append(max([narrowest(self.headers[k])] +
                                       [r[1][k] for r in self.rows if not isinstance(r, Gap)]))
                else:
                    least = self._narrowest_in(k, self.rows, narrowest(self.headers[k]))
                    minimum.append(max(least, min(self.natural[k], TEXT_FLOOR)))
            self._minimum = minimum
        return self._minimum

    def _narrowest_in(self, k: int, rows: list, least: int) -> int:
        formula = self.kinds[k] == "formula"
        for r in rows:
            if not isinstance(r, Gap) and r[1][k] > least:
                least = max(least, narrowest(r[0][k][0], formula))
        return least


def _text_width(text: str) -> int:
    """The width of the widest line of ``text``."""
    return max(map(width_of, text.split("\n"))) if "\n" in text else width_of(text)


def table_widths(sheet: Sheet, width: int | None, ascii: bool = False):
    """``(style, column widths)`` for ``width`` (None: natural): style "box" (lines around
    every cell), "plain" or "tight" (columns two or one spaces apart, a rule under the
    headers); ``("records", None)`` when none fits."""
    return _choose(_Cells(sheet, ascii), width)


STYLES_IN_ORDER = ("box", "plain", "tight", "records")  # each narrower than the one before


def _choose(cells: _Cells, width: int | None, least: str = "box"):
    """The first style from ``least`` on that fits ``width``, and its column widths."""
    none_fits = "records", None
    if width is None:
        # Piped, a table stays whole in a box, unless it asks to fit a width (``piped``) where
        # only text and headers wrap (no number is ever broken), in a box or without one.
        none_fits, width = ("box", list(cells.natural)), cells.piped
        if not width:
            return none_fits
    for style in STYLES_IN_ORDER[STYLES_IN_ORDER.index(least):-1]:
        widths = _widths(cells, width, frame_width(style, len(cells.natural)))
        if widths is not None:
            return style, widths
    return none_fits


def frame_width(style: str, columns: int) -> int:
    """The columns a table's lines and padding take: rich's box with one space of padding
    either side of a cell (3 a column, plus 1), or the gaps between columns."""
    return 3 * columns + 1 if style == "box" else _GAPS[style] * (columns - 1)


_GAPS = {"plain": 2, "tight": 1}  # spaces between columns of a table without lines


def _widths(cells: _Cells, width: int, frame: int) -> list[int] | None:
    if sum(cells.natural) + frame <= width:
        return list(cells.natural)
    if sum(cells.minimum) + frame > width:
        return None
    widths = list(cells.minimum)
    extra = width - frame - sum(widths)
    # The room left goes to the columns that want least first, so as few cells as possible
    # wrap; numbers' headers (which may wrap) come last.
    order = sorted(range(len(widths)), key=lambda k: (cells.kinds[k] in WHOLE,
                                                      cells.natural[k] - cells.minimum[k]))
    for k in order:
        give = min(extra, cells.natural[k] - widths[k])
        widths[k] += give
        extra -= give
    return widths


# -- tables: rich draws ---------------------------------------------------------------------------

def _boxes(style: str, ascii: bool) -> tuple:
    """The rich boxes of a table's first piece (under its headers), of the pieces after a gap,
    and of headers with no rows before a gap: heavy lines around the headers, light ones around
    the rows (rich's HEAVY_HEAD); a rule under the headers alone without the box."""
    from rich import box
    if style == "box":
        return (box.ASCII2,) * 3 if ascii else (box.HEAVY_HEAD, box.SQUARE, box.HEAVY)
    line = "-" if ascii else "─"  # a rule under each header, a space where columns meet
    rule = box.Box(f"    \n    \n {line}  \n" + "    \n" * 5, ascii=ascii)
    return rule, rule, rule


def _rich_table(cells: _Cells, widths: list[int], style: str, rows: list, first: bool,
                ascii: bool, styled: bool = True):
    """One piece of a table (the rows between two gaps) as a ``rich.table.Table`` with these
    column widths: every column ``no_wrap``, each cell already broken where the layout chose
    (text between its pieces, a number never)."""
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text
    head_box, body_box, alone_box = _boxes(style, ascii)
    alone = first and not rows and style == "box"  # the headers, closed, then a gap
    header_style = STYLES["header"] if styled else None
    # The cells' padding is given here, as rich gives it (a Padding around a header or a
    # wrapped row's cell), and for a column of one-line rows beside each line: rich would wrap
    # the column in a Padding and split its lines twice.
    pads = _pads(style, len(widths))
    table = Table(box=alone_box if alone else head_box if first else body_box,
                  show_header=first and not alone, highlight=False, header_style=header_style,
                  padding=0, show_edge=style == "box")
    headers = [Padding(Text(h if _text_width(h) <= w else "\n".join(wrap(h, w)),
                            justify=c.justify), (0, right, 0, left))
               for h, c, w, (left, right) in zip(cells.headers, cells.columns, widths, pads)]
    for header, column, w, (left, right) in zip(headers, cells.columns, widths, pads):
        table.add_column(header, justify=column.justify, width=left + w + right, no_wrap=True,
                         vertical="bottom" if alone else "top")
    if alone:  # a row of headers, in their style, set on its last line as rich sets headers
        table.add_row(*headers, style=header_style)
    right = [c.justify == "right" for c in cells.columns]
    run: list = []  # one-line rows, drawn as one row of columns
    for cells_row, sizes, simple in rows:
        if simple and all(size <= w for size, w in zip(sizes, widths)):
            run.append(cells_row)
            continue
        if run:
            table.add_row(*_columns(run, widths, right, pads, styled))
            run = []
        table.add_row(*[Padding(Text(t if size <= w and "\n" not in t else "\n".join(
            _wrapped_cell(t, w, kind, style)), style=(_style(s) or "") if styled else ""),
            (0, pad[1], 0, pad[0]))
            for (t, s), size, w, kind, pad in zip(cells_row, sizes, widths, cells.kinds, pads)])
    if run:
        table.add_row(*_columns(run, widths, right, pads, styled))
    return table


def _wrapped_cell(text: str, width: int, kind: str, style: str) -> list[str]:
    """A cell's lines at ``width``. Without a box (no line between rows), a text cell's
    continued lines are indented two spaces, so a wrapped cell never reads as a new row."""
    lines = wrap(text, width, kind == "formula")
    if style == "box" or kind in WHOLE or len(lines) < 2 or "\n" in text or width < 6:
        return lines
    rest = wrap(text[len(lines[0]):].strip(), width - 2, kind == "formula")
    if not text.startswith(lines[0]) or any(_text_width(line) > width - 2 for line in rest):
        return lines
    return [lines[0]] + ["  " + line for line in rest]


def _pads(style: str, n: int) -> list[tuple[int, int]]:
    """The spaces left and right of each of ``n`` columns' cells: one either side in a box;
    without it, the gap after every column but the last."""
    return [(1, 1)] * n if style == "box" else [(0, _GAPS[style] - 1)] * (n - 1) + [(0, 0)]


class _Lines:
    """One-line rows of a column as one rich cell: its lines, justified to the column's width,
    each in its style between its padding, the segments rich makes of a padded Text a row. rich
    draws the table around them (boxes, headers): a line here costs a fraction of what rich's
    cell would."""

    __slots__ = ("runs", "left", "right")

    def __init__(self, runs: list, left: int, right: int):
        self.runs = runs  # (line, style or None)
        self.left, self.right = left, right

    def __rich_console__(self, console, options):
        from rich.segment import Segment
        from rich.style import Style
        get_style, null, end = console.get_style, Style.null(), Segment.line()
        pad = get_style("none")  # a Padding's style
        left = Segment(" " * self.left, pad) if self.left else None
        right = Segment(" " * self.right, pad) if self.right else None
        for line, style in self.runs:  # an unknown style is no style, as in a Text
            if left:
                yield left
            yield Segment(line, get_style(style, default=null)) if style else Segment(line)
            if right:
                yield right
            yield end


def _columns(rows: list, widths: list[int], right: list[bool], pads: list, styled: bool) -> list:
    """Rows of one-line cells, each narrower than its column, as a :class:`_Lines` a column,
    justified as rich justifies a cell's line (a right one stripped first)."""
    columns: list = [[] for _ in widths]
    for row in rows:
        for (text, name), w, out, r in zip(row, widths, columns, right):
            if r:
                text = text.rstrip()
            room = " " * (w - width_of(text))
            out.append((room + text if r else text + room,
                        (_style(name) or None) if styled else None))
    if not styled:  # text alone (a pipe, a file): each line one segment with its padding
        return [_Lines([(" " * left + line + " " * right, None) for line, _ in runs], 0, 0)
                for runs, (left, right) in zip(columns, pads)]
    return [_Lines(runs, left, right) for runs, (left, right) in zip(columns, pads)]


def _style(name: str | None) -> str | None:
    return STYLES.get(name, name) if name else None


def _pieces(cells: _Cells) -> list:
    """The rows between gaps, and the gaps: ``[rows, Gap, rows, ...]``."""
    out: list = [[]]
    for row in cells.rows:
        if isinstance(row, Gap):
            out += [row, []]
        else:
            out[-1].append(row)
    return out


def _sheet(sheet: Sheet, width: int | None, ascii: bool, styled: bool = True,
           least: str = "box") -> tuple[list, int]:
    """A sheet's renderables for ``width`` (the title, the table's pieces and its gaps; as
    records when it cannot fit), in style ``least`` or a narrower one, and the width they
    take."""
    from rich.text import Text
    cells = _Cells(sheet, ascii)
    style, widths = _choose(cells, width, least)
    title = to_ascii(sheet.title) if ascii else sheet.title
    if widths is None:
        lines = _records(sheet, cells, width, title, ascii)
        # a number wider than the width is kept whole: the page is as wide as it is
        widest = max((sum(width_of(t) for t, _ in line) for line in lines), default=0)
        return [styled_text(lines, styled)], max(width or 0, widest)
    total = sum(widths) + frame_width(style, len(widths))
    parts: list = []
    if title:
        parts += [Text(line, style=STYLES["title"] if styled else "")
                  for line in wrap(title, max(width or 0, total + 2))]
    first = True
    for piece in _pieces(cells):
        if isinstance(piece, Gap):
            note = to_ascii(piece.text()) if ascii else piece.text()
            parts += [Text(line, style="dim" if styled else "") for line in wrap(note, total)]
        elif piece or first:
            parts.append(_rich_table(cells, widths, style, piece, first, ascii, styled))
            first = False
    return parts, total


def _records(sheet: Sheet, cells: _Cells, width: int, title: str, ascii: bool) -> list[Line]:
    """Each row as a block of ``column: value`` lines, blocks one blank line apart."""
    lines: list[Line] = [[(text, "title")] for text in wrap(title, width)] if title else []
    note = f"(as records: too wide for {width} columns)"
    lines += [[(text, "dim")] for text in wrap(to_ascii(note) if ascii else note, width)]
    labels = [f"{h}: " if h else "" for h in (" ".join(h.split()) for h in cells.headers)]
    indent = max(map(width_of, labels))
    if indent > width // 2:
        indent = 0  # long labels: each value starts on the line below its label
    for row in cells.rows:
        lines.append([])
        if isinstance(row, Gap):
            lines += [[(text, "dim")] for text in wrap(to_ascii(row.text()) if ascii
                                                        else row.text(), width)]
            continue
        for label, (text, style), column in zip(labels, row[0], sheet.columns):
            if not text:
                continue
            room = width - indent if indent else width - 2
            formula = column.kind == "formula"
            body = [text] if column.kind in WHOLE else wrap(text, room, formula)
            if not label:
                lines += [[(b, style)] for b in wrap(text, width)]
            elif indent and width_of(body[0]) <= width - indent:
                lines.append([(_pad(label, indent, "left"), "header"), (body[0], style)])
                lines += [[(" " * indent + b, style)] for b in body[1:]]
            else:
                lines.append([(label.rstrip(), "header")])
                lines += [[("  " + b, style)] for b in (body if indent
                                                         else wrap(text, room, formula))]
    lines.append([])
    return lines


# -- any block ------------------------------------------------------------------------------------

# Named styles of the views, in rich's style language; other names are rich styles already.
STYLES = {"title": "bold", "header": "bold", "frame": None, "dim": "dim",
          "box": "blue", "output": "bold green", "hidden": "dim", "unused": "dim", "id": "cyan",
          "text": None, "edge": None, "label": "yellow"}


@dataclass(slots=True)
class Page:
    """Blocks laid out: rich renderables, in order, and the width of the widest line."""

    parts: list
    width: int


def _one_style(blocks, width: int | None, ascii: bool) -> str:
    """The style every table of the page is drawn in at ``width``: the narrowest any of them
    needs, so one output never mixes boxes with bare columns (a terminal's width only: with
    none, each table keeps its own)."""
    if not width:
        return "box"
    sheets = [block for block in _leaves(blocks) if isinstance(block, Sheet)]
    if len(sheets) < 2:
        return "box"
    chosen = [_choose(_Cells(sheet, ascii), width)[0] for sheet in sheets]
    return max(chosen, key=STYLES_IN_ORDER.index)


def _leaves(blocks):
    """The blocks in order, lists and rich Groups opened, None left out."""
    stack = [blocks]
    while stack:
        block = stack.pop()
        if isinstance(block, (list, tuple)):
            stack += reversed(block)
        elif hasattr(block, "renderables"):  # a rich Group
            stack += reversed(list(block.renderables))
        elif block is not None:
            yield block


def render(blocks, width: int | None, ascii: bool = False, styled: bool = True) -> Page:
    """The page for a list of blocks: sheets, prose (str, Prose, or rich Text), preformatted
    drawings, and lists or rich Groups of those. ``styled=False``: no styles (plain text)."""
    from rich.text import Text
    parts: list = []
    widest = 0
    least = _one_style(blocks, width, ascii)
    for block in _leaves(blocks):
        if isinstance(block, Sheet):
            more, used = _sheet(block, width, ascii, styled, least)
            parts += more
            widest = max(widest, used)
        elif isinstance(block, Preformatted):
            parts.append(styled_text(block.lines, styled))
            widest = max([widest] + [sum(width_of(t) for t, _ in line) for line in block.lines])
        else:
            if isinstance(block, Prose):
                text, style = block.text, block.style
            elif hasattr(block, "plain"):  # rich Text
                text, style = block.plain, (str(block.style) or None)
            else:
                text, style = str(block), None
            if ascii:
                text = to_ascii(text)
            lines = [piece for line in text.split("\n")
                     for piece in (wrap(line, width) if width else [line])]
            widest = max([widest] + [width_of(line) for line in lines])
            parts.append(Text("\n".join(lines), style=(_style(style) or "") if styled else "",
                              no_wrap=True, overflow="ignore"))
    return Page(parts, max(widest, width or 0, 1))


def styled_text(lines: list[Line], styled: bool = True):
    """The lines as one rich Text, each run in its style (no trailing spaces)."""
    from rich.text import Text
    text = Text(no_wrap=True, overflow="ignore")
    for k, line in enumerate(lines):
        if k:
            text.append("\n")
        line = list(line)
        while line and not line[-1][0].strip():
            line.pop()  # no trailing spaces
        if line:
            line[-1] = (line[-1][0].rstrip(), line[-1][1])
        for chunk, style in line:
            text.append(chunk, _style(style) if styled else None)
    return text


def console(file, width: int, terminal: bool, record: bool = False):
    """A rich console writing to ``file`` at ``width`` columns: colour only on a terminal and
    without ``NO_COLOR``, no markup, highlighting or emoji codes read from gradcli's text."""
    import os

    from rich.console import Console
    options = {"no_color": True} if os.environ.get("NO_COLOR") else {}
    if not terminal:
        options["color_system"] = None
    return Console(file=file, width=max(width, 1), force_terminal=terminal, record=record,
                   highlight=False, emoji=False, markup=False, legacy_windows=False, **options)


def print_page(page: Page, out) -> None:
    """Print the page on a rich console."""
    narrower = out.width < page.width
    if narrower:  # a natural width on a narrower console: its lines are not cut or wrapped
        out.width, width = page.width, out.width
    try:
        for part in page.parts:
            out.print(part, crop=False, **_unwrapped(part, out.width))
    finally:
        if narrower:
            out.width = width


def _unwrapped(part, width: int) -> dict:
    """The options that print a Text made not to wrap (``no_wrap``, overflow "ignore") as
    made, when each of its lines fits ``width``: ``Console.print`` joins the Texts it is given
    into a new one that forgets both, and runs every line through rich's word-wrapper, which
    leaves a line that fits as it is (the source read back, one line of 10^5 words)."""
    from rich.text import Text
    if (isinstance(part, Text) and part.no_wrap and part.overflow == "ignore"
            and max(map(width_of, part.plain.split("\n"))) <= width):
        return {"no_wrap": True, "overflow": "ignore"}
    return {}


def plain_text(page: Page) -> str:
    """The page as text, without trailing spaces, ending in a newline."""
    import io
    buffer = io.StringIO()
    out = console(buffer, page.width, terminal=False)
    for part in page.parts:
        out.print(part, crop=False, **_unwrapped(part, out.width))
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())
