"""The adjoint program: the tape's sweeps written out as straight-line statements.

Source-transformation AD (Tapenade, ADIFOR, CasADi's code generation) emits the reverse sweep
as a program: one statement per tape node for the forward sweep, then one statement per
contribution of the reverse sweep (``vb1 += vb3 * v2``), sharing kept, linear in the size of
the function. This module builds that program as plain records; :mod:`gradcli.code`
prints it in Python, NumPy, JAX or C.

The local derivatives come from the rule table, run on the namespace :data:`CODE`, whose
values are small expression trees (:class:`Code`) over the program's variables: the partial
``∂v3/∂v1`` in the program is the row's own rule, as ``gradcli eval`` computes it, operation for
operation. Constants of the tape stay floats, so a rule's special cases for constants (the
exponent 0 of ``x^0``) apply as they do in the engine; cases decided by values (pow's base 0)
become a ``where`` chosen when the code runs.

Names: ``v3`` is node 3's value (as in ``--trace``), ``vb3`` its adjoint (v̄3), ``vd3`` its
tangent (v̇3) and ``vbd3`` the adjoint's tangent; an input ``x`` has ``vb_x``, ``vd_x``, ``vbd_x``.

>>> from gradcli.engine.graph import compile
>>> program = build(compile("x*y + sin(x)"), "reverse")
>>> [statement.text() for statement in program.forward]
['v1 = x * y', 'v2 = sin(x)', 'v3 = v1 + v2']
>>> [statement.text() for statement in program.sweeps[0]]
['vb3 = 1.0', 'vb1 = vb3', 'vb2 = vb3', 'vb_x = vb1 * y', 'vb_y = vb1 * x', 'vb_x += vb2 * cos(x)']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..engine.graph import Graph, expression
from ..engine.primitives import CONSTANTS, TABLE, Namespace
from ..errors import InputError

MODES = ("reverse", "forward", "hessian")
CONDITIONS = ("equal", "greater", "both")  # comparisons, only ever the first argument of where


class Code:
    """An expression of the generated program: ``op`` is a variable (``"var"``, args = its
    name), a row of the table (args: Code or float), ``"where"`` (condition, then, else) or a
    condition of :data:`CONDITIONS`. Python's operators build the table's arithmetic rows, so a
    rule written for floats builds its own code."""

    __slots__ = ("op", "args")

    def __init__(self, op: str, args: tuple):
        self.op = op
        self.args = args

    def __add__(self, o): return _op("add", self, o)
    def __radd__(self, o): return _op("add", o, self)
    def __sub__(self, o): return _op("sub", self, o)
    def __rsub__(self, o): return _op("sub", o, self)
    def __mul__(self, o): return _op("mul", self, o)
    def __rmul__(self, o): return _op("mul", o, self)
    def __truediv__(self, o): return _op("div", self, o)
    def __rtruediv__(self, o): return _op("div", o, self)
    def __pow__(self, o): return _op("pow", self, o)
    def __rpow__(self, o): return _op("pow", o, self)
    def __neg__(self): return self.args[0] if self.op == "neg" else _op("neg", self)  # exact
    def __pos__(self): return self

    def __repr__(self) -> str:
        return f"Code({plain(self)})"


def var(name: str) -> Code:
    return Code("var", (name,))


def _op(name: str, *args):
    """``name(*args)``: folded to a float when every argument is a number (as the engine
    computes it when it runs the rule on floats), else a :class:`Code`."""
    args = tuple(float(a) if type(a) is int else a for a in args)
    if all(type(a) is float for a in args):
        try:
            return float(TABLE[name].primal(*args))
        except (ValueError, ZeroDivisionError, OverflowError):
            pass  # written out, to fail where the code runs, as the engine does (1 / 0.0)
    return Code(name, args)


def _where(condition, then, otherwise):
    if type(condition) is bool:  # decided when the code is built: a constant's case
        return then if condition else otherwise
    return Code("where", (condition, then, otherwise))


def _equal(a, b):
    return a == b if type(a) is float and type(b) is float else Code("equal", (a, b))


def _greater(a, b):
    return a > b if type(a) is float and type(b) is float else Code("greater", (a, b))


def _both(a, b):
    if type(a) is bool:
        return b if a else False
    if type(b) is bool:
        return a if b else False
    return Code("both", (a, b))


def _function(row):
    def build(*args):
        return _op(row.name, *args)
    build.__name__ = row.name
    return build


def _pow_by_base(a, b):
    """pow's rule by its base (:meth:`Namespace.pow_by_base`) with its case chosen as the code
    runs: b·a^(b-1) itself, guarded only at a = b = 0 (0·0^-1). A case for the value would make
    the Hessian's tangent a constant's 0 (y^x at x = 0, y = 0.5: ∂²/∂x∂y is 1/y = 2). A constant
    exponent is decided now."""
    if type(b) is float:
        return 0.0 if b == 0 else b * CODE.pow(a, b - 1)
    zero = _both(_equal(b, 0.0), _equal(a, 0.0))
    return b * CODE.pow(a, _where(zero, 1.0, b) - 1)


def _pow_by_exponent(a, b, y):
    """pow's rule by its exponent (:meth:`Namespace.pow_by_exponent`), its case a = 0 < b
    chosen as the code runs."""
    zero = _both(_equal(a, 0.0), _greater(b, 0.0))
    return _where(zero, 0.0, y * CODE.log(_where(zero, 1.0, a)))


# What the rules receive as ``m``: every row by name (a row with a definition written out as
# its definition's rows: generated code calls only functions that exist), the constants, and
# the case analysis, with pow's rules deciding their cases in the code.
CODE = Namespace(_function, **CONSTANTS,
                 where=_where, greater=_greater,
                 pow_by_base=_pow_by_base, pow_by_exponent=_pow_by_exponent)


def plain(e) -> str:
    """An expression in gradcli's own notation (the comments of generated code, the tests)."""
    if type(e) is float:
        return repr(e) if e >= 0 else f"({e!r})"
    if e.op == "var":
        return e.args[0]
    # a statement's tree is small (its arguments are variables): recursion is bounded here
    args = [f"({plain(a)})" if _infix(a) else plain(a) for a in e.args]
    if _infix(e):
        symbol = TABLE[e.op].symbol
        return f"{args[0]} {symbol} {args[1]}" if len(args) == 2 else f"{symbol}{args[0]}"
    if e.op == "where":
        return f"({args[1]} if {args[0]} else {args[2]})"
    return f"{e.op}({', '.join(args)})"


