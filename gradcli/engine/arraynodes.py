"""Array nodes: the base operations of :mod:`gradcli.engine.arrays` realized one node per call,
swept in NumPy float64 (``--float64``).

:class:`ArrayTape` is the realization the lowering runs for them (``graph.lower(..., tape=
ArrayTape)``): each base operation's call is one node holding its shape, so memory is
proportional to the arrays' sizes, not to elements × operations as on the scalar tape. The
array functions (``sum``, ``softmax``, ``@``, indexing, ...) are the same code as on the scalar
tape: only their base operations differ.

:func:`sweep` runs the forward sweep in float64 (each node's :data:`FORWARD` rule) and the
reverse sweep with the vector-Jacobian rules of :data:`VJP`, one per base operation, written
over a namespace ``m`` as the table's rows are (a symbolic or code-printing namespace can read
them): an elementwise node's rule is its row's own partials on NumPy arrays (the batch engine's
namespace) followed by ``m.unbroadcast`` (the adjoint summed over the broadcast axes, as
autograd's ``unbroadcast``); a reduction's broadcasts the adjoint back (max and min: the weights
of their rows' chain, the scalar tape's tie convention); matmul's are products with transposes;
take's a scatter-add; stack's a split.

Where a value or a gradient is not finite, :func:`evaluate` gives None: the scalar tape then
computes the same program and words the error for the element where it happens.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace

from ..errors import GradcliError, InputError
from ..language.ast import Assign
from ..limits import check_elements
from .arrays import (REDUCTIONS, broadcast_shape, check_compiled_shapes, element_entries,
                     element_names, matmul_shape, reduced_shape, shape_of, shape_text)

Shape = tuple[int, ...]


class Node:
    """An array node's handle under lowering: its index on the tape and its shape."""

    __slots__ = ("index", "shape")

    def __init__(self, index: int, shape: Shape):
        self.index, self.shape = index, shape

    def __repr__(self) -> str:
        return f"Node({self.index}, {self.shape})"


@dataclass
class ArrayGraph:
    """A program lowered to array nodes. Node k: ``kinds[k]`` (``input``, ``constant`` or a base
    operation), its argument nodes ``args[k]``, the operation's parameters ``params[k]`` (a row,
    ``(kind, axis)``, ``(positions, shape)``; an input's name, a constant's value), ``shapes[k]``
    and ``spans[k]``. Nodes are in creation order: arguments before their users."""

    source: str
    kinds: list[str]
    args: list[tuple[int, ...]]
    params: list
    shapes: list[Shape]
    spans: list
    inputs_by_name: dict[str, int]  # input name -> its node, in order of first read
    output: int
    names: dict[str, int] = field(default_factory=dict)  # assigned name -> its node
    output_names: list[str] = field(default_factory=lambda: ["f"])
    output_arrays: dict = field(default_factory=dict)
    # what each constant node is exactly (0.1 typed: 1/10, log(2) folded: log of 2): node ->
    # its index in ``constant_table``, or for a literal of constants a list of them
    exact: dict = field(default_factory=dict)
    # the program's constants as the scalar Graph keeps them: (floats, index -> typed text or
    # ("pi",), folds), read by exact_numbers
    constant_table: tuple = ((), {}, ())

    def exact_numbers(self, m, number) -> list:
        """The constants of ``constant_table`` as the numbers they are exactly, in ``m``
        (:func:`gradcli.engine.graph.exact_numbers`)."""
        from .graph import exact_numbers
        return exact_numbers(*self.constant_table, m, number)

    @property
    def arrays(self) -> dict[str, Shape]:
        """The array inputs' shapes (the scalar inputs left out), as :class:`Graph`'s."""
        return {name: self.shapes[k] for name, k in self.inputs_by_name.items() if self.shapes[k]}

    @property
    def inputs(self) -> list[str]:
        """Every input's elements' names, in order (``w[0]``, ``w[1]``, ``b``)."""
        names: list[str] = []
        for name, k in self.inputs_by_name.items():
            names += element_names(name, self.shapes[k]) if self.shapes[k] else [name]
        return names

    @property
    def n_outputs(self) -> int:
        return 1

    def by_name(self):
        """The inputs as ``wrt_names`` and codegen's order read a :class:`Graph`'s, an array by
        its name (``w``), not by its elements'."""
        return SimpleNamespace(inputs=list(self.inputs_by_name), arrays={})

    def __len__(self) -> int:
        return len(self.kinds)


