"""Properties searched for by hypothesis: gradcli's value and gradient equal an independent
high-precision reference, its Hessian SymPy's, and printed ASTs parse back to themselves.

The references are built independently of gradcli's rules. Values and gradients: the generated
AST is run by mpmath (each catalogue function mapped to its mpmath counterpart, :data:`MPMATH`),
and differentiated by ``mpmath.diff`` (a central difference at a step far below the working
precision, computed at twice it), at a precision raised until it is stable (see
:func:`converged`): 50 significant digits are not enough where the derivative cancels
(``1 - tanh(u)^2`` at ``u = 68`` is 1.8e-59, which 50 digits round to 0). No symbolic algebra:
SymPy's assumption system was most of this file's time, and recursed without end on some
programs. Hessians: the AST is translated to a SymPy expression (:data:`SYMPY`), differentiated
twice symbolically, and evaluated by mpmath node by node (:func:`compile_mp`), as the error
model of a second derivative needs the terms of its sums (see :func:`rounded_sums`). Both
references take a negative base to an integer power as gradcli does (see :func:`mp_power`).

**Well conditioned**, precisely: rounding is modelled by perturbations (see
:func:`sympy_program`): every operation's value is multiplied by ``1 + d_k``, and every path's
contribution to a derivative by ``1 + d_j``; in a Hessian entry, also every term of every sum
the second derivative adds (see :func:`rounded_sums`). A result (the value, one gradient
component, one Hessian entry) is compared only when its estimated error (the largest
``|R(d) - R(0)|`` over a few draws of every ``d`` from a normal distribution of standard
deviation ``2^-52``, one ulp) is at most ``1e-11 * |R(0)|`` (plus 1e-200, below which float64
has no relative precision), a hundred times below the tolerance. Past that the result is ill
conditioned (cancellation, a function near a pole): float64 itself cannot promise nine digits
there, and the component is skipped and counted as an event (see
``pytest --hypothesis-show-statistics``). Everything else must agree to a relative 1e-9, plus
1e-200, plus the reference's own error (the change between its last two precisions).
"""

from __future__ import annotations

import math
import os
import random
import signal
from contextlib import contextmanager
from dataclasses import dataclass

import mpmath
import pytest
import sympy as sp
from hypothesis import Phase, event, example, given, note, seed, settings
from hypothesis import strategies as st

import gradcli
from gradcli.language.ast import Assign, Binary, Call, Num, Program, Unary, Var
from gradcli.language.parser import parse
from gradcli.engine.primitives import BINARY_OPERATORS, CONSTANTS, TABLE, function_names, lookup
from gradcli.language.printer import to_source
from references import REFERENCES, missing
from strategies import COMPOUND, Case, cases, examples, expressions, programs

RTOL = 1e-9  # the agreement asked for
TINY = 1e-200  # below this, results are compared absolutely: subnormals have no relative precision
WELL_CONDITIONED = 1e-11  # estimated relative error at most this: the result is compared
ULP = 2.0 ** -52  # one ulp of relative error per operation (twice the unit roundoff)
TRIALS = 4
DIGITS = 50  # the reference's first precision; doubled until two precisions agree (see reference)
MAX_DIGITS = 1600  # past this the reference is used as it is, its own error in the tolerance
STABLE = 1e-30  # two precisions agreeing this closely (relative): the reference has converged
ZERO_DIGITS = 400  # a result of exactly 0 is believed only at this precision: below it, an exact
#                    0 may be cancellation (1 - tanh(204)^2 is 4e-177, 0 at 50 and 100 digits)

# -- the independent reference: each catalogue row's SymPy counterpart -------------------------

SYMPY = {name: ref.sympy for name, ref in REFERENCES.items() if ref.sympy is not None}
# Functions with a kink or a jump, as the branch that holds around the point: the strategy keeps
# every point off their kinks, so the branch has the same value and derivatives there, and SymPy
# differentiates an ordinary expression. ``at(a)`` is the argument's value at the point.
BRANCH = {name: ref.branch for name, ref in REFERENCES.items() if ref.branch is not None}


