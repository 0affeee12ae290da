"""Source text -> AST, with Lark's LALR parser built once per process (and cached on disk).

The transformer is passed to the parser, so the AST is built during the parse itself: there is
no second, recursive pass over a tree, and a 100,000-deep nesting parses like a flat one.
Lark's exceptions become :class:`~gradcli.errors.ParseError` with a span and a hint.
"""

from __future__ import annotations

import os
import re
from sys import intern
from typing import Callable

from lark import Lark, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from .ast import Assign, Binary, Call, Num, Program, Unary, Var
from .errors import ParseError
from .gcpause import gc_paused

# How each terminal is named in "expected ..." messages.
_FRIENDLY = {
    "NUMBER": "a number", "NAME": "a name", "LPAR": "'('", "RPAR": "')'", "COMMA": "','",
    "PLUS": "'+'", "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'", "POW": "'^'",
    "ASSIGN_OP": "'='", "_SEP": "';' or a new line", "$END": "the end of the input",
}
_OPERATORS = ("PLUS", "MINUS", "STAR", "SLASH", "POW")
_OPERAND_START = ("NUMBER", "NAME", "LPAR")


class _ToAst(Transformer):
    """Lark callbacks, one per grammar alias, each building an AST node from the rule's children.

    The methods take the children as one list (Lark's plain callback convention, no ``v_args``
    wrapper): Lark then calls them directly, and so does the fast loop in :func:`_fast_parser`.
    """

    def num(self, children):
        tok = children[0]
        value = float(tok)
        if value == float("inf"):
            raise ParseError(f"the number {tok} is too large for a 64-bit float",
                             (tok.start_pos, tok.end_pos), hint="the largest is about 1.8e308")
        return Num(value, (tok.start_pos, tok.end_pos))

    def var(self, children):
        tok = children[0]
        # Interned: a name read 10,000 times is one string, hashed once by the lowering's dicts.
        return Var(intern(tok.value), (tok.start_pos, tok.end_pos))

    def unary(self, children):
        op, operand = children
        return Unary(op.value, operand, (op.start_pos, operand.span[1]))

    def binary(self, children):
        left, op, right = children
        return Binary("^" if op.value == "**" else op.value, left, right,
                      (left.span[0], right.span[1]))

    def call(self, children):
        name, rpar = children[0], children[-1]
        return Call(intern(name.value), tuple(children[2:-1:2]), (name.start_pos, rpar.end_pos),
                    (name.start_pos, name.end_pos))

    def group(self, children):
        return children[1]

    def assign(self, children):
        name, op, value = children
        return Assign(intern(name.value), op.value, value, (name.start_pos, value.span[1]))

    def program(self, children):
        return Program(tuple(children))


class _NewlinesInParentheses:
    """Post-lexer: a newline inside parentheses continues the expression instead of ending it."""

    always_accept = ()

    def process(self, stream):
        depth = 0
        for tok in stream:
            kind = tok.type
            if kind == "LPAR":
                depth += 1
            elif kind == "RPAR":
                depth -= 1
            elif depth > 0 and kind == "_SEP" and tok.value != ";":
                continue
            yield tok


_parser: Lark | None = None
_fast: "Callable[[str], object] | None" = None


def grammar_text() -> str:
    """The grammar, read from the installed package data (``grammar/gradcli.lark``)."""
    from . import grammar
    try:  # a plain file next to the package: no importlib.resources (a millisecond at start-up)
        with open(os.path.join(grammar.__path__[0], "gradcli.lark"), encoding="utf-8") as file:
            return file.read()
    except OSError:  # e.g. installed inside a zip file
        from importlib import resources
        return resources.files(grammar).joinpath("gradcli.lark").read_text(encoding="utf-8")


def build_parser(**options) -> Lark:
    """A new LALR parser for the grammar; ``options`` go to :class:`lark.Lark`."""
    settings = dict(parser="lalr", lexer="basic", transformer=_ToAst(),
                    postlex=_NewlinesInParentheses(), maybe_placeholders=False)
    settings.update(options)
    return Lark(grammar_text(), **settings)


