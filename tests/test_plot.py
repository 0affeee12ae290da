"""gradcli plot: the samples against closed forms and the batch engine, terminal snapshots,
images that decode, undefined regions, poles, and the missing extra."""

from __future__ import annotations

import csv
import io
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import mpmath

from gradcli.engine.batch import evaluate_columns
from gradcli.engine.bounds import MIN_DIGITS, certain_digits
from gradcli.engine.graph import compile
from gradcli.sampling import sample_curve, sample_surface
from gradcli.views.plot import arrow, break_at_poles, visible_range

SNAPSHOTS = Path(__file__).parent / "snapshots"
ROSENBROCK = "(1-x)^2 + 100*(y-x^2)^2"


def rows(text: str) -> list[dict[str, float]]:
    return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]


# -- the samples ----------------------------------------------------------------------------------

def test_csv_equals_closed_forms_to_third_order(run):
    result = run("plot", "sin(x)^2", "--over", "x=-3:3:61", "--order", "3", "--format", "csv")
    assert result.exit_code == 0, result.output
    data = rows(result.stdout)
    assert list(data[0]) == ["x", "f", "df/dx", "d2f/dx2", "d3f/dx3"]
    assert len(data) == 61
    for i, row in enumerate(data):
        x = -3 + 6 * i / 60  # linspace, derived independently
        assert row["x"] == pytest.approx(x, abs=1e-15)
        # sin²x, and its derivatives sin 2x, 2 cos 2x, -4 sin 2x
        assert row["f"] == pytest.approx(math.sin(x) ** 2, abs=1e-15)
        assert row["df/dx"] == pytest.approx(math.sin(2 * x), abs=1e-14)
        assert row["d2f/dx2"] == pytest.approx(2 * math.cos(2 * x), abs=1e-13)
        assert row["d3f/dx3"] == pytest.approx(-4 * math.sin(2 * x), abs=1e-12)


def test_samples_are_the_batch_engines_rows():
    # the batch engine's values where its error bound proves 10 digits, the certified engine's
    # (the exact value correctly rounded) elsewhere: as eval --grid writes its rows
    graph = compile("x^2*y + exp(-x)")
    curve = sample_curve("x^2*y + exp(-x)", "x", -2.0, 2.0, 101, at={"y": 3.0}, order=1)
    columns = {"x": np.linspace(-2, 2, 101), "y": 3.0}
    batch = evaluate_columns(graph, columns)
    proven = certain_digits(graph, columns, wrt=["x"]) >= MIN_DIGITS
    assert proven.any()
    for got, float64 in ((curve.series[0][1], batch.values),
                         (curve.series[1][1], batch.gradient["x"])):
        assert np.array_equal(got[proven], float64[proven])
        assert np.allclose(got, float64, rtol=1e-13, atol=0)


@pytest.mark.parametrize("how", ["api", "cli", "script"])
def test_a_cancelling_function_is_drawn_from_certified_samples(how, run, gradcli_script):
    # float64 cancels every digit of 1 - cos(x) here (f' swung by ±3.5e8); the truth, from
    # mpmath at 50 digits: f = 1/2 - x^2/24 + ..., f' = -x/12 + ... (0 at x = 0 is 0/0: a gap)
    if how == "api":
        curve = sample_curve("(1-cos(x))/x^2", "x", -1e-7, 1e-7, 41)
        data = [{"x": x, "f": f, "df/dx": d}
                for x, f, d in zip(curve.x, curve.series[0][1], curve.series[1][1])]
        assert curve.undefined == 1 and curve.uncertified == 0
    else:
        args = ["plot", "(1-cos(x))/x^2", "--over", "x=-1e-7:1e-7:41", "--format", "csv"]
        if how == "cli":
            result = run(*args)
            out, err, code = result.stdout, result.stderr, result.exit_code
        else:
            done = subprocess.run([gradcli_script, *args], capture_output=True, text=True,
                                  timeout=120)
            out, err, code = done.stdout, done.stderr, done.returncode
        assert code == 0, err
        assert "undefined at 1 of 41" in err and "certified" not in err
        data = rows(out)
    assert len(data) == 41
    with mpmath.workdps(50):
        def f(t):
            return (1 - mpmath.cos(t)) / t ** 2
        for row in data:
            if row["x"] == 0:
                assert math.isnan(row["f"]) and math.isnan(row["df/dx"])
                continue
            x = mpmath.mpf(float(row["x"]))
            assert row["f"] == pytest.approx(float(f(x)), rel=1e-10)
            assert row["df/dx"] == pytest.approx(float(mpmath.diff(f, x)), rel=1e-10)
            assert abs(row["df/dx"]) < 1e-8


