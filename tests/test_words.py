"""The code's words: a comment or docstring says why, and a timing in one would go stale.

Measurements belong in docs/performance.md, with the command that produced them; the code says
what a choice buys in words ("the sweep is not tried past QUICK_NODES, where the balls win").
"""

import ast
import io
import pathlib
import re
import tokenize

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "gradcli"

# A duration, an instruction count or a speed-up factor: "0.1 ms", "17 ns", "253 M instructions",
# "5-10x faster", "1.4 s of a 24 s run".
TIMING = re.compile(r"\b\d[\d,.]*\s*(ms|µs|us|ns|seconds|M instructions)\b"
                    r"|\b\d[\d.]*\s*[x×]\s*(faster|slower|quicker)\b"
                    r"|\b\d[\d.]* s (of|a|per|to)\b")


def _words(path: pathlib.Path):
    """(line, text) of every comment and docstring in a module."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield getattr(node, "lineno", 1), doc


def test_the_pattern_finds_timings():
    for text in ("# about 0.1 ms a cell", "# 17 ns each", "# 9 of 253 M instructions",
                 "# 5-10x faster", "# 1.4 s of a 24 s run"):
        assert TIMING.search(text), text
    for text in ("# the 2 outputs", "# 10 s is the limit's default", "# a 3x3 matrix"):
        assert not TIMING.search(text), text


def test_no_timings_in_comments_or_docstrings():
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}: {match.group(0)!r}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for line, text in _words(path)
             for match in [TIMING.search(text)] if match]
    assert not found, "timings belong in docs/performance.md:\n" + "\n".join(found)
