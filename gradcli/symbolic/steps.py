"""A derivative derived rule by rule, as a student writes it (``gradcli diff --steps``).

The derivation starts from ``d/dx(f)`` and rewrites one pending derivative ``d/dx(u)`` per
step, outermost first, left to right: a sum by the sum rule, a product with a constant by the
constant multiple rule, a product by the product rule, a fraction by the quotient rule, a
power by the power rule (or the exponential rule when the exponent varies), a function by its
row's own rule, each with the chain rule when its argument is not ``x`` itself. Every rule is
the rule table's (:mod:`gradcli.engine.primitives`): the sum rule is the ``add`` row's, the
product rule the ``mul`` row's partials, the quotient rule the ``div`` row's, the power and
exponential rules the ``pow`` row's, a function its own row's, run on expressions as
``gradcli diff`` runs them, so a step can never disagree with ``eval``.

A pending derivative is a symbol of the canonical form (named ``D1``, ``D2``, ... in the
records, written ``d/dx(u)`` by the views), so every line is a canonical expression and each
step substitutes one symbol. The last step, when the lines have not reached it, rewrites the
result into ``gradcli diff``'s own form.

>>> from gradcli.api import compile
>>> d = derivation(compile("x^2*sin(x)"), "x")
>>> [(s.rule, s.before, s.after) for s in d.steps]
[('product', 'D1', 'sin(x)*D2 + x^2*D3'), ('power', 'D2', '2*x'), ('function', 'D3', 'cos(x)')]
>>> d.result
'x^2*cos(x) + 2*x*sin(x)'
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.primitives import TABLE
from ..errors import LimitError
from .diff import derivative, graph_expression
from .expr import (SYMBOLIC, Apply, Number, Product, Sum, Sym, add, apply,
                   fresh_context, local_derivatives, multiply, number, reachable, symbol)
from .printer import text
from .rational import reduced

MAX_STEPS = 200  # a derivation longer than this is no longer one a person reads

# rule -> how a person names it (the views print it; --json gives both)
TITLES = {"sum": "sum rule", "constant multiple": "constant multiple rule",
          "product": "product rule", "quotient": "quotient rule", "power": "power rule",
          "exponential": "exponential rule", "simplify": "simplify"}  # (a function: its row's)


@dataclass(frozen=True)
class Step:
    """One rewrite ``before`` (a pending derivative's name) -> ``after``, by ``rule`` (a key of
    :data:`TITLES`); ``row`` is the table row whose rule it is (``sin``, ``mul``), ``chain``
    whether the chain rule multiplies it by the argument's derivative, ``of`` the expression
    differentiated, and ``line`` the whole derivative after the step. Texts are in gradcli's
    syntax, pending derivatives as their names (``D2``)."""
    rule: str
    row: str | None
    chain: bool
    of: str
    before: str
    after: str
    line: str


@dataclass(frozen=True)
class Derivation:
    """The steps of ``d/d wrt`` of ``source``: ``start`` is the first line (the name of
    ``d/dx(f)``), ``pending`` each name -> the expression it differentiates, ``result`` the
    derivative as ``gradcli diff`` prints it (without assignments)."""
    wrt: str
    start: str
    steps: list
    pending: dict
    result: str


def derivation(graph, wrt: str) -> Derivation:
    """The derivation of ``∂f/∂wrt`` for a compiled one-output graph."""
    with fresh_context():
        return _Deriver(graph, wrt).run()


class _Deriver:
    def __init__(self, graph, wrt: str):
        self.f = graph_expression(graph)
        self.x = symbol(wrt)
        self.wrt = wrt
        taken = set(graph.inputs)
        self.prefix = "D"
        while any(name.startswith(self.prefix) for name in taken):
            self.prefix += "D"
        self.memo: dict = {}  # serial -> whether that node reads x
        self.markers: dict = {}  # marker name -> the node it differentiates
        self.stack: list = []  # pending marker names, the next on top

    def reads(self, node) -> bool:
        """Whether ``node`` reads x (parts before wholes, each node once)."""
        memo = self.memo
        if node.serial not in memo:
            for n in reachable(node):
                if n.serial not in memo:
                    memo[n.serial] = n is self.x or any(memo[k] for k in _kids(n))
        return memo[node.serial]

    def d(self, node):
        """``d/dx(node)``: 1, 0, or a pending derivative's symbol."""
        if node is self.x:
            return number(1)
        if not self.reads(node):
            return number(0)
        for name, seen in self.markers.items():  # derived once already: as it came out
            if seen is node:
                return symbol(name) if name in self.stack or name in self.new else \
                    reduced(derivative(node, self.wrt))
        name = f"{self.prefix}{len(self.markers) + 1}"
        self.markers[name] = node
        self.new.append(name)
        return symbol(name)

    def run(self) -> Derivation:
        self.new = []
        start = self.d(self.f)
        line = start
        steps = []
        self.stack = self.new[::-1]
        while self.stack:
            name = self.stack.pop()
            if len(steps) >= MAX_STEPS:
                raise LimitError(f"the derivation has more than {MAX_STEPS} steps",
                                 hint="drop --steps: diff prints the derivative itself")
            node = self.markers[name]
            self.new = []
            rule, row, chain, after = self.rewrite(node)
            line = substitute(line, symbol(name), after)
            steps.append(Step(rule, row, chain, text(node), name, self.text(after),
                              self.text(line)))
            self.stack += self.new[::-1]
        final = reduced(derivative(self.f, self.wrt))
        if final is not line:
            steps.append(Step("simplify", None, False, "", self.text(line), text(final),
                              text(final)))
        pending = {name: text(node) for name, node in self.markers.items()}
        return Derivation(self.wrt, text(start), steps, pending, text(final))

    def text(self, node) -> str:
        """``node``'s text with each pending derivative after what it multiplies, as a
        textbook writes the rules: ``sin(x)*D2``, ``cos(x^2)*D3``, ``(v*D4 - u*D5)/v^2``."""
        return text(node, frozenset([symbol(name).serial for name in self.markers]))

    def rewrite(self, node) -> tuple:
        """(rule, row, chain, the expansion of d/dx(node)) for a node that reads x."""
        t = type(node)
        if t is Sum:  # the add row: ∂(a + b)/∂a = 1, a constant's derivative 0
            return "sum", "add", False, add([(self.d(k), c) for k, c in node.terms])
        if t is Apply:
            return self.function(node)
        if t is Product:
            return self.product(node)
        raise AssertionError(f"no rule for {node!r}")  # a symbol or number never is pending

    def function(self, node) -> tuple:
        """The row's own partials times each argument's derivative (the chain rule)."""
        partials = local_derivatives(TABLE[node.name], node.args, node)
        terms = [(multiply([(p, number(1)), (self.d(a), number(1))]), 1)
                 for a, p in zip(node.args, partials) if self.reads(a)]
        chain = any(a is not self.x for a in node.args if self.reads(a))
        return "function", node.name, chain, add(terms)

    def product(self, node) -> tuple:
        one = number(1)
        fixed = [(b, e) for b, e in node.factors
                 if not self.reads(b) and not self.reads(e)]
        moving = [(b, e) for b, e in node.factors
                  if self.reads(b) or self.reads(e)]
        if fixed or node.coeff != 1:  # the mul row with a constant: ∂(c*a)/∂a = c
            c = multiply(fixed, node.coeff)
            return "constant multiple", "mul", False, \
                multiply([(c, one), (self.d(multiply(moving)), one)])
        if len(moving) == 1:
            return self.power(*moving[0])
        below = [(b, number(-e.value)) for b, e in moving if type(e) is Number and e.value < 0]
        above = [(b, e) for b, e in moving if not (type(e) is Number and e.value < 0)]
        if below and above:  # the div row: ∂(u/v)/∂u = 1/v, ∂(u/v)/∂v = -(u/v)/v
            u, v = multiply(above), multiply(below)
            su, sv = Sym(u), Sym(v)
            by_u, by_v = (rule(SYMBOLIC, su, sv, su / sv).node for rule in TABLE["div"].partials)
            square = multiply([(v, number(2))])  # over one bar: (u'*v - u*v')/v^2
            top = add([(multiply([(self.d(u), one), (by_u, one), (square, one)]), 1),
                       (multiply([(self.d(v), one), (by_v, one), (square, one)]), 1)])
            return "quotient", "div", False, multiply([(top, one), (square, number(-1))])
        # the mul row: ∂(a*b)/∂a = b, ∂(a*b)/∂b = a, a the first factor and b the others
        a, b = multiply(moving[:1]), multiply(moving[1:])
        sa, sb = Sym(a), Sym(b)
        by_a, by_b = (rule(SYMBOLIC, sa, sb, sa * sb).node for rule in TABLE["mul"].partials)
        return "product", "mul", False, add([
            (multiply([(self.d(a), one), (by_a, one)]), 1),
            (multiply([(self.d(b), one), (by_b, one)]), 1)])

    def power(self, base, e) -> tuple:
        """The pow row: ∂(b^e)/∂b when the exponent is constant (the power rule), ∂/∂e when
        the base is (the exponential rule), both when both vary."""
        one = number(1)
        sb, se = Sym(base), Sym(e)
        y = sb ** se
        by_base, by_exp = (rule(SYMBOLIC, sb, se, y).node for rule in TABLE["pow"].partials)
        terms = []
        if self.reads(base):
            terms.append((multiply([(by_base, one), (self.d(base), one)]), 1))
        if self.reads(e):
            terms.append((multiply([(by_exp, one), (self.d(e), one)]), 1))
        moving = base if self.reads(base) else e
        rule = "power" if not self.reads(e) else \
            "exponential" if not self.reads(base) else "power"
        chain = len(terms) > 1 or moving is not self.x
        return rule, "pow", chain, add(terms)


def _kids(n) -> set:
    t = type(n)
    if t is Sum:
        return {k.serial for k, _ in n.terms}
    if t is Product:
        return {b.serial for b, _ in n.factors} | {e.serial for _, e in n.factors}
    if t is Apply:
        return {a.serial for a in n.args}
    return set()


def substitute(root, old, new):
    """``root`` with the node ``old`` replaced by ``new``, rebuilt in canonical form (parts
    before wholes: no recursion)."""
    out = {old.serial: new}
    for n in reachable(root):
        if n.serial in out:
            continue
        t = type(n)
        if t is Sum:
            if any(k.serial in out for k, _ in n.terms):
                out[n.serial] = add([(out.get(k.serial, k), c) for k, c in n.terms], n.const)
        elif t is Product:
            if any(b.serial in out or e.serial in out for b, e in n.factors):
                out[n.serial] = multiply([(out.get(b.serial, b), out.get(e.serial, e))
                                          for b, e in n.factors], n.coeff)
        elif t is Apply:
            if any(a.serial in out for a in n.args):
                out[n.serial] = apply(n.name, tuple(out.get(a.serial, a) for a in n.args))
    return out.get(root.serial, root)
