"""The sweeps' loops compiled (``_sweeps.c``, an optional C extension), where it was built.

forward.py's primal loop, partials.py's reverse accumulation and certify.py's first sweep on
bare balls each have a Python loop and the same loop in C. The C loop calls the same rule-table
functions on the same numbers and accumulates with Python's own ``*`` and ``+=``, so both give
the same numbers and the same errors; it only saves the interpreter's bookkeeping around the
calls. A tape below ``COMPILED_FROM`` nodes keeps the Python loop (a plain ``eval`` of a small
expression does not import the extension); an install without a C compiler always does.
"""

from __future__ import annotations

COMPILED_FROM = 512  # nodes: below, the import costs more than the loop saves
ABI = 1  # the loops' calling convention (_sweeps.ABI): a stale build is not used
_module = False  # not yet imported


def compiled_sweep(name: str, nodes: int):
    """The compiled loop ``name`` for a tape of ``nodes`` nodes, or None: the caller's Python
    loop computes the same."""
    global _module
    if nodes < COMPILED_FROM:
        return None
    if _module is False:
        try:
            from . import _sweeps as module
        except ImportError:
            module = None
        _module = module if getattr(module, "ABI", None) == ABI else None
    return None if _module is None else getattr(_module, name)


def failed_node(exc: BaseException, base: int, k: int) -> int:
    """The node (index in the tape) whose call raised ``exc``: the compiled loop marks it on the
    exception (its ``slot``), the Python loop's ``k`` knows it."""
    slot = getattr(exc, "slot", None)
    return k if slot is None else slot - base
