"""Local partial derivatives: each node's ∂node/∂argument at a point, from the rule table.

This is the one place the table's derivative rules are evaluated on a tape. Reverse mode
multiplies the partials by adjoints (``adjoint[a] += g * p``), forward mode by tangents; the
trace tables and the graph picture show them, and the numerical check reads the subgradient a
kink used. Since every consumer reads the same numbers, the modes agree and fail at the same
node.

>>> from gradcli.api import compile
>>> from gradcli.engine.forward import forward
>>> g = compile("x*y + sin(x)")
>>> first, second = local_partials(g, forward(g, [2.0, 3.0]))
>>> [node_partials(g, (first, second), k) for k in range(len(g.ops))]
[(3.0, 2.0), (-0.4161468365471424,), (1.0, 1.0)]
"""

from __future__ import annotations

import math
from array import array
from typing import NamedTuple, Sequence

from ..errors import NumericalError
from .graph import Graph, describe_node
from .primitives import FLOAT

_KEEP = object()  # local_partials keeps the partials (no adjoint, no each)
_BOTH = object()  # it accumulates the adjoints and keeps the partials (a recorded sweep)
Partials = tuple[list, list]  # (∂/∂first argument, ∂/∂second argument) per node; None = not needed


def local_partials(graph: Graph, values: Sequence, m=FLOAT, order: int = 1,
                   slots: Sequence[int] | None = None, adjoint: list | None = None,
                   active=None, each=None, keep: bool = False, spend: bool = False) -> Partials:
    """The partial derivatives of the nodes at ``slots`` (default: every node the output
    depends on, in the reverse sweep's order) at the point whose forward ``values`` are given:
    the one loop over the rules that every sweep runs, on floats, dual numbers and NumPy columns.

    ``first[k]`` is ∂node_k/∂(first argument) and ``second[k]`` ∂node_k/∂(second argument). An
    argument that is not ``active`` (:meth:`Graph.active`; default: a constant) gets ``None``
    (its tangent and adjoint do not matter, and its rule may not even be defined there:
    ∂(a^b)/∂b needs a > 0; with ``--wrt a`` it is never computed), as does every argument of a
    node not in ``slots``. ``m`` is the namespace the rules compute with (dual numbers give second
    derivatives: ``order`` 2, for the error message). A rule that fails is a
    :class:`NumericalError` naming the first node, in ``slots`` order, whose derivative is not
    finite.

    With ``adjoint`` (the reverse sweep, visiting in its order), each partial ``p`` of node
    ``s`` is not kept but accumulated at once: ``adjoint[argument] += adjoint[s] * p``. One pass
    instead of two: keeping every partial and reading it back costs the sweep a fifth more.
    With ``each`` instead, every partial is handed to ``each(s, argument, p)`` (the batch
    engine accumulates columns its own way: no pass over the rows to multiply by 1 or add to 0).
    With ``adjoint`` and ``keep``, both: the partials are accumulated and kept (the recorded
    sweep, whose trace reads them back for the rows it shows). With ``adjoint`` and ``spend``, a
    node's adjoint is set to None once passed on to its arguments (nothing visited later reads
    it): the sweep then holds only the adjoints still to pass on, not one for every node.
    """
    n = len(graph.ops) if (adjoint is None and each is None) or keep else 0
    first: list = [None] * n
    second: list = [None] * n
    if n:  # one test per partial on the hot path (each is None): the reverse sweep
        each = _BOTH if adjoint is not None else _KEEP
    if active is None:
        active = graph.active()
    base = graph.base
    ops, arg0, arg1 = graph.ops, graph.arg0, graph.arg1
    s, which = base, 0  # the node and the argument whose partial is being computed
    unit = getattr(m, "exact_units", False)  # bare balls: × ±1 and 0 + taken exactly
    # the slots as int32, as the visit order is, so the compiled loop reads C integers
    visit = graph.visit_order() if slots is None else \
        slots if slots.__class__ is array else array("i", slots)
    # A shift's max (logsumexp's and softmax's m in exp(x - m)): the result is the same for any
    # m, so its adjoint is exactly 0, though summed it is 1 - Σ softmax, a ball 0 ± 1e-1232
    shifts = graph.shifts if adjoint is not None else None
    # Bare balls: the bare forward sweep gives nodes of the same exact arguments one shared ball
    # (certify's _bare_forward), so a function's partial at the very same balls recurs (a wide
    # sum's exp(x0*x1 + 0.5), met a million times): computed once, the rule a pure function of
    # the balls. A tape whose first partials do not recur stops looking (_RECUR).
    known: dict | None = {} if unit else None
    looked = found = 0
    try:
        for i in range(len(visit)):
            s = visit[i]
            k = s - base
            if shifts and s in shifts:
                adjoint[s] = adjoint[s] * 0 + 0  # 0 in the sweep's own type (+0.0, not -0.0)
            a, b, y = arg0[k], arg1[k], values[s]
            rules = ops[k].partials
            x = values[a]
            z = None if b < 0 else values[b]
            for which in range(1 if b < 0 else 2):
                target = b if which else a
                if not active[target]:
                    continue
                rule = rules[which]
                if known is not None and ops[k].form is None:  # not +, -, ·, /: a function
                    key = (rule, id(x), id(z), id(y))  # the balls live in values: ids are theirs
                    p = known.get(key)
                    looked += 1
                    if p is None:
                        p = rule(m, x, y) if b < 0 else rule(m, x, z, y)
                        if len(known) < _RECUR[1]:
                            known[key] = p
                    else:
                        found += 1
                    if looked == _RECUR[0] and 2 * found < looked:
                        known = None
                else:
                    p = rule(m, x, y) if b < 0 else rule(m, x, z, y)
                if each is _KEEP or each is _BOTH:
                    (second if which else first)[k] = p
                if each is None or each is _BOTH:
                    if unit:
                        adjoint[target] = _accumulated(adjoint[target], adjoint[s], p)
                    else:
                        adjoint[target] += adjoint[s] * p
                elif each is not _KEEP:
                    each(s, target, p)
            if spend and adjoint is not None:
                adjoint[s] = None
    except (ValueError, ZeroDivisionError, OverflowError):
        raise not_differentiable(graph, s, values, order, which) from None
    except ArithmeticError as exc:  # a ball that cannot decide (engine.ball): say at which node
        exc.slot = s
        raise
    return first, second


