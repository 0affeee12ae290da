"""Properties searched for by hypothesis: gradcli's value and gradient equal SymPy's, and printed
ASTs parse back to themselves.

The reference is built independently of gradcli's rules: the generated AST is translated to a
SymPy expression (each catalogue function mapped to its SymPy counterpart below), differentiated
symbolically, and evaluated with mpmath at a precision raised until it is stable (see
:func:`reference`): 50 significant digits are not enough where the derivative formula cancels
(``1 - tanh(u)^2`` at ``u = 68`` is 1.8e-59, which 50 digits round to 0).

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
import sympy as sp
from hypothesis import Phase, event, example, given, note, seed, settings
from hypothesis import strategies as st

import gradcli
from gradcli.language.ast import Assign, Binary, Call, Num, Program, Unary, Var
from gradcli.language.parser import parse
from gradcli.engine.primitives import BINARY_OPERATORS, CONSTANTS, TABLE, function_names, lookup
from gradcli.language.printer import to_source
from strategies import COMPOUND, Case, cases, expressions, programs

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

SYMPY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "neg": lambda a: -a,
    "pow": lambda a, b: a ** b,
    "exp": sp.exp,
    "expm1": lambda a: sp.exp(a) - 1,
    "log": sp.log,
    "log1p": lambda a: sp.log(1 + a),
    "log2": lambda a: sp.log(a) / sp.log(2),
    "log10": lambda a: sp.log(a) / sp.log(10),
    "sqrt": sp.sqrt,
    "sin": sp.sin, "cos": sp.cos, "tan": sp.tan,
    "asin": sp.asin, "acos": sp.acos, "atan": sp.atan,
    "atan2": sp.atan2,
    "hypot": lambda a, b: sp.sqrt(a ** 2 + b ** 2),
    "sinh": sp.sinh, "cosh": sp.cosh, "tanh": sp.tanh,
    "asinh": sp.asinh, "acosh": sp.acosh, "atanh": sp.atanh,
    "sigmoid": lambda a: 1 / (1 + sp.exp(-a)),
    "softplus": lambda a: sp.log(1 + sp.exp(a)),
    "erf": sp.erf,
    "erfc": sp.erfc,
    "sec": sp.sec, "csc": sp.csc, "cot": sp.cot,
    "sinc": sp.sinc,  # SymPy's sinc is sin(x)/x, as gradcli's
    "exp2": lambda a: 2 ** a,
    "log_base": lambda a, b: sp.log(a) / sp.log(b),
    "gamma": sp.gamma,
    "digamma": sp.digamma,
    "trigamma": lambda a: sp.polygamma(1, a),
}

# Functions with a kink or a jump, as the branch that holds around the point: the strategy keeps
# every point off their kinks, so the branch has the same value and derivatives there, and SymPy
# differentiates an ordinary expression. ``at(a)`` is the argument's value at the point.
BRANCH = {
    "cbrt": lambda at, a: a ** sp.Rational(1, 3) if at(a) >= 0 else -(-a) ** sp.Rational(1, 3),
    "abs": lambda at, a: a if at(a) >= 0 else -a,
    "relu": lambda at, a: a if at(a) > 0 else sp.Integer(0),
    "min": lambda at, a, b: a if at(a) <= at(b) else b,
    "max": lambda at, a, b: a if at(a) >= at(b) else b,
    "sign": lambda at, a: sp.Integer((at(a) > 0) - (at(a) < 0)),
    "step": lambda at, a: sp.Integer(at(a) > 0),
    # ln|Γ(a)|: Γ is positive for a > 0 and, below 0, has the sign (-1)^floor(a)
    "lgamma": lambda at, a: sp.loggamma(a) if at(a) > 0 else sp.log(
        sp.gamma(a) * (1 if math.floor(at(a)) % 2 == 0 else -1)),
    "floor": lambda at, a: sp.Integer(math.floor(at(a))),
    "ceil": lambda at, a: sp.Integer(math.ceil(at(a))),
    "trunc": lambda at, a: sp.Integer(math.trunc(at(a))),
    "round": lambda at, a: sp.Integer(round(at(a))),
    "mod": lambda at, a, b: a - b * sp.Integer(math.floor(at(a) / at(b))),
}

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

    def at(expr) -> float:
        zero = {d: 0 for d in perturbations} | {t: 0 for _, t in inputs.values()}
        exact_point = {x: exact(point[name]) for name, (x, _) in inputs.items()}
        return float(sp.N(expr.xreplace(zero).xreplace(exact_point)))

    def perturbed():
        d = sp.Symbol(f"d{len(perturbations)}", real=True)
        perturbations.append(d)
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
            x, tangent = inputs.setdefault(node.name, (sp.Symbol(node.name, real=True),
                                                       sp.Symbol(f"t_{node.name}", real=True)))
            return x + tangent * perturbed()
        if t is Unary:
            operand = translate(node.operand, env)
            return -operand if node.op == "-" else operand  # exact in float64 too
        if t is Binary:
            left, right = translate(node.left, env), translate(node.right, env)
            return SYMPY[BINARY_OPERATORS[node.op]](left, right) * perturbed()
        if t is Call:
            args = [translate(a, env) for a in node.args]
            name = lookup(node.name).name
            if name in BRANCH:
                return BRANCH[name](at, *args) * perturbed()
            return SYMPY[name](*args) * perturbed()
        raise TypeError(node)

    env: dict[str, tuple] = {}  # name -> (its value's AST, the bindings that AST reads)
    for stmt in program.statements:
        if type(stmt) is Assign:
            value = stmt.value if stmt.op == "=" else Binary(stmt.op[0], Var(stmt.name), stmt.value)
            env = {**env, stmt.name: (value, env)}
            stmt = Var(stmt.name)
        result = translate(stmt, env)  # also for dead statements: they read inputs too
    return SympyProgram(sp.sympify(result), inputs, perturbations)


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


def _undefined_at_zero(x, *order):
    """DiracDelta(x) away from 0 is 0; at 0 there is no number to compare with."""
    return mpmath.mpf(0) if x != 0 else mpmath.nan


# SymPy writes sqrt(u^2) as Abs(u) for real u, so second derivatives can carry DiracDelta (and
# Heaviside, sign): mpmath has no DiracDelta, so lambdify is given its value off the kink (the
# strategy keeps every point off kinks).
MPMATH_EXTRAS = {
    "DiracDelta": _undefined_at_zero,
    "Heaviside": lambda x, h0=mpmath.mpf(0.5): (mpmath.mpf(x > 0) if x != 0 else mpmath.mpf(h0)),
    "sign": mpmath.sign,
}


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
            added.append(sp.Symbol(f"e{len(added)}", real=True))
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
    f = sp.lambdify(values + tangents + perturbations, expr, modules=[MPMATH_EXTRAS, "mpmath"])
    at = [mpmath.mpf(point[name]) for name in prog.inputs] + [0] * len(tangents)
    unperturbed = [0] * len(perturbations)

    def at_perturbation(d):
        try:
            value = f(*at, *d)
        except (ValueError, ZeroDivisionError, TypeError, AttributeError):  # complex inside
            return mpmath.nan
        if isinstance(value, mpmath.mpc):  # an argument rounded off the edge of a domain
            return value.real if value.imag == 0 else mpmath.nan
        return mpmath.mpf(value)

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
        for _ in range(TRIALS if (prog.perturbations or summed) and error == 0 else 0):
            moved = at_perturbation([rng.gauss(0, ULP) for _ in perturbations])
            error = max(error, abs(moved - exact_value) if mpmath.isfinite(moved) else mpmath.inf)
    return Reference(exact_value, error, own_error, digits)


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

# SymPy is the slow side (about a second an example on 2 cores): the CI profile runs a few hundred
# examples in all; GRADCLI_HYPOTHESIS=long runs the long profile's count for every property.
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
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def sympy_examples(n: int) -> settings:
    return settings(max_examples=settings().max_examples if LONG else n)


# Hard cases found by the search, kept so every run tries them first.
@sympy_examples(200)
@given(cases())
@example(case("c = x*y; c += c + 1; c", x=2, y=3))
@example(case("a = x\nsigmoid(17 + a)", x=0.5))  # found sigmoid' = y*(1 - y) cancelling
@example(case("tanh(x) + expm1(-x*2)", x=12))  # 1 - tanh^2 and expm1 + 1 cancelling
@example(case("erf(abs(x - 2.3) + 25)", x=0))  # the gradient underflows: compared absolutely
@example(case("abs(acos(ln(e))) + x", x=1))  # an ulp moves acos's argument past 1
@example(case("tanh(x)", x=204))  # 1 - tanh^2 = 2.6e-177: 0 at 50 and 100 digits, right at 800
@example(case("e = y\na = +-(-θ*(y*y))\nt = acosh(arccosh(-y + 3.5))\n"
              "arccosh(arcsinh(arccos(cos(0))) + 1.4)", y=1, θ=1))
def test_value_and_gradient_equal_sympy(case: Case):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    result = gradcli.evaluate(source, case.point)
    with sympy_time_limit():
        prog = sympy_program(case.program, case.point)
        assert list(result.gradient) == inputs_in_order(case.program) == list(prog.inputs)
        compare("value", result.value, reference(prog, case.point))
        for name, got in result.gradient.items():
            compare(f"d/d{name}", got, reference(prog, case.point, (name,)))


@sympy_examples(200)
@given(cases())
def test_forward_mode_equals_reverse_mode_and_sympy(case: Case):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    reverse = gradcli.evaluate(source, case.point)
    forward = gradcli.evaluate(source, case.point, mode="forward")
    assert forward.value == reverse.value
    with sympy_time_limit():
        prog = sympy_program(case.program, case.point)
        for name, got in forward.gradient.items():
            ref = reference(prog, case.point, (name,))
            compare(f"forward d/d{name}", got, ref)
            if ref.well_conditioned():
                assert math.isclose(got, reverse.gradient[name], rel_tol=RTOL, abs_tol=TINY)


@sympy_examples(200)
@given(cases())
@example(case("tanh((e + x)^e)", x=2))  # 1.83e-57 (mpmath, 100 digits); 50 digits cancel to 0
def test_diff_output_reparsed_equals_the_gradient(case: Case):
    source = to_source(case.program)
    note(f"source:\n{source}\npoint: {case.point}")
    gradient = gradcli.evaluate(source, case.point).gradient
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
            reparsed[name] = gradcli.evaluate(program, case.point).value
        except gradcli.GradcliError as exc:  # the formula may cross a singularity AD avoids
            event(f"diff formula not evaluable: {type(exc).__name__}")
    if "sinc" in case.calls():  # its printed derivative (cos(a) - sinc(a))/a cancels near 0
        event("diff: sinc's formula is not compared (docs/functions.md)")
        return
    with sympy_time_limit():
        prog = sympy_program(case.program, case.point)
        for name, value in reparsed.items():
            ref = reference(prog, case.point, (name,))
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
        result = gradcli.hessian(source, case.point)
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


def test_every_primitive_has_a_sympy_counterpart():
    assert set(SYMPY) | set(BRANCH) == set(TABLE) and not set(SYMPY) & set(BRANCH)


# -- the parser and the printer -----------------------------------------------------------------

@given(expressions)
def test_printed_expression_parses_back_to_itself(expr):
    assert parse(to_source(expr)) == Program((expr,))


@given(programs)
def test_printed_program_parses_back_to_itself(program):
    assert parse(to_source(program)) == program
