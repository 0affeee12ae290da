"""The sweeps' loops compiled (``_sweeps.c``, an optional C extension), where it was built.

forward.py's primal loop, partials.py's reverse accumulation and certify.py's first sweep on
bare balls each have a Python loop and the same loop in C. The C loop calls the same rule-table
functions on the same numbers (or takes the partials a row's form declares, which are what its
functions return) and accumulates with Python's own ``*`` and ``+=``, so both give the same
numbers and the same errors; it only saves the interpreter's bookkeeping around the calls. A
tape below ``COMPILED_FROM`` nodes keeps the Python loop (a plain ``eval`` of a small
expression does not import the extension); an install without a C compiler always does.
"""

from __future__ import annotations

from array import array

COMPILED_FROM = 512  # nodes: below, the import costs more than the loop saves
ABI = 5  # the loops' calling convention (_sweeps.ABI): a stale build is not used
_module = False  # not yet imported
_CALL, _CONSTANT, _OTHER = 0, 1, 2  # _sweeps.c's reverse: how a kind's partials are had


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


class Tape:
    """A graph's tape as the compiled loops read it, made once per graph (:func:`tape`): the
    distinct rows its nodes use (``kinds``, in order of first use), each node's index among
    them (``codes``, uint16) and its argument slots (``arg0``, ``arg1``, int32; -1: none). A
    loop then takes one entry per kind (a row's primal, its partials, its ball function)
    instead of a list as long as the tape, built anew for every sweep; and it reads machine
    integers, not a Python int (a cache miss on a large tape) per argument."""

    __slots__ = ("kinds", "codes", "arg0", "arg1", "_visit")

    def __init__(self, kinds: list, codes: bytes, arg0: bytes, arg1: bytes):
        self.kinds, self.codes, self.arg0, self.arg1 = kinds, codes, arg0, arg1
        self._visit = None

    def order(self, graph, slots=None) -> bytes:
        """The slots a reverse loop visits, as int32 bytes: ``graph.visit_order()`` (``slots``
        None, or that very list) made once (:meth:`Graph.packed_visit_order`), other slots
        packed each time."""
        if slots is not None and slots is not graph._visit:
            return packed_slots(slots)
        if self._visit is None:
            self._visit = graph.packed_visit_order()
        return self._visit

    def each(self, attribute: str) -> list:
        """Every kind's ``attribute`` (its primal, its partials, ...), in the kinds' order."""
        return [getattr(kind, attribute) for kind in self.kinds]

    def shortcuts(self) -> tuple[bytes, list]:
        """For the reverse loop, how each kind's partials are had: by calling its rules, or,
        where its row declares a sum's or a two-factor product's ``form``, as the sum's
        coefficients or the other factor, which is what those rules return."""
        how, constants = bytearray(), []
        for kind in self.kinds:
            form = kind.form or ("", ())
            if form[0] == "sum":
                how.append(_CONSTANT)
                constants.append(tuple(map(float, form[1])))
            else:
                how.append(_OTHER if form == ("product", (1, 1)) else _CALL)
                constants.append(None)
        return bytes(how), constants


def tape(graph) -> Tape:
    """``graph``'s :class:`Tape` (kept on the graph); only called where the loops are compiled."""
    if graph._tape is None:
        graph._tape = Tape(*_module.pack(graph.ops, graph.arg0, graph.arg1))
    return graph._tape


def packed_slots(slots) -> bytes:
    """A list of slots as the int32 bytes the loops read."""
    return array("i", slots).tobytes()


def failed_node(exc: BaseException, base: int, k: int) -> int:
    """The node (index in the tape) whose call raised ``exc``: the compiled loop marks it on the
    exception (its ``slot``), the Python loop's ``k`` knows it."""
    slot = getattr(exc, "slot", None)
    return k if slot is None else slot - base
