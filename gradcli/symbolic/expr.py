"""Symbolic expressions in a canonical form built at construction, as SymPy's core builds them.

Five kinds of node: :class:`Number` (an exact rational), :class:`Symbol`, :class:`Apply` (a
catalogue function), :class:`Sum` and :class:`Product`. Every constructor returns the one node of
its context equal to what was asked for (hash-consing), already in canonical form:

- sums and products are flat: ``a + (b + c)`` is one sum of three terms, ``a*(b*c)`` one product;
- a sum is a constant plus terms with rational coefficients, like terms collected
  (``2*x*cos(x) + 2*cos(x)*x`` is ``4*x*cos(x)``); a product is a rational coefficient times
  powers, numeric coefficients folded (``2*(3*x^2)`` is ``6*x^2``) and powers of one base
  combined (``x^3/x^8`` is ``x^-5``, ``x*x^(x-1)`` is ``x^x``, ``exp(a)*exp(b)`` is ``exp(a + b)``);
- operands are sorted by a key that depends only on the expression (never on the order it was
  built in), so ``a*b`` and ``b*a`` are the same node and collect;
- a number times a small sum is distributed (``-(a - b)`` is ``b - a``), as SymPy's ``Mul`` does;
  products of sums stay unexpanded (``(a + b)*(c + d)``).

Cancelling: ``x/x``, ``x^a*x^-a``, ``exp(a)*exp(-a)`` become 1 and ``a - a`` becomes 0. That is
exact wherever the original is defined, and it *extends* the domain: ``x/x`` at x = 0 is
undefined, its canonical form 1 is defined there. Every other rewrite keeps the value at every
point where the original is defined (``(b^m)^n`` combines only for integer n, or for odd integer
m, because ``(x^2)^0.5`` is ``|x|``, not ``x``). So a canonical derivative equals the AD
derivative wherever AD computes one.

Linear: each constructor looks one level into its operands. Flattening copies a nested sum or
product only when it has at most :data:`FLAT` operands (a larger one stays one opaque operand),
so a long chain costs O(n), not O(n^2). No function here recurses.

:class:`Sym` wraps a node with Python's arithmetic operators, and ``SYMBOLIC`` is the namespace
the table's rules receive as ``m``: feeding a rule ``Sym`` arguments builds its derivative as an
expression (``gradcli functions``, ``gradcli diff``, the trace's local-derivative formulas).
"""

from __future__ import annotations

import math
import zlib
from contextlib import contextmanager
from fractions import Fraction
from functools import partial

from ..engine.primitives import CONSTANTS, TABLE, Namespace, where
from ..errors import LimitError

FLAT = 16  # a nested sum/product with at most this many operands is flattened into its parent
MAX_NODES = 2_000_000  # distinct nodes in one context; past this the expression is too large
# Coefficients and exponents are exact rationals: an ``int`` when whole (the common case, and
# Python's ints add and compare many times faster than Fractions), a ``Fraction`` otherwise.
ZERO, ONE = 0, 1


class Context:
    """The table of every node built so far (structural key -> node)."""

    __slots__ = ("table", "crc", "small", "memo", "serial")

    def __init__(self):
        self.table: dict = {}
        self.crc: dict = {}  # name -> its CRC-32, for the structural hash
        self.small: dict = {}  # small int -> its Number: the commonest look-up, made cheap
        self.memo: dict = {}  # results computed once per context (see context_memo)
        self.serial = 0


_context = Context()


@contextmanager
def fresh_context():
    """Build inside a new, empty table (freed afterwards): one per ``diff`` call."""
    global _context
    saved, _context = _context, Context()
    try:
        yield _context
    finally:
        _context = saved


def node_count() -> int:
    """How many nodes the current context has numbered: every serial is below it."""
    return _context.serial


def context_memo() -> dict:
    """A dict that lives as long as the current context, for results built of its nodes."""
    return _context.memo


def _new(cls, key: tuple, rank: int, name: str, child_hashes: tuple, sub: int = 0):
    """A new node under ``key``, which the caller looked up and did not find; the caller sets
    the node's own fields. A key holds the parts themselves: each is the one node of its
    structure in the context, so identity is equality (and hashes in C)."""
    # (cls.__new__: compiled, nodes are extension types, which object.__new__ refuses)
    node = _interned(key, cls.__new__(cls))
    _numbered(node, rank, name, child_hashes, sub)
    return node


