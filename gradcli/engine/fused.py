"""Source text -> tape in one pass: the parser's LALR tables, run with reductions that make the
tape's nodes directly (no AST in between).

The tables are the parser's own (``language/parser.py`` loads Lark's tables for the grammar, from
the user's cache): the same states, the same lexer. Only what a reduction does differs: where the
parser's callbacks build an AST node that the lowering (``graph._Builder``) later walks, these
call the builder at once, in the order the lowering would, since LR reductions come in the same
post-order (left operand, right operand, then the operation). So the graph is the one
``lower(parse(source))`` gives, field by field (tests/test_fused.py checks it on generated
programs).

Only valid programs go this way: at the first thing wrong (a syntax error, an unknown name, a
constant out of its domain, a limit) :func:`compile_source` gives up and the caller runs parse
and lower, whose messages, spans and order of checks are the reference.

What makes it fast, measured (docs/performance.md):

- one regular expression pass; each token's trailing blanks are part of its match, so spaces
  cost no iteration of their own;
- a state is a list indexed by terminal (small integers, not strings); a shift's action is the
  target state itself;
- unit reductions (``?sum: product``) never run: a reduction's goto is looked up, per state
  below, rule and lookahead, as the state reached after every unit reduction that follows it;
- the common reductions (operators, names, numbers, one-argument calls, parentheses) are
  written inline in the loop; the rest go through the same child filter as the parser's.

Where the optional C extension ``_fused`` was built (``_fused.c``) and the tables carry the
terminals as automata (``language/tables.py``), ASCII text without backslashes runs the same
machine compiled: the same states, reductions and calls of the builder, from the same data, at
about a tenth of the loop's cost a node. Anything else (and every run without it) takes the loop
below; the tests run both on the same programs.
"""

from __future__ import annotations

from ..language.parser import lexer, read_name, run_tables
from ..language.tables import DEAD
from .primitives import ALIASES, BINARY_OPERATORS, OVERLOADS, TABLE, lookup

_NEG = TABLE["neg"]
# The terminals of the operators, as the grammar names them.
_OPERATORS = {"PLUS": "+", "MINUS": "-", "STAR": "*", "SLASH": "/", "POW": "^"}

# The reductions that go through the child filter: helper rules' lists, the program, calls of
# none or several arguments, and a group
_OTHER = (None, "program", "call", "group")
_machine = None  # built from the parser's tables on first use
_INF = float("inf")
ABI = 5  # the compiled loop's calling convention (_fused.ABI): a stale build is not used
try:  # the machine compiled (see the module docstring), where it was built
    from . import _fused
except ImportError:
    _fused = None
if getattr(_fused, "ABI", None) != ABI:
    _fused = None