class ArrayTape:
    """The base operations as array nodes (see the module's docstring). Scalar constants stay
    the builder's (an int id, folded there); every input is a node, a scalar one of shape ()."""

    every_input_array = True

    def __init__(self, builder):
        self.builder = builder
        self.kinds: list[str] = []
        self.args: list[tuple[int, ...]] = []
        self.params: list = []
        self.shapes: list[Shape] = []
        self.spans: list = []
        self.inputs: dict[str, int] = {}
        self.constants: dict[int, int] = {}  # the builder's constant id -> its node
        self.literals: dict[int, list] = {}  # a literal's node -> its constants' ids
        self.calls: list = []  # the scalar tape's record; each node is its own here

    def _node(self, kind: str, args: tuple, params, shape: Shape, span) -> Node:
        self.kinds.append(kind)
        self.args.append(args)
        self.params.append(params)
        self.shapes.append(shape)
        self.spans.append(span)
        return Node(len(self.kinds) - 1, shape)

    def _index(self, value) -> int:
        """The node of a value: a builder's constant (an int) becomes a constant node, once."""
        if value.__class__ is not int:
            return value.index
        k = self.constants.get(value)
        if k is None:
            k = self.constants[value] = self._node(
                "constant", (), self.builder.const_values[value], (), None).index
        return k

    def constant(self, v: float) -> int:
        return self.builder.constant(v)

    def input(self, name: str, shape: Shape, span) -> Node:
        node = self._node("input", (), name, shape, span)
        self.inputs[name] = node.index
        return node

    def elementwise(self, prim, a, b, span, what: str):
        if a.__class__ is int and (b is None or b.__class__ is int):
            return self.builder.emit(prim, a, -1 if b is None else b, span)  # folded
        if b is None:
            return self._node("elementwise", (self._index(a),), prim, shape_of(a), span)
        shape = broadcast_shape(shape_of(a), shape_of(b), span, what)
        return self._node("elementwise", (self._index(a), self._index(b)), prim, shape, span)

    def reduce(self, kind: str, x, axis, span, shift: bool = False):
        if not shape_of(x):
            return x  # the reduction of one number is itself
        return self._node("reduce", (self._index(x),), (kind, axis),
                          reduced_shape(shape_of(x), axis), span)

    def matmul(self, a, b, span, what: str = "@"):
        shape = matmul_shape(shape_of(a), shape_of(b), span, what)
        return self._node("matmul", (self._index(a), self._index(b)), None, shape, span)

    def take(self, x, positions: list[int], shape: Shape, span):
        if not shape and not shape_of(x):
            return x
        return self._node("take", (self._index(x),), (positions, shape), shape, span)

    def stack(self, items: list, span):
        shape = (len(items), *shape_of(items[0]))
        if all(item.__class__ is int for item in items):  # a literal of constants: one node
            values = [self.builder.const_values[item] for item in items]
            node = self._node("constant", (), values, shape, span)
            self.literals[node.index] = list(items)
            return node
        return self._node("stack", tuple(self._index(item) for item in items), None, shape,
                          span)

    def graph(self, source: str, outputs: list) -> ArrayGraph | None:
        """The array graph of a program with one output (None for several: the scalar tape's
        Jacobian computes those)."""
        if len(outputs) != 1:
            return None
        output = self._index(outputs[0])
        names = {name: value.index for name, value in self.builder.env.items()
                 if value.__class__ is Node}
        b = self.builder
        index = {tid: i for i, tid in enumerate(b.const_values)}  # ids in order: a fold's last
        table = (list(b.const_values.values()),
                 {index[tid]: recipe for tid, recipe in b.recipes.items()},
                 [(index[t], name, index[a0], index[a1] if a1 >= 0 else -1)
                  for t, name, a0, a1 in b.folds])
        exact = {k: index[tid] for tid, k in self.constants.items()}
        for k, items in self.literals.items():
            exact[k] = [index[item] for item in items]
        return ArrayGraph(source, self.kinds, self.args, self.params, self.shapes, self.spans,
                          self.inputs, output, names, exact=exact, constant_table=table)


