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


def _kept(n: int, most: int) -> tuple[list, int]:
    """The indices shown of ``n`` when at most ``most`` are (0 = all): the first and last halves
    (the larger first), None between them where the others are left out, and how many those
    are."""
    if not most or n <= most:
        return list(range(n)), 0
    head = (most + 1) // 2
    return list(range(head)) + [None] + list(range(n - (most - head), n)), n - most


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
    texts = {i: _value(values[i], digits) for i in shown if i is not None}
    width = max(len(indices[i]) for i in texts)
    point = max(map(_integer_width, texts.values()))
    lines = [label]
    for i in shown:
        if i is None:
            lines.append(f"  {'…'.rjust(width)}  ({hidden:,} more, not shown; --max-rows 0 "
                         "shows all)")
            continue
        text = texts[i]
        lines.append(f"  {indices[i].rjust(width)}  {' ' * (point - _integer_width(text))}{text}")
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
    for j in cols:
        if j is None:
            sheet.add_column("…", "left")
        else:
            sheet.add_column(f"[:,{j}]", "right")
    for i in rows:
        if i is None:
            sheet.add_gap(hidden_rows, "--max-rows 0 shows all")
            continue
        cells = ["…" if j is None else _value(values[i * m + j], digits) for j in cols]
        sheet.add_row((f"[{i},:]", "cyan"), *cells)
    return sheet


# -- the array trace: a preview of each array, its numbers elided with a count -----------------

PREVIEW = 6  # a vector of up to this many elements is shown whole; a longer one, its ends


def shown(n: int, most: int) -> tuple[list[int], int]:
    """The positions a preview shows of an axis of ``n`` (all, or the first ``most`` - 2 and
    the last) and how many it leaves out, said where they would be (after the first ones)."""
    if n <= most:
        return list(range(n)), 0
    return list(range(most - 2)) + [n - 1], n - (most - 1)


def preview(values, shape: tuple, most: int = PREVIEW, number=None) -> str:
    """An array's numbers: ``[-1.5, -2.5, -3.5]``, a matrix a row a line (``[[1, 2],`` then
    `` [3, 4]]``); a long axis
    shows its first and last numbers and says how many are left out (``… 94 more``). Only the
    numbers shown are read (a proven trace proves each when read). None: ``—`` (no adjoint
    flows). ``number`` writes a number (default: its proven digits, trailing zeros dropped)."""
    from ..engine.rounding import compact
    compact = number or compact  # the graph's boxes: short numbers
    if values is None:
        return "—"
    if not shape:
        return compact(values[0])

    def line(start: int, n: int, step: int, what: str, inner, most: int = most,
             between: str = ", ") -> str:
        picks, hidden = shown(n, most)
        parts = [inner(start + i * step) for i in picks]
        if hidden:
            parts.insert(most - 2, f"… {hidden:,} more{what}")
        return "[" + between.join(parts) + "]"
    if len(shape) == 1:
        return line(0, shape[0], 1, "", lambda k: compact(values[k]))
    if len(shape) == 2:
        n, m = shape
        # a row a line, as NumPy prints a matrix
        return line(0, n, m, " rows", lambda k: line(k, m, 1, "", lambda q: compact(values[q]),
                                                     max(most - 2, 3)), max(most - 3, 3), ",\n ")
    flat = line(0, len(values), 1, "", lambda k: compact(values[k]))
    return f"{flat} (row-major)"
