"""Certified array programs on array nodes: the rules of :mod:`gradcli.engine.arraynodes`
(``FORWARD`` and ``VJP``, the same ones ``--float64`` runs) on NumPy object arrays of Arb balls.

:class:`ArbArrays` is the namespace: an array is a NumPy array of python-flint ``arb``
(NumPy's broadcasting, sums and indexing work on object arrays), a row's primal and partials
are :data:`gradcli.engine.ball.BARE`'s (bare balls) applied elementwise, and a large ``@`` is
Arb's own matrix product (``arb_mat``: a C loop, where object arrays call Python per element).
Memory is proportional to the arrays' sizes: a ball per element per node, no scalar tape.

:func:`certify_arrays` runs the sweep at rising precision (:func:`gradcli.engine.certify.
rising`, Ziv's loop) until every number shown is proven (:func:`~gradcli.engine.certify.
proven`). What a bare ball cannot settle — a sign, a domain, an exact zero, a kink met exactly
(relu at 0, a tie of max), a number two doublings cannot prove — is :class:`Fallback`: the caller
certifies the program on the scalar tape instead, which decides it with exact rationals and
words it as always, so the output is the same either way.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
from flint import arb, arb_mat

from ..gcpause import gc_paused
from .arraynodes import ArrayGraph, NumpyArrays, objects, sweep
from .ball import BALL, BARE, Real
from .certify import agreement, exact_real, proven, rising, start_bits, typed_real
from .primitives import Namespace, jumps
from .rounding import float_text

Shape = tuple[int, ...]


class Fallback(Exception):
    """The array sweep on bare balls cannot settle something: the scalar tape certifies it."""


# -- the rows on object arrays: BARE's functions, elementwise ----------------------------------

def _elementwise(f, arity: int):
    """``f`` of bare balls applied to each element (a ball alone: ``f`` of it)."""
    return np.frompyfunc(f, arity, 1)


def _where(condition, x, y):
    if np.ndim(condition) == 0:
        return x if condition else y
    return np.where(np.asarray(condition, dtype=bool), x, y)


class _Rows(Namespace):
    """:data:`BARE` elementwise: the namespace the rows' partials read on object arrays."""

    # the constants are BARE's, at the working precision when read
    pi = property(lambda self: BARE.pi)
    e = property(lambda self: BARE.e)
    where = staticmethod(_where)


ROWS = _Rows(lambda row: _elementwise(getattr(BARE, row.name), row.arity),
             is_zero=_elementwise(BARE.is_zero, 1), noninteger=_elementwise(BARE.noninteger, 1),
             sinc_slope=_elementwise(BARE.sinc_slope, 1),
             tanh_slope=_elementwise(BARE.tanh_slope, 1),
             polygamma=_elementwise(BARE.polygamma, 2))

_TO_BALL = np.frompyfunc(arb, 1, 1)
_FINITE = np.frompyfunc(lambda x: x.is_finite() if type(x) is arb else math.isfinite(x), 1, 1)
_HOLDS_ZERO = np.frompyfunc(lambda x: 0 in x if type(x) is arb else x == 0, 1, 1)
_MAX, _MIN = _elementwise(BARE.max, 2), _elementwise(BARE.min, 2)
_MATRIX_FROM = 4096  # multiply-adds from which @ is Arb's matrix product, not object arrays'


def balls(x):
    """A float or a float64 array as exact balls (an object array of arb)."""
    return _TO_BALL(x) if np.ndim(x) else arb(float(x))


def _holds_zero(x) -> bool:
    return bool(np.any(_HOLDS_ZERO(x))) if np.ndim(x) else bool(_HOLDS_ZERO(x))


