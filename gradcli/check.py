"""Numerical differentiation as a check on AD, and on a gradient derived by hand.

:func:`check` compares derivatives that AD computed with difference quotients of the same compiled
graph, re-running the forward sweep at points shifted along one input at a time. It returns one
plain :class:`CheckRow` per input:

- The step is scaled to the input: h ≈ ε^(1/3)·max(1, |x|), rounded to a power of two so that
  the points sampled are exact. Central differences at h, h/2, h/4 are combined by Richardson
  extrapolation, and again at 3h/4, 3h/8, 3h/16; the spread of the extrapolants, the distance
  between the two results and a bound on rounding make the estimate of the numerical
  derivative's own error.
- When that error is too large to decide the check, steps from h/64 to 256h are tried and the
  most accurate estimate is kept. A step that would leave a function's domain, overflow, or cross
  a kink shrinks, or becomes one-sided, the same way. The row's note says what happened; it is
  never an error.
- A kink is a node of a primitive with a ``kink`` column (relu, abs, sign, step, min, max) sitting
  exactly at its kink point, whose side changes along the input. There the slopes from the left
  and from the right are estimated separately; when they differ f is not differentiable, the row
  fails, and its note says which function, which subgradient AD used and what each side sees.

``gradient`` is a callable and ``function`` picks the scalar that is differentiated from the
forward values (default: the output), so the same comparison checks other derivatives, e.g. one
component of the AD gradient against a row of a Hessian.

>>> from gradcli.api import compile, evaluate
>>> g = compile("log(x)+x*y-sin(y)")
>>> ad = lambda p: evaluate(g, dict(zip(g.inputs, p))).gradient
>>> result = check(g, [2.0, 3.0], ad)
>>> result.ok, [row.rel_error < 1e-8 for row in result.rows]
(True, [True, True])
"""

from __future__ import annotations

import math
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from .errors import GradcliError, InputError, name_list
from .engine.forward import forward
from .engine.graph import Graph, describe_node, point_vector
from .language.printer import format_constant
from .engine.partials import local_partials, node_partials
from .engine.reverse import reverse

EPS = sys.float_info.epsilon
# Stricter than autograd's check_grads (rtol = atol = 1e-6), JAX's 1e-5 and PyTorch's gradcheck
# (rtol 1e-3): on random expressions (benchmarks/check_accuracy.py) every estimate accurate enough
# to decide agreed with AD even at tolerances ten times smaller than these.
DEFAULT_RTOL = 1e-7
DEFAULT_ATOL = 1e-9
# Where f is sampled on each side, as fractions of the step: Richardson ladders h, h/2, h/4 and
# 3h/4, 3h/8, 3h/16 (all exact in binary for a power-of-two h).
_LADDERS = ((1.0, 0.5, 0.25), (0.75, 0.375, 0.1875))
_OFFSETS = tuple(f for ladder in _LADDERS for f in ladder)


@dataclass(frozen=True, slots=True)
class Expected:
    """A derivative the user derived by hand, evaluated at the point and compared with AD."""

    formula: str
    value: float
    abs_error: float  # |value - AD|
    rel_error: float  # abs_error / |AD|
    ok: bool
    ad: float = math.nan  # AD's ∂f/∂x it was compared with (not scaled by the seed)


