"""The special functions generated code defines for itself (digamma, trigamma, sinc), printed
in Python, NumPy/JAX and C from the engine's own float functions (:mod:`gradcli.engine.special`):
each is written once, and the code computes what eval computes, operation for operation.

A definition is read with :mod:`ast` (as ``inspect`` finds it) and printed statement by
statement. The printers know the few forms those definitions use: ``if``, ``while``, ``for k, b
in enumerate(CONSTANTS, start=1)``, assignments, ``raise`` (C: NaN), ``return``, arithmetic,
comparisons and ``math``'s functions; a module constant is written as its value. Anything else
is a TypeError, so a definition that grows past them fails its tests, not a user's compiler.
"""

from __future__ import annotations

import ast
import inspect
import math
from functools import cache

from ..engine import special

DEFINED = {"digamma": special.digamma, "trigamma": special.trigamma, "sinc": special.sinc}


@cache
def _definition(name: str) -> ast.FunctionDef:
    """The function's tree, without its docstring and annotations."""
    tree = ast.parse(inspect.getsource(DEFINED[name])).body[0]
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
    """A definition as a helper of generated Python: ``digamma`` is ``_digamma``, a module
    constant its value (``math`` is imported by the code)."""

    def visit_Name(self, node: ast.Name):
        if node.id in DEFINED:
            return ast.copy_location(ast.Name(f"_{node.id}", node.ctx), node)
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


def python_helper(name: str) -> str:
    """``def _name(x): ...``: the definition as a Python helper."""
    tree = _Python().visit(_copy(_definition(name)))
    tree.name = f"_{name}"
    return ast.unparse(ast.fix_missing_locations(tree))


def array_helper(name: str) -> str:
    """The definition on arrays, ``{np}`` for np or jnp: one that is ``if C: return A`` then
    ``return B`` as ``where(C, A, B)``, B computed where C does not hold (so B's 0/0 at a point
    of C is never computed); any other a row at a time is the caller's (NumPy has no loop)."""
    tree = _definition(name)
    if not (len(tree.body) == 2 and isinstance(tree.body[0], ast.If)
            and not tree.body[0].orelse and len(tree.body[0].body) == 1
            and isinstance(tree.body[0].body[0], ast.Return)
            and isinstance(tree.body[1], ast.Return) and len(tree.args.args) == 1):
        raise _unsupported(tree)
    x = tree.args.args[0].arg
    condition, then = tree.body[0].test, tree.body[0].body[0].value
    otherwise = _Renamed(x, "safe").visit(_copy(tree.body[1].value))

    def text(e) -> str:
        return ast.unparse(_Numpy().visit(_copy(e)))
    return (f"def _{name}({x}):\n"
            f"    near = {text(condition)}\n"
            f"    safe = {{np}}.where(near, 1.0, {x})\n"
            f"    return {{np}}.where(near, {text(then)}, {text(otherwise)})")


class _Renamed(ast.NodeTransformer):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name):
        return ast.Name(self.new, node.ctx) if node.id == self.old else node


class _Numpy(ast.NodeTransformer):
    """``math.sin`` and ``abs`` as ``{np}.sin`` and ``{np}.abs``."""

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


# -- C ---------------------------------------------------------------------------------------------

_C_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Lt: "<",
                ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
                ast.And: "&&", ast.Or: "||"}
_C_FUNCTIONS = {"abs": "fabs", "fabs": "fabs", "floor": "floor", "log": "log", "tan": "tan",
                "sin": "sin", "cos": "cos", "exp": "exp", "sqrt": "sqrt"}


def c_helper(name: str) -> str:
    """``static double gc_name(double x) {...}``: the definition as a C helper (a ValueError is
    NaN)."""
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
            return [f"{pad}return {self.expression(s.value)};"]
        if isinstance(s, ast.Raise):
            return [f"{pad}return NAN;"]
        if isinstance(s, ast.If):
            lines = [f"{pad}if ({self.expression(s.test)}) {{", *self.block(s.body, depth + 1)]
            if s.orelse:
                lines += [f"{pad}}} else {{", *self.block(s.orelse, depth + 1)]
            return lines + [f"{pad}}}"]
        if isinstance(s, ast.While):
            return [f"{pad}while ({self.expression(s.test)}) {{",
                    *self.block(s.body, depth + 1), f"{pad}}}"]
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name):
            self.assigned.add(s.targets[0].id)
            return [f"{pad}{s.targets[0].id} = {self.expression(s.value)};"]
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            self.assigned.add(s.target.id)
            op = _C_OPERATORS[type(s.op)]
            return [f"{pad}{s.target.id} {op}= {self.expression(s.value)};"]
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
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            return (f"({self.expression(e.left)} {_C_OPERATORS[type(e.ops[0])]} "
                    f"{self.expression(e.comparators[0])})")
        if isinstance(e, ast.Call) and not e.keywords:
            return f"{self.function(e.func)}({', '.join(map(self.expression, e.args))})"
        raise _unsupported(e)

    def function(self, f) -> str:
        if isinstance(f, ast.Name) and f.id in DEFINED:
            return f"gc_{f.id}"
        if isinstance(f, ast.Name) and f.id in _C_FUNCTIONS:
            return _C_FUNCTIONS[f.id]
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and f.value.id == "math" and f.attr in _C_FUNCTIONS:
            return _C_FUNCTIONS[f.attr]
        raise _unsupported(f)
