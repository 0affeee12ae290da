"""Generated code for programs with array inputs: NumPy, JAX or C loops over flat arrays, one
statement per array node.

The program is lowered to array nodes (:mod:`gradcli.engine.arraynodes`, the shapes given) and
both sweeps are printed, not run: the forward sweep one statement per node (``v3 = np.matmul(X,
w)``), the reverse sweep one statement per contribution, each written by the node's own
vector-Jacobian rule (:data:`~gradcli.engine.arraynodes.VJP`) run on :class:`CodeArrays`, a
namespace whose values are code (:class:`~gradcli.symbolic.adjoint.Code`) and whose array
operations print NumPy's (or ``jax.numpy``'s) calls, or, in C (:class:`CArrays`), loops over
flat row-major arrays: an elementwise node's partials are its row's rules, printed as ``gradcli
codegen`` prints them for scalars.

The shift of ``logsumexp`` and ``softmax`` (their ``max``) carries an adjoint that is 0
exactly, as the symbolic sweep of :mod:`gradcli.symbolic.arrays` shows: its statements are left
out (they would add a rounding error times the max's weights). A ``max``, ``min`` or ``prod``
reduction whose adjoint is not 0 is written as ``gradcli eval`` computes it
(:meth:`~gradcli.engine.arraynodes.NumpyArrays.others_product`, ``chain_weights``): cumulative
products, and the max or min row's own partials at each step of the chain.
"""

from __future__ import annotations

import re

from ..engine.arraynodes import lower_for_gradient, run
from ..engine.graph import wrt_names
from ..engine.arrays import shape_text, size, transposed
from ..errors import InputError
from ..symbolic.adjoint import CODE, Code
from ..symbolic.arrays import broadcast, flatten, index_text, zero_adjoints
from . import names
from .helpers import array_helper, c_helper
from .printer import Printer, comment_lines

Shape = tuple[int, ...]


def _Value(op: str, args: tuple) -> Code:
    """A variable of the generated code (an array node's value or adjoint)."""
    return Code(op, args)


