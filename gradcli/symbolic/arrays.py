"""Symbolic gradients of array programs: the array nodes' own rules run over array expressions.

A program with array inputs is lowered to array nodes (:mod:`gradcli.engine.arraynodes`, the
shapes given), and both of its sweeps are run with a namespace whose values are array
expressions (:class:`Array`: a canonical expression of :mod:`.expr` and its shape) instead of
NumPy arrays: the forward sweep by :data:`~gradcli.engine.arraynodes.FORWARD`, the reverse sweep
by :data:`~gradcli.engine.arraynodes.VJP`, each elementwise node by its row's partials. No
derivative rule is written here: this module only says how an array expression is built and
printed.

Elementwise arithmetic is the canonical form's own (like terms collected, ``x/x`` is 1); the
other operations (``sum``, ``@``, transpose, indexing, literals) are atoms, symbols named by
their text, so two equal atoms are one symbol. Two facts of linear algebra are applied as atoms
are built, because the rules' adjoints need them to come out short: a scalar factor leaves a sum
or a product with ``@`` (``sum(c*x) = c*sum(x)``), and a vector seen as a row or a column
(``m.as_matrix``) stays that vector through ``@`` and transposes. With them the adjoint of the
shift in ``logsumexp`` cancels to 0, as it does on numbers.

A construct whose adjoint has no array formula here (``max(x)`` and ``min(x)`` reductions whose
adjoint is not 0, ``prod(x)``, reshapes beyond rows and columns, an indexing adjoint into a
large array) is an :class:`~gradcli.errors.InputError` naming it, with the caret under it: never
a wrong formula.

>>> array_derivatives("mean((X @ w - y)^2)", {"X": (3, 2), "w": (2,), "y": (3,)}, ["w"])
{'w': "2*(X' @ (X @ w - y))/3"}
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..engine.arraynodes import lower_for_gradient, run
from ..engine.graph import wrt_names
from ..engine.arrays import FUNCTIONS, broadcast_shape, shape_text, size, transposed
from ..errors import InputError
from .expr import (Apply, Number, Product, Sum, Sym, Symbol, SYMBOLIC, add, apply, exact,
                   fresh_context, multiply, number, reachable, symbol)
from .printer import text

Shape = tuple[int, ...]

MAX_LITERAL = 64  # an indexing adjoint is written as a literal of at most this many elements
# array functions recognized in a result by their own lowering (softmax(z), not its expansion)
NAMED = ("softmax", "log_softmax", "logsumexp")


class NoArrayFormula(InputError):
    """A construct whose adjoint this module cannot write as an array formula."""


class Array:
    """An array expression: ``sym`` (a :class:`~gradcli.symbolic.expr.Sym`) of shape ``shape``
    (its elementwise parts may broadcast: a scalar stands for an array of equal elements).
    ``flat``: for a vector seen as a row ``(1, n)`` or a column ``(n, 1)`` (or a scalar as
    ``(1, 1)``), that vector, so ``@`` and transposes keep it a vector."""

    __slots__ = ("sym", "shape", "flat")

    def __init__(self, sym, shape: Shape, flat: "Array | None" = None):
        self.sym = sym if type(sym) is Sym else Sym(_node(sym))
        self.shape, self.flat = tuple(shape), flat

    def _other(self, o):
        return o if type(o) is Array else Array(o, ())

    def _both(self, o, f):
        o = self._other(o)
        return Array(f(self.sym, o.sym), broadcast(self.shape, o.shape))

    def __add__(self, o): return self._both(o, lambda a, b: a + b)
    def __radd__(self, o): return self._both(o, lambda a, b: b + a)
    def __sub__(self, o): return self._both(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._both(o, lambda a, b: b - a)
    def __mul__(self, o): return self._both(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._both(o, lambda a, b: b * a)
    def __truediv__(self, o): return self._both(o, lambda a, b: a / b)
    def __rtruediv__(self, o): return self._both(o, lambda a, b: b / a)
    def __pow__(self, o): return self._both(o, lambda a, b: a ** b)
    def __rpow__(self, o): return self._both(o, lambda a, b: b ** a)
    def __neg__(self): return Array(-self.sym, self.shape)
    def __pos__(self): return self


def _node(x):
    """A canonical node of a Sym, a node or a Python number (a float exactly as it prints)."""
    if type(x) is Sym:
        return x.node
    if isinstance(x, (int, float)):
        return number(exact(float(x)))
    return x


def broadcast(a: Shape, b: Shape) -> Shape:
    """NumPy's broadcast of two shapes the lowering has checked (engine.arrays's rule)."""
    return broadcast_shape(tuple(a), tuple(b), None, "")


class _Rows:
    """The rows' namespace on array expressions: each catalogue function elementwise."""

    def __init__(self):
        from ..engine.primitives import where
        self.where = where

    def __getattr__(self, name):
        f = getattr(SYMBOLIC, name)
        if not callable(f):  # pi, e
            return Array(f, ())

        def elementwise(*args):
            args = [a if type(a) is Array else Array(a, ()) for a in args]
            shape: Shape = ()
            for a in args:
                shape = broadcast(shape, a.shape)
            return Array(f(*[a.sym for a in args]), shape)
        return elementwise