def _interned(key: tuple, made):
    """The node under ``key``, or ``made`` (a blank node, which the caller then numbers with
    :func:`_numbered` and fills) put there: the key is hashed once."""
    ctx = _context
    node = ctx.table.setdefault(key, made)
    if node is made and ctx.serial >= MAX_NODES:
        del ctx.table[key]
        raise LimitError(f"the derivative has more than {MAX_NODES:,} distinct subexpressions",
                         hint="ask for a lower --order")
    return node


def _numbered(node, rank: int, name: str, child_hashes: tuple, sub: int = 0) -> None:
    """A new node's serial (the next of its context), structural hash and sort key."""
    ctx = _context
    node.serial = ctx.serial
    ctx.serial += 1
    crc = ctx.crc.get(name)
    if crc is None:
        crc = ctx.crc[name] = zlib.crc32(name.encode())
    node.hash = h = hash((rank, crc, child_hashes))  # the same whatever the build order
    node.key = (rank, name, sub, h)


class Node:
    """A node of the context. Compiled (setup.py), expr.pxd declares the five kinds as
    extension types whose fields typed code reads directly; here they are slotted classes."""

    __slots__ = ("serial", "key", "hash")

    def __repr__(self) -> str:  # (its text is symbolic.printer's, which imports this module)
        kind = type(self)
        what = self.value if kind is Number else self.name if kind is Symbol else self.serial
        return f"{kind.__name__}({what})"


class Number(Node):
    __slots__ = ("value",)


class Symbol(Node):
    __slots__ = ("name",)


class Apply(Node):
    __slots__ = ("name", "args")


class Sum(Node):
    """``const + Σ coeff*term``: terms are never numbers, and sums only when larger than FLAT."""
    __slots__ = ("const", "terms", "_tail")


class Product(Node):
    """``coeff * Π base^exp``: exponents are nodes (numbers or expressions)."""
    __slots__ = ("coeff", "factors", "_unit", "_pairs")


# -- constructors ---------------------------------------------------------------------------------

def exact(value: float) -> int | Fraction:
    """The decimal a float prints as, exactly (0.1 is 1/10): how SymPy reads ``0.1`` too."""
    if not math.isfinite(value):
        raise LimitError(f"a constant is not finite ({value})")
    if value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    v = Fraction(repr(float(value)))
    return v.numerator if v.denominator == 1 else v


def _tidy(value: int | Fraction) -> int | Fraction:
    """Keep rationals printable: a numerator or denominator of more than ``_BITS`` bits (300
    digits) is rounded to a double's digits; a whole number is an ``int``."""
    if type(value) is int:
        return value if value.bit_length() <= _BITS else _rounded(value)
    if value.denominator.bit_length() > _BITS or value.numerator.bit_length() > _BITS:
        return _rounded(value)
    return value.numerator if value.denominator == 1 else value


_BITS = 1024


def _rounded(value: int | Fraction) -> int | Fraction:
    try:
        near = float(value)
    except OverflowError:
        near = math.inf
    if math.isinf(near):  # (x^1e300)^1e300: no literal gradcli reads writes 1e600
        raise LimitError("a number in the derivative is beyond the double range")
    if near == 0:  # 1e-200*1e-200 is 1e-400, not 0, and gradcli reads the literal 1e-400
        return _significant(value)
    return exact(near)


def _significant(value: Fraction) -> Fraction:
    """``value`` to a double's 17 significant digits, as the exact decimal they write, for a
    number below the doubles' range (a literal such as 1e-400 still writes it)."""
    from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
    context = Context(prec=17, Emin=MIN_EMIN, Emax=MAX_EMAX)
    return Fraction(context.divide(Decimal(value.numerator), Decimal(value.denominator)))


def number(value) -> Number:
    if type(value) is int and -1024 <= value <= 1024:  # most numbers: one dict look-up
        node = _context.small.get(value)
        if node is not None:
            return node
        node = _context.small[value] = _number(value)
        return node
    return _number(_tidy(value if isinstance(value, (int, Fraction)) else exact(value)))


def _number(v: int | Fraction) -> Number:
    pair = (v.numerator, v.denominator)  # ints hash fast; Fraction.__hash__ is slow
    key = ("n",) + pair
    node = _context.table.get(key)
    if node is None:
        node = _new(Number, key, 0, "", pair)
        node.value = v
    return node


def symbol(name: str) -> Symbol:
    key = ("s", name)
    node = _context.table.get(key)
    if node is None:
        node = _new(Symbol, key, 1, name, ())
        node.name = name
    return node


def _value(node) -> int | Fraction | None:
    return node.value if type(node) is Number else None


