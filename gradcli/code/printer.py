"""What every language of generated code shares: a primitive's spelling, expressions printed
operation for operation (an explicit stack), the comments at the top."""

from __future__ import annotations

import re

from ..engine.primitives import TABLE
from ..symbolic.adjoint import CONDITIONS, Code, Program

LANGUAGES = ("python", "numpy", "jax", "c")
# How each language calls a row that names no spelling of its own: math.log, np.log, log
PREFIX = {"python": "math.", "numpy": "np.", "jax": "jnp.", "c": ""}
_HELPER = re.compile(r"^(_|gc_)\w+$")


def spelling(name: str, lang: str) -> str:
    """How ``lang`` calls the row ``name``: its row's spelling, or the prefixed row name."""
    return TABLE[name].code.get(lang) or PREFIX[lang] + name


class Printer:
    """Expressions of one language; remembers the helpers it used."""

    def __init__(self, lang: str):
        self.lang = lang
        self.helpers: set[str] = set()
        self.modules: set[str] = set()  # the Python modules a spelling names (math, jax, …)

    def number(self, v: float) -> str:
        text = repr(float(v))
        if text in ("inf", "-inf", "nan"):  # a folded constant cannot be one; a rule's could
            text = {"c": {"inf": "INFINITY", "-inf": "-INFINITY", "nan": "NAN"}[text]}.get(
                self.lang, f"float({text!r})")
        return f"({text})" if v < 0 or text.startswith("-") else text

    def expr(self, e) -> str:
        """Fully parenthesised where an operator meets an operator: the order of operations
        is the rule's, bit for bit."""
        if type(e) is float:
            return self.number(e)
        # an explicit stack: (node, None) asks for a node's text; results on ``out``
        out: list[str] = []
        stack: list = [(e, False)]
        while stack:
            node, ready = stack.pop()
            if type(node) is not Code:
                out.append(self.number(node))
                continue
            if node.op == "var":
                out.append(node.args[0])
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((a, False) for a in reversed(node.args))
                continue
            n = len(node.args)
            args = out[len(out) - n:]
            del out[len(out) - n:]
            wrapped = [a if _atomic(x) else f"({a})" for a, x in zip(args, node.args)]
            out.append(self.apply(node.op, args, wrapped))
        return out[0]

    def apply(self, op: str, args: list[str], wrapped: list[str]) -> str:
        lang = self.lang
        if op == "where":
            c, t, f = args
            if lang == "python":
                return f"{t} if {c} else {f}"
            if lang == "c":
                return f"{wrapped[0]} ? {wrapped[1]} : {wrapped[2]}"
            return f"{PREFIX[lang]}where({c}, {t}, {f})"
        if op in CONDITIONS:
            symbol = {"equal": "==", "greater": ">",
                      "both": {"python": "and", "c": "&&"}.get(lang, "&")}[op]
            return f"{wrapped[0]} {symbol} {wrapped[1]}"
        prim = TABLE[op]
        if prim.symbol and prim.name != "pow":
            return f"{wrapped[0]} {prim.symbol} {wrapped[1]}" if len(args) == 2 else \
                f"{prim.symbol}{wrapped[0]}"
        spelled = spelling(op, lang)
        if _HELPER.match(spelled):
            self.helpers.add(spelled)
        if "{" in spelled:  # a template: the modules of the functions it calls
            self.modules.update(re.findall(r"([\w.]+)\.\w+\(", spelled))
            return spelled.format(*wrapped)
        if "." in spelled:
            self.modules.add(spelled.rsplit(".", 1)[0])
        return f"{spelled}({', '.join(args)})"


def operand(e, text: str) -> str:
    """``text`` (the code of ``e``) as the right operand of + or -: parenthesised unless atomic."""
    if type(e) is Code and e.op == "neg":
        e = e.args[0]
    return text if _atomic(e) else f"({text})"


def _atomic(e) -> bool:
    """Whether an expression's text needs no parentheses as an operand: a variable, a positive
    number or a call (a where is a conditional expression: it gets them)."""
    if type(e) is float:
        return e >= 0
    if e.op == "var":
        return True
    if e.op == "where" or e.op in CONDITIONS:
        return False
    prim = TABLE[e.op]
    return not prim.symbol or prim.name == "pow"


def source_comment(program: Program, limit: int = 1000) -> str:
    """The source, indented, for the code's first comment (a long one cut at ``limit``)."""
    text = program.source.strip()
    if len(text) > limit:
        text = text[:limit].rstrip() + " …"
    return "    " + text.replace("\n", "\n    ")


def comment_lines(text: str, mark: str) -> list[str]:
    """``text`` as comment lines, wrapped at 96 columns (its own line breaks kept)."""
    import textwrap
    lines = []
    for line in text.splitlines() or [""]:
        indent = line[:len(line) - len(line.lstrip())]
        lines += textwrap.wrap(line, 96, initial_indent="", subsequent_indent=indent,
                               drop_whitespace=False, break_on_hyphens=False) or [""]
    return [f"{mark} {line}".rstrip() for line in lines]


def what(program: Program) -> str:
    """What the code computes, for its first comment."""
    several = len(program.output_names) > 1
    return {"reverse": "the Jacobian (a row per output)" if several else "the gradient",
            "forward": "the derivatives along a direction (forward mode)" if several
            else "the derivative along a direction (forward mode)",
            "hessian": "the gradient and the Hessian (forward-over-reverse)"}[program.mode]


def wrap(start: str, names: list[str], end: str, indent: str, width: int = 96) -> list[str]:
    """``start`` + the names as one tuple + ``end``, wrapped at ``width``."""
    lines, line = [], start + "("
    for i, n in enumerate(names):
        piece = n + (", " if i < len(names) - 1 else ("," if len(names) == 1 else ""))
        if len(line) + len(piece) > width and line.strip() not in (start.strip() + "(",):
            lines.append(line.rstrip())
            line = indent + "    "
        line += piece
    lines.append(line + ")" + end)
    return lines

