"""gradcli.engine.trig.sincos: sine and cosine of float64 arrays, against mpmath.

Reference: mpmath at 60 digits, the error measured in units in the last place (ulp) of the
exact value. Bound asserted: 1.5 ulp, the bound docs/performance.md states (measured there, with
``benchmarks/batch.py --only accuracy``). The C library's ``np.sin`` is under 1 ulp. Beyond the
reduction's bound, and for inf and nan, the results are NumPy's own, bit for bit.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from gradcli.engine.trig import BOUND, CHUNK, sincos

ULP_BOUND = 1.5


def worst_ulps(x: np.ndarray) -> tuple[float, float]:
    """The largest error of sincos(x) in ulps: (sine, cosine)."""
    s, c = sincos(x)
    worst = [0.0, 0.0]
    with mpmath.workdps(60):
        for i, v in enumerate(x.tolist()):
            for j, (got, f) in enumerate(((s[i], mpmath.sin), (c[i], mpmath.cos))):
                exact = f(mpmath.mpf(v))
                error = abs(mpmath.mpf(float(got)) - exact) / math.ulp(float(exact))
                worst[j] = max(worst[j], float(error))
    return worst[0], worst[1]


@pytest.mark.parametrize("low, high", [(-5, 5), (-1, 1), (-BOUND, BOUND), (-1e-3, 1e-3)])
def test_uniform_points_are_within_the_bound(low, high):
    x = np.random.default_rng(int(high)).uniform(low, high, 2000)
    assert max(worst_ulps(x)) <= ULP_BOUND


def test_the_doubles_nearest_to_multiples_of_half_pi_are_within_the_bound():
    # where r = x - k·π/2 cancels most: the reduction needs all three parts of π/2
    ks = list(range(1, 400)) + list(np.random.default_rng(1).integers(400, 6366, 300))
    x = []
    with mpmath.workdps(60):
        for k in ks:
            m = float(mpmath.mpf(int(k)) * mpmath.pi / 2)
            x += [m, math.nextafter(m, 0.0), math.nextafter(m, math.inf)]
    x = np.array(x)
    assert max(worst_ulps(np.concatenate([x, -x]))) <= ULP_BOUND


def test_tiny_and_subnormal_arguments():
    x = np.array([1e-300, -1e-300, 5e-324, -5e-324, 2.2e-308, 1e-17, -1e-17, 1e-9])
    s, c = sincos(x)
    assert s.tolist() == x.tolist()  # sin(x) = x to the last bit below 1e-8
    assert c.tolist() == [1.0] * len(x)


def test_signed_zeros():
    s, c = sincos(np.array([0.0, -0.0, 1.0]))
    assert s[0] == 0.0 and not math.copysign(1.0, s[0]) < 0
    assert s[1] == 0.0 and math.copysign(1.0, s[1]) < 0  # sin(-0) = -0, as the C library
    assert c[:2].tolist() == [1.0, 1.0]


def test_beyond_the_bound_and_non_finite_values():
    x = np.array([np.inf, -np.inf, np.nan, 1e300, -1e300, math.nextafter(BOUND, math.inf),
                  -math.nextafter(BOUND, math.inf), 2.0 ** 60, 1e5])
    with np.errstate(invalid="ignore"):
        s, c = sincos(x)
        want_s, want_c = np.sin(x), np.cos(x)
    assert np.array_equal(s, want_s, equal_nan=True)  # NumPy's own, bit for bit
    assert np.array_equal(c, want_c, equal_nan=True)


def test_mixed_rows_give_each_row_what_it_gives_alone():
    # one row beyond the bound sends its block down the slow path; the others must not change
    rng = np.random.default_rng(2)
    x = rng.uniform(-20, 20, 500)
    x[[3, 77, 400]] = [np.nan, 1e6, -np.inf]
    x[[5, 6]] = [0.0, -0.0]
    with np.errstate(invalid="ignore"):
        s, c = sincos(x)
        for i in range(len(x)):
            si, ci = sincos(x[i:i + 1])
            assert np.array_equal(si, s[i:i + 1], equal_nan=True), i
            assert np.array_equal(ci, c[i:i + 1], equal_nan=True), i
            assert math.copysign(1.0, si[0]) == math.copysign(1.0, s[i]) or np.isnan(s[i])


def test_inside_the_bound_it_agrees_with_the_c_library_to_a_few_ulp():
    x = np.random.default_rng(3).uniform(-BOUND, BOUND, 20_000)
    s, c = sincos(x)
    # |a - b| <= the C library's error (1 ulp) plus ours, in ulps of the larger
    for got, want in ((s, np.sin(x)), (c, np.cos(x))):
        ulp = np.spacing(np.maximum(np.abs(got), np.abs(want)))
        assert np.max(np.abs(got - want) / ulp) <= ULP_BOUND + 1


def test_shapes_chunks_and_scalars():
    x = np.linspace(-30, 30, 3 * CHUNK + 8)  # several chunks and a short last one
    s, c = sincos(x)
    assert s.shape == c.shape == x.shape
    s2, c2 = sincos(x.reshape(8, -1))
    assert s2.shape == (8, len(x) // 8) and np.array_equal(s2.reshape(-1), s)
    assert np.array_equal(c2.reshape(-1), c)
    assert sincos(np.empty(0))[0].shape == (0,)
    s0, c0 = sincos(2.0)
    assert float(s0) == math.sin(2.0) and float(c0) == math.cos(2.0)
    assert sincos([1.0, 2.0])[0].shape == (2,)
    strided = x[::3]  # a view that is not contiguous
    assert np.array_equal(sincos(strided)[0], s[::3])


def test_threads_keep_their_own_scratch_arrays():
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(4)
    blocks = [rng.uniform(-9, 9, CHUNK) for _ in range(16)]
    alone = [sincos(b) for b in blocks]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(sincos, blocks))
    for (s1, c1), (s2, c2) in zip(alone, together):
        assert np.array_equal(s1, s2) and np.array_equal(c1, c2)