def lower(source: str, shapes: Mapping[str, Shape]) -> ArrayGraph | None:
    """``source`` lowered to array nodes, the array inputs of ``shapes``; None for a program
    the scalar tape handles alone (several outputs). A mistake is the same error as on the
    scalar tape (the same lowering)."""
    from .graph import _Builder, parse_source
    builder = _Builder(source, shapes, ArrayTape)
    result, bare = -1, []
    for stmt in parse_source(source).statements:
        result = builder.statement(stmt)
        if type(stmt) is not Assign:
            bare.append(result)
    return builder.tape.graph(source, bare or [result])


def lower_for_gradient(source: str, shapes: Mapping[str, Shape], command: str) -> ArrayGraph:
    """``source`` lowered to array nodes for ``command`` (``diff``, ``codegen``), which writes
    the gradient of one number: several outputs, or an array output, are an InputError."""
    graph = lower(source, shapes)
    if graph is None:
        raise InputError(f"{command} of a program with several outputs and array inputs is not "
                         "there yet", hint="one output (a number) per program")
    if graph.shapes[graph.output]:
        raise InputError(f"{command} of an array value, of shape "
                         f"{shape_text(graph.shapes[graph.output])}: its gradient is a Jacobian",
                         hint="reduce it to a number, e.g. sum(...), or use gradcli eval for "
                              "its Jacobian")
    return graph


# -- the rules, over a namespace m ---------------------------------------------------------------

# Forward: a node's value from its parameters and its arguments' values.
FORWARD = {
    "elementwise": lambda m, row, *xs: m.row(row)(*xs),
    "reduce": lambda m, p, x: m.reduce(p[0], x, p[1]),
    "matmul": lambda m, p, a, b: m.matmul(a, b),
    "take": lambda m, p, x: m.take(x, p[0], p[1]),
    "stack": lambda m, p, *xs: m.stack(xs),
}


def _elementwise_vjp(m, g, row, xs, ans, k):
    """The row's own partial by argument k, times the adjoint, summed over broadcast axes."""
    local = row.partials[k](m.rows, *xs, ans)
    return m.unbroadcast(m.times(g, local), m.shape(xs[k]))


def _reduce_vjp(m, g, p, xs, ans, k):
    kind, axis = p
    x = xs[0]
    g = m.expand(g, axis, m.shape(x))  # the adjoint back on every element reduced
    if kind == "add":
        return g
    if kind == "mul":
        return g * m.others_product(x, axis)
    return g * m.chain_weights(REDUCTIONS[kind], kind, x, axis)


def _matmul_vjp(m, g, p, xs, ans, k):
    a, b = xs
    a2, b2 = m.as_matrix(a, True), m.as_matrix(b, False)
    g2 = m.reshape(g, (m.shape(a2)[0], m.shape(b2)[1]))
    if k == 0:
        return m.reshape(m.matmul(g2, m.transpose(b2)), m.shape(a))
    return m.reshape(m.matmul(m.transpose(a2), g2), m.shape(b))


# Reverse: the adjoint of argument k from the node's adjoint g, parameters, arguments' values
# and value.
VJP = {
    "elementwise": _elementwise_vjp,
    "reduce": _reduce_vjp,
    "matmul": _matmul_vjp,
    "take": lambda m, g, p, xs, ans, k: m.scatter(g, p[0], p[1], m.shape(xs[0])),
    "stack": lambda m, g, p, xs, ans, k: m.item(g, k),
}


