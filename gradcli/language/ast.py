"""The abstract syntax tree: frozen dataclasses that the parser builds and the lowering reads.

Each node carries ``span``, the (start, end) character offsets of its source text, for error
messages; spans take no part in ``==``, so two parses of the same expression compare equal
whatever their spacing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

Span = tuple[int, int]
NO_SPAN: Span = (0, 0)


@dataclass(frozen=True, slots=True)
class Num:
    value: float
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Var:
    name: str
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Unary:
    op: str  # "-" or "+"
    operand: "Expr"
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Binary:
    op: str  # "+", "-", "*", "/", "^"  ("**" is read as "^")
    left: "Expr"
    right: "Expr"
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    args: tuple["Expr", ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)
    name_span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Assign:
    name: str
    op: str  # "=", "+=", "-=", "*=", "/="
    value: "Expr"
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Program:
    statements: tuple[Union["Expr", Assign], ...]
    span: Span = field(default=NO_SPAN, compare=False, repr=False)


Expr = Union[Num, Var, Unary, Binary, Call]
