"""Plots in the terminal: curves through uniplot, a heat map with gradient arrows through rich.

- :func:`curve_text`: f, f′ … as lines on one set of axes (uniplot: ticks, legend, title), with
  the y range chosen so that a pole does not flatten the rest, and lines broken at a pole.
- :func:`surface_text`: f as coloured cells (or shades, without colour) and, on a coarse grid,
  an arrow per cell for the direction of −∇f (descent, the default) or ∇f.

Both take sampled records (:mod:`gradcli.sampling`) and never evaluate anything themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .notation import to_ascii

# Eight directions, counter-clockwise from east; the ASCII set where the output cannot encode them.
ARROWS = "→↗↑↖←↙↓↘"
ASCII_ARROWS = ">/^\\<\\v/"
SHADES = " ░▒▓█"
ASCII_SHADES = " .:*#"
# Viridis at eight stops (perceptually uniform, readable by the colour-blind), interpolated.
_VIRIDIS = [(68, 1, 84), (70, 50, 126), (54, 92, 141), (39, 127, 142), (31, 161, 135),
            (74, 193, 109), (160, 218, 57), (253, 231, 37)]


def visible_range(series: list[np.ndarray]) -> tuple[float, float] | None:
    """The y range to show: the union of each curve's range, where a curve's range is all its
    finite values unless a few (a pole) would flatten the rest: then its 2nd to 98th
    percentiles, padded by a tenth."""
    ranges = []
    for s in series:
        finite = s[np.isfinite(s)]
        if finite.size == 0:
            continue
        lo, hi = float(finite.min()), float(finite.max())
        q_lo, q_hi = (float(q) for q in np.percentile(finite, [2, 98]))
        if hi - lo > 10 * (q_hi - q_lo) and q_hi > q_lo:
            pad = (q_hi - q_lo) / 10  # never past the data (1/x² stays above 0)
            lo, hi = max(lo, q_lo - pad), min(hi, q_hi + pad)
            # A pole that goes to +∞ on one side and −∞ on the other (1/x, tan): the curve is
            # odd there, and so is the range, from the percentiles of |f|.
            a = float(np.percentile(np.abs(finite), 96))
            if (finite > a).any() and (finite < -a).any():
                a = max(a * 1.1, abs(lo), abs(hi)) if lo < 0 < hi else a * 1.1
                lo, hi = -a, a
        ranges.append((lo, hi))
    if not ranges:
        return None
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return lo, hi


def break_at_poles(x: np.ndarray, y: np.ndarray, slope: np.ndarray | None,
                   span: float) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y`` with a NaN between two samples that a pole (or a jump) separates.

    A step between neighbours larger than half the visible range is a break when the function
    moves against its own slope at both ends (1/x jumps from −∞ to +∞ while falling), or, with
    no slope to go by, always. A NaN sample is a gap by itself.
    """
    dy = np.diff(y)
    big = np.abs(dy) > span / 2
    if slope is not None:
        against = (np.sign(dy) != np.sign(slope[:-1])) & (np.sign(dy) != np.sign(slope[1:]))
        big &= against
    cut = np.flatnonzero(big & np.isfinite(dy))
    if cut.size == 0:
        return x, y
    mid = (x[cut] + x[cut + 1]) / 2
    return np.insert(x, cut + 1, mid), np.insert(y, cut + 1, np.nan)