class _Machine:
    """The tables as the loop reads them (see the module docstring)."""

    def __init__(self, tables: dict):
        symbols = tables["symbols"]
        terminals = [s for s in symbols if s.isupper()]  # the terminals and $END
        tindex = {s: i for i, s in enumerate(terminals)}
        n_t = len(terminals)
        self.n_t = n_t
        self.end_t = tindex["$END"]
        self.sep_t = tindex["_SEP"]
        # The parser's lexer (blanks after each token part of its match, the end of the text an
        # empty match), so the loop sees $END without a second code path.
        regex = lexer(tables)
        self.match_source = regex.scanner
        groups = regex.groupindex
        self.kind = kind = [-1] * (regex.groups + 1)  # group number -> terminal; -1 ignored
        for name, g in groups.items():
            if name == "_END_":
                kind[g] = self.end_t
            elif name == "_SEP":
                kind[g] = -2  # a separator: dropped when it is a new line inside parentheses
            elif name in tindex:
                kind[g] = tindex[name]
            elif name not in tables["ignore"]:
                raise ValueError(f"a terminal the grammar never uses: {name}")
        self.sep_group = groups["_SEP"]
        self.name_group = groups["NAME"]
        self.number_group = groups["NUMBER"]
        name_g = self.name_group
        self.match_token = lambda m, source: (m[name_g], m.start())  # for _other
        self.assign_group = groups["ASSIGN_OP"]
        self.operators = [None] * (regex.groups + 1)  # an operator token's group -> primitive
        for name, op in _OPERATORS.items():
            self.operators[groups[name]] = TABLE[BINARY_OPERATORS[op]]
        self.unary = [None] * (regex.groups + 1)
        self.unary[groups["MINUS"]] = _NEG  # unary plus: None, the operand itself
        self.functions = {}  # name -> the primitive it calls with one argument, once looked up
        self.functions2 = {}  # and with two (the compiled loop's)
        # the names that call a function (``lookup`` finds them), which cannot be assigned: the
        # compiled loop binds any other name not an input without asking the builder's checks
        self.called = frozenset(name for name in (*TABLE, *ALIASES, *(n for n, _ in OVERLOADS))
                                if lookup(name) is not None)

        # Decode the states: per state, terminal -> ("s", state) | ("r", reduction); goto.
        states = [bytes.fromhex(row) for row in tables["states"]]
        n = len(states)
        action: list[dict] = [{} for _ in states]
        goto: list[dict] = [{} for _ in states]
        for u, pairs in enumerate(states):
            for i in range(0, len(pairs), 2):
                sym, act = symbols[pairs[i]], pairs[i + 1]
                if sym in tindex:
                    action[u][tindex[sym]] = ("s", act) if act < n else ("r", act - n)
                elif act < n:
                    goto[u][sym] = act
                else:
                    raise ValueError(f"a reduction on the rule name {sym}")
        reductions = tables["reductions"]
        unit = [len(r) == 2 for r in reductions]
        origin = [symbols[r[1]] for r in reductions]

        # Rules get codes by what they do; code c's gotos live at row[n_t * (c + 1) + t], so a
        # reduction's action is that offset, and its kind is the range the offset falls in.
        inline = {("binary", 3), ("var", 1), ("num", 1), ("group", 3), ("call", 4), ("unary", 2),
                  ("assign", 3)}

        def what(entry) -> str:
            if len(entry) == 2:
                return "unit"
            size, method, kept = entry[0], entry[2], entry[3]
            plain = kept == [v for i in range(size) for v in (i, 0)]  # every child, none spliced
            return method if plain and (method, size) in inline else "other"
        kinds = [what(entry) for entry in reductions]
        order = ["binary", "var", "num", "call", "group", "unary", "assign", "unit", "other"]
        ranked = sorted(range(len(reductions)), key=lambda r: order.index(kinds[r]))
        offset = {r: n_t * (c + 1) for c, r in enumerate(ranked)}
        ends, end = {}, n_t
        for kind_name in order:  # each kind's offsets end where the next kind's begin
            end = max([offset[r] + 1 for r in ranked if kinds[r] == kind_name], default=end)
            ends[kind_name] = end
        self.ends = ends
        self.generic = {}  # offset -> (size, method, kept pairs) for the "other" reductions
        for r in ranked:
            if kinds[r] == "other":
                size, _, method, kept = reductions[r]
                if method not in _OTHER:  # the grammar changed: a test finds it, not a user
                    raise ValueError(f"no one-pass reduction for {method!r} of {size}")
                self.generic[offset[r]] = (size, method, tuple(
                    (kept[i], bool(kept[i + 1])) for i in range(0, len(kept), 2)))
        width = n_t * (len(reductions) + 1)
        rows: list[list] = [[0] * width for _ in states]  # 0: an error
        # the same in numbers, for the compiled loop: state s is -2 - s (see _compiled)
        codes: list[list] = [[0] * width for _ in states]

        accept = tindex["$END"]
        unit_origin = [origin[r] if unit[r] else None for r in range(len(reductions))]
        # per state, lookahead -> the rule name a unit reduction there reduces to
        unit_of = [{t: unit_origin[arg] for t, (kind_, arg) in acts.items()
                    if kind_ == "r" and unit_origin[arg] is not None} for acts in action]
        units = [list(found.items()) for found in unit_of]
        by_origin: dict[str, list[int]] = {}
        for r in range(len(reductions)):
            by_origin.setdefault(origin[r], []).append(offset[r])
        for u in range(n):
            row, code = rows[u], codes[u]
            for t, (kind_, arg) in action[u].items():
                row[t] = rows[arg] if kind_ == "s" else offset[arg]
                code[t] = -2 - arg if kind_ == "s" else offset[arg]
            below = goto[u]
            for nonterminal, v in below.items():
                # reduced to ``nonterminal`` over u, for each lookahead: the state reached
                # after the goto and every unit reduction that then follows
                settled = [rows[v]] * n_t
                numbers = [-2 - v] * n_t
                for t, name in units[v]:
                    w = below.get(name)
                    while w is not None:
                        name = unit_of[w].get(t)
                        if name is None:
                            break
                        w = below.get(name)
                    settled[t] = 0 if w is None else rows[w]
                    numbers[t] = 0 if w is None else -2 - w
                for off in by_origin.get(nonterminal, ()):
                    row[off:off + n_t] = settled
                    code[off:off + n_t] = numbers
        rows[tables["end"]][accept] = codes[tables["end"]][accept] = -1  # accept
        self.start = rows[tables["start"]]
        self.compiled = None if _fused is None else _compiled(self, tables, regex, codes, tindex)
        # A '(' or ')' shifted counts the parentheses open (a new line inside them continues
        # the expression): such a shift is the action -2 - k, shifting to paren_shifts[k].
        self.paren_shifts = []
        for row in rows:
            for name, step in (("LPAR", 1), ("RPAR", -1)):
                t = tindex[name]
                if row[t].__class__ is list:
                    self.paren_shifts.append((row[t], step))
                    row[t] = -1 - len(self.paren_shifts)