def exact(v: float) -> sp.Float:
    """A float64's exact value as a high-precision SymPy Float (gradcli's pi is the double
    closest to pi). Not a Rational: SymPy would raise it to a large power exactly."""
    return sp.Float(v, DIGITS + 10)


@dataclass
class SympyProgram:
    """A program's result as a SymPy expression, with the perturbations of the error model."""

    expr: sp.Expr
    inputs: dict[str, tuple[sp.Symbol, sp.Symbol]]  # name -> (value, tangent), first read first
    perturbations: list[sp.Symbol]


def sympy_program(program: Program, point: dict[str, float]) -> SympyProgram:
    """Translate a program AST to SymPy, with constants exact and functions with kinks taken as
    the branch that holds around ``point``.

    The error model: every operation's value is multiplied by ``1 + d_k``, and every read of an
    input ``x`` is ``x + t_x * (1 + d_j)``, so that ``d/dt_x`` at ``t = 0`` is the gradient with
    each path's contribution perturbed, as the reverse sweep's products and sums are. Each read
    of an assigned name is translated afresh, so ``a/a`` is not cancelled away symbolically:
    gradcli computes it, with rounding.
    """
    inputs: dict[str, tuple[sp.Symbol, sp.Symbol]] = {}
    perturbations: list[sp.Symbol] = []

    point_values: dict = {}  # SymPy node -> its mpmath value at the point (d = t = 0)

    def at(expr) -> float:
        """``expr``'s value at the point (every d and t zero), by mpmath, each node once."""
        if not point_values:
            point_values.update({d: mpmath.mpf(0) for d in perturbations})
            point_values.update({t: mpmath.mpf(0) for _, t in inputs.values()})
            point_values.update({x: mpmath.mpf(point[name]) for name, (x, _) in inputs.items()})
        with mpmath.workdps(DIGITS + 10):
            value = evaluate_mp(expr, point_values)
        return float(value.real if isinstance(value, mpmath.mpc) and value.imag == 0 else value)

    def perturbed():
        d = sp.Symbol(f"d{len(perturbations)}")
        perturbations.append(d)
        point_values[d] = mpmath.mpf(0)
        return 1 + d

    def translate(node, env):
        t = type(node)
        if t is Num:
            return exact(node.value)
        if t is Var:
            if node.name in env:
                value, scope = env[node.name]
                return translate(value, scope)
            if node.name in CONSTANTS:
                return exact(CONSTANTS[node.name])
            if node.name not in inputs:
                inputs[node.name] = (sp.Symbol(node.name), sp.Symbol(f"t_{node.name}"))
                point_values[inputs[node.name][0]] = mpmath.mpf(point[node.name])
                point_values[inputs[node.name][1]] = mpmath.mpf(0)
            x, tangent = inputs[node.name]
            return x + tangent * perturbed()
        if t is Unary:
            operand = translate(node.operand, env)
            return -operand if node.op == "-" else operand  # exact in float64 too
        if t is Binary:
            left, right = translate(node.left, env), translate(node.right, env)
            if node.op == "^":
                return power(left, right) * perturbed()
            return SYMPY[BINARY_OPERATORS[node.op]](left, right) * perturbed()
        if t is Call:
            args = [translate(a, env) for a in node.args]
            name = lookup(node.name).name
            if name == "pow":
                return power(*args) * perturbed()
            if name in BRANCH:
                return BRANCH[name](at, *args) * perturbed()
            return SYMPY[name](*args) * perturbed()
        raise TypeError(node)

    def power(a, b):
        """``a^b`` as gradcli defines it: for a negative base, the exponent is an integer in
        float64 (the strategy makes it a constant), and ``(-1)^n |a|^n`` is real. SymPy's
        ``a**b`` with the exponent's exact value (``cos(pi)`` is not exactly -1 in SymPy) would
        be complex."""
        if at(a) < 0:
            n = at(b)
            if n == int(n):
                return a ** sp.Integer(int(n))
        return a ** b

    env: dict[str, tuple] = {}  # name -> (its value's AST, the bindings that AST reads)
    for stmt in program.statements:
        if type(stmt) is Assign:
            value = stmt.value if stmt.op == "=" else Binary(stmt.op[0], Var(stmt.name), stmt.value)
            env = {**env, stmt.name: (value, env)}
            stmt = Var(stmt.name)
        result = translate(stmt, env)  # also for dead statements: they read inputs too
    return SympyProgram(sp.sympify(result), inputs, perturbations)


