"""How numbers and results look to a person, as plain text (no rich: the fast path prints this)."""

from __future__ import annotations

import math

from ..engine.rounding import (  # noqa: F401 - compact: for the views
    DEFAULT_DIGITS, FLOAT64_DIGITS, compact, float_text, trimmed)


def format_number(x: float, digits: int = DEFAULT_DIGITS) -> str:
    """``x`` to ``digits`` significant digits: ``6.552027172500`` for 13, ``5.000000000000e-9``
    for very small or large magnitudes, ``0`` for zero. A proven number (the certified engine's)
    prints its own proven digits."""
    text = getattr(x, "text", None)
    if text is not None:
        return text
    return float_text(float(x), digits)


def result_text(value: float, gradient: dict[str, float], seed: float = 1.0,
                digits: int = DEFAULT_DIGITS, show=None, output: str = "f") -> str:
    """``f = ...`` and one ``∂f/∂x = ...`` line per input (``output``: the output's name, as
    ``loss = ...``), aligned on the equals signs as ``show`` prints the labels (``∂f/∂θ`` as
    ``df/d\\u03b8`` on a cp1252 stream)."""
    rows = [(output, value)] + [(f"∂{output}/∂{name}", g) for name, g in gradient.items()]
    lines = _aligned(rows, digits, show)
    if seed != 1.0:
        lines.append(f"(the gradient is scaled by the seed {seed:g})")
    return "\n".join(lines)


def output_name(graph) -> str:
    """What the one output of ``graph`` is called in the text: its name under --of, else the
    name the program last assigned to it (``loss = ...``), else ``f``."""
    if graph.output_names and graph.output_names != ["f"]:
        return graph.output_names[0]
    assigned = [name for name, slot in graph.names.items() if slot == graph.output]
    return assigned[-1] if assigned else "f"


def gradient_text(output: str, value: float, gradient: dict[str, float],
                  digits: int = DEFAULT_DIGITS) -> str:
    """As :func:`result_text`, for the output named ``output``: ``f2 = ...``, ``∂f2/∂x = ...``."""
    return result_text(value, gradient, digits=digits, output=output)


def directional_text(value: float, directional: float, direction: dict[str, float],
                     seed: float = 1.0, digits: int = DEFAULT_DIGITS, output: str = "f") -> str:
    """``f = ...``, ``∇f·d = ...`` and the direction ``d`` it was taken along."""
    lines = _aligned([(output, value), (f"∇{output}·d", directional)], digits)
    lines.append("d".ljust(len(output) + 3) + " = ("
                 + ", ".join(f"{name}={t:g}" for name, t in direction.items()) + ")")
    if seed != 1.0:
        lines.append(f"(the derivative is scaled by the seed {seed:g})")
    return "\n".join(lines)


def values_text(values: dict[str, float], digits: int = DEFAULT_DIGITS) -> str:
    """``f1 = ...``, ``f2 = ...``: each output's value, aligned on the equals signs."""
    return "\n".join(_aligned(list(values.items()), digits))


def mode_line(mode: str, outputs: int, inputs: int, auto: bool) -> str:
    """How a Jacobian was computed, in one line: the mode and its sweeps (and, when ``--mode
    auto`` chose it, what the other mode would have taken)."""
    def sweeps(m: str) -> str:
        k, what, per = ((outputs, "adjoint", "output") if m == "reverse"
                        else (inputs, "tangent", "input"))
        return f"{k} {what} sweep{'s' if k != 1 else ''}, one per {per}"
    other = "forward" if mode == "reverse" else "reverse"
    line = f"{mode} mode{' (auto)' if auto else ''}: {sweeps(mode)}"
    return line + (f" ({other} mode would take {sweeps(other)})" if auto else "")


def vjp_text(values: dict[str, float], product: dict[str, float], weights: dict[str, float],
             digits: int = DEFAULT_DIGITS) -> str:
    """The outputs, ``∂(w·f)/∂x = ...`` per input (the vector-Jacobian product wᵀJ) and ``w``."""
    return _product_text(values, {f"∂(w·f)/∂{name}": v for name, v in product.items()},
                         "w", weights, "wᵀJ in one reverse sweep", digits)


def jvp_text(values: dict[str, float], product: dict[str, float], direction: dict[str, float],
             digits: int = DEFAULT_DIGITS) -> str:
    """The outputs, ``∇f1·d = ...`` per output (the Jacobian-vector product J·d) and ``d``."""
    return _product_text(values, {f"∇{name}·d": v for name, v in product.items()},
                         "d", direction, "J·d in one forward sweep", digits)


def _product_text(values: dict, product: dict, vector: str, weights: dict, how: str,
                  digits: int) -> str:
    lines = _aligned(list(values.items()) + list(product.items()), digits)
    lines.append(f"{vector} = (" + ", ".join(f"{name}={t:g}" for name, t in weights.items())
                 + f"): {how}")
    return "\n".join(lines)


