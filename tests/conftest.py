import math

import pytest


def central_difference(f, x: float, h: float | None = None) -> float:
    """Richardson-extrapolated central difference of a scalar function (an independent reference)."""
    h = h or 1e-3 * max(1.0, abs(x))
    d1 = (f(x + h) - f(x - h)) / (2 * h)
    d2 = (f(x + h / 2) - f(x - h / 2)) / h
    return (4 * d2 - d1) / 3


@pytest.fixture
def fd():
    return central_difference


def close(a: float, b: float, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)
