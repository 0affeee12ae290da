"""Lowering: AST -> a tape of engine nodes in topological order.

The tape is flat arrays indexed by *slot*: constants first, then the inputs (in order of first
appearance in the source), then the operation nodes sorted by depth (longest path from the
inputs) and, within a depth, left to right in the source. That order is the textbooks' numbering
(Griewank & Walther; Baydin et al. 2018, Table 2): node k is ``v{k+1}``. Operations whose
arguments are all constants are folded into constants, so constants never carry an adjoint.

A program's outputs are its bare expression statements, in order (``f1``, ``f2``, …; ``f`` alone
when there is one); a program with none has one output, its last assigned name. ``output`` is the
last output's slot, the one every single-output path reads; :func:`select_outputs` and
:meth:`Graph.only` give the same tape with other outputs (``--of``, one Jacobian row at a time).

Assignments are single-static-assignment: ``c += 1`` makes a new node and rebinds ``c``; each
binding is remembered on its node as a label (``c``, or ``c#2`` when ``c`` is assigned again).
The traversal uses an explicit stack: a 100,000-deep nesting lowers without recursion.
"""

from __future__ import annotations

import math
import os
import re
from array import array
from dataclasses import dataclass, field, replace
from operator import itemgetter

from collections.abc import Iterable, Mapping

from ..errors import (DomainError, GradcliError, InputError, LimitError, MissingInputError,
                      NameLookupError, NumericalError, ParseError, ShapeError, Span, name_list)
from ..gcpause import gc_paused
from ..limits import NODES_VARIABLE, check_nodes, max_nodes
from ..language.ast import ArrayLit, Assign, Binary, Call, Index, Keyword, Num, Program, Unary, Var
from ..language.parser import DEGREE, READ_AS, call_name, check_length, parse, read_name, reduce
from ..language.printer import format_constant
from . import arrays
from .arrays import Tensor
from .primitives import (BINARY_OPERATORS, CALLED, CONSTANTS, OVERLOADS, TABLE, Primitive,
                         constant_words, function_names, lookup)


_NEG = TABLE["neg"]
_MUL = TABLE["mul"]
_BINARY = {op: TABLE[name] for op, name in BINARY_OPERATORS.items()}
_IDENTITY = object()  # what unary plus lowers to: its operand itself
_MATMUL = object()  # a post-visit mark: ``@``, lowered by engine.arrays
_LITERAL = object()  # a post-visit mark: ``[a, b, ...]``
_INDEX = object()  # a post-visit mark: ``x[i, j]``


def exact_numbers(constants, exact, folds, m, number, failed=None) -> list:
    """Constants (their floats, in order) as the numbers they are exactly, in the namespace
    ``m`` the rows compute in (balls, expressions): a literal's typed text (``exact``: index ->
    the text, ``("pi",)`` or ``("e",)``), or the float of a constant that is exactly its float,
    through ``number``; ``pi`` and ``e`` as ``m.pi`` and ``m.e``; a folded constant (``folds``:
    its index, its row's name and its arguments' indices, -1 for none) as its row on its
    arguments', so ``log(2)`` stays ``m.log(2)``. Arguments come before their folds: no
    recursion. Where ``number`` or a row raises ValueError or ZeroDivisionError (the exact
    number is outside a domain the double was inside), ``failed(index)`` gives the error raised
    instead."""
    folded = {slot: (name, a, b) for slot, name, a, b in folds}
    out: list = []
    for slot, value in enumerate(constants):
        fold = folded.get(slot)
        try:
            if fold is not None:
                name, a, b = fold
                f = getattr(m, name)
                out.append(f(out[a]) if b < 0 else f(out[a], out[b]))
                continue
            recipe = exact.get(slot)
            out.append(number(value) if recipe is None else number(recipe)
                       if isinstance(recipe, str) else getattr(m, recipe[0]))
        except (ValueError, ZeroDivisionError):
            if failed is None:
                raise
            raise failed(slot) from None
    return out


