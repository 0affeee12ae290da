"""Symbolic derivatives: a tangent sweep over canonical expressions, printed in gradcli's syntax.

The graph becomes one canonical expression (:mod:`gradcli.symbolic.expr`: flat sums and products,
like terms and powers collected, equal subexpressions one node). A tangent sweep over its nodes
builds each node's derivative by the rule table's own rules, run on expressions (``m =
SYMBOLIC``): a catalogue function by its row; a sum term by term; a product by the ``mul`` row, a
power ``b^e`` as ``e*b^(e-1)*b'`` by the ``pow`` row (or ``b^e*(e'*log(b) + e*b'/b)`` by the
``mul`` and ``log`` rows when the exponent varies). Every result is canonical as built, so
``2*(3*x^2)`` never appears, and higher orders sweep the derivative again. The gradient of a
large expression (``REVERSE_MIN`` nodes) comes from one adjoint sweep instead, wholes before
parts, by the same rows: one sweep for every input rather than one per input. Printing names every
repeated subexpression worth a name, so the result is a small program, not an exponential tree;
several derivatives are named together, each shared assignment printed once:

>>> from gradcli.api import compile
>>> derivatives_of(compile("log(x)+x*y-sin(y)"), ["x", "y"])
{'x': '1/x + y', 'y': 'x - cos(y)'}
>>> derivatives_of(compile("x^10"), ["x"], order=3)
{'x': '720*x^7'}
>>> derivatives_of(compile("1/x"), ["x"], order=3)
{'x': '-6/x^4'}

Everything is iterative (explicit stacks and serial-ordered sweeps): 100,000-deep input works,
and the work is linear in the size of the expression graph.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import count

from ..engine.graph import Graph
from ..engine.primitives import TABLE
from ..gcpause import gc_paused
from .expr import (ONE, SYMBOLIC, Apply, Number, Product, Sum, Sym, Symbol, add, apply,
                   constant_nodes, context_memo, fresh_context, local_derivatives, multiply,
                   node_count, number, reachable, sealed, symbol)
from .printer import flatten, name_rope, rope
from .rational import reduced

MIN_NAMED_SIZE = 4  # a repeated subexpression of at least this many nodes gets a name (t1 = ...)
# An expression of at least this many nodes has its gradient by one adjoint sweep: several times
# quicker than a tangent sweep per input, but the printed derivatives are longer (a tangent sweep keeps
# the chain rule's factors nested; an adjoint sweep sums one product per path), so below it
# the shorter text is worth the time.
REVERSE_MIN = 500


def graph_expression(graph: Graph):
    """The graph's output as one canonical expression in its inputs (assignments resolved).

    A chain of sums (or of products) whose links are used once is gathered into one list and
    built in one call, so ``x1 + x2 + ... + xn`` costs O(n), not O(n^2).
    """
    expr: list = [None] * graph.n_slots
    expr[:graph.n_const] = constant_nodes(graph)
    for i, name in enumerate(graph.inputs):
        expr[graph.n_const + i] = symbol(name)
    base, ops, arg0, arg1 = graph.base, graph.ops, graph.arg0, graph.arg1
    live = graph.live_nodes()
    uses = [0] * graph.n_slots
    family = [None] * graph.n_slots
    for k, prim in enumerate(ops):
        if live[k]:
            family[base + k] = prim.form[0] if prim.form else None  # "sum", "product" or None
            uses[arg0[k]] += 1
            if arg1[k] >= 0:
                uses[arg1[k]] += 1
    pending: dict[int, list] = {}  # slot -> [items, sign]: a link of a chain, not yet built
    for k, prim in enumerate(ops):
        if not live[k]:
            continue
        slot = base + k
        args = (arg0[k],) if arg1[k] < 0 else (arg0[k], arg1[k])
        kind = family[slot]
        if kind is None:  # a catalogue function, or a power: what the rows on Sym build
            values = tuple([_built(expr, pending, a, family) for a in args]) if len(args) > 1 \
                else (_built(expr, pending, args[0], family),)
            expr[slot] = multiply([values]) if prim is _POW else apply(prim.name, values)
            continue
        signs = prim.form[1]  # each argument's sign in the sum, or power in the product
        # small-to-large: the longest pending argument is extended, the others copied into it
        parts = []
        for a, s in zip(args, signs):
            if a in pending and family[a] == kind:
                items, sign = pending.pop(a)
                parts.append((items, sign * s))
            else:
                parts.append(([(_built(expr, pending, a, family), 1)], s))
        parts.sort(key=_longest_first)
        items, sign = parts[0]
        for other, s in parts[1:]:
            rel = s * sign
            for n, e in other:  # (a loop: most links are one argument)
                items.append((n, e * rel))
        pending[slot] = [items, sign]
        if uses[slot] != 1 or slot == graph.output:
            _built(expr, pending, slot, family)
    return _built(expr, pending, graph.output, family)


def _longest_first(part) -> int:
    return -len(part[0])


def _built(expr: list, pending: dict, slot: int, family: list):
    """The canonical node of a slot, building it from its pending chain if it has one."""
    if slot in pending:
        items, sign = pending.pop(slot)
        if family[slot] == "sum":  # (items are (node, sign) pairs: as they are for sign 1)
            expr[slot] = add(items if sign == 1 else [(n, e * sign) for n, e in items])
        else:
            for i, (n, e) in enumerate(items):  # (a loop: most links are two factors)
                items[i] = (n, number(e * sign))
            expr[slot] = multiply(items)
    return expr[slot]


def derivative(root, name: str):
    """``∂root/∂name`` as a canonical expression: a tangent sweep over root's nodes."""
    tangent: dict[int, object] = {}  # serial -> tangent node; absent means 0
    one = number(ONE)
    for node in reachable(root):
        t = type(node)
        if t is Symbol:
            if node.name == name:
                tangent[node.serial] = one
            continue
        if t is Number:
            continue
        if t is Sum:
            total = add([(tangent[n.serial], c) for n, c in node.terms if n.serial in tangent])
        elif t is Apply:
            total = _apply_tangent(node, tangent, one)
        else:
            total = _product_tangent(node, tangent, one)
        if total is not None and not (type(total) is Number and total.value == 0):
            tangent[node.serial] = total
    return tangent.get(root.serial) or number(0)


