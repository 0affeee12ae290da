"""LaTeX: derivatives as formulas (``\\frac``, ``\\sin``, ``\\partial``) and tables as booktabs.

``expression`` turns an AST into LaTeX with only the parentheses its precedence needs (an
explicit stack: deep input works). ``derivatives`` writes ``gradcli diff``'s programs as
aligned equations; ``table`` writes a booktabs ``tabular``; ``document`` wraps a fragment in a
compilable document (``--standalone``).
"""

from __future__ import annotations

from ..engine.graph import format_constant
from ..engine.primitives import lookup
from ..language.ast import Assign, Binary, Call, Num, Program, Unary, Var
from ..language.parser import parse
from ..language.printer import _ATOM, _POWER, _PRODUCT, _SUM, _UNARY, Spelling, walk
from . import columns

_UNICODE_GREEK = {chr(0x3B1 + i): name for i, name in enumerate(  # α to ω
    ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
     "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "varsigma", "sigma", "tau", "upsilon",
     "phi", "chi", "psi", "omega"])}
_GREEK = set(_UNICODE_GREEK.values()) - {"omicron", "varsigma"}  # names spelled as letters
_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}"}


def text(s: str) -> str:
    """Plain text with LaTeX's special characters escaped."""
    return "".join(_SPECIAL.get(c, c) for c in s)


def name(s: str) -> str:
    """A variable name in math mode: ``x``, ``x_{1}``, ``\\theta``, ``\\mathit{rate}``."""
    if s in ("pi",):
        return r"\pi"
    if s == "e":
        return "e"
    head = s.rstrip("0123456789")
    digits = s[len(head):]
    if head in _GREEK:
        head = "\\" + head
    elif len(head) == 1 and head in _UNICODE_GREEK:
        head = "\\" + _UNICODE_GREEK[head]
    elif len(head) > 1:
        head = r"\mathit{" + text(head) + "}"
    else:
        head = text(head)
    return head + (f"_{{{digits}}}" if digits else "")


def number(value: float, typed: str = "") -> str:
    """A number as math; ``typed``, the literal's text, keeps every digit typed (``0.1``, a
    formula's exact ``486306618362277152040``), which the float would round."""
    t = typed or format_constant(value, named=False)
    mantissa, e, exponent = t.lower().partition("e")
    if e:  # 1e-05 -> 1 \cdot 10^{-5}
        return rf"{mantissa} \cdot 10^{{{int(exponent)}}}"
    return t


def _typed(source: str, node: Num) -> str:
    """The literal's text in ``source`` (signed as the node's value), or "" where the node has
    none there."""
    text = source[node.span[0]:node.span[1]]
    try:
        if float(text) != abs(node.value):
            return ""
    except ValueError:
        return ""
    return "-" + text if node.value < 0 else text


def scientific(t: str) -> str:
    """A number printed as text (``8.6e-10``, ``0.0e+00``, ``inf``) as math: ``8.6\\times10^{-10}``,
    ``0``, ``\\infty``; a number without an exponent is unchanged."""
    sign = "-" if t.startswith("-") else ""
    body = t.lstrip("+-")
    if body == "inf":
        return sign + r"\infty"
    if "e" not in body or body == "nan":
        return t
    mantissa, exponent = body.split("e")
    if float(mantissa) == 0:
        return "0"
    return f"{sign}{mantissa}" + (rf"\times10^{{{int(exponent)}}}" if int(exponent) else "")


def _function(fn: str) -> str:
    """The row's LaTeX command (``asin`` and ``arcsin`` are ``\\arcsin``), or the name as
    written in ``\\operatorname``."""
    row = lookup(fn)
    return row.latex if row is not None and row.latex else r"\operatorname{" + text(fn) + "}"


def _signed(node) -> bool:
    """Whether ``node`` is written with a leading sign (``-y``, ``-2``, ``-\\frac{6}{y}``,
    ``-a \\, b``): after an operator it is grouped, so ``x - (-y)`` never reads ``x - -y``."""
    while type(node) is Binary and node.op in "*^":
        node = node.left
    if type(node) is Binary and node.op == "/":
        node = node.left
    return type(node) is Unary or (type(node) is Num and str(node.value).startswith("-"))


