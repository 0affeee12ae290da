"""Source text -> AST: the LALR(1) parser Lark builds from ``grammar/gradcli.lark``.

Lark reads the grammar and computes the parser: the lexer's regular expression, the LALR
tables, and which callback of the transformer (:class:`_ToAst`) each reduction calls. Its
serialization of that parser becomes plain data (``tables.py``), shipped beside the grammar
(``grammar/gradcli.tables.json``, written by :func:`write_shipped_tables`; a test checks it is
the grammar's), so a run of ``gradcli`` neither imports nor builds Lark.

One driver (:func:`driver`) runs those tables, valid text and mistakes alike: a syntax error is
the token the tables cannot shift or reduce and the terminals they expected there, exactly what
Lark's own loop would report (a test compares the two on random token sequences). Its callbacks
run during the parse, so the value is built as the input is read: there is no second, recursive
pass over a tree, and a 100,000-deep nesting parses like a flat one. :func:`parse` gives them
:class:`_ToAst` and gets the AST; the lowering (``engine/graph.py``) gives the same driver
callbacks that make the tape's nodes directly.
"""

from __future__ import annotations

import json
import os
import re
from sys import intern
from functools import partial
from typing import Callable, NamedTuple

from .ast import ArrayLit, Assign, Binary, Call, Index, Num, Program, Unary, Var
from ..errors import LimitError, ParseError
from ..gcpause import gc_paused
from ..limits import SOURCE_VARIABLE, max_source


# How each terminal is named in "expected ..." messages.
_FRIENDLY = {
    "NUMBER": "a number", "NAME": "a name", "LPAR": "'('", "RPAR": "')'", "COMMA": "','",
    "PLUS": "'+'", "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'", "POW": "'^'",
    "MATMUL": "'@'", "LSQB": "'['", "RSQB": "']'",
    "ASSIGN_OP": "'='", "_SEP": "';' or a new line", "$END": "the end of the input",
}
_OPERATORS = ("PLUS", "MINUS", "STAR", "SLASH", "POW", "MATMUL")
_OPERAND_START = ("NUMBER", "NAME", "LPAR", "LSQB")


class _Token:
    """A token of the driver: the part of Lark's ``Token`` that the callbacks read (compiled,
    an extension type of four fields: parser.pxd)."""

    __slots__ = ("type", "value", "start_pos", "end_pos")

    def __init__(self, type: str | None, value: str, start_pos: int, end_pos: int):
        self.type, self.value, self.start_pos, self.end_pos = type, value, start_pos, end_pos


class _ToAst:
    """The callbacks, one per grammar alias, each building an AST node from the rule's children.

    The fast loop calls them, and so does Lark's own loop (``transformer=_ToAst()``, which the
    tests compare it with). They take the children as one list, Lark's plain callback
    convention, so neither adds a wrapper. A token is a :class:`_Token` or Lark's ``Token``;
    only ``value``, ``start_pos`` and ``end_pos`` are read.
    """

    def num(self, children):
        tok = children[0]
        value = float(tok.value)
        if value == float("inf"):
            raise ParseError(f"the number {tok.value} is too large for a 64-bit float",
                             (tok.start_pos, tok.end_pos), hint="the largest is about 1.8e308")
        return Num(value, (tok.start_pos, tok.end_pos))

    def var(self, children):
        tok = children[0]
        if not tok.value.isascii():
            _no_superscript(tok)
        # Interned: a name read 10,000 times is one string, hashed once by the lowering's dicts.
        return Var(intern(_name(tok)), (tok.start_pos, tok.end_pos))

    def unary(self, children):
        op, operand = children
        return Unary(op.value, operand, (op.start_pos, operand.span[1]))

    def binary(self, children):
        left, op, right = children
        return Binary("^" if op.value == "**" else op.value, left, right,
                      (left.span[0], right.span[1]))

    def call(self, children):
        name, rpar = children[0], children[-1]
        if not name.value.isascii():
            _no_superscript(name)
        return Call(intern(_name(name)), tuple(children[2:-1:2]), (name.start_pos, rpar.end_pos),
                    (name.start_pos, name.end_pos))

    def group(self, children):
        return children[1]

    def array(self, children):
        return ArrayLit(tuple(children[1:-1:2]), (children[0].start_pos, children[-1].end_pos))

    def index(self, children):
        target, rsqb = children[0], children[-1]
        return Index(target, tuple(children[2:-1:2]), (target.span[0], rsqb.end_pos))

    def assign(self, children):
        name, op, value = children
        if not name.value.isascii():
            _no_superscript(name)
        return Assign(intern(_name(name)), op.value, value, (name.start_pos, value.span[1]))

    def program(self, children):
        return Program(tuple(children))


