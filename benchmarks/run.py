"""gradcli's benchmark: per-stage throughput, scaling, memory and start-up, side by side with peers.

    python benchmarks/run.py                   # everything: sizes 10^3, 10^4, 10^5
    python benchmarks/run.py --quick           # sizes 10^3, 10^4, fewer repeats (about a minute)
    python benchmarks/run.py --sizes 100000 --families wide --no-startup --no-peers
    python benchmarks/run.py --commands-only --other-gradcli OLD/bin/gradcli   # eval, --trace, diff

Prints Markdown tables. Times are medians of repeated runs measured in this one process (stages)
or in interleaved fresh processes (start-up), so ratios compare like with like on a busy machine.
"Nodes" are the operations on the tape (``len(graph.ops)``). Peers (SymPy, HIPS autograd,
PyTorch, JAX) run only when importable, each in its own process with a timeout; they are never
dependencies of gradcli. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from families import FAMILIES, INPUTS, POINT, to_python  # noqa: E402

PYTHON = sys.executable
HERE = Path(__file__).resolve()
STAGES = ("parse", "lower", "forward", "reverse", "render")
SEED_EXAMPLE = ("log(x)+x*y-sin(y)", "x=2,y=3")


def median(xs):
    return statistics.median(xs)


# -- stages, in this process ----------------------------------------------------------------------

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


ONE_PASS = True  # time what `gradcli eval` runs: parse and lower in one pass, where there is one


def run_pipeline(source: str, clock=time.perf_counter):
    """One parse -> lower -> forward -> reverse -> render of the plain result; stage times in s.

    ``clock`` is wall time by default; ``time.process_time`` (CPU time) is steadier on a machine
    other work is running on. A gradcli that reads a program in one pass (graph.one_pass) has
    it timed as the parse, with a lower of 0 (``--ast``: the parser and the lowering apart)."""
    from gradcli.engine import graph as graph_module
    from gradcli.engine.forward import forward
    from gradcli.engine.graph import lower
    from gradcli.language.parser import parse
    from gradcli.engine.reverse import reverse
    from gradcli.views.text import result_text

    try:  # parse and lower under one pause of the cyclic GC, as gradcli.api.compile does
        from gradcli.gcpause import gc_paused
    except ImportError:  # a version without it (benchmarks/compare.py runs older ones)
        from contextlib import nullcontext as gc_paused

    if ONE_PASS and (hasattr(graph_module, "one_pass") or hasattr(graph_module, "ONE_PASS_FROM")):
        t0 = clock()
        graph = graph_module.compile(source)
        t1 = t2 = clock()
    else:
        with gc_paused():
            t0 = clock()
            program = parse(source)
            t1 = clock()
            graph = lower(program, source)
            del program  # compile() frees the AST here, before the collector is back
            t2 = clock()
    point = [POINT[name] for name in graph.inputs]
    values = forward(graph, point)
    t3 = clock()
    adjoint, _ = reverse(graph, values, 1.0)
    t4 = clock()
    gradient = {name: adjoint[graph.n_const + i] for i, name in enumerate(graph.inputs)}
    text = result_text(values[graph.output], gradient)  # what `gradcli eval` prints
    t5 = clock()
    times = dict(zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)))
    return times, len(graph.ops), gradient, text


def measure_stages(family: str, n: int, repeat: int, clock=time.perf_counter) -> dict:
    source = FAMILIES[family](n)
    runs, nodes, gradient = [], 0, None
    for _ in range(repeat):
        gc.collect()
        times, nodes, gradient, _ = run_pipeline(source, clock)
        runs.append(times)
    stage = {s: median([r[s] for r in runs]) for s in STAGES}
    total = median([sum(r[s] for s in STAGES[:4]) for r in runs])  # parse+lower+forward+reverse
    return {"family": family, "n": n, "nodes": nodes, "chars": len(source), "stages": stage,
            "total": total, "gradient": gradient}


# -- memory, in a fresh process per workload ------------------------------------------------------

def _rss_peak_bytes() -> int:
    """This process's peak resident set size. Linux's VmHWM is reset by exec; ru_maxrss is not
    (a child starts with its parent's peak), so it is only the fallback."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is in kB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def memory_worker(family: str, n: int) -> dict:
    """Peak RSS growth and tracemalloc peak of one pipeline run, beyond imports and the source."""
    source = FAMILIES[family](n)
    run_pipeline("x0*x1")  # imports and the parser, outside the measurement
    gc.collect()
    before = _rss_peak_bytes()
    _, nodes, _, _ = run_pipeline(source)
    rss = _rss_peak_bytes() - before
    gc.collect()
    tracemalloc.start()
    run_pipeline(source)
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"nodes": nodes, "rss": rss, "traced": traced}


