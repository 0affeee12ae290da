"""How accurate is --check's numerical derivative, and how honest is its error estimate?

    python benchmarks/check_accuracy.py [--expressions N] [--seed S]

1. Every catalogue row at its in-domain test points: the largest error of the numerical
   derivative against AD, and how often the error estimate is smaller than the real error.
2. Random expressions of depth <= 5 in x, y, z (every smooth primitive, the five operators)
   at random points: how many rows pass at the default tolerances and at ten times stricter
   ones, and how many failures are "inconclusive" (the numerical derivative says itself that it
   is not accurate enough to decide) rather than a confident disagreement.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from gradcli.api import compile, evaluate  # noqa: E402
from gradcli.check import DEFAULT_ATOL, DEFAULT_RTOL, check_result  # noqa: E402
from gradcli.errors import GradcliError  # noqa: E402
from gradcli.engine.primitives import TABLE  # noqa: E402
from test_check import catalogue_source  # noqa: E402
from test_primitives import in_domain_points  # noqa: E402


def catalogue() -> None:
    rows = underestimated = 0
    worst = (0.0, "")
    for name, prim in TABLE.items():
        graph = compile(catalogue_source(prim))
        for args in in_domain_points(prim):
            result = check_result(evaluate(graph, dict(zip("xy", args))))
            for row in result.rows:
                rows += 1
                underestimated += row.abs_error > row.numeric_error
                error = row.abs_error / max(abs(row.ad), 1.0)
                if error > worst[0]:
                    worst = (error, f"{name}{args} along {row.input}")
    print(f"catalogue: {rows} rows; largest |AD - numeric| / max(1, |AD|) = {worst[0]:.1e} "
          f"({worst[1]}); error estimate below the real error in {underestimated} rows")


def random_expressions(count: int, seed: int) -> None:
    rng = random.Random(seed)
    unary = [n for n, p in TABLE.items() if p.arity == 1 and not p.symbol and p.kink is None]

    def expression(depth: int) -> str:
        if depth == 0 or rng.random() < 0.25:
            return rng.choice("xyz") if rng.random() < 0.7 else f"{rng.uniform(-3, 3):.3g}"
        if rng.random() < 0.5:
            return f"{rng.choice(unary)}({expression(depth - 1)})"
        return f"({expression(depth - 1)} {rng.choice('+-*/^')} {expression(depth - 1)})"

    tolerances = [(DEFAULT_RTOL, DEFAULT_ATOL), (DEFAULT_RTOL / 10, DEFAULT_ATOL / 10)]
    counts = {t: [0, 0, 0] for t in tolerances}  # rows, inconclusive, confident disagreements
    done, started = 0, time.perf_counter()
    while done < count:
        source = expression(5)
        at = {"x": rng.uniform(-3, 3), "y": rng.uniform(-10, 10), "z": rng.uniform(-0.1, 0.1)}
        try:
            result = evaluate(compile(source), at)
        except GradcliError:
            continue  # outside a domain, or overflow: nothing to check
        if not result.gradient:
            continue
        done += 1
        for rtol, atol in tolerances:
            tally = counts[(rtol, atol)]
            for row in check_result(result, rtol=rtol, atol=atol).rows:
                tally[0] += 1
                if not row.ok and "inconclusive" in row.note:
                    tally[1] += 1
                elif not row.ok:
                    tally[2] += 1
                    print(f"  disagreement: {source} at {at}, along {row.input}: AD {row.ad!r}, "
                          f"numeric {row.numeric!r} ± {row.numeric_error:.2g}")
    seconds = time.perf_counter() - started
    print(f"random expressions: {count} (seed {seed}, {seconds:.1f} s)")
    for (rtol, atol), (rows, inconclusive, wrong) in counts.items():
        passed = rows - inconclusive - wrong
        print(f"  rtol {rtol:g}, atol {atol:g}: {passed}/{rows} rows pass, {inconclusive} "
              f"inconclusive, {wrong} confident disagreements")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expressions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    catalogue()
    random_expressions(options.expressions, options.seed)


if __name__ == "__main__":
    main()
