"""Hypothesis strategies: well-formed gradcli programs over the whole catalogue, with a point
inside every function's domain.

An expression is generated together with its value at the point, computed with the catalogue's
primals in the order gradcli's forward sweep uses, so every argument is kept inside its function's
domain *by construction*: an argument whose value is outside the domain, at or near a kink or a
singular point, or large enough to overflow later, is shifted onto an anchor (``arg + c`` or
``arg - c``) where the function is smooth. Nothing is filtered out. Smoothness is probed with the
primal alone (never with gradcli's derivative rules, which are what the properties test).

The catalogue is read from :data:`gradcli.engine.primitives.TABLE` and :func:`function_names`, so a new
row is generated (under its name and every alias) the moment it is added.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from hypothesis import settings, strategies as st

from gradcli.language.ast import Assign, Binary, Call, Num, Program, Unary, Var
from gradcli.language.printer import format_constant
from gradcli.engine.primitives import BINARY_OPERATORS, CONSTANTS, TABLE, Primitive, function_names, lookup

THOROUGH = 500  # the "thorough" profile's examples a property (tests/conftest.py)


def examples(n: int) -> int:
    """A property's number of examples: ``n`` under the thorough profile, scaled to the profile
    in force (a fifth of it in CI and by default, forty times it in the long search), at least 1.
    A property that costs more than most names its count with this, so every profile keeps the
    same proportions between properties."""
    return max(1, n * settings.default.max_examples // THOROUGH)


INPUT_NAMES = ("x", "y", "z", "θ")  # a Unicode name is an ordinary input
ASSIGNED_NAMES = ("a", "b", "c", "t", "e")  # assigning e shadows the constant from then on
CALLABLE = tuple(function_names())  # every function and alias, pow included
BINARY = tuple(BINARY_OPERATORS)
COMPOUND = ("+=", "-=", "*=", "/=")
FAILS = (ValueError, ZeroDivisionError, OverflowError)

# Numbers written in the source: small integers (exact powers), common decimals, and any float.
NUMBERS = st.one_of(
    st.integers(0, 5).map(float),
    st.sampled_from([0.5, 0.25, 0.1, 1.5, 2.5, 10.0, 100.0, 1e-3, 1e3]),
    st.floats(0.0, 50.0, allow_subnormal=False),
)
# Input values: no subnormals or denormal-adjacent magnitudes, so underflow is not in play.
INPUT_VALUES = st.one_of(
    st.sampled_from([0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0]),
    st.builds(lambda sign, v: sign * v, st.sampled_from([1.0, -1.0]), st.floats(1e-6, 8.0)),
)


@dataclass(frozen=True)
class Gen:
    """A generated expression, its float value at the point, and whether it folds to a constant."""

    expr: object
    value: float
    const: bool


@dataclass(frozen=True)
class Case:
    """A generated program and a point inside the domain of every operation it evaluates."""

    program: Program
    point: dict[str, float]

    def calls(self) -> set[str]:
        """Every function name and operator the program uses (for coverage checks)."""
        seen, stack = set(), list(self.program.statements)
        while stack:
            node = stack.pop()
            t = type(node)
            if t is Assign:
                seen.add(node.op)
                stack.append(node.value)
            elif t is Call:
                seen.add(node.name)
                stack.extend(node.args)
            elif t is Binary:
                seen.add(node.op)
                stack += [node.left, node.right]
            elif t is Unary:
                seen.add("unary" + node.op)
                stack.append(node.operand)
        return seen


def in_range(v: float) -> bool:
    """Values stay far from overflow and underflow, so float64 is exact enough to compare."""
    return v == 0 or 1e-30 <= abs(v) <= 1e8


def smooth(prim: Primitive, args: list[float], const: list[bool]) -> bool:
    """Whether ``prim`` is defined, in range, and smooth (no kink, jump or pole nearby) at ``args``.

    Only arguments that are not constants are probed: gradcli differentiates only those
    (``(-2)^3`` is fine; ``x^y`` at x < 0 is not). Slopes are compared left and right (a kink)
    and at two scales (an infinite slope, as cbrt's at 0).
    """
    if prim.name == "pow" and args[0] <= 0 and (not const[1] or (args[0] == 0 and args[1] <= 0)):
        return False  # pow's documented domain: a = 0 needs b > 0; d/db (a^b ln a) needs a > 0
    try:
        y = prim.primal(*args)
    except FAILS:
        return False
    if not in_range(y):
        return False
    for k, a in enumerate(args):
        if const[k]:
            continue
        h = 1e-4 * max(1.0, abs(a))
        try:
            lo, hi, near_lo, near_hi = (prim.primal(*args[:k], a + s, *args[k + 1:])
                                        for s in (-h, h, -h / 16, h / 16))
        except FAILS:
            return False
        slopes = ((y - lo) / h, (hi - y) / h, (near_hi - near_lo) * 8 / h)
        if max(map(abs, slopes)) > 1e6:
            return False
        if max(slopes) - min(slopes) > 1e-2 * max(1.0, *map(abs, slopes)):
            return False
    return True


_GRID = (-2.3, -0.7, -0.2, 0.3, 0.6, 1.4, 2.5, 3.7)
# Per primitive: argument tuples where it is smooth in every argument; repairs shift onto these.
ANCHORS: dict[str, list[tuple[float, ...]]] = {
    name: [args for args in itertools.product(_GRID, repeat=p.arity)
           if smooth(p, list(args), [False] * p.arity)]
    for name, p in TABLE.items()
}


def number(v: float):
    """A literal for ``v`` as the parser would build it (no negative Num)."""
    return Num(v) if v >= 0 else Unary("-", Num(-v))


def shifted(g: Gen, target: float) -> Gen:
    """``g`` moved onto ``target`` by adding a constant (the value as gradcli computes it)."""
    d = target - g.value + 0.0  # + 0.0: no Num(-0.0), which the parser never builds
    if d >= 0:
        return Gen(Binary("+", g.expr, Num(d)), g.value + d, g.const)
    return Gen(Binary("-", g.expr, Num(-d)), g.value - -d, g.const)


def apply(prim: Primitive, make, args: list[Gen], draw) -> Gen:
    """``make(arg exprs)`` for ``prim``, with the arguments repaired onto an anchor if needed."""
    values, const = [g.value for g in args], [g.const for g in args]
    if not smooth(prim, values, const):
        anchor = draw(st.sampled_from(ANCHORS[prim.name]))
        args = [shifted(g, t) for g, t in zip(args, anchor)]
        values, const = [g.value for g in args], [g.const for g in args]
        if not smooth(prim, values, const):  # rare: the shift itself rounded off the anchor
            args = [Gen(number(t), t, True) for t in anchor]
            values, const = list(anchor), [True] * len(anchor)
    return Gen(make([g.expr for g in args]), prim.primal(*values), all(const))


class _Builder:
    """Draws one program: inputs, assignments (with reassignment) and a final expression."""

    def __init__(self, draw, point: dict[str, float], max_depth: int):
        self.draw, self.point, self.max_depth = draw, point, max_depth
        self.env: dict[str, Gen] = {}  # assigned name -> its current value
        self.pool: list[Gen] = []  # subexpressions built so far, for reuse

    def leaf(self) -> Gen:
        draw = self.draw
        kinds = ["input", "input", "number", "constant"]
        if self.env:
            kinds += ["assigned", "assigned"]
        if self.pool:
            kinds.append("reuse")
        kind = draw(st.sampled_from(kinds))
        if kind == "input":
            name = draw(st.sampled_from(sorted(self.point)))
            return Gen(Var(name), self.point[name], False)
        if kind == "assigned":
            name = draw(st.sampled_from(sorted(self.env)))
            g = self.env[name]
            return Gen(Var(name), g.value, g.const)
        if kind == "constant":
            name = draw(st.sampled_from(sorted(CONSTANTS)))
            if name in self.env:  # shadowed: reads the assigned value
                return Gen(Var(name), self.env[name].value, self.env[name].const)
            return Gen(Var(name), CONSTANTS[name], True)
        if kind == "reuse":
            return draw(st.sampled_from(self.pool))
        v = draw(NUMBERS)
        return Gen(Num(v), v, True)

    def expression(self, depth: int) -> Gen:
        draw = self.draw
        if depth <= 0 or draw(st.integers(0, 4)) == 0:
            return self.leaf()
        kind = draw(st.sampled_from(["call", "call", "binary", "binary", "unary"]))
        if kind == "unary":
            op = draw(st.sampled_from("-+"))
            g = self.expression(depth - 1)
            value = -g.value if op == "-" else g.value
            out = Gen(Unary(op, g.expr), value, g.const)
        elif kind == "binary":
            op = draw(st.sampled_from(BINARY))
            args = [self.expression(depth - 1), self.expression(depth - 1)]
            out = apply(TABLE[BINARY_OPERATORS[op]], lambda e: Binary(op, *e), args, draw)
        else:
            name = draw(st.sampled_from(CALLABLE))
            prim = lookup(name)
            args = [self.expression(depth - 1) for _ in range(prim.arity)]
            out = apply(prim, lambda e: Call(name, tuple(e)), args, draw)
        self.pool.append(out)
        return out

    def statement(self):
        draw = self.draw
        name = draw(st.sampled_from(ASSIGNED_NAMES))
        g = self.expression(self.max_depth)
        if name in self.env and draw(st.booleans()):
            op = draw(st.sampled_from(COMPOUND))
            current = self.env[name]
            prim = TABLE[BINARY_OPERATORS[op[0]]]
            if smooth(prim, [current.value, g.value], [current.const, g.const]):
                self.env[name] = Gen(None, prim.primal(current.value, g.value),
                                     current.const and g.const)
                return Assign(name, op, g.expr)
        self.env[name] = g
        return Assign(name, "=", g.expr)

    def assign(self):
        """A statement; the subexpressions kept for reuse are dropped (they may read old values)."""
        stmt = self.statement()
        self.pool.clear()
        return stmt


@st.composite
def cases(draw, max_statements: int = 3, max_depth: int = 4) -> Case:
    """A program (assignments, reassignment, a final expression) and a point in its domain."""
    names = draw(st.lists(st.sampled_from(INPUT_NAMES), min_size=1, max_size=3, unique=True))
    point = {name: draw(INPUT_VALUES) for name in names}
    builder = _Builder(draw, point, max_depth)
    statements = [builder.assign() for _ in range(draw(st.integers(0, max_statements)))]
    if not statements or draw(st.integers(0, 3)):  # usually end with an expression
        statements.append(builder.expression(max_depth).expr)
    return Case(Program(tuple(statements)), point)


# -- ASTs for the parser/printer round trip: any shape the grammar can build --------------------

def _names():
    # Superscript digits are word characters to Python but a power to a reader: the parser
    # refuses x² (write x^2), so a generated name never holds one.
    # deg is the constant pi/180: the parser reads it as that, never as a name.
    return st.one_of(st.sampled_from(INPUT_NAMES + ASSIGNED_NAMES + CALLABLE),
                     st.from_regex(r"[^\W\d]\w{0,6}", fullmatch=True).filter(
                         lambda name: not any(c in "⁰¹²³⁴⁵⁶⁷⁸⁹" for c in name)
                         and name != "deg"))


def _extend(children):
    return st.one_of(
        st.builds(Unary, st.sampled_from("-+"), children),
        st.builds(Binary, st.sampled_from(BINARY), children, children),
        st.builds(lambda name, args: Call(name, tuple(args)), _names(),
                  st.lists(children, max_size=3)),
    )


expressions = st.recursive(
    st.one_of(st.builds(Var, _names()),
              st.builds(Num, st.floats(0.0, allow_infinity=False, allow_nan=False))),
    _extend, max_leaves=25)
"""Any expression AST the parser can produce (not necessarily meaningful: ``f()`` is fine)."""

programs = st.builds(
    lambda stmts, last: Program(tuple(stmts) + ((last,) if last is not None else ())),
    st.lists(st.builds(Assign, _names(), st.sampled_from(("=",) + COMPOUND), expressions),
             max_size=3),
    st.one_of(st.none(), expressions),
).filter(lambda p: p.statements)
"""Any program AST the parser can produce."""


@st.composite
def multi_output_cases(draw, min_outputs: int = 2, max_outputs: int = 5, max_statements: int = 2,
                       max_depth: int = 3) -> Case:
    """A program with several outputs: assignments, then ``min_outputs``..``max_outputs`` bare
    expressions (an assignment may come between two of them), and a point in its domain."""
    names = draw(st.lists(st.sampled_from(INPUT_NAMES), min_size=1, max_size=3, unique=True))
    point = {name: draw(INPUT_VALUES) for name in names}
    builder = _Builder(draw, point, max_depth)
    statements = [builder.assign() for _ in range(draw(st.integers(0, max_statements)))]
    for k in range(draw(st.integers(min_outputs, max_outputs))):
        if k and draw(st.integers(0, 4)) == 0:
            statements.append(builder.assign())
        statements.append(builder.expression(max_depth).expr)
    return Case(Program(tuple(statements)), point)


def outputs_of(program: Program) -> list[Program]:
    """One single-output program per bare expression of ``program``: the statements before it
    (its assignments) and the expression, so each output's meaning stands alone."""
    singles, assignments = [], []
    for stmt in program.statements:
        if type(stmt) is Assign:
            assignments.append(stmt)
        else:
            singles.append(Program(tuple(assignments) + (stmt,)))
    return singles


# -- natural spellings: the same program as a person writes it -----------------------------------

_SUPERSCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
# an inverse function and the function whose ^-1 it is (sin^-1(x) is asin(x))
_INVERSE_OF = {prim.undoes: name for name, prim in TABLE.items() if prim.undoes}


@st.composite
def natural_spellings(draw, program: Program) -> str:
    """``program`` written as a person writes math (docs/language.md, "Writing math
    naturally"), each choice drawn: ``2 x`` or ``2·x`` for ``2*x``, ``x²`` for ``x^2``,
    ``|x|`` for ``abs(x)``, ``√(x)`` for ``sqrt(x)``, ``sin^2(x)`` for ``sin(x)^2``,
    ``sin⁻¹(x)`` for ``asin(x)``, ``−`` for ``-``. Operands that are not a name or a number
    are put in parentheses, so every choice is a valid text whose reading is ``program``."""
    lines = []
    for stmt in program.statements:
        if type(stmt) is Assign:
            lines.append(f"{stmt.name} {stmt.op} {_natural(draw, stmt.value)}")
        else:
            lines.append(_natural(draw, stmt))
    return draw(st.sampled_from(["\n", "; "])).join(lines)


def _superscript(value: float) -> str | None:
    if value.is_integer() and 0 <= value < 100:
        return "".join(_SUPERSCRIPT_DIGITS[int(d)] for d in str(int(value)))
    return None


def _natural(draw, node) -> str:
    """One expression, spelled naturally (recursive: generated expressions are shallow)."""
    t = type(node)
    if t is Num:
        return format_constant(node.value, named=False)
    if t is Var:
        return node.name
    if t is Unary:
        sign = node.op if node.op == "+" else draw(st.sampled_from(["-", "−"]))
        return f"{sign}{_operand(draw, node.operand)}"
    if t is Call:
        return _natural_call(draw, node)
    left, right = node.left, node.right
    if node.op == "*":
        sep = draw(st.sampled_from(["*", "·", "×", "⋅", " ", ""]))
        a, b = _operand(draw, left), _operand(draw, right)
        if sep == "" and not (a.endswith(")") or b.startswith("(")):
            sep = " "  # 2e5 would be a number, xy a name: juxtaposed leaves keep a space
        return f"{a}{sep}{b}"
    if node.op == "^":
        power = _superscript(right.value) if type(right) is Num else None
        if (type(right) is Unary and right.op == "-" and type(right.operand) is Num
                and _superscript(right.operand.value)):
            power = "⁻" + _superscript(right.operand.value)
        if (type(left) is Call and len(left.args) == 1 and left.name not in ("abs", "sqrt", "cbrt")
                and type(right) is Num and right.value >= 1 and right.value.is_integer()
                and draw(st.booleans())):  # sin^2(x)
            written = power if power and draw(st.booleans()) else f"^{int(right.value)}"
            return f"{left.name}{written}({_natural(draw, left.args[0])})"
        if power and draw(st.booleans()):
            return f"{_operand(draw, left)}{power}"
        return f"{_operand(draw, left)}{draw(st.sampled_from(['^', '**']))}{_operand(draw, right)}"
    op = {"/": ["/", "÷"], "-": ["-", "−"]}.get(node.op, [node.op])
    return f"{_operand(draw, left)} {draw(st.sampled_from(op))} {_operand(draw, right)}"


def _natural_call(draw, node: Call) -> str:
    if len(node.args) == 1 and draw(st.booleans()):
        arg = node.args[0]
        if node.name == "abs":
            return f"|{_natural(draw, arg)}|"
        if node.name in ("sqrt", "cbrt"):
            return f"{'√' if node.name == 'sqrt' else '∛'}{_operand(draw, arg)}"
        if node.name in _INVERSE_OF:
            inverse = draw(st.sampled_from(["^-1", "⁻¹"]))
            return f"{_INVERSE_OF[node.name]}{inverse}({_natural(draw, arg)})"
    args = ", ".join(_natural(draw, arg) for arg in node.args)
    return f"{node.name}{draw(st.sampled_from(['', ' ']))}({args})"


def _operand(draw, node) -> str:
    """An operand: a name or a number as it is, anything else in parentheses."""
    text = _natural(draw, node)
    if type(node) is Var or (type(node) is Num and not text.startswith("-")):
        return text
    return f"({text})"
