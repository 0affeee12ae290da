"""The helpers generated code defines for itself, by the name the code calls: Python's and
NumPy/JAX's ``_sigmoid`` (``{np}`` for np or jnp), C's ``gc_sigmoid``.

A row spelled as a helper whose float primal is a function of :mod:`gradcli.engine.special`
(:data:`DEFINED`) has its helpers printed from that function's source, read with :mod:`ast`: each
is written once, and the code computes what eval computes, branch for branch. The printers know
the forms those definitions use: ``if``, ``while``, ``for k, b in enumerate(CONSTANTS,
start=1)``, assignments, ``raise`` (C: NaN), ``return``, conditional expressions (NumPy:
``where``), arithmetic, comparisons and ``math``'s functions; a module constant is its value.
Anything else is a TypeError, so a definition that grows past them fails its tests, not a
user's compiler. On arrays, a definition with a loop, or a row whose primal is ``math``'s (erf,
gamma: NumPy has none), runs a row at a time. Written out is only C's ``gc_mod``: Python's ``%``
(mod's primal, an operator with no Python source to print).
"""

from __future__ import annotations

import ast
import math
from functools import cache
from pathlib import Path

from ..engine import special
from ..engine.primitives import TABLE

# row name -> its float primal, for the rows whose helpers are printed from it
DEFINED = {name: row.primal for name, row in TABLE.items()
           if getattr(row.primal, "__module__", None) == special.__name__
           and row.code.get("c") == f"gc_{name}"}
_ROW = {f.__name__: name for name, f in DEFINED.items()}  # a definition's name -> its row's


@cache
def _source() -> dict[str, ast.FunctionDef]:
    """special.py's functions by name, parsed from the source beside the module (which Cython
    compiles: ``inspect`` finds no source for a compiled function)."""
    path = Path(special.__file__).with_name("special.py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


@cache
def _definition(name: str) -> ast.FunctionDef:
    """The row's function's tree, without its docstring and annotations."""
    tree = _copy(_source()[DEFINED[name].__name__])
    body = tree.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    tree.body = body
    tree.returns = None
    for arg in tree.args.args:
        arg.annotation = None
    return tree


def _constant(name: str):
    """The value of a module constant of special.py (a float or a tuple of floats), or None."""
    value = getattr(special, name, None)
    if isinstance(value, float) or (isinstance(value, tuple)
                                    and all(isinstance(v, float) for v in value)):
        return value
    return None


def _unsupported(node) -> TypeError:
    return TypeError(f"gradcli.code.helpers cannot print {ast.dump(node)[:80]}")


# -- Python ---------------------------------------------------------------------------------------

class _Python(ast.NodeTransformer):
    """A definition as a helper of generated Python: ``digamma`` is ``_digamma`` (``suffix``
    after it), a module constant its value (``math`` is imported by the code)."""

    def __init__(self, suffix: str = ""):
        self.suffix = suffix

    def visit_Name(self, node: ast.Name):
        if node.id in _ROW:
            return ast.copy_location(ast.Name(f"_{_ROW[node.id]}{self.suffix}", node.ctx), node)
        value = _constant(node.id)
        if value is None:
            return node
        literal = ast.Tuple([ast.Constant(v) for v in value], ast.Load()) \
            if isinstance(value, tuple) else ast.Constant(value)
        return ast.copy_location(literal, node)


def _copy(e):
    """A fresh copy of a cached tree (the transformers change the nodes they visit)."""
    return ast.parse(ast.unparse(e), mode="eval").body if isinstance(e, ast.expr) else \
        ast.parse(ast.unparse(e)).body[0]


@cache
def python_helper(helper: str, suffix: str = "") -> str:
    """``def _name(x): ...``: the Python helper ``_name`` (named ``_name`` + ``suffix``)."""
    tree = _Python(suffix).visit(_copy(_definition(helper.removeprefix("_"))))
    tree.name = helper + suffix
    return ast.unparse(ast.fix_missing_locations(tree))


# -- NumPy and JAX --------------------------------------------------------------------------------

def _by_rows(helper: str, scalar: str) -> str:
    """An array helper computing a Python function a row at a time, NaN outside its domain."""
    return (f"def {helper}(a):\n"
            f"    # NumPy has none: {scalar} a row at a time (NaN outside its domain)\n"
            f"    def row(x):\n"
            f"        try:\n"
            f"            return {scalar}(x)\n"
            f"        except (ValueError, ZeroDivisionError, OverflowError):\n"
            f"            return math.nan\n"
            f"    return {{np}}.asarray({{np}}.frompyfunc(row, 1, 1)(a), dtype={{np}}.float64)")


@cache
def array_helper(helper: str) -> str:
    """The NumPy/JAX helper ``_name``, ``{np}`` for np or jnp: the definition's assignments and
    return with NumPy's functions, a conditional expression as ``where``; a first ``if C:
    return A`` as ``where(C, A, B)``, the rest (B) computed where C does not hold (so B's 0/0 at
    a point of C is never computed). A definition with a loop, or math's primal: a row at a
    time."""
    name = helper.removeprefix("_")
    if name not in DEFINED:
        primal = TABLE[name].primal
        if getattr(primal, "__module__", None) != "math":
            raise KeyError(f"{helper}: its row's primal is neither special.py's nor math's")
        return _by_rows(helper, f"math.{primal.__name__}")
    tree = _definition(name)
    params = [a.arg for a in tree.args.args]
    body = tree.body
    lines = []
    guard = body[0] if isinstance(body[0], ast.If) else None
    if guard is not None:
        if guard.orelse or len(guard.body) != 1 or not isinstance(guard.body[0], ast.Return) \
                or len(params) != 1:
            return _row_at_a_time(name)
        x = params[0]
        lines += [f"near = {_numpy(guard.test)}", f"safe = {{np}}.where(near, 1.0, {x})"]
        body = [_Renamed(x, "safe").visit(_copy(s)) for s in body[1:]]
    if not (all(isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) for s in body[:-1])
            and isinstance(body[-1], ast.Return)):
        return _row_at_a_time(name)
    lines += [f"{s.targets[0].id} = {_numpy(s.value)}" for s in body[:-1]]
    result = _numpy(body[-1].value)
    if guard is not None:
        result = f"{{np}}.where(near, {_numpy(guard.body[0].value)}, {result})"
    lines.append(f"return {result}")
    return f"def _{name}({', '.join(params)}):\n" + "\n".join("    " + line for line in lines)


