"""Points from files and grids, results to files: the batch engine's input and output, in chunks.

``gradcli eval EXPR --points FILE`` and ``--grid`` run here. Rows are read in chunks (Arrow
record batches), each chunk is evaluated by :func:`gradcli.batch.evaluate_columns` and written
before the next is read, so memory stays flat however long the file. Formats go by suffix:
CSV (with a header; ``-`` is standard input), JSON lines (``.jsonl``) and Parquet (``.parquet``),
all through pyarrow. Dask (``--engine dask``) runs the same chunk function over the partitions of
a Dask DataFrame: :mod:`gradcli.batchdask`.

An output row holds the input row's columns (those the expression does not read pass through
unchanged), the ``--at`` values, then ``f``, then ``df/dx`` for each input, then ``error``:
empty, or why that row failed (its outputs are then NaN).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import os
import sys
import time
import weakref
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .errors import FileError, InputError, MissingInputError, OutputError
from .engine.graph import Graph

CSV_BLOCK_BYTES = 1 << 20  # bytes of CSV per chunk (about 40,000 rows of two numbers)
CHUNK_ROWS = 1 << 16  # rows per chunk of Parquet, JSON lines and grids
OUTPUT_SUFFIXES = (".csv", ".jsonl", ".parquet")
ERROR_COLUMN = "error"
SHOWN_FAILURES = 3  # failed rows named in the summary


def _arrow():
    """pyarrow and NumPy, or an InputError naming the extra that installs them."""
    try:
        import numpy  # noqa: F401
        import pyarrow
    except ImportError:
        raise InputError("many points at once need NumPy and pyarrow, which are not installed",
                         hint='pip install "gradcli[batch]"') from None
    return pyarrow


def output_names(output: str, wrt: list[str]) -> list[str]:
    """The result columns for one output named ``output``: ``f``, ``df/dx``, ... (several
    outputs each add theirs: ``f1``, ``df1/dx``, ..., ``f2``, ...)."""
    return [output] + [f"d{output}/d{name}" for name in wrt]


def file_format(path: str, *, output: bool = False) -> str:
    """"csv", "jsonl" or "parquet", by the file's suffix (points files: anything else is CSV)."""
    lower = path.lower()
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith((".parquet", ".pq")):
        return "parquet"
    if output and not lower.endswith(".csv"):
        raise InputError(f"{path}: unknown file type", option="output",
                         hint="use a name ending in " + ", ".join(OUTPUT_SUFFIXES))
    return "csv"


# -- reading ------------------------------------------------------------------------------------

@dataclass
class Rows:
    """A source of rows in chunks: the column names, the chunks, and progress information."""

    columns: list[str]
    chunks: Iterable  # of pyarrow.RecordBatch
    total: int | None  # in units of ``done()``: bytes for CSV files, rows otherwise; None: unknown
    done: Callable[[], int]
    close: Callable[[], None] = lambda: None  # releases the file and any reader thread
    grid: bool = False  # the rows of a grid, not of a file (its columns are ranges)
    path: str | None = None  # the file read, if any


