"""The tape swept over whole columns: values and gradients at many points at once, with NumPy.

The same rule table as the single-point engine (:mod:`gradcli.engine.primitives`): its rules
are written over a namespace ``m`` of the catalogue's functions, and here ``m`` is :data:`NUMPY`,
whose functions take arrays. The forward sweep computes each node for every row; the reverse sweep passes
``adjoint * local`` back along each edge, for every row, in the single-point engine's visit
order. Nothing steps through rows in Python: a point outside a domain shows as a non-finite
value, found with a mask per node, and only the rows that failed get a message, in the words the
single-point engine would use (``v1: log(-1) is outside the domain of log (a > 0)``).

Compile once (:func:`gradcli.api.compile`), then evaluate on a mapping of columns:

>>> import numpy as np
>>> from gradcli.api import compile
>>> result = evaluate_columns(compile("log(x)+x*y"), {"x": np.array([1.0, -1.0]), "y": 3.0})
>>> result.values.tolist(), result.gradient["x"].tolist(), result.gradient["y"].tolist()
([3.0, nan], [4.0, nan], [1.0, nan])
>>> result.errors.tolist()
[None, 'v1: log(-1) is outside the domain of log (a > 0)']

Rows are evaluated in blocks of :data:`BLOCK_ROWS` (cache-sized: each node's column of a block
stays in the processor's cache between the forward and the reverse sweep), so memory grows with
the number of rows only by the outputs. This module does no I/O: files are :mod:`gradcli.batchio`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, partial
from types import SimpleNamespace
from typing import Iterable, Mapping

import numpy as np

from ..errors import GradcliError, InputError, MissingInputError, NumericalError
from .graph import Graph, describe_node, domain_error, overflow_error
from .partials import local_partials
from .primitives import CONSTANTS, TABLE, Namespace, tanh_slope_columns
from .reverse import visit_order
from . import special
from .trig import sincos

BLOCK_ROWS = 1 << 14  # rows per block: 128 KiB per column, so a block's columns stay in cache
BLOCK_ELEMENTS = 1 << 23  # at most this many values per block (64 MiB): big graphs, fewer rows


# -- the NumPy namespace: every primitive's primal on arrays, from its row's numpy column ---------

def _elementwise(scalar, arity: int = 1):
    """A scalar primal applied row by row: for functions NumPy lacks (erf, gamma), bitwise the
    same. A row outside the domain is NaN, as NumPy's own functions give (the failure mask
    finds it and the single-point engine words its message)."""
    def safe(*xs):
        try:
            return scalar(*xs)
        except (ValueError, ZeroDivisionError, OverflowError):
            return math.nan
    ufunc = np.frompyfunc(safe, arity, 1)

    def apply(*xs):
        if all(np.ndim(x) == 0 for x in xs):
            return safe(*map(float, xs))
        return ufunc(*xs).astype(np.float64)
    return apply


def _on_columns(prim):
    """The row's primal on NumPy columns: its NumPy function (by name, or written with NumPy's
    functions), or the scalar primal row by row where it has none: a new row of the table
    works in batches the moment it is added, only slower."""
    if isinstance(prim.numpy, str):
        return getattr(np, prim.numpy)
    if prim.numpy is not None:
        return partial(prim.numpy, np)
    return _elementwise(prim.primal, prim.arity)


def _polygamma(n: int, a):
    """ψ^(n) of a column, row by row (NaN outside its domain, as NumPy's functions give)."""
    return _elementwise(special.polygamma, 2)(n, a)


# (a row with a definition and no NumPy column: the definition on columns, see Namespace)
NUMPY = Namespace(_on_columns, **{name: _on_columns(p) for name, p in TABLE.items()
                                  if p.numpy is not None or p.definition is None},
                  **CONSTANTS, where=np.where, greater=np.greater, polygamma=_polygamma,
                  tanh_slope=partial(tanh_slope_columns, np))


class _SinCos:
    """sin and cos of one column computed together, once (:func:`.trig.sincos`): a sin node's
    value (forward sweep) and its derivative cos(a) (reverse sweep) come from one call, as do
    sin(y) and cos(y) in one expression. One per block: the pairs live as long as the block."""

    def __init__(self):
        self.pairs: dict[int, tuple] = {}  # id(column) -> (column, sin, cos); holds the column

    def pair(self, a):
        if type(a) is not np.ndarray:  # a constant
            return np.sin(a), np.cos(a)
        hit = self.pairs.get(id(a))
        if hit is None or hit[0] is not a:
            hit = (a, *sincos(a))
            self.pairs[id(a)] = hit
        return hit[1], hit[2]

    def sin(self, a):
        return self.pair(a)[0]

    def cos(self, a):
        return self.pair(a)[1]


def block_namespace() -> SimpleNamespace:
    """:data:`NUMPY` with sin and cos shared through a fresh :class:`_SinCos` (one per block)."""
    trig = _SinCos()
    return Namespace(lambda row: getattr(NUMPY, row.name), **CONSTANTS, where=np.where,
                     greater=np.greater, polygamma=_polygamma, sin=trig.sin, cos=trig.cos,
                     tanh_slope=NUMPY.tanh_slope)


# -- results ------------------------------------------------------------------------------------

@dataclass
class BatchResult:
    """Values and gradients at many points: one entry per row.

    ``values[i]`` is the output at row i and ``gradient[name][i]`` its partial derivative by the
    input ``name``; both are NaN where the row failed, and ``errors[i]`` then says why (the
    single-point engine's message); ``errors[i]`` is None for a row that computed.
    """

    values: np.ndarray
    gradient: dict[str, np.ndarray]
    messages: dict[int, str]  # row -> the message of its failure, for the failed rows only
    inputs: list[str] = field(default_factory=list)  # the graph's inputs, in graph order
    digits: np.ndarray | None = None  # each row's proven significant digits, when asked

    @cached_property
    def errors(self) -> np.ndarray:
        """dtype object, one entry per row: None, or the message of the row's failure. Built on
        first use (a million Nones cost more than the sweeps of a small expression)."""
        errors = np.empty(len(self), dtype=object)  # every entry None
        if self.messages:
            rows = np.fromiter(self.messages, dtype=np.intp, count=len(self.messages))
            errors[rows] = list(self.messages.values())
        return errors

    failed = property(lambda self: _failed(self.errors), doc="A boolean mask of the failed rows.")
    # a list counts Nones by identity, faster than NumPy compares objects
    n_failed = property(lambda self: len(self.errors) - self.errors.tolist().count(None))

    def __len__(self) -> int:
        return len(self.values)


def _failed(errors: np.ndarray) -> np.ndarray:
    return np.not_equal(errors, None)


def column_length(columns: Mapping[str, object]) -> int:
    """The number of rows of ``columns``: the length every array shares (1 when all are
    scalars); unequal lengths are an InputError."""
    lengths = {name: np.shape(column)[0] for name, column in columns.items()
               if np.ndim(column) > 0}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name}: {n}" for name, n in lengths.items())
        raise InputError(f"the columns have different lengths ({shown})")
    return next(iter(lengths.values()), 1)


