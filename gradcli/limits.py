"""The size limits, and how to change them: the longest source text, the most graph nodes, and
the longest line and most columns of a points file.

Each has a default sized to what the engine handles (docs/limits.md has the measurements) and an
environment variable that overrides it for one run or one shell:

- ``GRADCLI_MAX_SOURCE``: characters of source text read (default 67,108,864, 64 MiB);
- ``GRADCLI_MAX_NODES``: operations in the lowered graph (default 20,000,000);
- ``GRADCLI_MAX_LINE``: bytes in one line (one row) of a ``--points`` file (default 1,048,576);
- ``GRADCLI_MAX_COLUMNS``: columns of a ``--points`` file (default 10,000);
- ``GRADCLI_MAX_ELEMENTS``: elements of one array input (default 10,000,000).

The values are read when they are needed, not at import, so a program (or a test) may set the
variables at any time. A value that is not a whole number of at least 1, or more than the
variable's ceiling (:data:`CEILINGS`), is an :class:`InputError` naming the variable.
"""

from __future__ import annotations

import os
import re

from .errors import InputError

DEFAULT_MAX_SOURCE = 64 << 20
DEFAULT_MAX_NODES = 20_000_000
SOURCE_VARIABLE = "GRADCLI_MAX_SOURCE"
NODES_VARIABLE = "GRADCLI_MAX_NODES"
DEFAULT_MAX_LINE = 1 << 20
DEFAULT_MAX_COLUMNS = 10_000
LINE_VARIABLE = "GRADCLI_MAX_LINE"
COLUMNS_VARIABLE = "GRADCLI_MAX_COLUMNS"
DEFAULT_MAX_ELEMENTS = 10_000_000
ELEMENTS_VARIABLE = "GRADCLI_MAX_ELEMENTS"


MAX_ORDER = 1000  # the highest derivative order gradcli diff builds (docs/limits.md)
# The most inputs of a whole Hessian (one sweep and one row each); a Hessian-vector product
# (hessian --direction) has no such limit (docs/limits.md)
MAX_HESSIAN_INPUTS = 500


def check_order(order: int) -> None:
    """A derivative order above :data:`MAX_ORDER` is refused before any work: each order is one
    more symbolic sweep over an expression that grows with the order."""
    from .errors import LimitError
    if order > MAX_ORDER:
        raise LimitError(f"--order {order:,} is more than {MAX_ORDER:,}, the highest order "
                         "gradcli differentiates to", hint="ask for a lower order; the n-th "
                         "derivative of most expressions grows quickly with n (docs/limits.md)")


# The largest value each variable may take: what the readers and the engine can index (a pyarrow
# block holds a whole line in an int32 size; the sweeps' node numbers are int32).
CEILINGS = {SOURCE_VARIABLE: 1 << 31, NODES_VARIABLE: (1 << 31) - 1, LINE_VARIABLE: 1 << 30,
            COLUMNS_VARIABLE: 1 << 24, ELEMENTS_VARIABLE: (1 << 31) - 1}


def _read(variable: str, default: int) -> int:
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"{variable}={text!r} is not a whole number of at least 1",
                         hint=f"unset it for the default, {default:,}, or give a number such as "
                              f"{variable}={default * 2}")
    ceiling = CEILINGS[variable]
    if value > ceiling:
        raise InputError(f"{variable}={text!r} is more than {ceiling:,}, the most gradcli can use",
                         hint=f"give a number from 1 to {ceiling:,}, or unset it for the default, "
                              f"{default:,}")
    return value


def max_source() -> int:
    """The most characters of source text gradcli reads (``GRADCLI_MAX_SOURCE``)."""
    return _read(SOURCE_VARIABLE, DEFAULT_MAX_SOURCE)


def max_nodes() -> int:
    """The most operations a lowered graph may have (``GRADCLI_MAX_NODES``)."""
    return _read(NODES_VARIABLE, DEFAULT_MAX_NODES)


def max_line() -> int:
    """The most bytes in one line of a points file (``GRADCLI_MAX_LINE``): reading any input,
    ``/dev/zero`` included, holds at most about this much of one line in memory."""
    return _read(LINE_VARIABLE, DEFAULT_MAX_LINE)


def max_columns() -> int:
    """The most columns a points file may have (``GRADCLI_MAX_COLUMNS``), checked on its header."""
    return _read(COLUMNS_VARIABLE, DEFAULT_MAX_COLUMNS)


def max_elements() -> int:
    """The most elements one array input may have (``GRADCLI_MAX_ELEMENTS``)."""
    return _read(ELEMENTS_VARIABLE, DEFAULT_MAX_ELEMENTS)


def check_elements(count: int, subject: str, name: str, more: bool = False) -> None:
    """Refuse an array input (``name``) of more than GRADCLI_MAX_ELEMENTS elements: ``count``
    of them (at least ``count``, ``more``, when a file is refused before it is read to its
    end); ``subject`` is what has them (``data.csv``, ``the value of w``)."""
    limit = max_elements()
    if count > limit:
        from .errors import LimitError
        raise LimitError(f"{subject} has {count:,}{' or more' if more else ''} elements, more "
                         f"than the {limit:,} an array input may have ({ELEMENTS_VARIABLE})",
                         names=(name,), hint=f"raise the limit for this run: {ELEMENTS_VARIABLE}="
                                             f"{count * 2} gradcli ... (docs/limits.md)")


# -- a source too large for the node limit, refused before parsing --------------------------------