def superscript(n: int) -> str:
    """``²`` for 2, ``¹⁰`` for 10; nothing for 1."""
    return "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(d)] for d in str(n)) if n > 1 else ""


def derivative_label(output: str, names: list[str]) -> str:
    """``∂f/∂x``, ``∂²f/∂x²``, ``∂³f2/∂x²∂y``: ``output`` differentiated by each of ``names`` in
    turn (a run of one name is written once with its power)."""
    runs: list[list] = []
    for name in names:
        if runs and runs[-1][0] == name:
            runs[-1][1] += 1
        else:
            runs.append([name, 1])
    below = "".join(f"∂{name}{superscript(k)}" for name, k in runs)
    return f"∂{superscript(len(names))}{output}/{below}"


def _aligned(rows: list[tuple[str, float]], digits: int, show=None) -> list[str]:
    if show is not None:  # the labels as they will be printed, so the padding counts those
        rows = [(show(label), v) for label, v in rows]
    width = max(len(label) for label, _ in rows)
    return [f"{label.ljust(width)} = {_value(v, digits)}" for label, v in rows]


def _value(x: float, digits: int) -> str:
    """A number, or what a component that is not a number is: an infinite slope (``+∞``, the
    limit of a one-sided derivative such as sqrt's at 0) or ``undefined`` (no limit). A proven
    number prints its proven digits (exp(1000) is finite, though not as a double)."""
    if hasattr(x, "text"):
        return x.text
    if math.isinf(x):
        return "+∞" if x > 0 else "−∞"
    if math.isnan(x):
        return "undefined"
    return format_number(x, digits)


def short_number(x: float, digits: int = 4) -> str:
    """At most ``digits`` digits after the point, without trailing zeros, for pictures: ``-1``,
    ``0.5``, ``6.552`` (an exponent for very small or large magnitudes)."""
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == 0:
        x = 0.0  # no "-0.000"
    magnitude = abs(x)
    if magnitude != 0 and (magnitude < 1e-4 or magnitude >= 1e15):
        text = f"{x:.{digits}e}"
    else:
        text = f"{x:.{digits}f}"
    return trimmed(text)


def _operation(graph, slot: int) -> str:
    """``v5 = v4 + log(2)``: a node and its operation, a constant written as it is exactly."""
    from ..engine.graph import expression  # only when there are notes to write
    node_id = graph.node_id
    if min(graph.args(slot - graph.base)) < graph.n_const:  # (only then: records, symbolic)
        from ..records import node_ids
        node_id = node_ids(graph)
    return f"{graph.node_id(slot)} = {expression(graph, slot, node_id)}"


NOTE_NUMBERS = 5  # a note names this many numbers where float64 loses digits, at most


def precision_notes(result) -> list[str]:
    """The ``note:`` lines about the digits of an evaluation (:class:`gradcli.api.Result`): that
    float64 digits are not certified (``--float64``), where plain float64 would have lost some of
    the certified digits shown, a kink met exactly, a cap that left some digits out."""
    if not getattr(result, "proven", False):
        return ["note: computed in plain float64 (--float64): its digits are not certified"]
    notes = []
    f64, cert, n = result.float64, result.certified, result.digits
    if f64 is not None and f64.error is not None:
        notes.append(f"note: float64 fails here ({f64.error}); every digit shown is certified")
    elif f64 is not None:
        want = min(n, FLOAT64_DIGITS)  # float64 cannot hold more: a loss is less than that
        lost = [(f"{f64.value_digits} of {n} digits of f", f64.value_digits)] * (
            f64.value_digits < want)
        digits = f64.gradient_digits
        below = getattr(digits, "below", None)  # arrays held whole: only the few named
        lost += [(f"{d} of {'∇f·d' if name == 'direction' else '∂f/∂' + name}", d)
                 for name, d in (below(want) if below is not None else
                                 ((name, d) for name, d in digits.items() if d < want))]
        if lost:
            why = ""
            if f64.lost_at is not None:
                graph, slot = result.graph, f64.lost_at
                what = ("cancellation" if graph.ops[slot - graph.base].name in ("add", "sub")
                        else "rounding")
                why = f" ({what} in {_operation(graph, slot)})"
            if len(lost) > NOTE_NUMBERS:  # (an array's thousands: the count and the worst)
                worst = min(lost, key=lambda item: item[1])[0]
                got = f"fewer digits for {len(lost):,} numbers here{why}, as few as {worst}"
            else:
                got = f"{', '.join(t for t, _ in lost)} here{why}"
            notes.append(f"note: float64 gets {got}; every digit shown is certified")
    if cert is not None:
        graph = result.graph
        from ..engine.primitives import jumps
        for slot in getattr(cert, "kinks", ()):
            prim = graph.ops[slot - graph.base]
            notes.append(f"note: {_operation(graph, slot)} is exactly at "
                         f"{'a jump' if jumps(prim) else 'its kink'}: {prim.note}")
        if getattr(cert, "short", None):
            notes.append(f"note: {cert.short}")
    return notes
