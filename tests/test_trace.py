"""--trace: the forward, contribution and adjoint tables, row by row, and their rendering.

Expected rows are derived by hand from the textbook computation of y = log(x) + x*y - sin(y):
v1 = log x, v2 = x*y, v3 = sin y, v4 = v1 + v2, v5 = v4 - v3, then the adjoints backwards.
"""

import io
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcli import evaluate
from gradcli.cli import main
from gradcli.views.screen import open_screen
from gradcli.views.tables import trace_tables
from gradcli.views.text import result_text

SEED = "log(x)+x*y-sin(y)"
SNAPSHOTS = Path(__file__).parent / "snapshots"


def hand_trace(x, y):
    """The seed example's trace, computed by hand with math.* (an independent derivation)."""
    v1, v2, v3 = math.log(x), x * y, math.sin(y)
    v4 = v1 + v2
    v5 = v4 - v3
    forward = [("x", "x", x), ("y", "y", y), ("v1", "log(x)", v1), ("v2", "x * y", v2),
               ("v3", "sin(y)", v3), ("v4", "v1 + v2", v4), ("v5", "v4 - v3", v5)]
    # (from, to, upstream, local, contribution) in sweep order: v5, v4, then v1, v2, v3
    contributions = [
        ("v5", "v4", 1, 1, 1), ("v5", "v3", 1, -1, -1),
        ("v4", "v1", 1, 1, 1), ("v4", "v2", 1, 1, 1),
        ("v1", "x", 1, 1 / x, 1 / x), ("v2", "x", 1, y, y), ("v2", "y", 1, x, x),
        ("v3", "y", -1, math.cos(y), -math.cos(y)),
    ]
    adjoints = {"v5": 1, "v4": 1, "v1": 1, "v2": 1, "v3": -1,
                "x": 1 / x + y, "y": x - math.cos(y)}
    return forward, contributions, adjoints


@pytest.mark.parametrize("x, y", [(2, 3), (2, 5)])
def test_seed_example_tables_row_by_row(x, y):
    trace = evaluate(SEED, {"x": x, "y": y}).trace
    forward, contributions, adjoints = hand_trace(x, y)
    assert [(r.id, r.expr) for r in trace.forward] == [(i, e) for i, e, _ in forward]
    for row, (_, _, value) in zip(trace.forward, forward):
        assert row.value == pytest.approx(value, rel=1e-15)
    assert [r.is_output for r in trace.forward] == [False] * 6 + [True]
    assert len(trace.contributions) == 8
    for row, (src, dst, up, local, contrib) in zip(trace.contributions, contributions):
        assert (row.source, row.target) == (src, dst)
        assert row.upstream == pytest.approx(up) and row.local == pytest.approx(local, rel=1e-15)
        assert row.contribution == pytest.approx(contrib, rel=1e-15)
    assert trace.contributions[0].equation == "v5 = v4 - v3"
    got = {r.id: r.adjoint for r in trace.adjoints}
    assert got == {k: pytest.approx(v, rel=1e-15) for k, v in adjoints.items()}
    terms = {r.id: r.terms for r in trace.adjoints}
    assert terms["x"] == pytest.approx((1 / x, y))
    assert terms["y"] == pytest.approx((x, -math.cos(y)))


def test_seed_values_to_twelve_digits():
    forward = {r.id: r.value for r in evaluate(SEED, {"x": 2, "y": 3}).trace.forward}
    assert [f"{forward[k]:.12f}" for k in ("v1", "v3", "v4", "v5")] == [
        "0.693147180560", "0.141120008060", "6.693147180560", "6.552027172500"]


def test_x_times_x_has_two_contributions_to_x():
    trace = evaluate("x*x", {"x": 3}).trace
    assert [(c.source, c.target, c.contribution) for c in trace.contributions] == [
        ("v1", "x", 3.0), ("v1", "x", 3.0)]
    assert {r.id: r.terms for r in trace.adjoints}["x"] == (3.0, 3.0)


