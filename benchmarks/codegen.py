"""What ``gradcli codegen`` emits: its size beside SymPy's code generation, and its speed.

**Size.** For the benchmark families (``benchmarks/families.py``: wide, deep, shared) at N terms,
the C code gradcli writes for the value and the gradient (straight-line adjoint code) against
the C code SymPy writes for the same (``sympy.utilities.codegen.codegen`` of the function and
its ``sympy.diff`` partial derivatives, without ``cse``), in characters and per tape node. A
SymPy side that takes longer than ``--timeout`` seconds is left out (">").

**Speed.** The seed's gradient (``log(x)+x*y-sin(y)``) at 10^6 points, best of ``--repeat``
runs, wall time: the generated C over arrays (``f_points``, through ctypes; compiled with
``cc -O2``), the generated NumPy code, the NumPy closed form written by hand, and gradcli's
batch engine (``gradcli.evaluate_batch``).

    python benchmarks/codegen.py                      # both, a Markdown report
    python benchmarks/codegen.py --only size --sizes 100,1000,10000
"""

from __future__ import annotations

import argparse
import ctypes
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gradcli  # noqa: E402
from families import FAMILIES  # noqa: E402
from gradcli.api import compile  # noqa: E402
from gradcli.language.ast import Assign, Binary, Call, Num, Unary, Var  # noqa: E402
from gradcli.engine.graph import parse_source  # noqa: E402
from gradcli.engine.primitives import BINARY_OPERATORS, CONSTANTS, lookup  # noqa: E402

SEED = "log(x)+x*y-sin(y)"


# -- size ------------------------------------------------------------------------------------------

def sympy_function(source: str):
    """The program's result as one SymPy expression (assigned names substituted, their
    subexpressions shared as Python objects), and its inputs in order."""
    import sympy as sp
    functions = {
        "exp": sp.exp, "expm1": lambda a: sp.exp(a) - 1, "log": sp.log,
        "log1p": lambda a: sp.log(1 + a), "log2": lambda a: sp.log(a, 2),
        "log10": lambda a: sp.log(a, 10), "sqrt": sp.sqrt, "cbrt": sp.cbrt, "sin": sp.sin,
        "cos": sp.cos, "tan": sp.tan, "asin": sp.asin, "acos": sp.acos, "atan": sp.atan,
        "atan2": sp.atan2, "hypot": lambda a, b: sp.sqrt(a**2 + b**2), "sinh": sp.sinh,
        "cosh": sp.cosh, "tanh": sp.tanh, "asinh": sp.asinh, "acosh": sp.acosh,
        "atanh": sp.atanh, "sigmoid": lambda a: 1 / (1 + sp.exp(-a)),
        "softplus": lambda a: sp.log(1 + sp.exp(a)), "relu": lambda a: sp.Max(a, 0),
        "abs": sp.Abs, "min": sp.Min, "max": sp.Max, "sign": sp.sign,
        "step": sp.Heaviside, "erf": sp.erf, "pow": lambda a, b: a**b,
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
    }
    symbols: dict[str, object] = {}
    env: dict[str, object] = {}
    result = None
    for stmt in parse_source(source).statements:
        expr = stmt.value if type(stmt) is Assign else stmt
        if type(stmt) is Assign and stmt.op != "=":
            expr = Binary(stmt.op[0], Var(stmt.name), expr)
        stack, out = [(expr, False)], []
        while stack:  # post-order, iteratively (the deep family is deep)
            node, ready = stack.pop()
            t = type(node)
            if t is Num:
                out.append(sp.Float(node.value) if node.value != int(node.value)
                           else sp.Integer(int(node.value)))
            elif t is Var:
                if node.name in env:
                    out.append(env[node.name])
                elif node.name in CONSTANTS:
                    out.append({"pi": sp.pi, "e": sp.E}[node.name])
                else:
                    out.append(symbols.setdefault(node.name, sp.Symbol(node.name, real=True)))
            elif not ready:
                stack.append((node, True))
                children = {Unary: lambda n: [n.operand], Binary: lambda n: [n.left, n.right],
                            Call: lambda n: list(n.args)}[t](node)
                stack.extend((c, False) for c in reversed(children))
            elif t is Unary:
                out.append(-out.pop() if node.op == "-" else out.pop())
            else:
                name = BINARY_OPERATORS[node.op] if t is Binary else lookup(node.name).name
                k = 2 if t is Binary else len(node.args)
                args = out[len(out) - k:]
                del out[len(out) - k:]
                out.append(functions[name](*args))
        result = out[0]
        if type(stmt) is Assign:
            env[stmt.name] = result
    return result, list(symbols.values())


