"""The abstract syntax tree: records that the parser builds and the lowering reads, never changed
once built. They compare and hash by their fields as frozen records would, but are not frozen:
a frozen record's ``__init__`` sets each field through ``object.__setattr__``, and a large
program's parse makes millions of them.

Each node carries ``span``, the (start, end) character offsets of its source text, for error
messages; spans take no part in ``==``, ``hash`` or ``repr``, so two parses of the same
expression compare equal whatever their spacing.

The nodes are plain classes with ``__slots__``, not dataclasses: every command imports this
module, and making eleven dataclasses at import is a cost every start-up would pay
(docs/performance.md). :class:`Node` gives them what ``dataclass(eq=True, unsafe_hash=True)``
would: ``==`` and ``hash`` over ``_fields``' values as a tuple, and a ``repr`` naming them.
Compiled (setup.py), ast.pxd makes them extension types with the same fields, which the
parser's callbacks, the printer and the lowering read directly.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Union

Span = tuple[int, int]
NO_SPAN: Span = (0, 0)


class Node:
    """An AST node: equal to a node of its own class with equal ``_fields`` (span and any
    other position left out), hashed by them, shown by them."""

    __slots__ = ("span",)
    _fields = ()

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return _values(self) == _values(other)
        return NotImplemented

    def __ne__(self, other):
        if other.__class__ is self.__class__:
            return _values(self) != _values(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(_values(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields,
                                                                     _values(self)))
        return f"{self.__class__.__qualname__}({shown})"


def _values(node) -> tuple:
    """A node's ``_fields``' values, as a tuple (one getter per class, in C)."""
    get = _GETTERS.get(node.__class__)
    if get is None:
        fields = node._fields
        get = attrgetter(*fields) if len(fields) > 1 else \
            (lambda n, get=attrgetter(*fields): (get(n),)) if fields else (lambda n: ())
        _GETTERS[node.__class__] = get
    return get(node)


_GETTERS: dict = {}


class Num(Node):
    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, value: float, span: Span = NO_SPAN):
        self.value = value
        self.span = span


class Var(Node):
    __slots__ = ("name",)
    _fields = ("name",)

    def __init__(self, name: str, span: Span = NO_SPAN):
        self.name = name
        self.span = span


class Unary(Node):
    __slots__ = ("op", "operand")
    _fields = ("op", "operand")

    def __init__(self, op: str, operand: Expr, span: Span = NO_SPAN):
        self.op = op  # "-" or "+"
        self.operand = operand
        self.span = span


class Binary(Node):
    __slots__ = ("op", "left", "right")
    _fields = ("op", "left", "right")

    def __init__(self, op: str, left: Expr, right: Expr, span: Span = NO_SPAN):
        self.op = op  # "+", "-", "*", "/", "@", "^"  ("**" is read as "^")
        self.left = left
        self.right = right
        self.span = span


class Call(Node):
    __slots__ = ("name", "args", "name_span")
    _fields = ("name", "args")

    def __init__(self, name: str, args: tuple[Expr, ...], span: Span = NO_SPAN,
                 name_span: Span = NO_SPAN):
        self.name = name
        self.args = args
        self.span = span
        self.name_span = name_span


class ArrayLit(Node):
    """``[a, b, c]``: a vector of its items (a matrix when the items are vectors)."""

    __slots__ = ("items",)
    _fields = ("items",)

    def __init__(self, items: tuple[Expr, ...], span: Span = NO_SPAN):
        self.items = items
        self.span = span


class Index(Node):
    """``x[0]``, ``A[i, j]``: one element (or row) of an array; the indices are integer
    constants, read at lowering."""

    __slots__ = ("target", "indices")
    _fields = ("target", "indices")

    def __init__(self, target: Expr, indices: tuple[Expr, ...], span: Span = NO_SPAN):
        self.target = target
        self.indices = indices
        self.span = span


class Slice(Node):
    """``1:3``, ``:``, ``2:`` in an index: the elements of an axis from ``start`` up to
    ``stop`` (either None: that end of the axis); both integer constants, read at lowering."""

    __slots__ = ("start", "stop")
    _fields = ("start", "stop")

    def __init__(self, start: Expr | None, stop: Expr | None, span: Span = NO_SPAN):
        self.start = start
        self.stop = stop
        self.span = span


class Keyword(Node):
    """``axis=0`` among a call's arguments: an array function's option, read at lowering."""

    __slots__ = ("name", "value")
    _fields = ("name", "value")

    def __init__(self, name: str, value: Expr, span: Span = NO_SPAN):
        self.name = name
        self.value = value
        self.span = span


class Assign(Node):
    __slots__ = ("name", "op", "value")
    _fields = ("name", "op", "value")

    def __init__(self, name: str, op: str, value: Expr, span: Span = NO_SPAN):
        self.name = name
        self.op = op  # "=", "+=", "-=", "*=", "/="
        self.value = value
        self.span = span


class Program(Node):
    __slots__ = ("statements",)
    _fields = ("statements",)

    def __init__(self, statements: tuple[Expr | Assign, ...], span: Span = NO_SPAN):
        self.statements = statements
        self.span = span


Expr = Union[Num, Var, Unary, Binary, Call, ArrayLit, Index]