@dataclass(slots=True)
class Graph:
    """A lowered program. Slots: ``[0, n_const)`` constants, then inputs, then nodes."""

    source: str
    constants: list[float]
    inputs: list[str]
    ops: list[Primitive]  # node k lives in slot base + k
    # int32 arrays: 4 bytes an argument, where a list held a pointer to an int object of 32
    # made for every slot (at 10^6 terms, 0.3 GB)
    arg0: array
    arg1: array  # -1 for a one-argument primitive
    depth: array  # each node's depth (int32), in tape order
    spans: "Spans"  # spans[k] is node k's (start, end) in the source
    output: int  # the slot of the result (a node, an input or a constant)
    labels: Mapping[int, list[str]] = field(default_factory=dict)  # slot -> assigned names
    input_spans: list[Span] = field(default_factory=list)  # first read of each input
    outputs: list[int] = field(default_factory=list)  # every output's slot, in order
    output_names: list[str] = field(default_factory=list)  # "f", or "f1", "f2", …, or --of's
    names: dict[str, int] = field(default_factory=dict)  # assigned name -> slot of its last value
    # What each constant typed is exactly, where its float is not: constant slot -> a decimal
    # literal's text, ("pi",) or ("e",). A folded constant is its fold (``folds``); any other
    # is exactly its float. Read through exact_constants.
    exact: dict[int, object] = field(default_factory=dict)
    # every constant folded at lowering, in order: (its slot, primitive name, argument slots; -1
    # for none), so a bound on its rounding can be replayed (gradcli.engine.bounds)
    folds: list[tuple[int, str, int, int]] = field(default_factory=list)
    # Array inputs: name -> shape. Their elements are scalar inputs named w[0], X[1,2], in
    # ``inputs`` consecutively, row-major (engine.arrays).
    arrays: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # Array outputs: an output statement's name (f, f2) -> shape; its elements are outputs
    # named f[0], f2[1,0], row-major.
    output_arrays: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # Each array base operation the lowering called (engine.arrays): (kind, shape, the slots of
    # its elements, row-major, span), in the order called
    array_calls: list = field(default_factory=list)
    # beside each call, what it was called on: (its parameter, the slots of each argument's
    # elements, their shapes) (engine.arrays.ScalarTape.operands), for the array trace
    array_operands: list = field(default_factory=list)
    # The max nodes of a shift, logsumexp's and softmax's m in exp(x - m): the result is the same
    # for any m, so their kinks never matter (the certified engine notes none) and their
    # adjoint is exactly 0 (the reverse sweep sets it: engine.partials)
    shifts: frozenset = field(default_factory=frozenset)
    # the source as gradcli read it and the notes on it (read_back's), where compile was asked
    # to keep it: printed from the parse that was lowered, so no caller parses it again
    reading: tuple[str, list] | None = field(default=None, repr=False, compare=False)

    @property
    def output_slots(self) -> list[int]:
        """The outputs' slots (``[output]`` for a graph built without a list of outputs)."""
        return self.outputs or [self.output]

    @property
    def n_outputs(self) -> int:
        return len(self.outputs) or 1

    def only(self, i: int) -> "Graph":
        """The same tape with output ``i`` as its one output (shares every array)."""
        slot = self.output_slots[i]
        names = self.output_names or ["f"]
        return replace(self, output=slot, outputs=[slot], output_names=[names[i]])
    _visit: array | None = field(default=None, init=False, repr=False, compare=False)

    def exact_constants(self, m, number, failed=None) -> list:
        """Every constant as the number it is exactly, in the namespace ``m`` the rows compute
        in (balls, expressions): see :func:`exact_numbers`."""
        return exact_numbers(self.constants, self.exact, self.folds, m, number, failed)

    def constant_text(self, slot: int) -> str:
        """A constant as the source spelled it: a literal's text, ``pi``, or a folded constant
        written out, ``(-e + 0.18281828459045)^(pi - 5441592653589793)``."""
        folded = {s: (name, a, b) for s, name, a, b in self.folds}
        texts: list[str] = []
        for s in range(slot + 1):  # arguments before their folds: no recursion
            fold = folded.get(s)
            if fold is None:
                recipe = self.exact.get(s)
                texts.append(format_constant(self.constants[s]) if recipe is None else
                             recipe if isinstance(recipe, str) else recipe[0])
                continue
            name, a, b = fold
            prim = TABLE[name]
            args = [a] if b < 0 else [a, b]
            texts.append(spell(prim, [f"({texts[t]})" if prim.symbol and t in folded
                                      else texts[t] for t in args]))
        return texts[slot]

    @property
    def n_const(self) -> int:
        return len(self.constants)

    @property
    def base(self) -> int:
        """Slot of the first node (v1)."""
        return len(self.constants) + len(self.inputs)

    @property
    def n_slots(self) -> int:
        return self.base + len(self.ops)

    def kind(self, slot: int) -> str:
        if slot < len(self.constants):
            return "constant"
        return "input" if slot < self.base else "node"

    def node_id(self, slot: int) -> str:
        """The id used in trace tables: an input's name, ``v1``..``vk``, or a constant's value."""
        if slot >= self.base:
            return f"v{slot - self.base + 1}"
        if slot >= len(self.constants):
            return self.inputs[slot - len(self.constants)]
        return format_constant(self.constants[slot])

    def args(self, k: int) -> tuple[int, ...]:
        """The argument slots of node k (slot ``base + k``): one or two, in order."""
        b = self.arg1[k]
        return (self.arg0[k],) if b < 0 else (self.arg0[k], b)

    def active(self, inputs=None) -> bytearray:
        """For each slot, whether it depends on one of the input slots ``inputs`` (default: all
        inputs): the arguments whose partial derivatives a sweep needs. A partial by an
        argument that is not differentiated is never computed (∂(a^b)/∂b with --wrt a)."""
        n_const, base = self.n_const, self.base
        if inputs is None:
            return bytearray(n_const) + b"\x01" * (self.n_slots - n_const)
        flags = bytearray(self.n_slots)
        for s in inputs:
            flags[s] = 1
        if len(set(inputs)) == base - n_const:  # every input: every node depends on one
            flags[base:] = b"\x01" * len(self.ops)
            return flags
        arg0, arg1 = self.arg0, self.arg1
        for k in range(len(self.ops)):  # tape order: arguments before their users
            b = arg1[k]
            if flags[arg0[k]] or (b >= 0 and flags[b]):
                flags[base + k] = 1
        return flags

    def live_nodes(self) -> list[bool]:
        """For each node, whether an output depends on it (dead statements are skipped in reverse)."""
        live = _live(self.arg0, self.arg1, self.output_slots, self.base, len(self.ops))
        return [True] * len(live) if live.count(0) == 0 else [flag == 1 for flag in live]

    def visit_order(self) -> array:
        """Slots of the nodes the output depends on, deepest level first, left to right within one:
        the reverse sweep's order (computed once per graph), an int32 array as ``arg0``."""
        if self._visit is None:
            live = _live(self.arg0, self.arg1, self.output_slots, self.base, len(self.ops))
            self._visit = _deepest_first(self.depth, live, self.base)
        return self._visit


def _live(arg0, arg1, outputs: list, base: int, n: int) -> bytearray:
    """For each of the ``n`` nodes, 1 where an output depends on it: the outputs, then every
    argument of a live node, from the last node down (a node's users come after it on the tape)."""
    live = bytearray(n)
    for out in outputs:
        if out >= base:
            live[out - base] = 1
    for k in range(n - 1, -1, -1):
        if live[k]:
            a, b = arg0[k] - base, arg1[k] - base
            if a >= 0:
                live[a] = 1
            if b >= 0:
                live[b] = 1
    return live


def _deepest_first(depth, live, base: int) -> array:
    """The slots of the ``live`` nodes, deepest first, in tape order within a depth: a stable
    counting sort by depth (linear in the nodes, where a comparison sort is n log n). An int32
    array, as the argument columns: a list would hold an int object for each slot."""
    n = len(live)
    top = 0
    for k in range(n):
        if depth[k] > top:
            top = depth[k]
    count = array("q", [0]) * (top + 1)  # live nodes per depth
    for k in range(n):
        if live[k]:
            d = depth[k]
            count[d] += 1
    start = array("q", [0]) * (top + 1)  # where each depth's run begins in the order
    at = 0
    for d in range(top, -1, -1):
        start[d] = at
        at += count[d]
    order = array("i", bytes(4 * at))
    put = order  # (compiled: a typed view of it)
    for k in range(n):
        if live[k]:
            d = depth[k]
            put[start[d]] = base + k
            start[d] += 1
    return order


def sweep_edges(slots, active, arg0, arg1, base: int, n_slots: int) -> tuple:
    """The edges of a reverse sweep visiting ``slots`` (int32, in that order) into the ``active``
    slots: each edge's source slot, target slot and argument (0 or 1), and the edges'
    positions sorted stably by target (a counting sort), as int32 arrays."""
    n = 0
    for j in range(len(slots)):
        s = slots[j]
        k = s - base
        if active[arg0[k]]:
            n += 1
        b = arg1[k]
        if b >= 0 and active[b]:
            n += 1
    sources, targets, which = array("i", bytes(4 * n)), array("i", bytes(4 * n)), array(
        "i", bytes(4 * n))
    src, tgt, arg = sources, targets, which  # (typed views, compiled)
    i = 0
    for j in range(len(slots)):
        s = slots[j]
        k = s - base
        a = arg0[k]
        if active[a]:
            src[i] = s
            tgt[i] = a
            i += 1
        b = arg1[k]
        if b >= 0 and active[b]:
            src[i] = s
            tgt[i] = b
            arg[i] = 1
            i += 1
    count = array("i", bytes(4 * (n_slots + 1)))  # then where each target's run begins
    for i in range(n):
        count[tgt[i] + 1] += 1
    for t in range(n_slots):
        count[t + 1] += count[t]
    by_target = array("i", bytes(4 * n))
    order = by_target
    for i in range(n):
        t = tgt[i]
        order[count[t]] = i
        count[t] += 1
    return sources, targets, which, by_target


class Spans:
    """The source span of each node, ``spans[k] == (start, end)``, stored as two arrays of
    machine integers. A tuple per node would be a container the garbage collector has to walk
    once the graph is built: half a second for a 100,000-term sum."""

    __slots__ = ("starts", "ends")

    def __init__(self, spans=()):
        self.starts = array("q", map(itemgetter(0), spans))
        self.ends = array("q", map(itemgetter(1), spans))

    @classmethod
    def from_columns(cls, starts: Iterable[int], ends: Iterable[int]) -> "Spans":
        """The spans whose starts and ends are ``starts`` and ``ends``."""
        spans = cls()
        spans.starts.extend(starts)
        spans.ends.extend(ends)
        return spans

    def __getitem__(self, k: int) -> Span:
        return self.starts[k], self.ends[k]

    def __len__(self) -> int:
        return len(self.starts)

    def __eq__(self, other) -> bool:
        if not isinstance(other, (Spans, list, tuple)):
            return NotImplemented
        return list(self) == list(other)

    def __repr__(self) -> str:
        return f"Spans({list(self)!r})"


