"""``gradcli diff --steps``: every step is an identity, the rules are named as a textbook names
them, and the text, LaTeX and JSON views say the same, from CliRunner and the console script."""

import json
import math
import random
import subprocess

import pytest
import sympy as sp
from hypothesis import given, note, settings, strategies as st

from gradcli import evaluate
from gradcli.api import compile, derivation_steps
from gradcli.errors import GradcliError
from strategies import examples
from test_diff import SYMBOLS, generate


def _value(text: str, at: dict) -> float:
    """``text`` evaluated (proven digits) at the point, given only the names it reads."""
    reads = compile(text).inputs
    return float(evaluate(text, {k: v for k, v in at.items() if k in reads}).value)


def _pending_values(derivation, point: dict) -> dict:
    """Each pending derivative's value at the point: the AD gradient of what it differentiates
    (gradcli's proven eval), 0 where that does not read the input."""
    values = {}
    for name, of in derivation.pending.items():
        reads = compile(of).inputs
        at = {k: v for k, v in point.items() if k in reads}
        values[name] = float(evaluate(of, at).gradient.get(derivation.wrt, 0.0)) \
            if derivation.wrt in reads else 0.0
    return values


def _assert_identities(source: str, point: dict) -> None:
    for d in derivation_steps(source):
        at = {**point, **_pending_values(d, point)}
        scale = 1 + sum(abs(v) for v in at.values())
        want = float(evaluate(source, point).gradient[d.wrt])
        for step in d.steps:
            context = f"{step.rule} ({step.row}): {step.before} -> {step.after}; {step.line}"
            before, after = _value(step.before, at), _value(step.after, at)
            assert math.isclose(before, after, rel_tol=1e-9, abs_tol=1e-9 * scale), context
            # and every line is the whole derivative
            assert math.isclose(_value(step.line, at), want, rel_tol=1e-9,
                                abs_tol=1e-9 * scale), context
        assert math.isclose(_value(d.result, at), want, rel_tol=1e-9, abs_tol=1e-9 * scale)


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(0, 10 ** 6), st.floats(-2, 2), st.floats(-2, 2), st.floats(-2, 2))
def test_every_step_is_an_identity(seed, x, y, z):
    """Each step's two sides (a pending derivative and its rewrite, each pending derivative
    given its AD value), and each whole line, agree at random points: the rules shown are the
    rules eval runs."""
    source, _ = generate(random.Random(seed), 3)
    note(source)
    if not compile(source).inputs:
        return
    _assert_identities(source, {"x": x, "y": y, "z": z})


@pytest.mark.parametrize("source", [
    "x^2*sin(x)", "log(1+exp(w*x))", "(x^2-1)/(x+1)", "e^x", "atan(1/x)", "x^x", "sin(x)/x",
    "3*x^2*y", "sqrt(1+x^2)", "x^3-3*x^2+2*x-5", "2^x", "atan2(y, x)", "exp(sin(x))*sin(x)",
    "x*y + sin(x*y)", "c = x*y; c += c + 1; c", "hypot(x, 2*x)", "1/(x*(x+1))",
])
def test_the_steps_of_the_docs_and_issue_examples_are_identities(source):
    _assert_identities(source, {"x": 0.7, "y": 1.3, "w": -0.4})


def _titles(source: str, wrt: str = "x") -> list[str]:
    from gradcli.views.steps import rule_title
    d, = derivation_steps(source, [wrt])
    return [rule_title(s) for s in d.steps]


