"""Generated code in Python (``math``), NumPy (``np``, over arrays) and JAX (``jnp``): one
function body, checked statement by statement in Python, NaN in the failed rows of an array."""

from __future__ import annotations

from ..symbolic.adjoint import CONDITIONS, Code, Program, Statement
from .helpers import array_helper, python_helper
from .printer import PREFIX, Printer, comment_lines, operand, source_comment, what, wrap

# Operations that raise nothing on floats (an overflow is inf, checked by _finite after)
_RAISE_NOTHING = frozenset(["add", "sub", "mul", "neg", "var", "where", *CONDITIONS])


def _can_raise(e) -> bool:
    """Whether computing ``e`` in Python can raise: it calls a function, divides or raises to a
    power (the statements the generated code names when they fail)."""
    stack = [e]
    while stack:
        node = stack.pop()
        if type(node) is Code:
            if node.op not in _RAISE_NOTHING:
                return True
            stack.extend(node.args)
    return False


class Python:
    """Python (``math``), NumPy (``np``, vectorised) and JAX (``jnp``): one function body."""

    def __init__(self, program: Program, lang: str, name: str, hvp_only: bool,
                 returns: str = "tuple"):
        self.p, self.lang, self.name, self.hvp_only = program, lang, name, hvp_only
        self.printer = Printer(lang)
        self.checked = lang == "python"  # NumPy and JAX: NaN where a row fails
        self.returns = returns
        self.comments: dict[str, str] = {}  # a statement's line -> its comment
        # the names of the gradient's entries: every input, or those of --wrt
        self.keys = "INPUTS" if program.wrt == program.inputs else "WRT"

    def functions(self) -> list[str]:
        """The functions the code defines, in order."""
        if self.p.mode != "hessian":
            return [self.name]
        return [f"{self.name}_hvp"] + ([] if self.hvp_only else [self.name])

    def keyed(self, text: str, keys: str) -> str:
        """A tuple's text, or with ``returns="dict"`` a dict of it keyed by ``keys``."""
        return f"dict(zip({keys}, {text}))" if self.returns == "dict" else text

    def statement(self, st: Statement, indent: str) -> str:
        value, target = st.value, st.target
        negated = st.accumulate and type(value) is Code and value.op == "neg"
        text = self.printer.expr(value.args[0] if negated else value)
        if not st.accumulate:
            line = f"{target} = {text}"
        elif self.checked:
            line = f"{target} {'-=' if negated else '+='} {text}"
        else:  # an array's += is in place, and vb1 = vb4 made them one array: a new one
            line = f"{target} = {target} {'-' if negated else '+'} {operand(value, text)}"
        if not st.comment:
            return indent + line
        text = f"{indent}{line}  # {st.comment}"
        if self.checked and _can_raise(value):  # the line's text is its key in comments
            self.comments[text] = st.comment
        return text

    def body(self, indent: str) -> list[str]:
        p = self.p
        forward = p.forward if self.checked else [s for s, alive in zip(p.forward, p.live)
                                                  if alive]
        lines = [f"{indent}# forward sweep"] if forward else []
        lines += [self.statement(s, indent) for s in forward]
        if self.checked and p.forward:
            lines += wrap(f"{indent}_finite(", [s.target for s in p.forward], ")", indent)
        if p.tangents:
            lines.append(f"{indent}# tangents along (" +
                         ", ".join(f"vd_{p.variables[n]}" for n in p.wrt) + ")")
            lines += [self.statement(s, indent) for s in p.tangents]
        for i, sweep in enumerate(p.sweeps):
            if not sweep and len(p.sweeps) == 1:
                continue
            of = f" of {p.output_names[i]}" if len(p.sweeps) > 1 else ""
            lines.append(f"{indent}# reverse sweep{of}")
            lines += [self.statement(s, indent) for s in sweep]
            if len(p.sweeps) > 1:
                lines.append(f"{indent}row{i + 1} = "
                             f"{self.row(p.gradients[i], self.gradient_names(i), kept=True)}")
        if p.sweep_tangents:
            lines.append(f"{indent}# the adjoints' tangents: H·vd")
            lines += [self.statement(s, indent) for s in p.sweep_tangents]
        return lines

    def column(self, e) -> str:
        """A result: the value itself (Python), or a column of the inputs' shape."""
        text = e if isinstance(e, str) else self.printer.expr(e)
        return text if self.checked else f"_column({text}, failed, shape)"

    def row(self, items, what: str, kept: bool = False) -> str:
        """A tuple of results (each checked finite, in Python); ``kept``: a Jacobian row kept
        at the end of its sweep (NumPy, JAX: as computed, made columns at the end)."""
        columns = [self.column(e) if self.checked or not kept else self.printer.expr(e)
                   for e in items]
        text = f"({', '.join(columns)}{',' if len(columns) == 1 else ''})"
        return f"_finite({text}, {what})" if self.checked else text

    def gradient_names(self, i: int) -> str:
        return f'"∂{self.p.output_names[i]}/∂{{}}", {self.keys}'

    def failed(self, indent: str) -> list[str]:
        """NumPy, JAX: the rows where some value or result is not finite, as the batch engine
        fails them (every result NaN there)."""
        p = self.p
        names = [s.target for s, alive in zip(p.forward, p.live) if alive]
        results = p.derivatives if p.mode == "forward" else p.gradients[0] + p.hvp
        if len(p.gradients) > 1:
            names += [f"*row{i + 1}" for i in range(len(p.gradients))]
        else:
            names += [self.printer.expr(e) for e in results if type(e) is not float]
        return wrap(f"{indent}failed = _failed", names, "", indent)

    def results(self) -> str:
        p, keys = self.p, self.keys
        one = len(p.output_names) == 1
        values = [self.column(v) for v in p.values]
        value = values[0] if one else self.keyed(f"({', '.join(values)})", "OUTPUTS")
        checked = self.row

        if p.mode == "forward":
            derivatives = checked(p.derivatives, '"the derivative of {} along vd", OUTPUTS')
            return f"{value}, {derivatives}[0]" if one else \
                f"{value}, {self.keyed(derivatives, 'OUTPUTS')}"
        # several outputs: each row was kept as its sweep ended (the next reuses the names)
        if one:
            gradient = self.keyed(checked(p.gradients[0], self.gradient_names(0)), keys)
        else:
            rows = [f"row{i + 1}" if self.checked else
                    self.row([f"row{i + 1}[{j}]" for j in range(len(p.wrt))], "")
                    for i in range(len(p.gradients))]
            gradient = self.keyed(f"({', '.join(self.keyed(r, keys) for r in rows)})",
                                  "OUTPUTS")
        if p.mode == "hessian":
            hvp = self.keyed(checked(p.hvp, f'"(H·vd) by {{}}", {keys}'), keys)
            return f"{value}, {gradient}, {hvp}"
        return f"{value}, {gradient}"

    def text(self) -> str:
        p, lang, name = self.p, self.lang, self.name
        params = [p.variables[n] for n in p.inputs]
        mark = "#"
        head = comment_lines(f"{name}: {what(p)} of", mark)
        head += comment_lines(source_comment(p), mark)
        head += comment_lines(f"generated by gradcli codegen --lang {lang} --mode {p.mode}: "
                               "straight-line adjoint code, one statement per tape node and "
                               "per contribution, the comments the ids of --trace.", mark)
        if lang == "jax":
            head += ["# float64, as gradcli computes: jax.config.update(\"jax_enable_x64\", "
                     "True) below."]
        function = name if p.mode != "hessian" else f"{name}_hvp"
        tangent_params = [f"vd_{p.variables[n]}" for n in p.wrt] \
            if p.mode in ("forward", "hessian") else []
        signature = ", ".join(params + tangent_params)
        doc = self.docstring(function)
        body_indent = "        " if self.checked else "    "
        lines = [f"def {function}({signature}):", f'    """{doc}"""']
        if lang != "python" and params:
            asarray = f"{PREFIX[lang]}asarray"
            lines += [f"    {v} = {asarray}({v}, dtype={PREFIX[lang]}float64)" for v in params]
            lines.append(f"    shape = {PREFIX[lang]}broadcast_shapes(" +
                         "".join(f"{PREFIX[lang]}shape({v}), " for v in params).rstrip(", ") +
                         ("," if len(params) == 1 else "") + ")")
        elif lang != "python":
            lines.append("    shape = ()")
        results = self.results()
        body = self.body(body_indent)
        if self.checked and all(line.lstrip().startswith("#") for line in body):
            # nothing is computed, nothing can fail
            lines.append(f"    return {results}")
        elif self.checked:
            lines.append("    try:")
            lines += body
            lines += ["    except (ValueError, ZeroDivisionError, OverflowError) as exc:",
                      "        raise _located(exc, _STATEMENTS) from None",
                      f"    return {results}"]
        elif lang == "numpy":
            lines.append('    with np.errstate(all="ignore"):  # NaN or inf where a row fails')
            lines += ["    " + line for line in self.body("    ")]
            lines += self.failed("        ")
            lines.append(f"        return {results}")
        else:
            lines += self.body("    ")
            lines += self.failed("    ")
            lines.append(f"    return {results}")
        functions = ["\n".join(lines)]
        if self.checked and self.comments:  # each statement by its line's offset from the def
            functions.append("\n".join(
                [f"# The statement on each line of {function} (counted from its def), named "
                 "when it fails", "_STATEMENTS = {"]
                + [f"    {offset}: {self.comments[line]!r}," for offset, line
                   in enumerate(lines) if line in self.comments] + ["}"]))
        if p.mode == "hessian" and not self.hvp_only:
            functions.append(self.hessian_function(params))
        imports = self.imports()
        constants = [f"INPUTS = {tuple(p.inputs)!r}"]
        if p.wrt != p.inputs:
            constants.append(f"WRT = {tuple(p.wrt)!r}")
        if (p.mode == "forward" and self.checked) or (self.returns == "dict"
                                                       and len(p.output_names) > 1):
            constants.append(f"OUTPUTS = {tuple(p.output_names)!r}")
        used = [self.helper(h) for h in sorted(self.printer.helpers)]
        if self.checked:
            used += [_PY_FINITE, _PY_LOCATED]
        else:
            used += [_ARRAY_FAILED.replace("{np}", PREFIX[lang].rstrip("."))]
        blocks = ["\n".join(head), "\n".join(imports)]
        if lang == "jax":
            blocks.append('jax.config.update("jax_enable_x64", True)')
        blocks.append("\n".join(constants))
        return "\n\n".join(blocks) + "\n\n\n" + "\n\n\n".join(used + functions) + "\n"

    def docstring(self, function: str) -> str:
        p = self.p
        inputs = ", ".join(p.inputs)
        entry = "an entry per input" + ("" if p.wrt == p.inputs else
                                        f" of WRT ({', '.join(p.wrt)})")
        by_name = ", keyed by name" if self.returns == "dict" else ""
        if p.mode == "forward":
            return (f"(value, derivative) at ({inputs}) along the direction "
                    f"({', '.join('vd_' + p.variables[n] for n in p.wrt)}){by_name}.")
        if p.mode == "hessian":
            return f"(value, gradient, Hessian-vector product) at ({inputs}): {entry}{by_name}."
        if len(p.output_names) > 1:
            return (f"((values), (Jacobian rows)) at ({inputs}): a row per output "
                    f"({', '.join(p.output_names)}), {entry}{by_name}.")
        return f"(value, gradient) at ({inputs}): the gradient has {entry}{by_name}."

    def hessian_function(self, params: list[str]) -> str:
        name, n, keys = self.name, len(self.p.wrt), self.keys
        lines = [f"def {name}({', '.join(params)}):",
                 f'    """(value, gradient, Hessian rows) at ({", ".join(self.p.inputs)}): one '
                 'Hessian-vector product per input'
                 + ("" if keys == "INPUTS" else " of WRT") + '."""']
        columns = []
        for j in range(n):
            direction = ", ".join("1.0" if i == j else "0.0" for i in range(n))
            target = "value, gradient, " if j == 0 else "_, _, "
            lines.append(f"    {target}column{j + 1} = {name}_hvp({', '.join(params)}, "
                         f"{direction})")
            columns.append(f"column{j + 1}")
        if not n:
            lines.append(f"    value, gradient, _ = {name}_hvp({', '.join(params)})")
            lines.append(f"    return value, gradient, {self.keyed('()', keys)}")
        else:
            # H·e_j is the Hessian's j-th column: rows are read across the columns (by the
            # entries' names where they are dicts)
            at = [repr(w) for w in self.p.wrt] if self.returns == "dict" else range(n)
            rows = [self.keyed(f"({', '.join(f'{c}[{i}]' for c in columns)}"
                               f"{',' if n == 1 else ''})", keys) for i in at]
            if self.returns == "dict":
                lines += wrap(f"    return value, gradient, dict(zip({keys}, ", rows, "))",
                              "    ")
            else:
                lines += wrap("    return value, gradient, ", rows, "", "    ")
        return "\n".join(lines)

    def imports(self) -> list[str]:
        """The standard library's imports, a blank line, the others' (as isort orders them)."""
        lang, modules = self.lang, set(self.printer.modules)
        standard = []
        if lang == "python" or any("math." in self.helper(h) for h in self.printer.helpers):
            standard.append("import math")
        others = {"numpy": ["import numpy as np"], "python": [],
                  "jax": ["import jax", "import jax.numpy as jnp"]}[lang]
        if lang == "jax" and any(m.startswith("jax.scipy") for m in modules):
            others.append("import jax.scipy.special")
        return standard + ([""] if standard and others else []) + others

    def helper(self, name: str) -> str:
        if self.lang == "python":
            return python_helper(name)
        return array_helper(name).replace("{np}", PREFIX[self.lang].rstrip("."))