def _get_parser() -> Lark:
    global _parser
    if _parser is None:
        try:
            # The cache file holds the LALR tables, keyed by a hash of grammar and Lark version.
            _parser = build_parser(cache=True)
        except OSError:
            _parser = build_parser()
    return _parser


_FAILED = object()


def _fast_parser(lark: Lark):
    """The same parse as ``lark.parse`` in one tight loop, or None where this Lark differs.

    Lark's own LALR loop pays several Python calls per token (a lexer generator, a Token built
    through ``__new__(*args, **kwargs)``, line counting, ``feed_token``, a wrapper per
    reduction). This loop reads the very same things Lark built: its master lexer regex, its
    LALR tables and its callbacks (our transformer), so it accepts the same language and builds
    the same AST. It returns ``_FAILED`` at the first token it cannot shift or reduce; the
    caller then lets Lark parse the text again, to raise Lark's own exception (errors are rare,
    so paying twice for them keeps every message and span exactly as Lark's path gives them).
    """
    try:
        frontend = lark.parser
        lexer = frontend.lexer.lexer  # the BasicLexer behind the post-lexer connector
        (pattern,) = lexer.scanner._mres  # one compiled alternation of every terminal
        table = frontend.parser._parse_table
        callbacks = frontend.parser.parser.callbacks
        postlex = lark.options.postlex
        ignore = lexer.ignore_types
        if lexer.callback or any(isinstance(key, str) for key in callbacks):
            return None  # terminal callbacks: keep Lark's loop, which knows them
    except (AttributeError, TypeError, ValueError):
        return None  # another Lark version or set-up: its own loop is always right

    from lark.lexer import Token
    from lark.parsers.lalr_analysis import Shift

    # One dict per state, keyed by terminal (the action) and by rule name (the goto). A shift
    # or goto is the target state's own dict, so the stack holds dicts and no index is looked up;
    # a reduction is (size, rule name, callback), with callback None for a unit rule like
    # ``?sum: product``, whose value is its only child (Lark's ExpandSingleChild).
    rows = {state: {} for state in table.states}
    for state, row in table.states.items():
        out = rows[state]
        for symbol, (action, arg) in row.items():
            if action is Shift:
                out[symbol] = rows[arg]
            else:
                out[symbol] = (len(arg.expansion), arg.origin.name,
                               None if _is_unit(arg) else callbacks[arg])
    start, end = rows[table.start_states["start"]], rows[table.end_states["start"]]
    new_token, finditer = str.__new__, pattern.finditer

    def scan(source):
        """Lark's tokens, then an ``$END`` token if every character was matched."""
        pos = 0
        for match in finditer(source):
            begin, pos_end = match.span()
            if begin != pos:
                return  # a character no terminal matches: the parse cannot complete
            pos = pos_end
            kind = match.lastgroup
            if kind in ignore:
                continue
            text = match.group()
            tok = new_token(Token, text)
            tok.type, tok.value, tok.start_pos, tok.end_pos = kind, text, begin, pos_end
            yield tok
        if pos == len(source):
            tok = new_token(Token, "")
            tok.type, tok.value, tok.start_pos, tok.end_pos = "$END", "", pos, pos
            yield tok

    def parse(source):
        stack = [start]
        values = []
        push, push_value = stack.append, values.append
        row = start
        for tok in postlex.process(scan(source)):
            kind = tok.type
            while True:
                action = row.get(kind)
                if action is None:
                    return _FAILED
                if action.__class__ is dict:  # shift
                    push(action)
                    push_value(tok)
                    row = action
                    break
                size, name, callback = action
                if callback is None:  # a unit rule: the same value in a new state
                    row = stack[-1] = stack[-2][name]
                else:
                    if size:
                        children = values[-size:]
                        del values[-size:]
                        del stack[-size:]
                    else:
                        children = []
                    push_value(callback(children))
                    row = stack[-1][name]
                    push(row)
                if row is end and kind == "$END":
                    return values[-1]
        return _FAILED  # the scan stopped short

    return parse