def measure_memory(family: str, n: int) -> dict:
    out = subprocess.run([PYTHON, str(HERE), "--_memory", family, str(n)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


# -- whole processes: start-up, side by side ------------------------------------------------------

def gradcli_command() -> list[str]:
    script = Path(PYTHON).parent / "gradcli"
    exe = str(script) if script.exists() else shutil.which("gradcli")
    return [exe] if exe else [PYTHON, "-m", "gradcli"]


PEER_ONESHOT = {  # the seed example as each peer writes it (from a ready Python function)
    "HIPS autograd": ("autograd", "import autograd.numpy as np\nfrom autograd import grad\n"
                      "f = lambda x, y: np.log(x) + x*y - np.sin(y)\n"
                      "print(f(2., 3.), grad(f, 0)(2., 3.), grad(f, 1)(2., 3.))"),
    "SymPy": ("sympy", "import sympy as s\nx, y = s.symbols('x y')\nf = s.log(x) + x*y - s.sin(y)\n"
              "p = {x: 2, y: 3}\n"
              "print(f.subs(p).evalf(), [f.diff(v).subs(p).evalf() for v in (x, y)])"),
    "PyTorch": ("torch", "import torch\n"
                "x = torch.tensor(2., dtype=torch.float64, requires_grad=True)\n"
                "y = torch.tensor(3., dtype=torch.float64, requires_grad=True)\n"
                "f = torch.log(x) + x*y - torch.sin(y)\nf.backward()\n"
                "print(f.item(), x.grad, y.grad)"),
    "JAX": ("jax", "import jax\njax.config.update('jax_enable_x64', True)\n"
            "import jax.numpy as jnp\n"
            "f = lambda x, y: jnp.log(x) + x*y - jnp.sin(y)\n"
            "print(f(2., 3.), jax.grad(f, (0, 1))(2., 3.))"),
}


def importable(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


def ensure_bytecode() -> None:
    """Compile gradcli's modules as ``pip install`` does, so that start-up is not measured
    recompiling them (PYTHONDONTWRITEBYTECODE keeps an editable install from ever caching)."""
    import compileall

    import gradcli
    compileall.compile_dir(os.path.dirname(gradcli.__file__), quiet=2)


COLD = "(cold: empty cache)"


def startup_commands(with_peers: bool, others: list[str] = ()) -> dict[str, list[str]]:
    expr, at = SEED_EXAMPLE
    commands = {
        "python -c pass": [PYTHON, "-c", "pass"],
        'python -c "import click, lark"': [PYTHON, "-c", "import click, lark"],
        'python -c "import click, lark, rich"': [PYTHON, "-c", "import click, lark, rich"],
        f'gradcli eval "{expr}" --at {at}': gradcli_command() + ["eval", expr, "--at", at],
        f'gradcli eval "{expr}" --at {at} --json': gradcli_command() + ["eval", expr, "--at", at,
                                                                        "--json"],
    }
    for exe in others:  # other gradcli installations, e.g. a checkout of main in its own venv
        commands[f'{exe} eval "{expr}" --at {at}'] = [exe, "eval", expr, "--at", at]
        commands[f'{exe} eval "{expr}" --at {at} --json'] = [exe, "eval", expr, "--at", at,
                                                            "--json"]
    # The first run after installing: an empty cache directory each time (COLD), so the parser's
    # tables are built (bytecode present, as pip compiles it)
    for exe in [gradcli_command(), *([exe] for exe in others)]:
        name = "gradcli" if exe == gradcli_command() else exe[0]
        commands[f'{name} eval "{expr}" --at {at} {COLD}'] = exe + ["eval", expr, "--at", at]
    if with_peers:
        for label, (module, code) in PEER_ONESHOT.items():
            if importable(module):
                commands[f"{label} (one-shot script)"] = [PYTHON, "-c", code]
    return commands


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_startup(runs: int, with_peers: bool,
                    others: list[str] = ()) -> dict[str, tuple[float, float]]:
    """Median wall time and median CPU time (user + system) of each command, in seconds.

    The commands take turns, so a busy machine slows them alike; CPU time is the steadier of
    the two when other work shares the cores."""
    import tempfile
    ensure_bytecode()
    commands = startup_commands(with_peers, others)
    wall: dict[str, list[float]] = {label: [] for label in commands}
    cpu: dict[str, list[float]] = {label: [] for label in commands}
    with tempfile.TemporaryDirectory() as scratch:
        fresh = iter(range(1 << 30))

        def env(label: str):  # a cold command gets a new, empty cache directory every run
            if not label.endswith(COLD):
                return None
            return {**os.environ, "GRADCLI_CACHE_DIR": os.path.join(scratch, str(next(fresh)))}

        for label, cmd in commands.items():  # warm the disk cache and the parser's saved tables
            subprocess.run(cmd, capture_output=True, check=True, env=env(label))
        for _ in range(runs):
            for label, cmd in commands.items():
                environ = env(label)
                c0, t0 = _children_cpu(), time.perf_counter()
                subprocess.run(cmd, capture_output=True, check=True, env=environ)
                wall[label].append(time.perf_counter() - t0)
                cpu[label].append(_children_cpu() - c0)
    return {label: (median(wall[label]), median(cpu[label])) for label in commands}


# -- whole commands: eval, --trace and diff on the families, beside other installations -----------

# (label, family, terms, arguments after the file): the workloads of the speed issue's table;
# a --trace row is compared with the row of the same command without it
_AT = ",".join(f"{k}={v}" for k, v in POINT.items())
COMMANDS = [
    ("eval", "wide", 10_000, ["eval", "--at", _AT]),
    ("eval --trace (40 rows a table)", "wide", 10_000, ["eval", "--trace", "--at", _AT]),
    ("eval --float64", "wide", 10_000, ["eval", "--float64", "--at", _AT]),
    ("eval --float64 --trace (40 rows a table)", "wide", 10_000,
     ["eval", "--float64", "--trace", "--at", _AT]),
    ("eval", "deep", 3_000, ["eval", "--at", ",".join(f"{k}={v}" for k, v in POINT.items())]),
    ("diff", "deep", 3_000, ["diff"]),
    ("eval", "wide", 1_000, ["eval", "--at", ",".join(f"{k}={v}" for k, v in POINT.items())]),
    ("diff", "wide", 1_000, ["diff"]),
]


def measure_commands(runs: int, others: list[str] = ()) -> list[dict]:
    """CPU time (user + system, median of ``runs``) of each of :data:`COMMANDS` as a new
    process, for this gradcli and each of ``others``: every command and installation takes its
    turn in each round, so a machine busier at one moment slows them alike."""
    import tempfile
    exes = {"this": gradcli_command(), **{exe: [exe] for exe in others}}
    cpu: dict[tuple, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        commands = {}
        for label, family, n, args in COMMANDS:
            path = Path(folder) / f"{family}-{n}.txt"
            if not path.exists():
                path.write_text(FAMILIES[family](n), encoding="utf-8")
            for name, exe in exes.items():
                commands[label, family, n, name] = exe + [args[0], "-f", str(path)] + args[1:]
        for c in commands.values():  # warm the disk cache and each installation's bytecode
            subprocess.run(c, capture_output=True, check=True)
        for k in range(runs):
            for key, c in commands.items():
                c0 = _children_cpu()
                subprocess.run(c, capture_output=True, check=True)
                cpu.setdefault(key, []).append(_children_cpu() - c0)
            print(f"  round {k + 1} of {runs}: done", file=sys.stderr, flush=True)
    return [{"command": label, "family": family, "n": n,
             **{name: median(cpu[label, family, n, name]) for name in exes}}
            for label, family, n, _ in COMMANDS]


# -- peers on the same generated source -----------------------------------------------------------

PEERS = {"SymPy": "sympy", "HIPS autograd": "autograd", "PyTorch": "torch", "JAX": "jax"}


def _autograd_erf():
    """erf for autograd without SciPy (autograd.scipy needs it): math.erf and its derivative."""
    import math

    import autograd.numpy as np
    from autograd.extend import defvjp, primitive
    erf = primitive(lambda a: math.erf(a))
    defvjp(erf, lambda ans, a: lambda g: g * 2 / math.sqrt(math.pi) * np.exp(-a * a))
    return erf


def _namespace(peer: str) -> dict:
    """The catalogue's functions as each peer spells them."""
    if peer == "sympy":
        import sympy as m
        return dict(
            exp=m.exp, expm1=lambda a: m.exp(a) - 1, log=m.log, log1p=lambda a: m.log(1 + a),
            log2=lambda a: m.log(a, 2), log10=lambda a: m.log(a, 10), sqrt=m.sqrt, cbrt=m.cbrt,
            sin=m.sin, cos=m.cos, tan=m.tan, asin=m.asin, acos=m.acos, atan=m.atan, sinh=m.sinh,
            cosh=m.cosh, tanh=m.tanh, asinh=m.asinh, acosh=m.acosh, atanh=m.atanh,
            sigmoid=lambda a: 1 / (1 + m.exp(-a)), softplus=lambda a: m.log(1 + m.exp(a)),
            relu=lambda a: (a + m.Abs(a)) / 2, abs=m.Abs, erf=m.erf, sign=m.sign, step=m.Heaviside,
            pow=m.Pow, atan2=m.atan2, hypot=lambda a, b: m.sqrt(a**2 + b**2),
            min=lambda a, b: (a + b - m.Abs(a - b)) / 2,
            max=lambda a, b: (a + b + m.Abs(a - b)) / 2)
    if peer in ("autograd", "jax"):
        if peer == "autograd":
            import autograd.numpy as np
            erf = _autograd_erf()
        else:
            import jax
            jax.config.update("jax_enable_x64", True)
            import jax.numpy as np
            from jax.scipy.special import erf
        return dict(
            exp=np.exp, expm1=np.expm1, log=np.log, log1p=np.log1p, log2=np.log2, log10=np.log10,
            sqrt=np.sqrt, cbrt=lambda a: np.sign(a) * np.abs(a) ** (1 / 3), sin=np.sin,
            cos=np.cos, tan=np.tan, asin=np.arcsin,
            acos=np.arccos, atan=np.arctan, sinh=np.sinh, cosh=np.cosh, tanh=np.tanh,
            asinh=np.arcsinh, acosh=np.arccosh, atanh=np.arctanh,
            sigmoid=lambda a: 1 / (1 + np.exp(-a)), softplus=lambda a: np.logaddexp(0.0, a),
            relu=lambda a: np.maximum(a, 0.0), abs=np.abs, erf=erf, sign=np.sign,
            step=lambda a: np.where(a > 0, 1.0, 0.0), pow=np.power, atan2=np.arctan2,
            hypot=np.hypot, min=np.minimum, max=np.maximum)
    if peer == "torch":
        import torch as t
        return dict(
            exp=t.exp, expm1=t.expm1, log=t.log, log1p=t.log1p, log2=t.log2, log10=t.log10,
            sqrt=t.sqrt, cbrt=lambda a: t.sign(a) * t.abs(a) ** (1 / 3), sin=t.sin, cos=t.cos,
            tan=t.tan, asin=t.asin, acos=t.acos, atan=t.atan, sinh=t.sinh, cosh=t.cosh,
            tanh=t.tanh, asinh=t.asinh, acosh=t.acosh, atanh=t.atanh, sigmoid=t.sigmoid,
            softplus=t.nn.functional.softplus, relu=t.relu, abs=t.abs, erf=t.erf, sign=t.sign,
            step=lambda a: (a > 0).to(t.float64), pow=t.pow, atan2=t.atan2, hypot=t.hypot,
            min=t.minimum, max=t.maximum)
    raise ValueError(peer)


def peer_worker(peer: str, family: str, n: int) -> dict:
    """Gradient of the generated source with ``peer``, from the string; seconds and the gradient."""
    source = FAMILIES[family](n)
    namespace = _namespace(peer)
    point = [POINT[name] for name in INPUTS]
    t0 = time.perf_counter()
    # The benchmark's own generated text, turned into a Python function for the peer.
    exec(compile(to_python(source), f"<{family}>", "exec"), namespace)  # noqa: S102
    f = namespace["f"]
    if peer == "sympy":
        import sympy
        symbols = sympy.symbols(INPUTS, real=True)
        expr = f(*symbols)
        at = dict(zip(symbols, point))
        gradient = [float(expr.diff(s).xreplace(at).evalf()) for s in symbols]
    elif peer == "autograd":
        import autograd
        import numpy
        gradient = list(autograd.grad(lambda v: f(*[v[i] for i in range(len(INPUTS))]))(
            numpy.array(point)))
    elif peer == "torch":
        import torch
        xs = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in point]
        f(*xs).backward()
        gradient = [x.grad.item() if x.grad is not None else 0.0 for x in xs]
    else:  # jax
        import jax
        gradient = [float(g) for g in jax.grad(f, tuple(range(len(INPUTS))))(*point)]
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "gradient": [float(g) for g in gradient]}


def measure_peer(module: str, family: str, n: int, timeout: float) -> dict:
    try:
        out = subprocess.run([PYTHON, str(HERE), "--_peer", module, family, str(n)],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout:g} s"}
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        return {"error": last[:70]}  # e.g. "SyntaxError: too many nested parentheses"
    return json.loads(out.stdout)


def gradients_agree(a: list[float], b: list[float]) -> bool:
    return all(abs(x - y) <= 1e-8 * max(1.0, abs(x), abs(y)) for x, y in zip(a, b))


# -- reporting ------------------------------------------------------------------------------------

def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def growth(big: float, small: float) -> str:
    """time(10N) / time(N), or a dash where a stage takes no time (lowered in the parse's pass)."""
    return f"{big / small:.2f}" if small > 0 else "—"


def fmt_seconds(s: float) -> str:
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=None,
                    help="comma-separated numbers of terms (default 1000,10000,100000)")
    ap.add_argument("--families", default="wide,deep,shared", help="which families to run")
    ap.add_argument("--quick", action="store_true",
                    help="sizes 1000,10000, one repeat, 7 start-up runs, peers up to 1000 terms")
    ap.add_argument("--repeat", type=int, default=None, help="runs per stage measurement (median)")
    ap.add_argument("--startup-runs", type=int, default=None, help="runs per start-up command")
    ap.add_argument("--peer-max", type=int, default=None,
                    help="largest size given to the peers (default: the largest size)")
    ap.add_argument("--peer-timeout", type=float, default=120.0, help="seconds per peer run")
    ap.add_argument("--no-stages", action="store_true")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--no-startup", action="store_true")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--no-commands", action="store_true",
                    help="skip whole eval/--trace/diff commands on the families")
    ap.add_argument("--commands-only", action="store_true",
                    help="only the whole commands (with --other-gradcli beside this one)")
    ap.add_argument("--command-runs", type=int, default=3, help="runs per whole command")
    ap.add_argument("--other-gradcli", action="append", default=[], metavar="EXE",
                    help="also time this gradcli executable's start-up (repeatable)")
    ap.add_argument("--clock", choices=CLOCKS, default="wall",
                    help="stage times as wall time (default) or CPU time of this process")
    ap.add_argument("--json", metavar="FILE", help="also write every measurement to FILE")
    ap.add_argument("--ast", action="store_true",
                    help="time the parser (to the AST) and the lowering apart, not the one pass "
                         "gradcli eval runs")
    ap.add_argument("--_memory", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--_peer", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    global ONE_PASS
    ONE_PASS = not args.ast
    if args.commands_only:
        args.no_stages = args.no_memory = args.no_startup = args.no_peers = True

    if args._memory:
        print(json.dumps(memory_worker(args._memory[0], int(args._memory[1]))))
        return 0
    if args._peer:
        print(json.dumps(peer_worker(args._peer[0], args._peer[1], int(args._peer[2]))))
        return 0

    sizes = [int(s) for s in (args.sizes or ("1000,10000" if args.quick else
                                             "1000,10000,100000")).split(",")]
    families = args.families.split(",")
    repeat = args.repeat or (1 if args.quick else 3)
    startup_runs = args.startup_runs or (7 if args.quick else 21)
    peer_max = args.peer_max or (1000 if args.quick else max(sizes))
    report: dict = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    print(f"Python {report['python']}, {report['cpus']} CPUs; medians of {repeat} runs; "
          f"stage times are {args.clock} time\n")

    if not args.no_startup:
        startup = measure_startup(startup_runs, not args.no_peers, args.other_gradcli)
        report["startup"] = startup
        ref_wall, ref_cpu = startup['python -c "import click, lark"']
        print(f"## Start-up: whole process, median of {startup_runs} interleaved runs\n")
        print(table(["command", "wall", "÷ import click, lark", "CPU", "÷ import click, lark"],
                    [[f"`{label}`", fmt_seconds(w), f"{w / ref_wall:.2f}", fmt_seconds(c),
                      f"{c / ref_cpu:.2f}"] for label, (w, c) in startup.items()]))
        print()

    if not args.no_commands:
        measured = measure_commands(args.command_runs, args.other_gradcli)
        report["commands"] = measured
        names = ["this"] + list(args.other_gradcli)
        evals = {(m["command"], m["family"], m["n"]): m for m in measured
                 if m["command"].startswith("eval") and "--trace" not in m["command"]}
        rows = []
        for m in measured:
            plain = m["command"].split(" --trace")[0]  # the same eval without the trace
            ref = evals.get((plain, m["family"], m["n"]),
                            evals.get(("eval", m["family"], m["n"]), m))
            rows.append([f"`{m['command']}`", m["family"], f"{m['n']:,}"]
                        + [f"{fmt_seconds(m[x])} ({m[x] / ref[x]:.2f}x `{ref['command']}`)"
                           for x in names])
        print(f"## Whole commands: CPU time, median of {args.command_runs} interleaved runs "
              "(÷ the same eval without --trace, or the plain eval of the same source)\n")
        print(table(["command", "family", "terms"] + [f"`{x}`" if x != "this" else "this gradcli"
                                                      for x in names], rows))
        print()

    results = []
    if not args.no_stages:
        for family in families:
            for n in sizes:
                r = measure_stages(family, n, repeat, CLOCKS[args.clock])
                if not args.no_memory:
                    r["memory"] = measure_memory(family, n)
                results.append(r)
                print(f"  {family} {n}: {r['nodes']} nodes, {fmt_seconds(r['total'])}",
                      file=sys.stderr, flush=True)
        report["stages"] = results
        rows = []
        for r in results:
            per = {s: r["stages"][s] / r["nodes"] * 1e6 for s in STAGES}
            row = [r["family"], f"{r['n']:,}", f"{r['nodes']:,}"]
            row += [f"{per[s]:.2f}" for s in STAGES[:4]]
            row += [f"{r['stages']['render'] * 1e3:.2f} ms",
                    f"**{r['total'] / r['nodes'] * 1e6:.2f}**", fmt_seconds(r["total"])]
            if "memory" in r:
                m = r["memory"]
                row += [f"{m['traced'] / r['nodes']:.0f} B", f"{m['rss'] / r['nodes']:.0f} B"]
            rows.append(row)
        header = ["family", "terms", "nodes",
                  "parse µs/node" if args.ast else "parse+lower (one pass) µs/node", "lower", "forward", "reverse",
                  "render", "total µs/node", "total"]
        if not args.no_memory:
            header += ["peak traced/node", "peak RSS/node"]
        print("## Stages: parse + lower + forward + reverse, µs per graph node\n")
        print(table(header, rows))
        print()
        ratios = []
        for family in families:
            by_n = {r["n"]: r for r in results if r["family"] == family}
            for small, big in zip(sorted(by_n), sorted(by_n)[1:]):
                if big == 10 * small:
                    a, b = by_n[small], by_n[big]
                    ratios.append([family, f"{big:,} / {small:,}", growth(b["total"], a["total"])]
                                  + [growth(b["stages"][s], a["stages"][s]) for s in STAGES[:4]])
        if ratios:
            report["ratios"] = ratios
            print("## Scaling: time(10N) / time(N) (linear is 10)\n")
            print(table(["family", "terms", "total", "parse", "lower", "forward", "reverse"],
                        ratios))
            print()

    if not args.no_peers and results:
        available = {label: module for label, module in PEERS.items() if importable(module)}
        rows, report["peers"], failed = [], [], set()
        for r in results:
            if r["n"] > peer_max:
                continue
            for label, module in available.items():
                if (label, r["family"]) in failed:  # it failed on fewer terms: spare the wait
                    rows.append([label, r["family"], f"{r['n']:,}",
                                 "not run (failed on fewer terms)", "—"])
                    continue
                p = measure_peer(module, r["family"], r["n"], args.peer_timeout)
                if "error" in p:
                    failed.add((label, r["family"]))
                report["peers"].append({"peer": label, "family": r["family"], "n": r["n"], **p})
                if "error" in p:
                    rows.append([label, r["family"], f"{r['n']:,}", p["error"], "—"])
                    continue
                ok = gradients_agree(p["gradient"], [r["gradient"].get(x, 0.0) for x in INPUTS])
                ratio = f"{p['seconds'] / r['total']:.1f}" + ("" if ok else " (gradient differs!)")
                rows.append([label, r["family"], f"{r['n']:,}", fmt_seconds(p["seconds"]), ratio])
        if rows:
            print("## Peers on the same generated source (from the string to the gradient)\n")
            print(table(["peer", "family", "terms", "time", "÷ gradcli"], rows))
            print()
        missing = [label for label in PEERS if label not in available]
        if missing:
            print(f"Not installed, so not measured: {', '.join(missing)}.\n")

    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
