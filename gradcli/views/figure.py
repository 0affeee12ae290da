"""Plots as image files (PNG, SVG, PDF) through matplotlib, the optional ``plot`` extra.

The figure is built with :class:`matplotlib.figure.Figure` directly (no pyplot, no global
state, no display needed) and saved by the file's suffix. SVG keeps its text as text
(``svg.fonttype: none``), so titles and axis labels stay searchable and selectable.
"""

from __future__ import annotations

import numpy as np

from .plot import clipped, panels

DPI = 100


def _figure(size: tuple[int, int]):
    from matplotlib.figure import Figure
    return Figure(figsize=(size[0] / DPI, size[1] / DPI), dpi=DPI, layout="constrained")


def _save(fig, path: str) -> None:
    """The figure as the whole of ``path`` (staged and renamed: :mod:`gradcli.files`)."""
    import matplotlib

    from ..files import staged, write_error
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "gradcli",
                                "pdf.compression": 6}):
        with staged(path) as file:
            try:
                # a fixed date keeps PDF and SVG output the same from run to run
                fig.savefig(file, format=path.rpartition(".")[2].lower(), dpi=DPI,
                            metadata=_metadata(path))
            except OSError as exc:
                raise write_error(path, exc) from None


def _metadata(path: str) -> dict:
    if path.lower().endswith(".svg"):
        return {"Date": None, "Creator": "gradcli"}
    if path.lower().endswith(".pdf"):
        return {"CreationDate": None, "Creator": "gradcli"}
    return {"Software": "gradcli"}


def save_curve(curve, path: str, size: tuple[int, int],
               tangent: tuple[float, float, float] | None = None) -> None:
    """f, its derivatives (and a tangent line) against the swept input, with a legend: in the
    panels the terminal plot draws (:func:`~gradcli.views.plot.panels`), clipped alike."""
    fig = _figure(size)
    found = panels(curve, tangent)
    axes = fig.subplots(max(1, len(found)), 1, sharex=True, squeeze=False)[:, 0]
    for k, (ax, panel) in enumerate(zip(axes, found)):
        for label, y, slope in zip(panel.labels, panel.ys, panel.slopes):
            x, y = clipped(curve.x, y, slope, panel.shown)
            if label.startswith("tangent"):
                ax.plot(x, y, linestyle="--", linewidth=1.2, label=label)
                ax.plot([tangent[0]], [tangent[1]], marker="o", color="black")
            else:
                ax.plot(x, y, label=_tex_label(label, curve.name), linewidth=1.6)
        lo, hi = panel.shown
        pad = (hi - lo) * 0.05
        ax.set_ylim(lo - pad, hi + pad)
        ax.axhline(0, color="0.6", linewidth=0.6)
        ax.set_ylabel("value")
        ax.grid(True, linewidth=0.4, alpha=0.5)
        ax.legend(loc="best")
    axes[0].set_title(curve.source)
    axes[-1].set_xlim(curve.x[0], curve.x[-1])
    axes[-1].set_xlabel(curve.name)
    _save(fig, path)


def _tex_label(label: str, name: str) -> str:
    """``f''`` -> ``f''(x)``: the legend names the variable."""
    return f"{label}({name})"


def save_surface(surface, path: str, size: tuple[int, int], *, log: bool, descent: bool,
                 arrows: int = 20) -> None:
    """Filled contours of f (log-scaled with ``log``) and a quiver of −∇f or ∇f."""
    from .plot import colour_levels, colour_ticks, short
    fig = _figure(size)
    ax = fig.add_subplot()
    levels, lo, hi = colour_levels(surface.f, log)
    shade = np.ma.masked_invalid(levels)
    contour = ax.contourf(surface.x, surface.y, shade, levels=20, cmap="viridis")
    colorbar = fig.colorbar(contour, ax=ax)
    colorbar.set_label(f"f − min f (log scale; min f = {short(lo)})" if log else "f")
    # The colours are levels in [0, 1]: the ticks are round values of f (or, on the log scale,
    # the decades of f − min f) at their levels.
    positions, texts = colour_ticks(lo, hi, log, 6)
    colorbar.set_ticks(positions, labels=texts)
    # A coarse subgrid for the arrows, normalised so every arrow has the same length.
    ny, nx = surface.f.shape
    sy, sx = max(1, ny // arrows), max(1, nx // arrows)
    gx, gy = np.meshgrid(surface.x[::sx], surface.y[::sy])
    u = surface.dx[::sy, ::sx] * (-1 if descent else 1)
    v = surface.dy[::sy, ::sx] * (-1 if descent else 1)
    # Scale each component by the axis span so arrows point the way the picture does.
    xr = surface.x[-1] - surface.x[0]
    yr = surface.y[-1] - surface.y[0]
    us, vs = u / xr, v / yr
    norm = np.hypot(us, vs)
    with np.errstate(invalid="ignore", divide="ignore"):
        us, vs = np.where(norm > 0, us / norm, 0.0), np.where(norm > 0, vs / norm, 0.0)
    ax.quiver(gx, gy, us * xr, vs * yr, color="white", angles="xy", scale_units="xy",
              scale=arrows, width=0.003,
              label="−∇f (descent)" if descent else "∇f (ascent)")
    ax.set_xlabel(surface.names[0])
    ax.set_ylabel(surface.names[1])
    ax.set_title(surface.source)
    ax.legend(loc="upper right", facecolor="0.3", labelcolor="white", framealpha=0.7)
    _save(fig, path)
