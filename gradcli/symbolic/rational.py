"""Rational functions of one input reduced, as a textbook writes them: ``p/q`` in lowest terms.

The canonical form (:mod:`gradcli.symbolic.expr`) collects like terms but never puts a sum
over a common denominator, so the derivative of ``(x^2-1)/(x+1)`` stays
``2*x/(x + 1) - (x^2 - 1)/(x + 1)^2``. :func:`reduced` reads a small expression that is a
rational function of one symbol with rational coefficients (numbers, the symbol, sums and
products with integer exponents) as a numerator and a denominator polynomial, cancels their
greatest common divisor (Euclid over the rationals) and writes the denominator as its
square-free factors' powers (Yun), so ``1``, ``-1/(x^2 + 1)`` and ``-(x^2 + 1)/(x^2 - 1)^2``
come out (a power of the symbol is
taken out of the denominator first: ``x^2*(x + 1)``). The reduced form is kept only when it prints no longer than the expression it came
from. Like the canonical form's ``x/x``, cancelling extends the domain (a common factor's
zeros), and is exact everywhere else.

>>> from gradcli.symbolic.expr import Sym, fresh_context, symbol
>>> from gradcli.symbolic.printer import text
>>> with fresh_context():
...     x = Sym(symbol("x"))
...     text(reduced((2 * x / (x + 1) - (x ** 2 - 1) / (x + 1) ** 2).node))
'1'
"""

from __future__ import annotations

from fractions import Fraction

from ..errors import LimitError
from .expr import Apply, Number, Product, Sum, Symbol, add, multiply, number
from .printer import text

MAX_NODES = 200  # larger expressions are left as built: the reduction is for what people read
MAX_DEGREE = 48  # a polynomial of higher degree is left alone (its coefficients grow fast)


def reduced(root):
    """``root`` in lowest terms when it is a rational function of one symbol and that prints
    no longer; ``root`` itself otherwise. With several symbols, the terms that share a factor
    free of one symbol are reduced together as a rational function of that symbol
    (:func:`_by_symbol`): ``y/(x + 1) - x*y/(x + 1)^2`` is ``y/(x + 1)^2``."""
    try:
        return _reduced(root)
    except LimitError:
        # the lowest terms' integer coefficients would leave the double range ((x + 1e-160)^2
        # is 10^-320·(10^160·x + 1)^2): the expression as built prints, exact as it is
        return root


def _reduced(root):
    found = _as_fraction(root)
    if found is None:
        return _by_symbol(root)
    x, num, den = found
    better = _node(x, num, den)
    if better is root or len(text(better)) > len(text(root)):
        return root
    return better


def _by_symbol(root):
    """``root`` as Σ c_j·r_j(x), each c_j free of the symbol x and each r_j a rational
    function of x alone, with every r_j in lowest terms, for the symbol x that prints
    shortest; ``root`` itself when no symbol gives such a form or none prints shorter."""
    nodes = _parts(root)
    if nodes is None:
        return root
    best, length = root, len(text(root))
    for x in [n for n in nodes if type(n) is Symbol]:
        candidate = _grouped(root, x, nodes)
        if candidate is not None and candidate is not best:
            size = len(text(candidate))
            if size < length:
                best, length = candidate, size
    return best


def _parts(root) -> list | None:
    """``root`` and its parts, parts before wholes, or None past MAX_NODES (a large derivative
    is not walked whole for nothing)."""
    seen, stack = {root.serial: root}, [root]
    while stack:
        n = stack.pop()
        t = type(n)
        kids = [k for k, _ in n.terms] if t is Sum else \
            [k for pair in n.factors for k in pair] if t is Product else \
            list(n.args) if t is Apply else ()
        for k in kids:
            if k.serial not in seen:
                seen[k.serial] = k
                stack.append(k)
        if len(seen) > MAX_NODES:
            return None
    return [seen[s] for s in sorted(seen)]


