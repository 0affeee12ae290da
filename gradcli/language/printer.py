"""AST -> source text in gradcli's own syntax, with only the parentheses the grammar needs.

The output parses back to an equal AST (the round trip is a tested property). Printing uses an
explicit stack, so deep expressions print without recursion.
"""

from __future__ import annotations

import math

from .ast import Assign, Binary, Call, Num, Program, Unary, Var

# Precedence levels of the grammar's rule layers.
_SUM, _PRODUCT, _UNARY, _POWER, _ATOM = 1, 2, 3, 4, 5
_BINARY = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT, "^": _POWER}
_SPACED = {"+": " + ", "-": " - ", "*": "*", "/": "/", "^": "^"}


def format_constant(value: float, named: bool = True) -> str:
    """A constant as source text that reads back to the same float (``pi`` and ``e`` by name)."""
    if named and value == math.pi:
        return "pi"
    if named and value == math.e:
        return "e"
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _precedence(node) -> int:
    t = type(node)
    if t is Binary:
        return _BINARY[node.op]
    if t is Unary:
        return _UNARY
    if t is Num and (node.value < 0 or (node.value == 0 and str(node.value).startswith("-"))):
        return _UNARY  # printed with a leading minus
    return _ATOM


def to_source(node) -> str:
    """Source text for an expression, an assignment or a whole program."""
    if type(node) is Program:
        return "\n".join(to_source(s) for s in node.statements)
    if type(node) is Assign:
        return f"{node.name} {node.op} {to_source(node.value)}"
    out: list[str] = []
    stack: list = [(node, 0)]
    while stack:
        item = stack.pop()
        if type(item) is str:
            out.append(item)
            continue
        expr, need = item
        t = type(expr)
        if t is Num:
            pieces = [format_constant(expr.value, named=False)]
        elif t is Var:
            pieces = [expr.name]
        elif t is Unary:
            pieces = [expr.op, (expr.operand, _UNARY)]
        elif t is Binary:
            p = _BINARY[expr.op]
            if p == _POWER:  # right-associative; the base must be an atom
                pieces = [(expr.left, _ATOM), "^", (expr.right, _UNARY)]
            else:  # left-associative: the right operand binds tighter
                pieces = [(expr.left, p), _SPACED[expr.op], (expr.right, p + 1)]
        elif t is Call:
            pieces = [expr.name, "("]
            for i, arg in enumerate(expr.args):
                if i:
                    pieces.append(", ")
                pieces.append((arg, 0))
            pieces.append(")")
        else:
            raise TypeError(f"cannot print {expr!r}")
        if _precedence(expr) < need:
            pieces = ["(", *pieces, ")"]
        stack.extend(reversed(pieces))
    return "".join(out)
