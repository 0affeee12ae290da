"""What certified digits cost: gradcli eval against gradcli eval --float64, side by side.

Each workload runs as a whole process (start-up included), the certified and the float64 command
interleaved, and the CPU time of each process (user + system, from the kernel's accounting of the
child) is recorded; the medians and their ratio are printed. CPU time, not wall time: the ratio
holds on a busy machine.

    python benchmarks/precision.py [--runs 21]
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


def cpu(args: list[str]) -> float:
    """CPU seconds of one run of ``gradcli args`` (getrusage: microseconds, not clock ticks)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([GRADCLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    runs = parser.parse_args().runs
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "gradcli-wide-10000.txt")
    with open(path, "w") as f:
        f.write(wide(10_000))
    at = ",".join(f"{k}={v}" for k, v in POINT.items())
    seed = ["eval", "log(x)+x*y-sin(y)", "--at", "x=2,y=3"]
    workloads = [
        ("seed one-shot", seed, seed + ["--float64"], runs),
        ("seed, --digits 1000", seed + ["--digits", "1000"], seed + ["--float64"], max(3, runs // 4)),
        ("wide 10^4", ["eval", "-f", path, "--at", at], ["eval", "-f", path, "--at", at,
                                                         "--float64"], max(3, runs // 4)),
    ]
    print(f"{'workload':<22} {'certified':>12} {'--float64':>12} {'ratio':>7}   (median CPU, {runs} runs)")
    for name, certified, plain, n in workloads:
        a, b = [], []
        for _ in range(n):  # interleaved: the same machine state for both
            a.append(cpu(certified))
            b.append(cpu(plain))
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"{name:<22} {ma * 1000:>9.1f} ms {mb * 1000:>9.1f} ms {ma / mb:>6.2f}x")


if __name__ == "__main__":
    main()