def as_columns(graph: Graph, columns: Mapping[str, object]) -> tuple[int, dict[str, np.ndarray]]:
    """The graph's inputs as float64 arrays of one length (a scalar is broadcast, not copied)."""
    missing = [name for name in graph.inputs if name not in columns]
    if missing:
        span = graph.input_spans[graph.inputs.index(missing[0])]
        raise MissingInputError(f"no values for {'input' if len(missing) == 1 else 'inputs'} "
                                f"{', '.join(missing)}", span, names=tuple(missing))
    n = column_length(columns)
    arrays = {}
    for name, span in zip(graph.inputs, graph.input_spans):
        try:
            column = np.asarray(columns[name], dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"the values of {name} are not numbers", span) from None
        if column.ndim > 1:
            raise InputError(f"the values of {name} are a {column.ndim}-dimensional array; "
                             "give one value per row", span)
        arrays[name] = np.broadcast_to(column, (n,)) if column.ndim == 0 else column
    return n, arrays


# -- the sweeps ---------------------------------------------------------------------------------

def checked_slots(graph: Graph) -> list[int]:
    """The input and node slots whose finiteness says whether every slot of a row is finite:
    the output, and every slot read by some node that does not pass a non-finite value on (the
    row's ``propagates``: a non-finite value read only that way shows again in a later node, so
    a block's quick check need not look at it) or read by none."""
    n_const = graph.n_const
    checked = bytearray(graph.n_slots)
    read = bytearray(graph.n_slots)
    for k, prim in enumerate(graph.ops):
        keeps = prim.propagates
        for i, a in enumerate(graph.args(k)):
            read[a] = 1
            if i not in keeps:
                checked[a] = 1
    checked[graph.output] = 1
    return [s for s in range(n_const, graph.n_slots) if checked[s] or not read[s]]


