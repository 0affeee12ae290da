"""Symbolic values: the table's derivative rules, run on expressions instead of floats.

:class:`Sym` wraps an AST expression and overloads arithmetic, simplifying as it builds
(constants folded and gathered in front; ``0*a``, ``1*a``, ``a+0``, ``a^1`` and ``--a`` removed).
Like terms and powers of one base combine (``a + a`` is ``2*a``, ``a*a^2`` is ``a^3``) when they
are the same object, as equal parts are in :mod:`gradcli.symbolic.diff`'s shared expressions: identity is
checked, never tree equality, so no rule walks a tree. Every rule looks at most two levels down
and never recurses deeper, so building stays linear and flat. ``SYMBOLIC`` is the
namespace a rule receives as ``m``: ``m.cos(a)`` builds the call ``cos(a)``. Feeding a rule
``Sym`` arguments therefore prints the rule (``gradcli functions``) and differentiates graphs.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from ..language.ast import Binary, Call, Num, Unary, Var
from ..engine.primitives import CONSTANTS, TABLE

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
    if op in "+-":
        return _sum(op, left, right, x, y)
    if op == "*":
        return _product(left, right, x, y)
    if op == "/":
        return _quotient(left, right, x, y)
    if y == 1:  # op == "^"
        return left
    if y == 0:
        return number(1.0)
    if type(left) is Binary and left.op == "^" and _num(left.right) is not None \
            and y is not None and y.is_integer():
        return binary("^", left.left, number(_num(left.right) * y))  # (a^2)^3 is a^6
    return Binary(op, left, right)


_FLIP = {"+": "-", "-": "+"}


def _sum(op, left, right, x, y):
    if y == 0:
        return left
    if x == 0:
        return right if op == "+" else negate(right)
    if y is not None and y < 0:
        return binary(_FLIP[op], left, number(-y))
    if type(right) is Unary and right.op == "-":
        return binary(_FLIP[op], left, right.operand)
    lead = _lead(right)
    if lead is not None and lead < 0:  # a + -2*b is a - 2*b
        return binary(_FLIP[op], left, negate(right))
    sign = 1.0 if op == "+" else -1.0
    (c, a), (d, b) = _split(left), _split(right)
    if a is b:  # like terms: 2*a + a is 3*a, a - a is 0
        return binary("*", number(c + sign * d), a)
    if type(left) is Binary and left.op in "+-":  # (z + 2*a) + a is z + 3*a
        e, inner = _split(left.right)
        if inner is b:
            k = (e if left.op == "+" else -e) + sign * d
            return binary("+", left.left, binary("*", number(k), b))
    return Binary(op, left, right)


def _product(left, right, x, y):
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
    if type(right) is Binary and right.op in "*/" and _lead(right) is not None:
        if x is not None:  # 3*(2*a) is 6*a, 3*(2*a*b) is 6*a*b, 3*(2/a) is 6/a
            return _scaled(right, x)
        if _num(right.left) is not None:  # a*(2*b) is 2*a*b, a*(2/b) is 2*a/b
            return binary(right.op, binary("*", right.left, left), right.right)
    (p, m), (q, n) = _base(left), _base(right)
    if p is q:  # one base: a*a is a^2, a^2*a is a^3
        return binary("^", p, number(m + n))
    if type(left) is Binary and left.op == "*" and _num(left.left) is not None:
        p, m = _base(left.right)
        if p is q:  # 2*a*a is 2*a^2
            return binary("*", left.left, binary("^", p, number(m + n)))
    return Binary("*", left, right)


def _quotient(left, right, x, y):
    if x == 0 and y != 0:
        return number(0.0)
    if y == 1:
        return left
    if y == -1:
        return negate(left)
    if type(left) is Unary and left.op == "-":
        return negate(binary("/", left.operand, right))
    if type(left) is Binary and left.op == "/":  # a/b/c is a/(b*c)
        return binary("/", left.left, binary("*", left.right, right))
    return Binary("/", left, right)


def _split(node) -> tuple[float, object]:
    """``2*a`` -> ``(2, a)``; anything else ``a`` -> ``(1, a)``."""
    if type(node) is Binary and node.op == "*":
        c = _num(node.left)
        if c is not None:
            return c, node.right
    return 1.0, node


def _base(node) -> tuple[object, float]:
    """``a^3`` -> ``(a, 3)``; anything else ``a`` -> ``(a, 1)``."""
    if type(node) is Binary and node.op == "^":
        e = _num(node.right)
        if e is not None:
            return node.left, e
    return node, 1.0


def _lead(node) -> float | None:
    """The constant in front of a product or quotient: 2 in ``2*a``, ``2*a*b``, ``2/a``."""
    if type(node) is not Binary or node.op not in "*/":
        return None
    c = _num(node.left)
    if c is None and type(node.left) is Binary and node.left.op == "*":
        c = _num(node.left.left)
    return c


def _scaled(node, k: float):
    """A product or quotient with a leading constant (see :func:`_lead`), that constant times k."""
    c = _num(node.left)
    if c is not None:
        return binary(node.op, number(k * c), node.right)
    inner = node.left
    return Binary(node.op, binary("*", number(k * _num(inner.left)), inner.right), node.right)


def negate(node):
    x = _num(node)
    if x is not None:
        return number(-x)
    if type(node) is Unary and node.op == "-":
        return node.operand
    if type(node) is Binary and node.op == "-":  # -(a - b) = b - a
        return Binary("-", node.right, node.left)
    if _lead(node) is not None:  # -(2*a) is -2*a
        return _scaled(node, -1.0)
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
        from ..language.printer import to_source
        return f"Sym({to_source(self.node)})"


def _function(name):
    return lambda *args: Sym(call(name, *[a.node if isinstance(a, Sym) else number(a) for a in args]))


SYMBOLIC = SimpleNamespace(**{name: _function(name) for name in TABLE},
                           **{name: Sym(Var(name)) for name in CONSTANTS})
SYMBOLIC.pow = lambda a, b: Sym(a) ** b if not isinstance(a, Sym) else a ** b


def rule_text(name: str) -> list[str]:
    """Each partial-derivative rule of a primitive, printed with arguments ``a`` and ``b``."""
    from ..language.printer import to_source
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