def _row_at_a_time(name: str) -> str:
    if len(_definition(name).args.args) != 1:
        raise _unsupported(_definition(name))
    return (python_helper(f"_{name}", "_row") + "\n\n\n"
            + _by_rows(f"_{name}", f"_{name}_row"))


def _numpy(e) -> str:
    return ast.unparse(_Numpy().visit(_copy(e)))


class _Renamed(ast.NodeTransformer):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name):
        return ast.Name(self.new, node.ctx) if node.id == self.old else node


class _Numpy(ast.NodeTransformer):
    """``math.sin`` and ``abs`` as ``{np}.sin`` and ``{np}.abs``, ``A if C else B`` as
    ``{np}.where(C, A, B)``."""

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id == "abs":
            node.func = ast.Name("{np}.abs", ast.Load())
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and f.value.id == "math":
            node.func = ast.Name(f"{{np}}.{f.attr}", ast.Load())
        else:
            raise _unsupported(node)
        return node

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        return ast.Call(ast.Name("{np}.where", ast.Load()), [node.test, node.body, node.orelse],
                        [])


# -- C ---------------------------------------------------------------------------------------------

_C_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Lt: "<",
                ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
                ast.And: "&&", ast.Or: "||"}
_C_FUNCTIONS = {"abs": "fabs", "fabs": "fabs", "floor": "floor", "log": "log", "tan": "tan",
                "sin": "sin", "cos": "cos", "exp": "exp", "sqrt": "sqrt", "log1p": "log1p"}

_C_MOD = '''static double gc_mod(double a, double b)
{
    /* Python's a % b: the sign of b (C's fmod has the sign of a) */
    double r = fmod(a, b);
    if (r != 0.0) {
        if ((b < 0) != (r < 0)) r += b;
    } else {
        r = copysign(0.0, b);
    }
    return r;
}'''


@cache
def c_helper(helper: str) -> str:
    """``static double gc_name(double x) {...}``: the C helper ``gc_name`` (a ValueError is
    NaN)."""
    if helper == "gc_mod":
        return _C_MOD
    name = helper.removeprefix("gc_")
    tree = _definition(name)
    params = [a.arg for a in tree.args.args]
    printer = _C(name)
    body = printer.block(tree.body, 1)
    doubles = sorted(printer.assigned - set(params) - printer.ints)
    lines = [f"static double gc_{name}({', '.join('double ' + p for p in params)})", "{"]
    for array_name, values in printer.arrays.items():
        lines.append(f"    static const double {array_name}[{len(values)}] = "
                     f"{{{', '.join(map(repr, values))}}};")
    if doubles:
        lines.append(f"    double {', '.join(doubles)};")
    if printer.ints:
        lines.append(f"    int {', '.join(sorted(printer.ints))};")
    return "\n".join(lines + body + ["}"])