# -- SymPy expressions evaluated by mpmath, node by node -------------------------------------------
# lambdify prints each expression as Python source and compiles it: most of the reference's time.
# Instead each distinct node is converted once to an mpmath function of its arguments' values.

def _log(a, base=None):
    return mpmath.log(a) if base is None else mpmath.log(a) / mpmath.log(base)


def _power(a, b):
    if b == 0.5:
        return mpmath.sqrt(a)
    return a ** b


MPMATH_FUNCTIONS = {
    "exp": mpmath.exp, "log": _log, "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
    "cot": mpmath.cot, "sec": mpmath.sec, "csc": mpmath.csc,
    "asin": mpmath.asin, "acos": mpmath.acos, "atan": mpmath.atan, "atan2": mpmath.atan2,
    "sinh": mpmath.sinh, "cosh": mpmath.cosh, "tanh": mpmath.tanh, "coth": mpmath.coth,
    "sech": mpmath.sech, "csch": mpmath.csch,
    "asinh": mpmath.asinh, "acosh": mpmath.acosh, "atanh": mpmath.atanh,
    "erf": mpmath.erf, "erfc": mpmath.erfc, "sinc": mpmath.sinc, "gamma": mpmath.gamma,
    "loggamma": mpmath.loggamma, "polygamma": mpmath.polygamma, "digamma": mpmath.digamma,
    "floor": mpmath.floor, "ceiling": mpmath.ceil, "Abs": abs, "sign": mpmath.sign,
    # off a kink (the strategy keeps points off kinks): a second derivative's DiracDelta is 0
    "DiracDelta": lambda x, *order: mpmath.mpf(0) if x != 0 else mpmath.nan,
    "Heaviside": lambda x, h0=mpmath.mpf(0.5): mpmath.mpf(x > 0) if x != 0 else mpmath.mpf(h0),
}


def _leaf(node):
    """A function of no arguments giving a number node's value at the working precision."""
    if node.is_Integer:
        k = int(node)
        return lambda: mpmath.mpf(k)
    if node.is_Rational:
        p, q = int(node.p), int(node.q)
        return lambda: mpmath.mpf(p) / q
    if node.is_Float:
        raw = node._mpf_
        return lambda: mpmath.mpf(raw)
    if node is sp.pi:
        return lambda: +mpmath.pi
    if node is sp.E:
        return lambda: +mpmath.e
    if node in (sp.nan, sp.zoo, sp.oo, -sp.oo):
        return lambda: mpmath.nan
    raise TypeError(f"no mpmath value for {node!r}")


def _function(node):
    """The mpmath function of a node's arguments' values."""
    if node.is_Add:
        return lambda *a: mpmath.fsum(a)
    if node.is_Mul:
        return lambda *a: mpmath.fprod(a)
    if node.is_Pow:
        return _power
    name = type(node).__name__
    if name not in MPMATH_FUNCTIONS:
        raise TypeError(f"no mpmath function for {name}")
    return MPMATH_FUNCTIONS[name]


def evaluate_mp(expr, values: dict):
    """``expr``'s value with the symbols' ``values``; ``values`` keeps every node's value, so
    a later call on an expression sharing nodes computes only the new ones."""
    stack = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if node in values:
            continue
        if node.args and not ready:
            stack.append((node, True))
            stack += [(a, False) for a in node.args if a not in values]
            continue
        values[node] = (_function(node)(*[values[a] for a in node.args]) if node.args
                        else _leaf(node)())
    return values[expr]