class _Counted(io.RawIOBase):
    """A binary stream read through, counting the bytes handed on (for the progress bar) and
    the lines, and refusing a line longer than :func:`~gradcli.limits.max_line` as it passes:
    so no input, not even ``/dev/zero``, makes the reader hold more than that of one line."""

    def __init__(self, raw, count: int = 0, what: str = "the points", line: int = 1):
        from .limits import max_line
        self.raw, self.count, self.what = raw, count, what
        self.limit, self.line, self.run = max_line(), line, 0  # line: 1-based, header = 1
        self.error: Exception | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        """pyarrow's read-ahead thread reads here. An error (a line too long, a failing read)
        is kept for the reading thread to raise (:meth:`_CsvChunks.check`), and the stream
        ends: no Python exception is left inside pyarrow, whose thread would free it later."""
        if self.error is not None:
            return 0
        try:
            return self._read(buffer)
        except Exception as exc:  # noqa: BLE001 - raised by the thread that reads the chunks
            # without its traceback, whose frames would keep pyarrow's file object alive
            self.error = exc.with_traceback(None)
            return 0

    def _read(self, buffer) -> int:
        data = self.raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self.count += n
        first = data.find(b"\n")
        if first < 0:
            self.run += n
            if self.run > self.limit:
                raise line_too_long(self.what, self.line - 1, self.limit)
            return n
        if self.run + first > self.limit:  # the line this read ends
            raise line_too_long(self.what, self.line - 1, self.limit)
        if n - first > self.limit:  # lines wholly inside this read may be long too
            self._check_inside(data, first)
        self.line += data.count(b"\n")
        self.run = n - data.rfind(b"\n") - 1
        if self.run > self.limit:
            raise line_too_long(self.what, self.line - 1, self.limit)
        return n

    def _check_inside(self, data, first: int) -> None:
        """The lines between this read's first and last line break (only needed when the read
        is longer than the limit, which a small GRADCLI_MAX_LINE makes happen)."""
        import numpy as np
        breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        lengths = np.diff(breaks) - 1
        long = np.flatnonzero(lengths > self.limit)
        if len(long):
            raise line_too_long(self.what, self.line + int(long[0]), self.limit)


def line_too_long(what: str, row: int, limit: int):
    """The LimitError for a line past GRADCLI_MAX_LINE (row 0: the header)."""
    from .errors import LimitError
    from .limits import LINE_VARIABLE
    where = "its header line" if row <= 0 else f"row {row:,}"
    return LimitError(f"{what}: {where} is longer than {limit:,} bytes, the longest line "
                      f"gradcli reads ({LINE_VARIABLE})",
                      hint=f"raise the limit for this run: {LINE_VARIABLE}={limit * 4} "
                           "gradcli ... (docs/limits.md)")


def _csv_header(raw, what: str) -> tuple[list[str], int]:
    """The column names of a CSV stream's header line, and the line's length in bytes (at most
    GRADCLI_MAX_LINE bytes are read, and GRADCLI_MAX_COLUMNS names accepted)."""
    from .limits import max_line
    limit = max_line()
    header = raw.readline(limit + 1)
    if len(header) > limit and not header.endswith(b"\n"):
        raise line_too_long(what, 0, limit)
    try:
        text = header.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError:
        raise InputError(f"{what} is not UTF-8 text (its header line)",
                         hint="save it as UTF-8") from None
    if not text.strip():
        raise InputError(f"{what} has no header line",
                         hint="the first line names the columns: x,y")
    names = next(csv.reader([text]))
    check_columns(len(names), what)
    _check_names(names, what)
    return names, len(header)


def check_columns(count: int, what: str) -> None:
    """A points file of more than GRADCLI_MAX_COLUMNS columns is refused (CSV: on its header
    line; JSON lines: on the keys of its first lines; Parquet: on its schema), before any row."""
    from .errors import LimitError
    from .limits import COLUMNS_VARIABLE, max_columns
    most = max_columns()
    if count > most:
        raise LimitError(f"{what} has {count:,} columns, more than the {most:,} gradcli "
                         f"reads ({COLUMNS_VARIABLE})",
                         hint=f"raise the limit for this run: {COLUMNS_VARIABLE}={count} "
                              "gradcli ... (docs/limits.md)")


def block_bytes() -> int:
    """pyarrow's block size: a row must fit in one block, so at least a whole line of
    GRADCLI_MAX_LINE bytes (with room for its line break)."""
    from .limits import max_line
    return max(CSV_BLOCK_BYTES, max_line() + 4096)


