"""Array values at lowering: every array function written once, against six base operations.

The base operations are a realization's methods (as the rows of ``primitives.TABLE`` are
written against a namespace ``m``): ``elementwise(row, a, b)`` with NumPy's broadcasting,
``reduce(kind, x, axis)`` (kind ``add``, ``mul``, ``max``, ``min``), ``matmul(a, b)``,
``take(x, positions, shape)`` (a gather by row-major positions: indexing, slicing, transpose,
reshaping), ``stack(items)`` (literals) and ``constant(v)``. :data:`FUNCTIONS` (``sum``,
``softmax``, ``outer``, ...), ``@``, literals and indexing are written once here with those
operations, and every realization runs them:

- :class:`ScalarTape` (here): an array is a :class:`Tensor`, its shape and the ids of its
  elements, and each base operation emits scalar nodes (the rows of the table), so the scalar
  tape, every sweep, proof and check read it unchanged. It records each call (kind, shape,
  output ids: :attr:`gradcli.engine.graph.Graph.array_calls`). The cost: a node per element per
  operation (``X @ w`` with ``X`` of ``n × k`` is ``2nk - n`` nodes).
- :class:`gradcli.engine.arraynodes.ArrayTape`: one node per call, holding its shape, swept in
  NumPy float64 (``--float64``): memory proportional to the arrays' sizes.

Shapes follow NumPy: elementwise operations broadcast (trailing axes aligned, an axis of 1
stretched), ``@`` is matrix–vector, vector–matrix, matrix–matrix or the inner product of two
vectors; a mismatch, an index or axis out of range or a ragged literal is a :class:`ShapeError`
with the caret under the operation. The shapes are checked here, once, for every realization.
"""

from __future__ import annotations

from itertools import product as _cartesian

from ..errors import InputError, NameLookupError, ShapeError, Span
from ..language.ast import Keyword, Num, Slice, Unary
from .primitives import TABLE

Shape = tuple[int, ...]

_ADD, _SUB, _MUL, _DIV = TABLE["add"], TABLE["sub"], TABLE["mul"], TABLE["div"]
_EXP, _LOG, _SQRT, _ABS = TABLE["exp"], TABLE["log"], TABLE["sqrt"], TABLE["abs"]
# the row a reduction chains, by kind
REDUCTIONS = {"add": TABLE["add"], "mul": TABLE["mul"], "max": TABLE["max"],
              "min": TABLE["min"]}


class Tensor:
    """An array value under lowering: ``shape`` and the element ids, row-major."""

    __slots__ = ("shape", "ids")

    def __init__(self, shape: Shape, ids: list[int]):
        self.shape, self.ids = shape, ids

    def __repr__(self) -> str:
        return f"Tensor({self.shape}, {self.ids})"


def shape_of(value) -> Shape:
    """The shape of a lowered value: ``()`` for a scalar's id (an int), else its ``shape``."""
    return () if value.__class__ is int else value.shape


def shape_text(shape: Shape) -> str:
    """``(3,)``, ``(2, 3)``, as NumPy writes them; ``()`` is ``a scalar``."""
    if not shape:
        return "a scalar"
    return f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"


def check_compiled_shapes(compiled: dict, given: dict) -> None:
    """An InputError where a graph compiled for the shapes ``compiled`` (name -> shape) is
    evaluated at a point whose value of the same name has another shape (``given``)."""
    for name, shape in compiled.items():
        if given.get(name, shape) != shape:
            was = f"of shape {shape_text(shape)}" if shape else "as a scalar"
            raise InputError(f"the graph was compiled with {name} {was}, and the point gives "
                             f"{shape_text(given[name])}", names=(name,), option="at",
                             hint="compile it again with the new shapes")


def element_names(name: str, shape: Shape) -> list[str]:
    """The names of an array input's elements, row-major: ``w[0]``, ``X[1,2]``."""
    if not shape:
        return [f"{name}[]"]
    # one axis at a time, each name the concatenation of two strings made once: a tenth of a
    # microsecond a name, where joining each index's digits took four times that
    names = [f"{name}["]
    for axis, n in enumerate(shape):
        end = "]" if axis == len(shape) - 1 else ","
        parts = [f"{i}{end}" for i in range(n)]
        names = [head + part for head in names for part in parts]
    return names