def apply(name: str, args: tuple) -> Node:
    """``name(*args)``; folded to a number only where the result is exact."""
    for a in args:  # (loops, not comprehensions, over one or two arguments: no function made)
        if type(a) is not Number:
            break
    else:
        folded = _fold_call(name, [a.value for a in args])
        if folded is not None:
            return number(folded)
    args = tuple(args)
    inner, row = args[0], TABLE[name]
    if type(inner) is Apply and row.undoes == inner.name:  # cosh(acosh(a)) is a
        return inner.args[0]
    if row.undoes == "exp" and type(inner) is Symbol and inner.name == "e":
        return number(ONE)  # log(e) is 1: e is exp(1), so e^x differentiates to e^x
    if row.parity and _negative(args[0]):  # sin(-y) is -sin(y), cos(-y) is cos(y)
        inner = apply(name, (multiply([(args[0], ONE_NODE())], -ONE),))
        return inner if row.parity == "even" else multiply([(inner, ONE_NODE())], -ONE)
    made = Apply.__new__(Apply)
    node = _interned(("a", name, args), made)
    if node is made:
        _numbered(node, 3, name, (args[0].hash,) if len(args) == 1 else
                  tuple([a.hash for a in args]))
        node.name, node.args = name, args
    return node


def _negative(node) -> bool:
    """Whether ``node`` reads best with its sign taken out: ``-2*x``, ``1 - x - y``."""
    t = type(node)
    if t is Product:
        return node.coeff < 0
    if t is Sum and len(node.terms) <= FLAT:
        minus = 0
        for _, c in node.terms:  # (a loop: no comprehension's function made for a few terms)
            if c < 0:
                minus += 1
        count = len(node.terms)
        if node.const:
            count += 1
            minus += node.const < 0
        return 2 * minus > count or (2 * minus == count and node.terms[0][1] < 0)
    return False


def _fold_call(name: str, values: list) -> int | Fraction | float | None:
    """A function of numbers (exact rationals) as the number it is, where that is exact."""
    row = TABLE[name]
    try:
        if row.exact:  # on the rationals themselves: abs, min, floor(1/3), sign(-2/3)
            v = row.primal(*values)
            if type(v) is not float:
                return v
            # a float: an argument or its negation rounded (fabs), or a whole number (sign,
            # floor); folded when only one of those is it
            found = {int(v)} if v.is_integer() and abs(v) < 2 ** 53 else set()
            for a in values:
                if v == float(a) or v == -float(a):
                    found.add(a if v == float(a) else -a)
            return found.pop() if len(found) == 1 else None
        xs = [float(a) for a in values]
        v = row.primal(*xs)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    if not math.isfinite(v):
        return None
    if not v.is_integer() or abs(v) > 1e6:
        return None
    # exact integer results only: f(0) and f(1) of these functions, perfect square/cube roots
    if all(x in (0.0, 1.0) for x in xs) or (name == "sqrt" and v * v == xs[0]) \
            or (name == "cbrt" and v * v * v == xs[0]):
        return v
    return None


def _sum_node(constant: int | Fraction, terms: tuple) -> Sum:
    made = Sum.__new__(Sum)  # coefficients are tidy in the key: 2 is never Fraction(2)
    node = _interned(("+", constant, terms), made)
    if node is made:  # new: only now is its structural hash computed
        hashes = list(_ratio(constant))
        for t, c in terms:  # (a loop: most sums have two terms)
            hashes.append((t.hash,) + _ratio(c))
        _numbered(node, 4, "", tuple(hashes))
        node.const, node.terms, node._tail = constant, terms, None
    return node


def _ratio(v: int | Fraction) -> tuple:
    """(numerator, denominator) of a coefficient (an int's, without looking them up)."""
    return (v, 1) if type(v) is int else (v.numerator, v.denominator)


def _product_node(coeff: int | Fraction, factors: tuple, pairs: tuple | None = None) -> Product:
    """The product node; ``pairs`` is each factor's (base hash, exponent hash) when the caller
    has them (a product's own, kept for the products built from it)."""
    made = Product.__new__(Product)
    node = _interned(("*", coeff, factors), made)
    if node is made:  # new: only now is its structural hash computed
        if pairs is None:
            pairs = tuple([(b.hash, e.hash) for b, e in factors])
        first = factors[0][0].key  # sorts with its first base: x^2 and 2*x*y next to x
        _numbered(node, first[0], first[1], _ratio(coeff) + pairs, 1)
        node.coeff, node.factors, node._unit, node._pairs = coeff, factors, None, pairs
    return node


