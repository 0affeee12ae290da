"""The trace of a program with array values: one row per array operation, the rules on arrays.

Every number is checked against an independent reference (NumPy for the shapes and the
structure, mpmath at 50 digits for the values), never against gradcli's own output.
"""

from __future__ import annotations

import re
import subprocess

import mpmath
import numpy as np
import pytest

from gradcli import api
from gradcli.arraytrace import build_array_trace

X = [[1, 2], [3, 4], [5, 6]]
W = [0.5, -1]
Y = [1, 0, 2]
AT = "X=[[1,2],[3,4],[5,6]],w=[0.5,-1],y=[1,0,2]"
LOSS = "mean((X @ w - y)^2)"


def point(**arrays) -> dict:
    """Element names -> values, as the engine takes array inputs."""
    out = {}
    for name, value in arrays.items():
        a = np.asarray(value, dtype=float)
        for index in np.ndindex(a.shape):
            out[f"{name}[{','.join(map(str, index))}]" if a.shape else name] = float(a[index])
    return out


def trace_of(source: str, **arrays):
    shapes = {n: np.shape(v) for n, v in arrays.items() if np.shape(v)}
    result = api.evaluate(api.compile(source, shapes), point(**arrays), record=True)
    return build_array_trace(result.graph, result.trace_values, *result.sweep,
                             scalar=result.trace)


def numbers(seq) -> list[float]:
    return [float(x) for x in seq]


def proven_close(seq, expected, digits: int = 13) -> None:
    """Each proven number agrees with the reference to its printed digits."""
    expected = np.asarray(expected, dtype=object).reshape(-1)
    assert len(seq) == len(expected)
    for got, want in zip(seq, expected):
        text = getattr(got, "text", None)
        if text is None:  # no edge: exactly 0, not a computed number
            assert got == 0 and want == 0, (got, want)
            continue
        want = mpmath.mpf(want)
        assert abs(mpmath.mpf(text) - want) <= abs(want) * mpmath.mpf(10) ** (1 - digits) + \
            mpmath.mpf(10) ** -300, (text, want)


def reference_loss():
    """mean((X @ w - y)^2) and its sweep by hand, in mpmath at 50 digits."""
    with mpmath.workdps(50):
        Xm = mpmath.matrix(X)
        wm = mpmath.matrix(W)
        ym = mpmath.matrix(Y)
        a1 = Xm * wm
        a2 = a1 - ym
        a3 = [v ** 2 for v in a2]
        a4 = sum(a3)
        a5 = a4 / 3
        g4 = mpmath.mpf(1) / 3
        g2 = [2 * v * g4 for v in a2]  # ḡ of a2 = ḡ of a3 · 2 a2
        gX = [[g2[i] * W[j] for j in range(2)] for i in range(3)]
        gw = [sum(X[i][j] * g2[i] for i in range(3)) for j in range(2)]
        return dict(a1=list(a1), a2=list(a2), a3=a3, a4=a4, a5=a5, g4=g4, g2=g2, gX=gX, gw=gw,
                    gy=[-g for g in g2])


def test_one_row_per_array_operation_with_its_shape_and_proven_value():
    t = trace_of(LOSS, X=X, w=W, y=Y)
    ref = reference_loss()
    rows = {r.id: r for r in t.forward}
    assert [(r.id, r.expr, r.shape) for r in t.forward] == [
        ("X", "input", (3, 2)), ("w", "input", (2,)), ("y", "input", (3,)),
        ("a1", "X @ w", (3,)), ("a2", "a1 - y", (3,)), ("a3", "a2 ^ 2", (3,)),
        ("a4", "sum(a3)", ()), ("a5", "a4 / 3", ())]
    for k in ("a1", "a2", "a3"):
        proven_close(rows[k].values, ref[k])
    proven_close(rows["a4"].values, [ref["a4"]])
    proven_close(rows["a5"].values, [ref["a5"]])
    assert rows["a5"].is_output and not rows["a4"].is_output