class Labels(Mapping):
    """A graph's labels (slot -> the names assigned to it, ``name`` or ``name#version`` for a
    name assigned more than once), made on first read: an evaluation reads none (a trace, the
    graph's picture and the adjoint program do), and a program of 10^5 assignments spent a fifth
    of its compile making them."""

    __slots__ = ("_slots", "_bindings", "_versions", "_made")

    def __init__(self, slots: list[int], bindings: list[tuple[int, str, int]],
                 versions: dict[str, int]):
        # bindings[i] (id, name, version) binds slots[i]; versions: each name's last version
        self._slots, self._bindings, self._versions, self._made = slots, bindings, versions, None

    def _labels(self) -> dict[int, list[str]]:
        made = self._made
        if made is None:
            made, versions = {}, self._versions
            for slot, (_, name, version) in zip(self._slots, self._bindings):
                made.setdefault(slot, []).append(
                    f"{name}#{version}" if versions[name] > 1 else name)
            self._made, self._slots, self._bindings, self._versions = made, None, None, None
        return made

    def __getitem__(self, slot: int) -> list[str]:
        return self._labels()[slot]

    def __iter__(self):
        return iter(self._labels())

    def __len__(self) -> int:
        return len(self._labels())

    def __repr__(self) -> str:
        return repr(self._labels())


def _close_functions(name: str, n_args: int) -> list[str]:
    """The functions a typo away from ``name`` (:func:`is_close`) that take ``n_args``
    arguments, for ``did you mean``: ``dot(w, x)`` suggests no ``cot`` (it takes one),
    ``softmax(a)`` no ``max``."""
    close = [f for f in function_names()
             if is_close(name, f) and (p := lookup(f, n_args)) is not None and p.arity == n_args]
    close += [f for f, function in arrays.FUNCTIONS.items()
              if function.least <= n_args <= function.most + len(function.statics)
              and is_close(name, f)]
    # the nearest first, then the one that shares the longest start with the name (sinn: sin)
    return sorted(close, key=lambda f: (edit_distance(name, f), -len(os.path.commonprefix(
        [name, f])), f))


def is_close(typed: str, name: str) -> bool:
    """Whether ``typed`` is a typo of ``name``: an edit distance (a letter added, dropped,
    changed, or two swapped) of 1, or 2 where both have six letters or more."""
    if typed == name or max(len(typed), len(name)) > _TYPO_LENGTH:
        return False  # a long name is no typo, and its distance would take quadratic time
    return edit_distance(typed, name) <= (2 if min(len(typed), len(name)) >= 6 else 1)


_TYPO_LENGTH = 64  # the longest name checked for a typo or split into names


def edit_distance(a: str, b: str) -> int:
    """The optimal string alignment distance: insertions, deletions, substitutions and swaps of
    two neighbouring letters, each counting 1."""
    if abs(len(a) - len(b)) > 2:
        return 3  # more than any typo is_close accepts
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


@gc_paused()
def lower(program: Program, source: str = "", shapes: Mapping[str, tuple] | None = None) -> Graph:
    """Lower a parsed program to a :class:`Graph` (a tape in textbook order). ``shapes`` gives
    the array inputs' shapes (name -> shape; the others are scalars)."""
    builder = _Builder(source, shapes)
    return builder.finish(source, _lowered(builder, program))


def _lowered(builder: _Builder, program: Program) -> list:
    """The values of ``program``'s outputs, its statements lowered by ``builder`` (for
    :meth:`_Builder.finish`)."""
    result = -1
    bare: list = []  # the bare expression statements: the outputs
    try:
        for stmt in program.statements:
            result = builder.statement(stmt)
            if type(stmt) is not Assign:
                bare.append(result)
    except ShapeError as exc:
        # the inputs read up to the mistake, with where: an input given no value at all reads
        # as a scalar, and "no value for X" is the better message (gradcli.api.compile_at)
        exc.inputs_read = list(zip(builder.input_ids, builder.input_spans))
        raise
    return bare or [result]


def _has_tensor(values) -> bool:
    """Whether an array value is among ``values`` (a function: a generator inside a method
    Cython compiles is a closure, which it does not compile)."""
    for value in values:
        if value.__class__ is Tensor:
            return True
    return False