def unit(node: Product):
    """A product without its numeric coefficient: ``x*y`` for ``-3*x*y``."""
    if node._unit is None:  # the factors are canonical already: no second pass over them
        factors = node.factors  # (not unpacked with a star: that copies the rest to a list)
        node._unit = factors[0][0] if len(factors) == 1 and _value(factors[0][1]) == 1 else \
            _product_node(ONE, factors, node._pairs)
    return node._unit


def tail(node: Sum):
    """A sum without its constant: ``x + y`` for ``x + y - 1``."""
    if node._tail is None:  # the terms are canonical already: no second pass over them
        (term, c), *more = node.terms
        node._tail = (_sum_node(ZERO, node.terms) if more else
                      term if c == 1 else multiply([(term, ONE_NODE())], c))
    return node._tail


def add(pairs, constant: Fraction = ZERO) -> Node:
    """``constant + Σ coeff*node`` for ``(node, coeff)`` pairs, in canonical form."""
    acc: dict[int, list] = {}  # serial -> [term, its coefficient so far]
    for node, c in pairs:
        if not c:
            continue
        t = type(node)
        if t is Number:
            constant += c * node.value
            continue
        if t is Sum and len(node.terms) <= FLAT:
            constant += c * node.const
            for term, k in node.terms:
                _collect(acc, term, c * k)
            continue
        if t is Product and node.coeff != 1:
            node, c = unit(node), c * node.coeff
        slot = acc.get(node.serial)  # (_collect, written out for the commonest case)
        if slot is None:
            acc[node.serial] = [node, c]
        else:
            slot[1] += c
    terms = []
    for n, c in acc.values():  # tidy coefficients (an int of at most 256 bits is tidy as it is)
        if c:
            terms.append((n, c if type(c) is int and -_WIDE < c < _WIDE else _tidy(c)))
    terms.sort(key=_term_key)
    constant = _tidy(constant)
    if not terms:
        return number(constant)
    # where f(-a) = 1 - f(a) (sigmoid): c - c*f(u) is c*f(-u), with no cancellation, and
    # c*r*f(u) + c*r*f(-u) is c*r
    if constant:
        for i, (n, c) in enumerate(terms):
            if c == -constant and type(n) is Apply and TABLE[n.name].complement:
                return add(terms[:i] + terms[i + 1:] + [(_reflected(n), constant)])
    if len(terms) > 1:
        paired = _complements(terms)
        if paired is not None:
            return add(paired, constant)
    if len(terms) == 1 and not constant:
        node, c = terms[0]
        return node if c == 1 else multiply([(node, ONE_NODE())], c)
    return _sum_node(constant, tuple(terms))


_WIDE = 1 << 256


def _reflected(n):
    """``f(-u)`` for ``f(u)``."""
    return apply(n.name, (multiply([(n.args[0], ONE_NODE())], -ONE),))


def _complements(terms: list):
    """The terms with each ``c*r*f(u) + c*r*f(-u)`` as ``c*r`` (f a row whose f(-a) is
    1 - f(a)), or None where there is none. Nothing is built unless two terms share their
    coefficient and their other factors (``add`` runs this on every sum)."""
    groups: dict = {}  # (the other factors, the coefficient) -> [(term's index, f, others)]
    for i, (n, c) in enumerate(terms):
        t = type(n)
        if t is Apply:
            if TABLE[n.name].complement:
                groups.setdefault(((), c), []).append((i, n, ()))
        elif t is Product:
            for j, (b, e) in enumerate(n.factors):
                if type(b) is Apply and TABLE[b.name].complement and _value(e) == 1:
                    others = n.factors[:j] + n.factors[j + 1:]
                    key = (tuple([(x.serial, y.serial) for x, y in others]), c)
                    groups.setdefault(key, []).append((i, b, others))
                    break
    for (_, c), members in groups.items():
        if len(members) < 2:
            continue
        seen: dict = {}
        for i, f, others in members:
            j = seen.get(_reflected(f).serial)
            if j is not None:
                rest = multiply(list(others)) if others else ONE_NODE()
                return [t for k, t in enumerate(terms) if k not in (i, j)] + [(rest, c)]
            seen[f.serial] = i
    return None


def _term_key(pair):
    node = pair[0]
    return node.key


def _collect(acc: dict, node, c: Fraction) -> None:
    slot = acc.get(node.serial)
    if slot is None:
        acc[node.serial] = [node, c]
    else:
        slot[1] += c


def ONE_NODE():
    return _context.small.get(ONE) or number(ONE)


def _int(v: int | Fraction | None) -> int | None:
    if type(v) is int:
        return v
    return int(v) if v is not None and v.denominator == 1 else None


