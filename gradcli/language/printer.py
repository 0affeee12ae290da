"""AST -> source text in gradcli's own syntax, with only the parentheses the grammar needs.

The output parses back to an equal AST (the round trip is a tested property). Printing uses an
explicit stack, so deep expressions print without recursion. The walker is shared: a
:class:`Spelling` says how leaves, operators and calls are written, and LaTeX is one more.
"""

from __future__ import annotations

import math

from .ast import ArrayLit, Assign, Binary, Call, Index, Keyword, Num, Program, Slice, Unary, Var

# Precedence levels of the grammar's rule layers.
_SUM, _PRODUCT, _UNARY, _POWER, _ATOM = 1, 2, 3, 4, 5
_BINARY = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT, "@": _PRODUCT, "^": _POWER}
_SPACED = {"+": " + ", "-": " - ", "*": "*", "/": "/", "@": " @ ", "^": "^"}


def format_constant(value: float, named: bool = True) -> str:
    """A constant as source text that reads back to the same float (``pi`` and ``e`` by name)."""
    if named and value == math.pi:
        return "pi"
    if named and value == math.e:
        return "e"
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _negative_number(node) -> bool:
    if type(node) is not Num:
        return False
    num = node  # each kind's node as a variable of its own (printer.pxd types them)
    return num.value < 0 or (num.value == 0 and str(num.value).startswith("-"))


class Spelling:
    """How a notation writes numbers, names, operators and calls. :func:`walk` decides the
    parentheses from :meth:`precedence` and the ``need`` each piece asks of its operands, so
    every notation (source text here, LaTeX in :mod:`gradcli.views.latex`) groups the same
    trees the same way. This class spells gradcli's own source (compiled, an extension type
    whose methods :func:`walk` calls directly: printer.pxd)."""

    open = "("
    close = ")"

    def number(self, value: float) -> str:
        return format_constant(value, named=False)

    def name(self, name: str) -> str:
        return name

    def precedence(self, node) -> int:
        """The grammar layer ``node`` is written at: an operand asking for more is grouped."""
        t = type(node)
        if t is Binary:
            binary = node
            return _BINARY[binary.op]
        if t is Unary or _negative_number(node):
            return _UNARY  # printed with a leading sign
        return _ATOM

    def pieces(self, expr) -> list:
        """``expr`` as text and ``(operand, need)`` pairs, left to right."""
        t = type(expr)
        if t is Binary:
            return self.binary(expr)
        if t is Var:
            var = expr
            return [self.name(var.name)]
        if t is Num:
            num = expr
            return [self.number(num.value)]
        if t is Unary:
            unary = expr
            return [unary.op, (unary.operand, _UNARY)]
        if t is Call:
            return self.call(expr)
        if t is ArrayLit:
            return ["[", *self.arguments(expr.items), "]"]
        if t is Index:  # the target is an atom: x[0], (a + b)[1]
            return [(expr.target, _ATOM), "[", *self.arguments(expr.indices), "]"]
        if t is Slice:
            return [*([] if expr.start is None else [(expr.start, 0)]), ":",
                    *([] if expr.stop is None else [(expr.stop, 0)])]
        if t is Keyword:
            return [expr.name, "=", (expr.value, 0)]
        raise TypeError(f"cannot print {expr!r}")

    def binary(self, expr) -> list:
        p = _BINARY[expr.op]
        if p == _POWER:  # right-associative; the base must be an atom
            return [(expr.left, _ATOM), "^", (expr.right, _UNARY)]
        # left-associative: the right operand binds tighter
        return [(expr.left, p), _SPACED[expr.op], (expr.right, p + 1)]

    def call(self, expr) -> list:
        return [expr.name, "(", *self.arguments(expr.args), ")"]

    @staticmethod
    def arguments(args, separator: str = ", ") -> list:
        pieces: list = []
        for i, arg in enumerate(args):
            if i:
                pieces.append(separator)
            pieces.append((arg, 0))
        return pieces


SOURCE = Spelling()


def walk(node, spelling: Spelling, limit: int = -1) -> str:
    """An expression written out by ``spelling``, with the parentheses its precedence needs
    (an explicit stack: deep expressions print without recursion). With a ``limit`` (>= 0),
    the walk stops once the text is longer than that: its beginning, for a view that shows no
    more of it."""
    out: list[str] = []
    stack: list = [(node, 0)]
    size = 0
    while stack:
        if 0 <= limit < size:
            break
        item = stack.pop()
        if type(item) is str:
            out.append(item)
            size += len(item)
            continue
        expr, need = item
        pieces = spelling.pieces(expr)
        if spelling.precedence(expr) < need:
            pieces = [spelling.open, *pieces, spelling.close]
        elif len(pieces) == 1 and type(pieces[0]) is str:  # a leaf: written at once
            out.append(pieces[0])
            size += len(pieces[0])
            continue
        stack.extend(reversed(pieces))
    return "".join(out)


def to_source(node, limit: int = -1) -> str:
    """Source text for an expression, an assignment or a whole program; with a ``limit``
    (>= 0), at least its first ``limit`` characters, the rest left unwritten where it can be."""
    if type(node) is Program:
        lines: list[str] = []
        size = 0
        for statement in node.statements:
            if 0 <= limit < size:
                break
            lines.append(to_source(statement, limit if limit < 0 else limit - size))
            size += len(lines[-1]) + 1
        return "\n".join(lines)
    if type(node) is Assign:
        return f"{node.name} {node.op} {to_source(node.value, limit)}"
    return walk(node, SOURCE, limit)
