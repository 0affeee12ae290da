"""Results to files or standard output: the batch engine's output, chunk by chunk.

CSV (with a header), JSON lines and Parquet, by the output's suffix; standard output takes CSV
or JSON lines. A file is staged (:class:`gradcli.files.Staged`) and renamed into place once
every row is in: an error, Ctrl-C or SIGTERM leaves no partial file and an earlier file as it was.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from typing import Iterable

from .errors import InputError, OutputError
from .files import Staged, write_error
from .readers import CHUNK_ROWS, file_format

OUTPUT_SUFFIXES = (".csv", ".jsonl", ".parquet")


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
            raise write_error(self.path, exc) from None

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
        self.texts = set(texts)  # string columns: the error column (and --digits N's results)
        self.staged = staged or Staged(path)

    def write(self, batch) -> None:
        import pyarrow.parquet as pq
        try:
            if self.writer is None:
                self.writer = pq.ParquetWriter(self.staged.temp, batch.schema)
            self.writer.write_batch(batch)
        except OSError as exc:
            raise write_error(self.path, exc) from None

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
            raise write_error(self.path, exc) from None
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


def output_format(path: str) -> str:
    """"csv", "jsonl" or "parquet", by the output's suffix; another suffix is an error."""
    if not path.lower().endswith((".csv", ".jsonl", ".ndjson", ".parquet", ".pq")):
        raise InputError(f"{path}: unknown file type", option="output",
                         hint="use a name ending in " + ", ".join(OUTPUT_SUFFIXES))
    return file_format(path)


def _stem(path: str) -> str:
    """``path`` without its suffix: ``out.csv`` -> ``out``."""
    root, suffix = os.path.splitext(path)
    return root if suffix else path


def open_sink(path: str | None, as_json: bool, names: list[str], texts: Iterable[str] = ()):
    """The writer for ``-o path`` (by suffix) or standard output (CSV, or JSON lines)."""
    if path is None:
        if getattr(sys.stdout, "buffer", None) is None:  # closed when gradcli started
            raise OutputError("standard output is closed",
                              hint="run gradcli with its output going to a terminal, a pipe or "
                                   "a file, or write a file with -o FILE")
        out = _Output(sys.stdout.buffer)
        return JsonlSink(out, names) if as_json else CsvSink(out, names)
    kind = output_format(path)
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
        raise write_error(path, exc) from None
    return (JsonlSink if kind == "jsonl" else CsvSink)(file, names, staged)
