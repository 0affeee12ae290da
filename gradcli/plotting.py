"""``gradcli plot``: a request in, text out — samples (:mod:`gradcli.sampling`) drawn by a view.

One input gives curves (f, f′ … and a tangent line), two give a heat map with the gradient
field. Where it goes is decided here, not in the views: a terminal picture (uniplot, rich), an
image file (matplotlib), or CSV of the samples. The optional libraries are imported only here,
and a missing one is an InputError naming the extra that installs it.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
from dataclasses import dataclass, field
from typing import Iterator

from .errors import InputError

PLOT_HINT = 'pip install "gradcli[plot]"'
IMAGE_GRID = 200  # samples per axis of an image's contours
ARROW_GRID = 20  # arrows per axis of an image's quiver


@dataclass
class PlotRequest:
    """What ``gradcli plot`` was asked, as plain values (the CLI fills it from its options)."""

    source: str
    over: list[str]
    at: dict[str, float] = field(default_factory=dict)
    order: int = 1
    tangent: dict[str, float] | None = None
    samples: int | None = None
    width: int | None = None
    height: int | None = None
    size: str = "800x600"
    output: str | None = None
    fmt: str = "text"
    log: bool = False
    descent: bool = True
    ascii_only: bool = False
    of: list[str] | None = None  # the output to draw (a program with several: required)
    graph: object = None  # the source compiled already (the CLI's, which said its warnings)


def _require(*modules: str, what: str) -> None:
    import importlib
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            raise InputError(f"{what} needs {name}, which is not installed",
                             hint=PLOT_HINT) from None


def _ranges(over: list[str]) -> dict[str, tuple[float, float, int | None]]:
    from .points import parse_grid
    ranges: dict[str, tuple[float, float, int | None]] = {}
    for text in over:
        for name, (start, stop, count) in parse_grid(text, "over", default_count=0).items():
            if name in ranges:
                raise InputError(f"gives {name} twice", option="over", names=(name,))
            if not start < stop:
                raise InputError(f"{name}={start:g}:{stop:g}: the start must be below the stop",
                                 option="over", names=(name,), values=(start, stop))
            ranges[name] = (start, stop, count or None)
    if len(ranges) > 2:
        raise InputError(f"gives {len(ranges)} inputs; a plot has one or two", option="over",
                         names=tuple(ranges), hint="fix the others with --at")
    return ranges


def _size(text: str) -> tuple[int, int]:
    w, sep, h = text.lower().partition("x")
    try:
        size = (int(w), int(h))
    except ValueError:
        size = (0, 0)
    if not sep or not (50 <= size[0] <= 10_000 and 50 <= size[1] <= 10_000):
        raise InputError(f"{text!r} is not WIDTHxHEIGHT in pixels (50 to 10000)",
                         option="size", hint="e.g. 800x600")
    return size


def _terminal(request: PlotRequest) -> tuple[int, int, bool, bool]:
    """Width, height, colour, ASCII-only: asked for, or read from the terminal."""
    size = shutil.get_terminal_size((80, 24))
    width = request.width or size.columns
    height = request.height or max(8, min(24, size.lines) - 8)
    color = sys.stdout is not None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    from .views.notation import encodes
    ascii_only = request.ascii_only or not encodes("█▄→∇−", getattr(sys.stdout, "encoding",
                                                                     None) or "ascii")
    return width, height, color, ascii_only


def _csv_number(x: float) -> str:
    return repr(float(x)) if math.isfinite(x) else "nan"


def plot(request: PlotRequest) -> Iterator[tuple[str, str]]:
    """Draw the request: ``(channel, text)`` pieces, channel ``"out"`` or ``"err"``."""
    ranges = _ranges(request.over)
    if request.output and request.fmt != "text":
        raise InputError(f"saves an image and {'--json' if request.fmt == 'json' else 'the csv format'} "
                         "prints the samples: give one", option="output")
    suffix = os.path.splitext(request.output or "")[1].lower()
    if request.output and suffix not in (".png", ".svg", ".pdf"):
        raise InputError(f"{request.output}: the image type {suffix or '(none)'} is not known",
                         option="output", hint="use .png, .svg or .pdf")
    size = _size(request.size)
    _require("numpy", what="gradcli plot")
    if request.output:
        _require("matplotlib", what="an image")
    elif request.fmt == "text":
        _require("uniplot", what="a terminal plot")
    graph = _one_output(request)
    if not ranges:
        ranges = _default_ranges(graph, request)
        yield "err", ("note: no --over given: plotting over "
                      + ",".join(f"{n}={lo:g}:{hi:g}" for n, (lo, hi, _) in ranges.items())
                      + " (choose with --over)\n")
    if len(ranges) == 1:
        yield from _curves(request, graph, ranges, size)
    else:
        if request.tangent is not None or request.order != 1:
            raise InputError("goes with one input; a heat map shows f and its gradient",
                             option="tangent" if request.tangent is not None else "order")
        yield from _surface(request, graph, ranges, size)


DEFAULT_HALF_WIDTH = 5.0  # a range with no --over: 10 wide, around the tangent's point or 0


def _default_ranges(graph, request: PlotRequest) -> dict[str, tuple[float, float, None]]:
    """The range of each input --at leaves free, when --over gives none: around the --tangent
    point, else around 0."""
    free = [name for name in graph.inputs if name not in request.at]
    if not free or len(free) > 2:
        raise InputError("gives no range to plot over", option="over",
                         hint=f"e.g. --over {free[0] if free else 'x'}=-3:3"
                              + (", and fix the other inputs with --at" if len(free) > 2 else ""))
    centre = dict(request.tangent or {})
    return {name: (centre.get(name, 0.0) - DEFAULT_HALF_WIDTH,
                   centre.get(name, 0.0) + DEFAULT_HALF_WIDTH, None) for name in free}


def _one_output(request: PlotRequest):
    """The graph of the output to draw: the program's one output, or the one ``of`` names."""
    from .engine.graph import compile, select_outputs
    graph = request.graph if request.graph is not None else compile(request.source)
    graph = select_outputs(graph, request.of)
    if graph.n_outputs > 1:
        names = graph.output_names
        raise InputError(f"plot draws one output, and the program has {len(names)} "
                         f"({', '.join(names)})", hint=f"pick one with --of {names[0]}")
    return graph


