"""An error as data: the ``{"error": {...}}`` object that ``--json`` prints instead of a result.

The human text (:func:`gradcli.errors.describe`) still goes to standard error; this is the same
error for a program to read, built in this one place:

>>> from gradcli.errors import DomainError
>>> error_object(DomainError("log(-1) is outside the domain of log", (0, 6)), "log(x)")["error"]
... # doctest: +NORMALIZE_WHITESPACE
{'kind': 'domain', 'message': 'log(-1) is outside the domain of log', 'line': 1, 'column': 1,
 'span': [0, 6], 'hint': None}
"""

from __future__ import annotations

from ..errors import GradcliError, locate

# The kinds a program can branch on; every error maps to one of them.
KINDS = ("syntax", "name", "input", "domain", "numerical", "limit", "io")


def kind_of(error: GradcliError) -> str:
    """The error's one-word kind (``"syntax"``, ``"io"``, ...); anything else reads as input."""
    kind = str(getattr(error, "kind", "")).split(" ")[0].lower()
    return kind if kind in KINDS else "input"


def error_object(error: GradcliError, source: str | None = None, *, message: str | None = None,
                 hint: str | None = None) -> dict:
    """``{"error": {kind, message, line, column, span, hint}}``. ``line`` and ``column`` count
    from 1, in the text the span points into: the error's own (an option's value, an expect
    formula), else ``source``; they and ``span`` are null when the error has no place.
    ``message`` and ``hint`` replace the error's own (the CLI's text names flags)."""
    text = error.source if getattr(error, "source", None) is not None else source
    span = getattr(error, "span", None)
    line = column = None
    if span is not None and text is not None:
        line, col, _ = locate(text, span[0])
        column = col + 1
    data = {"kind": kind_of(error), "message": message or str(error), "line": line,
            "column": column, "span": list(span) if span is not None else None,
            "hint": hint if hint is not None else getattr(error, "hint", None)}
    shapes = getattr(error, "shapes", None)
    if shapes:  # a shape error: the shapes involved, as lists
        data["shapes"] = [list(shape) for shape in shapes]
    return {"error": data}
