"""Symbolic derivatives: a tangent sweep over canonical expressions, printed in gradcli's syntax.

The graph becomes one canonical expression (:mod:`gradcli.symbolic.expr`: flat sums and products,
like terms and powers collected, equal subexpressions one node). A tangent sweep over its nodes
builds each node's derivative by the rule table's own rules, run on expressions (``m =
SYMBOLIC``): a catalogue function by its row; a sum term by term; a product by the ``mul`` row, a
power ``b^e`` as ``e*b^(e-1)*b'`` by the ``pow`` row (or ``b^e*(e'*log(b) + e*b'/b)`` by the
``mul`` and ``log`` rows when the exponent varies). Every result is canonical as built, so
``2*(3*x^2)`` never appears, and higher orders sweep the derivative again. Printing names every
repeated subexpression worth a name, so the result is a small program, not an exponential tree:

>>> from gradcli.api import compile
>>> derivatives_of(compile("log(x)+x*y-sin(y)"), ["x", "y"])
{'x': '1/x + y', 'y': 'x - cos(y)'}
>>> derivatives_of(compile("x^10"), ["x"], order=3)
{'x': '720*x^7'}
>>> derivatives_of(compile("1/x"), ["x"], order=3)
{'x': '-6/x^4'}

Everything is iterative (explicit stacks and serial-ordered sweeps): 100,000-deep input works,
and the work is linear in the size of the expression graph.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import count

from ..engine.graph import Graph
from ..engine.primitives import CONSTANTS, TABLE
from ..language.ast import Assign, Program, Var
from ..language.printer import to_source
from .expr import (ONE, SYMBOLIC, Apply, Number, Product, Sum, Sym, Symbol, add, build_ast,
                   children, fresh_context, local_derivatives, multiply, number, reachable,
                   symbol)

MIN_NAMED_SIZE = 4  # a repeated subexpression of at least this many nodes gets a name (t1 = ...)


def graph_expression(graph: Graph):
    """The graph's output as one canonical expression in its inputs (assignments resolved).

    A chain of sums (or of products) whose links are used once is gathered into one list and
    built in one call, so ``x1 + x2 + ... + xn`` costs O(n), not O(n^2).
    """
    expr: list = [None] * graph.n_slots
    for i, value in enumerate(graph.constants):
        name = next((n for n, v in CONSTANTS.items() if v == value), None)
        expr[i] = symbol(name) if name else number(value)
    for i, name in enumerate(graph.inputs):
        expr[graph.n_const + i] = symbol(name)
    base, ops, arg0, arg1 = graph.base, graph.ops, graph.arg0, graph.arg1
    live = graph.live_nodes()
    uses = [0] * graph.n_slots
    family = [None] * graph.n_slots
    for k, prim in enumerate(ops):
        if live[k]:
            family[base + k] = prim.form[0] if prim.form else None  # "sum", "product" or None
            uses[arg0[k]] += 1
            if arg1[k] >= 0:
                uses[arg1[k]] += 1
    pending: dict[int, list] = {}  # slot -> [items, sign]: a link of a chain, not yet built
    for k, prim in enumerate(ops):
        if not live[k]:
            continue
        slot = base + k
        args = (arg0[k],) if arg1[k] < 0 else (arg0[k], arg1[k])
        kind = family[slot]
        if kind is None:
            values = [_built(expr, pending, a, family) for a in args]
            expr[slot] = getattr(SYMBOLIC, prim.name)(*values).node  # the row, on expressions
            continue
        signs = prim.form[1]  # each argument's sign in the sum, or power in the product
        # small-to-large: the longest pending argument is extended, the others copied into it
        parts = []
        for a, s in zip(args, signs):
            if a in pending and family[a] == kind:
                items, sign = pending.pop(a)
                parts.append((items, sign * s))
            else:
                parts.append(([(_built(expr, pending, a, family), 1)], s))
        parts.sort(key=lambda p: -len(p[0]))
        items, sign = parts[0]
        for other, s in parts[1:]:
            rel = s * sign
            items.extend((n, e * rel) for n, e in other)
        pending[slot] = [items, sign]
        if uses[slot] != 1 or slot == graph.output:
            _built(expr, pending, slot, family)
    return _built(expr, pending, graph.output, family)


def _built(expr: list, pending: dict, slot: int, family: list):
    """The canonical node of a slot, building it from its pending chain if it has one."""
    if slot in pending:
        items, sign = pending.pop(slot)
        if family[slot] == "sum":
            expr[slot] = add([(n, Fraction(e * sign)) for n, e in items])
        else:
            expr[slot] = multiply([(n, number(e * sign)) for n, e in items])
    return expr[slot]


def derivative(root, name: str):
    """``∂root/∂name`` as a canonical expression: a tangent sweep over root's nodes."""
    tangent: dict[int, object] = {}  # serial -> tangent node; absent means 0
    one = number(ONE)
    for node in reachable(root):
        t = type(node)
        if t is Symbol:
            if node.name == name:
                tangent[node.serial] = one
            continue
        if t is Number:
            continue
        if t is Sum:
            total = add([(tangent[n.serial], c) for n, c in node.terms if n.serial in tangent])
        elif t is Apply:
            total = _apply_tangent(node, tangent, one)
        else:
            total = _product_tangent(node, tangent, one)
        if total is not None and not (type(total) is Number and total.value == 0):
            tangent[node.serial] = total
    return tangent.get(root.serial) or number(0)