def _csv_reader(source, names: list[str], numbers: set[str], skip: int = 0):
    """pyarrow's streaming CSV reader of ``source`` (a file object or a pyarrow stream): the
    columns in ``numbers`` parsed as float64 (an empty cell is null), the others kept as bytes
    (decoded row by row later: a cell that is not UTF-8 fails its row, not the file)."""
    import pyarrow as pa
    from pyarrow import csv as pacsv
    block = block_bytes()
    return pacsv.open_csv(
        source,
        read_options=pacsv.ReadOptions(column_names=names, block_size=block,
                                       skip_rows_after_names=skip),
        convert_options=pacsv.ConvertOptions(
            column_types={name: pa.float64() if name in numbers else pa.binary()
                          for name in names},
            # only an empty cell is missing: "nan" is NaN, "NA" or "null" text (pyarrow would
            # call all of them null, and the row "no value")
            null_values=[""], strings_can_be_null=False, quoted_strings_can_be_null=False))


def read_csv(path: str, graph: Graph | None = None) -> Rows:
    """CSV with a header line. The columns the expression reads are parsed as numbers by
    pyarrow; should a cell not be a number, the rest of the file is read with those columns
    as text and parsed row by row, so one odd cell fails its row, not the file (standard input,
    which cannot be read twice, is read as text from the start). Other columns stay text.

    Only the header is read here: pyarrow's reader (whose read-ahead thread reads through a
    Python stream) starts when the chunks are first asked for, and :meth:`Rows.close` ends it.
    A reader still alive as Python exits aborts the process (``Fatal Python error:
    PyGILState_Release``) or hangs it, so a mistake found before the first chunk, or an error
    while writing, must not leave one behind."""
    _arrow()
    if path == "-":
        if sys.stdin is None:
            raise InputError("standard input is closed, so --points - has nothing to read",
                             hint="pipe the points in: cat points.csv | gradcli eval ... "
                                  "--points -")
        raw, total, what = sys.stdin.buffer, None, "standard input"
    else:
        try:
            raw = open(path, "rb")  # noqa: SIM115 - closed by _CsvChunks.close
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror}") from None
        import stat
        status = os.fstat(raw.fileno())
        total, what = status.st_size, path
        seekable = stat.S_ISREG(status.st_mode)  # not a pipe (/dev/stdin, a FIFO)
    try:
        names, header_bytes = _csv_header(raw, what)
    except BaseException:
        if raw is not sys.stdin.buffer:
            raw.close()
        raise
    # a stream that cannot be read twice is read as text from the start (see _text_from)
    reread = path != "-" and seekable
    numbers = set(graph.inputs) & set(names) if reread and graph is not None else set()
    chunks = _CsvChunks(path, raw, what, names, numbers, header_bytes)
    return Rows(names, chunks, total if reread else None, lambda: chunks.stream.count,
                chunks.close, path=None if path == "-" else path)