def _power_number(base: Fraction, exp: Fraction) -> Fraction | None:
    """``base^exp`` as an exact rational, or None (2^0.5 stays a power)."""
    k = _int(exp)
    if k is not None:
        if base == 0 and k < 0:
            return None  # undefined: left as written
        if abs(k) > 256 and abs(base) != 1 and base != 0:
            return None
        return base ** k if k >= 0 else Fraction(base) ** k  # an int to a negative power is a float
    if base > 0 and exp.denominator <= 16 and abs(exp.numerator) <= 64:  # 4^0.5 is 2
        try:
            r = float(base) ** float(exp)
        except OverflowError:
            return None
        if math.isfinite(r) and r.is_integer() and int(r) ** exp.denominator == \
                Fraction(base) ** exp.numerator:
            return int(r)
    return None


def multiply(items, coeff: Fraction = ONE, loose: bool = False) -> Node:
    """``coeff * Π base^exp`` for ``(base, exponent node)`` pairs, in canonical form.

    ``loose``: the caller only flattens the result into a larger product or adds it into a sum
    (as an adjoint sweep hands a chain rule's products on), so a product with a coefficient
    other than 1 and at most ``FLAT`` factors may come back outside the context's table (see
    :func:`sealed`): add() keys such a product by its unit, and a product flattens it, so
    neither reads its serial, and it is never numbered, hashed or stored."""
    if len(items) <= 2:
        if len(items) == 2 and coeff == 1:
            joined = _join_two(items, loose)
            if joined is not None:
                return joined
        scaled = _scaled(items, coeff, loose)
        if scaled is not None:
            return scaled
    stack = list(items)
    stack.reverse()
    powers: dict[int, list] = {}  # base serial -> [base, numeric exponent sum, symbolic exps]
    exp_args: list = []  # exp(a)^k factors, gathered into one exp(Σ k*a)
    while stack:
        base, e = stack.pop()
        ev = e.value if type(e) is Number else None
        bt = type(base)
        if bt is Number:
            if ev is not None:
                p = _power_number(base.value, ev)
                if p is not None:
                    coeff *= p
                    continue
        elif bt is Product:
            if ev == 1 and len(base.factors) <= FLAT:
                coeff *= base.coeff
                stack.extend(reversed(base.factors))
                continue
            k = _int(ev)
            if k is not None and len(base.factors) <= FLAT:  # (c*a^m)^k is c^k*a^(m*k)
                p = _power_number(base.coeff, ev)
                if p is not None:
                    coeff *= p
                    stack.extend([(b, _scale(m, ev)) for b, m in reversed(base.factors)])
                    continue
            if ev is not None and base.coeff == 1 and len(base.factors) == 1:
                b, m = base.factors[0]
                mk = _int(_value(m))
                if mk is not None and mk % 2:  # (a^3)^0.5 is a^1.5 (both need a >= 0 if not odd)
                    stack.append((b, _scale(m, ev)))
                    continue
        elif bt is Apply and base.name == "exp" and _int(ev) is not None:
            exp_args.append((base.args[0], ev))
            continue
        if ev == 0:
            continue
        if coeff == 0:
            return number(ZERO)
        slot = powers.get(base.serial)
        if slot is None:
            slot = powers[base.serial] = [base, ZERO, None]
        if ev is not None:
            slot[1] += ev
        elif slot[2] is None:  # a symbolic exponent: the rare case, its list made when needed
            slot[2] = [e]
        else:
            slot[2].append(e)
    if coeff == 0:
        return number(ZERO)
    if exp_args:
        combined = apply("exp", (add(exp_args),)) if len(exp_args) > 1 or exp_args[0][1] != 1 \
            else apply("exp", (exp_args[0][0],))
        if type(combined) is Number:
            coeff *= combined.value
        else:
            slot = powers.setdefault(combined.serial, [combined, ZERO, None])
            slot[1] += 1
    factors = []
    for base, numeric, symbolic in powers.values():
        if symbolic:
            factors.extend(_combine_exponents(base, numeric, symbolic))
        elif numeric:  # the common case: a number for exponent
            factors.append((base, number(numeric)))
    coeff = _tidy(coeff)
    if not factors:
        return number(coeff)
    factors.sort(key=_factor_key)
    if len(factors) == 1:
        base, e = factors[0]
        if _value(e) == 1:
            if coeff == 1:
                return base
            if type(base) is Sum and len(base.terms) <= FLAT:  # 2*(a + b) is 2*a + 2*b
                return add([(base, coeff)])
    return _made(loose, coeff, tuple(factors))


