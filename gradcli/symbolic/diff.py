"""Symbolic derivatives: the table's rules run on expressions, printed in gradcli's own syntax.

The graph becomes a shared expression DAG (:class:`Interner`: equal subexpressions are one
object, found by hashing small keys, never by comparing trees). A tangent sweep over that DAG
with the symbolic namespace (``m = SYMBOLIC``) builds each node's derivative from the very rules
reverse mode evaluates on floats, simplifying as it goes (:mod:`gradcli.symbolic.expr`). Higher
orders sweep the derivative's own DAG again. Printing names every subexpression that is used
more than once and is worth a name, so the result is a small program, not an exponential tree:

>>> from gradcli.api import compile
>>> derivatives_of(compile("log(x)+x*y-sin(y)"), ["x", "y"])
{'x': '1/x + y', 'y': 'x - cos(y)'}
>>> derivatives_of(compile("x^10"), ["x"], order=3)
{'x': '720*x^7'}
>>> print(derivatives_of(compile("sigmoid(a*x + b)"), ["b"])["b"])
t1 = sigmoid(a*x + b)
t1*(1 - t1)

Everything is iterative (explicit stacks and id-ordered sweeps): 100,000-deep input works.
"""

from __future__ import annotations

import math
from itertools import count

from ..language.ast import Assign, Binary, Call, Num, Program, Unary, Var
from ..errors import LimitError
from ..engine.graph import Graph
from ..engine.primitives import BINARY_OPERATORS, CONSTANTS, TABLE, Primitive, lookup
from ..language.printer import to_source
from .expr import SYMBOLIC, Sym, binary, call, negate, number

MAX_EXPRESSIONS = 2_000_000  # distinct subexpressions; past this the derivative is too large to print
MIN_NAMED_SIZE = 4  # a repeated subexpression of at least this many nodes gets a name (t1 = ...)

_NEG = TABLE["neg"]
_BINARY = {op: TABLE[name] for op, name in BINARY_OPERATORS.items()}


def _children(node) -> tuple:
    t = type(node)
    if t is Binary:
        return (node.left, node.right)
    if t is Unary:
        return (node.operand,)
    if t is Call:
        return node.args
    return ()


def _tag(node) -> tuple:
    t = type(node)
    if t is Num:
        return ("n", node.value, math.copysign(1.0, node.value))  # keep -0.0 apart from 0.0
    if t is Var:
        return ("v", node.name)
    if t is Unary:
        return ("u", node.op)
    if t is Binary:
        return ("b", node.op)
    return ("c", node.name)


def _rebuild(node, kids: list):
    t = type(node)
    if t is Binary:
        return Binary(node.op, kids[0], kids[1])
    if t is Unary:
        return Unary(node.op, kids[0])
    return Call(node.name, tuple(kids))


def _primitive(node) -> Primitive:
    t = type(node)
    if t is Binary:
        return _BINARY[node.op]
    if t is Unary:
        return _NEG
    return lookup(node.name)


