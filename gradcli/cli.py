"""The command line: click commands over the Python API. The only module that imports click.

Each command is thin: read the source, parse options, call the engine, print. Every
:class:`~gradcli.errors.GradcliError` is turned into a message on stderr and its exit code at
one boundary (:class:`GradcliGroup`, around option parsing too), so no user mistake ever shows
a traceback.
"""

from __future__ import annotations

import io
import os
import re
import sys
from contextlib import contextmanager
from types import SimpleNamespace

import click

from . import __version__
from .gcpause import gc_paused
from .errors import (EXIT_NUMERICAL, GradcliError, InputError, LimitError,
                     MissingInputError, OutputError, SingularGradientError, describe)
from .views.text import directional_text, output_name, result_text

EXIT_PIPE = 141  # standard output was a pipe that closed (128 + SIGPIPE, as shell tools give)

DEFAULT_MAX_ROWS = 40
DEFAULT_MAX_NODES = 40  # gradcli graph: a picture, not a wall


class PointType(click.ParamType):
    """``--at x=2,y=pi/4``: a mapping of names to numbers (constant expressions allowed)."""

    name = "NAME=VALUE[,...]"

    def __init__(self, option: str = "at"):
        self.option = option  # the option's name in errors: at or direction

    def convert(self, value, param, ctx):
        if isinstance(value, dict):
            return value
        from .points import parse_point
        return parse_point(value, self.option)  # an error is reported by GradcliGroup


class SeedType(click.ParamType):
    """``--seed 2`` (the one output's adjoint) or ``--seed u=1,v=2`` (a cotangent on the outputs)."""

    name = "NUMBER|NAME=VALUE[,...]"

    def convert(self, value, param, ctx):
        if isinstance(value, (float, int, dict)):
            return value
        try:
            return float(value)
        except ValueError:
            pass
        from .points import parse_point
        return parse_point(value, "seed")  # an error is reported by GradcliGroup


class ShapeType(click.ParamType):
    """``--shape w=3,X=4x2``: array inputs' shapes (name -> a vector's length, or rows x
    columns)."""

    name = "NAME=N[xM][,...]"

    def convert(self, value, param, ctx):
        if isinstance(value, dict):
            return value
        shapes = {}
        for item in value.split(","):
            name, eq, text = item.partition("=")
            sizes = text.strip().lower().split("x")
            if not eq or not name.strip() or not all(n.strip().isdigit() and int(n) > 0
                                                      for n in sizes) or len(sizes) > 2:
                raise InputError(f"{item.strip()!r} is not NAME=N or NAME=NxM", option="shape",
                                 hint="e.g. --shape w=3,X=4x3 (a vector of 3, a 4 × 3 matrix)")
            shapes[name.strip()] = tuple(int(n) for n in sizes)
        return shapes


class NameListType(click.ParamType):
    """``--wrt x,y``: a comma-separated list of names."""

    name = "NAME[,...]"

    def __init__(self, option: str = "wrt"):
        self.option = option  # the option's name in errors: wrt, of or mixed

    def convert(self, value, param, ctx):
        if isinstance(value, list):
            return value
        names = [n.strip() for n in value.split(",") if n.strip()]
        if not names:
            raise InputError("gives no names", option=self.option,
                             hint=f"e.g. --{self.option} x,y")
        return names


def _hint(exc: GradcliError) -> str | None:
    """The hint on the command line: the error's own, or how to fix it with a flag."""
    if isinstance(exc, MissingInputError) and exc.hint is None:
        names = exc.names
        return ("add --at " + ",".join(f"{name}=1" for name in names[:10])
                + (",..." if len(names) > 10 else ""))
    return exc.hint


class GradcliGroup(click.Group):
    """The error boundary, around parsing the options as well as running the command:
    a GradcliError becomes its message on stderr and its exit code, never a traceback."""

    def invoke(self, ctx):
        try:
            try:
                return super().invoke(ctx)
            finally:
                _flush_stdout()  # a full disk or a closed pipe shows here, inside the boundary
        except BrokenPipeError:  # the reader went away (| head): stop quietly
            _silence_stdout()
            ctx.exit(EXIT_PIPE)
        except OutputError as exc:
            _silence_stdout()
            click.echo(describe(exc), err=True)
            ctx.exit(exc.exit_code)
        except GradcliError as exc:
            error = exc
        except RecursionError:  # defensive: no path should recurse, but never show a traceback
            error = LimitError("the input is nested too deeply to process")
        except MemoryError:
            error = None  # made below, once the frames holding the memory are released
        _report(error if error is not None else _out_of_memory(ctx), ctx)


def _report(error: GradcliError, ctx) -> None:
    """The error on stderr for people; with --json also on stdout, as one object."""
    source, hint = ctx.meta.get("gradcli.source"), _hint(error)
    if ctx.meta.get("gradcli.json") and not ctx.meta.get("gradcli.json_printed"):
        from .views.errors import error_object
        from .views.json import dumps
        click.echo(dumps(error_object(error, source, message=error.text("--"), hint=hint)))
    from .views.notation import needs_ascii
    show = _shown_on(sys.stderr, needs_ascii(getattr(sys.stderr, "encoding", None)))
    click.echo(describe(error, source, option_prefix="--", hint=hint, show=show), err=True)
    ctx.exit(error.exit_code)


def _shown_on(stream, ascii_: bool):
    """How text is printed on ``stream``: as it is (None), or with ``ascii_`` (a stream that
    cannot show it all: cp1252, ASCII) in the notation's ASCII (df/dx) with ``\\u03b8`` escapes,
    so that carets and alignment count what is printed (a character can take six cells)."""
    if not ascii_:
        return None
    from .views.notation import to_ascii
    encoding = getattr(stream, "encoding", None) or "ascii"
    return lambda text: to_ascii(text, encoding)


def _out_of_memory(ctx) -> LimitError:
    """Out of memory: a limit error saying what to lower or drop for this command."""
    from .limits import NODES_VARIABLE
    params, advice = ctx.meta.get("gradcli.params", {}), []
    if "max_nodes" in params:
        advice.append("lower --max-nodes" + (" (0 draws every node)"
                                             if params["max_nodes"] == 0 else ""))
    if params.get("fmt") in ("dot", "mermaid") or params.get("output_path"):
        advice.append("drop --format/-o (the drawing in the terminal needs less)")
    for name, option in (("trace", "--trace"), ("check_", "--check"), ("expect", "--expect")):
        if params.get(name):
            advice.append(f"drop {option}")
    if params.get("mode") == "forward":
        advice.append("drop --mode forward")
    if params.get("max_rows") == 0:
        advice.append("give --max-rows a limit")
    if params.get("points_path") or params.get("grid"):  # batch: rows are read in chunks
        from .limits import COLUMNS_VARIABLE, LINE_VARIABLE
        advice.append("run it with more memory, or lower "
                      f"{LINE_VARIABLE} or {COLUMNS_VARIABLE} (docs/limits.md)")
    else:
        advice.append("split the input or run it with more memory; "
                      f"{NODES_VARIABLE} (docs/limits.md) refuses inputs this large up front")
    return LimitError("out of memory: this input needs more memory than is available",
                      hint="; ".join(advice[:-1]) + (", or " if len(advice) > 1 else "")
                      + advice[-1])


def _flush_stdout() -> None:
    """Write out what is buffered, so a full disk or a closed pipe is reported here."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        from .views.screen import stdout_error
        raise stdout_error(exc) from None


def _silence_stdout() -> None:
    """Point standard output at the null device: what is still buffered for a closed pipe or a
    full disk is dropped, instead of failing again as Python exits."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (AttributeError, OSError, ValueError):
        pass  # not a real file (a test runner's buffer): nothing to drop


def _read_source(expression: str | None, file,
                 example: str = 'gradcli eval "x^2 + y" --at x=1,y=2', warn: bool = True) -> str:
    """The source text (from the argument, -f FILE or stdin), kept for error messages' carets;
    with ``warn``, the warnings on its reading (a command that compiles it with :func:`_compiled`
    says them from that parse instead)."""
    if expression is not None and file is not None:
        raise InputError("give either an EXPRESSION or -f FILE, not both")
    if file == "-":
        expression, file = "-", None
    if file is not None:
        source = _read_file(file)
    elif expression is None:
        raise InputError("no expression given", hint=f"{example}  (or -f FILE, or - for stdin)")
    elif expression == "-":
        if sys.stdin is None:
            raise InputError("standard input is closed, so '-' has nothing to read",
                             hint="pipe the expression in: echo 'x*x' | gradcli eval - --at x=3")
        source = _read_text(sys.stdin.read, "standard input")
    else:
        source = _utf8(expression, "the expression")
    # A byte-order mark (Windows Notepad saves one) is not part of the text.
    source = source.removeprefix("\ufeff")
    click.get_current_context().meta["gradcli.source"] = source
    if warn:
        _warn_source(source)
    return source


def _warn_source(source: str) -> None:
    """The warnings on the source's reading, from a parse of its own: for a command that
    compiles it elsewhere (diff's symbolic form, array nodes)."""
    if _may_misread(source):
        from .engine.graph import read_back
        try:
            _warn_readings(read_back(source)[1])
        except GradcliError:
            pass  # the command says what is wrong with it


def _may_misread(source: str) -> bool:
    """Whether the source may have a reading worth a warning (``1/2x`` is ``(1/2)*x``, ``2^3x``
    is ``(2^3)*x``): a division or a power, and in a long program a division's or a power's
    number followed by a factor written without ``*`` (its reading is kept only then)."""
    if "/" not in source and "÷" not in source and "^" not in source and "**" not in source:
        return False
    return len(source) <= 10_000 or bool(re.search(_DIVIDED_FACTOR, source)
                                         or re.search(_POWERED_FACTOR, source))


def _warn_readings(notes) -> None:
    """A warning for each reading of the source that may not be what was meant."""
    for _, text, _ in notes:
        _warn(text)


def _compiled(source: str, at=None, shown: bool | int = False):
    """The source's graph for the point ``at`` (:func:`gradcli.api.compile_at`), the warnings on
    its reading said from the same parse (kept where it may have one, or ``shown``: --json; a
    number: the trace's "read as", its first that many characters)."""
    from .api import compile_at
    graph = compile_at(source, at, shown or _may_misread(source))
    if graph.reading is not None:
        _warn_readings(graph.reading[1])
    return graph


# "/", an operand, then a factor with no operator between: 1/2x, a/b c, 1/(2)(x)
_DIVIDED_FACTOR = (r"[/÷]\s*(?:\d[\d.]*(?:[eE][+-]?\d+)?|[^\W\d]\w*+(?!\s*\()|\([^()]*\))"
                   r"\s*(?:[^\W\d]|\(|√|∛)")


# "^" or "**", a number, then a factor with no space between: 2^3x, e^-2x, 2^3(x+1)
_POWERED_FACTOR = r"(?:\^|\*\*)\s*-?\s*\d[\d.]*(?:[eE][+-]?\d+)?[^\s\d.+\-*/^)\],;=]"


