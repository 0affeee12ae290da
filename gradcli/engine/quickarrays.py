"""Certified array programs by the quick proof: the rules of :mod:`gradcli.engine.arraynodes`
(``FORWARD`` and ``VJP``, the ones ``--float64`` runs) over :class:`~gradcli.engine.bounds.
Bounded` arrays, so that the float64 sweep, forward and reverse, carries a proven bound on the
error of every number it computes.

:class:`BoundedArrays` is the namespace, as :class:`~gradcli.engine.arbarrays.ArbArrays` is for
balls: an array is a Bounded whose value and bound are NumPy arrays; a row's primal and
partials are the quick proof's own (:mod:`gradcli.engine.bounds`, which bounds NumPy columns
already), and the array operations' bounds (sums, ``@``, products, max and min, scatter) are
written there too. Moving elements (take, stack, transpose, reshape, broadcast) is exact: the
bound moves with them.

:func:`certify_arrays_quickly` runs it once and proves each number shown by the quick proof's
rule (:func:`~gradcli.engine.bounds.proven_texts`: the whole interval, and float64's result,
round to the digits shown), all at once. A number it cannot prove (a bound too wide: a
cancellation, an interval across a rounding boundary) is left to the balls
(:func:`~gradcli.engine.arbarrays.certify_arrays`), which prove those alone; a kink or a tie
an interval may reach, an input only the balls read, a value that is not finite leave the
whole program to them, as before.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..errors import GradcliError
from ..gcpause import gc_paused
from .arraynodes import ArrayGraph, NumpyArrays, sweep
from .bounds import (Bounded, Unbounded, bounded_columns, bounded_extreme, bounded_matmul,
                     bounded_others_product, bounded_prod, bounded_scatter, bounded_sum,
                     clear_of_kink, clear_of_ties, exact_bound, exact_input, full, proven_texts,
                     table_errors)
from .primitives import jumps
from .rounding import FLOAT64_DIGITS

Shape = tuple[int, ...]

def _each(x: Bounded, f) -> Bounded:
    """``f`` (a move of elements: reshape, transpose, an index) on the value and the bound."""
    return Bounded(f(x.v), f(full(x.e, x.v)) if not exact_bound(x.e) else 0.0)


class BoundedArrays(NumpyArrays):
    """The array nodes' namespace on Bounded arrays (see the module's docstring)."""

    def __init__(self, graph: ArrayGraph):
        super().__init__()
        self.rows = bounded_columns()  # (times: the float64 sweep's, exact for ±1 on Bounded too)
        self._graph, self._errors = graph, None
        self._magnitudes: dict[int, tuple] = {}  # id(array) -> (array, |array|), per sweep

    def row(self, row):
        f = getattr(self.rows, row.name)
        if row.kink is None:
            return f
        if jumps(row):  # floor, round, mod: the balls' and the scalar tape's (notes)
            raise Unbounded(f"{row.name}, a step function")

        def clear(*xs):
            clear_of_kink(*xs)
            return f(*xs)
        return clear

    def constant(self, value, where, shape: Shape):
        # a constant's double and its distance from what it is exactly (0.1: 1/10, log(2))
        if self._errors is None:
            self._errors = table_errors(*self._graph.constant_table, self.rows)
        if not shape:
            return Bounded(np.float64(value), self._errors[where])
        errors = [self._errors[i] for i in where]
        return Bounded(np.asarray(value, dtype=np.float64).reshape(shape),
                       np.asarray(errors, dtype=np.float64).reshape(shape)
                       if any(errors) else 0.0)

    def finite(self, x) -> bool:
        return bool(np.all(np.isfinite(x.v)) and np.all(np.isfinite(x.e)))

    def seed(self, value: float):
        return Bounded(np.float64(value))

    def zeros(self, shape: Shape):
        return Bounded(np.zeros(shape))

    def number(self, x):
        return x

    def shape(self, x) -> Shape:
        return np.shape(x.v)

    def reshape(self, x, shape):
        return _each(x, lambda a: np.reshape(a, shape))

    def transpose(self, x):
        out = _each(x, np.transpose)
        hit = self._magnitudes.get(id(x.v))
        if hit is not None and hit[0] is x.v:  # X' of the reverse product: |X|' is known
            self._magnitudes[id(out.v)] = (out.v, hit[1].T)
        return out

    def _magnitude(self, a):
        """|a|, made once per array (an input read by @ forward and, transposed, reverse)."""
        hit = self._magnitudes.get(id(a))
        if hit is None or hit[0] is not a:
            hit = self._magnitudes[id(a)] = (a, np.abs(a))
        return hit[1]

    def matmul(self, a, b):
        return bounded_matmul(a, b, self._magnitude)

    def as_matrix(self, x, left: bool):
        if np.ndim(x.v) == 2:
            return x
        return self.reshape(x, (1, -1) if left else (-1, 1))

    def reduce(self, kind: str, x, axis):
        if kind == "add":
            return bounded_sum(x, axis)
        if kind == "mul":
            return bounded_prod(x, axis)
        return bounded_extreme(kind, x, axis)

    def take(self, x, positions, shape):
        index = self._index(positions)
        return _each(x, lambda a: np.reshape(np.ravel(a)[index], shape))

    def scatter(self, g, positions, taken, shape):
        size = int(np.prod(shape)) if shape else 1
        out = bounded_scatter(_each(g, lambda a: np.broadcast_to(a, taken)),
                              self._index(positions), size)
        return self.reshape(out, shape)

    def item(self, g, k: int):
        return _each(g, lambda a: a[k])

    def stack(self, xs):
        bounds = [np.zeros(np.shape(x.v)) if exact_bound(x.e) else full(x.e, x.v) for x in xs]
        return Bounded(np.stack([np.asarray(x.v, dtype=np.float64) for x in xs]),
                       np.stack(bounds) if not all(exact_bound(x.e) for x in xs) else 0.0)

    def unbroadcast(self, g, shape):
        if np.shape(g.v) == tuple(shape):
            return g
        while np.ndim(g.v) > len(shape):
            g = bounded_sum(g, 0)
        for axis, n in enumerate(shape):
            if n == 1 and np.shape(g.v)[axis] != 1:
                g = bounded_sum(g, axis, keepdims=True)
        if np.shape(g.v) != tuple(shape):
            g = _each(g, lambda a: np.broadcast_to(a, shape))
        return g

    def expand(self, g, axis, shape):
        if axis is not None:
            g = _each(g, lambda a: np.expand_dims(a, axis))
        return _each(g, lambda a: np.broadcast_to(a, shape))

    def others_product(self, x, axis):
        return bounded_others_product(x, axis)

    def chain_weights(self, row, kind: str, x, axis):
        # no tie within the bounds: each weight is the rows' exact 1 or 0, as float64 gives it
        clear_of_ties(kind, x, axis)
        return NumpyArrays.chain_weights(_FLOATS, row, kind, x.v, axis)


_FLOATS = NumpyArrays()


def _input(value, specs):
    """An input as a Bounded: its doubles, exact; or (``specs``) what was typed for each element
    (``0.1``: within an ulp of its double), None where only the balls can read it (pi/4)."""
    if specs is None:
        return Bounded(np.asarray(value, dtype=np.float64) if np.ndim(value)
                       else np.float64(value))
    if not np.ndim(value):
        x = exact_input(specs)
        return None if x is None else Bounded(np.float64(x.v), x.e)
    xs = [exact_input(s) for s in specs]
    if any(x is None for x in xs):
        return None
    shape = np.shape(value)
    return Bounded(np.asarray([x.v for x in xs], dtype=np.float64).reshape(shape),
                   np.asarray([x.e for x in xs], dtype=np.float64).reshape(shape))


def bounded_sweep(graph: ArrayGraph, point: Mapping[str, object], wrt: Sequence[str],
                  seed: float, typed: Mapping[str, object] | None = None):
    """The output's value and its gradient by ``wrt`` (name -> Bounded of the input's shape)
    as Bounded (float64's numbers, each with a proven bound on its error), by both sweeps over
    :class:`BoundedArrays`; None where the inputs cannot be read here or a value is not
    finite. Unbounded (an ArithmeticError) where a kink, a tie or a long product is met."""
    typed = typed or {}
    inputs = {}
    for name, x in point.items():
        inputs[name] = _input(x, typed.get(name))
        if inputs[name] is None:
            return None
    return sweep(graph, inputs, list(wrt), seed, BoundedArrays(graph))


@gc_paused()  # (no reference cycle among the sweep's arrays)
def certify_arrays_quickly(graph: ArrayGraph, point: Mapping[str, object], value: float,
                           gradient: Mapping[str, object], wrt: Sequence[str], seed: float,
                           digits: int, typed: Mapping[str, object] | None = None):
    """The value's text and the gradient's (name -> texts, row-major) of ``graph`` at ``point``,
    each proven to ``digits`` digits by :func:`bounded_sweep` and rounding as the float64
    sweep's ``value`` and ``gradient`` do, None for each number not proven so (the balls decide
    those); None where the sweep cannot bound the program (a kink, a tie met, an input only the
    balls read, a value not finite: the balls decide it all)."""
    if digits > FLOAT64_DIGITS:  # (more than float64's results can round to: the balls')
        return None
    try:
        found = bounded_sweep(graph, point, wrt, seed, typed)
        if found is None:
            return None
        bounded, bounded_gradient = found
        with np.errstate(all="ignore"):
            shown = proven_texts(bounded, value, digits)[0]
            texts = {name: proven_texts(bounded_gradient[name], gradient[name], digits)
                     for name in wrt}
    except (ArithmeticError, ValueError, TypeError, GradcliError):
        return None  # Unbounded (a kink, a tie, a long product), a domain: the balls'
    return shown, texts
