"""Points: ``x=2,y=pi/4`` -> {name: float}, for ``--at``, ``--direction`` and the Python API.

A value is a number or exactly one constant expression in the language itself (``pi/4``,
``atan2(1, 2)``), evaluated by the same parser and lowering, never by Python's ``eval``. A
statement, an assignment, a ``;`` or an input name in a value is an :class:`InputError` whose
caret points into the option as the user typed it (``--at x=1;y=2``).
"""

from __future__ import annotations

import math
import re

from .errors import GradcliError, InputError, Span, name_list

_NAME = re.compile(r"[^\W\d]\w*\Z")
_RULE = "a value is a number or one constant expression (pi/4, atan2(1, 2)), nothing else"


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside parentheses: ``x=atan2(1,2),y=3`` -> two parts."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def constant_value(text: str, what: str, *, shown: str | None = None, offset: int = 0) -> float:
    """The value of a number or of one constant expression; ``what`` names it in errors.

    ``shown`` is the whole text the user typed (``--at x=1;y=2``) and ``offset`` where ``text``
    starts in it: an error's caret then points into ``shown``.
    """
    def fail(message: str, span: Span | None = None, hint: str | None = _RULE) -> InputError:
        if span is None or shown is None:
            return InputError(message, hint=hint)
        return InputError(message, (offset + span[0], offset + span[1]), hint=hint, source=shown)

    lead = len(text) - len(text.lstrip())
    body = text.strip()
    try:
        value = float(body)
    except ValueError:
        value = None
    if value is None:
        if not body:
            raise fail(f"{what} has no value", (lead, lead + 1), hint=None)
        value = _evaluate(body, what, lambda m, s, h=_RULE: fail(m, (lead + s[0], lead + s[1]), h))
    if not math.isfinite(value):
        raise fail(f"{what} is {body!r}, which is not a finite number", (lead, lead + len(body)),
                   hint=None)
    return value


def one_expression(text: str, what: str, fail):
    """``text`` parsed as exactly one expression (a ``Program`` of one statement that is not an
    assignment); ``fail(message, span, hint[, error class])`` makes the error for anything else
    (the class is the parser's, for a syntax error)."""
    for sep in (";", "\n"):
        at = text.find(sep)
        if at >= 0:
            raise fail(f"{what} is not one expression: it holds {sep!r}, which separates "
                       "statements", (at, at + 1))
    from .engine.graph import parse_source
    from .language.ast import Assign
    try:
        program = parse_source(text)
    except GradcliError as exc:
        raise fail(f"{what} is not an expression: {exc.message}",
                   exc.span or (0, len(text)), exc.hint, type(exc)) from None
    statement = program.statements[0]
    if len(program.statements) != 1 or isinstance(statement, Assign):
        raise fail(f"{what} is an assignment, not an expression", statement.span)
    return program


def _evaluate(text: str, what: str, fail) -> float:
    """One constant expression's value; ``fail(message, span, hint)`` makes the error."""
    from .engine.graph import lower
    program = one_expression(text, what, lambda m, s, h=_RULE, cls=None: fail(m, s, h or _RULE))
    try:
        graph = lower(program, text)
    except GradcliError as exc:
        raise fail(f"{what} is not a constant expression: {exc.message}",
                   exc.span or (0, len(text)), exc.hint or _RULE) from None
    if graph.inputs:
        raise fail(f"{what} is not a number: it reads the name {graph.inputs[0]}",
                   graph.input_spans[0],
                   "a value may use numbers, pi, e and functions, not the inputs")
    if graph.output >= graph.n_const:  # cannot happen: a graph without inputs folds to a constant
        raise fail(f"{what} is not a constant expression", (0, len(text)))
    return graph.constants[graph.output]


class Point(dict):
    """A parsed point: name -> value, remembering where each name stood in the option's text
    (``places[name] = (text, span)``) so that a later error about a name can point at it."""

    def __init__(self):
        super().__init__()
        self.places: dict[str, tuple[str, Span]] = {}

    def error(self, name: str, message: str, hint: str | None = None) -> InputError:
        """An InputError about ``name`` with the caret under it, when its place is known."""
        place = self.places.get(name)
        if place is None:
            return InputError(message, hint=hint)
        return InputError(message, place[1], hint=hint, source=place[0])


def parse_point(text: str, option: str = "--at") -> Point:
    """``"x=2,y=3"`` -> ``{"x": 2.0, "y": 3.0}``; errors point into ``option text``."""
    shown = f"{option} {text}"
    point = Point()
    start = len(option) + 1  # where the current part starts in ``shown``
    for raw in split_top_level(text):
        lead = len(raw) - len(raw.lstrip())
        part = raw.strip()
        here = start + lead
        start += len(raw) + 1
        if not part:
            if not text.replace(",", "").strip():
                raise InputError(f"{option} {text!r} gives no values", hint=f"write {option} x=2,y=3")
            continue
        span = (here, here + len(part))
        name, eq, value = part.partition("=")
        name = name.strip()
        if not eq:
            left, colon, right = part.partition(":")
            if colon and _NAME.match(left.strip()) and right.strip():
                raise InputError(f"{option} {part}: a name and its value are joined by '='",
                                 span, hint=f"write {option} {left.strip()}={right.strip()}",
                                 source=shown)
            raise InputError(f"{option} {part}: no value for {part}", span,
                             hint=f"write {option} {part}=2" if _NAME.match(part)
                             else f"write {option} x=2", source=shown)
        if not name:
            raise InputError(f"{option} {part}: a value without a name", span,
                             hint=f"write {option} x=2", source=shown)
        if not _NAME.match(name):
            raise InputError(f"{option} {part}: {name!r} is not a valid name",
                             (here, here + len(part.partition("=")[0].rstrip())),
                             source=shown)
        if name in point:
            raise InputError(f"{option} gives {name} twice", (here, here + len(name)),
                             source=shown)
        value_at = here + len(part) - len(value)
        point[name] = constant_value(value, f"the value of {name}", shown=shown, offset=value_at)
        point.places[name] = (shown, (here, here + len(name)))
    return point


def merge_points(parts: list[dict[str, float]], option: str = "--at") -> Point:
    """Several ``--at`` options into one point; a name given twice is an error."""
    merged = Point()
    for part in parts:
        places = getattr(part, "places", {})
        for name, value in part.items():
            if name in merged:
                message = f"{option} gives {name} twice"
                raise part.error(name, message) if name in places else InputError(message)
            merged[name] = value
            if name in places:
                merged.places[name] = places[name]
    return merged


def check_direction(direction, inputs) -> None:
    """A direction names only inputs the source reads and is not zero everywhere
    (:class:`InputError` otherwise, pointing at the name when ``direction`` is a :class:`Point`)."""
    read = set(inputs)
    for name in direction:
        if name not in read:
            message = f"--direction names {name}, which the expression does not read"
            hint = f"its inputs are: {name_list(inputs) or '(none)'}"
            raise (direction.error(name, message, hint) if isinstance(direction, Point)
                   else InputError(message, hint=hint))
    if not any(direction.values()):
        raise InputError("--direction is zero in every input, so the derivative along it is 0 "
                         "by definition", hint="give at least one input a non-zero tangent, "
                                               "e.g. --direction x=1")
