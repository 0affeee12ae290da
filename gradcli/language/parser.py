"""Source text -> AST: the LALR(1) parser Lark builds from ``grammar/gradcli.lark``.

Lark reads the grammar and computes the parser: the lexer's regular expression, the LALR
tables, and which callback of the transformer (:class:`_ToAst`) each reduction calls. The
transformer runs during the parse, so the AST is built as the input is read: there is no second,
recursive pass over a tree, and a 100,000-deep nesting parses like a flat one.

For speed, those tables are saved once, as plain data, to a small file in the user's cache
directory, keyed by the grammar, the Lark installation, this module and the Python version; a
tight loop here runs them (:func:`_fast_parser`). A run of ``gradcli`` then neither imports nor
builds Lark, and a parse costs a few Python operations per token. Any text that loop cannot
parse is parsed again by Lark itself, whose exception becomes a
:class:`~gradcli.errors.ParseError` with a span and a hint: every error comes from Lark.
"""

from __future__ import annotations

import marshal
import os
import re
import sys
from sys import intern
from typing import Callable

from .ast import Assign, Binary, Call, Num, Program, Unary, Var
from ..errors import LimitError, ParseError
from ..gcpause import gc_paused
from ..limits import SOURCE_VARIABLE, max_source


# How each terminal is named in "expected ..." messages.
_FRIENDLY = {
    "NUMBER": "a number", "NAME": "a name", "LPAR": "'('", "RPAR": "')'", "COMMA": "','",
    "PLUS": "'+'", "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'", "POW": "'^'",
    "ASSIGN_OP": "'='", "_SEP": "';' or a new line", "$END": "the end of the input",
}
_OPERATORS = ("PLUS", "MINUS", "STAR", "SLASH", "POW")
_OPERAND_START = ("NUMBER", "NAME", "LPAR")


class _Token:
    """A token of the fast loop: the part of Lark's ``Token`` that the callbacks read."""

    __slots__ = ("type", "value", "start_pos", "end_pos")


