"""The keys every command's JSON shares (docs/json.md, "The keys every command shares"): the
same key holds the same thing, of the same type, in eval, hessian and diff."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

ONE = "atan2(y, x) + x^2"
SEVERAL = "atan2(y, x); x^2*y"
AT = ["--at", "y=1,x=2"]  # --at in another order than the source's: the source's order wins

COMMANDS = {
    "eval": ["eval", ONE, *AT, "--json"],
    "eval-forward": ["eval", ONE, *AT, "--mode", "forward", "--json"],
    "eval-outputs": ["eval", SEVERAL, *AT, "--json"],
    "eval-vjp": ["eval", SEVERAL, *AT, "--seed", "f1=1,f2=2", "--json"],
    "hessian": ["hessian", ONE, *AT, "--json"],
    "hessian-outputs": ["hessian", SEVERAL, *AT, "--json"],
    "diff": ["diff", ONE, "--json"],
    "diff-outputs": ["diff", SEVERAL, "--json"],
    "graph": ["graph", ONE, *AT, "--json"],
    "plot": ["plot", ONE, "--over", "x=1:2:3", "--at", "y=1", "--json"],  # x is swept
}


@pytest.fixture(scope="module")
def printed():
    """Each command's JSON, from the installed console script (run once for the module)."""
    script = shutil.which("gradcli", path=os.path.dirname(sys.executable)) or "gradcli"
    out = {}
    for name, args in COMMANDS.items():
        proc = subprocess.run([script, *args], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, (args, proc.stderr)
        out[name] = json.loads(proc.stdout)
    return out


def test_source_is_the_text_as_given_in_every_command(printed):
    for name, data in printed.items():
        assert data["source"] == (SEVERAL if "outputs" in name or "vjp" in name else ONE), name


def test_inputs_is_name_to_value_wherever_there_is_a_point(printed):
    for name, data in printed.items():
        if name.startswith("diff"):
            assert "inputs" not in data  # no point
            continue
        if name == "plot":
            assert data["inputs"] == {"y": 1.0} and data["samples"]["x"] == [1.0, 1.5, 2.0]
            continue
        assert data["inputs"] == {"y": 1.0, "x": 2.0}, name
        assert list(data["inputs"]) == ["y", "x"], name  # the order of first appearance


def test_outputs_names_the_outputs_in_order_wherever_there_are_several(printed):
    for name, data in printed.items():
        if "outputs" in name or "vjp" in name:
            assert data["outputs"] == ["f1", "f2"], name
        else:
            assert "outputs" not in data, name


def test_partials_come_in_the_order_of_first_appearance_in_every_command(printed):
    order = ["y", "x"]
    assert list(printed["eval"]["gradient"]) == order
    assert list(printed["eval-forward"]["gradient"]) == order
    assert all(list(row) == order for row in printed["eval-outputs"]["jacobian"].values())
    assert list(printed["eval-vjp"]["vjp"]) == order
    assert printed["hessian"]["wrt"] == order and list(printed["hessian"]["gradient"]) == order
    assert printed["hessian-outputs"]["wrt"] == order
    assert list(printed["diff"]["derivatives"]) == order
    assert all(list(d) == order for d in printed["diff-outputs"]["derivatives"].values())


def test_a_key_shared_by_two_commands_has_one_type(printed):
    types: dict[str, set] = {}
    for data in printed.values():
        for key, value in data.items():
            types.setdefault(key, set()).add(type(value).__name__)
    mixed = {key: t for key, t in types.items() if len(t) > 1}
    assert not mixed


def test_the_human_partials_follow_the_same_order(run):
    # diff's text, eval's lines and hessian's table: ∂f/∂y before ∂f/∂x for atan2(y, x)
    text = run("diff", ONE).stdout
    assert text.index("∂f/∂y") < text.index("∂f/∂x")
    text = run("eval", ONE, *AT).stdout
    assert text.index("∂f/∂y") < text.index("∂f/∂x")
    text = run("hessian", ONE, *AT).stdout
    assert text.index("∂f/∂y") < text.index("∂f/∂x")