@dataclass(frozen=True, slots=True)
class Kink:
    """Nodes at their kink point along an input, and the one-sided slopes of f there."""

    nodes: tuple[str, ...]  # "v1 = relu(0)"
    subgradients: tuple[str, ...]  # what AD used: "relu'(0) = 0", "∂min/∂a = 0.5, ∂min/∂b = 0.5"
    left: float
    right: float
    differentiable: bool  # the two slopes agree: f is smooth along the input after all
    jump: bool  # f itself jumps: the slopes grow like 1/h


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One input: AD's derivative against the numerical one (and the user's formula)."""

    input: str
    ad: float
    numeric: float
    numeric_error: float  # estimated error of ``numeric`` itself
    abs_error: float  # |ad - numeric|
    rel_error: float  # abs_error / |numeric|
    ok: bool  # abs_error <= atol + rtol * |numeric|, and not at a kink
    note: str = ""
    # "agree", "disagree" (confidently: AD or f is at fault) or "inconclusive" (the difference
    # quotient cannot decide here: huge arguments, values lost to rounding, no usable step)
    status: str = "agree"
    step: float = math.nan
    scheme: str = "central"  # "central", "forward", "backward" or "one-sided slopes" (a kink)
    kink: Kink | None = None
    expected: Expected | None = None
    # Against the certified gradient: how many of the printed digits plain float64 gets (None
    # when no certified reference was computed), and that reference's proven text.
    float64_digits: int | None = None
    certified: str | None = None
    unproven: bool = False  # failed: the printed (float64) digits are not the proven ones


@dataclass(slots=True)
class Check:
    """The check of every input; ``ok`` when AD agrees with every numerical derivative and formula."""

    rows: list[CheckRow]
    rtol: float
    atol: float
    strict: bool = False  # an inconclusive row fails too

    @property
    def ok(self) -> bool:
        """No row disagrees and every formula agrees (and, when strict, none is inconclusive)."""
        failing = ("disagree", "inconclusive") if self.strict else ("disagree",)
        return all(r.status not in failing and (r.expected is None or r.expected.ok)
                   for r in self.rows)

    @property
    def inconclusive(self) -> list[str]:
        """The inputs whose numerical derivative could not decide the check."""
        return [r.input for r in self.rows if r.status == "inconclusive"]


def agrees(value: float, reference: float, rtol: float, atol: float) -> bool:
    """|value - reference| <= atol + rtol * |reference|."""
    return abs(value - reference) <= atol + rtol * abs(reference)


def _formula_agrees(value, reference, rtol: float, atol: float) -> bool:
    """A hand-derived formula against AD: both certified, they agree when some number rounds to
    both proven texts (the same digits; or AD's ``0 ± 1e-1229`` holding the formula's exact 0:
    a tolerance could pass 0 for 3e-10, this never does); otherwise within the tolerances."""
    mine, theirs = getattr(value, "text", None), getattr(reference, "text", None)
    if mine is not None and theirs is not None:
        if mine == theirs:
            return True
        (lo, hi), (low, high) = _held(mine), _held(theirs)
        return lo <= high and low <= hi if lo == hi or low == high else lo < high and low < hi
    return agrees(value, reference, rtol, atol)


def _held(text: str):
    """The numbers a proven text stands for, as (low, high) Decimals: ``0`` is 0 exactly,
    ``0 ± 1eK`` is [-10^K, 10^K], and m digits are the numbers that round to them (half a unit
    in their last place either way; a neighbour's range only touches it)."""
    from decimal import Decimal
    if "±" in text:
        bound = Decimal(text.split("±")[1].strip())
        return -bound, bound
    x = Decimal(text)
    if x == 0:
        return x, x
    half = Decimal(5).scaleb(x.adjusted() - len(x.as_tuple().digits))
    return x - half, x + half


def relative(error: float, reference: float) -> float:
    if error == 0:
        return 0.0
    return error / abs(reference) if reference else math.inf


def base_step(x: float) -> float:
    """ε^(1/3)·max(1, |x|), rounded to a power of two."""
    return math.ldexp(1.0, round(math.log2(EPS ** (1 / 3) * max(1.0, abs(x)))))


# -- estimates ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Estimate:
    value: float
    error: float
    step: float
    scheme: str


def _extrapolate(d: list[float], rounding: list[float], orders: tuple[int, ...]) -> tuple[float, float]:
    """Richardson: quotients ``d`` at steps h, h/2, ... whose errors go as h^p for p in ``orders``.

    Returns the extrapolated value and an error estimate: the spread of the last pair of
    extrapolants (the truncation and noise left) plus the propagated bound on rounding.
    """
    spread = 0.0
    for p in orders:
        c = 1.0 / (2 ** p - 1)
        d = [b + (b - a) * c for a, b in zip(d, d[1:])]
        rounding = [rb * (1 + c) + ra * c for ra, rb in zip(rounding, rounding[1:])]
        if len(d) >= 2:
            spread = abs(d[-1] - d[-2])
    return d[-1], spread + rounding[-1]


class _Line:
    """f near the point, along one input at a time (or, with a ``direction``, along it whatever
    the input): values, and the side of each kink node."""

    def __init__(self, graph: Graph, point: list[float], function, kinks, direction=None):
        self.graph, self.point, self.function, self.kinks = graph, point, function, kinks
        self.direction = direction
        self.cache: dict[tuple[int, float], tuple[float | None, tuple[int, ...], str]] = {}

    def moved(self, i: int, t: float) -> list[float]:
        """The point with input i moved by t (with a direction v: the point + t·v)."""
        if self.direction is not None:
            return [p + t * v for p, v in zip(self.point, self.direction)]
        moved = list(self.point)
        moved[i] += t
        return moved

    def sample(self, i: int, t: float) -> tuple[float | None, tuple[int, ...], str]:
        """(f, kink sides, "") with input i moved by t, or (None, (), why f is not defined)."""
        key = (i, t)
        found = self.cache.get(key)
        if found is None:
            try:
                found = self.evaluate(self.moved(i, t))
            except GradcliError as exc:
                found = (None, (), str(exc))
            self.cache[key] = found
        return found

    def evaluate(self, point: list[float]):
        values = forward(self.graph, point)
        value = self.function(values)
        if not math.isfinite(value):
            return None, (), f"f is {value}"
        return value, self.sides(values), ""

    def sides(self, values: list[float]) -> tuple[int, ...]:
        return tuple(side(*[values[a] for a in args]) for _, side, args in self.kinks)


def _shown(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits, marked ≈ where those are not exactly the
    double (a step 1.4901161193847656e-08 is ≈1.5e-08): no digit is shown as the number's that
    is not."""
    text = f"{value:.{digits}g}"
    return text if not math.isfinite(value) or float(text) == value else "≈" + text


class _Checker:
    """Numerical derivatives along each input of one point, with their steps and notes."""

    def __init__(self, graph: Graph, point: Sequence[float], function, rtol: float, atol: float,
                 noise: float, direction=None):
        self.graph, self.rtol, self.atol, self.noise = graph, rtol, atol, noise
        live, base = graph.live_nodes(), graph.base
        kinks = [(base + k, p.kink, graph.args(k))
                 for k, p in enumerate(graph.ops) if p.kink is not None and live[k]]
        self.kink_slots = [slot for slot, *_ in kinks]
        self.line = _Line(graph, list(point), function, kinks, direction)
        # Along a direction v: steps in t are sized by the input v moves most (``along``), so
        # that input moves by the step an input of its size would (eval's --check's)
        self.along, self.scale = 0, 1.0
        if direction is not None and any(direction):
            self.along = max(range(len(direction)), key=lambda j: abs(direction[j]))
            self.scale = abs(direction[self.along])
        self.values = forward(graph, list(point))
        self.center = function(self.values)
        self.sides = self.line.sides(self.values)

    def _where(self, i: int, t: float) -> str:
        if self.line.direction is not None:
            return "the point" if t == 0 else \
                f"the point {'+' if t > 0 else '−'} {_shown(abs(t), 2)}·v"
        name = self.graph.inputs[i]
        return name if t == 0 else f"{name} {'+' if t > 0 else '−'} {_shown(abs(t), 2)}"

    def _call(self, slot: int) -> str:
        return describe_node(self.graph, slot, self.values)

    def _args(self, slot: int):
        k = slot - self.graph.base
        return self.graph.ops[k], [self.values[a] for a in self.graph.args(k)]

    def unusable(self, i: int, s: int, h: float) -> str:
        """Why side s (-1 or +1) of input i cannot be sampled at step h; "" when it can.

        It can when f is finite there, no kink node that is off its kink at the point changes
        side, and the nodes at their kink stay on one side throughout.
        """
        seen = None
        for fraction in _OFFSETS:
            t = s * h * fraction
            value, sides, why = self.line.sample(i, t)
            if value is None:
                return f"at {self._where(i, t)}: {why}"
            for j, (c, now) in enumerate(zip(self.sides, sides)):
                if (c != 0 and now != c) or (c == 0 and seen is not None and now != seen[j]):
                    slot = self.kink_slots[j]
                    return (f"{self.graph.node_id(slot)} = {self._call(slot)} crosses its kink "
                            f"between {self._where(i, 0)} and {self._where(i, t)}")
            seen = sides
        return ""

    def usable_step(self, i: int, s: int, h0: float) -> tuple[float | None, str]:
        """The largest step h0 / 2^j usable on side s (None if none is), and why h0 was not."""
        why = self.unusable(i, s, h0)
        if not why:
            return h0, ""
        floor = 64 * math.ulp(self.line.point[i]) / self.scale
        lo, hi = 1, max(1, int(math.log2(h0) - math.log2(floor)))
        if self.unusable(i, s, math.ldexp(h0, -hi)):
            return None, why
        while lo < hi:  # the smallest j whose step is usable, assuming usable steps nest
            mid = (lo + hi) // 2
            if self.unusable(i, s, math.ldexp(h0, -mid)):
                lo = mid + 1
            else:
                hi = mid
        return math.ldexp(h0, -lo), why

    def central(self, i: int, h: float) -> _Estimate | None:
        """Richardson-extrapolated central differences at step h (None if a side is unusable)."""
        if self.unusable(i, -1, h) or self.unusable(i, 1, h):
            return None

        def quotient(t):
            fp, fm = self.line.sample(i, t)[0], self.line.sample(i, -t)[0]
            return (fp - fm) / (2 * t), (self._rounding(fp) + self._rounding(fm)) / (2 * t)
        return self._extrapolated(quotient, h, (2, 4), "central")

    def one_sided(self, i: int, s: int, h: float) -> _Estimate | None:
        """Richardson-extrapolated one-sided differences on side s (None if it is unusable)."""
        if self.unusable(i, s, h):
            return None
        f0 = self.center

        def quotient(t):
            f = self.line.sample(i, s * t)[0]
            return (f - f0) / (s * t), (self._rounding(f) + self._rounding(f0)) / t
        return self._extrapolated(quotient, h, (1, 2), "forward" if s > 0 else "backward")

    def _rounding(self, f: float) -> float:
        """How far a computed value of f may be from the exact one."""
        return max(EPS * abs(f), self.noise)

    @staticmethod
    def _extrapolated(quotient, h: float, orders, scheme: str) -> _Estimate:
        # Two ladders, h·(1, 1/2, 1/4) and h·(3/4, 3/8, 3/16): f's rounding errors at points
        # aligned in binary can line up into a smooth-looking but wrong slope (a value quantised
        # near a singularity); a second ladder with other points does not line up the same way.
        (value, error), (other, other_error) = [
            _extrapolate(*map(list, zip(*(quotient(h * f) for f in ladder))), orders)
            for ladder in _LADDERS]
        return _Estimate(value, max(error, other_error, abs(value - other)), h, scheme)

    def _score(self, e: _Estimate) -> float:
        # Error measured against the tolerance at that value: estimates of very different sizes
        # (one converged, one not) compare fairly, and near zero the absolute error decides.
        return e.error / max(self.atol + self.rtol * abs(e.value), EPS * abs(e.value), 1e-300)

    def refine(self, estimator, h: float, shrunk: bool) -> _Estimate | None:
        """The estimate at step h when it is accurate enough to decide the check; otherwise
        (and always after a step was shrunk) the best over the steps h·4^k, k = -3 .. 4."""
        if not shrunk:
            first = estimator(h)
            if first is not None and self._score(first) <= 1:
                return first
        tries = [estimator(h * 4.0 ** k) for k in range(-3, 5)]
        found = []
        for k, e in enumerate(tries):
            if e is None:
                continue
            # An estimate must also agree with a neighbouring step's: a spread that is small by
            # coincidence does not make a wrong step look accurate.
            near = [abs(e.value - tries[j].value) for j in (k - 1, k + 1)
                    if 0 <= j < len(tries) and tries[j] is not None]
            found.append(_Estimate(e.value, max([e.error, min(near)] if near else [e.error]),
                                   e.step, e.scheme))
        return min(found, key=self._score, default=None)

    def estimate(self, i: int) -> tuple[_Estimate | None, str, Kink | None]:
        """The numerical derivative along input i, a note on how it was found, and any kink."""
        h0 = base_step(self.line.point[i]) / self.scale
        (hl, why_l), (hr, why_r) = self.usable_step(i, -1, h0), self.usable_step(i, 1, h0)
        if hl is not None and hr is not None:
            kink = self._kink(i, hl, hr, h0)
            if kink is not None:
                return kink
        central = lambda h: self.central(i, h)  # noqa: E731
        if not (why_l or why_r):
            best = self.refine(central, h0, False)
            if best.step == h0:
                return best, "", None
            return best, (f"step {_shown(best.step, 2)} instead of {_shown(h0, 2)}, where the "
                          f"difference quotient is only accurate to "
                          f"±{_shown(central(h0).error, 2)}"), None
        candidates = []
        if hl is not None and hr is not None:
            candidates.append(self.refine(central, min(hl, hr), True))
        for s, h in ((-1, hl), (1, hr)):
            if h is not None:
                candidates.append(self.refine(lambda h, s=s: self.one_sided(i, s, h), h, True))
        best = min((e for e in candidates if e is not None), key=self._score, default=None)
        why = why_l or why_r
        if best is None:
            return None, (f"no difference quotient: f is not defined on either side of "
                          f"{self._where(i, 0)} ({why_l}; {why_r})"), None
        if best.scheme == "central":
            return best, (f"step shrunk from {_shown(h0, 2)} to {_shown(best.step, 2)}: "
                          f"{why}"), None
        return best, (f"one-sided ({best.scheme}) differences, step {_shown(best.step, 2)}: "
                      f"{why}"), None

    def _kink(self, i: int, hl: float, hr: float, h0: float):
        """At a kink along input i: (estimate, note, Kink) from the one-sided slopes; else None."""
        left_sides, right_sides = self.line.sample(i, -hl)[1], self.line.sample(i, hr)[1]
        at = [j for j, c in enumerate(self.sides) if c == 0 and left_sides[j] != right_sides[j]]
        if not at:
            return None
        left = self.refine(lambda h: self.one_sided(i, -1, h), hl, hl < h0)
        right = self.refine(lambda h: self.one_sided(i, 1, h), hr, hr < h0)
        slots = [self.kink_slots[j] for j in at]
        jump = self._jumps(i, -1, left.step) or self._jumps(i, 1, right.step)
        differentiable = not jump and agrees(left.value, right.value, self.rtol, self.atol)
        kink = Kink(tuple(f"{self.graph.node_id(s)} = {self._call(s)}" for s in slots),
                    tuple(self._subgradient(s) for s in slots),
                    left.value, right.value, differentiable, jump)
        estimate = _Estimate((left.value + right.value) / 2, max(left.error, right.error),
                             min(left.step, right.step), "one-sided slopes")
        return estimate, "", kink

    def inconclusive(self, i: int, e: _Estimate, ad: float, gradient) -> str:
        """Why a disagreement may be the difference quotient's fault rather than AD's, if it
        may: then the check cannot decide (the row is inconclusive, not failed)."""
        name = self.graph.inputs[i]
        gap = abs(ad - e.value)
        sides = {"forward": (1,), "backward": (-1,)}.get(e.scheme, (-1, 1))
        if all(self.line.sample(i, s * e.step * f)[0] == self.center for s in sides for f in _OFFSETS):
            return (f"inconclusive: f does not change at all when {name} moves by up to "
                    f"{_shown(e.step, 2)}: the step is lost to rounding (a much larger "
                    "intermediate value absorbs it)")
        if 2 * e.error >= gap:
            return (f"inconclusive: the numerical derivative is itself only accurate to "
                    f"±{_shown(e.error, 2)} here, as much as it differs from AD")
        # A difference quotient is an average of f' over the interval it spans. Where AD's own
        # derivative changes across that interval by as much as the gap, the quotient cannot
        # tell AD's value at the point from that average (sin(x) at 1e22: the smallest step
        # spans many periods).
        variation = self._variation(i, e, sides, gradient, name)
        if 2 * variation >= gap:
            return (f"inconclusive: the step {_shown(e.step, 2)} is too coarse for f here: "
                    f"AD's ∂f/∂{name} itself changes by {_shown(variation, 2)} across it (huge "
                    "or tiny arguments), and the difference quotient only sees its average")
        return ""

    def _variation(self, i: int, e: _Estimate, sides, gradient, name: str) -> float:
        """The largest change of AD's derivative between the point and the ends of the step."""
        center = gradient(list(self.line.point))[name]
        largest = 0.0
        for s in sides:
            try:
                value = gradient(self.line.moved(i, s * e.step))[name]
            except GradcliError:
                return math.inf
            change = abs(value - center)
            if not math.isfinite(change):
                return math.inf
            largest = max(largest, change)
        return largest

    def _jumps(self, i: int, s: int, h: float) -> bool:
        """f(x + s·h/4) - f(x) is nearly f(x + s·h) - f(x): f jumps, it has no slope."""
        near = self.line.sample(i, s * h / 4)[0] - self.center
        far = self.line.sample(i, s * h)[0] - self.center
        return abs(far) > 1e3 * EPS * abs(self.center) and abs(near) > 0.9 * abs(far)

    def _subgradient(self, slot: int) -> str:
        """The local derivatives AD took at the kink (a constant argument has none)."""
        prim, args = self._args(slot)
        partials = local_partials(self.graph, self.values, slots=[slot])
        local = node_partials(self.graph, partials, slot - self.graph.base)
        if len(local) == 1:
            return f"{prim.name}'({format_constant(args[0])}) = {format_constant(local[0])}"
        return ", ".join(f"∂{prim.name}/∂{p} = {format_constant(v)}"
                         for p, v in zip("ab", local) if v is not None)


def kink_note(kink: Kink, name: str, ad: float, ok: bool) -> str:
    """The explanation of a kink row: which functions, which subgradients, what each side sees."""
    if len(kink.nodes) == 1:
        where = f"{kink.nodes[0]} is at its kink, where AD uses {kink.subgradients[0]}"
    else:
        where = (f"{' and '.join(kink.nodes)} are at their kinks, where AD uses "
                 f"{' and '.join(kink.subgradients)}")
    if kink.jump:
        return (f"{where}; but f jumps here along {name}: the difference quotients grow like 1/h "
                f"({_shown(kink.left, 3)} from the left, {_shown(kink.right, 3)} from the "
                "right), so f has no derivative at this point")
    if kink.differentiable:
        text = (f"{where}; f has the same slope {_shown(kink.left, 12)} from the left and "
                f"the right along {name}, so it is differentiable here")
        return text + ("" if ok else f"; but AD's subgradients add up to {_shown(ad, 12)}")
    return (f"{where}; along {name} the difference quotient sees slope "
            f"{_shown(kink.left, 12)} from the left and {_shown(kink.right, 12)} from the right, "
            "so f is not differentiable here")


def check(graph: Graph, point: Sequence[float], gradient: Callable[[list[float]], Mapping[str, float]],
          *, function: Callable[[list[float]], float] | None = None, noise: float = 0.0,
          rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
          expected: Mapping[str, tuple[str, float]] | None = None,
          expected_ad: Mapping[str, float] | None = None, strict: bool = False,
          direction: Sequence[float] | None = None) -> Check:
    """Compare ``gradient(point)`` (input name -> AD derivative) with numerical derivatives.

    ``point`` holds the input values in graph order. ``function(values)`` gives the scalar to
    differentiate from the forward sweep's values (default: the output); ``noise`` bounds the
    rounding error of its computed values near the point, beyond one ulp (see
    :func:`rounding_noise`). ``expected`` maps an input name to ``(formula, value)``, a
    hand-derived derivative compared with AD's, or with ``expected_ad[name]`` when given (AD's
    ∂f/∂x when ``gradient`` is scaled by a seed). Each row agrees, disagrees, or is inconclusive
    (the difference quotient cannot decide); ``strict`` makes an inconclusive row fail. With a
    ``direction`` v (one value per input), each derivative is along v, whatever its name: the
    difference quotients of ``function`` at the point ± h·v.
    """
    if rtol < 0 or atol < 0:
        raise InputError("tolerances must not be negative")
    output = graph.output
    function = function or (lambda values: values[output])
    ad = gradient(list(point))
    checker = _Checker(graph, point, function, rtol, atol, noise, direction)
    expected = expected or {}
    rows = []
    position = {name: i for i, name in enumerate(graph.inputs)}
    for name, derivative in ad.items():
        i = checker.along if direction is not None else position[name]
        estimate, note, kink = checker.estimate(i)
        if estimate is None:
            numeric, error, step, scheme = math.nan, math.inf, math.nan, "none"
        else:
            numeric, error, step, scheme = (estimate.value, estimate.error, estimate.step,
                                            estimate.scheme)
        abs_error = abs(derivative - numeric)
        ok = (estimate is not None and (kink is None or kink.differentiable)
              and agrees(derivative, numeric, rtol, atol))
        status = "agree" if ok else "disagree"
        if kink is not None:
            note = kink_note(kink, name if direction is None else "v", derivative, ok)
        elif estimate is None:
            status = "inconclusive"
        elif not ok:
            why = checker.inconclusive(i, estimate, derivative, gradient)
            if why:
                status = "inconclusive"
            note = "; ".join(filter(None, [note, why]))
        mine = None
        if name in expected:
            formula, value = expected[name]
            reference = derivative if expected_ad is None else expected_ad[name]
            diff = abs(value - reference)
            mine = Expected(formula, value, diff, relative(diff, reference),
                            _formula_agrees(value, reference, rtol, atol), reference)
        rows.append(CheckRow(name, derivative, numeric, error, abs_error,
                             relative(abs_error, numeric), ok, note, status, step, scheme, kink,
                             mine))
    return Check(rows, rtol, atol, strict)


# -- derivatives derived by hand (--expect) -----------------------------------------------------

def parse_expectations(texts: Sequence[str]) -> dict[str, str]:
    """``["x=1/x+y", "y=x-cos(y)"]`` -> ``{"x": "1/x+y", "y": "x-cos(y)"}``; a Jacobian entry is
    named ``OUTPUT.INPUT`` (``f2.x=...``)."""
    formulas: dict[str, str] = {}
    for text in texts:
        name, eq, formula = text.partition("=")
        name = name.strip()
        if not eq or not name or not formula.strip():
            raise InputError(f"{text!r}: expected NAME=FORMULA", option="expect",
                             hint='e.g. x="1/x+y"')
        if not all(part.isidentifier() for part in name.split(".", 1)):
            raise InputError(f"{text!r}: {name!r} is not a valid name", option="expect",
                             hint="an input (x), or an output and an input (f2.x)")
        if name in formulas:
            raise InputError(f"gives {name} twice", option="expect", names=(name,))
        formulas[name] = formula
    return formulas


def expected_values(formulas: Mapping[str, str], at: Mapping[str, float],
                    names: Sequence[str], digits: int | None = None) -> dict[str, tuple[str, float]]:
    """Each formula evaluated at the point ``at`` by the engine: name -> (formula, value).

    ``names`` are the inputs whose derivatives are compared; a formula for another name, a
    syntax error or a point outside the formula's domain is an error pointing into the formula.
    With ``digits``, each value is certified to that many significant digits (a Proven float).
    """
    values = {}
    known = set(names)
    shapes = getattr(at, "shapes", {})
    for name, formula in formulas.items():
        if name not in known and name in shapes:  # an array input: a formula for each element
            values.update(_array_expected(name, formula, at, shapes, known, digits))
            continue
        if name not in known:
            raise InputError(f"{name}: ∂f/∂{name} is not part of the gradient", option="expect",
                             names=(name,),
                             hint="the gradient has " + (name_list(names) or "no inputs"))

        graph, _ = _formula_graph(name, formula)
        with _about_expect(name, formula):
            values[name] = (formula.strip(), _value(graph, at, digits))
    return values


def _formula_graph(name: str, formula: str, shapes=None):
    """The graph of ``name``'s formula (lowered with the array inputs' ``shapes``), and the
    ``fail(message, span, hint)`` that makes an InputError pointing into the formula."""
    from .engine.graph import lower
    from .points import one_expression

    def fail(message, span, hint=None, cls=InputError):
        return cls(message, span, hint=hint, source=formula, option="expect", names=(name,))
    program = one_expression(formula, f"{name}: the formula", fail)
    with _about_expect(name, formula):
        return lower(program, formula, shapes), fail


@contextmanager
def _about_expect(name: str, formula: str):
    """A formula's own error, said to be about expect."""
    try:
        yield
    except GradcliError as exc:
        exc.sentence = f"{name}: {exc.text()}"
        exc.option, exc.source = "expect", formula
        raise


def _value(graph: Graph, at: Mapping[str, float], digits: int | None):
    """A formula's value at ``at``: proven to ``digits`` digits (where float64 may overflow:
    exp(1000)), or float64's."""
    if digits is not None:
        return _certified_value(graph, at, digits)
    return forward(graph, point_vector(graph, at))[graph.output]


def _array_expected(name: str, formula: str, at, shapes, known, digits: int | None):
    """``--expect w="2*w"`` for the array input ``w``: the formula, an array of ``w``'s shape
    (or a scalar, for every element), evaluated at ``at``; element name -> (formula, value)."""
    from .engine.arrays import element_names, shape_text
    graph, fail = _formula_graph(name, formula, shapes)
    shape = next(iter(graph.output_arrays.values()), ())
    if shape and shape != shapes[name]:
        raise fail(f"{name}: the formula's value has the shape {shape_text(shape)}, and ∂f/∂{name} "
                   f"has {shape_text(shapes[name])}", (0, len(formula)),
                   "give an array of the input's shape, or a number for every element")
    elements = element_names(name, shapes[name])
    outputs = [graph.only(i) for i in range(graph.n_outputs)] if shape else [graph] * len(elements)
    values = {}
    for element, output in zip(elements, outputs):
        if element not in known:  # (--wrt named some elements only)
            continue
        shown = formula.strip() if formula.strip().isidentifier() else f"({formula.strip()})"
        text = f"{shown}[{element[len(name) + 1:]}" if shape else formula.strip()
        with _about_expect(name, formula):
            values[element] = (text, _value(output, at, digits))
    if not values:
        raise InputError(f"{name}: ∂f/∂{name} is not part of the gradient", option="expect",
                         names=(name,), hint="the gradient has " + (name_list(sorted(known)) or "no inputs"))
    return values


def _certified_value(graph: Graph, at: Mapping[str, float], digits: int):
    """A formula's value at ``at``, every digit proven (the point as typed, when known)."""
    from .engine.certify import certify
    point_vector(graph, at)  # every input has a value (else the error that says which)
    texts = getattr(at, "texts", {})
    exact = [texts.get(name, at[name]) for name in graph.inputs]
    return certify(graph, exact, wrt_slots=[], digits=digits).value


def _formula_value(name: str, formula: str, at: Mapping[str, float], digits: int | None = None):
    from .engine.graph import compile as compile_graph
    with _about_expect(name, formula):
        graph = compile_graph(formula)
        if graph.n_outputs > 1:
            raise InputError(f"the formula has {graph.n_outputs} outputs; give one expression")
        return _value(graph, at, digits)


def entry_values(formulas: Mapping[str, str], at: Mapping[str, float], outputs: Sequence[str],
                 inputs: Sequence[str], digits: int | None = None
                 ) -> dict[str, dict[str, tuple[str, float]]]:
    """Formulas for Jacobian entries (``f2.x``, ``u.x``) evaluated at ``at``:
    output -> input -> (formula, value). A name must say its output and its input. With
    ``digits``, each value is certified to that many significant digits."""
    values: dict[str, dict[str, tuple[str, float]]] = {}
    for name, formula in formulas.items():
        output, dot, input_ = name.rpartition(".")
        if not dot:
            raise InputError(f"{name}: the program has {len(outputs)} outputs; say which one",
                             option="expect", names=(name,),
                             hint=f"e.g. {outputs[0]}.{name}=...")
        if output not in outputs:
            raise InputError(f"{name}: {output} is not an output", option="expect",
                             names=(output,), hint="the outputs are " + ", ".join(outputs))
        if input_ not in inputs:
            raise InputError(f"{name}: ∂{output}/∂{input_} is not part of the Jacobian",
                             option="expect", names=(input_,),
                             hint="its inputs are " + (", ".join(inputs) or "none"))
        values.setdefault(output, {})[input_] = (formula.strip(),
                                              _formula_value(name, formula, at, digits))
    return values


def rounding_noise(graph: Graph, values: list[float], adjoint: list[float]) -> float:
    """ε·max |v̄·v| over the nodes: the largest error one node's rounding can put into f.

    A node rounded to one ulp of its value v moves f by about ε·|v|·|∂f/∂v|. Near a singularity
    (atanh of a value next to -1, acos next to 1) that is far more than one ulp of f, and the
    difference quotients of f are that much less accurate; the error estimates must say so.
    """
    return EPS * max((abs(adjoint[s] * values[s]) for s in range(graph.base, graph.n_slots)),
                     default=0.0)


def check_result(result, *, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
                 expected: Mapping[str, tuple[str, float]] | None = None,
                 strict: bool = False, exact_at: Mapping | None = None) -> Check:
    """Check an evaluation (:class:`gradcli.api.Result`): its gradient, for its ``wrt`` and
    ``seed``, against numerical derivatives of its graph at its point.

    ``expected`` formulas are derivatives ∂f/∂x: they are compared with AD's ∂f/∂x, not with the
    gradient scaled by the seed (like with like)."""
    graph, wrt, seed, output = result.graph, list(result.gradient), result.seed, result.graph.output
    if getattr(result, "proven", False) and result.adjoint is None:
        why = result.float64.error if result.float64 is not None else None
        return _against_certified(unchecked(result.gradient, why, expected, rtol, atol, strict),
                                  result, exact_at)
    slot = {name: graph.n_const + i for i, name in enumerate(graph.inputs)}
    at = [result.inputs[name] for name in graph.inputs]

    def gradient(point: list[float]) -> dict[str, float]:
        if point == at:  # the numbers shown, whichever mode computed them (eval --mode forward)
            return dict(result.gradient)
        adjoint, _ = reverse(graph, forward(graph, point), seed, active=active)
        return {name: adjoint[slot[name]] for name in wrt}
    active = graph.active([slot[name] for name in wrt])
    plain, _ = reverse(graph, result.values, 1.0, active=active)  # ∂f/∂v, unscaled
    expected_ad = {name: plain[slot[name]] for name in wrt}
    if seed == 1.0:  # the gradient shown is ∂f/∂x itself (certified, when it is)
        expected_ad = dict(result.gradient)
    report = check(graph, at, gradient,
                   function=lambda values: seed * values[output],
                   noise=abs(seed) * rounding_noise(graph, result.values, plain), rtol=rtol,
                   atol=atol, expected=expected, expected_ad=expected_ad, strict=strict)
    return _against_certified(report, result, exact_at)


def unchecked(gradient: Mapping[str, float], why: str | None, expected=None,
              rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
              strict: bool = False) -> Check:
    """The check where float64 cannot run f at all (exp(1000) overflows: ``why``), though the
    certified sweep proved its ``gradient``: no difference quotient, each row inconclusive and
    saying why; the formulas (``expected``) compared with the proven gradient as ever."""
    note = (f"float64 cannot evaluate f here ({why or 'it fails'}): no difference quotient "
            "to compare")
    rows = []
    for name, derivative in gradient.items():
        mine = None
        if name in (expected or {}):
            formula, value = expected[name]
            diff = abs(value - derivative) if math.isfinite(value - derivative) else math.inf
            mine = Expected(formula, value, diff, relative(diff, derivative),
                            _formula_agrees(value, derivative, rtol, atol), derivative)
        rows.append(CheckRow(name, derivative, math.nan, math.inf, math.nan, math.nan, False,
                             note, "inconclusive", scheme="none", expected=mine))
    return Check(rows, rtol, atol, strict)


def _against_certified(report: Check, result, exact_at) -> Check:
    """Each row against the certified gradient: the float64 digits of a certified evaluation,
    or, for a float64 one (``--float64``), whether its printed digits are the proven ones (a
    row whose printed digits are not fails)."""
    from dataclasses import replace
    from .engine.rounding import float_text
    if getattr(result, "proven", False):
        f64 = result.float64
        rows = [replace(r, float64_digits=f64.gradient_digits.get(r.input) if f64 else None,
                        certified=result.gradient[r.input].text) for r in report.rows]
        return replace(report, rows=rows)
    if exact_at is None or result.mode != "reverse":
        return report
    from .engine.certify import agreement, certify
    graph = result.graph
    texts = getattr(exact_at, "texts", {})
    slots = {name: graph.n_const + graph.inputs.index(name) for name in result.gradient}
    try:
        proven = certify(graph, [texts.get(n, exact_at[n]) for n in graph.inputs],
                         wrt_slots=list(slots.values()), seed=result.seed, digits=result.digits)
    except GradcliError:
        return report
    balls = dict(zip(slots, proven.gradient_reals))
    rows = []
    for r in report.rows:
        reference = proven.gradient[list(slots).index(r.input)]
        printed = float_text(float(r.ad), result.digits)
        kept = agreement(float(r.ad), balls[r.input], result.digits)
        if printed != reference.text and r.status == "agree":
            note = (f"the printed {printed} is not the proven {reference.text}: float64 gets "
                    f"{kept} of {result.digits} digits here")
            r = replace(r, ok=False, status="disagree", unproven=True,
                        note="; ".join(filter(None, [r.note, note])))
        rows.append(replace(r, float64_digits=kept, certified=reference.text))
    return replace(report, rows=rows)


# -- the check: each row of H against numerical derivatives of that gradient component ----------

@dataclass(slots=True)
class MatrixCheck:
    """Each row of a matrix of derivatives checked as the gradient of one function (a
    :class:`~gradcli.check.Check` whose rows are the columns): a Hessian's rows are the gradient's
    components, a Jacobian's the outputs."""

    rows: dict[str, Check]
    rtol: float
    atol: float
    strict: bool = False

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.rows.values())

    def _entry(self, row: str, column: str) -> str:
        return f"{row}, {column}"

    @property
    def inconclusive(self) -> list[str]:
        """Each entry the numerical derivative could not decide (``"x, y"``; ``"f2.x"``)."""
        return [self._entry(name, col) for name, c in self.rows.items() for col in c.inconclusive]


class HessianCheck(MatrixCheck):
    """Row ``name`` of H checked as the gradient of ∂f/∂name, with :mod:`gradcli.check`'s
    numerical differentiation; an entry reads ``"x, y"``."""

    __slots__ = ()


def check_hessian(graph: Graph, point: list[float], columns: list[int],
                  matrix: list[list[float]], rtol: float = DEFAULT_RTOL,
                  atol: float = DEFAULT_ATOL, strict: bool = False) -> HessianCheck:
    """Compare each row of ``matrix`` (the inputs at ``columns``) with numerical derivatives of
    the AD gradient's component: ``|ad - numeric| <= atol + rtol·|numeric|``."""
    names = [graph.inputs[j] for j in columns]
    rows = {}
    for a, i in enumerate(columns):
        slot = graph.n_const + i

        def component(values: list[float], slot: int = slot) -> float:
            return reverse(graph, values)[0][slot]
        row = dict(zip(names, matrix[a]))
        rows[names[a]] = check(graph, point, lambda p, row=row: row, function=component,
                               rtol=rtol, atol=atol, strict=strict)
    return HessianCheck(rows, rtol, atol, strict)


def check_product(graph: Graph, point: list[float], direction: list[float],
                  product: Mapping[str, float], rtol: float = DEFAULT_RTOL,
                  atol: float = DEFAULT_ATOL, strict: bool = False) -> Check:
    """A Hessian-vector product H·v (input name -> AD's entry) against central differences of
    that component of the AD gradient along v, (∂f/∂x_i(x + h·v) - ∂f/∂x_i(x - h·v))/2h,
    extrapolated and judged as eval's --check judges the gradient (``direction``: v, one value
    per input in graph order). The rows are the entries, in order."""
    from .engine.dual import hessian_vector_product
    rows = []
    for name, value in product.items():
        slot = graph.n_const + graph.inputs.index(name)

        def component(values: list[float], slot: int = slot) -> float:
            return reverse(graph, values)[0][slot]

        def ad(at: list[float], name: str = name, value: float = value, slot: int = slot):
            if list(at) == list(point):
                return {name: value}
            values = forward(graph, list(at))  # (the check asks at a moved point: inconclusive?)
            _, hv = hessian_vector_product(graph, values, local_partials(graph, values),
                                           list(direction))
            return {name: hv[slot - graph.n_const]}
        rows += check(graph, point, ad, function=component, rtol=rtol, atol=atol,
                      strict=strict, direction=direction).rows
    return Check(rows, rtol, atol, strict)


# -- the check of a Jacobian: each row against numerical derivatives of its output --------------

class Unswept(list):
    """Float64's sweep of a program it cannot run (exp(1000) overflows), in place of its
    values: empty, holding the ``failure``, which a trace of those sweeps raises."""

    def __init__(self, failure: Exception):
        super().__init__()
        self.failure = failure

class JacobianCheck(MatrixCheck):
    """Row ``output`` of the Jacobian checked as the gradient of that output; an entry reads
    ``"f2.x"``, as ``--expect`` names it."""

    __slots__ = ()

    def _entry(self, row: str, column: str) -> str:
        return f"{row}.{column}"


def check_jacobian(graph: Graph, values: list[float], inputs: list[str],
                   matrix: list[list[float]], rtol: float = DEFAULT_RTOL,
                   atol: float = DEFAULT_ATOL, expected=None, strict: bool = False) -> JacobianCheck:
    """Each row of ``matrix`` (one per output of ``graph``; columns ``inputs``) against central
    differences of that output; ``expected``: output -> input -> (formula, value). ``values``
    an :class:`Unswept` (float64 fails where the certified entries exist): every entry
    inconclusive, saying why."""
    rows = {}
    if type(values) is Unswept:
        for i, name in enumerate(graph.output_names):
            rows[name] = unchecked(dict(zip(inputs, matrix[i])), str(values.failure),
                                   (expected or {}).get(name), rtol, atol, strict)
        return JacobianCheck(rows, rtol, atol, strict)
    point = values[graph.n_const:graph.base]
    for i, name in enumerate(graph.output_names):
        one = graph.only(i)
        adjoint, _ = reverse(one, values)
        row = dict(zip(inputs, matrix[i]))
        rows[name] = check(one, point, lambda p, row=row: row,
                           function=lambda v, slot=one.output: v[slot],
                           noise=rounding_noise(one, values, adjoint), rtol=rtol, atol=atol,
                           expected=(expected or {}).get(name), strict=strict)
    return JacobianCheck(rows, rtol, atol, strict)
