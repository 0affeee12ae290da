"""How long ``gradcli diff`` prints derivatives, next to ``sympy.diff`` (``--simplify``: ``simplify`` of it).

Generates expressions with the property tests' strategy (``tests/strategies.py``, a fixed seed),
prints each first derivative and each second derivative ∂²f/∂x² of every input with gradcli and
with SymPy, and compares their lengths in characters (gradcli's whole printed program, ``t1 = ...``
lines included; SymPy's ``str``). A ratio below 1 means gradcli's is shorter. Every printed
derivative is also evaluated at the case's point and compared with the AD gradient (or, for the
second derivatives, the Hessian's diagonal).

    python benchmarks/diff_quality.py             # 240 expressions, a Markdown report
    python benchmarks/diff_quality.py -n 400 --json
    python benchmarks/diff_quality.py --simplify  # against sympy.simplify(sympy.diff(...)),
                                                  # and the issue's cases (issue 42)

Numbers in the source become SymPy integers or exact decimals (``0.25`` is ``1/4``); a long
decimal becomes a SymPy Float with as many digits as gradcli prints. Functions with a kink are
taken as the branch that holds at the point (as the property tests do). A case whose SymPy side
takes longer than ``--timeout`` seconds is left out and counted.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import pathlib
import signal
import statistics
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import sympy as sp  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

import gradcli  # noqa: E402
from gradcli.engine.primitives import BINARY_OPERATORS, CONSTANTS, lookup  # noqa: E402
from gradcli.language.ast import Assign, Binary, Call, Num, Unary, Var  # noqa: E402
from gradcli.language.printer import to_source  # noqa: E402
from strategies import cases  # noqa: E402
from test_properties import BRANCH, SYMPY  # noqa: E402


def generate(n: int, max_statements: int = 2, max_depth: int = 3) -> list:
    """``n`` distinct generated cases with at least one input, the same on every run."""
    found, seen = [], set()

    @seed(20261130)
    @settings(max_examples=n * 4, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(cases(max_statements=max_statements, max_depth=max_depth))
    def collect(case):
        source = to_source(case.program)
        if len(found) < n and source not in seen and gradcli.compile(source).inputs:
            seen.add(source)
            found.append(case)

    collect()
    return found


def to_sympy(program, point: dict) -> tuple[sp.Expr, dict]:
    """The program's result as a SymPy expression, and its input symbols by name."""
    symbols: dict[str, sp.Symbol] = {}

    def at(expr) -> float:
        return float(expr.subs({symbols[k]: point[k] for k in symbols}).evalf(30))

    def number(v: float):
        if v.is_integer():
            return sp.Integer(int(v))
        text = repr(v)
        if len(text) <= 6:
            return sp.Rational(text)
        return sp.Float(text, len(text.replace(".", "").lstrip("0")))

    env: dict = {}
    stack_result = None
    for stmt in program.statements:
        target = None
        if type(stmt) is Assign:
            target = stmt.name
            stmt = stmt.value if stmt.op == "=" else Binary(stmt.op[0], Var(stmt.name), stmt.value)
        # iterative post-order translation
        out: list = []
        work = [(stmt, False)]
        while work:
            node, ready = work.pop()
            t = type(node)
            if t is Num:
                out.append(number(node.value))
            elif t is Var:
                if node.name in env:
                    out.append(env[node.name])
                elif node.name in CONSTANTS:
                    out.append(sp.pi if node.name == "pi" else sp.E)
                else:
                    out.append(symbols.setdefault(node.name, sp.Symbol(node.name, real=True)))
            elif not ready:
                work.append((node, True))
                kids = ((node.operand,) if t is Unary else (node.left, node.right) if t is Binary
                        else node.args)
                work.extend((k, False) for k in reversed(kids))
            else:
                n = 1 if t is Unary else 2 if t is Binary else len(node.args)
                args = out[len(out) - n:]
                del out[len(out) - n:]
                if t is Unary:
                    out.append(-args[0] if node.op == "-" else args[0])
                elif t is Binary:
                    out.append(SYMPY[BINARY_OPERATORS[node.op]](*args))
                else:
                    name = lookup(node.name).name
                    out.append(BRANCH[name](at, *args) if name in BRANCH else SYMPY[name](*args))
        stack_result = out[0]
        if target is not None:
            env[target] = stack_result
    return stack_result, symbols


class TooSlow(Exception):
    pass


def _alarm(signum, frame):
    raise TooSlow


def measure(case, timeout: int, simplify: bool = False) -> list[dict] | None:
    source = to_source(case.program)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    gc.disable()  # the alarm raised inside a collector's callback would be swallowed
    try:
        expr, symbols = to_sympy(case.program, case.point)
        rows = []
        for order in (1, 2):
            ours = gradcli.derivatives(source, order=order)
            for name, text in ours.items():
                theirs = sp.diff(expr, symbols[name], order) if name in symbols else 0
                theirs = str(sp.simplify(theirs) if simplify else theirs)
                rows.append({"source": source, "wrt": name, "order": order, "gradcli": text,
                             "sympy": theirs, "ratio": len(text) / len(theirs)})
        return rows
    except TooSlow:
        return None
    except gradcli.GradcliError:  # trigamma's derivative has no formula (documented): none
        return []
    finally:
        signal.alarm(0)
        gc.enable()
        signal.signal(signal.SIGALRM, previous)


