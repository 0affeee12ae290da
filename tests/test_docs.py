"""The documentation shows real output: every example in README.md and docs/*.md is run again.

The convention, for whoever writes a page (nothing to register: a new page is checked as soon as
it is in docs/):

- A ```` ```console ```` block holds runs. A line starting with ``$ `` is a command; the lines after
  it, up to the next ``$ `` line or the end of the block, are exactly what it prints, stdout and
  stderr as a terminal shows them (trailing spaces and trailing blank lines aside: a blank line
  may separate two runs).
- A command whose first word is ``gradcli`` is replayed: the shell expands its words (quotes,
  ``$(...)``, ``{1..99}``, a trailing ``# comment``), gradcli runs them through click's CliRunner
  in an empty directory with no Graphviz on PATH, and the output must equal the lines shown.
  ``echo TEXT | gradcli ...`` (or ``printf``) is replayed with the echoed text on stdin.
- ``$ cat FILE`` followed by the file's lines shows a file: it is written into that directory
  for every later command of the page (so ``gradcli eval -f model.grad`` runs).
- Any other command (``pip``, ``python``, ``cd``) is shown, not run. A replayed command is one
  gradcli run: a pipe after it or a redirection is a test failure, not a silent skip.
- A ```` ```python ```` block whose first line starts with ``>>>`` is a doctest; a page's blocks
  run in order in one namespace, as one Python session.

Blocks marked ```` ```sh ````, ```` ```text ```` or ```` ```mermaid ```` are not run.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
FEEDS = ("echo", "printf")  # commands whose output a replayed run may read on stdin


@dataclass(frozen=True)
class Run:
    """One ``$ gradcli ...`` line of a page, what it prints, and the files shown before it."""

    page: str
    line: int
    command: str
    shown: list[str]
    files: dict[str, str]

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path) -> list[tuple[str, int, str]]:
    """(language, line number of the block's first line, text) for every fenced block."""
    text = path.read_text(encoding="utf-8")
    return [(m.group(1), text.count("\n", 0, m.start(2)) + 1, m.group(2))
            for m in BLOCK.finditer(text)]


def trimmed(lines: list[str]) -> list[str]:
    """Lines without trailing spaces, and without blank lines at the end."""
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def runs(path: Path) -> list[Run]:
    """Every replayed command of a page, in order, with the files its ``$ cat`` lines showed."""
    found, files = [], {}
    name = str(path.relative_to(ROOT))
    for language, first, text in blocks(path):
        if language != "console":
            continue
        lines = text.splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
        for i, end in zip(starts, starts[1:] + [len(lines)]):
            command, shown = lines[i][2:], trimmed(lines[i + 1:end])
            words = shlex.split(command, comments=True)
            if words[:1] == ["cat"] and len(words) == 2:
                files = {**files, words[1]: "\n".join(lines[i + 1:end]) + "\n"}
            elif words[:1] == ["gradcli"] or (words[:1] and words[0] in FEEDS and "|" in words
                                              and words[words.index("|") + 1] == "gradcli"):
                found.append(Run(name, first + i, command, shown, files))
    return found


ALL_RUNS = [run for page in PAGES for run in runs(page)]


def this_environment() -> dict[str, str]:
    """The environment for the shell: this Python's console scripts first on PATH, so that a
    ``$(gradcli ...)`` inside a command runs the gradcli under test, not another install's."""
    scripts = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": scripts + os.pathsep + os.environ.get("PATH", "")}


def expand(words: str) -> list[str]:
    """The arguments the shell passes for ``words`` (expansion only: nothing is run but printf
    and the commands of a ``$(...)``)."""
    out = subprocess.run(["bash", "-c", "printf '%s\\0' " + words], capture_output=True,
                         check=True, timeout=30, env=this_environment())
    return out.stdout.decode("utf-8").split("\0")[:-1]


def shell_output(command: str) -> str:
    out = subprocess.run(["bash", "-c", command], capture_output=True, check=True, timeout=30,
                         env=this_environment())
    return out.stdout.decode("utf-8")


@pytest.mark.parametrize("example", ALL_RUNS, ids=str)
def test_console_examples_print_what_the_docs_show(run, example, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, content in example.files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    feed, _, command = example.command.rpartition("| gradcli ")
    stdin = shell_output(feed) if feed else None
    command = command if feed else example.command.removeprefix("gradcli ")
    tokens = list(shlex.shlex(command, posix=True, punctuation_chars=True))
    assert not {"|", ">", ">>", "<", ";", "&&", "||", "&"} & set(tokens), (
        f"{example}: a replayed command is one gradcli run (see tests/test_docs.py)")
    no_graphviz = str(Path(sys.executable).parent)  # the console scripts, and no dot
    result = run(*expand(command), input=stdin, env={"PATH": no_graphviz})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert trimmed(result.output.splitlines()) == example.shown, f"{example}: {example.command}"


def test_every_page_is_found_and_the_front_page_has_examples():
    assert any(run.page == "README.md" for run in ALL_RUNS)
    assert len(ALL_RUNS) >= 10


def test_the_example_reader_follows_the_convention(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("\n".join([
        "```console", "$ cat f.grad", "x*x", "$ gradcli eval -f f.grad --at x=3 # why", "f = 9",
        "$ pip install gradcli", "whatever", "$ echo 'x' | gradcli eval - --at x=1", "f = 1",
        "```", "```sh", "$ gradcli eval x --at x=1", "```", ""]), encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = runs(page)
    assert [(r.line, r.command, r.shown) for r in found] == [
        (4, "gradcli eval -f f.grad --at x=3 # why", ["f = 9"]),
        (8, "echo 'x' | gradcli eval - --at x=1", ["f = 1"])]
    assert found[0].files == {"f.grad": "x*x\n"}
    assert expand("eval \"$(printf 'x+%.0s' {1..3})x\" --at x=1  # a comment") == [
        "eval", "x+x+x+x", "--at", "x=1"]


def test_a_substitution_runs_the_gradcli_under_test(tmp_path, monkeypatch):
    """``$(gradcli ...)`` in a page runs this environment's console script, whatever else PATH
    holds: here a decoy gradcli first on PATH."""
    decoy = tmp_path / "gradcli"
    decoy.write_text("#!/bin/sh\necho decoy\n")
    decoy.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    assert expand("\"$(command -v gradcli)\"") == [str(Path(sys.executable).parent / "gradcli")]
    assert expand("\"$(gradcli diff 'x*x')\"") == ["2*x"]  # d(x*x)/dx


# -- the pages themselves -------------------------------------------------------------------------

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # 17,000 since the tour shows the trace of arrays too (issue 41): 16.4 kB then
    assert len(readme.encode("utf-8")) < 17_000
    linked = set(LINK.findall(readme))
    assert {f"docs/{page.name}" for page in PAGES[1:]} <= linked, "a docs page the README omits"


def test_ci_runs_the_readmes_set_up_and_test_command():
    """.ci/run is the README's second set-up command, step by step, so CI tests what people run."""
    commands = [text.strip() for language, _, text in blocks(ROOT / "README.md")
                if language == "sh" and "pytest" in text]
    assert len(commands) == 1
    steps = [step.strip() for step in commands[0].split("&&")]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert [line for line in ci if line in steps] == steps


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fences_pair_up(page):
    """A closing fence doubled (```` ``` ```` twice) opens a block that swallows the next
    example, which then is never replayed; docs/output.md once hid its tb drawing so."""
    lines = page.read_text(encoding="utf-8").splitlines()
    doubled = [k + 1 for k in range(len(lines) - 1) if lines[k] == lines[k + 1] == "```"]
    assert not doubled, f"{page.name}: a fence doubled at line {doubled}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve_and_no_machine_paths(page):
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if not re.match(r"\w+:", target):  # not http:, mailto:
            assert (page.parent / target).exists(), f"{page.name}: broken link {target}"
    assert not re.search(r"(?<![\w.])/(tmp|home|work|root|Users)/", text), page.name


# -- Python examples -------------------------------------------------------------------------------

def python_blocks(page: Path) -> list[tuple[int, str]]:
    return [(line, text) for language, line, text in blocks(page)
            if language == "python" and text.startswith(">>>")]


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_are_doctests_that_pass(page):
    """A page's Python blocks run in order in one namespace, as one session would."""
    namespace: dict = {}
    for line, text in python_blocks(page):
        name = f"{page.relative_to(ROOT)}:{line}"
        test = doctest.DocTestParser().get_doctest(text, namespace, name, str(page), line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        out: list[str] = []
        runner.run(test, out=out.append, clear_globs=False)
        namespace = test.globs  # DocTest copies the namespace it is given
        assert runner.failures == 0, "".join(out)
