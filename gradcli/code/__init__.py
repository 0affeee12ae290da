"""Generated code: an adjoint program (:mod:`gradcli.symbolic.adjoint`) as source code in
Python, NumPy, JAX or C, to paste into a program (``gradcli codegen``).

Each statement is one line, commented with its trace id (``# v3 = v1 * v2``), in the order the
engine computes: the forward sweep, then each output's reverse sweep. A primitive is spelled as
its row of the table says (:attr:`~gradcli.engine.primitives.Primitive.code`): a function's
name or a template; a name starting with ``_`` (``gc_`` in C) is a helper the generated code
defines itself, written once per language and included only when used. Every name in the code
is chosen so that none is two things (:mod:`gradcli.code.names`).

Failures are the language's own: Python raises a ``ValueError`` (outside a domain) or an
``OverflowError`` (a value that is not finite) naming the statement; C returns a status (the
node k of the first ``vk`` that is not finite, or -1 - i for the i-th derivative) with NaN in
every result; NumPy and JAX put NaN in every result of a row where some value is not finite,
as the batch engine fails it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.graph import Graph, wrt_names
from ..errors import InputError, name_list
from ..symbolic.adjoint import build
from . import names
from .c import C
from .printer import LANGUAGES
from .python import Python

RETURNS = ("tuple", "dict")


@dataclass(frozen=True, slots=True)
class Generated:
    """The code generated for a graph, and what a caller needs to call it."""

    source: str
    lang: str
    mode: str
    functions: list[str]  # the functions the code defines, in order
    parameters: dict[str, str]  # input name -> its variable in the code, in the parameters' order
    wrt: list[str]  # the inputs differentiated by, in the gradient's order
    outputs: list[str]
    returns: str  # "tuple", or "dict": results keyed by input (and output) name
    code: str
    header: str | None  # C's header (the prototypes, the inputs' order); None in the others


def generate(graph: Graph, lang: str = "python", mode: str = "reverse", *, name: str = "f",
             hvp_only: bool = False, inputs: list[str] | None = None,
             wrt: list[str] | None = None, returns: str = "tuple") -> Generated:
    """``graph``'s derivatives as code in ``lang`` defining the function ``name`` (and, for
    the Hessian, ``name_hvp``; C also ``name_points``, the function over many points).

    ``inputs``: the parameters' order (every input once; default: order of first appearance);
    ``wrt``: the inputs the derivatives are by (default: all, in the parameters' order), the
    others parameters all the same; ``returns="dict"``: results keyed by name (not C)."""
    if lang not in LANGUAGES:
        raise InputError(f"{lang!r} is not a language gradcli writes", option="lang",
                         hint=f"choose from: {', '.join(LANGUAGES)}")
    if hvp_only and mode != "hessian":
        raise InputError(f"goes with the Hessian, not with --mode {mode}",
                         option="hvp", hint="drop --mode, or give --mode hessian")
    if returns not in RETURNS or (returns == "dict" and lang == "c"):
        raise InputError(f"{returns!r} is not what {lang} code can return", option="returns",
                         hint="tuple, or dict in python, numpy or jax")
    names.check_function(name, lang)
    order = _order(graph, inputs)
    wrt = _distinct(wrt_names(graph, wrt if wrt is not None else order), "wrt")
    parameters = names.variables(order, lang, name)
    program = build(graph, mode, parameters, inputs=order, wrt=wrt)
    writer = C(program, name, hvp_only) if lang == "c" else \
        Python(program, lang, name, hvp_only, returns)
    code = writer.text()
    return Generated(graph.source, lang, mode, writer.functions(), parameters, wrt,
                     program.output_names, returns, code,
                     writer.header() if lang == "c" else None)


def _order(graph: Graph, inputs: list[str] | None) -> list[str]:
    """The parameters' order: ``inputs``, which must name every input once, or graph order."""
    if inputs is None:
        return list(graph.inputs)
    unknown = [name for name in inputs if name not in graph.inputs]
    if unknown:
        raise InputError(f"names {name_list(unknown)}, which the expression does not read",
                         option="inputs", names=tuple(unknown),
                         hint=f"its inputs are: {name_list(graph.inputs) or '(none)'}")
    missing = [name for name in graph.inputs if name not in inputs]
    if missing:
        raise InputError(f"leaves out {name_list(missing)}", option="inputs",
                         names=tuple(missing),
                         hint=f"name every input once: --inputs {','.join(graph.inputs)}")
    return _distinct(list(inputs), "inputs")


def _distinct(names_: list[str], option: str) -> list[str]:
    twice = sorted({name for name in names_ if names_.count(name) > 1})
    if twice:
        raise InputError(f"names {name_list(twice)} twice", option=option, names=tuple(twice),
                         hint="each name once")
    return names_