def _made(loose: bool, coeff: int | Fraction, factors: tuple, pairs: tuple | None = None):
    """The product node, or a loose one when the caller allows it (see :func:`multiply`)."""
    return _loose(coeff, factors, pairs) if loose else _product_node(coeff, factors, pairs)


def _loose(coeff: int | Fraction, factors: tuple, pairs: tuple | None = None) -> Product:
    """A product outside the context's table (see :func:`multiply`), or the table's own."""
    if coeff == 1 or len(factors) > FLAT:  # (add keys it by serial; a product keeps it whole)
        return _product_node(coeff, factors, pairs)
    node = Product.__new__(Product)
    node.coeff, node.factors, node._unit = coeff, factors, None
    node._pairs = tuple([(b.hash, e.hash) for b, e in factors]) if pairs is None else pairs
    return node


def sealed(node) -> Node:
    """The context's own node for one ``multiply(..., loose=True)`` gave (any other node is)."""
    if type(node) is Product and getattr(node, "serial", None) is None:
        return _product_node(node.coeff, node.factors, node._pairs)
    return node


def _scaled(items, coeff, loose: bool = False) -> Node | None:
    """``coeff * x`` or ``n * x`` (n a number), x one node to the power 1: what the general
    path makes of it, without its passes (a rule's ``2*a``, ``-a``, ``4*sigmoid(a)``): a small
    sum distributed, a product's coefficient multiplied (its factors are canonical already),
    any other node a factor. None when the general path has more to do."""
    one = _context.small.get(ONE)
    if len(items) == 2:
        (p, ep), (q, eq) = items
        if ep is not one or eq is not one:
            return None
        if type(p) is Number:
            coeff, x = coeff * p.value, q
        elif type(q) is Number:
            coeff, x = coeff * q.value, p
        else:
            return None
    elif len(items) == 1:
        (x, e), = items
        if e is not one:
            return None
    else:
        return None
    t = type(x)
    if t is Number or (t is Apply and x.name == "exp"):
        return None
    if not coeff:
        return number(ZERO)
    coeff = _tidy(coeff)
    if coeff == 1:
        return x
    if t is Sum and len(x.terms) <= FLAT:  # 2*(a + b) is 2*a + 2*b
        return add([(x, coeff)])
    if t is Product and len(x.factors) <= FLAT:
        coeff = _tidy(coeff * x.coeff)
        if len(x.factors) == 1 and x.factors[0][1] is one:
            return None  # (becomes its base, or a sum distributed: the general path's cases)
        return _made(loose, coeff, x.factors, x._pairs)
    return _made(loose, coeff, ((x, one),))


def _join_two(items, loose: bool = False) -> Product | None:
    """``P*Q`` for two products (or one product and one more factor: a symbol, a function, a
    sum, a long product) with no base in common and no exps to combine: their canonical
    factors merged in order and their coefficients multiplied, as the general path would do it,
    without canonicalising every factor again. The commonest product of a chain rule (a
    derivative times a partial); None when the general path has more to do."""
    (p, ep), (q, eq) = items
    one = _context.small.get(ONE)  # the one node of 1 in the context
    if ep is not one or eq is not one:
        return None
    cp, fp = _as_factors(p, ep)
    cq, fq = _as_factors(q, eq)
    if fp is None or fq is None:
        return None
    small, large = (fq, fp) if len(fq) <= len(fp) else (fp, fq)
    for b, _ in small:
        if type(b) is Apply and b.name == "exp":
            for x, _ in large:
                if type(x) is Apply and x.name == "exp":
                    return None
            break
    if len(small) > 2:
        bases = {b for b, _ in large}
        for b, _ in small:
            if b in bases:
                return None
        return _made(loose, _tidy(cp * cq), tuple(sorted(fp + fq, key=_factor_key)))
    # a factor or two into the other side's order: what sorted(fp + fq) gives, with a few
    # comparisons (fp's factor first among equal keys); a base the other side has too sits
    # where its factor would go
    merged = list(large)
    owner = p if large is fp else q  # the large side's hash pairs, kept when it is a product
    hashes = list(owner._pairs) if type(owner) is Product and owner.factors is large else \
        [(large[0][0].hash, large[0][1].hash)]  # (a single factor)
    right = small is fq  # q's factors go after p's equal ones; p's, taken last first, before
    for pair in (fq if right else reversed(fp)):
        i = _insertion(merged, pair, right)
        if _holds(merged, i, pair[0]):
            return None
        merged.insert(i, pair)
        hashes.insert(i, (pair[0].hash, pair[1].hash))
    return _made(loose, _tidy(cp * cq), tuple(merged), tuple(hashes))