class CodeArrays:
    """The namespace of the array rules on code: each array operation a statement of its own
    (a new variable ``v_t1``, ``v_t2``, ...), so every value the rules pass on is a variable with
    a known shape."""

    def __init__(self, lang: str, printer: Printer):
        self.np = "jnp" if lang == "jax" else "np"
        self.lang = lang
        self.rows = CODE
        self.printer = printer
        self.lines: list[str] = []
        self.shapes: dict[str, Shape] = {}
        self._count = 0
        self.next_name: str | None = None  # the name the next statement defines

    def let(self, text: str, shape: Shape, name: str | None = None) -> _Value:
        """A statement ``name = text`` (a fresh name unless given), its variable."""
        if name is None and self.next_name is not None:
            name, self.next_name = self.next_name, None  # the node's own statement
        if name is None:
            self._count += 1
            name = f"v_t{self._count}"  # (v_...: a name no input keeps, code.names)
        self.lines.append(f"{name} = {text}")
        self.shapes[name] = tuple(shape)
        return _Value("var", (name,))

    def text(self, e) -> str:
        return self.printer.expr(e)

    # -- the statements the sweeps' driver asks for
    def comment(self, text: str) -> None:
        self.lines.append(f"# {text}")

    def constant_array(self, values, shape: Shape, name: str):
        return self.let(f"{self.np}.array({values!r}, dtype={self.np}.float64)", shape, name)

    def assign(self, e, shape: Shape, name: str):
        return self.let(self.text(e), shape, name)

    def accumulate(self, target: str, c, shape: Shape):
        # a new array, not +=: an adjoint may be a broadcast view, and JAX's are immutable
        return self.let(f"{target} + {_wrapped(c, self.text(c))}", shape, target)

    def result(self, a, shape: Shape) -> str:
        return f"{self.np}.zeros({shape})" if a is None else self.full(a, shape)

    def shape(self, e) -> Shape:
        """The shape of code: its variables' shapes broadcast."""
        out: Shape = ()
        stack = [e]
        while stack:
            c = stack.pop()
            if type(c) is Code:
                if c.op == "var":
                    base, _, item = c.args[0].partition("[")
                    s = self.shapes.get(base, ())
                    out = broadcast(out, s[1:] if item else s)
                else:
                    stack.extend(c.args)
        return out

    def row(self, row):
        return getattr(CODE, row.name)

    def item(self, g, k: int):
        """``g[k]`` (a stack's adjoint): item k along the first axis."""
        return self.let(f"{self.text(g)}[{k}]", self.shape(g)[1:])

    def times(self, g, local):
        if type(local) is float and local in (1.0, -1.0):  # (vb3 = vb5, not vb5 * 1.0)
            return g if local == 1.0 else -g
        return g * local

    def full(self, e, shape: Shape) -> str:
        text = self.text(e)
        return text if self.shape(e) == tuple(shape) else \
            f"{self.np}.broadcast_to({text}, {tuple(shape)})"

    def reshape(self, x, shape):
        return self.let(f"{self.np}.reshape({self.full(x, self._size_shape(x))}, "
                        f"{tuple(shape)})", shape)

    def _size_shape(self, x) -> Shape:
        return self.shapes.get(x.args[0], self.shape(x)) if x.op == "var" else self.shape(x)

    def transpose(self, x):
        s = self.shape(x)
        return self.let(f"{self.np}.transpose({self.text(x)})", s[::-1])

    def matmul(self, a, b):
        sa, sb = self.shape(a), self.shape(b)
        return self.let(f"{self.np}.matmul({self.text(a)}, {self.text(b)})", sa[:-1] + sb[1:])

    def as_matrix(self, x, left: bool):
        s = self.shape(x)
        if len(s) == 2:
            return x
        n = size(s)
        return self.reshape(x, (1, n) if left else (n, 1))

    def reduce(self, kind: str, x, axis):
        s = self.shape(x)
        f = {"add": "sum", "mul": "prod", "max": "max", "min": "min"}[kind]
        out = () if axis is None else s[:axis] + s[axis + 1:]
        return self.let(f"{self.np}.{f}({self.text(x)}{'' if axis is None else f', axis={axis}'})",
                        out)

    def take(self, x, positions, shape):
        own, shape = self.shape(x), tuple(shape)
        if list(positions) == list(range(size(own))):
            return self.let(f"{self.np}.reshape({self.text(x)}, {shape})", shape)
        if len(own) == 2 and (shape, list(positions)) == transposed(own):
            return self.transpose(x)
        index = index_text(own, list(positions), shape)
        if index is not None:
            return self.let(f"{self.text(x)}[{index}]", shape)
        return self.let(f"{self.np}.reshape({self.np}.ravel({self.text(x)})"
                        f"[{self.np}.array({list(positions)})], {shape})", shape)

    def scatter(self, g, positions, taken, shape):
        np, shape = self.np, tuple(shape)
        values = f"{np}.ravel({self.full(g, tuple(taken))})"
        index = f"{np}.array({list(positions)})"
        if self.lang == "jax":
            flat = f"{np}.zeros({size(shape)}).at[{index}].add({values})"
        else:
            flat = f"{np}.bincount({index}, weights={values}, minlength={size(shape)})"
        return self.let(f"{np}.reshape({flat}, {shape})", shape)

    def stack(self, xs):
        first = self.shape(xs[0])
        return self.let(f"{self.np}.stack([{', '.join(self.text(x) for x in xs)}])",
                        (len(xs), *first))

    def unbroadcast(self, g, shape):
        shape = tuple(shape)
        s = self.shape(g)
        text = self.text(g)
        if s == shape:
            return g
        lead = len(s) - len(shape)
        if lead > 0:
            text = f"{self.np}.sum({text}, axis={tuple(range(lead))})"
            s = s[lead:]
        kept = tuple(i for i, n in enumerate(shape) if n == 1 and i - len(shape) + len(s) >= 0
                     and s[i - len(shape) + len(s)] != 1)
        if kept and len(s) == len(shape):
            text = f"{self.np}.sum({text}, axis={kept}, keepdims=True)"
            s = tuple(1 if i in kept else n for i, n in enumerate(s))
        if s != shape:
            text = f"{self.np}.broadcast_to({text}, {shape})"
        return self.let(text, shape)

    def expand(self, g, axis, shape):
        text = self.text(g)
        if axis is not None:
            text = f"{self.np}.expand_dims({text}, {axis})"
        return self.let(f"{self.np}.broadcast_to({text}, {tuple(shape)})", shape)

    # prod, max and min: the algorithms of NumpyArrays.others_product and .chain_weights, step
    # for step, as statements (the same operations in the same order as gradcli eval's)
    def _along(self, x, axis):
        """``x`` with the axis reduced last (all of ``x``, flat, for None), and the function
        that puts an array of that layout back in ``x``'s shape."""
        s, np, t = self.shape(x), self.np, self.text(x)
        if axis is None and len(s) != 1:
            return (self.let(f"{np}.ravel({t})", (size(s),)),
                    lambda v: self.let(f"{np}.reshape({self.text(v)}, {s})", s))
        if axis is None or axis == len(s) - 1:
            return x, lambda v: v
        moved = s[:axis] + s[axis + 1:] + (s[axis],)
        return (self.let(f"{np}.moveaxis({t}, {axis}, -1)", moved),
                lambda v: self.let(f"{np}.moveaxis({self.text(v)}, -1, {axis})", s))

    def others_product(self, x, axis):
        """For each element, the product of the others along ``axis``: the product of those
        before it times the product of those after it (cumulative products; no division)."""
        np = self.np
        moved, back = self._along(x, axis)
        s = self.shape(moved)
        t, ones = self.text(moved), f"{np}.ones({s[:-1] + (1,)})"
        before = self.let(f"{np}.concatenate([{ones}, {np}.cumprod({t}, axis=-1)[..., :-1]], "
                          "axis=-1)", s)
        after = self.let(f"{np}.concatenate([{np}.cumprod({t}[..., ::-1], axis=-1)"
                         f"[..., ::-1][..., 1:], {ones}], axis=-1)", s)
        return back(self.let(f"{self.text(before)} * {self.text(after)}", s))

    def _running(self, kind: str, t: str, s: Shape) -> str:
        """The running max or min along the last axis."""
        if self.lang == "jax":
            return f"jax.lax.cum{kind}({t}, axis={len(s) - 1})"
        return f"np.{'maximum' if kind == 'max' else 'minimum'}.accumulate({t}, axis=-1)"

    def chain_weights(self, row, kind, x, axis):
        """For max and min: each element's share of the result, as the chain ``row(row(x0,
        x1), x2) ...`` gives it: the row's own partials (printed as code, so its convention at
        a tie) at each step, times the keeps of the later steps."""
        np = self.np
        moved, back = self._along(x, axis)
        s = self.shape(moved)
        if s[-1] == 1:
            return back(self.let(f"{np}.ones({s})", s))
        t, steps = self.text(moved), s[:-1] + (s[-1] - 1,)
        running = self.let(self._running(kind, t, s), s)
        r = self.text(running)
        prev, cur = self.let(f"{r}[..., :-1]", steps), self.let(f"{t}[..., 1:]", steps)
        ans = self.let(f"{r}[..., 1:]", steps)
        keep = self.let(self.full(row.partials[0](self.rows, prev, cur, ans), steps), steps)
        new = self.let(self.full(row.partials[1](self.rows, prev, cur, ans), steps), steps)
        # through[t]: the share of step t's result that reaches the end, the later keeps' product
        suffix = self.text(self.let(f"{np}.cumprod({self.text(keep)}[..., ::-1], axis=-1)"
                                    "[..., ::-1]", steps))
        through = self.let(f"{np}.concatenate([{suffix}[..., 1:], {np}.ones("
                           f"{s[:-1] + (1,)})], axis=-1)", steps)
        return back(self.let(f"{np}.concatenate([{suffix}[..., :1], {self.text(new)} * "
                             f"{self.text(through)}], axis=-1)", s))


