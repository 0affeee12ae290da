"""The Python API: ``evaluate(source, at)`` -> :class:`Result` with value, gradient and trace.

>>> r = evaluate("log(x)+x*y-sin(y)", {"x": 2, "y": 3})
>>> round(r.value, 12), r.gradient["x"], round(r.gradient["y"], 12)
(6.5520271725, 3.5, 2.9899924966)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Mapping

from .errors import InputError
from .forward import forward
from .graph import Graph, lower
from .parser import parse
from .reverse import check_gradient, reverse


def compile(source: str) -> Graph:  # noqa: A001 - the natural name, as re.compile
    """Parse and lower ``source`` once; evaluate the graph at many points with :func:`evaluate_graph`."""
    return lower(parse(source), source)


@dataclass
class Result:
    """What an evaluation gives: ``value``, ``gradient`` (input name -> float), ``inputs``."""

    source: str
    value: float
    gradient: dict[str, float]
    inputs: dict[str, float]
    seed: float
    graph: Graph = field(repr=False)
    values: list[float] = field(repr=False)

    @cached_property
    def trace(self):
        """The forward, contribution and adjoint records (computed on first use)."""
        from .trace import build_trace
        adjoint, records = reverse(self.graph, self.values, self.seed, record=True)
        return build_trace(self.graph, self.values, adjoint, records, self.seed)


def point_vector(graph: Graph, at: Mapping[str, float]) -> list[float]:
    """The graph's input values in graph order; a missing input is an :class:`InputError`."""
    missing = [name for name in graph.inputs if name not in at]
    if missing:
        names = ", ".join(missing)
        example = ",".join(f"{n}=1" for n in missing)
        span = graph.input_spans[graph.inputs.index(missing[0])]
        raise InputError(f"no value for {'input' if len(missing) == 1 else 'inputs'} {names}",
                         span, hint=f"add --at {example}")
    return [float(at[name]) for name in graph.inputs]


def evaluate_graph(graph: Graph, at: Mapping[str, float], *, wrt: Iterable[str] | None = None,
                   seed: float = 1.0) -> Result:
    """Value and gradient of a compiled graph at ``at`` (names the graph does not read are ignored)."""
    point = point_vector(graph, at)
    wrt = list(graph.inputs) if wrt is None else list(wrt)
    unknown = [name for name in wrt if name not in graph.inputs]
    if unknown:
        raise InputError(f"--wrt names {', '.join(unknown)}, which the expression does not read",
                         hint=f"its inputs are: {', '.join(graph.inputs) or '(none)'}")
    values = forward(graph, point)
    adjoint, _ = reverse(graph, values, seed)
    check_gradient(graph, values, adjoint, seed)
    n_const = graph.n_const
    slot = {name: n_const + i for i, name in enumerate(graph.inputs)}
    return Result(
        source=graph.source,
        value=values[graph.output],
        gradient={name: adjoint[slot[name]] for name in wrt},
        inputs=dict(zip(graph.inputs, point)),
        seed=seed,
        graph=graph,
        values=values,
    )


def evaluate(source: str, at: Mapping[str, float] | None = None, *,
             wrt: Iterable[str] | None = None, seed: float = 1.0) -> Result:
    """Parse, lower and differentiate ``source`` at the point ``at`` (name -> value)."""
    return evaluate_graph(compile(source), at or {}, wrt=wrt, seed=seed)
