"""``--engine dask``: the batch engine over the partitions of a Dask DataFrame, on Dask's
threads in this process or on a Dask cluster (``dask.dataframe.map_partitions`` over Parquet;
``dask.dataframe.from_map`` over blocks of CSV lines, each read by pyarrow in its task).

Each partition is evaluated by :func:`gradcli.batchio.evaluate_chunk`, the streaming engine's
own chunk function, so the numbers are the same bit for bit; reading and checking the columns,
the summary and the errors are :mod:`gradcli.batchio`'s. This module only plans and runs the
Dask graph and writes its output (a directory of Parquet parts, or one CSV per partition).
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Iterable

from .batchio import (ERROR_COLUMN, POINTS_THEMSELVES, SHOWN_FAILURES, Summary, _check_inputs, evaluate_chunk,
                      output_columns)
from .files import Scratch, Staged, critical, refuse_overwriting, sync, write_error
from .readers import Rows, csv_header, file_format
from .engine.graph import Graph
from .errors import FileError, InputError


DASK_HINT = 'pip install "gradcli[dask]"'
DASK_CSV_BLOCK_BYTES = 64 << 20  # bytes of CSV per Dask partition


def _dask(scheduler: str | None = None):
    """dask.dataframe, and distributed when a ``scheduler`` is named (a run on this machine
    takes Dask's threads, not a cluster of processes), or an InputError naming the extra."""
    try:
        import numpy  # noqa: F401
        import pyarrow  # noqa: F401
        import dask
        import dask.dataframe as dd
        distributed = None
        if scheduler is not None:
            import distributed
    except ImportError:
        raise InputError("dask needs Dask (dask[dataframe] and distributed), which is not "
                         "installed", option="engine", hint=DASK_HINT) from None
    return dask, dd, distributed


def _compiled(source: str, of: list[str] | None = None) -> Graph:
    """The graph of ``source`` with the outputs ``of``, compiled once per worker process."""
    cache = _compiled.__dict__.setdefault("cache", {})
    key = (source, None if of is None else tuple(of))
    graph = cache.get(key)
    if graph is None:
        from .engine.graph import compile, select_outputs
        graph = cache[key] = select_outputs(compile(source), of)
    return graph


def evaluate_partition(frame, source: str, wrt: list[str], at: dict[str, float],
                       error_fill: str | None = None, of: list[str] | None = None,
                       min_digits: int | None = None, with_digits: bool = False):
    """One Dask partition (a pandas DataFrame) evaluated by :func:`evaluate_chunk`: the same
    function, and so the same numbers, as the streaming engine. ``error_fill`` replaces the null
    error of a row that computed (CSV output writes "")."""
    batch = _record_batch(frame)
    table, _ = evaluate_chunk(_compiled(source, of), batch, wrt, at, min_digits, with_digits)
    out = table.to_pandas(types_mapper=_arrow_dtype)  # keeps NaN apart from null
    if error_fill is not None:
        out[ERROR_COLUMN] = out[ERROR_COLUMN].fillna(error_fill)
    out.index = frame.index
    return out


def _record_batch(frame):
    """A pandas partition as an Arrow record batch. Text read from CSV (object columns) is
    Arrow text, or, in a column with a cell that was not UTF-8 (read with surrogateescape, so
    kept as surrogates, which Arrow refuses), the original bytes: batchio then fails those
    rows, as the streaming engine does."""
    import pyarrow as pa
    text = [name for name in frame.columns if frame[name].dtype == object]
    others = [name for name in frame.columns if name not in text]
    table = pa.Table.from_pandas(frame[others], preserve_index=False) if others else None
    columns = []
    for name in frame.columns:
        if name in text:
            columns.append(_text_column(frame[name]))
        else:
            columns.append(table.column(str(name)).combine_chunks())
    return pa.record_batch(columns, names=[str(name) for name in frame.columns])


def _text_column(series):
    import pyarrow as pa
    try:
        return pa.array(series, pa.string())
    except (UnicodeEncodeError, pa.ArrowException):
        return pa.array([None if v is None else str(v).encode("utf-8", "surrogateescape")
                         for v in series.tolist()], pa.binary())


def _arrow_dtype(arrow_type):
    import pandas as pd
    return pd.ArrowDtype(arrow_type)


def partition_failures(frame):
    """A partition's row count, failure count and first failures (row within the partition,
    message; as JSON text), as a one-row pandas DataFrame."""
    import pandas as pd
    errors = frame[ERROR_COLUMN]
    failed = (errors.notna() & (errors != "")).to_numpy()
    first = [(int(i), str(errors.iloc[i])) for i in failed.nonzero()[0][:SHOWN_FAILURES]]
    return pd.DataFrame({"rows": [len(frame)], "failed": [int(failed.sum())],
                         "first": [json.dumps(first)]})


def run_dask(graph: Graph, path: str, output_path: str | None, *,
             wrt: Iterable[str] | None = None, at: dict[str, float] | None = None,
             scheduler: str | None = None, of: list[str] | None = None,
             min_digits: int | None = None, with_digits: bool = False) -> Summary:
    """Evaluate a CSV or Parquet data set with Dask: each partition by the NumPy engine
    (``map_partitions``), written as ``-o out.parquet`` (a directory of Parquet parts) or
    ``-o 'out-*.csv'`` (one CSV per partition), on the cluster at ``scheduler``, or else on
    Dask's threaded scheduler in this process (the chunk function spends its time in NumPy,
    which releases the GIL: no cluster of processes to start)."""
    from .engine.graph import wrt_names
    dask, dd, distributed = _dask(scheduler)
    at = dict(at or {})
    wrt = wrt_names(graph, wrt)
    if output_path is None:
        raise InputError("dask writes its result to files", option="engine",
                         hint="name the output: out.parquet (a directory of parts) or "
                              "'out-*.csv' (one file per partition)")
    lower = output_path.lower()
    if lower.endswith(".csv") and "*" in output_path:
        out_kind = "csv"
    elif lower.endswith((".parquet", ".pq")) or lower.endswith(".parquet/"):
        out_kind = "parquet"
    else:
        raise InputError(f"{output_path}: the dask engine writes a directory of Parquet parts "
                         "or one CSV file per partition", option="output",
                         hint="out.parquet, or 'out-*.csv' (* is the partition number)")
    if path == "-":
        raise InputError("dask reads files, not standard input", option="engine")
    refuse_overwriting(path, output_path, what=POINTS_THEMSELVES)
    kind = file_format(path)
    if kind == "jsonl":
        raise InputError("dask reads CSV or Parquet", option="engine",
                         hint="convert the JSON lines first, or use the numpy engine")
    if kind == "csv":
        frame, columns = None, _csv_blocks(path, graph)
    else:
        try:
            frame = dd.read_parquet(path)
        except (OSError, ValueError) as exc:  # no such file
            raise InputError(f"cannot read {path}: {_dask_message(exc)}") from None
        columns = list(frame.columns)
    rows = Rows(columns.names if frame is None else columns, iter(()), None, lambda: 0)
    _check_inputs(graph, rows, at)
    output_columns(rows, at, wrt, graph, with_digits)  # checks for collisions
    if out_kind == "parquet" and os.path.exists(output_path) and not os.path.isdir(output_path):
        raise FileError(f"cannot write {output_path}: it is a file, and the dask engine writes "
                        "a directory of Parquet parts there", hint="remove it, or name another "
                        "output")
    # Connected before the write is planned: planning it makes the output directory, which a
    # scheduler that cannot be reached would leave behind, empty. A local cluster's scratch
    # space goes in a private directory beside the output, removed at the end.
    folder = os.path.dirname(os.path.abspath(output_path.rstrip("/"))) or "."
    scratch = Scratch(folder, "dask") if scheduler is None else None
    try:
        client = _client(distributed, scheduler, scratch) if scheduler is not None else None
        try:
            from dask.threaded import get as threads  # the name "threads" imports distributed
            with dask.config.set({"temporary-directory": scratch.path} if scratch else {}):
                with dask.config.set({} if client is not None else {"scheduler": threads}):
                    parts = _write(dask, columns if frame is None else frame, graph, wrt,
                                   at, of, out_kind, output_path, (min_digits, with_digits))
        finally:
            if client is not None:
                client.close()
    finally:
        if scratch is not None:
            scratch.abort()
    summary, offset = Summary(), 0
    for n, failed, first in zip(parts["rows"], parts["failed"], parts["first"]):
        summary.rows += int(n)
        summary.failed += int(failed)
        for i, message in json.loads(first)[:SHOWN_FAILURES - len(summary.first_failures)]:
            summary.first_failures.append((offset + i + 1, message))
        offset += int(n)
    return summary


def _write(dask, frame, graph, wrt, at, of, out_kind: str, output_path: str, digits=(None, False)):
    """The partitions evaluated and written, whole or not at all: into a staged directory
    beside the output, renamed into place (Parquet) or moved in with an earlier run's parts
    removed (CSV) once every part is written. The per-partition failure counts (a pandas DataFrame)."""
    fill = "" if out_kind == "csv" else None
    if isinstance(frame, CsvBlocks):  # each block read by pyarrow and evaluated in one task
        import dask.dataframe as dd
        args = (graph.source, wrt, at, fill, of, *digits)
        meta = evaluate_csv_block(frame.empty(), *args)
        result = dd.from_map(evaluate_csv_block, frame.blocks, args=args, meta=meta,
                             label="gradcli-csv-block")
    else:
        from dask.dataframe.utils import make_meta  # the frame's empty pandas form
        meta = evaluate_partition(make_meta(frame), graph.source, wrt, at, fill, of, *digits)
        result = frame.map_partitions(evaluate_partition, graph.source, wrt, at, fill, of,
                                      *digits, meta=meta)
    if out_kind == "parquet":
        staged = Staged(output_path, directory=True)
        target = staged.temp
    else:
        folder, pattern = os.path.split(output_path)
        staged = Staged(os.path.join(folder, ".parts"), directory=True)
        target = os.path.join(staged.temp, pattern)
    try:
        try:
            if out_kind == "parquet":
                write = result.to_parquet(target, write_index=False, compute=False)
            else:
                write = result.to_csv(target, index=False, na_rep="nan", compute=False)
        except (OSError, ValueError) as exc:
            raise FileError(f"cannot write {output_path}: {_dask_message(exc)}") from None
        # One summary row per partition, computed with the write (each partition runs once)
        counts = result.map_partitions(partition_failures,
                                       meta=partition_failures(meta.iloc[:0]).iloc[:0])
        with warnings.catch_warnings():
            # to_csv gives a delayed write: computed with the counts, the expressions are
            # materialised (what the warning says), and each partition still runs once
            warnings.filterwarnings("ignore", "Computing mixed collections", UserWarning)
            try:
                _, parts = dask.compute(write, counts)
            except OSError as exc:  # raised in a worker as it wrote its part
                raise write_error(output_path, exc) from None
        if out_kind == "parquet":
            staged.commit()
        else:
            _replace_parts(staged, folder or ".", pattern)
    except BaseException:
        staged.abort()
        raise
    return parts


def _replace_parts(staged: Staged, folder: str, pattern: str) -> None:
    """The new CSV parts moved into ``folder`` and an earlier run's parts of ``pattern`` that
    they do not replace removed, signals waiting meanwhile: the set is wholly one run's."""
    import re
    head, _, tail = pattern.partition("*")
    earlier = re.compile(re.escape(head) + r"\d+" + re.escape(tail) + r"\Z").match
    parts = sorted(os.listdir(staged.temp))
    try:
        for name in parts:
            sync(os.path.join(staged.temp, name))
        with critical():
            old = [name for name in os.listdir(folder) if earlier(name) and name not in parts
                   and not os.path.isdir(os.path.join(folder, name))]
            for name in parts:
                os.replace(os.path.join(staged.temp, name), os.path.join(folder, name))
            for name in old:
                os.unlink(os.path.join(folder, name))
    except OSError as exc:
        raise write_error(os.path.join(folder, pattern), exc) from None
    finally:
        staged.abort()


def _dask_message(exc: Exception) -> str:
    """The cause in one line: without the "An error occurred while calling the read_csv method
    registered to the pandas backend" that Dask puts around it."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc)
    return text.rpartition("Original Message: ")[2].strip().split("\n")[0] or type(exc).__name__


class CsvBlocks:
    """A CSV data set as blocks of whole lines (``DASK_CSV_BLOCK_BYTES`` each, cut at line
    breaks): ``blocks`` holds (file, offset, length, header bytes, names, number columns) for
    each, a Dask partition."""

    def __init__(self, names: list[str], blocks: list[tuple]):
        self.names, self.blocks = names, blocks

    def empty(self) -> tuple:
        """A block of no rows, for Dask's description of the partitions."""
        return (None, 0, 0, 0, self.names, self.blocks[0][5] if self.blocks else ())


def _csv_blocks(path: str, graph: Graph) -> CsvBlocks:
    """The blocks of ``path`` (a file, a glob or a directory), each file's header line read:
    every file has the same columns, named once each (as with the numpy engine), and a file
    with no header is an error."""
    import glob
    if os.path.isdir(path):
        files = sorted(os.path.join(path, name) for name in os.listdir(path))
    else:
        files = sorted(glob.glob(path)) or [path]
    files = [f for f in files if os.path.isfile(f)]
    if not files:
        raise InputError(f"cannot read {path}: No such file or directory")
    names, blocks = None, []
    for file in files:
        try:
            with open(file, "rb") as raw:
                found, header, _ = csv_header(raw, file)
                size = os.fstat(raw.fileno()).st_size
        except OSError as exc:
            raise InputError(f"cannot read {file}: {exc.strerror}") from None
        if names is None:
            names = found
            numbers = tuple(name for name in names if name in set(graph.inputs))
        elif found != names:
            raise InputError(f"{file} has the columns {', '.join(found)}, not those of "
                             f"{files[0]}: {', '.join(names)}")
        for offset in range(0, max(size, 1), DASK_CSV_BLOCK_BYTES):
            blocks.append((file, offset, DASK_CSV_BLOCK_BYTES, header, names, numbers))
    return CsvBlocks(names, blocks)


def _read_csv_block(block) -> list:
    """One block's record batches, read by pyarrow as the numpy engine reads a file: the
    columns the expression reads as float64, the others as bytes; should a cell not be a
    number, the whole block as bytes (each row then parsed, or failed, on its own)."""
    import pyarrow as pa
    from fsspec.utils import read_block

    from .readers import _arrow_message, _csv_reader
    file, offset, length, header, names, numbers = block
    if file is None:  # the empty block
        data = b""
    else:
        with open(file, "rb") as raw:  # whole lines: from the first line starting in the block
            data = read_block(raw, offset, length, b"\n")
        if offset == 0:
            data = data[header:]
    numbers = set(numbers)
    while True:
        try:
            # a pyarrow buffer, not a Python file: pyarrow's read-ahead thread needs no GIL
            return list(_csv_reader(pa.BufferReader(data), names, numbers))
        except pa.ArrowInvalid as exc:
            if "Empty CSV file" in str(exc):
                return []
            if not numbers or "conversion error" not in str(exc):
                raise InputError(f"{file}: {_arrow_message(exc)}") from None
            numbers = set()


def evaluate_csv_block(block, source: str, wrt: list[str], at: dict[str, float],
                       error_fill: str | None = None, of: list[str] | None = None,
                       min_digits: int | None = None, with_digits: bool = False):
    """One CSV block read (:func:`_read_csv_block`) and evaluated by :func:`evaluate_chunk`
    chunk by chunk, as the streaming engine does: a pandas DataFrame."""
    import pyarrow as pa
    graph = _compiled(source, of)
    batches = _read_csv_block(block)
    if not batches:  # no rows: the chunk function still gives the output's columns
        names, numbers = block[4], set(block[5])
        batches = [pa.record_batch(
            [pa.array([], pa.float64() if name in numbers else pa.binary()) for name in names],
            names=names)]
    table = pa.Table.from_batches([evaluate_chunk(graph, batch, wrt, at, min_digits,
                                                  with_digits)[0] for batch in batches])
    out = table.to_pandas(types_mapper=_arrow_dtype)  # keeps NaN apart from null
    if error_fill is not None:
        out[ERROR_COLUMN] = out[ERROR_COLUMN].fillna(error_fill)
    return out


def _client(distributed, scheduler: str | None, scratch: str | None = None):
    """A client of the scheduler at ``scheduler``, or of a new local cluster (closed with it)
    whose workers keep their scratch space in ``scratch``."""
    if scheduler is not None:
        try:
            return distributed.Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    import logging
    # silence_logs: a task that fails (a part that cannot be written) is reported once, by
    # gradcli, not also as a worker's log record with a traceback
    import dask
    with dask.config.set({"temporary-directory": scratch}):
        cluster = distributed.LocalCluster(dashboard_address=None, threads_per_worker=1,
                                           silence_logs=logging.CRITICAL,
                                           local_directory=scratch)
    client = distributed.Client(cluster)
    close = client.close

    def close_both():
        close()
        cluster.close()
    client.close = close_both
    return client
