"""A pause of Python's cyclic garbage collector while a stage builds a large acyclic structure.

Parsing and lowering allocate a few container objects per graph node and create no reference
cycles, yet every 700 allocations the collector runs, and each full collection walks the whole
growing tree again: at 10^5 terms that was two thirds of the parse and made the time grow faster
than the input. Reference counting still frees everything; the collector is restored as found.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    """Context manager (and decorator): the cyclic collector off inside, as it was outside."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