class _ToAst:
    """The callbacks, one per grammar alias, each building an AST node from the rule's children.

    Lark calls them during its parse (``transformer=_ToAst()``) and so does the fast loop. They
    take the children as one list, Lark's plain callback convention, so neither adds a wrapper.
    A token is Lark's ``Token`` or a :class:`_Token`; only ``value``, ``start_pos`` and
    ``end_pos`` are read.
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
        if not name.value.isascii():
            _no_superscript(name)
        return Call(intern(name.value), tuple(children[2:-1:2]), (name.start_pos, rpar.end_pos),
                    (name.start_pos, name.end_pos))

    def group(self, children):
        return children[1]

    def assign(self, children):
        name, op, value = children
        if not name.value.isascii():
            _no_superscript(name)
        return Assign(intern(name.value), op.value, value, (name.start_pos, value.span[1]))

    def program(self, children):
        return Program(tuple(children))


_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_POWER = re.compile(f"[{_SUPERSCRIPTS}]+")


def _no_superscript(tok) -> None:
    """A name such as ``x²`` (Unicode counts ² as a letter-like character) is a power meant as
    ``x^2``: say so, with the caret under the superscript, instead of reading a variable x²."""
    found = _POWER.search(tok.value)
    if found is None:
        return
    plain = _POWER.sub(lambda m: "^" + "".join(str(_SUPERSCRIPTS.index(c)) for c in m.group()),
                       tok.value)
    raise ParseError(f"{tok.value!r} holds the superscript {found.group()!r}; gradcli writes "
                     "powers with ^", (tok.start_pos + found.start(), tok.start_pos + found.end()),
                     hint=f"write {plain}")


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


_TRANSFORMER = _ToAst()
_POSTLEX = _NewlinesInParentheses()
_parser = None  # the Lark parser, built on first need (a cache miss or an error)
_fast: "Callable[[str], object] | None" = None  # the loop over the tables, once loaded
_FAILED = object()  # what the loop returns for text it cannot parse
_FORMAT = 1  # of the saved tables; part of their key


def grammar_text() -> str:
    """The grammar, read from the installed package data (``grammar/gradcli.lark``)."""
    from .. import grammar
    try:  # a plain file next to the package: no importlib.resources (a millisecond at start-up)
        with open(os.path.join(grammar.__path__[0], "gradcli.lark"), encoding="utf-8") as file:
            return file.read()
    except OSError:  # e.g. installed inside a zip file
        from importlib import resources
        return resources.files(grammar).joinpath("gradcli.lark").read_text(encoding="utf-8")


def build_parser(**options):
    """A new Lark LALR parser for the grammar; ``options`` go to :class:`lark.Lark`."""
    from lark import Lark
    settings = dict(parser="lalr", lexer="basic", transformer=_TRANSFORMER, postlex=_POSTLEX,
                    maybe_placeholders=False)
    settings.update(options)
    return Lark(grammar_text(), **settings)


def _get_parser():
    global _parser
    if _parser is None:
        try:
            # Lark's own cache file holds its tables, keyed by the grammar and Lark's version.
            _parser = build_parser(cache=True)
        except OSError:
            _parser = build_parser()
    return _parser


# -- the tables as plain data -----------------------------------------------------------------

def _tables_from_lark(lark) -> dict | None:
    """Lark's lexer regex, LALR states and reductions as plain data, or None if this Lark
    parser uses a feature the fast loop does not reproduce (then Lark parses everything).

    A state is a dict: terminal -> shift target, rule name -> goto target (state numbers), and
    terminal -> reduction ``(size, rule name, callback)``. The callback is None for a unit rule
    such as ``?sum: product`` (its value is its only child: Lark's ExpandSingleChild), or
    ``(method, kept)``: the transformer method to call (None for Lark's helper rules such as
    ``__program_star_0``, whose children are spliced into their parent) with the children it
    gets, ``kept`` being ``(index, splice)`` pairs (Lark's child filter: ``_SEP`` is dropped).
    """
    try:
        from lark.parsers.lalr_analysis import Shift
        frontend = lark.parser
        lexer = frontend.lexer.lexer  # the BasicLexer behind the post-lexer connector
        (pattern,) = lexer.scanner._mres  # one compiled alternation of every terminal
        table = frontend.parser._parse_table
        options = lark.options
        if (lexer.callback or options.lexer_callbacks or options.maybe_placeholders
                or options.propagate_positions or options.keep_all_tokens
                or options.postlex is not _POSTLEX or options.transformer is not _TRANSFORMER):
            return None
        if not all(isinstance(state, int) for state in table.states):
            return None  # Lark numbers its states unless debugging; the data needs numbers
        states = {}
        for state, row in table.states.items():
            out = states[state] = {}
            for symbol, (action, arg) in row.items():
                if action is Shift:
                    out[symbol] = arg
                    continue
                callback = _reduction(arg)
                if callback is False:
                    return None
                out[symbol] = (len(arg.expansion), arg.origin.name, callback)
        return {"pattern": pattern.pattern, "flags": pattern.flags,
                "ignore": sorted(lexer.ignore_types), "states": states,
                "start": table.start_states["start"], "end": table.end_states["start"]}
    except (AttributeError, TypeError, ValueError, KeyError, ImportError):
        return None  # another Lark version or set-up: its own loop is always right


def _reduction(rule):
    """What Lark's parse-tree builder does when ``rule`` is reduced (see _tables_from_lark),
    or False for what this module does not reproduce."""
    opts = rule.options
    if opts.keep_all_tokens or opts.template_source or opts.empty_indices:
        return False
    kept = tuple((i, not sym.is_term and sym.name.startswith("_"))
                 for i, sym in enumerate(rule.expansion) if not (sym.is_term and sym.filter_out))
    if opts.expand1 and not rule.alias:
        if len(rule.expansion) == 1 and kept == ((0, False),):
            return None  # a unit rule: the child itself
        return False  # ExpandSingleChild over several children
    name = rule.alias or rule.origin.name
    if name.startswith("_"):
        return (None, kept)
    if not callable(getattr(_TRANSFORMER, name, None)):
        return False  # Lark would build a Tree here; the grammar never needs one
    return (name, kept)


def _cache_file() -> str | None:
    """Where the tables are saved: $GRADCLI_CACHE_DIR, else the user's cache directory."""
    folder = os.environ.get("GRADCLI_CACHE_DIR")
    if not folder:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "gradcli")
    if not os.path.isabs(folder):
        return None  # no home directory: do not write into the current one
    # One file per installation of gradcli, so two virtual environments do not take turns.
    from binascii import crc32
    return os.path.join(folder, f"lalr-tables-py{sys.version_info[0]}{sys.version_info[1]}-"
                                f"{crc32(__file__.encode()):08x}.marshal")


def _tables_key(grammar: str) -> tuple:
    """What the saved tables depend on: this module, the grammar, the Lark installation."""
    import importlib.util
    spec = importlib.util.find_spec("lark")
    if spec is None or not spec.origin:
        return ()
    lark_stat, own_stat = os.stat(spec.origin), os.stat(__file__)
    return (_FORMAT, sys.version, grammar, spec.origin, lark_stat.st_mtime_ns, lark_stat.st_size,
            __file__, own_stat.st_mtime_ns, own_stat.st_size)


def _load_tables() -> dict | None:
    """The tables from the cache file if it matches, else from Lark (and then saved)."""
    path = _cache_file()
    try:
        key = _tables_key(grammar_text())
    except OSError:
        key, path = (), None
    if path and key:
        try:
            with open(path, "rb") as file:
                saved_key, tables = marshal.load(file)
            if saved_key == key:
                return tables
        except (OSError, EOFError, ValueError, TypeError):
            pass  # missing, unreadable or from another version: build it again
    tables = _tables_from_lark(_get_parser())
    if path and key and tables is not None:
        temporary = f"{path}.{os.getpid()}.tmp"
        try:  # written whole to a temporary name, then renamed: a reader never sees half a file
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(temporary, "wb") as file:
                marshal.dump((key, tables), file)
            os.replace(temporary, path)
        except (OSError, ValueError):  # e.g. a read-only home: the tables still serve this run
            try:
                os.remove(temporary)
            except OSError:
                pass
    return tables


# -- the loop -------------------------------------------------------------------------------------

def _fast_parser(tables: dict) -> Callable[[str], object]:
    """A parse function running ``tables``: the AST for valid text, ``_FAILED`` for the rest.

    It returns ``_FAILED`` at the first character no terminal matches or the first token it can
    neither shift nor reduce; :func:`parse` then lets Lark parse the text again to raise Lark's
    own error (errors are rare, so paying twice for them keeps every message and span Lark's).
    """
    # A shift or goto becomes the target state's own dict, so the stack holds dicts and no
    # index is looked up; a reduction becomes (size, rule name, callback or None for a unit).
    rows = {state: {} for state in tables["states"]}
    for state, row in tables["states"].items():
        out = rows[state]
        for symbol, action in row.items():
            if isinstance(action, int):
                out[symbol] = rows[action]
            else:
                size, name, callback = action
                out[symbol] = (size, name, None if callback is None else _callback(size, *callback))
    start, end = rows[tables["start"]], rows[tables["end"]]
    finditer = re.compile(tables["pattern"], tables["flags"]).finditer
    ignore = frozenset(tables["ignore"])
    new_token = object.__new__

    def scan(source):
        """The tokens, then an ``$END`` token if every character was matched."""
        pos = 0
        for match in finditer(source):
            begin, pos_end = match.span()
            if begin != pos:
                return  # a character no terminal matches: the parse cannot complete
            pos = pos_end
            kind = match.lastgroup
            if kind in ignore:
                continue
            tok = new_token(_Token)
            tok.type, tok.value, tok.start_pos, tok.end_pos = kind, match.group(), begin, pos_end
            yield tok
        if pos == len(source):
            tok = new_token(_Token)
            tok.type, tok.value, tok.start_pos, tok.end_pos = "$END", "", pos, pos
            yield tok

    def parse(source):
        stack = [start]
        values = []
        push, push_value = stack.append, values.append
        row = start
        # The post-lexer only ever drops newline tokens: text without one skips it.
        tokens = _POSTLEX.process(scan(source)) if "\n" in source else scan(source)
        for tok in tokens:
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


def _callback(size: int, method: str | None, kept: tuple) -> Callable[[list], object]:
    """The callback of one reduction: Lark's child filter, then the transformer's method."""
    function = getattr(_TRANSFORMER, method) if method else None
    if len(kept) == size and not any(splice for _, splice in kept):
        # nothing dropped or spliced (the common case): the method itself
        return function or (lambda children: children)

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
        out = [] if out is None else out
        return function(out) if function else out

    return filtered


@gc_paused()
def parse(source: str) -> Program:
    """Parse a program (or a single expression) into a :class:`~gradcli.language.ast.Program`."""
    limit = max_source()
    if len(source) > limit:
        raise LimitError(f"the source is longer than {limit:,} characters, the most gradcli "
                         f"reads ({SOURCE_VARIABLE})",
                         hint=f"raise the limit for this run: {SOURCE_VARIABLE}={limit * 4} "
                              "gradcli ... (docs/limits.md)")
    global _fast
    if _fast is None:
        tables = _load_tables()
        _fast = _fast_parser(tables) if tables else (lambda text: _FAILED)
    program = _fast(source)
    if program is _FAILED:
        program = _parse_with_lark(source)
    if not program.statements:
        raise ParseError("the expression is empty", hint='write an expression such as "x^2 + 1"')
    return Program(program.statements, (0, len(source)))


def _parse_with_lark(source: str) -> Program:
    """Lark's own parse of ``source``; its syntax errors become ParseErrors."""
    from lark.exceptions import UnexpectedInput
    try:
        return _get_parser().parse(source)
    except UnexpectedInput as exc:
        raise _translate(exc, source) from None


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


def _where(source: str, offset: int) -> str:
    """``column 9`` (one line) or ``line 2, column 3``, counted from 1."""
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return f"column {column}" if "\n" not in source else f"line {line}, column {column}"


def _translate(exc, source: str) -> ParseError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken
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
            if opened is None:
                return ParseError(f"unexpected {what}: expected ')'", span)
            return ParseError(f"unexpected {what}: expected ')'", (opened, opened + 1),
                              hint=f"the '(' at {_where(source, opened)} is never closed",
                              label="never closed")
        opened = _unclosed_paren(source, pos) if tok.type != "RPAR" else None
        if opened is not None and "\n" in source[opened:pos]:
            # Inside parentheses a new line continues the expression: the statement on the next
            # line was read as part of it. The mistake is the '(' left open, not that line.
            return ParseError(f"unexpected {what} on a later line: the '(' at "
                              f"{_where(source, opened)} is never closed", (opened, opened + 1),
                              hint="close it with ')' (inside parentheses a new line continues "
                                   "the expression)", label="never closed")
        if tok.type == "RPAR" and _unclosed_paren(source, pos) is None:
            return ParseError("unmatched ')'", span, hint="remove it or add the '(' it closes")
        if tok.type in _OPERAND_START and "STAR" in expected:
            tail = source[max(0, pos - 100):pos]  # not all of it: this search is quadratic
            before = re.search(r"(\w+(\([^()]*\))?|\([^()]*\)|\))\s*$", tail)
            after = re.match(r"\w+|\([^()]*\)|\(", source[pos:])
            left = before.group(1) if before else "…"
            right = after.group(0) if after else str(tok.value)
            error = ParseError(f"unexpected {what}: expected an operator", span,
                               hint=f"gradcli has no implicit multiplication: write {left}*{right}")
            # Two names side by side: if the first is a function (sin x), the lowering, which
            # knows the functions, says "write sin(x)" instead.
            if before and re.fullmatch(r"[^\W\d]\w*", left) and right and (
                    right[0] == "(" or re.fullmatch(r"\w+", right)):
                error.juxtaposed = (left, right)
            return error
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