def test_program_with_reassignments_shows_names_and_versions():
    program = ("c = a + b\nd = a * b + b**3\nc += c + 1\nc += 1 + c + (-a)\n"
               "d += d * 2 + relu(b + a)\nd += 3 * d + relu(b - a)\ne = c - d\nf = e**2\n"
               "g = f / 2.0\ng += 10.0 / f\n")
    result = evaluate(program, {"a": -4, "b": 2})
    assert result.value == pytest.approx(24.70408163265306, rel=1e-14)
    assert result.gradient == {"a": pytest.approx(138.83381924198252, rel=1e-14),
                               "b": pytest.approx(645.5772594752187, rel=1e-14)}
    names = {n for r in result.trace.forward for n in r.names}
    assert {"c#1", "c#2", "c#3", "d#1", "d#3", "e", "f", "g#1", "g#2"} <= names
    c1 = next(r for r in result.trace.forward if "c#1" in r.names)
    assert c1.expr == "a + b" and c1.value == -2
    output = next(r for r in result.trace.forward if r.is_output)
    assert output.names == ("g#2",)
    # constants appear inside operations, never as rows with adjoints
    ids = {r.id for r in result.trace.forward}
    assert ids == {"a", "b"} | {f"v{k}" for k in range(1, 26)}
    assert {r.id for r in result.trace.adjoints} <= ids
    assert any(r.expr.endswith(" / 2") for r in result.trace.forward)


def _render(source, at, max_rows=40, digits=13):
    """What standard output shows when it is a file."""
    result = evaluate(source, at)
    stream = io.StringIO()
    open_screen(stream=stream).show(result_text(result.value, result.gradient, digits=digits),
                                    *trace_tables(result.trace, digits, max_rows))
    return stream.getvalue()


def test_rendering_snapshot():
    # Reviewed by eye once; regenerate with GRADCLI_UPDATE_SNAPSHOTS=1 after a deliberate change.
    text = _render(SEED, {"x": 2, "y": 3})
    snapshot = SNAPSHOTS / "seed_trace.txt"
    import os
    if os.environ.get("GRADCLI_UPDATE_SNAPSHOTS"):
        snapshot.write_text(text, encoding="utf-8")
    assert text == snapshot.read_text(encoding="utf-8")


def test_textbook_symbolic_columns():
    # the lesson's tables: v1 = log(x1) = log(2); ∂v1/∂x1 = 1/x1 = 0.5; ∂v3/∂x2 = cos(x2) = -0.99
    text = _render(SEED, {"x": 2, "y": 3})
    forward, reverse = text.split("Reverse sweep")
    assert "v1 = log(x) = log(2)" in forward
    assert "v2 = x * y = 2 * 3" in forward and "v3 = sin(y) = sin(3)" in forward
    assert "1/x = 0.5" in reverse and "cos(y) = -0.989992496600" in reverse
    assert "y = 3.000000000000" in reverse and "x = 2.000000000000" in reverse  # ∂(x*y)
    # the symbolic column for other rules: x^y, exp, negative operands substituted in parentheses
    text = _render("exp(x)^y - x*-y", {"x": 0.5, "y": -2})
    assert "v3 = v1 ^ y = 1.6487212707 ^ (-2)" in text and "v2 = -y = -(-2)" in text
    assert "y*v1^(y - 1) = " in text and "exp(x) = 1.648721270700" in text


def test_constants_are_shown_as_the_numbers_they_are_exactly():
    """A folded constant is written as it is exactly, in canonical form (never the 17 digits of
    its double), in the operation, the step and the local derivative's formula."""
    text = _render("log(2)*x + x/(1/3) + 0.1*x^(1/3) - pi*x + x*sqrt(2)", {"x": 1})
    assert "v1 = log(2) * x = log(2) * 1" in text
    assert "x / (1/3)" in text and "x ^ (1/3)" in text and "0.1 * v" in text
    assert "pi * x" in text and "x * sqrt(2)" in text
    assert "0.6931471805599453" not in text and "0.3333333333333333" not in text
    assert "log(2) = 0.6931471805599" in text  # ∂v1/∂x, its formula


