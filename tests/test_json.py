"""--json: one module builds every command's object; docs/json.md documents every key and its
examples are real output (replayed here)."""

import json
import re
import shlex
from pathlib import Path

import pytest
from test_docs import runs as page_runs

DOC = Path(__file__).parent.parent / "docs" / "json.md"


def doc_runs() -> list[tuple[str, list[str]]]:
    """(command, printed lines) for every ``$ gradcli ...`` run in docs/json.md."""
    return [(r.command, r.shown) for r in page_runs(DOC)]


@pytest.mark.parametrize("command, lines", doc_runs())
def test_the_docs_examples_are_real_output(run, command, lines):
    result = run(*shlex.split(command)[1:])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == lines


def test_the_docs_show_an_example_of_every_command_with_json():
    commands = " ".join(c for c, _ in doc_runs())
    for words in ("gradcli eval", "--trace", "--mode forward", "--direction", "--check",
                  "gradcli hessian", "gradcli diff"):
        assert words in commands, words


def _keys(value, found: set) -> set:
    """Every key of every object inside ``value`` (lists of objects included)."""
    if isinstance(value, dict):
        for key, item in value.items():
            found.add(key)
            _keys(item, found)
    elif isinstance(value, list):
        for item in value:
            _keys(item, found)
    return found


# Runs that, together, produce every key each command can print. Keys that are data (input
# names, node ids, d/da) are not schema keys: the inputs here are x and y, the nodes v1, v2.
EVERY_KEY = [
    ["eval", "c = 2*x; c*c + y", "--at", "x=1,y=2", "--json", "--trace"],
    ["eval", "x*y", "--at", "x=2,y=3", "--json", "--mode", "forward", "--trace"],
    ["eval", "x*y", "--at", "x=2,y=3", "--json", "--direction", "x=1", "--trace"],
    ["eval", "abs(x)*y", "--at", "x=0,y=3", "--json", "--check", "--expect", "y=abs(x)"],
    ["hessian", "x*y", "--at", "x=2,y=3", "--json", "--check"],
    ["diff", "x*y", "--json"],
    ["eval", "x*y; x+y", "--at", "x=1,y=2", "--json", "--trace", "--check"],
    ["eval", "x*y; x+y", "--at", "x=1,y=2", "--json", "--trace", "--mode", "forward"],
    ["eval", "x*y; x+y", "--at", "x=1,y=2", "--json", "--trace", "--seed", "f1=1,f2=2"],
    ["eval", "x*y; x+y", "--at", "x=1,y=2", "--json", "--trace", "--direction", "x=1"],
    ["hessian", "x*y; x+y", "--at", "x=1,y=2", "--json", "--check"],
    ["diff", "x*y; x+y", "--json"],
    ["diff", "x*y", "--json", "--mixed", "x,y"],
    ["functions", "--json"],
]
DATA_KEYS = {"x", "y", "v1", "v2", "v3", "direction", "d/da", "d/db", "f1", "f2", "x,y"}


def test_every_key_of_every_command_is_documented(run):
    documented = set(re.findall(r"`(?:[a-z]+(?:\[\])?\.)?([a-z_0-9]+)`", DOC.read_text("utf-8")))
    for args in EVERY_KEY:
        result = run(*args)
        assert result.exit_code in (0, 1), result.output  # abs(x) at 0: a kink, the check fails
        keys = _keys(json.loads(result.output), set()) - (DATA_KEYS - {"direction"})
        assert keys <= documented, (args, keys - documented)


def test_every_eval_result_says_its_mode(run):
    reverse = json.loads(run("eval", "x*y", "--at", "x=2,y=3", "--json").output)
    forward = json.loads(run("eval", "x*y", "--at", "x=2,y=3", "--json", "--mode", "forward").output)
    along = json.loads(run("eval", "x*y", "--at", "x=2,y=3", "--json", "--direction", "y=1").output)
    assert (reverse["mode"], forward["mode"], along["mode"]) == ("reverse", "forward", "forward")
    # ∂(xy)/∂x = y = 3, ∂(xy)/∂y = x = 2; along (0, 1): 2
    assert reverse["gradient"] == forward["gradient"] == {"x": 3.0, "y": 2.0}
    assert "gradient" not in along and along["directional"] == 2.0


def test_the_api_result_carries_mode_too():
    import gradcli
    assert gradcli.evaluate("x", {"x": 1}).mode == "reverse"
    assert gradcli.evaluate("x", {"x": 1}, mode="forward").mode == "forward"


def test_json_is_built_in_one_module():
    """No other module of the commands' path builds a --json object or imports json (data
    files, such as batchio's JSON lines and the user cache, are not --json objects)."""
    package = Path(__file__).parent.parent / "gradcli"
    paths = [package / "cli.py", package / "api.py", package / "check.py"]
    for folder in ("engine", "symbolic", "views"):
        paths += (package / folder).glob("*.py")
    for path in paths:
        if path.name in ("json.py", "screen.py"):  # screen prints and saves what json.py built
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*import json|json\.dumps|to_dict", text, re.M), path