class ArbArrays(NumpyArrays):
    """The array nodes' namespace on balls (see the module's docstring)."""

    def __init__(self, graph: ArrayGraph):
        super().__init__()
        self.rows = ROWS
        self._matrices: dict[int, tuple] = {}  # id(array) -> (array, its arb_mat), per sweep
        self._graph, self._exact = graph, None

    def row(self, row):
        f = getattr(self.rows, row.name)
        if row.kink is None or jumps(row):  # (a jump's row has no bare ball: Unsure)
            return f

        def at_kink(*xs):
            # a turn (relu, abs, sign, min, max) whose ball holds it: the scalar tape decides
            # it exactly, and says so in a note
            if _holds_zero(xs[0] if len(xs) == 1 else xs[0] - xs[1]):
                raise Fallback(f"{row.name} at its kink")
            return f(*xs)
        return at_kink

    def constant(self, value, where, shape: Shape):
        # what the constant is exactly (0.1: 1/10, log(2): Arb's log of 2), at the working
        # precision; outside its domain exactly, a ValueError: the scalar tape words it
        if self._exact is None:
            self._exact = [x.b for x in self._graph.exact_numbers(BALL, typed_real)]
        if not shape:
            return self._exact[where]
        return objects([self._exact[i] for i in where], shape)

    def finite(self, x) -> bool:
        return bool(np.all(_FINITE(x))) if np.ndim(x) else bool(_FINITE(x))

    def number(self, x):
        return x.item() if isinstance(x, np.ndarray) else x

    def stack(self, xs):
        out = np.empty((len(xs), *np.shape(xs[0])), dtype=object)
        for i, x in enumerate(xs):  # (a 0-d array's item: the ball, not the array in a cell)
            out[i] = x.item() if isinstance(x, np.ndarray) and not x.ndim else x
        return out

    def scatter(self, g, positions, taken, shape):
        size = int(np.prod(shape)) if shape else 1
        flat = np.zeros(size, dtype=object)  # int 0: exact, and 0 + a ball is the ball
        np.add.at(flat, self._index(positions), np.ravel(np.broadcast_to(g, taken)))
        return flat.reshape(shape)

    def extreme(self, kind: str):
        return _MAX if kind == "max" else _MIN

    def reduce(self, kind: str, x, axis):
        if kind in ("max", "min"):
            self._no_ties(kind, x, axis)
            return self.extreme(kind).reduce(np.ravel(x) if axis is None else x,
                                             axis=0 if axis is None else axis)
        return super().reduce(kind, x, axis)

    def _no_ties(self, kind: str, x, axis) -> None:
        """A Fallback where the chain ``max(max(x0, x1), x2) ...`` meets a tie (or a ball that
        holds one): the scalar tape's max nodes at their kink, which it notes."""
        moved = np.ravel(x) if axis is None else np.moveaxis(x, axis, -1)
        if moved.shape[-1] > 1:
            running = self.extreme(kind).accumulate(moved, axis=-1)
            if _holds_zero(running[..., :-1] - moved[..., 1:]):
                raise Fallback(f"a tie of {kind}")

    def chain_weights(self, row, kind: str, x, axis):
        self._no_ties(kind, x, axis)  # (no tie: each weight is 1 or 0, by the rows' partials)
        return super().chain_weights(row, kind, x, axis)

    def matmul(self, a, b):
        if np.ndim(a) + np.ndim(b) > 2 and np.size(a) * np.shape(b)[-1] >= _MATRIX_FROM:
            # a matrix's product (a vector as a row or a column): Arb's, in C
            product = self._matrix(a, True) * self._matrix(b, False)
            return objects(product.entries(), np.shape(a)[:-1] + np.shape(b)[1:])
        return np.matmul(_exact(a), _exact(b))

    def _matrix(self, x, left: bool):
        """``x`` as an arb_mat (a vector as a row, ``left``, or a column), made once per array:
        ``X`` of the forward product and of its transpose in the reverse one (Arb's transpose
        of the matrix made, a copy of pointers). A float64 array's doubles are exact."""
        hit = self._matrices.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        base = x.base if isinstance(x, np.ndarray) else None
        if (isinstance(base, np.ndarray) and base.ndim == 2 and x.shape == base.shape[::-1]
                and x.strides == base.strides[::-1]):
            made = self._matrix(base, left).transpose()
        else:
            shape = np.shape(x)
            if len(shape) == 1:
                shape = (1, shape[0]) if left else (shape[0], 1)
            made = arb_mat(*shape, np.ravel(x).tolist())
        self._matrices[id(x)] = (x, made)
        return made


def _exact(x):
    """A float64 array as balls (an input only ``@`` reads stays doubles until then)."""
    return balls(x) if isinstance(x, np.ndarray) and x.dtype != object else x


# -- proving the sweep's numbers -----------------------------------------------------------------

def _input_balls(value, specs):
    """An input's balls at the working precision: its exact doubles, or (``specs``) what was
    typed for each element (``0.1``: the ball of 1/10)."""
    if specs is None:
        return balls(value)
    if not np.ndim(value):
        return exact_real(specs).b
    return objects([exact_real(s).b for s in specs], np.shape(value))


