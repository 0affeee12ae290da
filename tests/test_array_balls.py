"""Certified eval of array programs on array nodes with Arb balls (gradcli.engine.arbarrays):
every digit printed is the exact value correctly rounded (mpmath at 50 digits is the
reference: the expression over mpmath numbers, the gradient by mpmath's own differentiation),
the output is the scalar tape's byte for byte, and what the balls cannot settle (a kink met
exactly, a tie, a ball that holds 0) is the scalar tape's, with its notes and errors.
"""

from __future__ import annotations

import json
import random
import subprocess

import mpmath
import numpy as np
import pytest

from gradcli import api
from gradcli.engine import arraynodes

# -- an independent reference: the expression over mpmath numbers -------------------------------


class MP:
    """The functions the generated expressions use, on object arrays of mpmath numbers."""

    sin = staticmethod(np.frompyfunc(mpmath.sin, 1, 1))
    tanh = staticmethod(np.frompyfunc(mpmath.tanh, 1, 1))
    exp = staticmethod(np.frompyfunc(mpmath.exp, 1, 1))
    log = staticmethod(np.frompyfunc(mpmath.log, 1, 1))
    sqrt = staticmethod(mpmath.sqrt)


def _softmax(ns, z):
    e = ns.exp(z - z.max())
    return e / e.sum()


