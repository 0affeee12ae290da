"""Certified array programs through the quick proof (gradcli.engine.quickarrays): the float64
sweep over Bounded arrays, every number it proves by bounds.py's rule, the balls for the rest.

The bounds hold the exact values (mpmath at 50 digits, elementwise, value and gradient); the
output is the balls' byte for byte, text and --json; a cancellation, a kink met exactly and a
tie are refused and the balls (or the scalar tape) decide them; proven_texts, which proves
many numbers at once, never gives a text proven_text would not.
"""

from __future__ import annotations

import json
import math
import random
import subprocess

import mpmath
import numpy as np
import pytest

from gradcli import api
from gradcli.errors import GradcliError
from gradcli.engine import arbarrays, arraynodes, bounds, quickarrays
from gradcli.engine.bounds import Bounded, Unbounded
from test_array_balls import (CASES, CLASSIC, _at_options, _generated, _json, correctly_rounded,
                              reference)


def _cli(run, args, monkeypatch, quick: bool = True):
    """The command's output, and for each certified array evaluation whether the quick proof
    gave it all; ``quick=False``: the balls alone, as before the quick proof."""
    with monkeypatch.context() as patch:
        calls = []
        real = api._quick_on_array_nodes

        def spy(*a, **k):
            found = real(*a, **k) if quick else (None, None)
            calls.append(found[0] is not None)
            return found
        patch.setattr(api, "_quick_on_array_nodes", spy)
        result = run(*args)
    return result, calls


@pytest.mark.parametrize("source, at", [(s, at) for s, _, at in CASES])
def test_the_output_is_the_balls_byte_for_byte(run, monkeypatch, source, at):
    args = ["eval", source, *_at_options(at)]
    quick, used = _cli(run, args, monkeypatch)
    balls, _ = _cli(run, args, monkeypatch, quick=False)
    assert quick.exit_code == balls.exit_code == 0
    assert quick.output == balls.output
    # --json gives each number's exact value's nearest double: the balls', never the quick
    quick, used = _cli(run, args + ["--json"], monkeypatch)
    balls, _ = _cli(run, args + ["--json"], monkeypatch, quick=False)
    assert used == [] and _json(quick.output) == _json(balls.output)


def test_the_quick_proof_proves_the_well_conditioned_programs_alone():
    """Of the 33 programs, those the quick proof proves whole need no ball at all; the others
    (a value on a rounding boundary, an exact 0 of softmax's gradient, a cancellation) go to
    the balls. How many is a property of the bounds: it must not fall to none."""
    alone = [source for source, _, at in CASES
             if type(api.evaluate(source, at, quick=True).certified) is api.QuickCertificate]
    assert len(alone) >= 10, alone
    assert "mean((X @ w - y)^2)" in alone


@pytest.mark.parametrize("source, f, at", CASES)
def test_every_quick_digit_is_the_exact_value_correctly_rounded(source, f, at):
    result = api.evaluate(source, at, quick=True)
    value, gradient = reference(f, at)
    assert correctly_rounded(result.value.text, value), (source, result.value.text, value)
    read = {element.split("[")[0] for element in result.gradient}
    for name, g in gradient.items():
        if name not in read:
            continue
        for index in np.ndindex(*np.shape(g)) if np.ndim(g) else [()]:
            element = name + (f"[{','.join(map(str, index))}]" if index else "")
            text = result.gradient[element].text
            assert correctly_rounded(text, g[index] if index else g), (source, element, text)


# -- the bounds hold the exact values ---------------------------------------------------------

def _random_point(rng):
    return {"A": rng.uniform(-1, 1, size=(3, 2)).round(3).tolist(),
            "u": rng.uniform(-1, 1, size=2).round(3).tolist(),
            "v": rng.uniform(-1, 1, size=3).round(3).tolist(), "s": round(rng.uniform(0, 1), 3)}


BOUND_CASES = [(*_generated(seed), _random_point(np.random.default_rng(seed)))
               for seed in range(30, 60)] + [(s, f, at) for s, at, f in CLASSIC]


def _holds(x: float, err: float, exact) -> bool:
    with mpmath.workdps(60):
        return abs(mpmath.mpf(x) - mpmath.mpf(exact)) <= mpmath.mpf(err)


