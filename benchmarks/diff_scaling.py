"""How ``gradcli diff`` grows with the expression, against ``gradcli eval`` of the same source.

Both commands run as new processes on a family of ``benchmarks/families.py`` at several sizes,
taking turns (so a busy machine slows them alike); the figure is CPU time (user + system), the
median of ``--runs``. Each ``diff`` prints every first derivative (ten inputs); the characters
it printed are given too, since printing is part of the work.

    python benchmarks/diff_scaling.py                          # deep, 300..10000 terms
    python benchmarks/diff_scaling.py --sizes 300,3000 --other-gradcli OLD/bin/gradcli
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path
from statistics import median

from families import FAMILIES, POINT
from run import _children_cpu, ensure_bytecode, gradcli_command

AT = ",".join(f"{k}={v}" for k, v in POINT.items())


def measure(exe: list[str], path: Path, runs: int) -> dict:
    """Median CPU seconds of eval and diff on the file, and diff's output size."""
    cpu: dict[str, list[float]] = {"eval": [], "diff": []}
    size = 0
    for _ in range(runs):
        for label, args in (("eval", ["eval", "-f", str(path), "--at", AT]),
                            ("diff", ["diff", "-f", str(path)])):
            c0 = _children_cpu()
            done = subprocess.run(exe + args, capture_output=True, check=True)
            cpu[label].append(_children_cpu() - c0)
            if label == "diff":
                size = len(done.stdout)
    return {"eval": median(cpu["eval"]), "diff": median(cpu["diff"]), "bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="deep", choices=sorted(FAMILIES))
    parser.add_argument("--sizes", default="300,1000,3000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--other-gradcli", action="append", default=[], metavar="EXE")
    args = parser.parse_args()
    ensure_bytecode()
    exes = {"this": gradcli_command(), **{exe: [exe] for exe in args.other_gradcli}}
    print(f"{args.family}: CPU time, median of {args.runs} runs, eval and diff taking turns\n")
    print("| gradcli | terms | eval | diff | diff ÷ eval | diff's output |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for n in (int(s) for s in args.sizes.split(",")):
            path = Path(folder) / f"{args.family}-{n}.txt"
            path.write_text(FAMILIES[args.family](n), encoding="utf-8")
            for name, exe in exes.items():
                m = measure(exe, path, args.runs)
                print(f"| {name} | {n:,} | {m['eval']:.3f} s | {m['diff']:.3f} s | "
                      f"{m['diff'] / m['eval']:.1f}x | {m['bytes'] / 1e6:.2f} MB |", flush=True)


if __name__ == "__main__":
    main()
