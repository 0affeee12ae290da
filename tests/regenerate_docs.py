"""Re-run the console examples of README.md and docs/*.md and write what they print now.

The pages show real output (tests/test_docs.py replays every example). When gradcli's output
changes on purpose, run this instead of editing numbers by hand, then read the diff:

    python tests/regenerate_docs.py [PAGE ...]

Each ``$ gradcli ...`` line is run exactly as the test runs it (CliRunner, an empty directory with
the page's ``$ cat`` files, no Graphviz on PATH), and the lines after it, up to the next ``$``
line or the end of the block, are replaced by its output (a blank separator line is kept).
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from click.testing import CliRunner  # noqa: E402

from test_docs import PAGES, ROOT, expand, runs, shell_output, trimmed  # noqa: E402


def output_of(example) -> list[str]:
    from gradcli.cli import main
    with tempfile.TemporaryDirectory() as where:
        old = os.getcwd()
        os.chdir(where)
        try:
            for name, content in example.files.items():
                Path(where, name).write_text(content, encoding="utf-8")
            feed, _, command = example.command.rpartition("| gradcli ")
            stdin = shell_output(feed) if feed else None
            command = command if feed else example.command.removeprefix("gradcli ")
            shlex.split(command)
            result = CliRunner().invoke(main, expand(command), input=stdin,
                                        env={"PATH": str(Path(sys.executable).parent)})
        finally:
            os.chdir(old)
    return trimmed(result.output.splitlines())


def regenerate(page: Path) -> int:
    """Rewrite ``page``'s example outputs; the number of examples whose output changed."""
    lines = page.read_text(encoding="utf-8").split("\n")
    changed = 0
    for example in reversed(runs(page)):  # from the end: earlier line numbers stay right
        start = example.line  # 0-based index of the first output line (the $ line is start - 1)
        end = start
        while end < len(lines) and not lines[end].startswith(("$ ", "```")):
            end += 1
        keep_blank = end > start and lines[end - 1].strip() == "" and lines[end].startswith("$ ")
        new = output_of(example)
        if trimmed(lines[start:end]) != new:
            changed += 1
            lines[start:end] = new + ([""] if keep_blank else [])
    page.write_text("\n".join(lines), encoding="utf-8")
    return changed


def main() -> None:
    pages = [ROOT / p for p in sys.argv[1:]] or PAGES
    for page in pages:
        n = regenerate(page)
        if n:
            print(f"{page.relative_to(ROOT)}: {n} example{'s' if n > 1 else ''} rewritten")


if __name__ == "__main__":
    main()