class CArrays(CodeArrays):
    """The namespace of the array rules on C: every value a flat row-major ``double`` array
    (a scalar: an array of one), each operation a loop over its elements; a reshape is the
    same elements (a pointer), a broadcast an index ``i % c`` or ``i / c``."""

    def __init__(self, printer: Printer):
        super().__init__("c", printer)
        self.tables = 0
        self.targets: list[str] = []  # the variable each line defines or writes

    def emit(self, line: str, target: str) -> None:
        self.lines.append(line)
        self.targets.append(target)

    def _name(self) -> str:
        if self.next_name is not None:
            name, self.next_name = self.next_name, None
            return name
        self._count += 1
        return f"v_t{self._count}"

    def _declare(self, name: str, shape: Shape) -> _Value:
        self.emit(f"double {name}[{max(size(shape), 1)}];", name)
        self.shapes[name] = tuple(shape)
        return _Value("var", (name,))

    def _alias(self, x, shape: Shape, offset: int = 0) -> _Value:
        """The elements of the array ``x`` seen with ``shape`` (from element ``offset``)."""
        name = self._name()
        source = self.array(x)
        self.emit(f"const double *{name} = {source}" + (f" + {offset};" if offset else ";"),
                  name)
        self.shapes[name] = tuple(shape)
        return _Value("var", (name,))

    @staticmethod
    def index(own: Shape, out: Shape, i: str = "i") -> str:
        """The position in an array of ``own`` of element ``i`` of its broadcast to ``out``."""
        if size(own) == 1:
            return "0"
        own = (1,) * (len(out) - len(own)) + tuple(own)
        if own == tuple(out):
            return i
        if len(out) != 2:
            raise InputError(f"codegen --lang c: a broadcast of {shape_text(own)} to "
                             f"{shape_text(out)} (C code has vectors and matrices)",
                             option="lang", hint="--lang numpy or jax")
        r, c = out
        return f"{i} % {c}" if own == (1, c) else f"{i} / {c}"

    def at(self, e, out: Shape, i: str = "i") -> str:
        """The C expression of element ``i`` of ``e`` broadcast to ``out``."""
        def indexed(c):
            if type(c) is not Code:
                return c
            if c.op == "var":
                name = c.args[0]
                return Code("var", (f"{name}[{self.index(self.shapes[name], out, i)}]",))
            return Code(c.op, tuple(indexed(a) for a in c.args))
        return self.printer.expr(indexed(e))

    def array(self, e) -> str:
        """The name of an array holding ``e`` (``e`` itself when it is one)."""
        if type(e) is Code and e.op == "var":
            return e.args[0]
        return self.assign(e, self.shape(e), self._name()).args[0]

    def loop(self, n: int, body: str, target: str) -> None:
        """``for i in 0..n: body``, a line that writes the array ``target``."""
        self.emit(f"for (size_t i = 0; i < {max(n, 1)}; i++) {body}", target)

    # -- the statements the sweeps' driver asks for
    def comment(self, text: str) -> None:
        self.emit(f"/* {text} */", "")

    def constant_array(self, values, shape: Shape, name: str):
        flat = flatten(values)
        self.emit(f"const double {name}[{len(flat)}] = "
                  f"{{{', '.join(repr(float(v)) for v in flat)}}};", name)
        self.shapes[name] = tuple(shape)
        return _Value("var", (name,))

    def assign(self, e, shape: Shape, name: str):
        shape = tuple(shape)
        text = self.at(e, shape)  # (before the declaration: e may read an older name)
        v = self._declare(name, shape)
        self.loop(size(shape), f"{name}[i] = {text};", name)
        return v

    def accumulate(self, target: str, c, shape: Shape):
        self.loop(size(shape), f"{target}[i] += {self.at(c, tuple(shape))};", target)
        return _Value("var", (target,))

    def result(self, a, shape: Shape):
        return None if a is None else self.array(a) if self.shape(a) == tuple(shape) \
            else self.assign(a, shape, self._name()).args[0]

    # -- the array operations
    def full(self, e, shape: Shape) -> str:
        return self.array(e) if self.shape(e) == tuple(shape) else \
            self.assign(e, shape, self._name()).args[0]

    def reshape(self, x, shape):
        return self._alias(x, tuple(shape))

    def item(self, g, k: int):
        s = self.shape(g)
        return self._alias(g, s[1:], k * size(s[1:]))

    def transpose(self, x):
        r, c = self.shape(x)
        a = self.array(x)
        v = self._declare(self._name(), (c, r))
        self.loop(r * c, f"{v.args[0]}[i] = {a}[(i % {r}) * {c} + i / {r}];", v.args[0])
        return v

    def matmul(self, a, b):
        sa, sb = self.shape(a), self.shape(b)
        x, y = self.array(a), self.array(b)
        k = sa[-1]
        rows = sa[0] if len(sa) == 2 else 1
        cols = sb[1] if len(sb) == 2 else 1
        v = self._declare(self._name(), sa[:-1] + sb[1:])
        left = f"{x}[(i / {cols}) * {k} + gc_q]" if len(sa) == 2 else f"{x}[gc_q]"
        right = f"{y}[gc_q * {cols} + i % {cols}]" if len(sb) == 2 else f"{y}[gc_q]"
        self.loop(rows * cols, f"{{ double gc_acc = 0.0; for (size_t gc_q = 0; gc_q < {k}; "
                  f"gc_q++) gc_acc += {left} * {right}; {v.args[0]}[i] = gc_acc; }}", v.args[0])
        return v

    @staticmethod
    def along(s: Shape, axis) -> tuple:
        """A reduction along ``axis`` (None: all) of an array of shape ``s`` as loops: (the
        count of results, the length reduced, the function that gives the position of element
        ``q`` of result ``i``)."""
        if axis is not None and len(s) == 1:
            axis = None
        if axis is None:
            return 1, size(s), lambda q: q
        if len(s) != 2:
            raise InputError(f"codegen --lang c: a reduction along axis {axis} of "
                             f"{shape_text(s)} (C code has vectors and matrices)",
                             option="lang", hint="--lang numpy or jax")
        if axis == 0:
            return s[1], s[0], lambda q: f"{q} * {s[1]} + i"
        return s[0], s[1], lambda q: f"i * {s[1]} + {q}"

    def reduce(self, kind: str, x, axis):
        s = self.shape(x)
        a = self.array(x)
        out = () if axis is None or len(s) == 1 else s[:axis] + s[axis + 1:]
        _, n, at = self.along(s, axis)
        element = f"{a}[{at('gc_q')}]"
        step = {"add": "gc_acc += {e};", "mul": "gc_acc *= {e};",
                "max": "if ({e} > gc_acc) gc_acc = {e};",
                "min": "if ({e} < gc_acc) gc_acc = {e};"}[kind].format(e=element)
        first = f"{a}[{at('0')}]"
        v = self._declare(self._name(), out)
        self.loop(size(out), f"{{ double gc_acc = {first}; for (size_t gc_q = 1; gc_q < {n}; "
                  f"gc_q++) {step} {v.args[0]}[i] = gc_acc; }}", v.args[0])
        return v

    def others_product(self, x, axis):
        """As the NumPy code's: the product before each element (a running product), then
        times the product after it (a running product from the end)."""
        s = self.shape(x)
        a = self.array(x)
        count, n, at = self.along(s, axis)
        v = self._declare(self._name(), s)
        o, q = v.args[0], at("gc_q")
        self.loop(count, f"{{ double gc_acc = 1.0; for (size_t gc_q = 0; gc_q < {n}; gc_q++) "
                  f"{{ {o}[{q}] = gc_acc; gc_acc *= {a}[{q}]; }} gc_acc = 1.0; "
                  f"for (size_t gc_q = {n}; gc_q-- > 0; ) {{ {o}[{q}] *= gc_acc; "
                  f"gc_acc *= {a}[{q}]; }} }}", o)
        return v

    def chain_weights(self, row, kind, x, axis):
        """As the NumPy code's: the running max (or min) by the row itself, then from the end
        each element's share, the row's partial for it times the keeps of the later steps
        (both partials printed from the row, so its convention at a tie)."""
        s = self.shape(x)
        a = self.array(x)
        count, n, at = self.along(s, axis)
        running = self._declare(self._name(), s).args[0]
        prev, cur = _Value("var", (f"{running}[{at('gc_p')}]",)), \
            _Value("var", (f"{a}[{at('gc_q')}]",))
        ans = _Value("var", (f"{running}[{at('gc_q')}]",))
        step = self.printer.expr(self.row(row)(prev, cur))
        self.loop(count, f"{{ {running}[{at('0')}] = {a}[{at('0')}]; for (size_t gc_q = 1; "
                  f"gc_q < {n}; gc_q++) {{ size_t gc_p = gc_q - 1; {running}[{at('gc_q')}] = "
                  f"{step}; }} }}", running)
        keep = self.printer.expr(row.partials[0](self.rows, prev, cur, ans))
        new = self.printer.expr(row.partials[1](self.rows, prev, cur, ans))
        v = self._declare(self._name(), s)
        w = v.args[0]
        self.loop(count, f"{{ double gc_acc = 1.0; for (size_t gc_q = {n - 1}; gc_q > 0; "
                  f"gc_q--) {{ size_t gc_p = gc_q - 1; {w}[{at('gc_q')}] = ({new}) * gc_acc; "
                  f"gc_acc *= {keep}; }} {w}[{at('0')}] = gc_acc; }}", w)
        return v

    def _table(self, positions) -> str:
        self.tables += 1
        name = f"gc_p{self.tables}"
        self.emit(f"static const size_t {name}[{len(positions)}] = "
                  f"{{{', '.join(map(str, positions))}}};", name)
        return name

    def take(self, x, positions, shape):
        shape = tuple(shape)
        if list(positions) == list(range(size(self.shape(x)))):
            return self._alias(x, shape)
        a, table = self.array(x), self._table(list(positions))
        v = self._declare(self._name(), shape)
        self.loop(len(positions), f"{v.args[0]}[i] = {a}[{table}[i]];", v.args[0])
        return v

    def scatter(self, g, positions, taken, shape):
        table = self._table(list(positions))
        element = self.at(g, tuple(taken))
        v = self._declare(self._name(), tuple(shape))
        self.loop(size(shape), f"{v.args[0]}[i] = 0.0;", v.args[0])
        self.loop(len(positions), f"{v.args[0]}[{table}[i]] += {element};", v.args[0])
        return v

    def stack(self, xs):
        inner = self.shape(xs[0])
        n = size(inner)
        v = self._declare(self._name(), (len(xs), *inner))
        for k, x in enumerate(xs):
            self.loop(n, f"{v.args[0]}[{k * n} + i] = {self.at(x, inner)};", v.args[0])
        return v

    def unbroadcast(self, g, shape):
        shape, s = tuple(shape), self.shape(g)
        if s == shape:
            return g
        joint = broadcast(s, shape)
        element = self.at(g, joint)
        v = self._declare(self._name(), shape)
        self.loop(size(shape), f"{v.args[0]}[i] = 0.0;", v.args[0])
        self.loop(size(joint), f"{v.args[0]}[{self.index(shape, joint)}] += {element};", v.args[0])
        return v

    def expand(self, g, axis, shape):
        shape = tuple(shape)
        s = self.shape(g)
        own = s if axis is None else s[:axis] + (1,) + s[axis:]
        a = self.array(g)
        v = self._declare(self._name(), shape)
        self.loop(size(shape), f"{v.args[0]}[i] = {a}[{self.index(own, shape)}];", v.args[0])
        return v


