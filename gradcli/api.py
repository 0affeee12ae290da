"""The Python API: ``evaluate(source, at)`` -> :class:`Result` with value, gradient and trace.

>>> r = evaluate("log(x)+x*y-sin(y)", {"x": 2, "y": 3})
>>> round(r.value, 12), r.gradient["x"], round(r.gradient["y"], 12)
(6.5520271725, 3.5, 2.9899924966)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Iterable, Mapping

from .errors import InputError, NumericalError, ShapeError
from .engine.forward import forward
from .engine.graph import (Graph, missing_inputs, point_vector, select_outputs, wrt_names)
from .engine.graph import compile as compile_graph
from .engine.partials import Partials, local_partials
from .engine.reverse import check_gradient, reverse
from .engine.rounding import DEFAULT_DIGITS

if TYPE_CHECKING:  # the annotations' names; at run time each is imported where it is made
    from .matrices import HessianResult, HvpResult, JacobianResult, ProductResult


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
    # Certified (the default): ``value`` and ``gradient`` are Proven floats whose ``text`` holds
    # ``digits`` proven significant digits; ``float64`` says what plain float64 gives.
    digits: int = 13
    certified: object = field(default=None, repr=False)  # the engine's Certified, or None
    float64: "Float64 | None" = field(default=None, repr=False)
    exact_point: list = field(default_factory=list, repr=False)
    # float64: the reverse sweep's contributions, when it recorded them (``record=True``)
    records: object = field(default=None, repr=False)

    @cached_property
    def partials(self) -> Partials:
        """Every node's local partial derivatives at the point (computed on first use)."""
        return local_partials(self.graph, self.values)

    @cached_property
    def sweep(self) -> tuple[list[float], list]:
        """The reverse sweep with its records: (adjoint of every slot, contributions)."""
        if self.certified is not None:
            c = self.recorded
            return c.adjoint, c.records
        if self.records is not None:  # the sweep that computed the gradient recorded them
            return self.adjoint, self.records
        return reverse(self.graph, self.values, self.seed, record=True, active=self.active)

    @cached_property
    def recorded(self):
        """The certified sweep with every number of the trace proven (computed on first use)."""
        if getattr(self.certified, "values", None):  # the certificate's sweep recorded them
            return self.certified
        if getattr(self.certified, "sweep", None):  # the quick sweep recorded them
            from .engine.traceproof import QuickTrace
            return QuickTrace(self.certified.sweep, self.digits, self._balls)
        return self._balls()

    def _balls(self):
        """The recorded certified sweep on balls."""
        from .engine.certify import certify
        slot = _slots(self.graph)
        earlier = self.certified if getattr(self.certified, "reals", None) else None
        return certify(self.graph, self.exact_point, wrt_slots=[slot[n] for n in self.gradient],
                       seed=self.seed, digits=self.digits, record=True, active=self.active,
                       again=earlier)  # the value's forward balls, reused

    @property
    def shaped_gradient(self) -> dict:
        """The gradient keyed by input name, an array input's as nested lists in its shape
        (``{"w": [g0, g1], "b": g}``, as ``--json`` gives it)."""
        if not self.graph.arrays:
            return dict(self.gradient)
        from .engine.arrays import nest_entries
        return nest_entries(self.gradient, self.graph.arrays)

    @property
    def trace_values(self) -> list:
        """Every slot's value as the trace shows it (proven, when certified)."""
        return self.recorded.values if self.certified is not None else self.values

    @property
    def proven(self) -> bool:
        """Whether ``value`` and ``gradient`` carry proven digits (not ``float64=True``)."""
        return self.certified is not None

    @property
    def active(self):
        """The slots that depend on a differentiated input (:meth:`Graph.active`)."""
        slot = _slots(self.graph)
        return _active(self.graph, [slot[name] for name in self.gradient])

    @cached_property
    def trace(self):
        """The forward, contribution and adjoint records (computed on first use)."""
        from .records import build_trace
        adjoint, records = self.sweep
        return build_trace(self.graph, self.trace_values, adjoint, records, self.seed)


@dataclass
class Float64:
    """What plain float64 gives at the point (``None`` where it fails), how many of the printed
    significant digits of each number it gets right, and the node where it loses them."""

    value: float | None
    gradient: dict[str, float] | None
    value_digits: int
    gradient_digits: dict[str, int]
    error: str | None = None  # why float64 fails here, when it does
    # the slot where it fails, or where it loses its digits (a cancellation): or what finds it
    lost: object = field(default=None, repr=False, compare=False)

    @cached_property
    def lost_at(self) -> int | None:
        """The slot where float64 fails or loses its digits, found when first asked: only the
        text's note shows it, and on a tape of 10^6 nodes finding it takes seconds."""
        return self.lost() if callable(self.lost) else self.lost