def evaluate_columns(graph: Graph, columns: Mapping[str, object], *,
                     wrt: Iterable[str] | None = None, gradient: bool = True,
                     block_rows: int | None = None, threads: int = 1,
                     watch=None) -> BatchResult:
    """Value and gradient of a compiled graph at every row of ``columns`` (input name -> array).

    Names the graph does not read are ignored; a scalar stands for a whole column. ``wrt``
    chooses the inputs of ``gradient`` (default: all, in graph order); ``gradient=False`` runs
    the forward sweep alone (``gradient`` is then empty). A row outside a domain, or whose value
    or gradient is not finite, gives NaN and a message in ``errors``; the others are unaffected.
    ``threads``: how many blocks may run at once (NumPy releases the GIL in its loops). One by
    default: a second thread costs CPU time and gains wall time only where a core is idle, which
    the caller knows and gradcli cannot. Every block writes its own rows, so the result is the
    same, bit for bit, for any number of threads.
    ``watch(start, stop, results)``: called with each block's results (the value, then the
    gradient by ``wrt``) once written, while they are in the processor's cache (the error
    bounds' quick test, :class:`.bounds.QuickTest`).
    """
    from .graph import wrt_names
    wrt = wrt_names(graph, wrt)
    n, arrays = as_columns(graph, columns)
    values = np.empty(n)
    grads = {name: np.empty(n) for name in wrt} if gradient else {}
    messages: dict[int, str] = {}
    order = visit_order(graph) if gradient else []
    checked = checked_slots(graph)

    def sweep(block: list, start: int, stop: int) -> None:
        _evaluate_block(graph, block, order, checked, start, values[start:stop],
                        {name: g[start:stop] for name, g in grads.items()}, messages, gradient)

    _sweep_blocks(graph, n, arrays, sweep, [values, *grads.values()], threads, block_rows,
                  watch)
    return BatchResult(values, grads, messages, list(graph.inputs))