class _Builder:
    """The tape under construction. Every constant, input and operation gets a temporary id in
    creation order (left to right in the source); :meth:`finish` gives the final slots.

    Per id, columns: ``depth`` (-1 for a constant, 0 for an input, 1 + the deepest argument for
    an operation), ``op``, the arguments ``a0`` and ``a1`` (-1: none) and the source span
    (``starts``, ``ends``).
    """

    __slots__ = ("depth", "op", "a0", "a1", "starts", "ends", "const_ids", "const_values",
                 "input_ids", "input_spans", "env", "versions", "bindings", "limit", "source",
                 "recipes", "folds", "shapes", "arrays", "tape", "columns", "count", "room",
                 "literals", "calls")

    def __init__(self, source: str = "", shapes: Mapping[str, tuple] | None = None,
                 tape=None):
        self.source = source
        # the array inputs' shapes, and each one's value once read (a Tensor of element inputs)
        self.shapes = {name: tuple(shape) for name, shape in (shapes or {}).items() if shape}
        self.arrays: dict[str, object] = {}
        # the realization of the array base operations (engine.arrays): the scalar tape's, or
        # array nodes (engine.arraynodes)
        self.tape = (tape or arrays.ScalarTape)(self)
        self.recipes: dict[int, object] = {}  # constant id -> what it is exactly (Graph.exact)
        self.op: list[Primitive | None] = []
        # The integer columns are arrays of machine integers (8 bytes a node, where a list holds
        # a pointer to an int object: a third of the peak at 10^6), with room made ahead
        # (:meth:`_grow`) and written in place: compiled, through typed views (graph.pxd), so
        # a node is five C stores, not five appends that each parse their argument.
        self.columns = tuple(array("q") for _ in range(5))
        self.count = 0  # the ids made so far; the columns have room for self.room
        self.room = 0
        self._grow()
        self.const_ids: dict = {}  # value (signed zeros apart) -> id
        self.const_values: dict[int, float] = {}  # id -> value
        self.literals: dict[str, tuple] = {}  # a literal's text -> its float and its constant
        self.calls: dict[tuple, Primitive] = {}  # (name, number of arguments) -> the row called
        self.folds: list[tuple[int, str, int, int]] = []  # (result id, name, argument ids)
        self.input_ids: dict[str, int] = {}  # in order of first read
        self.input_spans: list[Span] = []
        self.env: dict[str, int] = {}  # assigned name -> id of its current value
        self.versions: dict[str, int] = {}  # assigned name -> how many times assigned
        self.bindings: list[tuple[int, str, int]] = []  # (id, name, version)
        # Checked as each node is made: memory stops growing at the limit, not after the graph.
        self.limit = max_nodes()

    def _grow(self) -> None:
        """Room in the integer columns for an eighth more ids (at least 256)."""
        room = self.room + max(256, self.room >> 3)
        # a compiled view holds its array's buffer, and an array with a view cannot resize
        self.depth = self.a0 = self.a1 = self.starts = self.ends = None
        zeros = bytes(8 * (room - self.room))
        for column in self.columns:
            column.frombytes(zeros)
        self.depth, self.a0, self.a1, self.starts, self.ends = self.columns
        self.room = room

    def _new(self, depth: int, op, a: int, b: int, span: Span) -> int:
        tid = self.count
        if tid == self.room:
            self._grow()
        self.depth[tid] = depth
        self.op.append(op)
        self.a0[tid] = a
        self.a1[tid] = b
        self.starts[tid] = span[0]
        self.ends[tid] = span[1]
        self.count = tid + 1
        return tid

    def constant(self, v: float, recipe=None, key=None) -> int:
        """The id of the constant ``v`` (one per value; -0.0 is not 0.0), or with a ``recipe``
        (what it is exactly, :attr:`Graph.exact`) one per recipe, or per ``key`` when given (a
        fold's: its row and its arguments' ids, which stand for what they are exactly)."""
        if key is None:
            key = (((v, math.copysign(1.0, v)) if v == 0 else v) if recipe is None
                   else (v, recipe))
        tid = self.const_ids.get(key)
        if tid is None:
            tid = self.const_ids[key] = self._new(-1, None, -1, -1, (0, 0))
            self.const_values[tid] = v
            if recipe is not None:
                self.recipes[tid] = recipe
        return tid

    def number(self, node: Num) -> int:
        """The constant of a literal (see :meth:`literal`)."""
        v = node.value
        start, end = node.span
        text = self.source[start:end]
        known = self.literals.get(text)  # a program writes the same few literals many times
        if known is not None and known[0] == v and v != 0:  # (a zero's sign is not in ==)
            return known[1]
        if not _spells(text, v):  # a node made without its source
            return self.constant(v)
        tid = self.literal(text, v)
        self.literals[text] = (v, tid)
        return tid

    def literal(self, text: str, v: float) -> int:
        """The constant of the literal ``text`` (whose float is ``v``): a decimal such as 0.1
        keeps its text, since its float is not exactly what was typed (an integer below 2^53
        is)."""
        if text.isdigit() and v < 9007199254740992.0:
            return self.constant(v)
        return self.constant(v, text)

    def read(self, name: str, span: Span) -> int:
        """The id a name reads: its assigned value, a named constant (pi, e) or an input."""
        tid = self.env.get(name)
        if tid is not None:
            return tid
        if name in CONSTANTS:
            return self.constant(CONSTANTS[name], (name,))
        tid = self.input_ids.get(name)
        if tid is None:
            if lookup(name) is not None or name in arrays.FUNCTIONS:
                raise NameLookupError(f"{name} is a function, not a variable", span,
                                      hint=f"call it: {name}(...)")
            if name in self.shapes or self.tape.every_input_array:
                return self.array_input(name, span)
            tid = self.input_ids[name] = self._new(0, None, -1, -1, span)
            self.input_spans.append(span)
        return tid

    def array_input(self, name: str, span: Span):
        """The value of the array input ``name`` (the realization's), made on its first read."""
        value = self.arrays.get(name)
        if value is None:
            value = self.arrays[name] = self.tape.input(name, self.shapes.get(name, ()), span)
        return value

    def emit(self, prim: Primitive, a: int, b: int, span: Span) -> int:
        """The operation ``prim(a, b)`` (``b`` is -1 for one argument), or a folded constant."""
        return self._node(prim, a, b, span[0], span[1])

    def _node(self, prim: Primitive, a: int, b: int, start: int, end: int) -> int:
        """:meth:`emit` with the span as its two ends (compiled: C integers in and out, no tuple
        and no int object made per operation)."""
        da = self.depth[a]
        db = self.depth[b] if b >= 0 else -1
        if da < 0 and db < 0:  # every argument is a constant: fold
            values = self.const_values
            args = [values[a]] if b < 0 else [values[a], values[b]]
            # one constant per row and arguments; what it is exactly is the fold (Graph.folds)
            tid = self.constant(_fold(prim, args, (start, end)), None, (prim.name, a, b))
            self.folds.append((tid, prim.name, a, b))
            return tid
        tid = self.count
        if tid >= self.limit:
            limit = self.limit
            raise LimitError(f"the expression's graph has more than {limit:,} nodes, the most "
                             f"gradcli builds ({NODES_VARIABLE})",
                             (start, end), hint=f"raise the limit for this run: {NODES_VARIABLE}="
                                                f"{limit * 4} gradcli ... (docs/limits.md)")
        if tid == self.room:  # _new's stores, inline: once per operation
            self._grow()
        self.depth[tid] = 1 + (da if da > db else db)
        self.op.append(prim)
        self.a0[tid] = a
        self.a1[tid] = b
        self.starts[tid] = start
        self.ends[tid] = end
        self.count = tid + 1
        return tid

    def expression(self, expr) -> int:
        """Lower one expression; its id. Post-order with an explicit stack: (node, None) asks
        to visit a node, (node, prim) to emit it once its arguments are on ``results``.
        Visiting order is creation order, which fixes the slots; a call's name is checked
        before its arguments are lowered."""
        results: list[int] = []
        result, pop_result = results.append, results.pop
        stack = [(expr, None)]
        pop, push = stack.pop, stack.append
        env_get, input_get, calls = self.env.get, self.input_ids.get, self.calls
        while stack:
            node, prim = pop()
            if prim is not None:
                if prim.__class__ is Primitive:
                    b = pop_result() if prim.arity == 2 else -1
                    a = pop_result()
                    if a.__class__ is int and b.__class__ is int:
                        result(self.emit(prim, a, b, node.span))
                    else:  # an array operand: element by element
                        result(self.tape.elementwise(prim, a, b if prim.arity == 2 else None,
                                                     node.span, _operation_text(node, prim)))
                elif prim is not _IDENTITY:  # unary plus makes no node
                    result(self.array_operation(node, prim, results))
                continue
            t = type(node)
            # each kind's node as a variable of its own (graph.pxd types them: compiled, its
            # fields are read directly)
            while t is Binary:  # down the left operands at once, each operation left waiting
                binary = node
                push((binary, _BINARY.get(binary.op, _MATMUL)))
                push((binary.right, None))
                node = binary.left
                t = type(node)
            if t is Var:
                var = node
                name = var.name
                tid = env_get(name)
                if tid is None:
                    tid = input_get(name)  # never pi or e: those are read as constants
                result(tid if tid is not None else self.read(name, var.span))
            elif t is Num:
                result(self.number(node))
            elif t is Call:
                call = node
                args = call.args
                if call.name in arrays.FUNCTIONS:
                    args, options = arrays.call_arguments(call.name, args, call.span)
                    push((call, (arrays.FUNCTIONS[call.name], options, len(args))))
                else:  # a program calls the same few functions many times
                    key = (call.name, len(args))
                    prim = calls.get(key)
                    if prim is None or Keyword in map(type, args):  # abs(abs(x=1)): each time
                        prim = calls[key] = _check_call(call)
                    push((call, prim))
                for arg in reversed(args):
                    push((arg, None))
            elif t is ArrayLit:
                push((node, _LITERAL))
                for item in reversed(node.items):
                    push((item, None))
            elif t is Index:
                push((node, _INDEX)); push((node.target, None))
            elif t is Unary:
                push((node, _NEG if node.op == "-" else _IDENTITY)); push((node.operand, None))
            else:
                raise TypeError(f"not an expression: {node!r}")
        return results[0]

    def array_operation(self, node, mark, results: list):
        """An array operation whose operands are the last values on ``results`` (taken off):
        ``@``, a literal, an index, or a call of an array function (``mark`` its lowering)."""
        span, tape = node.span, self.tape
        if mark is _MATMUL:
            b = results.pop()
            return arrays.matmul(tape, results.pop(), b, span)
        if mark is _INDEX:
            target = node.target
            what = target.name if type(target) is Var else "the value"
            return arrays.index(tape, results.pop(), node.indices, span, what)
        n = len(node.items) if mark is _LITERAL else mark[2]
        args = results[len(results) - n:]
        del results[len(results) - n:]
        if mark is _LITERAL:
            return arrays.literal(tape, args, [item.span for item in node.items], span)
        function, options = mark[0], mark[1]
        return function.lower(tape, args, options, span)

    def statement(self, stmt) -> int:
        """Lower one statement (an expression, or an assignment that binds a name); its id."""
        if type(stmt) is not Assign:
            return self.expression(stmt)
        name = stmt.name
        name_span = (stmt.span[0], stmt.span[0] + len(name))
        self.check_assign(name, stmt.op, name_span)
        value_expr = stmt.value
        if stmt.op != "=":
            value_expr = Binary(stmt.op[0], Var(name, name_span), value_expr, stmt.span)
        return self.bind(name, stmt.op, name_span, self.expression(value_expr))

    def check_assign(self, name: str, op: str, name_span: Span) -> None:
        """Whether ``name op ...`` may be lowered: an update needs a value, a function's name
        cannot be assigned."""
        if op != "=" and name not in self.env:
            raise NameLookupError(f"{name} {op} ... updates {name}, which has no value yet",
                                  name_span, hint=f"assign it first: {name} = ...")
        if lookup(name) is not None or name in arrays.FUNCTIONS:
            raise NameLookupError(f"{name} is a function and cannot be assigned", name_span)

    def assign(self, name: str, op: str, name_span: Span, value: int, end: int) -> int:
        """``name op value`` (``value`` already lowered; the statement ends at ``end``): the id
        ``name`` is bound to."""
        self.check_assign(name, op, name_span)
        if op != "=":
            value = self.emit(_BINARY[op[0]], self.env[name], value, (name_span[0], end))
        return self.bind(name, op, name_span, value)

    def bind(self, name: str, op: str, name_span: Span, result: int) -> int:
        """Bind ``name`` to the id ``result`` (the value of ``name op ...``, lowered); the id."""
        if name in self.input_ids or name in self.arrays:
            raise NameLookupError(
                f"{name} is an input (it is read before any assignment), so it cannot be assigned",
                name_span, hint=f"assign to a new name, e.g. {name}2 {op} ...")
        self.env[name] = result
        version = self.versions[name] = self.versions.get(name, 0) + 1
        if result.__class__ is not int and result.__class__ is not Tensor:
            return result  # an array node: the realization names it
        if result.__class__ is Tensor:  # each element is labelled z[0], z[1], ...
            for tid, element in zip(result.ids, arrays.element_names(name, result.shape)):
                self.versions[element] = version
                self.bindings.append((tid, element, version))
            return result
        self.bindings.append((result, name, version))
        return result

    def finish(self, source: str, outputs: list) -> Graph:
        """The graph: final slots (constants, inputs, nodes by depth), arguments remapped.

        ``outputs`` are the values of the program's outputs, in order (its bare expression
        statements, or else its last value): ids, or Tensors whose elements are outputs each.
        """
        names = output_names(len(outputs))
        output_arrays: dict[str, tuple] = {}
        if _has_tensor(outputs):
            flat, flat_names = [], []
            for value, name in zip(outputs, names):
                if value.__class__ is Tensor:
                    output_arrays[name] = value.shape
                    flat += value.ids
                    flat_names += arrays.element_names(name, value.shape)
                else:
                    flat.append(value)
                    flat_names.append(name)
            outputs, names = flat, flat_names
        n = self.count
        constants = list(self.const_values.values())
        base = len(constants) + len(self.input_ids)
        order, slot = _by_depth(self.depth, n)
        remap = slot.__getitem__
        ops, depths, arg0, arg1, starts, ends = _permuted(order, slot, base, self.op, self.depth,
                                                          self.a0, self.a1, self.starts, self.ends)
        spans = Spans()
        spans.starts, spans.ends = starts, ends
        exact = {slot[tid]: recipe for tid, recipe in self.recipes.items()}
        bindings = self.bindings  # their slots now (in C), their labels when read
        labels = Labels(list(map(slot.__getitem__, map(itemgetter(0), bindings))), bindings,
                        self.versions) if bindings else {}
        graph = Graph(
            source=source,
            constants=constants,
            inputs=list(self.input_ids),
            ops=ops,
            arg0=arg0,
            arg1=arg1,
            depth=depths,
            spans=spans,
            output=slot[outputs[-1]],
            labels=labels,
            input_spans=self.input_spans,
            outputs=[slot[t] for t in outputs],
            output_names=names,
            names=self.named_slots(slot),
            exact=exact,
            folds=[(slot[t], name, slot[a], slot[b] if b >= 0 else -1)
                   for t, name, a, b in self.folds],
            shifts=frozenset([slot[t] for t in getattr(self.tape, "shifts", ())]),
            arrays={name: tensor.shape for name, tensor in self.arrays.items()},
            output_arrays=output_arrays,
            array_calls=[(kind, shape, list(map(remap, ids)), where)
                         for kind, shape, ids, where in self.tape.calls],
            array_operands=[(parameter, [list(map(remap, ids)) for ids in args], shapes)
                            for parameter, args, shapes in getattr(self.tape, "operands", ())],
        )
        # The tape refers back to the builder: without that cycle, reference counting frees
        # the builder's columns once the caller drops it, where `gradcli eval` pauses the
        # cyclic collector and they stayed for the whole run (0.2 GB at 10^6 terms).
        self.tape = None
        return graph

    def named_slots(self, slot: list[int]) -> dict[str, int]:
        """Each assigned name's slot (an array's elements by their names, z[0], z[1], ...)."""
        env = self.env
        if not _has_tensor(env.values()):
            return dict(zip(env, map(slot.__getitem__, env.values())))
        named = {}
        for name, value in env.items():
            if value.__class__ is Tensor:
                for tid, element in zip(value.ids, arrays.element_names(name, value.shape)):
                    named[element] = slot[tid]
            else:
                named[name] = slot[value]
        return named