# Patterns compiled on first use (re caches them): most programs never need them, and compiling
# them was a third of a millisecond of every start-up.
_ESCAPE = r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})"
_NAME = r"[^\W\d]\w*\Z"


def unescape_name(text: str) -> str:
    """A name with its ``\\uXXXX`` and ``\\UXXXXXXXX`` escapes read: ``\\u03b8`` is ``θ`` (the
    escape gradcli prints where a stream cannot show a character, so its output reads back)."""
    if "\\" not in text:
        return text
    return re.sub(_ESCAPE, lambda m: chr(min(int(m.group(1) or m.group(2), 16), 0x10FFFF)), text)


def _name(tok) -> str:
    """The token's name, escapes read; an escape of a character no name may hold (a space, an
    operator) is a syntax error under that escape."""
    name = unescape_name(tok.value)
    if name is not tok.value and not re.match(_NAME, name):
        for m in re.finditer(_ESCAPE, tok.value):
            ch = unescape_name(m.group())
            if not ("a" + ch if m.start() else ch).isidentifier():
                raise ParseError(f"{m.group()} is {ch!r}, which cannot be part of a name",
                                 (tok.start_pos + m.start(), tok.start_pos + m.end()),
                                 hint="a name is letters, digits and _, starting with a letter")
    return name


def read_name(text: str, start: int) -> str:
    """The name a NAME token at ``start`` spells (escapes read), or the ParseError the parser
    gives for it (a superscript, an escape no name may hold)."""
    tok = _Token("NAME", text, start, start + len(text))
    if not text.isascii():
        _no_superscript(tok)
    return intern(_name(tok))


_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_POWER = f"[{_SUPERSCRIPTS}]+"  # compiled on first use


def _no_superscript(tok) -> None:
    """A name such as ``x²`` (Unicode counts ² as a letter-like character) is a power meant as
    ``x^2``: say so, with the caret under the superscript, instead of reading a variable x²."""
    found = re.search(_POWER, tok.value)
    if found is None:
        return
    plain = re.sub(_POWER, lambda m: "^" + "".join(str(_SUPERSCRIPTS.index(c)) for c in m.group()),
                       tok.value)
    raise ParseError(f"{tok.value!r} holds the superscript {found.group()!r}; gradcli writes "
                     "powers with ^", (tok.start_pos + found.start(), tok.start_pos + found.end()),
                     hint=f"write {plain}")


def _nesting(kind: str | None, text: str, depth: int) -> int | None:
    """The post-lexer's rule, token by token: the depth of parentheses and brackets after a token of type
    ``kind``, or None for a newline inside parentheses, which continues the expression (the
    token is dropped)."""
    if kind == "LPAR" or kind == "LSQB":
        return depth + 1
    if kind == "RPAR" or kind == "RSQB":
        return depth - 1
    if depth > 0 and kind == "_SEP" and text != ";":
        return None
    return depth


class _NewlinesInParentheses:
    """Post-lexer: a newline inside parentheses or brackets continues the expression instead of ending it
    (:func:`_nesting`, which the driver applies as it reads the tokens)."""

    always_accept = ()

    def process(self, stream):
        depth = 0
        for tok in stream:
            after = _nesting(tok.type, tok.value, depth)
            if after is not None:
                depth = after
                yield tok