class _CsvChunks:
    """The record batches of a CSV stream after its header, read by pyarrow when iterated."""

    def __init__(self, path, raw, what, names, numbers, header_bytes):
        self.path, self.raw, self.what, self.names = path, raw, what, names
        self.numbers, self.header_bytes = numbers, header_bytes
        self.stream = _Counted(raw, header_bytes, what, line=2)
        self.reader = None
        self.spent: list = []  # file objects of earlier readers, closed by close()
        self.handed: list = []  # weak references to the file objects pyarrow was given

    def __iter__(self):
        # pyarrow's complaints are kept without their tracebacks and acted on outside the
        # except clauses: their frames would keep pyarrow's file object alive (see close)
        pa = _arrow()
        invalid = None
        try:
            self.reader = self._reader()  # the first block
        except pa.ArrowInvalid as exc:
            invalid = exc.with_traceback(None)
        self.check()
        if invalid is not None:
            if "Empty CSV file" in str(invalid):  # a header and no rows: no chunks
                return
            self._text_from(invalid, 0, reopen=False)
        rows = 0
        while True:
            batch = invalid = None
            try:
                batch = self.reader.read_next_batch()
            except StopIteration:
                pass
            except pa.ArrowInvalid as exc:
                invalid = exc.with_traceback(None)
            self.check()  # a batch read after the stream failed may hold a cut line
            if invalid is not None:
                self._text_from(invalid, rows, reopen=True)
                continue
            if batch is None:
                return
            rows += batch.num_rows
            yield batch

    def check(self) -> None:
        """Raise what failed in the stream, once pyarrow has read to its (early) end."""
        error = self.stream.error
        if error is None:
            return
        pa = _arrow()
        while self.reader is not None:  # the rest is only what pyarrow had read ahead
            try:
                self.reader.read_next_batch()
            except (StopIteration, pa.ArrowInvalid):
                break
        raise error

    def _text_from(self, exc, rows: int, reopen: bool) -> None:
        """After a cell that is not a number: read on with every column as text, from the
        first row not yet given."""
        if "straddl" in str(exc):  # a row with quoted line breaks longer than a block
            from .limits import max_line
            raise line_too_long(self.what, rows + 1, max_line()) from None
        if not self.numbers or "conversion error" not in str(exc):
            raise InputError(f"{self.what}: {_arrow_message(exc)}") from None
        self.numbers.clear()
        self.reader = None
        # A new file object, not a seek on the old one: the old reader's read-ahead may still
        # be reading it, and would move the new reader's position (rows lost, a row read from
        # its middle: seen once in three runs of 10^6 rows). The old one is closed with the rest.
        self.spent.append(self.raw)
        self.raw = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        _csv_header(self.raw, self.what)
        self.stream = _Counted(self.raw, self.stream.count if reopen else self.header_bytes,
                               self.what, line=2)  # the skipped rows pass through it again
        self.reader = self._reader(skip=rows)

    def _reader(self, skip: int = 0):
        """A reader of the stream (its rows after the first ``skip``), through a file object
        whose release close() waits for."""
        buffered = io.BufferedReader(self.stream, buffer_size=CSV_BLOCK_BYTES)
        self.handed.append(weakref.ref(buffered))
        return _csv_reader(buffered, self.names, self.numbers, skip)

    def close(self) -> None:
        """Stop pyarrow's reader and close the file. pyarrow's read-ahead thread may still hold
        the file object it reads (it lets go when its last task ends) and must take the GIL to
        let go: should Python be exiting by then, that thread is ended mid-call and the process
        aborts ("terminate called without an active exception", about one run in a few
        hundred under load). So this waits, the GIL released, until it has let go."""
        self.reader = None
        deadline = time.monotonic() + 30.0
        while any(ref() is not None for ref in self.handed) and time.monotonic() < deadline:
            time.sleep(0.001)
        for raw in [*self.spent, self.raw]:
            if raw is not sys.stdin.buffer:
                raw.close()


def _arrow_message(exc: Exception) -> str:
    return str(exc).split("\n")[0]


def _check_names(names: list[str], what: str) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise InputError(f"{what} has two columns named {name!r}")
        seen.add(name)


def read_jsonl(path: str, graph: Graph) -> Rows:
    """JSON lines: one object per line; the inputs the expression reads are read as numbers."""
    pa = _arrow()
    from pyarrow import json as pajson
    schema = pa.schema([(name, pa.float64()) for name in graph.inputs])
    try:
        reader = pajson.open_json(
            path, read_options=pajson.ReadOptions(block_size=block_bytes()),
            parse_options=pajson.ParseOptions(explicit_schema=schema,
                                              unexpected_field_behavior="infer"))
    except FileNotFoundError:
        raise InputError(f"cannot read {path}: no such file") from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise _jsonl_error(path, exc) from None
    names = list(reader.schema.names)
    check_columns(len(names), path)
    try:  # the reader puts the explicit schema's columns first: keep the file's order instead
        with open(path, encoding="utf-8") as f:
            first = list(json.loads(f.readline(block_bytes())))
    except (ValueError, TypeError):
        first = []
    if sorted(first) == sorted(names):
        names = first
    done = [0]

    def chunks():
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except pa.ArrowInvalid as exc:
                raise _jsonl_error(path, exc) from None
            done[0] += batch.num_rows
            if sorted(batch.schema.names) != sorted(names):  # a later chunk met a new key
                raise InputError(f"{path}: the lines do not all have the same keys "
                                 f"({', '.join(batch.schema.names)} after {', '.join(names)})")
            yield batch.select(names)

    return Rows(names, chunks(), None, lambda: done[0], path=path)