def test_max_rows_keeps_the_output_and_the_inputs_and_says_what_it_hides():
    text = _render(SEED, {"x": 2, "y": 3}, max_rows=3)
    forward, reverse = text.split("Reverse sweep")
    reverse, adjoints = reverse.split("Adjoints")
    # forward: the inputs x, y and the output v5 fill the 3 rows; v1..v4 are hidden
    assert "⋮ 4 rows not shown (--max-rows 0 shows all)" in forward
    assert "v5 = v4 - v3" in forward and "← output" in forward
    assert "v1 = log(x)" not in forward
    # contributions: 4 of the 8 flow into inputs, more than 3, so the last one into each input
    # (v2 -> x at row 6, v3 -> y at row 8) and the first row are kept
    rows = [line for line in reverse.splitlines() if line.startswith("│ v")]
    assert [r.split("│")[1:3] for r in rows] == [[" v5 = v4 - v3 ", " v4 "],
                                                 [" v2 = x * y   ", " x  "],
                                                 [" v3 = sin(y)  ", " y  "]]
    assert "⋮ 4 rows not shown" in reverse and "⋮ 1 row not shown" in reverse
    # adjoints: the output's seed and both inputs' gradients
    assert "3.500000000000" in adjoints and "2.989992496600" in adjoints
    assert "⋮ 4 rows not shown" in adjoints and "v̄4" not in adjoints
    full = _render(SEED, {"x": 2, "y": 3}, max_rows=0)
    assert "not shown" not in full


def test_max_rows_keeps_the_gradient_of_a_long_sum():
    source = "+".join(f"x*{k}" for k in range(1, 51))  # df/dx = 1 + 2 + ... + 50 = 1275
    text = _render(source, {"x": 1}, max_rows=40)
    adjoints = text.split("Adjoints")[1]
    assert "x̄" in adjoints and "1275.000000000" in adjoints
    assert "rows not shown (--max-rows 0 shows all)" in adjoints


def test_trace_cli_plain_output_is_complete_when_piped():
    result = CliRunner().invoke(main, ["eval", SEED, "--at", "x=2,y=3", "--trace"])
    assert result.exit_code == 0
    out = result.output
    assert "\x1b[" not in out  # no colour off a terminal
    for text in ("Forward evaluation trace", "Reverse sweep (contributions)", "Adjoints",
                 "v3 = sin(y)", "0.9899924966004", "0.5000000000000 + 3.000000000000",
                 "2.000000000000 + 0.9899924966004", "← output"):
        assert text in out, text
    assert "…" not in out


def test_trace_json_schema():
    result = CliRunner().invoke(main, ["eval", SEED, "--at", "x=2,y=3", "--trace", "--json",
                                       "--max-rows", "1"])
    data = json.loads(result.output)
    trace = data["trace"]
    assert [r["id"] for r in trace["forward"]] == ["x", "y", "v1", "v2", "v3", "v4", "v5"]
    assert trace["forward"][2] == {"id": "v1", "op": "log", "args": ["x"], "expr": "log(x)",
                                   "value": math.log(2), "step": "log(2)"}
    assert len(trace["contributions"]) == 8  # --json is complete whatever --max-rows says
    assert trace["contributions"][7] == {"from": "v3", "to": "y", "upstream": -1.0,
                                         "local": math.cos(3), "local_expr": "cos(y)",
                                         "contribution": -math.cos(3)}
    assert trace["contributions"][4]["local_expr"] == "1/x"  # d log(x)/dx, derived by hand
    assert trace["adjoints"]["x"] == 3.5 and trace["adjoints"]["v3"] == -1.0
    assert trace["output"] == "v5"


def test_trace_json_names():
    result = CliRunner().invoke(main, ["eval", "c = x*y; c += 1", "--at", "x=2,y=3", "--trace",
                                       "--json"])
    forward = json.loads(result.output)["trace"]["forward"]
    assert [r.get("name") for r in forward] == [None, None, "c#1", "c#2"]


@pytest.mark.parametrize("suffix", [".svg", ".html", ".txt"])
def test_export_by_suffix(tmp_path, suffix):
    path = tmp_path / f"trace{suffix}"
    result = CliRunner().invoke(main, ["eval", SEED, "--at", "x=2,y=3", "--trace",
                                       "--export", str(path)])
    assert result.exit_code == 0, result.output
    content = path.read_text(encoding="utf-8")
    if suffix == ".svg":
        root = ET.fromstring(content)
        assert root.tag.endswith("svg")
        assert "Forward" in content  # rich writes text with &#160; for spaces
    elif suffix == ".html":
        assert "<html" in content.lower() and "v5 = v4 - v3" in content
    else:
        assert "v5 = v4 - v3" in content and "0.989992496600" in content


