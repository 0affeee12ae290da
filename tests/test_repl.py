"""gradcli repl: the session's language (definitions, the point, commands), its script mode, and
the interactive session driven in a real pseudo-terminal (pexpect): typing, Tab, history across
sessions, Ctrl-C, Ctrl-D, the toolbar.

Expected numbers come from mpmath, never from gradcli's own output.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time

import mpmath
import pytest

from gradcli.cli import _run_args, main
from gradcli.repl import COMMANDS, Session, call_at, history_path, incomplete, run_script, start

try:
    import pexpect
except ImportError:  # the pseudo-terminal tests need it (it is in the test extra)
    pexpect = None
in_a_terminal = pytest.mark.skipif(pexpect is None, reason="pexpect is not installed")

GRADCLI = os.path.join(os.path.dirname(sys.executable), "gradcli")
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]|\r|\x08")
X, Y = mpmath.mpf(2), mpmath.mpf(3)
F = mpmath.log(X) + X * Y - mpmath.sin(Y)  # log(x)+x*y-sin(y) at (2, 3)
DFDX, DFDY = 1 / X + Y, X - mpmath.cos(Y)


def numbers(text: str) -> dict[str, float]:
    """``label = number`` lines (eval's result, a line of who) as label -> number: compared with
    mpmath's values to 1e-11, so the test does not depend on how many digits are printed."""
    found = {}
    for line in text.splitlines():
        match = re.fullmatch(r"(\S+)\s*=.*?= ([-+0-9.e]+)|(\S+)\s*= ([-+0-9.e]+)", line.strip())
        if match:
            found[match.group(1) or match.group(3)] = float(match.group(2) or match.group(4))
    return found


def agree(found: dict, expected: dict) -> bool:
    return found.keys() >= expected.keys() and all(
        abs(found[k] - float(v)) <= 1e-11 * max(1, abs(float(v))) for k, v in expected.items())


def recorded() -> tuple[Session, list]:
    calls: list = []
    return Session(run=lambda args: calls.append(args) or 0, out=calls.append,
                   err=lambda text: calls.append(("err", text))), calls


# -- the session's language ------------------------------------------------------------------------

def test_definitions_are_sent_after_what_they_read():
    s, calls = recorded()
    for line in ["u = x*y", "g = log(x) + u", "f = g - sin(y)", "at x=2, y=3", "trace f"]:
        assert s.execute(line) == 0
    assert calls[-1] == ["eval", "u = x*y\ng = log(x) + u\nf = g - sin(y)", "--at",
                         "x=2.0,y=3.0", "--trace"]


@pytest.mark.parametrize("line, args", [
    ("check f", ["eval", "f = x^2*y", "--at", "x=2.0,y=3.0", "--check"]),
    ('expect f x="2*x*y"', ["eval", "f = x^2*y", "--at", "x=2.0,y=3.0", "--expect", "x=2*x*y"]),
    ("hessian f", ["hessian", "f = x^2*y", "--at", "x=2.0,y=3.0"]),
    ("diff f x", ["diff", "f = x^2*y", "--wrt", "x"]),
    ("diff f", ["diff", "f = x^2*y"]),
    ("graph f", ["graph", "f = x^2*y", "--at", "x=2.0,y=3.0"]),
    ("plot f x=-3:3", ["plot", "f = x^2*y", "--over", "x=-3:3", "--at", "y=3.0"]),
    ("f + 1", ["eval", "f = x^2*y\nf + 1", "--at", "x=2.0,y=3.0"]),
    ("jacobian f, x*y", ["eval", "f = x^2*y\nf\nx*y", "--at", "x=2.0,y=3.0"]),
    ("functions", ["functions"]),
])
def test_each_command_runs_the_gradcli_command_of_its_name(line, args):
    s, calls = recorded()
    s.execute("f = x^2*y")
    s.execute("x = 2")
    s.execute("y = 3")
    assert s.execute(line) == 0
    assert calls[-1] == args


def test_digits_and_json_pass_through():
    s, calls = recorded()
    s.execute("at x=1")
    s.execute("digits 30")
    s.execute("json on")
    s.execute("x^2")
    assert calls[-1] == ["eval", "x^2", "--at", "x=1.0", "--digits", "30", "--json"]


def test_an_input_may_step_from_its_own_value():
    s, _ = recorded()
    s.execute("at x=2")
    s.execute("x -= 0.5*x")  # a gradient-descent step, say
    assert s.point == {"x": 1.0}
    s.execute("x = pi/4")
    assert s.point["x"] == float(mpmath.pi / 4)


def test_a_value_is_echoed_as_typed_and_help_and_who_are_two_aligned_columns():
    s, calls = recorded()
    s.execute("at x=pi/3, y=2")
    assert calls[-1] == "at x = pi/3, y = 2"
    s.execute("f = x*y")
    s.execute("help")
    rows = [line for line in calls[-1].splitlines() if "  " in line]
    assert len({len(line) - len(line.split("  ")[-1].lstrip()) for line in rows}) == 1
    assert len(rows) == len(COMMANDS) + 2


def test_the_toolbar_fits_the_terminal():
    from gradcli.repl import toolbar_text
    s, _ = recorded()
    s.execute("at alpha=1.25, beta=2.5, gamma=0.75")
    for width in (50, 80, 120):
        text = toolbar_text(s, "", {}, width)
        assert len(text) < width and text.startswith(" at alpha=1.25")
    assert "Ctrl-D leaves" in toolbar_text(s, "", {}, 120)


@pytest.mark.parametrize("lines, words", [
    (["f = x", "g = f", "f = g"], "f depend on itself (through g)"),
    (["f = f + 1"], "reads f itself"),
    (["at x=1", "x -= 0.1*(1/x+y)"], "needs a value for y"),
    (["f = x*y", "f"], "no value for x, y"),
    (["foo bar"], "no value for foo, bar"),
    (["at x=1, y"], "at"),
    (["clear nothing"], "nothing is not defined"),
    (["digits many"], "whole number"),
    (["plot x^2"], "plot f x=-3:3"),
])
def test_mistakes_are_reported_and_the_session_goes_on(lines, words):
    s, calls = recorded()
    codes = [s.execute(line) for line in lines]
    assert codes[-1] == 2
    errors = [c[1] for c in calls if isinstance(c, tuple)]
    assert words in errors[-1]
    assert s.execute("x^2 + 0*y") in (0, 2)  # still answering


def test_who_lists_the_point_and_each_definition_with_its_value():
    s, calls = recorded()
    for line in ["f = log(x)+x*y-sin(y)", "g = f*z", "at x=2, y=3"]:
        s.execute(line)
    s.execute("who")
    lines = calls[-1].splitlines()
    assert lines[:2] == ["x = 2", "y = 3"] and lines[3] == "g = f*z" + " " * 17 + "needs z"
    assert lines[2].startswith("f = log(x)+x*y-sin(y)   = ") and agree(numbers(lines[2]), {"f": F})
    s.execute("clear g x")
    assert list(s.definitions) == ["f"] and s.point == {"y": 3.0}


def test_the_value_and_gradient_are_eval_s(capsys):
    s = Session(run=_run_args)
    for line in ["f = log(x)+x*y-sin(y)", "at x=2, y=3"]:
        s.execute(line)
    capsys.readouterr()
    assert s.execute("f") == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == ["f", "∂f/∂x", "∂f/∂y"]
    assert agree(numbers(out), {"f": F, "∂f/∂x": DFDX, "∂f/∂y": DFDY})


def test_a_numerical_failure_is_exit_1_and_bad_input_2(capsys):
    s = Session(run=_run_args)
    s.execute("at x=2")
    assert s.execute("log(-x)") == 2  # outside the domain: bad input, as in eval
    assert s.execute('expect x^2 x="3*x"') == 1  # a formula that disagrees: a failed check
    assert "domain error" in capsys.readouterr().err


def test_help_lists_every_command_and_quit_leaves_a_script():
    s, calls = recorded()
    s.execute("help")
    assert all(f"\n{name}" in "\n" + calls[-1] for name in COMMANDS)
    assert run_script(s, ["at x=1\n", "quit\n", "log(-x)\n"], calls.append) == 0  # never ran


def test_continuation_and_the_call_under_the_cursor():
    assert incomplete("sin(x") and incomplete("x +") and incomplete("f =")
    assert not incomplete("sin(x)") and not incomplete("x + 1  # a comment (")
    assert call_at("atan2(x, sin(y") == "sin" and call_at("atan2(x, (y") == "atan2"
    assert call_at("sin(x) + ") is None


def test_colours_come_from_the_grammar_s_terminals():
    from gradcli.repl import _catalogue, _token_pattern, token_styles
    s, _ = recorded()
    s.execute("f = x^2")
    runs = token_styles("trace f + sin(2.5e3) # why", True, s, _catalogue(), _token_pattern())
    assert [(k.removeprefix("class:"), t) for k, t in runs if t.strip()] == [
        ("command", "trace"), ("defined", "f"), ("plus", "+"), ("function", "sin"),
        ("lpar", "("), ("number", "2.5e3"), ("rpar", ")"), ("comment", "# why")]
    assert token_styles("x = 1 $", False, s, {}, _token_pattern())[-1] == ("class:rest", "$")


def test_history_lives_in_the_data_directory():
    assert history_path({"XDG_DATA_HOME": "/data", "HOME": "/h"}) == "/data/gradcli/history"
    assert history_path({"XDG_DATA_HOME": "rel", "HOME": "/h"}) == "/h/.local/share/gradcli/history"
    assert history_path({}) is None  # no absolute place: kept in memory


def test_a_history_folder_others_can_write_to_is_not_used(tmp_path, capsys):
    FileHistory = pytest.importorskip("prompt_toolkit.history").FileHistory
    from gradcli.repl import open_history
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    assert not isinstance(open_history(str(shared / "history")), FileHistory)
    assert "not yours alone" in capsys.readouterr().err
    assert isinstance(open_history(str(tmp_path / "own" / "history")), FileHistory)


def test_without_prompt_toolkit_the_message_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "prompt_toolkit", None)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    from gradcli.errors import InputError
    with pytest.raises(InputError) as caught:
        start(lambda args: 0)
    assert caught.value.hint == 'pip install "gradcli[interactive]"'


