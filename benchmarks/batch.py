"""Benchmarks of the batch engine (gradcli eval --points, gradcli.evaluate_batch).

    python benchmarks/batch.py                       # everything below, figures as Markdown
    python benchmarks/batch.py --only memory,peers   # a subset: peers, ops, wide, csv, memory
    python benchmarks/batch.py --rows 1000000 --memory-rows 10000000

1. In memory: value and gradient of log(x)+x*y-sin(y) at --rows points, against the NumPy
   closed form (np.log(x)+x*y-np.sin(y), 1/x+y, x-np.cos(y)) and the peers installed here:
   JAX jit(vmap(grad)), PyTorch tensor autograd, HIPS autograd elementwise_grad. Best of
   --repeat runs each, measured in turns in one process; the peers' gradients are checked
   against the closed form. JAX is timed after a warm-up call (its compilation excluded).
2. The wide family (benchmarks/families.py) at 10^3 terms x 10^4 points.
3. CSV in -> CSV out, --rows rows, end to end through the gradcli console script, against
   reading and writing the same file with pyarrow alone (the I/O floor), both as a new process.
4. Peak memory (max RSS) of the console script on a --memory-rows CSV file.

Times are CPU time (user + system, all threads: time.process_time, or the children's rusage),
best of N: the machine is shared by several engineers, and CPU time is what stays steady when
other work takes the cores (wall time under load is several times longer). A peer that uses
several threads (JAX) is charged for all of them.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
EXPR = "log(x)+x*y-sin(y)"


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def points(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(0.1, 10.0, n), rng.uniform(-5.0, 5.0, n)


# -- 1. in memory, against the closed form and the peers -------------------------------------------

def closed_form(x, y):
    return np.log(x) + x * y - np.sin(y), 1 / x + y, x - np.cos(y)


def peer_functions() -> dict:
    """name -> make(x, y) -> run() giving (dx, dy): the peers, each imported only when made."""

    def jax_peer(x, y):
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        def f(a, b):
            return jnp.log(a) + a * b - jnp.sin(b)
        g = jax.jit(jax.vmap(jax.grad(f, argnums=(0, 1))))
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        jax.block_until_ready(g(jx, jy))  # compile once, outside the timing

        def run():
            dx, dy = g(jx, jy)
            return np.asarray(jax.block_until_ready(dx)), np.asarray(dy)
        return run

    def torch_peer(threads):
        def make(x, y):
            import torch
            if threads:
                torch.set_num_threads(threads)

            def run():
                tx = torch.from_numpy(x).requires_grad_(True)
                ty = torch.from_numpy(y).requires_grad_(True)
                f = torch.log(tx) + tx * ty - torch.sin(ty)
                f.backward(torch.ones_like(f))
                return tx.grad.numpy(), ty.grad.numpy()
            return run
        return make

    def autograd_peer(x, y):
        import autograd.numpy as anp
        from autograd import elementwise_grad

        def f(a, b):
            return anp.log(a) + a * b - anp.sin(b)
        gx, gy = elementwise_grad(f, 0), elementwise_grad(f, 1)

        def run():
            return gx(x, y), gy(x, y)
        return run

    return {"JAX jit(vmap(grad))": jax_peer,
            "PyTorch autograd (its default threads)": torch_peer(0),
            "PyTorch autograd (1 thread)": torch_peer(1),
            "HIPS autograd elementwise_grad": autograd_peer}


def peer_worker(name: str, n: int) -> None:
    """Run one peer in this process, on command: the parent writes ``run`` and reads back
    ``wall cpu`` (seconds), so that the peers, in their own interpreter, take turns with gradcli.
    First line out: ``ok``, ``wrong`` (gradient differs from the closed form) or ``missing ...``."""
    x, y = points(n)
    try:
        run = peer_functions()[name](x, y)
    except ImportError as exc:
        print("missing", str(exc).split("\n")[0][:60], flush=True)
        return
    want = closed_form(x, y)
    dx, dy = run()
    ok = np.allclose(dx, want[1], rtol=1e-12) and np.allclose(dy, want[2], rtol=1e-12)
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    print("ok" if ok else "wrong", threads, flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        print(*timed(run), flush=True)


def timed(fn) -> tuple[float, float]:
    """Wall and CPU seconds (CPU: every thread of this process) of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


