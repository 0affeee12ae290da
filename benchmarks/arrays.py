"""Arrays (docs/arrays.md, issue 41): the gradient of two losses by their weights, gradcli's
--float64 (array nodes) and certified (the scalar tape, proven) against autograd, JAX and
PyTorch fed the same computation, side by side in one run; a Markdown table.

    python benchmarks/arrays.py                     # logistic 10^5 x 20, MLP 10^4 rows
    python benchmarks/arrays.py --rows 1000 --mlp-rows 1000 --repeat 1
    python benchmarks/arrays.py --certified-rows 10000 --certified-mlp-rows 300
    python benchmarks/arrays.py --no-peers --repeat 3   # gradcli alone, and the command line

1. The logistic loss  p = sigmoid(X @ w + b); -sum(y*log(p) + (1-y)*log(1-p)),  X of --rows x 20,
   the gradient by w and b.
2. A two-layer MLP  mean((tanh(X @ W1 + b1) @ w2 - y)^2),  X of --mlp-rows x 20, 32 hidden
   units, the gradient by W1, b1 and w2.

Every tool gets the same NumPy float64 arrays and computes the value and the gradient in
float64; the gradients are checked against gradcli's --float64 ones (the largest relative
difference is printed). gradcli goes through its Python API as autograd does, the function
built once and called with the arrays (``graph = gradcli.compile(source, shapes, arrays=True)``,
then ``gradcli.evaluate(graph, arrays, wrt=..., float64=True)``: the sweeps); the row "text"
passes the program's text each call (``evaluate(source, ...)``: parse, lower, sweep).
Certified (``evaluate(..., quick=True)``, every printed digit proven, as the command line) runs
on the same array nodes, first by the quick proof (``gradcli.engine.quickarrays``), then with
Arb balls (``gradcli.engine.arbarrays``) for what it leaves, at the full size; the
scalar tape it replaced (a node per element per operation, still what certifies anything the
balls cannot settle) is measured on --certified-rows (and --certified-mlp-rows) rows, and
scaled.

The command line, end to end: the same losses from ``.npy`` files through the installed
console script (``gradcli eval SOURCE --at X=@X.npy,... --wrt ...``), ``--float64`` and
certified, in turns: the CPU time and peak memory of the process (``/usr/bin/time``), reading
the files, parsing, sweeping, proving and printing included, as a user runs it.

JAX: ``jit(grad(...))`` with float64 enabled; its first call (tracing and XLA compilation) is
shown apart, the table has the calls after it. Times are CPU time (user + system, every thread:
JAX and PyTorch use several), best of --repeat, every tool called once per round, in turns.

The allocator: glibc gives each new array of more than 128 kB fresh pages from the kernel
(mmap) and returns them when it is freed, so an elementwise operation on 10^5 numbers costs
more in page faults than in arithmetic (``np.exp`` of a new 2.5 MB array: 2.3 ms, of one in
reused memory: 0.3 ms), and which tool pays more depends on the order of its allocations more
than on its work. The benchmark runs itself with ``MALLOC_MMAP_THRESHOLD_`` and
``MALLOC_TRIM_THRESHOLD_`` set so that freed memory is reused, for every tool alike;
``--system-malloc`` keeps the defaults.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import numpy as np

NO_PEERS = False  # --no-peers: gradcli's rows alone
LOGISTIC = "p = sigmoid(X @ w + b); -sum(y*log(p) + (1-y)*log(1-p))"
MLP = "mean((tanh(X @ W1 + b1) @ w2 - y)^2)"


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return min(times), out


def interleaved(runs: dict, repeat: int) -> dict:
    """name -> (best CPU time, last result) of each of ``runs`` (name -> function), run in
    turns, one call of each per round: a spell of load on the shared machine falls on all."""
    times = {name: [] for name in runs}
    out = {}
    for _ in range(repeat):
        for name, fn in runs.items():
            t0 = time.process_time()
            out[name] = fn()
            times[name].append(time.process_time() - t0)
    return {name: (min(times[name]), out[name]) for name in runs}


def logistic_data(n: int, k: int = 20, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, k))
    w = rng.normal(size=k) * 0.3
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w)))) * 1.0
    return {"X": X, "w": w, "b": 0.1, "y": y}


def mlp_data(n: int, k: int = 20, hidden: int = 32, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    return {"X": rng.normal(size=(n, k)), "W1": rng.normal(size=(k, hidden)) / np.sqrt(k),
            "b1": rng.normal(size=hidden) * 0.1, "w2": rng.normal(size=hidden) / np.sqrt(hidden),
            "y": rng.normal(size=n)}


# -- the peers: the same computation in each ---------------------------------------------------

def logistic_in(np_):
    def loss(w, b, X, y):
        p = 1 / (1 + np_.exp(-(X @ w + b)))
        return -np_.sum(y * np_.log(p) + (1 - y) * np_.log(1 - p))
    return loss


def mlp_in(np_):
    def loss(W1, b1, w2, X, y):
        return np_.mean((np_.tanh(X @ W1 + b1) @ w2 - y) ** 2)
    return loss


def peers(case: str, data: dict, wrt: list[str]) -> dict:
    """name -> (function giving the gradient as a list of arrays in wrt's order, note)."""
    out = {}
    others = [k for k in data if k not in wrt]
    try:
        import autograd
        import autograd.numpy as anp
        loss_a = (logistic_in if case == "logistic" else mlp_in)(anp)
        g = autograd.grad(lambda ws: loss_a(*ws, *[data[k] for k in others]))
        weights = [np.asarray(data[k], dtype=float) for k in wrt]
        out["autograd"] = (lambda: g(weights), "")
    except ImportError:
        pass
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        loss_j = (logistic_in if case == "logistic" else mlp_in)(jnp)
        f = jax.jit(jax.grad(lambda ws, *rest: loss_j(*ws, *rest)))
        args = ([jnp.asarray(data[k], dtype=jnp.float64) for k in wrt],
                *[jnp.asarray(data[k]) for k in others])
        t0 = time.process_time()
        jax.block_until_ready(f(*args))
        compile_time = time.process_time() - t0
        out["JAX (jit)"] = (lambda: [np.asarray(v) for v in jax.block_until_ready(f(*args))],
                            f"first call (trace + compile) {compile_time * 1000:.0f} ms")
    except ImportError:
        pass
    try:
        import torch
        loss_t = (logistic_in if case == "logistic" else mlp_in)(torch)
        fixed = [torch.as_tensor(data[k], dtype=torch.float64) for k in others]

        def run():
            ws = [torch.tensor(data[k], dtype=torch.float64, requires_grad=True) for k in wrt]
            loss_t(*ws, *fixed).backward()
            return [w.grad.numpy() for w in ws]
        out["PyTorch"] = (run, "")
    except ImportError:
        pass
    return out


def gradcli_run(source: str, data: dict, wrt: list[str], certified: bool, tape: bool = False,
                text: bool = False):
    """A function giving gradcli's gradient (a list of arrays in wrt's order) and its result:
    of the program compiled once to array nodes (``compile(source, shapes, arrays=True)``, as
    autograd's ``grad`` builds its function once), or with ``text`` of its text, parsed and
    lowered each call; ``tape``: certified on the scalar tape (a graph compiled for the
    shapes, each call)."""
    from gradcli import compile, evaluate
    shapes = {k: np.shape(v) for k, v in data.items() if np.ndim(v)}
    nodes = None if text or tape else compile(source, shapes, arrays=True)

    def run():
        program = nodes or source
        if tape:
            program = compile(source, shapes)
        r = evaluate(program, data, wrt=wrt, float64=not certified, quick=certified)
        shaped = r.shaped_gradient
        return [np.asarray(shaped[k], dtype=float) for k in wrt], r
    return run


def _proof(result) -> str:
    """How a certified result was proven: by the quick proof alone, or on Arb balls."""
    bits = getattr(result.certified, "bits", None)
    return "by the quick proof alone" if bits is None else f"on Arb balls, {bits} bits"


def largest_difference(grads: list, reference: list) -> float:
    return max(float(np.max(np.abs(np.asarray(g) - r) / np.maximum(np.abs(r), 1e-300)))
               for g, r in zip(grads, reference))


def case_rows(case: str, source: str, data: dict, small: dict, wrt: list[str], repeat: int):
    text = gradcli_run(source, data, wrt, certified=False, text=True)
    runs = {"gradcli --float64": gradcli_run(source, data, wrt, certified=False),
            "gradcli --float64, text": lambda: text()[0]}
    notes = {"gradcli --float64, text": "the program's text each call: parsed and lowered"}
    for name, (fn, note) in ({} if NO_PEERS else peers(case, data, wrt)).items():
        runs[name], notes[name] = fn, note
    timed = interleaved(runs, repeat)
    t64, (g64, r) = timed.pop("gradcli --float64")
    rows = [("gradcli --float64", t64, 0.0, f"{type(r.graph).__name__}: {len(r.graph)} nodes")]
    n, n_small = len(data["X"]), len(small["X"])
    tb, (gb, rb) = best(gradcli_run(source, data, wrt, certified=True), min(repeat, 3))
    rows.append(("gradcli certified", tb, largest_difference(gb, g64),
                 f"{type(rb.graph).__name__} {_proof(rb)}; {tb / t64:.0f}x --float64"))
    tc, (gc, rc) = best(gradcli_run(source, small, wrt, certified=True, tape=True), 1)
    g64_small, _ = gradcli_run(source, small, wrt, certified=False)()
    scaled = tc * n / n_small
    rows.append((f"gradcli certified, scalar tape ({n_small:,} rows)", tc,
                 largest_difference(gc, g64_small),
                 f"{len(rc.graph.ops):,} nodes; x{n // n_small} rows: "
                 f"~{scaled:.0f} s, {scaled / t64:.0f}x --float64"))
    for name, (t, grads) in timed.items():
        rows.append((name, t, largest_difference(grads, g64), notes[name]))
    return rows


def command_rows(source: str, data: dict, wrt: list[str], repeat: int) -> list:
    """(mode, best CPU time, its peak RSS in MB) of the console script on ``data`` saved as
    ``.npy`` files, --float64 and certified in turns."""
    import shutil
    import subprocess
    import tempfile
    script = shutil.which("gradcli") or sys.exit("gradcli is not installed (pip install -e .)")
    with tempfile.TemporaryDirectory() as folder:
        at = []
        for name, value in data.items():
            if np.ndim(value):
                np.save(os.path.join(folder, f"{name}.npy"), value)
                at.append(f"{name}=@{os.path.join(folder, name + '.npy')}")
            else:
                at.append(f"{name}={value!r}")
        base = [script, "eval", source, "--at", ",".join(at), "--wrt", ",".join(wrt)]
        runs = {"--float64": base + ["--float64"], "certified": base}
        seen: dict = {mode: [] for mode in runs}
        # /usr/bin/time reports its child's own peak: a child forked from this process would
        # count this process's arrays in its peak (Linux keeps the high-water mark over exec)
        timing = os.path.join(folder, "time.txt")
        for _ in range(repeat):
            for mode, argv in runs.items():
                subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", timing, *argv],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                with open(timing) as f:
                    user, system, peak = f.read().split()[-3:]
                seen[mode].append((float(user) + float(system), int(peak) / 1024))
    return [(mode, *min(times)) for mode, times in seen.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--mlp-rows", type=int, default=10_000)
    parser.add_argument("--certified-rows", type=int, default=2_000)
    parser.add_argument("--certified-mlp-rows", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--no-peers", action="store_true", help="gradcli alone")
    parser.add_argument("--no-command", action="store_true",
                        help="leave out the console script's end-to-end rows")
    parser.add_argument("--system-malloc", action="store_true",
                        help="keep glibc's default thresholds (see the module's docstring)")
    args = parser.parse_args()
    global NO_PEERS
    NO_PEERS = args.no_peers
    if not args.system_malloc and "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=str(32 << 20),
                   MALLOC_TRIM_THRESHOLD_=str(1 << 30))
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    malloc = ("glibc defaults" if args.system_malloc
              else "MALLOC_MMAP_THRESHOLD_=32 MiB, MALLOC_TRIM_THRESHOLD_=1 GiB")
    cases = [
        ("logistic", LOGISTIC, logistic_data(args.rows), logistic_data(args.certified_rows),
         ["w", "b"], f"logistic loss, X {args.rows:,} x 20, gradient by w, b"),
        ("mlp", MLP, mlp_data(args.mlp_rows), mlp_data(args.certified_mlp_rows),
         ["W1", "b1", "w2"], f"MLP loss, X {args.mlp_rows:,} x 20, 32 hidden, gradient by "
                             "W1, b1, w2"),
    ]
    print(f"CPU time, best of {args.repeat}; Python {sys.version.split()[0]}, NumPy "
          f"{np.__version__}; {malloc}\n")
    for case, source, data, small, wrt, title in cases:
        rows = case_rows(case, source, data, small, wrt, args.repeat)
        base = rows[0][1]
        autograd_time = next((t for name, t, _, _ in rows if name == "autograd"), None)
        print(f"**{title}**: `{source}`\n")
        print("| tool | time | vs gradcli --float64 | largest rel. difference of the gradient "
              "| note |")
        print("|---|---|---|---|---|")
        for name, t, diff, note in rows:
            print(f"| {name} | {t * 1000:.1f} ms | {t / base:.2f}x | {diff:.1e} | {note} |")
        if autograd_time:
            print(f"\ngradcli --float64 / autograd: {base / autograd_time:.2f}x")
        print()
        if not args.no_command:
            rows = command_rows(source, data, wrt, min(args.repeat, 5))
            print("The command line, from .npy files (CPU of the process, its peak memory):\n")
            print("| gradcli eval | time | peak memory | vs --float64 |")
            print("|---|---|---|---|")
            for mode, t, peak in rows:
                print(f"| {mode} | {t:.2f} s | {peak:.0f} MB | {t / rows[0][1]:.1f}x |")
            print()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of the whole run: {peak:.0f} MB")


if __name__ == "__main__":
    main()
