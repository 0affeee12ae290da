"""Every error gradcli reports: one base class whose subclasses carry fields, not sentences.

An error knows its ``kind`` (one word, for programs: ``"syntax"``, ``"name"``, ``"input"``,
``"domain"``, ``"numerical"``, ``"limit"`` or ``"io"``), *where* it happened (``span``: character
offsets into the source; ``node``: the tape id such as ``v3``), what it is about (``names`` of
inputs, ``values`` involved, the ``option`` — the parameter at fault, spelled as the Python API
spells it: ``at``, ``wrt``, ``direction``, ``expect``, ``seed``, ``mode``) and, where we can
tell, what would fix it (``hint``; where the fix is a rewrite of the text, also ``fix``: the
``(span, replacement)`` pairs that make it, for a program or a test to apply). Nothing here
mentions command-line flags: the CLI turns the fields into its own text (:func:`describe` with ``option_prefix="--"``) and adds flag hints.

>>> e = InputError("names q, which the expression does not read", option="wrt", names=("q",))
>>> str(e), e.kind
('wrt names q, which the expression does not read', 'input')
>>> describe(e, option_prefix="--")
'input error: --wrt names q, which the expression does not read'
"""

from __future__ import annotations

Span = tuple[int, int]

EXIT_NUMERICAL = 1
EXIT_BAD_INPUT = 2


class GradcliError(Exception):
    """Base class. ``exit_code`` is 2 (bad input) unless a subclass says otherwise.

    When ``option`` is set, the sentence given is about that option and the text reads
    ``"{option} {sentence}"``: that is ``message`` (and ``str(error)``); the CLI writes the
    option as a flag (:meth:`text` with ``option_prefix="--"``).
    """

    exit_code = EXIT_BAD_INPUT
    kind = "input"  # for programs (JSON): one word
    title = "error"  # for people: the head of the message

    def __init__(self, message: str, span: Span | None = None, *, hint: str | None = None,
                 label: str | None = None, source: str | None = None, node: str | None = None,
                 names: tuple[str, ...] = (), values: tuple[float, ...] = (),
                 option: str | None = None, fix: tuple[tuple[Span, str], ...] = ()):
        super().__init__(message)
        self.sentence = message  # without the option
        self.span = span
        self.hint = hint
        self.label = label  # printed after the caret
        self.source = source  # the text the span points into, when it is not the main source
        self.node = node  # the tape id of the node at fault: "v3" (an input: its name)
        self.names = tuple(names)  # the inputs (or assigned names) the error is about
        self.values = tuple(values)  # the numbers involved: a call's arguments, a bad value
        self.option = option  # the parameter at fault, as the Python API names it
        # the hint as a rewrite: (span, replacement) pairs in the text the spans point into
        self.fix = tuple(fix)

    def text(self, option_prefix: str = "") -> str:
        """The sentence, with the option (if any) written ``option_prefix + option`` in front."""
        if self.option is None:
            return self.sentence
        return f"{option_prefix}{self.option} {self.sentence}"

    @property
    def message(self) -> str:
        """The text as the Python API says it: ``wrt names q, which the expression ...``."""
        return self.text()

    def __str__(self) -> str:
        return self.text()


class ParseError(GradcliError):
    """The source is not a well-formed expression or program."""

    kind, title = "syntax", "syntax error"


class NameLookupError(GradcliError):
    """An unknown function, a wrong number of arguments, or a name used in the wrong role."""

    kind, title = "name", "name error"


class InputError(GradcliError):
    """The point or an option is wrong: a missing input, a value that is not a number, an
    unknown name to differentiate by."""

    kind, title = "input", "input error"


class MissingInputError(InputError):
    """The point gives no value for the inputs ``names`` (``span``: the first one's first read)."""


