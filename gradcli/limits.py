"""The size limits, and how to change them: the longest source text, the most graph nodes, and
the longest line and most columns of a points file.

Each has a default sized to what the engine handles (docs/limits.md has the measurements) and an
environment variable that overrides it for one run or one shell:

- ``GRADCLI_MAX_SOURCE``: characters of source text read (default 67,108,864, 64 MiB);
- ``GRADCLI_MAX_NODES``: operations in the lowered graph (default 20,000,000);
- ``GRADCLI_MAX_LINE``: bytes in one line (one row) of a ``--points`` file (default 1,048,576);
- ``GRADCLI_MAX_COLUMNS``: columns of a ``--points`` file (default 10,000).

The values are read when they are needed, not at import, so a program (or a test) may set the
variables at any time. A value that is not a whole number of at least 1 is an :class:`InputError`
naming the variable.
"""

from __future__ import annotations

import os

from .errors import InputError

DEFAULT_MAX_SOURCE = 64 << 20
DEFAULT_MAX_NODES = 20_000_000
SOURCE_VARIABLE = "GRADCLI_MAX_SOURCE"
NODES_VARIABLE = "GRADCLI_MAX_NODES"
DEFAULT_MAX_LINE = 1 << 20
DEFAULT_MAX_COLUMNS = 10_000
LINE_VARIABLE = "GRADCLI_MAX_LINE"
COLUMNS_VARIABLE = "GRADCLI_MAX_COLUMNS"


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