class Peer:
    """A peer in a worker process (``peer_worker``) of the peers' interpreter."""

    def __init__(self, python: str, name: str, n: int):
        self.proc = subprocess.Popen(
            [python, str(Path(__file__).resolve()), "--peer-worker", name, "--rows", str(n)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.status = (self.proc.stdout.readline() or "missing: the worker failed").split()

    def __call__(self) -> tuple[float, float]:
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        wall, cpu = self.proc.stdout.readline().split()
        return float(wall), float(cpu)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


def peers_python(given: str | None) -> str:
    """The interpreter the peers run in: --peers-python, else the peers' virtual environment
    beside the repository (.peers, see docs/performance.md), else this one."""
    if given:
        return given
    local = HERE.parent / ".peers" / "bin" / "python"
    return str(local) if local.exists() else sys.executable


def in_memory(n: int, repeat: int, python: str) -> list[tuple]:
    from gradcli.api import compile
    from gradcli.engine.batch import evaluate_columns
    x, y = points(n)
    graph = compile(EXPR)
    want = closed_form(x, y)
    ours = evaluate_columns(graph, {"x": x, "y": y})
    # the difference relative to the size of the terms summed (f itself may cancel to ~0)
    sizes = (np.abs(np.log(x)) + np.abs(x * y) + np.abs(np.sin(y)), 1 / x + np.abs(y),
             x + np.abs(np.cos(y)))
    worst = max(float(np.max(np.abs(a - b) / size)) for a, b, size in
                zip((ours.values, ours.gradient["x"], ours.gradient["y"]), want, sizes))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    runs = {"NumPy closed form": lambda: timed(lambda: closed_form(x, y)),
            "gradcli, 1 thread": lambda: timed(lambda: evaluate_columns(
                graph, {"x": x, "y": y}, threads=1))}
    if cores > 1:
        runs[f"gradcli, {cores} threads"] = lambda: timed(
            lambda: evaluate_columns(graph, {"x": x, "y": y}, threads=cores))
    from gradcli.engine.bounds import QuickTest, certain_digits

    def proven(threads):
        """What eval --points runs for every chunk: the sweep with the bounds' quick test beside
        it, then the row-by-row bound of the rows it left (the few short rows it finds are then
        recomputed certified: not timed here)."""
        columns = {"x": x, "y": y}
        quick = QuickTest(graph, columns)
        evaluate_columns(graph, columns, threads=threads, watch=quick)
        return certain_digits(graph, columns, rows=np.flatnonzero(quick.suspects()))
    runs["gradcli + proven digits (quick test), 1 thread"] = lambda: timed(lambda: proven(1))
    if cores > 1:
        runs[f"gradcli + proven digits (quick test), {cores} threads"] = lambda: timed(
            lambda: proven(cores))
    runs["gradcli + every row's own bound (--with-digits), 1 thread"] = lambda: timed(lambda: (
        evaluate_columns(graph, {"x": x, "y": y}, threads=1),
        certain_digits(graph, {"x": x, "y": y})))
    notes = {name: f"differs from the closed form by {worst:.1e} of the terms' size at most"
             for name in runs if "gradcli" in name}
    missing, workers = [], []
    for name in peer_functions():
        peer = Peer(python, name, n)
        if peer.status[0] == "missing":
            missing.append((name, "not installed", "", "", "", " ".join(peer.status[1:])))
            peer.close()
            continue
        workers.append(peer)
        runs[name] = peer
        notes[name] = "" if peer.status[0] == "ok" else "WRONG gradient"
    try:
        walls = {name: [] for name in runs}
        cpus = {name: [] for name in runs}
        for _ in range(repeat):  # in turns, so a busy machine slows every contender alike
            for name, run in runs.items():
                wall, cpu = run()
                walls[name].append(wall)
                cpus[name].append(cpu)
    finally:
        for peer in workers:
            peer.close()
    wall0, cpu0 = min(walls["NumPy closed form"]), min(cpus["NumPy closed form"])
    rows = [(name, f"{min(walls[name]) * 1e3:.1f} ms", f"{min(cpus[name]) * 1e3:.1f} ms",
             f"{min(walls[name]) / wall0:.2f}x", f"{min(cpus[name]) / cpu0:.2f}x",
             notes.get(name, "")) for name in runs]
    return rows + missing


def where_time_goes(n: int, repeat: int) -> list[tuple[str, str, str]]:
    """The closed form's operations one by one; sine and cosine together (gradcli's sincos,
    per block and whole); and the closed form fused by numexpr when installed."""
    from gradcli.engine.batch import BLOCK_ROWS
    from gradcli.engine.trig import sincos
    x, y = points(n)
    blocks = [y[i:i + BLOCK_ROWS] for i in range(0, n, BLOCK_ROWS)]
    rows = []
    for name, fn, note in (
            ("np.log(x)", lambda: np.log(x), ""), ("np.sin(y)", lambda: np.sin(y), ""),
            ("np.cos(y)", lambda: np.cos(y), ""), ("x*y", lambda: x * y, ""),
            ("1/x", lambda: 1 / x, ""),
            ("np.sin(y), np.cos(y), by blocks", lambda: [(np.sin(b), np.cos(b)) for b in blocks],
             f"{BLOCK_ROWS:,} rows a block, as the batch engine"),
            ("gradcli.engine.trig.sincos(y), by blocks", lambda: [sincos(b) for b in blocks],
             "both at once"),
            ("gradcli.engine.trig.sincos(y), whole", lambda: sincos(y), "")):
        rows.append((name, f"{best(fn, repeat) * 1e3:.1f} ms", note))
    try:
        import numexpr
    except ImportError:
        return rows + [("numexpr", "not installed", "")]
    for threads in (1, 2):
        numexpr.set_num_threads(threads)
        xy = {"x": x, "y": y}
        t = best(lambda: (numexpr.evaluate("log(x)+x*y-sin(y)", local_dict=xy),
                          numexpr.evaluate("1/x+y", local_dict=xy),
                          numexpr.evaluate("x-cos(y)", local_dict=xy)), repeat)
        rows.append((f"closed form fused by numexpr, {threads} thread(s)", f"{t * 1e3:.1f} ms",
                     "one pass over cache-sized blocks"))
    return rows


def accuracy(n: int) -> list[tuple[str, str, str]]:
    """The error of gradcli.engine.trig.sincos in ulps against mpmath (80 digits), and np.sin's
    and np.cos's beside it, on: uniform points in [-5, 5] and [-BOUND, BOUND]; the doubles on
    either side of every multiple of π/2 up to BOUND (where the reduction is hardest); tiny
    arguments."""
    import mpmath

    from gradcli.engine.trig import BOUND, sincos
    mpmath.mp.dps = 80
    rng = np.random.default_rng(7)
    near = []
    for k in range(1, int(BOUND / (math.pi / 2)) + 1):
        m = float(mpmath.mpf(k) * mpmath.pi / 2)
        near += [m, math.nextafter(m, 0.0), math.nextafter(m, math.inf)]
    near = np.array(near)
    sets = {f"uniform in [-5, 5], {n:,} points": rng.uniform(-5, 5, n),
            f"uniform in [-{BOUND:g}, {BOUND:g}], {n:,} points": rng.uniform(-BOUND, BOUND, n),
            f"nearest doubles to k·π/2, k = 1..{int(BOUND / (math.pi / 2))} "
            f"({len(near):,} points, both signs)": np.concatenate([near, -near]),
            f"log-uniform 10^-5 .. 10^4, {n:,} points, both signs":
                10.0 ** rng.uniform(-5, 4, n) * rng.choice([-1.0, 1.0], n),
            f"tiny: 10^-300 .. 10^-5, {n // 10:,} points": 10.0 ** rng.uniform(-300, -5, n // 10)}
    rows = []
    for name, x in sets.items():
        s, c = sincos(x)
        errors = [ulps(s, x, mpmath.sin), ulps(c, x, mpmath.cos),
                  ulps(np.sin(x), x, mpmath.sin), ulps(np.cos(x), x, mpmath.cos)]
        rows.append((name, "sin {:.2f}, cos {:.2f} ulp".format(*errors[:2]),
                     "np.sin {:.2f}, np.cos {:.2f} ulp".format(*errors[2:])))
    return rows


def ulps(got: np.ndarray, x: np.ndarray, exact) -> float:
    """The largest error of ``got`` against ``exact`` (an mpmath function), in units in the
    last place of the exact value."""
    import mpmath
    worst = 0.0
    for g, v in zip(got.tolist(), x.tolist()):
        e = exact(mpmath.mpf(v))
        worst = max(worst, float(abs(mpmath.mpf(g) - e) / math.ulp(float(e))))
    return worst


# -- 2. the wide family ----------------------------------------------------------------------------

def wide(terms: int, n: int, repeat: int) -> list[tuple[str, str, str]]:
    from families import INPUTS, wide as wide_source

    from gradcli.api import compile
    from gradcli.engine.batch import evaluate_columns
    rng = np.random.default_rng(1)
    columns = {name: rng.uniform(0.05, 0.95, n) for name in INPUTS}
    t0 = time.process_time()
    graph = compile(wide_source(terms))
    t_compile = time.process_time() - t0
    result = evaluate_columns(graph, columns)
    assert result.n_failed == 0
    t = best(lambda: evaluate_columns(graph, columns), repeat)
    nodes = len(graph.ops)
    return [(f"wide, {terms} terms ({nodes} nodes) x {n} points", f"{t * 1e3:.0f} ms",
             f"{t / (nodes * n) * 1e9:.2f} ns per node-point; compile {t_compile * 1e3:.0f} ms")]


# -- 3. CSV in, CSV out ----------------------------------------------------------------------------

def write_csv(path: Path, n: int) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    x, y = points(n)
    pacsv.write_csv(pa.table({"x": x, "y": y}), path)


def script() -> str:
    found = shutil.which("gradcli", path=os.path.dirname(sys.executable)) or shutil.which("gradcli")
    if not found:
        sys.exit("the gradcli console script is not installed (pip install -e '.[batch]')")
    return found


def run_child(cmd: list[str], out_path: Path) -> tuple[float, float]:
    """CPU seconds (user + system) of the child, and the children's max RSS in MB so far (a
    high-water mark: run the largest last)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out_path, "wb") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise RuntimeError(proc.stderr.decode()[-500:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss / 1024


PYARROW_ONLY = ("import sys, pyarrow.csv as c; t = c.read_csv(sys.argv[1]); "
                "c.write_csv(t, sys.argv[2])")


def csv_round_trip(n: int, repeat: int, tmp: Path) -> list[tuple[str, str, str]]:
    source = tmp / "points.csv"
    write_csv(source, n)
    size = source.stat().st_size / 1e6
    ours = [script(), "eval", EXPR, "--points", str(source)]
    floor = [sys.executable, "-c", PYARROW_ONLY, str(source), str(tmp / "copy.csv")]
    t_ours, t_floor = [], []
    for _ in range(repeat):  # in turns
        t_floor.append(run_child(floor, tmp / "unused")[0])
        t_ours.append(run_child(ours, tmp / "out.csv")[0])
    t_ours, t_floor = min(t_ours), min(t_floor)
    out_size = (tmp / "out.csv").stat().st_size / 1e6
    return [(f"pyarrow read_csv + write_csv alone, {n:,} rows ({size:.0f} MB)",
             f"{t_floor:.2f} s", "1.00x"),
            (f"gradcli eval --points (CSV out on stdout, {out_size:.0f} MB)", f"{t_ours:.2f} s",
             f"{t_ours / t_floor:.2f}x")]


def peak_memory(n: int, tmp: Path) -> list[tuple[str, str, str]]:
    source = tmp / "big.csv"
    write_csv(source, n)
    size = source.stat().st_size / 1e6
    seconds, rss = run_child([script(), "eval", EXPR, "--points", str(source), "-o",
                              str(tmp / "big-out.csv")], tmp / "unused")
    source.unlink()
    return [(f"gradcli eval --points, {n:,} rows ({size:.0f} MB CSV) -o out.csv",
             f"{rss:.0f} MB peak RSS", f"{seconds:.1f} s CPU")]


def table(title: str, rows, header=("what", "CPU time", "note")) -> str:
    lines = [f"### {title}", "", "| " + " | ".join(header) + " |",
             "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--memory-rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="peers,ops,accuracy,wide,csv,memory")
    ap.add_argument("--peers-python", help="the interpreter with the peers installed "
                    "(default: .peers/bin/python beside benchmarks/ if there, else this one)")
    ap.add_argument("--peer-worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer_worker:
        return peer_worker(args.peer_worker, args.rows)
    only = set(args.only.split(","))
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at the start\n")
    if "peers" in only:
        print(table(f"Value and gradient of {EXPR} at {args.rows:,} points, in memory, "
                    f"best of {args.repeat}",
                    in_memory(args.rows, args.repeat, peers_python(args.peers_python)),
                    ("what", "wall", "CPU", "wall ÷ closed form", "CPU ÷ closed form", "note")))
    if "ops" in only:
        print(table(f"Where the closed form's time goes, {args.rows:,} points",
                    where_time_goes(args.rows, args.repeat)))
    if "accuracy" in only:
        print(table("sincos against mpmath, largest error", accuracy(20_000),
                    ("points", "gradcli.engine.trig.sincos", "NumPy (the C library)")))
    if "wide" in only:
        print(table("The wide family", wide(1000, 10_000, max(1, args.repeat // 2))))
    with tempfile.TemporaryDirectory() as tmp:
        if "csv" in only:
            print(table(f"CSV in, CSV out, {args.rows:,} rows, as new processes",
                        csv_round_trip(args.rows, max(1, args.repeat // 2), Path(tmp))))
        if "memory" in only:  # last: RUSAGE_CHILDREN keeps the largest child's peak
            print(table("Peak memory", peak_memory(args.memory_rows, Path(tmp))))


if __name__ == "__main__":
    main()
