"""Array values at lowering: vectors and matrices as arrays of the tape's scalar nodes.

An array is a :class:`Tensor`: its shape and the ids of its elements in row-major order. Every
array operation is lowered here to scalar operations on those ids (the rows of
``primitives.TABLE``), so the tape stays scalar and every sweep, proof and check reads it
unchanged. The cost is memory: a node per element per operation (``X @ w`` with ``X`` of
``n × k`` is ``2nk - n`` nodes), where array nodes would hold one (docs/arrays.md).

Shapes follow NumPy: elementwise operations broadcast (trailing axes aligned, an axis of 1
stretched), ``@`` is matrix–vector, vector–matrix, matrix–matrix or the inner product of two
vectors; a mismatch, an index out of range or a ragged literal is a :class:`ShapeError` with
the caret under the operation.
"""

from __future__ import annotations

from itertools import product as _cartesian
from typing import Callable

from ..errors import NameLookupError, ShapeError, Span
from ..language.ast import Num, Unary
from .primitives import TABLE

Shape = tuple[int, ...]

_ADD, _MUL, _DIV = TABLE["add"], TABLE["mul"], TABLE["div"]
_EXP, _LOG, _SQRT = TABLE["exp"], TABLE["log"], TABLE["sqrt"]


class Tensor:
    """An array value under lowering: ``shape`` and the element ids, row-major."""

    __slots__ = ("shape", "ids")

    def __init__(self, shape: Shape, ids: list[int]):
        self.shape, self.ids = shape, ids

    def __repr__(self) -> str:
        return f"Tensor({self.shape}, {self.ids})"


def shape_of(value) -> Shape:
    """The shape of a lowered value: ``()`` for a scalar's id."""
    return value.shape if value.__class__ is Tensor else ()


def shape_text(shape: Shape) -> str:
    """``(3,)``, ``(2, 3)``, as NumPy writes them; ``()`` is ``a scalar``."""
    if not shape:
        return "a scalar"
    return f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"


def element_names(name: str, shape: Shape) -> list[str]:
    """The names of an array input's elements, row-major: ``w[0]``, ``X[1,2]``."""
    return [f"{name}[{','.join(map(str, index))}]"
            for index in _cartesian(*(range(n) for n in shape))]


