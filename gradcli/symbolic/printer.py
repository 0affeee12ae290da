"""Canonical expressions (:mod:`gradcli.symbolic.expr`) as source text in gradcli's syntax.

A node's text is a rope: a string, or a list of strings and ropes (its parts' texts, shared,
never copied), with the grammar layer it is written at; the parentheses an operand needs come
from the layers, as the language's printer decides them. ``flatten`` joins a rope once, with
an explicit stack: a 100,000-deep expression prints in linear time, without recursion.

Numbers are printed exactly: a rational as the shortest decimal that is exactly it (``0.1``,
``2.5e+20``) or as a fraction (``1/3``), whichever is shorter, never as a double's 17 digits, so
a printed formula evaluates to the number the canonical form computed with.

>>> from gradcli.symbolic.expr import SYMBOLIC as m, Sym, fresh_context, symbol
>>> with fresh_context():
...     x = Sym(symbol("x"))
...     text((x / 3 + m.log(2) * x ** 0.5 - x / 10).node)
'7*x/30 + x^0.5*log(2)'
"""

from __future__ import annotations

from fractions import Fraction

from ..engine.primitives import CALLED, TABLE
from ..errors import LimitError
from ..language.printer import _ATOM, _POWER, _PRODUCT, _SUM, _UNARY
from .expr import (FLAT, ONE_NODE, SYMBOLIC, Apply, Number, Product, Sym, Symbol, _node,
                   constant_nodes, fresh_context, number, reachable, symbol)

_SHORT = 200  # a rope of strings only and at most this long is joined at once


def _grouped(rope: tuple, need: int):
    """A part's text as an operand of a layer that needs ``need``: in parentheses below it."""
    return rope[0] if rope[1] >= need else _parenthesized(rope[0])


def _parenthesized(text):
    # a short text is copied (a whole string joins at once, with no list to walk later)
    return "(" + text + ")" if type(text) is str else ["(", text, ")"]


def _joined(pieces: list, layer: int) -> tuple:
    try:
        text = "".join(pieces)
    except TypeError:  # a part is a rope of its own: kept as it is, not copied
        return pieces, layer
    return (text if len(text) <= _SHORT else pieces), layer


def _number_rope(text: str) -> tuple:
    return text, (_UNARY if text.startswith("-") else _ATOM)


def decimal(v: int | Fraction) -> str | None:
    """The shortest decimal that is exactly ``v`` (``0.1``, ``1e-05``, ``2.5e+20``, ``3``), in
    Python's style (an exponent from 10^16, or below 10^-4), or None if there is none (1/3)."""
    p, q = v.numerator, v.denominator
    if not p:
        return "0"
    twos = (q & -q).bit_length() - 1  # q = 2^twos * 5^fives, or no decimal is exactly v
    fives, rest = 0, q >> twos
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest != 1:
        return None
    n = max(twos, fives)
    m = abs(p) * 2 ** (n - twos) * 5 ** (n - fives)  # v = ±m / 10^n
    digits = str(m)
    stripped = digits.rstrip("0")
    shift = len(digits) - len(stripped) - n  # v = ±stripped * 10^shift
    digits = stripped
    top = len(digits) - 1 + shift  # the power of ten of the leading digit
    sign = "-" if p < 0 else ""
    if -4 <= top < 16 or (top >= 16 and shift <= 2):  # (whole: as long as it is short)
        if shift >= 0:
            return sign + digits + "0" * shift
        point = len(digits) + shift
        return sign + ("0." + "0" * -point + digits if point <= 0 else
                       digits[:point] + "." + digits[point:])
    return f"{sign}{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e{top:+03d}"


_RATIONALS: dict = {}  # (rational, as an exponent) -> its rope: the same few numbers recur
_COEFFICIENTS: dict = {}  # a product's coefficient -> (|c| != 1, its numerator's rope, its
                          # denominator's rope or None)