def _jsonl_error(path: str, exc: Exception):
    """pyarrow's complaint about a JSON lines file as a gradcli error; a line past
    GRADCLI_MAX_LINE (pyarrow: "straddling object") is found and named by a bounded scan."""
    from .limits import max_line
    if "straddl" in str(exc):
        limit = max_line()
        with open(path, "rb") as f:
            for row, line in enumerate(iter(lambda: f.readline(limit + 1), b""), 1):
                if len(line) > limit:
                    return line_too_long(path, row, limit)
    return InputError(f"{path}: {_arrow_message(exc)}",
                      hint="each line is one JSON object whose inputs are numbers")


def read_parquet(path: str) -> Rows:
    pa = _arrow()
    import pyarrow.parquet as pq
    try:
        file = pq.ParquetFile(path)
    except FileNotFoundError:
        raise InputError(f"cannot read {path}: no such file") from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"{path} is not a Parquet file ({_arrow_message(exc)})") from None
    check_columns(len(file.schema_arrow.names), path)
    done = [0]

    def chunks():
        for batch in file.iter_batches(batch_size=CHUNK_ROWS):
            done[0] += batch.num_rows
            yield batch

    return Rows(list(file.schema_arrow.names), chunks(), file.metadata.num_rows,
                lambda: done[0], path=path)


def read_points(path: str, graph: Graph) -> Rows:
    """The rows of a points file, by its suffix (``-``: CSV on standard input)."""
    kind = "csv" if path == "-" else file_format(path)
    if kind == "parquet":
        return read_parquet(path)
    if kind == "jsonl":
        return read_jsonl(path, graph)
    return read_csv(path, graph)


MAX_GRID_SAMPLES = 10 ** 8  # per range: 800 MB of doubles


def grid_rows(grid: dict[str, tuple[float, float, int]]) -> Rows:
    """The Cartesian product of inclusive ``linspace`` ranges, in row-major order: the first name
    varies slowest, the last fastest (as nested loops, the first name outermost)."""
    pa = _arrow()
    import numpy as np
    names = list(grid)
    for name, (_, _, count) in grid.items():
        if count > MAX_GRID_SAMPLES:  # each range is held in memory (8 bytes a sample)
            raise InputError(f"gives {name} {count:,} samples, more than a range may have "
                             f"({MAX_GRID_SAMPLES:,})", option="grid", names=(name,),
                             hint="use fewer samples, or write the points to a file "
                                  "(--points streams any number of rows)")
    axes = [np.linspace(start, stop, count) for start, stop, count in grid.values()]
    shape = tuple(len(a) for a in axes)
    total = math.prod(shape)
    done = [0]

    def chunks():
        for start in range(0, total, CHUNK_ROWS):
            index = np.unravel_index(np.arange(start, min(total, start + CHUNK_ROWS)), shape)
            done[0] = min(total, start + CHUNK_ROWS)
            yield pa.record_batch([float_array(axis[i]) for axis, i in zip(axes, index)],
                                  names=names)

    return Rows(names, chunks(), total, lambda: done[0], grid=True)


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