_TRANSFORMER = _ToAst()
_METHODS = frozenset(name for name in vars(_ToAst) if not name.startswith("_"))
_POSTLEX = _NewlinesInParentheses()
_run: "Callable[[str, object], object] | None" = None  # the driver over the shipped tables
SHIPPED_TABLES = "gradcli.tables.json"  # beside the grammar: its tables, built when released


class SyntaxFault(NamedTuple):
    """Where the tables stopped, as Lark's ``UnexpectedCharacters``/``UnexpectedToken`` say it:
    at a character no terminal matches (``token_type`` None), or at a token the current state
    can neither shift nor reduce, with the terminals it ``expected``."""

    pos: int
    token_type: str | None = None
    token_value: str = ""
    expected: frozenset = frozenset()


def _grammar_file(name: str) -> bytes:
    """A file of the installed package data (``grammar/``)."""
    from .. import grammar
    try:  # a plain file next to the package: importlib.resources is not imported at start-up
        with open(os.path.join(grammar.__path__[0], name), "rb") as file:
            return file.read()
    except OSError:  # e.g. installed inside a zip file
        from importlib import resources
        return resources.files(grammar).joinpath(name).read_bytes()


def grammar_text() -> str:
    """The grammar (``grammar/gradcli.lark``)."""
    return _grammar_file("gradcli.lark").decode("utf-8")


def grammar_digest(grammar: str) -> str:
    """The SHA-256 of the grammar's text, which the shipped tables name as their source."""
    from hashlib import sha256
    return sha256(grammar.encode("utf-8")).hexdigest()


def shipped_tables() -> dict:
    """The tables shipped beside the grammar (``grammar/gradcli.tables.json``): the one source
    the parser runs. Built from the grammar by :func:`write_shipped_tables`; a test checks that
    they are the grammar's (its digest) and parse as a fresh Lark build does."""
    return json.loads(_grammar_file(SHIPPED_TABLES))


