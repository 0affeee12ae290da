"""What a plain ``gradcli eval`` loads: nothing it does not print.

The installed console script runs in a fresh process with ``-X importtime`` (every module it
imports is listed on stderr), its bytecode warmed first. Start-up time itself is
measured by ``benchmarks/run.py``, never asserted here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

SEED = ("eval", "log(x)+x*y-sin(y)", "--at", "x=2,y=3")
# Modules a plain evaluation must not import: the symbolic module and the trace records (built
# only for diff and --trace), fractions and decimal (which the symbolic module needs), the rich
# tables, NumPy (batches), Lark (the parser runs the tables shipped beside the grammar), the
# views of array inputs, the records of the Jacobian and the Hessian.
NOT_LOADED = ("gradcli.symbolic", "gradcli.records", "gradcli.views.tables", "fractions",
              "decimal", "numpy", "lark", "rich", "gradcli.views.arrays", "gradcli.matrices")


def _script() -> list[str]:
    script = shutil.which("gradcli", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the gradcli console script is not installed beside this Python")
    return [sys.executable, "-X", "importtime", script]


def imported(args) -> set[str]:
    """The modules the console script imports for ``args`` (its bytecode warmed first)."""
    warm = subprocess.run(_script()[3:] + list(args), capture_output=True, text=True)
    assert warm.returncode == 0, warm.stderr
    done = subprocess.run(_script() + list(args), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header line
                names.add(name)
    assert "gradcli.cli" in names  # the listing is real
    return names


# The printed digits are proven by the quick sweep in doubles when it can (the seed's can);
# Arb (python-flint) is imported only where that fails, or for --json's correctly rounded doubles.
PROVEN_QUICKLY = ("flint", "gradcli.engine.ball", "gradcli.engine.certify")


@pytest.mark.parametrize("extra, not_loaded", [((), NOT_LOADED + PROVEN_QUICKLY),
                                               (("--json",), NOT_LOADED)], ids=["text", "json"])
def test_a_plain_eval_imports_only_what_it_prints(extra, not_loaded):
    names = imported(SEED + extra)
    loaded = sorted(m for m in names for bad in not_loaded if m == bad or m.startswith(bad + "."))
    assert not loaded, f"a plain eval imported {loaded}"


def test_the_listing_sees_what_a_certified_eval_imports():
    """The check can fail: --json proves its doubles with Arb."""
    assert {"flint", "gradcli.engine.certify"} <= imported(SEED + ("--json",))


def test_the_listing_sees_what_a_trace_imports():
    """The check can fail: --trace does import the records and the symbolic module."""
    names = imported(SEED + ("--trace",))
    assert {"gradcli.records", "gradcli.symbolic.expr", "fractions"} <= names


def test_the_console_script_sets_start_ups_objects_aside_and_collects_the_rest(tmp_path):
    """The console script imports with the cyclic collector off, then freezes what start-up
    made (it lives as long as the process) and turns the collector back on: the command's own
    garbage is still collected, start-up's objects are never walked again."""
    probe = (
        "import gc, sys\n"
        "import gradcli.cli as cli\n"
        "import gradcli.__main__ as entry\n"
        "def command():\n"
        "    frozen = gc.get_freeze_count()\n"
        "    class Cycle: pass\n"
        "    a = Cycle(); a.me = a; del a\n"
        "    print(gc.isenabled(), frozen > 1000, gc.collect() >= 1)\n"
        "cli.run = command\n"
        "entry.run()\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=tmp_path)  # the installed gradcli
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]