def _apply_tangent(node, tangent: dict, one):
    """Chain rule through a catalogue function: Σ ∂f/∂arg (the table's rule) * arg'."""
    if all(a.serial not in tangent for a in node.args):
        return None
    locals_ = _local_derivatives(node)
    terms = [(multiply([(tangent[a.serial], one), (local, one)]), ONE)
             for a, local in zip(node.args, locals_) if a.serial in tangent]
    return add(terms)


def _local_derivatives(node) -> list:
    """The row's partial derivatives of a catalogue function at its arguments, built once per
    node in a context (each input's tangent sweep reads them again)."""
    memo = context_memo()
    key = ("partials", node.serial)
    found = memo.get(key)
    if found is None:
        # the node is the function's value there: apply() gives it back for its own arguments
        found = memo[key] = local_derivatives(TABLE[node.name], node.args, node)
    return found


_MUL, _POW, _LOG = TABLE["mul"], TABLE["pow"], TABLE["log"]


def _product_tangent(node, tangent: dict, one):
    """A flat product's tangent, by the rows: the ``mul`` row's ∂(u·v)/∂u = v makes each
    factor's tangent count times the other factors; a power ``b^e`` with a constant exponent by
    the ``pow`` row's ∂/∂base; one whose exponent varies as ``exp(e·log b)`` (b > 0, which the
    ``pow`` row's ∂/∂exponent needs anyway), by the ``mul`` and ``log`` rows:
    ``b^e·(e'·log b + e·b'/b)``, the power once rather than in two terms."""
    factors, terms = node.factors, []
    for i, (b, e) in enumerate(factors):
        db, de = tangent.get(b.serial), tangent.get(e.serial)
        if db is None and de is None:
            continue
        items = list(factors[:i]) + list(factors[i + 1:])  # ∂(this·others)/∂this = others
        se, k = Sym(e), ONE
        if de is None:  # ∂(b^e)/∂b · b'
            k, local = _on_base(b, ("pow", e.serial), _pow_by_base, e)
            items += local + [(db, one)]
        else:  # b^e = exp(u) for u = e·log b, and exp' = exp: b^e·u', u' by the rows
            log_b = SYMBOLIC.log(Sym(b))
            by_e, by_log = (rule(SYMBOLIC, se, log_b, None) for rule in _MUL.partials)
            inner = [(multiply([(de, one), (by_e.node, one)]), ONE)]
            if db is not None:
                c, by_b = _on_base(b, "log", _log_slope)
                inner.append((multiply([(by_log.node, one)] + by_b + [(db, one)], c), ONE))
            items += [(b, e), (add(inner), one)]
        terms.append((multiply(items, node.coeff * k), ONE))
    return add(terms) if terms else None


