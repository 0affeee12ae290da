"""A probe of issue 38's promise beyond eval: are the numbers hessian, eval --mode forward, the
Jacobian, the VJP and the JVP print ever wrong?

Random compositions of the rule table's rows (and points near their singularities) are run
through the Python API, certified, at 13 and 30 digits; every printed number is compared with
mpmath at 500 digits (mpmath.diff of the same source, read by the tests' independent mpmath
reader). A number is *checked* when it prints digits, *short* when it prints fewer digits than
asked or a bound (``0 ± 1eK``, ``?``), *wrong* when the truth does not round to it, *refused*
when the command raises a numerical error where mpmath has a finite answer.

    python benchmarks/proof_probe.py [--cases 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter

import mpmath

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import gradcli  # noqa: E402
from gradcli.engine.primitives import TABLE  # noqa: E402
from gradcli.errors import DomainError, GradcliError  # noqa: E402
from test_certified import reference, shows  # noqa: E402

UNARY = sorted(n for n, p in TABLE.items() if p.arity == 1 and not p.is_operator)
BINARY = ["pow", "atan2", "hypot", "log_base", "min", "max", "mod"]
POINTS = ["0.3", "1.7", "-0.6", "2.5", "0.9999999", "-0.9999999", "1e-7", "1000", "1.5707963",
          "3.1415926", "-2.5", "30"]
TEMPLATES = ["{f}({g}(x))", "{f}(x)*{g}(y)", "{f}(x*y)+{g}(x-y)", "{f}({g}(x)+y)",
             "{b}({f}(x), y)", "{f}(x)/{g}(y)"]


def source(rng: random.Random) -> str:
    template = rng.choice(TEMPLATES)
    return template.format(f=rng.choice(UNARY), g=rng.choice(UNARY), b=rng.choice(BINARY))


KINKED = [n for n, p in TABLE.items() if p.kink is not None]
# mpmath's digits; a number that disagrees is checked again at SURE digits (past the
# cancellation of cosh(1000) + y, whose y is 434 digits down) before it counts as wrong
DPS, SURE = 80, 600


def truth(src: str, at: dict[str, str], dps: int = DPS):
    """(value, gradient, Hessian) by mpmath at 500 digits, over the inputs in ``at``'s order;
    None where mpmath has no finite answer, or may sit on a jump (floor at an integer, where
    gradcli's derivative is the convention 0 and mpmath's difference quotients blow up)."""
    if any(f"{n}(" in src for n in KINKED) and (len(set(at.values())) < len(at) or any(
            2 * mpmath.mpf(v) == int(2 * mpmath.mpf(v)) for v in at.values())):
        return None  # or on a kink: a tie of min or max, relu(x) at y = x
    with mpmath.workdps(dps):
        f = reference(src, at)
        names = list(at)
        x = [mpmath.mpf(at[n]) for n in names]

        def g(*args):
            return f(dict(zip(names, args)))
        try:
            value = g(*x)
            grad = [mpmath.diff(g, x, tuple(int(k == i) for k in range(len(x))))
                    for i in range(len(x))]
            hess = [[mpmath.diff(g, x, tuple(int(k == i) + int(k == j) for k in range(len(x))))
                     for j in range(len(x))] for i in range(len(x))]
        except (ValueError, ZeroDivisionError, TypeError, OverflowError, AttributeError):
            return None  # mpmath's complex results, which its real functions refuse
        if any(not mpmath.isfinite(v) or mpmath.im(v) != 0
               for v in [value, *grad, *(h for row in hess for h in row)]):
            return None
        return value, grad, hess


def agrees(shown, exact, dps: int) -> bool:
    with mpmath.workdps(dps):
        if shown.text == "0":
            return abs(exact) < mpmath.mpf(10) ** -60
        return shows(shown.text, exact, shown.digits)


def expected(command: str, ref, names: list[str], dps: int) -> list:
    """The exact numbers ``command`` prints, in :func:`printed`'s order, from mpmath's
    (value, gradient, Hessian)."""
    value, grad, hess = ref
    with mpmath.workdps(dps):  # the sums at the reference's precision
        if command == "hessian":
            return [value, *grad, *(hess[i][j] for i in range(len(names))
                                    for j in range(len(names)))]
        if command == "vjp":  # 1·∇f + 2·∇x
            return [value, *(grad[i] + (2 if n == "x" else 0) for i, n in enumerate(names))]
        if command == "jvp":  # J·(1, ..., 1): ∇f·1
            return [value, sum(grad)]
        return [value, *grad]


def printed(command: str, r, names: list[str]) -> list:
    if command == "hessian":
        return [r.value, *r.gradient.values(), *(r.hessian[i][j] for i in range(len(names))
                                                 for j in range(len(names)))]
    if command == "eval --mode forward":
        return [r.value, *(r.gradient[n] for n in names)]
    if command == "jacobian":
        return [r.values["f1"], *(r.jacobian["f1"][n] for n in names)]
    if command == "vjp":
        return [r.values["f1"], *(r.product[n] for n in names)]
    return [r.values["f1"], r.product["f1"]]


def probe(src: str, at: dict[str, str], digits: int, counts: Counter) -> None:
    names = list(at)
    ref = truth(src, at)
    if ref is None:
        return
    sure = None
    counts["cases"] += 1
    runs = {
        "hessian": lambda: gradcli.hessian(src, at, wrt=names, digits=digits),
        "eval --mode forward": lambda: gradcli.evaluate(src, at, wrt=names, mode="forward",
                                                        digits=digits),
        "jacobian": lambda: gradcli.jacobian(f"{src}; x", at, wrt=names, digits=digits),
        "vjp": lambda: gradcli.vjp(f"{src}; x", at, {"f1": 1.0, "f2": 2.0}, wrt=names,
                                   digits=digits),
        "jvp": lambda: gradcli.jvp(f"{src}; x", at, {n: 1.0 for n in names}, digits=digits),
    }
    for command, run in runs.items():
        try:
            r = run()
        except DomainError:  # outside a domain where mpmath's answer is complex: right
            counts[command, "outside"] += 1
            continue
        except GradcliError as exc:
            counts[command, "refused"] += 1
            print(f"refused {command} {src} at {at}: {exc}", file=sys.stderr)
            continue
        for k, (shown, exact) in enumerate(zip(printed(command, r, names),
                                               expected(command, ref, names, DPS))):
            if shown.text == "?" or "±" in shown.text or shown.digits < digits:
                counts[command, "short"] += 1
            if shown.text == "?":
                continue
            counts[command, "checked"] += 1
            if agrees(shown, exact, DPS):
                continue
            sure = sure or truth(src, at, SURE)  # mpmath's own digits may have been short
            exact = expected(command, sure, names, SURE)[k]
            if not agrees(shown, exact, SURE):
                counts[command, "wrong"] += 1
                print(f"WRONG {command} {src} at {at}: {shown.text} vs "
                      f"{mpmath.nstr(exact, digits + 3)}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    counts: Counter = Counter()
    slowest = (0.0, "")
    for _ in range(args.cases):
        src = source(rng)
        at = {"x": rng.choice(POINTS)}
        if "y" in src:
            at["y"] = rng.choice(POINTS)
        for digits in (13, 30):
            start = time.perf_counter()
            probe(src, at, digits, counts)
            took = time.perf_counter() - start
            slowest = max(slowest, (took, f"{src} at {at}, --digits {digits}"))
    print(f"{counts['cases']} (expression, point, digits) cases with a finite mpmath answer")
    print(f"{'command':22} {'checked':>8} {'wrong':>6} {'short':>6} {'refused':>8}")
    for command in ("hessian", "eval --mode forward", "jacobian", "vjp", "jvp"):
        print(f"{command:22} {counts[command, 'checked']:8} {counts[command, 'wrong']:6} "
              f"{counts[command, 'short']:6} {counts[command, 'refused']:8}")
    print(f"slowest case (all five commands): {slowest[0]:.2f} s, {slowest[1]}")


if __name__ == "__main__":
    main()
