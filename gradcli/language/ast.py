"""The abstract syntax tree: records that the parser builds and the lowering reads, never changed
once built. They compare and hash by their fields (``unsafe_hash``) as frozen records would, but
are not frozen: a frozen record's ``__init__`` sets each field through ``object.__setattr__``,
and a large program's parse makes millions of them.

Each node carries ``span``, the (start, end) character offsets of its source text, for error
messages; spans take no part in ``==``, ``hash`` or ``repr``, so two parses of the same
expression compare equal whatever their spacing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

Span = tuple[int, int]
NO_SPAN: Span = (0, 0)


def _span():
    """A span field: where the node is, not what it is."""
    return field(default=NO_SPAN, compare=False, repr=False)


@dataclass(slots=True, unsafe_hash=True)
class Num:
    value: float
    span: Span = _span()


@dataclass(slots=True, unsafe_hash=True)
class Var:
    name: str
    span: Span = _span()


@dataclass(slots=True, unsafe_hash=True)
class Unary:
    op: str  # "-" or "+"
    operand: "Expr"
    span: Span = _span()


@dataclass(slots=True, unsafe_hash=True)
class Binary:
    op: str  # "+", "-", "*", "/", "@", "^"  ("**" is read as "^")
    left: "Expr"
    right: "Expr"
    span: Span = _span()


@dataclass(slots=True, unsafe_hash=True)
class Call:
    name: str
    args: tuple["Expr", ...]
    span: Span = _span()
    name_span: Span = _span()


@dataclass(slots=True, unsafe_hash=True)
class ArrayLit:
    """``[a, b, c]``: a vector of its items (a matrix when the items are vectors)."""

    items: tuple["Expr", ...]
    span: Span = _span()


@dataclass(slots=True, unsafe_hash=True)
class Index:
    """``x[0]``, ``A[i, j]``: one element (or row) of an array; the indices are integer
    constants, read at lowering."""

    target: "Expr"
    indices: tuple["Expr", ...]
    span: Span = _span()


@dataclass(slots=True, unsafe_hash=True)
class Slice:
    """``1:3``, ``:``, ``2:`` in an index: the elements of an axis from ``start`` up to
    ``stop`` (either None: that end of the axis); both integer constants, read at lowering."""

    start: "Expr | None"
    stop: "Expr | None"
    span: Span = _span()


@dataclass(slots=True, unsafe_hash=True)
class Keyword:
    """``axis=0`` among a call's arguments: an array function's option, read at lowering."""

    name: str
    value: "Expr"
    span: Span = _span()


@dataclass(slots=True, unsafe_hash=True)
class Assign:
    name: str
    op: str  # "=", "+=", "-=", "*=", "/="
    value: "Expr"
    span: Span = _span()


@dataclass(slots=True, unsafe_hash=True)
class Program:
    statements: tuple[Union["Expr", Assign], ...]
    span: Span = _span()


Expr = Union[Num, Var, Unary, Binary, Call, ArrayLit, Index]