def test_eval_imports_neither_prompt_toolkit_nor_textual():
    code = ("import sys; from gradcli.cli import main\n"
            "try: main(['eval', 'x*x', '--at', 'x=3'])\nexcept SystemExit: pass\n"
            "print(sorted(m for m in ('prompt_toolkit', 'textual', 'pexpect') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.splitlines()[-1] == "[]"


# -- script mode ---------------------------------------------------------------------------------------

LESSON = """# a lesson
f = log(x)+x*y-sin(y)
at x=2, y=3
f
g = (f +
     1)
log(-x)
who
"""


def test_a_script_runs_every_line_and_fails_after_all(tmp_path):
    lesson = tmp_path / "lesson.txt"
    lesson.write_text(LESSON, encoding="utf-8")
    with open(lesson, encoding="utf-8") as stdin:
        done = subprocess.run([GRADCLI, "repl"], stdin=stdin, capture_output=True, text=True,
                              timeout=60, env=dict(os.environ, NO_COLOR="1"))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[:5] == [">>> # a lesson", ">>> f = log(x)+x*y-sin(y)", ">>> at x=2, y=3",
                         "at x = 2, y = 3", ">>> f"]
    assert agree(numbers("\n".join(lines[5:8])), {"f": F, "∂f/∂x": DFDX, "∂f/∂y": DFDY})
    assert ">>> g = (f +" in lines and "...      1)" in lines
    assert re.match(r"g = \(f \+ 1\) +  = ", lines[-1])  # who ran after the failure
    assert agree(numbers(lines[-1]), {"g": F + 1})
    assert "log(-2) is outside the domain of log" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_script_that_goes_well_is_exit_0(run, tmp_path):
    lesson = tmp_path / "ok.txt"
    lesson.write_text("at x=3\nx*x\n", encoding="utf-8")
    result = run("repl", str(lesson))
    assert result.exit_code == 0
    assert agree(numbers(result.output), {"f": 9, "∂f/∂x": 6})


def test_a_script_is_not_read_as_one_expression(run, tmp_path):
    """Its lines run one by one, each warned about once: the script's whole text was parsed
    as a program too, and 1/2x's reading warned twice."""
    lesson = tmp_path / "warned.txt"
    lesson.write_text("x = 4\n1/2x\n", encoding="utf-8")
    result = run("repl", str(lesson))
    assert result.exit_code == 0
    assert agree(numbers(result.stdout), {"f": 2, "∂f/∂x": 0.5})  # (1/2)*x at 4, as read
    assert result.stderr.count("warning: 1/2x is read as (1/2)*x") == 1, result.stderr


# -- in a real terminal ----------------------------------------------------------------------------------

class Terminal:
    """``gradcli repl`` in a pseudo-terminal; :meth:`until` reads until text shows (escapes
    dropped), so no test sleeps to wait."""

    def __init__(self, data_home, columns: int = 100):
        env = dict(os.environ, XDG_DATA_HOME=str(data_home), TERM="xterm", NO_COLOR="1",
                   COLUMNS=str(columns), LINES="30")
        self.child = pexpect.spawn(GRADCLI, ["repl"], env=env, dimensions=(30, columns),
                                   encoding="utf-8", timeout=20)
        self.seen = ""
        self.until("\n>>>")

    def until(self, *texts: str, timeout: float = 20) -> str:
        """Read until ``texts`` have shown, in this order; what showed, escapes dropped."""
        end, buffer = time.monotonic() + timeout, ""
        while True:
            plain, at = ANSI.sub("", buffer), 0
            for text in texts:
                at = plain.find(text, at)
                if at < 0:
                    break
                at += len(text)
            else:
                self.seen += plain
                return plain
            try:
                new = self.child.read_nonblocking(4096, timeout=max(0.05, end - time.monotonic()))
                if "\x1b[6n" in new:  # where is the cursor? (a terminal answers; the toolbar waits)
                    self.child.send("\x1b[1;1R")
                buffer += new
            except (pexpect.TIMEOUT, pexpect.EOF):
                raise AssertionError(f"{texts!r} never showed; the terminal showed {plain!r}")

    def line(self, text: str, *shown: str) -> str:
        """Type ``text`` and Enter; wait for ``shown`` and the next prompt."""
        self.child.send(text + "\r")
        return self.until(*shown, "\n>>>")

    def leave(self) -> int:
        self.child.sendcontrol("d")
        self.child.expect(pexpect.EOF)
        self.child.close()
        return self.child.exitstatus


@in_a_terminal
def test_a_session_in_a_terminal(tmp_path):
    """One session (each start costs a second): typing, the caret, a continued line, Tab, the
    toolbar, Ctrl-C, Ctrl-D."""
    t = Terminal(tmp_path)
    t.line("f = log(x)+x*y-sin(y)")
    t.line("at x=2, y=3")
    shown = t.line("f", "∂f/∂y = ")
    assert agree(numbers(shown.rpartition(">>> f")[2]), {"f": F, "∂f/∂x": DFDX, "∂f/∂y": DFDY})
    t.line("foo $", "  foo $\n      ^")  # the caret under the input; the session goes on
    t.child.send("(3 +\r")  # a bracket left open continues the line
    t.until("\n...")
    t.line("4)", "f = 7.000")
    # Tab completes a definition, a function, a command
    t.line("velocity = 2*t")
    t.child.send("velo\t")
    t.until("velocity")
    t.child.send(" + sigm\t")
    t.until("sigmoid")
    t.line("(t)", "no value for t")
    t.child.send("hess\t")
    t.until("hessian")
    t.child.sendcontrol("c")  # Ctrl-C drops the line
    t.until("\n>>>")
    # the toolbar: the rule of the function being typed
    t.child.send("atan2(")
    t.child.sendcontrol("l")  # a redraw of the whole screen (else only the changed cells are sent)
    t.until("atan2(a, b)   d/da = b/hypot(a, b)^2, d/db = -a/hypot(a, b)^2")
    t.child.sendcontrol("c")
    t.until("\n>>>")
    t.line("1 + 1", "f = 2.000")
    # a pasted block runs line by line, as typed lines do; the output keeps its own name
    t.child.send("\x1b[200~w = 2\r\nloss = w^2 + 1\r\n\x1b[201~")
    t.until("\n>>>")
    t.line("loss", "∂loss/∂w = 4.000")
    assert "write 2*" not in t.seen
    assert t.leave() == 0  # Ctrl-D
    assert "Traceback" not in t.seen


@in_a_terminal
def test_history_is_kept_across_sessions_and_private(tmp_path):
    first = Terminal(tmp_path)
    first.line("f = x^3 + 1")
    first.leave()
    path = tmp_path / "gradcli" / "history"
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    second = Terminal(tmp_path)
    second.child.send("\x1b[A")  # Up: the last line of the session before
    second.until("f = x^3 + 1")
    second.child.sendcontrol("c")
    second.until("\n>>>")
    second.child.sendcontrol("r")  # Ctrl-R searches it
    second.child.send("x^3")
    second.until("f = x^3 + 1")
    second.child.send("\r")  # takes the line found
    second.child.send("\r")  # and runs it: f is defined again
    second.until("\n>>>")
    second.line("at x=2")
    second.line("f", "f     = 9.000")
    assert second.leave() == 0


def test_a_large_program_in_a_session_does_not_end_it(tmp_path):
    """A session's command on a large program is not the session's last act: the lines after
    it still run.
    51,000 terms x*y (102,000 nodes) at (0.5, 3): f = 51000·1.5, ∂f/∂x = 51000·3."""
    script = tmp_path / "large.txt"
    script.write_text("f = " + " + ".join(["x*y"] * 51_000) + "\nat x=0.5, y=3\nf\nx - y\n",
                      encoding="utf-8")
    done = subprocess.run([GRADCLI, "repl", str(script)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, NO_COLOR="1"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[4:7] == ["f     = 76500.00000000", "∂f/∂x = 153000.0000000",
                          "∂f/∂y = 25500.00000000"]
    assert lines[7:] == [">>> x - y", "f     = -2.500000000000", "∂f/∂x = 1.000000000000",
                         "∂f/∂y = -1.000000000000"]


def test_a_line_is_coloured_in_one_pass_and_a_paste_is_shown_plain():
    """Each name's neighbours are looked at where it ends (no slice of the rest of the line per
    name: a pasted line was coloured in quadratic time), and a line longer than MAX_COLOURED
    is one plain run (prompt_toolkit redraws every run at every key)."""
    from gradcli.repl import MAX_COLOURED, _catalogue, _token_pattern, token_styles
    s, functions, pattern = Session(run=lambda a: 0), _catalogue(), _token_pattern()
    words = "  at x=1, y=2"
    runs = token_styles(words, True, s, functions, pattern)
    assert ("class:command", "at") in runs and ("class:name", "x") in runs
    assert ("class:name", "at") in token_styles("at = 3", True, s, functions, pattern)
    assert ("class:name", "at") in token_styles("x + at", True, s, functions, pattern)
    assert ("class:function", "sin") in token_styles("x sin (x)", False, s, functions, pattern)
    long = "sin(x) + " * (MAX_COLOURED // 9 + 1) + "x"
    assert len(long) > MAX_COLOURED
    short = token_styles(long[:MAX_COLOURED], False, s, functions, pattern)
    assert short[0] == ("class:function", "sin") and "".join(t for _, t in short) == \
        long[:MAX_COLOURED]
    assert token_styles(long, True, s, functions, pattern) == [("", long)]


@in_a_terminal
def test_a_long_paste_is_taken_and_runs(tmp_path):
    """A 200 kB expression pasted (bracketed, as a terminal sends a paste) runs, and so does a
    line after it; a pasted line dropped with Ctrl-C leaves the session as it was."""
    t = Terminal(tmp_path)
    t.line("at x=1.5")
    terms = 100_000
    t.child.send("\x1b[200~" + "+".join(["x"] * terms) + "\r\n\x1b[201~")
    shown = t.until("∂f/∂x = ", "\n>>>", timeout=180)
    assert agree(numbers(shown), {"f": 1.5 * terms, "∂f/∂x": terms})  # x added 100,000 times
    t.child.send("\x1b[200~" + "x*2+" * 50_000 + "\x1b[201~")  # no Enter: still being edited
    t.child.sendcontrol("c")
    t.until("\n>>>", timeout=180)
    t.line("x^2", "∂f/∂x = 3.000")
    assert "Traceback" not in t.seen
    assert t.leave() == 0


@pytest.mark.parametrize("line, hint", [
    ("eval 1/2x --at x=4", "hint: the repl takes no shell options: at x=4, then 1/2x"),
    ("gradcli trace f --at x=2,y=3", "at x=2, y=3, then trace f"),
    ("eval x^2 --at=x=4 --digits 5", "at x=4, then x^2 ("),
])
def test_a_shell_command_line_is_told_the_repl_s_way(line, hint):
    """A line typed as at the shell is still a syntax error (exit 2, caret), whose hint says
    how the repl asks it: the point by `at`, then the question alone."""
    s, calls = recorded()
    assert s.execute(line) == 2
    assert calls[-1][0] == "err" and "syntax error" in calls[-1][1] and hint in calls[-1][1]
    assert s.execute("x --y") in (0, 2)  # math with a double minus keeps its own error
    assert "shell options" not in str(calls[-1])