class NumpyArrays:
    """The namespace of the rules on NumPy float64 arrays: the rows' primals and partials on
    arrays (``rows``: the batch engine's namespace, :data:`gradcli.engine.batch.NUMPY`), and the
    array operations the base operations' rules are written with."""

    def __init__(self):
        import numpy as np
        from .batch import NUMPY, _times
        self.np, self.rows = np, NUMPY
        # g * local, with no pass over the array where local is the rule's constant 1 or -1
        self.times = _times
        self._positions: dict[int, object] = {}  # id(list) -> its index array, per sweep

    def row(self, row):
        return getattr(self.rows, row.name)

    # how the sweep reads constants and checks results: the hooks another number type changes
    def constant(self, value, recipe, shape: Shape):
        """A constant node's value (``recipe``: what it is exactly, which floats ignore)."""
        return self.np.asarray(value, dtype=self.np.float64) if shape else value

    def finite(self, x) -> bool:
        return finite(x)

    def seed(self, value: float):
        """The output's adjoint to start the reverse sweep from."""
        return self.np.float64(value)

    def zeros(self, shape: Shape):
        """An input's adjoint where nothing flows into it."""
        return self.np.zeros(shape)

    def number(self, x):
        """The output's value as the sweep gives it."""
        return float(x)

    def shape(self, x) -> Shape:
        return self.np.shape(x)

    def reshape(self, x, shape):
        return self.np.reshape(x, shape)

    def transpose(self, x):
        return self.np.transpose(x)

    def matmul(self, a, b):
        return self.np.matmul(a, b)

    def as_matrix(self, x, left: bool):
        """A vector as a row (the left operand of @) or a column (the right one)."""
        if self.np.ndim(x) == 2:
            return x
        return self.np.reshape(x, (1, -1) if left else (-1, 1))

    def reduce(self, kind: str, x, axis):
        np = self.np
        f = {"add": np.sum, "mul": np.prod, "max": np.max, "min": np.min}[kind]
        return f(x, axis=axis)

    def _index(self, positions):
        hit = self._positions.get(id(positions))
        if hit is None or hit[0] is not positions:
            hit = self._positions[id(positions)] = (positions, self.np.asarray(positions,
                                                                               dtype=self.np.intp))
        return hit[1]

    def take(self, x, positions, shape):
        return self.np.reshape(self.np.ravel(x)[self._index(positions)], shape)

    def scatter(self, g, positions, taken, shape):
        """The adjoint of a gather of ``positions`` (of shape ``taken``) from an array of
        ``shape``: each element's adjoints summed where it was taken."""
        np = self.np
        size = int(np.prod(shape)) if shape else 1
        flat = np.bincount(self._index(positions), weights=np.ravel(np.broadcast_to(g, taken)),
                           minlength=size)
        return np.reshape(flat, shape)

    def item(self, g, k: int):
        """``g[k]``: item k along the first axis (a stack's adjoint)."""
        return g[k]

    def stack(self, xs):
        np = self.np
        return np.stack([np.asarray(x, dtype=np.float64) for x in xs])

    def unbroadcast(self, g, shape):
        """``g`` summed over the axes ``shape`` was broadcast along (autograd's unbroadcast)."""
        np = self.np
        g = np.asarray(g)
        if g.shape == tuple(shape):
            return g
        while g.ndim > len(shape):
            g = np.asarray(g.sum(axis=0))  # (an object array's sum of one axis is its item)
        for axis, n in enumerate(shape):
            if n == 1 and g.shape[axis] != 1:
                g = g.sum(axis=axis, keepdims=True)
        return np.broadcast_to(g, shape) if g.shape != tuple(shape) else g

    def expand(self, g, axis, shape):
        """A reduction's adjoint (reduced over ``axis``, None: all) on every element of
        ``shape``."""
        np = self.np
        if axis is not None:
            g = np.expand_dims(g, axis)
        return np.broadcast_to(g, shape)

    def others_product(self, x, axis):
        """For each element, the product of the others along ``axis`` (no division: a zero
        element is no trouble)."""
        np = self.np
        moved = np.moveaxis(x, -1 if axis is None else axis, -1) if axis is not None \
            else np.ravel(x)
        ones = np.ones(moved.shape[:-1] + (1,))
        before = np.concatenate([ones, np.cumprod(moved, axis=-1)[..., :-1]], axis=-1)
        after = np.concatenate([np.cumprod(moved[..., ::-1], axis=-1)[..., ::-1][..., 1:],
                                ones], axis=-1)
        out = before * after
        return np.reshape(out, np.shape(x)) if axis is None else np.moveaxis(out, -1, axis)

    def extreme(self, kind: str):
        """The elementwise max or min (a ufunc: its ``accumulate`` is the running one)."""
        return self.np.maximum if kind == "max" else self.np.minimum

    def chain_weights(self, row, kind: str, x, axis):
        """For max and min: each element's share of the result, as the scalar tape's chain
        ``row(row(x0, x1), x2) ...`` gives it, from the row's own partials (at a tie, its
        convention)."""
        np = self.np
        moved = np.ravel(x) if axis is None else np.moveaxis(x, axis, -1)
        if moved.shape[-1] == 1:
            weights = np.ones(moved.shape)
        else:
            running = self.extreme(kind).accumulate(moved, axis=-1)
            prev, cur, ans = running[..., :-1], moved[..., 1:], running[..., 1:]
            keep = np.broadcast_to(row.partials[0](self.rows, prev, cur, ans), cur.shape)
            new = np.broadcast_to(row.partials[1](self.rows, prev, cur, ans), cur.shape)
            # through[t]: the share of step t's result that reaches the end, Π of later keeps
            suffix = np.cumprod(keep[..., ::-1], axis=-1)[..., ::-1]
            ones = np.ones(keep.shape[:-1] + (1,))
            through = np.concatenate([suffix[..., 1:], ones], axis=-1)
            weights = np.concatenate([suffix[..., :1], new * through], axis=-1)
        return np.reshape(weights, np.shape(x)) if axis is None else \
            np.moveaxis(weights, -1, axis)


