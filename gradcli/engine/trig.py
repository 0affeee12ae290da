"""Sine and cosine of a float64 column together, vectorised: the batch engine's sin and cos.

NumPy's float64 ``np.sin`` and ``np.cos`` call the C library once per element (no SIMD); the
batch engine needs both for every ``sin`` or ``cos`` node (the value and the
local derivative). :func:`sincos` computes the pair in about 45 array operations of NumPy
arithmetic, which use every SIMD lane of the processor, sharing one argument reduction:

1. Reduction (Cody and Waite): ``k = rint(x·2/π)`` and ``r = x - k·π/2`` with π/2 in three
   parts (:data:`PIO2_1`, :data:`PIO2_2` of 40 bits, so that ``k·part`` is exact for
   ``|k| < 2**13``, and :data:`PIO2_3`, the rest), which represent π/2 to 133 bits: ``r`` is
   then correct to about an ulp of itself even for the ``x`` closest to a multiple of π/2.
2. Kernels on ``|r| <= π/4``: the minimax polynomials of fdlibm's ``__kernel_sin`` and
   ``__kernel_cos`` (Sun Microsystems, 1993; error below 2**-58 on the interval).
3. Quadrant ``k mod 4``: swap sine and cosine for odd ``k``, and set their signs.

Every step is an element-wise NumPy operation on blocks of :data:`CHUNK` rows, with scratch
arrays kept per thread, so a row's result does not depend on the rows computed with it.

Above :data:`BOUND` (where ``k`` outgrows 13 bits) and for inf and nan, the rows are computed
by ``np.sin`` and ``np.cos`` instead, so every input is handled. Measured against mpmath
(tests/test_trig.py, ``benchmarks/batch.py --only accuracy``; docs/performance.md) the error
is at most 1.5 ulp (the C library's: under 1 ulp).

>>> import numpy as np
>>> s, c = sincos(np.array([0.0, 1.0, 1e300]))
>>> [float(v) for v in s - np.sin([0.0, 1.0, 1e300])], float(c[0])
([0.0, 0.0, 0.0], 1.0)
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np

TWO_OVER_PI = 0.6366197723675814
# π/2 = PIO2_1 + PIO2_2 + PIO2_3 + about 2.3e-41; the first two have 40 significant bits.
PIO2_1 = float.fromhex("0x1.921fb54442000p+0")
PIO2_2 = float.fromhex("0x1.a308d31318000p-41")
PIO2_3 = float.fromhex("0x1.8a2e03707344ap-81")
BOUND = 1.0e4  # |x| <= BOUND gives |k| <= 6367 < 2**13
CHUNK = 1 << 14  # rows computed at a time: the scratch arrays stay in the processor's cache

# fdlibm k_sin.c: sin(r) ≈ r + r·z·(S1 + z·(S2 + ... + z·S6)), z = r²
SIN = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
       2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
# fdlibm k_cos.c: cos(r) ≈ 1 - z/2 + z²·(C1 + z·(C2 + ... + z·C6))
COS = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
       -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)

_SIGN = np.int64(-1 << 63)  # the sign bit of a float64, as an int64
# Both kernels' coefficients, a row each: Horner's rule runs on both rows in one array pass a step
KERNELS = np.array([SIN, COS])
_COLUMNS = [KERNELS[:, i:i + 1] for i in range(KERNELS.shape[1])]  # each degree's (2, 1) pair
_LOCAL = threading.local()  # each thread's scratch arrays, by block length


def _scratch(n: int) -> SimpleNamespace:
    """This thread's scratch arrays for blocks of n rows, made once and reused: a fresh 128 KiB
    array per step costs more than the step when the C library hands the memory back to the
    system between blocks."""
    by_length = getattr(_LOCAL, "by_length", None)
    if by_length is None:
        by_length = _LOCAL.by_length = {}
    w = by_length.get(n)
    if w is None:
        if len(by_length) > 4:  # a few lengths at a time (the last block of a column is short)
            by_length.clear()
        w = by_length[n] = SimpleNamespace(
            z=np.empty(n), pq=np.empty((2, n)), k=np.empty(n), r=np.empty(n), t=np.empty(n),
            ints=np.empty((4, n), dtype=np.int64))
    return w


def _reduced_into(x: np.ndarray, out: np.ndarray, w: SimpleNamespace) -> None:
    """[sin(x), cos(x)] into the 2-row ``out``, for finite |x| <= BOUND (w: scratch arrays).
    Each ufunc's output is its third argument: the positional form is the quicker call."""
    k, r, t = w.k, w.r, w.t
    # r = x - k·π/2, k = rint(x·2/π)
    np.multiply(x, TWO_OVER_PI, k)
    np.rint(k, k)
    np.multiply(k, PIO2_1, t)
    np.subtract(x, t, r)  # exact: k·PIO2_1 is exact and close to x
    np.multiply(k, PIO2_2, t)
    r -= t
    np.multiply(k, PIO2_3, t)
    r -= t
    # the kernels on |r| <= π/4, z = r²: P(z) and Q(z) by Horner's rule, both rows at once
    z, pq = w.z, w.pq
    np.multiply(r, r, z)
    np.multiply(z, _COLUMNS[-1], pq)
    for column in _COLUMNS[-2:0:-1]:
        pq += column
        pq *= z
    pq += _COLUMNS[0]
    sin, cos = out
    np.multiply(r, z, t)  # sine: r + (r·z)·P(z)
    np.multiply(pq[0], t, sin)
    sin += r
    np.multiply(z, z, t)  # cosine: 1 - (z/2 - z²·Q(z))
    np.multiply(pq[1], t, cos)
    np.multiply(z, 0.5, t)
    np.subtract(t, cos, cos)
    np.subtract(1.0, cos, cos)
    # the quadrant k mod 4: (s, c), (c, -s), (-s, -c), (-c, s). Bit operations, not np.where:
    # a select on an unpredictable condition costs more than ten array passes.
    q, odd, high, swap = w.ints
    np.copyto(q, k, casting="unsafe")  # k is a whole number: exact
    np.left_shift(q, 63, odd)  # bit 63: bit 0 of k
    np.left_shift(q, 62, high)
    high &= _SIGN  # bit 63: bit 1 of k, where the sine is negative
    s, c = sin.view(np.int64), cos.view(np.int64)
    np.bitwise_xor(s, c, swap)
    np.right_shift(odd, 63, q)  # all ones where k is odd
    swap &= q
    s ^= swap
    c ^= swap
    s ^= high
    high ^= odd  # bit 63: bit 1 of k + 1, where the cosine is negative
    c ^= high