@pytest.mark.parametrize("source, wrt, titles", [
    ("x^2*sin(x)", "x", ["product rule", "power rule", "rule of sin"]),
    ("sin(x)/x", "x", ["quotient rule", "rule of sin", "simplify"]),
    ("3*x^2*y", "x", ["constant multiple rule", "power rule"]),
    ("x^2 + x", "x", ["sum rule", "power rule"]),
    ("sin(x^2)", "x", ["rule of sin and chain rule", "power rule"]),
    ("(x^2+1)^3", "x", ["power rule and chain rule", "sum rule", "power rule"]),
    ("e^x", "x", ["exponential rule"]),
    ("2^(x^2)", "x", ["exponential rule and chain rule", "power rule"]),
    ("log(1+exp(w*x))", "w", ["rule of log and chain rule", "sum rule",
                              "rule of exp and chain rule", "constant multiple rule"]),
])
def test_each_step_names_its_rule(source, wrt, titles):
    assert _titles(source, wrt) == titles


def test_the_steps_end_in_what_diff_prints(run):
    for source in ["x^2*sin(x)", "(x^2-1)/(x+1)", "atan(1/x)", "sin(x)/x", "x^x"]:
        d, = derivation_steps(source)
        assert d.result == run("diff", source).output.strip()
        assert d.steps[-1].line == d.result


def _sympy_of(text: str):
    """A printed formula as SymPy reads it (gradcli's ^ is **; the names are x, y, z)."""
    return sp.sympify(text.replace("^", "**"), locals={**SYMBOLS, "e": sp.E})


def test_the_result_is_sympys_derivative():
    """The derivation's result, against SymPy (an independent reference), symbolically."""
    for source in ["x^2*sin(x)", "(x^2-1)/(x+1)", "atan(1/x)", "x^3-3*x^2+2*x-5", "e^x",
                   "x^(1/3)", "x/(x^2-1)"]:
        d, = derivation_steps(source)
        want = sp.diff(_sympy_of(source), SYMBOLS["x"])
        assert sp.simplify(_sympy_of(d.result) - want) == 0, (source, d.result)


# -- the command line ------------------------------------------------------------------------------

def test_cli_text_names_each_rule_and_ends_in_the_result(run):
    out = run("diff", "x^2*sin(x)", "--steps").output
    assert "product rule" in out and "power rule" in out and "rule of sin" in out
    assert "d/dx(x^2*sin(x))" in out and "x^2*cos(x) + 2*x*sin(x)" in out
    out = run("diff", "log(1+exp(w*x))", "--wrt", "w", "--steps").output
    assert "∂/∂w(log(exp(w*x) + 1))" in out and "rule of log and chain rule" in out


def test_cli_json_schema(run):
    data = json.loads(run("diff", "x^2*sin(x)", "--steps", "--json").output)
    assert list(data) == ["source", "derivations"] and data["source"] == "x^2*sin(x)"
    d, = data["derivations"]
    assert list(d) == ["wrt", "start", "steps", "result"]
    assert d["wrt"] == "x" and d["start"] == "d/dx(x^2*sin(x))"
    first = d["steps"][0]
    assert list(first) == ["rule", "title", "row", "chain", "of", "before", "after", "line"]
    assert (first["rule"], first["row"], first["chain"]) == ("product", "mul", False)
    assert first["before"] == "d/dx(x^2*sin(x))" and first["of"] == "x^2*sin(x)"
    assert [s["rule"] for s in d["steps"]] == ["product", "power", "function"]
    assert d["steps"][-1]["line"] == d["result"] == "x^2*cos(x) + 2*x*sin(x)"


def test_cli_latex_is_one_align_block_per_input(run):
    out = run("diff", "x^2*sin(x)", "--steps", "--latex").output
    assert out.startswith("\\begin{align*}\n\\frac{d}{dx}\\left({x}^{2} \\, \\sin\\left(x\\right)"
                          "\\right) &= ")
    assert out.count("&&") == 3 and "\\text{product rule}" in out
    assert out.rstrip().endswith("\\end{align*}")
    out = run("diff", "x*y", "--steps", "--latex").output
    assert out.count("\\begin{align*}") == 2 and "\\frac{\\partial}{\\partial y}" in out


