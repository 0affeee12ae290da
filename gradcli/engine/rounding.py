"""Numbers as decimal text with a given number of significant digits, correctly rounded.

The certified engine rounds the exact ends of a ball with these; the views round a plain float
the same way, so both print ``6.552027172500`` and ``5.000000000000e-9`` alike. No Arb here: the
float64 path imports this module, never python-flint.

>>> float_text(6.552027172500078, 13), float_text(5e-9, 13), float_text(123456789.123456789, 13)
('6.552027172500', '5.000000000000e-9', '123456789.1235')
>>> float_text(0.0, 13), float_text(-2.5, 1), float_text(1e16, 13)
('0', '-2', '1.000000000000e16')
"""

from __future__ import annotations

import math

DEFAULT_DIGITS = 13  # significant digits: the seed example prints 6.552027172500
FLOAT64_DIGITS = 15  # significant digits a double always holds: float64 "loses" only below this


def round_significant(num: int, den: int, n: int) -> tuple[int, int, int]:
    """``num/den`` (non-zero, den > 0) rounded half-even to ``n`` significant digits:
    (sign, the digits as an int of n digits, the decimal exponent of the first digit)."""
    sign = -1 if num < 0 else 1
    num = abs(num)
    k = int(math.floor((num.bit_length() - den.bit_length()) * 0.30102999566398120))
    while num < den * 10 ** k if k >= 0 else num * 10 ** -k < den:
        k -= 1
    while num >= den * 10 ** (k + 1) if k + 1 >= 0 else num * 10 ** -(k + 1) >= den:
        k += 1
    s = n - 1 - k
    top, bottom = (num * 10 ** s, den) if s >= 0 else (num, den * 10 ** -s)
    d, r = divmod(top, bottom)
    if 2 * r > bottom or (2 * r == bottom and d % 2):
        d += 1
    if d == 10 ** n:
        d //= 10
        k += 1
    return sign, d, k


def decimal_text(sign: int, d: int, k: int, n: int) -> str:
    """The digits ``d`` (n of them, first digit at 10^k) as text: positional for
    10^-4 <= |x| < 10^n (``6.552027172500``), else with an exponent (``5.000000000000e-9``)."""
    digits = str(d) if n <= 4000 else _long_digits(d)
    lead = "-" if sign < 0 else ""
    if -4 <= k < n:
        if k >= 0:
            whole, frac = digits[:k + 1], digits[k + 1:]
            return lead + whole + ("." + frac if frac else "")
        return lead + "0." + "0" * (-k - 1) + digits
    return lead + digits[0] + ("." + digits[1:] if n > 1 else "") + f"e{k}"


def _long_digits(d: int) -> str:
    """``str(d)`` for an int of more than 4,300 digits, which Python refuses to write (its
    integer-string limit, against quadratic work on untrusted input): FLINT's conversion, not
    limited and subquadratic. Imported here only, so the float64 path never loads it."""
    from flint import fmpz
    return str(fmpz(d))


class Proven(float):
    """A number with its proven decimal digits: as a float, the exact value correctly rounded to
    a double (infinite beyond the double range); ``text``, the digits that are certain, correctly
    rounded (``digits`` of them, or fewer where the cap was reached); ``exact``, whether ``text``
    is the exact value."""

    __slots__ = ("text", "digits", "exact")

    def __new__(cls, value: float, text: str, digits: int, exact: bool = False):
        self = super().__new__(cls, value)
        self.text, self.digits, self.exact = text, digits, exact
        return self

    # repr and str are the float's: a Proven is used as a float; ``text`` holds the digits.

    def __neg__(self) -> "Proven":
        text = self.text[1:] if self.text.startswith("-") else "-" + self.text
        return Proven(-float(self), "0" if text == "-0" else text, self.digits, self.exact)

    def __abs__(self) -> "Proven":
        return -self if self.text.startswith("-") else self


def float_text(x: float, n: int = DEFAULT_DIGITS) -> str:
    """A float rounded (correctly, half-even) to ``n`` significant digits, as
    :func:`decimal_text` writes it; ``0`` for zero, ``inf``/``nan`` as Python writes them."""
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return str(x)
    num, den = x.as_integer_ratio()
    return decimal_text(*round_significant(num, den, n), n)


def compact(x: float) -> str:
    """A number in few characters, for sentences: a proven one's digits without trailing zeros
    (``6``, ``0.9092974268257``), a float's 12 significant digits."""
    text = getattr(x, "text", None)
    return f"{float(x):.12g}" if text is None else trimmed(text)


def trimmed(text: str) -> str:
    """A decimal without the trailing zeros of its mantissa: ``6.5000`` is ``6.5``, ``2.000e-5``
    is ``2e-5``."""
    mantissa, e, exponent = text.partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return mantissa + e + exponent
