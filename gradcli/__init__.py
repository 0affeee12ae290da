"""gradcli: values and exact gradients of expressions, by reverse-mode automatic differentiation.

>>> import gradcli
>>> gradcli.evaluate("x*x", {"x": 3}).gradient
{'x': 6.0}

The engine is imported on first use, so ``import gradcli`` (and the CLI's start-up) stays cheap.
"""

__version__ = "0.1.0"

_API = ("evaluate", "compile", "hessian", "derivatives", "Result", "HessianResult",
        "evaluate_batch", "jacobian", "JacobianResult", "vjp", "jvp", "ProductResult",
        "hessians", "all_derivatives", "jacobian_batch", "codegen", "derivation_steps",
        "hvp", "HvpResult")
__all__ = [*_API, "GradcliError", "__version__"]


def __getattr__(name):
    if name in _API:
        from . import api
        return getattr(api, name)
    if name == "GradcliError":
        from .errors import GradcliError
        return GradcliError
    raise AttributeError(f"module 'gradcli' has no attribute {name!r}")
