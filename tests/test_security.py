"""Issue 18: no code runs from a planted file, and the user's cache fails safe.

Every test here starts from an empty, private temporary directory and cache directory
(the ``empty_dirs`` fixture sets $TMPDIR and $GRADCLI_CACHE_DIR for the processes it starts).
Expected values are computed with ``math`` or written by hand, never taken from gradcli.
"""

from __future__ import annotations

import ast
import json
import math
import os
import pathlib
import pickle
import stat
import subprocess
import sys

import pytest

from gradcli import usercache
from gradcli.language import parser
from gradcli.language.ast import Assign, Binary, Call, Num, Program, Var

PACKAGE = pathlib.Path(parser.__file__).resolve().parent.parent
DOCS = PACKAGE.parent / "docs"
x, y = Var("x"), Var("y")
PROBE = "log(x)+x*y-sin(y)"
PROBE_STATEMENTS = (Binary("-", Binary("+", Call("log", (x,)), Binary("*", x, y)),
                           Call("sin", (y,))),)
PROBE_AST = repr(PROBE_STATEMENTS)


# The user's cache is what this file tests: the processes it starts set the tables shipped
# beside the grammar aside (a gradcli whose grammar was edited, or installed without them).
NOT_SHIPPED = "import gradcli.language.parser as _p\n_p.SHIPPED_TABLES = 'none.json'\n"