def test_the_rules_act_on_arrays_and_their_contributions_are_proven():
    t = trace_of(LOSS, X=X, w=W, y=Y)
    ref = reference_loss()
    rules = {(r.source, r.target): r for r in t.rules}
    assert rules["a1", "w"].rule == "Xᵀ ḡ"
    assert rules["a1", "X"].rule == "outer(ḡ, w)"
    assert rules["a4", "a3"].rule == "ḡ broadcast to (3,)"
    assert rules["a3", "a2"].rule == "ḡ·(2*a2)"
    assert rules["a2", "y"].rule == "ḡ·(-1)"
    proven_close(rules["a1", "w"].upstream, ref["g2"])
    proven_close(rules["a1", "w"].contribution, ref["gw"])
    proven_close(rules["a1", "X"].contribution, ref["gX"])
    proven_close(rules["a2", "y"].contribution, ref["gy"])
    proven_close(rules["a5", "a4"].contribution, [ref["g4"]])
    assert rules["a1", "X"].shape == (3, 2) and rules["a1", "w"].upstream_shape == (3,)
    # the rules run in reverse order; the adjoints end with the inputs, the gradient
    assert [r.source for r in t.rules] == ["a5", "a4", "a3", "a2", "a2", "a1", "a1"]
    adjoints = {a.id: a for a in t.adjoints}
    proven_close(adjoints["w"].adjoint, ref["gw"])
    assert [a.id for a in t.adjoints][-3:] == ["X", "w", "y"]
    assert adjoints["a5"].terms == ("seed",)


def test_a_broadcast_operand_sums_its_rule_over_the_broadcast_axes():
    Xa, b = np.array(X, float), np.array([1.0, -2.0])
    t = trace_of("sum((X + b)^2) * c", X=X, b=b.tolist(), c=3.0)
    rules = {(r.source, r.target): r for r in t.rules}
    (add,) = [r for r in t.rules if r.target == "b"]
    assert add.rule == "sum over axis 0 of ḡ·1"
    proven_close(add.contribution, 3 * 2 * (Xa + b).sum(axis=0))
    (scale,) = [r for r in t.rules if r.target == "c"]
    assert scale.rule.startswith("ḡ·")  # a scalar times a scalar: no sum
    (into_c,) = [r for k, r in rules.items() if k[1] == "c"]
    proven_close(into_c.contribution, [((Xa + b) ** 2).sum()])
    t = trace_of("sum(w * c)", w=[1.0, 2.0, 4.0], c=0.5)
    (into_c,) = [r for r in t.rules if r.target == "c"]
    assert into_c.rule == "sum of ḡ·w"
    proven_close(into_c.contribution, [7.0])


def test_softmax_along_an_axis_keeps_the_axis_and_sums_over_it():
    Xa = np.array(X, float)
    t = trace_of("sum(softmax(X, axis=1)[:, 0])", X=X)
    exprs = [r.expr for r in t.forward]
    assert any(re.fullmatch(r"a\d+ as \(3, 1\)", e) for e in exprs), exprs
    assert any(r.rule.startswith("sum over axis 1 of") for r in t.rules)
    with mpmath.workdps(50):
        e = [[mpmath.exp(v) for v in row] for row in X]
        s = [[v / sum(row) for v in row] for row in e]
        grad = [[s[i][0] * ((j == 0) - s[i][j]) for j in range(2)] for i in range(3)]
    (into_X,) = [a for a in t.adjoints if a.id == "X"]
    proven_close(into_X.adjoint, grad)
    assert Xa.shape == (3, 2)


SHIFTED = [  # (source, d source / dz by mpmath at 50 digits, at z = [1, 2, 3])
    ("logsumexp(z)", lambda p: p),
    ("softmax(z)[0]", lambda p: [p[0] * ((j == 0) - p[j]) for j in range(3)]),
    ("log_softmax(z)[0]", lambda p: [(j == 0) - p[j] for j in range(3)]),
    ("logsumexp(z) + max(z)", lambda p: [p[0], p[1], p[2] + 1]),
]


