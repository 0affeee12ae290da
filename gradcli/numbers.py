"""How numbers look to a person: fixed decimals, switching to scientific for extreme magnitudes."""

from __future__ import annotations

import math

DEFAULT_DIGITS = 12


def format_number(x: float, digits: int = DEFAULT_DIGITS) -> str:
    """``6.552027172500`` for digits=12; ``1.5e-07`` style for very small or large magnitudes."""
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == 0:
        x = 0.0  # no "-0.000"
    magnitude = abs(x)
    if magnitude != 0 and (magnitude < 1e-4 or magnitude >= 1e15):
        return f"{x:.{digits}e}"
    return f"{x:.{digits}f}"