def _rational_rope(v: int | Fraction, exponent: bool = False) -> tuple:
    """A rational written shortest: ``3``, ``0.1``, ``1/3``, ``-5/2`` (as an exponent a
    fraction needs parentheses: ``x^0.5``, not ``x^(1/2)``)."""
    found = _RATIONALS.get((v, exponent))
    if found is not None:
        return found
    num, den = _coefficient_parts(abs(v), 2 if exponent else 0)
    found = _number_rope("-" + num if v < 0 else num)
    if den is not None:
        found = found[0] + "/" + den, _PRODUCT
    if len(_RATIONALS) < 4096:
        _RATIONALS[v, exponent] = found
    return found


def _coefficient_parts(c: int | Fraction, slack: int = 0) -> tuple[str, str | None]:
    """A positive rational as the texts of (numerator, denominator or None): one decimal when
    that is shorter than the fraction (plus ``slack``): ``1/3`` is ("1", "3"), ``0.1`` is
    ("0.1", None), ``1/4`` is ("1", "4"), ``1.25`` is ("1.25", None)."""
    p, q = c.numerator, c.denominator
    if q == 1:
        return decimal(p), None
    whole, under = decimal(p), decimal(q)
    short = decimal(c)
    if short is not None and len(short) < len(whole) + len(under) + 1 + slack:
        return short, None
    return whole, under


def _power_rope(base: tuple, exponent: tuple) -> tuple:
    return _joined([_grouped(base, _ATOM), "^", _grouped(exponent, _UNARY)], _POWER)


def _chain(ropes: list, op: str) -> tuple:
    """``a op b op c``, left-associative at the product layer: ``a*b*c``, ``a*b/c``."""
    if len(ropes) == 1:
        return ropes[0]
    text, layer = ropes[0]
    texts = [text if layer >= _PRODUCT else _parenthesized(text)]
    for text, layer in ropes[1:]:  # (a loop: most chains are short)
        texts.append(text if layer >= _UNARY else _parenthesized(text))
    try:
        text = op.join(texts)  # the common case: every operand's text is a string
    except TypeError:  # a part is a rope of its own: kept as it is, not copied
        pieces = [texts[0]]
        for text in texts[1:]:
            pieces += (op, text)
        return pieces, _PRODUCT
    return (text if len(text) <= _SHORT else [text]), _PRODUCT


def _product_rope(coeff: Fraction, factors, out: list, last=()) -> tuple:
    """``coeff * Π base^exp``: negative powers under one fraction bar, the sign on the leading
    factor (``-6/x^4``, ``-x^2*sin(x)``, ``2*x/(3*y^2)``); the symbols whose serials are in
    ``last`` after the other factors (a derivation's pending ``d/dx(u)``: ``sin(x)*d/dx(x^2)``)."""
    top, bottom, later, trailing = [], [], [], []
    # the commonest exponents, 1 and -1, known by identity (one node each in a context)
    one, minus_one = number(1), number(-1)
    for base, e in factors:
        if e is one:
            if last and base.serial in last:
                trailing.append(out[base.serial])
                continue
            (top if type(base) is Symbol else later).append(out[base.serial])
            continue
        if e is minus_one:
            bottom.append(out[base.serial])
            continue
        b = out[base.serial]
        if type(e) is not Number:  # powers with an expression for exponent after the rest
            later.append(_power_rope(b, out[e.serial]))  # y*x^(y - 1)
            continue
        ev = e.value
        if ev == 1:
            (top if type(base) is Symbol else later).append(b)
        elif ev < 0:
            bottom.append(b if ev == -1 else _power_rope(b, _rational_rope(-ev, True)))
        else:  # symbols first: 2*x*cos(x)
            piece = _power_rope(b, _rational_rope(ev, True))
            (top if type(base) is Symbol else later).append(piece)
    top += later
    top += trailing
    if coeff == 1:
        pass
    elif coeff == -1 and top:  # the sign on the leading factor
        top[0] = _joined(["-", _grouped(top[0], _UNARY)], _UNARY)
    else:
        found = _COEFFICIENTS.get(coeff)
        if found is None:
            num, den = _coefficient_parts(abs(coeff))
            found = (num != "1", _number_rope("-" + num if coeff < 0 else num),
                     None if den is None else _number_rope(den))
            if len(_COEFFICIENTS) < 4096:
                _COEFFICIENTS[coeff] = found
        not_one, num, den = found
        if not_one or not top:
            top.insert(0, num)
        elif coeff < 0:
            top[0] = _joined(["-", _grouped(top[0], _UNARY)], _UNARY)
        if den is not None:
            bottom.insert(0, den)
    if not top:
        top.append(_number_rope("1"))
    tree = _chain(top, "*")
    if bottom:
        tree = _joined([_grouped(tree, _PRODUCT), "/", _grouped(_chain(bottom, "*"), _UNARY)],
                       _PRODUCT)
    return tree


