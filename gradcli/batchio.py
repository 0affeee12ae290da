"""The batch run: one chunk of rows evaluated, and a whole points file or grid run chunk by chunk.

``gradcli eval EXPR --points FILE`` and ``--grid`` run here. Rows are read in chunks by
:mod:`gradcli.readers`, each chunk is evaluated by :func:`evaluate_chunk` (the batch sweep,
:mod:`gradcli.engine.batch`, with proven digits) and written by :mod:`gradcli.writers` before the
next is read, so memory stays flat however long the file. Dask (``--engine dask``) runs the same
chunk function over the partitions of a Dask DataFrame: :mod:`gradcli.batchdask`.

An output row holds the input row's columns (those the expression does not read pass through
unchanged), the ``--at`` values, then ``f``, then ``df/dx`` for each input, then ``error``:
empty, or why that row failed (its outputs are then NaN).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .errors import FileError, InputError, MissingInputError
from .engine.graph import Graph
from .points import is_number
from .files import refuse_overwriting
from .readers import Rows, _arrow, float_array, number_column
from .writers import open_sink

ERROR_COLUMN = "error"
SHOWN_FAILURES = 3  # failed rows named in the summary
POINTS_THEMSELVES = "the points {source} themselves"  # an output that would overwrite them


def output_names(output: str, wrt: list[str]) -> list[str]:
    """The result columns for one output named ``output``: ``f``, ``df/dx``, ... (several
    outputs each add theirs: ``f1``, ``df1/dx``, ..., ``f2``, ...)."""
    return [output] + [f"d{output}/d{name}" for name in wrt]

# -- one chunk ----------------------------------------------------------------------------------

def _texts(column, name: str):
    """A column of bytes (CSV cells) as text, and the rows whose cell is not UTF-8 (their
    bytes are shown with U+FFFD in place of each bad one; the row fails)."""
    pa = _arrow()
    import pyarrow.compute as pc
    try:
        return pc.cast(column, pa.string()), {}  # checks every cell is UTF-8
    except pa.ArrowInvalid:
        pass
    problems: dict[int, str] = {}
    texts = []
    for i, raw in enumerate(column.to_pylist()):
        try:
            texts.append(None if raw is None else raw.decode("utf-8"))
        except UnicodeDecodeError:
            texts.append(raw.decode("utf-8", "replace"))
            problems[i] = f"the cell of column {name!r} is not UTF-8 text"
    return pa.array(texts, pa.string()), problems


def _utf8(column) -> bool:
    """Whether every cell of a string column is UTF-8."""
    pa = _arrow()
    try:
        column.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


DIGITS_COLUMN = "digits"


def text_array(errors):
    """A column of texts and Nones (the error column, ``--digits N``'s numbers) as an Arrow
    string array, built from its buffers: ``pa.array`` on a list imports pandas when it is
    installed (1.2 s, once per run with a failed row)."""
    import numpy as np
    import pyarrow as pa
    n = len(errors)
    failed = np.flatnonzero(np.not_equal(errors, None))
    texts = [errors[i].encode("utf-8") for i in failed]
    lengths = np.zeros(n, dtype=np.int64)
    lengths[failed] = [len(t) for t in texts]
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    valid = np.zeros(n, dtype=bool)
    valid[failed] = True
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.string(), n, [bitmap, pa.py_buffer(offsets),
                                                  pa.py_buffer(b"".join(texts))],
                                 null_count=n - len(failed))


def result_names(graph: Graph, wrt: list[str], with_digits: bool = False) -> list[str]:
    """The result columns of ``graph``: ``f``, ``df/dx``, … for one output; for several, each
    output and its derivatives in turn: ``f1``, ``df1/dx``, …, ``f2``, ``df2/dx``, …; then
    ``digits`` (``with_digits``)."""
    if graph.n_outputs == 1:
        names = output_names("f", wrt)
    else:
        names = [name for output in graph.output_names for name in output_names(output, wrt)]
    return names + ([DIGITS_COLUMN] if with_digits else [])


def evaluate_chunk(graph: Graph, batch, wrt: list[str], at: dict[str, float],
                   min_digits: int | None = None, with_digits: bool = False):
    """One chunk of rows evaluated: the output record batch (the chunk's columns, the inputs the
    expression reads as numbers, the ``at`` values, the results, the digits column when asked,
    and the error column), and the errors (an array: None, or the row's message). Every row
    has at least ``min_digits`` (default :data:`~gradcli.engine.bounds.MIN_DIGITS`) proven
    significant digits, or fails as not certified."""
    pa = _arrow()
    import numpy as np

    n = batch.num_rows
    columns: dict = {}
    problems: dict[int, str] = {}
    present = set(batch.schema.names)
    given = {}  # the chunk's columns, CSV bytes decoded
    for name, column in zip(batch.schema.names, batch.columns):
        if pa.types.is_string(column.type) and not _utf8(column):
            column = column.cast(pa.binary())  # pyarrow's JSON reader does not check
        if pa.types.is_binary(column.type):
            column, found = _texts(column, name)
            for i, message in found.items():
                problems.setdefault(i, message)
        given[name] = column
    for name in graph.inputs:
        if name in present:
            columns[name], found = number_column(given[name], name)
            for i, message in found.items():
                problems.setdefault(i, message)
        else:
            columns[name] = at[name]
    columns["\0rows"] = np.empty(n)  # fixes the row count when every input is an --at scalar
    from .engine.bounds import MIN_DIGITS, QuickTest
    # the digits column and --digits N need every row's own bound; else the bounds' quick test
    # runs beside the sweep, and only the rows it leaves are bounded one by one
    quick = (QuickTest(graph, columns, wrt=wrt, enough=MIN_DIGITS)
             if min_digits is None and not with_digits else None)
    from .engine.rows import swept
    result, results = swept(graph, columns, wrt, quick)
    errors = result.errors
    if problems:
        rows = np.fromiter(problems, dtype=np.intp, count=len(problems))
        errors[rows] = list(problems.values())
        for values in results:
            values[rows] = np.nan
    if min_digits is None:  # doubles, each with at least MIN_DIGITS proven digits
        from .engine.rows import certify_rows
        digits, uncertified = certify_rows(graph, columns, results, errors, wrt, MIN_DIGITS, n,
                                           quick)
    else:  # --digits N: decimal text of N proven digits
        from .engine.rows import certified_texts
        failed = np.count_nonzero(np.not_equal(errors, None))
        results, digits = certified_texts(graph, columns, errors, wrt, min_digits, n, results)
        uncertified = np.count_nonzero(np.not_equal(errors, None)) - failed
    if with_digits:
        results.append(np.where(np.equal(errors, None), digits, 0).astype(np.int64))
    arrays, names = [], []
    for name in batch.schema.names:
        arrays.append(float_array(columns[name]) if name in graph.inputs else given[name])
        names.append(name)
    for name, value in at.items():
        if name not in present:
            arrays.append(float_array(np.full(n, value)))
            names.append(name)
    for name, values in zip(result_names(graph, wrt, with_digits), results):
        if values.dtype == object:  # --digits N: proven decimal text, None where not certified
            arrays.append(text_array(values))
        else:
            arrays.append(float_array(values) if values.dtype == np.float64 else
                          pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(values)]))
        names.append(name)
    arrays.append(text_array(errors) if result.n_failed or problems or uncertified
                  else pa.nulls(n, pa.string()))
    names.append(ERROR_COLUMN)
    return pa.record_batch(arrays, names=names), errors


def _check_inputs(graph: Graph, rows: Rows, at: dict[str, float]) -> None:
    """Every input the expression reads comes from the rows or from ``at``, and from one only."""
    where = "a range of the grid" if rows.grid else "a column of the points"
    both = [name for name in at if name in rows.columns]
    if both:
        raise InputError(f"gives {both[0]}, which is also {where}",
                         option="at", names=(both[0],), hint="give each input one way")
    missing = [name for name in graph.inputs if name not in rows.columns and name not in at]
    if missing and not rows.grid and all(is_number(c) for c in rows.columns):
        # no header: the first row was read as the column names
        raise InputError(f"the first line of the points is a row of numbers "
                         f"({', '.join(rows.columns[:4])}{', ...' if len(rows.columns) > 4 else ''}"
                         "), not a header naming the columns",
                         hint="add a first line that names the columns, e.g. "
                              + ",".join(graph.inputs[:10]))
    if missing:
        span = graph.input_spans[graph.inputs.index(missing[0])]
        holder = "the grid has no range" if rows.grid else "the points have no column"
        spaced = [c for c in rows.columns if c.strip() in missing and c != c.strip()]
        hint = (f"the column {spaced[0]!r} has spaces around its name: write the header "
                "without them" if spaced else None)
        raise MissingInputError(f"{holder} for {', '.join(missing)}", span,
                                names=tuple(missing), hint=hint)


def output_columns(rows: Rows, at: dict[str, float], wrt: list[str], graph: Graph,
                   with_digits: bool = False) -> list[str]:
    """The names of the output columns, checked for collisions (an input column named ``f``)."""
    names = list(rows.columns) + [n for n in at if n not in rows.columns]
    added = result_names(graph, wrt, with_digits) + [ERROR_COLUMN]
    clash = [n for n in added if n in names]
    if clash:
        raise InputError(f"the points have a column named {clash[0]!r}, which the output uses",
                         hint=f"rename that column: the output adds {', '.join(added)}")
    return names + added

# -- the run ------------------------------------------------------------------------------------

@dataclass
class Summary:
    """What a batch run did: rows written, rows failed, and the first failures (1-based row
    numbers: the N-th data row of the input, the header not counted)."""

    rows: int = 0
    failed: int = 0
    first_failures: list[tuple[int, str]] = field(default_factory=list)

    def add(self, errors, offset: int) -> None:
        import numpy as np
        self.rows += len(errors)
        if errors.tolist().count(None) == len(errors):  # none failed (a list counts Nones fast)
            return
        failed = np.flatnonzero(np.not_equal(errors, None))
        self.failed += len(failed)
        for i in failed[:SHOWN_FAILURES - len(self.first_failures)]:
            self.first_failures.append((offset + int(i) + 1, errors[i]))

    def text(self) -> str:
        """The summary line for standard error (empty when every row computed)."""
        if not self.failed:
            return ""
        shown = "; ".join(f"row {row}: {message}" for row, message in self.first_failures)
        more = self.failed - len(self.first_failures)
        return (f"{self.failed} of {self.rows} points failed (their outputs are NaN; the "
                f"error column says why): {shown}" + (f"; and {more} more" if more else ""))

def run_batch(graph: Graph, rows: Rows, sink_path: str | None, *, as_json: bool = False,
              wrt: Iterable[str] | None = None, at: dict[str, float] | None = None,
              progress: Callable[[int, int | None], None] | None = None,
              min_digits: int | None = None, with_digits: bool = False) -> Summary:
    """Evaluate every row of ``rows`` and write each chunk as it is done; the summary.

    ``at`` fixes inputs the rows do not hold; ``progress(done, total)`` is called after each
    chunk (units: bytes for a CSV file, rows otherwise). ``rows`` is closed when it returns."""
    try:
        return _run_batch(graph, rows, sink_path, as_json, wrt, at, progress, min_digits,
                          with_digits)
    finally:
        rows.close()  # also on an error: no reader thread outlives the run


def _run_batch(graph, rows, sink_path, as_json, wrt, at, progress, min_digits=None,
               with_digits=False) -> Summary:
    from .engine.graph import wrt_names
    _arrow()
    at = dict(at or {})
    wrt = wrt_names(graph, wrt)
    _check_inputs(graph, rows, at)
    names = output_columns(rows, at, wrt, graph, with_digits)
    if sink_path is not None and os.path.isdir(sink_path):
        raise FileError(f"cannot write {sink_path}: it is a directory",
                        hint=f"name a file in it: {os.path.join(sink_path, 'out.csv')}")
    if sink_path is not None and rows.path is not None:
        refuse_overwriting(rows.path, sink_path, what=POINTS_THEMSELVES)
    done = (evaluate_chunk(graph, batch, wrt, at, min_digits, with_digits)
            for batch in rows.chunks)
    first = next(done, None)  # a file that fails in its first block fails before any output
    texts = () if min_digits is None else result_names(graph, wrt)  # --digits N: text
    sink = open_sink(sink_path, as_json, names, (ERROR_COLUMN, *texts))
    summary = Summary()
    try:
        for table, errors in itertools.chain(() if first is None else (first,), done):
            sink.write(table)
            summary.add(errors, summary.rows)
            if progress is not None:
                progress(rows.done(), rows.total)
    except BaseException:  # an error, ^C: no file at the final name, an old one untouched
        sink.abort()
        raise
    sink.close()
    return summary
