"""tanh's derivative, one namespace operation (``Namespace.tanh_slope``) that every mode reads,
fused on NumPy columns: against mpmath's sech(a)^2 at 50 digits, from tiny |a| to |a| = 800
(where it underflows to 0), in every mode: floats, NumPy columns (the batch engine and the
array nodes), dual numbers (the Hessian), Arb balls (certified), the bounds pass, generated
code, and symbolic diff (which prints the same product of sigmoids and reads back)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import gradcli
from gradcli.engine.batch import NUMPY
from gradcli.engine.primitives import TABLE, Namespace

POINTS = [0.0, 5e-324, -1e-300, 1e-8, -3e-5, 0.3, -0.9, 1.5, 10.0, -19.5, 20.0, 37.0, -100.0,
          300.0, -354.0, 355.0, 360.0, -372.0, 400.0, 709.0, -710.5, 711.0, 800.0, -800.0]


def sech2(a: float) -> mpmath.mpf:
    with mpmath.workdps(50):
        return mpmath.sech(mpmath.mpf(a)) ** 2


def curvature(a: float) -> mpmath.mpf:
    """tanh''(a) = -2·tanh(a)·sech(a)^2."""
    with mpmath.workdps(50):
        return -2 * mpmath.tanh(mpmath.mpf(a)) * mpmath.sech(mpmath.mpf(a)) ** 2


def close(got: float, expected, rel: float = 1e-14) -> bool:
    """Within ``rel`` where the expected value is a normal double; a subnormal or underflowing
    one keeps only its absolute precision (the smaller sigmoid rounds to the subnormal grid,
    and 4 times it: a few units of 5e-324)."""
    expected = float(expected)
    return abs(got - expected) <= rel * abs(expected) + 1e-322


@pytest.mark.parametrize("a", POINTS)
def test_float_engine(a):
    got = gradcli.evaluate("tanh(x)", {"x": a}, float64=True).gradient["x"]
    assert close(got, sech2(a)), (a, got, sech2(a))


@pytest.mark.parametrize("a", POINTS)
def test_certified_digits(a):
    result = gradcli.evaluate("tanh(x)", {"x": a})
    assert close(float(result.gradient["x"]), sech2(a), 1e-12), (a, result.gradient["x"])


def test_numpy_columns_agree_with_the_float_rule():
    rng = np.random.default_rng(7)
    a = np.concatenate([np.array(POINTS), rng.normal(0, 30, 5000), np.linspace(-800, 800, 4001),
                        [np.inf, -np.inf, np.nan]])
    fused = TABLE["tanh"].partials[0](NUMPY, a, None)
    assert np.allclose(fused, Namespace.tanh_slope(NUMPY, a), rtol=4e-15, atol=1e-322,
                       equal_nan=True)
    for x, got in zip(POINTS, fused):
        assert close(got, sech2(x)), (x, got)


@pytest.mark.parametrize("float64", [True, False])
def test_batch_engine_and_the_bounds_pass(float64):
    a = np.array(POINTS)
    result = gradcli.evaluate_batch("tanh(x)", {"x": a}, float64=float64, with_digits=not float64)
    for x, got in zip(POINTS, result.gradient["x"]):
        assert close(got, sech2(x)), (x, got)
    if not float64:  # the bounds pass: what it proves holds
        for x, got, digits in zip(POINTS, result.gradient["x"], result.digits):
            assert digits >= 10 and close(got, sech2(x), 10.0 ** -digits), (x, got, digits)


def test_array_nodes():
    from gradcli.engine import arraynodes
    X = np.array(POINTS)
    graph, value, gradient, point = arraynodes.evaluate("sum(tanh(X))", {"X": X}, None, 1.0)
    for x, got in zip(POINTS, np.ravel(gradient["X"])):
        assert close(got, sech2(x)), (x, got)


@pytest.mark.parametrize("a", [0.0, 1e-8, 0.3, -0.9, 10.0, -20.0, 300.0, -372.0, 800.0])
def test_hessian_dual_numbers(a):
    got = gradcli.hessian("tanh(x)", {"x": a}, float64=True).hessian[0][0]
    assert close(got, curvature(a), 1e-13), (a, got, curvature(a))


def test_generated_code():
    namespace: dict = {}
    exec(gradcli.codegen("tanh(x)", "python"), namespace)  # our own generated code, not user text
    for a in POINTS:
        value, gradient = namespace["f"](a)
        got = gradient if isinstance(gradient, float) else gradient[0]
        assert close(got, sech2(a)), (a, got)


def test_diff_prints_a_textbook_slope_that_reads_back():
    text = gradcli.derivatives("tanh(x)")["x"]
    assert text == "4*sigmoid(2*x)*sigmoid(-2*x)"
    for a in POINTS:
        got = gradcli.evaluate(text, {"x": a}, float64=True).value
        assert close(got, sech2(a), 1e-13), (a, got)