def test_export_rejects_unknown_suffix(tmp_path):
    result = CliRunner().invoke(main, ["eval", SEED, "--at", "x=2,y=3", "--export",
                                       str(tmp_path / "out.pdf")])
    assert result.exit_code == 2
    assert "unknown file type" in result.stderr


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_no_color_and_terminal_colour(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    tables = trace_tables(evaluate(SEED, {"x": 2, "y": 3}).trace, 12, 40)
    for no_color, coloured in (("1", False), (None, True)):
        if no_color:
            monkeypatch.setenv("NO_COLOR", no_color)
        else:
            monkeypatch.delenv("NO_COLOR")
        stream = _Terminal()
        open_screen(stream=stream).show(*tables)
        assert ("\x1b[" in stream.getvalue()) == coloured  # colour on a terminal, unless NO_COLOR


def test_a_shortened_table_builds_only_the_rows_it_shows():
    """--max-rows 40 on 2,000 nodes builds at most 40 rows a table (and as many local
    formulas), and the rows it shows are the ones a complete build gives."""
    source = " + ".join(f"sin({i}*x)*y" for i in range(1, 500))
    trace = evaluate(source, {"x": 0.5, "y": 2}).trace
    shown = trace_tables(trace, 6, 40)
    for rows in (trace.forward, trace.contributions, trace.adjoints):
        assert len(rows) > 900
        assert sum(row is not None for row in rows._rows) <= 40
    complete = evaluate(source, {"x": 0.5, "y": 2}).trace
    assert list(trace.contributions) == list(complete.contributions)
    assert [t.rows for t in shown] == [t.rows for t in trace_tables(complete, 6, 40)]


def test_rows_are_built_once_each_in_any_order():
    """Rows builds a row when it is first read, and once, whatever the order and however many
    are read (past FEW they move from a dict to a list); negative indices and slices read as a
    list's, and an index past either end is an IndexError."""
    import random

    from gradcli.records import FEW, Rows
    built = []
    n = 2 * FEW + 3
    rows = Rows(n, lambda i: built.append(i) or ("row", i))
    order = list(range(n))
    random.Random(5).shuffle(order)
    assert [rows[i] for i in order[:FEW + 1]] == [("row", i) for i in order[:FEW + 1]]
    assert rows[-1] == ("row", n - 1) and rows[3:6] == [("row", 3), ("row", 4), ("row", 5)]
    assert list(rows) == [("row", i) for i in range(n)] and len(rows) == n
    assert sorted(built) == list(range(n))
    for outside in (n, -n - 1):
        with pytest.raises(IndexError):
            rows[outside]


def test_a_certified_trace_proves_only_the_numbers_it_shows(monkeypatch):
    """--trace of a 600-term sum (about 4,200 nodes, 12,000 numbers) shows 40 rows a table:
    the digits of the numbers not shown are never worked out (it proved all of them, 8x eval's
    time on 10^4 terms); --max-rows 0 shows, and proves, every one."""
    import gradcli.engine.certify as certify
    calls = []
    real = certify.proven
    monkeypatch.setattr(certify, "proven", lambda *a, **k: calls.append(1) or real(*a, **k))
    terms = " + ".join(f"{i % 7 + 1}*exp(x*{i % 5 + 1}/10)*cos(y + {i % 3})" for i in range(600))
    shown = CliRunner().invoke(main, ["eval", terms, "--at", "x=0.5,y=0.25", "--trace"])
    assert shown.exit_code == 0, shown.output
    assert "Adjoints" in shown.output and len(calls) < 1000, len(calls)
    calls.clear()
    every = CliRunner().invoke(main, ["eval", terms, "--at", "x=0.5,y=0.25", "--trace",
                                      "--max-rows", "0"])
    assert every.exit_code == 0 and len(calls) > 10_000
    last = every.output.strip().splitlines()  # the shown digits are the exact sum's
    f = next(line for line in last if line.startswith("f "))
    import mpmath
    with mpmath.workdps(40):
        x, y = mpmath.mpf("0.5"), mpmath.mpf("0.25")
        exact = sum((i % 7 + 1) * mpmath.exp(x * (i % 5 + 1) / 10) * mpmath.cos(y + i % 3)
                    for i in range(600))
        assert abs(mpmath.mpf(f.split("=")[1]) - exact) <= abs(exact) * mpmath.mpf(10) ** -12


def test_a_certified_trace_reuses_the_values_forward_sweep(monkeypatch):
    """The trace's recorded sweep starts from the balls that proved the value (same point, same
    precision): only its reverse sweep runs again, and its numbers are the value's."""
    import gradcli.engine.certify as certify
    from gradcli.api import evaluate
    graph = gradcli_compile("(1-cos(x))/x^2 + x*y")  # cancels: the quick sweep cannot prove it
    r = evaluate(graph, {"x": "1e-8", "y": 3}, digits=20)
    assert getattr(r.certified, "reals", None)
    calls = []
    real = certify._forward
    monkeypatch.setattr(certify, "_forward", lambda *a: calls.append(1) or real(*a))
    trace = r.trace
    assert calls == [] and trace.forward[len(trace.forward) - 1].value.text == r.value.text
    assert r.value.text == "0.50000002999999999583"  # 1/2 - x^2/24 + 3x, x = 1e-8 (mpmath)


def gradcli_compile(source):
    from gradcli import compile
    return compile(source)


# -- the work a trace does: counted, never timed -------------------------------------------------

SUM = " + ".join(f"{i % 7 + 1}*exp(x*{i % 5 + 1}/10)*cos(y + {i % 3})" for i in range(10))


SWEEPS = {"float64": (["--float64"], ["float"]),
          # the quick sweep proves this sum, and the numbers its trace shows
          "quick": ([], ["float", "quick"]),
          # 17 digits are more than the quick sweep in doubles proves (it is skipped as
          # hopeless): the balls, bare
          "balls": (["--digits", "17"], ["bare balls", "float"])}


@pytest.mark.parametrize("flags, sweeps", SWEEPS.values(), ids=SWEEPS)
def test_a_trace_runs_no_sweep_of_its_own(monkeypatch, flags, sweeps):
    """--trace reads the reverse sweep that computed the gradient (float64's, or the sweep that
    certified the digits, quick or on balls): the rules run in each namespace exactly as
    often as for a plain eval, so the trace adds no second sweep."""
    import gradcli.engine.reverse as reverse
    from gradcli.engine.ball import BALL, BARE
    from gradcli.engine.bounds import POINT
    from gradcli.engine.primitives import FLOAT
    real = reverse.local_partials
    calls = []

    def counted(graph, values, m, *args, **kwargs):
        names = {id(FLOAT): "float", id(POINT): "quick", id(BALL): "ball",
                 id(BARE): "bare balls"}
        calls.append(names.get(id(m), type(m).__name__))  # another namespace: named, not raised
        return real(graph, values, m, *args, **kwargs)
    monkeypatch.setattr(reverse, "local_partials", counted)
    runs = {}
    for trace in ([], ["--trace"]):
        calls.clear()
        out = CliRunner().invoke(main, ["eval", SUM, "--at", "x=0.5,y=0.25", *flags, *trace])
        assert out.exit_code == 0, out.output
        runs[bool(trace)] = sorted(calls)
    assert runs[True] == runs[False] == sweeps


@pytest.mark.parametrize("flags", [[], ["--seed", "f1=1,f2=2"]], ids=["jacobian", "vjp"])
def test_a_trace_of_several_outputs_runs_no_sweep_of_its_own(monkeypatch, flags):
    """The Jacobian's sweeps (one per output) and a vector-Jacobian product's one sweep record
    what their traces show: --trace runs the rules as often as the plain eval."""
    import gradcli.engine.reverse as reverse
    real = reverse.local_partials
    calls = []
    monkeypatch.setattr(reverse, "local_partials",
                        lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs))
    counts = []
    for trace in ([], ["--trace"]):
        calls.clear()
        out = CliRunner().invoke(main, ["eval", "x*y; sin(x)*y", "--at", "x=2,y=3",
                                        "--float64", *flags, *trace])
        assert out.exit_code == 0, out.output
        counts.append(len(calls))
    assert counts[0] == counts[1] == (2 if not flags else 1)  # reverse mode: a sweep an output


