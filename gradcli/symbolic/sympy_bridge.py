"""``gradcli diff --simplify``: a derivative handed to SymPy's ``simplify`` and back.

The canonical form (:mod:`gradcli.symbolic.expr`) and the rational reduction
(:mod:`gradcli.symbolic.rational`) are fast and cover what a derivative usually needs; SymPy's
``simplify`` tries much more (trigonometric identities, factoring, ``sqrt(x^2)``) at a far
higher cost. A node becomes a SymPy expression (inputs are real symbols; a function SymPy does
not know, such as ``sigmoid``, stays an opaque function of the same name), is simplified, and
comes back into the canonical form, so it prints in gradcli's syntax with exact numbers. The
simplified form is kept only when it prints shorter, and only for expressions of at most
:data:`MAX_NODES` nodes (``simplify`` grows much faster than linearly).

SymPy is an extra (``pip install "gradcli[sympy]"``), imported only here, only when asked.
"""

from __future__ import annotations

from fractions import Fraction

from ..engine.primitives import TABLE
from ..errors import InputError
from .expr import Number, Product, Sum, Symbol, add, apply, multiply, number, \
    reachable, symbol
from .printer import text

MAX_NODES = 400
INSTALL = 'pip install "gradcli[sympy]"'


def sympy():
    """The sympy module, or an :class:`InputError` naming the install command."""
    try:
        import sympy as sp
    except ImportError:
        raise InputError("--simplify calls SymPy's simplify, and SymPy is not installed",
                         hint=INSTALL) from None
    return sp


def simplified(root):
    """``root`` as SymPy's ``simplify`` writes it, back in canonical form, when that prints
    shorter; ``root`` itself otherwise (too large, or something SymPy gives that gradcli
    cannot write, such as a complex number)."""
    parts = reachable(root)
    if len(parts) > MAX_NODES:
        return root
    sp = sympy()
    expr = sp.simplify(_to_sympy(sp, parts))
    back = _from_sympy(sp, expr)
    if back is None or len(text(back)) >= len(text(root)):
        return root
    return back


def _to_sympy(sp, parts: list):
    out: dict = {}  # serial -> SymPy expression, parts before wholes
    for n in parts:
        t = type(n)
        if t is Number:
            v = Fraction(n.value)
            e = sp.Rational(v.numerator, v.denominator)
        elif t is Symbol:
            e = sp.E if n.name == "e" else sp.pi if n.name == "pi" else \
                sp.Symbol(n.name, real=True)
        elif t is Sum:
            e = sp.Add(_rational(sp, n.const), *[_rational(sp, c) * out[k.serial]
                                                 for k, c in n.terms])
        elif t is Product:
            e = sp.Mul(_rational(sp, n.coeff), *[out[b.serial] ** out[x.serial]
                                                 for b, x in n.factors])
        else:
            e = _function(sp, n.name)(*[out[a.serial] for a in n.args])
        out[n.serial] = e
    return out[parts[-1].serial]


def _rational(sp, v):
    v = Fraction(v)
    return sp.Rational(v.numerator, v.denominator)


def _function(sp, name: str):
    row = TABLE.get(name)
    if row is not None and row.sympy is not None:  # the row's own column
        return getattr(sp, row.sympy)
    return sp.Function(name)  # opaque: simplify leaves it as it is


def _from_sympy(sp, expr):
    """A SymPy expression as a canonical node, or None where gradcli has no way to write it."""
    names = {row.sympy: row.name for row in TABLE.values() if row.sympy is not None}
    out: dict = {}
    half = sp.Rational(1, 2)
    for e in sp.postorder_traversal(expr):
        if e in out:
            continue
        if e.is_Rational:
            node = number(Fraction(int(e.p), int(e.q)))
        elif e is sp.E:
            node = symbol("e")
        elif e is sp.pi:
            node = symbol("pi")
        elif e.is_Symbol:
            node = symbol(e.name)
        elif e.is_Add:
            node = add([(out[a], 1) for a in e.args])
        elif e.is_Mul:
            node = multiply([(out[a], number(1)) for a in e.args])
        elif e.is_Pow:
            b, x = e.args
            if x == half:
                node = apply("sqrt", (out[b],))
            elif x == -half:
                node = multiply([(apply("sqrt", (out[b],)), number(-1))])
            else:
                node = multiply([(out[b], out[x])])
        elif e.is_Function:
            name = type(e).__name__
            row = names.get(name, name)
            if row not in TABLE or TABLE[row].arity != len(e.args):
                return None
            node = apply(row, tuple(out[a] for a in e.args))
        else:
            return None  # I, zoo, nan, a Piecewise: nothing gradcli writes
        out[e] = node
    return out.get(expr)