def generate_arrays(source: str, shapes: dict, lang: str, *, name: str = "f",
                    inputs: list[str] | None = None, wrt: list[str] | None = None,
                    returns: str = "tuple"):
    """``source``'s value and gradient as NumPy (``lang`` python or numpy), JAX or C code for
    array inputs of ``shapes``: a :class:`gradcli.code.Generated` (C: with its header)."""
    from . import Generated, _distinct, _order
    lang = "numpy" if lang == "python" else lang
    names.check_function(name, lang)
    graph = lower_for_gradient(source, shapes, "codegen")
    order = _order(graph.by_name(), inputs)
    wrt = _distinct(wrt_names(graph.by_name(), wrt if wrt is not None else order), "wrt")
    # the max of softmax's shift (its adjoint cancels to 0: the symbolic sweep shows it)
    zero = zero_adjoints(source, shapes) if any(
        kind == "reduce" and p[0] != "add" for kind, p in zip(graph.kinds, graph.params)) \
        else set()
    variables = names.variables(order, lang, name)
    printer = Printer(lang)
    m = CArrays(printer) if lang == "c" else CodeArrays(lang, printer)
    kinds, params, shaped = graph.kinds, graph.params, graph.shapes

    def leaf(k):
        if kinds[k] == "input":
            v = variables[params[k]]
            m.shapes[v] = shaped[k]
            return _Value("var", (v,))
        return m.constant_array(params[k], shaped[k], f"v{k}") if shaped[k] \
            else float(params[k])

    def value(k, rule):
        m.next_name = f"v{k}"
        e = rule()
        if m.next_name is None and type(e) is Code and e.op == "var" and e.args[0] == f"v{k}":
            return e  # an array operation: its statement defined v{k}
        m.next_name = None
        return m.assign(e, shaped[k], f"v{k}")

    def start(values):
        m.comment("reverse sweep")
        return m.assign(1.0, (), f"vb{graph.output}")

    def add(a, total, c):
        target = f"vb{a}" if kinds[a] != "input" else f"vb_{variables[params[a]]}"
        return m.assign(c, shaped[a], target) if total is None else \
            m.accumulate(target, c, shaped[a])

    m.comment("forward sweep")
    values, adjoint = run(graph, m, wrt, leaf, start, value=value,
                          enter=lambda k, g: k not in zero, add=add)
    results = [m.result(adjoint[graph.inputs_by_name[n]], graph.shapes[graph.inputs_by_name[n]])
               for n in wrt]
    if lang == "c":
        code, header = _c_text(source, name, graph, order, variables, wrt, m, values, results)
    else:
        code, header = _text(source, lang, name, shapes, graph, order, variables, wrt, m,
                             values, results, returns), None
    return Generated(source, lang, "reverse", [name], {n: variables[n] for n in order}, wrt,
                     ["f"], returns, code, header)