def test_surface_samples_are_certified_too():
    s = sample_surface("(1-cos(x*y))/(x*y)^2", ("x", "y"), (1e-5, 2e-5), (1e-4, 2e-4), 4, 3)
    assert np.allclose(s.f, 0.5, rtol=1e-15, atol=0) and s.uncertified == 0


def test_a_sample_that_cannot_be_certified_is_a_gap_with_a_note(run, monkeypatch):
    import gradcli.engine.rows as rows_module
    monkeypatch.setattr(rows_module, "recompute", lambda *args: None)
    result = run("plot", "(1-cos(x))/x^2", "--over", "x=1e-8:1:5", "--format", "csv")
    assert result.exit_code == 0, result.output
    data = rows(result.stdout)
    assert math.isnan(data[0]["f"]) and math.isnan(data[0]["df/dx"])  # x = 1e-8: no digit
    assert all(not math.isnan(row["f"]) for row in data[1:])
    assert "1 of 5 samples could not be certified to 10 significant digits" in result.stderr


def test_surface_is_the_batch_engines_values_and_gradient_in_row_order():
    s = sample_surface(ROSENBROCK, ("x", "y"), (-2, 2), (-1, 3), 5, 4)
    x, y = s.x[3], s.y[2]
    assert s.f[2, 3] == pytest.approx((1 - x) ** 2 + 100 * (y - x * x) ** 2, rel=1e-15)
    assert s.dx[2, 3] == pytest.approx(-2 * (1 - x) - 400 * x * (y - x * x), rel=1e-14)
    assert s.dy[2, 3] == pytest.approx(200 * (y - x * x), rel=1e-14)


def test_two_input_csv_rows_run_x_fastest(run):
    result = run("plot", "x*y", "--over", "x=0:1:3,y=0:2:2", "--format", "csv")
    data = rows(result.stdout)
    assert [(r["x"], r["y"]) for r in data] == [(0, 0), (0.5, 0), (1, 0), (0, 2), (0.5, 2), (1, 2)]
    assert [r["f"] for r in data] == [0, 0, 0, 0, 1, 2]
    assert [r["df/dx"] for r in data] == [r["y"] for r in data]
    assert [r["df/dy"] for r in data] == [r["x"] for r in data]


# -- undefined regions and poles ------------------------------------------------------------------

def test_log_over_a_range_with_an_undefined_part(run):
    result = run("plot", "log(x)", "--over", "x=-1:2", "--width", "60", "--height", "10")
    assert result.exit_code == 0, result.output
    # linspace(-1, 2, 400): x_i = -1 + 3i/399 <= 0 for i <= 133, so 134 samples are undefined
    assert "f is undefined at 134 of 400 samples" in result.stdout
    assert "log(-1)" in result.stdout
    csv_result = run("plot", "log(x)", "--over", "x=-1:2", "--format", "csv")
    data = rows(csv_result.stdout)
    assert sum(math.isnan(r["f"]) for r in data) == 134
    assert all(r["f"] == pytest.approx(math.log(r["x"])) for r in data if r["x"] > 0)


def test_a_pole_is_a_break_not_a_line():
    x = np.linspace(-1, 1, 400)  # 0 falls between samples 199 and 200
    y = 1 / x
    bx, by = break_at_poles(x, y, -1 / x ** 2, span=100.0)
    assert len(bx) == 401 and math.isnan(by[200]) and -x[199] == pytest.approx(x[200])
    # a steep but continuous curve is not broken: its slope agrees with each step
    t = np.tanh(50 * x)
    assert len(break_at_poles(x, t, 50 / np.cosh(50 * x) ** 2, span=0.5)[0]) == 400


def test_a_pole_does_not_flatten_the_picture():
    x = np.linspace(-1, 1, 400)
    lo, hi = visible_range([1 / x])
    assert -200 < lo < -10 and 10 < hi < 200  # not ±399, the samples nearest the pole


