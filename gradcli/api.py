"""The Python API: ``evaluate(source, at)`` -> :class:`Result` with value, gradient and trace.

>>> r = evaluate("log(x)+x*y-sin(y)", {"x": 2, "y": 3})
>>> round(r.value, 12), r.gradient["x"], round(r.gradient["y"], 12)
(6.5520271725, 3.5, 2.9899924966)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Mapping

from .errors import InputError
from .engine.forward import forward
from .engine.graph import Graph, compile, point_vector, wrt_names
from .engine.partials import Partials, local_partials
from .engine.reverse import check_gradient, reverse


@dataclass
class Result:
    """What an evaluation gives: ``value``, ``gradient`` (input name -> float), ``inputs``, and
    the ``mode`` that computed it."""

    source: str
    value: float
    gradient: dict[str, float]
    inputs: dict[str, float]
    seed: float
    graph: Graph = field(repr=False)
    values: list[float] = field(repr=False)
    adjoint: list[float] | None = field(default=None, repr=False)  # of every slot (reverse mode)
    mode: str = "reverse"  # how the gradient was computed: "reverse" or "forward"

    @cached_property
    def partials(self) -> Partials:
        """Every node's local partial derivatives at the point (computed on first use)."""
        return local_partials(self.graph, self.values)

    @cached_property
    def sweep(self) -> tuple[list[float], list]:
        """The reverse sweep with its records: (adjoint of every slot, contributions)."""
        return reverse(self.graph, self.values, self.seed, record=True, active=self.active)

    @property
    def active(self):
        """The slots that depend on a differentiated input (:meth:`Graph.active`)."""
        slot = _slots(self.graph)
        return _active(self.graph, [slot[name] for name in self.gradient])

    @cached_property
    def trace(self):
        """The forward, contribution and adjoint records (computed on first use)."""
        from .views.trace import build_trace
        adjoint, records = self.sweep
        return build_trace(self.graph, self.values, adjoint, records, self.seed)


def _slots(graph: Graph) -> dict[str, int]:
    """Each input's slot, by name."""
    return {name: graph.n_const + i for i, name in enumerate(graph.inputs)}


def _active(graph: Graph, slots: list[int]):
    """:meth:`Graph.active` for the input ``slots``; None (every non-constant) when that is all."""
    return None if len(slots) == len(graph.inputs) else graph.active(slots)


def evaluate_graph(graph: Graph, at: Mapping[str, float], *, wrt: Iterable[str] | None = None,
                   seed: float = 1.0) -> Result:
    """Value and gradient of a compiled graph at ``at`` (names the graph does not read are ignored).

    Only the inputs in ``wrt`` are differentiated: a partial derivative by anything else is never
    computed (``x^y`` at (-2, 3) has ∂f/∂x = 12 although ∂f/∂y is not defined there).
    """
    point = point_vector(graph, at)
    if not math.isfinite(seed):
        raise InputError(f"is {seed}, which is not a finite number", option="seed",
                         values=(seed,))
    wrt = wrt_names(graph, wrt)
    slot = _slots(graph)
    active = _active(graph, [slot[name] for name in wrt])
    values = forward(graph, point)
    adjoint, _ = reverse(graph, values, seed, active=active)
    check_gradient(graph, values, adjoint, seed, active=active)
    return Result(
        source=graph.source,
        value=values[graph.output],
        gradient={name: adjoint[slot[name]] for name in wrt},
        inputs=dict(zip(graph.inputs, point)),
        seed=seed,
        graph=graph,
        values=values,
        adjoint=adjoint,
    )


@dataclass
class ForwardResult(Result):
    """A forward-mode evaluation: ``gradient`` by one tangent sweep per input, or, for a
    ``direction``, the single directional derivative ``directional`` (``gradient`` is then empty)."""

    mode: str = "forward"
    direction: dict[str, float] | None = None  # every input's tangent, missing ones as 0
    directional: float | None = None
    partials: tuple = field(default=((), ()), repr=False)

    @cached_property
    def sweeps(self) -> list:
        """(label, tangents of every slot) of each sweep: swept again when first asked for (the
        evaluation keeps one sweep at a time, so 8,000 inputs do not hold 8,000 sweeps)."""
        from .engine.tangent import tangent_sweep
        return [(label, tangent_sweep(self.graph, self.partials, tangents))
                for label, tangents in _seeds(self.graph, list(self.gradient), self.direction)]

    @cached_property
    def trace(self):
        """The tangent trace: each node's value, local partials and tangent in every sweep."""
        from .views.trace import tangent_trace
        return tangent_trace(self.graph, self.values, self.partials, self.sweeps)