def _pow_by_base(p, e):
    """The ``pow`` row's ∂/∂base at base ``p`` (a Sym) and exponent ``e`` (a node)."""
    se = Sym(e)
    return _POW.partials[0](SYMBOLIC, p, se, p ** se)


def _log_slope(p):
    """The ``log`` row's derivative at ``p`` (a Sym)."""
    return _LOG.partials[0](SYMBOLIC, p, SYMBOLIC.log(p))


def _on_base(b, key, rule, *args) -> tuple[int | Fraction, list]:
    """``rule(b, *args)`` (a row's rule) as a coefficient and factors (base, exponent) to join a
    product's one ``multiply``. The rule runs on a placeholder for the base, then the base comes
    back: built on the base itself, ``2*(x + y)^1`` would be distributed to ``2*x + 2*y``, a new
    sum instead of a factor of the product. (The rules run here, pow's ∂/∂base and log's, hold
    the base only as a factor.) The rule runs once per ``key`` in a context: its result on the
    placeholder is the same for every base."""
    memo = context_memo()
    local = memo.get(key)
    if local is None:
        local = memo[key] = _node_of(rule(Sym(symbol(_PLACEHOLDER)), *args))
    if type(local) is Number:
        return local.value, []
    if type(local) is not Product:
        return ONE, [(b if type(local) is Symbol and local.name == _PLACEHOLDER else local,
                      number(ONE))]
    return local.coeff, [(b if type(f) is Symbol and f.name == _PLACEHOLDER else f, x)
                         for f, x in local.factors]


_PLACEHOLDER = "·base"  # not a name the language can spell


def _node_of(x):
    return x.node if type(x) is Sym else number(x)


