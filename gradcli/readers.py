"""Points from files and grids: the batch engine's input, in chunks.

``gradcli eval EXPR --points FILE`` and ``--grid`` read here. Rows are read in chunks (Arrow
record batches), so memory stays flat however long the file. Formats go by suffix: CSV (with a
header; ``-`` is standard input), JSON lines (``.jsonl``) and Parquet (``.parquet``), all through
pyarrow. Each chunk is evaluated by :func:`gradcli.batchio.evaluate_chunk` and written by
:mod:`gradcli.writers`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import time
import weakref
from dataclasses import dataclass
from typing import Callable, Iterable

from .errors import InputError
from .engine.graph import Graph

CSV_BLOCK_BYTES = 1 << 20  # bytes of CSV per chunk (about 40,000 rows of two numbers)
CHUNK_ROWS = 1 << 16  # rows per chunk of Parquet, JSON lines and grids


def _arrow():
    """pyarrow and NumPy, or an InputError naming the extra that installs them."""
    try:
        import numpy  # noqa: F401
        import pyarrow
    except ImportError:
        raise InputError("many points at once need NumPy and pyarrow, which are not installed",
                         hint='pip install "gradcli[batch]"') from None
    return pyarrow


def file_format(path: str) -> str:
    """"csv", "jsonl" or "parquet", by the file's suffix (anything else is CSV)."""
    lower = path.lower()
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith((".parquet", ".pq")):
        return "parquet"
    return "csv"


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


DELIMITERS = ",;\t"  # what separates a CSV file's cells: sniffed from its header line


def csv_header(raw, what: str) -> tuple[list[str], int, str]:
    """The column names of a CSV stream's header line, the line's length in bytes (at most
    GRADCLI_MAX_LINE bytes are read, and GRADCLI_MAX_COLUMNS names accepted), and the delimiter
    it uses (``,``, ``;`` or a tab, as the csv module's Sniffer finds it; a comma when it finds
    none: a single column)."""
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
    try:
        delimiter = csv.Sniffer().sniff(text, delimiters=DELIMITERS).delimiter
    except csv.Error:
        delimiter = ","
    names = next(csv.reader([text], delimiter=delimiter))
    check_columns(len(names), what)
    _check_names(names, what)
    return names, len(header), delimiter


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


def _csv_reader(source, names: list[str], numbers: set[str], skip: int = 0,
                delimiter: str = ","):
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
        parse_options=pacsv.ParseOptions(delimiter=delimiter),
        convert_options=pacsv.ConvertOptions(
            column_types={name: pa.float64() if name in numbers else pa.binary()
                          for name in names},
            # only an empty cell is missing: "nan" is NaN, "NA" or "null" text (pyarrow would
            # call all of them null, and the row "no value")
            null_values=[""], strings_can_be_null=False, quoted_strings_can_be_null=False))