_EVAL_HAS_IT = "gradcli eval prints its gradient at a point (--at)"
# a refusal of diff that codegen does not share (it writes the rule's algorithm as code)
_CODE_HAS_IT = ("diff", f"{_EVAL_HAS_IT}; gradcli codegen --shape writes code that computes it")


class SymbolicArrays:
    """The namespace the array nodes' rules read (as :class:`~gradcli.engine.arraynodes.
    NumpyArrays`), building array expressions; ``span`` is the node whose rule runs (for a
    refusal's caret)."""

    def __init__(self, source: str):
        self.source = source
        self.rows = _Rows()
        self.shapes: dict[str, Shape] = {}  # a symbol's name (input or atom) -> its shape
        self.views: dict[str, tuple] = {}  # a literal atom's name -> its items (Arrays)
        self.flats: dict[str, Array] = {}  # a row or column atom's name -> its vector
        self.products: set[str] = set()  # the names of the atoms (A @ B)
        self.linear: dict[str, tuple] = {}  # see linear_atom
        self.span = None
        self.zero: set[int] = set()  # the nodes whose adjoint is 0 exactly
        self.opaque = False  # a prod's, max's or min's weights as atoms, not refused
        self._true: dict[int, Shape] = {}

    # -- atoms and shapes ----------------------------------------------------------------------

    def input(self, name: str, shape: Shape) -> Array:
        self.shapes[name] = shape
        return Array(Sym(symbol(name)), shape)

    def atom(self, name: str, shape: Shape) -> Array:
        """The array whose text is ``name`` (one symbol per text: equal atoms are one)."""
        self.shapes[name] = shape
        return Array(Sym(symbol(name)), shape)

    def true_shape(self, node) -> Shape:
        """The shape ``node``'s text evaluates to: its atoms' shapes broadcast."""
        found = self._true.get(node.serial)
        if found is not None:
            return found
        shape: Shape = ()
        for part in reachable(node):
            if type(part) is Symbol:
                shape = broadcast(shape, self.shapes.get(part.name, ()))
        self._true[node.serial] = shape
        return shape

    def text(self, x: Array) -> str:
        return text(x.sym.node)

    def operand(self, x: Array) -> str:
        """``x``'s text as an operand of ``@``, ``'`` or ``[...]``: in parentheses unless a name,
        a call or an atom."""
        node = x.sym.node
        t = text(node)
        if (type(node) in (Symbol, Apply) and not t.startswith("[")) or \
                (type(node) is Number and node.value >= 0):
            return t  # (a literal is indexed in parentheses: [u][0] does not parse)
        return f"({t})"

    def full(self, x: Array) -> Array:
        """``x`` as an expression of its whole shape (a broadcast one times ``ones(...)``)."""
        if self.true_shape(x.sym.node) == x.shape:
            return x
        ones = self.atom(f"ones({', '.join(map(str, x.shape))})", x.shape)
        return Array(x.sym * ones.sym, x.shape)

    def refuse(self, what: str, why: str, where: str = "diff and codegen",
               hint: str = _EVAL_HAS_IT):
        raise NoArrayFormula(f"{what} has no array formula in {where} ({why})", self.span,
                             label="no array formula", hint=hint)

    def split(self, x: Array) -> tuple:
        """``x`` as (its scalar factors, the rest): ``c*v`` with c of shape ()."""
        node = x.sym.node
        if self.true_shape(node) == ():
            return x.sym, None
        if type(node) is Sum:  # 2*a/3 - 2*b/3: 2/3 and a - b
            from fractions import Fraction
            from math import gcd, lcm
            cs = [Fraction(c) for _, c in node.terms] + ([Fraction(node.const)]
                                                          if node.const else [])
            k = Fraction(gcd(*[c.numerator for c in cs]), lcm(*[c.denominator for c in cs]))
            if cs[0] < 0 and all(c < 0 for c in cs):
                k = -k
            if k == 1:
                return Sym(number(1)), x
            rest = add([(t, Fraction(c) / k) for t, c in node.terms], Fraction(node.const) / k)
            return Sym(number(k)), Array(rest, x.shape)
        if type(node) is not Product:
            return Sym(number(1)), x
        out, rest = [], []
        for b, e in node.factors:
            if self.true_shape(b) == () and self.true_shape(e) == ():
                out.append((b, e))
            else:
                rest.append((b, e))
        return (Sym(multiply(out, node.coeff)),
                Array(multiply(rest), x.shape))

    # -- the operations the rules call -----------------------------------------------------------

    def row(self, row):
        return getattr(self.rows, row.name)

    def shape(self, x) -> Shape:
        return x.shape if type(x) is Array else ()

    def times(self, g, local):
        return g * local

    def view(self, x: Array, shape: Shape) -> Array:
        """The vector (or scalar) ``x`` as a row, a column or a 1 × 1 matrix."""
        if len(shape) != 2 or size(shape) != size(x.shape) or len(x.shape) > 1:
            self.refuse("a reshape", f"{shape_text(x.shape)} to {shape_text(shape)}")
        if shape == (1, 1):
            made = self.atom(f"[[{self.text(x)}]]", shape)
        else:
            made = self.atom(f"[{self.text(self.full(x))}]", (1, size(shape)))
            if shape[0] != 1:
                made = self.atom(_transposed(made.sym.node.name), shape)
        self.flats[made.sym.node.name] = x
        return Array(made.sym, shape, x)

    def unview(self, x: Array, shape: Shape) -> Array:
        """A row, a column or a 1 × 1 matrix ``x`` as the vector (or scalar) of ``shape``:
        each row or column atom in it by its vector, else by an index (``E[:, 0]``)."""
        node = x.sym.node
        swap = {}
        for part in reachable(node):
            if type(part) is Symbol and self.true_shape(part):
                flat = self.flats.get(part.name)
                if flat is None:
                    index = {0: "0, 0", 1: ":, 0" if x.shape[1] == 1 else "0"}[len(shape)]
                    return self.atom(f"{self.operand(self.full(x))}[{index}]", shape)
                swap[part.serial] = flat.sym.node
        return Array(_substitute(node, swap), shape)

    def reshape(self, x, shape):
        shape = tuple(shape)
        if x.shape == shape:
            return x
        if x.flat is not None:
            return self.reshape(x.flat, shape)
        if len(x.shape) == 2 and 1 in x.shape and len(shape) < 2:
            return self.unview(x, shape)
        if size(shape) == 1 and len(shape) < 2 and len(x.shape) < 2:  # () and (1,)
            if not shape:
                return Array(x.sym, ()) if not self.true_shape(x.sym.node) else \
                    self.atom(f"{self.operand(x)}[0]", ())
            return self.atom(f"[{self.text(x)}]", (1,))
        return self.view(x, shape)

    def as_matrix(self, x, left: bool):
        if len(x.shape) == 2:
            return x
        n = size(x.shape)
        return self.view(x, (1, n) if left else (n, 1))

    def transpose(self, x):
        if len(x.shape) < 2:
            return x
        shape = (x.shape[1], x.shape[0])
        if x.flat is not None:
            return self.view(x.flat, shape)
        node = x.sym.node
        if type(node) is Symbol and node.name.endswith("'") and \
                node.name[:-1] in self.shapes:  # (A')' is A
            return Array(Sym(symbol(node.name[:-1])), shape)
        c, rest = self.split(self.full(x))
        t = self.atom(_transposed(self.operand(rest)), shape)
        return Array(c * t.sym, shape)

    def matmul(self, a, b):
        """``a @ b``, vectors seen as rows and columns kept vectors; scalar factors outside."""
        sa, sb = a.shape, b.shape
        shape = sa[:-1] + sb[1:]
        if a.flat is not None and b.flat is not None and sa[0] == 1 and sb[1] == 1:
            if not a.flat.shape or not b.flat.shape:  # a scalar and a vector of 1
                return self.view(self.sum(a.flat * b.flat, None), shape)
            return self.view(self.matmul(a.flat, b.flat), shape)  # row @ column: u @ v
        if a.flat is not None and b.flat is not None and sa[1] == 1 and sb[0] == 1:
            if sa == (1, 1) or sb == (1, 1):  # a scalar times a row or a column
                return self.view(a.flat * b.flat, shape)
            ca, ra = self.split(self.full(self.expanded(a.flat)))  # a column times a row
            cb, rb = self.split(self.full(self.expanded(b.flat)))
            outer = self.linear_atom(f"outer({self.text(ra)}, {self.text(rb)})", shape, "outer",
                                     (ra, rb), lambda u, v: self.matmul(
                                         self.as_matrix(u, False), self.as_matrix(v, True)))
            return Array(ca * cb * outer.sym, shape)
        if b.flat is not None and sb[1] == 1 and len(sa) == 2 and a.flat is None:
            return self.view(self.matmul(a, b.flat), shape)
        if a.flat is not None and sa[0] == 1 and len(sb) == 2 and b.flat is None:
            return self.view(self.matmul(a.flat, b), shape)
        ca, ra = self.split(self.full(self.expanded(a)))  # (operands of @ are arrays: neither
        cb, rb = self.split(self.full(self.expanded(b)))  # is None)
        product = self.linear_atom(f"({self.operand(ra)} @ {self.operand(rb)})", shape, "@",
                                   (ra, rb), self.matmul)
        self.products.add(product.sym.node.name)
        return Array(ca * cb * product.sym, shape)

    def linear_atom(self, name: str, shape: Shape, key, operands: tuple, rebuild,
                    joint: bool = False) -> Array:
        """The atom ``name``, linear in each of its ``operands`` (``A @ B``, ``sum(A)``,
        ``outer(a, b)``), or in all of them at once (``joint``: a literal's items):
        :meth:`merged` adds two atoms of one ``key`` by ``rebuild``."""
        atom = self.atom(name, shape)
        self.linear[atom.sym.node.name] = (key, tuple(operands), rebuild, joint)
        return atom

    def merged(self, x: Array, y: Array) -> Array | None:
        """``x + y`` as one atom where both are linear atoms of one kind that differ in one
        operand (``c*(P @ A) + d*(P @ B)`` is ``P @ (c*A + d*B)``), else None."""
        px, py = self._scaled_atom(x), self._scaled_atom(y)
        if px is None or py is None:
            return None
        (cx, (kx, ox, rebuild, joint)), (cy, (ky, oy, _, _)) = px, py
        if kx != ky:
            return None
        cx, cy = Array(cx, ()), Array(cy, ())
        if joint:  # c*[a0, a1] + d*[b0, b1] is [c*a0 + d*b0, c*a1 + d*b1]
            return rebuild(*[cx * a + cy * b for a, b in zip(ox, oy)])
        differ = [i for i, (a, b) in enumerate(zip(ox, oy)) if a.sym.node is not b.sym.node]
        if len(differ) != 1:
            return None
        i = differ[0]
        return rebuild(*ox[:i], cx * ox[i] + cy * oy[i], *ox[i + 1:])

    def _scaled_atom(self, x: Array):
        """``(c, what linear_atom kept of the atom)`` for ``x`` a scalar ``c`` times a linear
        atom, else None."""
        node = x.sym.node
        factors, coeff = ((node, number(1)),), 1
        if type(node) is Product:
            factors, coeff = node.factors, node.coeff
        atoms = [b for b, e in factors if type(b) is Symbol and b.name in self.linear and
                 type(e) is Number and e.value == 1]
        if len(atoms) != 1:
            return None
        rest = [(b, e) for b, e in factors if b is not atoms[0]]
        if any(self.true_shape(b) or self.true_shape(e) for b, e in rest):
            return None
        return Sym(multiply(rest, coeff)), self.linear[atoms[0].name]

    def expanded(self, x: Array) -> Array:
        """``x`` with its products distributed over its sums, where that prints shorter
        (``s*t*(a/s + b/t)`` is ``a*t + b*s``)."""
        node = _expanded(x.sym.node)
        if node is x.sym.node or len(text(node)) >= len(text(x.sym.node)):
            return x
        return Array(node, x.shape, x.flat)

    def reduce(self, kind: str, x, axis):
        """``sum``, ``prod``, ``max``, ``min`` of ``x`` (over ``axis``, None: all)."""
        if kind != "add":
            name = {"mul": "prod", "max": "max", "min": "min"}[kind]
            arg = self.text(self.full(x))
            shape = () if axis is None else x.shape[:axis] + x.shape[axis + 1:]
            return self.atom(f"{name}({arg}{'' if axis is None else f', axis={axis}'})", shape)
        return self.sum(x, axis)

    def sum(self, x: Array, axis) -> Array:
        """``sum(x)`` (over ``axis``), scalar factors outside; of a sum (or a product with a
        sum), also term by term, kept where it prints shorter (the adjoint of softmax's shift
        cancels to 0 that way)."""
        if axis is not None and len(x.shape) == 1:
            axis = None  # (a vector's only axis: its whole sum)
        whole = self._sum(x, axis)
        terms = _terms(x.sym.node)
        if terms is None:
            return whole
        parts = [self._sum(Array(t, x.shape), axis) for t in terms]
        split = Array(add([(p.sym.node, 1) for p in parts]), whole.shape)
        return split if len(self.text(split)) < len(self.text(whole)) else whole

    def _sum(self, x: Array, axis) -> Array:
        shape = () if axis is None else x.shape[:axis] + x.shape[axis + 1:]
        c, rest = self.split(self.expanded(x))
        if rest is None:  # a scalar broadcast: each of its copies counted
            n = size(x.shape) if axis is None else x.shape[axis]
            return Array(c * Sym(number(n)), shape)
        t = self.true_shape(rest.sym.node)
        if axis is None and t != rest.shape:  # a broadcast array: each element repeated
            k = size(rest.shape) // size(t)
            s = self.atom(f"sum({self.text(rest)})", ())
            return Array(c * Sym(number(k)) * s.sym, ())
        rest = self.full(rest)
        arg = self.text(rest) + ("" if axis is None else f", axis={axis}")
        atom = self.linear_atom(f"sum({arg})", shape, ("sum", axis), (rest,),
                                lambda r: self.sum(r, axis))
        return Array(c * atom.sym, shape)

    def unbroadcast(self, g, shape):
        shape = tuple(shape)
        if g.shape == shape:
            return g
        while len(g.shape) > len(shape):
            g = self.sum(g, 0)
        for axis, n in enumerate(shape):
            if n == 1 and g.shape[axis] != 1:
                g = self.reshape(self.sum(g, axis), g.shape[:axis] + (1,) + g.shape[axis + 1:])
        return g

    def expand(self, g, axis, shape):
        """A reduction's adjoint on every element reduced: broadcasting does it, but for an
        axis other than the first, which needs the adjoint as a column."""
        shape = tuple(shape)
        if axis is None or axis == 0:
            return Array(g.sym, shape)
        if len(shape) == 2 and axis == 1:
            return Array(self.view(g, (shape[0], 1)).sym, shape)
        self.refuse("a reduction along an inner axis", f"axis={axis} of {shape_text(shape)}")

    def others_product(self, x, axis):
        if self.opaque:
            return self._weights("prod", x, axis)
        self.refuse("prod over an array", "its adjoint is the product of the other elements",
                    *_CODE_HAS_IT)

    def chain_weights(self, row, kind, x, axis):
        if self.opaque:
            return self._weights(kind, x, axis)
        self.refuse(f"{kind} over an array", "its adjoint picks the "
                    f"{'largest' if kind == 'max' else 'smallest'} element", *_CODE_HAS_IT)

    def _weights(self, kind: str, x: Array, axis) -> Array:
        """A reduction's local derivative as an atom of its own (no formula: for
        :func:`zero_adjoints`, which only asks which adjoints are 0)."""
        arg = self.text(self.full(x)) + ("" if axis is None else f", axis={axis}")
        return self.atom(f"{kind}_weights({arg})", x.shape)

    def take(self, x, positions, shape):
        """An indexing, a slice, a transpose or a row/column view, by the gather's positions."""
        shape = tuple(shape)
        own = x.shape
        if list(positions) == list(range(size(own))) and size(shape) == size(own):
            return self.reshape(x, shape)
        if len(own) == 2 and (shape, list(positions)) == transposed(own):
            return self.transpose(x)
        index = index_text(own, list(positions), shape)
        if index is not None:
            return self.atom(f"{self.operand(self.full(x))}[{index}]", shape)
        return self._literal([self._element(x, p) for p in positions], shape)

    def _element(self, x: Array, p: int) -> Array:
        if self.true_shape(x.sym.node) == ():
            return Array(x.sym, ())
        index = [p]
        for n in reversed(x.shape[1:]):
            index[0:1] = [index[0] // n, index[0] % n]
        return self.atom(f"{self.operand(self.full(x))}[{', '.join(map(str, index))}]", ())

    def _literal(self, items: list, shape: Shape) -> Array:
        """An array of ``shape`` of the scalar expressions ``items`` (row-major), as a literal;
        a common scalar factor outside (``-[0, 0, 1]``)."""
        if size(shape) > MAX_LITERAL:
            self.refuse("indexing", f"its adjoint would be a literal of {size(shape)} elements")
        c = None
        nonzero = {i.sym.node for i in items if not (type(i.sym.node) is Number
                                                      and i.sym.node.value == 0)}
        if len(nonzero) == 1:  # the others 0: -[0, 0, 1], g*[0, 1, 0] ([g, 0, 2] is not g*[...])
            c = next(iter(nonzero))
            if type(c) is Number and c.value == 1:
                c = None
        numbers = []
        for item in items:
            node = item.sym.node
            if c is not None:
                numbers.append("1" if node is c else text(node))
            else:
                numbers.append(text(node))
        rows: list = numbers
        for n in reversed(shape[1:]):
            rows = ["[" + ", ".join(rows[i:i + n]) + "]" for i in range(0, len(rows), n)]
        literal = self.linear_atom(
            "[" + ", ".join(rows) + "]", shape, ("literal", shape),
            [Array(1, ()) if i.sym.node is c else i for i in items],
            lambda *items: self._literal(list(items), shape), joint=True)
        return Array(literal.sym if c is None else Sym(c) * literal.sym, shape)

    def scatter(self, g, positions, taken, shape):
        """The adjoint of a :meth:`take`: the same recognitions (a reshape, a transpose), else
        a literal whose each element sums the adjoints of the positions that read it."""
        shape, taken = tuple(shape), tuple(taken)
        if list(positions) == list(range(size(shape))) and size(taken) == size(shape):
            return self.reshape(g, shape) if self.true_shape(g.sym.node) else \
                Array(g.sym, shape)
        if len(shape) == 2 and (taken, list(positions)) == transposed(shape):
            return self.transpose(g)
        if size(shape) > MAX_LITERAL:
            self.refuse("indexing", f"its adjoint would be a literal of {size(shape)} elements")
        g = Array(g.sym, taken)
        sums: list = [[] for _ in range(size(shape))]
        for i, p in enumerate(positions):
            sums[p].append(self._element(g, i) if taken else g)
        items = [Array(add([(a.sym.node, 1) for a in s]), ()) if s else Array(0, ())
                 for s in sums]
        return self._literal(items, shape)

    def stack(self, xs):
        shape = (len(xs), *xs[0].shape)
        literal = self.atom("[" + ", ".join(self.text(self.full(x)) for x in xs) + "]", shape)
        self.views[literal.sym.node.name] = tuple(xs)
        return literal

    def item(self, g, k: int) -> Array:
        """``g[k]`` along the first axis (the adjoint of a stack's item)."""
        node = g.sym.node
        shape = g.shape[1:]
        t = self.true_shape(node)
        if len(t) < len(g.shape):  # broadcast along the first axis
            return Array(g.sym, shape)
        if t[0] == 1 and g.shape[0] != 1:  # (1, n) stretched along it: every item is item 0
            k = 0
        if type(node) is Symbol and node.name in self.views:
            return self.views[node.name][k]
        return self.atom(f"{self.operand(g)}[{k}]", shape)


def _transposed(operand: str) -> str:
    """The text of an operand's transpose: ``X'``; a literal's, ``transpose([u])`` (the
    grammar's ``'`` follows a name, a call or parentheses)."""
    return f"transpose({operand})" if operand.startswith("[") else f"{operand}'"


def _terms(node) -> list | None:
    """The terms of a sum, or of a product with a sum factor distributed, or None."""
    if type(node) is Sum:
        return [multiply([(t, number(1))], c) for t, c in node.terms] + \
            ([number(node.const)] if node.const else [])
    if type(node) is Product:
        for i, (b, e) in enumerate(node.factors):
            if type(b) is Sum and type(e) is Number and e.value == 1:
                others = [*node.factors[:i], *node.factors[i + 1:]]
                return [multiply(others + [(t, number(1))], node.coeff * c)
                        for t, c in b.terms] + \
                    ([multiply(others, node.coeff * b.const)] if b.const else [])
    return None


def _expanded(node):
    """``node`` with every product over a sum distributed, term by term."""
    terms = _terms(node)
    return node if terms is None else add([(_expanded(t), 1) for t in terms])


def index_text(own: Shape, positions: list[int], shape: Shape) -> str | None:
    """The index ``i``, ``a:b``, ``i, j``, ``:, j`` ... whose gather reads ``positions`` from an
    array of ``own`` into ``shape``, or None."""
    axes = []
    picks = []
    strides = [size(own[k + 1:]) for k in range(len(own))]
    for k, n in enumerate(own):
        seen = sorted({(p // strides[k]) % n for p in positions})
        if seen != list(range(seen[0], seen[-1] + 1)):
            return None
        picks.append(seen)
    expected = [0]
    for k, seen in enumerate(picks):
        expected = [e + i * strides[k] for e in expected for i in seen]
    if expected != positions:
        return None
    out: list[int] = []
    for k, seen in enumerate(picks):
        n = own[k]
        if len(seen) == 1 and len(shape) < len(own) - k + len(out) and \
                len(out) + (len(own) - k - 1) >= len(shape):
            axes.append(str(seen[0]))
        elif len(seen) == n:
            axes.append(":")
            out.append(n)
        else:
            axes.append(f"{seen[0]}:{seen[-1] + 1}")
            out.append(len(seen))
    if tuple(out) != shape:
        return None
    while axes and axes[-1] == ":":
        axes.pop()
    return ", ".join(axes) if axes else None


class _Ops:
    """The base operations of :mod:`gradcli.engine.arrays` on array expressions, so that an
    array function's own lowering builds its expression (:data:`NAMED`)."""

    def __init__(self, m: SymbolicArrays):
        self.m = m

    def constant(self, v):
        return Array(v, ())

    def elementwise(self, prim, a, b, span, what):
        f = self.m.row(prim)
        return f(a) if b is None else f(a, b)

    def reduce(self, kind, x, axis, span, shift=False):
        return x if not x.shape else self.m.reduce(kind, x, axis)

    def matmul(self, a, b, span, what="@"):
        return self.m.matmul(a, b)

    def take(self, x, positions, shape, span):
        return self.m.take(x, positions, tuple(shape))

    def stack(self, items, span):
        return self.m.stack(items)


def _substitute(root, names: dict):
    """``root`` with each node whose serial is in ``names`` replaced by that node, rebuilt
    (canonically) above the replacements."""
    if not names:
        return root
    new: dict[int, object] = {}
    for n in reachable(root):
        s = n.serial
        if s in names:
            new[s] = names[s]
            continue
        t = type(n)
        if t is Sum:
            parts = [(new[k.serial], c) for k, c in n.terms]
            if any(p is not k for p, (k, _) in zip([p for p, _ in parts], n.terms)):
                new[s] = add(parts, n.const)
                continue
        elif t is Product:
            parts = [(new[b.serial], new[e.serial]) for b, e in n.factors]
            if any(p != f for p, f in zip(parts, n.factors)):
                new[s] = multiply(parts, n.coeff)
                continue
        elif t is Apply:
            args = tuple(new[a.serial] for a in n.args)
            if any(a is not b for a, b in zip(args, n.args)):
                new[s] = apply(n.name, args)
                continue
        new[s] = n
    return new[root.serial]


def _sweep(source: str, shapes: Mapping[str, Shape], wrt: list[str] | None,
           opaque: bool = False):
    graph = lower_for_gradient(source, shapes, "diff")
    names = wrt_names(graph.by_name(), wrt)
    m = SymbolicArrays(source)
    m.opaque = opaque
    kinds, params, spans = graph.kinds, graph.params, graph.spans

    def leaf(k):
        m.span, shape = spans[k], graph.shapes[k]
        if kinds[k] == "input":
            return m.input(params[k], shape)
        if shape:
            return m._literal([Array(v, ()) for v in flatten(params[k])], shape)
        return Array(params[k], ())

    def value(k, rule):
        m.span = spans[k]  # (a refusal's caret)
        return rule()

    def enter(k, g):
        m.span = spans[k]
        node = g.sym.node
        if type(node) is Number and node.value == 0:
            m.zero.add(k)  # (the shift of logsumexp and softmax: its adjoint cancels to 0)
            return False
        return True

    def add(a, total, c):  # two contributions as one atom where that prints shorter
        if total is None:
            return c
        merged, both = m.merged(total, c), total + c
        return both if merged is None or len(m.text(merged)) >= len(m.text(both)) else merged

    values, adjoint = run(graph, m, names, leaf, lambda values: Array(1, ()), value=value,
                          enter=enter, add=add)
    return graph, m, values, {name: adjoint[graph.inputs_by_name[name]] for name in names}


def flatten(value) -> list:
    """Nested lists' numbers, row-major."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
        else:
            out.append(v)
    return out


def _named(graph, m: SymbolicArrays, values: list) -> dict:
    """The array functions of :data:`NAMED` of each array value of the program, built by their
    own lowering: node serial -> the atom of their call (``softmax(z)``)."""
    ops = _Ops(m)
    out: dict = {}
    seen = set()
    for k, x in enumerate(values):
        if not graph.shapes[k] or len(graph.shapes[k]) != 1 or x.sym.node.serial in seen:
            continue
        seen.add(x.sym.node.serial)
        for name in NAMED:
            built = FUNCTIONS[name].lower(ops, [x], {}, graph.spans[k])
            atom = m.atom(f"{name}({m.text(m.full(x))})", built.shape)
            out.setdefault(built.sym.node.serial, atom.sym.node)
    return out




def _tidy_matmul(source: str, atoms) -> str:
    """``(A @ B)`` without its parentheses where it stands as a term of a sum, a whole
    argument or the whole text (``y - X @ w``, ``sum(X @ w)``), or such a term over a number
    (``X' @ v/3``): ``@`` binds as ``*``, tighter than ``+``, and left to right with ``/``."""
    for name in sorted(atoms, key=len, reverse=True):
        inner = re.escape(name)
        source = re.sub(r"(^|\(|\[|, | \+ | - )" + inner + r"(?=$|\)|\]|,| \+ | - |/\d)",
                        lambda mt: mt.group(1) + name[1:-1], source)
    return source


def array_derivatives(source: str, shapes: Mapping[str, Shape],
                      wrt: list[str] | None = None) -> dict[str, str]:
    """The gradient of ``source`` by each array (or scalar) input in ``wrt`` (None: all), for
    the array inputs' ``shapes`` (name -> shape), as text in gradcli's syntax that ``gradcli
    eval`` reads back with the same inputs. A construct without an array formula raises
    :class:`NoArrayFormula`."""
    with fresh_context():
        graph, m, values, grads = _sweep(source, shapes, wrt)
        named = _named(graph, m, values)
        out = {}
        for name, g in grads.items():
            shape = graph.shapes[graph.inputs_by_name[name]]
            if g is None or (type(g.sym.node) is Number and g.sym.node.value == 0):
                out[name] = f"zeros({', '.join(map(str, shape))})" if shape else "0"
                continue
            g = m.full(Array(_substitute(g.sym.node, named), shape))
            out[name] = text(g.sym.node)
        return {name: _tidy_matmul(t, m.products) for name, t in out.items()}


def zero_adjoints(source: str, shapes: Mapping[str, Shape]) -> set[int]:
    """The array nodes of ``source`` whose adjoint is 0 exactly (the max that shifts
    ``logsumexp`` and ``softmax``), for generated code; a construct without an array formula
    raises as :func:`array_derivatives` does, but for the weights of prod, max and min (generated
    code computes them as gradcli eval does), which stand as atoms."""
    with fresh_context():
        _, m, _, _ = _sweep(source, shapes, None, opaque=True)
        return set(m.zero)