def _vector(rng, depth):
    """An expression of shape (3,) over A (3, 2), u (2,), v (3,), s (): (source, f(ns, env))."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice([("v", lambda ns, e: e["v"]), ("A @ u", lambda ns, e: e["A"] @ e["u"]),
                           ("A[:, 1]", lambda ns, e: e["A"][:, 1]),
                           ("sum(A, axis=-1)", lambda ns, e: e["A"].sum(axis=1))])
    src, f = _vector(rng, depth - 1)
    kind = rng.randrange(7)
    if kind == 0:
        name = rng.choice(["sin", "tanh", "exp", "sigmoid"])
        if name == "sigmoid":
            return f"sigmoid({src})", lambda ns, e: 1 / (1 + ns.exp(-f(ns, e)))
        return f"{name}({src})", lambda ns, e: getattr(ns, name)(f(ns, e))
    if kind == 1:
        other, o = rng.choice([("v", lambda e: e["v"]), ("s", lambda e: e["s"]),
                               ("[1, -2, 0.5]", lambda e: np.array([1, -2, 0.5]))])
        op = rng.choice(["+", "-", "*"])
        fn = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
        return f"({src} {op} {other})", lambda ns, e: fn(f(ns, e), o(e))
    if kind == 2:
        return f"softmax({src})", lambda ns, e: _softmax(ns, f(ns, e))
    if kind == 3:
        return f"log_softmax({src})", lambda ns, e: ns.log(_softmax(ns, f(ns, e)))
    if kind == 4:
        return f"A @ (A' @ {src})", lambda ns, e: e["A"] @ (e["A"].T @ f(ns, e))
    if kind == 5:
        return (f"[({src})[2], ({src})[0], s]",
                lambda ns, e: np.array([f(ns, e)[2], f(ns, e)[0], e["s"]], dtype=object))
    return f"sum(outer({src}, u), axis=1)", lambda ns, e: np.outer(f(ns, e), e["u"]).sum(axis=1)


def _generated(seed):
    rng = random.Random(1000 + seed)
    src, f = _vector(rng, 3)
    name = rng.choice(["sum", "mean", "norm", "logsumexp", "prod", "dot"])
    if name == "dot":
        return f"dot(v, {src})", lambda ns, e: e["v"] @ f(ns, e)
    reduce = {"sum": lambda ns, x: x.sum(), "mean": lambda ns, x: x.sum() / 3,
              "norm": lambda ns, x: ns.sqrt((x * x).sum()), "prod": lambda ns, x: x.prod(),
              "logsumexp": lambda ns, x: x.max() + ns.log(ns.exp(x - x.max()).sum())}[name]
    return f"{name}({src})", lambda ns, e: reduce(ns, f(ns, e))


POINT = {"A": [[0.5, -0.25], [0.3, 0.8], [-0.6, 0.1]], "u": [0.9, -0.4], "v": [0.3, -0.7, 1.1],
         "s": 0.7}

CLASSIC = [
    ("mean((X @ w - y)^2)", {"X": [[0.5, -1.2], [0.3, 0.8], [1.5, 0.1], [-0.7, 2.0]],
                             "w": [0.3, -0.7], "y": [0.1, 0.2, -0.4, 1.0]},
     lambda ns, e: (((e["X"] @ e["w"] - e["y"]) ** 2).sum() / len(e["y"]))),
    ("-mean(y*log(sigmoid(X@w+b)) + (1-y)*log(1-sigmoid(X@w+b)))",
     {"X": [[0.5, -1.2], [0.3, 0.8], [1.5, 0.1]], "w": [0.3, -0.7], "y": [1.0, 0.0, 1.0],
      "b": 0.25},
     lambda ns, e: -(e["y"] * ns.log(1 / (1 + ns.exp(-(e["X"] @ e["w"] + e["b"]))))
                     + (1 - e["y"]) * ns.log(1 - 1 / (1 + ns.exp(-(e["X"] @ e["w"] + e["b"])))
                                             )).sum() / 3),
    ("mean((tanh(X@W1+b1)@w2-y)^2)",
     {"X": [[0.5, -1.2], [0.3, 0.8], [1.5, 0.1]], "W1": [[0.3, -0.7, 0.2], [0.1, 0.4, -0.5]],
      "b1": [0.1, 0.0, -0.1], "w2": [1.0, -2.0, 0.5], "y": [0.1, 0.2, -0.4]},
     lambda ns, e: (((ns.tanh(e["X"] @ e["W1"] + e["b1"]) @ e["w2"] - e["y"]) ** 2).sum() / 3)),
]


def _mp(point):
    return {name: np.frompyfunc(mpmath.mpf, 1, 1)(np.array(value, dtype=float)) if
            np.ndim(value) else mpmath.mpf(value) for name, value in point.items()}


def reference(f, point):
    """The value and every element's partial derivative at 50 digits (mpmath's ``diff`` of
    the expression over mpmath numbers, one element at a time): name -> object array."""
    with mpmath.workdps(50):
        env = _mp(point)
        value = f(MP, env)
        gradient = {}
        for name, x in env.items():
            if not np.ndim(x):
                gradient[name] = mpmath.diff(lambda t: f(MP, {**env, name: t}), x)
                continue
            g = np.empty(x.shape, dtype=object)
            for index in np.ndindex(*x.shape):
                def at(t, index=index):
                    moved = x.copy()
                    moved[index] = t
                    return f(MP, {**env, name: moved})
                g[index] = mpmath.diff(at, x[index])
            gradient[name] = g
    return value, gradient


def correctly_rounded(text: str, exact, digits: int = 13) -> bool:
    """Whether ``text`` is ``exact`` rounded to ``digits`` significant digits (or says a bound
    that holds it, where no digit is certain)."""
    with mpmath.workdps(60):
        exact = mpmath.mpf(exact)
        if text == "0":
            return abs(exact) < mpmath.mpf(10) ** -40
        if text.startswith("0 ± 1e"):  # no digit certain (an exact 0 no ball can tell)
            return abs(exact) <= mpmath.mpf(10) ** int(text[6:]) + mpmath.mpf(10) ** -45
        shown = mpmath.mpf(text)
        mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
        unit = mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(abs(shown))) - digits + 1)
        return len(mantissa.ljust(digits, "0")) == digits and abs(shown - exact) <= unit / 2


def _on_balls(source, at, **options):
    """The certified API result, asserted to come from the array nodes on balls."""
    result = api.evaluate(source, at, **options)
    assert isinstance(result.graph, arraynodes.ArrayGraph), source
    assert result.proven
    return result


def _on_balls_mostly(source, at):
    """The certified API result (on balls, or where they cannot settle it, the scalar
    tape: :func:`test_balls_settle_all_but_a_few` counts those)."""
    return api.evaluate(source, at)


# (source, reference function, point): 30 generated expressions and the classic losses
CASES = [(*_generated(seed), POINT) for seed in range(30)] + [(s, f, at) for s, at, f in CLASSIC]


@pytest.mark.parametrize("source, f, at", CASES)
def test_every_digit_is_the_exact_value_correctly_rounded(source, f, at):
    result = _on_balls_mostly(source, at)
    value, gradient = reference(f, at)
    assert correctly_rounded(result.value.text, value), (source, result.value.text, value)
    read = {element.split("[")[0] for element in result.gradient}
    for name, g in gradient.items():
        if name not in read:  # not read by the expression: no partial derivative
            continue
        for index in np.ndindex(*np.shape(g)) if np.ndim(g) else [()]:
            element = name + (f"[{','.join(map(str, index))}]" if index else "")
            text = result.gradient[element].text
            assert correctly_rounded(text, g[index] if index else g), (source, element, text)


def test_balls_settle_all_but_a_few():
    """Of the 33 programs, the scalar tape computes those whose value lies exactly between two
    doubles (0.25 - 2^-56: only its exact rational decides the nearest double) and those whose
    gradient is exactly 0 (sum(softmax(z)) is 1 for every z: a ball around 0 cannot say so)."""
    on_tape = [source for source, _, at in CASES
               if not isinstance(api.evaluate(source, at).graph, arraynodes.ArrayGraph)]
    assert len(on_tape) <= 5, on_tape
    assert all("softmax" in source or "outer([(" in source for source in on_tape), on_tape


def _cli(run, args, scalar: bool, monkeypatch):
    """The command's output, on array nodes or (``scalar``) on the scalar tape as before."""
    with monkeypatch.context() as patch:
        calls = []
        real = api._certified_on_array_nodes

        def spy(*a, **k):
            found = None if scalar else real(*a, **k)
            calls.append(found is not None)
            return found
        patch.setattr(api, "_certified_on_array_nodes", spy)
        result = run(*args)
    return result, calls


