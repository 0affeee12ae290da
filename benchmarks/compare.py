"""Two versions of gradcli side by side: per-stage medians of interleaved runs, and their ratios.

    python benchmarks/compare.py main HEAD                      # wide, deep, shared at 10^4 terms
    python benchmarks/compare.py main HEAD --terms 100000 --families wide --rounds 3
    python benchmarks/compare.py main WORKTREE                  # the uncommitted working tree

Each version (a git revision, or WORKTREE) is unpacked into a temporary directory and imported
from there in a fresh process, one process per run, the two versions taking turns so that a busy
machine slows both alike. The generated sources come from this checkout's ``families.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
STAGES = ("parse", "lower", "forward", "reverse")

WORKER = """
import gc, json, sys
sys.path[:0] = [{tree!r}, {bench!r}]
import gradcli
assert gradcli.__file__.startswith({tree!r}), gradcli.__file__
from families import FAMILIES
from run import CLOCKS, run_pipeline
source = FAMILIES[{family!r}]({terms})
run_pipeline("x0*x1")  # imports and the parser's cache, outside the measurement
gc.collect()
times, nodes, _, _ = run_pipeline(source, CLOCKS[{clock!r}])
print(json.dumps({{"times": times, "nodes": nodes}}))
"""


def unpack(revision: str, into: Path) -> Path:
    """A copy of the package at ``revision``, laid out as installed (grammar inside gradcli/)."""
    tree = into / revision.replace("/", "_")
    if revision == "WORKTREE":
        shutil.copytree(REPO / "gradcli", tree / "gradcli")
        shutil.copytree(REPO / "grammar", tree / "gradcli" / "grammar")
        return tree
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, "gradcli", "grammar"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    shutil.move(str(tree / "grammar"), str(tree / "gradcli" / "grammar"))
    return tree


def run_once(tree: Path, family: str, terms: int, clock: str) -> dict:
    code = WORKER.format(tree=str(tree), bench=str(HERE), family=family, terms=terms, clock=clock)
    # the parser's saved tables go next to the unpacked copy, not into the user's cache
    env = {**os.environ, "GRADCLI_CACHE_DIR": str(tree / "cache")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env)
    return json.loads(out.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", help="a git revision, or WORKTREE")
    ap.add_argument("after", help="a git revision, or WORKTREE")
    ap.add_argument("--terms", type=int, default=10_000)
    ap.add_argument("--families", default="wide,deep,shared")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each version (median)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="CPU time of the worker process (default: steadier when the machine is "
                         "shared) or wall time")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        trees = {rev: unpack(rev, Path(tmp)) for rev in (args.before, args.after)}
        print(f"{args.terms:,} terms, median of {args.rounds} interleaved runs; "
              f"µs of {args.clock} time per node\n")
        print("| family | stage | " + " | ".join(trees) + " | after ÷ before |")
        print("|---|---|---|---|---|")
        for family in args.families.split(","):
            runs = {rev: [] for rev in trees}
            for _ in range(args.rounds):
                for rev, tree in trees.items():
                    runs[rev].append(run_once(tree, family, args.terms, args.clock))
            for stage in STAGES + ("total",):
                med = {}
                for rev, rs in runs.items():
                    per = [sum(r["times"][s] for s in STAGES) if stage == "total" else
                           r["times"][stage] for r in rs]
                    med[rev] = statistics.median(per) / rs[0]["nodes"] * 1e6
                a, b = med[args.before], med[args.after]
                print(f"| {family} | {stage} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