def _infix(e) -> bool:
    return type(e) is Code and e.op in TABLE and TABLE[e.op].symbol is not None


# -- the program as records ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Statement:
    """``target = value`` (or ``target += value`` when ``accumulate``), with the trace's words
    for it in ``comment``; ``node`` is the tape node it computes (1 for v1) or 0."""

    target: str
    value: object  # Code or float
    accumulate: bool = False
    comment: str = ""
    node: int = 0

    def text(self) -> str:
        return f"{self.target} {'+=' if self.accumulate else '='} {plain(self.value)}"


@dataclass(slots=True)
class Program:
    """A generated function's body, in order: ``forward`` (every node's value; ``live`` marks
    those an output needs), ``tangents`` (forward mode and Hessian-vector products),
    ``sweeps`` (one reverse sweep per output) and ``sweep_tangents`` (their tangents, for the
    Hessian). The results are expressions per output: ``values``, ``gradients`` (one per
    input), ``derivatives`` (forward mode: one per output) and ``hvp`` (one per input)."""

    source: str
    mode: str
    inputs: list[str]  # the inputs' names, in the order of the code's parameters
    variables: dict[str, str]  # input name -> its variable in the code
    output_names: list[str]
    forward: list[Statement]
    live: list[bool]
    values: list = field(default_factory=list)
    tangents: list[Statement] = field(default_factory=list)
    derivatives: list = field(default_factory=list)
    sweeps: list[list[Statement]] = field(default_factory=list)
    gradients: list[list] = field(default_factory=list)
    sweep_tangents: list[Statement] = field(default_factory=list)
    hvp: list = field(default_factory=list)
    wrt: list[str] = field(default_factory=list)  # the inputs differentiated by, in order

    @property
    def statements(self) -> list[Statement]:
        """Every statement, in the order the code runs them."""
        return [*self.forward, *self.tangents, *(s for sweep in self.sweeps for s in sweep),
                *self.sweep_tangents]


class _Namer:
    """The variable of every slot: a constant is its value, an input its variable, node k
    ``v{k+1}``; adjoints and tangents by prefix."""

    def __init__(self, graph: Graph, variables: dict[str, str]):
        self.graph = graph
        self.inputs = [variables[n] for n in graph.inputs]

    def value(self, slot: int):
        g = self.graph
        if slot < g.n_const:
            return g.constants[slot]
        if slot < g.base:
            return var(self.inputs[slot - g.n_const])
        return var(f"v{slot - g.base + 1}")

    def adjoint(self, slot: int) -> str:
        g = self.graph
        if slot < g.base:
            return f"vb_{self.inputs[slot - g.n_const]}"
        return f"vb{slot - g.base + 1}"


