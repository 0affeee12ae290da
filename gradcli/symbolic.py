"""Symbolic values: the table's derivative rules, run on expressions instead of floats.

:class:`Sym` wraps an AST expression and overloads arithmetic, simplifying as it builds
(constants folded; ``0*a``, ``1*a``, ``a+0``, ``a^1`` and ``--a`` removed). ``SYMBOLIC`` is the
namespace a rule receives as ``m``: ``m.cos(a)`` builds the call ``cos(a)``. Feeding a rule
``Sym`` arguments therefore prints the rule (``gradcli functions``) and differentiates graphs.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from .ast import Binary, Call, Num, Unary, Var
from .primitives import CONSTANTS, TABLE

# Functions folded when their arguments are constants: exact, and clearer as a number.
_FOLDABLE = {"sign", "step", "abs", "min", "max"}
_OPS = {"+": TABLE["add"].primal, "-": TABLE["sub"].primal, "*": TABLE["mul"].primal,
        "/": TABLE["div"].primal, "^": TABLE["pow"].primal}


def _num(node) -> float | None:
    if type(node) is Num:
        return node.value
    if type(node) is Unary and node.op == "-" and type(node.operand) is Num:
        return -node.operand.value
    return None


def number(value: float) -> Num:
    return Num(float(value))


def _fold(op: str, a: float, b: float):
    try:
        value = _OPS[op](a, b)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    # Keep exact results only: 1/3 stays a fraction, 2*3 becomes 6.
    if math.isfinite(value) and (value.is_integer() or op in "+-*" or value == round(value, 12)):
        return value
    return None


def binary(op: str, left, right):
    """``left op right`` as an AST node, simplified."""
    x, y = _num(left), _num(right)
    if x is not None and y is not None:
        folded = _fold(op, x, y)
        if folded is not None:
            return number(folded)
    if op == "+":
        if x == 0:
            return right
        if y == 0:
            return left
        if y is not None and y < 0:
            return binary("-", left, number(-y))
        if type(right) is Unary and right.op == "-":
            return binary("-", left, right.operand)
    elif op == "-":
        if y == 0:
            return left
        if x == 0:
            return negate(right)
        if y is not None and y < 0:
            return binary("+", left, number(-y))
        if type(right) is Unary and right.op == "-":
            return binary("+", left, right.operand)
    elif op == "*":
        if x == 0 or y == 0:
            return number(0.0)
        if x == 1:
            return right
        if y == 1:
            return left
        if x == -1:
            return negate(right)
        if y == -1:
            return negate(left)
        if y is not None and x is None:  # constants in front: 2*x, not x*2
            return binary("*", right, left)
        if type(left) is Unary and left.op == "-":
            return negate(binary("*", left.operand, right))
        if type(right) is Unary and right.op == "-":
            return negate(binary("*", left, right.operand))
    elif op == "/":
        if x == 0 and y != 0:
            return number(0.0)
        if y == 1:
            return left
        if y == -1:
            return negate(left)
        if type(left) is Unary and left.op == "-":
            return negate(binary("/", left.operand, right))
    elif op == "^":
        if y == 1:
            return left
        if y == 0:
            return number(1.0)
    return Binary(op, left, right)


def negate(node):
    x = _num(node)
    if x is not None:
        return number(-x)
    if type(node) is Unary and node.op == "-":
        return node.operand
    if type(node) is Binary and node.op == "-":  # -(a - b) = b - a
        return Binary("-", node.right, node.left)
    return Unary("-", node)


def call(name: str, *args):
    values = [_num(a) for a in args]
    if name in _FOLDABLE and all(v is not None for v in values):
        return number(TABLE[name].primal(*values))
    return Call(name, tuple(args))


class Sym:
    """An expression that builds larger expressions with + - * / ** and unary minus."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node if not isinstance(node, (int, float)) else number(node)

    def _other(self, other):
        return other.node if isinstance(other, Sym) else number(other)

    def __add__(self, o): return Sym(binary("+", self.node, self._other(o)))
    def __radd__(self, o): return Sym(binary("+", self._other(o), self.node))
    def __sub__(self, o): return Sym(binary("-", self.node, self._other(o)))
    def __rsub__(self, o): return Sym(binary("-", self._other(o), self.node))
    def __mul__(self, o): return Sym(binary("*", self.node, self._other(o)))
    def __rmul__(self, o): return Sym(binary("*", self._other(o), self.node))
    def __truediv__(self, o): return Sym(binary("/", self.node, self._other(o)))
    def __rtruediv__(self, o): return Sym(binary("/", self._other(o), self.node))
    def __pow__(self, o): return Sym(binary("^", self.node, self._other(o)))
    def __rpow__(self, o): return Sym(binary("^", self._other(o), self.node))
    def __neg__(self): return Sym(negate(self.node))
    def __pos__(self): return self

    def __repr__(self) -> str:
        from .printer import to_source
        return f"Sym({to_source(self.node)})"


def _function(name):
    return lambda *args: Sym(call(name, *[a.node if isinstance(a, Sym) else number(a) for a in args]))


SYMBOLIC = SimpleNamespace(**{name: _function(name) for name in TABLE},
                           **{name: Sym(Var(name)) for name in CONSTANTS})
SYMBOLIC.pow = lambda a, b: Sym(a) ** b if not isinstance(a, Sym) else a ** b


def rule_text(name: str) -> list[str]:
    """Each partial-derivative rule of a primitive, printed with arguments ``a`` and ``b``."""
    from .printer import to_source
    prim = TABLE[name]
    args = [Sym(Var("a")), Sym(Var("b"))][:prim.arity]
    if prim.symbol and prim.arity == 2:
        ans = Sym(Binary(prim.symbol, args[0].node, args[1].node))
    elif prim.symbol:
        ans = Sym(Unary(prim.symbol, args[0].node))
    else:
        ans = Sym(Call(name, tuple(a.node for a in args)))
    texts = []
    for rule in prim.partials:
        r = rule(SYMBOLIC, *args, ans)
        texts.append(to_source(r.node if isinstance(r, Sym) else number(r)))
    return texts
