"""What certified digits cost: gradcli eval against gradcli eval --float64, side by side.

Each workload runs as a whole process (start-up included), the certified and the float64 command
interleaved, and the CPU time of each process (user + system, from the kernel's accounting of the
child) is recorded; the medians and their ratio are printed. CPU time, not wall time: the ratio
holds on a busy machine.

    python benchmarks/precision.py [--runs 21]
    python benchmarks/precision.py --runs 3 --wide 10000,100000 --trees /tmp/main,.

``--trees`` runs each source tree's ``python -m gradcli`` (the tree first on ``PYTHONPATH``; its
compiled extensions built in place), all the trees' commands interleaved.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from families import POINT, wide  # noqa: E402

GRADCLI = shutil.which("gradcli", path=os.path.dirname(sys.executable)) or "gradcli"


def cpu(args: list[str], tree: str | None = None) -> float:
    """CPU seconds of one run of ``gradcli args`` (getrusage: microseconds, not clock ticks),
    or of ``python -m gradcli args`` from the source ``tree``."""
    command, env = [GRADCLI, *args], None
    if tree is not None:
        command = [sys.executable, "-m", "gradcli", *args]
        env = {**os.environ, "PYTHONPATH": os.path.abspath(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env=env, cwd=os.environ.get("TMPDIR", "/tmp") if tree else None)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--wide", default="10000", help="the wide family's sizes, by commas")
    parser.add_argument("--trees", help="source trees to compare, by commas (default: the "
                                        "installed gradcli)")
    args = parser.parse_args()
    runs = args.runs
    at = ",".join(f"{k}={v}" for k, v in POINT.items())
    seed = ["eval", "log(x)+x*y-sin(y)", "--at", "x=2,y=3"]
    workloads = [
        ("seed one-shot", seed, seed + ["--float64"], runs),
        ("seed, --digits 1000", seed + ["--digits", "1000"], seed + ["--float64"], max(3, runs // 4)),
    ]
    for n in map(int, args.wide.split(",")):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"gradcli-wide-{n}.txt")
        with open(path, "w") as f:
            f.write(wide(n))
        file = ["eval", "-f", path, "--at", at]
        workloads.append((f"wide {n:,}", file, file + ["--float64"], max(3, runs // 4)))
    trees = args.trees.split(",") if args.trees else [None]
    print(f"{'workload':<22} {'tree':<16} {'certified':>12} {'--float64':>12} {'ratio':>7}"
          f"   (median CPU, {runs} runs, load {os.getloadavg()[0]:.1f})")
    for name, certified, plain, n in workloads:
        times = {(tree, mode): [] for tree in trees for mode in (0, 1)}
        for _ in range(n):  # interleaved: the same machine state for all
            for tree in trees:
                times[tree, 0].append(cpu(certified, tree))
                times[tree, 1].append(cpu(plain, tree))
        for tree in trees:
            ma, mb = statistics.median(times[tree, 0]), statistics.median(times[tree, 1])
            print(f"{name:<22} {tree or 'installed':<16} {ma * 1000:>9.1f} ms "
                  f"{mb * 1000:>9.1f} ms {ma / mb:>6.2f}x")


if __name__ == "__main__":
    main()
