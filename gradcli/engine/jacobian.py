"""Several outputs: the Jacobian by m adjoint sweeps or n tangent sweeps, and its products.

A program with m outputs and n inputs has an m×n Jacobian. Reverse mode gives it a row at a
time, one adjoint sweep seeded on each output (:func:`rows_by_reverse`); forward mode a column at
a time, one tangent sweep seeded on each input (:func:`columns_by_forward`), the local partials
evaluated once and reused by every sweep. Both read the same rule table, so they agree to
rounding. :func:`choose` picks the mode with fewer sweeps, as the textbooks' tables teach
(Griewank & Walther, ch. 3): reverse when m <= n.

The products need one sweep whatever m and n: a cotangent ``w`` on the outputs gives ``wᵀJ``
(:func:`vjp`, every output seeded at once), a direction ``d`` on the inputs gives ``J·d``
(:func:`jvp`, one tangent sweep read at every output).

>>> from gradcli.engine.graph import compile
>>> from gradcli.engine.forward import forward
>>> g = compile("x*y; x+y")
>>> values = forward(g, [2.0, 3.0])
>>> rows_by_reverse(g, values, [0, 1])[0]
[[3.0, 2.0], [1.0, 1.0]]
>>> columns_by_forward(g, values, [0, 1])[0]
[[3.0, 2.0], [1.0, 1.0]]
"""

from __future__ import annotations

from typing import Sequence

from ..errors import InputError
from .graph import Graph
from .reverse import check_gradient, reverse
from .tangent import check_tangent, local_partials, tangent_sweep

MODES = ("auto", "reverse", "forward")


def choose(mode: str, m: int, n: int) -> str:
    """``"reverse"`` or ``"forward"``: ``mode`` itself, or for ``"auto"`` the one with fewer
    sweeps (m adjoint sweeps against n tangent sweeps; reverse on a tie)."""
    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r}", hint="use " + ", ".join(MODES))
    if mode != "auto":
        return mode
    return "reverse" if m <= n else "forward"


def rows_by_reverse(graph: Graph, values: list[float], columns: Sequence[int],
                    record: bool = False) -> tuple[list[list[float]], list[tuple]]:
    """The Jacobian's rows (one adjoint sweep per output, each over the nodes that output
    reads), at the inputs in positions ``columns``; and each sweep's adjoints of every slot
    with its contributions (recorded with ``record``, for a trace; else empty)."""
    rows, sweeps = [], []
    n_const = graph.n_const
    for i in range(graph.n_outputs):
        one = graph.only(i)
        adjoint, records = reverse(one, values, record=record)
        check_gradient(one, values, adjoint, 1.0)
        rows.append([adjoint[n_const + j] for j in columns])
        sweeps.append((adjoint, records))
    return rows, sweeps


def columns_by_forward(graph: Graph, values: list[float], columns: Sequence[int]):
    """The Jacobian's rows, built a column at a time (one tangent sweep per input in
    ``columns``); also the local partials and each sweep's tangents of every slot."""
    partials = local_partials(graph, values)
    n = len(graph.inputs)
    sweeps = []
    for j in columns:
        tangent = tangent_sweep(graph, partials, [1.0 if i == j else 0.0 for i in range(n)])
        check_tangent(graph, values, tangent)
        sweeps.append(tangent)
    rows = [[_read(sweep, out) for sweep in sweeps] for out in graph.output_slots]
    return rows, partials, sweeps


def _read(tangent: list, slot: int) -> float:
    t = tangent[slot]
    return 0.0 if t is None else t


def vjp(graph: Graph, values: list[float], cotangent: Sequence[float],
        record: bool = False) -> tuple[list[float], Sequence]:
    """Adjoints of every slot for the cotangent ``w`` on the outputs (in order): the inputs'
    adjoints are ``wᵀJ``, from one reverse sweep; and its contributions (recorded with
    ``record``, for a trace; else empty)."""
    adjoint, records = reverse(graph, values, cotangent=cotangent, record=record)
    check_gradient(graph, values, adjoint, 1.0, cotangent=cotangent)
    return adjoint, records


def jvp(graph: Graph, values: list[float], direction: Sequence[float]):
    """``J·d`` (one number per output) for the input tangents ``direction`` (graph order), from
    one tangent sweep; also the local partials and the sweep's tangents of every slot."""
    partials = local_partials(graph, values)
    tangent = tangent_sweep(graph, partials, direction)
    check_tangent(graph, values, tangent)
    return [_read(tangent, out) for out in graph.output_slots], partials, tangent