class ShapeError(InputError):
    """Array shapes that do not fit: operands that do not broadcast, an index out of range, a
    ragged literal. ``shapes`` holds the shapes involved (tuples), in the source's order."""

    def __init__(self, message: str, span: Span | None = None, *, shapes: tuple = (), **fields):
        super().__init__(message, span, **fields)
        self.shapes = tuple(shapes)


class DomainError(GradcliError):
    """A function was evaluated outside its domain (``log(-1)``, ``1/0``)."""

    kind, title = "domain", "domain error"


class LimitError(GradcliError):
    """The input is larger than gradcli supports (source length, nodes)."""

    kind, title = "limit", "limit exceeded"


class OutputError(GradcliError):
    """Standard output cannot be written: a full disk, a closed stream."""

    kind, title = "io", "io error"


class NumericalError(GradcliError):
    """The computation overflowed or produced a non-finite number."""

    exit_code = EXIT_NUMERICAL
    kind, title = "numerical", "numerical error"


class SingularGradientError(NumericalError):
    """The value exists but a gradient component does not: ``limits`` maps each such input to
    what its partial tends to there, +inf or -inf (unbounded: ``sqrt(x)`` at 0) or nan (no
    limit). ``result`` is the evaluation itself, its gradient holding those limits, for the
    views to print the value and every component that is finite; ``reason`` says which node's
    slope does not exist (``v1 = sqrt(0) has an infinite slope (+∞)``)."""

    def __init__(self, message: str, span: Span | None = None, *, result=None,
                 limits: dict | None = None, reason: str = "", **fields):
        super().__init__(message, span, **fields)
        self.result = result
        self.limits = dict(limits or {})
        self.reason = reason


class FileError(GradcliError):
    """A file could not be read or written, or an external program (Graphviz) is missing."""

    kind, title = "io", "io error"  # the title's first word is the kind, as for every error


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


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes: East Asian wide characters two, combining marks
    none, others one (what a caret line must count to stand under the right character)."""
    if text.isascii():
        return len(text)
    import unicodedata
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def caret_lines(source: str, span: Span, label: str | None = None, show=None) -> list[str]:
    """The line holding ``span`` and a caret line under it, as two (or three) strings.
    ``show`` is how text is printed (``θ`` as ``\\u03b8`` on a cp1252 stream): the carets count
    the cells of what is printed, so they stand under the text they point at."""
    show = show or (lambda t: t)
    line_no, col, text = locate(source, span[0])
    width = max(1, min(span[1], span[0] + len(text) - col) - span[0])
    # Long lines are cut around the caret so the message stays readable in a terminal.
    before, marked, after = text[:col], text[col:col + width], text[col + width:]
    if len(text) > 100:
        lo, hi = max(0, col - 40), max(0, col - 40) + 80
        marked = marked[:80]
        end = col + len(marked)
        before = ("..." if lo else "") + text[lo:col]
        after = text[end:max(hi, end)] + ("..." if hi < len(text) else "")
    before, marked, after = show(before), show(marked), show(after)
    gutter = show(f"{line_no} | " if "\n" in source else "  ")
    caret = (" " * (cells(gutter) + cells(before)) + "^" * max(1, cells(marked))
             + (f" {show(label)}" if label else ""))
    return [gutter + before + marked + after, caret]


def describe(error: GradcliError, source: str | None = None, *, option_prefix: str = "",
             hint: str | None = None, show=None) -> str:
    """The full human message: ``title: text``, the source line with a caret, and the hint
    (``hint``, when given, replaces the error's own). ``show`` is how text is printed, as for
    :func:`caret_lines`."""
    lines = [f"{error.title}: {error.text(option_prefix)}"]
    text = error.source if error.source is not None else source
    hint = hint or error.hint
    tail = [f"hint: {hint}"] if hint else []
    if show is not None:
        lines, tail = [show(line) for line in lines], [show(line) for line in tail]
    if error.span is not None and text is not None:
        lines += caret_lines(text, error.span, error.label, show)
    return "\n".join(lines + tail)