@pytest.mark.parametrize("source, f, at", BOUND_CASES)
def test_every_bound_holds_the_exact_value(source, f, at):
    """|float64 - exact| <= err for the value and every gradient element, exact by mpmath."""
    graph, _, gradient, point = arraynodes.evaluate(source, at)
    try:
        found = quickarrays.bounded_sweep(graph, point, list(gradient), 1.0)
    except Unbounded:  # a tie, a kink, a long product: nothing claimed
        return
    if found is None:
        return
    value, bounded = found
    exact_value, exact_gradient = reference(f, at)
    assert _holds(float(value.v), float(value.e), exact_value), (source, value)
    for name, g in bounded.items():
        v = np.ravel(g.v)
        e = np.ravel(bounds.full(g.e, g.v)) if not bounds.exact_bound(g.e) else np.zeros(v.size)
        exact = np.ravel(np.asarray(exact_gradient[name], dtype=object))
        for i in range(v.size):
            assert _holds(float(v[i]), float(e[i]), exact[i]), (source, name, i, v[i], e[i])


def test_a_long_sum_and_a_long_product_hold_their_exact_values():
    """Sums by halves and the blocked @ (an inner dimension of 1,000): the bound holds the
    exact rational result of the doubles (Python's fractions)."""
    from fractions import Fraction
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(4, 1000)), rng.normal(size=1000) * 1e3
    product = bounds.bounded_matmul(Bounded(a), Bounded(b))
    total = bounds.bounded_sum(Bounded(b))
    for row, got, err in zip(a.tolist(), product.v.tolist(), product.e.tolist()):
        exact = sum(Fraction(x) * Fraction(y) for x, y in zip(row, b.tolist()))
        assert abs(Fraction(got) - exact) <= Fraction(err)
    assert abs(Fraction(float(total.v)) - sum(map(Fraction, b.tolist()))) <= Fraction(total.e)
    assert float(total.e) < 1e-10 * float(np.sum(np.abs(b)))  # by halves: ⌈log2 n⌉ roundings


# -- what the quick proof refuses -------------------------------------------------------------

def test_a_cancellation_is_left_to_the_balls(run, monkeypatch):
    """sum((w + 1e8) - 1e8): float64 keeps 8 digits of each term, the quick bound says so (it
    cannot prove 13), and the balls print the exact sum's digits."""
    source, at = "sum((w + 1e8) - 1e8)", {"w": [0.1234567890123, 0.5]}
    graph, value, gradient, point = arraynodes.evaluate(source, at)
    shown, texts = quickarrays.certify_arrays_quickly(graph, point, value, gradient,
                                                      list(gradient), 1.0, 13)
    assert shown is None and texts == {"w": ["1.000000000000"] * 2}  # the gradient is exact
    result = api.evaluate(source, at, quick=True)
    assert type(result.certified) is not api.QuickCertificate
    assert result.value.text == "0.6234567890123"
    args = ["eval", source, "--at", "w=[0.1234567890123,0.5]"]
    quick, used = _cli(run, args, monkeypatch)
    balls, _ = _cli(run, args, monkeypatch, quick=False)
    assert used == [False] and quick.output == balls.output
    assert "f = 0.6234567890123" in quick.output and "float64 gets" in quick.output


@pytest.mark.parametrize("source, at", [
    ("sum(relu(w))", "w=[0,1.5]"),  # relu at 0
    ("sum(abs(w - 0.5))", "w=[0.5,1]"),  # abs at 0
    ("max(w) + sum(w)", "w=[2,2,1]"),  # a tie of max
    ("min(w) * sum(w)", "w=[1,3,1]"),  # a tie of min
    ("sum(relu(w - 0.1))", "w=[0.1,1]"),  # 0.1 typed minus 0.1: a bound that reaches 0
])
def test_a_kink_met_is_never_approved(run, monkeypatch, source, at):
    args = ["eval", source, "--at", at]
    quick, used = _cli(run, args, monkeypatch)
    balls, _ = _cli(run, args, monkeypatch, quick=False)
    assert True not in used, source
    assert (quick.exit_code, quick.output) == (balls.exit_code, balls.output)
    assert "is exactly at its kink" in quick.output


