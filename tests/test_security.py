"""Issue 18: no code runs from a planted file, and gradcli reads nothing it did not ship.

The parser runs the tables shipped beside the grammar (``grammar/gradcli.tables.json``, plain
JSON); gradcli keeps no cache and writes no file of its own. Every test here starts from an empty,
private temporary directory (the ``empty_dirs`` fixture sets $TMPDIR for the processes it starts).
"""

from __future__ import annotations

import ast
import os
import pathlib
import pickle
import subprocess
import sys

from gradcli.language import parser

PACKAGE = pathlib.Path(parser.__file__).resolve().parent.parent
DOCS = PACKAGE.parent / "docs"
PROBE = "log(x)+x*y-sin(y)"
PROBE_AST = ("(Binary(op='-', left=Binary(op='+', left=Call(name='log', args=(Var(name='x'),)), "
             "right=Binary(op='*', left=Var(name='x'), right=Var(name='y'))), "
             "right=Call(name='sin', args=(Var(name='y'),))),)")


def _python(code: str, *args: str, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=120)


# -- no pickle, no shared temporary directory -----------------------------------------------------

class _Planted:
    """A pickle that, when loaded, creates the file ``marker`` (as os.system("touch ...") would)."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_pickle_planted_at_larks_cache_name_never_runs(empty_dirs, tmp_path, gradcli_script):
    # Let Lark itself write its cache file for gradcli's grammar where the old code had it write
    # one (cache=True), in the private TMPDIR: that is the name an attacker would plant.
    made = _python("from gradcli.language.parser import build_parser; build_parser(cache=True)")
    assert made.returncode == 0, made.stderr
    (lark_cache,) = empty_dirs.tmp.glob(".lark_cache_*")
    marker = tmp_path / "PWNED"
    first_line = lark_cache.read_bytes().split(b"\n", 1)[0] + b"\n"  # Lark reads it, then unpickles
    lark_cache.write_bytes(first_line + pickle.dumps(_Planted(str(marker))))
    planted = lark_cache.read_bytes()

    for _ in range(2):
        done = subprocess.run([gradcli_script, "eval", "2|x|", "--at", "x=1"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and "write 2*|x|" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
        assert not marker.exists(), "the planted pickle ran"
    ok = subprocess.run([gradcli_script, "eval", "x*y", "--at", "x=2,y=3"], capture_output=True,
                        text=True, timeout=120)
    assert ok.returncode == 0 and not marker.exists()
    # gradcli wrote nothing in the temporary directory and left the planted file alone
    assert list(empty_dirs.tmp.iterdir()) == [lark_cache] and lark_cache.read_bytes() == planted


def test_no_module_can_load_code_from_disk():
    """No module of gradcli imports pickle, marshal or shelve, nor passes ``cache`` to Lark."""
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                names = {(node.module or "").partition(".")[0]}
            elif isinstance(node, ast.Call):
                names = set()
                assert "cache" not in {k.arg for k in node.keywords}, f"{path}: cache=..."
            else:
                continue
            assert not names & {"pickle", "marshal", "shelve", "dill", "cloudpickle"}, path


def test_a_run_reads_the_shipped_tables_needs_no_lark_and_writes_nothing(empty_dirs, tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    code = ("import sys\nfrom gradcli.language.parser import parse\nfrom gradcli.errors import "
            "ParseError\nfor s in sys.argv[1:]:\n    try:\n        print(repr(parse(s).statements))\n"
            "    except ParseError as exc:\n        print(exc.message, '|', exc.hint)\n"
            "print('lark' in sys.modules)")
    done = _python(code, PROBE, "2|x|", env={"HOME": str(home), "XDG_CACHE_HOME": ""}, cwd=work)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert done.stdout.splitlines() == [
        PROBE_AST, "unexpected '|': a bar after an operand needs an operator | write 2*|x|",
        "False"]
    for folder in (home, work, empty_dirs.tmp):
        assert list(folder.iterdir()) == [], folder


# -- the documentation --------------------------------------------------------------------------

def test_the_security_page_says_what_is_on_disk():
    page = (DOCS / "security.md").read_text(encoding="utf-8")
    for needed in ("gradcli.tables.json", "pickle", "eval", "report"):
        assert needed in page, needed
