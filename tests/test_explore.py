"""gradcli explore: the steps of the sweeps (plain records) and the Textual app driven by its own
pilot (``App.run_test``: keys pressed, what is lit and shown asserted).

Expected numbers come from mpmath, never from gradcli's own output.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import mpmath
import pytest

from gradcli.errors import InputError
from gradcli.explore import Walk, make_app, short

try:
    import textual
except ImportError:  # the app's tests need it (it is in the test extra); the walk's do not
    textual = None
with_textual = pytest.mark.skipif(textual is None, reason="Textual is not installed")

ROOT = Path(__file__).parent.parent
SEED = "log(x)+x*y-sin(y)"
X, Y = mpmath.mpf(2), mpmath.mpf(3)
DFDX, DFDY = 1 / X + Y, X - mpmath.cos(Y)


def g12(x) -> str:
    """A number as the sentences write it: 12 significant digits, from mpmath."""
    return mpmath.nstr(mpmath.mpf(x), 12, strip_zeros=True).removesuffix(".0")


def lit(text) -> dict[str, str]:
    """The lit boxes of a drawing: the id on each box's title line (under its top corner) ->
    its style."""
    plain, found = text.plain, {}
    lines = plain.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    for k in range(1, len(lines)):
        for title in re.finditer(r"[│║|] (\w+)", lines[k]):
            x = title.start()
            if len(lines[k - 1]) <= x or lines[k - 1][x] not in "╭╔+":
                continue
            at = starts[k] + title.start(1)
            styles = {str(s.style) for s in text.spans if s.start <= at < s.end}
            styles = {s for s in styles if "on " in s or "reverse" in s}
            if styles:
                found[title.group(1)] = styles.pop()
    return found


# -- the walk -----------------------------------------------------------------------------------------

def test_the_forward_sweep_node_by_node():
    w = Walk(SEED, {"x": 2, "y": 3})
    sentences = [w.sentence()]
    while w.current.sweep == "forward":
        w.step(1)
        sentences.append(w.sentence())
    assert sentences[:6] == [
        "x = 2 (input)", "y = 3 (input)", f"v1 = log(x) = log(2) = {g12(mpmath.log(2))}",
        "v2 = x · y = 2 · 3 = 6", f"v3 = sin(y) = sin(3) = {g12(mpmath.sin(3))}",
        f"v4 = v1 + v2 = {g12(mpmath.log(2))} + 6 = {g12(mpmath.log(2) + 6)}"]
    assert sentences[-1].startswith("v̄4 += v̄5 · ∂v5/∂v4 = 1 · 1 = 1")


def test_the_reverse_sweep_edge_by_edge_ends_at_the_gradient():
    w = Walk(SEED, {"x": 2, "y": 3})
    w.end()
    w.step(1)
    assert w.title() == "reverse sweep, edge 1 of 8"
    assert w.lit() == {"v5": "from", "v4": "to"}
    w.end()
    sums = w.adjoints_so_far()
    assert sums["x"] == pytest.approx(float(DFDX), rel=1e-15)
    assert sums["y"] == pytest.approx(float(DFDY), rel=1e-15)
    assert w.sentence() == f"y\u0304 += v̄3 · ∂v3/∂y = -1 · {g12(mpmath.cos(3))} = {g12(-mpmath.cos(3))}"


def test_home_and_end_jump_within_a_sweep_then_to_the_next():
    w = Walk("x*y", {"x": 2, "y": 3})
    w.end()
    assert w.current == type(w.current)("forward", 2)
    w.end()  # already at the end: to the end of the next sweep
    assert w.current.sweep == "reverse" and w.current.index == 1
    w.home()
    assert w.current.index == 0 and w.current.sweep == "reverse"
    w.home()  # already at the start: to the start of the sweep before
    assert w.current.sweep == "forward" and w.current.index == 0
    w.step(-1)
    assert w.position == 0


def test_x_times_x_lights_each_of_its_two_edges_in_turn():
    w = Walk("x*x", {"x": 3})
    w.end()
    drawings = []
    for _ in range(2):
        w.step(1)
        text, region = w.picture_lines()
        edge = {text.plain.count("\n", 0, s.start) for s in text.spans
                if str(s.style) == "bold yellow"}
        drawings.append(edge)
        assert lit(text) == {"v1": LIT_FROM, "x": LIT_TO}
    assert drawings[0] and drawings[1] and drawings[0] != drawings[1]  # two ports, two rows
    assert w.adjoints_so_far()["x"] == 6  # 3 + 3: x\u0304 summed over both edges


LIT_FROM, LIT_TO = "bold black on yellow", "bold black on cyan"


def test_forward_mode_steps_through_a_tangent_sweep_per_input():
    w = Walk(SEED, {"x": 2, "y": 3}, mode="forward")
    assert len(w.steps) == 2 * 7
    w.end()
    assert w.title() == "tangent sweep x, node 7 of 7"
    assert w.sentence() == f"v̇5 = v̇4 - v̇3 = {g12(DFDX)}"
    w.end()
    assert w.sentence().endswith(f"= {g12(DFDY)}")


def test_ascii_sentences_and_drawing():
    w = Walk(SEED, {"x": 2, "y": 3}, ascii=True)
    w.end()
    w.step(1)
    text, _ = w.picture_lines()
    assert text.plain.isascii() and w.sentence().isascii()
    assert w.sentence() == "vbar4 += vbar5 * dv5/dv4 = 1 * 1 = 1"


def test_several_outputs_a_constant_and_a_wall_are_refused_with_a_way_out():
    with pytest.raises(InputError) as caught:
        Walk("x*y; x+y", {"x": 1, "y": 2})
    assert "one output" in str(caught.value) and caught.value.hint
    for source in ("2 + 3", "+".join(["sin(x)"] * 200)):
        with pytest.raises(InputError) as caught:
            Walk(source, {"x": 1})
        assert "gradcli eval ... --trace" in caught.value.hint


# -- the app, pressed by Textual's pilot ---------------------------------------------------------------

def drive(source, at, keys_and_checks, size=(80, 24), ascii=False):
    """Run the app at ``size``; ``keys_and_checks`` is a coroutine function given (app, pilot)."""
    async def main():
        app = make_app(Walk(source, at, ascii=ascii))
        async with app.run_test(size=size) as pilot:
            await keys_and_checks(app, pilot)
        return app
    return asyncio.run(main())


@with_textual
def test_stepping_and_clicking_light_the_node_and_its_row_in_80_by_24():
    from textual.widgets import DataTable

    async def checks(app, pilot):
        forward, sweep, adjoints = (app.query_one(f"#{n}", DataTable)
                                    for n in ("forward", "sweep", "adjoints"))
        await pilot.click("#forward", offset=(2, 3))  # the mouse: under the header x, y, v1
        await pilot.pause()
        assert app.walk.current == type(app.walk.current)("forward", 2)
        assert lit(app.drawing) == {"v1": "reverse bold"}
        await pilot.press("home", "right", "right", "right")
        assert forward.cursor_row == 3
        assert forward.get_row_at(3)[:3] == ["v2", "v2 = x * y", "6"]
        assert forward.get_row_at(4)[2] == ""  # v3 is not computed yet
        assert lit(app.drawing) == {"v2": "reverse bold"}
        assert "v2 = x · y = 2 · 3 = 6" in str(app.query_one("#step").render())
        await pilot.press("end", "right")  # the first edge of the reverse sweep
        assert sweep.row_count == 1 and sweep.get_row_at(0)[:2] == ["v5 = v4 - v3", "v̄4"]
        assert [r[0] for r in map(adjoints.get_row_at, range(adjoints.row_count))] == ["v̄5", "v̄4"]
        assert lit(app.drawing) == {"v5": LIT_FROM, "v4": LIT_TO}
        await pilot.press("right", "right")
        await pilot.click("#sweep", offset=(2, 2))  # a click on the second edge goes back to it
        await pilot.pause()
        assert app.walk.current == type(app.walk.current)("reverse", 1)
        await pilot.press("end")
        rows = {adjoints.get_row_at(i)[0]: adjoints.get_row_at(i)[1]
                for i in range(adjoints.row_count)}
        assert rows["x\u0304"] == g12(DFDX) and rows["y\u0304"] == g12(DFDY)
        assert adjoints.cursor_row == list(rows).index("y\u0304")
        await pilot.press("home", "home")
        assert app.walk.position == 0 and sweep.row_count == 0
        await pilot.press("f")
        assert app.walk.mode == "forward" and not adjoints.display
        await pilot.press("end")
        assert sweep.get_row_at(6)[2:] == [g12(DFDX), ""]  # the sweep of x done, not y's
        await pilot.press("r", "q")
    app = drive(SEED, {"x": 2, "y": 3}, checks)
    assert app.return_code == 0


@with_textual
def test_editing_the_point_and_the_expression_recomputes():
    from textual.widgets import DataTable, Input

    async def checks(app, pilot):
        point = app.query_one("#point", Input)
        point.focus()
        point.value = "x=1, y=0"
        await pilot.press("enter")
        await pilot.press("end")
        forward = app.query_one("#forward", DataTable)
        assert forward.get_row_at(6)[2] == g12(mpmath.log(1) + 0 - mpmath.sin(0))  # 0
        expression = app.query_one("#expression", Input)
        expression.focus()
        expression.value = "x*x + 1"
        await pilot.press("enter")
        assert "x * x" in app.drawing.plain and "log" not in app.drawing.plain
        expression.focus()
        expression.value = "x +"
        await pilot.press("enter")  # a mistake: said, and the walk kept
        assert "not changed" in str(app.query_one("#step").render())
        assert app.walk.source == "x*x + 1"
        await pilot.press("escape", "q")
    drive(SEED, {"x": 2, "y": 3}, checks, size=(120, 30))


@with_textual
def test_ascii_app(monkeypatch):
    async def checks(app, pilot):
        await pilot.press("end", "right")
        assert app.drawing.plain.isascii()
        assert "bar(x) += vbar1 * dv1/dx = 1 * 3 = 3" in str(app.query_one("#step").render())
        await pilot.press("q")
    drive("x*y", {"x": 2, "y": 3}, checks, ascii=True)


@with_textual
def test_the_docs_screenshot_is_what_the_app_shows(tmp_path):
    """docs/explore.svg, exported by Textual: made again and compared by its text (the styling
    may move with Textual's versions; the words and numbers may not). Run with
    GRADCLI_WRITE_SCREENSHOT=1 to write it anew."""
    import os
    shot = tmp_path / "explore.svg"

    async def checks(app, pilot):
        await pilot.press("end", "right", "right", "right", "right", "right", "right")
        app.save_screenshot(str(shot))
    drive(SEED, {"x": 2, "y": 3}, checks, size=(110, 32))
    target = ROOT / "docs" / "explore.svg"
    if os.environ.get("GRADCLI_WRITE_SCREENSHOT"):
        target.write_text(shot.read_text(encoding="utf-8"), encoding="utf-8")
    assert svg_text(shot.read_text(encoding="utf-8")) == svg_text(
        target.read_text(encoding="utf-8"))


def svg_text(svg: str) -> list[str]:
    return [t for t in re.findall(r">([^<>]+)</text>", svg) if t.strip()]


# -- the command ---------------------------------------------------------------------------------------

def test_the_command_needs_a_terminal_and_checks_its_input_first(run):
    result = run("explore", "x*y", "--at", "x=2,y=3")
    assert result.exit_code == 2 and "run it in a terminal" in result.output
    result = run("explore", "log(x", "--at", "x=2")
    assert result.exit_code == 2 and "never closed" in result.output
    result = run("explore", "x*y", "--at", "x=2")
    assert result.exit_code == 2 and "y" in result.output


def test_without_textual_the_message_names_the_install(run, monkeypatch):
    monkeypatch.setitem(sys.modules, "textual", None)
    result = run("explore", "x*y", "--at", "x=2,y=3")
    assert result.exit_code == 2
    assert 'pip install "gradcli[interactive]"' in result.output


def test_short_numbers():
    assert short(6.0) == "6" and short(None) == "—" and short(1e20) == "1.000000e+20"


def _step_in_a_real_terminal(args: list[str], dimensions, first: str, second: str) -> None:
    """The installed ``gradcli explore ARGS`` in a pseudo-terminal: it draws ``first``, → steps
    to ``second``, q quits 0."""
    pexpect = pytest.importorskip("pexpect")
    import os
    gradcli = os.path.join(os.path.dirname(sys.executable), "gradcli")
    child = pexpect.spawn(gradcli, ["explore", *args], dimensions=dimensions,
                          env=dict(os.environ, TERM="xterm-256color"), encoding="utf-8",
                          timeout=30)
    child.expect(first)
    child.send("\x1b[C")  # →
    child.expect(second)
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@with_textual
def test_the_console_script_in_a_real_terminal_steps_and_quits():
    """The installed command in a pseudo-terminal of 80x24: the app draws, → steps, q quits 0."""
    _step_in_a_real_terminal([SEED, "--at", "x=2,y=3"], (24, 80), "forward sweep", "node 2 of 7")


@with_textual
def test_the_footer_at_80_by_24_names_keys_and_steps():
    import html
    import re
    shown = {}

    async def checks(app, pilot):
        # Textual mounts the footer's keys after the first frames: on a busy machine one pause
        # is not enough, so wait (up to 20 s) until a frame shows them, then read that frame.
        for _ in range(200):
            await pilot.pause(0.1)
            svg = app.export_screenshot()
            shown["text"] = html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")
            if "Home" in shown["text"]:
                break
    drive(SEED, {"x": 2, "y": 3}, checks)
    assert "Home first step" in shown["text"] and "End last step" in shown["text"]
    assert "end end" not in shown["text"]


# -- a program with array values: a step per array operation and per rule on arrays ------------

ARRAYS = "mean((X @ w - y)^2)"


def test_arrays_step_by_array_operation_and_rule():
    from gradcli.cli import PointType
    from gradcli.points import merge_points
    at = merge_points([PointType().convert("X=[[1,2],[3,4],[5,6]],w=[0.5,-1],y=[1,0,2]",
                                           None, None)])
    w = Walk(ARRAYS, at)
    forward = [s for s in w.steps if s.sweep == "forward"]
    reverse = [s for s in w.steps if s.sweep == "reverse"]
    assert len(forward) == 8 and len(reverse) == 7  # X, w, y, a1..a5; a rule per argument
    w.step(3)
    assert w.sentence() == "a1 = X @ w = [-1.5, -2.5, -3.5]"  # X @ w by hand: 1*.5-2, ...
    assert lit(w.picture_lines()[0]) == {"a1": "reverse bold"}
    w.end()
    w.end()  # the last rule: into w, Xᵀ ḡ with ḡ = 2(Xw - y)/3
    with mpmath.workdps(30):
        g = [2 * (mpmath.mpf(a) - b) / 3 for a, b in ((-1.5, 1), (-2.5, 0), (-3.5, 2))]
        gw = [sum(x * gi for x, gi in zip(col, g)) for col in ((1, 3, 5), (2, 4, 6))]
    assert w.sentence().startswith(f"w̄ += Xᵀ ḡ = [{g12(gw[0])}, {g12(gw[1])}]")
    assert w.adjoints_so_far()["w"] == f"[{g12(gw[0])}, {g12(gw[1])}]"
    assert lit(w.picture_lines()[0]) == {"a1": LIT_FROM, "w": LIT_TO}
    w.set_mode("forward")  # no tangent sweeps of arrays: the walk stays in reverse mode
    assert w.mode == "reverse"


@with_textual
def test_the_app_steps_through_an_array_program():
    from textual.widgets import DataTable

    from gradcli.cli import PointType
    from gradcli.points import merge_points
    at = merge_points([PointType().convert("X=[[1,2],[3,4],[5,6]],w=[0.5,-1],y=[1,0,2]",
                                           None, None)])

    async def checks(app, pilot):
        forward, sweep = (app.query_one(f"#{n}", DataTable) for n in ("forward", "sweep"))
        assert [forward.get_row_at(i)[0] for i in range(forward.row_count)] == [
            "X", "w", "y", "a1", "a2", "a3", "a4", "a5"]
        await pilot.press("right", "right", "right")
        assert forward.get_row_at(3)[1:] == ["a1 = X @ w", "[-1.5, -2.5, -3.5]"]
        await pilot.press("end", "right")  # the first rule: a5 = a4 / 3 into a4
        assert sweep.get_row_at(0)[:2] == ["a5 = a4 / 3", "a\u03044"]
        assert sweep.get_row_at(0)[3] == "ḡ·(1/3)"
        await pilot.press("q")
    app = drive(ARRAYS, at, checks, size=(120, 30))
    assert app.return_code == 0


@with_textual
def test_the_console_script_steps_through_arrays_in_a_real_terminal():
    _step_in_a_real_terminal([ARRAYS, "--at", "X=[[1,2],[3,4],[5,6]],w=[0.5,-1],y=[1,0,2]"],
                             (30, 120), "node 1 of 8", "node 2 of 8")