def test_a_bound_that_reaches_a_kink_or_a_tie_is_unbounded():
    tiny = np.array([1e-17, 1.0])
    with pytest.raises(Unbounded):
        bounds.clear_of_kink(Bounded(tiny, np.array([1e-17, 0.0])))
    bounds.clear_of_kink(Bounded(tiny, np.array([1e-18, 0.0])))  # apart by twice its bound
    with pytest.raises(Unbounded):
        bounds.clear_of_kink(Bounded(np.array([0.0, 1.0])))  # exactly at it
    close = Bounded(np.array([1.0, 1.0 + 2e-16, 0.5]), np.array([1e-16, 1e-16, 0.0]))
    with pytest.raises(Unbounded):
        bounds.clear_of_ties("max", close, None)
    bounds.clear_of_ties("max", Bounded(np.array([1.0, 1.5, 0.5]), np.full(3, 1e-16)), None)


def test_proven_texts_gives_only_what_proven_text_gives():
    """Many numbers at once: for numbers near every kind of rounding boundary, each text the
    vectorized test gives is proven_text's own; None where proven_text says None."""
    rng = random.Random(5)
    values, errs, rounded = [], [], []
    for _ in range(4000):
        digits = 13
        mantissa = rng.randrange(10 ** (digits - 1), 10 ** digits) + rng.choice(
            [0.5, 0.5 + 1e-3, 0.5 - 1e-3, 0.25, 0.0, 0.4999999])
        x = mantissa * 10.0 ** rng.randrange(-30, 30) * rng.choice([1, -1])
        e = abs(x) * rng.choice([0.0, 1e-17, 1e-16, 1e-15, 1e-14, 1e-13])
        values.append(x)
        errs.append(e)
        rounded.append(rng.choice([x, np.nextafter(x, 0), np.nextafter(x, np.inf)]))
    values += [0.0, 0.0, 1e-300]
    errs += [0.0, 1e-20, 0.0]
    rounded += [0.0, 0.0, 1e-300]
    for digits in (13, 6, 15, 17):
        texts = bounds.proven_texts(Bounded(np.array(values), np.array(errs)),
                                    np.array(rounded), digits)
        proven = declined = 0
        for v, e, r, text in zip(values, errs, rounded, texts):
            alone = bounds.proven_text(Bounded(v, e), digits, r)
            if text is not None:
                assert text == alone, (v, e, r, digits, text, alone)
                proven += 1
            elif alone is not None:  # declined only within an ulp or two of a boundary
                declined += 1
                wider = e + 2 * math.ulp(v) + abs(r - v)
                assert bounds.proven_text(Bounded(v, wider), digits) is None, (v, e, r, digits)
        assert digits > 15 or proven > len(values) // 3, (proven, declined)


# -- many numbers: the quick proof and the balls share them -----------------------------------

def test_the_balls_prove_only_what_the_quick_proof_left(run, monkeypatch):
    """A logistic loss without --wrt (its gradient by X and y too): the quick proof proves most
    numbers, the balls the others and nothing again, and the output is the balls' alone."""
    rng = np.random.default_rng(11)
    X, y = rng.normal(size=(60, 3)).round(4), (rng.random(60) < 0.5).astype(float)
    at = ["--at", f"X={json.dumps(X.tolist())},y={json.dumps(y.tolist())},w=[0.3,-0.2,0.1],b=0.1"]
    args = ["eval", "p = sigmoid(X @ w + b); -mean(y*log(p) + (1-y)*log(1-p))", *at]
    seen = []
    real = arbarrays.certify_arrays

    def spy(*a, **k):
        seen.append(a[6] if len(a) > 6 else k.get("known"))
        return real(*a, **k)
    with monkeypatch.context() as patch:
        patch.setattr(arbarrays, "certify_arrays", spy)
        quick, used = _cli(run, args, monkeypatch)
    balls, _ = _cli(run, args, monkeypatch, quick=False)
    assert quick.exit_code == 0 and quick.output == balls.output
    if used == [False]:  # (some number left: the balls were asked for those alone)
        value, known = seen[0]
        proofs = [p for ps in known.values() for p in ps]
        assert sum(p is not None for p in proofs) > len(proofs) // 2


