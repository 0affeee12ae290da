"""Array inputs as a person and a program read them: a gradient by an array in that array's
shape. The engine's inputs are the elements (``w[0]``, ``X[1,2]``, :mod:`gradcli.engine.arrays`);
here they are put back together: a vector as a column of numbers with its indices, a matrix as a
table, long ones elided in the middle with a count; for JSON, nested lists.
"""

from __future__ import annotations

from ..engine.arrays import element_names, shape_text
from .layout import Sheet
from .text import _aligned, _value

ARRAY_MAX_COLUMNS = 8  # a matrix wider than this shows its first and last columns


def grouped(entries: dict, arrays: dict[str, tuple]) -> list[tuple[str, tuple, list]]:
    """``entries`` (input or element name -> number, in input order) as ``(name, shape,
    values)``: a scalar input with the shape ``()`` and one value, an array's elements gathered
    under its name, row-major, where its first element stood."""
    owner = {element: name for name, shape in arrays.items()
             for element in element_names(name, shape)}
    out: list[tuple[str, tuple, list]] = []
    where: dict[str, list] = {}
    for key, value in entries.items():
        name = owner.get(key)
        if name is None:
            out.append((key, (), [value]))
        elif name in where:
            where[name].append(value)
        else:
            where[name] = [value]
            out.append((name, arrays[name], where[name]))
    return out


def nested(values: list, shape: tuple):
    """Row-major ``values`` as nested lists of ``shape`` (a scalar for ``()``)."""
    if not shape:
        return values[0]
    for n in reversed(shape[1:]):
        values = [values[i:i + n] for i in range(0, len(values), n)]
    return values


def nest_entries(entries: dict | None, arrays: dict[str, tuple], number=lambda x: x):
    """``entries`` keyed by input name, an array's elements as one nested list (for JSON)."""
    if entries is None:
        return None
    return {name: nested([number(v) for v in values], shape)
            for name, shape, values in grouped(entries, arrays)}


def _kept(n: int, most: int) -> tuple[list[int], int]:
    """The indices shown of ``n`` when at most ``most`` are (0 = all): the first and last halves,
    and how many are left out between them."""
    if not most or n <= most:
        return list(range(n)), 0
    head = (most + 1) // 2
    tail = most - head
    return list(range(head)) + list(range(n - tail, n)), n - most


def gradient_blocks(output: str, value, gradient: dict, arrays: dict[str, tuple],
                    digits: int, max_rows: int, seed: float = 1.0, show=None) -> list:
    """What eval prints for a program with array inputs: ``f = ...`` and the scalar inputs'
    components aligned as for scalars, then each array's gradient in its shape: a vector as
    lines ``[i]  value``, a matrix as a table (rows past ``max_rows`` and columns past
    :data:`ARRAY_MAX_COLUMNS` elided in the middle, with the count)."""
    groups = grouped(gradient, arrays)
    rows = [(output, value)] + [(f"∂{output}/∂{name}", values[0])
                                for name, shape, values in groups if not shape]
    lines = _aligned(rows, digits, show)
    if seed != 1.0:
        lines.append(f"(the gradient is scaled by the seed {seed:g})")
    blocks: list = ["\n".join(lines)]
    for name, shape, values in groups:
        if not shape:
            continue
        label = f"∂{output}/∂{name}, shape {shape_text(shape)}"
        if len(shape) == 1:
            blocks.append(_vector_text(label, values, digits, max_rows))
        elif len(shape) == 2:
            blocks.append(_matrix_sheet(label, shape, values, digits, max_rows))
        else:  # more axes: the elements by their full index
            blocks.append(_vector_text(label, values, digits, max_rows,
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
    for k, i in enumerate(shown):
        if hidden and k == len(shown) - (len(shown) // 2):
            lines.append(f"  {'…'.rjust(width)}  ({hidden:,} more, not shown; --max-rows 0 "
                         "shows all)")
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
    half = len(cols) - len(cols) // 2
    for k, j in enumerate(cols):
        if hidden_cols and k == half:
            sheet.add_column("…", "left")
        sheet.add_column(f"[:,{j}]", "right")
    for k, i in enumerate(rows):
        if hidden_rows and k == len(rows) - len(rows) // 2:
            sheet.add_gap(hidden_rows, "--max-rows 0 shows all")
        cells = [_value(values[i * m + j], digits) for j in cols]
        if hidden_cols:
            cells.insert(half, "…")
        sheet.add_row((f"[{i},:]", "cyan"), *cells)
    return sheet