def gradient(root, names: list[str], order: list | None = None) -> dict[str, object]:
    """Each ``∂root/∂name`` as a canonical expression, all from one adjoint sweep over root's
    nodes (wholes before parts), by the same rules as :func:`derivative`: a sum hands its
    adjoint to each term times its coefficient; a catalogue function times the row's partial;
    a product's factor gets the other factors times pow's ∂/∂base (``b^e·e/b`` by the log row
    when the exponent varies, and ``b^e·log b`` to the exponent). Only nodes that read one of
    ``names`` are visited. (``order`` is ``reachable(root)`` when the caller has it.)"""
    order = order or reachable(root)
    wanted = set(names)
    # By serial (every node of root's is older than the sweep's): whether it reads one of the
    # names (the only nodes with adjoints), and its adjoint's terms so far.
    varies = bytearray(root.serial + 1)
    for n in order:
        t = type(n)
        if t is Symbol:
            if n.name in wanted:
                varies[n.serial] = 1
        elif t is Product:
            for b, e in n.factors:
                if varies[b.serial] or varies[e.serial]:
                    varies[n.serial] = 1
                    break
        elif t is Sum:
            for k, _ in n.terms:
                if varies[k.serial]:
                    varies[n.serial] = 1
                    break
        elif t is Apply:
            for k in n.args:
                if varies[k.serial]:
                    varies[n.serial] = 1
                    break
    one = number(ONE)
    pending: list = [None] * (root.serial + 1)
    if varies[root.serial]:  # a constant root: every derivative is 0
        pending[root.serial] = [(one, ONE)]
    found = {}
    for n in reversed(order):
        terms = pending[n.serial]
        if terms is None:
            continue
        pending[n.serial] = None  # (its terms freed once summed)
        # one term as it is: add() would take a long product's coefficient out to a new node
        bar = terms[0][0] if len(terms) == 1 and terms[0][1] == 1 else add(terms)
        t = type(n)
        if t is Symbol:
            found[n.name] = sealed(bar)
        elif type(bar) is Number and bar.value == 0:
            continue
        elif t is Sum:
            for term, c in n.terms:
                _send(varies, pending, term, bar, c)
        elif t is Apply:
            for a, local in zip(n.args, _local_derivatives(n)):
                if varies[a.serial]:
                    _send(varies, pending, a, multiply([(bar, one), (local, one)], loose=True))
        else:
            _product_adjoint(n, bar, varies, pending, one)
    return {name: found.get(name, number(0)) for name in names}


def _send(varies: bytearray, pending: list, node, bar, c=ONE) -> None:
    """One term ``c*bar`` of a node's adjoint, kept until the sweep reaches the node (only
    nodes that read one of the names have adjoints). A function of the module, not a closure
    of the sweep's: compiled (diff.pxd), a closure could not be called directly."""
    s = node.serial
    if varies[s]:
        terms = pending[s]
        if terms is None:
            pending[s] = [(bar, c)]
        else:
            terms.append((bar, c))


def _product_adjoint(node, bar, varies: bytearray, pending: list, one) -> None:
    """A flat product's adjoint handed to its bases and exponents, as _product_tangent's
    rows build the tangent."""
    factors = node.factors
    for i, (b, e) in enumerate(factors):
        by_base, by_exp = varies[b.serial], varies[e.serial]
        if not (by_base or by_exp):
            continue
        others = [*factors[:i], *factors[i + 1:], (bar, one)]
        if not by_exp:  # pow's ∂/∂base (run once per exponent: see _on_base)
            k, local = _on_base(b, ("pow", e.serial), _pow_by_base, e)
            _send(varies, pending, b, multiply(others + local, node.coeff * k, loose=True))
            continue
        se = Sym(e)
        log_b = SYMBOLIC.log(Sym(b))  # b^e = exp(e·log b)
        by_e, by_log = [rule(SYMBOLIC, se, log_b, None) for rule in _MUL.partials]
        _send(varies, pending, e, multiply(others + [(b, e), (by_e.node, one)], node.coeff,
                                           loose=True))
        if by_base:
            c, by_b = _on_base(b, "log", _log_slope)
            _send(varies, pending, b, multiply(others + [(b, e), (by_log.node, one)] + by_b,
                                               node.coeff * c, loose=True))