def _numbers(column, name: str):
    """A column as float64 values, and the messages of the rows that hold no number."""
    pa = _arrow()
    import numpy as np
    problems: dict[int, str] = {}
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        import pyarrow.compute as pc
        try:
            column = pc.cast(column, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a cell is not a number
            texts = column.to_pylist()
            values = np.empty(len(texts))
            for i, text in enumerate(texts):
                try:
                    values[i] = float(text)
                except (TypeError, ValueError):
                    values[i] = np.nan
                    problems[i] = (f"the value of {name} is {text!r}, not a number"
                                   if text is not None and text.strip()
                                   else f"no value for input {name}")
            return values, problems
    elif not (pa.types.is_floating(kind) or pa.types.is_integer(kind)
              or pa.types.is_boolean(kind) or pa.types.is_null(kind)):
        raise InputError(f"the column {name} holds {kind} values, not numbers")
    if pa.types.is_float64(kind) and not column.null_count:
        return float_values(column), problems
    for i, value in enumerate(column.to_pylist()) if column.null_count else ():
        if value is None:
            problems[i] = f"no value for input {name}"
    values = np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
    return values, problems


# pyarrow's own conversions between NumPy and Arrow import pandas when it is installed (half a
# second): float64 columns cross by their buffers instead, without a copy.

def float_values(column):
    """A float64 Arrow array without nulls as a read-only NumPy view of its buffer."""
    import numpy as np
    return np.frombuffer(column.buffers()[1], dtype=np.float64, count=len(column),
                         offset=column.offset * 8)


def float_array(values):
    """A float64 NumPy array as an Arrow array over the same memory."""
    import numpy as np
    import pyarrow as pa
    values = np.ascontiguousarray(values, dtype=np.float64)
    return pa.Array.from_buffers(pa.float64(), len(values), [None, pa.py_buffer(values)])


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
            columns[name], found = _numbers(given[name], name)
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


# -- writing ------------------------------------------------------------------------------------

def _reason(exc: OSError) -> str:
    """An OSError's reason in words (pyarrow's carry only the number and a long detail)."""
    return os.strerror(exc.errno) if exc.errno else str(exc).split("\n")[0]


def _write_error(path: str | None, exc: OSError):
    """The gradcli error for a failed write: standard output's is an ``io error``, a file's
    names the file; both exit 2."""
    if path is None:
        return OutputError(f"cannot write to standard output: {_reason(exc)}")
    return FileError(f"cannot write {path}: {_reason(exc)}")


_STAGED: set = set()  # the Staged files of this process not yet committed or removed


def abort_staged() -> None:
    """Every staged output removed (Ctrl-C ends gradcli at once: see gradcli.__main__)."""
    for staged in list(_STAGED):
        staged.abort()


class Staged:
    """An output file made whole or not at all: written under a new name beside ``path``
    (``.NAME.XXXXXXXX.part``, in the same directory, so the rename cannot cross file systems) and
    renamed over ``path`` by :meth:`commit` once every row is in; :meth:`abort` (an error, ^C)
    removes it and leaves an earlier file at ``path`` untouched. Two runs writing one path each
    rename a whole file: the last one wins. A symlink at ``path`` has its target replaced; a
    device or a FIFO (``-o /dev/stdout``) is written in place."""

    def __init__(self, path: str, directory: bool = False):
        import secrets
        import stat
        self.path = path  # as the user wrote it, for messages
        target = os.path.realpath(path)
        try:
            status = os.stat(target)
        except OSError:
            status = None
        if status is not None and stat.S_ISDIR(status.st_mode) and not directory:
            raise FileError(f"cannot write {path}: it is a directory",
                            hint=f"name a file in it: {os.path.join(path, 'out.csv')}")
        if status is not None and not (stat.S_ISREG(status.st_mode) or directory):
            self.target, self.temp = None, target  # a device, a FIFO: no rename
            return
        folder, name = os.path.split(target)
        self.target = target
        for _ in range(100):
            # registered before it exists: a ^C as it is made (abort_staged) removes it too
            self.temp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.part")
            _STAGED.add(self)
            try:
                if directory:
                    os.mkdir(self.temp, 0o777)
                else:
                    os.close(os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                    if status is not None:  # the new file keeps the old one's permissions
                        os.chmod(self.temp, stat.S_IMODE(status.st_mode))
            except FileExistsError:  # another run's (a one in 2^32 name): not ours to remove
                _STAGED.discard(self)
                continue
            except OSError as exc:
                _STAGED.discard(self)
                raise FileError(f"cannot write {path}: {_reason(exc)}") from None
            break

    def commit(self) -> None:
        """The new file (or directory of parts) at ``path``, in one rename."""
        if self.target is None:
            return
        _STAGED.discard(self)
        try:
            if os.path.isdir(self.temp) and os.path.isdir(self.target):
                import shutil
                old = self.temp + ".old"
                os.rename(self.target, old)  # a directory cannot be renamed over another
                os.rename(self.temp, self.target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(self.temp, self.target)
        except OSError as exc:
            self.abort()
            raise _write_error(self.path, exc) from None

    def abort(self) -> None:
        """The partial file removed; ``path`` as it was."""
        if self.target is None:
            return
        _STAGED.discard(self)
        import shutil
        if os.path.isdir(self.temp):
            shutil.rmtree(self.temp, ignore_errors=True)
        else:
            try:
                os.unlink(self.temp)
            except OSError:
                pass


class _Output:
    """A binary stream (standard output when ``path`` is None) whose write errors are gradcli
    errors; a closed pipe stays ``BrokenPipeError``, which the command line ends quietly."""

    def __init__(self, file, path: str | None = None):
        self.file, self.path = file, path

    def write(self, data) -> None:
        self._guarded(self.file.write, data)

    def flush(self) -> None:
        self._guarded(self.file.flush)

    def _guarded(self, operation, *args) -> None:
        try:
            operation(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _write_error(self.path, exc) from None

    def close(self) -> None:
        try:
            self.flush()
        finally:
            if self.path is not None:
                try:
                    self.file.close()
                except OSError:
                    pass  # the flush above has reported it


class CsvSink:
    """CSV with a header; numbers as the shortest text that reads back to the same double, NaN
    as ``nan``, an empty error cell for a row that computed."""

    def __init__(self, file, names: list[str], staged: Staged | None = None):
        import pyarrow.csv as pacsv
        self.file, self.pacsv, self.staged = file, pacsv, staged
        line = io.StringIO()
        csv.writer(line, lineterminator="\n").writerow(names)
        file.write(line.getvalue().encode("utf-8"))
        # pyarrow sizes its buffer for batch_size rows of every column at once: a wide table in
        # big batches overflows it ("Negative buffer resize", 10^5 columns)
        rows = max(1, min(CHUNK_ROWS, (1 << 24) // max(1, len(names))))
        self.plain = pacsv.WriteOptions(include_header=False, quoting_style="none",
                                        batch_size=rows)
        self.quoted = pacsv.WriteOptions(include_header=False, quoting_style="needed",
                                         batch_size=rows)

    def write(self, batch) -> None:
        import pyarrow as pa
        out = io.BytesIO()
        try:  # unquoted text, unless a cell holds a comma, a quote or a line break
            self.pacsv.write_csv(batch, out, self.plain)
        except pa.ArrowInvalid:
            out = io.BytesIO()
            self.pacsv.write_csv(batch, out, self.quoted)
        self.file.write(out.getbuffer())

    def close(self) -> None:
        _finish(self.file, self.staged)

    def abort(self) -> None:
        _drop(self.file, self.staged)


def _finish(file, staged: Staged | None) -> None:
    """Everything written and flushed, then the staged file renamed into place."""
    try:
        file.close()
    except BaseException:
        _drop(file, staged)
        raise
    if staged is not None:
        staged.commit()


def _drop(file, staged: Staged | None) -> None:
    """After an error or ^C: the file closed without a word, the staged file removed."""
    if staged is None:  # standard output stays open
        return
    try:
        file.file.close()
    except OSError:
        pass
    staged.abort()


class JsonlSink:
    """One JSON object per line; NaN as null (JSON has no NaN), floats exact (``repr``)."""

    def __init__(self, file, names: list[str], staged: Staged | None = None):
        self.file, self.staged = file, staged

    def write(self, batch) -> None:
        names = batch.schema.names
        columns = []
        for column in batch.columns:
            values = column.to_pylist()
            if column.type == "double":
                values = [None if v != v else v for v in values]
            columns.append(values)
        dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
        lines = [dumps(dict(zip(names, row))) for row in zip(*columns)]
        if lines:
            self.file.write(("\n".join(lines) + "\n").encode("utf-8"))

    close, abort = CsvSink.close, CsvSink.abort


class ParquetSink:
    """Parquet, one row group per chunk (into the staged file: a Parquet file is readable only
    once its footer is written, so a partial one never stands at the final name)."""

    def __init__(self, path: str, names: list[str], staged: Staged | None = None,
                 texts: Iterable[str] = ()):
        self.path, self.names, self.writer = path, names, None
        self.texts = {ERROR_COLUMN, *texts}  # string columns (--digits N: the results)
        self.staged = staged or Staged(path)

    def write(self, batch) -> None:
        import pyarrow.parquet as pq
        try:
            if self.writer is None:
                self.writer = pq.ParquetWriter(self.staged.temp, batch.schema)
            self.writer.write_batch(batch)
        except OSError as exc:
            raise _write_error(self.path, exc) from None

    def close(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq
        try:
            if self.writer is None:  # no rows: an empty table with the columns
                pq.write_table(pa.table({name: pa.array([], pa.string() if name in self.texts
                                                         else pa.float64())
                                         for name in self.names}), self.staged.temp)
            else:
                self.writer.close()
        except OSError as exc:
            self.staged.abort()
            raise _write_error(self.path, exc) from None
        except BaseException:
            self.staged.abort()
            raise
        self.staged.commit()

    def abort(self) -> None:
        try:
            if self.writer is not None:
                self.writer.close()
        except Exception:  # noqa: BLE001 - the file is being thrown away
            pass
        self.staged.abort()


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


def _overlaps(source: str, target: str) -> bool:
    """Whether writing ``target`` (a file, a directory of parts, an ``out-*.csv`` pattern) would
    replace a file that reading ``source`` (a file, a glob, a directory of parts) reads: files
    compared by device and inode, so a hard link, a symlink or another spelling is caught."""
    import glob

    def files(path: str) -> set[tuple[int, int]]:
        if os.path.isdir(path):
            names = [os.path.join(folder, name)
                     for folder, _, names in os.walk(path) for name in names]
        else:
            names = glob.glob(path) or [path]
        found = set()
        for name in names:
            try:
                status = os.stat(name)
            except OSError:
                continue
            found.add((status.st_dev, status.st_ino))
        return found
    return bool(files(source) & files(target))


def _refuse_overwriting(source: str, target: str) -> None:
    if _overlaps(source, target):
        raise InputError(f"names the points {source} themselves: writing there would destroy "
                         "the rows before they are read", option="output",
                         hint="write to another file")


def _stem(path: str) -> str:
    """``path`` without its suffix: ``out.csv`` -> ``out``."""
    root, suffix = os.path.splitext(path)
    return root if suffix else path


def open_sink(path: str | None, as_json: bool, names: list[str], texts: Iterable[str] = ()):
    """The writer for ``-o path`` (by suffix) or standard output (CSV, or JSON lines)."""
    if path is None:
        if sys.stdout is None:
            raise OutputError("standard output is closed",
                              hint="run gradcli with its output going to a terminal, a pipe or "
                                   "a file, or write a file with -o FILE")
        out = _Output(sys.stdout.buffer)
        return JsonlSink(out, names) if as_json else CsvSink(out, names)
    kind = file_format(path, output=True)
    if as_json:
        raise InputError("writes JSON lines to standard output; a file's format is chosen by "
                         "its suffix", option="json", hint=f"write to {_stem(path)}.jsonl instead")
    staged = Staged(path)
    if kind == "parquet":
        return ParquetSink(path, names, staged, texts)
    try:
        file = _Output(open(staged.temp, "wb"), path)  # noqa: SIM115 - closed by run_batch
    except OSError as exc:
        staged.abort()
        raise FileError(f"cannot write {path}: {exc.strerror}") from None
    return (JsonlSink if kind == "jsonl" else CsvSink)(file, names, staged)


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
        _refuse_overwriting(rows.path, sink_path)
    done = (evaluate_chunk(graph, batch, wrt, at, min_digits, with_digits)
            for batch in rows.chunks)
    first = next(done, None)  # a file that fails in its first block fails before any output
    texts = () if min_digits is None else result_names(graph, wrt)  # --digits N: text
    sink = open_sink(sink_path, as_json, names, texts)
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