_KINDS = ("binary", "var", "num", "call", "group", "unary", "assign", "unit")  # C's order


def _compiled(machine: _Machine, tables: dict, regex, codes: list, tindex: dict):
    """The machine as ``_fused.run`` reads it, or None where the tables carry no automata (built
    without interegular) or the automata are not the lexer's terminals: the states as one flat
    array of int32 (``codes``: a shift or goto to state s is -2 - s, a reduction its offset, 0
    an error, -1 acceptance), the reductions' kinds as the ends of their ranges of offsets, the
    automata, and per terminal the operator or sign it reads."""
    from array import array
    automaton = tables.get("automaton")
    groups = [name for name, _ in sorted(regex.groupindex.items(), key=lambda item: item[1])
              if name != "_END_"]
    if automaton is None or automaton["terminals"] != groups:
        return None
    moves, accept = bytes.fromhex(automaton["next"]), bytes.fromhex(automaton["accept"])
    # C follows the automata without checking each step: tables from the user's cache are data
    # a person could have edited, so a state out of range refuses the compiled loop here
    n_lex, starts = len(accept), automaton["start"]
    if (len(moves) != 128 * n_lex or moves.translate(None, bytes(range(n_lex)) + bytes([DEAD]))
            or len(starts) != len(groups) or not all(0 <= v < n_lex for v in starts)):
        return None
    if not 0 <= tables["start"] < len(codes):
        return None
    lex_kind = [-1 if name in tables["ignore"] else -2 if name == "_SEP" else tindex[name]
                for name in groups]
    table = array("i")
    for code in codes:
        table.fromlist(code)
    operators, unary = [None] * machine.n_t, [None] * machine.n_t
    for name, op in _OPERATORS.items():
        operators[tindex[name]] = TABLE[BINARY_OPERATORS[op]]
    unary[tindex["MINUS"]] = _NEG  # unary plus: None, the operand itself
    # per reduction: its size, what it makes (0 a list, 1 a call, 2 a group: _other) and kept
    generic = {offset: (size, 0 if method in (None, "program") else 1 if method == "call" else 2,
                        kept)
               for offset, (size, method, kept) in machine.generic.items()}
    return (moves, accept, list(starts), lex_kind, table.tobytes(), len(codes[0]),
            tables["start"], [machine.ends[kind] for kind in _KINDS],
            [machine.sep_t, machine.end_t, tindex["LPAR"], tindex["RPAR"]], operators, unary,
            generic)


class _GiveUp(Exception):
    """A mistake that the parser and the lowering are left to describe."""


def compile_source(source: str, builder):
    """``source`` lowered by ``builder`` (a fresh ``graph._Builder``) in one pass: the graph,
    or None where the source is not a valid program (the caller parses it to say why). An
    error of the lowering (a ``GradcliError``) propagates."""
    try:
        return _run(source, builder)
    except _GiveUp:
        return None


def _run_compiled(machine: _Machine, source: str, builder):
    """The one pass compiled (``_fused.run``): the graph, or None as :func:`_run`."""
    def call(children: list):  # name ( a , b , ... ): what C leaves to Python
        return _other(builder, "call", children, _slice_token, source)

    statements = _fused.run(source, machine.compiled, builder, machine.functions, _function,
                            call, machine.called, machine.functions2)
    return None if statements is None else _finish(builder, source, statements)