class LatexSpelling(Spelling):
    """The source walker's grouping with LaTeX's spelling: ``\\frac`` for division (it
    groups its parts itself, so it binds like a power, or like a unary minus when its numerator
    carries one), ``{a}^{b}``, ``\\,`` or ``\\cdot`` for products, named functions."""

    open, close = r"\left(", r"\right)"

    def __init__(self, source: str = ""):
        self.source = source  # the text the nodes' spans point into: numbers as typed

    def number(self, value: float) -> str:
        return number(value)

    def name(self, s: str) -> str:
        return name(s)

    def precedence(self, node) -> int:
        if type(node) is Binary and node.op == "/":
            return _UNARY if _signed(node.left) else _POWER
        if type(node) is Call and node.name == "exp2":
            return _POWER
        return super().precedence(node)

    def pieces(self, expr) -> list:
        if type(expr) is Num and self.source:
            return [number(expr.value, _typed(self.source, expr))]
        pieces = super().pieces(expr)
        if type(expr) is Unary or (type(expr) is Binary and expr.op in "+-*"):
            # an operand after an operator, with a sign of its own: grouped
            pieces = [(p[0], _ATOM) if type(p) is tuple and _signed(p[0]) and i else p
                      for i, p in enumerate(pieces)]
        return pieces

    def binary(self, expr) -> list:
        op = expr.op
        if op == "/":
            top, sign = expr.left, ""
            if type(top) is Num and str(top.value).startswith("-"):  # -\frac{6}{x}
                top, sign = Num(-top.value, top.span), "-"
            elif type(top) is Unary:
                top, sign = top.operand, top.op
            return [sign + r"\frac{", (top, 0), "}{", (expr.right, 0), "}"]
        if op == "^":
            return ["{", (expr.left, _ATOM), "}^{", (expr.right, 0), "}"]
        if op == "*":
            # a number after anything is set off with \cdot; otherwise a thin space
            joint = r" \cdot " if _starts_with_number(expr.right) else r" \, "
            return [(expr.left, _PRODUCT), joint, (expr.right, _UNARY)]
        return [(expr.left, _SUM), f" {op} ", (expr.right, _PRODUCT)]

    def call(self, expr) -> list:
        # the row's notation, whatever name reached it: ceiling(x) is \lceil x\rceil, log(x, 2)
        # is \log_{2}(x), ln(x) is \log(x)
        args = expr.args
        row = lookup(expr.name, len(args))
        fn = row.name if row is not None else expr.name
        shape = _SHAPES.get(fn)
        if shape is not None:
            return list(shape(*[(a, 0) for a in args]))
        return [_function(fn), r"\left(", *self.arguments(args), r"\right)"]


# Functions with a notation of their own; the argument pieces go where they are written.
_SHAPES = {
    "sqrt": lambda a: [r"\sqrt{", a, "}"],
    "abs": lambda a: [r"\left|", a, r"\right|"],
    "floor": lambda a: [r"\left\lfloor ", a, r"\right\rfloor"],
    "ceil": lambda a: [r"\left\lceil ", a, r"\right\rceil"],
    "gamma": lambda a: [r"\Gamma\left(", a, r"\right)"],
    "lgamma": lambda a: [r"\ln\left|\Gamma\left(", a, r"\right)\right|"],
    "digamma": lambda a: [r"\psi\left(", a, r"\right)"],
    "trigamma": lambda a: [r"\psi'\left(", a, r"\right)"],
    "log_base": lambda a, b: [r"\log_{", b, r"}\left(", a, r"\right)"],
    "exp2": lambda a: ["2^{", a, "}"],
}
LATEX = LatexSpelling()


def expression(node, source: str = "") -> str:
    """LaTeX for an expression AST (math mode, without the dollars); ``source``, the text it
    was parsed from, gives each number as typed."""
    return walk(node, LatexSpelling(source) if source else LATEX)


