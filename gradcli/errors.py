"""Every error gradcli reports: one base class, a source span, a short label, and an exit code.

An error knows *where* it happened (a span of character offsets into the source) and, where we can
tell, what would fix it (``hint``). :func:`describe` turns it into the text a person reads:
the message, the offending line with a caret under the span, and the hint.
"""

from __future__ import annotations

Span = tuple[int, int]

EXIT_OK = 0
EXIT_NUMERICAL = 1
EXIT_BAD_INPUT = 2


class GradcliError(Exception):
    """Base class. ``exit_code`` is 2 (bad input) unless a subclass says otherwise."""

    exit_code = EXIT_BAD_INPUT
    kind = "error"

    def __init__(self, message: str, span: Span | None = None, *, hint: str | None = None,
                 label: str | None = None, source: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.label = label
        self.source = source  # the text the span points into, when it is not the main source

    def __str__(self) -> str:
        return self.message


class ParseError(GradcliError):
    """The source is not a well-formed expression or program."""

    kind = "syntax error"


class NameLookupError(GradcliError):
    """An unknown function, a wrong number of arguments, or a name used in the wrong role."""

    kind = "name error"


class InputError(GradcliError):
    """The point is wrong: a missing input, a value that is not a number, an unknown --wrt name."""

    kind = "input error"


class DomainError(GradcliError):
    """A function was evaluated outside its domain (``log(-1)``, ``1/0``)."""

    kind = "domain error"


class LimitError(GradcliError):
    """The input is larger than gradcli supports (source length, nodes)."""

    kind = "limit exceeded"


class NumericalError(GradcliError):
    """The computation overflowed or produced a non-finite number."""

    exit_code = EXIT_NUMERICAL
    kind = "numerical error"


def name_list(names, limit: int = 10) -> str:
    """``x, y, z``; past ``limit`` names, the first ``limit`` and ``and N more``."""
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit:,} more"


def locate(source: str, offset: int) -> tuple[int, int, str]:
    """Return (1-based line, 0-based column, text of that line) for a character offset."""
    offset = max(0, min(offset, len(source)))
    start = source.rfind("\n", 0, offset) + 1
    end = source.find("\n", offset)
    if end < 0:
        end = len(source)
    return source.count("\n", 0, start) + 1, offset - start, source[start:end]


def caret_lines(source: str, span: Span, label: str | None = None) -> list[str]:
    """The line holding ``span`` and a caret line under it, as two (or three) strings."""
    line_no, col, text = locate(source, span[0])
    width = max(1, min(span[1], span[0] + len(text) - col) - span[0])
    # Long lines are cut around the caret so the message stays readable in a terminal.
    if len(text) > 100:
        lo = max(0, col - 40)
        prefix = "..." if lo else ""
        text = prefix + text[lo:lo + 80] + ("..." if lo + 80 < len(text) else "")
        col = col - lo + len(prefix)
        width = min(width, 80)
    gutter = f"{line_no} | " if "\n" in source else "  "
    caret = " " * (len(gutter) + col) + "^" * width + (f" {label}" if label else "")
    return [gutter + text, caret]


def describe(error: GradcliError, source: str | None = None) -> str:
    """The full human message: ``kind: message``, the source line with a caret, and the hint."""
    lines = [f"{error.kind}: {error.message}"]
    text = error.source if error.source is not None else source
    if error.span is not None and text is not None:
        lines += caret_lines(text, error.span, error.label)
    if error.hint:
        lines.append(f"hint: {error.hint}")
    return "\n".join(lines)
