"""Text laid out for a width: tables that never cut a number, prose wrapped between words.

A :class:`Sheet` is a table as plain data (a title, columns that say whether they hold numbers
or text, rows, and gaps where rows were left out). :func:`render` lays out a list of blocks
(sheets, prose, drawings) for a width, or for their natural width when the width is ``None``
(a pipe or a file), and gives lines of ``(text, style)`` runs; the screen gives the styles their
colours, or writes the text alone.

How a table meets a width:

1. it fits at its natural width: drawn as it is;
2. it fits once text cells are wrapped between their pieces (a piece is a word, or a bracketed
   formula kept whole, ``sin(a, b)``) and numbers are kept whole: drawn with those widths;
3. otherwise each row is printed as a block of ``column: value`` lines, and one line says so.

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


@dataclass
class Column:
    header: str
    justify: str = "left"  # "left" or "right"
    kind: str = "text"  # "number" and "label": never broken; "text": broken between pieces;
    # "formula": broken only at spaces outside brackets, however long a bracketed piece is
    max_width: int | None = None  # text wider than this wraps even at natural width (prose)


@dataclass(frozen=True)
class Gap:
    """Rows left out of a table: shown as one line saying how many and how to see them."""

    count: int
    hint: str = ""

    def text(self) -> str:
        rows = "row" if self.count == 1 else "rows"
        return f"⋮ {self.count:,} {rows} not shown" + (f" ({self.hint})" if self.hint else "")


@dataclass
class Sheet:
    """A table as data: columns, rows of cells (str, or rich ``Text`` for a styled cell), gaps."""

    title: str = ""
    columns: list[Column] = field(default_factory=list)
    rows: list = field(default_factory=list)  # tuples of cells, or Gap

    def add_column(self, header: str, justify: str = "left", kind: str | None = None,
                   max_width: int | None = None) -> None:
        kind = kind or ("number" if justify == "right" else "text")
        self.columns.append(Column(header, justify, kind, max_width))

    def add_row(self, *cells) -> None:
        self.rows.append(cells)

    def add_gap(self, count: int, hint: str = "") -> None:
        self.rows.append(Gap(count, hint))


@dataclass
class Prose:
    """Text wrapped between words at the width (never inside a number), in one style."""

    text: str
    style: str | None = None


@dataclass
class Preformatted:
    """Lines never wrapped (a drawing): cut at the width instead, by the caller."""

    lines: list[Line]
    boxes: list = field(default_factory=list)  # (name, first column, past the last column)


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
            while width_of(current) > width and not NUMBER.match(current):
                head = _fold(current, width)  # a word wider than the line: folded
                out.append(head)
                current = current[len(head):]
        out.append(current.rstrip())
    return out


NUMBER = re.compile(r"[-+]?(\d[\d,]*\.?\d*|\.\d+)(e[-+]?\d+)?[,;]?\Z|[-+]?(inf|nan)\Z")


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


# -- tables ---------------------------------------------------------------------------------------

class _Cells:
    """A sheet's text after the ASCII rewrite, with its measurements (the narrowest widths
    are measured only when the natural ones do not fit)."""

    def __init__(self, sheet: Sheet, ascii: bool):
        fix = to_ascii if ascii else None
        self.columns = sheet.columns
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


def _measure(sheet: Sheet, ascii: bool) -> _Cells:
    return _Cells(sheet, ascii)


def table_widths(sheet: Sheet, width: int | None, ascii: bool = False):
    """``(style, column widths)`` for ``width`` (None: natural): style "box" (lines around
    every cell) or "plain" (columns two spaces apart, a rule under the headers); ``(
    "records", None)`` when neither fits."""
    return _choose(_measure(sheet, ascii), width)


def _choose(cells: _Cells, width: int | None):
    for style in ("box", "plain", "tight"):
        widths = _widths(cells, width, _frame_width(style, len(cells.natural)))
        if widths is not None:
            return style, widths
    return "records", None


def _frame_width(style: str, columns: int) -> int:
    return 3 * columns + 1 if style == "box" else _GAPS[style] * (columns - 1)


_GAPS = {"plain": 2, "tight": 1}  # spaces between columns of a table without lines


def _widths(cells: _Cells, width: int | None, frame: int) -> list[int] | None:
    if width is None or sum(cells.natural) + frame <= width:
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


_FRAME = {"top": "┏━┳┓", "head": "┃┃┃", "rule": "┡━╇┩", "row": "│││", "bottom": "└─┴┘",
          "gap": "├─┴┤", "after": "├─┬┤"}


def render_sheet(sheet: Sheet, width: int | None, ascii: bool = False,
                 styled: bool = True) -> list[Line]:
    """The table's lines (title, box, rows) for ``width``; as records when it cannot fit."""
    cells = _measure(sheet, ascii)
    style, widths = _choose(cells, width)
    lines: list[Line] = []
    title = to_ascii(sheet.title) if ascii else sheet.title
    if widths is None:
        return _records(sheet, cells, width, title, ascii)
    inner = sum(widths) + 3 * len(widths) - 1
    if style != "box":
        inner = sum(widths) + _frame_width(style, len(widths))
    if title:
        for text in wrap(title, max(width or 0, inner + 2)):
            lines.append([(text, "title")])
    frame = {k: (to_ascii(v) if ascii else v) for k, v in
             (_FRAME if style == "box" else _PLAIN).items()}
    if style != "box":  # no lines around cells, columns one or two spaces apart
        return lines + _plain_table(cells, widths, sheet, frame, styled, " " * _GAPS[style])

    def rule(kind: str) -> Line:
        left, fill, cross, right = frame[kind]
        return [(left + cross.join(fill * (w + 2) for w in widths) + right, "frame")]

    def content(kind: str, texts: list[list[str]], styles: list, justify: list[str]) -> list:
        bar = frame[kind][0]
        out = []
        for i in range(max(len(t) for t in texts)):
            if styled:
                line: Line = [(bar, "frame")]
                for k, w in enumerate(widths):
                    piece = texts[k][i] if i < len(texts[k]) else ""
                    line += [(" ", None), (_pad(piece, w, justify[k]), styles[k]), (" ", None),
                             (bar, "frame")]
            else:
                line = [(bar + bar.join(
                    " " + _pad(texts[k][i] if i < len(texts[k]) else "", w, justify[k]) + " "
                    for k, w in enumerate(widths)) + bar, None)]
            out.append(line)
        return out

    justify = [c.justify for c in sheet.columns]
    lines.append(rule("top"))
    lines += content("head", [wrap(h, w) for h, w in zip(cells.headers, widths)],
                     ["header"] * len(widths), justify)
    lines.append(rule("rule"))
    bar = frame["row"][0]
    for r, row in enumerate(cells.rows):
        if not styled and not isinstance(row, Gap) and row[2] and all(
                cw <= w for cw, w in zip(row[1], widths)):  # the common case, fast
            lines.append([(bar + bar.join(
                [" " + (" " * (w - cw) + t if j == "right" else t + " " * (w - cw)) + " "
                 for (t, _), cw, w, j in zip(row[0], row[1], widths, justify)]) + bar, None)])
            continue
        if isinstance(row, Gap):
            if r:
                lines.append(rule("gap"))
            for text in wrap(to_ascii(row.text()) if ascii else row.text(), inner - 1):
                lines.append([(frame["row"][0] + " ", "frame"), (_pad(text, inner - 1, "left"),
                                                                   "dim"),
                              (frame["row"][0], "frame")])
            if r + 1 < len(cells.rows):
                lines.append(rule("after"))
            continue
        texts = [[t] if cw <= w and "\n" not in t else wrap(t, w, kind == "formula")
                 for (t, _), cw, w, kind in zip(row[0], row[1], widths, cells.kinds)]
        lines += content("row", texts, [s for _, s in row[0]], justify)
    if cells.rows and isinstance(cells.rows[-1], Gap):
        left, fill, _, right = frame["bottom"]
        lines.append([(left + fill * inner + right, "frame")])
    else:
        lines.append(rule("bottom"))
    return lines


