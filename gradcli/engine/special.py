"""Float functions of the table that neither Python nor the C library has as they are here:
digamma and polygamma, sinc and its slope, and the piecewise and machine-learning rows (sigmoid,
softplus, relu, sign, step, min, max) that generated code defines for itself.

``math`` has gamma, lgamma and erfc; digamma ψ = Γ'/Γ and its derivatives ψ⁽ⁿ⁾ it has not.
They are computed the textbook way (Abramowitz & Stegun 6.3.18, 6.4.11): shift the argument up
with the recurrence ψ⁽ⁿ⁾(x + 1) = ψ⁽ⁿ⁾(x) + (-1)ⁿ n!/x^(n+1) until x ≥ 10, then sum the
asymptotic series, whose Bernoulli terms at x ≥ 10 are below 1e-17 of the result by the 8th.
Negative digamma arguments go through the reflection ψ(1 - x) - ψ(x) = π cot(πx).

>>> abs(digamma(1.0) + 0.5772156649015329) < 1e-15  # ψ(1) = -γ, the Euler-Mascheroni constant
True
>>> trigamma(1.0)  # π²/6
1.6449340668482264
"""

from __future__ import annotations

import math

# The Bernoulli numbers B_2k, k = 1..8, of both asymptotic series.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_SHIFTED = 10.0  # the series is summed from here up


def _pole(x: float) -> bool:
    return x <= 0 and x == math.floor(x)


# sigmoid, softplus, relu, sign, step, minimum, maximum, digamma, trigamma and sinc are also the
# helpers generated code defines (gradcli.code.helpers prints them in Python, NumPy and C from
# these definitions): each is written in the few statements that printer knows (if, while, for
# over enumerate, assignments, conditional expressions, arithmetic, math's functions), and
# calls no other function of this module.

def sigmoid(x: float) -> float:
    """1/(1 + e^-x), as e^-|x| over one plus it below 0: e^-|x| ≤ 1 never overflows."""
    z = math.exp(-abs(x))
    return 1.0 / (1.0 + z) if x >= 0 else z / (1.0 + z)


def softplus(x: float) -> float:
    """ln(1 + e^x), as ln(1 + e^-|x|) + max(x, 0): no overflow for large x."""
    return math.log1p(math.exp(-abs(x))) + (x if x > 0 else 0.0)


def relu(x: float) -> float:
    return x if x > 0 else 0.0


def sign(x: float) -> float:
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


def step(x: float) -> float:
    return 1.0 if x > 0 else 0.0


def minimum(a: float, b: float) -> float:
    """Python's min(a, b): a unless b is smaller (min(nan, 1) is nan, min(1, nan) is 1; NumPy's
    minimum is nan for both)."""
    return b if b < a else a


def maximum(a: float, b: float) -> float:
    """Python's max(a, b): a unless b is larger."""
    return b if b > a else a


def digamma(x: float) -> float:
    """ψ(x) = d/dx ln Γ(x); a ValueError at the poles 0, -1, -2, …"""
    if x <= 0 and x == math.floor(x):  # a pole
        raise ValueError("math domain error")
    if x < 0.5:  # reflection, then x ≥ 0.5
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    shift = 0.0
    while x < _SHIFTED:
        shift -= 1.0 / x
        x += 1.0
    inverse_square = 1.0 / (x * x)
    series = 0.0
    power = inverse_square
    for k, b in enumerate(_BERNOULLI, start=1):
        series += b / (2 * k) * power
        power *= inverse_square
    return shift + math.log(x) - 0.5 / x - series


def trigamma(x: float) -> float:
    """ψ'(x), the derivative of digamma: :func:`polygamma` for n = 1, the same operations."""
    if (x <= 0 and x == math.floor(x)) or x < -1e6:  # a pole, or a million steps
        raise ValueError("math domain error")
    shift = 0.0
    while x < _SHIFTED:  # ψ'(x) = ψ'(x + 1) + 1/x^2
        shift += 1.0 / x ** 2
        x += 1.0
    total = 1.0 / x + 1.0 / (2 * x ** 2)
    for k, b in enumerate(_BERNOULLI, start=1):
        total += b / x ** (2 * k + 1)
    return shift + total


def polygamma(n: float, x: float) -> float:
    """ψ⁽ⁿ⁾(x), the n-th derivative of digamma (n = 0 is digamma itself); n must be a whole
    number ≥ 0, and x not a pole (0, -1, -2, …)."""
    if n < 0 or n != math.floor(n) or n > 100:
        raise ValueError("polygamma's order n must be a whole number from 0 to 100")
    if _pole(x):
        raise ValueError("math domain error")
    n = int(n)
    if n == 0:
        return digamma(x)
    if x < -1e6:
        raise ValueError("math domain error")  # a million recurrence steps: not computed
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    factorial = math.factorial(n)
    shift = 0.0
    while x < _SHIFTED:  # ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x + 1) - (-1)ⁿ n!/x^(n+1)
        shift += sign * factorial / x ** (n + 1)
        x += 1.0
    # (-1)^(n+1) [(n-1)!/x^n + n!/(2x^(n+1)) + Σ B_2k (2k+n-1)!/((2k)! x^(2k+n))]
    total = math.factorial(n - 1) / x ** n + factorial / (2 * x ** (n + 1))
    for k, b in enumerate(_BERNOULLI, start=1):
        total += b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) / x ** (2 * k + n)
    return shift + sign * total


def sinc(x: float) -> float:
    """sin(x)/x, and 1 at 0 (the unnormalized sinc of SymPy, Arb and Wolfram; NumPy's
    ``np.sinc`` is sin(πx)/(πx))."""
    if abs(x) < 1e-4:  # the Taylor series: sin(x)/x loses nothing here, but 0/0 at 0
        return 1.0 - x * x / 6.0 * (1.0 - x * x / 20.0)
    return math.sin(x) / x


def sinc_slope_series(x):
    """Σ (-1)^k 2k x^(2k-1)/(2k+1)!, the derivative of sinc for |x| < 1 (where the 12th term is
    below 1e-26): arithmetic only, so it runs on floats and on NumPy columns alike."""
    x2, total, term = x * x, 0.0, x  # term = (-1)^k x^(2k-1)/(2k+1)!, with its sign
    for k in range(1, 13):
        term = term * (-1.0 / ((2 * k) * (2 * k + 1)))
        if k > 1:
            term = term * x2
        total = total + 2 * k * term
    return total


def exp2(x: float) -> float:
    """2^x; an OverflowError where it is not finite, as math.exp's."""
    return math.pow(2.0, x)