def agrees(case, rows) -> int:
    """How many printed derivatives disagree with AD at the point (evaluable ones only)."""
    source = to_source(case.program)
    bad = 0
    gradient = gradcli.evaluate(source, case.point).gradient
    hessian = None
    for row in rows:
        try:
            value = gradcli.evaluate(row["gradcli"], case.point).value
        except gradcli.GradcliError:
            continue  # the formula may cross a singular point AD avoids
        if row["order"] == 1:
            want = gradient[row["wrt"]]
        else:
            try:
                hessian = hessian or gradcli.hessian(source, case.point)
            except gradcli.GradcliError:
                continue
            i = hessian.inputs.index(row["wrt"])
            want = hessian.hessian[i][i]
        if not math.isclose(value, want, rel_tol=1e-7, abs_tol=1e-9):
            bad += 1
    return bad


# issue 42's table: what a textbook / SymPy's simplify prints
ISSUE = ["e^x", "x^(1/3)", "(x^2-1)/(x+1)", "atan(1/x)", "x^3-3*x^2+2*x-5"]


def issue_rows() -> list[dict]:
    """The issue's cases: gradcli's printed derivative and SymPy's simplify of its diff, in
    gradcli's syntax (``**`` as ``^``, ``exp(x)`` as ``e^x`` where the source wrote it), and
    whether they are equal (SymPy decides)."""
    x = sp.Symbol("x", real=True)
    rows = []
    for source in ISSUE:
        f = sp.sympify(source.replace("^", "**"), locals={"x": x, "e": sp.E})
        want = sp.simplify(sp.diff(f, x))
        theirs = str(want).replace("**", "^").replace("exp(x)", "e^x")
        ours = gradcli.derivatives(source)["x"]
        equal = sp.simplify(sp.sympify(ours.replace("^", "**"), locals={"x": x, "e": sp.E})
                            - want) == 0
        rows.append({"source": source, "gradcli": ours, "sympy": theirs, "equal": equal,
                     "ratio": len(ours) / len(theirs)})
    return rows


def quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def report(rows: list[dict], n_cases: int, slow: int, bad: int) -> str:
    ratios = [r["ratio"] for r in rows]
    lines = [f"{n_cases} expressions ({slow} left out: SymPy slower than the time limit), "
             f"{len(rows)} derivatives (first and second, every input); "
             f"{bad} printed derivatives disagree with AD at the point.", "",
             "| ratio gradcli/SymPy (characters) | first | second | all |", "|---|---|---|---|"]
    by_order = {o: [r["ratio"] for r in rows if r["order"] == o] for o in (1, 2)}
    for label, q in (("10th percentile", 0.1), ("median", 0.5), ("75th percentile", 0.75),
                     ("90th percentile", 0.9), ("maximum", 1.0)):
        cells = [f"{quantile(v, q):.2f}" for v in (by_order[1], by_order[2], ratios)]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    shorter = sum(r < 1 for r in ratios), sum(r == 1 for r in ratios), sum(r > 1 for r in ratios)
    lines += ["", f"gradcli shorter in {shorter[0]}, as long in {shorter[1]}, longer in "
              f"{shorter[2]} of {len(ratios)}.", "", "The ten worst ratios:", "",
              "| f | ∂ | gradcli | SymPy | ratio |", "|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: -r["ratio"])[:10]:
        wrt = f"∂/∂{r['wrt']}" if r["order"] == 1 else f"∂²/∂{r['wrt']}²"
        f = r["source"].replace("\n", "; ")
        lines.append(f"| `{f}` | {wrt} | {len(r['gradcli'])} | {len(r['sympy'])} | "
                     f"{r['ratio']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=240, help="how many expressions")
    parser.add_argument("--timeout", type=int, default=20, help="seconds for SymPy per case")
    parser.add_argument("--json", action="store_true", help="every row as JSON")
    parser.add_argument("--simplify", action="store_true",
                        help="compare with sympy.simplify(sympy.diff(...)), and add the issue's "
                             "cases")
    args = parser.parse_args(argv)
    rows, slow, bad, done, unprintable = [], 0, 0, 0, 0
    for case in generate(args.n):
        measured = measure(case, args.timeout, args.simplify)
        if measured is None:
            slow += 1
            continue
        if not measured:
            unprintable += 1
            continue
        done += 1
        bad += agrees(case, measured)
        rows += measured
    issue = issue_rows() if args.simplify else []
    if args.json:
        print(json.dumps(rows + issue, ensure_ascii=False, indent=1))
    else:
        print(report(rows, done, slow, bad))
        if unprintable:
            print(f"\n{unprintable} expressions left out: a derivative with no formula "
                  "(trigamma's)")
        if issue:
            print("\nThe issue's cases, against SymPy's simplify:\n\n| f | gradcli | "
                  "simplify | same expression | ratio |\n|---|---|---|---|---|")
            for r in issue:
                print(f"| `{r['source']}` | `{r['gradcli']}` | `{r['sympy']}` | "
                      f"{'yes' if r['equal'] else 'NO'} | {r['ratio']:.2f} |")
    ratios = [r["ratio"] for r in rows]
    ok = statistics.median(ratios) <= 1.0 and quantile(ratios, 0.9) <= 1.5 and not bad \
        and all(r["equal"] for r in issue)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