def programs(roots: list, reserved=()) -> list[str]:
    """Several expressions as programs named together: a subexpression repeated anywhere among
    them (at least ``MIN_NAMED_SIZE`` nodes) is named once, its assignment printed once and
    pasted into every program that reads it. Each program stays whole (its own assignments,
    in order, then its expression); names are numbered in order of first appearance, so one
    root prints as it would alone. The work is linear in the size of all of them together,
    not in the sum of their sizes: a gradient's components share most of their parts."""
    # What is known of a part is kept in lists indexed by its serial (every serial is below
    # the context's count): no dict to hash each part into, and a pass over them stays in
    # the cache. One walk finds every part below the roots, its inner parts (kids: the ones
    # a name may stand for, no symbol or number), how many parents read it (uses), how many
    # symbols it reads (a symbol counts one in a size, and is never named, counted or handed
    # a bit) and the parts whose own text a whole's text pastes (read). A number exponent is
    # not even read: its value is printed.
    total = node_count()
    node_at: list = [None] * total  # serial -> the part (once the walk has found it)
    kids: list = [None] * total  # serial -> its inner parts' serials
    uses = [0] * total  # serial -> how many parts read it (its parents, not its paths)
    size = [0] * total  # serial -> its size, or MIN_NAMED_SIZE if larger: all a name needs
    read = bytearray(total)  # serial -> 1 if its own text is printed or pasted
    leaves = set()  # the symbols and numbers read
    found = []  # the serials of the parts found (not symbols or numbers)
    stack = []
    for n in roots:  # (a root may be a symbol or a number itself: no parts)
        s = n.serial
        if type(n) is Symbol or type(n) is Number:
            leaves.add(n)
        elif node_at[s] is None:
            node_at[s] = n
            read[s] = 1
            found.append(s)
            stack.append(n)
    while stack:
        n = stack.pop()
        t = type(n)
        inner = []
        if t is Product:  # (most parts, most of them long: each factor's part seen at once)
            parts = 0
            for b, e in n.factors:
                kind = type(b)
                if kind is Symbol:
                    parts += 1
                    leaves.add(b)
                elif kind is Number:  # (its value is printed)
                    leaves.add(b)
                else:
                    parts += 1
                    s = b.serial
                    inner.append(s)
                    read[s] = 1
                    uses[s] += 1
                    if node_at[s] is None:
                        node_at[s] = b
                        found.append(s)
                        stack.append(b)
                if type(e) is not Number:  # (rare: x^(y - 1))
                    parts += 1
                    if type(e) is Symbol:
                        leaves.add(e)
                    else:
                        s = e.serial
                        inner.append(s)
                        read[s] = 1
                        uses[s] += 1
                        if node_at[s] is None:
                            node_at[s] = e
                            found.append(s)
                            stack.append(e)
            s = n.serial
            kids[s] = inner
            size[s] = MIN_NAMED_SIZE if parts >= MIN_NAMED_SIZE - 1 else len(inner) - parts
            continue
        if t is Sum:  # (no term is a number; most sums have two terms: a loop)
            parts = len(n.terms)
            for k, c in n.terms:
                if type(k) is Symbol:
                    leaves.add(k)
                else:
                    inner.append(k)
                    # a product term c*k with c != ±1 is printed afresh (coefficients merged)
                    if c == 1 or c == -1 or type(k) is not Product:
                        read[k.serial] = 1
        else:  # a function (one or two arguments: a loop, no comprehension's function made)
            parts = 0
            for k in n.args:
                kind = type(k)
                if kind is Symbol:
                    parts += 1
                    leaves.add(k)
                elif kind is Number:
                    leaves.add(k)
                else:
                    parts += 1
                    inner.append(k)
                    read[k.serial] = 1
        # a*x has size 3 (its exponents 1 are not seen); a smaller part's size is counted
        # below, from its parts' (less its symbols': stored negated until then)
        size[n.serial] = MIN_NAMED_SIZE if parts >= MIN_NAMED_SIZE - 1 else len(inner) - parts
        for i, k in enumerate(inner):  # (the passes below read serials, not the parts)
            s = inner[i] = k.serial
            uses[s] += 1
            if node_at[s] is None:
                node_at[s] = k
                found.append(s)
                stack.append(k)
        kids[n.serial] = inner
    found.sort()  # parts before wholes
    is_root = bytearray(total)
    for n in roots:
        is_root[n.serial] = 1
    named = bytearray(total)
    order_named = []  # the named parts, parts before wholes
    for s in found:  # a part's size is known before its whole's; a named part counts as one
        z = size[s]
        if z <= 0:
            z = 1 - z
            for j in kids[s]:
                z += 1 if named[j] else size[j]
            size[s] = z
        if z >= MIN_NAMED_SIZE and uses[s] > 1 and not is_root[s]:  # (a root is printed whole)
            named[s] = 1
            order_named.append(s)
    # Each program's assignments are the named parts it reads, transitively: the named parts
    # below its root. One bit per program, handed from wholes to parts (one pass over the
    # parts, however many programs).
    bits = [0] * total
    for i, root in enumerate(roots):
        bits[root.serial] |= 1 << i
    for s in reversed(found):  # wholes before parts
        mask = bits[s]
        for j in kids[s]:
            bits[j] |= mask
    del kids, uses, size  # (their memory serves the texts)
    # The named parts in runs read by the same programs (a gradient's programs share most
    # of them): a run's lines are joined once, for every program that reads it.
    runs: list = []  # [bits, its parts' serials], in order (parts before wholes)
    for s in order_named:
        mask = bits[s]
        if runs and runs[-1][0] == mask:
            runs[-1][1].append(s)
        else:
            runs.append([mask, [s]])
    # names in order of first appearance: each program's parts that no earlier program reads
    name_of: dict = {}
    taken = set(reserved)
    fresh = _fresh_names(taken)
    for i in range(len(roots)):
        for mask, members in runs:
            if mask & -mask == 1 << i:  # (the lowest bit: the first program that reads them)
                for s in members:
                    name_of[s] = next(fresh)
    out: list = [None] * total  # serial -> its text as a rope (a named part: its name)
    for n in leaves:
        out[n.serial] = rope(n, out)
    by_name = set(order_named)
    lines: dict = {}
    for s in found:
        if named[s]:
            name = name_of[s]
            lines[s] = f"{name} = {flatten(rope(node_at[s], out, by_name))}"
            out[s] = name_rope(name)
        elif read[s]:
            out[s] = rope(node_at[s], out, by_name)
    joined = [(mask, "\n".join(map(lines.__getitem__, members))) for mask, members in runs]
    return ["\n".join([text for mask, text in joined if mask >> i & 1]
                      + [flatten(out[root.serial])]) for i, root in enumerate(roots)]


