"""The samples behind ``gradcli plot``: a function and its derivatives on a range, or on a grid.

A plot is a batch of points: every sample is computed by the NumPy engine
(:func:`gradcli.engine.batch.evaluate_columns`), the same rule table as a single evaluation,
and goes through the same checks as ``gradcli eval --grid``'s rows
(:func:`gradcli.engine.rows.certify_rows`): a sample whose float64 digits the proven error bound
cannot vouch for (10 significant digits) is recomputed by the certified engine, so
``(1-cos(x))/x^2`` near 0 is drawn flat at 0.5, not as the noise of cancelled digits. A sample
that engine cannot certify either is left out (a gap) and counted.

- One input: f and f′ come from one batch sweep (value and gradient). A higher derivative
  f⁽ᵏ⁾ is the batch gradient of the symbolic derivative f⁽ᵏ⁻¹⁾ (``gradcli diff``'s text,
  compiled), so every curve is reverse-mode AD of an expression, exact to rounding.
- Two inputs: f and ∇f on a grid, from one batch sweep.

A sample outside a domain is NaN and counted (the plot draws the rest); it is not an error.
NumPy is imported here, so this module is only imported on the plot path.

>>> c = sample_curve("x^3", "x", -1.0, 1.0, 5, order=2)
>>> [label for label, _ in c.series], c.series[2][1].tolist()
(['f', "f'", "f''"], [-6.0, -3.0, 0.0, 3.0, 6.0])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .engine.batch import evaluate_columns
from .engine.bounds import MIN_DIGITS
from .engine.graph import Graph, compile
from .engine.rows import certify_rows
from .errors import InputError, MissingInputError
from .symbolic.diff import derivatives_of

DEFAULT_SAMPLES = 400
MAX_ORDER = 6
MAX_SAMPLES = 1_000_000


@dataclass
class Curve:
    """f and its derivatives along one input: ``series`` is ``[(label, values), ...]``."""

    source: str
    name: str
    x: np.ndarray
    series: list[tuple[str, np.ndarray]]
    undefined: int  # samples where f itself is undefined
    first_error: str | None  # the engine's message for the first undefined sample
    uncertified: int = 0  # samples left out: their digits could not be certified


@dataclass
class Surface:
    """f and ∇f on a grid: arrays of shape (len(y), len(x)), rows along y."""

    source: str
    names: tuple[str, str]
    x: np.ndarray
    y: np.ndarray
    f: np.ndarray
    dx: np.ndarray
    dy: np.ndarray
    undefined: int
    first_error: str | None
    uncertified: int = 0  # samples left out: their digits could not be certified


def derivative_label(k: int) -> str:
    """``f``, ``f'``, ``f''``, ``f'''``, then ``f(4)`` ... as a plain-text legend label."""
    return "f" + "'" * k if k <= 3 else f"f({k})"


def _free_inputs(graph: Graph, over: list[str], at: Mapping[str, float]) -> None:
    """Every input is either swept or fixed: say which are neither."""
    unknown = [name for name in over if name not in graph.inputs]
    if unknown:
        raise InputError(f"the expression does not read {', '.join(unknown)}",
                         names=tuple(unknown),
                         hint=f"its inputs are: {', '.join(graph.inputs) or '(none)'}")
    missing = [name for name in graph.inputs if name not in over and name not in at]
    if missing:
        raise MissingInputError(f"no value for {'input' if len(missing) == 1 else 'inputs'} "
                                f"{', '.join(missing)}", names=tuple(missing))


def _graph(source) -> Graph:
    """A compiled graph: ``source`` itself, or its text compiled (one output: its only one)."""
    return compile(source) if isinstance(source, str) else source


def _certified(graph: Graph, columns: dict, result, wrt: list[str], n: int) -> tuple[list, int]:
    """The batch result's value and gradient columns (by ``wrt``), every sample with at least
    MIN_DIGITS proven digits (rows short of them recomputed certified), those that could not be
    certified NaN; and how many those are. ``result.errors`` keeps the domain errors only."""
    results = [result.values] + [result.gradient[name] for name in wrt]
    errors = result.errors.copy()
    failed = np.not_equal(errors, None)
    certify_rows(graph, columns, results, errors, wrt, MIN_DIGITS, n)
    lost = np.not_equal(errors, None) & ~failed
    return results, int(np.count_nonzero(lost))


def _first_error(errors: np.ndarray) -> str | None:
    failed = np.flatnonzero(np.not_equal(errors, None))
    return errors[failed[0]] if failed.size else None


def sample_curve(source: "str | Graph", name: str, lo: float, hi: float, samples: int = DEFAULT_SAMPLES,
                 *, at: Mapping[str, float] | None = None, order: int = 1) -> Curve:
    """f, f′ … f⁽ᵒʳᵈᵉʳ⁾ at ``samples`` evenly spaced points of [lo, hi] (both ends included)."""
    at = dict(at or {})
    if not 0 <= order <= MAX_ORDER:
        raise InputError(f"the order is {order}; plots go up to order {MAX_ORDER}")
    if not 2 <= samples <= MAX_SAMPLES:
        raise InputError(f"{samples} samples: give between 2 and {MAX_SAMPLES}")
    graph = _graph(source)
    _free_inputs(graph, [name], at)
    x = np.linspace(lo, hi, samples)
    columns = {**{k: v for k, v in at.items() if k in graph.inputs}, name: x}
    first = evaluate_columns(graph, columns, wrt=[name], gradient=order >= 1)
    results, uncertified = _certified(graph, columns, first, [name] if order >= 1 else [],
                                      samples)
    values = np.where(np.equal(first.errors, None), results[0], np.nan)
    series = [(derivative_label(0), values)]
    if order >= 1:
        series.append((derivative_label(1), _derivative(first.errors, results[1], values)))
    for k in range(2, order + 1):
        # f(k) is the AD gradient of the symbolic f(k-1): exact, and no nested differences.
        text = derivatives_of(graph, [name], k - 1)[name]
        dgraph = compile(text)
        if name not in dgraph.inputs:  # f(k-1) is constant in x: f(k) is 0 where f is defined
            series.append((derivative_label(k), np.where(np.isnan(values), np.nan, 0.0)))
            continue
        dcolumns = {key: columns[key] for key in dgraph.inputs}
        result = evaluate_columns(dgraph, dcolumns, wrt=[name])
        dresults, lost = _certified(dgraph, dcolumns, result, [name], samples)
        uncertified += lost
        series.append((derivative_label(k), _derivative(result.errors, dresults[1], values)))
    undefined = int(np.count_nonzero(np.not_equal(first.errors, None)))
    return Curve(graph.source, name, x, series, undefined, _first_error(first.errors),
                 uncertified)


def _derivative(errors, gradient: np.ndarray, values: np.ndarray) -> np.ndarray:
    d = np.where(np.equal(errors, None), gradient, np.nan)
    return np.where(np.isnan(values), np.nan, d)


def sample_surface(source: "str | Graph", names: tuple[str, str], x_range: tuple[float, float],
                   y_range: tuple[float, float], nx: int, ny: int, *,
                   at: Mapping[str, float] | None = None) -> Surface:
    """f and ∇f on the ``nx`` × ``ny`` grid spanning the two ranges (ends included)."""
    at = dict(at or {})
    if nx * ny > MAX_SAMPLES or nx < 2 or ny < 2:
        raise InputError(f"a {nx} × {ny} grid: give between 2 and {MAX_SAMPLES} samples in all")
    graph = _graph(source)
    _free_inputs(graph, list(names), at)
    x = np.linspace(*x_range, nx)
    y = np.linspace(*y_range, ny)
    gx, gy = np.meshgrid(x, y)  # rows along y: f[i, j] = f(x[j], y[i])
    columns = {**{k: v for k, v in at.items() if k in graph.inputs},
               names[0]: gx.ravel(), names[1]: gy.ravel()}
    result = evaluate_columns(graph, columns, wrt=list(names))
    (f, dx, dy), uncertified = _certified(graph, columns, result, list(names), nx * ny)
    ok = np.equal(result.errors, None)
    f, dx, dy = (np.where(ok, column, np.nan).reshape(ny, nx) for column in (f, dx, dy))
    return Surface(graph.source, tuple(names), x, y, f, dx, dy, int(np.count_nonzero(~ok)),
                   _first_error(result.errors), uncertified)


def tangent_line(source: "str | Graph", name: str, a: float, at: Mapping[str, float] | None = None):
    """``(f(a), f′(a))``: the tangent line y = f(a) + f′(a)(x − a), by one AD evaluation, kept
    where the proven bound vouches for 10 digits and recomputed certified otherwise (as the
    curve's samples are)."""
    from .engine.forward import forward
    from .engine.graph import point_vector
    from .engine.reverse import reverse
    graph = _graph(source)
    _free_inputs(graph, [name], dict(at or {}))
    point = {**dict(at or {}), name: a}
    values = forward(graph, point_vector(graph, point))
    adjoint, _ = reverse(graph, values)
    slope = adjoint[graph.n_const + graph.inputs.index(name)]
    if not math.isfinite(slope):
        raise InputError(f"f'({a}) is not finite: no tangent line at {name} = {a}")
    columns = {key: np.array([float(point[key])]) for key in graph.inputs}
    result = evaluate_columns(graph, columns, wrt=[name])
    (value, slope), lost = _certified(graph, columns, result, [name], 1)
    if lost:
        raise InputError(f"f'({a}) cannot be certified to {MIN_DIGITS} digits: no tangent line "
                         f"at {name} = {a}")
    return float(value[0]), float(slope[0])