_NAME = re.compile(r"[A-Za-z_]\w*")


def _pruned(lines: list[str], returned: str) -> list[str]:
    """The statements without those whose value is never read (an operand made as a matrix
    for the other argument's rule, the adjoint of softmax's shift), and a temporary that is
    only copied (``vb_w = t3``) defined under its copy's name."""
    defs = [line.split(" = ", 1) if not line.startswith("#") else None for line in lines]
    reads: dict[str, int] = {}
    for d in defs:
        if d:
            for n in _NAME.findall(d[1]):
                reads[n] = reads.get(n, 0) + 1
    for n in _NAME.findall(returned):
        reads[n] = reads.get(n, 0) + 1
    where = {}
    for i, d in enumerate(defs):
        if d:
            where.setdefault(d[0], []).append(i)
    for i, d in enumerate(defs):  # vb_w = t3: t3 defined once, read only here
        if d and re.fullmatch(r"v_t\d+", d[1]) and len(where.get(d[1], ())) == 1 and \
                reads.get(d[1]) == 1 and d[0] not in _NAME.findall(
                    " ".join(x[1] for x in defs[where[d[1]][0]:i] if x)):
            defs[where[d[1]][0]][0] = d[0]
            defs[i] = False
    needed = set(_NAME.findall(returned))
    kept = []
    for line, d in zip(reversed(lines), reversed(defs)):
        if d is None:
            kept.append(line)
        elif d and d[0] in needed:
            needed.discard(d[0])
            needed.update(_NAME.findall(d[1]))
            kept.append(f"{d[0]} = {d[1]}")
    return kept[::-1]