def tangent_name(target: str) -> str:
    """A statement's target's tangent: ``v3`` -> ``vd3``, ``vb3`` -> ``vbd3``, ``vb_x`` ->
    ``vbd_x`` (an input ``x``'s is ``vd_x``, whatever its name: ``vbx`` -> ``vd_vbx``)."""
    return "vd" + target[1:] if re.match(r"^v\d+$", target) else "vbd" + target[2:]


def _times(g: Code, p):
    """The contribution ``g * p``, or None when ``p`` is the number 0 (it adds nothing to a
    finite adjoint); ``g * 1.0`` and ``g * -1.0`` are written ``g`` and ``-g`` (exactly equal)."""
    if type(p) is float:
        if p == 0:
            return None
        if p == 1:
            return g
        if p == -1:
            return -g
    return g * p


def _partials(graph: Graph, names: _Namer, k: int) -> list[tuple[int, object]]:
    """Node k's partials by each argument that is not a constant: (argument slot, code)."""
    prim, slots = graph.ops[k], graph.args(k)
    args = [names.value(a) for a in slots]
    y = var(f"v{k + 1}")
    return [(a, prim.partials[i](CODE, *args, y)) for i, a in enumerate(slots)
            if a >= graph.n_const]


def build(graph: Graph, mode: str = "reverse", variables: dict[str, str] | None = None, *,
          inputs: list[str] | None = None, wrt: list[str] | None = None) -> Program:
    """The program computing ``graph``'s outputs and, by ``mode``: their gradients (reverse),
    their derivatives along a direction (forward), or the gradient and a Hessian-vector product
    of its one output (hessian, by forward-over-reverse); the derivatives by the inputs ``wrt``
    (default: all, in graph order). ``variables``: each input's variable in the code (default:
    its name); ``inputs``: the order of the code's parameters (default: graph order)."""
    if mode not in MODES:
        raise InputError(f"{mode!r} is not a mode of codegen", option="mode",
                         hint=f"choose from: {', '.join(MODES)}")
    if mode == "hessian" and graph.n_outputs > 1:
        raise InputError(f"hessian is of one output, and the program has {graph.n_outputs}",
                         option="mode", hint="keep one output (a bare expression statement)")
    variables = variables or {name: name for name in graph.inputs}
    wrt = list(graph.inputs if wrt is None else wrt)
    names = _Namer(graph, variables)
    base = graph.base
    forward = []
    for k, prim in enumerate(graph.ops):
        slot = base + k
        op = getattr(CODE, prim.name)(*(names.value(a) for a in graph.args(k)))
        labels = graph.labels.get(slot)
        comment = f"v{k + 1} = {expression(graph, slot)}" + (f"  ({', '.join(labels)})"
                                                             if labels else "")
        forward.append(Statement(f"v{k + 1}", op, comment=comment, node=k + 1))
    live = graph.live_nodes()
    program = Program(graph.source, mode, list(inputs or graph.inputs), variables,
                      list(graph.output_names or ["f"]), forward, live,
                      values=[names.value(s) for s in graph.output_slots], wrt=wrt)
    if mode != "reverse":  # the forward sweep's tangents, along the inputs of wrt
        live_forward = [s for s, alive in zip(forward, live) if alive]
        tangents_, tangents = tangent_statements(live_forward, {variables[n] for n in wrt})
    if mode == "forward":
        program.derivatives = [_tangent_of(v, tangents) for v in program.values]
        program.tangents = prune(tangents_, program.derivatives)
        return program
    position = {name: i for i, name in enumerate(graph.inputs)}
    for i in range(graph.n_outputs):
        sweep, gradient = _sweep(graph.only(i), names)
        gradient = [gradient[position[name]] for name in wrt]
        program.sweeps.append(prune(sweep, gradient))
        program.gradients.append(gradient)
    if mode == "hessian":
        sweep_tangents, tangents = tangent_statements(program.sweeps[0], tangents)
        program.hvp = [_tangent_of(g, tangents) for g in program.gradients[0]]
        kept = prune(tangents_ + sweep_tangents, program.hvp)
        first = {id(s) for s in tangents_}
        program.tangents = [s for s in kept if id(s) in first]
        program.sweep_tangents = kept[len(program.tangents):]
    return program