def _starts_with_number(node) -> bool:
    while type(node) is Binary and node.op in "*^":
        node = node.left
    return type(node) is Num


def derivative_symbol(wrt: str, order: int) -> str:
    if order == 1:
        return rf"\frac{{\partial f}}{{\partial {name(wrt)}}}"
    return rf"\frac{{\partial^{{{order}}} f}}{{\partial {name(wrt)}^{{{order}}}}}"


def derivatives(result: dict[str, str], order: int) -> str:
    """``gradcli diff``'s programs as one ``align*`` block (amsmath): ``t_{1} &= ...`` lines,
    then ``\\frac{\\partial f}{\\partial x} &= ...`` for each derivative."""
    lines = []
    for wrt, source in result.items():
        program: Program = parse(source)
        for stmt in program.statements[:-1]:
            assert type(stmt) is Assign
            lines.append(f"{name(stmt.name)} &= {expression(stmt.value, source)}")
        lines.append(f"{derivative_symbol(wrt, order)} &= "
                     f"{expression(program.statements[-1], source)}")
    return align(lines)


def align(lines: list[str]) -> str:
    """Lines of display math (``t &= ...``), aligned at their ``&`` (amsmath's ``align*``)."""
    return "\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}"


def table(spec) -> str:
    """A table of :mod:`gradcli.views.columns` as booktabs (every row, without the columns the
    terminal alone shows): ``\\toprule``, headers, ``\\midrule``, rows, ``\\bottomrule``. A
    column's cells are math or escaped text. The table is set ``\\small`` and shrunk to the text
    width if it is wider (graphicx's ``\\resizebox``): it never runs into the margin."""
    shown = [k for k, c in enumerate(spec.columns) if not c.screen]
    kept = [spec.columns[k] for k in shown]

    def cell(column, c: str) -> str:
        return f"${c}$" if column.math and c else text(c)
    align = "".join("r" if c.justify == "right" else "l" for c in kept)
    body = [r"\begin{table}[ht]", r"\centering", r"\small", rf"\caption{{{text(spec.title)}}}",
            _FIT + rf"{{\begin{{tabular}}{{{align}}}", r"\toprule",
            " & ".join(c.tex or text(c.header) for c in kept) + r" \\", r"\midrule"]
    body += [" & ".join(cell(c, cells[k]) for c, k in zip(kept, shown)) + r" \\"
             for cells in map(spec.cells, spec.rows)]
    body += [r"\bottomrule", r"\end{tabular}}", r"\end{table}"]
    return "\n".join(body)


# At its natural width, or the text width if that is less (graphicx: \width is the box's own).
_FIT = r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}"


def document(fragment: str) -> str:
    """A compilable LaTeX document around a fragment (``--standalone``): A4 with 2.5 cm
    margins, Latin Modern where it is installed."""
    return "\n".join([
        r"\documentclass{article}",
        r"\usepackage[utf8]{inputenc}",
        r"\usepackage[T1]{fontenc}",
        r"\IfFileExists{lmodern.sty}{\usepackage{lmodern}}{}",  # vector fonts where installed
        r"\usepackage[a4paper,margin=2.5cm]{geometry}",
        r"\usepackage{amsmath}",
        r"\usepackage{booktabs}",
        r"\usepackage{graphicx}",
        # the tables are floats: let a page hold all of them rather than one alone on a page
        r"\setcounter{topnumber}{8}\setcounter{totalnumber}{8}",
        r"\renewcommand{\topfraction}{0.95}\renewcommand{\textfraction}{0.05}",
        # a page of tables only: from the top, one after the other (not spread over the page)
        r"\makeatletter\setlength{\@fptop}{0pt}\setlength{\@fpsep}{2\baselineskip}"
        r"\makeatother",
        r"\begin{document}",
        fragment,
        r"\end{document}",
        "",
    ])


# -- the result tables of eval --trace, eval --check and hessian, as booktabs -------------------