def test_a_shortened_trace_reads_as_many_records_whatever_the_size(monkeypatch):
    """Tables of 40 rows make the same number of contributions (a number each, from the kept
    partials), local formulas and adjoint terms for a sum of 50 terms as for one of 1,000: the
    work grows with the rows shown, not with the program."""
    import gradcli.engine.reverse as reverse
    import gradcli.records as records
    counts: dict[str, int] = {}

    def counting(name, real):
        def count(*args):
            counts[name] = counts.get(name, 0) + 1
            return real(*args)
        return count
    monkeypatch.setattr(reverse, "Contribution", counting("rows", reverse.Contribution))
    monkeypatch.setattr(reverse.Recorded, "contribution",
                        counting("terms", reverse.Recorded.contribution))
    monkeypatch.setattr(records, "local_formulas", counting("formulas", records.local_formulas))
    seen = []
    for n in (50, 1000):
        source = " + ".join(f"{i % 7 + 1}*exp(x*{i % 5 + 1}/10)*cos(y + {i % 3})"
                            for i in range(n))
        result = evaluate(source, {"x": 0.5, "y": 0.25}, float64=True)
        assert len(result.trace.contributions) > 7 * n
        counts.clear()
        trace_tables(result.trace, 13, 40)
        seen.append(dict(counts))
    assert seen[0] == seen[1], seen
    assert seen[0]["rows"] <= 40 and seen[0]["formulas"] <= 40 and seen[0]["terms"] <= 8 * 40