def _apply_tangent(node, tangent: dict, one):
    """Chain rule through a catalogue function: Σ ∂f/∂arg (the table's rule) * arg'."""
    if all(a.serial not in tangent for a in node.args):
        return None
    locals_ = local_derivatives(TABLE[node.name], node.args)
    terms = [(multiply([(tangent[a.serial], one), (local, one)]), ONE)
             for a, local in zip(node.args, locals_) if a.serial in tangent]
    return add(terms)


_MUL, _POW, _LOG = TABLE["mul"], TABLE["pow"], TABLE["log"]


def _product_tangent(node, tangent: dict, one):
    """A flat product's tangent, by the rows: the ``mul`` row's ∂(u·v)/∂u = v makes each
    factor's tangent count times the other factors; a power ``b^e`` with a constant exponent by
    the ``pow`` row's ∂/∂base; one whose exponent varies as ``exp(e·log b)`` (b > 0, which the
    ``pow`` row's ∂/∂exponent needs anyway), by the ``mul`` and ``log`` rows:
    ``b^e·(e'·log b + e·b'/b)``, the power once rather than in two terms."""
    factors, terms = node.factors, []
    for i, (b, e) in enumerate(factors):
        db, de = tangent.get(b.serial), tangent.get(e.serial)
        if db is None and de is None:
            continue
        items = list(factors[:i]) + list(factors[i + 1:])  # ∂(this·others)/∂this = others
        se, k = Sym(e), ONE
        if de is None:  # ∂(b^e)/∂b · b'
            k, local = _on_base(b, lambda p: _POW.partials[0](SYMBOLIC, p, se, p ** se))
            items += local + [(db, one)]
        else:  # b^e = exp(u) for u = e·log b, and exp' = exp: b^e·u', u' by the rows
            log_b = SYMBOLIC.log(Sym(b))
            by_e, by_log = (rule(SYMBOLIC, se, log_b, None) for rule in _MUL.partials)
            inner = [(multiply([(de, one), (by_e.node, one)]), ONE)]
            if db is not None:
                c, by_b = _on_base(b, lambda p: _LOG.partials[0](SYMBOLIC, p, SYMBOLIC.log(p)))
                inner.append((multiply([(by_log.node, one)] + by_b + [(db, one)], c), ONE))
            items += [(b, e), (add(inner), one)]
        terms.append((multiply(items, node.coeff * k), ONE))
    return add(terms) if terms else None


def _on_base(b, rule) -> tuple[Fraction, list]:
    """``rule(b)`` (a row's rule) as a coefficient and factors (base, exponent) to join a
    product's one ``multiply``. The rule runs on a placeholder for the base, then the base comes
    back: built on the base itself, ``2*(x + y)^1`` would be distributed to ``2*x + 2*y``, a new
    sum instead of a factor of the product. (The rules run here, pow's ∂/∂base and log's, hold
    the base only as a factor.)"""
    placeholder = symbol(_PLACEHOLDER)
    local = _node_of(rule(Sym(placeholder)))
    if type(local) is Number:
        return local.value, []
    if type(local) is not Product:
        return ONE, [(b if local is placeholder else local, number(ONE))]
    return local.coeff, [(b if f is placeholder else f, x) for f, x in local.factors]


_PLACEHOLDER = "·base"  # not a name the language can spell


def _node_of(x):
    return x.node if type(x) is Sym else number(x)


def program(root, reserved=()) -> Program:
    """``root`` as a program: each repeated subexpression of at least ``MIN_NAMED_SIZE`` nodes
    becomes an assignment ``t1 = ...`` printed once, then the expression itself."""
    order = reachable(root)
    uses = {n.serial: 0 for n in order}
    for n in order:
        for k in children(n):
            uses[k.serial] += 1
    names = (f"t{i}" for i in count(1))
    taken = set(reserved)
    size: dict[int, int] = {}
    out: dict[int, object] = {}  # serial -> the AST printed for it (a Var when named)
    named: set[int] = set()
    statements = []
    for n in order:
        s = n.serial
        size[s] = 1 + sum(1 if k.serial in named else size[k.serial] for k in children(n)
                          if type(k) is not Number)  # a*x has size 3: its exponents 1 are not seen
        built = build_ast(n, out, named)
        if n is not root and uses[s] > 1 and size[s] >= MIN_NAMED_SIZE:
            name = next(x for x in names if x not in taken)
            statements.append(Assign(name, "=", built))
            built = Var(name)
            named.add(s)
        out[s] = built
    statements.append(out[root.serial])
    return Program(tuple(statements))


def derivatives_of(graph: Graph, wrt: list[str], order: int = 1) -> dict[str, str]:
    """Each ``∂^order f/∂name^order`` as source text (a program when it has assignments)."""
    with fresh_context():
        f = graph_expression(graph)
        result = {}
        for name in wrt:
            d = f
            for _ in range(order):
                d = derivative(d, name)
            result[name] = to_source(program(d, graph.inputs))
    return result


def mixed_partial(graph: Graph, names: list[str]) -> str:
    """``∂ⁿf/∂names[0]…∂names[-1]`` as source text: differentiated by each name in turn."""
    with fresh_context():
        d = graph_expression(graph)
        for name in names:
            d = derivative(d, name)
        return to_source(program(d, graph.inputs))