def _math(source: str) -> str:
    """A formula printed by gradcli (``log(x)``, ``v1 + v2``) as LaTeX."""
    return expression(parse(source).statements[-1], source)


def _num(value: float, digits: int) -> str:
    from .text import format_number
    return scientific(format_number(value, digits))


def result_math(value: float, gradient: dict[str, float], digits: int,
                source: str | None = None, inputs=()) -> str:
    """The value and gradient as display math: ``f = ...``, ``∂f/∂x = ...``; with ``source``,
    first the function itself (``f(x, y) = ...``, after the program's assignments)."""
    lines = formula_lines(source, inputs) if source else []
    lines += [f"f &= {_num(value, digits)}"]
    lines += [f"{derivative_symbol(n, 1)} &= {_num(g, digits)}" for n, g in gradient.items()]
    return align(lines)


def formula_lines(source: str, inputs) -> list[str]:
    """``t &= ...`` for each assignment of a program, then ``f(x, y) &= ...``."""
    from ..engine.graph import parse_source  # the user's text: sin^2(x) is sin(x)^2
    try:
        program: Program = parse_source(source)
    except Exception:  # the source evaluated, so it parses; a formula is a courtesy, not a must
        return []
    lines = [f"{name(stmt.name)} &= " + expression(
        stmt.value if stmt.op == "=" else Binary(stmt.op[0], Var(stmt.name), stmt.value), source)
        for stmt in program.statements if type(stmt) is Assign]  # a += b: a = a + b
    last = program.statements[-1]
    args = ", ".join(name(n) for n in inputs)
    head = f"f({args})" if args else "f"
    lines.append(f"{head} &= " + (name(last.name) if type(last) is Assign else
                                  expression(last, source)))
    return lines


class Tex(columns.Plain):
    """The tables' notation (:mod:`gradcli.views.columns`) in LaTeX: math cells, ``\\bar{v}_{5}``."""

    most_terms = None  # a file holds every term of a sum
    blank = ""
    repeats = "its elements repeat"
    status = staticmethod({"agree": r"\text{ok}", "disagree": r"\textbf{FAIL}",
                           "inconclusive": r"\text{inconclusive}"}.get)

    def number(self, value: float) -> str:
        return _num(value, self.digits)

    def error(self, x: float) -> str:
        return scientific(f"{x:.1e}")

    def word(self, words: str) -> str:
        return r"\text{" + text(words) + "}"

    def array_formula(self, expr: str) -> str:
        try:
            return _math(expr)
        except Exception:  # a view written as the source wrote it (a8[:, 0]): as text
            return self.word(expr)

    def array(self, values, shape: tuple) -> str:
        """An array as math: a scalar, a vector ``[a, b, c]``, a matrix ``bmatrix``; a long
        axis shows its ends and ``\\ldots`` with the count left out
        (:func:`gradcli.views.arrays.shown`)."""
        from .arrays import PREVIEW, shown
        if values is None:
            return "-"
        if not shape:
            return self.number(values[0])

        def row(start: int, m: int, most: int, between: str) -> str:
            picks, hidden = shown(m, most)
            cells = [self.number(values[start + j]) for j in picks]
            if hidden:
                cells.insert(most - 2, rf"\ldots\text{{ {hidden:,} more }}\ldots")
            return between.join(cells)
        if len(shape) == 1:
            return "[" + row(0, shape[0], PREVIEW, r",\ ") + "]"
        if len(shape) == 2:
            n, m = shape
            picks, hidden = shown(n, max(PREVIEW - 3, 3))
            lines = [row(i * m, m, max(PREVIEW - 2, 3), " & ") for i in picks]
            if hidden:
                lines.insert(len(picks) - 1, rf"\text{{{hidden:,} more rows}}")
            return r"\begin{bmatrix}" + r" \\ ".join(lines) + r"\end{bmatrix}"
        return self.word(f"{len(values)} numbers, shape {columns.shape_text(shape)}")

    def rule(self, rule) -> str:
        """A rule on arrays (:func:`gradcli.arraytrace.rule_text`'s parts) as math."""
        from ..arraytrace import rule_text
        return rule_text(rule.parts, (r"\bar{g}", r"^{\top}", r" \cdot "), name, _math,
                         self.word, (r"\left(", r"\right)"))

    @staticmethod
    def bar(node: str) -> str:
        """An adjoint's name: ``\\bar{v}_{5}``, the bar over the letter, not the subscript."""
        head, brace, digits = name(node).partition("_{")
        return r"\bar{" + head + "}" + (brace + digits if brace else "")

    array_bar = bar
    name = node = staticmethod(name)
    formula = staticmethod(_math)


