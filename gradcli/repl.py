"""``gradcli repl``: a session that keeps definitions and a current point.

A line is a definition (``f = log(x)+x*y-sin(y)``), a value for an input (``x = 2``, or
``at x=2, y=3``), an expression or a name (its value and gradient at the point, as ``gradcli
eval`` prints them), or a command (``trace f``, ``hessian f``, ``diff f x``, ...: :data:`COMMANDS`).
A command runs the gradcli command of the same name on the definitions it reads, through
``run`` (the command line's own runner, handed in by ``cli.py``), so every table, width, ASCII
fallback and colour is the one the shell command gives.

:class:`Session` is the language of the session, with no terminal in it (the tests and the
script mode drive it directly); :func:`interactive` puts prompt_toolkit around it: history in
``$XDG_DATA_HOME/gradcli/history``, Tab completion, syntax colours from the grammar's own lexer,
and the rule of the function being typed in the bottom toolbar.

>>> out = []
>>> s = Session(run=lambda args: out.append(args) or 0)
>>> s.execute("g = x*y")
0
>>> s.execute("f = log(x) + g")
0
>>> s.execute("at x=2, y=3")
at x = 2, y = 3
0
>>> s.execute("trace f")
0
>>> out[-1]
['eval', 'g = x*y\\nf = log(x) + g', '--at', 'x=2.0,y=3.0', '--trace']
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import sys
from dataclasses import dataclass, field
from typing import Callable

from .errors import GradcliError, InputError, describe

INSTALL = 'pip install "gradcli[interactive]"'
PROMPT, CONTINUATION = ">>> ", "... "

# The commands: how each is typed and what it does, for `help` and the completer.
COMMANDS = {
    "at": ("at x=2, y=3", "set the point (or x = 2); `at` alone shows it"),
    "trace": ("trace f", "the forward trace, the reverse sweep and the adjoints"),
    "check": ("check f", "the gradient against numerical differentiation"),
    "expect": ('expect f x="1/x+y"', "your formula for a partial derivative, checked"),
    "hessian": ("hessian f", "every second partial derivative"),
    "diff": ("diff f [x ...]", "the partial derivatives as expressions"),
    "graph": ("graph f", "the computational graph, annotated at the point"),
    "plot": ("plot f x=-3:3", "f and its derivative over a range"),
    "jacobian": ("jacobian f, g", "the values and the Jacobian of several outputs"),
    "digits": ("digits 30", "digits in the results (`digits` alone shows it)"),
    "json": ("json on|off", "print JSON instead of tables"),
    "functions": ("functions", "the functions and their derivative rules"),
    "who": ("who", "what is defined, with values at the point"),
    "clear": ("clear [f ...]", "forget definitions and the point (or only f ...)"),
    "help": ("help", "this list"),
    "quit": ("quit", "leave (or Ctrl-D)"),
}
_ASSIGN = re.compile(r"\s*[^\W\d]\w*\s*([-+*/]?=)(?!=)")  # `who = 3` assigns, it is no command
# a line typed as a shell command (`eval f --at x=2`, `gradcli trace f`): no statement of the repl
_SHELL = re.compile(r"(gradcli\s+)?[a-z]+\s.*?\s--[a-z]|gradcli\s")


def _shell_hint(line: str) -> str:
    """The repl's way of what a shell command line asks: the point by ``at``, then the rest."""
    at = re.search(r"--at[=\s]+(\S+)", line)
    rest = re.sub(r"\s--\w[\w-]*(?:[=\s]+(?!-)\S+)?", "", re.sub(r"^gradcli\s+", "", line))
    word, _, expression = rest.strip().partition(" ")
    ask = expression.strip() if word == "eval" else rest.strip()
    said = f"at {at.group(1).replace(',', ', ')}, then " if at else ""
    return f"the repl takes no shell options: {said}{ask or 'f'} (help lists its lines)"


@dataclass
class Definition:
    text: str  # the right-hand side as typed
    reads: tuple[str, ...]  # the names it reads (inputs and other definitions)