def _wrapped(c, text: str) -> str:
    from .printer import operand
    return operand(c, text) if type(c) is Code else text


def _text(source, lang, name, shapes, graph, order, variables, wrt, m, values, results,
          returns) -> str:
    np = m.np
    head = comment_lines(f"{name}: the gradient of", "#")
    head += ["#     " + line for line in source.strip().splitlines()]
    import textwrap
    head += ["# " + line for line in textwrap.wrap(
        f"generated by gradcli codegen --lang {lang}: array code, one statement per array "
        "node (the forward sweep) and per contribution of the reverse sweep, each by the "
        "node's vector-Jacobian rule.", 94)]
    head.append("# the inputs' shapes:")
    for n in order:
        s = graph.shapes[graph.inputs_by_name[n]]
        head.append(f"#     {variables[n]}: {shape_text(s) if s else 'a scalar'}")
    lines = head + [""]
    if lang == "jax":
        lines += ["import jax", "import jax.numpy as jnp", "", 'jax.config.update("jax_enable_x64", True)']
    else:
        lines += ["import numpy as np"]
    if any("math." in h for h in m.printer.helpers) or "math" in m.printer.modules:
        lines.insert(len(head) + 1, "import math")
    lines += ["", f"INPUTS = {tuple(order)!r}", f"WRT = {tuple(wrt)!r}"]
    for helper in sorted(m.printer.helpers):
        lines += ["", "", array_helper(helper).replace("{np}", np)]
    params = [variables[n] for n in order]
    lines += ["", "", f"def {name}({', '.join(params)}):",
              f'    """(value, gradient) at ({", ".join(params)}): the gradient has an entry '
              f'per input of WRT, in its shape."""']
    for n in order:
        v = variables[n]
        s = graph.shapes[graph.inputs_by_name[n]]
        lines.append(f"    {v} = {np}.asarray({v}, dtype={np}.float64)" + (
            f"  # shape {s}" if s else ""))
    value = m.text(values[graph.output])
    body = _pruned(m.lines, value + " " + " ".join(results))
    if lang == "numpy":
        lines.append('    with np.errstate(all="ignore"):  # NaN or inf where a value fails')
        indent = "        "
    else:
        indent = "    "
    lines += [indent + line for line in body]
    gradient = f"({', '.join(results)}{',' if len(results) == 1 else ''})"
    if returns == "dict":
        gradient = f"dict(zip(WRT, {gradient}))"
    lines.append(f"{indent}return {value}, {gradient}")
    return "\n".join(lines) + "\n"