@pytest.mark.parametrize("source, gradient", SHIFTED, ids=[s for s, _ in SHIFTED])
def test_the_shift_of_logsumexp_has_an_adjoint_of_exactly_0(source, gradient):
    """logsumexp(z) = m + log Σ exp(z - m) is the same for every m, so m's adjoint is exactly 0
    (1 - Σ softmax, whose ball was 0 ± 1e-1232): shown as 0, like what flows from it to z."""
    t = trace_of(source, z=[1, 2, 3])
    shift = next(r.id for r in t.forward if r.expr == "max(z)")
    (adjoint,) = [a for a in t.adjoints if a.id == shift]
    assert [a.text for a in adjoint.adjoint] == ["0"] and adjoint.adjoint[0].exact
    (from_shift,) = [r for r in t.rules if r.source == shift]
    assert [c.text for c in from_shift.upstream] == ["0"]
    assert [c.text for c in from_shift.contribution] == ["0", "0", "0"]
    into_shift = [c for r in t.rules if r.target == shift for c in r.contribution]
    assert all("±" not in c.text for c in into_shift)
    with mpmath.workdps(50):
        e = [mpmath.exp(v) for v in (1, 2, 3)]
        p = [v / sum(e) for v in e]
        (into_z,) = [a for a in t.adjoints if a.id == "z"]
        proven_close(into_z.adjoint, gradient(p))