_PLAIN = {"rule": "─"}


def _plain_table(cells: _Cells, widths: list[int], sheet: Sheet, frame: dict,
                 styled: bool, gap: str) -> list[Line]:
    """Columns ``gap`` apart, a rule under the headers: for tables a box would not fit."""
    justify = [c.justify for c in sheet.columns]
    total = sum(widths) + len(gap) * (len(widths) - 1)

    def content(texts: list[list[str]], styles: list) -> list[Line]:
        out = []
        for i in range(max(len(t) for t in texts)):
            line: Line = []
            for k, w in enumerate(widths):
                piece = texts[k][i] if i < len(texts[k]) else ""
                line += ([(gap, None)] if k else []) + [(_pad(piece, w, justify[k]), styles[k])]
            out.append(line if styled else [("".join(t for t, _ in line), None)])
        return out

    lines = content([wrap(h, w) for h, w in zip(cells.headers, widths)],
                    ["header"] * len(widths))
    lines.append([(gap.join(frame["rule"] * w for w in widths), "frame")])
    for row in cells.rows:
        if isinstance(row, Gap):
            lines += [[(text, "dim")] for text in wrap(to_ascii(row.text()) if ascii_of(frame)
                                                        else row.text(), total)]
            continue
        lines += content([[t] if cw <= w and "\n" not in t
                          else wrap(t, w, kind == "formula")
                          for (t, _), cw, w, kind in zip(row[0], row[1], widths, cells.kinds)],
                         [s for _, s in row[0]])
    return lines


def ascii_of(frame: dict) -> bool:
    return frame["rule"].isascii()


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

def render(blocks, width: int | None, ascii: bool = False, styled: bool = True) -> list[Line]:
    """Lines of ``(text, style)`` runs for a list of blocks: sheets, prose (str, Prose, or rich
    Text), preformatted drawings, and lists or rich Groups of those."""
    lines: list[Line] = []
    stack = [blocks]
    while stack:
        block = stack.pop()
        if block is None:
            continue
        if isinstance(block, (list, tuple)):
            stack += reversed(block)
        elif hasattr(block, "renderables"):  # a rich Group
            stack += reversed(list(block.renderables))
        elif isinstance(block, Sheet):
            lines += render_sheet(block, width, ascii, styled)
        elif isinstance(block, Preformatted):
            lines += block.lines
        else:
            if isinstance(block, Prose):
                text, style = block.text, block.style
            elif hasattr(block, "plain"):  # rich Text
                text, style = block.plain, (str(block.style) or None)
            else:
                text, style = str(block), None
            if ascii:
                text = to_ascii(text)
            for line in text.split("\n"):
                for piece in (wrap(line, width) if width else [line]):
                    lines.append([(piece, style)])
    return lines


def plain_text(lines: list[Line]) -> str:
    """The lines as text, without trailing spaces, ending in a newline."""
    return "".join("".join(t for t, _ in line).rstrip() + "\n" for line in lines)
