"""The marks of the notation (adjoint bar, tangent dot, ∂) and their ASCII forms.

The adjoint of a node is written with a bar, its tangent with a dot. A node id ``v5`` is the
textbook's subscripted v, so the mark goes over the v: ``v̄5``, ``v̇5``. A name the user chose
is marked as a whole: one letter takes the mark over it (``x̄``), a longer name takes an overline
over every character (``r̅a̅t̅e̅``: COMBINING OVERLINE joins into one bar in a terminal font), and
its tangent is written ``(rate)˙``, so neither is read as ``r`` with an accent.

Where the output cannot show these characters (an ASCII or cp1252 stream, ``--ascii``),
:func:`to_ascii` rewrites text into plain ASCII with the same meaning: ``vbar5``, ``bar(rate)``,
``df/dx``, box lines as ``+ - |``. Every view calls it before measuring text, so columns stay
aligned.
"""

from __future__ import annotations

import re
import unicodedata

MACRON, OVERLINE, DOT_ABOVE = "\u0304", "\u0305", "\u0307"
NODE_ID = r"v\d+\Z"  # patterns compiled on first use (re caches them), not at start-up


def adjoint(name: str) -> str:
    """``v̄5``, ``x̄``, ``r̅a̅t̅e̅``: the adjoint of a node or a named input; ``w̄[0]``: of an
    array input's element (element 0 of w̄)."""
    return _marked(name, MACRON, lambda whole: "".join(ch + OVERLINE for ch in whole))


def operation_adjoint(node_id: str) -> str:
    """``ā3``: the adjoint of an array operation of the trace (``a1``, ``a2``, ...), marked
    as ``v̄5`` is; an input's as :func:`adjoint` marks it."""
    if node_id[:1] == "a" and node_id[1:].isdigit():
        return node_id[0] + MACRON + node_id[1:]
    return adjoint(node_id)


def tangent(name: str) -> str:
    """``v̇5``, ``ẋ``, ``(rate)˙``: the tangent of a node or a named input; ``ẇ[0]``: of an
    array input's element."""
    return _marked(name, DOT_ABOVE, lambda whole: f"({whole})\u02d9")


def _marked(name: str, mark: str, whole) -> str:
    """``mark`` over a node id's v or a one-letter name; a longer name ``whole(name)``; an
    element's index left unmarked."""
    base, bracket, index = name.partition("[")
    if bracket and base:
        return _marked(base, mark, whole) + bracket + index
    if len(name) == 1 or re.match(NODE_ID, name):
        return name[0] + mark + name[1:]
    return whole(name)


# -- ASCII ---------------------------------------------------------------------------------------

# Box drawing, blocks and arrows: one ASCII character each, so a drawing (a plot) keeps its shape.
_LINES = {**{ch: "-" for ch in "─━┄╌┈"}, **{ch: "|" for ch in "│┃║"}, "═": "=",
          **{ch: ":" for ch in "┆╎┊"},
          **{ch: "+" for ch in "┌┐└┘├┤┬┴┼╭╮╰╯╔╗╚╝╟╢┏┓┗┛┡┩┣┫┳┻╋╇╈┠┨┯┷┿╂"},
          "▶": ">", "◀": "<", "▼": "v", "▲": "^", "█": "#", "▁": "_"}
# Symbols of the notation and of the messages, by their ASCII spelling.
_SYMBOLS = {"∂": "d", "∇": "grad ", "·": "*", "×": "x", "−": "-", "–": "-", "—": "-",
            "±": "+-", "≠": "!=", "≤": "<=", "≥": ">=", "≈": "~", "π": "pi", "…": "...",
            "⋮": ":", "←": "<-", "→": "->", "✓": "ok", "✗": "x", "√": "sqrt",
            "∞": "inf", "\u02d9": "dot", "\u00a0": " ", "ᵀ": "^T", "Γ": "Gamma", "ψ": "psi",
            **{sup: f"^{d}" for d, sup in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")}}
_MARKED = (f"(?s)(v)([{MACRON}{DOT_ABOVE}])(\\d+)"  # v̄5 -> vbar5
                     f"|((?:.{OVERLINE})+)"  # r̅a̅t̅e̅ -> bar(rate)
                     f"|\\((\\w+)\\)\u02d9"  # (rate)˙ -> dot(rate)
                     f"|(.)([{MACRON}{DOT_ABOVE}])")  # x̄ -> bar(x)
_MARK_NAME = {MACRON: "bar", DOT_ABOVE: "dot"}


def _unmark(match: re.Match) -> str:
    v, mark, number, overlined, dotted, letter, letter_mark = match.groups()
    if v:
        return f"v{_MARK_NAME[mark]}{number}"
    if overlined:
        return f"bar({overlined.replace(OVERLINE, '')})"
    if dotted:
        return f"dot({dotted})"
    return f"{_MARK_NAME[letter_mark]}({letter})"


def to_ascii(text: str, encoding: str = "ascii") -> str:
    """``text`` in ASCII: marks spelled out (``vbar5``, ``bar(x)``, ``df/dx``), box lines as
    ``+-|``; any other character the ``encoding`` cannot write becomes ``\\uXXXX``."""
    if text.isascii():
        return text
    text = re.sub(_MARKED, _unmark, text)
    out = []
    for ch in text:
        if ch.isascii():
            out.append(ch)
        elif ch in _LINES:
            out.append(_LINES[ch])
        elif ch in _SYMBOLS:
            out.append(_SYMBOLS[ch])
        elif encodes(ch, encoding):
            out.append(ch)
        elif unicodedata.combining(ch):
            continue  # an accent the stream cannot show: the letter alone
        else:
            out.append(escape(ch))
    return "".join(out)


def escape(ch: str) -> str:
    """``\\u03b8`` for θ, ``\\U0001d465`` beyond the BMP: the escape gradcli's parser reads
    back in a name (docs/language.md), so what ``diff`` prints on any stream is a program."""
    code = ord(ch)
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def encodes(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


# Characters gradcli's output uses: a stream that cannot encode them all gets ASCII.
_SAMPLE = "∂∇v\u0304x\u0307r\u0305─│┏╭▶←✓…⋮"


def needs_ascii(encoding: str | None) -> bool:
    """True when a stream with this encoding cannot show the notation and the box lines."""
    return bool(encoding) and not encodes(_SAMPLE, encoding)