def _slice_token(token: slice, source: str) -> tuple[str, int]:
    """A token of the compiled loop (its span as a slice): its text and start."""
    return source[token], token.start


def _run(source: str, builder):
    global _machine
    machine = _machine
    if machine is None:
        machine = _machine = run_tables(_Machine)
    if machine.compiled is not None and source.isascii() and "\\" not in source:
        return _run_compiled(machine, source, builder)
    kind, operators, unary = machine.kind, machine.operators, machine.unary
    name_g, number_g, sep_g, sep_t = (machine.name_group, machine.number_group,
                                      machine.sep_group, machine.sep_t)
    ends, paren_shifts = machine.ends, machine.paren_shifts
    binary_end, var_end, num_end, call_end = (ends["binary"], ends["var"], ends["num"],
                                              ends["call"])
    group_end, unary_end, assign_end, unit_end = (ends["group"], ends["unary"], ends["assign"],
                                                  ends["unit"])
    assign_g = machine.assign_group
    functions = machine.functions
    depth, ops, a0, a1 = builder.depth, builder.op, builder.a0, builder.a1
    starts, span_ends = builder.starts, builder.ends
    env_get, input_get = builder.env.get, builder.input_ids.get
    emit, read, literal, limit = builder.emit, builder.read, builder.literal, builder.limit
    assign = builder.assign

    row = machine.start
    stack = [row]  # states and values, interleaved: [state, value, state, value, state, ...]
    parens = 0
    numbers = {}  # a literal's text -> its constant
    for m in iter(machine.match_source(source).match, None):
        t = kind[m.lastindex]
        if t < 0:
            if t == -1:  # a comment, a line continuation
                continue
            if parens > 0 and m[sep_g] != ";":  # a new line inside parentheses
                continue
            t = sep_t
        while True:
            a = row[t]
            if a.__class__ is list:  # shift
                stack += (m, a)
                row = a
                break
            # A reduction of k stack entries (k/2 symbols): its value, then the state that the
            # state below it goes to, replace them in one slice assignment.
            if a < binary_end:
                if a > 0:
                    x, s0, _ = stack[-6]
                    y, _, e1 = stack[-2]
                    prim = operators[stack[-4].lastindex]
                    dx, dy = depth[x], depth[y]
                    if dx < 0 and dy < 0:  # constants: folded
                        tid = emit(prim, x, y, (s0, e1))
                    else:  # emit()'s appends, inline: once per operation
                        tid = len(depth)
                        if tid >= limit:
                            emit(prim, x, y, (s0, e1))  # raises the LimitError
                        depth.append(1 + (dx if dx > dy else dy))  # noqa: FURB136 - no call
                        ops.append(prim)
                        a0.append(x)
                        a1.append(y)
                        starts.append(s0)
                        span_ends.append(e1)
                    row = stack[-7][a + t]
                    stack[-6:] = (tid, s0, e1), row
                    continue
                if a < -1:  # shift a parenthesis
                    row, step = paren_shifts[-2 - a]
                    parens += step
                    stack += (m, row)
                    break
                if a == 0:
                    return None  # a syntax error
                return _finish(builder, source, stack[-2])  # accept
            if a < var_end:
                tok = stack[-2]
                text = tok[name_g]
                s0, e1 = tok.span(name_g)
                name = text if text.isascii() and "\\" not in text else read_name(text, s0)
                tid = env_get(name)
                if tid is None:
                    tid = input_get(name)
                    if tid is None:
                        tid = read(name, (s0, e1))
                row = stack[-3][a + t]
                stack[-2:] = (tid, s0, e1), row
                continue
            if a < num_end:
                tok = stack[-2]
                text = tok[number_g]
                tid = numbers.get(text)
                if tid is None:  # a literal's first time: one constant per spelling
                    v = float(text)
                    if v == _INF:
                        return None  # the parser says it is too large
                    tid = numbers[text] = literal(text, v)
                s0, e1 = tok.span(number_g)
                row = stack[-3][a + t]
                stack[-2:] = (tid, s0, e1), row
                continue
            if a < call_end:  # name ( argument )
                tok = stack[-8]
                text = tok[name_g]
                prim = functions.get(text)
                if prim is None:
                    prim = _function(functions, text, tok.start())
                x = stack[-4][0]
                s0, e1 = tok.start(), stack[-2].start() + 1
                dx = depth[x]
                if dx < 0:  # a constant: folded
                    tid = emit(prim, x, -1, (s0, e1))
                else:
                    tid = len(depth)
                    if tid >= limit:
                        emit(prim, x, -1, (s0, e1))  # raises the LimitError
                    depth.append(1 + dx)
                    ops.append(prim)
                    a0.append(x)
                    a1.append(-1)
                    starts.append(s0)
                    span_ends.append(e1)
                row = stack[-9][a + t]
                stack[-8:] = (tid, s0, e1), row
                continue
            elif a < group_end:  # ( sum )
                value = stack[-4]
                k = 6
            elif a < unary_end:
                tok = stack[-4]
                x, _, e1 = stack[-2]
                s0 = tok.start()
                prim = unary[tok.lastindex]
                value = (x if prim is None else emit(prim, x, -1, (s0, e1)), s0, e1)
                k = 4
            elif a < assign_end:  # name = value, name += value, ...
                tok = stack[-6]
                text = tok[name_g]
                s0, e0 = tok.span(name_g)
                name = text if text.isascii() and "\\" not in text else read_name(text, s0)
                x, _, e1 = stack[-2]
                value = assign(name, stack[-4][assign_g], (s0, e0), x, e1)  # an int: a statement
                k = 6
            elif a < unit_end:  # a unit reduction: same value, the state after it
                row = stack[-1] = stack[-3][a + t]
                continue
            else:
                size, method, kept = machine.generic[a]
                k = 2 * size
                children = stack[-k::2] if k else []
                value = _other(builder, method, _filtered(children, kept), machine.match_token,
                               source)
                if not k:
                    row = stack[-1][a + t]
                    stack += (value, row)
                    continue
            row = stack[-k - 1][a + t]
            stack[-k:] = value, row
    return None  # a character no terminal matches