def curve_text(curve, *, width: int, height: int, color: bool, ascii_only: bool,
               tangent: tuple[float, float, float] | None = None) -> str:
    """The curves of ``curve`` (and the ``(a, f(a), f′(a))`` tangent line) as terminal text, no
    line wider than ``width``. Curves whose visible ranges differ by more than 10× (f and f′′ of
    a steep f) each get a panel of their own, so neither is squashed flat."""
    found = panels(curve, tangent)
    if not found:
        return f"{curve.source}: no sample is defined on this range\n"
    rows = max(4, height // len(found)) if len(found) > 1 else max(4, height)
    out = []
    for k, panel in enumerate(found):
        out += _panel(curve.x, panel.ys, panel.labels, panel.slopes, panel.shown, width, rows,
                      color, ascii_only, title=curve.source if k == 0 else None)
    text = "\n".join(out) + "\n"
    return to_ascii(text) if ascii_only else text


@dataclass
class Panel:
    """One set of axes of a curve plot: its curves (``ys``, each with its label and the slope
    that tells a pole from a steep rise) and the y range shown."""

    ys: list
    labels: list[str]
    slopes: list
    shown: tuple[float, float]


def panels(curve, tangent: tuple[float, float, float] | None = None) -> list[Panel]:
    """How the curves of ``curve`` (and the ``(a, f(a), f′(a))`` tangent line, with f) are laid
    out, in the terminal and in an image alike: one panel, or when their visible ranges differ
    by more than 10× (f and f′′ of a steep f, f and f′ of 1/x) a panel each, so neither is
    squashed flat. None when no sample is defined."""
    labels = [label for label, _ in curve.series]
    ys = [values for _, values in curve.series]
    slopes = [ys[i + 1] if i + 1 < len(ys) else None for i in range(len(ys))]
    if visible_range(ys) is None:
        return []
    ranges = [visible_range([y]) for y in ys]
    spans = [r[1] - r[0] for r in ranges if r is not None]
    if len(spans) > 1 and max(spans) > 10 * min(spans):
        groups = [[i] for i in range(len(ys))]
    else:
        groups = [list(range(len(ys)))]
    shown = [visible_range([ys[i] for i in group]) or (-1.0, 1.0) for group in groups]
    if tangent is not None:
        a, fa, slope = tangent
        labels.append(f"tangent at {curve.name} = {short(a)}")
        ys.append(fa + slope * (curve.x - a))
        slopes.append(None)
        groups[0].append(len(ys) - 1)
    return [Panel([ys[i] for i in group], [labels[i] for i in group],
                  [slopes[i] for i in group], window)
            for group, window in zip(groups, shown)]


def clipped(x: np.ndarray, y: np.ndarray, slope, shown: tuple[float, float]):
    """``x`` and ``y`` as a panel draws them: nothing more than one range past the one shown (a
    pole's spike), and a break where a pole or a jump separates two samples."""
    lo, hi = shown
    span = hi - lo
    y = np.where((y < lo - span) | (y > hi + span), np.nan, y)
    return break_at_poles(x, y, slope, span)


_FRAME_ROW = ("│", "|")


def _panel(x, ys, labels, slopes, shown, width, height, color, ascii_only, title) -> list[str]:
    """One set of axes: uniplot draws the curves in a frame; the ticks on the y axis (right)
    and the x axis (below) are round numbers placed here (:func:`round_ticks`)."""
    from uniplot import plot_to_string
    lo, hi = shown
    span = hi - lo
    yt = round_ticks(lo, hi, max(2, min(6, height // 2)))
    ytexts = tick_texts(yt)
    label_width = max(len(t) for t in ytexts)
    inner = max(10, width - 3 - label_width)  # "│" inner "│ " label
    xs_out, ys_out = [], []
    for y, slope in zip(ys, slopes):
        # Outside the visible range a curve is not drawn (uniplot would clamp it to the border).
        bx, by = clipped(x, y, slope, shown)
        xs_out.append(bx)
        ys_out.append(by)
    x0, x1 = float(x[0]), float(x[-1])
    text = plot_to_string(
        ys_out, xs_out, lines=True, legend_labels=labels, **({"title": title} if title else {}),
        width=inner, height=height, y_min=lo, y_max=hi, x_min=x0, x_max=x1, color=color,
        x_labels=False, y_labels=False, line_length_hard_cap=width,
        # Without colour the block characters of every curve look alike: ASCII gives each
        # curve its own mark (+ x o *), and the legend says which is which.
        **({} if color and not ascii_only else {"character_set": "ascii"}))
    lines = text.rstrip("\n").split("\n")
    body = [i for i, line in enumerate(lines) if line.startswith(_FRAME_ROW)]
    at_row = {}
    for t, label in zip(yt, ytexts):  # row r (from the top) holds [hi - (r+1)·h, hi - r·h)
        r = min(height - 1, int((hi - t) / span * height))
        at_row.setdefault(r, label)
    for r, i in enumerate(body[:height]):
        if r in at_row:
            lines[i] += " " + at_row[r].rjust(label_width)
    bottom = body[height - 1] + 1 if len(body) >= height else len(lines)
    xt = round_ticks(x0, x1, max(3, inner // 10))
    axis = _tick_line(xt, tick_texts(xt), x0, x1, inner, offset=1, width=width)
    lines.insert(bottom + 1, axis)
    return lines


def _tick_line(ticks, texts, lo, hi, cells, offset, width) -> str:
    """A line with each tick's text centred under its column (``cells`` columns from
    ``offset`` span lo..hi), none overlapping another or running past ``width``."""
    line = [" "] * width
    end = -2  # the last column written: none yet
    for t, text in zip(ticks, texts):
        col = offset + min(cells - 1, int((t - lo) / (hi - lo) * cells)) if hi > lo else offset
        start = max(0, min(width - len(text), col - len(text) // 2))
        if start <= end + 1:
            continue  # would touch the previous label
        line[start:start + len(text)] = text
        end = start + len(text) - 1
    return "".join(line).rstrip()


def round_ticks(lo: float, hi: float, most: int = 5) -> list[float]:
    """Round numbers inside [lo, hi] (1, 2 or 5 times a power of ten apart), at most ``most``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    power = 10.0 ** math.floor(math.log10((hi - lo) / max(1, most)))
    for step in (m * power for m in (1, 2, 5, 10, 20, 50, 100)):
        first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
        if last - first + 1 <= most:
            return [k * step + 0.0 for k in range(first, last + 1)] or [lo, hi]
    return [lo, hi]  # pragma: no cover - a hundred powers of ten hold every range


def tick_texts(ticks: list[float]) -> list[str]:
    """The ticks as text that tells each from its neighbours: fixed decimals (``0.05``,
    ``1200``) or scientific (``1e-9``, ``2.5e+6`` style), whichever is shorter; 0 is ``0``."""
    if not ticks:
        return []
    steps = [b - a for a, b in zip(ticks, ticks[1:]) if b > a]
    big = max(abs(t) for t in ticks)
    step = min(steps) if steps else (big or 1.0)
    exponent = math.floor(math.log10(step) + 1e-9)
    fixed = [_fixed(t, max(0, -exponent)) for t in ticks]
    digits = max(0, (math.floor(math.log10(big) + 1e-9) if big else exponent) - exponent)
    sci = [_scientific(t, digits) for t in ticks]
    return fixed if max(map(len, fixed)) <= max(map(len, sci)) else sci


def _fixed(t: float, decimals: int) -> str:
    text = f"{t:.{decimals}f}"
    return "0" if float(text) == 0 else text


def _scientific(t: float, digits: int) -> str:
    if t == 0:
        return "0"
    mantissa, _, exponent = f"{t:.{digits}e}".partition("e")
    return f"{mantissa}e{int(exponent)}"


def short(value: float) -> str:
    """A tick or legend number: six significant digits, no trailing zeros."""
    return f"{value:.6g}"


def _colour(t: float) -> tuple[int, int, int]:
    """The viridis colour at ``t`` in [0, 1]."""
    t = min(1.0, max(0.0, t)) * (len(_VIRIDIS) - 1)
    i = min(int(t), len(_VIRIDIS) - 2)
    f = t - i
    return tuple(round(a + (b - a) * f) for a, b in zip(_VIRIDIS[i], _VIRIDIS[i + 1]))


def colour_levels(f: np.ndarray, log: bool) -> tuple[np.ndarray, float, float]:
    """Each cell's level in [0, 1] (NaN where undefined), and the range it spans.

    With ``log``, levels follow log10(f − min + δ), δ a millionth of the range, so a deep
    narrow valley (Rosenbrock's) shows its shape instead of one flat colour.
    """
    finite = f[np.isfinite(f)]
    if finite.size == 0:
        return np.full(f.shape, np.nan), math.nan, math.nan
    lo, hi = float(finite.min()), float(finite.max())
    if log:
        delta = (hi - lo) * 1e-6 or 1.0
        g = np.log10(f - lo + delta)
        glo, ghi = math.log10(delta), math.log10(hi - lo + delta)
    else:
        g, glo, ghi = f, lo, hi
    scale = (ghi - glo) or 1.0
    return (g - glo) / scale, lo, hi


def arrow(dx: float, dy: float, aspect: float, ascii_only: bool) -> str:
    """The glyph for the direction (dx, dy) in screen units (y up); a dot where it is zero."""
    if not (math.isfinite(dx) and math.isfinite(dy)):
        return " "
    if dx == 0 and dy == 0:
        return "·" if not ascii_only else "."
    angle = math.atan2(dy * aspect, dx)
    index = round(angle / (math.pi / 4)) % 8
    return (ASCII_ARROWS if ascii_only else ARROWS)[index]


def y_ticks(y0: float, y1: float, rows: int) -> tuple[dict[int, str], int]:
    """A heat map's y ticks: row (0 = the y0 row) -> text, round numbers at the rows nearest
    them, and the width of the widest (known before sampling, so the map can fit a width)."""
    ticks = round_ticks(y0, y1, max(2, min(6, rows // 3 + 1)))
    texts = tick_texts(ticks)
    step = (y1 - y0) / max(rows - 1, 1)
    at_row: dict[int, str] = {}
    for t, text in zip(ticks, texts):
        at_row.setdefault(min(rows - 1, max(0, round((t - y0) / step))), text)
    return at_row, max(len(t) for t in texts)


def surface_text(surface, *, log: bool, descent: bool, color: bool, ascii_only: bool,
                 every: tuple[int, int] = (4, 2), width: int | None = None):
    """The heat map with arrows as a rich ``Text``: one character per sample, rows top-down,
    with round ticks on both axes and a colour bar with numbers; no line wider than ``width``
    (default: the map's own width with its labels).

    ``surface`` is sampled at the cell centres (one sample per character); an arrow stands on
    every ``every[0]``-th column of every ``every[1]``-th row.
    """
    import textwrap

    from rich.text import Text

    f, dx, dy = surface.f, surface.dx, surface.dy
    ny, nx = f.shape
    levels, lo, hi = colour_levels(f, log)
    shades = ASCII_SHADES if ascii_only else SHADES
    # A column spans sx in x and a row sy in y; on screen a row is about twice as tall as a
    # column is wide, so a vector (vx, vy) in the data points along (vx / sx, 2·vy / sy).
    sx = (surface.x[-1] - surface.x[0]) / max(nx - 1, 1)
    sy = (surface.y[-1] - surface.y[0]) / max(ny - 1, 1)
    sign = -1.0 if descent else 1.0
    ticks, label_width = y_ticks(float(surface.y[0]), float(surface.y[-1]), ny)
    width = width or label_width + 2 + nx
    out = Text()
    for line in textwrap.wrap(surface.source, width, drop_whitespace=False) or [""]:
        out.append(line + "\n", style="bold")
    for row in range(ny - 1, -1, -1):  # the top row is the largest y
        tick = ticks.get(row, "")
        out.append(f"{tick:>{label_width}} │")
        for col in range(nx):
            level = levels[row, col]
            on_grid = col % every[0] == every[0] // 2 and row % every[1] == every[1] // 2
            if on_grid:
                # Screen direction: divide by the cell size so arrows follow the picture.
                ch = arrow(sign * dx[row, col] / sx, sign * dy[row, col] / sy, 2.0, ascii_only)
            elif math.isnan(level) or color:  # (colour: the cell's background says it)
                ch = " "
            else:
                ch = shades[min(len(shades) - 1, int(level * len(shades)))]
            if color and not math.isnan(level):
                r, g, b = _colour(level)
                fg = "black" if level > 0.6 else "white"
                out.append(ch, style=f"{fg} on rgb({r},{g},{b})")
            else:
                out.append(ch)
        out.append("\n")
    x0, x1 = float(surface.x[0]), float(surface.x[-1])
    out.append(" " * label_width + " └" + "─" * nx + "\n")
    xt = round_ticks(x0, x1, max(2, nx // 10))
    # sample j is at x0 + j·sx: a tick's column is its nearest sample's
    out.append(_tick_line(xt, tick_texts(xt), x0 - sx / 2, x1 + sx / 2, nx,
                          offset=label_width + 2, width=width) + "\n")
    indent = " " * (label_width + 2)
    legend = (f"across: {surface.names[0]}, up: {surface.names[1]}; arrows: "
              + ("−∇f (descent)" if descent else "∇f (ascent)"))
    colour = (f"colour: log10 of f − min f; f from {short(lo)} to {short(hi)}" if log
              else f"colour: f from {short(lo)} to {short(hi)}")
    if not color:
        colour += f"; shades {shades.strip()} low to high"
    for line in textwrap.wrap(legend, width, initial_indent=indent, subsequent_indent=indent) + \
            textwrap.wrap(colour, width, initial_indent=indent, subsequent_indent=indent):
        out.append(line + "\n")
    _colour_bar(out, lo, hi, log, color, shades, indent, min(nx, 40, width - len(indent)), width)
    return out


def colour_ticks(lo: float, hi: float, log: bool, most: int) -> tuple[list[float], list[str]]:
    """Where the numbers of a colour bar stand (levels in [0, 1], as :func:`colour_levels`
    gives them) and their text: round values of f, or with ``log`` the decades of f − min f."""
    if log:
        delta = (hi - lo) * 1e-6 or 1.0
        glo, ghi = math.log10(delta), math.log10(hi - lo + delta)
        decades = range(math.ceil(glo), math.floor(ghi) + 1)
        keep = max(1, math.ceil(len(decades) / max(1, most)))
        values = [10.0 ** k for k in decades][::-1][::keep][::-1]
        return ([(math.log10(v + delta) - glo) / (ghi - glo) for v in values],
                [tick_texts([v])[0] for v in values])
    values = round_ticks(lo, hi, most) if hi > lo else [lo]
    return [(v - lo) / (hi - lo) if hi > lo else 0.5 for v in values], tick_texts(values)


def _colour_bar(out, lo: float, hi: float, log: bool, color: bool, shades: str, indent: str,
                cells: int, width: int) -> None:
    """The colour scale as a bar of ``cells`` cells, low to high, with round numbers under it:
    f itself, or with ``log`` the decades of f − min f (the bar is log10(f − min f + δ))."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or cells < 4:
        return
    out.append(indent)
    for i in range(cells):
        t = (i + 0.5) / cells
        if color:
            r, g, b = _colour(t)
            out.append(" ", style=f"on rgb({r},{g},{b})")
        else:
            out.append(shades[min(len(shades) - 1, int(t * len(shades)))])
    out.append("\n")
    positions, texts = colour_ticks(lo, hi, log, max(2, cells // 8))
    out.append(_tick_line(positions, texts, 0.0, 1.0, cells, offset=len(indent), width=width)
               + "\n")