def active_nodes(graph: ArrayGraph, wrt) -> bytearray:
    """1 for each node that depends on an input named in ``wrt``: the others pass no adjoint."""
    kinds, args = graph.kinds, graph.args
    active = bytearray(len(kinds))
    for name in wrt:
        active[graph.inputs_by_name[name]] = 1
    for k, kind in enumerate(kinds):
        if kind not in LEAVES and any(active[a] for a in args[k]):
            active[k] = 1
    return active


LEAVES = ("input", "constant")  # the nodes without a rule


def _as_it_is(k: int, rule):
    return rule()


def _sum(a: int, total, c):
    return c if total is None else total + c


def run(graph: ArrayGraph, m, wrt, leaf, start, *, value=_as_it_is, enter=None, add=_sum):
    """Both sweeps of ``graph`` over the namespace ``m``, for every mode (float64, symbolic,
    generated code): ``(values, adjoints)``, one per node (an adjoint: None where none flows,
    and those of the operations dropped once read), or ``(values, None)`` where ``start``
    gives no adjoint. The forward sweep runs each node's :data:`FORWARD` rule; the reverse
    sweep, from the output's adjoint, each node's :data:`VJP` rules into the arguments that
    depend on ``wrt``. The hooks are what a mode does its own way:

    - ``leaf(k)``: the value of input or constant node k;
    - ``value(k, rule)``: operation k's value, ``rule()`` being its forward rule's;
    - ``start(values)``: the output's adjoint, or None for no reverse sweep;
    - ``enter(k, g)``: False leaves node k's rules out (its adjoint ``g`` is 0 exactly);
    - ``add(a, total, c)``: node a's adjoint ``total`` (None: none yet) with ``c`` added.
    """
    kinds, args, params = graph.kinds, graph.args, graph.params
    values: list = [None] * len(kinds)
    for k, kind in enumerate(kinds):
        if kind in LEAVES:
            values[k] = leaf(k)
        else:
            values[k] = value(k, lambda: FORWARD[kind](m, params[k],
                                                       *[values[a] for a in args[k]]))
    seed = start(values)
    if seed is None:
        return values, None
    active = active_nodes(graph, wrt)
    adjoint: list = [None] * len(kinds)
    adjoint[graph.output] = seed
    for k in range(graph.output, -1, -1):
        g = adjoint[k]
        if g is None or kinds[k] in LEAVES or (enter is not None and not enter(k, g)):
            continue
        adjoint[k] = None  # (read once: its memory is free for the arguments')
        xs = [values[a] for a in args[k]]
        for i, a in enumerate(args[k]):
            if active[a]:
                adjoint[a] = add(a, adjoint[a], VJP[kinds[k]](m, g, params[k], xs, values[k], i))
    return values, adjoint