SCAN_CHUNK = 1 << 20  # bytes of source scanned at a time (its arrays stay in the cache)
MOST_ASSIGNMENTS = 10_000  # past this many "=", the scan gives up (no bound, no refusal)
MOST_COMMENTS = 100_000


def nodes_at_least(source: str, constants=("pi", "e"), enough: int | None = None) -> int:
    r"""A lower bound on the operations the source's graph will have, from its text alone (0
    where the scan cannot say: NumPy missing, ``\u`` escapes in names, very many assignments or
    comments). ``constants``: the names that read a constant; the scan stops once the bound
    passes ``enough``.

    Every operation has at most two arguments, none is merged with another, and an operation
    whose arguments are all constants is folded, never counted here. So a statement reading
    ``k`` inputs (names never assigned anywhere in the source, not a constant, not called) has at
    least ``k - 1`` operations, and the program at least ``sum(k) - statements``: the names
    counted, less the number of ``;`` and line breaks, less one. A name is not counted when it
    touches a non-ASCII character, a ``\`` or a ``.`` (part of a longer name, or of a number such
    as ``1.e5``), or when the next character past blanks is ``(``, ``;`` or a line break: every
    count errs low, never high."""
    try:
        import numpy as np
    except ImportError:
        return 0
    if "\\u" in source or "\\U" in source or source.count("#") > MOST_COMMENTS:
        return 0
    if source.count("=") > MOST_ASSIGNMENTS:
        return 0
    data = source.encode("utf-8", "surrogatepass")
    if b"#" in data:
        data = re.sub(rb"#[^\n]*", b"", data)
    statements = data.count(b";") + data.count(b"\n") + 1
    excluded = {name.encode() for name in constants}
    assigned, not_name = re.compile(_ASSIGNED), re.compile(_NOT_NAME)
    for match in re.finditer(rb"=", data):
        target = assigned.search(data, max(0, match.start() - 256), match.start())
        if target:
            excluded.add(target.group(1))
    # blanks out (a name's next character is then the next one), a line continuation out, a
    # line break a ";"; names touching what is left of a "\" are not counted ("\" -> ".")
    if b"\\" in data:
        data = data.replace(b"\\\r\n", b"").replace(b"\\\n", b"")
    if any(blank in data for blank in (b" ", b"\t", b"\f", b"\r", b"\n", b"\\")):
        data = data.translate(_BLANKS, b" \t\f\r")
    data += b";"  # the last name ends
    array = np.frombuffer(data, dtype=np.uint8)
    kind = _kinds()
    counted = 0
    a = 0
    while a < len(array) - 1:
        b = min(len(array) - 1, a + SCAN_CHUNK)
        found = not_name.search(data, b)  # a chunk ends where no name runs across it
        b = found.start() if found else len(array) - 1
        c = kind[array[a:b + 1]]  # and one character past the chunk: the last run's end
        name = (c & 1) != 0
        # array[a] (a > 0) is no name's character: runs start and end inside [a, b]
        starts = np.flatnonzero(name[1:] & ~name[:-1]) + 1
        if a == 0 and name[0]:
            starts = np.concatenate([[0], starts])
        ends = np.flatnonzero(~name[1:] & name[:-1]) + 1
        ok = ((c[starts] & 2) != 0) & ((c[ends] & 12) == 0)  # a letter first, no "(" after
        inner = starts > 0
        ok[inner] &= (c[starts[inner] - 1] & 4) == 0  # and no "." or non-ASCII before
        starts, ends = starts[ok], ends[ok]
        total = len(starts)
        if total:
            lengths = ends - starts
            firsts = array[a + starts]
            for word in excluded:
                same = starts[(firsts == word[0]) & (lengths == len(word))]
                for i, byte in enumerate(word[1:], 1):
                    same = same[array[a + same + i] == byte]
                total -= len(same)
        counted += total
        if enough is not None and counted - statements > enough:
            break
        a = b
    return max(0, counted - statements)


_ASSIGNED = rb"([A-Za-z_][A-Za-z0-9_]*)[ \t\f]*[-+*/]?$"  # compiled where used: a large source
_NOT_NAME = rb"[^A-Za-z0-9_]"
_BLANKS = bytes.maketrans(b"\n\\", b";.")


def _kinds():
    r"""Byte classes: 1 a name's character, 2 a name's first (a letter, _), 4 a character that
    makes a name beside it uncountable (non-ASCII, "." and what was "\"), 8 one after which a
    name is not counted ("(", ";")."""
    import numpy as np
    kind = np.zeros(256, dtype=np.uint8)
    kind[list(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")] = 3
    kind[list(b"0123456789")] = 1
    kind[128:] = 4
    kind[ord(".")] = 4
    kind[list(b"(;")] = 8
    return kind


def check_nodes(source: str, constants=("pi", "e")) -> None:
    """Refuse, before parsing, a source whose text alone implies more operations than
    GRADCLI_MAX_NODES (:func:`nodes_at_least`); only a source of more than two characters per
    node is scanned (a name counted takes at least two), so small sources cost nothing."""
    limit = max_nodes()
    if len(source) <= 2 * limit or len(source) > max_source():  # (the parser refuses the latter)
        return
    least = nodes_at_least(source, constants, enough=limit)
    if least > limit:
        from .errors import LimitError
        raise LimitError(f"the expression's graph has more than {limit:,} nodes, the most "
                         f"gradcli builds ({NODES_VARIABLE}): its text alone shows it (at least "
                         f"{least:,} operations), so it is refused before parsing",
                         hint=f"raise the limit for this run: {NODES_VARIABLE}={limit * 4} "
                              "gradcli ... (docs/limits.md)")