@dataclass
class Session:
    """The definitions, the point and the settings of one session; :meth:`execute` runs a line.

    ``run`` runs a gradcli command line (``["eval", source, "--at", ...]``) and gives its exit
    code; ``out`` and ``err`` write text (standard output and standard error by default)."""

    run: Callable[[list[str]], int]
    definitions: dict[str, Definition] = field(default_factory=dict)
    point: dict[str, float] = field(default_factory=dict)
    digits: int | None = None  # None: each command's default
    json: bool = False
    texts: dict[str, str] = field(default_factory=dict)  # a value as typed (at x=pi/3)
    out: Callable[[str], None] = None
    err: Callable[[str], None] = None

    def __post_init__(self):
        self.out = self.out or _writer(sys, "stdout")
        self.err = self.err or _writer(sys, "stderr")

    # -- a line -----------------------------------------------------------------------------------

    def execute(self, text: str) -> int:
        """Run one input (a line, or several joined by continuation); the exit code it would
        have as a shell command: 0 ok, 1 a numerical failure, 2 bad input."""
        if "\n" in text:  # continued lines are one line (the language ends statements at a new line)
            text = " ".join(re.sub(r"#.*", "", line).strip() for line in text.splitlines())
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            return 0
        word, _, rest = stripped.partition(" ")
        try:
            if word in COMMANDS and not _ASSIGN.match(stripped):
                return getattr(self, "_" + word)(rest.strip())
            return self._statements(text)
        except GradcliError as error:
            if _SHELL.match(stripped) and error.kind == "syntax":
                error.hint = _shell_hint(stripped)  # a shell command typed here: say the repl's way
            self.err(describe(error, text))
            return error.exit_code

    def _statements(self, text: str) -> int:
        from .language.ast import Assign
        from .engine.graph import parse_source
        program = parse_source(text)
        if all(isinstance(s, Assign) for s in program.statements):
            # A statement's text runs to the next one's start: its span leaves out a ')' closing
            # a group at its end.
            ends = [s.span[0] for s in program.statements[1:]] + [len(text)]
            for statement, end in zip(program.statements, ends):
                self._assign(statement, text[statement.span[0]:end].rstrip().rstrip(";"))
            return 0
        return self._command("eval", text)

    def _assign(self, statement, text: str) -> None:
        name, value = statement.name, _ASSIGN.sub("", text, count=1).strip()
        if statement.op != "=":  # x -= 0.1: the same as x = x - (0.1)
            value = f"{name} {statement.op[0]} ({value})"
        reads = _reads(value)
        if not reads:
            from .points import constant_value
            self._set(name, constant_value(value, name), value)
        elif name in reads:
            if any(n in self.definitions for n in reads) or name not in self.point:
                raise InputError(f"{name} = {value} reads {name} itself",
                                 hint="a definition cannot read its own name; an input's new "
                                      "value may, when every name it reads has a value")
            missing = [n for n in reads if n not in self.point]
            if missing:
                from .errors import name_list
                raise InputError(f"{name} = {value} needs a value for {name_list(missing)}",
                                 names=tuple(missing),
                                 hint="at " + ", ".join(f"{n}=1" for n in missing[:10]))
            from .api import evaluate
            self._set(name, evaluate(value, self.point).value)
        else:
            for other in reads:
                if name in self._closure([other]):
                    raise InputError(f"{name} = {value} would make {name} depend on itself "
                                     f"(through {other})", hint=f"clear {other} first")
            self.definitions.pop(name, None)  # a redefinition moves to the end
            self.definitions[name] = Definition(value.strip(), tuple(reads))
            self.point.pop(name, None)

    def _set(self, name: str, value: float, text: str | None = None) -> None:
        self.definitions.pop(name, None)
        self.point[name] = value
        self.texts.pop(name, None)
        if text is not None and text != _number(value):
            self.texts[name] = text

    # -- building the program of a command ----------------------------------------------------

    def _closure(self, names) -> list[str]:
        """The definitions ``names`` read, directly or not, each after those it reads."""
        order, done, stack = [], set(), [(n, False) for n in reversed(list(names))]
        while stack:
            name, expanded = stack.pop()
            if name in done or name not in self.definitions:
                continue
            if expanded:
                done.add(name)
                order.append(name)
                continue
            stack.append((name, True))
            stack += [(n, False) for n in reversed(self.definitions[name].reads) if n not in done]
        return order

    def program(self, target: str) -> str:
        """The source for ``target``: a defined name (its definition last, so it is the output)
        or an expression, after every definition it reads."""
        target = target.strip()
        if target in self.definitions:
            names = self._closure([target])
            tail = None
        else:
            names = self._closure(_reads(target))
            tail = target
        lines = [f"{n} = {self.definitions[n].text}" for n in names]
        return "\n".join(lines + ([tail] if tail is not None else []))

    def _point_args(self, source: str) -> list[str]:
        """``--at`` with the point's values of the inputs ``source`` reads (an input without
        one is an error naming it, with the line that gives it)."""
        from .api import compile
        inputs = compile(source).inputs
        missing = [n for n in inputs if n not in self.point]
        if missing:
            from .errors import name_list
            raise InputError(f"no value for {name_list(missing)}",
                             hint="at " + ", ".join(f"{n}=1" for n in missing[:10]))
        point = {n: self.point[n] for n in inputs if n in self.point}
        return ["--at", ",".join(f"{n}={v!r}" for n, v in point.items())] if point else []

    def _command(self, command: str, target: str, *extra: str, **settings) -> int:
        """Run ``gradcli COMMAND`` on ``target`` (a name or an expression) and what it reads."""
        if not target.strip():
            raise InputError(f"{command} needs an expression or a defined name",
                             hint=COMMANDS[command][0] if command in COMMANDS else None)
        return self._send(command, self.program(target), list(extra), **settings)

    def _send(self, command: str, source: str, extra: list[str], at: bool = True,
              digits: bool = True, json: bool = True) -> int:
        """``gradcli COMMAND SOURCE`` with the point (``at``), ``extra``, and the session's
        digits and json settings where the command takes them."""
        args = [command, source] + (self._point_args(source) if at else []) + extra
        if digits and self.digits is not None:
            args += ["--digits", str(self.digits)]
        if json and self.json:
            args.append("--json")
        return self.run(args)

    # -- the commands -----------------------------------------------------------------------------

    def _at(self, rest: str) -> int:
        if rest:
            from .points import parse_point
            point = parse_point(rest)
            for name, value in point.items():
                self._set(name, value, point.texts.get(name))
        self.out("at " + (", ".join(f"{n} = {self.texts.get(n, _number(v))}"
                                    for n, v in self.point.items())
                          or "(no point yet: at x=2, y=3)"))
        return 0

    def _trace(self, rest: str) -> int:
        return self._command("eval", rest, "--trace")

    def _check(self, rest: str) -> int:
        return self._command("eval", rest, "--check")

    def _expect(self, rest: str) -> int:
        target, extra = _split_target(rest)
        if not extra:
            raise InputError("expect needs a formula for a partial derivative",
                             hint='expect f x="1/x+y"')
        return self._command("eval", target, *[a for e in extra for a in ("--expect", e)])

    def _hessian(self, rest: str) -> int:
        return self._command("hessian", rest)

    def _diff(self, rest: str) -> int:
        target, names = _split_target(rest)
        extra = ["--wrt", ",".join(names)] if names else []
        return self._command("diff", target, *extra, at=False, digits=False)

    def _graph(self, rest: str) -> int:
        source = self.program(rest) if rest.strip() else ""
        at = bool(source) and all(n in self.point for n in _inputs(source))
        return self._command("graph", rest, at=at, digits=False, json=False)

    def _plot(self, rest: str) -> int:
        target, ranges = _split_target(rest)
        if not ranges:
            raise InputError("plot needs a range", hint="plot f x=-3:3")
        over = {r.partition("=")[0].strip() for part in ranges for r in part.split(",")}
        source = self.program(target) if target else ""
        point = {n: v for n, v in self.point.items() if n not in over}
        extra = [a for r in ranges for a in ("--over", r)]
        if source:
            wanted = [n for n in _inputs(source) if n in point]
            if wanted:
                extra += ["--at", ",".join(f"{n}={point[n]!r}" for n in wanted)]
        return self._command("plot", target, *extra, at=False, digits=False, json=False)

    def _jacobian(self, rest: str) -> int:
        from .points import split_top_level
        targets = [t.strip() for t in split_top_level(rest) if t.strip()]
        if len(targets) < 2:
            return self._command("eval", rest)
        if all(t in self.definitions for t in targets):  # named outputs keep their names
            source = "\n".join(f"{n} = {self.definitions[n].text}"
                               for n in self._closure(targets))
            extra = ["--of", ",".join(targets)]
        else:  # bare expressions: the outputs f1, f2, ...
            names = self._closure([n for t in targets for n in _reads(t)])
            source = "\n".join([f"{n} = {self.definitions[n].text}" for n in names] + targets)
            extra = []
        return self._send("eval", source, extra)

    def _digits(self, rest: str) -> int:
        if rest:
            if not rest.isdigit():
                raise InputError(f"digits {rest}: give a whole number", hint="digits 30")
            self.digits = int(rest)
        self.out(f"digits {self.digits if self.digits is not None else 'as each command'}")
        return 0

    def _json(self, rest: str) -> int:
        if rest not in ("on", "off", ""):
            raise InputError(f"json {rest}: say on or off", hint="json on")
        if rest:
            self.json = rest == "on"
        self.out(f"json {'on' if self.json else 'off'}")
        return 0

    def _functions(self, rest: str) -> int:
        return self.run(["functions"] + (["--json"] if self.json else []))

    def _who(self, rest: str) -> int:
        from .api import evaluate
        from .views.text import format_number
        digits = 13 if self.digits is None else self.digits  # significant, as eval's --digits
        rows = [(f"{n} = {self.texts.get(n, _number(v))}", "") for n, v in self.point.items()]
        for name in self.definitions:
            try:
                source = self.program(name)
                missing = [n for n in _inputs(source) if n not in self.point]
                value = evaluate(source, self.point, digits=digits).value if not missing else 0
                what = (f"needs {', '.join(missing)}" if missing else
                        f"= {format_number(value, digits)}")
            except GradcliError as error:
                what = f"({error.text()})"
            rows.append((f"{name} = {self.definitions[name].text}", what))
        self.out("\n".join(_columns(rows)) if rows else "nothing defined yet: f = x^2, at x=2")
        return 0

    def _clear(self, rest: str) -> int:
        names = rest.replace(",", " ").split()
        unknown = [n for n in names if n not in self.definitions and n not in self.point]
        if unknown:
            raise InputError(f"clear: {', '.join(unknown)} is not defined", hint="who lists them")
        for name in names or list(self.definitions) + list(self.point):
            self.definitions.pop(name, None)
            self.point.pop(name, None)
            self.texts.pop(name, None)
        return 0

    def _help(self, rest: str) -> int:
        rows = [("f = log(x)+x*y-sin(y)", "define f (an open bracket or a trailing operator "
                 "continues the line)"), ("f", "its value and gradient at the point"),
                *COMMANDS.values()]
        self.out("\n".join(_columns(rows) + ["Tab completes, Ctrl-R searches the history, "
                                             "Ctrl-C cancels the line."]))
        return 0

    def _quit(self, rest: str) -> int:
        raise EOFError