def evaluate_forward(graph: Graph, at: Mapping[str, float], *, wrt: Iterable[str] | None = None,
                     direction: Mapping[str, float] | None = None,
                     seed: float = 1.0) -> ForwardResult:
    """Value and gradient by forward mode, or the derivative along ``direction`` in one sweep.

    ``direction`` maps input names to tangents; inputs it leaves out get 0. A name the graph
    does not read, or a direction that is zero everywhere, is an :class:`InputError`. The result
    is scaled by ``seed``, as in reverse mode.
    """
    from .engine.tangent import check_tangent, tangent_sweep
    point = point_vector(graph, at)
    if not math.isfinite(seed):
        raise InputError(f"is {seed}, which is not a finite number", option="seed",
                         values=(seed,))
    slot = _slots(graph)
    if direction is not None:
        if wrt is not None:
            raise InputError("cannot be combined with direction", option="wrt",
                             hint="direction gives one directional derivative; leave out wrt")
        from .points import check_direction
        check_direction(direction, graph.inputs)
        direction = {name: float(direction.get(name, 0.0)) for name in graph.inputs}
        wrt = list(graph.inputs)  # the trace shows every input's tangent, zeros too
    else:
        wrt = wrt_names(graph, wrt)
    values = forward(graph, point)
    partials = local_partials(graph, values, active=_active(graph, [slot[name] for name in wrt]))
    out = graph.output
    derivative = {}
    for label, tangents in _seeds(graph, wrt, direction):  # one sweep alive at a time
        sweep = tangent_sweep(graph, partials, tangents)
        check_tangent(graph, values, sweep)
        derivative[label] = seed * (sweep[out] or 0.0)  # None: the output does not depend on it
        del sweep
    return ForwardResult(
        source=graph.source, value=values[out],
        gradient={} if direction is not None else derivative,
        inputs=dict(zip(graph.inputs, point)), seed=seed, graph=graph, values=values,
        direction=direction, directional=derivative["direction"] if direction is not None else None,
        partials=partials)


def _seeds(graph: Graph, wrt: list[str], direction: dict[str, float] | None):
    """(label, input tangents) of each forward sweep, made one at a time: the direction, or
    each input of ``wrt`` alone."""
    if direction is not None:
        yield "direction", [direction[name] for name in graph.inputs]
        return
    position = {name: i for i, name in enumerate(graph.inputs)}
    for name in wrt:
        tangents = [0.0] * len(graph.inputs)
        tangents[position[name]] = 1.0
        yield name, tangents


@dataclass
class HessianResult:
    """Value, gradient and Hessian: ``hessian[i][j]`` = ∂²f/∂``inputs[i]``∂``inputs[j]``."""

    source: str
    inputs: list[str]  # the rows and columns, in order of first appearance (or of ``wrt``)
    point: dict[str, float]
    value: float
    gradient: dict[str, float]
    hessian: list[list[float]]
    graph: Graph = field(repr=False)

    def check(self, rtol: float | None = None, atol: float | None = None, strict: bool = False):
        """Each row against numerical derivatives of that component of the AD gradient (a
        ``HessianCheck``); the tolerances default to ``eval --check``'s."""
        from .check import DEFAULT_ATOL, DEFAULT_RTOL
        from .check import check_hessian
        position = {name: i for i, name in enumerate(self.graph.inputs)}
        columns = [position[name] for name in self.inputs]
        return check_hessian(self.graph, list(self.point.values()), columns, self.hessian,
                             DEFAULT_RTOL if rtol is None else rtol,
                             DEFAULT_ATOL if atol is None else atol, strict)


def evaluate_hessian(graph: Graph, at: Mapping[str, float], *,
                     wrt: Iterable[str] | None = None) -> HessianResult:
    """The Hessian of a compiled graph at ``at`` by forward-over-reverse (exact, no differences)."""
    from .engine.dual import hessian_matrix
    first = evaluate_graph(graph, at, wrt=wrt)
    names = list(first.gradient)
    position = {name: i for i, name in enumerate(graph.inputs)}
    matrix = hessian_matrix(graph, first.values, [position[n] for n in names], first.active)
    return HessianResult(graph.source, names, first.inputs, first.value, first.gradient, matrix,
                         graph)


def hessian(source: str, at: Mapping[str, float] | None = None, *,
            wrt: Iterable[str] | None = None) -> HessianResult:
    """Parse ``source`` and give its value, gradient and Hessian at ``at``."""
    return evaluate_hessian(compile(source), at or {}, wrt=wrt)


def derivatives(source: str, wrt: Iterable[str] | None = None, order: int = 1) -> dict[str, str]:
    """Each partial derivative of ``source`` (of order ``order`` in one input) as source text."""
    from .symbolic.diff import derivatives_of
    graph = compile(source)
    return derivatives_of(graph, wrt_names(graph, wrt), order)


def evaluate_batch(source: str | Graph, points: Mapping[str, object], *,
                   wrt: Iterable[str] | None = None):
    """Value and gradient at many points at once: ``points`` maps each input to an array-like
    (a scalar stands for a whole column). Gives a :class:`~gradcli.engine.batch.BatchResult`:
    ``values``, ``gradient`` (input name -> array) and ``errors`` (None, or why that row failed,
    its outputs being NaN). Needs NumPy (``pip install "gradcli[batch]"``).

    >>> r = evaluate_batch("log(x)+x*y-sin(y)", {"x": [2.0, 4.0], "y": 3})
    >>> r.gradient["x"].tolist()
    [3.5, 3.25]
    """
    from .engine.batch import evaluate_columns
    graph = compile(source) if isinstance(source, str) else source
    return evaluate_columns(graph, points, wrt=wrt)


def evaluate(source: str, at: Mapping[str, float] | None = None, *,
             wrt: Iterable[str] | None = None, seed: float = 1.0, mode: str = "reverse",
             direction: Mapping[str, float] | None = None) -> Result:
    """Parse, lower and differentiate ``source`` at the point ``at`` (name -> value).

    ``mode="forward"`` (implied by a ``direction``) uses tangent sweeps: see :func:`evaluate_forward`.
    """
    if mode not in ("reverse", "forward"):
        raise InputError(f"unknown mode {mode!r}", hint="use 'reverse' or 'forward'")
    if mode == "forward" or direction is not None:
        return evaluate_forward(compile(source), at or {}, wrt=wrt, direction=direction, seed=seed)
    return evaluate_graph(compile(source), at or {}, wrt=wrt, seed=seed)