def _grouped(root, x, nodes):
    """:func:`_by_symbol`'s form for the symbol ``x``, or None."""
    reads = {}  # serial -> whether the node reads x (parts before wholes)
    for n in nodes:
        t = type(n)
        reads[n.serial] = n is x if t is Symbol else \
            any(reads[k.serial] for k, _ in n.terms) if t is Sum else \
            any(reads[b.serial] or reads[e.serial] for b, e in n.factors) if t is Product else \
            any(reads[a.serial] for a in n.args) if t is Apply else False
    terms = root.terms if type(root) is Sum else [(root, 1)]
    one = number(1)
    groups: dict = {}  # the free factor's serial -> (that factor, [(rational part, coefficient)])
    for node, c in terms:
        if type(node) is Product:
            free = multiply([(b, e) for b, e in node.factors
                             if not reads[b.serial] and not reads[e.serial]])
            part = multiply([(b, e) for b, e in node.factors
                             if reads[b.serial] or reads[e.serial]], node.coeff)
        elif reads[node.serial]:
            free, part = one, node
        else:
            free, part = node, one
        groups.setdefault(free.serial, (free, []))[1].append((part, c))
    if type(root) is Sum and root.const:
        groups.setdefault(one.serial, (one, []))[1].append((one, root.const))
    if all(len(parts) == 1 for _, parts in groups.values()):
        return None  # nothing to put over a common denominator
    out = []
    for free, parts in groups.values():
        part = add(parts)
        if type(part) is not Number:  # (a number is in lowest terms already)
            found = _as_fraction(part)
            if found is None or found[0] is not x:
                return None
            part = _node(*found)
        out.append((multiply([(free, one), (part, one)]), 1))
    return add(out)


# Polynomials are lists of Fractions, index = degree, no trailing zeros; [] is 0.

def _trim(p: list) -> list:
    while p and not p[-1]:
        p.pop()
    return p


def _mul(p: list, q: list) -> list:
    if not p or not q:
        return []
    out = [Fraction(0)] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        if a:
            for j, b in enumerate(q):
                out[i + j] += a * b
    return out


def _add(p: list, q: list) -> list:
    out = [Fraction(0)] * max(len(p), len(q))
    for i, a in enumerate(p):
        out[i] += a
    for i, b in enumerate(q):
        out[i] += b
    return _trim(out)


def _divmod(p: list, q: list) -> tuple[list, list]:
    rest, quot = list(p), [Fraction(0)] * max(len(p) - len(q) + 1, 1)
    lead = q[-1]
    while len(rest) >= len(q) and rest:
        k, shift = rest[-1] / lead, len(rest) - len(q)
        quot[shift] = k
        for i, b in enumerate(q):
            rest[i + shift] -= k * b
        _trim(rest)
    return _trim(quot), rest


def _monic(p: list) -> list:
    return [a / p[-1] for a in p]


def _gcd(p: list, q: list) -> list:
    while q:
        p, q = q, _divmod(p, q)[1]
    return _monic(p)


def _derivative(p: list) -> list:
    return _trim([i * a for i, a in enumerate(p)][1:])


def _square_free(p: list) -> list[tuple[list, int]]:
    """A monic ``p`` as ``[(a_i, i)]`` with p = Π a_i^i, the a_i square-free and coprime
    (Yun's algorithm; the rationals have characteristic 0)."""
    out, i = [], 1
    g = _gcd(p, _derivative(p))
    c, w = _divmod(p, g)[0], g
    while len(c) > 1:
        y = _gcd(c, w)
        z = _divmod(c, y)[0]
        if len(z) > 1:
            out.append((z, i))
        c, w, i = y, _divmod(w, y)[0], i + 1
    if len(w) > 1:  # (what is left has multiplicity i, i + 1, ...: Yun's loop ends with c = 1)
        out += [(factor, k * i) for factor, k in _square_free(w)]
    return out