def _insertion(factors: list, pair: tuple, right: bool) -> int:
    """Where ``pair`` (base, exponent) goes in the sorted ``factors``: after those of equal sort
    key (``right``) or before them, as bisect_right and bisect_left with key=_factor_key would
    place it (they call the key through Python and make a tuple each time; compiled, this loop
    compares the two keys directly)."""
    b, e = pair
    kb, ke = b.key, e.key
    lo, hi = 0, len(factors)
    while lo < hi:
        mid = (lo + hi) // 2
        fb, fe = factors[mid]
        kfb = fb.key
        if kb != kfb:  # (a tuple compares as its first unequal item)
            left = kb < kfb
        else:
            kfe = fe.key
            left = (ke < kfe) if right else not (kfe < ke)
        if left:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _holds(factors: list, i: int, base) -> bool:
    """Whether ``base`` is a base of the sorted ``factors``, where a factor of base would go
    at ``i``: the factors whose bases sort as base's are next to i."""
    key = base.key
    j = i - 1
    while j >= 0:
        f = factors[j][0]
        if f.key != key:
            break
        if f is base:
            return True
        j -= 1
    while i < len(factors):
        f = factors[i][0]
        if f.key != key:
            break
        if f is base:
            return True
        i += 1
    return False


def _as_factors(node, e) -> tuple:
    """A side of _join_two as (coefficient, factors), or (1, None) when it has more to do."""
    t = type(node)
    if t is Product and len(node.factors) <= FLAT:
        return node.coeff, node.factors
    if t is Symbol or t is Sum or t is Product or (t is Apply and node.name != "exp"):
        return ONE, ((node, e),)
    return ONE, None


def _factor_key(pair):
    b, e = pair
    return b.key, e.key


def _scale(e, k: Fraction):
    v = _value(e)
    return number(v * k) if v is not None else multiply([(e, ONE_NODE())], k)


def _split_exponent(e) -> tuple[Fraction, object, Fraction]:
    """An exponent as ``const + k*term``: ``x - 1`` is (-1, x, 1), ``2*y`` is (0, y, 2)."""
    const, rest = ZERO, e
    if type(e) is Sum:
        const, rest = e.const, tail(e)
    if type(rest) is Product and rest.coeff != 1:
        return const, unit(rest), rest.coeff
    return const, rest, ONE


def _combine_exponents(base, numeric: Fraction, symbolic: list) -> list:
    """The factors of one base: symbolic exponents with the same term add (``x^y*x^(2*y)`` is
    ``x^(3*y)``); a number joins them only when that shortens the constant (``x*x^(x-1)`` is
    ``x^x`` but ``x^x/x`` stays), as SymPy's ``Mul`` does."""
    groups: dict[int, list] = {}
    for e in symbolic:
        c, term, k = _split_exponent(e)
        g = groups.get(term.serial)
        if g is None:
            groups[term.serial] = [term, k, c]
        else:
            g[1] += k
            g[2] += c
    out = []
    for term, k, c in groups.values():
        if numeric and (c + numeric == 0 or abs(c + numeric) < abs(c)):
            c, numeric = c + numeric, ZERO
        e = add([(term, k)], c)
        v = _value(e)
        if v is None:
            out.append((base, e))
        else:
            numeric += v
    if numeric:
        out.append((base, number(numeric)))
    return out


# -- Sym: Python's operators on nodes -------------------------------------------------------------

def _node(x):
    t = type(x)
    if t is Sym:
        return x.node
    if t in _NODES or isinstance(x, Node):
        return x
    return number(x)


def _sym(node) -> Sym:
    """``Sym(node)`` for a node (no check of what it is handed)."""
    s = Sym.__new__(Sym)
    s.node = node
    return s