def test_arrows_follow_the_direction():
    assert [arrow(1, 0, 1, False), arrow(0, 1, 1, False), arrow(-1, -1, 1, False)] == ["→", "↑", "↙"]
    assert arrow(0, 0, 1, True) == "." and arrow(math.nan, 1, 1, False) == " "


# -- terminal pictures ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, args", [
    ("plot_curve", ["sin(x)^2", "--over", "x=-3:3", "--order", "2", "--tangent", "x=1",
                    "--width", "72", "--height", "14"]),
    ("plot_surface", [ROSENBROCK, "--over", "x=-2:2,y=-1:3", "--log", "--width", "64",
                      "--height", "14"]),
])
def test_terminal_snapshot(run, name, args):
    """Reviewed by eye once; piped output has no colour, so curves use ASCII marks."""
    result = run("plot", *args)
    assert result.exit_code == 0, result.output
    expected = (SNAPSHOTS / f"{name}.txt").read_text(encoding="utf-8")
    assert result.stdout == expected


def test_the_tangent_equation_has_the_right_numbers(run):
    result = run("plot", "sin(x)^2", "--over", "x=-3:3", "--tangent", "x=1", "--format", "text",
                 "--width", "80", "--height", "8")
    f1, slope = math.sin(1) ** 2, math.sin(2)
    assert f"y = {f1:.12g} + {slope:.12g}·(x − 1)" in result.stdout


def test_ascii_output_has_no_other_characters(run):
    for args in (["sin(x)", "--over", "x=-3:3"], [ROSENBROCK, "--over", "x=-2:2,y=-1:3"]):
        result = run("plot", *args, "--ascii", "--width", "60", "--height", "10")
        assert result.exit_code == 0
        result.stdout.encode("ascii")


# -- image files ----------------------------------------------------------------------------------

def test_png_has_the_signature_and_the_asked_size(run, tmp_path):
    import matplotlib.image
    path = tmp_path / "plot.png"
    result = run("plot", "sin(x)^2", "--over", "x=-3:3", "--size", "640x480", "-o", str(path))
    assert result.exit_code == 0, result.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert matplotlib.image.imread(path).shape[:2] == (480, 640)