def compile_mp(expr, symbols: list):
    """``f(*values)``: ``expr`` with ``symbols`` set to the values, at mpmath's working
    precision; each distinct node converted once (shared subexpressions computed once)."""
    slot = {s: k for k, s in enumerate(symbols)}
    steps: list = []  # (function, argument slots) per node, arguments first
    stack = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if node in slot:
            continue
        if node.args and not ready:
            stack.append((node, True))
            stack += [(a, False) for a in node.args if a not in slot]
            continue
        slot[node] = len(symbols) + len(steps)
        steps.append((_function(node), [slot[a] for a in node.args]) if node.args
                     else (_leaf(node), []))
    answer = slot[expr]

    def f(*values):
        row = list(values)
        for function, args in steps:
            row.append(function(*[row[k] for k in args]))
        return row[answer]
    return f


@dataclass
class Reference:
    """A high-precision result, its estimated float64 error, and its own error (all absolute).

    ``own_error`` is how far the reference itself may be off: the change between the last two
    precisions it was evaluated at (0 once two precisions agree exactly, or the expression is
    structurally 0). It widens the agreement asked for by exactly that much, no more.
    """

    value: mpmath.mpf
    error: mpmath.mpf
    own_error: mpmath.mpf = mpmath.mpf(0)
    digits: int = DIGITS  # the precision it was taken at

    def well_conditioned(self) -> bool:
        return self.error <= WELL_CONDITIONED * abs(self.value) + TINY

    def agrees(self, got: float) -> bool:
        return (abs(mpmath.mpf(got) - self.value)
                <= RTOL * abs(self.value) + TINY + self.own_error)


def rounded_sums(expr: sp.Expr, exact: set[sp.Symbol]) -> tuple[sp.Expr, list[sp.Symbol]]:
    """``expr`` with each term of each sum multiplied by its own ``1 + e_k``, and the ``e_k``.

    A second derivative adds terms that the operations' perturbations scale alike, so they
    cancel in the model and not in float64: ``sqrt(x^2)''`` is ``-x^2/|x|^3 + 1/|x|``, exactly
    0 for every ``d_k``, and about an ulp of ``1/|x|`` in gradcli's sweep. Sums with an input
    value or a perturbation as a term (an input's read ``x + t*(1 + d)``, a ``1 + d``) are left
    alone: inputs are exact, and each operation's rounding is already a ``d_k``.
    """
    added: list[sp.Symbol] = []

    def perturbed(total):
        terms = []
        for term in total.args:
            added.append(sp.Symbol(f"e{len(added)}"))
            terms.append(sp.Mul(term, 1 + added[-1], evaluate=False))
        return sp.Add(*terms, evaluate=False)

    def is_derivative_sum(node) -> bool:
        return node.is_Add and not any(term in exact or term in added for term in node.args)

    return expr.replace(is_derivative_sum, perturbed), added


def reference(prog: SympyProgram, point: dict[str, float],
              wrt: tuple[str, ...] = ()) -> Reference:
    """The derivative of the program's result with respect to ``wrt`` (``()``: the value itself;
    ``("x",)``: a gradient component; ``("x", "y")``: a Hessian entry) at ``point``.

    The precision is doubled from :data:`DIGITS` until two successive precisions agree to a
    relative :data:`STABLE` (an exact 0 only from :data:`ZERO_DIGITS` on), or up to
    :data:`MAX_DIGITS`, where the change between the last two precisions is kept as the
    reference's own error. The float64 error estimate is then taken at that precision.
    """
    expr = prog.expr
    for name in wrt:
        expr = sp.diff(expr, prog.inputs[name][1]) if name in prog.inputs else sp.Integer(0)
    if expr == 0:  # structurally zero: exact at any precision
        return Reference(mpmath.mpf(0), mpmath.mpf(0))
    values = [x for x, _ in prog.inputs.values()]
    tangents = [t for _, t in prog.inputs.values()]
    summed: list[sp.Symbol] = []
    if len(wrt) == 2:
        expr, summed = rounded_sums(expr, set(values) | set(prog.perturbations))
    perturbations = prog.perturbations + summed
    f = compile_mp(expr, values + tangents + perturbations)
    at = [mpmath.mpf(point[name]) for name in prog.inputs] + [0] * len(tangents)
    return converged(lambda d: f(*at, *d), len(perturbations))