def size(shape: Shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _ids(value) -> list[int]:
    return value.ids if value.__class__ is Tensor else [value]


def _wrap(shape: Shape, ids: list[int]):
    """A Tensor, or the one id of a scalar."""
    return Tensor(shape, ids) if shape else ids[0]


# -- broadcasting -----------------------------------------------------------------------------

def broadcast_shape(a: Shape, b: Shape, span: Span, what: str) -> Shape:
    """NumPy's broadcast of two shapes, or the ShapeError naming both (``what``: the operation)."""
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


def _stretched(value, shape: Shape) -> list[int]:
    """The ids of ``value`` broadcast to ``shape`` (already checked to fit), row-major."""
    own, ids = shape_of(value), _ids(value)
    if own == shape:
        return ids
    own = (1,) * (len(shape) - len(own)) + own
    strides, step = [], 1
    for d in reversed(own):
        strides.append(step if d != 1 else 0)
        step *= d
    strides.reverse()
    return [ids[sum(i * s for i, s in zip(index, strides))]
            for index in _cartesian(*(range(n) for n in shape))]


def elementwise(emit: Callable, prim, a, b, span: Span, op_text: str):
    """``prim`` applied element by element (``b`` is -1 for a one-argument row), broadcasting."""
    if b == -1 or b is None:
        return _wrap(shape_of(a), [emit(prim, x, -1, span) for x in _ids(a)])
    shape = broadcast_shape(shape_of(a), shape_of(b), span, op_text)
    return _wrap(shape, [emit(prim, x, y, span)
                         for x, y in zip(_stretched(a, shape), _stretched(b, shape))])


# -- reductions and products ------------------------------------------------------------------

def _chain(emit, prim, ids: list[int], span: Span) -> int:
    """``ids[0] prim ids[1] prim ...``, left to right."""
    acc = ids[0]
    for x in ids[1:]:
        acc = emit(prim, acc, x, span)
    return acc


def total(emit, value, span: Span) -> int:
    """``sum``: the sum of every element."""
    return _chain(emit, _ADD, _ids(value), span)


def _inner(emit, xs: list[int], ys: list[int], span: Span) -> int:
    return _chain(emit, _ADD, [emit(_MUL, x, y, span) for x, y in zip(xs, ys)], span)


def matmul(emit, a, b, span: Span, what: str = "@"):
    """``a @ b`` (NumPy's matmul on vectors and matrices)."""
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb or len(sa) > 2 or len(sb) > 2:
        raise ShapeError(f"{what} multiplies vectors and matrices, and got {shape_text(sa)} "
                         f"and {shape_text(sb)}", span, shapes=(sa, sb),
                         label="not a vector or matrix",
                         hint="scale by a scalar with *" if not sa or not sb else None)
    inner_a, inner_b = sa[-1], sb[0]
    if inner_a != inner_b:
        raise ShapeError(f"{what}: the shapes {shape_text(sa)} and {shape_text(sb)} do not fit "
                         f"({inner_a} columns against {inner_b} rows)", span, shapes=(sa, sb),
                         label="inner sizes differ",
                         hint="the last axis of the left operand must equal the first of the "
                              "right one")
    rows = [a.ids[i * inner_a:(i + 1) * inner_a] for i in range(sa[0])] if len(sa) == 2 \
        else [a.ids]
    cols = [b.ids[j::sb[1]] for j in range(sb[1])] if len(sb) == 2 else [b.ids]
    ids = [_inner(emit, r, c, span) for r in rows for c in cols]
    shape = sa[:-1] + sb[1:]  # the inner axis summed away
    return _wrap(shape, ids)


def _dot(emit, constant, args, span):
    a, b = args
    if not shape_of(a) or not shape_of(b):
        return elementwise(emit, _MUL, a, b, span, "dot")
    return matmul(emit, a, b, span, "dot")


def _sum(emit, constant, args, span):
    return total(emit, args[0], span)


def _mean(emit, constant, args, span):
    n = len(_ids(args[0]))
    s = total(emit, args[0], span)
    return s if n == 1 else emit(_DIV, s, constant(float(n)), span)


def _prod(emit, constant, args, span):
    return _chain(emit, _MUL, _ids(args[0]), span)


def _norm(emit, constant, args, span):
    ids = _ids(args[0])
    return emit(_SQRT, _inner(emit, ids, ids, span), -1, span)


def _logsumexp(emit, constant, args, span):
    return emit(_LOG, _chain(emit, _ADD, [emit(_EXP, x, -1, span) for x in _ids(args[0])],
                             span), -1, span)


def _softmax(emit, constant, args, span):
    value = args[0]
    exps = [emit(_EXP, x, -1, span) for x in _ids(value)]
    s = _chain(emit, _ADD, exps, span)
    return _wrap(shape_of(value), [emit(_DIV, x, s, span) for x in exps])


# name -> (number of arguments, lowering(emit, constant, args, span), what it gives)
FUNCTIONS: dict[str, tuple[int, Callable, str]] = {
    "sum": (1, _sum, "the sum of every element"),
    "mean": (1, _mean, "the mean of every element"),
    "prod": (1, _prod, "the product of every element"),
    "dot": (2, _dot, "the inner product of two vectors (matrices: as @)"),
    "norm": (1, _norm, "the 2-norm, sqrt(sum(x^2))"),
    "logsumexp": (1, _logsumexp, "log(sum(exp(x))), without a shift: overflows past 709"),
    "softmax": (1, _softmax, "exp(x) / sum(exp(x)), an array of the shape of x"),
}


def check_arguments(name: str, count: int, span: Span) -> None:
    """An array function called with the wrong number of arguments is a NameLookupError."""
    want = FUNCTIONS[name][0]
    if count != want:
        plural = "argument" if want == 1 else "arguments"
        raise NameLookupError(f"{name} takes {want} {plural}, got {count}", span,
                              hint=f"write {name}({', '.join('ab'[:want])})")


# -- literals and indexing --------------------------------------------------------------------

def literal(items: list, spans: list[Span], span: Span):
    """``[a, b, ...]``: a Tensor of the items stacked on a new first axis; items of different
    shapes are a ragged literal."""
    first = shape_of(items[0])
    for item, where in zip(items[1:], spans[1:]):
        if shape_of(item) != first:
            raise ShapeError(f"ragged array literal: this item is {shape_text(shape_of(item))} "
                             f"and the first is {shape_text(first)}", where,
                             shapes=(first, shape_of(item)), label="a different shape",
                             hint="every row of a matrix has the same length")
    ids: list[int] = []
    for item in items:
        ids.extend(_ids(item))
    return Tensor((len(items), *first), ids)


def _integer(expr) -> int | None:
    """The integer an index expression spells (``2``, ``-1``), or None."""
    sign = 1
    if type(expr) is Unary and type(expr.operand) is Num:
        sign, expr = (-1 if expr.op == "-" else 1), expr.operand
    if type(expr) is Num and expr.value == int(expr.value):
        return sign * int(expr.value)
    return None


def index(value, indices, span: Span, what: str):
    """``value[i, j, ...]`` with integer constants (negative counts from the end, as NumPy):
    an element, or a row when fewer indices than axes are given."""
    shape = shape_of(value)
    if not shape:
        raise ShapeError(f"{what} is a scalar, which cannot be indexed", span, shapes=((),),
                         label="not an array",
                         hint="an array value is written [1, 2, 3] (and given to an input as "
                              "one)")
    if len(indices) > len(shape):
        raise ShapeError(f"{len(indices)} indices for {what}, of shape {shape_text(shape)}",
                         span, shapes=(shape,), label="too many indices")
    flat, ids = 0, value.ids
    for axis, expr in enumerate(indices):
        i = _integer(expr)
        if i is None:
            raise ShapeError("an index is an integer constant such as 0 or -1", expr.span,
                             label="not an integer constant", shapes=(shape,))
        n = shape[axis]
        if not -n <= i < n:
            raise ShapeError(f"index {i} is out of range for axis {axis} of {what}, of shape "
                             f"{shape_text(shape)}", expr.span, shapes=(shape,),
                             label=f"valid: {-n} to {n - 1}")
        flat = flat * n + (i % n)
    rest = shape[len(indices):]
    step = size(rest)
    return _wrap(rest, ids[flat * step:(flat + 1) * step])


# -- array inputs put back together, for the views and the API -------------------------------

def grouped(entries: dict, arrays: dict[str, tuple]) -> list[tuple[str, tuple, list]]:
    """``entries`` (input or element name -> number, in input order) as ``(name, shape,
    values)``: a scalar input with the shape ``()`` and one value, an array's elements gathered
    under its name, row-major, where its first element stood. An array of which only some
    elements are there (``wrt=["w[2]"]``) stays those elements, each a scalar entry."""
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
    return {name: nested(values, shape) for name, shape, values in grouped(entries, arrays)}
