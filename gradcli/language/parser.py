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
from array import array
from sys import intern
from functools import partial
from typing import Callable, NamedTuple

from .ast import (ArrayLit, Assign, Binary, Call, Index, Keyword, Num, Program, Slice, Unary,
                  Var)
from ..errors import LimitError, ParseError
from ..gcpause import gc_paused
from ..limits import SOURCE_VARIABLE, max_source


# How each terminal is named in "expected ..." messages.
_FRIENDLY = {
    "NUMBER": "a number", "NAME": "a name", "LPAR": "'('", "RPAR": "')'", "COMMA": "','",
    "CALL": "a call", "BAR": "'|'", "ROOT": "'√'", "SUPERSCRIPT": "a superscript",
    "DEGREE": "'°'",
    "PLUS": "'+'", "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'", "POW": "'^'",
    "MATMUL": "'@'", "LSQB": "'['", "RSQB": "']'",
    "ASSIGN_OP": "'='", "_SEP": "';' or a new line", "$END": "the end of the input",
}
_OPERATORS = ("PLUS", "MINUS", "STAR", "SLASH", "POW", "SUPERSCRIPT", "DEGREE", "MATMUL")
_OPERAND_START = ("NUMBER", "NAME", "LPAR", "CALL", "ROOT", "BAR", "LSQB")


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

    The natural spellings build the explicit spelling's AST: ``2x`` is ``2*x``, ``x²`` is
    ``x^2``, ``|x|`` is ``abs(x)``, ``√x`` is ``sqrt(x)``, ``30°`` is ``30*deg`` and ``deg`` is
    ``pi/180``. Readings that depend on which names are functions (``sin^2(x)`` is
    ``sin(x)^2``, ``x(x+1)`` is ``x*(x+1)``) need ``functions`` (see :func:`parse`); without
    it a builder reads the text as the grammar alone does. ``notes`` collects the readings
    worth a warning (``1/2x``).
    """

    def __init__(self, source: str = "", functions=None, notes: list | None = None):
        self.source = source
        self.functions = functions
        self.notes = notes
        # x(x+1) read as x*(x+1) (a CALL token holds the x): each such product, by id, with its
        # two factors, until a sign, a power or a product takes its first factor alone, as it
        # would have without the call: -x(x+1) is -x*(x+1), x(x+1)² is x*(x+1)^2. The nodes are
        # kept alive here, so an id is never reused.
        self.loose: dict[int, tuple] = {}

    def num(self, children):
        tok = children[0]
        value = float(tok.value)
        if value == float("inf"):
            raise ParseError(f"the number {tok.value} is too large for a 64-bit float",
                             (tok.start_pos, tok.end_pos), hint="the largest is about 1.8e308")
        return Num(value, (tok.start_pos, tok.end_pos))

    def var(self, children):
        tok = children[0]
        name = read_name(tok.value, tok.start_pos)
        if name == DEGREE:
            return _degree((tok.start_pos, tok.end_pos))
        return Var(name, (tok.start_pos, tok.end_pos))

    def unary(self, children):
        op, operand = children
        sign = "-" if op.value == "\u2212" else op.value
        parts = self.loose and self._factors(operand)
        if parts:  # -x(x+1): -x*(x+1)
            head, tail = parts
            head = Unary(sign, head, (op.start_pos, head.span[1]))
            return self._loosen(Binary("*", head, tail, (op.start_pos, operand.span[1])),
                                head, tail)
        return Unary(sign, operand, (op.start_pos, operand.span[1]))

    def binary(self, children):
        left, op, right = children
        op = op.value
        if op not in "+-*/^@":  # ** and the typeset signs (· × ÷ −)
            op = READ_AS[op]
        if self.loose:
            if op == "^":
                return self._power(left, right)
            parts = (op == "*" or op == "/") and self._factors(right)
            if parts:  # 2/x(x+1): (2/x)*(x+1)
                head, tail = parts
                return Binary("*", Binary(op, left, head, (left.span[0], head.span[1])), tail,
                              (left.span[0], right.span[1]))
        return Binary(op, left, right, (left.span[0], right.span[1]))

    def _loosen(self, node, head, tail):
        """``node``, a product ``head*tail`` whose ``head`` a sign, a power or a product before
        it would take alone (see ``loose``)."""
        self.loose[id(node)] = (node, head, tail)
        return node

    def _factors(self, node):
        """The two factors of a loose product, or None."""
        entry = self.loose.get(id(node))
        return None if entry is None else entry[1:]

    def _power(self, base, exponent):
        """``base^exponent`` where either may be a loose product: 2^x(x+1) is 2^x*(x+1), and
        x(x+1)^2 is x*(x+1)^2."""
        tail = self._factors(exponent)
        if tail is not None:
            exponent, tail = tail
        parts = self._factors(base)
        end = exponent.span[1]
        if parts is not None:
            head, factor = parts
            power = Binary("^", factor, exponent, (factor.span[0], end))
            node, loose = Binary("*", head, power, (base.span[0], end)), (head, power)
        else:
            node, loose = Binary("^", base, exponent, (base.span[0], end)), None
        if tail is not None:
            node = Binary("*", node, tail, (base.span[0], tail.span[1]))
            loose = (node.left, tail)
        return node if loose is None else self._loosen(node, *loose)

    def implicit(self, children):
        left, right = children
        span = (left.span[0], right.span[1])
        if self.functions is not None:
            read = self._applied(left, right, span)
            if read is not None:
                return read
        if self.notes is not None and left.__class__ is Binary and not self._grouped(left):
            if left.op == "/":
                self.notes.append(_ambiguous_division(left, right, self.source))
            elif left.op == "^" and _number_exponent(left, self.source):
                self.notes.append(_ambiguous_power(left, right, self.source))
        parts = self.loose and self._factors(right)
        if parts:  # 2x(x+1): (2*x)*(x+1)
            head, tail = parts
            return Binary("*", Binary("*", left, head, (left.span[0], head.span[1])), tail, span)
        return Binary("*", left, right, span)

    def _applied(self, left, right, span):
        """``sin^2(x)`` as ``sin(x)^2`` and ``sin^-1(x)`` as ``asin(x)``; a function written
        before its argument without parentheses (``sin x``) is a ParseError saying how to
        write it. None where ``left right`` is a plain product."""
        functions = self.functions
        if right.__class__ is Var and right.name in functions:  # 2 sin x
            raise self._bare_function(right, self._next(right.span[1]))
        if left.__class__ is Var and left.name in functions:
            if self._is_group(right):  # sin\<new line>(x), or inside ( ): sin<new line>(x)
                return Call(left.name, (right,), (left.span[0], right.span[1] + 1), left.span)
            raise self._bare_function(left, (self._text(right), right.span[1]))  # sin x
        before = None  # 2 sin^2(x), x/sin^2(x): what the function's power is a factor of
        if left.__class__ is Binary and (left.op == "*" or left.op == "/") \
                and _function_power(left.right, functions):
            before, left = left, left.right
        if not _function_power(left, functions):
            return None
        if before is not None:
            read = self._applied(left, right, (left.span[0], span[1]))
            return Binary(before.op, before.left, read, span)
        f, exponent = left.left, left.right
        if not self._is_group(right):
            written = f"{f.name}({self._text(right)})^{self._text(exponent)}"
            return _raise(ParseError(
                f"{f.name} is a function: its argument goes in parentheses", f.span,
                hint=f"write {written}", fix=(((f.span[0], right.span[1]), written),)))
        call = (f.span[0], right.span[1] + 1)
        if exponent == _MINUS_ONE:  # sin^-1(x): the inverse function, as on a calculator
            inverse = functions.inverse(f.name)
            if inverse is None:
                written = f"{f.name}({self._text(right)})^-1"
                return _raise(ParseError(
                    f"{f.name}^-1 reads as the inverse function of {f.name}, which gradcli "
                    "does not have", f.span, hint=f"for its reciprocal write {written}",
                    fix=(((f.span[0], call[1]), written),)))
            return Call(inverse, (right,), call, f.span)
        return Binary("^", Call(f.name, (right,), call, f.span), exponent, span)

    def _text(self, node) -> str:
        """The source text of ``node`` (its explicit spelling when there is no source)."""
        if self.source:
            return self.source[node.span[0]:node.span[1]]
        from .printer import to_source
        return to_source(node)

    def _next(self, end: int) -> tuple[str, int]:
        """The operand written after ``end`` in the source (for a hint: ``x``, or what a ``(``
        holds) and where it ends; ``x`` and ``end`` where there is none."""
        found = re.match(r"\s*(\w+|\([^()]*\))", self.source[end:end + 100])
        if found is None:
            return "x", end
        text = found.group(1)
        return (text[1:-1] if text.startswith("(") else text), end + found.end()

    def _bare_function(self, f: Var, argument: tuple[str, int]) -> ParseError:
        """``sin x``: the error, whose fix writes ``sin(x)`` (``argument``: the text of the
        operand and where it ends)."""
        text, end = argument
        return ParseError(f"{f.name} is a function: its argument goes in parentheses", f.span,
                          hint=f"write {f.name}({text})",
                          fix=(((f.span[0], end), f"{f.name}({text})"),))

    def _is_group(self, node) -> bool:
        """Whether ``node`` was written in parentheses: ``(x)``, not ``x`` or ``(x)^2``."""
        source, (start, end) = self.source, node.span
        return source[:start].rstrip().endswith("(") and source[end:].lstrip().startswith(")")

    def _grouped(self, node) -> bool:
        """Whether ``node`` is written in parentheses of its own: ``(1/2)x``, not ``1/(2)x``."""
        return _written(node, self.source) != node.span

    def superscript(self, children):
        base, tok = children
        digits = tok.value.lstrip("\u207b")
        value = float("".join(str(_SUPERSCRIPTS.index(c)) for c in digits))
        span = (tok.start_pos, tok.end_pos)
        exponent = Num(value, span)
        if len(digits) < len(tok.value):  # x⁻¹ is x^-1
            exponent = Unary("-", exponent, span)
        if self.loose:
            return self._power(base, exponent)
        return Binary("^", base, exponent, (base.span[0], tok.end_pos))

    def degrees(self, children):
        value, tok = children
        return Binary("*", value, _degree((tok.start_pos, tok.end_pos)),
                      (value.span[0], tok.end_pos))

    def root(self, children):
        tok, operand = children
        name = "sqrt" if tok.value == "√" else "cbrt"
        parts = self.loose and self._factors(operand)
        if parts:  # √x(x+1): √x*(x+1)
            head, tail = parts
            head = Call(name, (head,), (tok.start_pos, head.span[1]), (tok.start_pos, tok.end_pos))
            return self._loosen(Binary("*", head, tail, (tok.start_pos, operand.span[1])),
                                head, tail)
        return Call(name, (operand,), (tok.start_pos, operand.span[1]),
                    (tok.start_pos, tok.end_pos))

    def bars(self, children):
        bar, operand, close = children
        return Call("abs", (operand,), (bar.start_pos, close.end_pos),
                    (bar.start_pos, bar.end_pos))

    def call(self, children):
        tok, rpar = children[0], children[-1]
        text = tok.value[:-1]
        if text[-1] in " \t\f":
            text = text.rstrip(" \t\f")
        name_span = (tok.start_pos, tok.start_pos + len(text))
        name = read_name(text, tok.start_pos)
        args = tuple(children[1:-1:2])
        span = (tok.start_pos, rpar.end_pos)
        functions = self.functions
        if functions is not None and len(args) == 1 and name not in functions \
                and (len(name) == 1 or name in functions.constants) \
                and type(args[0]) is not Keyword:
            # x(x+1), pi(x+1): a one-letter name or a constant that is no function, before
            # parentheses, multiplies
            factor = Var(name, name_span)
            return self._loosen(Binary("*", factor, args[0], span), factor, args[0])
        return Call(name, args, span, name_span)

    def group(self, children):
        if self.loose:  # (x(x+1)) is one factor
            self.loose.pop(id(children[1]), None)
        return children[1]

    def array(self, children):
        return ArrayLit(tuple(children[1:-1:2]), (children[0].start_pos, children[-1].end_pos))

    def index(self, children):
        target, rsqb = children[0], children[-1]
        return Index(target, tuple(children[2:-1:2]), (target.span[0], rsqb.end_pos))

    def slice(self, children):
        k = next(i for i, c in enumerate(children) if not hasattr(c, "span"))  # the colon
        colon = children[k]
        start = children[0] if k == 1 else None
        stop = children[k + 1] if k + 1 < len(children) else None
        first = start.span[0] if start is not None else colon.start_pos
        last = stop.span[1] if stop is not None else colon.end_pos
        return Slice(start, stop, (first, last))

    def keyword(self, children):
        name, op, value = children
        span = (name.start_pos, name.end_pos)
        if op.value != "=":
            raise ParseError(f"{name.value}{op.value} inside a call: an option is written "
                             f"{name.value}=value", (op.start_pos, op.end_pos),
                             label="not =", fix=(((op.start_pos, op.end_pos), "="),))
        return Keyword(intern(_name(name)), value, (span[0], value.span[1]))

    def transpose(self, children):
        target, tick = children
        span = (target.span[0], tick.end_pos)
        return Call("transpose", (target,), span, (tick.start_pos, tick.end_pos))

    def assign(self, children):
        name, op, value = children
        if not name.value.isascii():
            _no_superscript(name)
        text = intern(_name(name))
        if text == DEGREE:
            span = (name.start_pos, name.end_pos)
            raise ParseError("deg is the constant pi/180 (one degree), so it cannot be assigned",
                             span, hint="assign another name, e.g. deg_",
                             fix=((span, "deg_"),))
        return Assign(text, op.value, value, (name.start_pos, value.span[1]))

    def program(self, children):
        return Program(tuple(children))


DEGREE = "deg"  # a name for pi/180, so 30° and 30 deg are 30*(pi/180)
# The operators' other spellings, as the AST writes them
READ_AS = {"**": "^", "·": "*", "⋅": "*", "×": "*", "÷": "/", "\u2212": "-"}
_MINUS_ONE = Unary("-", Num(1.0))


def call_name(text: str) -> str:
    """The name a CALL token (``sin(`` or ``sin (``) calls."""
    return text[:-1].rstrip(" \t\f")


def _degree(span) -> Binary:
    """``deg``, one degree in radians: ``pi/180``."""
    return Binary("/", Var("pi", span), Num(180.0, span), span)


def _function_power(node, functions) -> bool:
    """Whether ``node`` is a function's name to a power: ``sin^2``, read with the argument
    after it as ``sin(x)^2``."""
    return (node.__class__ is Binary and node.op == "^" and node.left.__class__ is Var
            and node.left.name in functions)


def _raise(error):
    raise error


def _written(node, source: str, floor: int = 0) -> tuple[int, int]:
    """Where ``node`` is written in ``source``, with the parentheses around it (a node's span
    leaves them out: ``(a+b)`` spans ``a+b``), none of them before ``floor``, none a call's."""
    start, end = node.span
    while True:
        before = source[:start].rstrip()
        after = source[end:].lstrip()
        opening = len(before) - 1
        if not (before.endswith("(") and after.startswith(")")) or opening < floor or (
                opening > floor and (before[-2].isalnum() or before[-2] == "_")):
            return start, end
        start, end = opening, len(source) - len(after) + 1


def _ambiguous_division(left: Binary, right, source: str) -> tuple:
    """The note for ``1/2x`` (a product written without ``*`` right after a division): the
    span it is about, what it says, and the fix for the other reading."""
    if not source:
        return (left.span[0], right.span[1]), "a/b c is read as (a/b)*c", ()
    start = _written(left.left, source)[0]
    middle, after = _written(left.right, source)
    factor, end = _written(right, source, after)
    dividend = source[start:middle].rstrip()[:-1].rstrip()
    divisor = source[middle:end]
    return ((start, end), f"{source[start:end]} is read as ({source[start:after]})*"
            f"{source[factor:end]}, left to right as with *; to divide by "
            f"{divisor}, write {dividend}/({divisor})", (((middle, end), f"({divisor})"),))


def _number_exponent(power: Binary, source: str) -> bool:
    """Whether ``power`` is written ``b^3`` or ``b^-3`` (a number after ``^`` or ``**``, not a
    superscript) with a factor right after it, no space between: ``2^3x``, ``e^2x``."""
    exponent = power.right
    if exponent.__class__ is Unary and exponent.op == "-":
        exponent = exponent.operand
    if exponent.__class__ is not Num or not source:
        return False
    between = source[power.left.span[1]:power.right.span[0]]
    after = source[power.span[1]:power.span[1] + 1]
    return ("^" in between or "**" in between) and after not in ("", " ", "\t", "\n")


def _ambiguous_power(left: Binary, right, source: str) -> tuple:
    """The note for ``2^3x`` (a factor written right after a power's number): the span it is
    about, what it says, and the fix for the other reading, ``2^(3x)``."""
    start, base_end = _written(left.left, source)
    factor, end = _written(right, source, left.span[1])
    middle = left.right.span[0]
    base, exponent = source[start:base_end], source[middle:end]
    return ((start, end), f"{source[start:end]} is read as ({source[start:left.span[1]]})*"
            f"{source[factor:end]}, a power before a product written "
            f"without *; to raise {base} to {exponent}, write {base}^({exponent})",
            (((middle, end), f"({exponent})"),))


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
    if name is not tok.value and re.search(f"[{_SIGNED}]", name):
        _escaped_superscript(tok)
    if name is not tok.value and not re.match(_NAME, name):
        for m in re.finditer(_ESCAPE, tok.value):
            ch = unescape_name(m.group())
            if not ("a" + ch if m.start() else ch).isidentifier():
                raise ParseError(f"{m.group()} is {ch!r}, which cannot be part of a name",
                                 (tok.start_pos + m.start(), tok.start_pos + m.end()),
                                 hint="a name is letters, digits and _, starting with a letter")
    return name


def _escaped_superscript(tok) -> None:
    """``x\\u00b2``: the escape of a superscript (JSON, or a shell's ``$'...'``, writes ``x²``
    so when the text is not decoded on its way) is a ParseError under the escape, whose fix is
    the power written with ``^``: an escape stands only for a letter of a name."""
    def superscript(m):
        ch = unescape_name(m.group())
        return ch if ch in _SIGNED else m.group()
    first = next(m for m in re.finditer(_ESCAPE, tok.value) if superscript(m) != m.group())
    plain = _caret_powers(re.sub(_ESCAPE, superscript, tok.value))
    raise ParseError(f"{first.group()} is the superscript {superscript(first)!r} written as an "
                     "escape; an escape stands only for a letter of a name",
                     (tok.start_pos + first.start(), tok.start_pos + first.end()),
                     hint=f"write {plain}", fix=(((tok.start_pos, tok.end_pos), plain),))


def read_name(text: str, start: int) -> str:
    """The name a NAME token at ``start`` spells (escapes read), or the ParseError the parser
    gives for it (a superscript, an escape no name may hold); interned: a name read 10,000
    times is one string, hashed once by the lowering's dicts."""
    if text.isascii() and "\\" not in text:  # no superscript, no escape: the name as written
        return intern(text)
    tok = _Token("NAME", text, start, start + len(text))
    if not text.isascii():
        _no_superscript(tok)
    return intern(_name(tok))


_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_POWER = f"[{_SUPERSCRIPTS}]+"  # compiled on first use
_SIGNED = "\u207b" + _SUPERSCRIPTS  # and the superscript minus: x⁻¹


def _caret_powers(text: str) -> str:
    """``text`` with each run of superscripts written with ``^``: ``x²`` is ``x^2``, ``x⁻¹``
    is ``x^-1``."""
    return re.sub(f"[{_SIGNED}]+", lambda m: "^" + "".join(
        "-" if c == "\u207b" else str(_SUPERSCRIPTS.index(c)) for c in m.group()), text)


def _no_superscript(tok) -> None:
    """A name such as ``x²`` (Unicode counts ² as a letter-like character) is a power meant as
    ``x^2``: say so, with the caret under the superscript, instead of reading a variable x²."""
    found = re.search(_POWER, tok.value)
    if found is None:
        return
    plain = _caret_powers(tok.value)
    raise ParseError(f"{tok.value!r} holds the superscript {found.group()!r}; gradcli writes "
                     "powers with ^", (tok.start_pos + found.start(), tok.start_pos + found.end()),
                     hint=f"write {plain}", fix=(((tok.start_pos, tok.end_pos), plain),))


def _nesting(kind: str | None, text: str, depth: int) -> int | None:
    """The post-lexer's rule, token by token: the depth of parentheses and brackets after a token of type
    ``kind``, or None for a newline inside parentheses, which continues the expression (the
    token is dropped)."""
    if kind == "LPAR" or kind == "CALL" or kind == "LSQB":  # a CALL token ends with its '('
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
    text one more, empty, match, and any other character a match of its own (``_BAD_``, tried
    last), so each match starts where the one before ended.

    Each token's group follows its pattern and holds the blanks after it,
    ``(?:+)(?P<PLUS>[ \t\f\r]*)``, where the tables have ``(?P<PLUS>+)``: the same alternatives
    in the same order, so the same matches, but the regular expression engine skips a branch
    by its first character (a group opening the branch hides that character from it). The
    match's last group is the terminal's, and its span is where the token ends and where the
    next match starts: one call per token. What the grammar ignores and the end of the text
    have no group (a match with no last group): fewer groups, a smaller match object."""
    parts = re.split(r"\(\?P<(\w+)>", tables["pattern"])  # "", name, body + ")|", name, ...
    names, bodies = parts[1::2], [body[:-2] for body in parts[2::2]]
    bodies[-1] = parts[-1][:-1]
    if parts[0] or "|".join(f"(?P<{n}>{b})" for n, b in zip(names, bodies)) != tables["pattern"]:
        raise ValueError("the lexer's pattern is not one group per terminal")
    ignore = tables["ignore"]
    terminals = "|".join(f"(?:{body}){BLANKS}" if name in ignore else
                         f"(?:{body})(?P<{name}>{BLANKS})" for name, body in zip(names, bodies))
    regex = re.compile(f"{terminals}|\\Z|(?s:.)(?P<_BAD_>{BLANKS})")
    if regex.groups != len(regex.groupindex):  # a match of an ignored terminal has no group
        raise ValueError("the lexer's pattern has a group that is not a terminal's")
    for blank in BLANKS[1:-2]:  # eaten after a token: they must be blanks the grammar ignores
        found = regex.match(blank)
        if found is None or found.lastgroup is not None:
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
    # Symbols as integers, the terminals first (a token's kind), then the rules; the tables as
    # one flat array of integers, a row per state and a column per symbol, so that compiled
    # (parser.pxd) the loop reads them as C arrays: 0 is an error, s + 1 shifts (or goes) to
    # state s, -(r + 1) reduces by reduction r.
    order = [name for name in names if name.isupper()]
    order += [name for name in names if not name.isupper()]
    number = {name: i for i, name in enumerate(order)}
    width, count = len(order), len(tables["states"])
    table = array("i", bytes(4 * width * count))
    for state, pairs in enumerate(tables["states"]):
        pairs = bytes.fromhex(pairs)
        base = state * width
        for i in range(0, len(pairs), 2):
            action = pairs[i + 1]
            table[base + number[names[pairs[i]]]] = action + 1 if action < count \
                else count - action - 1
    # Per reduction: its size, its rule's column, and its callback's index (-1: a unit rule,
    # ``?sum: product``, whose value is its only child's, in a new state).
    sizes, rules, calls, methods = array("i"), array("i"), array("i"), []
    for entry in tables["reductions"]:
        sizes.append(entry[0])
        rules.append(number[names[entry[1]]])
        if len(entry) == 2:
            calls.append(-1)
            continue
        method, kept = entry[2], entry[3]
        if method is not None and method not in _METHODS:
            raise ValueError(f"no callback {method!r}")
        calls.append(len(methods))
        pairs = tuple((kept[i], bool(kept[i + 1])) for i in range(0, len(kept), 2))
        methods.append((method, _child_filter(entry[0], pairs)))
    regex = lexer(tables)
    # Per group of the lexer: the kind of token a match whose last group it is gives (that
    # group holds the blanks after the token); _BAD for no terminal.
    kinds = array("i", [_BAD] * (regex.groups + 1))
    for name, index in regex.groupindex.items():
        kinds[index] = _BAD if name == "_BAD_" else number[name]
    machine = _Machine(regex.finditer, kinds, order, table, width, sizes, rules, calls,
                       methods, number["$END"], tables["start"], tables["end"])
    return partial(_drive, machine=machine)


_BAD = -1  # the kind of a match that is no token


class _Machine(NamedTuple):
    """:func:`driver`'s tables, as :func:`_drive` reads them."""

    finditer: Callable
    kinds: array       # per group of the lexer, the token's kind (or _BAD)
    names: list        # per symbol, its name (a token's type)
    table: array       # per state and symbol, the action (see driver)
    width: int         # the symbols (a row of the table)
    sizes: array       # per reduction, how many children it takes
    rules: array       # per reduction, its rule's symbol
    calls: array       # per reduction, its callback in methods (-1 for a unit rule)
    methods: list      # per callback, (the builder's method name or None, Lark's child filter)
    end_kind: int      # $END's symbol
    start: int         # the state to start in
    end: int           # the state that accepts


def _drive(source: str, builder, machine):
    """:func:`driver`'s ``run``: ``source`` read by the machine with ``builder``'s callbacks."""
    finditer, kinds, names, table, width, sizes, rules, calls, methods, end_kind, start, end \
        = machine
    callbacks = [_bind(method and getattr(builder, method), child_filter)
                 for method, child_filter in methods]
    # The LR stack: stack[i] is the state after values[i] (values[0] is no value), i <= top.
    # Entries above top are left in place and overwritten: no list shrinks or grows per step.
    stack, values, top = array("i", [start]) * 64, [None] * 64, 0
    states = stack  # compiled, a typed view of the array (re-taken when the stack grows)
    state = start
    newlines = "\n" in source  # the post-lexer only ever drops newline tokens
    depth = 0
    begin = 0  # each match starts where the one before it ended (the lexer's last alternative)
    for match in finditer(source):
        index = match.lastindex
        if index is None:  # what the grammar ignores, or the end (the one empty match)
            after = match.end()
            if after != begin:
                begin = after
                continue  # a comment, blanks
            kind = end_kind
            stop = begin
        else:
            kind = kinds[index]
            stop, after = match.span(index)
            if kind < 0:  # _BAD: no terminal matches here
                return SyntaxFault(begin)
        text = source[begin:stop]
        if newlines:
            nested = _nesting(names[kind], text, depth)
            if nested is None:
                begin = after
                continue
            depth = nested
        tok = _Token.__new__(_Token)  # no __init__ call: compiled, four stores
        tok.type = names[kind]
        tok.value = text
        tok.start_pos = begin
        tok.end_pos = stop
        while True:
            action = table[state * width + kind]
            if action == 0:
                return SyntaxFault(begin, names[kind], text, _expected_at(machine, state))
            if top + 1 == len(values):  # a deeper nesting than ever: twice the room
                states = None  # the view let go, so that the array can be copied
                stack = stack + stack
                states = stack
                values.extend(values)
            if action > 0:  # shift
                top += 1
                state = action - 1
                states[top] = state
                values[top] = tok
                break
            reduction = -action - 1
            size = sizes[reduction]
            call = calls[reduction]
            top -= size  # the state below the rule's children goes to the rule's
            if call < 0:  # a unit rule: its child's value stays
                value = values[top + 1]
            else:
                value = callbacks[call](values[top + 1:top + 1 + size])
            state = table[states[top] * width + rules[reduction]] - 1
            top += 1
            states[top] = state
            values[top] = value
            if state == end and kind == end_kind:
                return value
        begin = after
    raise AssertionError("the scan ends with $END or a stop")  # pragma: no cover


def _expected_at(machine: _Machine, state: int) -> frozenset:
    """The terminals a state can shift or reduce on (what a syntax error there expected)."""
    base = state * machine.width
    return frozenset(name for kind, name in enumerate(machine.names)
                     if name.isupper() and machine.table[base + kind] != 0)


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
def parse(source: str, functions=None, notes: list | None = None) -> Program:
    """Parse a program (or a single expression) into a :class:`~gradcli.language.ast.Program`.

    ``functions`` says which names are functions (``name in functions``) and their inverses
    (``functions.inverse(name)``: a name or None), and the constants' names
    (``functions.constants``); the rule table's is ``engine.graph.FUNCTIONS``, which
    ``engine.graph.parse_source`` passes. With it, ``sin^2(x)`` is ``sin(x)^2``, ``sin^-1(x)``
    is ``asin(x)``, and ``x(x+1)`` and ``pi(x+1)`` are products.
    ``notes`` (a list) receives ``(span, text)`` for each reading worth a warning (``1/2x``)."""
    check_length(source)
    builder = _TRANSFORMER if functions is None and notes is None else \
        _ToAst(source, functions, notes)
    program = reduce(source, builder)
    if program.__class__ is SyntaxFault:
        raise _translate(program, source)
    if not program.statements:
        raise ParseError("the expression is empty", hint='give an expression, such as "x^2 + 1"')
    return Program(program.statements, (0, len(source)))


# A word that starts a branch or a loop, or a comparison: what gradcli's language has none of
_CONTROL_FLOW = r"\b(if|else|elif|then|while|for|return)\b|([<>]=?|==|!=|&&|\?)"


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
    flow = re.search(_CONTROL_FLOW, source)
    if flow is not None:
        # if x > 0 ...: no fault's place says it better than the word that starts the branch
        error = ParseError(f"gradcli has no {'comparisons' if flow.group(2) else 'control flow'}"
                           " (if/else, <, >): an expression is one formula", flow.span(),
                           hint="a branch is written with a function, e.g. max(x, 0) for "
                                "'if x > 0 then x else 0'")
        error.control_flow = True  # engine.graph.parse_source names the table's functions
        return error
    if fault.token_type is None:
        pos = fault.pos
        return ParseError(f"unexpected character {source[pos]!r}", (pos, pos + 1),
                          hint="expressions are made of numbers, names, + - * / @ ^ ** ( ) [ ] , "
                               "| √ ∛ ² °, and programs of = += -= *= /= ; and # comments")
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
    if kind == "BAR":  # 2|x|: a bar after an operand could close or open, so it needs a *
        tail = source[max(0, pos - 100):pos]  # not all of it: this search is quadratic
        before = re.search(r"(\w+(\([^()]*\))?|\([^()]*\)|\)|\|[^|]*\|)\s*$", tail)
        after = re.match(r"\|[^|]*\|", source[pos:])
        if before and after:
            start = pos - len(tail) + before.start(1)
            written = f"{before.group(1)}*{after.group(0)}"
            return ParseError(f"unexpected {what}: a bar after an operand needs an operator",
                              span, hint=f"write {written}",
                              fix=(((start, pos + after.end()), written),))
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
