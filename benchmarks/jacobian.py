"""Jacobians by reverse and forward mode: n inputs, m outputs, n tangent sweeps or m adjoint sweeps.

    python benchmarks/jacobian.py [--n 50] [--repeat 20]

Two programs of N terms each: ``tall`` has 2 outputs of N inputs (reverse mode: 2 sweeps),
``wide`` has N outputs of 2 inputs (forward mode: 2 sweeps). Each is evaluated by
``gradcli.jacobian`` in every mode on one compiled graph; the figure is the best of
``--repeat`` runs (CPU time), with the number of sweeps each mode took. ``auto`` should match the
faster mode. No peer is run: the point is the textbook's lesson, measured on one engine.
"""

from __future__ import annotations

import argparse
import time

import gradcli


def programs(n: int) -> dict[str, tuple[str, dict[str, float]]]:
    tall = ("+".join(f"sin(x{i})*x{(i + 1) % n}" for i in range(n)) + "; "
            + "+".join(f"exp(x{i}/10)" for i in range(n)))
    wide = "; ".join(f"sin({i / 10}*x)*y + x^{i % 4}" for i in range(n))
    return {f"tall: 2 outputs x {n} inputs": (tall, {f"x{i}": 0.5 + 0.1 * i for i in range(n)}),
            f"wide: {n} outputs x 2 inputs": (wide, {"x": 1.5, "y": 2.0})}


def best(graph, at, mode: str, repeat: int) -> tuple[float, int, str]:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        result = gradcli.jacobian(graph, at, mode=mode)
        times.append(time.process_time() - start)
    return min(times), result.sweeps, result.mode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print("| program | reverse | forward | auto |\n|---|---|---|---|")
    for name, (source, at) in programs(args.n).items():
        graph = gradcli.compile(source)
        cells = []
        for mode in ("reverse", "forward", "auto"):
            seconds, sweeps, chosen = best(graph, at, mode, args.repeat)
            picked = f" ({chosen})" if mode == "auto" else ""
            cells.append(f"{seconds * 1e3:.2f} ms, {sweeps} sweeps{picked}")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