def sweep(graph: ArrayGraph, point: Mapping[str, object], wrt: list[str], seed: float = 1.0,
          m: NumpyArrays | None = None):
    """The output's value and its gradient by the inputs named in ``wrt`` (name -> array of the
    input's shape), in float64 (or the number type of ``m``, :mod:`gradcli.engine.arbarrays`'s
    balls); None where a value or a gradient is not finite."""
    m = m or NumpyArrays()
    np = m.np
    kinds, params, shapes = graph.kinds, graph.params, graph.shapes

    def leaf(k):
        if kinds[k] == "input":
            return point[params[k]]
        return m.constant(params[k], graph.exact.get(k), shapes[k])

    def start(values):
        return m.seed(seed) if m.finite(values[graph.output]) else None

    with np.errstate(all="ignore"):
        values, adjoint = run(graph, m, wrt, leaf, start)
        if adjoint is None:
            return None
        gradient = {}
        for name in wrt:
            k = graph.inputs_by_name[name]
            g = adjoint[k]  # None: nothing flows into it, exactly 0
            g = m.zeros(shapes[k]) if g is None else m.expand(g, None, shapes[k])
            if not m.finite(g):
                return None
            gradient[name] = g
    return m.number(values[graph.output]), gradient


class Elements(Mapping):
    """Arrays by name seen as their elements' numbers (``w[0]`` -> float), made when read: a
    result's inputs and gradient, without a dict entry per element up front. ``read`` makes
    an element's entry from the array's item (default: a float; None: the item as it is, a
    proven number of an object array)."""

    def __init__(self, arrays: Mapping[str, object], read=float):
        self._arrays, self._read = arrays, read
        self._made: dict | None = None

    def _items(self) -> dict:
        if self._made is None:
            made = {}
            for name, value in self._arrays.items():
                shape = getattr(value, "shape", ())
                if shape:
                    made.update(element_entries(name, value, shape, self._read))
                else:
                    made[name] = self._one(value)
            self._made = made
        return self._made

    def _one(self, x):
        """The entry of one item (a scalar's value, or an array's element)."""
        return _item(x) if self._read is None else self._read(x)

    def nested(self, each=None) -> dict:
        """Each array by name as nested lists of its items (a scalar as the item), ``each(x)``
        of each where given: what :func:`gradcli.engine.arrays.nest_entries` makes of the
        elements, made from the arrays, with no entry per element."""
        out = {}
        for name, value in self._arrays.items():
            if not getattr(value, "shape", ()):
                value = self._one(value)
                out[name] = value if each is None else each(value)
            elif each is None and self._read is float and value.dtype.kind == "f":
                out[name] = value.tolist()  # floats already: NumPy nests them at C speed
            else:
                f = _composed(each, self._read)
                out[name] = value.tolist() if f is None else _frompyfunc(f)(value).tolist()
        return out

    def groups(self) -> list[tuple[str, tuple, list]]:
        """What :func:`gradcli.engine.arrays.grouped` makes of the elements: ``(name, shape,
        row-major entries)`` per array (a scalar with the shape ``()``), from the arrays."""
        read = self._read
        out = []
        for name, value in self._arrays.items():
            shape = getattr(value, "shape", ())
            items = value.ravel().tolist() if shape else [_item(value)]
            out.append((name, shape, items if read is None else list(map(read, items))))
        return out

    def below(self, limit) -> list[tuple[str, object]]:
        """``(element name, entry)`` of the entries less than ``limit``, in order, naming only
        those."""
        import numpy as np
        out = []
        for name, value in self._arrays.items():
            shape = getattr(value, "shape", ())
            if not shape:
                x = self._one(value)
                out += [(name, x)] * (x < limit)
                continue
            for i in np.flatnonzero(value.ravel() < limit).tolist():
                index = np.unravel_index(i, shape)
                out.append((f"{name}[{','.join(map(str, index))}]", self._one(value.ravel()[i])))
        return out

    def flat(self) -> list:
        """Every element's entry, array after array, row-major, without its name."""
        return [x for _, _, items in self.groups() for x in items]

    def mapped(self, each) -> "Elements":
        """The same arrays with ``each`` applied to every item (an array of the results)."""
        f = _composed(each, self._read)
        return Elements({name: _frompyfunc(f)(value) if getattr(value, "shape", ()) else
                         f(_item(value)) for name, value in self._arrays.items()}, None)

    def __repr__(self) -> str:
        return repr(self._items())  # as the dict it stands for

    def __getitem__(self, key):
        return self._items()[key]

    def __iter__(self):
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())


