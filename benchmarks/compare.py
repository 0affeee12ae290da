"""Two versions of gradcli side by side: per-stage medians of interleaved runs, and their ratios.

    python benchmarks/compare.py main HEAD                      # wide, deep, shared at 10^4 terms
    python benchmarks/compare.py main HEAD --terms 100000 --families wide --rounds 3
    python benchmarks/compare.py main WORKTREE                  # the uncommitted working tree
    python benchmarks/compare.py main HEAD --startup            # start-up of the seed example

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
# An editable install's finder would fill in modules this version lacks from the checkout.
sys.meta_path[:] = [f for f in sys.meta_path
                    if "editable" not in str(getattr(f, "__module__", ""))]
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


STARTUP = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
           "sys.meta_path[:] = [f for f in sys.meta_path "
           "if 'editable' not in str(getattr(f, '__module__', ''))]; "
           "from gradcli.cli import main; main()")


def startup_once(tree: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``gradcli eval`` of the seed example run from ``tree``."""
    import resource
    import time
    command = [sys.executable, "-c", STARTUP, str(tree), "eval", "log(x)+x*y-sin(y)",
               "--at", "x=2,y=3"]
    env = {**os.environ, "GRADCLI_CACHE_DIR": str(tree / "cache")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def compare_startup(trees: dict[str, Path], rounds: int) -> None:
    import compileall
    for tree in trees.values():  # as pip install does; PYTHONDONTWRITEBYTECODE would not
        compileall.compile_dir(str(tree), quiet=2)
        startup_once(tree)  # and the parser's tables saved once, as after a first run
    runs = {rev: [] for rev in trees}
    for _ in range(rounds):
        for rev, tree in trees.items():
            runs[rev].append(startup_once(tree))
    print(f"start-up of `gradcli eval \"log(x)+x*y-sin(y)\" --at x=2,y=3`, median of {rounds} "
          f"interleaved runs\n")
    print("| | " + " | ".join(trees) + " | after ÷ before |")
    print("|---|---|---|---|")
    for i, what in enumerate(("wall", "CPU")):
        med = [statistics.median(r[i] for r in rs) * 1e3 for rs in runs.values()]
        print(f"| {what} | {med[0]:.1f} ms | {med[1]:.1f} ms | {med[1] / med[0]:.2f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", help="a git revision, or WORKTREE")
    ap.add_argument("after", help="a git revision, or WORKTREE")
    ap.add_argument("--terms", type=int, default=10_000)
    ap.add_argument("--families", default="wide,deep,shared")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each version (median)")
    ap.add_argument("--startup", action="store_true",
                    help="compare the start-up of one small evaluation instead of the stages")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="CPU time of the worker process (default: steadier when the machine is "
                         "shared) or wall time")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        trees = {rev: unpack(rev, Path(tmp)) for rev in (args.before, args.after)}
        if args.startup:
            compare_startup(trees, args.rounds * 4)
            return 0
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