def _term_rope(node, c: Fraction, out: list, named: set, last=()) -> tuple:
    """``c * node`` (node a term of a sum, or None for the constant)."""
    if node is None:
        return _rational_rope(c)
    if c == 1:
        return out[node.serial]
    if type(node) is Product and node.serial not in named:
        return _product_rope(c * node.coeff, node.factors, out, last)
    return _product_rope(c, ((node, ONE_NODE()),), out, last)


def _degree(node, x) -> int:
    """A monomial's degree in the one symbol ``x`` (``x`` 1, ``3*x^2`` 2), or -1 for any other
    term (``x*y``, ``sin(x)``)."""
    if node is x:
        return 1
    if type(node) is not Product or len(node.factors) != 1:
        return -1
    b, e = node.factors[0]
    if b is not x or type(e) is not Number or type(e.value) is not int \
            or not 0 < e.value < 4096:
        return -1
    return e.value


def _textbook_order(node) -> list | None:
    """A polynomial in one symbol by descending degree, the constant last (``3*x^2 - 6*x +
    2``), as a textbook and SymPy write it; None for any other sum, or when that order would
    lead with a minus sign (``1 - x`` stays)."""
    terms = node.terms
    if len(terms) > FLAT:
        return None
    first = terms[0][0]
    x = first if type(first) is Symbol else \
        first.factors[0][0] if type(first) is Product and first.factors else None
    if type(x) is not Symbol:
        return None
    degrees = []
    for t, c in terms:
        d = _degree(t, x)
        if d < 0:
            return None
        degrees.append(d)
    if len(set(degrees)) + (1 if node.const else 0) < 2:
        return None  # one degree: the usual order (positive terms first) says it
    entries = sorted(zip(terms, degrees), key=_by_degree)
    if entries[0][0][1] < 0:
        return None
    ordered = [pair for pair, _ in entries]
    if node.const:
        ordered.append((None, node.const))
    return ordered


def _by_degree(entry) -> int:
    return -entry[1]


def _sum_rope(node, out: list, named: set, last=()) -> tuple:
    """Positive terms first, the constant last among them, then the negative ones: ``b - a``;
    a polynomial by descending degree (:func:`_textbook_order`)."""
    ordered = _textbook_order(node)
    if ordered is not None:
        pieces = []
        for t, c in ordered:
            if pieces:
                text, layer = out[t.serial] if t is not None and c == 1 else \
                    _term_rope(t, abs(c), out, named, last)
                pieces += (" - " if c < 0 else " + ",
                           text if layer >= _PRODUCT else _parenthesized(text))
            else:
                pieces.append(_term_rope(t, c, out, named, last)[0])
        return _joined(pieces, _SUM)
    pieces, negative = [], []  # (the first piece is never in parentheses: a sum is the lowest)
    for t, c in node.terms:  # (a loop: most sums have two terms; no coefficient is 0)
        if c < 0:
            negative.append((t, -c))
            continue
        text, layer = out[t.serial] if c == 1 else _term_rope(t, c, out, named, last)
        if pieces:
            pieces += (" + ", text if layer >= _PRODUCT else _parenthesized(text))
        else:
            first = text, layer
            pieces.append(text)
    if node.const > 0:
        text, layer = _rational_rope(node.const)
        if pieces:
            pieces += (" + ", text if layer >= _PRODUCT else _parenthesized(text))
        else:
            first = text, layer
            pieces.append(text)
    elif node.const < 0:
        negative.append((None, -node.const))
    for t, c in negative:
        if pieces:
            text, layer = out[t.serial] if c == 1 and t is not None else \
                _term_rope(t, c, out, named, last)
            pieces += (" - ", text if layer >= _PRODUCT else _parenthesized(text))
        else:  # no positive term: the first negative one leads, with its sign
            first = _term_rope(t, -c, out, named, last)
            pieces.append(first[0])
    return _joined(pieces, _SUM) if len(pieces) > 1 else first