def _sincos_into(x: np.ndarray, out: np.ndarray) -> None:
    """[sin(x), cos(x)] into the 2-row ``out``, for a 1-dimensional x of at most CHUNK rows."""
    w = _scratch(len(x))
    magnitude = np.abs(x, w.r)
    if np.maximum.reduce(magnitude) <= BOUND:  # nan if any element is nan
        has_zero = np.minimum.reduce(magnitude) == 0.0
        _reduced_into(x, out, w)
        if has_zero:  # sin(-0) is -0; the reduction gives +0
            np.copyto(out[0], x, where=x == 0.0)
        return
    out[0], out[1] = np.sin(x), np.cos(x)  # every row; the ones inside are replaced below
    inside = np.flatnonzero((magnitude <= BOUND) & (magnitude > 0.0))  # no inf, nan, 0
    if len(inside):
        part = np.empty((2, len(inside)))
        _reduced_into(x[inside], part, _scratch(len(inside)))
        out[:, inside] = part


def sincos(x) -> tuple[np.ndarray, np.ndarray]:
    """``(np.sin(x), np.cos(x))`` for float64 values, computed together (to about an ulp)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        return np.sin(x), np.cos(x)
    flat = x.reshape(-1)
    n = len(flat)
    pair = np.empty((2, n))
    for start in range(0, n, CHUNK):
        _sincos_into(flat[start:start + CHUNK], pair[:, start:start + CHUNK])
    return pair[0].reshape(x.shape), pair[1].reshape(x.shape)


__all__ = ["BOUND", "CHUNK", "sincos"]