def _filtered(children: list, kept: tuple) -> list:
    """Lark's child filter (as ``parser._callback``): the kept children, helper lists spliced."""
    out = None
    for i, splice in kept:
        if splice:  # a helper rule's own list, extended in place: n statements, n appends
            if out is None:
                out = children[i]
            else:
                out += children[i]
        elif out is None:
            out = [children[i]]
        else:
            out.append(children[i])
    return [] if out is None else out


def _other(builder, method, children: list, token, source: str):
    """The reductions the loop does not write inline; ``token(t, source)`` is a token's text and
    start (the loop's tokens are regular expression matches, the compiled loop's slices)."""
    if method is None or method == "program":  # statements, or a helper rule's list
        return children
    if method == "call":  # name ( a , b , ... )
        (text, s0), (_, rpar) = token(children[0], source), token(children[-1], source)
        args = [arg[0] for arg in children[2:-1:2]]
        return _call(builder, text, s0, rpar + 1, args)
    return children[1]  # a group


def _call(builder, text: str, s0: int, e1: int, args: list[int]):
    """A call's node (or folded constant); its value."""
    name = text if text.isascii() and "\\" not in text else read_name(text, s0)
    prim = lookup(name, len(args))
    if prim is None or prim.arity != len(args):
        raise _GiveUp  # the lowering says which mistake it is
    span = (s0, e1)
    return (builder.emit(prim, args[0], args[1] if len(args) == 2 else -1, span), s0, e1)


def _function(functions: dict, text: str, s0: int, arity: int = 1):
    """The primitive a call of ``text`` with ``arity`` arguments calls (remembered in
    ``functions``, one dict an arity)."""
    name = text if text.isascii() and "\\" not in text else read_name(text, s0)
    prim = lookup(name, arity)
    if prim is None or prim.arity != arity:
        raise _GiveUp  # the lowering says which mistake it is
    functions[text] = prim
    return prim


def _finish(builder, source: str, statements: list):
    """The graph of the statements (an expression's value is a tuple, an assignment's an int)."""
    if not statements:
        return None  # empty: the parser says so
    result, bare = -1, []
    for value in statements:
        if value.__class__ is tuple:
            result = value[0]
            bare.append(result)
        else:
            result = value
    return builder.finish(source, bare or [result])