class Sym:
    """A node that builds larger canonical nodes with + - * / ** and unary minus."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = _node(node)

    def __add__(self, o): return _sym(add([(self.node, ONE), (_node(o), ONE)]))
    def __radd__(self, o): return _sym(add([(_node(o), ONE), (self.node, ONE)]))
    def __sub__(self, o): return _sym(add([(self.node, ONE), (_node(o), -ONE)]))
    def __rsub__(self, o): return _sym(add([(_node(o), ONE), (self.node, -ONE)]))
    def __mul__(self, o): return _sym(multiply([(self.node, ONE_NODE()), (_node(o), ONE_NODE())]))
    def __rmul__(self, o): return _sym(multiply([(_node(o), ONE_NODE()), (self.node, ONE_NODE())]))
    def __truediv__(self, o): return _sym(divide(self.node, _node(o)))
    def __rtruediv__(self, o): return _sym(divide(_node(o), self.node))
    def __pow__(self, o): return _sym(multiply([(self.node, _node(o))]))
    def __rpow__(self, o): return _sym(multiply([(_node(o), self.node)]))
    def __neg__(self): return _sym(multiply([(self.node, ONE_NODE())], -ONE))
    def __pos__(self): return self

    def __repr__(self) -> str:
        return f"Sym({self.node!r})"


_NODES = frozenset([Number, Symbol, Apply, Sum, Product])


def divide(a, b):
    return multiply([(a, ONE_NODE()), (b, number(-ONE))])


def _function(name):
    """The row as a builder of canonical nodes: a sum or product form (``sub``: ``a - b``) as
    one, any other function as its application."""
    form = TABLE[name].form
    if form is None:
        return lambda *args: _sym(apply(name, tuple(map(_node, args))))
    kind, ks = form
    if kind == "sum":
        return lambda *args: _sym(add([(_node(a), k) for a, k in zip(args, ks)]))  # whole: ints
    return lambda *args: _sym(multiply([(_node(a), number(k)) for a, k in zip(args, ks)]))


class _Namespace:
    """What a rule calls as ``m.cos(a)``, ``m.pow(a, b)``, ``m.pi``: functions build nodes."""

    def __init__(self):
        for name in TABLE:
            setattr(self, name, _function(name))
        self.pow = lambda a, b: _sym(multiply([(_node(a), _node(b))]))
        self.where = where  # a rule's conditions are Python bools here: an expression is never 0
        # pow's rules with their cases (the engine's: :meth:`Namespace.pow_by_base`)
        self.pow_by_base = partial(Namespace.pow_by_base, self)
        self.pow_by_exponent = partial(Namespace.pow_by_exponent, self)
        # the slopes some rows leave to the namespace: tanh's as the engine's (two sigmoids),
        # sinc's as the quotient, which is exact in a formula, and ψ'', which has none
        self.tanh_slope = partial(Namespace.tanh_slope, self)
        self.sinc_slope = lambda a: (self.cos(a) - self.sinc(a)) / a
        self.polygamma = partial(Namespace.polygamma, self)

    def __getattr__(self, name):  # pi and e: symbols of the current context
        if name in CONSTANTS:
            return Sym(symbol(name))
        if name in TABLE:  # a row added since (at run time): its builder, made once
            f = _function(name)
            setattr(self, name, f)
            return f
        raise AttributeError(name)


SYMBOLIC = _Namespace()


def constant_nodes(graph) -> list:
    """A graph's constants as the numbers they are exactly (:meth:`Graph.exact_constants`): a
    typed ``0.1`` is 1/10, ``log(2)`` and ``pi/4`` stay expressions, never a double's digits."""
    return [_node(c) for c in graph.exact_constants(SYMBOLIC, _typed)]


def _typed(value) -> Node:
    """The number a literal's text (exactly what was typed) or a float (exactly) means."""
    return number(Fraction(value) if type(value) is str else value)


# -- parts ---------------------------------------------------------------------------------------

def reachable(root) -> list:
    """``root`` and all its parts, parts before wholes (by serial: parts are built first)."""
    seen = {root.serial: root}
    stack = [root]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is Product:
            for b, e in n.factors:
                if b.serial not in seen:
                    seen[b.serial] = b
                    stack.append(b)
                if e.serial not in seen:
                    seen[e.serial] = e
                    stack.append(e)
        elif t is Sum:
            for k, _ in n.terms:
                if k.serial not in seen:
                    seen[k.serial] = k
                    stack.append(k)
        elif t is Apply:
            for k in n.args:
                if k.serial not in seen:
                    seen[k.serial] = k
                    stack.append(k)
    return [seen[s] for s in sorted(seen)]


def _primal_sym(prim, args: list) -> Sym:
    """The primitive applied to symbolic arguments, as the expression it builds."""
    return getattr(SYMBOLIC, prim.name)(*args)


def local_derivatives(prim, args: list, value=None) -> list:
    """Each partial derivative of ``prim`` at symbolic arguments, as nodes (the rule table's);
    ``value`` is the node of ``prim`` at them when the caller has it."""
    syms = list(map(Sym, args))
    ans = _primal_sym(prim, syms) if value is None else _sym(value)
    found = []
    for rule in prim.partials:  # (one or two: a loop, no comprehension's function made)
        found.append(_node(rule(SYMBOLIC, *syms, ans)))
    return found
