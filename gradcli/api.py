"""The Python API: ``evaluate(source, at)`` -> :class:`Result` with value, gradient and trace.

>>> r = evaluate("log(x)+x*y-sin(y)", {"x": 2, "y": 3})
>>> round(r.value, 12), r.gradient["x"], round(r.gradient["y"], 12)
(6.5520271725, 3.5, 2.9899924966)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, Iterable, Mapping

from .errors import InputError
from .engine.forward import forward
from .engine.graph import Graph, compile, point_vector, select_outputs, wrt_names
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
    one_output(graph)
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
    one_output(graph)
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
    one_output(graph, "hessians")
    first = evaluate_graph(graph, at, wrt=wrt)
    names = list(first.gradient)
    position = {name: i for i, name in enumerate(graph.inputs)}
    matrix = hessian_matrix(graph, first.values, [position[n] for n in names], first.active)
    return HessianResult(graph.source, names, first.inputs, first.value, first.gradient, matrix,
                         graph)


def hessian(source: str, at: Mapping[str, float] | None = None, *,
            wrt: Iterable[str] | None = None, of: str | None = None) -> HessianResult:
    """Parse ``source`` and give its value, gradient and Hessian at ``at`` (of the output ``of``
    when the program has several)."""
    graph = compile(source)
    return evaluate_hessian(select_outputs(graph, None if of is None else [of]), at or {}, wrt=wrt)


def hessians(source: str, at: Mapping[str, float] | None = None, *,
             wrt: Iterable[str] | None = None,
             of: Iterable[str] | None = None) -> dict[str, HessianResult]:
    """One :class:`HessianResult` per output (or per name in ``of``), by output name."""
    graph = select_outputs(compile(source), of)
    return {name: evaluate_hessian(graph.only(i), at or {}, wrt=wrt)
            for i, name in enumerate(graph.output_names)}


def derivatives(source: str, wrt: Iterable[str] | None = None, order: int = 1) -> dict[str, str]:
    """Each partial derivative of ``source`` (of order ``order`` in one input) as source text.

    A program with several outputs: see :func:`all_derivatives`."""
    from .symbolic.diff import derivatives_of
    graph = compile(source)
    one_output(graph, "all_derivatives")
    return derivatives_of(graph, wrt_names(graph, wrt), order)


def all_derivatives(source: str, wrt: Iterable[str] | None = None, order: int = 1, *,
                    of: Iterable[str] | None = None,
                    mixed: Iterable[str] | None = None) -> dict[str, dict[str, str]]:
    """For each output (or each name in ``of``): its derivatives as source text, keyed by what
    they differentiate by: an input (``order`` times), or with ``mixed`` (a list of inputs,
    differentiated by in turn) the one mixed partial, keyed by the names joined with commas."""
    from .symbolic.diff import derivatives_of, mixed_partial
    graph = select_outputs(compile(source), of)
    result = {}
    if mixed is not None:
        mixed = wrt_names(graph, mixed)
        if not mixed:
            raise InputError("--mixed needs at least one input")
        for i, name in enumerate(graph.output_names):
            result[name] = {",".join(mixed): mixed_partial(graph.only(i), mixed)}
        return result
    wrt = wrt_names(graph, wrt)
    for i, name in enumerate(graph.output_names):
        result[name] = derivatives_of(graph.only(i), wrt, order)
    return result


def one_output(graph: Graph, instead: str = "jacobian") -> None:
    """An :class:`InputError` when ``graph`` has several outputs: name them and what to call."""
    if graph.n_outputs > 1:
        names = ", ".join(graph.output_names)
        raise InputError(f"the program has {graph.n_outputs} outputs ({names}); this call "
                         "differentiates one output",
                         hint=f"call gradcli.{instead}(...) for all of them, or pick one with of=")


def evaluate_batch(source: str | Graph, points: Mapping[str, object], *,
                   wrt: Iterable[str] | None = None, of: str | None = None):
    """Value and gradient at many points at once: ``points`` maps each input to an array-like
    (a scalar stands for a whole column). Gives a :class:`~gradcli.engine.batch.BatchResult`:
    ``values``, ``gradient`` (input name -> array) and ``errors`` (None, or why that row failed,
    its outputs being NaN). A program with several outputs: pick one with ``of``, or call
    :func:`jacobian_batch`. Needs NumPy (``pip install "gradcli[batch]"``).

    >>> r = evaluate_batch("log(x)+x*y-sin(y)", {"x": [2.0, 4.0], "y": 3})
    >>> r.gradient["x"].tolist()
    [3.5, 3.25]
    """
    graph = _batch_graph(source, None if of is None else [of], points)
    one_output(graph, "jacobian_batch")
    from .engine.batch import evaluate_columns
    return evaluate_columns(graph, points, wrt=wrt)


def jacobian_batch(source: str | Graph, points: Mapping[str, object], *,
                   of: Iterable[str] | None = None, wrt: Iterable[str] | None = None):
    """Every output's value and the Jacobian at many points at once (``points`` as for
    :func:`evaluate_batch`): a :class:`~gradcli.engine.batch.JacobianBatch` with ``values``
    (output -> array), ``jacobian`` (output -> input -> array) and ``errors``.

    >>> r = jacobian_batch("x*y; x+y", {"x": [1.0, 2.0], "y": 3})
    >>> r.outputs, r.values["f1"].tolist(), r.jacobian["f1"]["x"].tolist()
    (['f1', 'f2'], [3.0, 6.0], [3.0, 3.0])
    """
    from .engine.batch import jacobian_columns
    return jacobian_columns(_batch_graph(source, of, points), points, wrt=wrt)


def _batch_graph(source: str | Graph, of: Iterable[str] | None, points: object) -> Graph:
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise InputError("many points at once need NumPy, which is not installed",
                         hint='pip install "gradcli[batch]"') from None
    if not hasattr(points, "keys"):  # a list of rows or None read as "no inputs given"
        raise InputError(f"points is a {type(points).__name__}, not a mapping of input names to "
                         "columns (a dict, or a pandas DataFrame)",
                         hint="e.g. {'x': [1.0, 2.0], 'y': 3.0}")
    return select_outputs(compile(source) if isinstance(source, str) else source, of)


def evaluate(source: str, at: Mapping[str, float] | None = None, *,
             wrt: Iterable[str] | None = None, seed: float = 1.0, mode: str = "reverse",
             direction: Mapping[str, float] | None = None, of: str | None = None) -> Result:
    """Parse, lower and differentiate ``source`` at the point ``at`` (name -> value).

    ``mode="forward"`` (implied by a ``direction``) uses tangent sweeps: see :func:`evaluate_forward`.
    A program with several outputs: pick one with ``of``, or call :func:`jacobian`.
    """
    if mode not in ("reverse", "forward", "auto"):
        raise InputError(f"unknown mode {mode!r}", hint="use 'reverse' or 'forward'")
    graph = select_outputs(compile(source), None if of is None else [of])
    if mode == "forward" or direction is not None:
        return evaluate_forward(graph, at or {}, wrt=wrt, direction=direction, seed=seed)
    return evaluate_graph(graph, at or {}, wrt=wrt, seed=seed)


def annotations(graph: Graph, at: Mapping[str, float]) -> tuple[list[float], list | None, Partials]:
    """What ``gradcli graph --at`` draws: every slot's value, the adjoints (None with several
    outputs: there is an adjoint per output) and the local partials (the edges' labels)."""
    if graph.n_outputs == 1:
        result = evaluate_graph(graph, at)
        return result.values, result.adjoint, result.partials
    values = forward(graph, point_vector(graph, at))
    return values, None, local_partials(graph, values)


# -- several outputs: the Jacobian and its products ---------------------------------------------

@dataclass
class JacobianResult:
    """Every output's value and the Jacobian: ``jacobian[output][input]`` = ∂output/∂input.

    ``outputs`` are the rows (the program's outputs, or ``of``), ``inputs`` the columns (the
    inputs in order of first appearance, or ``wrt``); ``mode`` says how it was computed and
    ``sweeps`` how many sweeps that took.
    """

    kind: ClassVar[str] = "jacobian"  # beside a ProductResult's "vjp" and "jvp"
    values: dict[str, float]
    jacobian: dict[str, dict[str, float]]
    outputs: list[str]
    inputs: list[str]
    mode: str = "reverse"
    sweeps: int = 0
    auto: bool = False  # the mode was chosen by --mode auto
    source: str = ""
    point: dict[str, float] = field(default_factory=dict)
    graph: Graph = field(default=None, repr=False)
    slot_values: list[float] = field(default_factory=list, repr=False)
    detail: tuple = field(default=(), repr=False)  # each sweep's adjoints, or (partials, tangents)

    @property
    def matrix(self) -> list[list[float]]:
        """The Jacobian as rows of numbers, in the order of ``outputs`` and ``inputs``."""
        return [[self.jacobian[o][i] for i in self.inputs] for o in self.outputs]

    @cached_property
    def trace(self):
        """Records of every sweep (see :mod:`gradcli.views.trace`), computed on first use."""
        from .views.trace import jacobian_trace
        return jacobian_trace(self.graph, self.slot_values, self.mode, self.inputs, self.detail)

    def check(self, rtol: float | None = None, atol: float | None = None, expected=None,
              strict: bool = False):
        """Every entry against central differences of its output (a ``JacobianCheck``);
        ``expected`` maps (output, input) to (formula, value)."""
        from .check import DEFAULT_ATOL, DEFAULT_RTOL, check_jacobian
        return check_jacobian(self.graph, self.slot_values, self.inputs, self.matrix,
                              DEFAULT_RTOL if rtol is None else rtol,
                              DEFAULT_ATOL if atol is None else atol, expected, strict)


def evaluate_jacobian(graph: Graph, at: Mapping[str, float], *, wrt: Iterable[str] | None = None,
                      mode: str = "auto") -> JacobianResult:
    """Every output's value and the Jacobian of a compiled graph at ``at``, by ``mode``:
    ``"reverse"`` (a sweep per output), ``"forward"`` (a sweep per input) or ``"auto"`` (fewer)."""
    from .engine.jacobian import choose, columns_by_forward, rows_by_reverse
    point = point_vector(graph, at)
    wrt = wrt_names(graph, wrt)
    columns = [graph.inputs.index(name) for name in wrt]
    chosen = choose(mode, graph.n_outputs, len(wrt))
    values = forward(graph, point)
    if chosen == "reverse":
        rows, adjoints = rows_by_reverse(graph, values, columns)
        detail, sweeps = tuple(adjoints), len(adjoints)
    else:
        rows, partials, tangents = columns_by_forward(graph, values, columns)
        detail, sweeps = (partials, tangents), len(tangents)
    names = list(graph.output_names)
    return JacobianResult(
        values={name: values[slot] for name, slot in zip(names, graph.output_slots)},
        jacobian={name: dict(zip(wrt, row)) for name, row in zip(names, rows)},
        outputs=names, inputs=wrt, mode=chosen, sweeps=sweeps, auto=mode == "auto",
        source=graph.source, point=dict(zip(graph.inputs, point)), graph=graph,
        slot_values=values, detail=detail)


def jacobian(source: str, at: Mapping[str, float] | None = None, of: Iterable[str] | None = None,
             wrt: Iterable[str] | None = None, mode: str = "auto") -> JacobianResult:
    """Parse ``source`` and give every output's value and the Jacobian at ``at``.

    >>> r = jacobian("x*y; x+y", {"x": 2, "y": 3})
    >>> r.values, r.jacobian["f1"], r.mode
    ({'f1': 6.0, 'f2': 5.0}, {'x': 3.0, 'y': 2.0}, 'reverse')
    """
    return evaluate_jacobian(select_outputs(compile(source), of), at or {}, wrt=wrt, mode=mode)


@dataclass
class ProductResult:
    """A Jacobian product from one sweep: ``kind`` "vjp" (``weights`` on the outputs, ``product``
    by input: ``wᵀJ``) or "jvp" (``weights`` on the inputs, ``product`` by output: ``J·d``)."""

    kind: str
    values: dict[str, float]
    weights: dict[str, float]
    product: dict[str, float]
    outputs: list[str]
    source: str = ""
    point: dict[str, float] = field(default_factory=dict)
    graph: Graph = field(default=None, repr=False)
    slot_values: list[float] = field(default_factory=list, repr=False)
    detail: tuple = field(default=(), repr=False)  # the adjoints, or (partials, tangents)

    @property
    def mode(self) -> str:
        return "reverse" if self.kind == "vjp" else "forward"

    @cached_property
    def trace(self):
        from .views.trace import product_trace
        return product_trace(self.graph, self.slot_values, self.kind, self.detail)


def _output_weights(graph: Graph, cotangent: Mapping[str, float]) -> list[float]:
    names = list(graph.output_names)
    unknown = [name for name in cotangent if name not in names]
    if unknown:
        raise InputError(f"names {', '.join(unknown)}, which is not an output", option="seed",
                         names=tuple(unknown), hint=f"the outputs are: {', '.join(names)}")
    weights = []
    for name in names:
        w = float(cotangent.get(name, 0.0))
        if not math.isfinite(w):
            raise InputError(f"of {name} is {w}, which is not a finite number", option="seed",
                             names=(name,), values=(w,))
        weights.append(w)
    return weights


def evaluate_vjp(graph: Graph, at: Mapping[str, float], cotangent: Mapping[str, float], *,
                 wrt: Iterable[str] | None = None) -> ProductResult:
    """``wᵀJ`` for the cotangent ``w`` (output name -> weight; outputs left out weigh 0) in one
    reverse sweep seeded on every output."""
    from .engine.jacobian import vjp
    weights = _output_weights(graph, cotangent)
    point = point_vector(graph, at)
    wrt = wrt_names(graph, wrt)
    values = forward(graph, point)
    adjoint = vjp(graph, values, weights)
    names = list(graph.output_names)
    return ProductResult(
        "vjp", {n: values[s] for n, s in zip(names, graph.output_slots)}, dict(zip(names, weights)),
        {name: adjoint[graph.n_const + graph.inputs.index(name)] for name in wrt}, names,
        graph.source, dict(zip(graph.inputs, point)), graph, values, (adjoint, weights))


def evaluate_jvp(graph: Graph, at: Mapping[str, float],
                 direction: Mapping[str, float]) -> ProductResult:
    """``J·d`` for the direction ``d`` (input name -> tangent; inputs left out are 0, names the
    graph does not read are ignored) in one tangent sweep read at every output."""
    from .engine.jacobian import jvp
    point = point_vector(graph, at)
    tangents = [float(direction.get(name, 0.0)) for name in graph.inputs]
    values = forward(graph, point)
    product, partials, sweep = jvp(graph, values, tangents)
    names = list(graph.output_names)
    return ProductResult(
        "jvp", {n: values[s] for n, s in zip(names, graph.output_slots)},
        dict(zip(graph.inputs, tangents)), dict(zip(names, product)), names, graph.source,
        dict(zip(graph.inputs, point)), graph, values, (partials, [("direction", sweep)]))


def vjp(source: str, at: Mapping[str, float], cotangent: Mapping[str, float], *,
        of: Iterable[str] | None = None, wrt: Iterable[str] | None = None) -> ProductResult:
    """Parse ``source`` and give ``wᵀJ`` at ``at`` for the cotangent ``w`` on its outputs."""
    return evaluate_vjp(select_outputs(compile(source), of), at, cotangent, wrt=wrt)


def jvp(source: str, at: Mapping[str, float], direction: Mapping[str, float], *,
        of: Iterable[str] | None = None) -> ProductResult:
    """Parse ``source`` and give ``J·d`` at ``at`` for the direction ``d`` on its inputs."""
    return evaluate_jvp(select_outputs(compile(source), of), at, direction)


def codegen(source: str, lang: str = "python", mode: str = "reverse", *, name: str = "f",
            hvp: bool = False, header: bool = False) -> str:
    """The gradient of ``source`` as code to paste: straight-line adjoint code in ``lang``
    (``python``, ``numpy``, ``jax`` or ``c``) defining the function ``name``.

    ``mode``: ``reverse`` (the values and the gradient, or the Jacobian's rows), ``forward``
    (the derivatives along a direction), ``hessian`` (the gradient and the Hessian, by
    forward-over-reverse; with ``hvp=True`` only the Hessian-vector product ``name_hvp``).
    ``header=True`` gives the C header (prototypes, the inputs' order) instead of the code.
    See docs/codegen.md.
    """
    from .symbolic.adjoint import build, variable_names
    from .views.codegen import LANGUAGES, generate, header as c_header
    if lang not in LANGUAGES:
        raise InputError(f"{lang!r} is not a language gradcli writes", option="lang",
                         hint=f"choose from: {', '.join(LANGUAGES)}")
    if hvp and mode != "hessian":
        raise InputError(f"goes with the Hessian, not with --mode {mode}",
                         option="hvp", hint="drop --mode, or give --mode hessian")
    if header and lang != "c":
        raise InputError("is C's", option="header", hint="--lang c")
    graph = compile(source)
    program = build(graph, mode, variable_names(graph.inputs, c=lang == "c"))
    if header:
        return c_header(program, name, hvp)
    return generate(program, lang, name, hvp)