def _by_depth(depth, n: int) -> tuple:
    """The ids ``[0, n)`` in slot order, and each id's slot: a stable counting sort by
    ``depth`` (linear), so the constants (depth -1) come first, then the inputs (0), then the
    operations by depth, each in creation (left-to-right) order. The slots have one more entry,
    -1 at the end: ``slot[-1]`` is -1, so an absent second argument stays absent."""
    top = 0
    for k in range(n):
        if depth[k] > top:
            top = depth[k]
    start = array("q", [0]) * (top + 3)  # start[d + 1]: where depth d's run begins
    for k in range(n):
        start[depth[k] + 2] += 1
    for d in range(2, top + 3):
        start[d] += start[d - 1]
    order, slot = array("q", [0]) * n, array("q", [0]) * (n + 1)
    put, where = order, slot  # compiled: typed views of the two (graph.pxd)
    where[n] = -1
    for k in range(n):
        d = depth[k] + 1
        at = start[d]
        put[at] = k
        where[k] = at
        start[d] = at + 1
    return order, slot


def _permuted(order, slot, base: int, op: list, depth, a0, a1, starts, ends) -> tuple:
    """The nodes' columns in slot order, each from the id ``order[base + k]``: the operations
    (a list), the depths, the arguments (their ids made their slots) as int32 arrays, the
    spans' starts and ends. One pass, each column's array made at its size and filled."""
    m = len(order) - base
    ops = [None] * m
    depths, arg0, arg1 = array("i", [0]) * m, array("i", [0]) * m, array("i", [0]) * m
    firsts, lasts = array("q", [0]) * m, array("q", [0]) * m
    # compiled: typed views of the five arrays
    put_depth, put_a0, put_a1, put_start, put_end = depths, arg0, arg1, firsts, lasts
    for k in range(m):
        tid = order[base + k]
        ops[k] = op[tid]
        put_depth[k] = depth[tid]
        put_a0[k] = slot[a0[tid]]
        put_a1[k] = slot[a1[tid]]  # slot[-1] is -1: no second argument
        put_start[k] = starts[tid]
        put_end[k] = ends[tid]
    return ops, depths, arg0, arg1, firsts, lasts