def eval_export(result, digits: int, trace: bool, check=None, standalone: bool = False,
                arrays=None) -> str:
    """What ``eval --export FILE.tex`` writes: the result, (``--trace``) the trace tables (of a
    program with array values, ``arrays``: by array operation) and (``--check``) the check
    table, as a fragment or (``standalone``) a whole document."""
    directional = getattr(result, "directional", None)
    if directional is not None:
        parts = [result_directional(result.value, directional, digits)]
    else:
        parts = [result_math(result.value, result.gradient, digits,
                             getattr(result, "source", None), getattr(result, "inputs", ()))]
    n = Tex(digits)
    if trace and getattr(result, "mode", "reverse") == "forward":
        parts.append(table(columns.tangents(result.trace, n)))
    elif trace:  # of a program with array values: by array operation
        parts += map(table, columns.array_trace(arrays, n) if arrays is not None else
                     columns.trace(result.trace, n))
    if check is not None:
        parts.append(table(columns.check(check, n)))
    return _fragment(parts, standalone)


def _fragment(parts: list[str], standalone: bool) -> str:
    """The parts, a blank line apart, as a fragment or (``standalone``) a whole document."""
    fragment = "\n\n".join(parts) + "\n"
    return document(fragment) if standalone else fragment


def result_directional(value: float, directional: float, digits: int) -> str:
    return align([f"f &= {_num(value, digits)}",
                  rf"\nabla f \cdot d &= {_num(directional, digits)}"])


def hessian_export(result, digits: int, check=None, standalone: bool = False) -> str:
    """What ``hessian --export FILE.tex`` writes: value, gradient, the Hessian, check tables."""
    parts = [result_math(result.value, result.gradient, digits,
                         getattr(result, "source", None), result.inputs)]
    n = Tex(digits)
    if result.inputs:
        parts.append(table(columns.matrix(result.inputs, result.hessian, n)))
    if check is not None:
        for x, row in check.rows.items():
            parts.append(table(columns.check(row, n, f"Hessian check, row {x}: AD against "
                                                        f"numerical derivatives of df/d{x}")))
    return _fragment(parts, standalone)


def steps(derivations: list, partial: bool) -> str:
    """``gradcli diff --steps --latex``: each derivation as ``align*`` lines, the rule of each
    step beside it (``&& \\text{product rule}``), a pending derivative written
    ``\\frac{d}{dx}\\left(u\\right)``."""
    from .steps import rule_title
    blocks = []
    for d in derivations:
        frac = (rf"\frac{{\partial}}{{\partial {name(d.wrt)}}}" if partial else
                rf"\frac{{d}}{{d{name(d.wrt)}}}")
        pending = {name(marker): frac + r"\left(" + _math(inner) + r"\right)"
                   for marker, inner in d.pending.items()}

        def math(source: str) -> str:
            out = _math(source)
            for marker in sorted(pending, key=len, reverse=True):
                out = out.replace(marker, pending[marker])
            return out
        lines = [math(d.start)]
        for step in d.steps:
            lines.append(f"&= {math(step.line)} && \\text{{{text(rule_title(step))}}}")
        if not d.steps:  # a constant: d/dx(5) = 0
            lines.append("&= 0")
        lines[:2] = [" ".join(lines[:2])]  # the first line: d/dx(f) &= ...
        blocks.append(align(lines))
    return "\n".join(blocks)
