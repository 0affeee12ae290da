"""Pages that must agree with the program and with each other (issue 25): the exit code of an
inconclusive check, and every exported name of the Python API documented in docs/api.md."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import gradcli

DOCS = Path(__file__).parent.parent / "docs"
INCONCLUSIVE = "an inconclusive row exits 0; `--strict` makes it fail, exit 1"


@pytest.mark.parametrize("page", ["check.md", "inputs.md"])
def test_both_pages_state_the_same_exit_code_for_an_inconclusive_check(page):
    text = " ".join((DOCS / page).read_text(encoding="utf-8").split())
    assert INCONCLUSIVE in text
    assert "The exit code is still 1" not in text


def test_the_documented_exit_codes_are_the_programs(gradcli_script):
    # sin(y - 1e30): the step is swallowed by 1e30 (check.md's example of an inconclusive row)
    args = [gradcli_script, "eval", "sin(y - 1e30)", "--at", "y=1", "--check"]
    plain = subprocess.run(args, capture_output=True, text=True, timeout=60)
    strict = subprocess.run([*args, "--strict"], capture_output=True, text=True, timeout=60)
    assert "inconclusive for y" in plain.stdout
    assert (plain.returncode, strict.returncode) == (0, 1)


@pytest.mark.parametrize("name", gradcli.__all__)
def test_every_exported_name_is_documented_in_api_md(name):
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    assert re.search(r"`(gradcli\.)?" + re.escape(name) + r"[`(]", text), name