class Timeout(Exception):
    pass


def sympy_size(source: str, timeout: float) -> int | None:
    """Characters of SymPy's C code for the value and its partial derivatives (no cse)."""
    from sympy.utilities.codegen import codegen as sympy_codegen

    def stop(*_):
        raise Timeout
    signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        f, xs = sympy_function(source)
        routines = [("f", f)] + [(f"df_d{x}", f.diff(x)) for x in xs]
        [(_, code), _] = sympy_codegen(routines, "C99", "grad", header=False, empty=False)
        return len(code)
    except (Timeout, RecursionError):
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def size_report(sizes: list[int], timeout: float) -> list[str]:
    lines = ["| family | N | tape nodes | gradcli C: lines | per node | characters | per node | "
             "SymPy C (no cse): characters | per node |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for family, make in FAMILIES.items():
        given_up = False  # once SymPy takes too long, larger sizes are not tried
        for n in sizes:
            source = make(n)
            nodes = len(compile(source).ops)
            code = gradcli.codegen(source, "c")
            ours, lines_ = len(code), code.count("\n")
            theirs = None if given_up else sympy_size(source, timeout)
            shown = f"{theirs:,} | {theirs / nodes:,.0f}" if theirs else \
                ("not run | –" if given_up else f"> {timeout:g} s | –")
            given_up = given_up or theirs is None
            lines.append(f"| {family} | {n:,} | {nodes:,} | {lines_:,} | {lines_ / nodes:.2f} | "
                         f"{ours:,} | {ours / nodes:,.0f} | {shown} |")
            print(lines[-1], file=sys.stderr, flush=True)
    return lines


# -- speed -----------------------------------------------------------------------------------------

def best(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def speed_report(n: int, repeat: int) -> list[str]:
    import numpy as np
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0.1, 4.0, n), rng.uniform(-4.0, 4.0, n)
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        directory = pathlib.Path(directory)
        (directory / "grad_numpy.py").write_text(gradcli.codegen(SEED, "numpy"))
        sys.path.insert(0, str(directory))
        import grad_numpy
        rows.append(("generated NumPy code", lambda: grad_numpy.f(x, y)))
        cc = shutil.which("cc")
        if cc:
            (directory / "grad.c").write_text(gradcli.codegen(SEED, "c"))
            subprocess.run([cc, "-std=c99", "-O2", "-shared", "-fPIC", "-o",
                            str(directory / "grad.so"), str(directory / "grad.c"), "-lm"],
                           check=True)
            lib = ctypes.CDLL(str(directory / "grad.so"))
            points = np.ascontiguousarray(np.stack([x, y], axis=1))
            out, grad = np.empty(n), np.empty((n, 2))
            pointer = ctypes.POINTER(ctypes.c_double)

            def c_run():
                lib.f_points(ctypes.c_size_t(n), points.ctypes.data_as(pointer),
                             out.ctypes.data_as(pointer), grad.ctypes.data_as(pointer))
            rows.insert(0, ("generated C (f_points, ctypes)", c_run))
        rows.append(("NumPy closed form", lambda: (np.log(x) + x * y - np.sin(y), 1 / x + y,
                                                   x - np.cos(y))))
        rows.append(("gradcli batch engine", lambda: gradcli.evaluate_batch(SEED,
                                                                           {"x": x, "y": y},
                                                                           float64=True)))
        lines = [f"| the seed's gradient at {n:,} points | wall time (best of {repeat}) |",
                 "|---|---:|"]
        for name, run in rows:
            run()  # warm: imports, caches
            lines.append(f"| {name} | {best(run, repeat) * 1000:,.1f} ms |")
            print(lines[-1], file=sys.stderr, flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="size,speed")
    ap.add_argument("--sizes", default="10,30,100,1000,10000")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    report = []
    if "size" in args.only:
        report += size_report([int(s) for s in args.sizes.split(",")], args.timeout) + [""]
    if "speed" in args.only:
        report += speed_report(args.points, args.repeat)
    print("\n".join(report))


if __name__ == "__main__":
    main()
