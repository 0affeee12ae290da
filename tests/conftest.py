import math
import os
import shutil
import sys

import pytest
from click.testing import CliRunner


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


@pytest.fixture
def run():
    """Invoke the gradcli command line through click's CliRunner."""
    from gradcli.cli import main
    runner = CliRunner()

    def invoke(*args, input=None, env=None):
        return runner.invoke(main, list(args), input=input, env=env)
    return invoke


def check_reported(result, code: int, words: list[str]) -> None:
    """A user error: the exit code, a message on stderr with ``words``, no traceback."""
    assert result.exit_code == code, result.output
    for word in words:
        assert word in result.stderr, result.stderr
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.fixture
def reported():
    return check_reported


@pytest.fixture
def gradcli_script():
    """The path of the installed console script."""
    found = shutil.which("gradcli", path=os.path.dirname(sys.executable)) or shutil.which("gradcli")
    if not found:
        pytest.fail("the gradcli console script is not installed (pip install -e .)")
    return found