def _item(value):
    """A 0-d array's item (a number as it is)."""
    return value.item() if getattr(value, "ndim", None) == 0 else value


def _composed(each, read):
    if each is None or read is None:
        return each if read is None else read
    return lambda x: each(read(x))


def _frompyfunc(f):
    import numpy as np
    return np.frompyfunc(f, 1, 1)


def objects(items, shape: Shape):
    """Row-major ``items`` (balls, proven numbers) as an object array of ``shape`` (0-d for a
    scalar's ``()``): NumPy keeps each item as it is, a float subclass too."""
    import numpy as np
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def finite(array) -> bool:
    """Whether every element of a float64 array is finite: its sum is finite (a NaN or an
    infinity makes the sum NaN or infinite) in one pass that makes no array of flags, or, where
    the sum overflows, each element is."""
    import numpy as np
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(array)
    return bool(np.isfinite(total)) or bool(np.all(np.isfinite(array)))


def evaluate(source: str | ArrayGraph, at: Mapping[str, object], wrt=None, seed: float = 1.0):
    """``(graph, value, gradient by name, point as arrays)`` of ``source`` (a program's text,
    or its graph from :func:`lower`, lowered once for many points) at ``at`` (name -> number,
    list or NumPy array) on array nodes in float64; None where the scalar tape should compute
    it instead: several outputs, an input without a value, a ``wrt`` that names single
    elements, a value or gradient that is not finite (its error is worded there). A graph
    evaluated at a point whose arrays have other shapes than it was lowered for is an
    InputError."""
    import numpy as np
    point, shapes = {}, {}
    for name, value in at.items():
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return None  # a ragged or non-numeric value: the scalar tape's reading words it
        if array.ndim and not array.size:
            return None  # an empty array: the point's reading says so
        if array.ndim:
            check_elements(array.size, f"the value of {name}", name)
        point[name] = array if array.ndim else float(array)
        shapes[name] = array.shape
        if not (finite(array) if array.ndim else math.isfinite(float(array))):
            return None
    if isinstance(source, ArrayGraph):
        graph = source
        check_compiled_shapes({name: graph.shapes[k] for name, k in
                               graph.inputs_by_name.items()}, shapes)
    else:
        try:
            graph = lower(source, {name: shape for name, shape in shapes.items() if shape})
        except GradcliError:
            return None  # the scalar tape's lowering says it with its context
    if graph is None or any(name not in point for name in graph.inputs_by_name):
        return None
    names = list(graph.inputs_by_name) if wrt is None else list(wrt)
    if any(name not in graph.inputs_by_name for name in names):
        return None
    if graph.shapes[graph.output]:
        return None  # an array's elements are outputs: the Jacobian
    found = sweep(graph, {name: point[name] for name in graph.inputs_by_name}, names, seed)
    if found is None:
        return None
    value, gradient = found
    return graph, value, gradient, {name: point[name] for name in graph.inputs_by_name}