def test_the_shift_in_the_printed_trace_is_0_from_the_console_script(gradcli_script, tmp_path):
    for source in ("logsumexp(z)", "softmax(z)[0]", "log_softmax(z)[0]"):
        out = subprocess.run([gradcli_script, "eval", source, "--at", "z=[1,2,3]", "--trace",
                              "--elements", "all", "--width", "250"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "±" not in out.stdout and "e-1232" not in out.stdout
        assert re.search("│ a\u03041 +│ scalar │ 0 +│", out.stdout), out.stdout  # ā1: a + macron


def test_a_view_gets_only_its_own_users_adjoint():
    """x[0] + sum(x): the view x[0] is read once (ḡ 1); x's adjoint counts both paths."""
    t = trace_of("x[0] * 3 + sum(x)", x=[1.0, 2.0])
    take = next(r for r in t.forward if r.expr == "x[0]")
    (rule,) = [r for r in t.rules if r.source == take.id]
    proven_close(rule.upstream, [3])
    proven_close(rule.contribution, [3, 0])
    assert rule.rule == "ḡ at its element, 0 elsewhere"
    (x,) = [a for a in t.adjoints if a.id == "x"]
    proven_close(x.adjoint, [4, 1])
    t = trace_of("sum(X' @ v)", X=X, v=[1.0, -1.0, 2.0])
    (transpose,) = [r for r in t.rules if r.target == "X"]
    assert transpose.rule == "ḡᵀ"
    proven_close(transpose.contribution, [[1, 1], [-1, -1], [2, 2]])


def test_the_same_array_on_both_sides():
    t = trace_of("sum(x * x)", x=[1.0, -3.0])
    into = [r for r in t.rules if r.target == "x"]
    assert [r.rule for r in into] == ["ḡ·x", "ḡ·x"]
    for r in into:
        proven_close(r.contribution, [1, -3])


# -- the command line ----------------------------------------------------------------------------

def test_eval_trace_prints_the_array_tables(run):
    result = run("eval", LOSS, "--at", AT, "--trace", "--width", "250")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Forward evaluation trace (array operations)" in out
    assert "Reverse sweep (rules on arrays)" in out
    row = next(line for line in out.splitlines() if "a1 = X @ w" in line and "Xᵀ ḡ" in line)
    with mpmath.workdps(30):
        gw = reference_loss()["gw"]
    assert f"[{mpmath.nstr(gw[0], 13)}, {mpmath.nstr(gw[1], 13)}]".replace(".0,", ",") \
        .replace(".0]", "]") in row
    assert "v1 = X[0,0]" not in out  # no scalar rows unless asked


def test_a_long_array_is_previewed_with_the_count_left_out(run):
    w = ",".join(str(k) for k in range(1, 11))
    result = run("eval", "sum(w^2)", "--at", f"w=[{w}]", "--trace", "--width", "200")
    assert result.exit_code == 0, result.output
    assert "[1, 2, 3, 4, … 5 more, 10]" in result.output  # the input
    assert "[1, 4, 9, 16, … 5 more, 100]" in result.output  # w^2, checked by hand: k^2


def test_elements_expands_one_operation_into_scalar_rows(run):
    result = run("eval", LOSS, "--at", AT, "--elements", "a1", "--width", "200")
    assert result.exit_code == 0, result.output
    assert "Elements of a1 = X @ w: forward" in result.output
    assert "X[0,0] * w[0] = 1 * 0.5" in result.output
    assert "Elements of a2" not in result.output
    by_node = run("eval", LOSS, "--at", AT, "--elements", "v7", "--width", "200")
    assert "Elements of a1 = X @ w" in by_node.output  # v7 = v1 + v2 is X @ w's
    both = run("eval", LOSS, "--at", AT, "--elements", "all", "--width", "200")
    assert both.exit_code == 0 and "Elements of a5 = a4 / 3" in both.output


def test_elements_mistakes_are_input_errors(run, reported):
    reported(run("eval", LOSS, "--at", AT, "--elements", "a9"), 2,
             ["--elements a9", "did you mean"])
    reported(run("eval", "x^2", "--at", "x=2", "--elements", "a1"), 2, ["no array values"])
    big = ",".join(["1"] * 300)
    reported(run("eval", "sum(w^2)", "--at", f"w=[{big}]", "--elements", "all"), 2,
             ["--elements all", "--elements a"])
    reported(run("eval", "sum(w^2)", "--at", "w=[1,2]", "--elements", "a1", "--direction",
                 "w=[1,0]"), 2, ["--elements"])


def test_scalar_programs_keep_the_scalar_trace(run):
    result = run("eval", "log(x)+x*y-sin(y)", "--at", "x=2,y=3", "--trace")
    assert result.exit_code == 0
    assert "array operations" not in result.output
    assert "v1 = log(x)" in result.output


def test_installed_console_script(gradcli_script, tmp_path):
    out = subprocess.run([gradcli_script, "eval", LOSS, "--at", AT, "--trace", "--width", "200"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Xᵀ ḡ" in out.stdout and "(3, 2)" in out.stdout
    out = subprocess.run([gradcli_script, "eval", LOSS, "--at", AT, "--elements", "a7"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 2 and "did you mean" in out.stderr


def test_json_has_the_array_rows_in_full(run):
    import json
    result = run("eval", LOSS, "--at", AT, "--trace", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    arrays = data["trace"]["arrays"]
    ref = reference_loss()
    rows = {r["id"]: r for r in arrays["forward"]}
    assert rows["X"]["shape"] == [3, 2] and rows["X"]["value"] == X
    assert rows["a1"]["expr"] == "X @ w" and rows["a1"]["shape"] == [3]
    assert rows["a1"]["value"] == pytest.approx([float(v) for v in ref["a1"]], rel=1e-15)
    assert rows["a5"]["output"] is True
    (into_w,) = [r for r in arrays["rules"] if r["to"] == "w"]
    assert into_w["rule"] == "Xᵀ ḡ"
    assert into_w["contribution"] == pytest.approx([float(v) for v in ref["gw"]], rel=1e-15)
    (into_X,) = [r for r in arrays["rules"] if r["to"] == "X"]
    assert np.shape(into_X["contribution"]) == (3, 2)
    assert [a["id"] for a in arrays["adjoints"]][-3:] == ["X", "w", "y"]
    assert "forward" in data["trace"] and "contributions" in data["trace"]  # the scalar rows too
    scalar = run("eval", "x*y", "--at", "x=2,y=3", "--trace", "--json")
    assert "arrays" not in json.loads(scalar.output)["trace"]


# -- the graph: a node per array operation, with its shape ---------------------------------------

def test_graph_draws_a_node_per_array_operation_with_its_shape(run):
    import json
    result = run("graph", LOSS, "--at", AT, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    nodes = {n["id"]: n for n in data["nodes"]}
    assert list(nodes) == ["X", "w", "y", "a1", "a2", "a3", "a4", "a5"]
    assert nodes["a1"]["label"] == "X @ w" and nodes["a1"]["shape"] == [3]
    ref = reference_loss()
    assert nodes["a1"]["value"] == pytest.approx([float(v) for v in ref["a1"]], rel=1e-15)
    assert nodes["w"]["adjoint"] == pytest.approx([float(v) for v in ref["gw"]], rel=1e-15)
    assert nodes["a5"]["output"] and nodes["a5"]["shape"] == []
    assert {(e["source"], e["target"]) for e in data["edges"]} == {
        ("X", "a1"), ("w", "a1"), ("a1", "a2"), ("y", "a2"), ("a2", "a3"), ("a3", "a4"),
        ("a4", "a5")}
    text = run("graph", LOSS, "--at", AT, "--layout", "tb")
    assert text.exit_code == 0 and "shape (3, 2)" in text.output and "v7" not in text.output
    mermaid = run("graph", LOSS, "--format", "mermaid", "--at", AT)
    assert "X @ w<br/>shape (3,)" in mermaid.output
    plain = run("graph", "x*y + sin(x)")  # a scalar program: the scalar nodes, as ever
    assert "v1" in plain.output and "shape" not in plain.output


def test_latex_export_has_the_array_tables(run, tmp_path):
    import shutil
    path = tmp_path / "trace.tex"
    result = run("eval", "mean((X @ w - y)^2) + sum((X + b)^2)", "--at", AT + ",b=[1,2]",
                 "--trace", "--export", str(path), "--standalone", "--digits", "4")
    assert result.exit_code == 0, result.output
    tex = path.read_text(encoding="utf-8")
    assert "Reverse sweep (rules on arrays)" in tex
    assert r"X^{\top}\text{ }\bar{g}" in tex
    gw = reference_loss()["gw"]  # plus nothing: (X + b)^2 does not read w
    assert f"[{float(gw[0]):.2f},\\ {float(gw[1]):.2f}]" in tex  # 4 digits: -25.00, -32.00
    assert r"\text{sum over axis 0 of }\bar{g} \cdot 1" in tex
    assert "v1 = " not in tex and "ḡ" not in tex  # no scalar rows; no character LaTeX lacks
    if shutil.which("pdflatex"):
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                               path.name], cwd=tmp_path, capture_output=True, timeout=120)
        assert done.returncode == 0, done.stdout[-2000:]


def test_no_rule_flows_into_a_constant_array():
    t = trace_of("sum(ones(2, 2) @ w) + 2", w=[1.0, -2.0])
    constants = {r.id for r in t.forward if r.kind in ("stack", "constant")}  # ones(2, 2)
    assert constants and not [r for r in t.rules if r.target in constants]
    (into_w,) = [r for r in t.rules if r.target == "w"]
    assert into_w.rule.endswith("ᵀ ḡ")
    proven_close(into_w.contribution, [2, 2])  # column sums of ones(2, 2)


def test_graph_max_nodes_caps_an_array_program_too(gradcli_script):
    import json
    source = "z = w*w; s = sum(z); t = sum(sin(z)); s*t + sum(exp(w))"
    # w, w*w, sum, sin, sum, *, exp, sum, +: 9 nodes; the 3 nearest the output are the last +
    # and its two arguments (s*t, sum(exp(w))), their own arguments drawn as … in their place
    done = subprocess.run([gradcli_script, "graph", source, "--at", "w=[1,2,3]",
                           "--max-nodes", "3", "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    picture = json.loads(done.stdout)
    assert (picture["shown"], picture["total"]) == (6, 9)  # (drawn: with the 3 stand-ins)
    kinds = sorted(node["kind"] for node in picture["nodes"])
    assert kinds == ["hidden"] * 3 + ["operation"] * 3
    output, = [node for node in picture["nodes"] if node["output"]]
    w = [mpmath.mpf(v) for v in (1, 2, 3)]
    want = sum(v * v for v in w) * sum(mpmath.sin(v * v) for v in w) + sum(map(mpmath.exp, w))
    assert abs(mpmath.mpf(output["value"]) - want) < 1e-12 * abs(want)
    assert "showing the 3 nodes nearest the output, of 9" in done.stderr
    every = subprocess.run([gradcli_script, "graph", source, "--at", "w=[1,2,3]", "--max-nodes", "0",
                            "--json"],
                           capture_output=True, text=True)
    assert json.loads(every.stdout)["shown"] == 9 and every.stderr == ""