def _sweep(graph: Graph, names: _Namer) -> tuple[list[Statement], list]:
    """One output's reverse sweep, in the engine's visit order, and its gradient (one
    expression per input: an adjoint's name, or 0.0 for an input it does not depend on)."""
    out = graph.output
    statements: list[Statement] = []
    assigned: set[str] = set()

    def add(slot: int, value, comment: str, node: int) -> None:
        target = names.adjoint(slot)
        accumulate = target in assigned
        comment = f"{target} {'+=' if accumulate else '='} {comment}"
        statements.append(Statement(target, value, accumulate, comment, node))
        assigned.add(target)

    if out >= graph.n_const:
        add(out, 1.0, "1 (the seed)", 0)
    base = graph.base
    for s in graph.visit_order():
        g = names.adjoint(s)
        if g not in assigned:  # every contribution to it was 0: so are its own
            continue
        k = s - base
        for a, p in _partials(graph, names, k):
            c = _times(var(g), p)
            if c is not None:
                source, target = f"v{k + 1}", graph.node_id(a)
                add(a, c, f"{g} * ∂{source}/∂{target}", k + 1)
    gradient = [var(names.adjoint(s)) if names.adjoint(s) in assigned else 0.0
                for s in range(graph.n_const, base)]
    return statements, gradient


def reads(e) -> set[str]:
    """The variables an expression reads."""
    found, stack = set(), [e]
    while stack:
        node = stack.pop()
        if type(node) is Code:
            if node.op == "var":
                found.add(node.args[0])
            else:
                stack.extend(node.args)
    return found


def prune(statements: list[Statement], results) -> list[Statement]:
    """The statements that the expressions ``results`` need (a backward pass): an adjoint whose
    every use was a zero contribution is not written (a compiler would warn of it)."""
    needed: set[str] = set()
    for e in results:
        needed |= reads(e)
    kept = []
    for st in reversed(statements):
        if st.target not in needed:
            continue
        kept.append(st)
        if not st.accumulate:
            needed.discard(st.target)
        needed |= reads(st.value)
    return kept[::-1]


def _tangent_of(e, tangents: dict[str, str | None]):
    """The tangent of an expression that is a variable or a number (a result)."""
    if type(e) is float or e.op != "var":
        return 0.0
    name = tangents.get(e.args[0])
    return var(name) if name else 0.0


def tangent_statements(statements: list[Statement], tangents) -> tuple[list[Statement], dict]:
    """The tangent of each statement (forward mode over straight-line code): ``td = dE`` after
    ``t = E``, from the table's rules run on :data:`CODE`. ``tangents`` maps a variable to the
    name of its tangent (a set of inputs' variables: ``x``'s tangent is ``vd_x``); a variable
    not in it has tangent 0. Returns the statements and the extended map."""
    if not isinstance(tangents, dict):
        tangents = {name: f"vd_{name}" for name in tangents}
    else:
        tangents = dict(tangents)
    out: list[Statement] = []
    for st in statements:
        d = derivative(st.value, tangents)
        name = tangent_name(st.target)
        comment = f"d({st.comment})" if st.comment else ""
        if d is None:
            if not st.accumulate:
                tangents[st.target] = None  # (re)assigned a value with tangent 0
            continue
        accumulate = st.accumulate and tangents.get(st.target) is not None
        out.append(Statement(name, d, accumulate, comment, st.node))
        tangents[st.target] = name
    return out, tangents


def derivative(e, tangents: dict[str, str | None]):
    """The tangent of the expression ``e`` (Code or float): a Code, or None where it is 0.
    Each operation's partials are its row's rules; iterative (a post-order with a stack)."""
    done: dict[int, object] = {}
    stack = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if type(node) is not Code or id(node) in done:
            continue
        if node.op == "var":
            name = tangents.get(node.args[0])
            done[id(node)] = var(name) if name else None
            continue
        if not ready:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args if type(a) is Code)
            continue
        ts = [done.get(id(a)) if type(a) is Code else None for a in node.args]
        if node.op in CONDITIONS:
            done[id(node)] = None
        elif node.op == "where":
            _, then, otherwise = ts
            done[id(node)] = None if then is None and otherwise is None else \
                Code("where", (node.args[0], 0.0 if then is None else then,
                               0.0 if otherwise is None else otherwise))
        else:
            rules = TABLE[node.op].partials
            total = None
            for i, t in enumerate(ts):
                if t is None:
                    continue
                term = _times(t, rules[i](CODE, *node.args, node))
                if term is None:
                    continue
                if total is None:
                    total = term
                elif type(term) is Code and term.op == "neg":  # a + (-b) is a - b, exactly
                    total = total - term.args[0]
                else:
                    total = total + term
            done[id(node)] = total
    return done.get(id(e)) if type(e) is Code else None