def _fresh_names(taken: set):
    """t1, t2, ... less the names the expression reads. (A generator of its own: a function
    declared in diff.pxd may hold none.)"""
    return (x for x in (f"t{i}" for i in count(1)) if x not in taken)


@gc_paused()  # a derivative is a large acyclic structure: the cyclic collector would rescan it
def derivatives_of(graph: Graph, wrt: list[str], order: int = 1,
                   simplify: bool = False) -> dict[str, str]:
    """Each ``∂^order f/∂name^order`` as source text (a program when it has assignments).

    The first derivatives of a large expression by several inputs come from one adjoint sweep
    (:func:`gradient`) and are printed named together (:func:`programs`): the work is linear
    in the expression, however many inputs. Otherwise each comes from its own tangent sweeps,
    a rational function of one input reduced at each order (:mod:`.rational`). ``simplify``:
    each derivative is then handed to SymPy's ``simplify`` (:mod:`.sympy_bridge`)."""
    with fresh_context():
        f = graph_expression(graph)
        nodes = reachable(f) if order == 1 and len(wrt) > 1 else ()
        if len(nodes) >= REVERSE_MIN:
            grad = gradient(f, wrt, nodes)
            roots = [_simplified(grad[name], simplify) for name in wrt]
            return dict(zip(wrt, programs(roots, graph.inputs)))
        result = {}
        for name in wrt:
            d = f
            for _ in range(order):
                d = reduced(derivative(d, name))
            result[name] = programs([_simplified(d, simplify)], graph.inputs)[0]
    return result


def _simplified(node, simplify: bool):
    if not simplify:
        return node
    from .sympy_bridge import simplified  # (SymPy: only when asked)
    return simplified(sealed(node))


@gc_paused()
def mixed_partial(graph: Graph, names: list[str], simplify: bool = False) -> str:
    """``∂ⁿf/∂names[0]…∂names[-1]`` as source text: differentiated by each name in turn."""
    with fresh_context():
        d = graph_expression(graph)
        for name in names:
            d = reduced(derivative(d, name))
        return programs([_simplified(d, simplify)], graph.inputs)[0]