def write_shipped_tables() -> str:
    """Build the tables with the installed Lark and write them beside the grammar (run after
    changing the grammar: ``python -c "from gradcli.language.parser import
    write_shipped_tables as w; print(w())"``). Gives the file's path."""
    from .. import grammar as package
    from importlib.metadata import version
    data = {"grammar": grammar_digest(grammar_text()), "lark": version("lark"),
            "tables": build_tables()}
    path = os.path.join(package.__path__[0], SHIPPED_TABLES)
    with open(path, "w", encoding="utf-8") as file:
        file.write(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")
    return path


def build_parser(**options):
    """A new Lark LALR parser for the grammar; ``options`` go to :class:`lark.Lark`.

    Never with Lark's ``cache`` option: Lark would keep a pickle in the shared temporary
    directory and load it on a later run, and a planted pickle runs code."""
    from lark import Lark
    settings = dict(parser="lalr", lexer="basic", transformer=_TRANSFORMER, postlex=_POSTLEX,
                    maybe_placeholders=False)
    settings.update(options)
    return Lark(grammar_text(), **settings)


def build_tables() -> dict:
    """The tables, from a new Lark parser (for :func:`write_shipped_tables` and the tests)."""
    from .tables import tables_from_lark
    return tables_from_lark(build_parser(), _TRANSFORMER, _POSTLEX, _METHODS)


# -- the driver -----------------------------------------------------------------------------------

BLANKS = "[ \t\f\r]*"  # the blanks the grammar ignores (%ignore /[ \t\f\r]+/)


def lexer(tables: dict) -> re.Pattern:
    """The lexer of the tables: Lark's alternation of the terminals, in Lark's order, each
    token's trailing blanks part of its match (no step of its own for a space), the end of the
    text one more, empty, match (``_END_``), and any other character a match of its own
    (``_BAD_``, tried last), so each match starts where the one before ended.

    Each terminal's group is an empty one after its pattern, ``(?:+)(?P<PLUS>)``, where the
    tables have ``(?P<PLUS>+)``: the same alternatives in the same order, so the same matches,
    but the regular expression engine skips a branch by its first character (a group opening
    the branch hides that character from it). The match's last group is the terminal's, and
    where that group is is where the token ends."""
    parts = re.split(r"\(\?P<(\w+)>", tables["pattern"])  # "", name, body + ")|", name, ...
    names, bodies = parts[1::2], [body[:-2] for body in parts[2::2]]
    bodies[-1] = parts[-1][:-1]
    if parts[0] or "|".join(f"(?P<{n}>{b})" for n, b in zip(names, bodies)) != tables["pattern"]:
        raise ValueError("the lexer's pattern is not one group per terminal")
    terminals = "|".join(f"(?:{body})(?P<{name}>)" for name, body in zip(names, bodies))
    regex = re.compile(f"(?:{terminals}|\\Z(?P<_END_>)|(?s:.)(?P<_BAD_>)){BLANKS}")
    for blank in BLANKS[1:-2]:  # eaten after a token: they must be blanks the grammar ignores
        found = regex.match(blank)
        if found is None or found.lastgroup not in tables["ignore"]:
            raise ValueError(f"the grammar does not ignore {blank!r}")
    return regex


def driver(tables: dict) -> Callable[[str, object], object]:
    """The one LALR driver over ``tables``: ``run(source, builder)`` gives what the builder's
    ``program`` callback makes of the source, or a :class:`SyntaxFault` where the tables reject
    it (at the same place and with the same expected terminals as Lark's own loop).

    A builder has one method per grammar alias (:class:`_ToAst`'s names), each taking the
    rule's children as one list; :func:`parse` passes :class:`_ToAst`, and the lowering
    (``engine/graph.py``) passes one that makes the tape's nodes as the rules are reduced."""
    names = [intern(name) for name in tables["symbols"]]
    # A shift becomes the target state's own dict, so the stack holds dicts and no index is
    # looked up; a reduction becomes (its size, rule name, index of its callback); a unit rule
    # (``?sum: product``, the same value in a new state) has the index -1.
    reductions, calls = [], []
    for entry in tables["reductions"]:
        size, rule = entry[0], names[entry[1]]
        if len(entry) == 2:
            reductions.append((size, rule, -1))
            continue
        method, kept = entry[2], entry[3]
        if method is not None and method not in _METHODS:
            raise ValueError(f"no callback {method!r}")
        reductions.append((size, rule, len(calls)))
        pairs = tuple((kept[i], bool(kept[i + 1])) for i in range(0, len(kept), 2))
        calls.append((method, _child_filter(size, pairs)))
    rows: list[dict] = [{} for _ in tables["states"]]
    n = len(rows)
    for row, pairs in zip(rows, tables["states"]):
        pairs = bytes.fromhex(pairs)
        for i in range(0, len(pairs), 2):
            action = pairs[i + 1]
            row[names[pairs[i]]] = rows[action] if action < n else reductions[action - n]
    start, end = rows[tables["start"]], rows[tables["end"]]
    # Unit rules never run: a goto becomes, per lookahead, the state reached after the unit
    # reductions that lookahead would make next (between an atom and a sum there are four).
    terminals = [name for name in names if name.isupper()] + [None]
    settled = []
    for row in rows:
        for rule, target in row.items():
            if not rule.isupper():
                settled.append((row, rule, {kind: _settle(row, target, kind)
                                            for kind in terminals}))
    for row, rule, gotos in settled:
        row[rule] = gotos
    regex = lexer(tables)
    # Per group of the lexer: the terminal a match whose last group it is gives (the token
    # ends where that group is); "" for the terminals the grammar ignores, None for no terminal.
    kinds: list = [None] * (regex.groups + 1)
    for name, index in regex.groupindex.items():
        kinds[index] = "" if name in tables["ignore"] else _END if name == "_END_" else \
            None if name == "_BAD_" else intern(name)
    return partial(_drive, machine=(regex.finditer, kinds, calls, start, end))


_END = "$END"


def _drive(source: str, builder, machine):
    """:func:`driver`'s ``run``: ``source`` read by the machine with ``builder``'s callbacks."""
    finditer, kinds, calls, start, end = machine
    callbacks = [_bind(method and getattr(builder, method), child_filter)
                 for method, child_filter in calls]
    # The LR stack: states[i] is the state after values[i] (values[0] is no value), i <= top.
    # Entries above top are left in place and overwritten: no list shrinks or grows per step.
    states, values, top = [start] * 64, [None] * 64, 0
    row = start
    newlines = "\n" in source  # the post-lexer only ever drops newline tokens
    depth = 0
    for match in finditer(source):
        index = match.lastindex
        kind = kinds[index]
        if not kind:
            if kind is None:  # no terminal matches here
                return SyntaxFault(match.start())
            continue  # a comment, blanks
        begin = match.start()
        stop = match.end(index)
        text = source[begin:stop]
        if newlines:
            after = _nesting(kind, text, depth)
            if after is None:
                continue
            depth = after
        tok = _Token.__new__(_Token)  # no __init__ call: compiled, four stores
        tok.type = kind
        tok.value = text
        tok.start_pos = begin
        tok.end_pos = stop
        while True:
            action = row.get(kind)
            if action is None:
                return SyntaxFault(begin, kind, text, _terminals(row))
            if top + 1 == len(values):  # a deeper nesting than ever: twice the room
                states.extend(states)
                values.extend(values)
            if type(action) is dict:  # shift
                top += 1
                states[top] = row = action
                values[top] = tok
                break
            size, name, call = action
            top -= size  # the state below the rule's children goes to the rule's
            value = callbacks[call](values[top + 1:top + 1 + size])
            row = states[top][name][kind]
            top += 1
            states[top] = row
            values[top] = value
            if row is end and kind is _END:
                return value
    raise AssertionError("the scan ends with $END or a stop")  # pragma: no cover


def _terminals(row: dict) -> frozenset:
    """The terminals a state can shift or reduce on (what a syntax error there expected)."""
    return frozenset(s for s in row if s.isupper())


def _settle(below: dict, state: dict, kind: str | None) -> dict:
    """The state a goto from ``below`` to ``state`` ends in once the lookahead ``kind`` has made
    its unit reductions (each replaces the top state by ``below``'s goto on its rule)."""
    action = state.get(kind)
    while action.__class__ is tuple and action[2] < 0:
        state = below[action[1]]
        action = state.get(kind)
    return state


def _child_filter(size: int, kept: tuple) -> Callable[[list], list] | None:
    """Lark's child filter for a reduction of ``size`` children keeping ``kept`` ((index,
    splice) pairs); None where it keeps them all as they are (the common case)."""
    if len(kept) == size and not any(splice for _, splice in kept):
        return None

    def filtered(children):
        out = None
        for i, splice in kept:
            if splice:  # a helper rule's children, spliced in
                if out is None:
                    out = children[i]  # its own list, extended in place (as Lark does): a
                else:                  # program of n statements is n appends, not n copies
                    out += children[i]
            elif out is None:
                out = [children[i]]
            else:
                out.append(children[i])
        return [] if out is None else out

    return filtered


def _bind(method: Callable | None, child_filter: Callable | None) -> Callable[[list], object]:
    """A reduction's callback: the builder's method (None for Lark's helper rules, whose value
    is the list of children) after the child filter."""
    if child_filter is None:
        return method or (lambda children: children)
    if method is None:
        return child_filter
    return lambda children: method(child_filter(children))


def reduce(source: str, builder):
    """``source`` run by the one driver over the shipped tables with ``builder``'s callbacks
    (see :func:`driver`): the builder's program, or a :class:`SyntaxFault`. The caller checks
    the source's length first (:func:`check_length`)."""
    global _run
    if _run is None:
        _run = driver(shipped_tables()["tables"])
    return _run(source, builder)


def check_length(source: str) -> None:
    """A source longer than gradcli reads is a :class:`LimitError` (``GRADCLI_MAX_SOURCE``)."""
    limit = max_source()
    if len(source) > limit:
        raise LimitError(f"the source is longer than {limit:,} characters, the most gradcli "
                         f"reads ({SOURCE_VARIABLE})",
                         hint=f"raise the limit for this run: {SOURCE_VARIABLE}={limit * 4} "
                              "gradcli ... (docs/limits.md)")


@gc_paused()
def parse(source: str) -> Program:
    """Parse a program (or a single expression) into a :class:`~gradcli.language.ast.Program`."""
    check_length(source)
    program = reduce(source, _TRANSFORMER)
    if program.__class__ is SyntaxFault:
        raise _translate(program, source)
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
        names -= {"NUMBER", "NAME", "LPAR", "LSQB", "PLUS", "MINUS"}
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


def _where(source: str, offset: int) -> str:
    """``column 9`` (one line) or ``line 2, column 3``, counted from 1."""
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return f"column {column}" if "\n" not in source else f"line {line}, column {column}"


def _translate(fault: SyntaxFault, source: str) -> ParseError:
    """The ParseError for a fault: what was found, what would have fitted, and a hint."""
    if fault.token_type is None:
        pos = fault.pos
        return ParseError(f"unexpected character {source[pos]!r}", (pos, pos + 1),
                          hint="expressions are made of numbers, names, + - * / @ ^ ** ( ) [ ] , "
                               "and programs of = += -= *= /= ; and # comments")
    kind, value, expected = fault.token_type, fault.token_value, fault.expected
    at_end = kind == "$END"
    pos = len(source.rstrip()) if at_end else fault.pos
    span = (pos, pos + 1) if at_end else (pos, pos + max(1, len(value)))
    what = "end of input" if at_end else (
        "new line" if kind == "_SEP" and value != ";" else repr(value))
    if "RPAR" in expected and (at_end or kind == "_SEP"):
        opened = _unclosed_paren(source, pos)
        if opened is None:
            return ParseError(f"unexpected {what}: expected ')'", span)
        return ParseError(f"unexpected {what}: expected ')'", (opened, opened + 1),
                          hint=f"the '(' at {_where(source, opened)} is never closed",
                          label="never closed")
    opened = _unclosed_paren(source, pos) if kind != "RPAR" else None
    if opened is not None and "\n" in source[opened:pos]:
        # Inside parentheses a new line continues the expression: the statement on the next
        # line was read as part of it. The mistake is the '(' left open, not that line.
        return ParseError(f"unexpected {what} on a later line: the '(' at "
                          f"{_where(source, opened)} is never closed", (opened, opened + 1),
                          hint="close it with ')' (inside parentheses a new line continues the "
                               "expression)", label="never closed")
    if kind == "RPAR" and _unclosed_paren(source, pos) is None:
        return ParseError("unmatched ')'", span, hint="remove it or add the '(' it closes")
    if kind in _OPERAND_START and "STAR" in expected:
        tail = source[max(0, pos - 100):pos]  # not all of it: this search is quadratic
        before = re.search(r"(\w+(\([^()]*\))?|\([^()]*\)|\))\s*$", tail)
        after = re.match(r"\w+|\([^()]*\)|\(", source[pos:])
        left = before.group(1) if before else "…"
        right = after.group(0) if after else value
        error = ParseError(f"unexpected {what}: expected an operator", span,
                           hint=f"gradcli has no implicit multiplication: write {left}*{right}")
        # Two names side by side: if the first is a function (sin x), the lowering, which knows
        # the functions, says "write sin(x)" instead (engine.graph.parse_source).
        if before and re.fullmatch(r"[^\W\d]\w*", left) and re.fullmatch(r"\w+", right):
            error.juxtaposed = (left, right)
        return error
    if kind == "ASSIGN_OP":
        if value == "=" and source[:pos].rstrip().endswith("="):
            return ParseError(f"unexpected {what}", span,
                              hint="gradcli has no comparison operators; '=' assigns a name")
        return ParseError(f"unexpected {what}", span,
                          hint="only a plain name can be assigned to, at the start of a statement")
    expect = _expected(expected)
    if at_end and expect:
        return ParseError(f"the input ends too early: expected {expect}", span)
    return ParseError(f"unexpected {what}" + (f": expected {expect}" if expect else ""), span)