def _curves(request, graph, ranges, size):
    from .sampling import DEFAULT_SAMPLES, sample_curve, tangent_line
    (name, (lo, hi, count)), = ranges.items()
    samples = request.samples or count or DEFAULT_SAMPLES
    curve = sample_curve(graph, name, lo, hi, samples, at=request.at,
                         order=request.order)
    tangent = None
    equation = None
    if request.tangent is not None:
        if list(request.tangent) != [name]:
            raise InputError(f"names {', '.join(request.tangent)}; the plot is over {name}",
                             option="tangent", names=tuple(request.tangent),
                             hint=f"write {name}=1")
        a = request.tangent[name]
        fa, slope = tangent_line(graph, name, a, request.at)
        tangent = (a, fa, slope)
        equation = (f"tangent at {name} = {a:.12g}: y = {fa:.12g} + {slope:.12g}·({name} − "
                    f"{a:.12g})\n")
    note = _undefined_note(curve.undefined, len(curve.x), curve.first_error, curve.uncertified)
    if request.fmt != "text":
        yield from _samples(request, [(name, curve.x), *((_column(label, name), values)
                                                        for label, values in curve.series)], note)
        return
    if request.output:
        from .views.figure import save_curve
        save_curve(curve, request.output, size, tangent)
        yield "err", f"saved {request.output}\n"
        if equation:
            yield "out", equation
        if note:
            yield "err", note
        return
    from .views.notation import to_ascii
    from .views.plot import curve_text
    width, height, color, ascii_only = _terminal(request)
    text = curve_text(curve, width=width, height=height, color=color, ascii_only=ascii_only,
                      tangent=tangent)
    yield "out", text
    if equation:
        equation = _wrapped(equation, width)
        yield "out", equation if not ascii_only else to_ascii(equation)
    if note:
        yield "out", _wrapped(note, width)


