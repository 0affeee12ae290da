"""What certified rows cost in batch: ``gradcli eval --grid`` by default (doubles, rows short of 10
proven digits recomputed), with ``--digits 12`` and ``--digits 20`` (decimal text), and a default
``gradcli plot`` and one of a cancelling function; side by side.

Each command runs as a whole process (start-up included), the variants interleaved, and the CPU
time of each process (user + system, getrusage of the child) is recorded; medians are printed.

    python benchmarks/batch_digits.py [--runs 5] [--expression "log(x)+x*y-sin(y)"]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

GRADCLI = shutil.which("gradcli", path=os.path.dirname(sys.executable)) or "gradcli"


def cpu(args: list[str], cwd: str) -> float:
    """CPU seconds of one run of ``gradcli args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([GRADCLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=cwd, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def workloads(expression: str) -> list[tuple[str, list[str]]]:
    found = []
    for rows in (1_000, 10_000):
        grid = f"x=0.5:4:{rows // 100},y=-2:3:100" if "y" in expression else f"x=0.5:4:{rows}"
        for extra in ([], ["--digits", "12"], ["--digits", "20"]):
            label = f"eval {rows:>6} rows {' '.join(extra) or 'default':>12}"
            found.append((label, ["eval", expression, "--grid", grid, *extra, "-o", "out.csv"]))
    found.append(("plot sin(x)^2 over -3:3 (400 samples)",
                  ["plot", "sin(x)^2", "--over", "x=-3:3", "--width", "80", "--height", "20"]))
    found.append(("plot (1-cos(x))/x^2 over ±1e-7 (400)",
                  ["plot", "(1-cos(x))/x^2", "--over", "x=-1e-7:1e-7", "--width", "80",
                   "--height", "20"]))
    found.append(("eval gamma(x)*sec(x), 10^4 rows",
                  ["eval", "gamma(x)*sec(x)", "--grid", "x=0.1:1.5:10000", "-o", "out.csv"]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--expression", default="log(x)+x*y-sin(y)")
    options = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # start-up with cached bytecode
    jobs = workloads(options.expression)
    times: dict[str, list[float]] = {label: [] for label, _ in jobs}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(options.runs):
            for label, args in jobs:
                times[label].append(cpu(args, folder))
    print(f"load average: {os.getloadavg()[0]:.2f}; median CPU of {options.runs} runs")
    for label, values in times.items():
        print(f"{label:<45} {statistics.median(values) * 1000:8.0f} ms")


if __name__ == "__main__":
    main()