def element_entries(name: str, values, shape: Shape, read=None):
    """``(element name, number)`` of each element of an array held whole (a NumPy array, or
    its numbers row-major), as a point or a result names them (``w[0]``); ``read`` applied
    to each number, where given."""
    items = values.ravel().tolist() if hasattr(values, "ravel") else values
    return zip(element_names(name, shape), items if read is None else map(read, items))


def size(shape: Shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# -- shapes: checked once, for every realization ---------------------------------------------

def broadcast_shape(a: Shape, b: Shape, span: Span, what: str) -> Shape:
    """NumPy's broadcast of two shapes, or the ShapeError naming both (``what``: the operation)."""
    if a == b:
        return a
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            raise ShapeError(f"{what}: the shapes {shape_text(a)} and {shape_text(b)} do not "
                             f"broadcast (axis {-i}: {x} against {y})", span,
                             label="shapes do not match", shapes=(a, b),
                             hint="NumPy's rule: trailing axes must be equal or 1")
        out.append(x if y == 1 else y)
    return tuple(reversed(out))


def matmul_shape(sa: Shape, sb: Shape, span: Span, what: str = "@") -> Shape:
    """The shape of ``a @ b`` (NumPy's matmul on vectors and matrices), or the ShapeError."""
    if not sa or not sb or len(sa) > 2 or len(sb) > 2:
        raise ShapeError(f"{what} multiplies vectors and matrices, and got {shape_text(sa)} "
                         f"and {shape_text(sb)}", span, shapes=(sa, sb),
                         label="not a vector or matrix",
                         hint="scale by a scalar with *" if not sa or not sb else None)
    if sa[-1] != sb[0]:
        raise ShapeError(f"{what}: the shapes {shape_text(sa)} and {shape_text(sb)} do not fit "
                         f"({sa[-1]} columns against {sb[0]} rows)", span, shapes=(sa, sb),
                         label="inner sizes differ",
                         hint="the last axis of the left operand must equal the first of the "
                              "right one")
    return sa[:-1] + sb[1:]  # the inner axis summed away


def reduced_shape(shape: Shape, axis: int | None) -> Shape:
    """The shape left by a reduction over ``axis`` (None: every axis)."""
    return () if axis is None else shape[:axis] + shape[axis + 1:]


def reduction_groups(shape: Shape, axis: int | None) -> list[list[int]]:
    """For each element of the reduction's result (row-major), the row-major positions of the
    elements reduced into it, in order along the axis."""
    n = size(shape)
    if axis is None:
        return [list(range(n))]
    length = shape[axis]
    inner = size(shape[axis + 1:])
    outer = n // (length * inner)
    return [list(range(o * length * inner + i, (o + 1) * length * inner + i, inner))
            for o in range(outer) for i in range(inner)]


def _row_major(shape: Shape) -> list[int]:
    """Each axis's stride in a row-major array of ``shape``."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]


def stretch_positions(own: Shape, shape: Shape) -> list[int]:
    """The positions in an array of shape ``own`` of each element of it broadcast to ``shape``
    (already checked to fit), row-major."""
    own = (1,) * (len(shape) - len(own)) + own
    strides = [0 if d == 1 else s for d, s in zip(own, _row_major(own))]
    return [sum(i * s for i, s in zip(index, strides))
            for index in _cartesian(*(range(n) for n in shape))]


# -- the scalar realization: every base operation as nodes of the scalar tape -------------------

def _ids(value) -> list[int]:
    return [value] if value.__class__ is int else value.ids


def _wrap(shape: Shape, ids: list[int]):
    """A Tensor, or the one id of a scalar."""
    return Tensor(shape, ids) if shape else ids[0]


def _chain(emit, prim, ids: list[int], span: Span) -> int:
    """``ids[0] prim ids[1] prim ...``, left to right."""
    acc = ids[0]
    for x in ids[1:]:
        acc = emit(prim, acc, x, span)
    return acc


class ScalarTape:
    """The base operations on the scalar tape: an array is a :class:`Tensor` of the builder's
    node ids, each operation a node per element (``builder.emit``, which folds constants).
    ``calls`` records each call: ``(kind, shape, ids, span)``; ``operands`` beside it, what it
    was called on: ``(parameter, [each argument's ids], [their shapes])`` (the parameter: an elementwise row's
    name, a reduction's ``(kind, axis)``, else None), which the array trace reads."""

    every_input_array = False  # scalar inputs stay the builder's own

    def __init__(self, builder):
        self.builder = builder
        self.emit = builder.emit
        self.calls: list[tuple[str, Shape, list[int], Span]] = []
        self.operands: list[tuple[object, list[list[int]], list[Shape]]] = []
        self.shifts: list[int] = []  # the ids of a shift's max nodes (Graph.shifts)

    def _record(self, kind: str, value, span: Span, args=(), parameter=None):
        self.calls.append((kind, shape_of(value), _ids(value), span))
        self.operands.append((parameter, [_ids(a) for a in args], [shape_of(a) for a in args]))
        return value

    def constant(self, v: float) -> int:
        return self.builder.constant(v)

    def input(self, name: str, shape: Shape, span: Span) -> Tensor:
        """The array input ``name``: a scalar input per element, all read at ``span``."""
        builder, ids = self.builder, []
        for element in element_names(name, shape):
            ids.append(builder._new(0, None, -1, -1, span))
            builder.input_ids[element] = ids[-1]
            builder.input_spans.append(span)
        return Tensor(shape, ids)

    def elementwise(self, prim, a, b, span: Span, what: str):
        """``prim`` element by element (``b`` None for a one-argument row), broadcasting."""
        emit = self.emit
        if b is None:
            if a.__class__ is int:
                return emit(prim, a, -1, span)
            out = Tensor(a.shape, [emit(prim, x, -1, span) for x in a.ids])
        else:
            if a.__class__ is int and b.__class__ is int:
                return emit(prim, a, b, span)
            shape = broadcast_shape(shape_of(a), shape_of(b), span, what)
            out = _wrap(shape, [emit(prim, x, y, span)
                                for x, y in zip(self._stretched(a, shape),
                                                self._stretched(b, shape))])
        return self._record("elementwise", out, span, (a,) if b is None else (a, b), prim.name)

    @staticmethod
    def _stretched(value, shape: Shape) -> list[int]:
        own, ids = shape_of(value), _ids(value)
        if own == shape:
            return ids
        return [ids[p] for p in stretch_positions(own, shape)]

    def reduce(self, kind: str, x, axis: int | None, span: Span, shift: bool = False):
        ids, prim, emit = _ids(x), REDUCTIONS[kind], self.emit
        start = self.builder.count
        out = [_chain(emit, prim, [ids[p] for p in group], span)
               for group in reduction_groups(shape_of(x), axis)]
        if shift:  # every node made here is one of the shift's max nodes
            self.shifts.extend(range(start, self.builder.count))
        return self._record("reduce", _wrap(reduced_shape(shape_of(x), axis), out), span, (x,),
                            (kind, axis))

    def matmul(self, a, b, span: Span, what: str = "@"):
        sa, sb = shape_of(a), shape_of(b)
        shape = matmul_shape(sa, sb, span, what)
        k, emit = sa[-1], self.emit
        rows = [a.ids[i * k:(i + 1) * k] for i in range(sa[0])] if len(sa) == 2 else [a.ids]
        cols = [b.ids[j::sb[1]] for j in range(sb[1])] if len(sb) == 2 else [b.ids]
        ids = [_chain(emit, _ADD, [emit(_MUL, x, y, span) for x, y in zip(r, c)], span)
               for r in rows for c in cols]
        return self._record("matmul", _wrap(shape, ids), span, (a, b))

    def take(self, x, positions: list[int], shape: Shape, span: Span):
        ids = _ids(x)
        return self._record("take", _wrap(shape, [ids[p] for p in positions]), span, (x,))

    def stack(self, items: list, span: Span):
        ids: list[int] = []
        for item in items:
            ids.extend(_ids(item))
        return self._record("stack", Tensor((len(items), *shape_of(items[0])), ids), span, items)


# -- the array functions, once, over any realization ``ops`` ----------------------------------

def axis_of(option, shape: Shape, what: str):
    """The axis an ``axis=`` option names (negative counts from the end), checked against
    ``shape``; None when not given."""
    if option is None:
        return None
    axis, span = option
    if not -len(shape) <= axis < len(shape):
        valid = (f"valid: {-len(shape)} to {len(shape) - 1}" if shape
                 else "a scalar has no axis")
        raise ShapeError(f"axis {axis} is out of range for {what}'s argument, of shape "
                         f"{shape_text(shape)}",
                         span, shapes=(shape,), label=valid)
    return axis % len(shape)


def _keep(ops, reduced, axis, full: Shape, span: Span):
    """``reduced`` with its reduced axis back as an axis of 1 (NumPy's keepdims), so that it
    broadcasts against the array reduced (``full``)."""
    if axis is None or not reduced_shape(full, axis):
        return reduced  # a scalar broadcasts as it is
    kept = full[:axis] + (1,) + full[axis + 1:]
    return ops.take(reduced, list(range(size(shape_of(reduced)))), kept, span)


def _reduction(kind: str):
    def lower(ops, args, options, span):
        x = args[0]
        return ops.reduce(kind, x, axis_of(options.get("axis"), shape_of(x), kind_name[kind]),
                          span)
    kind_name = {"add": "sum", "mul": "prod", "max": "max", "min": "min"}
    return lower


def _extreme(kind: str):
    """``max``/``min``: of one array, the reduction (``axis=`` too); of two or more values,
    element by element with the row's broadcasting, left to right."""
    reduction, prim = _reduction(kind), REDUCTIONS[kind]

    def lower(ops, args, options, span):
        if len(args) == 1:
            return reduction(ops, args, options, span)
        if "axis" in options:
            raise ShapeError(f"{kind}(a, b, ...) is element by element: axis= is for the "
                             f"{kind} of one array", options["axis"][1], shapes=(),
                             label="an option of the reduction")
        acc = args[0]
        for x in args[1:]:
            acc = ops.elementwise(prim, acc, x, span, kind)
        return acc
    return lower


def _mean(ops, args, options, span):
    x = args[0]
    axis = axis_of(options.get("axis"), shape_of(x), "mean")
    n = size(shape_of(x)) if axis is None else shape_of(x)[axis]
    s = ops.reduce("add", x, axis, span)
    return s if n == 1 else ops.elementwise(_DIV, s, ops.constant(float(n)), span, "mean")


def _dot(ops, args, options, span):
    a, b = args
    if not shape_of(a) or not shape_of(b):
        return ops.elementwise(_MUL, a, b, span, "dot")
    return ops.matmul(a, b, span, "dot")


def _norm(ops, args, options, span):
    x, p = args[0], options.get("ord", (2, None))
    if p[0] not in (1, 2):
        raise ShapeError(f"norm(x, {p[0]}): the norms are the 2-norm, norm(x), and the 1-norm, "
                         "norm(x, 1)", p[1], label="1 or 2", shapes=())
    axis = axis_of(options.get("axis"), shape_of(x), "norm")
    if p[0] == 1:
        return ops.reduce("add", ops.elementwise(_ABS, x, None, span, "norm"), axis, span)
    squares = ops.elementwise(_MUL, x, x, span, "norm")
    return ops.elementwise(_SQRT, ops.reduce("add", squares, axis, span), None, span, "norm")


def _logsumexp(ops, args, options, span, keep: bool = False):
    """log Σ exp(x), shifted by the largest element m: m + log Σ exp(x - m), which neither
    overflows nor underflows to log 0. The shift is exact mathematically, so the gradient is
    softmax(x) (the path through m carries 1 - Σ softmax = 0)."""
    x = args[0]
    axis = axis_of(options.get("axis"), shape_of(x), "logsumexp")
    m = ops.reduce("max", x, axis, span, shift=True)
    shifted = ops.elementwise(_SUB, x, _keep(ops, m, axis, shape_of(x), span), span,
                              "logsumexp")
    total = ops.reduce("add", ops.elementwise(_EXP, shifted, None, span, "logsumexp"), axis,
                       span)
    out = ops.elementwise(_ADD, m, ops.elementwise(_LOG, total, None, span, "logsumexp"), span,
                          "logsumexp")
    return _keep(ops, out, axis, shape_of(x), span) if keep else out


def _softmax(ops, args, options, span):
    """exp(x - m) / Σ exp(x - m), m the largest element (no overflow; exact mathematically for
    any m, so m's kinks never matter: a shift)."""
    x = args[0]
    axis = axis_of(options.get("axis"), shape_of(x), "softmax")
    m = _keep(ops, ops.reduce("max", x, axis, span, shift=True), axis, shape_of(x), span)
    exps = ops.elementwise(_EXP, ops.elementwise(_SUB, x, m, span, "softmax"), None, span,
                           "softmax")
    total = _keep(ops, ops.reduce("add", exps, axis, span), axis, shape_of(x), span)
    return ops.elementwise(_DIV, exps, total, span, "softmax")


def _log_softmax(ops, args, options, span):
    """x - logsumexp(x), the log of softmax without its rounding to 0."""
    return ops.elementwise(_SUB, args[0], _logsumexp(ops, args, options, span, keep=True),
                           span, "log_softmax")


def transposed(shape: Shape) -> tuple[Shape, list[int]]:
    """The shape and gather positions of the transpose of an array of ``shape`` (a vector's is
    itself, as NumPy's)."""
    if len(shape) < 2:
        return shape, list(range(size(shape)))
    n, m = shape
    return (m, n), [i * m + j for j in range(m) for i in range(n)]


def _transpose(ops, args, options, span):
    x = args[0]
    if len(shape_of(x)) < 2:
        return x
    shape, positions = transposed(shape_of(x))
    return ops.take(x, positions, shape, span)


def _outer(ops, args, options, span):
    u, v = args
    for value in (u, v):
        if len(shape_of(value)) != 1:
            raise ShapeError(f"outer(u, v) takes two vectors, and got {shape_text(shape_of(u))} "
                             f"and {shape_text(shape_of(v))}", span,
                             shapes=(shape_of(u), shape_of(v)), label="not two vectors")
    n = shape_of(u)[0]
    column = ops.take(u, list(range(n)), (n, 1), span)
    return ops.elementwise(_MUL, column, v, span, "outer")


def _filled(value: float | None):
    def lower(ops, args, options, span):
        shape = tuple(options["size"][0])
        n = size(shape)
        numbers = [value if value is not None else float(i) for i in range(n)]
        return _constant_array(ops, numbers, shape, span)
    return lower


def _constant_array(ops, numbers: list[float], shape: Shape, span: Span):
    """An array of constants (row-major ``numbers``) as nested stacks."""
    items = [ops.constant(v) for v in numbers]
    for n in reversed(shape):
        items = [ops.stack(items[i:i + n], span) for i in range(0, len(items), n)]
    return items[0]


class ArrayFunction:
    """An array function of the catalogue: its lowering ``(ops, args, options, span)``, how
    many values it takes, the integer constants it reads at lowering (``options``: positional
    ones by name, and keyword ones) and what it gives."""

    __slots__ = ("lower", "least", "most", "statics", "keywords", "syntax", "gives")

    def __init__(self, lower, least, most, syntax, gives, statics=(), keywords=()):
        self.lower, self.least, self.most = lower, least, most
        self.syntax, self.gives = syntax, gives
        # positional integer constants after the values, by name (norm(x, 1): "ord")
        self.statics: tuple[str, ...] = statics
        self.keywords: tuple[str, ...] = keywords


_AXIS = ("axis",)
# name -> its function; `gradcli functions` lists them
FUNCTIONS: dict[str, ArrayFunction] = {
    "sum": ArrayFunction(_reduction("add"), 1, 1, "sum(x)",
                         "the sum of every element; sum(x, axis=k) along an axis", keywords=_AXIS),
    "mean": ArrayFunction(_mean, 1, 1, "mean(x)",
                          "the mean of every element; mean(x, axis=k) along an axis", keywords=_AXIS),
    "prod": ArrayFunction(_reduction("mul"), 1, 1, "prod(x)",
                          "the product of every element; prod(x, axis=k) along an axis", keywords=_AXIS),
    "max": ArrayFunction(_extreme("max"), 1, 64, "max(x)",
                         "the largest element; max(x, axis=k) along an axis; max(a, b, c) of "
                         "several values, element by element. At a tie, max(a, b)'s convention: each gets 1/2, left to "
                         "right", keywords=_AXIS),
    "min": ArrayFunction(_extreme("min"), 1, 64, "min(x)",
                         "the smallest element; min(x, axis=k) along an axis; min(a, b, c) of "
                         "several values, element by element. At a tie, min(a, b)'s convention", keywords=_AXIS),
    "dot": ArrayFunction(_dot, 2, 2, "dot(u, v)",
                         "the inner product of two vectors (matrices: as @)"),
    "norm": ArrayFunction(_norm, 1, 1, "norm(x), norm(x, 1)",
                          "the 2-norm sqrt(sum(x^2)), or the 1-norm sum(abs(x)); axis=k along "
                          "an axis",
                          statics=("ord",), keywords=_AXIS),
    "logsumexp": ArrayFunction(_logsumexp, 1, 1, "logsumexp(x)",
                               "log(sum(exp(x))), shifted by max(x): no overflow; axis=k "
                               "along an axis",
                               keywords=_AXIS),
    "softmax": ArrayFunction(_softmax, 1, 1, "softmax(x)",
                             "exp(x) / sum(exp(x)) (shifted), an array of the shape of x; "
                             "axis=k along an axis",
                             keywords=_AXIS),
    "log_softmax": ArrayFunction(_log_softmax, 1, 1, "log_softmax(x)",
                                 "x - logsumexp(x), the log of softmax; axis=k along an axis", keywords=_AXIS),
    "outer": ArrayFunction(_outer, 2, 2, "outer(u, v)", "the matrix u[i]*v[j]"),
    "transpose": ArrayFunction(_transpose, 1, 1, "transpose(X), X'",
                               "the transpose of a matrix (of a vector: itself)"),
    "zeros": ArrayFunction(_filled(0.0), 0, 0, "zeros(n), zeros(n, m)",
                           "an array of zeros", statics=("size",)),
    "ones": ArrayFunction(_filled(1.0), 0, 0, "ones(n), ones(n, m)", "an array of ones",
                          statics=("size",)),
    "arange": ArrayFunction(_filled(None), 0, 0, "arange(n)", "[0, 1, ..., n-1]",
                            statics=("size",)),
}
_SIZES = {"zeros": 2, "ones": 2, "arange": 1}  # how many sizes each takes


def call_arguments(name: str, args: tuple, span: Span) -> tuple[list, dict]:
    """A call of the array function ``name``: the argument expressions to lower, and its
    options read from the source (name -> (integer, span)); the wrong number of arguments, an
    unknown option or an option that is not an integer constant is an error naming it."""
    function = FUNCTIONS[name]
    values, options = [], {}
    positional = [a for a in args if type(a) is not Keyword]
    for arg in args:
        if type(arg) is Keyword:
            if arg.name not in function.keywords:
                known = ", ".join(f"{k}=" for k in function.keywords) or "none"
                raise NameLookupError(f"{name} has no option {arg.name}=", arg.span,
                                      hint=f"its options: {known}")
            options[arg.name] = _constant_option(arg.value, arg.name)
    if name in _SIZES:
        if not 1 <= len(positional) <= _SIZES[name]:
            raise NameLookupError(f"{name} takes {'a size' if _SIZES[name] == 1 else '1 or 2 sizes'}"
                                  f", got {len(positional)}", span,
                                  hint=f"write {function.syntax}")
        sizes = [_constant_option(a, "size") for a in positional]
        for n, where in sizes:
            if n < 1:
                raise ShapeError(f"{name}: a size is a positive integer, and got {n}", where,
                                 label="not a positive size", shapes=())
        options["size"] = ([n for n, _ in sizes], span)
        return values, options
    statics = function.statics
    most = function.most + len(statics)
    if not function.least <= len(positional) <= most:
        want = (f"{function.least}" if function.least == most else
                f"{function.least} to {most}" if function.most < 64 else
                f"{function.least} or more")
        plural = "argument" if want == "1" else "arguments"
        raise NameLookupError(f"{name} takes {want} {plural}, got {len(positional)}", span,
                              hint=f"write {function.syntax}")
    values = positional[:function.most]
    for static, arg in zip(statics, positional[function.most:]):
        options[static] = _constant_option(arg, static)
    return values, options


def _constant_option(expr, what: str) -> tuple[int, Span]:
    i = _integer(expr)
    if i is None:
        raise ShapeError(f"{what} is an integer constant such as 0 or -1", expr.span,
                         label="not an integer constant", shapes=())
    return i, expr.span


def matmul(ops, a, b, span: Span, what: str = "@"):
    """``a @ b``."""
    return ops.matmul(a, b, span, what)


def literal(ops, items: list, spans: list[Span], span: Span):
    """``[a, b, ...]``: the items stacked on a new first axis; items of different shapes are a
    ragged literal."""
    first = shape_of(items[0])
    for item, where in zip(items[1:], spans[1:]):
        if shape_of(item) != first:
            raise ShapeError(f"ragged array literal: this item is {shape_text(shape_of(item))} "
                             f"and the first is {shape_text(first)}", where,
                             shapes=(first, shape_of(item)), label="a different shape",
                             hint="every row of a matrix has the same length")
    return ops.stack(items, span)


def _integer(expr) -> int | None:
    """The integer an index expression spells (``2``, ``-1``), or None."""
    sign = 1
    if type(expr) is Unary and type(expr.operand) is Num:
        sign, expr = (-1 if expr.op == "-" else 1), expr.operand
    if type(expr) is Num and expr.value == int(expr.value):
        return sign * int(expr.value)
    return None


def _end(expr, n: int, axis: int, what: str, shape: Shape) -> int | None:
    """A slice's end as a position in ``range(n + 1)`` (negative counts from the end)."""
    if expr is None:
        return None
    i = _integer(expr)
    if i is None:
        raise ShapeError("a slice's ends are integer constants such as 1 or -1", expr.span,
                         label="not an integer constant", shapes=(shape,))
    if not -n <= i <= n:
        raise ShapeError(f"slice end {i} is out of range for axis {axis} of {what}, of shape "
                         f"{shape_text(shape)}", expr.span, shapes=(shape,),
                         label=f"valid: {-n} to {n}")
    return i % n if i < 0 else i


def index(ops, value, indices, span: Span, what: str):
    """``value[i, j, ...]`` with integer constants (negative counts from the end, as NumPy's)
    and slices ``a:b`` (either end left out: that end of the axis): an element, a row, a column
    ``A[:, 0]`` or a part ``x[1:3]``, by a :meth:`take`."""
    shape = shape_of(value)
    if not shape:
        raise ShapeError(f"{what} is a scalar, which cannot be indexed", span, shapes=((),),
                         label="not an array",
                         hint="an array value is written [1, 2, 3] (and given to an input as "
                              "one)")
    if len(indices) > len(shape):
        raise ShapeError(f"{len(indices)} indices for {what}, of shape {shape_text(shape)}",
                         span, shapes=(shape,), label="too many indices")
    picks: list[range] = []
    out: list[int] = []
    for axis, expr in enumerate(indices):
        n = shape[axis]
        if type(expr) is Slice:
            start = _end(expr.start, n, axis, what, shape)
            stop = _end(expr.stop, n, axis, what, shape)
            start, stop = (0 if start is None else start), (n if stop is None else stop)
            if start >= stop:
                raise ShapeError(f"the slice {start}:{stop} of axis {axis} of {what} is empty",
                                 expr.span, shapes=(shape,), label="no elements",
                                 hint="an array has at least one element")
            picks.append(range(start, stop))
            out.append(stop - start)
            continue
        i = _integer(expr)
        if i is None:
            # the tape is built before any value is known: an index chosen by a value is a
            # weighted sum, which has a gradient too
            raise ShapeError("an index is an integer constant such as 0 or -1", expr.span,
                             label="not an integer constant", shapes=(shape,),
                             hint="to pick an element by an input's value, give a one-hot "
                                  "vector input instead: dot(x, onehot), onehot = [0, 0, 1]"
                             if len(shape) == 1 else None)
        if not -n <= i < n:
            raise ShapeError(f"index {i} is out of range for axis {axis} of {what}, of shape "
                             f"{shape_text(shape)}", expr.span, shapes=(shape,),
                             label=f"valid: {-n} to {n - 1}")
        picks.append(range(i % n, i % n + 1))
    rest = shape[len(indices):]
    picks += [range(n) for n in rest]
    strides = _row_major(shape)
    positions = [sum(i * s for i, s in zip(index, strides)) for index in _cartesian(*picks)]
    return ops.take(value, positions, tuple(out) + rest, span)


# -- array inputs put back together, for the views and the API -------------------------------

def grouped(entries: dict, arrays: dict[str, tuple]) -> list[tuple[str, tuple, list]]:
    """``entries`` (input or element name -> number, in input order) as ``(name, shape,
    values)``: a scalar input with the shape ``()`` and one value, an array's elements gathered
    under its name, row-major, where its first element stood. An array of which only some
    elements are there (``wrt=["w[2]"]``) stays those elements, each a scalar entry."""
    whole = getattr(entries, "groups", None)  # arrays held whole (arraynodes.Elements): their
    if whole is not None:  # groups at once, without naming each element
        return whole()
    # only the arrays whose first element is there (naming every element of a large array
    # that is not, X beside a gradient by w, costs seconds)
    arrays = {name: shape for name, shape in arrays.items()
              if element_names(name, (1,) * len(shape))[0] in entries}
    owner = {element: name for name, shape in arrays.items()
             for element in element_names(name, shape)}
    present: dict[str, int] = {}
    for key in entries:
        if key in owner:
            present[owner[key]] = present.get(owner[key], 0) + 1
    owner = {element: name for element, name in owner.items()
             if present.get(name) == size(arrays[name])}
    out: list[tuple[str, tuple, list]] = []
    where: dict[str, list] = {}
    for key, value in entries.items():
        name = owner.get(key)
        if name is None:
            out.append((key, (), [value]))
        elif name in where:
            where[name].append(value)
        else:
            where[name] = [value]
            out.append((name, arrays[name], where[name]))
    return out


def nested(values: list, shape: tuple):
    """Row-major ``values`` as nested lists of ``shape`` (a scalar for ``()``)."""
    if not shape:
        return values[0]
    for n in reversed(shape[1:]):
        values = [values[i:i + n] for i in range(0, len(values), n)]
    return values


def nest_entries(entries: dict | None, arrays: dict[str, tuple]) -> dict | None:
    """``entries`` (element name -> number) keyed by input name, an array's elements as one
    nested list of its shape (the JSON's and :attr:`gradcli.api.Result.shaped_gradient`'s)."""
    if entries is None:
        return None
    whole = getattr(entries, "nested", None)  # a view of whole arrays (arraynodes.Elements):
    if whole is not None:  # their lists at once, without naming each element
        return whole()
    return {name: nested(values, shape) for name, shape, values in grouped(entries, arrays)}