class _C:
    """The statements and expressions of one definition in C99, with what it must declare."""

    def __init__(self, name: str):
        self.name = name
        self.assigned: set[str] = set()
        self.ints: set[str] = set()
        self.arrays: dict[str, tuple] = {}

    def block(self, statements, depth: int) -> list[str]:
        lines = []
        for s in statements:
            lines += self.statement(s, depth)
        return lines

    def statement(self, s, depth: int) -> list[str]:
        pad = "    " * depth
        if isinstance(s, ast.Return):
            return [f"{pad}return {self.whole(s.value)};"]
        if isinstance(s, ast.Raise):
            return [f"{pad}return NAN;"]
        if isinstance(s, ast.If):
            lines = [f"{pad}if ({self.whole(s.test)}) {{", *self.block(s.body, depth + 1)]
            if s.orelse:
                lines += [f"{pad}}} else {{", *self.block(s.orelse, depth + 1)]
            return lines + [f"{pad}}}"]
        if isinstance(s, ast.While):
            return [f"{pad}while ({self.whole(s.test)}) {{",
                    *self.block(s.body, depth + 1), f"{pad}}}"]
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name):
            self.assigned.add(s.targets[0].id)
            return [f"{pad}{s.targets[0].id} = {self.whole(s.value)};"]
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            self.assigned.add(s.target.id)
            op = _C_OPERATORS[type(s.op)]
            return [f"{pad}{s.target.id} {op}= {self.whole(s.value)};"]
        if isinstance(s, ast.For):
            return self.enumerate(s, depth)
        raise _unsupported(s)

    def enumerate(self, s: ast.For, depth: int) -> list[str]:
        """``for k, b in enumerate(CONSTANTS, start=1)``: k counts from 1, b is the element."""
        call = s.iter
        ok = (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
              and call.func.id == "enumerate" and len(call.args) == 1
              and isinstance(call.args[0], ast.Name) and isinstance(s.target, ast.Tuple)
              and len(s.target.elts) == 2 and [k.arg for k in call.keywords] == ["start"])
        values = _constant(call.args[0].id) if ok else None
        if not isinstance(values, tuple):
            raise _unsupported(s)
        start = call.keywords[0].value.value
        k, b = (t.id for t in s.target.elts)
        array_name = call.args[0].id.strip("_").lower()
        self.arrays[array_name] = values
        self.ints.add(k)
        self.assigned.add(b)
        pad = "    " * depth
        last = start + len(values) - 1
        return [f"{pad}for ({k} = {start}; {k} <= {last}; {k}++) {{",
                f"{pad}    {b} = {array_name}[{k} - {start}];",
                *self.block(s.body, depth + 1), f"{pad}}}"]

    def whole(self, e) -> str:
        """An expression standing alone (a statement's, an argument's): without the parentheses
        :meth:`expression` puts around an operation."""
        text = self.expression(e)
        operation = isinstance(e, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp))
        return text[1:-1] if operation and not isinstance(getattr(e, "op", None), ast.Pow) \
            else text

    def expression(self, e) -> str:
        if isinstance(e, ast.Constant) and type(e.value) in (int, float):
            return repr(e.value)
        if isinstance(e, ast.Name):
            value = _constant(e.id)
            return repr(value) if isinstance(value, float) else e.id
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) \
                and e.value.id == "math" and e.attr in ("pi", "e"):
            return repr(getattr(math, e.attr))
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Pow):
            return f"pow({self.expression(e.left)}, {self.expression(e.right)})"
        if isinstance(e, ast.BinOp) and type(e.op) in _C_OPERATORS:
            return (f"({self.expression(e.left)} {_C_OPERATORS[type(e.op)]} "
                    f"{self.expression(e.right)})")
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return f"(-{self.expression(e.operand)})"
        if isinstance(e, ast.BoolOp):
            op = f" {_C_OPERATORS[type(e.op)]} "
            return "(" + op.join(self.expression(v) for v in e.values) + ")"
        if isinstance(e, ast.IfExp):
            return (f"({self.expression(e.test)} ? {self.expression(e.body)} : "
                    f"{self.expression(e.orelse)})")
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            return (f"({self.expression(e.left)} {_C_OPERATORS[type(e.ops[0])]} "
                    f"{self.expression(e.comparators[0])})")
        if isinstance(e, ast.Call) and not e.keywords:
            return f"{self.function(e.func)}({', '.join(map(self.whole, e.args))})"
        raise _unsupported(e)

    def function(self, f) -> str:
        if isinstance(f, ast.Name) and f.id in _ROW:
            return f"gc_{_ROW[f.id]}"
        if isinstance(f, ast.Name) and f.id in _C_FUNCTIONS:
            return _C_FUNCTIONS[f.id]
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and f.value.id == "math" and f.attr in _C_FUNCTIONS:
            return _C_FUNCTIONS[f.attr]
        raise _unsupported(f)
