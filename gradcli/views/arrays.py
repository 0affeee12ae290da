"""Array inputs as a person and a program read them: a gradient by an array in that array's
shape. The engine's inputs are the elements (``w[0]``, ``X[1,2]``, :mod:`gradcli.engine.arrays`);
here they are put back together (:func:`gradcli.engine.arrays.grouped`): a vector as a column of
numbers with its indices, a matrix as a table, long ones elided in the middle with a count.
"""

from __future__ import annotations

from ..engine.arrays import element_names, grouped, shape_text
from .layout import Sheet
from .text import _aligned, _value

ARRAY_MAX_COLUMNS = 8  # a matrix wider than this shows its first and last columns


def _kept(n: int, most: int) -> tuple[list[int], int]:
    """The indices shown of ``n`` when at most ``most`` are (0 = all): the first and last halves,
    and how many are left out between them."""
    if not most or n <= most:
        return list(range(n)), 0
    head = _head(most)
    return list(range(head)) + list(range(n - (most - head), n)), n - most


def _head(shown: int) -> int:
    """How many of the ``shown`` indices come before the gap (the rest after it)."""
    return (shown + 1) // 2


def gradient_blocks(output: str, value, gradient: dict, arrays: dict[str, tuple],
                    digits: int, max_rows: int, seed: float = 1.0, show=None,
                    label: str = "∂{output}/∂{name}") -> list:
    """What eval prints for a program with array inputs: ``f = ...`` and the scalar inputs'
    components aligned as for scalars, then each array's gradient in its shape: a vector as
    lines ``[i]  value``, a matrix as a table (rows past ``max_rows`` and columns past
    :data:`ARRAY_MAX_COLUMNS` elided in the middle, with the count). ``label`` names each
    component (a Hessian-vector product's are ``(∇²f·v)[w]``); with ``value`` None, there is no
    ``f = ...`` line."""
    groups = grouped(gradient, arrays)
    rows = [(output, value)] if value is not None else []
    rows += [(label.format(output=output, name=name), values[0])
             for name, shape, values in groups if not shape]
    lines = _aligned(rows, digits, show) if rows else []
    if seed != 1.0:
        lines.append(f"(the gradient is scaled by the seed {seed:g})")
    blocks: list = ["\n".join(lines)] if lines else []
    for name, shape, values in groups:
        if not shape:
            continue
        title = f"{label.format(output=output, name=name)}, shape {shape_text(shape)}"
        if len(shape) == 1:
            blocks.append(_vector_text(title, values, digits, max_rows))
        elif len(shape) == 2:
            blocks.append(_matrix_sheet(title, shape, values, digits, max_rows))
        else:  # more axes: the elements by their full index
            blocks.append(_vector_text(title, values, digits, max_rows,
                                       [n[len(name):] for n in element_names(name, shape)]))
    return blocks


def _vector_text(label: str, values: list, digits: int, max_rows: int,
                 indices: list[str] | None = None) -> str:
    shown, hidden = _kept(len(values), max_rows)
    indices = indices or [f"[{i}]" for i in range(len(values))]
    width = max(len(indices[i]) for i in shown)
    texts = {i: _value(values[i], digits) for i in shown}
    point = max(_integer_width(texts[i]) for i in shown)
    lines = [label]
    gap = f"  {'…'.rjust(width)}  ({hidden:,} more, not shown; --max-rows 0 shows all)"
    for k, i in enumerate(shown):
        if hidden and k == _head(len(shown)):
            lines.append(gap)
        text = texts[i]
        lines.append(f"  {indices[i].rjust(width)}  {' ' * (point - _integer_width(text))}{text}")
    if hidden and _head(len(shown)) == len(shown):  # --max-rows 1: the gap comes last
        lines.append(gap)
    return "\n".join(lines)


def _integer_width(text: str) -> int:
    """Characters before the decimal point (or the exponent, or the end): to align a column."""
    for mark in (".", "e"):
        at = text.find(mark)
        if at >= 0:
            return at
    return len(text)


def _matrix_sheet(label: str, shape: tuple, values: list, digits: int, max_rows: int) -> Sheet:
    n, m = shape
    rows, hidden_rows = _kept(n, max_rows)
    cols, hidden_cols = _kept(m, ARRAY_MAX_COLUMNS)
    if hidden_cols:
        label += f" ({hidden_cols:,} middle columns not shown)"
    sheet = Sheet(label)
    sheet.add_column("", "left")
    half = _head(len(cols))
    for k, j in enumerate(cols):
        if hidden_cols and k == half:
            sheet.add_column("…", "left")
        sheet.add_column(f"[:,{j}]", "right")
    for k, i in enumerate(rows):
        if hidden_rows and k == _head(len(rows)):
            sheet.add_gap(hidden_rows, "--max-rows 0 shows all")
        cells = [_value(values[i * m + j], digits) for j in cols]
        if hidden_cols:
            cells.insert(half, "…")
        sheet.add_row((f"[{i},:]", "cyan"), *cells)
    if hidden_rows and _head(len(rows)) == len(rows):  # --max-rows 1: the gap comes last
        sheet.add_gap(hidden_rows, "--max-rows 0 shows all")
    return sheet