def converged(evaluate, sites: int) -> Reference:
    """The reference from ``evaluate(d)`` (the result with the perturbations ``d``, one a
    site): precision doubled until stable, then the float64 error estimate."""
    def at_perturbation(d):
        try:
            value = evaluate(d)
        except (ValueError, ZeroDivisionError, TypeError, AttributeError):  # complex inside
            return mpmath.nan
        if isinstance(value, mpmath.mpc):  # an argument rounded off the edge of a domain
            return value.real if value.imag == 0 else mpmath.nan
        return mpmath.mpf(value)

    unperturbed = [0] * sites
    digits = DIGITS
    with mpmath.workdps(digits):
        exact_value = at_perturbation(unperturbed)
    own_error = mpmath.mpf(0)
    while mpmath.isfinite(exact_value) and digits < MAX_DIGITS:
        digits *= 2
        with mpmath.workdps(digits):
            previous, exact_value = exact_value, at_perturbation(unperturbed)
            own_error = abs(exact_value - previous)
            if own_error <= STABLE * abs(exact_value) and (exact_value != 0
                                                           or digits >= ZERO_DIGITS):
                break
    # Rounding errors are random-like: the error estimate is the largest change over a few
    # draws of every d_k from a normal distribution with a standard deviation of one ulp.
    error = mpmath.mpf(0) if mpmath.isfinite(exact_value) else mpmath.inf
    rng = random.Random(0)
    with mpmath.workdps(digits):
        for _ in range(TRIALS if sites and error == 0 else 0):
            moved = at_perturbation([rng.gauss(0, ULP) for _ in range(sites)])
            error = max(error, abs(moved - exact_value) if mpmath.isfinite(moved) else mpmath.inf)
    return Reference(exact_value, error, own_error, digits)


# -- the reference for values and gradients: the program run by mpmath ---------------------------
# Each catalogue row's mpmath counterpart; functions with a kink as they are (the strategy keeps
# every point off kinks, so near the point they are the branch that holds there).

MPMATH = {name: ref.mp for name, ref in REFERENCES.items()}  # (pow: mp_power, below)


def mp_power(a, b):
    """``a^b`` as gradcli defines it: a negative base needs an integer exponent (in float64;
    the strategy makes it a constant), and then the power is real: ``(-1)^cos(pi)`` is -1,
    though ``cos(pi)`` at 50 digits is not exactly -1. The exponent's own perturbations
    (an ulp) do not make it a non-integer."""
    if a < 0:
        n = float(b)
        if abs(n - round(n)) <= 1e-9 * max(1.0, abs(n)):
            return a ** int(round(n))
    return a ** b


def run_mp(program: Program, point: dict[str, float], steps: dict, d) -> mpmath.mpf:
    """The program's result by mpmath at the working precision, under the error model of
    :func:`sympy_program`: every operation's value times ``1 + d[k]``, every read of an input
    ``x`` is ``x + steps[x] * (1 + d[j])`` (``d`` None: no perturbation; the sites are
    numbered in the order they are met, each read of an assigned name evaluated afresh)."""
    site = 0

    def perturbed(value):
        nonlocal site
        if d is not None:
            value = value * (1 + d[site])
        site += 1
        return value

    def run(node, env):
        t = type(node)
        if t is Num:
            return mpmath.mpf(node.value)
        if t is Var:
            if node.name in env:
                value, scope = env[node.name]
                return run(value, scope)
            if node.name in CONSTANTS:
                return mpmath.mpf(CONSTANTS[node.name])
            return mpmath.mpf(point[node.name]) + perturbed(steps.get(node.name, 0))
        if t is Unary:
            operand = run(node.operand, env)
            return -operand if node.op == "-" else operand
        if t is Binary:
            left, right = run(node.left, env), run(node.right, env)
            if node.op == "^":
                return perturbed(mp_power(left, right))
            return perturbed(MPMATH[BINARY_OPERATORS[node.op]](left, right))
        if t is Call:
            args = [run(a, env) for a in node.args]
            name = lookup(node.name).name
            return perturbed(mp_power(*args) if name == "pow" else MPMATH[name](*args))
        raise TypeError(node)

    env: dict[str, tuple] = {}
    for stmt in program.statements:
        if type(stmt) is Assign:
            value = stmt.value if stmt.op == "=" else Binary(stmt.op[0], Var(stmt.name), stmt.value)
            env = {**env, stmt.name: (value, env)}
            stmt = Var(stmt.name)
        result = run(stmt, env)  # also for dead statements: they read inputs too
    return result