_ARRAY_FAILED = '''def _failed(*columns):
    """Where some value is not finite: the rows that fail (0 * v is 0, or NaN where v is not
    finite)."""
    total = 0.0
    for v in columns:
        total = total + 0.0 * v
    return {np}.isnan(total)


def _column(v, failed, shape):
    """A result as a column of the inputs' shape, NaN in the rows that fail."""
    return {np}.where(failed, {np}.nan, {np}.broadcast_to(v, shape))'''

_PY_FINITE = '''def _finite(values, name="v{}", keys=None):
    """The values, each checked finite: an OverflowError names the first that is not (its
    name: ``name`` with its key, or its number from 1)."""
    for i, v in enumerate(values):
        if not math.isfinite(v):
            key = i + 1 if keys is None else keys[i]
            raise OverflowError(f"{name.format(key)} is {v}: not a finite number")
    return values'''

_PY_LOCATED = '''def _located(exc, statements):
    """The error, naming the statement that raised it: ``statements`` holds each statement by
    its line's offset from the function's def (the traceback's line, so no source is read)."""
    frame = exc.__traceback__
    text = statements.get(frame.tb_lineno - frame.tb_frame.f_code.co_firstlineno)
    if text is None:  # raised by _finite, which names the value itself
        return exc
    kind = OverflowError if isinstance(exc, OverflowError) else ValueError
    return kind(f"{text}: {exc}")'''