def _is_unit(rule) -> bool:
    """Whether Lark reduces ``rule`` to its single child unchanged (a ``?rule`` of one symbol)."""
    if not rule.options.expand1 or rule.alias or len(rule.expansion) != 1:
        return False
    (symbol,) = rule.expansion
    filtered = symbol.is_term and symbol.filter_out and not rule.options.keep_all_tokens
    inlined = not symbol.is_term and symbol.name.startswith("_")
    return not (filtered or inlined)


@gc_paused()
def parse(source: str) -> Program:
    """Parse a program (or a single expression) into a :class:`~gradcli.ast.Program`."""
    global _fast
    lark = _get_parser()
    if _fast is None:
        _fast = _fast_parser(lark) or lark.parse
    try:
        program = _fast(source)
        if program is _FAILED:
            program = lark.parse(source)  # raises Lark's own error for the text
    except UnexpectedInput as exc:
        raise _translate(exc, source) from None
    if not program.statements:
        raise ParseError("the expression is empty", hint='write an expression such as "x^2 + 1"')
    return Program(program.statements, (0, len(source)))


def _expected(names) -> str:
    names = set(names)
    lead = []
    if names & {"STAR", "SLASH", "POW"}:  # only binary operators can follow an operand
        lead.append("an operator")
        names -= set(_OPERATORS)
    if names & set(_OPERAND_START):
        lead.append("an expression")
        names -= {"NUMBER", "NAME", "LPAR", "PLUS", "MINUS"}
    words = lead + sorted({_FRIENDLY[n] for n in names if n in _FRIENDLY})
    if not words:
        return ""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _unclosed_paren(source: str, end: int) -> int | None:
    """Offset of the innermost '(' still open at ``end``, if any."""
    stack = []
    for i, ch in enumerate(source[:end]):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _translate(exc: UnexpectedInput, source: str) -> ParseError:
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream
        char = source[pos]
        return ParseError(f"unexpected character {char!r}", (pos, pos + 1),
                          hint="expressions are made of numbers, names, + - * / ^ ** ( ) , "
                               "and programs of = += -= *= /= ; and # comments")
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        expected = set(exc.expected)
        at_end = tok.type == "$END"
        pos = len(source.rstrip()) if at_end else tok.start_pos
        end = pos + max(1, len(tok.value)) if not at_end else pos + 1
        span = (pos, end)
        what = "end of input" if at_end else (
            "new line" if tok.type == "_SEP" and tok.value != ";" else repr(str(tok.value)))
        if "RPAR" in expected and (at_end or tok.type == "_SEP"):
            opened = _unclosed_paren(source, pos)
            hint = f"the '(' at column {opened + 1} is never closed" if opened is not None else None
            return ParseError(f"unexpected {what}: expected ')'", span, hint=hint)
        if tok.type == "RPAR" and _unclosed_paren(source, pos) is None:
            return ParseError("unmatched ')'", span, hint="remove it or add the '(' it closes")
        if tok.type in _OPERAND_START and "STAR" in expected:
            before = re.search(r"(\w+(\([^()]*\))?|\([^()]*\)|\))\s*$", source[:pos])
            after = re.match(r"\w+|\([^()]*\)|\(", source[pos:])
            left = before.group(1) if before else "…"
            right = after.group(0) if after else str(tok.value)
            return ParseError(f"unexpected {what}: expected an operator", span,
                              hint=f"gradcli has no implicit multiplication: write {left}*{right}")
        if tok.type == "ASSIGN_OP":
            if tok.value == "=" and source[:pos].rstrip().endswith("="):
                return ParseError(f"unexpected {what}", span,
                                  hint="gradcli has no comparison operators; '=' assigns a name")
            return ParseError(f"unexpected {what}", span,
                              hint="only a plain name can be assigned to, at the start of a statement")
        expect = _expected(expected)
        if at_end and expect:
            return ParseError(f"the input ends too early: expected {expect}", span)
        return ParseError(f"unexpected {what}" + (f": expected {expect}" if expect else ""), span)
    return ParseError(str(exc).splitlines()[0], (0, len(source)))
