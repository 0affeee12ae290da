"""Several outputs (issue 14): the Jacobian against SymPy, forward = reverse = auto, the products
against the full Jacobian, --of, --check/--expect on entries, the JSON schema, diff's outputs
and mixed partials, a Hessian per output, the drawing's marks, and the pipe diff -> eval.

Expected numbers come from SymPy or are worked by hand in the comments, never from gradcli.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess

import pytest
import sympy as sp
from hypothesis import given, note, settings
from hypothesis import strategies as st

import gradcli
from gradcli.errors import InputError
from gradcli.language.printer import to_source
from strategies import Case, multi_output_cases, outputs_of
from test_engine import MICROGRAD
from test_properties import RTOL, TINY, compare, reference, sympy_program, sympy_time_limit

# -- the language: which statements are outputs --------------------------------------------------


@pytest.mark.parametrize("source, names, values", [
    ("x^2; y^2", ["f1", "f2"], [4.0, 9.0]),
    ("x^2; a = y; a*x", ["f1", "f2"], [4.0, 6.0]),
    ("a = x*y; b = a + 1", ["f"], [7.0]),  # no bare expression: the last assigned name
    ("a = x*y; a; b = 2*a", ["f"], [6.0]),  # one bare expression: it, not the last assignment
    ("x; x; 3", ["f1", "f2", "f3"], [2.0, 2.0, 3.0]),
])
def test_outputs_are_the_bare_expressions(source, names, values):
    g = gradcli.compile(source)
    assert g.output_names == names
    r = gradcli.jacobian(source, {"x": 2, "y": 3})
    assert r.outputs == names and list(r.values.values()) == values


def test_evaluate_with_several_outputs_says_to_call_jacobian():
    with pytest.raises(InputError, match="2 outputs") as info:
        gradcli.evaluate("x^2; y^2", {"x": 1, "y": 2})
    assert "jacobian" in info.value.hint
    # of= picks one: d(y^2)/dy = 2y = 4
    assert gradcli.evaluate("x^2; y^2", {"x": 1, "y": 2}, of="f2").gradient == {"x": 0.0, "y": 4.0}


def test_jacobian_result_by_hand():
    # f1 = x*y, f2 = x + y, f3 = sin(x): J = [[y, x], [1, 1], [cos x, 0]]
    r = gradcli.jacobian("x*y; x+y; sin(x)", {"x": 2, "y": 3})
    assert r.outputs == ["f1", "f2", "f3"] and r.inputs == ["x", "y"]
    assert r.values == {"f1": 6.0, "f2": 5.0, "f3": math.sin(2)}
    assert r.matrix == [[3.0, 2.0], [1.0, 1.0], [math.cos(2), 0.0]]
    assert r.jacobian["f3"] == {"x": math.cos(2), "y": 0.0}
    # 3 outputs, 2 inputs: auto takes the 2 tangent sweeps
    assert (r.mode, r.sweeps) == ("forward", 2)
    assert gradcli.jacobian("x*y; x+y; sin(x)", {"x": 2, "y": 3}, mode="reverse").sweeps == 3


def test_of_and_wrt_pick_rows_and_columns():
    r = gradcli.jacobian("u = x*y; v = x - y; u + v", {"x": 2, "y": 3}, of=["v", "u"], wrt=["y"])
    assert r.outputs == ["v", "u"] and r.inputs == ["y"]
    assert r.matrix == [[-1.0], [2.0]]


def test_of_unknown_name_is_an_input_error():
    with pytest.raises(InputError, match="of names q"):
        gradcli.jacobian("a = x; a; x^2", {"x": 1}, of=["q"])


def test_an_assigned_name_wins_over_an_output_name():
    # f is assigned (f = 2x), and it is also the name of the one bare output (x^3)
    r = gradcli.jacobian("f = 2*x; x^3", {"x": 2}, of=["f"])
    assert r.values == {"f": 4.0} and r.jacobian == {"f": {"x": 2.0}}


def micrograd_by_hand():
    """The micrograd README program in SymPy, with relu as the branch that holds at a=-4, b=2
    (b + a = -2: relu is 0; b - a = 6: relu is b - a)."""
    a, b = sp.symbols("a b")
    c = a + b
    d = a * b + b**3
    c = c + (c + 1)
    c = c + (1 + c + (-a))
    d = d + (d * 2 + 0)
    d = d + (3 * d + (b - a))
    e = c - d
    f = e**2
    g = f / 2 + 10 / f
    at = {a: -4, b: 2}
    return {name: (float(x.subs(at)), {str(s): float(sp.diff(x, s).subs(at)) for s in (a, b)})
            for name, x in {"c": c, "d": d, "e": e, "g": g}.items()}


@pytest.mark.parametrize("mode", ["auto", "reverse", "forward"])
def test_micrograd_program_of_c_d_e_g(run, mode):
    expected = micrograd_by_hand()
    assert expected["g"][0] == pytest.approx(24.70408163265306, rel=1e-14)  # micrograd's print
    result = run("eval", MICROGRAD, "--at", "a=-4,b=2", "--of", "c,d,e,g", "--mode", mode,
                 "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["outputs"] == ["c", "d", "e", "g"]
    assert data["mode"] == (mode if mode != "auto" else "forward")  # 4 outputs, 2 inputs
    for name, (value, gradient) in expected.items():
        assert data["values"][name] == pytest.approx(value, rel=1e-13)
        for x in ("a", "b"):
            assert data["jacobian"][name][x] == pytest.approx(gradient[x], rel=1e-13)


def test_micrograd_auto_mode_takes_the_tangent_sweeps(run):
    # 4 outputs, 2 inputs: 2 tangent sweeps beat 4 adjoint sweeps
    out = run("eval", MICROGRAD, "--at", "a=-4,b=2", "--of", "c,d,e,g").output
    assert ("forward mode (auto): 2 tangent sweeps, one per input (reverse mode would take 4 "
            "adjoint sweeps, one per output)") in out


# -- against SymPy, generated programs with 2-5 outputs -------------------------------------------

JACOBIAN_SETTINGS = settings(max_examples=25, derandomize=True, database=None)


@JACOBIAN_SETTINGS
@given(multi_output_cases())
def test_jacobian_equals_sympy_in_every_mode(case: Case):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    results = {mode: gradcli.jacobian(source, case.point, mode=mode, float64=True)
               for mode in ("reverse", "forward", "auto")}
    reverse, forward, auto = results["reverse"], results["forward"], results["auto"]
    singles = outputs_of(case.program)
    assert 2 <= len(reverse.outputs) == len(singles) <= 5
    assert reverse.values == forward.values == auto.values
    assert auto.mode == ("reverse" if len(singles) <= len(auto.inputs) else "forward")
    with sympy_time_limit():
        for name, single in zip(reverse.outputs, singles):
            prog = sympy_program(single, case.point)
            compare(f"value {name}", reverse.values[name], reference(prog, case.point))
            for x in reverse.inputs:
                ref = reference(prog, case.point, (x,))
                for mode, r in results.items():
                    compare(f"{mode} d{name}/d{x}", r.jacobian[name][x], ref)
                if ref.well_conditioned():
                    assert math.isclose(forward.jacobian[name][x], reverse.jacobian[name][x],
                                        rel_tol=RTOL, abs_tol=TINY)


def _sum_close(got: float, terms: list[float]) -> bool:
    """``got`` equals ``sum(terms)`` to rounding: relative to the terms' sizes, as a sum
    computed in another order may differ by that much."""
    scale = math.fsum(abs(t) for t in terms)
    return abs(got - math.fsum(terms)) <= 1e-9 * scale + 1e-300


@settings(max_examples=60, derandomize=True, database=None)
@given(multi_output_cases(), st.data())
def test_vjp_and_jvp_equal_products_with_the_full_jacobian(case: Case, data):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    full = gradcli.jacobian(source, case.point, mode="reverse", float64=True)
    w = {name: data.draw(st.integers(-3, 3).map(float), label=f"w[{name}]")
         for name in full.outputs}
    d = {name: data.draw(st.integers(-3, 3).map(float), label=f"d[{name}]")
         for name in full.inputs}
    vjp = gradcli.vjp(source, case.point, w, float64=True)
    jvp = gradcli.jvp(source, case.point, d, float64=True)
    assert vjp.values == jvp.values == full.values
    for x in full.inputs:
        terms = [w[o] * full.jacobian[o][x] for o in full.outputs]
        assert _sum_close(vjp.product[x], terms), (x, vjp.product[x], terms)
    for o in full.outputs:
        terms = [full.jacobian[o][x] * d[x] for x in full.inputs]
        assert _sum_close(jvp.product[o], terms), (o, jvp.product[o], terms)


def test_vjp_and_jvp_by_hand():
    # J = [[y, x], [1, 1]] at (2, 3) = [[3, 2], [1, 1]]
    vjp = gradcli.vjp("x*y; x+y", {"x": 2, "y": 3}, {"f1": 1, "f2": 2})
    assert vjp.product == {"x": 3 + 2, "y": 2 + 2}
    jvp = gradcli.jvp("x*y; x+y", {"x": 2, "y": 3}, {"x": 1, "y": -1})
    assert jvp.product == {"f1": 3 - 2, "f2": 0.0}


def test_two_outputs_on_one_node_add_their_seeds():
    # f1 and f2 are both x*y: wᵀJ = (1 + 2)·(y, x)
    assert gradcli.vjp("x*y; x*y", {"x": 2, "y": 3}, {"f1": 1, "f2": 2}).product == {
        "x": 9.0, "y": 6.0}


# -- eval on the command line ---------------------------------------------------------------------


def test_eval_prints_values_mode_and_jacobian_table(run):
    result = run("eval", "x*y; x+y", "--at", "x=2,y=3", "--digits", "3")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:3] == ["f1 = 6.00", "f2 = 5.00",
                         "reverse mode (auto): 2 adjoint sweeps, one per output (forward mode "
                         "would take 2 tangent sweeps, one per input)"]
    assert lines[3].startswith("Jacobian")
    rows = {cells[0]: cells[1:] for cells in
            ([c.strip() for c in line.strip("│").split("│")] for line in lines if "│ f" in line)}
    assert rows == {"f1": ["3.00", "2.00"], "f2": ["1.00", "1.00"]}


def test_one_output_keeps_todays_output(run):
    assert run("eval", "x*y", "--at", "x=2,y=3").output == (
        "f     = 6.000000000000\n∂f/∂x = 3.000000000000\n∂f/∂y = 2.000000000000\n")
    assert run("eval", "x*y", "--at", "x=2,y=3", "--seed", "2").output.endswith(
        "(the gradient is scaled by the seed 2)\n")
    data = json.loads(run("eval", "x*y", "--at", "x=2,y=3", "--json").output)
    assert set(data) == {"source", "source_read", "inputs", "value", "gradient", "seed", "mode", "certified",
                         "decimal", "digits", "float64", "float64_digits"}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_modes_give_the_same_numbers(run, mode):
    data = json.loads(run("eval", "sin(x*y); x/y; exp(y)", "--at", "x=0.5,y=2", "--mode", mode,
                          "--json").output)
    x, y = 0.5, 2.0
    assert data["mode"] == mode
    assert data["jacobian"] == {
        "f1": {"x": pytest.approx(y * math.cos(x * y), rel=1e-15),
               "y": pytest.approx(x * math.cos(x * y), rel=1e-15)},
        "f2": {"x": pytest.approx(1 / y, rel=1e-15), "y": pytest.approx(-x / y**2, rel=1e-15)},
        "f3": {"x": 0.0, "y": pytest.approx(math.exp(y), rel=1e-15)}}


def test_json_schema_with_several_outputs(run):
    data = json.loads(run("eval", "x*y; x+y", "--at", "x=2,y=3", "--json").output)
    assert data == {"source": "x*y; x+y", "source_read": "x*y\nx + y", "inputs": {"x": 2.0, "y": 3.0},
                    "outputs": ["f1", "f2"], "values": {"f1": 6.0, "f2": 5.0},
                    "jacobian": {"f1": {"x": 3.0, "y": 2.0}, "f2": {"x": 1.0, "y": 1.0}},
                    "mode": "reverse", "sweeps": 2, "certified": True,
                    "decimal": {"values": {"f1": "6.000000000000", "f2": "5.000000000000"},
                                "jacobian": {"f1": {"x": "3.000000000000", "y": "2.000000000000"},
                                             "f2": {"x": "1.000000000000",
                                                    "y": "1.000000000000"}}},
                    "digits": 13}
    data = json.loads(run("eval", "x*y; x+y", "--at", "x=2,y=3", "--seed", "f1=1,f2=2",
                          "--json").output)
    assert data["cotangent"] == {"f1": 1.0, "f2": 2.0} and data["vjp"] == {"x": 5.0, "y": 4.0}
    assert data["mode"] == "reverse" and "jacobian" not in data
    data = json.loads(run("eval", "x*y; x+y", "--at", "x=2,y=3", "--direction", "y=1",
                          "--json").output)
    assert data["direction"] == {"x": 0.0, "y": 1.0} and data["jvp"] == {"f1": 2.0, "f2": 1.0}
    assert data["mode"] == "forward"


def test_seed_and_direction_text(run):
    out = run("eval", "x*y; x+y", "--at", "x=2,y=3", "--seed", "f1=1,f2=2", "--digits",
              "1").stdout
    assert out.splitlines() == ["f1        = 6", "f2        = 5", "∂(w·f)/∂x = 5",
                                "∂(w·f)/∂y = 4", "w = (f1=1, f2=2): wᵀJ in one reverse sweep"]
    out = run("eval", "x*y; x+y", "--at", "x=2,y=3", "--direction", "x=1", "--digits",
              "1").stdout
    assert out.splitlines() == ["f1    = 6", "f2    = 5", "∇f1·d = 3", "∇f2·d = 1",
                                "d = (x=1, y=0): J·d in one forward sweep"]


def test_seed_on_assigned_names_weighs_those_values(run):
    # u = xy, v = x + y at (2, 3): ∇u = (3, 2), ∇v = (1, 1); 1·∇u + 2·∇v = (5, 4)
    data = json.loads(run("eval", "u = x*y; v = x+y", "--at", "x=2,y=3", "--seed", "u=1,v=2",
                          "--json").output)
    assert data["outputs"] == ["u", "v"] and data["values"] == {"u": 6.0, "v": 5.0}
    assert data["cotangent"] == {"u": 1.0, "v": 2.0} and data["vjp"] == {"x": 5.0, "y": 4.0}
    bad = run("eval", "u = x*y; v = x+y", "--at", "x=2,y=3", "--seed", "u=1,w=2")
    assert bad.exit_code == 2 and "w" in bad.output and "Traceback" not in bad.output


@pytest.mark.parametrize("args, words", [
    (["--seed", "2"], ["--seed 2 is the adjoint of one output", "f1=1,f2=2"]),
    (["--seed", "f3=1"], ["--seed names f3"]),
    (["--seed", "f1=1", "--mode", "forward"], ["vector-Jacobian product"]),
    (["--seed", "f1=1", "--check"], ["--check and --expect"]),
    (["--direction", "x=1", "--mode", "reverse"], ["forward-mode option"]),
    (["--of", "q"], ["--of names q", "f1, f2"]),
    (["--expect", "x=y"], ["say which one", "f1.x"]),
    (["--expect", "f3.x=y"], ["f3 is not an output"]),
    (["--expect", "f1.z=y"], ["not part of the Jacobian"]),
])
def test_bad_options_with_several_outputs(run, reported, args, words):
    reported(run("eval", "x*y; x+y", "--at", "x=2,y=3", *args), 2, words)


def test_check_and_expect_on_entries(run):
    ok = run("eval", "x*y; sin(x)", "--at", "x=2,y=3", "--expect", "f1.x=y",
             "--expect", "f2.x=cos(x)")
    assert ok.exit_code == 0, ok.output
    assert ok.output.count("✓ AD agrees") == 2
    assert "Jacobian check, row f1" in ok.output and "Jacobian check, row f2" in ok.output
    wrong = run("eval", "x*y; sin(x)", "--at", "x=2,y=3", "--expect", "f2.x=sin(x)")
    assert wrong.exit_code == 1 and "✗ check failed" in wrong.output
    # assigned names work as output names: u.x
    named = run("eval", "u = x*y; v = x + y; u; v", "--at", "x=2,y=3", "--of", "u,v",
                "--expect", "u.y=x", "--json")
    data = json.loads(named.output)
    assert named.exit_code == 0 and data["check"]["ok"]
    entries = {(e["output"], e["input"]): e for e in data["check"]["rows"]}
    assert set(entries) == {("u", "x"), ("u", "y"), ("v", "x"), ("v", "y")}
    assert entries[("u", "y")]["expected"]["value"] == 2.0


def test_check_fails_at_a_kink_in_one_entry(run):
    # abs(x) at 0 is not differentiable along x; x*y is fine
    result = run("eval", "abs(x); x*y", "--at", "x=0,y=3", "--check", "--json")
    data = json.loads(result.output)
    assert result.exit_code == 1 and not data["check"]["ok"]
    bad = [(e["output"], e["input"]) for e in data["check"]["rows"] if not e["ok"]]
    assert bad == [("f1", "x")]


def test_trace_titles_each_sweep(run):
    out = run("eval", "x*y; x+y", "--at", "x=2,y=3", "--trace", "--mode", "reverse").output
    assert out.count("Forward evaluation trace") == 1
    assert "Reverse sweep for f1 = v1 (contributions)" in out
    assert "Reverse sweep for f2 = v2 (contributions)" in out
    assert "Adjoints of f1" in out and "Adjoints of f2" in out
    assert "← f1" in out and "← f2" in out
    out = run("eval", "x*y; x+y", "--at", "x=2,y=3", "--trace", "--mode", "forward").output
    assert out.count("Forward-mode tangent trace") == 1
    dot = "\u0307"  # the tangent's combining dot, as the table writes it
    assert f"v{dot} (x{dot} = 1)" in out and f"v{dot} (y{dot} = 1)" in out


def test_trace_json_has_a_sweep_per_output(run):
    data = json.loads(run("eval", "x*y; x+y", "--at", "x=2,y=3", "--trace", "--mode", "reverse",
                          "--json").output)
    sweeps = data["trace"]["sweeps"]
    assert [s["output"] for s in sweeps] == ["f1", "f2"]
    assert sweeps[0]["adjoints"] == {"v1": 1.0, "x": 3.0, "y": 2.0}
    assert data["trace"]["outputs"] == {"f1": "v1", "f2": "v2"}


def test_vjp_trace_seeds_every_output(run):
    out = run("eval", "x*y; x+y", "--at", "x=2,y=3", "--trace", "--seed", "f1=1,f2=2",
              "--digits", "1").output
    assert "seed 1" in out and "seed 2" in out


# -- diff, hessian, graph -------------------------------------------------------------------------


def test_diff_labels_every_output(run):
    out = run("diff", "x^2*y^3; sin(x*y)").output
    assert re.findall(r"^# (.*)$", out, re.M) == ["∂f1/∂x", "∂f1/∂y", "∂f2/∂x", "∂f2/∂y"]


def test_diff_mixed_partials(run):
    # d/dy d/dx exp(xy) = exp(xy)(1 + xy); d/dy of d/dx d/dx = d/dy (y^2 exp(xy)) = (2y + xy^2)exp(xy)
    x, y = 0.5, 2.0
    for names, expected in [("x,y", math.exp(x * y) * (1 + x * y)),
                            ("x,x,y", (2 * y + x * y * y) * math.exp(x * y))]:
        text = run("diff", "exp(x*y)", "--mixed", names).output
        value = gradcli.jacobian(text, {"x": x, "y": y}).values["f"]
        assert value == pytest.approx(expected, rel=1e-14)
    out = run("diff", "exp(x*y); x^2*y", "--mixed", "x,x,y").output
    assert re.findall(r"^# (.*)$", out, re.M) == ["∂³f1/∂x²∂y", "∂³f2/∂x²∂y"]
    assert out.rstrip().endswith("2")  # d/dy d/dx d/dx x^2 y = 2


def test_diff_mixed_json_and_errors(run, reported):
    data = json.loads(run("diff", "x*y^2", "--mixed", "y,x", "--json").output)
    assert data == {"source": "x*y^2", "source_read": "x*y^2", "derivatives": {"y,x": "2*y"}, "mixed": ["y", "x"]}
    reported(run("diff", "x*y", "--mixed", "x,y", "--order", "2"), 2, ["--mixed"])
    reported(run("diff", "x*y", "--mixed", "x,q"), 2, ["--wrt names q"])


def test_diff_output_pipes_back_into_eval(run):
    # ∂²/∂x² x^2 y^3 = 2y^3 = 16 and ∂²/∂y² = 6x^2 y = 12 at x=1, y=2
    text = run("diff", "x^2*y^3", "--order", "2").output
    data = json.loads(run("eval", "-", "--at", "x=1,y=2", "--json", input=text).output)
    assert data["values"] == {"f1": 16.0, "f2": 12.0}


def test_diff_pipe_through_the_console_script(gradcli_script):
    script = shlex.quote(gradcli_script)
    out = subprocess.run(f"{script} diff 'x^2*y^3' --order 2 | {script} eval - --at x=1,y=2 "
                         "--json", shell=True, capture_output=True, text=True, check=True,
                         encoding="utf-8").stdout
    assert json.loads(out)["values"] == {"f1": 16.0, "f2": 12.0}


def test_eval_through_the_console_script(gradcli_script):
    proc = subprocess.run([gradcli_script, "eval", "x*y; x+y", "--at", "x=2,y=3", "--digits",
                           "1"], capture_output=True, text=True, encoding="utf-8")
    assert proc.returncode == 0 and proc.stdout.startswith("f1 = 6\nf2 = 5\n")
    proc = subprocess.run([gradcli_script, "eval", "x; y", "--at", "x=2,y=3", "--seed", "2"],
                          capture_output=True, text=True, encoding="utf-8")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_a_hessian_per_output(run):
    # x^2 y: [[2y, 2x], [2x, 0]]; sin(xy): -sin(xy)·[[y², xy], [xy, x²]] + cos(xy)·[[0,1],[1,0]]
    x, y = 1.0, 2.0
    data = json.loads(run("hessian", "x^2*y; sin(x*y)", "--at", "x=1,y=2", "--json").output)
    assert data["outputs"] == ["f1", "f2"]
    assert data["hessians"]["f1"]["hessian"] == [[4.0, 2.0], [2.0, 0.0]]
    s, c = math.sin(x * y), math.cos(x * y)
    h = data["hessians"]["f2"]["hessian"]
    assert h == [[pytest.approx(-s * y * y, rel=1e-14), pytest.approx(c - s * x * y, rel=1e-14)],
                 [pytest.approx(c - s * x * y, rel=1e-14), pytest.approx(-s * x * x, rel=1e-14)]]
    one = json.loads(run("hessian", "x^2*y; sin(x*y)", "--at", "x=1,y=2", "--of", "f1",
                         "--json").output)
    assert set(one) == {"source", "source_read", "inputs", "wrt", "value", "gradient", "hessian", "certified",
                        "decimal", "digits"}
    assert one["hessian"] == [[4.0, 2.0], [2.0, 0.0]]
    out = run("hessian", "x^2*y; sin(x*y)", "--at", "x=1,y=2").output
    assert "Hessian of f1" in out and "Hessian of f2" in out and "∂f2/∂x" in out


def test_graph_marks_every_output(run):
    out = run("graph", "x*y; x+y; sin(x)").output
    assert "v1 → f1" in out and "v2 → f2" in out and "v3 → f3" in out
    assert out.count("╔") == 3  # three output boxes
    dot = run("graph", "a = x*y; a+1; a*2", "--at", "x=1,y=2", "--format", "dot").output
    assert dot.count("penwidth=2.5") == 2 and "grad " not in dot and "data 4" in dot
    assert 'label="2"' in dot  # the edge a -> a*2 carries its local derivative


