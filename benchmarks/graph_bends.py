"""How straight ``gradcli graph`` draws its edges: bends per edge over a fixed corpus, both layouts.

    python benchmarks/graph_bends.py

Each drawing is read back by the tests' reader (tests/drawn.py: it also checks that every edge
reaches the right port), and the changes of direction along each edge are counted. Prints a
Markdown table: edges, edges drawn straight (no bend), and bends in all, per expression and
layout. Not part of the test suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from drawn import read_drawing  # noqa: E402

from gradcli.cli import main  # noqa: E402

SUM20 = "+".join(f"x{k}" for k in range(1, 21))
CORPUS = [
    ("log(x)+x*y-sin(y)", "x=2,y=3"),
    ("(hypot(x, z) + (z + sin(z)))", "x=1,z=2"),
    ("sin(cos(exp(x)))", "x=1"),
    ("a+b+c+d", "a=1,b=2,c=3,d=4"),
    (SUM20, ",".join(f"x{k}={k}" for k in range(1, 21))),
    ("s = sin(x)*y; t = s + exp(s); t*s + y", "x=1,y=2"),
    ("c = x*y; c += c + 1; c", "x=1,y=2"),
    ("x*x", "x=3"),
    ("(x+y)*(x-y)/(x*y+1)", "x=2,y=3"),
    ("exp(-(x^2+y^2)/2)*cos(3*x)+log(1+x^2)", "x=1,y=2"),
]


def measure(source: str, at: str, layout: str) -> tuple[int, int, int]:
    result = CliRunner().invoke(main, ["graph", "--width", "1000", "--layout", layout,
                                       "--at", at, "--", source])
    assert result.exit_code == 0, result.output
    _, edges = read_drawing(result.stdout)
    bends = [edge[4] for edge in edges]
    return len(bends), sum(1 for b in bends if b == 0), sum(bends)


def main_() -> None:
    print("| expression | layout | edges | straight | bends |")
    print("|---|---|---:|---:|---:|")
    totals = {}
    for source, at in CORPUS:
        for layout in ("lr", "tb"):
            n, straight, bends = measure(source, at, layout)
            t = totals.setdefault(layout, [0, 0, 0])
            t[0] += n
            t[1] += straight
            t[2] += bends
            shown = source if len(source) <= 40 else source[:37] + "..."
            print(f"| `{shown}` | {layout} | {n} | {straight} | {bends} |")
    for layout, (n, straight, bends) in totals.items():
        print(f"| **all** | {layout} | {n} | {straight} | {bends} |")


if __name__ == "__main__":
    main_()