def mp_sites(program: Program, point: dict[str, float]) -> int:
    """How many perturbation sites :func:`run_mp` meets."""
    count = 0

    class Counter(list):
        def __getitem__(self, k):
            nonlocal count
            count = max(count, k + 1)
            return 0

    try:
        run_mp(program, point, {}, Counter())
    except (ValueError, ZeroDivisionError, TypeError):
        pass  # not finite at the point: the reference run stops at the same site, with nan
    return count


def mp_reference(program: Program, point: dict[str, float], wrt: str | None = None) -> Reference:
    """The program's value (``wrt`` None) or its derivative along the input ``wrt`` at
    ``point``, by mpmath alone: the value run at each precision, the derivative by
    ``mpmath.diff`` (a central difference at a step of 2^-(precision + 10) computed at twice
    the precision: exact to the working precision for the smooth functions the strategy
    keeps the point among). Cheap: no symbolic algebra."""
    sites = mp_sites(program, point)
    if wrt is None:
        return converged(lambda d: run_mp(program, point, {}, d), sites)
    return converged(lambda d: mpmath.diff(lambda s: run_mp(program, point, {wrt: s}, d), 0),
                     sites)


def compare(what: str, got: float, ref: Reference) -> None:
    """Assert agreement to RTOL when ``ref`` is well conditioned; otherwise record a skip."""
    note(f"{what}: gradcli {got!r}, SymPy {mpmath.nstr(ref.value, 20)}, "
         f"estimated float64 error {mpmath.nstr(ref.error, 3)}, reference's own error "
         f"{mpmath.nstr(ref.own_error, 3)} at {ref.digits} digits")
    if ref.digits > 2 * DIGITS:
        event(f"reference needed {ref.digits} digits")
    if not ref.well_conditioned():
        event(f"skipped as ill conditioned: {what.split()[0]}")
        return
    assert ref.agrees(got), f"{what}: gradcli {got!r} != SymPy {mpmath.nstr(ref.value, 20)}"


def inputs_in_order(program: Program) -> list[str]:
    """The names a program reads before assigning them (not pi, e), in order of first appearance."""
    assigned: set[str] = set()
    seen: dict[str, None] = {}
    for stmt in program.statements:
        stack = [stmt.value if type(stmt) is Assign else stmt]
        while stack:
            node = stack.pop()
            t = type(node)
            if t is Var and node.name not in assigned and node.name not in CONSTANTS:
                seen.setdefault(node.name)
            elif t is Unary:
                stack.append(node.operand)
            elif t is Binary:
                stack += [node.right, node.left]
            elif t is Call:
                stack.extend(reversed(node.args))
        if type(stmt) is Assign:
            assigned.add(stmt.name)
    return list(seen)


def case(source: str, **point: float) -> Case:
    """A hard case written by hand, for ``@example``."""
    return Case(parse(source), {k: float(v) for k, v in point.items()})


# -- value and gradient against SymPy -----------------------------------------------------------

# The reference is the slow side (mpmath at rising precision; SymPy for the Hessian, more): each
# property names its count under the thorough profile, scaled like every other property's;
# GRADCLI_HYPOTHESIS=long runs the long profile's count for every property.
LONG = os.environ.get("GRADCLI_HYPOTHESIS") == "long"


REFERENCE_SECONDS = 20  # SymPy can take minutes on a rare expression; gradcli's side is not timed


@contextmanager
def sympy_time_limit():
    """Around the SymPy side of an example: past the limit the example is recorded, not compared."""
    class TooSlow(Exception):
        pass

    def alarm(signum, frame):
        raise TooSlow

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(REFERENCE_SECONDS)
    try:
        yield
    except TooSlow:
        event("SymPy reference too slow: not compared")
    except RecursionError:  # SymPy's assumption system on some deep powers: its limit, not ours
        event("SymPy reference recursed without end: not compared")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def sympy_examples(n: int) -> settings:
    """``n`` examples under the thorough profile, scaled to the one in force; the long search
    runs its own count (strategies.examples would make it forty times ``n`` of slow references)."""
    return settings(max_examples=settings().max_examples if LONG else examples(n))


