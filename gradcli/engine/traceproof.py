"""The trace's numbers, each proven the first time a table reads it.

A trace table of a large program shows 40 rows of its tens of thousands, and proving a number's
digits costs more than computing it, so a recorded sweep's numbers are proven one at a time, when
read. Two provers serve the same sequences (:class:`Numbers`, :class:`Contributions`): the
balls of a certified sweep (:class:`gradcli.engine.certify._Trace`), and :class:`QuickTrace`, the
bounds of the quick sweep in doubles that proved the value
(:func:`~gradcli.engine.bounds.certify_quickly`), which hands a number its bound cannot prove
to the balls. Both give a number's digits correctly rounded, so they print alike.

>>> from gradcli.engine.bounds import Bounded
>>> bound_proven(Bounded(0.693147180559945, 2e-15), 13).text
'0.6931471805599'
>>> bound_proven(Bounded(0.0, 1e-20), 13) is None  # its sign is not known
True
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from .bounds import ends, proven_text
from .reverse import Contribution
from .rounding import Proven


class Numbers(Sequence):
    """The values (0) or adjoints (1) of a recorded sweep, each proven when read (``None``
    where no adjoint flows)."""

    def __init__(self, trace, which: int):
        self.trace, self.which = trace, which

    @property
    def raw(self):
        return self.trace.balls[self.which]

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self.proven(i + len(self) if i < 0 else i)

    def proven(self, i: int):
        if self.raw[i] is None:  # no adjoint flows there
            return None
        return self.trace.number((self.which, i))


class Contributions(Numbers):
    """The contributions of a recorded sweep, their numbers proven when read; ``raw``, the
    sweep's records (:class:`~gradcli.engine.reverse.Recorded`), for what needs only their
    slots."""

    def __init__(self, trace):
        super().__init__(trace, 2)

    def proven(self, i: int):
        raw, number = self.raw, self.trace.number
        return Contribution(raw.sources[i], raw.targets[i], number((2, i, 2)),
                            number((2, i, 3)), number((2, i, 4)))

    def contribution(self, i: int):
        """Edge ``i``'s contribution alone, proven."""
        return self.trace.number((2, i if i >= 0 else i + len(self), 4))

    def total(self, edges) -> object:
        """The sum of the edges' contributions (an array operation's into one element),
        proven as one number: the balls are added, not the rounded digits."""
        return self.trace.number((3, tuple(edges)))


def at(sweep, where: tuple):
    """The number at ``where`` in a recorded sweep's ``(values, adjoint, records)``: (0, slot) a
    value, (1, slot) an adjoint, (2, i, field) a contribution's upstream (2), local (3) or
    contribution (4), multiplied out of the kept upstream and local as the sweep did; (3, edges)
    the sum of those edges' contributions."""
    if where[0] == 3:
        records, total = sweep[2], None
        whole = _adjoint_of(records, where[1])
        if whole is not None:  # every term of an adjoint: the adjoint itself (a shift's: 0)
            return sweep[1][whole]
        for i in where[1]:
            c = records.contribution(i)
            total = c if total is None else total + c
        return total
    if len(where) == 2:
        return sweep[where[0]][where[1]]
    records, i = sweep[2], where[1]
    return records.contribution(i) if where[2] == 4 else records[i][where[2]]


def _adjoint_of(records, edges) -> int | None:
    """The slot whose adjoint is the sum of exactly these edges (every edge into it, and it is
    no output, which has a seed besides), else None."""
    targets = records.targets
    t = targets[edges[0]] if edges else None
    if t is None or t in records.graph.output_slots or any(targets[e] != t for e in edges):
        return None
    into = bisect_right(records.by_target(), t, key=targets.__getitem__) - bisect_left(
        records.by_target(), t, key=targets.__getitem__)
    return t if into == len(set(edges)) else None


def bound_proven(x, digits: int) -> Proven | None:
    """``x``'s ``digits`` significant digits when both ends of its bound round to them (then
    so does the exact number inside), else None."""
    text = proven_text(x, digits)
    if text is None:
        return None
    lo, hi = ends(x)
    return Proven(lo / 2 + hi / 2, text, digits, exact=text == "0")


class QuickTrace:
    """The trace of an evaluation the quick sweep proved: ``values``, ``adjoint`` and
    ``records`` as a certified sweep gives them, each number proven by the sweep's own bound
    when it can be, and otherwise by the balls: ``balls()`` (a recorded
    :func:`~gradcli.engine.certify.certify`) runs the first time a number needs it, once."""

    def __init__(self, sweep, digits: int, balls):
        self.balls, self.digits = list(sweep), digits  # the Bounded numbers (a ball too)
        self._balls, self._certified = balls, None
        self.proven: dict = {}
        self.values, self.adjoint = Numbers(self, 0), Numbers(self, 1)
        self.records = Contributions(self)

    def number(self, where: tuple):
        """The number at ``where`` (see :func:`at`), proven."""
        got = self.proven.get(where)
        if got is None:
            try:
                got = bound_proven(at(self.balls, where), self.digits)
            except ArithmeticError:  # not a finite bound
                got = None
            if got is None:  # too wide here: the balls prove it (their trace's number)
                if self._certified is None:
                    self._certified = self._balls()
                got = self._certified.records.trace.number(where)
            self.proven[where] = got
        return got