def _spells(text: str, v: float) -> bool:
    """Whether ``text`` is a literal whose float is ``v`` (a node made without source has none)."""
    try:
        return float(text) == v
    except ValueError:
        return False


def _operation_text(node, prim: Primitive) -> str:
    """How an elementwise operation is named in a shape error: ``'+'``, ``atan2``."""
    return f"'{node.op}'" if type(node) is Binary else CALLED.get(prim.name, prim.name)


def _check_call(node: Call) -> Primitive:
    """The primitive ``node`` calls, after checking its name and its number of arguments."""
    prim = lookup(node.name, len(node.args))
    if prim is None:
        close = _close_functions(node.name, len(node.args))[:3]
        raise NameLookupError(f"unknown function {node.name}", node.name_span,
                              hint=f"did you mean {' or '.join(close)}?" if close
                              else "`gradcli functions` lists them all",
                              fix=((node.name_span, close[0]),) if close else ())
    for arg in node.args:  # abs(x=2.3): an option is an array function's (sum(X, axis=0))
        if type(arg) is Keyword:
            raise NameLookupError(f"{node.name} has no option {arg.name}=", arg.span,
                                  hint="only array functions take options: sum(X, axis=0)")
    if len(node.args) != prim.arity:
        counts = sorted({prim.arity} | {n for (name, n) in OVERLOADS if name == node.name})
        want = " or ".join(map(str, counts)) + (" argument" if counts == [1] else " arguments")
        forms = [f"{node.name}({', '.join('ab'[:n])})" for n in counts]
        raise NameLookupError(f"{node.name} takes {want}, got {len(node.args)}", node.span,
                              hint=f"call it as {' or '.join(forms)}" if len(counts) > 1 else None)
    return prim


def _fold(prim: Primitive, args: list[float], span: Span) -> float:
    """Evaluate a primitive on constants at lowering time, with the same errors as the sweep."""
    try:
        result = prim.primal(*args)
    except (ValueError, ZeroDivisionError):
        raise domain_error(prim, args, span) from None
    except OverflowError:
        raise overflow_error(prim, args, span) from None
    if not math.isfinite(result):
        raise overflow_error(prim, args, span)
    return result


def spell(prim: Primitive, args: list[str]) -> str:
    """A primitive applied to arguments already written out: ``a + b``, ``-a``, ``f(a, b)``."""
    if prim.symbol and len(args) == 2:
        return f"{args[0]} {prim.symbol} {args[1]}"
    if prim.symbol:
        return f"{prim.symbol}{args[0]}"
    return f"{CALLED.get(prim.name, prim.name)}({', '.join(args)})"


def describe_call(prim: Primitive, args: list[float]) -> str:
    """``log(-1)`` or ``2 / 0``: a primitive applied to values, for messages."""
    return spell(prim, [format_constant(float(a)) for a in args])


def describe_node(graph: Graph, slot: int, values) -> str:
    """Node ``slot``'s call on its arguments' ``values`` (:func:`describe_call`), followed by
    ``in float64`` where an argument is another node's: its double, not a proven number
    (``abs(5.551115123125783e-17) in float64`` for abs(x - 0.1 - 0.2) at x = 0.3, exactly 0).
    Inputs and constants are the numbers given."""
    k = slot - graph.base
    args = graph.args(k)
    text = describe_call(graph.ops[k], [values[a] for a in args])
    return text + " in float64" if any(a >= graph.base for a in args) else text


def expression(graph: Graph, slot: int, node_id=None) -> str:
    """A node's operation written with its parents' ids (``node_id``'s, by default the
    graph's): ``log(x)``, ``v1 + v2``, ``-v3``."""
    k = slot - graph.base
    return spell(graph.ops[k], list(map(node_id or graph.node_id, graph.args(k))))


def domain_error(prim: Primitive, args: list[float], span: Span,
                 node: str | None = None, shown: str | None = None) -> DomainError:
    """``log(-1)`` is outside the domain of log; with ``node``, the message starts ``v3: ``;
    ``shown``: the call as the message writes it (default :func:`describe_call`'s; a node's
    doubles are marked: :func:`describe_node`)."""
    at = f"{node}: " if node else ""
    values = tuple(float(a) for a in args)
    call = describe_call(prim, args) if shown is None else shown
    if prim.name == "div":
        return DomainError(f"{at}division by zero: {call}", span,
                           label="the divisor is 0", node=node, values=values)
    hint = None
    if prim.name == "pow" and values[0] < 0 and math.isfinite(values[1]):
        # a root of a negative number: x^(1/3) is not real for x < 0 in pow, cbrt is
        hint = ("the real cube root of a negative number is cbrt(x)" if values[1] == 1 / 3 else
                "a negative base needs an integer exponent; cbrt(x) is the real cube root")
    return DomainError(f"{at}{call} is outside the domain of {prim.name} "
                       f"({prim.domain})", span, label=f"{prim.name} is undefined here",
                       node=node, values=values, hint=hint)


def overflow_error(prim: Primitive, args: list[float], span: Span,
                   node: str | None = None, shown: str | None = None) -> NumericalError:
    """``exp(1000)`` overflows (``shown``: as for :func:`domain_error`)."""
    at = f"{node}: " if node else ""
    call = describe_call(prim, args) if shown is None else shown
    return NumericalError(f"{at}{call} overflows: the result is too large "
                          "for a 64-bit float", span, node=node,
                          values=tuple(float(a) for a in args))


def output_names(m: int) -> list[str]:
    """``["f"]`` for one output, ``["f1", "f2", …]`` for several."""
    return ["f"] if m == 1 else [f"f{i}" for i in range(1, m + 1)]