def rope(node, out: list, named: set = frozenset(), last=()) -> tuple:
    """The text of one node whose parts' texts are already in ``out`` (serial -> rope: a list
    longer than every part's serial); a part whose serial is in ``named`` is there as its
    name; a symbol whose serial is in ``last`` ends each product it is a factor of."""
    t = type(node)
    if t is Number:
        return _rational_rope(node.value)
    if t is Symbol:
        return node.name, _ATOM
    if t is Apply:
        if len(node.args) == 1:  # the commonest: f(a), a short text copied at once
            inner = out[node.args[0].serial][0]
            if type(inner) is str:
                text = CALLED.get(node.name, node.name) + "(" + inner + ")"
                return (text if len(text) <= _SHORT else [text]), _ATOM
        pieces = [CALLED.get(node.name, node.name), "("]
        for i, a in enumerate(node.args):
            if i:
                pieces.append(", ")
            pieces.append(out[a.serial][0])
        pieces.append(")")
        return _joined(pieces, _ATOM)
    if t is Product:
        return _product_rope(node.coeff, node.factors, out, last)
    return _sum_rope(node, out, named, last)


def name_rope(name: str) -> tuple:
    """The text of a part printed by its name (``t3``)."""
    return name, _ATOM


def flatten(rope: tuple) -> str:
    """A rope as one string."""
    if type(rope[0]) is str:
        return rope[0]
    out: list[str] = []
    stack = [rope[0]]
    while stack:
        item = stack.pop()
        if type(item) is str:
            out.append(item)
        else:
            stack.extend(reversed(item))
    return "".join(out)


def text(node, last=()) -> str:
    """The whole expression as source text (no names for repeated parts); the symbols whose
    serials are in ``last`` after the other factors of a product."""
    return flatten(_whole(node, last))


def _whole(node, last=()) -> tuple:
    out: list = [None] * (node.serial + 1)  # (parts are numbered before wholes)
    for part in reachable(node):
        out[part.serial] = rope(part, out, frozenset(), last)
    return out[node.serial]


def constant_texts(graph) -> list[str]:
    """A graph's constants as operands of an operation's text (the trace's ``v1 = log(2) *
    x``): each the number it is exactly, in canonical form, in parentheses unless a name, a
    call or a decimal (``(1/3)``, ``(2*pi)``, ``-2``)."""
    with fresh_context():
        texts = []
        for node in constant_nodes(graph):
            whole = _whole(node)
            texts.append(flatten(whole) if whole[1] == _ATOM or type(node) is Number and
                         whole[1] == _UNARY else "(" + flatten(whole) + ")")
        return texts


def rule_text(name: str) -> list[str]:
    """Each partial-derivative rule of a primitive, printed with arguments ``a`` and ``b``."""
    prim = TABLE[name]
    with fresh_context():
        args = [Sym(symbol("a")), Sym(symbol("b"))][:prim.arity]
        ans = getattr(SYMBOLIC, name)(*args)
        texts = []
        for rule in prim.partials:
            try:
                texts.append(text(_node(rule(SYMBOLIC, *args, ans))))
            except LimitError:  # a rule with no formula (trigamma's): its note says so
                texts.append("(computed numerically)")
        return texts
