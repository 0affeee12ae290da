"""Standard output as gradcli sees it: its width, the characters it can show, its colours.

:func:`open_screen` decides once per command:

- **width**: ``--width N``; else a terminal's own width; else (a pipe, a file) none at all:
  tables take their natural width, so piped output is never shaped by a pretend terminal;
- **characters**: ASCII (``vbar5``, ``df/dx``, ``+-|`` boxes) with ``--ascii`` or when the
  stream's encoding cannot write the notation (cp1252, ASCII); Unicode otherwise;
- **colour**: only on a terminal, never with ``NO_COLOR``, and only for output short enough to
  read on screen (longer output is written as plain text, fast).

Writing to a full disk or a closed stream raises :class:`~gradcli.errors.OutputError`; a closed
pipe raises ``BrokenPipeError``, which the command line ends quietly.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from functools import cache
from typing import TextIO

from ..errors import OutputError
from .notation import needs_ascii, to_ascii

Line = list  # of (text, style) runs, as gradcli.views.layout gives them

MIN_WIDTH = 20  # narrower than this, no table or drawing could be read: --width says at least it
CHUNK = 1 << 15  # characters per write
COLOUR_LINES = 400  # past this many lines output is written plain (fewer than a screenful is not
# read in colour anyway)
EXPORT_SUFFIXES = (".svg", ".html", ".htm", ".txt", ".text", ".json")


class Screen:
    """Standard output as gradcli writes to it (a plain class: a dataclass costs half a
    millisecond of every start-up to compile its methods)."""

    def __init__(self, stream: TextIO | None, width: int | None, ascii: bool, colour: bool,
                 terminal: bool):
        self.stream = stream
        self.width = width  # None: natural widths (a pipe or a file, without --width)
        self.ascii = ascii
        self.colour = colour
        self.terminal = terminal

    # -- writing ---------------------------------------------------------------------------------

    def write(self, text: str) -> None:
        """Write ``text`` as it is (ASCII-rewritten when the stream needs it)."""
        if self.stream is None:
            raise OutputError("standard output is closed", hint="run gradcli with its output "
                              "going to a terminal, a pipe or a file")
        if self.ascii:
            text = to_ascii(text, getattr(self.stream, "encoding", None) or "ascii")
        with reported():
            # In pieces: one huge write to a pipe whose reader leaves can end "successfully"
            # half-written, so the closed pipe would go unnoticed.
            for k in range(0, len(text), CHUNK):
                self.stream.write(text[k:k + CHUNK])

    def echo(self, text: str = "") -> None:
        self.write(text + "\n")

    def json(self, data) -> None:
        """One JSON document on a line (``\\uXXXX`` escapes on an ASCII stream)."""
        import json
        self.echo(json.dumps(data, ensure_ascii=self.ascii))

    def show(self, *blocks) -> None:
        """Lay the blocks out for this screen and write them, in colour where that helps."""
        if all(isinstance(b, str) and "\n" not in b and len(b) < MIN_WIDTH for b in blocks):
            self.write("".join(b + "\n" for b in blocks))  # short lines: nothing to lay out
            return
        from .layout import plain_text, render
        if self.colour and _size(blocks) <= COLOUR_LINES:
            self._print_styled(render(list(blocks), self.width, self.ascii, styled=True))
            return
        self.write(plain_text(render(list(blocks), self.width, self.ascii, styled=False)))

    def flush(self) -> None:
        if self.stream is None:
            return
        with reported():
            self.stream.flush()

    def _print_styled(self, page) -> None:
        from .layout import console, print_page
        with reported():
            print_page(page, console(self.stream, page.width, terminal=True))


def open_screen(width: int | None = None, ascii: bool = False,
                stream: TextIO | None = None) -> Screen:
    """The screen for standard output (or ``stream``), with ``--width`` and ``--ascii``."""
    stream = sys.stdout if stream is None else stream
    terminal = _isatty(stream)
    if width is None and terminal:
        width = max(MIN_WIDTH, _terminal_columns(stream))
    ascii = ascii or needs_ascii(getattr(stream, "encoding", None))
    colour = terminal and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    return Screen(stream, width, ascii, colour, terminal)


def _size(blocks) -> int:
    """About how many lines the blocks take (a table's rows; other blocks count one)."""
    total, stack = 0, list(blocks)
    while stack:
        block = stack.pop()
        if isinstance(block, (list, tuple)):
            stack += block
        else:
            total += len(getattr(block, "rows", ())) + len(getattr(block, "lines", ())) + 1
    return total


def _terminal_columns(stream) -> int:
    """The terminal's width: $COLUMNS if set (as shells and rich read it), else the size of
    the terminal standard output is on."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80


def _isatty(stream) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, OSError):
        return False


def crop(lines: list[Line], width: int) -> list[Line]:
    """Each line cut at ``width`` columns (never wrapped: the line count stays the same)."""
    from .layout import width_of
    out = []
    for line in lines:
        used, kept = 0, []
        for chunk, style in line:
            w = width_of(chunk)
            if used + w <= width:
                kept.append((chunk, style))
                used += w
                continue
            k = 0
            while k < len(chunk) and used + width_of(chunk[k]) <= width:
                used += width_of(chunk[k])
                k += 1
            if k:
                kept.append((chunk[:k], style))
            break
        out.append(kept)
    return out


# -- exports ---------------------------------------------------------------------------------------

@cache
def _light_theme():
    """A light theme: dark text on white, yellow deepened so labels stay readable."""
    from rich.terminal_theme import TerminalTheme
    return TerminalTheme(
        (255, 255, 255), (30, 30, 30),
        [(0, 0, 0), (170, 0, 0), (0, 120, 0), (140, 100, 0), (0, 60, 170), (140, 0, 140),
         (0, 110, 130), (90, 90, 90)],
        [(90, 90, 90), (200, 0, 0), (0, 140, 0), (150, 110, 0), (30, 80, 200),
         (170, 0, 170), (0, 130, 150), (20, 20, 20)])


def _svg_format(svg: str) -> str:
    """rich's SVG without its web fonts: the text set in a local monospace font."""
    import re
    svg = re.sub(r"    @font-face \{.*?\}\n", "", svg, flags=re.S)
    svg = svg.replace("    <!-- Generated with Rich https://www.textualize.io -->\n", "")
    return svg.replace(
        "font-family: Fira Code, monospace;",
        'font-family: "Fira Code", "DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", '
        "monospace;").replace("font-family: arial;", "font-family: sans-serif;")


def export(blocks, path: str, width: int | None = None, ascii: bool = False) -> None:
    """Save the blocks to ``path`` by its suffix: ``.txt`` (plain text, no trailing spaces),
    ``.svg`` (self-contained: no web fonts), ``.html``. The layout is ``width`` or the natural
    width, never the terminal's."""
    import io

    from .layout import console, plain_text, print_page, render
    suffix = os.path.splitext(path)[1].lower()
    text = suffix in (".txt", ".text")
    page = render(list(blocks), width, ascii, styled=not text)
    if text:
        write_text(path, plain_text(page))
        return
    out = console(io.StringIO(), page.width, terminal=True, record=True)
    print_page(page, out)
    if suffix == ".svg":
        write_text(path, _svg_format(out.export_svg(title="gradcli", theme=_light_theme())))
    else:
        write_text(path, out.export_html(theme=_light_theme()))


def save_json(data, path: str) -> None:
    import json
    write_text(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def write_text(path: str, text: str) -> None:
    """``text`` as the whole of the file ``path`` (UTF-8), staged and renamed into place
    (:func:`gradcli.files.write_atomic`); a failure is a FileError naming the file."""
    from ..files import write_atomic
    write_atomic(path, text)


@contextmanager
def reported():
    """A failed write to standard output raised as :func:`stdout_error` says it (a closed pipe
    goes on as ``BrokenPipeError``, which the command line ends quietly)."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise stdout_error(exc) from None


def stdout_error(exc: OSError) -> OutputError:
    """The error of a write to standard output that failed (a full disk, a closed stream)."""
    import errno
    if exc.errno == errno.EBADF:
        return OutputError("standard output is closed", hint="run gradcli with its output "
                           "going to a terminal, a pipe or a file")
    return OutputError(f"cannot write to standard output: {exc.strerror or exc}")