def _read_file(path: str) -> str:
    """The text of the file ``path``; a file that cannot be opened or read is an io error
    (kind ``io``, exit 2), in gradcli's format like every other error."""
    from .errors import FileError
    from .files import reading
    reading(path)  # so that no -o or --export can name it
    try:
        f = open(path, encoding="utf-8")
    except OSError as exc:
        raise FileError(f"cannot read {path}: {exc.strerror or exc}",
                        hint="check the file's name, or pipe the text in with -f -") from None
    with f:
        return _read_text(f.read, path)


def _read_text(read, what: str) -> str:
    """At most one character more than the parser accepts (so memory stays bounded and the
    parser can say the source is too long), checked to be UTF-8 text."""
    from .limits import max_source
    try:
        text = read(max_source() + 1)
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} is not UTF-8 text (it holds the byte "
                         f"0x{exc.object[exc.start]:02x})", hint="save it as UTF-8") from None
    except OSError as exc:  # an unreadable file or stream: io, like a file that will not open
        from .errors import FileError
        raise FileError(f"cannot read {what}: {exc.strerror or exc}") from None
    except ValueError as exc:  # a closed stream
        raise InputError(f"cannot read {what}: {exc}") from None
    return _utf8(text, what)


def _utf8(text: str, what: str) -> str:
    """``text`` itself, unless it holds a stray byte (which Python decodes to a lone surrogate
    that no UTF-8 output can print)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{what} is not UTF-8 text (character {exc.start + 1} is a stray byte)",
                         hint="save it as UTF-8") from None
    return text


def _warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def _warn_unread(point, graph, prefix: str = "") -> None:
    from .errors import name_list
    from .points import Point
    if isinstance(point, Point):  # an array, read or not, is named once, not by element
        # (an array graph's ``inputs`` would name every element: its names are enough)
        read = set(getattr(graph, "inputs_by_name", None) or graph.inputs)
        unread = [name for name in point.names() if name not in graph.arrays
                  and (name in point.arrays or name not in read)]
    else:
        read = set(graph.inputs)
        unread = [name for name in point if name not in read]
    if unread:
        one = len(unread) == 1
        _warn(f"{prefix}{name_list(unread)} {'is' if one else 'are'} not read by the expression; "
              f"{'it is' if one else 'they are'} ignored")


def _warn_constant_columns(columns) -> None:
    """A points file's column named e or pi is data the expression cannot read (it reads the
    constant): passed through like any unread column, with a warning, not an error (a file
    has columns for other uses too)."""
    from .engine.primitives import constant_words
    for name in columns:
        what = constant_words(name)
        if what:
            _warn(f"the column {name} is not an input: in the expression, {what}; the column "
                  f"passes through unread (to use it, rename it and the name in the expression, "
                  f"e.g. {name}1)")


CONTEXT = dict(help_option_names=["-h", "--help"], max_content_width=100)


class ExpressionCommand(click.Command):
    """A command whose EXPRESSION may start with a minus sign: ``gradcli eval "-x^2" --at x=3``.

    An argument that starts with a single '-' and is not one of the command's options (nor an
    option's value) is moved behind '--', so click reads it as the EXPRESSION. Unknown long
    options (``--jsn``) are still errors.
    """

    def parse_args(self, ctx, args):
        # Read by the error boundary (GradcliGroup), which runs outside this context: an error
        # while converting an option's value is JSON too with --json.
        ctx.meta["gradcli.json"] = "--json" in (args[:args.index("--")] if "--" in args else args)
        takes_value = {}
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                for name in param.opts + param.secondary_opts:
                    takes_value[name] = not param.is_flag and not param.count
        kept, moved, i = [], [], 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                kept += args[i:]
                break
            if (not moved and arg.startswith("-") and not arg.startswith("--") and arg != "-"
                    and arg not in takes_value):
                moved.append(arg)
            else:
                kept.append(arg)
                if takes_value.get(arg) and i + 1 < len(args):
                    kept.append(args[i + 1])  # an option's value, even "-2"
                    i += 1
            i += 1
        if moved:
            kept += moved if "--" in kept else ["--", *moved]
        return super().parse_args(ctx, kept)

    def invoke(self, ctx):
        ctx.meta["gradcli.params"] = ctx.params  # for the advice of an out-of-memory error
        return super().invoke(ctx)

    def make_context(self, info_name, args, parent=None, **extra):
        """With --json, a usage error (an unknown option, a bad --digits) is also an
        ``{"error": ...}`` object on stdout; click still prints its usage text on stderr."""
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            if "--json" in args:
                from .views.errors import error_object
                from .views.json import dumps
                click.echo(dumps(error_object(InputError(exc.format_message()))))
            raise


@click.group(cls=GradcliGroup, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="gradcli")
def main():
    """gradcli: the value and exact gradient of an expression, by reverse-mode automatic
    differentiation, with the textbook trace tables that show how it was computed.

    \b
    Examples:
      gradcli eval "log(x)+x*y-sin(y)" --at x=2,y=3
      gradcli eval "log(x)+x*y-sin(y)" --at x=2,y=3 --json
      echo "x*x" | gradcli eval - --at x=3
      gradcli hessian "log(x)+x*y-sin(y)" --at x=2,y=3
      gradcli diff "log(x)+x*y-sin(y)" --wrt x
      gradcli graph "log(x)+x*y-sin(y)" --at x=2,y=3
      gradcli plot "sin(x)^2" --over x=-3:3
      gradcli functions
      gradcli repl
      gradcli explore "log(x)+x*y-sin(y)" --at x=2,y=3
    """


def _expression_command(name: str):
    """A command that reads an EXPRESSION, or -f FILE (opened by _read_source: errors are
    ours), whose EXPRESSION may start with a minus sign (:class:`ExpressionCommand`)."""
    def declare(function):
        function = click.option("-f", "--file", metavar="FILE", help=(
            "Read the expression or program from FILE ('-': standard input)."))(function)
        function = click.argument("expression", required=False)(function)
        return main.command(name, cls=ExpressionCommand, context_settings=CONTEXT)(function)
    return declare


# Options shared by the commands that read an expression.
_AT = click.option("--at", "at", type=PointType(), multiple=True,
                   help="The point: NAME=VALUE pairs, comma-separated; repeatable. "
                        "A value may be a constant expression (x=pi/4).")
_WRT = click.option("--wrt", type=NameListType(), default=None,
                    help="Differentiate with respect to these inputs only (default: all, "
                         "in order of first appearance).")
_OF = click.option("--of", type=NameListType("of"), default=None,
                   help="The outputs to differentiate (comma-separated): assigned names, or f1, "
                        "f2, ... for the bare expressions (default: every output).")
_DIGITS = click.option("--digits", type=click.IntRange(1, 100_000), default=13, show_default=True,
                       help="Significant digits, every one proven by ball arithmetic (Arb) and "
                            "correctly rounded; --digits 50 prints 50 (docs/precision.md).")
_FLOAT64 = click.option("--float64", "float64", is_flag=True,
                        help="Compute in plain float64, without certification (faster; its "
                             "digits are not proven).")
_STANDALONE = click.option("--standalone", is_flag=True,
                           help="With --export FILE.tex: a complete LaTeX document (compiles with "
                                "pdflatex) instead of a fragment to \\input.")
_JSON = click.option("--json", "as_json", is_flag=True,
                     help="Print one JSON object (schema in docs/json.md); an error is one "
                          "object too, {\"error\": {...}} (docs/errors.md).")
_STRICT = click.option("--strict", is_flag=True,
                       help="With --check: an inconclusive row (the difference quotient cannot "
                            "decide) fails too, exit 1.")
_MAX_ROWS = click.option("--max-rows", type=click.IntRange(min=0), default=DEFAULT_MAX_ROWS,
                         show_default=True,
                         help="At most N rows (and Hessian columns) per table (0 = all); --json "
                              "is always complete.")


def _output_options(command):
    """--width and --ascii, on every command (docs/output.md)."""
    command = click.option("--ascii", "ascii_", is_flag=True,
                           help="Only ASCII characters: vbar5, df/dx, +-| lines (chosen "
                                "automatically when the output's encoding cannot show the "
                                "notation).")(command)
    return click.option("--width", type=click.IntRange(min=20), default=None, metavar="N",
                        help="Lay the output out for N columns (default: the terminal's width; "
                             "piped, each table's natural width).")(command)


def _screen(width, ascii_):
    from .views.screen import open_screen
    return open_screen(width, ascii_)


@_expression_command("eval")
@_AT
@_WRT
@_OF
@click.option("--seed", type=SeedType(), default=1.0, show_default=True,
              help="Adjoint of the output: the gradient is scaled by it. With several outputs, "
                   "a weight per output (--seed f1=1,f2=2) gives the vector-Jacobian product "
                   "in one reverse sweep.")
@click.option("--mode", type=click.Choice(["auto", "reverse", "forward"]), default=None,
              help="reverse: one adjoint sweep per output; forward: one tangent sweep per "
                   "input; auto (the default): whichever takes fewer sweeps.")
@click.option("--direction", type=PointType("direction"), default=None,
              help="The derivative along this direction (NAME=VALUE pairs as for --at; inputs "
                   "left out are 0) in one forward sweep, of every output. Implies --mode "
                   "forward.")
@_DIGITS
@_FLOAT64
@_JSON
@click.option("--trace", is_flag=True,
              help="Also print the forward trace, the reverse-sweep contributions and the "
                   "adjoints (a sweep per output).")
@click.option("--elements", multiple=True, metavar="NODE",
              help="With array values: also show the scalar rows of the trace's array "
                   "operation NODE (a1, an input's name; repeatable), or of all of them "
                   "(--elements all, for small arrays). Implies --trace.")
@click.option("--max-rows", type=click.IntRange(min=0), default=DEFAULT_MAX_ROWS, show_default=True,
              help="At most N rows per table (trace, check; 0 = all, and the whole reading "
                   "of a long source); --json is always complete.")
@click.option("--export", "export_path", type=click.Path(dir_okay=False, writable=True),
              help="Also save the output to FILE: .txt (plain text at --width or natural "
                   "width), .svg, .html, .tex (LaTeX booktabs tables); .json (or any FILE "
                   "with --json) saves the JSON.")
@_STANDALONE
@click.option("--check", "check_", is_flag=True,
              help="Also compare the gradient with numerical differentiation, in a table; "
                   "exit 1 if any component disagrees (an inconclusive one does not, unless "
                   "--strict).")
@click.option("--expect", multiple=True, metavar="NAME=FORMULA",
              help="Your own formula for ∂f/∂NAME (with several outputs f2.x=FORMULA; one "
                   "expression; never scaled by --seed), "
                   "checked against AD's ∂f/∂NAME at the point; repeatable; implies --check.")
@_STRICT
@click.option("--rtol", type=click.FloatRange(min=0), default=None,
              help="Relative tolerance of --check and --expect (default 1e-7).")
@click.option("--atol", type=click.FloatRange(min=0), default=None,
              help="Absolute tolerance of --check and --expect (default 1e-9).")
@click.option("--points", "points_path", metavar="FILE",
              help="Evaluate at every row of FILE: CSV with a header ('-' reads standard "
                   "input), .jsonl or .parquet. Writes CSV rows: the columns, f, df/dx, ..., "
                   "error (docs/batch.md).")
@click.option("--grid", multiple=True, metavar="NAME=START:STOP:COUNT[,...]",
              help="Evaluate on the grid of these inclusive ranges (the last name varies "
                   "fastest); --at may fix other inputs.")
@click.option("-o", "--output", "output_path", type=click.Path(),  # dask: a directory
              help="With --points/--grid: write FILE (.csv, .jsonl or .parquet) instead of "
                   "standard output.")
@click.option("--engine", type=click.Choice(["numpy", "dask"]), default="numpy",
              show_default=True,
              help="With --points: dask evaluates the partitions of CSV or Parquet files with "
                   "Dask (pip install \"gradcli[dask]\"), on its threads here or on a "
                   "--scheduler cluster. On one machine it pays from about 10^7 rows (measured "
                   "on 2 cores, 10^7 rows of CSV: the numpy engine's 8.4 s of CPU, in 17 s "
                   "instead of 22); below a few million rows the numpy engine (which streams the "
                   "file) is faster: importing Dask alone takes 1.4 s.")
@click.option("--scheduler", metavar="ADDRESS",
              help="With --engine dask: the address of a running Dask scheduler (default: "
                   "Dask's threads in this process).")
@click.option("--elementwise", is_flag=True,
              help="For an expression whose value is an array: the gradient of the sum of its "
                   "elements (autograd's elementwise_grad; for an elementwise f, each element's "
                   "own derivative), one reverse sweep, in the inputs' shapes.")
@click.option("--with-digits", is_flag=True,
              help="With --points/--grid: add a digits column, the significant digits proven "
                   "correct in each row (with --digits N, every row has at least N).")
@_output_options
def eval_command(**options):
    """Evaluate EXPRESSION and its gradient at a point.

    EXPRESSION is an expression or a program (statements separated by ';' or new lines);
    '-' reads it from standard input. Its outputs are its bare expressions (f1, f2, ...), or
    with none its last assigned name; with several, eval prints each value and the Jacobian.

    \b
    Examples:
      gradcli eval "log(x)+x*y-sin(y)" --at x=2,y=3
      gradcli eval "log(x)+x*y-sin(y)" --at x=2,y=3 --trace
      gradcli eval "x^2*y" --at x=2 --at y=pi/4 --wrt x
      gradcli eval "log(x)+x*y-sin(y)" --at x=2,y=5 --direction x=1,y=0 --trace
      gradcli eval -f model.grad --at a=-4,b=2 --json
      echo "x*x" | gradcli eval - --at x=3
      gradcli eval "log(x)+x*y-sin(y)" --at x=2,y=3 --check
      gradcli eval "log(x)+x*y-sin(y)" --at x=2,y=3 --trace --export trace.tex --standalone
      gradcli eval "log(x)+x*y-sin(y)" --at x=2,y=3 --expect x="1/x+y" --expect y="x-cos(y)"
      gradcli eval "x*y; x+y; sin(x)" --at x=2,y=3
      gradcli eval "x*y; x+y" --at x=2,y=3 --seed f1=1,f2=2
      gradcli eval "log(x)+x*y-sin(y)" --points points.csv -o results.parquet
      gradcli eval "log(x)+x*y-sin(y)" --grid x=0.5:2:4,y=-1:1:3

    Exit codes: 0 success, 1 numerical failure (overflow, non-finite result, a failed
    --check or --expect, any failed row of --points/--grid), 2 bad input (syntax, unknown
    name, missing value, outside a domain).
    """
    from .api import select_outputs

    ctx = click.get_current_context()
    request = EvalRequest(**options, given=frozenset(
        name for name in ctx.params
        if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE))
    if request.expression == "-" and request.points_path == "-":
        raise InputError("'-' reads standard input once: it cannot hold both the expression "
                         "and the points", hint="give the expression as an argument or with "
                                                "-f FILE, and pipe the points to --points -")
    request.source = _read_source(request.expression, request.file, warn=False)
    request.at = _merged(request.at)
    request.trace = request.trace or bool(request.elements)  # --elements shows a trace
    if request.batch:
        graph = select_outputs(_compiled(request.source, request.at), request.of)
        _warn_unread(request.at, graph)
        _refuse("batch", request.facts(),
                many="--points" if request.points_path is not None else "--grid")
        return _eval_batch(graph, request)
    # One point: the tape and the sweeps' lists, millions of objects at 10^6 terms and no
    # reference cycle, which the cyclic collector would only walk again and again. Reference
    # counting frees them as before.
    with gc_paused():
        nodes = _on_array_nodes(request)
        if nodes is not None:  # array inputs: array nodes, no scalar tape
            _warn_source(request.source)  # (array nodes keep no reading)
            _warn_unread(request.at, nodes.graph)
            _refuse("point", request.facts())
            return _eval_point(nodes.graph, request, nodes)
        # the source as read is shown by --json and --trace: kept from compile's parse
        shown = (request.as_json or (request.export_path or "").lower().endswith(".json")
                 or (request.trace and _reading_limit(request.max_rows)))
        graph = select_outputs(_compiled(request.source, request.at, shown), request.of)
        _warn_unread(request.at, graph)
        _refuse("point", request.facts())
        seed = request.seed
        if (isinstance(seed, dict) and request.of is None
                and not set(seed) <= set(graph.output_names)
                and set(seed) <= set(graph.names) | set(graph.output_names)):
            # --seed u=1,v=2 weighs u and v: as --of u,v
            graph = select_outputs(graph, list(seed))
        if isinstance(seed, dict) and graph.n_outputs == 1:
            request.seed = _one_seed(seed, graph)
        if graph.n_outputs > 1 or isinstance(request.seed, dict):
            _latex_export(request.export_path, request.standalone)
            names = graph.output_names + graph.output_names  # a weight per output, in the hint
            _refuse("outputs", request.facts(), seed=request.seed, n=graph.n_outputs,
                    names=", ".join(graph.output_names), first=names[0], second=names[1])
            _eval_outputs(graph, request)
        else:
            _eval_point(graph, request)


class EvalRequest(SimpleNamespace):
    """What ``gradcli eval`` is asked to do: its options by name (as click reads them: each is
    declared once, by the command's decorators), the source text and the merged point once
    read (``source``, ``at``), and which options the command line gave (``given``)."""

    @property
    def batch(self) -> bool:
        """Many points (--points or --grid), not one."""
        return self.points_path is not None or bool(self.grid)

    @property
    def checks(self) -> bool:
        """--check or --expect: the derivatives are compared."""
        return self.check_ or bool(self.expect)

    def facts(self) -> set[str]:
        """The facts of :data:`EVAL_OPTIONS` and :data:`EVAL_CONFLICTS` that hold."""
        seed, mode, export_path, engine = self.seed, self.mode, self.export_path, self.engine
        cotangent = isinstance(seed, dict)
        facts = {
            "--seed": cotangent or seed != 1.0, "--mode": mode is not None,
            "--direction": self.direction is not None, "--trace": self.trace,
            "--elements": bool(self.elements),
            "--export": bool(export_path), "--standalone": self.standalone,
            "--check": self.check_, "--expect": bool(self.expect),
            "--max-rows": "max_rows" in self.given, "--with-digits": self.with_digits,
            "-o": self.output_path is not None, "--scheduler": self.scheduler is not None,
            "--engine": engine != "numpy",
            "--export FILE.tex": bool(export_path) and export_path.lower().endswith(".tex"),
            "--points": self.points_path is not None,
            "no --points": self.points_path is None,
            "--grid": bool(self.grid), "--engine dask": engine == "dask",
            "no --engine dask": engine != "dask", "--mode reverse": mode == "reverse",
            "--wrt": self.wrt is not None, "--check or --expect": self.checks,
            "--seed WEIGHT": not cotangent and seed != 1.0, "--seed NAME=WEIGHT": cotangent,
            "--direction or --mode forward": self.direction is not None or mode == "forward",
            "--elementwise": self.elementwise,
        }
        return {name for name, holds in facts.items() if holds}


# -- eval's modes: one point, several outputs, many points; which options go with which ------------
# Declared once: every option that goes with some modes only (in the order they are checked), and
# every combination that does not go together in a mode. A fact is an option as given ("--seed")
# or a reading of one ("--mode reverse"); the messages name the option and what would fix it.
_ONE = ("point", "outputs")
_DETAILS = "{flag} gives one point's details; it does not go with {many}"
_SHAPES = "{flag} shapes the tables of one point; it does not go with {many}"
_IN_FULL = ("{many} writes every number in full (the shortest text that reads back to the same "
            "double) and every row")
EVAL_OPTIONS = (  # (option, the modes it goes with, message elsewhere, hint)
    *((flag, _ONE, _DETAILS, None) for flag in ("--seed", "--mode", "--direction")),
    # before --trace, which it implies: the message names the option given
    ("--elements", ("point",), "{flag} expands an array operation of the trace of one output",
     "pick one output with --of"),
    *((flag, _ONE, _DETAILS, None) for flag in ("--trace", "--export", "--standalone",
                                                 "--check", "--expect", "--elementwise")),
    ("--max-rows", _ONE, _SHAPES, _IN_FULL),
    ("--with-digits", ("batch",), "{flag} adds a column to the rows of --points or --grid", None),
    ("-o", ("batch",), "{flag} goes with --points or --grid", None),
    ("--scheduler", ("batch",), "{flag} goes with --points or --grid", None),
    ("--engine", ("batch",), "{flag} goes with --points", "add --points FILE"),
    ("--export FILE.tex", ("point",), "--export FILE.tex writes the tables of one output",
     "pick one with --of, or export .svg, .html or .txt"),
)
EVAL_CONFLICTS = (  # (modes, facts that do not go together there, message, hint)
    (("batch",), ("--points", "--grid"), "give --points or --grid, not both", None),
    (("batch",), ("--engine dask", "no --points"), "--engine dask reads --points FILE",
     "write the grid to a file"),
    (("batch",), ("--scheduler", "no --engine dask"), "--scheduler goes with --engine dask", None),
    (_ONE, ("--direction", "--mode reverse"), "--direction is a forward-mode option",
     "drop --mode reverse: --direction implies --mode forward"),
    (_ONE, ("--direction", "--wrt"), "--wrt and --direction cannot be combined",
     "--direction gives one directional derivative; drop --wrt"),
    (_ONE, ("--direction", "--check or --expect"),
     "--check and --expect compare a gradient, and --direction gives none",
     "drop --direction to check the gradient (--mode forward works)"),
    (("outputs",), ("--seed WEIGHT",),
     "--seed {seed:g} is the adjoint of one output, and the program has {n} ({names})",
     "give a weight per output: --seed {first}=1,{second}=2"),
    (("outputs",), ("--seed NAME=WEIGHT", "--direction or --mode forward"),
     "--seed NAME=WEIGHT gives a vector-Jacobian product, by one reverse sweep",
     "drop --direction and --mode forward"),
    (("outputs",), ("--elementwise", "--seed NAME=WEIGHT"),
     "--elementwise weighs every output 1, and --seed NAME=WEIGHT weighs them as it says",
     "drop one of them"),
    (("outputs",), ("--elementwise", "--direction or --mode forward"),
     "--elementwise is one reverse sweep seeded on every output",
     "drop --direction and --mode forward"),
    (("outputs",), ("--elementwise", "--check or --expect"),
     "--check and --expect compare the Jacobian's entries, and --elementwise gives only their "
     "sums", "drop --elementwise to check the Jacobian"),
    (("outputs",), ("--seed NAME=WEIGHT", "--check or --expect"),
     "--check and --expect compare the Jacobian's entries, and --seed NAME=WEIGHT gives only "
     "their weighted sum", "drop --seed to check the Jacobian"),
)


def _refuse(mode: str, facts: set[str], **words) -> None:
    """An InputError for the first option given that does not go with ``mode``, or the first
    combination that does not go together in it (the tables above)."""
    for flag, modes, message, hint in EVAL_OPTIONS:
        if flag in facts and mode not in modes:
            raise InputError(message.format(flag=flag, **words),
                             hint=hint and hint.format(flag=flag, **words))
    for modes, together, message, hint in EVAL_CONFLICTS:
        if mode in modes and all(fact in facts for fact in together):
            raise InputError(message.format(**words), hint=hint and hint.format(**words))


def _on_array_nodes(request: EvalRequest):
    """``eval`` of array inputs, asked plainly (one output, no --trace, --check, --expect,
    --export, --direction, --elementwise, --of or weights), on array nodes (:func:`gradcli.api.
    on_array_nodes`: --float64, or certified on balls, each number read as typed); None
    otherwise, or where the scalar tape computes it."""
    r = request
    shapes = getattr(r.at, "shapes", None)
    if not shapes or r.trace or r.checks or r.export_path or r.of \
            or r.elementwise or r.direction is not None or r.mode == "forward" \
            or isinstance(r.seed, dict):
        return None
    from .api import on_array_nodes
    # certified: each number as typed (0.1 is 1/10), which the point keeps beside its double
    # the quick proof first for text (--json gives the exact values' nearest doubles: balls)
    return on_array_nodes(r.source, r.at, r.wrt, r.seed, r.digits, certified=not r.float64,
                          quick=not r.as_json)


def _eval_point(graph, request: EvalRequest, result=None):
    """eval of one output at one point: the value and the gradient (or a directional
    derivative), with --trace, --check, --expect, --export (``result``: computed already)."""
    from .api import evaluate
    r = request
    forward = r.mode == "forward" or r.direction is not None
    if r.elements and not (hasattr(graph, "array_calls") and _has_arrays(graph)):
        raise InputError("--elements expands an array operation of the trace, and this program "
                         "has no array values", hint="--trace shows its scalar rows")
    if r.elements and forward:
        raise InputError("--elements expands an array operation of the reverse trace",
                         hint="drop --direction and --mode forward")
    try:
        if result is None:
            result = evaluate(graph, r.at, wrt=r.wrt, seed=r.seed, digits=r.digits,
                              float64=r.float64, mode="forward" if forward else "reverse",
                              direction=r.direction, quick=not (r.as_json or r.export_path),
                              record=r.trace)
    except SingularGradientError as exc:  # f exists, a component does not: show both
        if forward:
            raise
        _singular(exc, r.source, r.as_json, r.digits, r.width, r.ascii_)
    report = _check(result, r) if r.checks else None
    tex = _latex_export(r.export_path, r.standalone)
    if tex:  # the file first: one that cannot be written is all stdout gets (--json)
        from .views.latex import eval_export
        from .views.screen import write_text
        arrays = (_array_trace(result) if r.trace and not forward and _has_arrays(result.graph)
                  else None)
        write_text(r.export_path, eval_export(result, r.digits, r.trace, report, r.standalone,
                                              arrays))
    saved = None if tex else r.export_path
    data = None
    if r.as_json or (saved and saved.lower().endswith(".json")):
        from .views.json import eval_json
        data = eval_json(result, result.trace if r.trace else None, report)
        if r.trace and result.mode != "forward" and _has_arrays(result.graph):
            from .views.json import array_trace_json
            data["trace"]["arrays"] = array_trace_json(_array_trace(result))
    screen = _emit(lambda screen: _blocks(result, r.digits, r.max_rows, r.trace, report, screen,
                                          r.elements),
                   data, r.as_json, saved, r.width, r.ascii_)
    if not r.as_json:
        from .views.text import precision_notes
        _notes(screen, precision_notes(result))
    _fail_on(report)
    return result


def _notes(screen, lines: list[str]) -> None:
    """``note:`` lines on standard error, after what standard output has shown."""
    if not lines:
        return
    try:
        screen.stream.flush()
    except (AttributeError, OSError):
        pass
    encoding = getattr(sys.stderr, "encoding", None) or "ascii"
    for line in lines:
        try:
            line.encode(encoding)
        except UnicodeEncodeError:
            from .views.screen import to_ascii
            line = to_ascii(line, encoding)
        click.echo(line, err=True)


def _emit(blocks, data, as_json: bool, export_path, width, ascii_):
    """What every eval of a point does last: save ``export_path`` (JSON with --json or a .json
    name, else the blocks as .txt, .svg or .html), then print the blocks (``blocks(screen)``
    makes them, aligned as the screen prints) or the JSON ``data``. The file first: a file that
    cannot be written is the one document stdout gets (--json). Gives the screen it printed on."""
    json_export = bool(export_path) and (as_json or export_path.lower().endswith(".json"))
    if export_path:
        _check_export_suffix(export_path, as_json)
    screen = _screen(width, ascii_)
    shown = blocks(screen) if not as_json or (export_path and not json_export) else []
    if json_export:
        from .views.screen import save_json
        save_json(data, export_path)
    elif export_path:
        from .views.screen import export
        export(shown, export_path, width, ascii_)
    if as_json:
        screen.json(data)
    elif len(shown) == 1:  # the value and the gradient: short lines, nothing to lay out
        screen.echo(shown[0])
    else:
        screen.show(*shown)
    return screen


def _singular(error, source, as_json, digits, width, ascii_):
    """The value and the gradient's finite components (a missing one: +∞, −∞ or undefined) on
    stdout, or with --json one object holding them and the error; then the error, exit 1."""
    screen = _screen(width, ascii_)
    if as_json:
        from .views.json import singular_json
        screen.json(singular_json(error, source, message=error.text("--"), hint=_hint(error)))
        click.get_current_context().meta["gradcli.json_printed"] = True
    else:
        screen.echo(_summary(error.result, digits, screen))
    raise error


def _one_seed(seed: dict, graph) -> float:
    """``--seed f=2`` for a program with one output: its adjoint, as ``--seed 2``."""
    name = graph.output_names[0]
    unknown = [n for n in seed if n != name]
    if unknown:
        raise InputError(f"--seed names {', '.join(unknown)}, which is not an output",
                         hint=f"the output is {name}: --seed {name}=2, or --seed 2")
    return seed.get(name, 0.0)


def _eval_outputs(graph, request: EvalRequest):
    """eval of a program with several outputs: the Jacobian, or one product (--seed NAME=W
    or --direction), printed as text and tables or as JSON."""
    from .api import jacobian, jvp, vjp
    from .views.text import jvp_text, mode_line, vjp_text
    r = request
    digits, trace, float64 = r.digits, r.trace, r.float64
    if r.direction is not None:
        _warn_unread(r.direction, graph, "--direction: ")
        result = jvp(graph, r.at, r.direction, digits=digits, float64=float64)
    elif isinstance(r.seed, dict) or r.elementwise:  # --elementwise: every weight 1
        weights = r.seed if isinstance(r.seed, dict) else dict.fromkeys(graph.output_names, 1.0)
        result = vjp(graph, r.at, weights, wrt=r.wrt, record=trace, digits=digits,
                     float64=float64)
    else:
        result = jacobian(graph, r.at, wrt=r.wrt, mode=r.mode or "auto", digits=digits,
                          float64=float64, record=trace)
    report = None
    if r.checks:
        from .check import entry_values, parse_expectations
        expected = entry_values(parse_expectations(r.expect), r.at, result.outputs,
                                result.inputs, digits if getattr(result, "proven", False) else None)
        report = result.check(r.rtol, r.atol, expected, r.strict)
    data = None
    if r.as_json or (r.export_path and r.export_path.lower().endswith(".json")):
        from .views.json import jacobian_json
        data = jacobian_json(result, result.trace if trace else None, report)
    if result.kind == "jacobian":
        summary = [*_values_blocks(result.values, graph, digits, r.max_rows), mode_line(
            result.mode, len(result.outputs), len(result.inputs), result.auto)]
    elif r.elementwise:
        summary = _elementwise_text(result, graph, digits, r.max_rows)
    elif result.kind == "vjp":
        summary = vjp_text(result.values, result.product, result.weights, digits)
    else:
        summary = jvp_text(result.values, result.product, result.weights, digits)
    screen = _emit(lambda screen: _output_blocks(result, summary, digits, r.max_rows, trace,
                                                 report), data, r.as_json, r.export_path, r.width,
                   r.ascii_)
    if not r.as_json:
        proven = getattr(result, "proven", False)
        if not proven:
            what = "the Jacobian" if result.kind == "jacobian" else "the product"
            _notes(screen, [f"note: {what} is computed in plain float64: its digits are not "
                            "certified" + (" (--float64)" if float64 else "")])
        elif trace:
            _notes(screen, ["note: the values and the Jacobian are certified; the trace's "
                            "sweeps are plain float64, their digits are not"])
    _fail_on(report)
    return result


def _elementwise_text(result, graph, digits: int, max_rows: int) -> list:
    """--elementwise: the outputs' values, then ∂sum(f)/∂x in each input's shape."""
    from .views.arrays import gradient_blocks
    total = "sum(f)" if graph.output_arrays else "(" + "+".join(graph.output_names) + ")"
    return [*_values_blocks(result.values, graph, digits, max_rows),
            *gradient_blocks(total, None, result.product, graph.arrays, digits, max_rows,
                             label="∂{output}/∂{name}")]


def _values_blocks(values: dict, graph, digits: int, max_rows: int) -> list:
    """The outputs' values: an array output in its shape (``f, shape (3,)``), as a gradient."""
    if not graph.output_arrays:
        from .views.text import values_text
        return [values_text(values, digits)]
    from .views.arrays import gradient_blocks
    return gradient_blocks("", None, values, graph.output_arrays, digits, max_rows,
                           label="{name}")


def _output_blocks(result, summary, digits, max_rows, trace, report) -> list:
    """Several outputs: the values, the Jacobian table, (--trace) every sweep's tables,
    (--check) a check table per output."""
    from .views import tables as t
    items: list = summary if isinstance(summary, list) else [summary]
    if result.kind == "jacobian":
        if result.inputs:
            items.append(t.jacobian_table(result.outputs, result.inputs, result.matrix, digits,
                                          max_rows))
        if trace:
            items += t.jacobian_trace_tables(result.trace, digits, max_rows)
    elif trace:
        items += ([t.tangent_table(result.trace, digits, max_rows)] if result.kind == "jvp"
                  else t.trace_tables(result.trace, digits, max_rows))
    if report is not None:
        items += t.jacobian_check_tables(report, digits)
    return items


def _eval_batch(graph, request: EvalRequest) -> None:
    """eval --points/--grid: every row evaluated and written (docs/batch.md); exit 1 if any
    row failed, after writing them all."""
    from .batchio import run_batch
    from .readers import grid_rows, read_points
    from .points import parse_grid
    r = request
    # the shell's name for standard output, where the rows go anyway
    output_path = None if r.output_path == "-" else r.output_path
    min_digits = r.digits if "digits" in r.given else None  # certain digits each row must have
    if r.engine == "dask":
        from .batchdask import run_dask
        summary = run_dask(graph, r.points_path, output_path, wrt=r.wrt, at=r.at,
                           scheduler=r.scheduler, of=r.of, min_digits=min_digits,
                           with_digits=r.with_digits)
    else:
        ranges = {}
        for text in r.grid:
            for name, value in parse_grid(text).items():
                if name in ranges:
                    raise InputError(f"--grid gives {name} twice")
                ranges[name] = value
        arrays = getattr(r.at, "shapes", {})
        both = next((name for name in ranges if name in arrays), None)
        if both is not None:  # a grid ranges scalars: an array given by --at stays fixed
            from .engine.arrays import shape_text
            raise InputError(f"--grid gives {both}, which --at gives as an array of shape "
                             f"{shape_text(arrays[both])}", names=(both,),
                             hint="a grid ranges over scalar inputs; give each input one way")
        _warn_unread(ranges, graph, "--grid: ")
        from .views.tables import DelayedProgress
        progress = DelayedProgress()
        try:
            rows = grid_rows(ranges) if ranges else read_points(r.points_path, graph)
            _warn_constant_columns(rows.columns)
            summary = run_batch(graph, rows, output_path, as_json=r.as_json, wrt=r.wrt, at=r.at,
                                progress=progress, min_digits=min_digits,
                                with_digits=r.with_digits)
        finally:
            progress.close()
    if summary.failed:
        click.echo(f"error: {summary.text()}", err=True)
        click.get_current_context().exit(EXIT_NUMERICAL)


def _summary(result, digits: int, screen) -> str:
    """The value and the gradient, or (forward mode along a direction) the directional derivative;
    aligned as ``screen`` prints it (in ASCII, a name's character can be a six-cell escape)."""
    output = output_name(result.graph)
    if result.mode == "forward" and result.directional is not None:
        return directional_text(result.value, result.directional, result.direction, result.seed,
                                digits, output)
    return result_text(result.value, result.gradient, result.seed, digits,
                       _shown_on(screen.stream, screen.ascii), output)


def _check(result, request: EvalRequest):
    """--check and --expect: the gradient against numerical derivatives and the user's formulas."""
    from .check import DEFAULT_ATOL, DEFAULT_RTOL, check_result, expected_values, parse_expectations
    r = request
    proven = getattr(result, "proven", False)
    expected = expected_values(parse_expectations(r.expect), r.at, list(result.gradient),
                               digits=result.digits if proven else None)
    return check_result(result, rtol=DEFAULT_RTOL if r.rtol is None else r.rtol,
                        atol=DEFAULT_ATOL if r.atol is None else r.atol, expected=expected,
                        strict=r.strict, exact_at=r.at)


def _latex_export(path: str | None, standalone: bool) -> bool:
    """Whether --export names a LaTeX file; --standalone only shapes one."""
    tex = bool(path) and path.lower().endswith(".tex")
    if standalone and not tex:
        raise InputError("--standalone shapes a LaTeX export",
                         hint="add --export FILE.tex, or drop --standalone")
    return tex


def _check_export_suffix(path: str, as_json: bool) -> None:
    from .views.screen import EXPORT_SUFFIXES
    if not path.lower().endswith(EXPORT_SUFFIXES):
        raise InputError(f"--export {path}: unknown file type",
                         hint="use a name ending in " + ", ".join(EXPORT_SUFFIXES + (".tex",)))
    if as_json and path.lower().endswith((".svg", ".html", ".htm")):
        raise InputError(f"--export {path}: with --json the export is JSON, not a picture",
                         hint="use --export FILE.json, or drop --json to save the tables")


def _blocks(result, digits, max_rows, trace, check, screen, elements) -> list:
    """What eval shows: the result (an array input's gradient in its shape), (with --trace)
    the trace tables (a program with array values: by array operation, and with --elements
    the scalar rows of those named), (with --check) the check."""
    if result.graph.arrays and not (result.mode == "forward" and result.directional is not None):
        from .views.arrays import gradient_blocks
        items: list = gradient_blocks(output_name(result.graph), result.value, result.gradient,
                                      result.graph.arrays, digits, max_rows, result.seed,
                                      _shown_on(screen.stream, screen.ascii))
    else:
        items = [_summary(result, digits, screen)]
    if not trace and check is None:
        return items
    if trace:  # what the trace is the trace of: the source as gradcli read it
        items.insert(0, _read_as(result.graph, max_rows))
    from .views.tables import check_table, tangent_table, trace_tables
    if trace and result.mode == "forward":
        items.append(tangent_table(result.trace, digits, max_rows))
    elif trace and _has_arrays(result.graph):
        from .arraytrace import chosen
        from .views.tables import array_trace_tables, elements_tables
        arrays = _array_trace(result)
        items += array_trace_tables(arrays, max_rows)
        items += elements_tables(arrays, arrays.scalar, chosen(arrays, elements), digits,
                                 max_rows)
    elif trace:
        items += trace_tables(result.trace, digits, max_rows)
    if check is not None:
        items.append(check_table(check, digits, max_rows=max_rows))
    return items


READ_AS_CHARACTERS = 2_000  # of a trace's "read as" line, as --max-rows cuts its tables


def _reading_limit(max_rows: int) -> int:
    """How much of the reading the trace shows: its first :data:`READ_AS_CHARACTERS`
    characters, all of it (-1) with ``--max-rows 0`` (a program of 10^4 terms reads back as a
    line of a third of a megabyte, which only --max-rows 0 asks for)."""
    return READ_AS_CHARACTERS if max_rows else -1


def _read_as(graph, max_rows: int) -> str:
    """The trace's first line: the source as gradcli read it, as much as
    :func:`_reading_limit` says."""
    from .engine.graph import read_back
    limit = _reading_limit(max_rows)
    text = read_back(graph, limit)[0]
    if 0 <= limit < len(text):
        text = f"{text[:limit]}… (its first {limit:,} characters; --max-rows 0 shows all)"
    return f"read as: {text}"


def _has_arrays(graph) -> bool:
    """Whether the program computes with arrays: its trace, graph and export are by array
    operation (gradcli.arraytrace)."""
    from .arraytrace import has_array_values
    return has_array_values(graph)


def _array_trace(result):
    """The trace of a program with array values, by array operation (gradcli.arraytrace)."""
    from .arraytrace import build_array_trace
    adjoint, records = result.sweep
    return build_array_trace(result.graph, result.trace_values, adjoint, records,
                             scalar=result.trace)


@_expression_command("hessian")
@_AT
@_WRT
@_OF
@_DIGITS
@_FLOAT64
@_JSON
@click.option("--check", "check_", is_flag=True,
              help="Also compare every entry with numerical derivatives of the AD gradient, "
                   "as eval --check does for the gradient (with --direction: H·v against "
                   "central differences of the gradient along v); exit 1 if any disagrees.")
@_STRICT
@_MAX_ROWS
@click.option("--rtol", type=click.FloatRange(min=0), default=None,
              help="Relative tolerance of --check (default 1e-7).")
@click.option("--atol", type=click.FloatRange(min=0), default=None,
              help="Absolute tolerance of --check (default 1e-9).")
@click.option("--export", "export_path", type=click.Path(dir_okay=False, writable=True),
              help="Also save the Hessian (and the check tables) as LaTeX booktabs tables to "
                   "FILE.tex.")
@_STANDALONE
@click.option("--direction", type=PointType("direction"), default=None,
              metavar="NAME=VALUE[,...]",
              help="Only the Hessian-vector product H·v along this direction (an array input's "
                   "as an array, w=[1,0,0]; inputs left out are 0), for any number of inputs: "
                   "one forward-over-reverse sweep instead of one per input.")
@_output_options
def hessian_command(expression, file, at, wrt, of, digits, float64, as_json, check_, strict,
                    max_rows, rtol, atol, export_path, standalone, direction, width, ascii_):
    """The Hessian of EXPRESSION at a point: every second partial derivative, exactly.

    Computed by automatic differentiation (forward-over-reverse: the reverse sweep run on
    dual numbers, one Hessian-vector product per input), not by differences. Rows and
    columns are the inputs in order of first appearance (or the --wrt order). A program
    with several outputs gets one Hessian per output (--of picks them).

    \b
    Examples:
      gradcli hessian "log(x)+x*y-sin(y)" --at x=2,y=3
      gradcli hessian "x^2*y" --at x=2,y=3 --json
      gradcli hessian "exp(x*y)" --at x=1,y=2 --check
      gradcli hessian "x^2*y; sin(x*y)" --at x=1,y=2 --of f2
      gradcli hessian "x^2*y" --at x=2,y=3 --export hessian.tex --standalone
      gradcli hessian "sum(w^3)" --at "w=[1,2,3]" --direction "w=[1,0,0]"

    Exit codes: 0 success, 1 numerical failure or a failed --check, 2 bad input.
    """
    from .api import hessians, select_outputs

    source = _read_source(expression, file, example='gradcli hessian "x^2*y" --at x=1,y=2',
                          warn=False)
    latex = _latex_export(export_path, standalone)  # (--standalone without FILE.tex: an error)
    if export_path and not latex:
        raise InputError(f"--export {export_path}: hessian writes LaTeX only",
                         hint="use a name ending in .tex")
    point = _merged(at)
    graph = select_outputs(_compiled(source, point, as_json), of)  # --json shows the reading
    _warn_unread(point, graph)
    if export_path and graph.n_outputs > 1:
        raise InputError("--export writes the Hessian of one output",
                         hint=f"pick one with --of {graph.output_names[0]}")
    if direction is not None:
        report = (rtol, atol, strict) if check_ else None
        return _hessian_product(graph, point, direction, wrt, digits, float64, as_json,
                                export_path, report, max_rows, width, ascii_)
    _check_hessian_size(graph, wrt)
    results = hessians(graph, point, wrt=wrt, digits=digits, float64=float64)
    reports = {name: r.check(rtol, atol, strict) if check_ else None for name, r in results.items()}
    several = len(results) > 1
    screen = _screen(width, ascii_)
    if export_path:  # the file first: one that cannot be written is all stdout gets (--json)
        from .views.latex import hessian_export
        (result, report), = zip(results.values(), reports.values())
        from .views.screen import write_text
        write_text(export_path, hessian_export(result, digits, report, standalone))
    if as_json:
        from .views.json import hessian_json, hessians_json
        if several:
            screen.json(hessians_json(results, reports))
        else:
            (name, result), = results.items()
            screen.json(hessian_json(result, reports[name]))
    else:
        from .views.tables import hessian_check_tables, hessian_table
        from .views.text import gradient_text
        items: list = []
        for name, result in results.items():
            label = name if several else "f"
            if graph.arrays:  # the gradient in the inputs' shapes; the Hessian by element
                from .views.arrays import gradient_blocks
                items += gradient_blocks(label, result.value, result.gradient, graph.arrays,
                                         digits, max_rows)
            else:
                items.append(gradient_text(label, result.value, result.gradient, digits))
            if result.inputs:
                items.append(hessian_table(result.inputs, result.hessian, digits,
                                           max_rows, title=f"Hessian of {name}" if several else "Hessian"))
            if reports[name] is not None:
                items += hessian_check_tables(reports[name], digits, max_rows)
        screen.show(*items)
        _precision_note(screen, float64, digits, [
            x for r in results.values()
            for x in [r.value, *r.gradient.values(), *(e for row in r.hessian for e in row)]])
    for report in reports.values():
        _fail_on(report)


def _check_hessian_size(graph, wrt) -> None:
    """The whole Hessian of more than MAX_HESSIAN_INPUTS inputs is refused before any sweep
    (one per input): the product along a direction has any size."""
    from .engine.graph import wrt_names
    from .limits import MAX_HESSIAN_INPUTS
    n = len(wrt_names(graph, wrt))
    if n > MAX_HESSIAN_INPUTS:
        example = next(iter(graph.arrays.items()), None)
        along = (f"{example[0]}=[1,0,…]" if example and len(example[1]) == 1 else
                 f"{graph.inputs[0]}=1")
        raise LimitError(f"the Hessian by {n:,} inputs has {n * n:,} entries, more than gradcli "
                         f"computes: at most {MAX_HESSIAN_INPUTS:,} inputs (one sweep each)",
                         hint=f"--direction {along} gives the Hessian-vector product H·v for any "
                              "number of inputs; or name fewer inputs with --wrt")


def _hessian_product(graph, point, direction, wrt, digits, float64, as_json, refused, check_,
                     max_rows, width, ascii_) -> None:
    """hessian --direction: the value, the gradient and H·v, an array input's in its shape;
    with ``check_`` (rtol, atol, strict), H·v against central differences of the gradient."""
    from .api import hvp
    if refused:
        raise InputError("--export goes with the whole Hessian, and --direction gives one "
                         "product", hint="drop --direction to export the Hessian")
    if graph.n_outputs > 1:
        raise InputError("--direction gives the product of one output's Hessian",
                         hint=f"pick one with --of {graph.output_names[0]}")
    _warn_unread(direction, graph, "--direction: ")
    result = hvp(graph, point, direction, wrt=wrt, digits=digits, float64=float64)
    report = result.check(*check_) if check_ else None
    screen = _screen(width, ascii_)
    if as_json:
        from .views.json import check_json, hvp_json
        data = hvp_json(result)
        if report is not None:
            data["check"] = check_json(report)
        screen.json(data)
        _fail_on(report)
        return
    from .views.arrays import gradient_blocks
    items = gradient_blocks("f", result.value, result.gradient, graph.arrays, digits, max_rows)
    items.append("Hessian-vector product H·v along the --direction v:")
    items += gradient_blocks("f", None, result.product, graph.arrays, digits, max_rows,
                             label="∂(∇{output}·v)/∂{name}")
    if report is not None:
        from .views.tables import check_table
        items.append(check_table(report, digits, max_rows=max_rows,
                                 title="H·v check: AD against central differences of the "
                                       "gradient along v"))
    screen.show(*items)
    _precision_note(screen, float64, digits,
                    [result.value, *result.gradient.values(), *result.product.values()])
    _fail_on(report)


def _precision_note(screen, float64: bool, digits: int, numbers) -> None:
    """The note under a Hessian's numbers: --float64's are not certified, or some certified
    ones hold fewer than ``digits`` digits."""
    if float64:
        _notes(screen, ["note: computed in plain float64 (--float64): its digits are not "
                        "certified"])
    elif any(x.digits < digits for x in numbers):
        from .engine.certify import short_digits
        _notes(screen, [f"note: {short_digits(digits)}"])


def _fail_on(report) -> None:
    """Exit 1 (a numerical failure) when a --check or --expect ``report`` failed."""
    if report is not None and not report.ok:
        click.get_current_context().exit(EXIT_NUMERICAL)


@_expression_command("diff")
@_WRT
@_OF
@click.option("--order", type=click.IntRange(min=1), default=1, show_default=True,
              help="The N-th derivative in each input (∂ⁿf/∂xⁿ).")
@click.option("--mixed", type=NameListType("mixed"), default=None, metavar="NAME,NAME[,...]",
              help="One mixed partial instead: --mixed x,y is ∂²f/∂x∂y (by x, then by y); "
                   "--mixed x,x,y is third order.")
@click.option("--at", "at", type=PointType(), multiple=True,
              help="Also evaluate each derivative at this point (NAME=VALUE pairs, as eval's "
                   "--at), to --digits significant digits, every one proven.")
@click.option("--digits", type=click.IntRange(1, 100_000), default=13, show_default=True,
              help="With --at: significant digits of the values.")
@click.option("--shape", "shapes", type=ShapeType(), multiple=True,
              help="Array inputs' shapes (w=3: a vector of 3, X=4x2: a 4 × 2 matrix); an "
                   "array value in --at gives its shape too. The gradient is then printed "
                   "as array formulas (docs/arrays.md).")
@_JSON
@click.option("--latex", "as_latex", is_flag=True,
              help="Print the derivatives as LaTeX (amsmath align*: \\frac, \\partial).")
@click.option("--simplify", is_flag=True,
              help="Also hand each derivative to SymPy's simplify, kept where it prints "
                   "shorter (slower; needs pip install \"gradcli[sympy]\").")
@click.option("--steps", is_flag=True,
              help="Show the derivation rule by rule (sum, constant multiple, product, "
                   "quotient, power, chain, each function's row), ending in the derivative.")
@_output_options
def diff_command(expression, file, wrt, of, order, mixed, at, digits, shapes, as_json,
                 as_latex, simplify, steps, width, ascii_):
    """Print the partial derivatives of EXPRESSION as expressions in gradcli's own syntax.

    Built from the same derivative rules as eval, applied to the expression instead of to
    numbers, and simplified. A subexpression that would repeat is printed once, as an
    assignment (t1 = ...), so each derivative is a program eval reads. One derivative is
    printed alone; several are each headed by a comment line (# ∂f/∂x, or # ∂f2/∂x for a
    program with several outputs), and the whole text is a program with one output per
    derivative: eval evaluates them all.

    \b
    Examples:
      gradcli diff "log(x)+x*y-sin(y)"
      gradcli diff "log(x)+x*y-sin(y)" --wrt x
      gradcli eval "$(gradcli diff 'log(x)+x*y-sin(y)' --wrt x)" --at x=2,y=3
      gradcli diff "x^10" --order 3
      gradcli diff "x^2*y^3" --order 2 | gradcli eval - --at x=1,y=2
      gradcli diff "exp(x*y)" --mixed x,y
      gradcli diff "exp(x*y)" --json
      gradcli diff "x/(1+x)" --order 2 --latex
      gradcli diff "log(x)+x*y-sin(y)" --at x=2,y=3
      gradcli diff "x^2*sin(x)" --steps
      gradcli diff "x*sin(x)^2 + x*cos(x)^2" --simplify
      gradcli diff "mean((X @ w - y)^2)" --shape X=3x2,w=2,y=3
    """
    shapes = _array_shapes(shapes, at)
    if shapes:  # array inputs: the gradient as array formulas
        source = _read_source(expression, file, example='gradcli diff "sum(w^2)" --shape w=3')
        _print_array_derivatives(source, shapes, wrt, of, order, mixed, at, digits, as_json,
                                 as_latex, simplify, steps, width, ascii_)
        return
    if steps and (order != 1 or mixed is not None or at or simplify):
        raise InputError("--steps derives first derivatives, one input at a time",
                         hint="drop --order, --mixed, --at and --simplify")
    if mixed is not None and (order != 1 or wrt is not None):
        raise InputError("--mixed names the inputs to differentiate by, one per order",
                         hint="drop --order and --wrt")
    source = _read_source(expression, file, example='gradcli diff "x^2*y"')
    if steps:
        _print_steps(source, wrt, of, as_json, as_latex, width, ascii_)
        return
    with gc_paused(), _shape_hint():
        _print_derivatives(source, wrt, of, order, mixed, as_json, as_latex, width, ascii_,
                           _merged(at) if at else None, digits, simplify)
    if simplify:
        _notes(_screen(width, ascii_), ["note: --simplify: each derivative also went through "
                                        "SymPy's simplify, kept where it prints shorter"])


def _array_shapes(shapes, at) -> dict:
    """The array inputs' shapes of diff: --shape's, and those of --at's array values."""
    found: dict = {}
    for given in shapes:
        found.update(given)
    if at:
        for name, shape in _merged(at).shapes.items():
            if found.get(name, shape) != shape:
                from .engine.arrays import shape_text
                raise InputError(f"gives {name} the shape {shape_text(found[name])}, "
                                 f"and --at a value of shape {shape_text(shape)}",
                                 option="shape", names=(name,), hint="give one of them")
            found[name] = shape
    return found


@contextmanager
def _shape_hint():
    """An input read as an array (``w[0]``) with no shape given: say how to give one."""
    try:
        yield
    except MissingInputError as exc:
        if exc.hint is None and exc.names:
            exc.hint = (f"an array input needs its shape: --shape {exc.names[0]}=3 (a vector "
                        f"of 3), or an array value in --at")
        raise


def _print_array_derivatives(source, shapes, wrt, of, order, mixed, at, digits, as_json,
                             as_latex, simplify, steps, width, ascii_):
    """diff of a program with array inputs: the gradient as array formulas (first order)."""
    from .api import array_derivatives
    from .views.text import derivative_label
    for flag, given in (("--steps", steps), ("--order", order != 1), ("--mixed", mixed),
                        ("--of", of), ("--simplify", simplify)):
        if given:
            raise InputError("is not there for array inputs: diff prints their first "
                             "derivatives, the gradient, as array formulas",
                             option=flag[2:], hint=f"drop {flag}, or use gradcli eval --at")
    result = array_derivatives(source, shapes, wrt)
    screen = _screen(width, ascii_)
    values = None
    if at:
        from .api import jacobian
        point = _merged(at)
        values = {name: jacobian(text, point, digits=digits) for name, text in result.items()}
    if as_json:
        from .engine.arrays import nested
        from .views.json import diff_json
        screen.json(diff_json(source, result, 1, values=None if values is None else {
            name: nested([float(r.values[o]) for o in r.outputs], shapes.get(name, ()))
            for name, r in values.items()}, shapes=shapes))
        return
    if as_latex:
        from .views.latex import derivatives as latex_derivatives
        screen.echo(latex_derivatives(result, 1))
        return
    if len(result) == 1:
        screen.echo(next(iter(result.values())))
    else:
        screen.echo("\n\n".join(f"# {derivative_label('f', [name])}\n{text}"
                                 for name, text in result.items()))
    if values:
        from .views.text import values_text
        lines = {}
        for name, r in values.items():
            for output in r.outputs:
                label = derivative_label("f", [name])
                lines[label + output[1:] if output.startswith("f[") else label] = \
                    r.values[output]
        point = _merged(at)
        screen.write("\nat " + ", ".join(f"{n} = {_point_text(point, n)}" for n in
                                          {n.partition("[")[0]: 0 for n in point}) + ":\n"
                     + values_text(lines, digits) + "\n")


def _point_text(point, name: str) -> str:
    """An input's value as --at gave it: a number, or an array as a literal."""
    if name not in point.shapes:
        return str(point.exact(name))
    from .engine.arrays import element_names, nested
    shape = point.shapes[name]
    values = nested([str(point.exact(e)) for e in element_names(name, shape)], shape)
    return str(values).replace("'", "")


def _print_steps(source, wrt, of, as_json, as_latex, width, ascii_):
    from .api import compile, derivation_steps
    derivations = derivation_steps(source, wrt, of=of)
    partial = len(compile(source).inputs) > 1  # ∂/∂w when the expression reads several inputs
    screen = _screen(width, ascii_)
    if as_json:
        from .views.json import steps_json
        screen.json(steps_json(source, derivations, partial))
    elif as_latex:
        from .views.latex import steps as latex_steps
        screen.echo(latex_steps(derivations, partial))
    elif not derivations:
        _warn("the expression reads no inputs, so it has no partial derivatives")
    else:
        from .views.steps import steps_sheet
        from .views.text import derivative_label
        screen.show(*[steps_sheet(d, partial, derivative_label("f", [d.wrt]) + " step by step")
                      for d in derivations])


def _print_derivatives(source, wrt, of, order, mixed, as_json, as_latex, width, ascii_,
                       point=None, digits=13, simplify=False):
    from .api import all_derivatives
    from .views.text import derivative_label

    result = all_derivatives(source, wrt, order, of=of, mixed=mixed, simplify=simplify)
    several = len(result) > 1
    screen = _screen(width, ascii_)  # the derivatives are programs: never wrapped
    values = None
    if point is not None:  # each derivative evaluated there, as eval evaluates it
        from .api import compile, evaluate
        from .engine.graph import point_vector
        graph = compile(source)
        _warn_unread(point, graph)
        point_vector(graph, point)  # a missing input is named in the source, not a derivative
        values = {output: {key: evaluate(text, point, digits=digits).value
                           for key, text in texts.items()} for output, texts in result.items()}
    if as_json:
        from .views.json import diff_json
        def one(d):  # several outputs: keyed by output; one: by input alone
            return d if several else next(iter(d.values()))
        screen.json(diff_json(source, one(result), order, list(result) if several else None,
                              mixed, None if values is None else one(values)))
        return
    if as_latex and any(result.values()):
        if several or mixed is not None:
            raise InputError("--latex prints the derivatives of one output, by --order",
                             hint="pick one output with --of; drop --mixed")
        from .views.latex import derivatives as latex_derivatives
        screen.echo(latex_derivatives(next(iter(result.values())), order))
        return
    blocks = [(derivative_label(output, key.split(",") if mixed else [key] * order), text)
              for output, texts in result.items() for key, text in texts.items()]
    if len(blocks) == 1:
        screen.echo(blocks[0][1])
    elif not blocks:
        _warn("the expression reads no inputs, so it has no partial derivatives")
    else:  # block by block: joined, they would be copied twice more, and widened (∂ is UCS-2)
        for i, (label, text) in enumerate(blocks):
            screen.write(("\n" if i else "") + f"# {label}\n")
            screen.write(text)
        screen.write("\n")
    if values and blocks:
        from .views.text import values_text
        labelled = {label: values[output][key] for (label, _), (output, key) in zip(
            blocks, [(o, k) for o, texts in result.items() for k in texts])}
        screen.write("\nat " + ", ".join(f"{n} = {point.exact(n)}" for n in point) + ":\n"
                     + values_text(labelled, digits) + "\n")


@_expression_command("codegen")
@click.option("--lang", type=click.Choice(["python", "numpy", "jax", "c"]), default="python",
              show_default=True, help="python: plain math; numpy: over arrays; jax: jax.numpy "
                                      "(jit it); c: C99 with <math.h>.")
@click.option("--mode", type=click.Choice(["reverse", "forward", "hessian"]), default=None,
              help="reverse (default): values and gradient (the Jacobian's rows); forward: "
                   "derivatives along a direction; hessian: gradient and Hessian.")
@click.option("--hvp", is_flag=True, help="With the Hessian: only the Hessian-vector product.")
@click.option("--name", default="f", show_default=True,
              help="The generated function's name (not a word of the language or of the code).")
@click.option("--wrt", type=NameListType(), default=None,
              help="Differentiate by these inputs only, in this order (default: all); the "
                   "others stay parameters (data).")
@click.option("--inputs", "inputs", type=NameListType("inputs"), default=None,
              help="The parameters' order, every input once (default: order of first "
                   "appearance).")
@click.option("--returns", type=click.Choice(["tuple", "dict"]), default="tuple",
              show_default=True,
              help="dict: the gradient (Jacobian, Hessian) keyed by input name, several "
                   "outputs by output name (python, numpy, jax).")
@click.option("--shape", "shapes", type=ShapeType(), multiple=True,
              help="Array inputs' shapes (w=3, X=4x2): NumPy, JAX or C array code, one "
                   "statement per array node (docs/codegen.md).")
@_JSON
@click.option("-o", "--output", "output_path", type=click.Path(dir_okay=False),
              help="Write the code to FILE (C: also its header, FILE with .h) instead of "
                   "printing it.")
def codegen_command(expression, file, lang, mode, hvp, name, wrt, inputs, returns, shapes,
                    as_json, output_path):
    """Print the gradient of EXPRESSION as code: straight-line adjoint code to paste.

    One statement per tape node (the forward sweep), then one per contribution of the
    reverse sweep, sharing kept, each commented with its --trace id. See docs/codegen.md.

    \b
    Examples:
      gradcli codegen "log(x)+x*y-sin(y)"
      gradcli codegen "log(x)+x*y-sin(y)" --lang c -o grad.c
      gradcli codegen -f model.grad --lang numpy --mode forward
      gradcli codegen "x^2*y" --lang jax --mode hessian
      gradcli codegen "w*x + b" --inputs w,b,x --wrt w,b --returns dict
      gradcli codegen "mean((X @ w - y)^2)" --shape X=3x2,w=2,y=3 --lang numpy
    """
    from .code import generate
    source = _read_source(expression, file, example='gradcli codegen "x^2*y"', warn=False)
    mode = mode or ("hessian" if hvp else "reverse")
    shapes = _array_shapes(shapes, ())
    if shapes:  # array inputs: array code
        from .code.arrays import generate_arrays
        if mode != "reverse":
            raise InputError(f"array code is the gradient (reverse mode), not --mode {mode}",
                             option="mode", hint="drop --mode and --hvp")
        _warn_source(source)
        generated = generate_arrays(source, shapes, lang, name=name, inputs=inputs, wrt=wrt,
                                    returns=returns)
    else:
        with _shape_hint():
            generated = generate(_compiled(source), lang, mode, name=name, hvp_only=hvp,
                                 inputs=inputs, wrt=wrt, returns=returns)
    files = []
    if output_path is not None:
        files.append(output_path)
        if lang == "c":
            stem, dot, suffix = output_path.rpartition(".")
            header_path = f"{stem}.h" if dot and "/" not in suffix else f"{output_path}.h"
            if os.path.normcase(os.path.abspath(header_path)) == os.path.normcase(
                    os.path.abspath(output_path)):
                raise InputError(f"{output_path}: the C code and its header would both be "
                                 "written there", option="output",
                                 hint=f"name the code's file: -o {stem}.c (its header is then "
                                      f"{stem}.h)")
            files.append(header_path)
        from contextlib import ExitStack
        from .files import staged, write_error
        with ExitStack() as stack:  # the code and its header, or neither (never the source)
            for path, text in zip(files, [generated.code, generated.header]):
                try:
                    stack.enter_context(staged(path)).write(text.encode("utf-8"))
                except OSError as exc:
                    raise write_error(path, exc) from None
    if as_json:
        from .views.json import codegen_json
        _screen(None, False).json(codegen_json(generated, files))
    elif output_path is None:
        _screen(None, False).write(generated.code)


@main.command("functions", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
@_output_options
def functions_command(as_json, width, ascii_):
    """List the functions and operators with their derivative rules and domains.

    In the rules, a and b are the arguments. At kinks gradcli uses the conventional
    subgradient (relu'(0) = 0, abs'(0) = 0, ties of min/max split evenly).
    """
    from .views.catalogue import catalogue
    rows = catalogue()
    screen = _screen(width, ascii_)
    if as_json:
        from .views.json import dumps, functions_json
        screen.echo(dumps(functions_json(rows), indent=2, ascii=screen.ascii))
        return
    from .views.tables import functions_table
    screen.show(functions_table(rows))


@_expression_command("graph")
@click.option("--at", "at", type=PointType(), multiple=True,
              help="Annotate at this point (NAME=VALUE pairs, repeatable): each node with its "
                   "value (data) and adjoint (grad), each edge with its local derivative.")
@click.option("--format", "fmt", type=click.Choice(["text", "dot", "mermaid"]), default="text",
              show_default=True,
              help="text: a drawing in the terminal; dot: Graphviz; mermaid: for Markdown.")
@click.option("-o", "--output", "output_path", type=click.Path(dir_okay=False),
              help="Write FILE instead, by its suffix: .svg .png .pdf ... rendered by Graphviz's "
                   "dot; .dot/.gv (DOT text) and .mmd (Mermaid) need no Graphviz.")
@click.option("--max-nodes", type=click.IntRange(min=0), default=DEFAULT_MAX_NODES,
              show_default=True,
              help="Draw at most N inputs and operations, those nearest the output (0 = all).")
@click.option("--digits", type=click.IntRange(0, 17), default=4, show_default=True,
              help="At most N digits after the decimal point (trailing zeros dropped).")
@click.option("--layout", type=click.Choice(["lr", "tb"]), default=None,
              help="lr: inputs on the left, the output on the right; tb: one box under another, "
                   "inputs at the top (default: lr where it fits the width, else tb).")
@_JSON
@_output_options
def graph_command(expression, file, at, fmt, output_path, max_nodes, digits, layout, as_json,
                  width, ascii_):
    """Draw the computational graph of EXPRESSION: inputs on the left, the output on the right,
    nodes numbered v1..vk as in the --trace tables. With several outputs each is marked with
    its name (→ f1) and, at a point, nodes show no adjoint (there is one per output).

    \b
    Examples:
      gradcli graph "log(x)+x*y-sin(y)"
      gradcli graph "log(x)+x*y-sin(y)" --at x=2,y=3
      gradcli graph "log(x)+x*y-sin(y)" --format dot > g.dot
      gradcli graph "log(x)+x*y-sin(y)" --format mermaid
      gradcli graph "log(x)+x*y-sin(y)" --at x=2,y=3 -o g.svg

    Exit codes: 0 success, 1 numerical failure at the --at point, 2 bad input (also: -o with
    an image type when Graphviz's dot is not installed).
    """
    from .api import annotations
    from .views.diagrams import save, to_dot, to_mermaid
    from .views.picture import build_picture, cap_note

    ctx = click.get_current_context()
    source = _read_source(expression, file, example='gradcli graph "x^2 + y"', warn=False)
    point = _merged(at)
    graph = _compiled(source, point)
    if at:
        _warn_unread(point, graph)
    if _has_arrays(graph) and graph.n_outputs == 1:  # a node per array operation
        picture = _array_picture(graph, point if at else None, max_nodes)
    elif at:
        values, adjoint, partials = annotations(graph, point)
        picture = build_picture(graph, values, max_nodes, adjoint=adjoint, partials=partials)
    else:
        picture = build_picture(graph, max_nodes=max_nodes)
    note = cap_note(picture)
    screen = _screen(width, ascii_)
    if as_json:
        if output_path or fmt != "text":
            raise InputError("--json prints the graph as JSON: give --json, --format or -o",
                             hint="drop --format/-o")
        from .views.json import graph_json
        screen.json(graph_json(picture, source,
                               {n: point[n] for n in graph.inputs if n in point} if at else None))
        if note:
            _warn(note)
        return
    if fmt == "text" and not output_path:
        from .views.tables import show_graph
        cut = show_graph(picture, digits, note, screen=screen, layout=layout)
        if cut:  # on stderr: the drawing's line count never depends on the width
            _warn(cut)
        return
    if output_path:
        if ctx.get_parameter_source("fmt") is click.core.ParameterSource.COMMANDLINE:
            raise InputError("-o chooses the format by the file's suffix: give --format or -o, "
                             "not both")
        save(picture, output_path, digits)
    else:
        screen.write(to_dot(picture, digits) if fmt == "dot" else to_mermaid(picture, digits))
    if note:  # stdout holds DOT or Mermaid (or nothing): the note goes to stderr
        _warn(note)


def _array_picture(graph, point, max_nodes: int):
    """graph of a program with array values: a node per array operation, with its shape (at a
    point, float64's values and adjoints, as the scalar graph's), at most ``max_nodes``."""
    from .arraytrace import build_array_trace
    from .views.picture import array_picture
    if point is None:
        return array_picture(build_array_trace(graph, None, None, None), max_nodes)
    from .api import evaluate
    result = evaluate(graph, point, float64=True, record=True)
    adjoint, records = result.sweep
    return array_picture(build_array_trace(graph, result.values, adjoint, records), max_nodes)


@_expression_command("plot")
@click.option("--over", "over", multiple=True, metavar="NAME=START:STOP[:COUNT][,...]",
              help="The range of one input (curves) or two inputs (a heat map with the gradient "
                   "field); COUNT is the number of samples. Default: -5:5 for each input --at "
                   "leaves free (around the --tangent point), said in a note.")
@_AT
@_OF
@click.option("--order", type=click.IntRange(0, 6), default=1, show_default=True,
              help="Draw f and its derivatives up to this order (one input).")
@click.option("--tangent", "tangent", type=PointType("tangent"), default=None,
              help="Draw the tangent line at NAME=VALUE and print its equation (one input).")
@click.option("--samples", type=click.IntRange(2, 1_000_000), default=None,
              help="Samples along the range (default 400; a heat map: one per character "
                   "cell, an image: 200 per axis).")
@click.option("--width", type=click.IntRange(20, 1000), default=None,
              help="Terminal plot width in characters (default: the terminal's, or 80).")
@click.option("--height", type=click.IntRange(5, 500), default=None,
              help="Terminal plot height in lines (default: fits the terminal, at most 24).")
@click.option("--size", "size", default="800x600", show_default=True, metavar="WxH",
              help="Image size in pixels, with -o.")
@click.option("-o", "--output", "output_path", type=click.Path(dir_okay=False), default=None,
              help="Save an image: .png, .svg or .pdf (needs matplotlib: the plot extra).")
@click.option("--format", "fmt", type=click.Choice(["text", "csv"]), default="text",
              show_default=True, help="text: a picture; csv: the sampled data, for plotting "
                                      "elsewhere.")
@click.option("--log", "log_scale", is_flag=True,
              help="Colour a heat map by log(f - min f), for valleys like Rosenbrock's.")
@click.option("--field", type=click.Choice(["descent", "ascent"]), default="descent",
              show_default=True, help="Heat map arrows: -grad f (descent) or grad f (ascent).")
@click.option("--ascii", "ascii_only", is_flag=True, help="Draw with ASCII characters only.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the samples as one JSON object (the columns of --format csv).")
def plot_command(expression, file, over, at, of, order, tangent, samples, width, height, size,
                 output_path, fmt, log_scale, field, ascii_only, as_json):
    """Plot f and its derivatives over a range, or f and its gradient field over a rectangle.

    \b
    Examples:
      gradcli plot "sin(x)^2" --over x=-3:3
      gradcli plot "sin(x)^2" --over x=-3:3 --order 2 --tangent x=1
      gradcli plot "x^2*y" --over x=-2:2 --at y=3
      gradcli plot "(1-x)^2 + 100*(y-x^2)^2" --over x=-2:2,y=-1:3 --log
      gradcli plot "sin(x)^2" --over x=-3:3 -o plot.png
      gradcli plot "log(x)" --over x=0.5:2:5 --format csv
      gradcli plot "x^2; sin(x)" --over x=-3:3 --of f2

    A sample where f is undefined is left out of the picture and counted, not an error.
    Needs the plot extra: pip install "gradcli[plot]". Exit codes: 0 success, 2 bad input
    (also: the extra is not installed).
    """
    from .plotting import PlotRequest, plot
    source = _read_source(expression, file, example='gradcli plot "sin(x)^2" --over x=-3:3',
                          warn=False)
    request = PlotRequest(
        source=source, over=list(over), at=dict(_merged(at)), order=order,
        tangent=tangent, samples=samples, width=width, height=height, size=size,
        output=output_path, fmt="json" if as_json else fmt, log=log_scale,
        descent=field == "descent",
        ascii_only=ascii_only, of=of, graph=_compiled(source))  # parsed once, warnings said
    screen = _screen(None, False)
    for channel, text in plot(request):
        if channel == "err":
            _flush_stdout()  # what was printed before the note stays before it
            click.echo(text, nl=False, err=True)
        else:
            screen.write(text)


@main.command("repl", context_settings=CONTEXT)
@click.argument("script", metavar="SCRIPT", required=False)  # read by _read_source: our errors
def repl_command(script):
    """A session: definitions, a current point, history and completion (docs/repl.md).

    \b
    Examples:
      gradcli repl
      gradcli repl lesson.txt
      gradcli repl < lesson.txt

    With a SCRIPT, or standard input not a terminal, runs the lines in order and prints each
    result. Needs prompt_toolkit in a terminal: pip install "gradcli[interactive]". Exit codes
    (a script): 0 success, 1 if any line failed (after running them all).
    """
    from .repl import start
    lines = None
    if script is not None:  # a file that cannot be read is an io error, as -f FILE's
        from .errors import FileError
        try:
            # (a script of lines, not an expression: each line's run says its own warnings)
            lines = _read_source(None, script, warn=False).splitlines(keepends=True)
        except FileError as exc:
            exc.hint = "check the file's name, or pipe the lines in: gradcli repl < FILE"
            raise
    code = start(_run_args, lines)
    click.get_current_context().exit(code)


@_expression_command("explore")
@_AT
@click.option("--ascii", "ascii_", is_flag=True, help="Only ASCII characters.")
def explore_command(expression, file, at, ascii_):
    """Step through the forward and the reverse sweep, in a full-screen app (docs/explore.md).

    \b
    Examples:
      gradcli explore "log(x)+x*y-sin(y)" --at x=2,y=3

    Right and Left step, Home and End jump, f and r choose the mode, q quits. Needs Textual:
    pip install "gradcli[interactive]". Exit codes: 0 success, 2 bad input.
    """
    from .explore import start
    source = _read_source(expression, file, example='gradcli explore "x*y" --at x=2,y=3',
                          warn=False)
    point = _merged(at)
    start(source, point, ascii_, _compiled(source, point))  # parsed once, warnings said


def _run_args(args: list[str]) -> int:
    """One command line of the repl, run as from the shell (its own error boundary): its exit
    code."""
    try:
        main.main(args, prog_name="gradcli", standalone_mode=True)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return 0


def _merged(at):
    from .points import merge_points
    return merge_points(list(at))


def _raised_by_click(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside click itself (its help and version printing)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals.get("__name__", "").startswith("click")


class _ClosedStream(io.TextIOBase):
    """Standard output when the process started without one: every write fails as a write to a
    closed descriptor does, so help and version report it like any other output."""

    def write(self, text):
        import errno
        raise OSError(errno.EBADF, "standard output is closed")


def run():  # pragma: no cover - the console script entry point (see gradcli.__main__)
    try:  # a character the stream cannot encode (help text on cp1252) is escaped, never fatal
        sys.stdout.reconfigure(errors="backslashreplace")
    except (AttributeError, ValueError):
        pass  # closed (None) or not a text file: nothing to reconfigure
    if sys.stdout is None:  # started with it closed: click's help would print nothing, exit 0
        sys.stdout = _ClosedStream()
    try:
        main(prog_name="gradcli")
    except OSError as exc:  # click's own writes (--help, --version) to a full or closed stdout
        if not (_raised_by_click(exc) or isinstance(sys.stdout, _ClosedStream)):
            raise
        if isinstance(exc, BrokenPipeError):
            _silence_stdout()
            sys.exit(EXIT_PIPE)
        from .views.screen import stdout_error
        _silence_stdout()
        click.echo(describe(stdout_error(exc)), err=True)
        sys.exit(stdout_error(exc).exit_code)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