class Interner:
    """Hash-consing of AST expressions: :meth:`intern` returns the one canonical object for each
    distinct expression, so equal subexpressions are shared and recognised by identity.

    Class ids grow as expressions are created, and an expression's parts are interned before
    it: ascending id order is a topological order of the DAG.
    """

    def __init__(self):
        self.nodes: list = []  # class id -> canonical node
        self.children: list[tuple[int, ...]] = []  # class id -> its children's class ids
        self._by_key: dict[tuple, int] = {}
        self._ids: dict[int, int] = {}  # id(node) -> class id, for every node seen
        self._seen: list = []  # keeps seen nodes alive, so their id()s stay unique

    def class_of(self, node) -> int:
        return self._ids[id(node)]

    def intern(self, root):
        """The canonical object equal to ``root`` (interning every part of it on the way)."""
        ids = self._ids
        if id(root) in ids:
            return self.nodes[ids[id(root)]]
        stack = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if id(node) in ids:
                continue
            kids = _children(node)
            if not ready:
                stack.append((node, True))
                stack.extend((k, False) for k in kids if id(k) not in ids)
                continue
            kid_ids = tuple(ids[id(k)] for k in kids)
            key = _tag(node) + kid_ids
            cid = self._by_key.get(key)
            if cid is None:
                canonical = node
                if any(self.nodes[c] is not k for c, k in zip(kid_ids, kids)):
                    canonical = _rebuild(node, [self.nodes[c] for c in kid_ids])
                cid = self._by_key[key] = len(self.nodes)
                if cid >= MAX_EXPRESSIONS:
                    raise LimitError(f"the derivative has more than {MAX_EXPRESSIONS:,} distinct "
                                     "subexpressions", hint="ask for a lower --order")
                self.nodes.append(canonical)
                self.children.append(kid_ids)
                ids[id(canonical)] = cid
                self._seen.append(canonical)
            ids[id(node)] = cid
            self._seen.append(node)
        return self.nodes[ids[id(root)]]

    def reachable(self, root) -> list[int]:
        """Class ids of ``root`` and all its parts, ascending (parts before wholes)."""
        start = self.class_of(root)
        seen = {start}
        stack = [start]
        while stack:
            for k in self.children[stack.pop()]:
                if k not in seen:
                    seen.add(k)
                    stack.append(k)
        return sorted(seen)

    # -- building ---------------------------------------------------------------------------

    def graph_expression(self, graph: Graph):
        """The graph's output as a canonical expression in its inputs (assignments resolved)."""
        expr: list = [None] * graph.n_slots
        for i, value in enumerate(graph.constants):
            name = next((n for n, v in CONSTANTS.items() if v == value), None)
            expr[i] = self.intern(Var(name) if name else number(value))
        for i, name in enumerate(graph.inputs):
            expr[graph.n_const + i] = self.intern(Var(name))
        live = graph.live_nodes()
        for k, prim in enumerate(graph.ops):
            if not live[k]:
                continue
            a = expr[graph.arg0[k]]
            if graph.arg1[k] < 0:
                node = negate(a) if prim.symbol else call(prim.name, a)
            else:
                b = expr[graph.arg1[k]]
                node = binary(prim.symbol, a, b) if prim.symbol else call(prim.name, a, b)
            expr[graph.base + k] = self.intern(node)
        return expr[graph.output]

    def derivative(self, root, name: str):
        """``∂root/∂name`` as a canonical expression: a tangent sweep with ``m = SYMBOLIC``."""
        tangent: dict[int, object] = {}  # class id -> canonical tangent; absent means 0
        nodes = self.nodes
        for cid in self.reachable(root):
            node = nodes[cid]
            t = type(node)
            if t is Var:
                if node.name == name:
                    tangent[cid] = self.intern(number(1.0))
                continue
            if t is Num:
                continue
            kids = [nodes[k] for k in self.children[cid]]
            rules = _primitive(node).partials
            total = None
            for k, kid_id in enumerate(self.children[cid]):
                dk = tangent.get(kid_id)
                if dk is None:
                    continue  # a constant argument, or one that does not depend on name
                local = rules[k](SYMBOLIC, *[Sym(a) for a in kids], Sym(node))
                local = self.intern(local.node if isinstance(local, Sym) else number(local))
                term = self.intern(binary("*", dk, local))  # g'(x)*f'(g(x)): 2*x*cos(x^2)
                total = term if total is None else self.intern(binary("+", total, term))
            if total is not None and not (type(total) is Num and total.value == 0):
                tangent[cid] = total
        return tangent.get(self.class_of(root)) or self.intern(number(0.0))

    # -- printing -----------------------------------------------------------------------------

    def program(self, root, reserved=()) -> Program:
        """``root`` as a program: each repeated subexpression of at least ``MIN_NAMED_SIZE``
        nodes becomes an assignment ``t1 = ...`` printed once, then the expression itself."""
        order = self.reachable(root)
        uses = dict.fromkeys(order, 0)
        for cid in order:
            for k in self.children[cid]:
                uses[k] += 1
        names = (f"t{i}" for i in count(1))
        taken = set(reserved)
        size: dict[int, int] = {}
        out: dict[int, object] = {}  # class id -> the AST printed for it (a Var when named)
        statements = []
        for cid in order:
            kids = self.children[cid]
            size[cid] = 1 + sum(1 if type(out[k]) is Var else size[k] for k in kids)
            node = self.nodes[cid]
            built = node if not kids else _rebuild(node, [out[k] for k in kids])
            if cid != order[-1] and uses[cid] > 1 and size[cid] >= MIN_NAMED_SIZE:
                name = next(n for n in names if n not in taken)
                statements.append(Assign(name, "=", built))
                built = Var(name)
            out[cid] = built
        statements.append(out[self.class_of(root)])
        return Program(tuple(statements))


def derivatives_of(graph: Graph, wrt: list[str], order: int = 1) -> dict[str, str]:
    """Each ``∂^order f/∂name^order`` as source text (a program when it has assignments)."""
    interner = Interner()
    f = interner.graph_expression(graph)
    result = {}
    for name in wrt:
        d = f
        for _ in range(order):
            d = interner.derivative(d, name)
        result[name] = to_source(interner.program(d, graph.inputs))
    return result


def mixed_partial(graph: Graph, names: list[str]) -> str:
    """``∂ⁿf/∂names[0]…∂names[-1]`` as source text: differentiated by each name in turn."""
    interner = Interner()
    d = interner.graph_expression(graph)
    for name in names:
        d = interner.derivative(d, name)
    return to_source(interner.program(d, graph.inputs))