def read_csv(path: str, graph: Graph | None = None,
             numbers: Iterable[str] | None = ()) -> Rows:
    """CSV with a header line. The columns the expression reads are parsed as numbers by
    pyarrow; should a cell not be a number, the rest of the file is read with those columns
    as text and parsed row by row, so one odd cell fails its row, not the file (standard input,
    which cannot be read twice, is read as text from the start). Other columns stay text.
    Without a graph, the columns in ``numbers`` (None: all) are parsed as numbers (``--at
    X=@FILE``).

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
        names, header_bytes, delimiter = csv_header(raw, what)
    except BaseException:
        if raw is not sys.stdin.buffer:
            raw.close()
        raise
    # a stream that cannot be read twice is read as text from the start (see _text_from)
    reread = path != "-" and seekable
    wanted = (set(graph.inputs) if graph is not None else set(names) if numbers is None
              else set(numbers))
    numbers = wanted & set(names) if reread else set()
    chunks = _CsvChunks(path, raw, what, names, numbers, header_bytes, delimiter)
    return Rows(names, chunks, total if reread else None, lambda: chunks.stream.count,
                chunks.close, path=None if path == "-" else path)


class _CsvChunks:
    """The record batches of a CSV stream after its header, read by pyarrow when iterated."""

    def __init__(self, path, raw, what, names, numbers, header_bytes, delimiter=","):
        self.path, self.raw, self.what, self.names = path, raw, what, names
        self.delimiter = delimiter
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
        csv_header(self.raw, self.what)
        self.stream = _Counted(self.raw, self.stream.count if reopen else self.header_bytes,
                               self.what, line=2)  # the skipped rows pass through it again
        self.reader = self._reader(skip=rows)

    def _reader(self, skip: int = 0):
        """A reader of the stream (its rows after the first ``skip``), through a file object
        whose release close() waits for."""
        buffered = io.BufferedReader(self.stream, buffer_size=CSV_BLOCK_BYTES)
        self.handed.append(weakref.ref(buffered))
        return _csv_reader(buffered, self.names, self.numbers, skip, self.delimiter)

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


def read_parquet(path: str, columns: list[str] | None = None) -> Rows:
    """The rows of a Parquet file in chunks (``columns``: only those)."""
    pa = _arrow()
    import pyarrow.parquet as pq
    try:
        file = pq.ParquetFile(path)
    except FileNotFoundError:
        raise InputError(f"cannot read {path}: no such file") from None
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path} is not a Parquet file ({_arrow_message(exc)})") from None
    check_columns(len(file.schema_arrow.names), path)
    done = [0]

    def chunks():
        batches = file.iter_batches(batch_size=CHUNK_ROWS, columns=columns)
        while True:
            try:
                batch = next(batches, None)
            except (pa.ArrowException, OSError) as exc:  # a damaged page, a cut file
                raise InputError(f"{path}: a part of the file cannot be read "
                                 f"({_arrow_message(exc)})",
                                 hint="the file is damaged or cut short: write it again") from None
            if batch is None:
                return
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


def number_column(column, name: str):
    """A column as float64 values (a NumPy array), and the messages of the rows that hold no
    number (row index -> message)."""
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


# -- an array input's numbers from a file: --at X=@data.npy, @data.csv, @data.csv[price] -----------

ARRAY_FORMATS = {".npy": "npy", ".csv": "csv", ".tsv": "csv", ".parquet": "parquet",
                 ".pq": "parquet"}


def read_array(path: str, name: str, columns: list[str] | None = None, missing=None):
    """The numbers of ``path`` for the array input ``name`` as a float64 NumPy array: a ``.npy``
    file as stored (0 to 2 dimensions); a CSV or Parquet table whole (rows x columns, in the
    file's order), or its ``columns``: one is a vector, several a matrix. Every number is
    finite and there are at most GRADCLI_MAX_ELEMENTS of them (checked before the data is
    read, or as a CSV file is). ``missing(column, names)`` makes the error for a column the
    table does not have. Anything else wrong is an :class:`InputError` naming the file (and
    the row and column of a bad cell)."""
    kind = ARRAY_FORMATS.get(os.path.splitext(path)[1].lower())
    if kind is None:
        raise InputError(f"cannot read {path}: gradcli reads arrays from .npy, .csv, .tsv and "
                         ".parquet files (by the name's ending)",
                         hint="save it with np.save(\"x.npy\", x), or as CSV with a header line")
    if not os.path.exists(path):
        raise InputError(f"cannot read {path}: no such file")
    if os.path.isdir(path):
        raise InputError(f"cannot read {path}: it is a directory")
    try:
        import numpy as np
        if kind != "npy":
            import pyarrow  # noqa: F401 - here, for the error below: the readers import it
    except ImportError:
        raise InputError(f"reading {path} needs NumPy" + (" and pyarrow" if kind != "npy" else "")
                         + ", which are not installed", hint='pip install "gradcli[batch]"'
                         ) from None
    if kind == "npy":
        if columns is not None:
            raise InputError(f"{path} is a .npy file: it is read whole, without a [column]",
                             hint="index the array in the expression instead: X[:, 0]")
        return _read_npy(path, name)
    if kind == "parquet":
        return _read_parquet_array(path, name, columns, missing)
    rows = read_csv(path, numbers=columns)
    try:
        wanted = list(rows.columns) if columns is None else columns
        _check_wanted(wanted, rows.columns, path, missing)
        parts, count = [], 0
        from .limits import check_elements
        for batch in _ragged_named(rows.chunks, path, kind, len(rows.columns)):
            block = np.empty((batch.num_rows, len(wanted)))
            for j, column in enumerate(wanted):
                block[:, j] = _cell_numbers(batch.column(column), path, kind, column, count)
            _finite(block, path, lambda i, j: _cell(kind, count + i, wanted[j]))
            count += batch.num_rows
            check_elements(count * len(wanted), path, name, more=True)
            parts.append(block)
    finally:
        rows.close()
    if not count:
        raise InputError(f"{path} has a header and no rows of numbers")
    table = np.concatenate(parts) if len(parts) > 1 else parts[0]
    return table[:, 0] if columns is not None and len(columns) == 1 else table


def _check_wanted(wanted: list[str], names: list[str], path: str, missing) -> None:
    """Every column asked for is in the table (``missing(column, names)`` makes the error)."""
    for column in wanted:
        if column not in names:
            raise missing(column, list(names))
    if not wanted:
        raise InputError(f"{path} has no columns")


def _cell_numbers(cells, path: str, kind: str, column: str, first: int, problem=None):
    """The float64 values of a chunk of a column whose first row is row ``first`` of the table;
    a cell that is no number is an InputError naming it (or, with ``problem``, is given to
    ``problem(row, message)`` and read as NaN)."""
    import pyarrow as pa
    if pa.types.is_binary(cells.type):  # CSV text, after a cell that is no number
        try:
            cells = cells.cast(pa.string())
        except pa.ArrowInvalid:
            raise InputError(f"{path}: the column {column!r} is not UTF-8 text",
                             hint="save it as UTF-8") from None
    values, problems = number_column(cells, column)
    if problems:
        i = min(problems)
        text = cells[i].as_py()
        error = InputError(f"{path}: {_cell(kind, first + i, column)} is "
                           + (f"{text!r}, not a number" if text not in (None, "") else "empty"),
                           hint="every cell of an array is a number")
        if problem is None:
            raise error
        problem(first + i, error)
    return values


def _read_parquet_array(path: str, name: str, columns: list[str] | None, missing):
    """:func:`read_array` of a Parquet file: its size (rows from the footer) checked before any
    data is read, and the columns read one at a time into the table (pyarrow then holds one
    column's pages, not a whole row group: 10^5 x 20 at 89 MB of peak memory, not 160)."""
    import numpy as np
    from .limits import check_elements
    whole = read_parquet(path)  # (its footer only: no chunk is read)
    names, total = whole.columns, whole.total
    wanted = list(names) if columns is None else columns
    _check_wanted(wanted, names, path, missing)
    check_elements(total * len(wanted), path, name)
    if not total:
        raise InputError(f"{path} has a header and no rows of numbers")
    table = np.empty((total, len(wanted)))
    # Each column's first cell that is no number, as (chunk, column, the chunk's first row,
    # error): the one reported is the first in the order of a read row by row, chunk by chunk
    # and column by column in each, where a chunk's non-finite numbers come after its columns'.
    first: list = []

    def problem(k, j, start):
        return lambda row, error: first.append((k, j, start, error))
    where = lambda i, j: _cell("parquet", i, wanted[j])  # noqa: E731
    for j, column in enumerate(wanted):
        count = 0
        for k, batch in enumerate(read_parquet(path, [column]).chunks):
            if first and first[0][:2] < (k, j):
                break  # a cell before this chunk, in that order, is no number
            table[count:count + batch.num_rows, j] = _cell_numbers(
                batch.column(0), path, "parquet", column, count, problem(k, j, count))
            count += batch.num_rows
        first.sort(key=lambda found: found[:2])
    if first:
        _finite(table[:first[0][2]], path, where)  # the chunks before it are whole
        raise first[0][3]
    _finite(table, path, where)
    return table[:, 0] if columns is not None and len(columns) == 1 else table


def _ragged_named(chunks, path: str, kind: str, width: int):
    """``chunks``, with pyarrow's complaint about a CSV row of another length (``Expected 3
    columns, got 2``) said with the row's number: the file is read again up to that row."""
    try:
        yield from chunks
    except InputError as exc:
        if kind != "csv" or "columns, got" not in exc.sentence:
            raise
        with open(path, "rb") as raw:
            _, _, delimiter = csv_header(raw, path)
            lines = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
            reader = csv.reader(lines, delimiter=delimiter)
            cells = (row for row in reader if row)  # (pyarrow skips blank lines too)
            for row, found in enumerate(cells, 1):
                if len(found) != width:
                    raise InputError(f"{path}: row {row:,} (line {reader.line_num + 1:,}) has "
                                     f"{len(found)} cell{'s' * (len(found) != 1)} where the header has {width}",
                                     hint="every row has a cell for each column") from None
        raise


def _cell(kind: str, row: int, column: str) -> str:
    """Where a cell is: ``row 3 (line 4), column 'price'`` (rows counted from 1 after the header,
    as --points counts them)."""
    line = f" (line {row + 2})" if kind == "csv" else ""
    return f"row {row + 1:,}{line}, column {column!r}"


def _finite(values, path: str, where) -> None:
    """An InputError at the first NaN or infinity of ``values`` (``where(i, j)`` names it)."""
    import numpy as np
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        index = np.unravel_index(bad[0], values.shape)
        raise InputError(f"{path}: {where(*index)} is {float(values[index])!r}, not a finite "
                         "number",
                         hint="an input's every element is a finite number")


def _read_npy(path: str, name: str):
    """A .npy file's array (never a pickle), read into memory once its header is checked: its
    type, shape and size (against GRADCLI_MAX_ELEMENTS, and its bytes against the file's
    length) before any data is read. A float64 array is returned read-only; others are converted.
    Not a memory map: a file cut short while the map is held kills the process with SIGBUS."""
    import numpy as np
    from .limits import check_elements
    fmt = np.lib.format
    try:
        f = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    with f:
        magic = f.read(len(fmt.MAGIC_PREFIX))
        if magic != fmt.MAGIC_PREFIX:
            zipped = magic.startswith(b"PK")
            raise InputError(f"{path} is not a NumPy .npy file" + (" (a .npz archive?)" if zipped
                                                                     else ""),
                             hint="write one array with np.save(\"x.npy\", x)")
        try:
            f.seek(0)
            version = fmt.read_magic(f)
            header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            shape, fortran, dtype = header(f)
        except ValueError as exc:
            raise InputError(f"{path} cannot be read as a .npy file ({str(exc).splitlines()[0]})",
                             hint="the file is damaged or cut short: write it again") from None
        _check_npy_header(path, name, shape, dtype)
        check_elements(int(np.prod(shape)), path, name)
        values = np.empty(shape, dtype=dtype, order="F" if fortran else "C")
        wanted, there = values.nbytes, os.fstat(f.fileno()).st_size - f.tell()
        if there < wanted:
            raise _cut_short(path, shape, dtype, wanted, there)
        try:
            read = f.readinto(values.reshape(-1, order="A").view(np.uint8))
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
        if read < wanted:  # cut short while it was read
            raise _cut_short(path, shape, dtype, wanted, read)
    if values.dtype == np.float64:
        values.flags.writeable = False  # (as the map was: the point's arrays are never written)
    else:
        values = np.array(values, dtype=np.float64)
    _finite(values, path, lambda *index: f"the element [{', '.join(map(str, index))}]"
            if index else "the value")
    return values


def _check_npy_header(path: str, name: str, shape: tuple, dtype) -> None:
    """An InputError unless a .npy header describes 0 to 2 dimensions of numbers, not none."""
    from .engine.arrays import shape_text
    if dtype.hasobject:
        raise InputError(f"{path} holds Python objects, which gradcli never loads (loading "
                         "them runs pickle, which can run any code)",
                         hint="save an array of numbers: np.save(path, x.astype(float))")
    if dtype.kind not in "biuf":
        raise InputError(f"{path} holds {dtype} values, not numbers",
                         hint="save an array of numbers: np.save(path, x.astype(float))")
    if len(shape) > 2:
        raise InputError(f"{path} holds an array of shape {shape_text(shape)}: an input "
                         "has at most 2 dimensions", hint="reshape it to a matrix before saving")
    if 0 in shape:
        raise InputError(f"{path} holds an empty array, of shape {shape_text(shape)}")


def _cut_short(path: str, shape: tuple, dtype, wanted: int, there: int) -> InputError:
    """The error for a .npy file whose data is shorter than its header says."""
    from .engine.arrays import shape_text
    return InputError(f"{path} is cut short: its header says shape {shape_text(shape)} of {dtype} "
                      f"({dtype.itemsize} bytes each), {wanted:,} bytes of data, and the file "
                      f"has {there:,}",
                      hint="the file is damaged or cut short: write it again")