# Hard cases found by the search, kept so every run tries them first.
@sympy_examples(200)
@given(cases())
@example(case("c = x*y; c += c + 1; c", x=2, y=3))
@example(case("a = x\nsigmoid(17 + a)", x=0.5))  # found sigmoid' = y*(1 - y) cancelling
@example(case("tanh(x) + expm1(-x*2)", x=12))  # 1 - tanh^2 and expm1 + 1 cancelling
@example(case("erf(abs(x - 2.3) + 25)", x=0))  # the gradient underflows: compared absolutely
@example(case("abs(acos(ln(e))) + x", x=1))  # an ulp moves acos's argument past 1
@example(case("tanh(x)", x=204))  # 1 - tanh^2 = 2.6e-177: 0 at 50 and 100 digits, right at 800
@example(case("abs(x^cos(pi))", x=-1))  # cos(pi) is -1.0: a real power of a negative base
@example(case("e = y\na = +-(-θ*(y*y))\nt = acosh(arccosh(-y + 3.5))\n"
              "arccosh(arcsinh(arccos(cos(0))) + 1.4)", y=1, θ=1))
def test_value_and_gradient_equal_sympy(case: Case):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    result = gradcli.evaluate(source, case.point, float64=True)
    assert list(result.gradient) == inputs_in_order(case.program)
    compare("value", result.value, mp_reference(case.program, case.point))
    for name, got in result.gradient.items():
        compare(f"d/d{name}", got, mp_reference(case.program, case.point, name))


@sympy_examples(200)
@given(cases())
def test_forward_mode_equals_reverse_mode_and_sympy(case: Case):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    reverse = gradcli.evaluate(source, case.point, float64=True)
    forward = gradcli.evaluate(source, case.point, mode="forward", float64=True)
    assert forward.value == reverse.value
    for name, got in forward.gradient.items():
        ref = mp_reference(case.program, case.point, name)
        compare(f"forward d/d{name}", got, ref)
        if ref.well_conditioned():
            assert math.isclose(got, reverse.gradient[name], rel_tol=RTOL, abs_tol=TINY)


@sympy_examples(200)
@given(cases())
@example(case("tanh((e + x)^e)", x=2))  # 1.83e-57 (mpmath, 100 digits); 50 digits cancel to 0
def test_diff_output_reparsed_equals_the_gradient(case: Case):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    gradient = gradcli.evaluate(source, case.point, float64=True).gradient
    reparsed = {}
    try:
        programs = gradcli.derivatives(source)
    except gradcli.GradcliError as exc:  # trigamma's derivative ψ'' has no formula (documented)
        assert "trigamma" in str(exc), exc
        event("diff: no formula for trigamma's derivative")
        return
    for name, program in programs.items():
        note(f"d/d{name}:\n{program}")
        try:
            reparsed[name] = gradcli.evaluate(program, case.point, float64=True).value
        except gradcli.GradcliError as exc:  # the formula may cross a singularity AD avoids
            event(f"diff formula not evaluable: {type(exc).__name__}")
    if "sinc" in case.calls():  # its printed derivative (cos(a) - sinc(a))/a cancels near 0
        event("diff: sinc's formula is not compared (docs/functions.md)")
        return
    for name, value in reparsed.items():
        ref = mp_reference(case.program, case.point, name)
        compare(f"diff d/d{name}", value, ref)
        if ref.well_conditioned():
            assert math.isclose(value, gradient[name], rel_tol=RTOL, abs_tol=TINY)