@pytest.mark.parametrize("flags", [[], ["--float64"]], ids=["certified", "float64"])
def test_a_trace_by_one_input_shows_only_its_edges(flags):
    """--wrt x on x^y at (-2, 3): the recorded sweep keeps no partial by y (∂(x^y)/∂y needs
    x > 0), so the trace has one contribution, 3·x² = 12 (by hand), and no row for y's."""
    out = CliRunner().invoke(main, ["eval", "x^y", "--at", "x=-2,y=3", "--wrt", "x", "--trace",
                                    "--json", *flags])
    assert out.exit_code == 0, out.output
    sweep = json.loads(out.output)["trace"]
    assert [(c["from"], c["to"]) for c in sweep["contributions"]] == [("v1", "x")], sweep
    assert float(sweep["contributions"][0]["contribution"]) == 12


def test_a_quickly_proven_trace_prints_the_balls_digits(monkeypatch):
    """A value the quick sweep proved gets its trace proven by the same sweep's bounds:
    no ball sweep runs for 40 rows a table, and every row, shown or all of them, reads as the
    balls' trace (both give the exact numbers correctly rounded). A number whose bound is too
    wide for its digits is the balls' to prove: they run once."""
    import gradcli.engine.certify as certify
    from gradcli.api import QuickCertificate, evaluate
    at = {"x": "0.5", "y": "0.25"}
    balls = evaluate(gradcli_compile(SUM), at)
    expected = [[t.rows for t in trace_tables(balls.trace, 13, n)] for n in (40, 0)]
    quick = evaluate(gradcli_compile(SUM), at, quick=True, record=True)
    assert isinstance(quick.certified, QuickCertificate)
    calls = []
    real = certify.certify
    monkeypatch.setattr(certify, "certify", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert [t.rows for t in trace_tables(quick.trace, 13, 40)] == expected[0]
    assert calls == []
    assert [t.rows for t in trace_tables(quick.trace, 13, 0)] == expected[1]
    assert len(calls) <= 1


@pytest.mark.parametrize("source, at", [
    ("3/4*sin(x*2/7 + y*y + 1)*y + 5/2*log(x*3/7 + y*y + 1)*y - x", {"x": "2", "y": "1"}),
    ("tanh(x)*erf(y) + atan(x*y) + cbrt(x + 2)", {"x": "1.25", "y": "2.5"}),
    ("expm1(x/3)*log1p(y*y) + sqrt(x*x + y*y) - cosh(y)", {"x": "3", "y": "0.3"}),
    ("x^3*y - asinh(x - y) + log10(x + y)*log2(x)", {"x": "2", "y": "1"})])
def test_quick_and_ball_traces_agree_row_for_row(source, at):
    """Every row of a quickly proven trace (all of them, --max-rows 0) is the ball-proven
    trace's: each number's digits are the exact number's, correctly rounded, either way."""
    from gradcli.api import QuickCertificate, evaluate
    quick = evaluate(gradcli_compile(source), at, quick=True, record=True)
    assert isinstance(quick.certified, QuickCertificate)
    balls = evaluate(gradcli_compile(source), at)
    assert ([t.rows for t in trace_tables(quick.trace, 13, 0)]
            == [t.rows for t in trace_tables(balls.trace, 13, 0)])


def test_at_50_columns_one_layout_and_a_wrapped_cell_is_no_new_row(gradcli_script):
    import re
    import subprocess
    out = subprocess.run([gradcli_script, "eval", SEED, "--at", "x=2,y=3", "--trace", "--digits",
                          "4", "--width", "50"], capture_output=True, text=True,
                         encoding="utf-8").stdout
    tables = re.split(r"\n(?=Forward evaluation trace|Reverse sweep|Adjoints)", out)[1:]
    assert len(tables) == 3 and max(len(line) for line in out.splitlines()) <= 50
    boxed = ["┏" in table for table in tables]
    assert len(set(boxed)) == 1  # one layout for the three tables
    reverse = tables[1].splitlines()
    body = reverse[reverse.index(next(line for line in reverse if line.startswith("─"))) + 1:]
    wrapped = [line for line in body if not re.match(r"v\d|[xy] ", line)]
    assert wrapped and all(line.startswith("  ") for line in wrapped)  # indented, not a row


@pytest.mark.parametrize("source, wrt", [
    ("log(x)+x*y-sin(y)", None),
    ("a = x*y; b = a + x; c = a*b - sin(a); c*c + x/y", None),
    ("a = x*y; b = a + x; c = a*b - sin(a); c*c + x/y", ["y"]),
    ("x^y + y^x + 2*x", ["x"]),
])
def test_the_sweeps_edges_are_every_contribution_in_sweep_order_and_by_target(source, wrt):
    """The recorded sweep's edges, against a loop written here over the sweep's order: each
    visited node's arguments that are differentiated, in order; by target, a stable sort."""
    result = evaluate(source, {"x": 0.5, "y": 0.25}, wrt=wrt, float64=True, record=True)
    graph, records = result.graph, result.sweep[1]
    active = graph.active() if wrt is None else graph.active(
        [graph.n_const + graph.inputs.index(name) for name in wrt])
    expected = [(s, a, which) for s in graph.visit_order()
                for which, a in enumerate(graph.args(s - graph.base)) if active[a]]
    sources, targets, which = records.edges()
    assert list(zip(sources, targets, which)) == expected
    by_target = sorted(range(len(expected)), key=lambda i: expected[i][1])
    assert list(records.by_target()) == by_target
    assert len(records) == len(expected)


def test_a_long_reading_shows_its_beginning_as_tables_show_their_first_rows(gradcli_script):
    # 500 terms of an explicit spelling: the reading is the source itself, 4,499 characters
    import subprocess
    source = " + ".join(["x*y"] * 500)
    cut = f"read as: {source[:2000]}… (its first 2,000 characters; --max-rows 0 shows all)"
    out = CliRunner().invoke(main, ["eval", source, "--at", "x=2,y=3", "--trace"]).output
    assert out.splitlines()[0] == cut
    whole = subprocess.run([gradcli_script, "eval", source, "--at", "x=2,y=3", "--trace",
                            "--max-rows", "0"], capture_output=True, text=True,
                           encoding="utf-8").stdout
    assert whole.splitlines()[0] == f"read as: {source}"
    short = CliRunner().invoke(main, ["eval", "2x^2 + y", "--at", "x=1,y=2", "--trace"]).output
    assert short.splitlines()[0] == "read as: 2*x^2 + y"
    data = json.loads(CliRunner().invoke(main, ["eval", source, "--at", "x=2,y=3", "--trace",
                                                "--json"]).output)
    assert data["source_read"] == source  # --json is always complete