def select_outputs(graph: Graph, of: Iterable[str] | None) -> Graph:
    """The same tape with the outputs named in ``of`` (None: all of them), in that order.

    A name is an assigned name (its last value) or an output's name (``f1``, ``f2``; ``f`` when
    there is one); an assigned name wins, as the program itself reads it that way.
    """
    if of is None:
        return graph
    of = list(of)
    own = dict(zip(graph.output_names or ["f"], graph.output_slots))
    unknown = [name for name in of if name not in graph.names and name not in own]
    if unknown:
        offered = list(own) + [n for n in graph.names if n not in own]
        raise InputError(f"names {', '.join(unknown)}, which is neither an output nor an "
                         "assigned name", option="of", names=tuple(unknown),
                         hint=f"choose from: {', '.join(offered)}")
    twice = [name for name in dict.fromkeys(of) if of.count(name) > 1]
    if twice:
        raise InputError(f"gives {', '.join(twice)} twice", option="of", names=tuple(twice))
    slots = [graph.names[name] if name in graph.names else own[name] for name in of]
    return replace(graph, output=slots[-1], outputs=slots,
                   output_names=of)


class _GiveUp(Exception):
    """A mistake in the source, which parse and lower are left to describe."""


class _Value:
    """A value the parser's stack holds for :class:`_Reductions`: an expression's id and its
    span in the source. Compiled, three C integers (graph.pxd): no tuple and no int objects
    made per reduction."""

    __slots__ = ("id", "start", "end")


def _value(tid: int, start: int, end: int) -> _Value:
    """The :class:`_Value` of ``tid`` spanning ``[start, end)``."""
    value = _Value.__new__(_Value)
    value.id = tid
    value.start = start
    value.end = end
    return value


# the rows of the binary operators as the tokens spell them (``**`` and the typeset signs
# too); ``@`` is not among them: arrays are lowered from the AST
_OPERATORS = {**_BINARY, **{text: _BINARY[op] for text, op in READ_AS.items()}}


class _Reductions:
    """The parser's callbacks (named as ``language.parser._ToAst``'s) making the tape's nodes as
    the driver reduces the rules, with :class:`_Builder`'s methods, in the order :func:`lower`
    makes them: LR reductions come in post-order (left operand, right operand, then the
    operation). An expression's value is a :class:`_Value`; an assignment's is its id alone,
    an int.

    Only valid programs go this way: at the first thing wrong it gives up (:class:`_GiveUp`, or
    the builder's error), and :func:`compile` runs parse and lower, whose messages, spans and
    order of checks are the reference."""

    __slots__ = ("builder", "numbers", "inputs", "operators", "unary_calls", "binary_calls")

    def __init__(self, builder: _Builder):
        self.builder = builder
        self.numbers: dict[str, int] = {}  # a literal's text -> its constant
        # a name's text -> its input's id: an input is never assigned (bind refuses it), so
        # its text reads the same id every time, one lookup
        self.inputs: dict[str, int] = {}
        self.operators: dict[str, Primitive] = _OPERATORS
        # a function's text (``sin(``) -> its row, called with one and with two arguments
        self.unary_calls: dict[str, Primitive] = {}
        self.binary_calls: dict[str, Primitive] = {}

    def num(self, children):
        tok = children[0]
        text = tok.value
        tid = self.numbers.get(text)
        if tid is None:  # a literal's first time: one constant per spelling
            v = float(text)
            if v == _INF:
                raise _GiveUp  # the parser says it is too large
            tid = self.numbers[text] = self.builder.literal(text, v)
        return _value(tid, tok.start_pos, tok.end_pos)

    def var(self, children):
        tok = children[0]
        tid = self.inputs.get(tok.value)
        if tid is None:
            tid = self.read(tok)
        return _value(tid, tok.start_pos, tok.end_pos)

    def read(self, tok):
        """The id the name ``tok`` reads (:meth:`var`'s first read of an input, or any read of
        an assigned name or a constant)."""
        builder = self.builder
        name = tok.value
        name = read_name(name, tok.start_pos)
        tid = builder.env.get(name)
        if tid is not None:
            return tid
        tid = builder.input_ids.get(name)
        if tid is None:
            if name == DEGREE:
                raise _GiveUp  # pi/180, which parse and lower read
            tid = builder.read(name, (tok.start_pos, tok.end_pos))
            if builder.input_ids.get(name) != tid:
                return tid  # a named constant (pi, e)
        self.inputs[tok.value] = tid
        return tid

    def unary(self, children):
        op, x = children
        start = op.start_pos
        tid = x.id
        if op.value != "+":  # - or −
            tid = self.builder._node(_NEG, tid, -1, start, x.end)
        return _value(tid, start, x.end)

    def binary(self, children):
        x, op, y = children
        prim = self.operators.get(op.value)
        if prim is None:
            raise _GiveUp  # @: arrays are lowered from the AST
        return _value(self.builder._node(prim, x.id, y.id, x.start, y.end), x.start, y.end)

    def array(self, children):
        raise _GiveUp  # arrays are lowered from the AST

    index = slice = keyword = transpose = array

    def implicit(self, children):
        x, y = children
        return _value(self.builder._node(_MUL, x.id, y.id, x.start, y.end), x.start, y.end)

    def _natural(self, children):
        raise _GiveUp  # x², 30°, √x, |x|: rare in a program large enough to matter

    superscript = degrees = root = bars = _natural

    def call(self, children):
        n = len(children)
        tok, rpar = children[0], children[n - 1]
        if n == 3:  # f(a)
            prim = self.unary_calls.get(tok.value)
            if prim is None:
                prim = self.unary_calls[tok.value] = self.function(tok, 1)
            a = children[1]
            tid = self.builder._node(prim, a.id, -1, tok.start_pos, rpar.end_pos)
        elif n == 5:  # f(a, b)
            prim = self.binary_calls.get(tok.value)
            if prim is None:
                prim = self.binary_calls[tok.value] = self.function(tok, 2)
            a, b = children[1], children[3]
            tid = self.builder._node(prim, a.id, b.id, tok.start_pos, rpar.end_pos)
        else:
            raise _GiveUp  # every row takes one or two arguments: the lowering says which
        return _value(tid, tok.start_pos, rpar.end_pos)

    def function(self, tok, n_args: int) -> Primitive:
        """The row the call token ``tok`` (``sin(``) calls with ``n_args`` arguments."""
        name = call_name(tok.value)
        name = read_name(name, tok.start_pos)
        prim = lookup(name, n_args)
        if prim is None or prim.arity != n_args:
            raise _GiveUp  # the lowering says which mistake it is
        return prim

    def group(self, children):
        return children[1]

    def assign(self, children):
        tok, op, x = children
        name = tok.value
        name = read_name(name, tok.start_pos)
        if name == DEGREE:
            raise _GiveUp  # the parser says deg cannot be assigned
        return self.builder.assign(name, op.value, (tok.start_pos, tok.end_pos), x.id, x.end)

    def program(self, children):
        return children


_INF = float("inf")


@gc_paused()  # one pause for the whole build (and for parse + lower, the AST freed uncollected)
def compile(source: str, shapes: Mapping[str, tuple] | None = None,  # noqa: A001
            read: bool | int = False) -> Graph:
    """Parse and lower ``source`` once; evaluate the graph at many points with :func:`gradcli.api.evaluate`.
    ``shapes`` gives the array inputs' shapes (name -> shape such as ``(3,)`` or ``(2, 3)``).
    ``read``: the graph keeps the source as gradcli read it (:func:`read_back`, from the same
    parse), for a caller that shows it; a number N keeps at least its first N characters, for
    a caller that shows no more (-1: all of it).

    A valid program of scalar inputs is read in one pass: the parser's driver with callbacks
    that make the tape's nodes (:class:`_Reductions`); anything wrong with it, any array, and
    a reading asked for, are lowered by parse and lower, from the start."""
    check_nodes(source, tuple(CONSTANTS))  # as parse_source: too large, refused unread
    check_length(source)
    if not read and not (shapes and any(shapes.values())):
        graph = one_pass(source)
        if graph is not None:
            return graph
    notes: list = []
    program = parse_source(source, notes)
    reading = None
    if read:  # printed first, so that the AST is gone before finish makes the graph
        from ..language.printer import to_source
        reading = (to_source(program, -1 if read is True else read), notes)
    builder = _Builder(source, shapes)
    outputs = _lowered(builder, program)
    del program  # the peak is the builder and the graph, not the AST as well (--json)
    graph = builder.finish(source, outputs)
    graph.reading = reading
    return graph


