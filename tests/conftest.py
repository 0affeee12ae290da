import math
import os
import re
import shutil
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings


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


def readme_runs(select) -> list[tuple[str, list[str]]]:
    """(command, printed lines) for every ``$ gradcli ...`` run in the console blocks of the
    README and docs/*.md that ``select(command)`` accepts. tests/test_docs.py replays them all;
    this is for tests that ask which examples the pages have."""
    from test_docs import ALL_RUNS
    return [(run.command, run.shown) for run in ALL_RUNS if select(run.command)]


@pytest.fixture(autouse=True, scope="session")
def _private_temporary_directory(tmp_path_factory):
    """Keep the console scripts the tests start out of the shared temporary directory, so no
    test passes because of what an earlier run left there."""
    saved = {name: os.environ.get(name) for name in ("TMPDIR",)}
    os.environ["TMPDIR"] = str(tmp_path_factory.mktemp("tmp"))
    yield
    for name, value in saved.items():
        if value is None:
            del os.environ[name]
        else:
            os.environ[name] = value


@pytest.fixture
def empty_dirs(tmp_path, monkeypatch):
    """An empty, private temporary directory for this test, in the environment of the processes
    it starts."""
    dirs = types.SimpleNamespace(tmp=tmp_path / "tmp")
    dirs.tmp.mkdir(mode=0o700)
    monkeypatch.setenv("TMPDIR", str(dirs.tmp))
    return dirs


# -- hypothesis profiles --------------------------------------------------------------------------
# "dev" (the default): random examples, and the failures found are kept in .hypothesis/ and tried
# first on the next run. "ci" (when $CI is set, as CI services and .ci/run set it): the same
# examples on every run (derandomize) and no example database, so a red build is never a new
# random find or a stale local database, only a change. Both run 100 examples a property, which
# keeps the suite within its four minutes; GRADCLI_HYPOTHESIS=thorough runs 500 (five times as
# many for every property, see strategies.examples) and GRADCLI_HYPOTHESIS=long a search by hand.
# Wall-clock deadlines are off: the machine is shared, and a slow example is not a failure.
_common = dict(deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, **_common)
settings.register_profile("ci", max_examples=100, derandomize=True, database=None, **_common)
settings.register_profile("thorough", max_examples=500, **_common)
settings.register_profile("long", max_examples=20_000, **_common)
settings.load_profile(os.environ.get("GRADCLI_HYPOTHESIS")
                      or ("ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def cluster():
    """A two-worker Dask LocalCluster (threads, no dashboard), started once for the session."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        yield cluster