def test_through_the_console_script(gradcli_script, tmp_path, run, monkeypatch):
    """The least-squares loss of X of 2,000 x 3 from .npy files through the installed command,
    proven by the quick proof alone (at this point: elsewhere a number near a rounding
    boundary is left to the balls): the same bytes as the balls' (CliRunner, quick proof
    off), and the digits the exact rational sums give."""
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(2000, 3)), rng.normal(size=2000)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    args = ["eval", "mean((X @ w - y)^2)", "--at",
            f"X=@{tmp_path / 'X.npy'},y=@{tmp_path / 'y.npy'},w=[0.5,-1.25,2]", "--wrt", "w"]
    out = subprocess.run([gradcli_script, *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    quick, used = _cli(run, args, monkeypatch)
    balls, _ = _cli(run, args, monkeypatch, quick=False)
    assert used == [True]
    assert out.stdout == quick.output == balls.output
    from fractions import Fraction
    w = [Fraction(0.5), Fraction(-1.25), Fraction(2)]
    residual = [sum(Fraction(a) * b for a, b in zip(row, w)) - Fraction(t)
                for row, t in zip(X.tolist(), y.tolist())]
    value = sum(r * r for r in residual) / len(residual)
    with mpmath.workdps(60):
        exact = mpmath.mpf(value.numerator) / value.denominator
    assert correctly_rounded(out.stdout.splitlines()[0].split(" = ")[1], exact)


@pytest.mark.parametrize("at", [{"w": [1 / 3, 1.0]}, {"w": ["0.1", "0.7"]}])
def test_constants_and_typed_numbers_are_the_numbers_they_name(at):
    """0.1 in the source and 0.1 typed are 1/10, within an ulp of their doubles; log(2) is
    folded to a double within its bound: the digits are the exact numbers', quick or not."""
    result = api.evaluate("sum(w*0.1) + log(2)*sum(w^2)", at, quick=True)
    with mpmath.workdps(60):
        w = [mpmath.mpf(x) for x in at["w"]]  # (a text: the decimal itself)
        value = sum(w) / 10 + mpmath.log(2) * sum(x * x for x in w)
        gradient = [mpmath.mpf(1) / 10 + 2 * mpmath.log(2) * x for x in w]
    assert correctly_rounded(result.value.text, value), result.value.text
    for g, exact in zip(result.gradient.values(), gradient):
        assert correctly_rounded(g.text, exact), g.text


RANDOM_PROGRAMS = [
    "mean((X @ w - y)^2)", "p = sigmoid(X @ w + b); -mean(y*log(p) + (1-y)*log(1-p))",
    "sum(max(X, axis=1)) + prod(w)", "logsumexp(X @ w) - min(y)",
    "sum(exp(X) * y[0]) / norm(w)", "sum(softmax(X @ w) * y)", "norm(X @ w, 1) + sum(abs(w))",
    "sum(tanh(X @ w + b) ^ 3)", "sum(X[:, 0] * y) - mean(X[1, :] @ w)",
    "prod(X @ w + 3) / sum(y^2)", "sum(sqrt(abs(X))) * sum(log(1 + w^2))"]


@pytest.mark.parametrize("seed", range(12))
def test_the_quick_texts_are_the_balls_on_random_points(seed):
    """Random sizes and scales (10^-8 to 10^8), 13 and 4 digits: every text the quick proof
    gives, alone or beside the balls, is the balls' own."""
    rng = np.random.default_rng(seed)
    n, scale = int(rng.integers(2, 40)), 10.0 ** int(rng.integers(-8, 8))
    at = {"X": (rng.normal(size=(n, 3)) * scale).tolist(), "w": rng.normal(size=3).tolist(),
          "y": rng.normal(size=n).tolist(), "b": float(rng.normal())}
    def texts(source, digits, quick):
        try:
            r = api.evaluate(source, at, quick=quick, digits=digits)
        except GradcliError as exc:  # (the same error either way: the scalar tape's)
            return type(exc).__name__, str(exc)
        return r.value.text, [g.text for g in r.gradient.values()]
    for source in RANDOM_PROGRAMS:
        for digits in (13, 4):
            assert texts(source, digits, True) == texts(source, digits, False), (source, digits)