def one_pass(source: str) -> Graph | None:
    """The graph of a valid program, its nodes made as the parser reduces the rules
    (:class:`_Reductions`); None where something is wrong with the source."""
    builder = _Builder(source)
    try:
        statements = reduce(source, _Reductions(builder))
    except (_GiveUp, GradcliError):
        return None
    if statements.__class__ is not list or not statements:
        return None  # a syntax error, or nothing to compute
    result, bare = -1, []  # an expression's value is a _Value, an assignment's an int
    for value in statements:
        if value.__class__ is _Value:
            result = value.id
            bare.append(result)
        else:
            result = value
    return builder.finish(source, bare or [result])


class _Functions:
    """What the parser asks of the rule table (``language.parser.parse``'s ``functions``):
    whether a name is a function, the name of its inverse function, and which names are
    constants (``pi(x+1)`` is a product, as ``x(x+1)`` is)."""

    constants = frozenset(CONSTANTS)

    def __contains__(self, name: str) -> bool:
        return lookup(name) is not None

    @staticmethod
    def inverse(name: str) -> str | None:
        prim = lookup(name)
        return None if prim is None else prim.undoes


FUNCTIONS = _Functions()


def parse_source(source: str, notes: list | None = None) -> Program:
    """:func:`~gradcli.language.parser.parse` with the rule table's functions (``sin^2(x)`` is
    ``sin(x)^2``), and hints that need the table: which functions write a branch."""
    check_nodes(source, tuple(CONSTANTS))  # a source too large for the node limit, unparsed
    try:
        return parse(source, FUNCTIONS, notes)
    except ParseError as exc:
        if getattr(exc, "control_flow", False):
            branches = [name for name in ("abs", "max", "min", "step", "where")
                        if lookup(name) is not None]
            exc.hint = (f"a branch is written with {name_list(branches)}: max(x, 0) is 'if x > 0 "
                        "then x else 0', step(x)*a + (1 - step(x))*b picks a or b")
        raise


def read_back(source, limit: int = -1) -> tuple[str, list]:
    """The source as gradcli read it, in the explicit spelling (``2x^2`` -> ``2*x^2``,
    ``|x|`` -> ``abs(x)``), and the notes on readings worth a warning (``1/2x``): ``(span,
    text)`` pairs. Of a graph, the reading it kept (``compile(..., read=True)``), else its
    source's (an array-node graph keeps none). With a ``limit`` (>= 0), the reading may stop
    soon after that many characters (a view showing its beginning)."""
    if not isinstance(source, str):
        reading = getattr(source, "reading", None)
        if reading is not None:
            return reading
        source = source.source
    from ..language.printer import to_source
    notes: list = []
    return to_source(parse_source(source, notes), limit), notes


def point_vector(graph: Graph, at: Mapping[str, float]) -> list[float]:
    """The graph's input values in graph order; a missing input is a :class:`MissingInputError`,
    a value for ``e`` or ``pi`` (never an input: the source reads the constant) an InputError."""
    for name in CONSTANTS:
        if name in at:
            raise InputError(f"{constant_words(name)}; an input cannot be named {name}",
                             names=(name,), hint=f"rename the input, e.g. {name}1 or {name}_")
    missing = [name for name in graph.inputs if name not in at]
    if missing:
        raise missing_inputs(missing, graph.input_spans[graph.inputs.index(missing[0])],
                             **_missing_hint(graph, missing[0], at))
    point = []
    for name, span in zip(graph.inputs, graph.input_spans):
        try:
            value = float(at[name])
        except (TypeError, ValueError):
            raise InputError(f"the value of {name} is {at[name]!r}, not a number", span,
                             names=(name,)) from None
        if not math.isfinite(value):  # a NaN or inf input is a bad input, not a numerical failure
            raise InputError(f"the value of {name} is {value}, which is not a finite number", span,
                             names=(name,), values=(value,))
        point.append(value)
    return point


def missing_inputs(missing: list[str], span: Span, **hint) -> MissingInputError:
    """``no value for input y``: the inputs ``missing`` (the first read at ``span``)."""
    return MissingInputError(f"no value for {'input' if len(missing) == 1 else 'inputs'} "
                             f"{name_list(missing)}", span, names=tuple(missing), **hint)


def _missing_hint(graph: Graph, name: str, at: Mapping[str, float]) -> dict:
    """The hint (and fix) for an input without a value, where the point suggests one: ``xy``
    when ``x`` and ``y`` have values is meant as ``x*y`` (a name of several letters is one
    name); a name the point gives but the expression does not read, a typo away, is the one
    meant."""
    given = [n for n in at if n not in graph.inputs]
    parts = _split_name(name, set(at))
    if parts:
        product = "*".join(parts)
        return {"hint": f"{name} is one name (letters written together make one name); for "
                        f"the product write {product}",
                "fix": tuple(((m.start(), m.end()), product)
                             for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)",
                                                  graph.source))}
    close = [n for n in given if is_close(name, n)]
    if close:
        return {"hint": f"the point gives {name_list(close[:3])}, which the expression does "
                        f"not read: did you mean {name}?"}
    return {}


def _split_name(name: str, names: set[str]) -> list[str] | None:
    """``name`` as two or more of ``names`` written together (``xy`` -> ``[x, y]``), or None."""
    if len(name) > _TYPO_LENGTH or not names:
        return None  # a long name is no typo: not searched (a megabyte name would take hours)
    ways: dict[int, list[str]] = {0: []}  # ways[i]: name[:i] split into names
    lengths = sorted({len(n) for n in names})
    for end in range(1, len(name) + 1):
        for start in (end - k for k in lengths if k <= end):
            if start in ways and name[start:end] in names:
                ways[end] = ways[start] + [name[start:end]]
                break
    found = ways.get(len(name))
    return found if found and len(found) > 1 else None


def wrt_names(graph: Graph, wrt: Iterable[str] | None) -> list[str]:
    """The inputs to differentiate by (default: all, in graph order); an unknown name is an error."""
    if wrt is None:
        return list(graph.inputs)
    wrt, read = list(wrt), set(graph.inputs)
    if graph.arrays:  # an array's name stands for its elements
        wrt = [element for name in wrt for element in
               (arrays.element_names(name, graph.arrays[name]) if name in graph.arrays
                else [name])]
    unknown = [name for name in wrt if name not in read]
    if unknown:
        constant = next((constant_words(n) for n in unknown if n in CONSTANTS), "")
        raise InputError(f"names {name_list(unknown)}, which the expression does not read",
                         option="wrt", names=tuple(unknown),
                         hint=(f"{constant}, not an input; " if constant else "")
                         + f"its inputs are: {name_list(graph.inputs) or '(none)'}")
    return wrt