@sympy_examples(100)
@given(cases(max_statements=2, max_depth=3))
@example(case("sqrt(x^2)*y", x=-0.80814296338019, y=2))  # SymPy: Abs, then DiracDelta
@example(case("sqrt(x^2)*1e-30", x=-0.80814296338019))  # exactly 0; float64 says 1.75e-46
def test_hessian_is_symmetric_and_equals_sympy(case: Case):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    try:
        result = gradcli.hessian(source, case.point, float64=True)
    except gradcli.GradcliError as exc:  # a second derivative can be infinite where the first is not
        event(f"hessian not finite: {type(exc).__name__}")
        return
    names = list(result.gradient)
    # Where SymPy's second derivative is exactly 0 (e/(1/x) is linear in x), the dual numbers'
    # own arithmetic may leave a few ulps of the gradient's size, which the reference's error
    # model (an ulp per primal operation) does not see.
    scale = max([abs(g) for g in result.gradient.values()] + [1.0])
    with sympy_time_limit():
        prog = sympy_program(case.program, case.point)
        for i, a in enumerate(names):
            for j, b in enumerate(names[: i + 1]):
                ref = reference(prog, case.point, (a, b))
                for what, got in ((f"d2/d{a}d{b}", result.hessian[i][j]),
                                  (f"d2/d{b}d{a}", result.hessian[j][i])):
                    if not (ref.value == 0 and abs(got) <= 16 * ULP * scale):
                        compare(what, got, ref)


def test_the_strategy_reaches_every_function_and_operator():
    seen: set[str] = set()

    @seed(8)
    @settings(max_examples=1000, database=None, phases=[Phase.generate])
    @given(cases())
    def collect(case):
        seen.update(case.calls())

    collect()
    every = {*function_names(), *BINARY_OPERATORS, "unary-", "unary+", "=", *COMPOUND}
    assert every <= seen, every - seen


def test_every_primitive_has_its_references():
    assert not missing(TABLE), "\n".join(missing(TABLE))


@pytest.mark.parametrize("source, point", [("abs(x^cos(pi))", -1.0), ("x^cos(pi)", -2.0),
                                           ("(x - 3)^2", 1.0)])
def test_the_references_take_negative_bases_to_integer_powers(source, point):
    """gradcli's a^b for a < 0 needs an integer b in float64 (cos(pi) is -1.0), and is real
    there; SymPy's Float exponent is not exactly -1, and once made the power complex."""
    case_ = case(source, x=point)
    n = round(math.cos(math.pi)) if "cos" in source else 2
    base = point if "cos" in source else point - 3
    value = abs(base ** n) if source.startswith("abs") else base ** n
    slope = n * base ** (n - 1) * (math.copysign(1, base ** n) if source.startswith("abs") else 1)
    for ref, wrt in ((mp_reference(case_.program, case_.point), None),
                     (mp_reference(case_.program, case_.point, "x"), "x")):
        assert ref.agrees(value if wrt is None else slope)
    prog = sympy_program(case_.program, case_.point)
    assert reference(prog, case_.point).agrees(value)
    assert reference(prog, case_.point, ("x",)).agrees(slope)


# -- the parser and the printer -----------------------------------------------------------------

@given(expressions)
def test_printed_expression_parses_back_to_itself(expr):
    assert parse(to_source(expr)) == Program((expr,))


@given(programs)
def test_printed_program_parses_back_to_itself(program):
    assert parse(to_source(program)) == program


@pytest.mark.parametrize("text", ["sin(x)**2 + cos(x)**2*y", "atan2(y, x)/sqrt(x**2 + y**2)",
                                  "exp(-x**2)*erf(y) - log(x, 2)", "x**(3/2)*y**-2 + pi*E",
                                  "tanh(x*y)**2 + acosh(y + 2) - asinh(x)/atanh(y/4)"])
def test_the_node_by_node_evaluator_agrees_with_sympy(text):
    """compile_mp (the Hessian reference's evaluator) against SymPy's own evalf, at 30 digits."""
    x, y = sp.symbols("x y")
    expr = sp.sympify(text)
    want = expr.evalf(30, subs={x: sp.Rational(7, 10), y: sp.Rational(13, 10)})
    with mpmath.workdps(30):
        got = compile_mp(expr, [x, y])(mpmath.mpf("0.7"), mpmath.mpf("1.3"))
        assert abs(got - mpmath.mpf(str(want))) <= mpmath.mpf(10) ** -25 * max(1, abs(got))