def _sweep_blocks(graph: Graph, n: int, arrays: dict, sweep, results: list, threads: int,
                  block_rows: int | None, watch) -> None:
    """``sweep(block, start, stop)`` for every block of rows (``block``: the inputs' columns in
    graph order), NumPy's floating-point errors ignored; then ``watch(start, stop, the block's
    rows of each column of results)``, where given."""
    threads = max(1, threads)
    if block_rows is None:
        block_rows = block_size(n, threads)
    block_rows = max(256, min(block_rows, BLOCK_ELEMENTS // graph.n_slots))

    def run(start: int) -> None:
        stop = min(n, start + block_rows)
        block = [arrays[name][start:stop] for name in graph.inputs]
        with np.errstate(all="ignore"):  # per thread: NumPy's error state is thread-local
            sweep(block, start, stop)
        if watch is not None:
            watch(start, stop, [column[start:stop] for column in results])

    _run_blocks(run, range(0, n, block_rows), block_rows, threads)


def _run_blocks(run, starts: range, block_rows: int, threads: int) -> None:
    """``run(start)`` for every block, on up to ``threads`` threads (each block writes its own
    rows). The calling thread takes blocks too, and every thread takes the next block not yet
    taken when it is free: a helper that gets no core of its own takes few blocks or none, so
    the blocks never take much longer than on one thread."""
    threads = min(len(starts), threads)
    if block_rows < BLOCK_ROWS:  # a big graph's short blocks are mostly Python: the GIL's
        threads = 1
    if threads <= 1:
        for start in starts:
            run(start)
        return
    pending = iter(starts)
    failed: list[BaseException] = []

    def take() -> None:
        for start in pending:  # a range iterator hands each block out once, under the GIL
            if failed:
                return
            try:
                run(start)
            except BaseException as exc:  # an error or ^C: the blocks not taken are dropped
                failed.append(exc)
                return

    helpers = [_pool(threads - 1).submit(take) for _ in range(threads - 1)]
    try:
        take()
    except BaseException as exc:  # ^C between two blocks: the helpers stop after theirs
        failed.append(exc)
        raise
    finally:
        for helper in helpers:  # one that has not started (no core came free) is not waited for
            if not helper.cancel():
                helper.exception()  # waits; what failed in it is in ``failed``
    if failed:
        raise failed[0]


THREAD_BLOCK_ROWS = 1 << 16  # rows per block when several threads share the work
_POOLS: dict = {}


def block_size(n: int, threads: int) -> int:
    """Rows per block: cache-sized (:data:`BLOCK_ROWS`) on one thread; on several, up to
    :data:`THREAD_BLOCK_ROWS`, as a block holds the GIL between NumPy's loops (the tape's Python
    steps) and a bigger block spends less of its time there."""
    if threads <= 1:
        return BLOCK_ROWS
    return max(BLOCK_ROWS, min(THREAD_BLOCK_ROWS, -(-n // threads)))


def _pool(threads: int):
    """A thread pool of ``threads`` workers, made once per size and kept (threads are idle
    between calls)."""
    pool = _POOLS.get(threads)
    if pool is None:
        from concurrent.futures import ThreadPoolExecutor
        pool = _POOLS.setdefault(threads, ThreadPoolExecutor(threads, "gradcli-batch"))
    return pool


def forward_block(graph: Graph, inputs: list, m: SimpleNamespace | None = None,
                  out: np.ndarray | None = None) -> list:
    """Values of every slot for one block of rows (``inputs`` in graph order): constants stay
    floats, inputs and nodes are arrays. ``m``: the namespace of primals (a fresh
    :func:`block_namespace` by default). ``out``: where the output node's value goes when its
    primal is a NumPy ufunc (saves a copy; check ``slots[graph.output] is out``)."""
    m = m or block_namespace()
    slots = list(graph.constants) + list(inputs)
    append = slots.append
    arg0, arg1 = graph.arg0, graph.arg1
    last = graph.output - graph.base if out is not None else -1
    for k, prim in enumerate(graph.ops):
        f, b = getattr(m, prim.name), arg1[k]
        if k == last and isinstance(f, np.ufunc):
            append(f(slots[arg0[k]], out=out) if b < 0 else f(slots[arg0[k]], slots[b], out=out))
            continue
        append(f(slots[arg0[k]]) if b < 0 else f(slots[arg0[k]], slots[b]))
    return slots


def _times(g, local):
    """``g * local`` without a pass over the rows when either is the float 1 or -1 (exact)."""
    if type(local) is float and (local == 1.0 or local == -1.0):
        return g if local == 1.0 else -g
    if type(g) is float and (g == 1.0 or g == -1.0):
        return local if g == 1.0 else -local
    return g * local


def reverse_block(graph: Graph, slots: list, order: list[int], free: bool = False,
                  m: SimpleNamespace | None = None, into: dict | None = None) -> list:
    """Adjoints of the inputs (and constants) for one block, by the single-point engine's
    sweep (:func:`~gradcli.engine.partials.local_partials`: same visit order, same rules, same
    order of accumulation) on columns; None where nothing flows. A node's adjoint is dropped
    once passed on; with ``free=True`` its value too (so memory falls during the sweep, and
    ``slots`` is consumed). ``m``: the namespace the rules compute with (the forward sweep's, so
    that the pairs it computed are reused). ``into``: slot -> array where that slot's sums of
    contributions are written (the caller's output column, saving a copy; a slot with one
    contribution still gets that contribution itself)."""
    m = m or block_namespace()
    into = into or {}
    adjoint: list = [None] * graph.n_slots
    adjoint[graph.output] = 1.0
    passing = [None]  # the node whose adjoint is being passed on

    def each(s: int, a: int, local) -> None:
        if s != passing[0]:  # s's turn: the node before it has passed on all it had
            done = passing[0]
            if done is not None:
                adjoint[done] = None
                if free:
                    slots[done] = None
            passing[0] = s
        g = adjoint[s]
        if g is None:
            return
        c = _times(g, local)
        prev = adjoint[a]
        if prev is None:
            adjoint[a] = c
        elif a in into:
            adjoint[a] = np.add(prev, c, out=into[a])
        else:
            adjoint[a] = prev + c

    local_partials(graph, slots, m, slots=order, each=each)
    if passing[0] is not None:
        adjoint[passing[0]] = None
        if free:
            slots[passing[0]] = None
    return adjoint


def _all_finite(columns) -> bool:
    """Whether every entry of every column is finite: one pairwise sum per column finds any inf
    or nan (a sum of finite values that overflows is a false alarm, settled by the exact check
    that follows a False)."""
    add = np.add.reduce  # np.sum's Python wrapper costs more than a 16,384-row sum
    return all(math.isfinite(add(c) if type(c) is np.ndarray else c) for c in columns)


def _evaluate_block(graph, block, order, checked, offset, values_out, grads_out, messages,
                    gradient):
    n = len(values_out)
    m = block_namespace()
    slots = forward_block(graph, block, m, out=values_out)
    if slots[graph.output] is not values_out:
        values_out[...] = slots[graph.output]
    failed = None
    if not _all_finite([slots[s] for s in checked]):
        failed = _value_failures(graph, slots, offset, n, messages)
    if not gradient:
        if failed is not None:
            values_out[failed] = np.nan
        return
    adjoint = _sweep_into(graph, slots, order, m, grads_out, free=True)
    failed = _gradient_failures(graph, adjoint, block, offset, n, failed, messages)
    if failed is not None:
        values_out[failed] = np.nan
        for g in grads_out.values():
            g[failed] = np.nan


def _sweep_into(graph, slots, order, m, grads_out: dict, free: bool = False) -> list:
    """The block's reverse sweep, each input's gradient written into ``grads_out[name]`` (its
    sums accumulate there directly); the adjoints."""
    slot = {name: graph.n_const + graph.inputs.index(name) for name in grads_out}
    adjoint = reverse_block(graph, slots, order, free=free, m=m,
                            into={slot[name]: g for name, g in grads_out.items()})
    for name, out in grads_out.items():
        g = adjoint[slot[name]]
        if g is not out:
            out[...] = 0.0 if g is None else g
    return adjoint


def _gradient_failures(graph, adjoint, block, offset, n, failed, messages):
    """``failed`` (None or a mask) joined by the rows whose input adjoints are not finite, each
    given the single-point engine's message; a row that failed already keeps its message."""
    input_adjoints = [a for a in adjoint[graph.n_const:graph.base] if a is not None]
    if _all_finite(input_adjoints):
        return failed
    bad = np.zeros(n, dtype=bool)
    for a in input_adjoints:
        bad |= ~np.isfinite(a)
    if failed is not None:
        bad &= ~failed
    for r in np.flatnonzero(bad):
        messages[offset + int(r)] = _gradient_message(graph, [float(c[r]) for c in block])
    return bad if failed is None else failed | bad


def _value_failures(graph, slots, offset, n, messages) -> np.ndarray:
    """Find each row's first non-finite slot (in tape order) and write its message; the mask
    of the failed rows."""
    failed = np.zeros(n, dtype=bool)
    n_const, base = graph.n_const, graph.base
    for i, name in enumerate(graph.inputs):
        column = np.broadcast_to(slots[n_const + i], (n,))
        new = ~np.isfinite(column) & ~failed
        for r in np.flatnonzero(new):
            messages[offset + int(r)] = (f"the value of {name} is {float(column[r])}, "
                                         "which is not a finite number")
        failed |= new
    for k in range(len(graph.ops)):
        column = slots[base + k]
        new = ~np.isfinite(column) & ~failed
        if not new.any():
            continue
        for r in np.flatnonzero(new):
            messages[offset + int(r)] = _value_message(graph, k, slots, r)
        failed |= new
    return failed


def _row_args(graph: Graph, k: int, slots: list, r: int) -> list[float]:
    """Node k's arguments at row r, as floats."""
    args = [slots[a] for a in graph.args(k)]
    return [float(v[r]) if np.ndim(v) else float(v) for v in args]


def _value_message(graph: Graph, k: int, slots: list, r: int) -> str:
    """The single-point engine's message for node k failing at row r (its arguments are finite):
    the scalar primal, run on the row's arguments, says whether it is a domain error or an
    overflow, exactly as :func:`gradcli.engine.forward.forward` reports it."""
    prim = graph.ops[k]
    args = _row_args(graph, k, slots, r)
    span, node = graph.spans[k], graph.node_id(graph.base + k)
    # the call as the single-point engine writes it, another node's double marked "in float64"
    shown = describe_node(graph, graph.base + k, dict(zip(graph.args(k), args)))
    try:
        value = prim.primal(*args)
    except (ValueError, ZeroDivisionError):
        return domain_error(prim, args, span, node=node, shown=shown).message
    except OverflowError:
        return overflow_error(prim, args, span, node=node, shown=shown).message
    if math.isfinite(value):  # NumPy and the C library disagree at the very edge of the range
        value = float(np.asarray(slots[graph.base + k])[r])
    return f"{node} = {shown} is {value}: the value is not a finite number"


def _gradient_message(graph: Graph, point: list[float]) -> str:
    """The single-point engine's message for a row whose gradient is not finite (rare: a Python
    step per such row is fine)."""
    from .forward import forward
    from .reverse import check_gradient, reverse, reverse_to_limits, singular_error
    try:
        values = forward(graph, point)
        try:
            adjoint, _ = reverse(graph, values)
        except NumericalError as exc:  # a slope with no value: eval's message (+∞, undefined)
            adjoint, singular = reverse_to_limits(graph, values)
            gradient = dict(zip(graph.inputs, adjoint[graph.n_const:graph.base]))
            raise singular_error(graph, values, gradient, singular, exc) from None
        check_gradient(graph, values, adjoint, 1.0)
    except GradcliError as exc:
        return exc.message
    return "the gradient is not finite"


# -- several outputs ------------------------------------------------------------------------------

@dataclass
class JacobianBatch:
    """Every output's value and the Jacobian at many points: ``values[output][i]`` and
    ``jacobian[output][input][i]`` at row i; NaN where the row failed, ``errors[i]`` then says
    why (None for a row that computed). A row fails as a whole, as ``eval`` at that point would."""

    values: dict[str, np.ndarray]
    jacobian: dict[str, dict[str, np.ndarray]]
    messages: dict[int, str]  # row -> the message of its failure, for the failed rows only
    outputs: list[str] = field(default_factory=list)  # the Jacobian's rows
    inputs: list[str] = field(default_factory=list)  # its columns (the inputs of ``wrt``)
    digits: np.ndarray | None = None  # each row's proven significant digits, when asked

    errors, failed, n_failed = BatchResult.errors, BatchResult.failed, BatchResult.n_failed

    def __len__(self) -> int:
        return len(next(iter(self.values.values())))


def jacobian_columns(graph: Graph, columns: Mapping[str, object], *,
                     wrt: Iterable[str] | None = None, block_rows: int | None = None,
                     threads: int = 1, watch=None) -> JacobianBatch:
    """Every output's value and gradient at every row of ``columns``: per block, one forward
    sweep and one reverse sweep per output (of :meth:`Graph.only`), so each row is the
    single-point Jacobian's. A row that fails for one output fails for all (NaN everywhere), as
    the single-point ``eval`` fails; its message names the node. ``watch``: as for
    :func:`evaluate_columns` (results: each output's value, then its gradient by ``wrt``)."""
    from .graph import wrt_names
    wrt = wrt_names(graph, wrt)
    names = list(graph.output_names or ["f"])
    singles = [graph.only(i) for i in range(len(names))]
    orders = [visit_order(one) for one in singles]
    checked = sorted(set().union(*map(checked_slots, singles)))
    n, arrays = as_columns(graph, columns)
    values = {o: np.empty(n) for o in names}
    jacobian = {o: {x: np.empty(n) for x in wrt} for o in names}
    messages: dict[int, str] = {}

    def sweep(block: list, start: int, stop: int) -> None:
        _jacobian_block(graph, singles, orders, block, checked, start,
                        [values[o][start:stop] for o in names],
                        [{x: jacobian[o][x][start:stop] for x in wrt} for o in names], messages)

    results = [column for o in names for column in [values[o], *jacobian[o].values()]]
    _sweep_blocks(graph, n, arrays, sweep, results, threads, block_rows, watch)
    return JacobianBatch(values, jacobian, messages, names, wrt)


def _jacobian_block(graph, singles, orders, block, checked, offset, values_out, grads_out,
                    messages) -> None:
    """One block of :func:`jacobian_columns`: the forward sweep once, then each output's reverse
    sweep over the same values (kept, not freed, for the next output)."""
    n = len(values_out[0])
    m = block_namespace()
    slots = forward_block(graph, block, m)
    failed = None
    if not _all_finite([slots[s] for s in checked]):
        failed = _value_failures(graph, slots, offset, n, messages)
    for one, order, value, grads in zip(singles, orders, values_out, grads_out):
        value[...] = slots[one.output]
        adjoint = _sweep_into(one, slots, order, m, grads)
        failed = _gradient_failures(one, adjoint, block, offset, n, failed, messages)
    if failed is not None:
        for value, grads in zip(values_out, grads_out):
            value[failed] = np.nan
            for g in grads.values():
                g[failed] = np.nan


__all__ = ["BLOCK_ROWS", "NUMPY", "BatchResult", "JacobianBatch", "as_columns",
           "block_namespace", "checked_slots", "evaluate_columns", "forward_block",
           "jacobian_columns", "reverse_block"]