def test_svg_is_xml_with_title_and_axis_labels(run, tmp_path):
    path = tmp_path / "surface.svg"
    result = run("plot", ROSENBROCK, "--over", "x=-2:2,y=-1:3", "--log", "-o", str(path))
    assert result.exit_code == 0, result.output
    root = ET.parse(path).getroot()
    texts = {"".join(t.itertext()).strip() for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {ROSENBROCK, "x", "y"} <= texts
    assert "−∇f (descent)" in texts


def test_an_image_has_the_terminal_plot_s_panels(gradcli_script, tmp_path):
    """1/x: f and f′ in panels of their own, f's symmetric about 0 (its pole goes to +∞ on one
    side and −∞ on the other), as the terminal draws them (views.plot.panels)."""
    from gradcli.views.plot import panels
    path = tmp_path / "pole.svg"
    out = subprocess.run([gradcli_script, "plot", "1/x", "--over", "x=-2:2", "-o", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    svg = "{http://www.w3.org/2000/svg}"
    axes = [g for g in ET.parse(path).getroot().iter(svg + "g")
            if (g.get("id") or "").startswith("axes_")]
    assert len(axes) == 2
    ticks = [float(t.replace("−", "-")) for t in
             ("".join(e.itertext()).strip() for e in axes[0].iter(svg + "text"))
             if t.lstrip("−-").replace(".", "").isdigit()]
    assert ticks and sorted(ticks) == sorted(-t for t in ticks)
    terminal = panels(sample_curve(compile("1/x"), "x", -2.0, 2.0, 400))
    assert len(terminal) == 2 and terminal[0].shown[0] == -terminal[0].shown[1]


def test_without_over_the_range_is_chosen_and_said(run):
    result = run("plot", "x^2", "--tangent", "x=1", "--format", "csv")
    assert result.exit_code == 0
    assert "plotting over x=-4:6" in result.stderr
    xs = [float(line.split(",")[0]) for line in result.stdout.splitlines()[1:]]
    assert xs[0] == -4 and xs[-1] == 6
    assert "x=-5:5,y=-5:5" in run("plot", "x*y", "--format", "csv").stderr
    assert run("plot", "x*y*z", "--format", "csv").exit_code == 2


def test_pdf_is_written(run, tmp_path):
    path = tmp_path / "plot.pdf"
    assert run("plot", "1/x", "--over", "x=-1:1", "-o", str(path)).exit_code == 0
    assert path.read_bytes()[:5] == b"%PDF-"


def test_of_picks_the_output_of_a_program_with_several(run):
    # the second output, sin(x) with cos(x); and an assigned name, v = y·sin(x), over (x, y)
    data = rows(run("plot", "x^2; sin(x)", "--over", "x=-1:1:3", "--of", "f2",
                    "--format", "csv").stdout)
    assert [(r["x"], r["f"], r["df/dx"]) for r in data] == [  # NumPy's sin: to an ulp or two
        (x, pytest.approx(math.sin(x), rel=1e-15), pytest.approx(math.cos(x), rel=1e-15))
        for x in (-1.0, 0.0, 1.0)]
    data = rows(run("plot", "u = x^2; v = sin(x)*y", "--over", "x=0:1:2,y=2:3:2", "--of", "v",
                    "--format", "csv").stdout)
    assert [(r["f"], r["df/dx"], r["df/dy"]) for r in data] == [
        pytest.approx((math.sin(x) * y, math.cos(x) * y, math.sin(x)), rel=1e-15)
        for y in (2.0, 3.0) for x in (0.0, 1.0)]


# -- bad input and the missing extra --------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["x^2*y", "--over", "x=-2:2"], ["no value for input y", "--at y=1"]),
    (["x^2", "--over", "z=0:1"], ["does not read z"]),
    (["x^2", "--over", "x=1:0"], ["start must be below the stop"]),
    (["x*y*z", "--over", "x=0:1,y=0:1,z=0:1"], ["one or two"]),
    (["x^2", "--over", "x=0:1", "-o", "p.bmp"], [".bmp"]),
    (["x^2", "--over", "x=0:1", "--size", "big"], ["--size"]),
    (["x*y", "--over", "x=0:1,y=0:1", "--tangent", "x=1"], ["--tangent goes with one input"]),
    (["x^2", "--over", "x=0:1", "--tangent", "y=1"], ["--tangent names y"]),
    (["x^2; sin(x)", "--over", "x=0:1"], ["plot draws one output", "2 (f1, f2)", "--of f1"]),
    (["x^2; sin(x)", "--over", "x=0:1", "--of", "g"], ["--of", "g"]),
])
def test_bad_input(run, reported, args, words):
    reported(run("plot", *args), 2, words)


def test_missing_extra_names_the_install_command(run, monkeypatch, reported):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    reported(run("plot", "x^2", "--over", "x=0:1", "-o", "p.png"), 2,
             ["matplotlib", 'pip install "gradcli[plot]"'])
    monkeypatch.setitem(sys.modules, "uniplot", None)
    reported(run("plot", "x^2", "--over", "x=0:1"), 2, ['pip install "gradcli[plot]"'])


def test_installed_console_script(gradcli_script, tmp_path):
    out = subprocess.run([gradcli_script, "plot", "x^3", "--over", "x=-1:1:3", "--order", "2",
                          "--format", "csv"], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "NO_COLOR": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout == ("x,f,df/dx,d2f/dx2\n"
                          "-1.0,-1.0,3.0,-6.0\n"
                          "0.0,0.0,0.0,0.0\n"
                          "1.0,1.0,3.0,6.0\n")


def test_the_tangent_line_of_a_cancelling_function_is_certified():
    from gradcli.sampling import tangent_line
    fa, slope = tangent_line("(1-cos(x))/x^2", "x", 5e-8)
    with mpmath.workdps(50):
        x = mpmath.mpf(5e-8)
        value = (1 - mpmath.cos(x)) / x ** 2
        truth = mpmath.diff(lambda t: (1 - mpmath.cos(t)) / t ** 2, x)
    assert fa == pytest.approx(float(value), rel=1e-15) and slope == pytest.approx(float(truth), rel=1e-10)
