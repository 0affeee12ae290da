"""Plots that fit and read right (issue 25): no line wider than --width or the terminal (in a
real pseudo-terminal and piped), a symmetric range around an odd pole, a panel per curve when
their ranges differ by more than 10×, round ticks that tell each other apart, and numbers on
the --log colour bar."""

from __future__ import annotations

import fcntl
import math
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

import numpy as np
import pytest
from rich.cells import cell_len

from gradcli.views.plot import colour_ticks, round_ticks, tick_texts, visible_range

pytest.importorskip("uniplot")

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PLOTS = {
    "heat map": ["x^2+4*y^2", "--over", "x=-2:2,y=-1:1"],
    "log heat map": ["(1-x)^2 + 100*(y-x^2)^2", "--over", "x=-2:2,y=-1:3", "--log"],
    "curves": ["sin(x)^2", "--over", "x=-3:3", "--order", "2", "--tangent", "x=1"],
    "pole": ["1/x", "--over", "x=-2:2"],
    "undefined samples": ["log(x)", "--over", "x=-1:2"],  # and the note under the picture
}


def widest(text: str) -> int:
    return max(cell_len(ANSI.sub("", line)) for line in text.splitlines())


@pytest.mark.parametrize("width", [40, 50, 80])
@pytest.mark.parametrize("plot", list(PLOTS))
def test_no_line_is_wider_than_width_piped(gradcli_script, plot, width):
    out = subprocess.run([gradcli_script, "plot", *PLOTS[plot], "--width", str(width)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert widest(out.stdout) <= width
    if "heat" in plot:  # the map fills the width it is given
        assert widest(out.stdout) == width


def in_terminal(gradcli_script, args, columns: int, rows: int = 30) -> str:
    """What gradcli prints in a pseudo-terminal of this size (colours and all)."""
    import pty
    pid, fd = pty.fork()
    if pid == 0:  # the child: gradcli on a terminal of that size
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
        os.execve(gradcli_script, [gradcli_script, *args], env)
    out, deadline = b"", time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
    os.waitpid(pid, 0)
    os.close(fd)
    return out.decode("utf-8").replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("columns", [50, 80])
@pytest.mark.parametrize("plot", ["heat map", "curves"])
def test_no_line_is_wider_than_the_terminal(gradcli_script, plot, columns):
    text = in_terminal(gradcli_script, ["plot", *PLOTS[plot]], columns)
    assert "Traceback" not in text and "\x1b[" in text  # a terminal: in colour
    assert widest(text) <= columns, text


# -- the y range around a pole ---------------------------------------------------------------

def test_an_odd_pole_gets_a_symmetric_range():
    x = np.linspace(-2, 2, 400)
    lo, hi = visible_range([1 / x])
    assert lo == -hi and 2 < hi < 100  # was about -570 to +80
    x = np.linspace(-3, 3, 400)
    lo, hi = visible_range([np.tan(x)])
    assert lo == -hi


def test_an_even_pole_keeps_its_one_sided_range():
    x = np.linspace(-2, 2, 400)
    lo, hi = visible_range([1 / x ** 2])
    assert 0 < lo < 1 < hi < 1000


# -- a panel per curve when their ranges differ ------------------------------------------------

def frames(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.startswith(("┌", "+")))


def test_curves_whose_ranges_differ_by_more_than_10x_get_their_own_panels(run):
    # x^3 on [-0.1, 0.1]: f spans 0.002, f' spans 0.03, f'' spans 1.2
    text = run("plot", "x^3", "--over", "x=-0.1:0.1", "--order", "2", "--width", "60",
               "--height", "18").stdout
    assert frames(text) == 3
    assert [line.strip() for line in text.splitlines() if line.strip().startswith("++")] == \
        ["++ f", "++ f'", "++ f''"]


def test_curves_of_like_ranges_share_one_panel(run):
    text = run("plot", "sin(x)", "--over", "x=-3:3", "--order", "2", "--width", "60").stdout
    assert frames(text) == 1


# -- ticks ------------------------------------------------------------------------------------

@pytest.mark.parametrize("lo, hi", [(-1, 1), (0, 0.1), (-1e-9, 1e-9), (1e6, 1e6 + 1e-3),
                                    (-3, 3), (0.014, 2509), (-1e-12, 3e-12)])
def test_ticks_are_round_and_their_texts_tell_them_apart(lo, hi):
    ticks = round_ticks(lo, hi, 5)
    assert 2 <= len(ticks) <= 5 and all(lo <= t <= hi for t in ticks)
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert min(abs(mantissa - m) for m in (1, 2, 5, 10)) < 1e-6  # float noise: 1e6 + 5e-4 - 1e6
    texts = tick_texts(ticks)
    assert len(set(texts)) == len(texts)
    assert all(float(text) == pytest.approx(t, rel=1e-9, abs=step * 1e-9)
               for text, t in zip(texts, ticks))
    assert not any(text in ("-0", "-0.0", "0.0") or len(text) > 12 for text in texts)


def y_labels(text: str) -> list[str]:
    return [m.group(1) for line in text.splitlines()
            if (m := re.match(r"\s*(\S+) [│|]", line))]


def test_the_heat_maps_y_labels_are_round_numbers(run):
    text = run("plot", "x^2+4*y^2", "--over", "x=-2:2,y=-1:1", "--width", "50",
               "--height", "16").stdout
    labels = y_labels(text)
    assert labels == ["1.0", "0.5", "0", "-0.5", "-1.0"]  # not 0.0666667


def test_a_tiny_range_has_ticks_that_differ(run):
    text = run("plot", "x", "--over", "x=-1e-9:1e-9", "--order", "0", "--width", "60").stdout
    lines = text.splitlines()
    axis = lines[next(i for i, line in enumerate(lines) if line.startswith("└")) + 1].split()
    assert axis == ["-1e-9", "0", "1e-9"]  # was "-0.0  0.0"
    assert len(set(y_labels_right(text))) == len(y_labels_right(text)) >= 3


def y_labels_right(text: str) -> list[str]:
    return [line.rsplit("│", 1)[1].strip() for line in text.splitlines()
            if line.startswith("│") and line.rsplit("│", 1)[1].strip()]


# -- the colour bar of --log ------------------------------------------------------------------

def test_the_log_colour_bar_has_numbers_at_the_decades_of_f_minus_min():
    positions, texts = colour_ticks(0.0, 1e4, True, 6)
    values = [float(t) for t in texts]
    assert positions == sorted(positions) and 0 <= positions[0] and positions[-1] <= 1
    assert all(math.log10(v) == round(math.log10(v)) for v in values)
    # the level of f − min f = v is log10(v + δ) on the bar from log10(δ) to log10(1e4 + δ)
    delta = 1e4 * 1e-6
    for p, v in zip(positions, values):
        assert p == pytest.approx((math.log10(v + delta) - math.log10(delta))
                                  / (math.log10(1e4 + delta) - math.log10(delta)))


def test_the_terminal_log_colour_bar_prints_numbers(run):
    text = run("plot", *PLOTS["log heat map"], "--width", "64", "--height", "14").stdout
    assert text.splitlines()[-1].split() == ["0.1", "10", "1e3"]


def test_the_images_log_colour_bar_has_numbers(run, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "r.svg"
    assert run("plot", *PLOTS["log heat map"], "-o", str(path)).exit_code == 0
    svg = path.read_text(encoding="utf-8")
    assert "f − min f (log scale" in svg
    for number in (">0.1<", ">10<", ">1e3<"):
        assert number in svg