def _c_text(source, name, graph, order, variables, wrt, m, values, results) -> tuple[str, str]:
    """The C code and its header: ``int name(inputs..., double *value, double *grad_...)``,
    every input and result a pointer to its elements, row-major (a scalar's: one)."""
    params = [f"const double *{variables[n]}" for n in order]
    taken = set(variables.values())
    grads = {n: f"grad_{variables[n]}" if f"grad_{variables[n]}" not in taken
             else f"gc_grad_{variables[n]}" for n in wrt}  # (gc_...: no input keeps it)
    outs = ["double *out"] + [f"double *{grads[n]}" for n in wrt]
    signature = f"int {name}({', '.join(params + outs)})"
    head = ["/* " + line for line in [f"{name}: the gradient of"]]
    head += [" *     " + line for line in source.strip().splitlines()]
    head += [" * generated by gradcli codegen --lang c: array code, a loop per array node (the",
             " * forward sweep) and per contribution of the reverse sweep, each by the node's",
             " * vector-Jacobian rule. Every array is flat, row-major; a scalar is one double.",
             " * The inputs (pointers to their elements) and their shapes, then out (the value)",
             " * and grad_NAME (an array of NAME's shape) per input differentiated by:"]
    for n in order:
        s = graph.shapes[graph.inputs_by_name[n]]
        head.append(f" *     {variables[n]}: {shape_text(s) if s else 'a scalar'}")
    head.append(" * Returns 0, or 1 when the value or a gradient's element is not finite.")
    head.append(" * The temporaries are on the stack: for large arrays, use --lang numpy. */")
    lines = head + ["", "#include <math.h>", "#include <stddef.h>", ""]
    for helper in sorted(m.printer.helpers):
        lines += [c_helper(helper), ""]
    lines += [signature, "{"]
    value = m.array(values[graph.output]) if type(values[graph.output]) is Code else None
    # the lines whose array is read: from the results back (an operand made a matrix for the
    # other argument's rule, the adjoint of softmax's shift, are not)
    live = {"", value, *results}
    grew = True
    while grew:
        grew = False
        for line, target in zip(m.lines, m.targets):
            if target in live:
                for word in _NAME.findall(line):
                    if word not in live:
                        live.add(word)
                        grew = True
    lines += ["    " + line for line, target in zip(m.lines, m.targets) if target in live]
    lines.append("    int status = 0;")
    if value is None:
        lines.append(f"    *out = {float(values[graph.output])!r};")
    else:
        lines.append(f"    *out = {value}[0];")
    lines.append("    if (!isfinite(*out)) status = 1;")
    for n, r in zip(wrt, results):
        s = graph.shapes[graph.inputs_by_name[n]]
        target = grads[n]
        copy = "0.0" if r is None else f"{r}[i]"
        lines.append(f"    for (size_t i = 0; i < {max(size(s), 1)}; i++) {{ {target}[i] = "
                     f"{copy}; if (!isfinite({target}[i])) status = 1; }}")
    lines += ["    return status;", "}"]
    guard = f"GRADCLI_{name.upper()}_H"
    header = "\n".join(head + ["", f"#ifndef {guard}", f"#define {guard}", "",
                               "#include <stddef.h>", "", signature + ";", "",
                               f"#endif /* {guard} */"]) + "\n"
    return "\n".join(lines) + "\n", header