def _writer(module, name: str) -> Callable[[str], None]:
    def write(text: str) -> None:
        stream = getattr(module, name)
        stream.write(text + "\n")
        stream.flush()
    return write


def _columns(rows: list[tuple[str, str]], gap: int = 3) -> list[str]:
    """Two columns of text, the second starting at one place on every line."""
    width = max(len(left) for left, _ in rows)
    return [f"{left.ljust(width + gap)}{right}".rstrip() for left, right in rows]


def _number(x: float) -> str:
    return repr(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def _reads(text: str) -> list[str]:
    """The names an expression reads (not the functions it calls, nor pi and e), in order."""
    from .engine.primitives import CONSTANTS
    from .language.ast import Assign, Binary, Call, Unary, Var
    from .engine.graph import parse_source
    names, stack = [], list(reversed(parse_source(text).statements))
    while stack:
        node = stack.pop()
        if isinstance(node, Var):
            if node.name not in CONSTANTS and node.name not in names:
                names.append(node.name)
        elif isinstance(node, Assign):
            stack.append(node.value)
        elif isinstance(node, Binary):
            stack += [node.right, node.left]
        elif isinstance(node, Unary):
            stack.append(node.operand)
        elif isinstance(node, Call):
            stack += reversed(node.args)
    return names


def _inputs(source: str) -> list[str]:
    from .api import compile
    return list(compile(source).inputs)


def _split_target(rest: str) -> tuple[str, list[str]]:
    """``f x y`` -> (``f``, [x, y]); ``f x="1/x+y"`` -> (``f``, [``x=1/x+y``]): the longest
    head that is an expression, and the words after it (quotes as in a shell). The head's words
    are joined by operators (``x^2 + y x``): ``f x``, a product written without ``*``, is the
    target ``f`` and the name ``x``; a product in a head is written in quotes or with ``*``."""
    from .engine.graph import parse_source as parse
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise InputError(f"{rest}: {exc}", hint="close the quote") from None
    for k in range(len(words), 0, -1):
        if not all(_joined(a, b) for a, b in zip(words[:k - 1], words[1:k])):
            continue
        head = " ".join(words[:k])
        try:
            parse(head)
        except GradcliError:
            continue
        return head, words[k:]
    return "", words


def _joined(word: str, after: str) -> bool:
    """Whether two words are parts of one expression: an operator, a comma or a bracket at the
    end of the first or the start of the second."""
    return (word[-1] in "+-−*/÷·×^(,=|√∛"
            or after[0] in "+-−*/÷·×^),|²³¹⁰⁴⁵⁶⁷⁸⁹⁻°")


# -- the terminal: prompt_toolkit around a Session -------------------------------------------------

def incomplete(text: str) -> bool:
    """Whether the input goes on on the next line: an open bracket, a trailing operator."""
    code = re.sub(r"#[^\n]*", "", text)
    return (code.count("(") > code.count(")")
            or code.rstrip().endswith(("+", "-", "*", "/", "^", ",", "=", "\\")))


def inputs(lines):
    """The inputs of ``lines`` as they would be typed: each line alone, or with the lines that
    continue it (an open bracket, a trailing operator); blank ones left out."""
    pending = ""
    for line in lines:
        pending += line if line.endswith("\n") else line + "\n"
        if incomplete(pending):
            continue
        text, pending = pending.rstrip("\n"), ""
        if text.strip():
            yield text
    if pending.strip():
        yield pending.rstrip("\n")


def run_script(session: Session, lines, echo: Callable[[str], None]) -> int:
    """Script mode: every input of ``lines`` in order, each echoed after the prompt; 1 if any
    failed (after running them all), else 0."""
    failed = False
    for text in inputs(lines):
        echo(PROMPT + text.replace("\n", "\n" + CONTINUATION))
        try:
            failed |= session.execute(text) != 0
        except EOFError:
            return int(failed)
    return int(failed)


def history_path(environ=os.environ) -> str | None:
    """``$XDG_DATA_HOME/gradcli/history`` (``$HOME/.local/share`` when unset); None when
    neither is an absolute path (the history is then kept in memory only)."""
    base = environ.get("XDG_DATA_HOME") or ""
    if not os.path.isabs(base):
        home = environ.get("HOME") or ""
        base = os.path.join(home, ".local", "share") if os.path.isabs(home) else ""
    return os.path.join(base, "gradcli", "history") if base else None


def open_history(path: str | None):
    """prompt_toolkit's FileHistory at ``path``, in a directory of yours that no one else can
    write to (made 0700), the file 0600, a regular file and not a link (a FIFO planted there
    would hang the start); else in memory, with a warning. A line that cannot be saved (a full
    disk) is still run and kept for this session, with one warning."""
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    if path is None:
        return InMemoryHistory()
    folder = os.path.dirname(path)

    def lost(exc: OSError) -> None:
        sys.stderr.write(f"warning: the history is not kept ({path}: {exc.strerror or exc})\n")

    class KeptHistory(FileHistory):
        failed = False

        def store_string(self, string: str) -> None:
            if self.failed:
                return
            try:
                super().store_string(string)
            except OSError as exc:
                self.failed = True
                lost(exc)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.stat(folder)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise OSError(f"{folder} is not yours alone")
        if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
            raise OSError("it is not a regular file")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK
                     | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError("it is not a regular file")
            os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
        return KeptHistory(path)
    except OSError as exc:
        lost(exc)
        return InMemoryHistory()


def _token_pattern():
    """The grammar's own lexer: the terminals' regular expression from the parser's tables."""
    from .language import parser
    return re.compile(parser.shipped_tables()["tables"]["pattern"])


def _catalogue() -> dict[str, dict]:
    from .views.catalogue import catalogue
    rows = {}
    for row in catalogue():
        for name in [row["name"], *row["aliases"]]:
            rows[name] = row
    return rows


def call_at(text: str) -> str | None:
    """The function whose call the cursor is in (the innermost open ``name(``), if any."""
    opened = []
    for match in re.finditer(r"([^\W\d]\w*)\s*\(|\(|\)", text):
        if match.group(0) == ")":
            if opened:
                opened.pop()
        else:
            opened.append(match.group(1))
    while opened:
        name = opened.pop()
        if name:
            return name
    return None


def toolbar_text(session: Session, text: str, functions: dict[str, dict],
                 width: int = 80) -> str:
    """The bottom toolbar, in ``width`` columns: the rule of the function being typed, else
    the point and the keys (the keys left out first where they do not fit)."""
    name = call_at(text)
    if name in functions:
        row = functions[name]
        rules = ", ".join(f"{k} = {v}" for k, v in row["derivatives"].items())
        parts = [f" {row['syntax']}", rules, f"domain: {row['domain']}"]
        sep = "   "
    else:
        point = ", ".join(f"{n}={session.texts.get(n, _number(v))}"
                          for n, v in session.point.items()) or "no point"
        parts = [f" at {point}", f"{len(session.definitions)} defined", "Tab completes",
                 "Ctrl-R searches", "Ctrl-D leaves"]
        sep = " · "
    while len(parts) > 1 and len(sep.join(parts)) >= width:
        parts.pop()
    line = sep.join(parts)
    return line if len(line) < width else line[:width - 2] + "…"


_BLANKS = re.compile(r"\s*")
# A longer line (a paste) is shown plain: prompt_toolkit's renderer handles each coloured run
# at every redraw, and a pasted megabyte is half a million runs (figures: docs/repl.md).
MAX_COLOURED = 10_000


def token_styles(text: str, first: bool, session: Session, functions, pattern) -> list:
    """A line of input as ``(style class, text)`` runs, by the grammar's terminals: a number,
    an operator, a comment, and a name told apart as a command (first on the first line), a
    function being called, a definition of the session, or another name; a line longer than
    :data:`MAX_COLOURED` is one plain run."""
    if len(text) > MAX_COLOURED:
        return [("", text)]
    runs, pos = [], 0
    # where the line's first word starts; the text after a name is looked at from where it ends,
    # never sliced off: a pasted line of a megabyte is coloured in linear time
    lead = len(text) - len(text.lstrip()) if first else -1
    for match in pattern.finditer(text):
        if match.start() != pos:
            break
        kind, token = match.lastgroup, match.group()
        if kind == "CALL":  # "sin(" is one token of the grammar: a name, then its "("
            from .language.parser import call_name
            name = call_name(token)
            command = match.start() == lead and name in COMMANDS
            runs.append(("class:command" if command else "class:function" if name in functions
                         else "class:defined" if name in session.definitions else "class:name",
                         name))
            runs.append(("class:lpar", token[len(name):]))
            pos = match.end()
            continue
        if kind == "NAME":
            after = _BLANKS.match(text, match.end()).end()
            kind = ("command" if match.start() == lead
                    and token in COMMANDS and not text.startswith("=", after) else
                    "function" if text.startswith("(", after) and token in functions else
                    "defined" if token in session.definitions else "name")
        runs.append((f"class:{kind.lower()}", token))
        pos = match.end()
    if pos < len(text):
        runs.append(("class:rest", text[pos:]))  # no terminal matches here: left plain
    return runs


def interactive(session: Session, history: str) -> int:
    """The session in a terminal, until Ctrl-D or ``quit``."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import Completer, Completion
    from prompt_toolkit.filters import is_searching
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys
    from prompt_toolkit.lexers import Lexer
    from prompt_toolkit.styles import Style

    functions = _catalogue()
    pattern = _token_pattern()

    class Words(Completer):
        def get_completions(self, document, complete_event):
            word = document.get_word_before_cursor(pattern=re.compile(r"[^\W\d]\w*"))
            before = document.text_before_cursor[:len(document.text_before_cursor) - len(word)]
            names = list(session.definitions) + list(session.point)
            if not before.strip():
                names += list(COMMANDS)
            names += sorted(functions)
            for name in dict.fromkeys(names):
                if name.startswith(word) and name != word:
                    yield Completion(name, -len(word))

    class Colours(Lexer):
        def lex_document(self, document):
            lines = document.lines
            return lambda k: token_styles(lines[k], k == 0, session, functions, pattern)

    keys = KeyBindings()

    @keys.add("enter", filter=~is_searching)  # in a Ctrl-R search, Enter takes the line found
    def _(event):
        buffer = event.current_buffer
        if incomplete(buffer.text):
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    @keys.add(Keys.BracketedPaste)
    def _(event):
        # Pasted lines are typed lines: a paste that ends a line runs at once, line by line
        # (the loop below splits the text), as the Python prompt runs a pasted block.
        data = event.data.replace("\r\n", "\n").replace("\r", "\n")
        buffer = event.current_buffer
        buffer.insert_text(data)
        if data.endswith("\n") and not incomplete(buffer.text):
            buffer.validate_and_handle()

    style = Style.from_dict({
        "number": "ansicyan", "function": "ansiblue bold", "defined": "ansigreen bold",
        "name": "", "command": "ansimagenta bold", "comment": "ansibrightblack italic",
        "assign_op": "bold", "plus minus star slash pow": "ansiyellow", "rest": "ansired",
        "bottom-toolbar": "noreverse bg:ansibrightblack fg:ansiwhite"})
    prompt = PromptSession(
        history=open_history(history), completer=Words(), lexer=Colours(), style=style,
        multiline=True, key_bindings=keys, complete_while_typing=False,
        prompt_continuation=CONTINUATION, enable_history_search=False,
        bottom_toolbar=lambda: toolbar_text(session, prompt.default_buffer.document
                                            .text_before_cursor, functions,
                                            prompt.app.output.get_size().columns))
    session.out("gradcli repl: define (f = x^2*y), set the point (at x=2, y=3), ask (f, trace f, "
                "hessian f); help lists the commands, Ctrl-D leaves.")
    while True:
        try:
            text = prompt.prompt(PROMPT)
        except KeyboardInterrupt:  # Ctrl-C: the line is dropped, the session goes on
            continue
        except EOFError:
            return 0
        try:
            for line in inputs(text.splitlines(keepends=True)):  # a pasted block: line by line
                session.execute(line)
        except KeyboardInterrupt:
            session.err("interrupted")
        except EOFError:
            return 0


def start(run: Callable[[list[str]], int], script=None) -> int:
    """``gradcli repl``: interactive on a terminal; script mode for a ``script`` (a file) or
    when standard input is not a terminal."""
    session = Session(run=run)
    if script is not None:
        return run_script(session, script, session.out)
    if sys.stdin is None or not sys.stdin.isatty():
        if sys.stdin is None:
            raise InputError("standard input is closed: the repl has nothing to read")
        return run_script(session, sys.stdin, session.out)
    try:
        import prompt_toolkit  # noqa: F401
    except ImportError:
        raise InputError("the interactive repl needs prompt_toolkit, which is not installed",
                         hint=INSTALL) from None
    import signal
    # Ctrl-C while a command runs cancels that command, not the session (the console script
    # ends at once on Ctrl-C elsewhere: gradcli.__main__).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return interactive(session, history_path())