def _json(output: str):
    return json.loads(output[output.index("{"):])  # (after a warning of inputs not read)


def _at_options(point):
    return [x for name, value in point.items()
            for x in ("--at", f"{name}={json.dumps(value)}".replace(" ", ""))]


@pytest.mark.parametrize("source, at", [(s, at) for s, _, at in CASES])
def test_the_output_is_the_scalar_tapes_byte_for_byte(run, monkeypatch, source, at):
    args = ["eval", source, *_at_options(at)]
    balls, used = _cli(run, args, False, monkeypatch)
    tape, _ = _cli(run, args, True, monkeypatch)
    assert balls.exit_code == tape.exit_code == 0
    assert balls.output == tape.output
    # --json too, but for its float64 block: what --float64 prints (the array nodes' sweep,
    # which rounds otherwise than the scalar tape's); every proven digit is the same
    balls, _ = _cli(run, args + ["--json"], False, monkeypatch)
    tape, _ = _cli(run, args + ["--json"], True, monkeypatch)
    mine, theirs, f64 = (_json(result.output) for result in
                         (balls, tape, run(*args, "--json", "--float64")))
    if used == [True]:  # (else the scalar tape computed both)
        assert mine.pop("float64") == {"value": f64["value"], "gradient": f64["gradient"]}
        theirs.pop("float64")
    assert mine == theirs


def test_a_typed_constant_and_typed_elements_are_exact(run):
    """0.1 typed is 1/10 (the double 0.1 is 0.1000000000000000055...): at 30 digits, sum of
    w*0.1 for w typed as [0.1, 0.2] is 0.03 exactly, and (1/3 as a double)·(1/10) shows the
    decimal's digits, not the product of two doubles."""
    result = _on_balls("sum(w*0.1)", {"w": ["0.1", "0.2"]}, digits=30)
    assert result.value.text == "0.0300000000000000000000000000000"
    assert [g.text for g in result.gradient.values()] == ["0.100000000000000000000000000000"] * 2
    third = 1 / 3
    result = _on_balls("sum(w*0.1)", {"w": [third, 1.0]}, digits=30)
    with mpmath.workdps(60):
        exact = (mpmath.mpf(third) + 1) / 10
    assert correctly_rounded(result.value.text, exact, 30)
    out = run("eval", "sum(w*0.1)", "--at", "w=[0.1,0.2]", "--digits", "30")
    assert out.exit_code == 0 and out.output.startswith("f = 0.0300000000000000000000000000000")


def test_folded_constants_are_the_numbers_they_name(run, monkeypatch):
    """log(2), pi/7 in a literal and exp(1)^2 are folded to doubles at lowering; on balls each
    is what it names (Arb's log of 2, ...), so 40 digits are mpmath's, not a double's."""
    args = ["eval", "sum(w*log(2))/3 + 0.1*sum(w^2) + sum([0.1, pi/7]*w) + exp(1)^2",
            "--at", "w=[0.3,0.7]", "--digits", "40"]
    out, used = _cli(run, args, False, monkeypatch)
    assert used == [True] and out.exit_code == 0, out.output
    with mpmath.workdps(60):
        w = [mpmath.mpf("0.3"), mpmath.mpf("0.7")]
        log2 = mpmath.log(2)
        value = (sum(x * log2 for x in w) / 3 + sum(x ** 2 for x in w) / 10 + w[0] / 10
                 + mpmath.pi / 7 * w[1] + mpmath.e ** 2)
        gradient = [log2 / 3 + w[0] / 5 + mpmath.mpf(1) / 10, log2 / 3 + w[1] / 5 + mpmath.pi / 7]
    lines = out.output.split("\n")
    assert correctly_rounded(lines[0].split("=")[1].strip(), value, 40), lines[0]
    for line, g in zip(lines[2:4], gradient):
        assert correctly_rounded(line.split()[1], g, 40), line


