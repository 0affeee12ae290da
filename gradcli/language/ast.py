"""The abstract syntax tree: immutable records that the parser builds and the lowering reads.

Each node carries ``span``, the (start, end) character offsets of its source text, for error
messages; spans take no part in ``==``, so two parses of the same expression compare equal
whatever their spacing.

The nodes behave as frozen, slotted dataclasses (keyword or positional fields, ``==`` and
``hash`` by their fields, a ``repr`` without the span, assignment refused), but are written
out: ``@dataclass`` generates and compiles six methods per class when the module is imported,
5 ms of every ``gradcli`` start-up for these seven classes (docs/performance.md).
"""

from __future__ import annotations

from typing import Union

from ..slotted import Frozen, set_field as _set

Span = tuple[int, int]
NO_SPAN: Span = (0, 0)


class _Node(Frozen):
    """What every node shares: immutability, and ``==``, ``hash`` and ``repr`` over the fields
    named in ``__match_args__`` (every field but the spans)."""

    __slots__ = ()


class Num(_Node):
    __slots__ = ("value", "span")
    __match_args__ = ("value",)
    value: float
    span: Span

    def __init__(self, value: float, span: Span = NO_SPAN):
        _set(self, "value", value)
        _set(self, "span", span)


class Var(_Node):
    __slots__ = ("name", "span")
    __match_args__ = ("name",)
    name: str
    span: Span

    def __init__(self, name: str, span: Span = NO_SPAN):
        _set(self, "name", name)
        _set(self, "span", span)


class Unary(_Node):
    __slots__ = ("op", "operand", "span")
    __match_args__ = ("op", "operand")
    op: str  # "-" or "+"
    operand: "Expr"
    span: Span

    def __init__(self, op: str, operand: "Expr", span: Span = NO_SPAN):
        _set(self, "op", op)
        _set(self, "operand", operand)
        _set(self, "span", span)


class Binary(_Node):
    __slots__ = ("op", "left", "right", "span")
    __match_args__ = ("op", "left", "right")
    op: str  # "+", "-", "*", "/", "^"  ("**" is read as "^")
    left: "Expr"
    right: "Expr"
    span: Span

    def __init__(self, op: str, left: "Expr", right: "Expr", span: Span = NO_SPAN):
        _set(self, "op", op)
        _set(self, "left", left)
        _set(self, "right", right)
        _set(self, "span", span)


class Call(_Node):
    __slots__ = ("name", "args", "span", "name_span")
    __match_args__ = ("name", "args")
    name: str
    args: tuple["Expr", ...]
    span: Span
    name_span: Span

    def __init__(self, name: str, args: tuple["Expr", ...], span: Span = NO_SPAN,
                 name_span: Span = NO_SPAN):
        _set(self, "name", name)
        _set(self, "args", args)
        _set(self, "span", span)
        _set(self, "name_span", name_span)


class Assign(_Node):
    __slots__ = ("name", "op", "value", "span")
    __match_args__ = ("name", "op", "value")
    name: str
    op: str  # "=", "+=", "-=", "*=", "/="
    value: "Expr"
    span: Span

    def __init__(self, name: str, op: str, value: "Expr", span: Span = NO_SPAN):
        _set(self, "name", name)
        _set(self, "op", op)
        _set(self, "value", value)
        _set(self, "span", span)


class Program(_Node):
    __slots__ = ("statements", "span")
    __match_args__ = ("statements",)
    statements: tuple[Union["Expr", Assign], ...]
    span: Span

    def __init__(self, statements: tuple[Union["Expr", Assign], ...], span: Span = NO_SPAN):
        _set(self, "statements", statements)
        _set(self, "span", span)


Expr = Union[Num, Var, Unary, Binary, Call]