def _samples(request: PlotRequest, columns: list, note: str | None):
    """--json or --format csv: the sampled ``columns`` (name, values) on stdout, a note on
    stderr."""
    if request.fmt == "json":
        from .views.json import dumps, plot_json
        yield "out", dumps(plot_json(request.source, request.at, dict(columns))) + "\n"
    else:
        rows = zip(*(values for _, values in columns))
        yield "out", "\n".join([",".join(name for name, _ in columns),
                                *(",".join(map(_csv_number, row)) for row in rows)]) + "\n"
    if note:
        yield "err", note


def _wrapped(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` cells (a terminal plot's lines never wrap)."""
    import textwrap
    return "\n".join(textwrap.wrap(text, width, subsequent_indent="  ")) + "\n"


def _column(label: str, name: str) -> str:
    """CSV column names: ``f``, ``df/dx``, ``d2f/dx2``, ..."""
    k = label.count("'") if "(" not in label else int(label[2:-1])
    if k == 0:
        return "f"
    return f"df/d{name}" if k == 1 else f"d{k}f/d{name}{k}"


def _undefined_note(undefined: int, total: int, first_error: str | None,
                    uncertified: int = 0) -> str | None:
    notes = []
    if undefined:
        notes.append(f"note: f is undefined at {undefined} of {total} samples (first: "
                     f"{first_error}); they are left out\n")
    if uncertified:
        from .engine.bounds import MIN_DIGITS
        notes.append(f"note: {uncertified} of {total} samples could not be certified to "
                     f"{MIN_DIGITS} significant digits; they are left out\n")
    return "".join(notes) or None


def _surface(request, graph, ranges, size):
    from .sampling import sample_surface
    (xn, (x0, x1, cx)), (yn, (y0, y1, cy)) = ranges.items()
    if request.output:
        nx = cx or request.samples or IMAGE_GRID
        ny = cy or request.samples or IMAGE_GRID
    elif request.fmt in ("csv", "json"):
        nx = cx or request.samples or 21
        ny = cy or request.samples or 21
    else:
        from .views.plot import y_ticks
        width, height, color, ascii_only = _terminal(request)
        ny = cy or max(5, height)
        label = y_ticks(y0, y1, ny)[1] + 2  # the y ticks and the frame
        nx = cx or max(8, width - label)
    surface = sample_surface(graph, (xn, yn), (x0, x1), (y0, y1), nx, ny,
                             at=request.at)
    note = _undefined_note(surface.undefined, nx * ny, surface.first_error,
                           surface.uncertified)
    if request.fmt != "text":  # rows: y outer, x inner (x varies fastest)
        import numpy as np
        gx, gy = np.meshgrid(surface.x, surface.y)
        yield from _samples(request, [(xn, gx.ravel()), (yn, gy.ravel()), ("f", surface.f.ravel()),
                                      (f"df/d{xn}", surface.dx.ravel()),
                                      (f"df/d{yn}", surface.dy.ravel())], note)
        return
    if request.output:
        from .views.figure import save_surface
        save_surface(surface, request.output, size, log=request.log, descent=request.descent,
                     arrows=ARROW_GRID)
        yield "err", f"saved {request.output}\n"
        if note:
            yield "err", note
        return
    from rich.console import Console

    from .views.notation import to_ascii
    from .views.plot import surface_text
    text = surface_text(surface, log=request.log, descent=request.descent, color=color,
                        ascii_only=ascii_only, width=max(width, nx + label))
    console = Console(width=max(width, nx + label), force_terminal=color, no_color=not color,
                      color_system="truecolor" if color else None, highlight=False,
                      soft_wrap=True)
    with console.capture() as capture:
        console.print(text, end="")
    yield "out", to_ascii(capture.get()) if ascii_only else capture.get()
    if note:
        yield "out", _wrapped(note, max(width, nx + label))