@gc_paused()  # millions of balls in object arrays, and no reference cycle
def certify_arrays(graph: ArrayGraph, point: Mapping[str, object], wrt: Sequence[str],
                   seed: float, digits: int, typed: Mapping[str, object] | None = None,
                   known=None):
    """The value and the gradient by ``wrt`` (name -> object array of Proven) of ``graph`` at
    ``point`` (name -> float or float64 array, exact), every number proven to ``digits``
    digits; ``typed``: name -> what was typed (a text, or a flat list of texts and floats for
    an array), read exactly; ``known``: the numbers proven already (the value's Proven or
    None, and name -> a flat list of Proven or None), which are not proven again. Gives
    ``(value, gradient, bits, value's ball, gradient's balls)``; :class:`Fallback` where the
    balls cannot settle it."""
    known_value, known_gradient = known or (None, {})
    typed = typed or {}
    # a sum of n balls widens by about log2(n) bits: start with that many more
    largest = max((math.prod(shape) for shape in graph.shapes), default=1)
    # an input that only @ reads stays float64 (its doubles go to Arb's matrix once, exactly):
    # converting X of 10^5 x 20 to balls costs more than the whole product
    products = _only_multiplied(graph)
    exact = {name: value if name in products else balls(value)
             for name, value in point.items() if name not in typed}

    first = start_bits(digits) + max(0, largest.bit_length() - 8)

    def attempt(bits: int, final: bool):
        if final or bits > 4 * first:
            # still unproven after two doublings: a number that sits on a rounding boundary
            # (exactly between two doubles, which only its exact rational decides) or a
            # cancellation the Reals settle; the scalar tape's note or error at the cap
            raise Fallback("not proven in two doublings")
        inputs = dict(exact)
        for name, specs in typed.items():
            inputs[name] = _input_balls(point[name], specs)
        try:
            found = sweep(graph, inputs, list(wrt), float(seed), ArbArrays(graph))
        except Exception as exc:  # noqa: BLE001 - Unsure, a domain, a zero divisor: anything
            raise Fallback(str(exc)) from exc  # the scalar tape decides, and words
        if found is None:
            raise Fallback("a ball that is not finite")
        value, gradient = found
        shown = proven(Real.of(value), digits) if known_value is None else known_value
        if shown is None:
            return _wider(value)
        proofs = {}
        for name, g in gradient.items():
            flat = np.ravel(g).tolist()
            out = list(known_gradient.get(name) or [None] * len(flat))
            for i, x in enumerate(flat):
                if out[i] is None:
                    out[i] = proven(Real.of(x), digits)
                    if out[i] is None:
                        return _wider(x)
            proofs[name] = objects(out, np.shape(g))
        return shown, proofs, bits, value, gradient
    return rising(None, digits, attempt, first)


def _only_multiplied(graph: ArrayGraph) -> set[str]:
    """The array inputs whose every use is an operand of ``@``."""
    uses: dict[int, set] = {}
    for k, kind in enumerate(graph.kinds):
        for a in graph.args[k]:
            uses.setdefault(a, set()).add(kind)
    return {name for name, k in graph.inputs_by_name.items()
            if graph.shapes[k] and uses.get(k) == {"matmul"} and k != graph.output}


def _wider(x):
    """None (twice the bits will do) for a ball too wide but finite and clear of 0; else a
    Fallback (an exact zero, a sign: the scalar tape's Reals decide)."""
    x = arb(x) if type(x) is not arb else x
    if x.is_finite() and 0 not in x:
        return None
    raise Fallback("a ball that holds 0")


def float64_digits(value: float, gradient: Mapping[str, object], shown, proofs,
                   value_ball, gradient_balls: Mapping[str, object], digits: int,
                   known=frozenset()):
    """How many of the ``digits`` shown float64's sweep gets right (:func:`~gradcli.engine.
    certify.agreement`): of the value, and of each gradient element (name -> an int array of
    the gradient's shape). Most get them all: their float64 rounds to the proven text, which
    is the exact value's rounding, and that one rounding settles it; ``known`` (the ids of
    Proven numbers) those the quick proof proved, whose float64 rounds to them by its rule."""
    def right(x: float, p, ball) -> int:
        if id(p) in known or float_text(x, digits) == p.text:
            return digits
        return agreement(x, Real.of(ball), digits)

    return right(float(value), shown, value_ball), {
        name: np.reshape(list(map(right, np.ravel(gradient[name]).tolist(),
                                  np.ravel(proofs[name]).tolist(), np.ravel(g).tolist())),
                         np.shape(g))
        for name, g in gradient_balls.items()}