# the bare sweep's partials remembered: judged after the first 1,024 (kept if half recur), at
# most 65,536 of them
_RECUR = (1 << 10, 1 << 16)


def _accumulated(old, upstream, p):
    """``old + upstream·p`` in a namespace whose numbers are exact under ``× ±1`` and ``0 +``
    (``exact_units``: bare balls): a partial 1.0 or -1.0 gives ``upstream`` or ``-upstream``
    itself, an upstream 1.0 or -1.0 (the seed's, down a sum's chain of + and -) gives ``p`` or
    ``-p``, and the first contribution to an adjoint (still the float 0.0) is kept as it is.
    Arb would round the radius of ``ball × 1.0`` up, and a sum's adjoint chain is long; the
    result is the same number in a ball no wider."""
    if type(p) is float and (p == 1.0 or p == -1.0):
        product = upstream if p == 1.0 else -upstream
    elif type(upstream) is float and (upstream == 1.0 or upstream == -1.0) and not isinstance(
            p, (int, float)):  # a ball (a number keeps the float product's type)
        product = p if upstream == 1.0 else -p
    else:
        product = upstream * p
    if type(old) is float and old == 0.0 and type(product) is not float:
        return product
    old += product
    return old


def node_partials(graph: Graph, partials: Partials, k: int) -> tuple:
    """Node k's partials, one per argument (``None`` for a constant argument)."""
    first, second = partials
    return (first[k],) if graph.arg1[k] < 0 else (first[k], second[k])


def not_differentiable(graph: Graph, s: int, values: Sequence, order: int = 1,
                       which: int = 0) -> NumericalError:
    """The error of node ``s``, whose derivative (``order`` 2: second derivative) by argument
    ``which`` is not finite: it names that argument (``x``, ``v3``) and its role."""
    k = s - graph.base
    prim, node = graph.ops[k], graph.node_id(s)
    arg_slots = graph.args(k)
    args = [values[a] for a in arg_slots]
    two = len(arg_slots) == 2
    by = ""
    if two:
        by = f" by {graph.node_id(arg_slots[which])} ({prim.roles[which]}, {'ab'[which]})"
    if order == 1:
        # The row's note, without its sentences about the other argument's rule.
        note = ". ".join(part for part in prim.note.split(". ")
                         if not (two and part.startswith(f"∂/∂{'ba'[which]}")))
        what = f"the derivative{by} is not finite here" + (f" ({note})" if note else "")
    else:  # the primitive's note is about its first derivative
        what = f"the second derivative{by} is not finite here"
    return NumericalError(f"{node} = {describe_node(graph, s, values)}: {what}", graph.spans[k],
                          label="not differentiable at this point", node=node,
                          values=tuple(float(a) for a in args))


# -- infinite slopes ------------------------------------------------------------------------------

class Singular(NamedTuple):
    """A node whose partial derivative by one argument does not exist at the point, and what it
    tends to there: ``slope`` is +inf or -inf (an infinite slope: sqrt at 0, asin at 1, from the
    side where the function is defined) or nan (no limit: 0/0 at atan2(0, 0))."""

    slot: int  # the node
    which: int  # the argument: 0 (a) or 1 (b)
    slope: float


def limit_slope(prim, args: Sequence[float], which: int, m=FLOAT) -> float:
    """What ∂prim/∂args[which] tends to as that argument approaches its value, from the side(s)
    where the primitive is defined: +inf or -inf when the rule grows without bound with one sign
    there (the slope of sqrt at 0, of cbrt at 0, of asin at 1), else nan. Read from the rule
    itself at two distances (h and h/10⁴ from the point), so a row needs nothing declared."""
    a = float(args[which])
    signs = set()
    for side in (-1.0, 1.0):
        slopes = []
        for h in (1e-6, 1e-10):
            moved = list(args)
            moved[which] = a + side * h * max(1.0, abs(a))
            try:
                y = prim.primal(*moved)
                slopes.append(prim.partials[which](m, *moved, y))
            except (ValueError, ZeroDivisionError, OverflowError):
                break  # outside the domain on this side
        if len(slopes) < 2:
            continue
        near, nearer = slopes
        if not abs(nearer) > 10 * abs(near) or (near > 0) != (nearer > 0):
            return math.nan  # bounded, or changing sign: not an infinite slope
        signs.add(1.0 if nearer > 0 else -1.0)
    return math.copysign(math.inf, signs.pop()) if len(signs) == 1 else math.nan