def _as_fraction(root):
    """``(x, numerator, denominator)`` for a rational function of the one symbol x, or None."""
    order, seen, stack, x = [], {root.serial}, [root], None
    while stack:  # parts first, then wholes: by serial (a part is built before its whole)
        n = stack.pop()
        order.append(n)
        if len(order) > MAX_NODES:
            return None
        t = type(n)
        if t is Symbol:
            if x is not None and n is not x:
                return None
            x = n
            continue
        if t is Sum:
            kids = [k for k, _ in n.terms]
        elif t is Product:
            kids = []
            for b, e in n.factors:
                if type(e) is not Number or type(e.value) is not int:
                    return None  # x^(1/3), x^y: not a rational function
                kids.append(b)
        elif t is Number:
            continue
        else:
            return None  # a function: sin(x) is not rational
        for k in kids:
            if k.serial not in seen:
                seen.add(k.serial)
                stack.append(k)
    if x is None:
        return None
    order.sort(key=lambda n: n.serial)
    value: dict = {}  # serial -> (numerator, denominator), in lowest terms
    one = [Fraction(1)]
    for n in order:
        t = type(n)
        if t is Number:
            num, den = _trim([Fraction(n.value)]), one
        elif t is Symbol:
            num, den = [Fraction(0), Fraction(1)], one
        elif t is Sum:
            num, den = _trim([Fraction(n.const)]), one
            for k, c in n.terms:
                p, q = value[k.serial]
                num, den = _add(_mul(num, q), _mul([Fraction(c) * a for a in p], den)), \
                    _mul(den, q)
                num, den = _lowest(num, den)
        else:
            num, den = [Fraction(n.coeff)], one
            for b, e in n.factors:
                p, q = value[b.serial]
                k = e.value
                if abs(k) > MAX_DEGREE:
                    return None
                if k < 0:
                    if not p:
                        return None  # 1/0: left as written
                    p, q, k = q, p, -k
                for _ in range(k):
                    num, den = _mul(num, p), _mul(den, q)
                num, den = _lowest(num, den)
        if len(num) > MAX_DEGREE or len(den) > MAX_DEGREE:
            return None
        value[n.serial] = num, den
    num, den = value[root.serial]
    return x, num, den


def _lowest(num: list, den: list) -> tuple[list, list]:
    """``num/den`` with their gcd cancelled and the denominator monic."""
    if not num:
        return [], [Fraction(1)]
    g = _gcd(num, den)
    if len(g) > 1:
        num, den = _divmod(num, g)[0], _divmod(den, g)[0]
    lead = den[-1]
    return [a / lead for a in num], [a / lead for a in den]


def _polynomial(x, p: list):
    """A polynomial with integer coefficients as a canonical sum."""
    return add([(multiply([(x, number(i))]), c) for i, c in enumerate(p) if c])


def _node(x, num: list, den: list):
    """``num/den`` as a canonical node: integer coefficients, the numerator's content and sign
    as the product's coefficient, the denominator as powers of its square-free factors."""
    if not num:
        return number(0)
    if len(den) == 1:
        return add([(multiply([(x, number(i))]), c / den[0]) for i, c in enumerate(num) if c])
    coeff = Fraction(1)
    items = []
    low = 0
    while not den[low]:  # x^2 - x is x*(x - 1): the power of x apart, as a textbook factors it
        low += 1
    if low:
        items.append((x, number(-low)))
        den = den[low:]
    for factor, k in _square_free(den) if len(den) > 1 else ():
        scale = _integral(factor)
        coeff *= scale ** k  # 1/factor^k is scale^k/(scale*factor)^k
        items.append((_polynomial(x, [a * scale for a in factor]), number(-k)))
    scale = _integral(num)
    if num[-1] < 0:
        scale = -scale
    coeff /= scale
    items.insert(0, (_polynomial(x, [a * scale for a in num]), number(1)))
    return multiply(items, coeff)


def _integral(p: list) -> Fraction:
    """The positive factor that makes ``p``'s coefficients coprime integers."""
    from math import gcd, lcm
    common = 1
    for a in p:
        common = lcm(common, a.denominator)
    whole = [int(a * common) for a in p]
    g = 0
    for a in whole:
        g = gcd(g, a)
    return Fraction(common, g or 1)
