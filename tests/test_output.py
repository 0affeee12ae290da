"""What a person sees, where they see it: a real terminal at 40, 60, 80 and 120 columns, a pipe,
an ASCII or cp1252 stream, a closed pipe, a full disk, closed streams, Ctrl-C (docs/output.md).

The numbers checked come from ``--json`` (the program's exact values), formatted the way the
human output promises to print them (12 digits after the point; errors to two figures), and
must appear whole, as a token on one line, in the human output at every width.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from gradcli.cli import main
from gradcli.views.layout import Gap, Sheet, narrowest, plain_text, render, wrap
from gradcli.views.notation import adjoint, needs_ascii, tangent, to_ascii

SEED = "log(x)+x*y-sin(y)"
AT = "x=2,y=3"
EXPECT = ["--expect", "x=1/x+y", "--expect", "y=x+cos(y)"]  # the second is wrong: a FAIL row
WIDTHS = [40, 60, 80, 120]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def script() -> str:
    found = shutil.which("gradcli", path=os.path.dirname(sys.executable)) or shutil.which("gradcli")
    if not found:
        pytest.fail("the gradcli console script is not installed (pip install -e .)")
    return found


def environment(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update({"TERM": "xterm-256color", "PYTHONIOENCODING": "utf-8", **extra})
    return env


def in_terminal(args: list[str], width: int) -> tuple[int, str, str]:
    """Run the console script with its standard output on a pseudo-terminal ``width`` columns
    wide; (exit code, what the terminal received without colour codes, standard error)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, width, 0, 0))
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST  # no "\n" -> "\r\n": the bytes as gradcli wrote them
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    proc = subprocess.Popen([script(), *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=subprocess.PIPE, env=environment())
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: the program closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    proc.wait(timeout=120)
    return proc.returncode, ANSI.sub("", b"".join(chunks).decode()), err


def piped(args: list[str], **env) -> subprocess.CompletedProcess:
    return subprocess.run([script(), *args], capture_output=True, env=environment(**env),
                          timeout=120)


def number(x: float) -> str:
    """A value as the tables print it (13 significant digits, correctly rounded: written out
    here independently, with Python's %g)."""
    if x == 0:
        return "0"
    text = f"{x:#.13g}"
    mantissa, e, exponent = text.partition("e")
    return mantissa + (f"e{int(exponent)}" if e else "")


def error(x: float) -> str:
    return "0" if x == 0 else f"{x:.1e}"


def whole(token: str, text: str) -> bool:
    """``token`` appears in ``text`` with no digit or point glued to either side."""
    return re.search(r"(?<![\d.])" + re.escape(token) + r"(?![\d])", text) is not None


def json_of(*args) -> dict:
    result = CliRunner().invoke(main, [*args, "--json"])
    return json.loads(result.stdout)


def eval_numbers() -> list[str]:
    data = json_of("eval", SEED, "--at", AT, "--trace", *EXPECT)
    numbers = [data["value"], *data["gradient"].values()]
    trace = data["trace"]
    numbers += [row["value"] for row in trace["forward"]]
    for c in trace["contributions"]:
        numbers += [c["upstream"], c["local"], c["contribution"]]
    numbers += list(trace["adjoints"].values())
    tokens = [number(x) for x in numbers]
    for row in data["check"]["rows"]:
        tokens += [number(row["ad"]), number(row["numeric"]), error(row["abs_error"]),
                   error(row["rel_error"])]
        tokens += [number(row["expected"]["value"]),
                   number(row["expected"]["value"] - row["ad"])]
    return tokens


def hessian_numbers() -> list[str]:
    data = json_of("hessian", SEED, "--at", AT)
    values = [data["value"], *data["gradient"].values()] + [v for row in data["hessian"]
                                                            for v in row]
    return [number(x) for x in values]


def test_the_expected_numbers_are_what_the_seed_example_computes():
    # derived by hand: f = log 2 + 6 - sin 3, df/dx = 1/x + y, df/dy = x - cos y,
    # Hessian [[-1/x^2, 1], [1, sin y]]
    tokens = eval_numbers()
    for x in (math.log(2) + 6 - math.sin(3), 3.5, 2 - math.cos(3)):
        assert number(x) in tokens
    assert set(hessian_numbers()) >= {number(-0.25), number(1), number(math.sin(3))}


@pytest.mark.parametrize("command", ["eval", "hessian"])
def test_every_number_is_whole_at_every_width_and_piped(command):
    if command == "eval":
        args, tokens = ["eval", SEED, "--at", AT, "--trace", *EXPECT], eval_numbers()
    else:
        args, tokens = ["hessian", SEED, "--at", AT], hessian_numbers()
    expected_code = 1 if command == "eval" else 0  # the wrong --expect formula fails the check
    outputs = {}
    for width in WIDTHS:
        code, out, err = in_terminal(args, width)
        assert code == expected_code, err
        assert "Traceback" not in out + err
        long = [line for line in out.splitlines() if cell_len(line) > width]
        assert not long, f"lines wider than {width}: {long}"
        outputs[width] = out
    result = piped(args)
    assert result.returncode == expected_code
    outputs["piped"] = result.stdout.decode()
    for where, out in outputs.items():
        missing = [t for t in tokens if not whole(t, out)]
        assert not missing, f"{command} at {where}: not shown whole: {missing}"
        if command == "eval":  # no column dropped: every header and the failing row's status
            for header in ("your formula", "status", "FAIL", "contribution", "to"):
                assert header in out, (where, header)


def test_piped_output_is_not_shaped_by_a_pretend_terminal():
    out = piped(["eval", SEED, "--at", AT, "--check", *EXPECT]).stdout.decode()
    table = [line for line in out.splitlines() if line.startswith(("┏", "│"))]
    assert table and len({len(line) for line in table}) == 1  # one box, its natural width
    assert len(table[0]) > 80  # wider than any terminal guess would allow
    assert all(line == line.rstrip() for line in out.splitlines())


def test_width_option_sets_the_layout_on_any_command():
    runner = CliRunner()
    for args in (["eval", SEED, "--at", AT, "--trace", "--check"], ["hessian", SEED, "--at", AT],
                 ["functions"], ["graph", SEED, "--at", AT]):
        out = runner.invoke(main, [*args, "--width", "50"]).stdout
        assert max(cell_len(line) for line in out.splitlines()) <= 50, args
    diff = runner.invoke(main, ["diff", SEED, "--width", "40"])
    assert diff.exit_code == 0 and diff.stdout == "# ∂f/∂x\n1/x + y\n# ∂f/∂y\nx - cos(y)\n"


# -- the graph -------------------------------------------------------------------------------------

def test_graph_line_count_does_not_depend_on_the_width():
    args = ["graph", SEED, "--at", AT, "--layout", "lr"]  # the layout asked for: cut, not changed
    piped_out = piped(args)
    assert piped_out.returncode == 0
    lines = piped_out.stdout.decode().splitlines()
    assert max(len(line) for line in lines) > 60  # so 40 and 60 columns must cut it
    for width in (40, 60, 120):
        code, out, err = in_terminal(args, width)
        assert code == 0 and "Traceback" not in err
        shown = out.splitlines()
        assert len(shown) == len(lines), width
        assert all(len(line) <= width for line in shown)
        assert [line[:width].rstrip() for line in lines] == [line.rstrip() for line in shown]
        if width < 89:
            assert f"cut at {width}" in err and "v5" in err  # the output box is what is cut
        else:
            assert "cut" not in err


def test_graph_top_to_bottom_fits_a_narrow_terminal():
    out = CliRunner().invoke(main, ["graph", SEED, "--at", AT, "--layout", "tb"]).stdout
    assert max(len(line) for line in out.splitlines()) <= 40
    boxes, edges = read_drawing_tb(out)
    assert sorted(boxes) == ["v1", "v2", "v3", "v4", "v5", "x", "y"]
    assert sorted(edges) == sorted([("x", "v1", "0.5"), ("x", "v2", "3"), ("y", "v2", "2"),
                                    ("y", "v3", "-0.99"), ("v1", "v4", "1"), ("v2", "v4", "1"),
                                    ("v4", "v5", "1"), ("v3", "v5", "-1")])


def read_drawing_tb(text):
    """Boxes and (from, to, label) edges of a top-to-bottom drawing (tests/drawn.py reads both
    layouts, checking that every line joins and reaches the right port)."""
    from drawn import read_drawing
    boxes, edges = read_drawing(text)
    return boxes, [(a, b, label) for a, b, _, label, _ in edges]


def test_wide_characters_keep_the_boxes_aligned():
    out = CliRunner().invoke(main, ["graph", "log(变量)+变量*θ"]).stdout
    from rich.cells import cell_len
    for line in out.splitlines():
        for k, ch in enumerate(line):
            if ch in "╮╗":  # every top-right corner sits above its box's right side
                column = cell_len(line[:k])
                below = out.splitlines()[out.splitlines().index(line) + 1]
                chars, used = iter(below), 0
                for c in chars:
                    if used == column:
                        assert c in "│║├╟", (line, below)
                        break
                    used += cell_len(c)


# -- notation and encodings --------------------------------------------------------------------

@pytest.mark.parametrize("name, bar, dot, ascii_bar", [
    ("v5", "v\u03045", "v\u03075", "vbar5"),
    ("x", "x\u0304", "x\u0307", "bar(x)"),
    ("rate", "r\u0305a\u0305t\u0305e\u0305", "(rate)\u02d9", "bar(rate)"),
    ("x1", "x\u03051\u0305", "(x1)\u02d9", "bar(x1)"),
])
def test_marks_cover_the_whole_name(name, bar, dot, ascii_bar):
    assert adjoint(name) == bar and tangent(name) == dot
    assert to_ascii(adjoint(name)) == ascii_bar
    assert to_ascii(tangent(name)) == ascii_bar.replace("bar", "dot")


def test_ascii_forms():
    assert to_ascii("∂f/∂x = 3") == "df/dx = 3"
    assert to_ascii("╭─╮│╰╯┏━┓▶") == "+-+|+++-+>"
    assert to_ascii("θ + é", "cp1252") == "\\u03b8 + é"  # what the stream can write is kept
    assert to_ascii("θ") == "\\u03b8"
    assert needs_ascii("cp1252") and needs_ascii("ascii") and not needs_ascii("utf-8")


def test_multi_letter_adjoints_in_the_trace_tables():
    out = CliRunner().invoke(main, ["eval", "rate*x1", "--at", "rate=2,x1=3", "--trace"]).stdout
    assert "r\u0305a\u0305t\u0305e\u0305" in out and "x\u03051\u0305" in out
    assert "r\u0304ate" not in out and "x\u03041" not in out


@pytest.mark.parametrize("encoding", ["cp1252", "ascii"])
def test_a_stream_that_cannot_show_the_notation_gets_ascii(encoding):
    result = piped(["eval", "x*y", "--at", "x=1,y=2", "--trace"], PYTHONIOENCODING=encoding)
    assert result.returncode == 0 and b"Traceback" not in result.stderr
    out = result.stdout.decode(encoding)
    assert out.isascii()
    assert "df/dx = 2.000000000000" in out and "vbar1" in out and "bar(x)" in out
    assert "+------" in out and "| v1 = x * y |" in out
    result = piped(["eval", "--help"], PYTHONIOENCODING=encoding)  # help text holds ∂
    assert result.returncode == 0 and b"Traceback" not in result.stderr
    runner = CliRunner(charset=encoding)
    for args in (["graph", SEED, "--at", AT], ["diff", "x*y*θ"], ["functions"],
                 ["hessian", SEED, "--at", AT, "--check"], ["eval", "x*y", "--at", "x=1,y=2",
                                                            "--mode", "forward", "--trace"],
                 # several outputs: the Jacobian, a VJP (wᵀJ), every sweep, the graph's marks
                 ["eval", "x^2; x*y", "--at", "x=1,y=2", "--trace", "--check"],
                 ["eval", "x^2; x*y", "--at", "x=1,y=2", "--seed", "f1=1,f2=2", "--trace"],
                 ["eval", "x^2; x*y", "--at", "x=1,y=2", "--direction", "x=1", "--trace"],
                 ["graph", "x^2; x*y", "--at", "x=1,y=2"], ["diff", "x^2; x*y"],
                 ["hessian", "x^2; x*y", "--at", "x=1,y=2"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0 and result.exception is None, (args, result.output)
        assert result.stdout_bytes.isascii(), args
        if "θ" not in " ".join(args):  # gradcli's own notation has an ASCII spelling, not an escape
            assert b"\\u" not in result.stdout_bytes, (args, result.stdout)
    assert "# df/d\\u03b8\nx*y" in runner.invoke(main, ["diff", "x*y*θ"]).stdout


def test_ascii_flag_anywhere():
    out = CliRunner().invoke(main, ["graph", SEED, "--ascii"]).stdout
    assert out.isascii() and "+-" in out and "->|" in out.replace(">|", "->|")
    out = CliRunner().invoke(main, ["eval", SEED, "--at", AT, "--check", "--ascii"]).stdout
    assert out.isascii() and "ok AD agrees" in out


# -- pipes and streams ---------------------------------------------------------------------------

def test_closed_pipe_ends_quietly_with_141():
    big = "+".join(f"sin(x*{k})" for k in range(300))  # output far larger than a pipe holds
    result = subprocess.run(["bash", "-c", f'"{script()}" eval "$0" --at x=2 --trace '
                             '--max-rows 0 | head -1; echo "status ${PIPESTATUS[0]}" >&2', big],
                            capture_output=True, env=environment(), timeout=120)
    assert result.stdout.decode().startswith("read as: ")  # eval --trace's first line
    assert result.stderr.decode().strip() == "status 141", result.stderr


def test_full_disk_is_an_io_error():
    with open("/dev/full", "w") as full:
        result = subprocess.run([script(), "eval", SEED, "--at", AT, "--trace"], stdout=full,
                                stderr=subprocess.PIPE, env=environment(), timeout=120)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert err.strip().splitlines()[0] == ("io error: cannot write to standard output: "
                                           "No space left on device")
    assert "Traceback" not in err and "Exception ignored" not in err


@pytest.mark.parametrize("redirect, code, words", [
    ("<&-", 2, "input error: standard input is closed"),
    (">&-", 2, "io error: standard output is closed"),
])
def test_closed_standard_streams(redirect, code, words):
    result = subprocess.run(["bash", "-c", f'exec "{script()}" eval - --at x=1 {redirect}'],
                            input=b"x*x", capture_output=True, env=environment(), timeout=120)
    assert result.returncode == code
    assert words in result.stderr.decode() and "Traceback" not in result.stderr.decode()


def test_ctrl_c_exits_130_without_a_traceback():
    proc = subprocess.Popen([script(), "eval", "-", "--at", "x=1"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment())
    syscall = Path(f"/proc/{proc.pid}/syscall")
    try:
        for _ in range(6000):  # until gradcli is blocked reading standard input (read, fd 0)
            try:
                if syscall.read_text().startswith("0 0x0 "):
                    break
            except OSError:
                proc.kill()
                pytest.skip("/proc/PID/syscall is not readable here")
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert b"Traceback" not in err and b"Aborted" not in err


# -- exports ---------------------------------------------------------------------------------------

def test_text_export_does_not_depend_on_the_terminal(tmp_path):
    narrow, piped_file = tmp_path / "narrow.txt", tmp_path / "piped.txt"
    code, _, err = in_terminal(["eval", SEED, "--at", AT, "--trace", "--export", str(narrow)], 40)
    assert code == 0, err
    assert piped(["eval", SEED, "--at", AT, "--trace", "--export", str(piped_file)]).returncode == 0
    text = narrow.read_text(encoding="utf-8")
    assert text == piped_file.read_text(encoding="utf-8")
    assert all(line == line.rstrip() for line in text.splitlines())
    assert "┏" in text and max(cell_len(line) for line in text.splitlines()) > 40  # natural
    at50 = tmp_path / "at50.txt"
    CliRunner().invoke(main, ["eval", SEED, "--at", AT, "--trace", "--width", "50", "--export",
                              str(at50)])
    assert max(cell_len(line) for line in at50.read_text(encoding="utf-8").splitlines()) <= 50


def test_svg_export_is_self_contained_and_light(tmp_path):
    path = tmp_path / "t.svg"
    CliRunner().invoke(main, ["eval", SEED, "--at", AT, "--trace", "--export", str(path)])
    svg = path.read_text(encoding="utf-8")
    assert "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "@font-face" not in svg and "monospace" in svg
    assert 'fill="#ffffff"' in svg  # a white background


def test_json_export(tmp_path):
    path = tmp_path / "t.json"
    result = CliRunner().invoke(main, ["eval", SEED, "--at", AT, "--json", "--export", str(path)])
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(result.stdout)
    result = CliRunner().invoke(main, ["eval", SEED, "--at", AT, "--json", "--export",
                                       str(tmp_path / "t.svg")])
    assert result.exit_code == 2 and "with --json the export is JSON" in result.stderr


# -- functions ------------------------------------------------------------------------------------

def test_functions_at_80_columns_and_piped():
    code, out, err = in_terminal(["functions"], 80)
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    from gradcli.views.catalogue import catalogue
    from gradcli.views.layout import pieces
    for row in catalogue():  # a rule breaks only at spaces outside brackets, if at all
        for name, rule in row["derivatives"].items():
            for piece in pieces(f"{name} = {rule}", formula=True):
                assert any(piece.strip() in line for line in lines), (row["name"], piece)
    out = piped(["functions"]).stdout.decode()
    assert max(len(line) for line in out.splitlines()) <= 100
    assert all(line == line.rstrip() for line in out.splitlines())


# -- the layout rules, directly -------------------------------------------------------------------

def test_wrap_never_breaks_a_number_or_a_bracket():
    text = "0.500000000000 + 3.000000000000 + sin(a, b) - 12.5"
    for width in range(narrowest(text), 40):
        lines = wrap(text, width)
        assert " ".join(lines).split() == text.split()
        assert all(len(line) <= width for line in lines)
        for token in ("0.500000000000", "3.000000000000", "sin(a, b)", "12.5"):
            assert any(token in line for line in lines)
    assert wrap("1.000000000000 + 2", 5) == ["1.000000000000", "+ 2"]  # wider, but whole
    assert wrap("(a b c d)", 4) == ["(a b", "c d)"]  # a bracket too wide: between its words
    rule = "-(a/(hypot(a, b)*hypot(a, b)))"
    assert narrowest("d/db = " + rule, formula=True) == len(rule)


def test_a_sheet_at_every_width_keeps_every_cell():
    sheet = Sheet("Numbers")
    for header in ("name", "first value", "second value"):
        sheet.add_column(header, "left" if header == "name" else "right")
    sheet.add_row("alpha", "-1234.567890123456", "0.000000000001")
    sheet.add_row("a much longer name than the others", "2.5", "1e-300")
    sheet.add_gap(7, "--max-rows 0 shows all")
    sheet.add_row("omega", "3", "4")
    for width in [None, *range(20, 90, 3)]:
        text = plain_text(render([sheet], width))
        if width:
            assert max(len(line) for line in text.splitlines()) <= width
        for token in ("-1234.567890123456", "0.000000000001", "1e-300", "alpha", "omega",
                      "⋮ 7 rows not shown (--max-rows 0 shows all)"):
            assert token in " ".join(text.split()), (width, token)
    narrow = plain_text(render([sheet], 40))
    assert "(as records: too wide for 40 columns)" in narrow
    assert re.search(r"^first value: +2\.5$", narrow, re.M)


def test_gap_text():
    assert Gap(1).text() == "⋮ 1 row not shown" and Gap(2, "x").text() == "⋮ 2 rows not shown (x)"


def test_docs_output_shows_real_output():
    """Every ``$ gradcli ...`` example in docs/output.md prints what the page says it prints."""
    import shlex
    page = (Path(__file__).parent.parent / "docs" / "output.md").read_text(encoding="utf-8")
    examples = re.findall(r"```console\n\$ (gradcli [^\n]*)\n(.*?)```", page, re.S)
    assert len(examples) == 4
    for command, shown in examples:
        result = CliRunner().invoke(main, shlex.split(command)[1:])
        assert result.exit_code == 0, (command, result.output)
        assert [line.rstrip() for line in result.stdout.splitlines()] == shown.splitlines(), command


# -- tables are drawn by rich ---------------------------------------------------------------------

def rich_text(renderable, width: int = 300) -> str:
    """What rich itself prints for ``renderable`` (no colour), without trailing spaces."""
    import io

    from rich.console import Console
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False,
                      emoji=False, markup=False, legacy_windows=False)
    console.print(renderable)
    return "".join(line.rstrip() + "\n" for line in console.file.getvalue().splitlines())


def test_a_piped_table_is_what_rich_draws():
    """The forward trace of the seed example, piped, is the rich.table.Table written here from
    the --json values: rich's HEAVY_HEAD box, numbers right-justified, the output marked."""
    from rich import box
    from rich.table import Table
    out = piped(["eval", SEED, "--at", AT, "--trace", "--max-rows", "0"]).stdout.decode()
    data = json_of("eval", SEED, "--at", AT, "--trace")
    table = Table(box=box.HEAVY_HEAD)
    for header, justify in (("node", "left"), ("operation", "left"), ("value", "right"),
                            ("", "left")):
        table.add_column(header, justify=justify)
    for row in data["trace"]["forward"]:
        operation = row["expr"] if row["op"] == "input" else \
            f"{row['id']} = {row['expr']} = {row['step']}"
        table.add_row(row["id"], "input" if row["op"] == "input" else operation,
                      number(row["value"]), "← output" if row["id"] == "v5" else "")
    forward = out.split("Forward evaluation trace\n")[1].split("Reverse sweep")[0]
    assert forward == rich_text(table)


@pytest.mark.parametrize("width, style", [(None, "box"), (45, "box"), (40, "plain")])
def test_rows_handed_to_rich_as_columns_are_the_table_of_rows(width, style):
    """A table's one-line rows reach rich as one row of column cells (a line a row, padded):
    in colour, the text and every segment (which the SVG's id sums up) are those of the
    rich.table.Table written here a row at a time, a Text a cell in its style, rich padding
    the cells (a wrapped row as it was)."""
    import io

    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from gradcli.views.layout import _boxes, _wrapped_cell, print_page, table_widths
    rows = [(("x̄", "id"), "input", "2.0", ""),
            (("v1", "id"), "v1 = sin(x) * cos(x)", "-0.5", ("← output", "output")),
            (("变量", "id"), "v2 = v1 + x", ("1e-300", "bold"), ("", "output"))]
    sheet = Sheet("Sample")
    for header, justify, kind in (("node", "left", "text"), ("operation", "left", "text"),
                                  ("value", "right", "number"), ("", "left", "label")):
        sheet.add_column(header, justify, kind)
    for row in rows:
        sheet.add_row(*row)
    chosen, widths = table_widths(sheet, width)
    assert chosen == style and (width is None or widths[1] < len("v1 = sin(x) * cos(x)"))
    table = Table(box=box.HEAVY_HEAD, padding=(0, 1), header_style="bold", highlight=False) \
        if style == "box" else Table(box=_boxes(style, False)[0], padding=(0, 1, 0, 0),
                                     pad_edge=False, show_edge=False, header_style="bold",
                                     highlight=False)
    for column, w in zip(sheet.columns, widths):
        table.add_column(Text(column.header, justify=column.justify), justify=column.justify,
                         width=w, no_wrap=True, vertical="top")
    styles = {"id": "cyan", "output": "bold green", "bold": "bold", None: ""}

    def cell(c, w, kind):  # a wrapped row as the layout wraps it (indented without a box)
        text, name = (c, None) if type(c) is str else c
        return Text(text if cell_len(text) <= w else "\n".join(_wrapped_cell(text, w, kind, style)),
                    style=styles[name])
    for row in rows:
        table.add_row(*map(cell, row, widths, [c.kind for c in sheet.columns]))

    def console() -> Console:
        return Console(file=io.StringIO(), width=60, force_terminal=True, record=True,
                       color_system="truecolor", highlight=False, emoji=False, markup=False)
    expected, drawn = console(), console()
    expected.print(Text("Sample", style="bold"), crop=False)
    expected.print(table, crop=False)
    print_page(render([sheet], width), drawn)
    assert drawn.export_text(styles=True, clear=False) == \
        expected.export_text(styles=True, clear=False)
    assert drawn.export_svg(title="t") == expected.export_svg(title="t")


def test_natural_width_is_richs_measure():
    """The width gradcli lays a table out at is the maximum rich's Console.measure gives."""
    import io

    from rich.console import Console
    from rich.table import Table
    sheet = Sheet("t")
    sheet.add_column("name")
    sheet.add_column("value", "right")
    sheet.add_column("note", kind="text")
    sheet.add_row("θ̄ wide 变量", "-1234.567890123456", "a note with words")
    sheet.add_row("x", "1e-300", "")
    table = Table()
    for column in sheet.columns:
        table.add_column(column.header)
    for row in sheet.rows:
        table.add_row(*row)
    measured = Console(file=io.StringIO(), width=500).measure(table).maximum
    lines = plain_text(render([sheet], None)).splitlines()[1:]
    assert {cell_len(line) for line in lines} == {measured}


def sample_sheet(leading_gap: bool = False) -> Sheet:
    sheet = Sheet("Sample ∂f/∂x")
    sheet.add_column("node")
    sheet.add_column("operation", kind="text")
    sheet.add_column("value of the node", "right")  # wider than its numbers: wraps when narrow
    if leading_gap:  # the headers alone, closed, then the gap
        sheet.add_gap(5)
    sheet.add_row(("x̄", "cyan"), "input", "2.000000000000")
    sheet.add_gap(3, "--max-rows 0 shows all")
    for k in range(12):
        sheet.add_row(f"v{k}", f"v{k} = hypot(a, b) * {'sin(y) + ' * (k % 4)}x", f"{-k / 7:.12f}")
    sheet.add_gap(1)
    sheet.add_row("变量", "multi\nline", "1e-300")
    return sheet


@pytest.mark.parametrize("width, ascii, leading_gap, style", [
    (None, False, False, "box"), (None, True, False, "box"), (60, False, False, "box"),
    (48, True, False, "box"), (None, False, True, "box"), (48, False, True, "box"),
    (44, True, False, "plain"), (44, True, True, "plain"), (36, False, False, "plain"),
    (36, False, True, "plain"), (40, True, False, "tight"), (40, True, True, "tight"),
    (30, False, False, "records"), (30, True, True, "records")])
def test_a_table_meets_the_width_in_the_first_style_that_fits(width, ascii, leading_gap, style):
    """Box, then plain, then tight, then records: the one that fits, and no line wider."""
    from gradcli.views import layout
    sheet = sample_sheet(leading_gap)
    by_rich = plain_text(render([sheet], width, ascii, styled=False))
    assert "⋮ 3 rows not shown" in by_rich or ": 3 rows not shown" in by_rich
    if width:
        assert max(cell_len(line) for line in by_rich.splitlines()) <= width
    assert layout.table_widths(sheet, width, ascii)[0] == style


def test_no_private_rich_module_is_imported():
    """gradcli uses rich's public API only (rich._export_format was once read for the SVG)."""
    import ast
    package = Path(__file__).parent.parent / "gradcli"
    private = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) and not node.level else [])
            private += [f"{path.name}: {n}" for n in names
                        if n.split(".")[0] == "rich" and any(p.startswith("_") for p in
                                                             n.split("."))]
    assert not private


def test_plain_eval_does_not_import_rich_and_tables_do():
    code = ("import sys\nfrom click.testing import CliRunner\nfrom gradcli.cli import main\n"
            "r = CliRunner().invoke(main, sys.argv[1:])\nassert r.exit_code == 0, r.output\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'rich'))")
    plain = subprocess.run([sys.executable, "-c", code, "eval", SEED, "--at", AT],
                           capture_output=True, text=True, timeout=120)
    assert plain.stdout.strip() == "[]", plain.stderr
    traced = subprocess.run([sys.executable, "-c", code, "eval", SEED, "--at", AT, "--trace"],
                            capture_output=True, text=True, timeout=120)
    assert "rich.table" in traced.stdout, traced.stderr


def _rich_plain(page) -> str:
    """The page as rich prints it part by part, with no options of gradcli's: the reference."""
    import io

    from rich.console import Console
    buffer = io.StringIO()
    out = Console(file=buffer, width=page.width, color_system=None, highlight=False,
                  emoji=False, markup=False, legacy_windows=False)
    for part in page.parts:
        out.print(part, crop=False)
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())


@pytest.mark.parametrize("blocks, width", [
    (["read as: " + " + ".join(f"sin(x{k})*y{k}" for k in range(3000)), "f = 1"], None),
    (["read as: " + " + ".join(f"x{k}" for k in range(50)), "f = 1"], 40),
    ([Sheet("T", rows=[("1" * 60, "a b c")])], 24),  # records, a number wider than the width
])
def test_plain_text_prints_what_rich_prints(blocks, width):
    """A line made not to wrap that fits is printed as made, not run through rich's
    word-wrapper; what comes out is what rich's own printing of the page gives."""
    sheet = blocks[0]
    if isinstance(sheet, Sheet):
        sheet.add_column("number", "right")
        sheet.add_column("text")
    page = render(blocks, width, styled=False)
    assert plain_text(page) == _rich_plain(page)
    if isinstance(sheet, Sheet):  # records: the number is on one line, whole
        assert "  " + "1" * 60 in plain_text(page).splitlines()
    if width is None:
        assert plain_text(page).splitlines()[0] == blocks[0]