def _python(code: str, *args: str, env=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", NOT_SHIPPED + code, *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=timeout)


def _parse_in_a_new_process(source: str = PROBE, env=None) -> tuple[str, bool]:
    """(the repr of the statements, or the error message; was Lark imported?)"""
    code = ("import sys\nfrom gradcli.language.parser import parse\nfrom gradcli.errors import "
            "ParseError\ntry:\n    print(repr(parse(sys.argv[1]).statements))\n"
            "except ParseError as exc:\n    print(exc.message, '|', exc.hint)\n"
            "print('lark' in sys.modules)")
    done = _python(code, source, env=env)
    assert done.returncode == 0 and not done.stderr, done.stderr
    shown, lark_imported = done.stdout.splitlines()
    return shown, lark_imported == "True"


def _the_file(cache: pathlib.Path) -> pathlib.Path:
    (path,) = cache.iterdir()
    return path


def _key() -> dict:
    return parser._tables_key(parser.grammar_text())


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

    for _ in range(2):  # with an empty cache (the tables are built), then with the saved tables
        done = subprocess.run([gradcli_script, "eval", "2x", "--at", "x=1"], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 2 and "write 2*x" in done.stderr, done.stderr
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


def test_a_syntax_error_is_reported_from_the_saved_tables_without_lark(empty_dirs):
    _parse_in_a_new_process()  # builds and saves the tables
    shown, lark_imported = _parse_in_a_new_process("2x")
    assert shown == "unexpected 'x': expected an operator | " \
                    "gradcli has no implicit multiplication: write 2*x"
    assert not lark_imported


# -- where the cache lives ----------------------------------------------------------------------

@pytest.mark.parametrize("environ, expected", [
    ({"GRADCLI_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/c"),
    ({"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/gradcli"),
    ({"HOME": "/h"}, "/h/.cache/gradcli"),
    ({"XDG_CACHE_HOME": "relative", "HOME": "/h"}, "/h/.cache/gradcli"),  # the XDG spec
    ({"GRADCLI_CACHE_DIR": "", "XDG_CACHE_HOME": "", "HOME": "/h"}, "/h/.cache/gradcli"),
    ({}, None),  # no HOME: no cache (not the password database's home, not the current folder)
    ({"HOME": ""}, None),
    ({"HOME": "relative"}, None),
    ({"GRADCLI_CACHE_DIR": "relative", "HOME": "/h"}, None),
])
def test_the_cache_directory(environ, expected):
    assert usercache.directory(environ) == expected


def test_the_first_run_saves_the_tables_and_the_next_needs_no_lark(empty_dirs):
    first, lark_first = _parse_in_a_new_process()
    assert lark_first  # nothing saved yet: Lark builds the tables, which are then saved
    path = _the_file(empty_dirs.cache)
    assert path.name.startswith("lalr-tables-py") and path.name.endswith(".json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    second, lark_second = _parse_in_a_new_process()
    assert not lark_second  # the saved tables alone parse valid input
    assert first == second == PROBE_AST
    assert list(empty_dirs.tmp.iterdir()) == []


def test_a_first_run_reads_the_shipped_tables_and_needs_neither_lark_nor_the_cache(empty_dirs):
    code = ("import sys\nfrom gradcli.language.parser import parse\n"
            "print(repr(parse(sys.argv[1]).statements))\nprint('lark' in sys.modules)")
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code, PROBE], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.split("\n")[:2] == [PROBE_AST, "False"]
    assert list(empty_dirs.cache.iterdir()) == [] and list(empty_dirs.tmp.iterdir()) == []


def test_the_cache_under_home_is_private(empty_dirs, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"GRADCLI_CACHE_DIR": "", "XDG_CACHE_HOME": "", "HOME": str(home)}
    assert _parse_in_a_new_process(env=env)[0] == PROBE_AST
    folder = home / ".cache" / "gradcli"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(_the_file(folder).stat().st_mode) == 0o600
    assert _parse_in_a_new_process(env=env) == (PROBE_AST, False)


def test_without_home_there_is_no_cache(empty_dirs, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("HOME", "XDG_CACHE_HOME", "GRADCLI_CACHE_DIR")}
    code = ("import sys\nfrom gradcli.language.parser import parse\n"
            "print(repr(parse(sys.argv[1]).statements))")
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code, PROBE], capture_output=True, text=True,
                              env=env, cwd=work, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == PROBE_AST, done.stderr
    assert list(work.iterdir()) == [] and list(empty_dirs.tmp.iterdir()) == []


def test_an_unwritable_cache_still_parses(empty_dirs, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would go")
    env = {"GRADCLI_CACHE_DIR": str(blocker / "cache")}
    for _ in range(2):
        assert _parse_in_a_new_process(env=env) == (PROBE_AST, True)  # built each time


@pytest.mark.parametrize("mode", [0o770, 0o707])
def test_a_folder_others_can_write_to_is_not_used(empty_dirs, mode):
    empty_dirs.cache.chmod(mode)
    assert not usercache.save("t.json", {"k": 1}, [1, 2])
    assert list(empty_dirs.cache.iterdir()) == []
    empty_dirs.cache.chmod(0o700)
    assert usercache.save("t.json", {"k": 1}, [1, 2])
    empty_dirs.cache.chmod(mode)
    assert usercache.load("t.json", {"k": 1}) is None
    empty_dirs.cache.chmod(0o700)
    assert usercache.load("t.json", {"k": 1}) == [1, 2]


# -- integrity: a damaged, foreign or strange file is ignored and rebuilt -----------------------

def test_every_bit_flip_is_caught(empty_dirs):
    """Flip each bit of a saved file in turn (some 25,000 flips): every damaged copy is rejected
    (never read as tables: the run that meets it builds them again)."""
    tables = parser.build_tables()
    key = _key()
    blob = usercache.encode(key, tables)
    assert usercache.decode(blob, key) == tables
    for bit in range(len(blob) * 8):
        damaged = bytearray(blob)
        damaged[bit // 8] ^= 1 << (bit % 8)
        got = usercache.decode(bytes(damaged), key)
        assert got is None or got == tables, f"bit {bit}"


def test_every_truncation_is_caught():
    key = _key()
    blob = usercache.encode(key, parser.build_tables())
    for size in range(len(blob)):
        assert usercache.decode(blob[:size], key) is None


def _swap_plus_and_star(blob: bytes) -> bytes:
    """The issue's wrong parse: the names of two tokens swapped in the lexer's pattern."""
    return (blob.replace(b"(?P<PLUS>", b"(?P<TMP>").replace(b"(?P<STAR>", b"(?P<PLUS>")
            .replace(b"(?P<TMP>", b"(?P<STAR>"))


@pytest.mark.parametrize("damage", ["a bit of the checksum", "a bit of the key",
                                    "a bit of the tables", "two token names swapped", "truncated",
                                    "empty", "not ours"])
def test_a_damaged_file_gives_the_right_answer(empty_dirs, damage):
    assert _parse_in_a_new_process()[1]
    path = _the_file(empty_dirs.cache)
    blob = path.read_bytes()
    body = blob.index(b"\n") + 1
    if damage == "a bit of the checksum":
        blob = blob[:30] + bytes([blob[30] ^ 4]) + blob[31:]
    elif damage == "a bit of the key":
        blob = blob[:body + 10] + bytes([blob[body + 10] ^ 1]) + blob[body + 11:]
    elif damage == "a bit of the tables":
        at = blob.index(b'"states"') + 20
        blob = blob[:at] + bytes([blob[at] ^ 1]) + blob[at + 1:]
    elif damage == "two token names swapped":
        blob = _swap_plus_and_star(blob)
    elif damage == "truncated":
        blob = blob[:len(blob) // 2]
    elif damage == "empty":
        blob = b""
    else:
        blob = b"\x80\x04not a cache file at all"
    path.write_bytes(blob)
    # the command line's own process (the script's entry point), shipped tables set aside
    done = _python("import sys\nfrom gradcli.cli import main\nmain(sys.argv[1:])", "eval",
                   "sin(x)/cos(y) + x+y*z", "--at", "x=1,y=2,z=3")
    assert done.returncode == 0, done.stderr
    f = float(done.stdout.split()[2])
    assert f == pytest.approx(math.sin(1) / math.cos(2) + 1 + 2 * 3, rel=1e-12)
    assert usercache.decode(path.read_bytes(), _key()) is not None  # rebuilt and saved again


def test_a_file_for_other_versions_is_not_trusted(empty_dirs):
    """A whole file with a valid checksum but another key (here another Lark) is rebuilt, even
    though its tables would run: they would give 1+2*3 = 9 for x+y*z."""
    key = _key()
    foreign = {**key, "lark": ["0.0", *key["lark"][1:]]}
    tables = json.loads(_swap_plus_and_star(json.dumps(parser.build_tables()).encode()))
    (empty_dirs.cache / parser._tables_name()).write_bytes(usercache.encode(foreign, tables))
    assert usercache.load(parser._tables_name(), key) is None
    shown, lark_imported = _parse_in_a_new_process("x+y*z")
    assert lark_imported and shown == "(Binary(op='+', left=Var(name='x'), right=Binary(op='*'," \
                                      " left=Var(name='y'), right=Var(name='z'))),)"


def test_a_symlink_at_the_cache_path_is_not_followed(empty_dirs, tmp_path):
    _parse_in_a_new_process()
    path = _the_file(empty_dirs.cache)
    target = tmp_path / "elsewhere.json"
    good = path.read_bytes()
    target.write_bytes(good)  # a good file: still not read through a link
    path.unlink()
    path.symlink_to(target)
    assert usercache.read(str(path)) is None
    assert _parse_in_a_new_process() == (PROBE_AST, True)
    assert not path.is_symlink() and path.is_file()  # replaced by a file of its own
    assert target.read_bytes() == good  # the link's target was not written to


def test_a_file_of_another_user_or_writable_by_others_is_ignored(empty_dirs, monkeypatch):
    key = {"k": 1}
    assert usercache.save("t.json", key, [1])
    path = empty_dirs.cache / "t.json"
    assert usercache.load("t.json", key) == [1]
    path.chmod(0o620)
    assert usercache.load("t.json", key) is None
    path.chmod(0o600)
    monkeypatch.setattr(usercache.os, "getuid", lambda: path.stat().st_uid + 1)
    assert usercache.load("t.json", key) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_at_the_cache_path_does_not_block(empty_dirs):
    os.mkfifo(empty_dirs.cache / parser._tables_name())
    # a reader that blocked on the FIFO would hang: the timeout turns that into a failure
    assert _parse_in_a_new_process() == (PROBE_AST, True)
    assert stat.S_ISREG(_the_file(empty_dirs.cache).stat().st_mode)  # replaced by the tables


def test_a_device_is_not_read():
    for device in ("/dev/zero", "/dev/null", "/dev/tty"):
        if os.path.exists(device):
            assert usercache.read(device) is None


def test_a_directory_at_the_cache_path_is_left_alone(empty_dirs):
    (empty_dirs.cache / parser._tables_name()).mkdir()
    for _ in range(2):
        assert _parse_in_a_new_process() == (PROBE_AST, True)
    assert [p.name for p in empty_dirs.cache.iterdir()] == [parser._tables_name()]  # no leftovers


def test_a_save_replaces_the_file_whole(empty_dirs):
    key = {"k": 1}
    assert usercache.save("t.json", key, [1])
    path = empty_dirs.cache / "t.json"
    before = path.stat().st_ino
    assert usercache.save("t.json", key, [2])
    assert path.stat().st_ino != before  # a new file renamed over the old one, not rewritten
    assert usercache.load("t.json", key) == [2]
    assert [p.name for p in empty_dirs.cache.iterdir()] == ["t.json"]


def test_concurrent_first_runs_all_succeed_and_agree(empty_dirs):
    sources = [PROBE, "a = x; b += a*2\nb^2", "f(x,\n y)", "x)", "2x"]
    code = ("import sys\nfrom gradcli.language.parser import parse\nfrom gradcli.errors import "
            "ParseError\nfor s in sys.argv[1:]:\n    try:\n        print(repr(parse(s)))\n"
            "    except ParseError as exc:\n        print(exc.message, exc.span)\n")
    runs = [subprocess.Popen([sys.executable, "-c", NOT_SHIPPED + code, *sources], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(6)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0] * 6, [err for _, err in outputs]
    assert all(err == "" for _, err in outputs)
    assert len({out for out, _ in outputs}) == 1
    out = outputs[0][0].splitlines()
    assert out[:3] == [repr(Program(PROBE_STATEMENTS)), repr(Program((
        Assign("a", "=", x), Assign("b", "+=", Binary("*", Var("a"), Num(2.0))),
        Binary("^", Var("b"), Num(2.0))))), repr(Program((Call("f", (x, y)),)))]
    assert out[3:] == ["unmatched ')' (1, 2)", "unexpected 'x': expected an operator (1, 2)"]
    path = _the_file(empty_dirs.cache)  # one file, no temporary ones left behind
    assert usercache.decode(path.read_bytes(), _key()) is not None


# -- the documentation --------------------------------------------------------------------------

def test_the_security_page_says_what_is_on_disk():
    page = (DOCS / "security.md").read_text(encoding="utf-8")
    for needed in ("GRADCLI_CACHE_DIR", "XDG_CACHE_HOME", "~/.cache/gradcli", "lalr-tables-py",
                   "0700", "0600", "sha256", "pickle", "eval", "report"):
        assert needed in page, needed