def __getattr__(name: str):
    """The matrix-shaped results (:mod:`gradcli.matrices`), made when first asked for."""
    if name in ("HessianResult", "HvpResult", "JacobianResult", "ProductResult"):
        from . import matrices
        return getattr(matrices, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _slots(graph: Graph) -> dict[str, int]:
    """Each input's slot, by name."""
    return {name: graph.n_const + i for i, name in enumerate(graph.inputs)}


def _active(graph: Graph, slots: list[int]):
    """:meth:`Graph.active` for the input ``slots``; None (every non-constant) when that is all."""
    return None if len(slots) == len(graph.inputs) else graph.active(slots)


def _reverse(graph: Graph, at: Mapping[str, float], *, wrt: Iterable[str] | None = None,
             seed: float = 1.0, digits: int = DEFAULT_DIGITS,
             float64: bool = False, quick: bool = False, record: bool = False) -> Result:
    """:func:`evaluate` in reverse mode, of a compiled graph with one output."""
    from .errors import GradcliError, SingularGradientError
    one_output(graph)
    point = point_vector(graph, at)
    if not math.isfinite(seed):
        raise InputError(f"is {seed}, which is not a finite number", option="seed",
                         values=(seed,))
    _check_digits(digits)
    wrt = wrt_names(graph, wrt)
    slot = _slots(graph)
    active = _active(graph, [slot[name] for name in wrt])
    singular = None
    try:
        values = forward(graph, point)
        try:
            # recorded only where the trace reads float64's sweep
            adjoint, records = reverse(graph, values, seed, active=active,
                                       record=record and float64)
        except NumericalError as exc:  # a rule with no value here: sqrt at 0, asin at 1
            raise singular_gradient(graph, point, values, seed, active, wrt, exc) from None
        check_gradient(graph, values, adjoint, seed, active=active)
        failure = None
    except GradcliError as exc:
        if float64:
            raise
        values = adjoint = None
        failure = exc
        if isinstance(exc, SingularGradientError):
            singular = exc
    if float64:
        return Result(source=graph.source, value=values[graph.output],
                      gradient={name: adjoint[slot[name]] for name in wrt},
                      inputs=dict(zip(graph.inputs, point)), seed=seed, graph=graph,
                      values=values, adjoint=adjoint, digits=digits,
                      records=records if record else None)
    exact = [_exact(at, name) for name in graph.inputs]
    if quick and values is not None:
        from .engine.bounds import certify_quickly
        found = certify_quickly(graph, exact, [slot[name] for name in wrt], seed, digits, active,
                                floats=(values, adjoint), record=record)
        if found is not None:
            return _quick_result(graph, point, wrt, slot, seed, digits, values, adjoint, exact,
                                 *found)
    from .engine.certify import certify
    try:
        cert = certify(graph, exact, wrt_slots=[slot[name] for name in wrt], seed=seed,
                       digits=digits, active=active, record=record)
    except NumericalError:
        if singular is None:
            raise
        # The slope truly does not exist at the exact point (float64 might have overflowed
        # where the balls did not): the singular error, with the value proven.
        singular.result.value = certify(graph, exact, wrt_slots=[], digits=digits,
                                        active=graph.active([])).value
        raise singular from None
    gradient = dict(zip(wrt, cert.gradient))
    return Result(
        source=graph.source,
        value=cert.value,
        gradient=gradient,
        inputs=dict(zip(graph.inputs, point)),
        seed=seed,
        graph=graph,
        values=values if values is not None else [float(v) for v in cert.reals],
        adjoint=adjoint,
        digits=digits,
        certified=cert,
        float64=_float64(graph, values, adjoint, cert, wrt, slot, failure),
        exact_point=exact,
    )


def singular_gradient(graph: Graph, point: list[float], values: list[float], seed: float,
                      active, wrt: list[str], failed: NumericalError):
    """The error of a value whose gradient has components that do not exist (``failed``: the
    reverse sweep's error): a :class:`SingularGradientError` holding the result, each such
    component the limit :func:`~gradcli.engine.reverse.reverse_to_limits` finds (±inf, nan)."""
    from .engine.reverse import reverse_to_limits, singular_error
    adjoint, singular = reverse_to_limits(graph, values, seed, active)
    slot = _slots(graph)
    result = Result(graph.source, values[graph.output], {name: adjoint[slot[name]] for name in wrt},
                    dict(zip(graph.inputs, point)), seed, graph, values, adjoint)
    error = singular_error(graph, values, result.gradient, singular, failed)
    error.result = result
    return error


@dataclass
class QuickCertificate:
    """What the quick sweep proved (:func:`gradcli.engine.bounds.certify_quickly`):
    the digits shown are the float64 results', so float64 lost none of them."""

    kinks: list
    digits: int
    short: str | None = None
    sweep: tuple | None = None  # recorded: the Bounded (values, adjoint, records)


def _quick_result(graph, point, wrt, slot, seed, digits, values, adjoint, exact, value_text,
                  gradient_texts, kinks, sweep=None) -> Result:
    from .engine.rounding import Proven
    value = Proven(values[graph.output], value_text, digits, exact=False)
    gradient = {name: Proven(adjoint[slot[name]], text, digits)
                for name, text in zip(wrt, gradient_texts)}
    f64 = Float64(values[graph.output], {name: adjoint[slot[name]] for name in wrt}, digits,
                  {name: digits for name in wrt})
    return Result(source=graph.source, value=value, gradient=gradient,
                  inputs=dict(zip(graph.inputs, point)), seed=seed, graph=graph, values=values,
                  adjoint=adjoint, digits=digits,
                  certified=QuickCertificate(kinks, digits, sweep=sweep), float64=f64,
                  exact_point=exact)


def _check_digits(digits) -> None:
    if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= 100_000:
        raise InputError(f"is {digits!r}: a number of significant digits from 1 to 100000",
                         option="digits")


def _exact(at: Mapping, name: str):
    """What ``at`` gives for ``name`` exactly: the text typed on the command line (a Point), a
    string, or the number itself (a float means its exact binary value)."""
    texts = getattr(at, "texts", None)
    if texts and name in texts:
        return texts[name]
    return at[name]


def _float64(graph, values, adjoint, cert, wrt, slot, failure) -> Float64:
    from .engine.certify import agreement, float64_loss
    from .engine.rounding import FLOAT64_DIGITS
    from .engine.ball import Real
    n = cert.digits
    if values is None:
        return Float64(None, None, 0, {name: 0 for name in wrt}, str(failure),
                       getattr(failure, "slot", None))
    reals = cert.reals
    value_digits = agreement(values[graph.output], reals[graph.output], n)
    gradient_digits = {name: agreement(adjoint[slot[name]], Real.of(g), n)
                       for name, g in zip(wrt, cert.gradient_reals)}
    want = min(n, FLOAT64_DIGITS)

    def lost():
        return float64_loss(graph, values, reals, want)
    loses = value_digits < want or any(d < want for d in gradient_digits.values())
    return Float64(values[graph.output], {name: adjoint[slot[name]] for name in wrt},
                   value_digits, gradient_digits, None, lost if loses else None)


@dataclass
class ForwardResult(Result):
    """A forward-mode evaluation: ``gradient`` by one tangent sweep per input, or, for a
    ``direction``, the single directional derivative ``directional`` (``gradient`` is then empty)."""

    mode: str = "forward"
    direction: dict[str, float] | None = None  # every input's tangent, missing ones as 0
    directional: float | None = None
    partials: tuple = field(default=((), ()), repr=False)

    balls: tuple = field(default=(), repr=False)  # certified: (values, partials) as balls

    @cached_property
    def sweeps(self) -> list:
        """(label, tangents of every slot) of each sweep: swept again when first asked for (the
        evaluation keeps one sweep at a time, so 8,000 inputs do not hold 8,000 sweeps)."""
        from .engine.tangent import tangent_sweep
        seeds = list(_seeds(self.graph, list(self.gradient), self.direction))
        if self.balls:
            return [(label, sweep) for (label, _), sweep in zip(seeds, self.proven_trace[2])]
        return [(label, tangent_sweep(self.graph, self.partials, tangents))
                for label, tangents in seeds]

    @cached_property
    def proven_trace(self) -> tuple:
        """Certified: every slot's value, the partials and each sweep's tangents, proven."""
        from .engine.certify import certify_tangents
        seeds = list(_seeds(self.graph, list(self.gradient), self.direction))
        slot = _slots(self.graph)
        wrt = list(self.gradient) or list(self.graph.inputs)  # a direction moves every input
        active = _active(self.graph, [slot[name] for name in wrt])
        *_, every = certify_tangents(self.graph, self.exact_point, [t for _, t in seeds],
                                     seed=self.seed, digits=self.digits, active=active,
                                     record=True)
        values, first, second, *sweeps = every
        return values, (first, second), sweeps

    @cached_property
    def trace(self):
        """The tangent trace: each node's value, local partials and tangent in every sweep."""
        from .records import tangent_trace
        if self.balls:  # every number shown is proven
            values, partials, _ = self.proven_trace
            return tangent_trace(self.graph, values, partials, self.sweeps)
        return tangent_trace(self.graph, self.values, self.partials, self.sweeps)


def _forward(graph: Graph, at: Mapping[str, float], *, wrt: Iterable[str] | None = None,
             direction: Mapping[str, float] | None = None,
             seed: float = 1.0, digits: int = DEFAULT_DIGITS,
             float64: bool = False) -> ForwardResult:
    """Value and gradient by forward mode, or the derivative along ``direction`` in one sweep,
    certified as :func:`evaluate` is (``float64=True``: plain float64).

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
        check_direction(direction, graph.inputs, graph.arrays)
        direction = {name: float(direction.get(name, 0.0)) for name in graph.inputs}
        wrt = list(graph.inputs)  # the trace shows every input's tangent, zeros too
    else:
        wrt = wrt_names(graph, wrt)
    _check_digits(digits)
    from .errors import GradcliError
    active = _active(graph, [slot[name] for name in wrt])
    out = graph.output
    derivative = {}
    try:
        values = forward(graph, point)
        partials = local_partials(graph, values, active=active)
        for label, tangents in _seeds(graph, wrt, direction):  # one sweep alive at a time
            sweep = tangent_sweep(graph, partials, tangents)
            check_tangent(graph, values, sweep)
            derivative[label] = seed * (sweep[out] or 0.0)  # None: the output does not depend on it
            del sweep
        failure = None
    except GradcliError as exc:
        if float64:
            raise
        values, partials, failure = None, ((), ()), exc
    value = values[out] if values is not None else None
    extra = {}
    if not float64:
        from .engine.ball import Real
        from .engine.certify import agreement, certify_tangents
        exact = [_exact(at, name) for name in graph.inputs]
        seeds = list(_seeds(graph, wrt, direction))
        proven_value, proven_derivatives, balls = certify_tangents(
            graph, exact, [t for _, t in seeds], seed=seed, digits=digits, active=active)
        n = digits
        f64 = Float64(value, dict(derivative) if values is not None else None,
                      agreement(value, Real.of(balls[0]), n) if values is not None else 0,
                      {label: (agreement(derivative[label], Real.of(d), n)
                               if values is not None else 0)
                       for (label, _), d in zip(seeds, balls[1])},
                      None if failure is None else str(failure))
        value = proven_value
        derivative = {label: d for (label, _), d in zip(seeds, proven_derivatives)}
        extra = dict(certified=True, float64=f64, exact_point=exact, balls=balls[2:])
        if values is None:
            values = [float(v) for v in balls[2]]
    return ForwardResult(
        source=graph.source, value=value,
        gradient={} if direction is not None else derivative,
        inputs=dict(zip(graph.inputs, point)), seed=seed, graph=graph, values=values,
        direction=direction, directional=derivative["direction"] if direction is not None else None,
        partials=partials, digits=digits, **extra)


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


def hessian(source: str | Graph, at: Mapping[str, float] | None = None, *,
            wrt: Iterable[str] | None = None, of: str | None = None,
            digits: int = DEFAULT_DIGITS, float64: bool = False) -> HessianResult:
    """The value, gradient and Hessian of ``source`` (a program's text, or a graph from
    :func:`compile`) at ``at``, of the output ``of`` when the program has several, by
    forward-over-reverse (exact, no differences): certified as :func:`evaluate` is, every entry
    a Proven float (``float64=True``: plain float64)."""
    from .matrices import HessianResult
    at = _point(at)
    graph = _graph(source, None if of is None else [of], at)
    one_output(graph, "hessians")
    _check_digits(digits)
    point = point_vector(graph, at)
    names = wrt_names(graph, wrt)
    position = {name: i for i, name in enumerate(graph.inputs)}
    columns = [position[n] for n in names]
    active = _active(graph, [graph.n_const + j for j in columns])
    if float64:
        from .engine.dual import hessian_matrix
        first = _reverse(graph, at, wrt=names, float64=True)
        matrix = hessian_matrix(graph, first.values, columns, first.active)
        return HessianResult(graph.source, names, first.inputs, first.value, first.gradient,
                             matrix, graph, digits)
    from .engine.certify import certify_hessian
    value, gradient, matrix = certify_hessian(graph, [_exact(at, n) for n in graph.inputs],
                                              columns, digits=digits, active=active)
    return HessianResult(graph.source, names, dict(zip(graph.inputs, point)), value,
                         dict(zip(names, gradient)), matrix, graph, digits, proven=True)


def hessians(source: str | Graph, at: Mapping[str, float] | None = None, *,
             wrt: Iterable[str] | None = None,
             of: Iterable[str] | None = None, digits: int = DEFAULT_DIGITS,
             float64: bool = False) -> dict[str, HessianResult]:
    """One :class:`HessianResult` per output (or per name in ``of``), by output name."""
    at = _point(at)
    graph = _graph(source, of, at)
    return {name: hessian(graph.only(i), at, wrt=wrt, digits=digits, float64=float64)
            for i, name in enumerate(graph.output_names)}


def hvp(source: str | Graph, at: Mapping[str, object] | None, direction: Mapping[str, object],
        *, wrt: Iterable[str] | None = None, of: str | None = None,
        digits: int = DEFAULT_DIGITS, float64: bool = False) -> HvpResult:
    """The Hessian-vector product H·v of ``source`` at ``at`` along ``direction`` (input name ->
    tangent, an array input's as an array of its shape; inputs left out are 0), with the value
    and the gradient: forward-over-reverse, one tangent and one dual reverse sweep whatever the
    number of inputs, so it suits inputs too many for the whole Hessian. Certified unless
    ``float64``.

    >>> r = hvp("sum(w^3)", {"w": [1, 2]}, {"w": [1, 0]})
    >>> [x.text for x in r.product.values()]
    ['6.000000000000', '0']
    """
    from .matrices import HvpResult
    from .points import check_direction
    at, direction = _point(at), _point(direction)
    graph = _graph(source, None if of is None else [of], at)
    if graph.n_outputs > 1:
        raise InputError(f"the program has {graph.n_outputs} outputs "
                         f"({', '.join(graph.output_names)}); a Hessian-vector product is of one",
                         hint=f"pick one with of={graph.output_names[0]!r}")
    _check_digits(digits)
    point = point_vector(graph, at)
    names = wrt_names(graph, wrt)
    check_direction(direction, graph.inputs, graph.arrays)
    tangents = [float(direction.get(name, 0.0)) for name in graph.inputs]
    position = {name: i for i, name in enumerate(graph.inputs)}
    columns = [position[n] for n in names]
    moved = [j for j, t in enumerate(tangents) if t]
    active = _active(graph, [graph.n_const + j for j in sorted(set(columns) | set(moved))])
    if float64:
        from .engine.dual import hessian_vector_product
        values = forward(graph, point)
        partials = local_partials(graph, values, active=active)
        gradient, product = hessian_vector_product(graph, values, partials, tangents, active)
        bad = next((j for j in columns if not math.isfinite(product[j])), None)
        if bad is not None:
            raise NumericalError(f"the Hessian-vector product is not finite at "
                                 f"{graph.inputs[bad]}: {product[bad]}",
                                 names=(graph.inputs[bad],), values=(product[bad],))
        value, proven = values[graph.output], False
        gradient, product = [gradient[j] for j in columns], [product[j] for j in columns]
    else:
        from .engine.certify import certify_hvp
        value, gradient, product = certify_hvp(graph, [_exact(at, n) for n in graph.inputs],
                                               tangents, columns, digits=digits, active=active)
        proven = True
    return HvpResult(graph.source, names, dict(zip(graph.inputs, point)), value,
                     dict(zip(names, gradient)), dict(zip(graph.inputs, tangents)),
                     dict(zip(names, product)), graph, digits, proven)


def derivatives(source: str | Graph, wrt: Iterable[str] | None = None, order: int = 1) -> dict[str, str]:
    """Each partial derivative of ``source`` (of order ``order`` in one input) as source text.

    A program with several outputs: see :func:`all_derivatives`."""
    from .limits import check_order
    from .symbolic.diff import derivatives_of
    check_order(order)
    graph = _scalar_inputs(_graph(source), "derivatives")
    one_output(graph, "all_derivatives")
    return derivatives_of(graph, wrt_names(graph, wrt), order)


def all_derivatives(source: str | Graph, wrt: Iterable[str] | None = None, order: int = 1, *,
                    of: Iterable[str] | None = None, mixed: Iterable[str] | None = None,
                    simplify: bool = False) -> dict[str, dict[str, str]]:
    """For each output (or each name in ``of``): its derivatives as source text, keyed by what
    they differentiate by: an input (``order`` times), or with ``mixed`` (a list of inputs,
    differentiated by in turn) the one mixed partial, keyed by the names joined with commas.
    ``simplify``: each also through SymPy's ``simplify`` where that prints shorter (needs
    ``pip install "gradcli[sympy]"``)."""
    from .limits import check_order
    from .symbolic.diff import derivatives_of, mixed_partial
    mixed = None if mixed is None else list(mixed)
    check_order(order if mixed is None else len(mixed))
    if simplify:
        from .symbolic.sympy_bridge import sympy
        sympy()  # not installed: say so before any work
    graph = _scalar_inputs(_graph(source, of), "all_derivatives")
    result = {}
    if mixed is not None:
        mixed = wrt_names(graph, mixed)
        if not mixed:
            raise InputError("--mixed needs at least one input")
        for i, name in enumerate(graph.output_names):
            result[name] = {",".join(mixed): mixed_partial(graph.only(i), mixed, simplify)}
        return result
    wrt = wrt_names(graph, wrt)
    for i, name in enumerate(graph.output_names):
        result[name] = derivatives_of(graph.only(i), wrt, order, simplify)
    return result


def array_derivatives(source: str, shapes: Mapping[str, tuple], wrt: Iterable[str] | None = None
                      ) -> dict[str, str]:
    """The gradient of ``source`` with array inputs of ``shapes`` (name -> shape) as array
    formulas in gradcli's syntax, keyed by input (``wrt``, or every input): ``gradcli eval``
    reads each back with the same inputs and gives the gradient there (``gradcli diff`` with
    ``--shape`` or array values in ``--at``).

    >>> array_derivatives("sum(w^2)", {"w": (3,)})
    {'w': '2*w'}
    """
    from .symbolic.arrays import array_derivatives as build
    return build(source, {name: tuple(shape) for name, shape in shapes.items()},
                 None if wrt is None else list(wrt))


def derivation_steps(source: str | Graph, wrt: Iterable[str] | None = None, *,
                     of: Iterable[str] | None = None) -> list:
    """The derivation of each first partial derivative of ``source`` (of its one output, or
    the one named in ``of``), rule by rule, as :class:`gradcli.symbolic.steps.Derivation`
    records (``gradcli diff --steps``)."""
    from .symbolic.steps import derivation
    graph = _graph(source, of)
    if graph.n_outputs > 1:
        raise InputError(f"a derivation is of one output, and the program has "
                         f"{graph.n_outputs} ({', '.join(graph.output_names)})",
                         hint="pick one with of= (--of on the command line)")
    return [derivation(graph, name) for name in wrt_names(graph, wrt)]


def one_output(graph: Graph, instead: str = "jacobian") -> None:
    """An :class:`InputError` when ``graph`` has several outputs: name them and what to call."""
    if graph.n_outputs > 1:
        names = ", ".join(graph.output_names)
        raise InputError(f"the program has {graph.n_outputs} outputs ({names}); this call "
                         "differentiates one output",
                         hint=f"call gradcli.{instead}(...) for all of them, or pick one with of=")


def evaluate_batch(source: str | Graph, points: Mapping[str, object], *,
                   wrt: Iterable[str] | None = None, of: str | None = None,
                   float64: bool = False, with_digits: bool = False):
    """Value and gradient at many points at once: ``points`` maps each input to an array-like
    (a scalar stands for a whole column). Gives a :class:`~gradcli.engine.batch.BatchResult`:
    ``values``, ``gradient`` (input name -> array) and ``errors`` (None, or why that row failed,
    its outputs being NaN). A program with several outputs: pick one with ``of``, or call
    :func:`jacobian_batch`. Needs NumPy (``pip install "gradcli[batch]"``).

    Every number has at least 10 proven significant digits, as ``eval --points`` writes them:
    a row whose float64 digits the proven error bound cannot vouch for is recomputed by the
    certified engine, or fails as "not certified". ``with_digits=True`` also gives
    ``digits``, each row's proven digits (it bounds every row: slower); ``float64=True``
    skips the bounds (the plain float64 sweep, as fast as it gets).

    >>> r = evaluate_batch("log(x)+x*y-sin(y)", {"x": [2.0, 4.0], "y": 3})
    >>> r.gradient["x"].tolist()
    [3.5, 3.25]
    >>> r = evaluate_batch("(1-cos(x))/x^2", {"x": [1e-8]}, with_digits=True)
    >>> r.values.tolist(), r.digits.tolist()  # float64 alone gives 1.11 here
    ([0.5], [10])
    """
    graph = _batch_graph(source, None if of is None else [of], points)
    one_output(graph, "jacobian_batch")
    if float64:
        from .engine.batch import evaluate_columns
        return evaluate_columns(graph, points, wrt=wrt)
    from .engine.rows import certified_batch
    return certified_batch(graph, points, wrt, with_digits)


def jacobian_batch(source: str | Graph, points: Mapping[str, object], *,
                   of: Iterable[str] | None = None, wrt: Iterable[str] | None = None,
                   float64: bool = False, with_digits: bool = False):
    """Every output's value and the Jacobian at many points at once (``points``, ``float64``
    and ``with_digits`` as for :func:`evaluate_batch`): a
    :class:`~gradcli.engine.batch.JacobianBatch` with ``values`` (output -> array),
    ``jacobian`` (output -> input -> array) and ``errors``.

    >>> r = jacobian_batch("x*y; x+y", {"x": [1.0, 2.0], "y": 3})
    >>> r.outputs, r.values["f1"].tolist(), r.jacobian["f1"]["x"].tolist()
    (['f1', 'f2'], [3.0, 6.0], [3.0, 3.0])
    """
    graph = _batch_graph(source, of, points)
    if float64:
        from .engine.batch import jacobian_columns
        return jacobian_columns(graph, points, wrt=wrt)
    from .engine.rows import certified_batch
    return certified_batch(graph, points, wrt, with_digits)


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
    return _graph(source, of)


def evaluate(source: str | Graph, at: Mapping[str, float] | None = None, *,
             wrt: Iterable[str] | None = None, seed: float = 1.0, mode: str = "reverse",
             direction: Mapping[str, float] | None = None, of: str | None = None,
             digits: int = DEFAULT_DIGITS, float64: bool = False, quick: bool = False,
             record: bool = False) -> Result:
    """The value and gradient of ``source`` (a program's text, or a graph from :func:`compile`,
    parsed and lowered once for many points) at the point ``at`` (name -> value; names it does
    not read are ignored).

    Certified by default: ``value`` and ``gradient`` are :class:`~gradcli.engine.rounding.Proven`
    floats (the exact value correctly rounded to a double) whose ``text`` holds ``digits``
    significant digits, every one proven by ball arithmetic. A value in ``at`` may be a string,
    read as ``--at`` reads it (``"0.1"``, ``"pi/4"``, ``"sqrt(2)"``): that exact number.
    ``float64=True`` computes in plain float64 without certification (faster; ``value`` and
    ``gradient`` are plain floats).

    Only the inputs in ``wrt`` are differentiated: a partial derivative by anything else is never
    computed (``x^y`` at (-2, 3) has ∂f/∂x = 12 although ∂f/∂y is not defined there).
    ``mode="forward"`` (implied by a ``direction``, input name -> tangent, inputs left out 0)
    uses tangent sweeps and gives a :class:`ForwardResult`; with a ``direction`` it holds the one
    directional derivative. A program with several outputs: pick one with ``of``, or call
    :func:`jacobian`.

    ``quick=True`` lets the quick sweep in doubles prove the printed digits without Arb (and
    without importing python-flint): ``value`` and ``gradient`` are then the float64 results,
    which round to the proven digits, not always the exact values correctly rounded to doubles.
    ``record=True``: the trace will be read; the reverse sweep that computes the gradient
    keeps what :attr:`Result.trace` shows, so the trace runs no sweep of its own.

    >>> r = evaluate("(1-cos(x))/x^2", {"x": "1e-8"}, digits=20)
    >>> r.value.text, r.gradient["x"].text, r.float64.value
    ('0.49999999999999999583', '-8.3333333333333332778e-10', 0.0)
    """
    if mode not in ("reverse", "forward", "auto"):
        raise InputError(f"unknown mode {mode!r}", hint="use 'reverse' or 'forward'")
    nodes = not isinstance(source, (str, Graph))  # array nodes, from compile(arrays=True)
    if mode != "forward" and direction is None and of is None and not record \
            and (nodes or (isinstance(source, str) and _has_arrays(at))):
        # (a graph of array nodes checks the point's shapes, scalars too, against its own)
        result = on_array_nodes(source, at, wrt, seed, digits, certified=not float64,
                                quick=quick)
        if result is not None:
            return result
        if nodes:
            source = source.source  # what array nodes leave: the scalar tape, from the text
    at = _point(at)
    graph = _graph(source, None if of is None else [of], at)
    if mode == "forward" or direction is not None:
        return _forward(graph, at, wrt=wrt, direction=direction, seed=seed,
                        digits=digits, float64=float64)
    return _reverse(graph, at, wrt=wrt, seed=seed, digits=digits, float64=float64,
                    quick=quick, record=record)


def _has_arrays(at: Mapping[str, object] | None) -> bool:
    """Whether ``at`` gives an array value (a list, nested lists, a NumPy array)."""
    if getattr(at, "arrays", None):  # a Point's arrays, without making their elements
        return True
    return bool(at) and any(isinstance(value, (list, tuple)) or getattr(value, "ndim", 0)
                            for value in at.values())


def on_array_nodes(source, at: Mapping[str, object], wrt: Iterable[str] | None,
                   seed: float, digits: int = DEFAULT_DIGITS, certified: bool = False,
                   quick: bool = False) -> Result | None:
    """:func:`evaluate` of a program with array inputs on array nodes
    (:mod:`gradcli.engine.arraynodes`: memory proportional to the arrays' sizes; ``source`` a
    program's text or its array nodes from ``compile(..., arrays=True)``): in float64
    (``float64=True``), or ``certified``, every digit proven on Arb balls
    (:mod:`gradcli.engine.arbarrays`), a text typed for a number (``"0.1"``, in a list too)
    read exactly; ``quick``, first by the quick proof (:mod:`gradcli.engine.quickarrays`:
    the float64 sweep with a proven bound on each number), the balls proving only the numbers
    it leaves. None where the scalar tape computes it (and words its errors, notes and
    conventions): several outputs, an array output, a value that is not finite; certified, also
    whatever the balls cannot settle (a kink met exactly, an exact zero, a sign)."""
    from .engine import arraynodes
    from .points import Point
    if isinstance(at, Point):  # its scalars and whole arrays: no entry per element
        numbers = {**at.scalars(), **{name: at.array(name) for name in at.arrays}}
        typed = at.typed() if certified else {}
    else:
        numbers, typed = {}, {}
        for name, value in at.items():
            numbers[name], specs = _typed(value, name)
            if specs is not None:
                typed[name] = specs
    found = arraynodes.evaluate(source, numbers, wrt, seed)
    if found is None:
        return None
    graph, value, gradient, point = found
    if not graph.arrays:
        return None  # no array input read: a scalar program, the scalar tape's
    if certified:
        return _certified_on_array_nodes(graph, value, gradient, point, seed, digits,
                                         {name: typed[name] for name in typed if name in point},
                                         quick)
    return Result(source=graph.source, value=value, gradient=arraynodes.Elements(gradient),
                  inputs=arraynodes.Elements(point), seed=seed, graph=graph, values=[],
                  digits=digits)


def _typed(value, name: str):
    """An input's value as numbers (a text read as ``--at`` reads it, in a list too), and what
    was typed where some of it is text (the text, or the flat list of an array's elements),
    else None."""
    from .points import constant_value
    if isinstance(value, str):
        return constant_value(value, f"the value of {name}"), value
    if not isinstance(value, (list, tuple)):
        return value, None
    flat, level = [], [value]
    while level:  # the elements in row-major order, without recursion
        item = level.pop()
        if isinstance(item, (list, tuple)):
            level.extend(reversed(item))
        else:
            flat.append(item)
    if not any(isinstance(x, str) for x in flat):
        return value, None

    def numbers(item):
        if isinstance(item, (list, tuple)):
            return [numbers(x) for x in item]
        return constant_value(item, name) if isinstance(item, str) else item
    try:
        return numbers(value), flat
    except InputError:  # the point's reading words it, for the element
        return value, None


def _certified_on_array_nodes(graph, value, gradient, point, seed, digits, typed,
                              quick=False):
    """:func:`on_array_nodes`'s certified result from its float64 sweep, or None."""
    if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= 100_000 \
            or not math.isfinite(seed):
        return None  # the scalar tape's error
    known = None
    if quick:
        result, known = _quick_on_array_nodes(graph, value, gradient, point, seed, digits, typed)
        if result is not None:
            return result
    from .engine.arbarrays import Fallback, certify_arrays, float64_digits
    from .engine.certify import Certified
    try:  # (the numbers the quick proof proved are not proven again)
        shown, proofs, bits, ball, balls = certify_arrays(graph, point, list(gradient), seed,
                                                          digits, typed, known)
    except Fallback:
        return None
    # what --float64 (this float64 sweep) gets right; where it loses digits, the note names
    # the numbers, not a node (the scalar tape's float64 would round otherwise)
    quickly = frozenset() if known is None else frozenset(
        id(p) for p in [known[0], *(p for ps in known[1].values() for p in ps)]
        if p is not None)
    value_digits, digit_of = float64_digits(value, gradient, shown, proofs, ball, balls,
                                            digits, quickly)
    from .engine import arraynodes
    # each array whole, its elements' entries made only when read (arraynodes.Elements)
    proven = arraynodes.Elements(proofs, None)
    return Result(source=graph.source, value=shown, gradient=proven,
                  inputs=arraynodes.Elements(point), seed=seed, graph=graph, values=[],
                  digits=digits, certified=Certified(shown, proven.flat(), digits, bits),
                  float64=Float64(value, arraynodes.Elements(gradient),
                                  value_digits, arraynodes.Elements(digit_of, int)))


def _quick_on_array_nodes(graph, value, gradient, point, seed, digits, typed):
    """``(result, known)``: the certified result by the quick proof where it proves every
    number shown (the digits shown are then float64's too), else None and what it proved
    (:func:`gradcli.engine.arbarrays.certify_arrays`'s ``known``, None for nothing)."""
    from .engine.quickarrays import certify_arrays_quickly
    from .engine.rounding import Proven
    from .engine import arraynodes
    found = certify_arrays_quickly(graph, point, value, gradient, list(gradient), seed, digits,
                                   typed)
    if found is None:
        return None, None
    shown, texts = found
    value_proof = None if shown is None else Proven(value, shown, digits)
    proofs = {name: [None if t is None else Proven(x, t, digits)
                     for x, t in zip(_flat(g), texts[name])] for name, g in gradient.items()}
    if value_proof is None or any(None in ps for ps in proofs.values()):
        return None, (value_proof, proofs)
    import numpy as np
    # each array whole, its elements' entries made only when read (arraynodes.Elements)
    arrays = {name: arraynodes.objects(proofs[name], np.shape(g)) for name, g in gradient.items()}
    digit_of = {name: np.full(np.shape(g), digits) for name, g in gradient.items()}
    return Result(source=graph.source, value=value_proof,
                  gradient=arraynodes.Elements(arrays, None),
                  inputs=arraynodes.Elements(point), seed=seed, graph=graph, values=[],
                  digits=digits, certified=QuickCertificate([], digits),
                  float64=Float64(value, arraynodes.Elements(gradient), digits,
                                  arraynodes.Elements(digit_of, int))), None


def _flat(array) -> list:
    """An array's (or a number's) elements in row-major order."""
    return array.ravel().tolist() if hasattr(array, "ravel") else [array]


def _point(at: Mapping[str, object] | None) -> Mapping[str, object]:
    """``at`` with each string value read as ``--at`` reads it (``"0.1"``, ``"pi/4"``,
    ``"sqrt(2)"``): a number, its text kept so the certified engine reads the exact value.
    An array value (a list, nested lists, a NumPy array) is held whole in the point's
    ``arrays``, which gives an entry per element (``w[0]``) when read, and its shape in
    ``shapes``."""
    if not at:
        return {}
    if not any(isinstance(value, (str, list, tuple)) or hasattr(value, "tolist")
               for value in at.values()):
        return at
    from .points import Point, array_entries, constant_value
    point = Point()
    point.texts.update(getattr(at, "texts", {}))
    point.shapes.update(getattr(at, "shapes", {}))
    for name, value in at.items():
        if hasattr(value, "tolist") and not getattr(value, "ndim", 0):  # a NumPy scalar
            value = value.tolist()
        if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):  # (or NumPy array)
            array_entries(point, name, value)
        elif isinstance(value, str):
            point[name] = constant_value(value, f"the value of {name}")
            point.texts[name] = value.strip()
        else:
            point[name] = value
    return point


def _graph(source: str | Graph, of: Iterable[str] | None = None, at=None) -> Graph:
    """The graph of ``source`` (a program's text, compiled here with the shapes of the array
    values in ``at``, or a graph already), with the outputs named in ``of`` (None: all)."""
    if isinstance(source, str):
        return select_outputs(compile_at(source, at), of)
    if not isinstance(source, Graph):
        raise InputError("a graph compiled to array nodes (compile(..., arrays=True)) is "
                         "taken by evaluate alone, in reverse mode, without of or record",
                         hint="pass the program's text, or compile it without arrays=True")
    from .engine.arrays import check_compiled_shapes
    check_compiled_shapes(source.arrays, getattr(at, "shapes", None) or {})
    return select_outputs(source, of)


def _scalar_inputs(graph: Graph, what: str) -> Graph:
    """``graph``, whose inputs must be scalars for ``what`` (symbolic derivatives and generated
    code name each input; array inputs are not there yet: docs/arrays.md)."""
    if graph.arrays:
        raise InputError(f"{what} does not take array inputs yet (the graph was compiled with "
                         f"{', '.join(graph.arrays)} as arrays)",
                         names=tuple(graph.arrays), hint="docs/arrays.md lists what takes them")
    return graph


def compile(source: str, shapes: Mapping[str, tuple] | None = None,  # noqa: A001
            read: bool = False, *, arrays: bool = False):
    """Parse and lower ``source`` once, for many points: the graph every function here takes in
    place of the text (:func:`gradcli.engine.graph.compile`; ``shapes``: the array inputs'
    shapes, name -> shape; ``read``: keep the program as gradcli read it).

    ``arrays=True`` lowers it to array nodes instead, one node per array operation
    (:mod:`gradcli.engine.arraynodes`), which is what :func:`evaluate` runs for array values:
    ``evaluate(graph, at, ...)`` then skips the parsing and lowering of each call, and gives
    what ``evaluate(text, at, ...)`` gives (where array nodes leave a point to the scalar tape,
    it compiles the text for it). Only ``evaluate`` (reverse mode) takes such a graph; it holds
    a program with one output.

    >>> g = compile("sum(w * x)", {"w": (2,), "x": (2,)}, arrays=True)
    >>> evaluate(g, {"w": [1.0, 2.0], "x": [3.0, 4.0]}, wrt=["w"], float64=True).gradient
    {'w[0]': 3.0, 'w[1]': 4.0}
    """
    if not arrays:
        return compile_graph(source, shapes, read)
    if read:
        raise InputError("compile(..., arrays=True) keeps no reading", hint="leave read out")
    from .engine.arraynodes import lower
    graph = lower(source, {name: tuple(shape) for name, shape in (shapes or {}).items()
                           if tuple(shape)})
    if graph is None:
        raise InputError("array nodes hold a program with one output, and this one has several",
                         hint="compile it without arrays=True")
    return graph


def compile_at(source: str, at: Mapping[str, object] | None, read: bool | int = False) -> Graph:
    """:func:`compile` for the point ``at`` (its arrays' shapes, ``at.shapes``), keeping the
    reading with ``read`` (a number: its first that many characters). A shape error that involves an input ``at`` gives no value at all is
    reported as that missing value."""
    try:
        return compile_graph(source, getattr(at, "shapes", None), read)
    except ShapeError as exc:
        at = at or {}
        missing = [(name, span) for name, span in getattr(exc, "inputs_read", ())
                   if name not in at]
        if missing:
            raise missing_inputs([name for name, _ in missing], missing[0][1]) from None
        raise


def annotations(graph: Graph, at: Mapping[str, float]) -> tuple[list[float], list | None, Partials]:
    """What ``gradcli graph --at`` draws: every slot's value, the adjoints (None with several
    outputs: there is an adjoint per output) and the local partials (the edges' labels)."""
    if graph.n_outputs == 1:
        result = _reverse(graph, at)
        return result.values, result.adjoint, result.partials
    values = forward(graph, point_vector(graph, at))
    return values, None, local_partials(graph, values)


# -- several outputs: the Jacobian and its products ---------------------------------------------

def jacobian(source: str | Graph, at: Mapping[str, float] | None = None,
             of: Iterable[str] | None = None, wrt: Iterable[str] | None = None,
             mode: str = "auto", *, digits: int = DEFAULT_DIGITS, float64: bool = False,
             record: bool = False) -> JacobianResult:
    """Every output's value and the Jacobian of ``source`` (text, or a compiled graph) at ``at``,
    by ``mode``: ``"reverse"`` (a sweep per output), ``"forward"`` (a sweep per input) or
    ``"auto"`` (fewer). Certified as :func:`evaluate` is (values and entries are Proven floats;
    the sweeps shown by ``trace`` are float64's); ``float64=True``: plain float64.
    ``record=True``: the reverse sweeps keep what ``trace`` shows (it runs none of its own).

    >>> r = jacobian("x*y; x+y", {"x": 2, "y": 3})
    >>> r.values, r.jacobian["f1"], r.mode
    ({'f1': 6.0, 'f2': 5.0}, {'x': 3.0, 'y': 2.0}, 'reverse')
    """
    from .matrices import JacobianResult
    from .engine.jacobian import choose, columns_by_forward, rows_by_reverse
    at = _point(at)
    graph = _graph(source, of, at)
    point = point_vector(graph, at)
    wrt = wrt_names(graph, wrt)
    columns = [graph.inputs.index(name) for name in wrt]
    chosen = choose(mode, graph.n_outputs, len(wrt))
    sweeps = graph.n_outputs if chosen == "reverse" else len(columns)

    def sweep():
        values = forward(graph, point)
        if chosen == "reverse":
            rows, recorded = rows_by_reverse(graph, values, columns, record)
            detail = tuple(recorded)
        else:
            rows, partials, tangents = columns_by_forward(graph, values, columns)
            detail = (partials, tangents)
        return values, [values[slot] for slot in graph.output_slots], rows, detail

    def certified(exact):
        from .engine.certify import certify
        slots = [graph.n_const + j for j in columns]
        found = [certify(graph.only(i), exact, wrt_slots=slots, digits=digits,
                         active=_active(graph, slots)) for i in range(graph.n_outputs)]
        return [c.value for c in found], [c.gradient for c in found]
    values, output_values, rows, detail = _swept(graph, at, sweep, certified, digits, float64)
    names = list(graph.output_names)
    return JacobianResult(
        values=dict(zip(names, output_values)),
        jacobian={name: dict(zip(wrt, row)) for name, row in zip(names, rows)},
        outputs=names, inputs=wrt, mode=chosen, sweeps=sweeps, auto=mode == "auto",
        source=graph.source, point=dict(zip(graph.inputs, point)), graph=graph,
        slot_values=values, detail=detail, proven=not float64)


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


def _swept(graph: Graph, at: Mapping[str, float], sweep, certified, digits: int,
           float64: bool) -> tuple:
    """The Jacobian's or a product's float64 ``sweep()`` (values, the outputs' values, the
    entries, the trace's detail) and, unless ``float64``, the numbers ``certified(exact point)``
    proves (the outputs' values, the entries) in place of its own: where float64 overflows
    (exp(1000)) and the balls do not, only the certified ones, and no sweep for the trace."""
    try:
        values, output_values, entries, detail = sweep()
    except NumericalError as failure:
        if float64:
            raise
        from .check import Unswept
        values, detail = Unswept(failure), ()
    if not float64:
        _check_digits(digits)
        output_values, entries = certified([_exact(at, n) for n in graph.inputs])
    return values, output_values, entries, detail


def vjp(source: str | Graph, at: Mapping[str, float], cotangent: Mapping[str, float], *,
        of: Iterable[str] | None = None, wrt: Iterable[str] | None = None,
        record: bool = False, digits: int = DEFAULT_DIGITS,
        float64: bool = False) -> ProductResult:
    """``wᵀJ`` of ``source`` (text, or a compiled graph) at ``at`` for the cotangent ``w``
    (output name -> weight; outputs left out weigh 0), in one reverse sweep seeded on every
    output (``record=True``: the sweep keeps what ``trace`` shows); certified unless
    ``float64``."""
    from .matrices import ProductResult
    from .engine.jacobian import vjp
    at = _point(at)
    graph = _graph(source, of, at)
    weights = _output_weights(graph, cotangent)
    point = point_vector(graph, at)
    wrt = wrt_names(graph, wrt)
    columns = [graph.inputs.index(name) for name in wrt]
    names = list(graph.output_names)

    def sweep():
        values = forward(graph, point)
        adjoint, records = vjp(graph, values, weights, record)
        return values, [values[s] for s in graph.output_slots], [
            adjoint[graph.n_const + j] for j in columns], (adjoint, weights, records)

    def certified(exact):
        from .engine.certify import certify_product
        return certify_product(graph, exact, cotangent=weights, columns=columns, digits=digits)
    values, output_values, product, detail = _swept(graph, at, sweep, certified, digits, float64)
    return ProductResult(
        "vjp", dict(zip(names, output_values)), dict(zip(names, weights)),
        dict(zip(wrt, product)), names, graph.source, dict(zip(graph.inputs, point)), graph,
        values, detail, proven=not float64)


def jvp(source: str | Graph, at: Mapping[str, float], direction: Mapping[str, float], *,
        of: Iterable[str] | None = None, digits: int = DEFAULT_DIGITS,
        float64: bool = False) -> ProductResult:
    """``J·d`` of ``source`` (text, or a compiled graph) at ``at`` for the direction ``d``
    (input name -> tangent; inputs left out are 0, names it does not read are ignored), in one
    tangent sweep read at every output; certified unless ``float64``."""
    from .matrices import ProductResult
    from .engine.jacobian import jvp
    at = _point(at)
    graph = _graph(source, of, at)
    point = point_vector(graph, at)
    tangents = [float(direction.get(name, 0.0)) for name in graph.inputs]
    names = list(graph.output_names)

    def sweep():
        values = forward(graph, point)
        product, partials, tangent = jvp(graph, values, tangents)
        return values, [values[s] for s in graph.output_slots], product, (
            partials, [("direction", tangent)])

    def certified(exact):
        from .engine.certify import certify_product
        return certify_product(graph, exact, direction=tangents, digits=digits)
    values, output_values, product, detail = _swept(graph, at, sweep, certified, digits, float64)
    return ProductResult(
        "jvp", dict(zip(names, output_values)), dict(zip(graph.inputs, tangents)),
        dict(zip(names, product)), names, graph.source, dict(zip(graph.inputs, point)), graph,
        values, detail, proven=not float64)


def codegen(source: str | Graph, lang: str = "python", mode: str = "reverse", *,
            name: str = "f", hvp: bool = False, header: bool = False,
            inputs: Iterable[str] | None = None, wrt: Iterable[str] | None = None,
            returns: str = "tuple") -> str:
    """The gradient of ``source`` (text, or a compiled graph) as code to paste: straight-line
    adjoint code in ``lang`` (``python``, ``numpy``, ``jax`` or ``c``) defining the function
    ``name``.

    ``mode``: ``reverse`` (the values and the gradient, or the Jacobian's rows), ``forward``
    (the derivatives along a direction), ``hessian`` (the gradient and the Hessian, by
    forward-over-reverse; with ``hvp=True`` only the Hessian-vector product ``name_hvp``).
    ``inputs``: the parameters' order (every input once; default: order of first appearance);
    ``wrt``: the inputs to differentiate by (default: all; the others stay parameters);
    ``returns="dict"``: the results keyed by input (and output) name, not tuples (not C).
    ``header=True`` gives the C header (prototypes, the inputs' order) instead of the code.
    See docs/codegen.md.
    """
    from .code import generate
    if header and lang != "c":
        raise InputError("is C's", option="header", hint="--lang c")
    generated = generate(_scalar_inputs(_graph(source), "codegen"), lang, mode, name=name,
                         hvp_only=hvp,
                         inputs=None if inputs is None else list(inputs),
                         wrt=None if wrt is None else list(wrt), returns=returns)
    return generated.header if header else generated.code
