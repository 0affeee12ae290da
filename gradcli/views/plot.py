"""Plots in the terminal: curves through uniplot, a heat map with gradient arrows through rich.

- :func:`curve_text`: f, f′ … as lines on one set of axes (uniplot: ticks, legend, title), with
  the y range chosen so that a pole does not flatten the rest, and lines broken at a pole.
- :func:`surface_text`: f as coloured cells (or shades, without colour) and, on a coarse grid,
  an arrow per cell for the direction of −∇f (descent, the default) or ∇f.

Both take sampled records (:mod:`gradcli.sampling`) and never evaluate anything themselves.
"""

from __future__ import annotations

import math

import numpy as np

# Eight directions, counter-clockwise from east; the ASCII set where the output cannot encode them.
ARROWS = "→↗↑↖←↙↓↘"
ASCII_ARROWS = ">/^\\<\\v/"
SHADES = " ░▒▓█"
ASCII_SHADES = " .:*#"
# Viridis at eight stops (perceptually uniform, readable by the colour-blind), interpolated.
_VIRIDIS = [(68, 1, 84), (70, 50, 126), (54, 92, 141), (39, 127, 142), (31, 161, 135),
            (74, 193, 109), (160, 218, 57), (253, 231, 37)]


_ASCII = str.maketrans({"┌": "+", "┐": "+", "└": "+", "┘": "+", "─": "-", "│": "|", "█": "#",
                        "▁": "_", "·": "*", "−": "-", "∇": "grad "})


def to_ascii(text: str) -> str:
    """Frames, blocks and the notation in ASCII, for output that cannot encode them."""
    return text.translate(_ASCII)


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
            pad = (q_hi - q_lo) / 10
            lo, hi = q_lo - pad, q_hi + pad
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
    """The curves of ``curve`` (and the ``(a, f(a), f′(a))`` tangent line) as terminal text."""
    from uniplot import plot_to_string

    labels = [label for label, _ in curve.series]
    ys = [values for _, values in curve.series]
    if tangent is not None:
        a, fa, slope = tangent
        labels.append(f"tangent at {curve.name} = {short(a)}")
        ys.append(fa + slope * (curve.x - a))
    shown = visible_range([y for y in ys])
    if shown is None:
        return f"{curve.source}: no sample is defined on this range\n"
    lo, hi = shown
    span = hi - lo
    xs_out, ys_out = [], []
    for i, y in enumerate(ys):
        slope = ys[i + 1] if i + 1 < len(curve.series) else None
        # Outside the visible range a curve is not drawn (uniplot would clamp it to the border).
        y = np.where((y < lo - span) | (y > hi + span), np.nan, y)
        bx, by = break_at_poles(curve.x, y, slope, span)
        xs_out.append(bx)
        ys_out.append(by)
    text = plot_to_string(
        ys_out, xs_out, lines=True, legend_labels=labels, title=curve.source,
        width=max(10, width - 12), height=max(4, height), y_min=lo, y_max=hi,
        x_min=float(curve.x[0]), x_max=float(curve.x[-1]), color=color,
        # Without colour the block characters of every curve look alike: ASCII gives each
        # curve its own mark (+ x o *), and the legend says which is which.
        **({} if color and not ascii_only else {"character_set": "ascii"}))
    text = text.rstrip("\n") + "\n"
    return to_ascii(text) if ascii_only else text


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


def surface_text(surface, *, log: bool, descent: bool, color: bool, ascii_only: bool,
                 every: tuple[int, int] = (4, 2)):
    """The heat map with arrows as a rich ``Text``: one character per sample, rows top-down.

    ``surface`` is sampled at the cell centres (one sample per character); an arrow stands on
    every ``every[0]``-th column of every ``every[1]``-th row.
    """
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
    ticks = {row: short(surface.y[row]) for row in (0, ny // 2, ny - 1)}
    label_width = max(len(t) for t in ticks.values())
    out = Text()
    out.append(f"{surface.source}\n", style="bold")
    for row in range(ny - 1, -1, -1):  # the top row is the largest y
        tick = ticks.get(row, "")
        out.append(f"{tick:>{label_width}} │")
        for col in range(nx):
            level = levels[row, col]
            on_grid = col % every[0] == every[0] // 2 and row % every[1] == every[1] // 2
            if on_grid:
                # Screen direction: divide by the cell size so arrows follow the picture.
                ch = arrow(sign * dx[row, col] / sx, sign * dy[row, col] / sy, 2.0, ascii_only)
            elif math.isnan(level):
                ch = " "
            elif color:
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
    xl, xr = short(surface.x[0]), short(surface.x[-1])
    out.append(" " * label_width + " └" + "─" * nx + "\n")
    gap = max(1, nx - len(xl) - len(xr))
    out.append(" " * (label_width + 2) + xl + " " * gap + xr + "\n")
    indent = " " * (label_width + 2)
    out.append(f"{indent}across: {surface.names[0]}, up: {surface.names[1]}; arrows: "
               + ("−∇f (descent)" if descent else "∇f (ascent)") + "\n")
    out.append(f"{indent}colour: {'log scale of ' if log else ''}f from {short(lo)} to {short(hi)}")
    if not color:
        out.append(f", shades {shades.strip()} low to high")
    out.append("\n")
    return out
