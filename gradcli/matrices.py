"""The API's results shaped as matrices: :class:`JacobianResult` (every output by every input)
and :class:`HessianResult` (every second derivative), and their products with a vector,
:class:`ProductResult` (``wᵀJ`` or ``J·d``) and :class:`HvpResult` (``H·v``).

:mod:`gradcli.api` gives them (``gradcli.api.HessianResult`` is this class); they live here so
that an evaluation, which makes none of them, does not make their classes at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

from .engine.graph import Graph
from .engine.rounding import DEFAULT_DIGITS

__all__ = ["HessianResult", "HvpResult", "JacobianResult", "ProductResult"]


@dataclass
class HessianResult:
    """Value, gradient and Hessian: ``hessian[i][j]`` = ∂²f/∂``inputs[i]``∂``inputs[j]``."""

    source: str
    inputs: list[str]  # the rows and columns, in order of first appearance (or of ``wrt``)
    point: dict[str, float]
    value: float
    gradient: dict[str, float]
    hessian: list[list[float]]
    graph: Graph = field(repr=False)
    digits: int = DEFAULT_DIGITS
    proven: bool = False  # value, gradient and hessian are Proven floats (certified)

    def check(self, rtol: float | None = None, atol: float | None = None, strict: bool = False):
        """Each row against numerical derivatives of that component of the AD gradient (a
        ``HessianCheck``); the tolerances default to ``eval --check``'s."""
        from .check import DEFAULT_ATOL, DEFAULT_RTOL
        from .check import check_hessian
        position = {name: i for i, name in enumerate(self.graph.inputs)}
        columns = [position[name] for name in self.inputs]
        return check_hessian(self.graph, list(self.point.values()), columns, self.hessian,
                             DEFAULT_RTOL if rtol is None else rtol,
                             DEFAULT_ATOL if atol is None else atol, strict)


@dataclass
class HvpResult:
    """Value, gradient and a Hessian-vector product: ``product[x]`` = (H·``direction``) read at
    the input ``x``, for each input of ``inputs``; without the Hessian itself."""

    source: str
    inputs: list[str]  # the inputs read, in order of first appearance (or of ``wrt``)
    point: dict[str, float]
    value: float
    gradient: dict[str, float]
    direction: dict[str, float]  # every input's tangent (0 where the direction leaves it out)
    product: dict[str, float]
    graph: Graph = field(repr=False)
    digits: int = DEFAULT_DIGITS
    proven: bool = False  # value, gradient and product are Proven floats (certified)

    def check(self, rtol: float | None = None, atol: float | None = None, strict: bool = False):
        """Each entry of H·v against central differences of that component of the AD gradient
        along the direction (a ``Check`` whose rows are the entries); the tolerances default to
        ``eval --check``'s."""
        from .check import DEFAULT_ATOL, DEFAULT_RTOL, check_product
        inputs = self.graph.inputs
        return check_product(self.graph, [float(self.point[n]) for n in inputs],
                             [float(self.direction[n]) for n in inputs], self.product,
                             DEFAULT_RTOL if rtol is None else rtol,
                             DEFAULT_ATOL if atol is None else atol, strict)


@dataclass
class JacobianResult:
    """Every output's value and the Jacobian: ``jacobian[output][input]`` = ∂output/∂input.

    ``outputs`` are the rows (the program's outputs, or ``of``), ``inputs`` the columns (the
    inputs in order of first appearance, or ``wrt``); ``mode`` says how it was computed and
    ``sweeps`` how many sweeps that took.
    """

    kind: ClassVar[str] = "jacobian"  # beside a ProductResult's "vjp" and "jvp"
    values: dict[str, float]
    jacobian: dict[str, dict[str, float]]
    outputs: list[str]
    inputs: list[str]
    mode: str = "reverse"
    sweeps: int = 0
    auto: bool = False  # the mode was chosen by --mode auto
    source: str = ""
    point: dict[str, float] = field(default_factory=dict)
    graph: Graph = field(default=None, repr=False)
    slot_values: list[float] = field(default_factory=list, repr=False)
    # each sweep's (adjoints, contributions), or (partials, tangents)
    detail: tuple = field(default=(), repr=False)
    proven: bool = False  # values and entries are Proven (certified); the trace's sweeps are not

    @property
    def matrix(self) -> list[list[float]]:
        """The Jacobian as rows of numbers, in the order of ``outputs`` and ``inputs``."""
        return [[self.jacobian[o][i] for i in self.inputs] for o in self.outputs]

    @cached_property
    def trace(self):
        """Records of every sweep (see :mod:`gradcli.records`), computed on first use."""
        from .records import jacobian_trace
        if not self.slot_values and self.graph.n_slots:  # float64's sweeps failed (Unswept)
            raise self.slot_values.failure
        return jacobian_trace(self.graph, self.slot_values, self.mode, self.inputs, self.detail)

    def check(self, rtol: float | None = None, atol: float | None = None, expected=None,
              strict: bool = False):
        """Every entry against central differences of its output (a ``JacobianCheck``);
        ``expected`` maps (output, input) to (formula, value)."""
        from .check import DEFAULT_ATOL, DEFAULT_RTOL, check_jacobian
        return check_jacobian(self.graph, self.slot_values, self.inputs, self.matrix,
                              DEFAULT_RTOL if rtol is None else rtol,
                              DEFAULT_ATOL if atol is None else atol, expected, strict)


@dataclass
class ProductResult:
    """A Jacobian product from one sweep: ``kind`` "vjp" (``weights`` on the outputs, ``product``
    by input: ``wᵀJ``) or "jvp" (``weights`` on the inputs, ``product`` by output: ``J·d``)."""

    kind: str
    values: dict[str, float]
    weights: dict[str, float]
    product: dict[str, float]
    outputs: list[str]
    source: str = ""
    point: dict[str, float] = field(default_factory=dict)
    graph: Graph = field(default=None, repr=False)
    slot_values: list[float] = field(default_factory=list, repr=False)
    # (the adjoints, the weights, the contributions), or (partials, tangents)
    detail: tuple = field(default=(), repr=False)
    proven: bool = False  # values and product are Proven (certified); the trace's sweep is not

    @property
    def mode(self) -> str:
        return "reverse" if self.kind == "vjp" else "forward"

    @cached_property
    def trace(self):
        from .records import product_trace
        if not self.slot_values and self.graph.n_slots:  # float64's sweep failed (Unswept)
            raise self.slot_values.failure
        return product_trace(self.graph, self.slot_values, self.kind, self.detail)
