"""How long the trace tables take to print, by number of rows: build, lay out, write.

    python benchmarks/tables.py                  # sums of 10^3 and 10^4 terms (~10^4, 10^5 rows)
    python benchmarks/tables.py --terms 30000    # one size
    python benchmarks/tables.py --per-row        # one table drawn by rich, time a row

``--per-row`` times the forward trace table of 100 to 10^4 rows as plain text (a pipe) drawn by
rich, in microseconds a row.

The expression is ``sin(x*0) + sin(x*1) + ...``: three nodes a term, so about ten table rows a
term over the three --trace tables (forward, contributions, adjoints). Each stage is timed in this
process with CPU time (steadier than wall time on a shared machine), and the whole command once
in a fresh process, its output to /dev/null (a pipe or a file). Prints a
Markdown table. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def source(terms: int) -> str:
    return "+".join(f"sin(x*{k})" for k in range(terms))


def stages(terms: int) -> dict:
    from gradcli import evaluate
    from gradcli.views.layout import plain_text, render
    from gradcli.views.tables import trace_tables

    clock = time.process_time
    t0 = clock()
    result = evaluate(source(terms), {"x": 2})
    t1 = clock()
    tables = trace_tables(result.trace, 12, 0)
    t2 = clock()
    natural = plain_text(render(tables, None, styled=False))
    t3 = clock()
    plain_text(render(tables, 80, styled=False))
    t4 = clock()
    rows = sum(len(t.rows) for t in tables)
    return {"rows": rows, "lines": natural.count("\n"), "evaluate": t1 - t0,
            "build": t2 - t1, "natural": t3 - t2, "at 80": t4 - t3}


def command(terms: int) -> float:
    """Wall time of ``gradcli eval -f F --trace --max-rows 0 > /dev/null`` in a fresh process."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(source(terms))
    try:
        start = time.perf_counter()
        with open(os.devnull, "w") as null:
            subprocess.run([sys.executable, "-m", "gradcli", "eval", "-f", f.name, "--at", "x=2",
                            "--trace", "--max-rows", "0"], stdout=null, check=True)
        return time.perf_counter() - start
    finally:
        os.unlink(f.name)


def per_row(rows: int) -> float:
    """CPU microseconds a row to write the forward table of about ``rows`` rows as plain text."""
    from gradcli import evaluate
    from gradcli.views import layout
    from gradcli.views.tables import forward_table

    table = forward_table(evaluate(source(rows // 3), {"x": 2}).trace, 12, 0)
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        layout.plain_text(layout.render([table], None, styled=False))
        best = min(best, time.process_time() - start)
    return best / len(table.rows) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--per-row", action="store_true")
    args = parser.parse_args()
    if args.per_row:
        print("| table rows | rich (µs a row) |")
        print("|---:|---:|")
        for rows in (100, 1000, 10000):
            print(f"| {rows:,} | {per_row(rows):.0f} |")
        return
    print("| terms | table rows | evaluate (s) | build tables (s) | lay out, natural (s) "
          "| lay out, 80 columns (s) | whole command (s, wall) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for terms in args.terms:
        s = stages(terms)
        print(f"| {terms:,} | {s['rows']:,} | {s['evaluate']:.2f} | {s['build']:.2f} "
              f"| {s['natural']:.2f} | {s['at 80']:.2f} | {command(terms):.2f} |")


if __name__ == "__main__":
    main()