def test_a_folded_constant_exactly_outside_its_domain_is_the_scalar_tapes_error(run, monkeypatch):
    """log(0.1 + 0.2 - 0.3): float64 folds it to log(5.6e-17); exactly it is log(0)."""
    args = ["eval", "sum(w)*log(0.1 + 0.2 - 0.3)", "--at", "w=[1,2]"]
    balls, used = _cli(run, args, False, monkeypatch)
    tape, _ = _cli(run, args, True, monkeypatch)
    assert used == [False]
    assert (balls.exit_code, balls.output) == (tape.exit_code, tape.output)
    assert balls.exit_code == 2 and "outside the domain of log" in balls.output


@pytest.mark.parametrize("source, at, words", [
    ("sum(relu(w))", "w=[0,1.5]", "is exactly at its kink"),  # relu at 0
    ("sum(abs(w - 0.5))", "w=[0.5,1]", "is exactly at its kink"),  # a ball of 0
    ("max(w) + sum(w)", "w=[2,2,1]", "is exactly at its kink"),  # a tie of max
    # log at exactly 0 (float64's 0.1 + 0.2 - 0.3 is 5.6e-17: the balls straddle 0)
    ("sum(log(0.1 + 0.2 - w))", "w=[0.3,0.1]", "outside the domain of log"),
    ("mean(sum(outer(softmax(v), u), axis=1))", "v=[0.3,-0.7],u=[1,2]", None),  # ∂/∂v is 0
])
def test_what_balls_cannot_settle_is_the_scalar_tapes(run, monkeypatch, source, at, words):
    args = ["eval", source, "--at", at]
    balls, used = _cli(run, args, False, monkeypatch)
    tape, _ = _cli(run, args, True, monkeypatch)
    assert used == [False], source  # the array nodes gave up, the scalar tape computed it
    assert (balls.exit_code, balls.output) == (tape.exit_code, tape.output)
    if words:
        assert words in balls.output


def _scaled(x: float, bits: int = 1100) -> int:
    """A double times 2^bits, exactly, as an integer (every double is m·2^e with e >= -1074)."""
    n, d = x.as_integer_ratio()  # d is a power of 2
    return n << (bits - d.bit_length() + 1)


def test_a_hundred_thousand_rows_through_the_console_script(gradcli_script, tmp_path):
    """The least-squares loss of X of 10^5 x 3 through the installed command: its value and
    gradient against the exact rational sums, in Python integers (every input a double)."""
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(100_000, 3)), rng.normal(size=100_000)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    out = subprocess.run([gradcli_script, "eval", "mean((X @ w - y)^2)", "--at",
                          "X=@X.npy,y=@y.npy,w=[0.5,-1.25,2]", "--wrt", "w"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    value_text = lines[0].split(" = ")[1]
    gradient_texts = [line.split()[1] for line in lines[2:5]]
    assert lines[1] == "∂f/∂w, shape (3,)" and [line.split()[0] for line in lines[2:5]] == \
        ["[0]", "[1]", "[2]"]
    # residuals times 2^2200 (products of two doubles scaled by 2^1100 each), exactly
    w = [_scaled(v) for v in (0.5, -1.25, 2.0)]
    rows = [[_scaled(v) for v in row] for row in X.tolist()]
    residual = [sum(a * b for a, b in zip(row, w)) - (_scaled(t) << 1100)
                for row, t in zip(rows, y.tolist())]
    n = len(residual)
    with mpmath.workdps(60):
        value = mpmath.mpf(sum(r * r for r in residual)) / n / mpmath.mpf(2) ** 4400
        gradient = [2 * mpmath.mpf(sum(r * row[j] for r, row in zip(residual, rows))) / n
                    / mpmath.mpf(2) ** 3300 for j in range(3)]
    assert correctly_rounded(value_text, value)
    for text, exact in zip(gradient_texts, gradient):
        assert correctly_rounded(text, exact)
