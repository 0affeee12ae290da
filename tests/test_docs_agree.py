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


# -- every option of every command is on its page, with its default and choices -----------------

def _options():
    import click

    from gradcli.cli import main
    for name, command in sorted(main.commands.items()):
        for option in command.params:
            if isinstance(option, click.Option) and "--help" not in option.opts:
                yield pytest.param(name, option, id=f"{name} {max(option.opts, key=len)}")


def _default(option) -> str | None:
    """The default as the page writes it (None: nothing to say: a flag, a list, no value)."""
    value = option.default
    if option.is_flag or option.multiple or isinstance(value, bool) or not isinstance(
            value, (int, float, str)):
        return None
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


@pytest.mark.parametrize("command, option", list(_options()))
def test_every_option_is_described_on_its_page_with_its_default_and_choices(command, option):
    """Each option of ``gradcli COMMAND --help`` is on docs/COMMAND.md (--width and --ascii,
    shared by every command, on docs/output.md), on a line that gives the same default and
    every choice."""
    import click
    page = (DOCS / f"{command}.md").read_text(encoding="utf-8").replace("`", "").splitlines()
    if {"--width", "--ascii"} & set(option.opts):
        page += (DOCS / "output.md").read_text(encoding="utf-8").replace("`", "").splitlines()
    lines = [line for line in page if any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", line)
                                          for o in option.opts)]
    assert lines, f"{'/'.join(option.opts)} is not on docs/{command}.md"
    default = _default(option)
    if default is not None:
        said = rf"default:? {re.escape(default)}\b|{re.escape(default)}\W{{0,3}}\(?(the )?default"
        assert any(re.search(said, line) for line in lines), \
            f"docs/{command}.md does not say {max(option.opts, key=len)}'s default {default}"
    if isinstance(option.type, click.Choice):
        missing = [c for c in option.type.choices if not any(c in line for line in lines)]
        assert not missing, f"docs/{command}.md leaves out the choices {missing}"