@pytest.mark.parametrize("args, words", [
    (["diff", "x^2", "--steps", "--order", "2"], ["--steps", "drop --order"]),
    (["diff", "x*y", "--steps", "--mixed", "x,y"], ["--steps"]),
    (["diff", "x^2", "--steps", "--at", "x=1"], ["--steps"]),
    (["diff", "x; 2*x", "--steps"], ["one output", "--of"]),
    (["diff", "x^2", "--steps", "--wrt", "q"], ["--wrt names q"]),
])
def test_cli_errors(run, reported, args, words):
    reported(run(*args), 2, words)


def test_cli_several_outputs_one_chosen(run):
    out = run("diff", "x^2; sin(x)", "--of", "f2", "--steps", "--json").output
    assert json.loads(out)["derivations"][0]["result"] == "cos(x)"


def test_the_installed_script_prints_the_steps(gradcli_script, run, tmp_path):
    for args in (["x^2*sin(x)", "--steps"], ["log(1+exp(w*x))", "--wrt", "w", "--steps",
                                             "--json"], ["x^2*sin(x)", "--steps", "--latex"]):
        done = subprocess.run([gradcli_script, "diff", *args], capture_output=True, text=True,
                              encoding="utf-8", cwd=tmp_path, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout == run("diff", *args).output
    done = subprocess.run([gradcli_script, "diff", "x^2", "--steps", "--order", "2"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_a_long_derivation_is_refused_with_a_hint(run, reported):
    source = "+".join(f"sin({i}*x)" for i in range(1, 150))
    reported(run("diff", source, "--steps"), 2, ["steps", "drop --steps"])


def test_the_steps_are_an_api_too():
    d, = derivation_steps("x^2")
    assert (d.wrt, [s.rule for s in d.steps], d.result) == ("x", ["power"], "2*x")
    with pytest.raises(GradcliError):
        derivation_steps("x; 2*x")


# -- the order a textbook writes ------------------------------------------------------------------

@pytest.mark.parametrize("source, rewrite", [
    # (uv)' = v u' + u v' (the sum in gradcli's canonical order)
    ("x^2*sin(x)", "sin(x)*d/dx(x^2) + x^2*d/dx(sin(x))"),
    # f(g(x))' = f'(g(x)) g'(x)
    ("sin(x^2)", "cos(x^2)*d/dx(x^2)"),
    # (u/v)' = (v u' - u v')/v^2
    ("sin(x)/(x+1)", "((x + 1)*d/dx(sin(x)) - sin(x)*d/dx(x + 1))/(x + 1)^2"),
    # (c u)' = c u'
    ("3*sin(x)", "3*d/dx(sin(x))"),
])
def test_the_first_rule_is_written_as_a_textbook_writes_it(source, rewrite, run):
    from gradcli.views.steps import local
    d, = derivation_steps(source)
    assert local(d.steps[0], d, False)[1] == rewrite
    assert rewrite in run("diff", source, "--steps").output


def _pending_then_factor(text: str) -> list[str]:
    """Each pending derivative in ``text`` that a factor follows (``d/dx(u)*v``)."""
    found = []
    for start in [i for i in range(len(text)) if text.startswith("d/dx(", i)]:
        depth, i = 0, start + 4
        while True:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
        if text[i:i + 1] == "*":
            found.append(text[start:i + 1])
    return found


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 10 ** 6))
def test_a_pending_derivative_ends_its_product(seed):
    """In every line and rewrite, ``d/dx(u)`` is the last factor of its product: what it
    multiplies comes first (``cos(x^2)*d/dx(x^2)``), never ``d/dx(x^2)*cos(x^2)``."""
    from gradcli.views.steps import local, written
    source, _ = generate(random.Random(seed), 3)
    note(source)
    if "x" not in compile(source).inputs:
        return
    try:
        d, = derivation_steps(source, ["x"])
    except GradcliError:
        return  # (too many steps: refused)
    for step in d.steps:
        texts = [*local(step, d, False), written(step.line, d, False)]
        assert not any(_pending_then_factor(t) for t in texts), texts
