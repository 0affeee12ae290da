"""An adjoint program (:mod:`gradcli.symbolic.adjoint`) as source code: Python, NumPy, JAX, C.

Each statement is one line, commented with its trace id (``# v3 = v1 * v2``), in the order the
engine computes: the forward sweep, then each output's reverse sweep. A primitive is spelled as
its row of the table says (:attr:`~gradcli.engine.primitives.Primitive.code`): a function's
name or a template; a name starting with ``_`` (``gc_`` in C) is a helper the generated code
defines itself, written once here per language and included only when used.

Failures are the language's own: Python raises a ``ValueError`` (outside a domain) or an
``OverflowError`` (a value that is not finite) naming the statement; C returns a status (the
node k of the first ``vk`` that is not finite, or -1 - i for the i-th derivative) with NaN in
every result; NumPy and JAX put NaN in every result of a row where some value is not finite,
as the batch engine fails it.
"""

from __future__ import annotations

import re

from ..engine.primitives import TABLE
from ..errors import InputError
from ..symbolic.adjoint import CONDITIONS, Code, Program, Statement, reads

LANGUAGES = ("python", "numpy", "jax", "c")
# How each language calls a row that names no spelling of its own: math.log, np.log, log
PREFIX = {"python": "math.", "numpy": "np.", "jax": "jnp.", "c": ""}
_HELPER = re.compile(r"^(_|gc_)\w+$")

# -- helpers, defined by the generated code when it uses them ------------------------------------
# Each mirrors its primal (gradcli.engine.primitives; the batch engine's for arrays) branch for
# branch, so the generated code computes what eval computes.

_PYTHON_HELPERS = {
    "_sigmoid": '''def _sigmoid(a):
    if a >= 0:
        return 1.0 / (1.0 + math.exp(-a))
    z = math.exp(a)  # no overflow for very negative a
    return z / (1.0 + z)''',
    "_softplus": '''def _softplus(a):
    return math.log1p(math.exp(-abs(a))) + (a if a > 0 else 0.0)''',
    "_relu": '''def _relu(a):
    return a if a > 0 else 0.0''',
    "_sign": '''def _sign(a):
    return 1.0 if a > 0 else (-1.0 if a < 0 else 0.0)''',
    "_step": '''def _step(a):
    return 1.0 if a > 0 else 0.0''',
    "_sinc": '''def _sinc(a):
    if abs(a) < 1e-4:  # the Taylor series: sin(a)/a loses nothing here, but 0/0 at 0
        a2 = a * a
        return 1.0 - a2 / 6.0 * (1.0 - a2 / 20.0)
    return math.sin(a) / a''',
    "_digamma": '''def _digamma(a):
    if a <= 0 and a == math.floor(a):
        raise ValueError("math domain error")
    if a < 0.5:  # reflection, then a >= 0.5
        return _digamma(1.0 - a) - math.pi / math.tan(math.pi * a)
    shift = 0.0
    while a < 10.0:
        shift -= 1.0 / a
        a += 1.0
    inverse_square = 1.0 / (a * a)
    series, power = 0.0, inverse_square
    for k, b in enumerate(_BERNOULLI, start=1):
        series += b / (2 * k) * power
        power *= inverse_square
    return shift + math.log(a) - 0.5 / a - series''',
    "_trigamma": '''def _trigamma(a):
    if a <= 0 and a == math.floor(a) or a < -1e6:
        raise ValueError("math domain error")
    shift = 0.0
    while a < 10.0:  # trigamma(a) = trigamma(a + 1) + 1/a^2
        shift += 1.0 * 1 / a ** 2
        a += 1.0
    total = 1 / a ** 1 + 1 / (2 * a ** 2)
    for k, b in enumerate(_BERNOULLI, start=1):
        total += b * math.factorial(2 * k) / math.factorial(2 * k) / a ** (2 * k + 1)
    return shift + 1.0 * total''',
}
# The Bernoulli numbers of digamma's and trigamma's asymptotic series (gradcli.engine.special)
for _name in ("_digamma", "_trigamma"):  # each helper carries the numbers it reads
    _PYTHON_HELPERS[_name] = _PYTHON_HELPERS[_name].replace("_BERNOULLI", (
        "(1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66,\n"
        "                                  -691 / 2730, 7 / 6, -3617 / 510)"))


def _by_rows(name: str, scalar: str) -> str:
    """An array helper computing a Python function a row at a time, NaN outside its domain."""
    return (f"def {name}(a):\n"
            f"    # NumPy has none: {scalar} a row at a time (NaN outside its domain)\n"
            f"    def row(x):\n"
            f"        try:\n"
            f"            return {scalar}(x)\n"
            f"        except (ValueError, ZeroDivisionError, OverflowError):\n"
            f"            return math.nan\n"
            f"    return {{np}}.asarray({{np}}.frompyfunc(row, 1, 1)(a), dtype={{np}}.float64)")

_ARRAY_HELPERS = {  # {np} is np or jnp
    "_sigmoid": '''def _sigmoid(a):
    z = {np}.exp(-{np}.abs(a))  # exp(-a) for a >= 0, exp(a) below: never overflows
    return {np}.where(a >= 0, 1.0 / (1.0 + z), z / (1.0 + z))''',
    "_softplus": '''def _softplus(a):
    return {np}.log1p({np}.exp(-{np}.abs(a))) + {np}.where(a > 0, a, 0.0)''',
    "_relu": '''def _relu(a):
    return {np}.where(a > 0, a, 0.0)''',
    "_sign": '''def _sign(a):
    return {np}.where(a > 0, 1.0, {np}.where(a < 0, -1.0, 0.0))''',
    "_step": '''def _step(a):
    return {np}.where(a > 0, 1.0, 0.0)''',
    "_min": '''def _min(a, b):
    return {np}.where(b < a, b, a)  # Python's min: the first unless the second is smaller''',
    "_max": '''def _max(a, b):
    return {np}.where(b > a, b, a)''',
    "_erf": '''def _erf(a):
    # NumPy has no erf: the C library's, a row at a time
    return {np}.asarray({np}.frompyfunc(math.erf, 1, 1)(a), dtype={np}.float64)''',
    "_erfc": '''def _erfc(a):
    # NumPy has no erfc: the C library's, a row at a time
    return {np}.asarray({np}.frompyfunc(math.erfc, 1, 1)(a), dtype={np}.float64)''',
    "_gamma": _by_rows("_gamma", "math.gamma"),
    "_lgamma": _by_rows("_lgamma", "math.lgamma"),
    "_sinc": '''def _sinc(a):
    near = {np}.abs(a) < 1e-4  # the Taylor series there: 0/0 at 0
    safe = {np}.where(near, 1.0, a)
    a2 = a * a
    return {np}.where(near, 1.0 - a2 / 6.0 * (1.0 - a2 / 20.0), {np}.sin(safe) / safe)''',
}
for _name in ("_digamma", "_trigamma"):  # the Python helper, a row at a time
    _ARRAY_HELPERS[_name] = (_PYTHON_HELPERS[_name].replace(f"def {_name}(", f"def {_name}_row(")
                             .replace(f"return {_name}(", f"return {_name}_row(") + "\n\n\n"
                             + _by_rows(_name, _name + "_row"))

_C_HELPERS = {
    "gc_sigmoid": '''static double gc_sigmoid(double a)
{
    double z;
    if (a >= 0) return 1.0 / (1.0 + exp(-a));
    z = exp(a); /* no overflow for very negative a */
    return z / (1.0 + z);
}''',
    "gc_softplus": '''static double gc_softplus(double a)
{
    return log1p(exp(-fabs(a))) + (a > 0 ? a : 0.0);
}''',
    "gc_relu": "static double gc_relu(double a) { return a > 0 ? a : 0.0; }",
    "gc_sign": "static double gc_sign(double a) { return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0); }",
    "gc_step": "static double gc_step(double a) { return a > 0 ? 1.0 : 0.0; }",
    "gc_min": "static double gc_min(double a, double b) { return b < a ? b : a; }",
    "gc_max": "static double gc_max(double a, double b) { return b > a ? b : a; }",
    "gc_mod": '''static double gc_mod(double a, double b)
{
    /* Python's a % b: the sign of b (C's fmod has the sign of a) */
    double r = fmod(a, b);
    if (r != 0.0) {
        if ((b < 0) != (r < 0)) r += b;
    } else {
        r = copysign(0.0, b);
    }
    return r;
}''',
    "gc_sinc": '''static double gc_sinc(double a)
{
    double a2 = a * a;
    if (fabs(a) < 1e-4) return 1.0 - a2 / 6.0 * (1.0 - a2 / 20.0); /* 0/0 at 0 */
    return sin(a) / a;
}''',
    "gc_digamma": '''static double gc_digamma(double a)
{
    static const double bernoulli[8] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66,
                                        -691.0 / 2730, 7.0 / 6, -3617.0 / 510};
    double shift = 0.0, inverse_square, series = 0.0, power;
    int k;
    if (a <= 0 && a == floor(a)) return NAN;
    if (a < 0.5) /* reflection, then a >= 0.5 */
        return gc_digamma(1.0 - a) - 3.141592653589793 / tan(3.141592653589793 * a);
    while (a < 10.0) {
        shift -= 1.0 / a;
        a += 1.0;
    }
    inverse_square = 1.0 / (a * a);
    power = inverse_square;
    for (k = 1; k <= 8; k++) {
        series += bernoulli[k - 1] / (2 * k) * power;
        power *= inverse_square;
    }
    return shift + log(a) - 0.5 / a - series;
}''',
    "gc_trigamma": '''static double gc_trigamma(double a)
{
    static const double bernoulli[8] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66,
                                        -691.0 / 2730, 7.0 / 6, -3617.0 / 510};
    double shift = 0.0, total, factorial = 1.0;
    int k;
    if ((a <= 0 && a == floor(a)) || a < -1e6) return NAN;
    while (a < 10.0) { /* trigamma(a) = trigamma(a + 1) + 1/a^2 */
        shift += 1.0 / pow(a, 2.0);
        a += 1.0;
    }
    total = 1.0 / a + 1.0 / (2 * pow(a, 2.0));
    for (k = 1; k <= 8; k++) {
        factorial *= (2 * k - 1) * (2 * k); /* (2k)! */
        total += bernoulli[k - 1] * factorial / factorial / pow(a, 2 * k + 1);
    }
    return shift + total;
}''',
}


def spelling(name: str, lang: str) -> str:
    """How ``lang`` calls the row ``name``: its row's spelling, or the prefixed row name."""
    return TABLE[name].code.get(lang) or PREFIX[lang] + name


class _Printer:
    """Expressions of one language; remembers the helpers it used."""

    def __init__(self, lang: str):
        self.lang = lang
        self.helpers: set[str] = set()
        self.modules: set[str] = set()  # the Python modules a spelling names (math, jax, …)

    def number(self, v: float) -> str:
        text = repr(float(v))
        if text in ("inf", "-inf", "nan"):  # a folded constant cannot be one; a rule's could
            text = {"c": {"inf": "INFINITY", "-inf": "-INFINITY", "nan": "NAN"}[text]}.get(
                self.lang, f"float({text!r})")
        return f"({text})" if v < 0 or text.startswith("-") else text

    def expr(self, e) -> str:
        """Fully parenthesised where an operator meets an operator: the order of operations
        is the rule's, bit for bit."""
        if type(e) is float:
            return self.number(e)
        # an explicit stack: (node, None) asks for a node's text; results on ``out``
        out: list[str] = []
        stack: list = [(e, False)]
        while stack:
            node, ready = stack.pop()
            if type(node) is not Code:
                out.append(self.number(node))
                continue
            if node.op == "var":
                out.append(node.args[0])
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((a, False) for a in reversed(node.args))
                continue
            n = len(node.args)
            args = out[len(out) - n:]
            del out[len(out) - n:]
            wrapped = [a if _atomic(x) else f"({a})" for a, x in zip(args, node.args)]
            out.append(self.apply(node.op, args, wrapped))
        return out[0]

    def apply(self, op: str, args: list[str], wrapped: list[str]) -> str:
        lang = self.lang
        if op == "where":
            c, t, f = args
            if lang == "python":
                return f"{t} if {c} else {f}"
            if lang == "c":
                return f"{wrapped[0]} ? {wrapped[1]} : {wrapped[2]}"
            return f"{PREFIX[lang]}where({c}, {t}, {f})"
        if op in CONDITIONS:
            symbol = {"equal": "==", "greater": ">",
                      "both": {"python": "and", "c": "&&"}.get(lang, "&")}[op]
            return f"{wrapped[0]} {symbol} {wrapped[1]}"
        prim = TABLE[op]
        if prim.symbol and prim.name != "pow":
            return f"{wrapped[0]} {prim.symbol} {wrapped[1]}" if len(args) == 2 else \
                f"{prim.symbol}{wrapped[0]}"
        spelled = spelling(op, lang)
        if _HELPER.match(spelled):
            self.helpers.add(spelled)
        if "{" in spelled:  # a template: the modules of the functions it calls
            self.modules.update(re.findall(r"([\w.]+)\.\w+\(", spelled))
        elif "." in spelled:
            self.modules.add(spelled.rsplit(".", 1)[0])
        if "{" in spelled:
            return spelled.format(*wrapped)
        return f"{spelled}({', '.join(args)})"


def _wrapped(e, text: str) -> str:
    """``text`` (the code of ``e``) as the right operand of + or -: parenthesised unless atomic."""
    if type(e) is Code and e.op == "neg":
        e = e.args[0]
    return text if _atomic(e) else f"({text})"


def _atomic(e) -> bool:
    """Whether an expression's text needs no parentheses as an operand: a variable, a positive
    number or a call (a where is a conditional expression: it gets them)."""
    if type(e) is float:
        return e >= 0
    if e.op == "var":
        return True
    if e.op == "where" or e.op in CONDITIONS:
        return False
    prim = TABLE[e.op]
    return not prim.symbol or prim.name == "pow"


def _source(program: Program, limit: int = 1000) -> str:
    """The source, indented, for the code's first comment (a long one cut at ``limit``)."""
    text = program.source.strip()
    if len(text) > limit:
        text = text[:limit].rstrip() + " …"
    return "    " + text.replace("\n", "\n    ")


def _comment_lines(text: str, mark: str) -> list[str]:
    """``text`` as comment lines, wrapped at 96 columns (its own line breaks kept)."""
    import textwrap
    lines = []
    for line in text.splitlines() or [""]:
        indent = line[:len(line) - len(line.lstrip())]
        lines += textwrap.wrap(line, 96, initial_indent="", subsequent_indent=indent,
                               drop_whitespace=False, break_on_hyphens=False) or [""]
    return [f"{mark} {line}".rstrip() for line in lines]


# -- the languages ------------------------------------------------------------------------------

def generate(program: Program, lang: str = "python", name: str = "f",
             hvp_only: bool = False) -> str:
    """The program as a module in ``lang`` defining the function ``name`` (and, for the
    Hessian, ``name_hvp``; C also ``name_points``, the function over many points)."""
    if lang not in LANGUAGES:
        raise InputError(f"{lang!r} is not a language gradcli writes", option="lang",
                         hint=f"choose from: {', '.join(LANGUAGES)}")
    if not name.isidentifier() or not name.isascii() or name.startswith("gc_"):
        raise InputError(f"{name!r} is not a function name in {lang}", option="name",
                         hint="letters, digits and _, not starting with a digit: --name grad_f")
    if lang == "c":
        return _C(program, name, hvp_only).text()
    return _Python(program, lang, name, hvp_only).text()


def header(program: Program, name: str = "f", hvp_only: bool = False) -> str:
    """The C header of :func:`generate`'s C code: the prototypes, the inputs' order, the sizes."""
    return _C(program, name, hvp_only).header()


def _what(program: Program) -> str:
    several = len(program.output_names) > 1
    return {"reverse": "the Jacobian (a row per output)" if several else "the gradient",
            "forward": "the derivatives along a direction (forward mode)" if several
            else "the derivative along a direction (forward mode)",
            "hessian": "the gradient and the Hessian (forward-over-reverse)"}[program.mode]


class _Python:
    """Python (``math``), NumPy (``np``, vectorised) and JAX (``jnp``): one function body."""

    def __init__(self, program: Program, lang: str, name: str, hvp_only: bool):
        self.p, self.lang, self.name, self.hvp_only = program, lang, name, hvp_only
        self.printer = _Printer(lang)
        self.checked = lang == "python"  # NumPy and JAX: NaN where a row fails

    def statement(self, st: Statement, indent: str) -> str:
        value, target = st.value, st.target
        negated = st.accumulate and type(value) is Code and value.op == "neg"
        text = self.printer.expr(value.args[0] if negated else value)
        if not st.accumulate:
            line = f"{target} = {text}"
        elif self.checked:
            line = f"{target} {'-=' if negated else '+='} {text}"
        else:  # an array's += is in place, and vb1 = vb4 made them one array: a new one
            line = f"{target} = {target} {'-' if negated else '+'} {_wrapped(value, text)}"
        return f"{indent}{line}" + (f"  # {st.comment}" if st.comment else "")

    def body(self, indent: str, tangents: bool) -> list[str]:
        p = self.p
        forward = p.forward if self.checked else [s for s, alive in zip(p.forward, p.live)
                                                  if alive]
        lines = [f"{indent}# forward sweep"] if forward else []
        lines += [self.statement(s, indent) for s in forward]
        if self.checked and p.forward:
            lines += _wrap(f"{indent}_finite(", [s.target for s in p.forward], ")", indent)
        if tangents and p.tangents:
            lines.append(f"{indent}# tangents along (" +
                         ", ".join(f"vd_{p.variables[n]}" for n in p.inputs) + ")")
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
        return f'"∂{self.p.output_names[i]}/∂{{}}", INPUTS'

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
        return _wrap(f"{indent}failed = _failed", names, "", indent)

    def results(self) -> str:
        p = self.p
        one = len(p.output_names) == 1
        values = [self.column(v) for v in p.values]
        value = values[0] if one else f"({', '.join(values)})"
        checked = self.row

        if p.mode == "forward":
            derivatives = checked(p.derivatives, '"the derivative of {} along vd", OUTPUTS')
            return f"{value}, {derivatives}[0]" if one else f"{value}, {derivatives}"
        # several outputs: each row was kept as its sweep ended (the next reuses the names)
        if one:
            gradient = checked(p.gradients[0], self.gradient_names(0))
        elif self.checked:
            gradient = f"({', '.join(f'row{i + 1}' for i in range(len(p.gradients)))})"
        else:
            gradient = "(" + ", ".join(
                self.row([f"row{i + 1}[{j}]" for j in range(len(p.inputs))], "")
                for i in range(len(p.gradients))) + ")"
        if p.mode == "hessian":
            hvp = checked(p.hvp, '"(H·vd) by {}", INPUTS')
            return f"{value}, {gradient}, {hvp}"
        return f"{value}, {gradient}"

    def text(self) -> str:
        p, lang, name = self.p, self.lang, self.name
        params = [p.variables[n] for n in p.inputs]
        mark = "#"
        head = _comment_lines(f"{name}: {_what(p)} of", mark)
        head += _comment_lines(_source(p), mark)
        head += _comment_lines(f"generated by gradcli codegen --lang {lang} --mode {p.mode}: "
                               "straight-line adjoint code, one statement per tape node and "
                               "per contribution, the comments the ids of --trace.", mark)
        if lang == "jax":
            head += ["# float64, as gradcli computes: jax.config.update(\"jax_enable_x64\", "
                     "True) below."]
        function = name if p.mode != "hessian" else f"{name}_hvp"
        tangent_params = [f"vd_{v}" for v in params] if p.mode in ("forward", "hessian") else []
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
        body = self.body(body_indent, tangents=True)
        if self.checked and all(line.lstrip().startswith("#") for line in body):
            # nothing is computed, nothing can fail
            lines.append(f"    return {results}")
        elif self.checked:
            lines.append("    try:")
            lines += body
            lines += ["    except (ValueError, ZeroDivisionError, OverflowError) as exc:",
                      "        raise _located(exc) from None",
                      f"    return {results}"]
        elif lang == "numpy":
            lines.append('    with np.errstate(all="ignore"):  # NaN or inf where a row fails')
            lines += ["    " + line for line in self.body("    ", tangents=True)]
            lines += self.failed("        ")
            lines.append(f"        return {results}")
        else:
            lines += self.body("    ", tangents=True)
            lines += self.failed("    ")
            lines.append(f"    return {results}")
        functions = ["\n".join(lines)]
        if p.mode == "hessian" and not self.hvp_only:
            functions.append(self.hessian_function(params))
        imports = self.imports()
        constants = [f"INPUTS = {tuple(p.inputs)!r}"]
        if p.mode == "forward" and self.checked:
            constants.append(f"OUTPUTS = {tuple(p.output_names)!r}")
        helpers = [self.helper(h) for h in sorted(self.printer.helpers)]
        if self.checked:
            helpers += [_PY_FINITE, _PY_LOCATED]
        else:
            helpers += [_ARRAY_FAILED.replace("{np}", PREFIX[lang].rstrip("."))]
        blocks = ["\n".join(head), "\n".join(imports)]
        if lang == "jax":
            blocks.append('jax.config.update("jax_enable_x64", True)')
        blocks.append("\n".join(constants))
        return "\n\n".join(blocks) + "\n\n\n" + "\n\n\n".join(helpers + functions) + "\n"

    def docstring(self, function: str) -> str:
        p = self.p
        inputs = ", ".join(p.inputs)
        if p.mode == "forward":
            return (f"(value, derivative) at ({inputs}) along the direction "
                    f"({', '.join('vd_' + p.variables[n] for n in p.inputs)}).")
        if p.mode == "hessian":
            return f"(value, gradient, Hessian-vector product) at ({inputs})."
        if len(p.output_names) > 1:
            return (f"((values), (Jacobian rows)) at ({inputs}): a row per output "
                    f"({', '.join(p.output_names)}), an entry per input.")
        return f"(value, gradient) at ({inputs}): the gradient has an entry per input."

    def hessian_function(self, params: list[str]) -> str:
        name, n = self.name, len(params)
        lines = [f"def {name}({', '.join(params)}):",
                 f'    """(value, gradient, Hessian rows) at ({", ".join(self.p.inputs)}): one '
                 'Hessian-vector product per input."""']
        columns = []
        for j in range(n):
            direction = ", ".join("1.0" if i == j else "0.0" for i in range(n))
            target = "value, gradient, " if j == 0 else "_, _, "
            lines.append(f"    {target}column{j + 1} = {name}_hvp({', '.join(params)}, "
                         f"{direction})")
            columns.append(f"column{j + 1}")
        if not n:
            lines.append(f"    value, gradient, _ = {name}_hvp()")
            lines.append("    return value, gradient, ()")
        else:
            # H·e_j is the Hessian's j-th column: rows are read across the columns
            rows = [f"({', '.join(f'{c}[{i}]' for c in columns)}{',' if n == 1 else ''})"
                    for i in range(n)]
            lines += _wrap("    return value, gradient, ", rows, "", "    ")
        return "\n".join(lines)

    def imports(self) -> list[str]:
        """The standard library's imports, a blank line, the others' (as isort orders them)."""
        lang, modules = self.lang, set(self.printer.modules)
        standard = ["import linecache"] if self.checked else []
        if lang == "python" or any("math." in self.helper(h) for h in self.printer.helpers):
            standard.append("import math")
        others = {"numpy": ["import numpy as np"], "python": [],
                  "jax": ["import jax", "import jax.numpy as jnp"]}[lang]
        if lang == "jax" and any(m.startswith("jax.scipy") for m in modules):
            others.append("import jax.scipy.special")
        return standard + ([""] if standard and others else []) + others

    def helper(self, name: str) -> str:
        if self.lang == "python":
            return _PYTHON_HELPERS[name]
        return _ARRAY_HELPERS[name].replace("{np}", PREFIX[self.lang].rstrip("."))


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

_PY_LOCATED = '''def _located(exc):
    """The error, naming the statement that raised it (by the trace id in its comment)."""
    frame = exc.__traceback__
    text = linecache.getline(frame.tb_frame.f_code.co_filename, frame.tb_lineno)
    text = text.partition("#")[2].strip()
    if not text:  # raised by _finite, which names the value itself
        return exc
    kind = OverflowError if isinstance(exc, OverflowError) else ValueError
    return kind(f"{text}: {exc}")'''


def _wrap(start: str, names: list[str], end: str, indent: str, width: int = 96) -> list[str]:
    """``start`` + the names as one tuple + ``end``, wrapped at ``width``."""
    lines, line = [], start + "("
    for i, n in enumerate(names):
        piece = n + (", " if i < len(names) - 1 else ("," if len(names) == 1 else ""))
        if len(line) + len(piece) > width and line.strip() not in (start.strip() + "(",):
            lines.append(line.rstrip())
            line = indent + "    "
        line += piece
    lines.append(line + ")" + end)
    return lines


class _C:
    """C99 with <math.h>: ``int f(const double *in, double *out, double *grad)``."""

    def __init__(self, program: Program, name: str, hvp_only: bool):
        self.p, self.name, self.hvp_only = program, name, hvp_only
        self.printer = _Printer("c")
        p = program
        self.n, self.m = len(p.inputs), len(p.output_names)

    def signature(self) -> list[tuple[str, str, str]]:
        """(function, parameters, what it does) of each function, in order."""
        name, n, m = self.name, self.n, self.m
        if self.p.mode == "forward":
            return [(name, "const double *in, const double *dir, double *out, double *dout",
                     f"out[{m}]: the values; dout[{m}]: their derivatives along dir[{n}]")]
        if self.p.mode == "hessian":
            functions = [(f"{name}_hvp", "const double *in, const double *dir, double *out, "
                          "double *grad, double *hv",
                          f"out[1]: the value; grad[{n}]: the gradient; hv[{n}]: H·dir")]
            if not self.hvp_only:
                functions.append((name, "const double *in, double *out, double *grad, "
                                  "double *hess", f"out[1], grad[{n}], hess[{n * n}]: the "
                                  "Hessian, row by row"))
            return functions
        return [(name, "const double *in, double *out, double *grad",
                 f"out[{m}]: the values; grad[{m * n}]: " +
                 (f"the Jacobian, row by row ({m} x {n})" if m > 1 else "the gradient")),
                (f"{name}_points", "size_t count, const double *in, double *out, double *grad",
                 f"{name} at count points: in[count * {n}], out[count * {m}], "
                 f"grad[count * {m * n}], row by row; returns the number of points that failed")]

    def comments(self) -> list[str]:
        p = self.p
        lines = _comment_lines(f"{self.name}: {_what(p)} of", "//")
        lines += _comment_lines(_source(p), "//")
        lines += _comment_lines(f"generated by gradcli codegen --lang c --mode {p.mode}: "
                                "straight-line adjoint code, the comments the ids of --trace.",
                                "//")
        inputs = ", ".join(f"in[{i}] = {n}" for i, n in enumerate(p.inputs)) or "none"
        lines.append(f"// Inputs, in this order: {inputs}.")
        if p.mode != "hessian" and self.m > 1:
            lines.append("// Outputs: " + ", ".join(f"out[{i}] = {n}"
                                                    for i, n in enumerate(p.output_names)) + ".")
        lines += ["// Each function returns 0, or a status with NaN in every result: k > 0 when "
                  "the value of",
                  "// node vk is not finite (outside its function's domain, or an overflow); "
                  "-1 - i when the",
                  "// i-th derivative (in the order written) is not finite."]
        return lines

    def header(self) -> str:
        guard = f"GRADCLI_{self.name.upper()}_H"
        lines = [*self.comments(), f"#ifndef {guard}", f"#define {guard}", "",
                 "#include <stddef.h>", "",
                 f"#define {self.name.upper()}_INPUTS {self.n}",
                 f"#define {self.name.upper()}_OUTPUTS {self.m}", ""]
        for function, params, what in self.signature():
            lines += [f"// {what}", f"int {function}({params});"]
        lines += ["", f"#endif /* {guard} */"]
        return "\n".join(lines) + "\n"

    def statement(self, st: Statement, declared: set[str], const: bool = False) -> str:
        value = st.value
        if st.accumulate and type(value) is Code and value.op == "neg":
            line = f"{st.target} -= {self.printer.expr(value.args[0])};"
        elif st.accumulate:
            line = f"{st.target} += {self.printer.expr(value)};"
        elif st.target in declared:
            line = f"{st.target} = {self.printer.expr(value)};"
        else:
            declared.add(st.target)
            line = f"{'const ' if const else ''}double {st.target} = {self.printer.expr(value)};"
        return f"    {line}" + (f"  // {st.comment}" if st.comment else "")

    def function(self, function: str, params: str) -> str:
        p, n = self.p, self.n
        arrays = {"reverse": ("out", "grad", None), "forward": ("out", "dout", None),
                  "hessian": ("out", "grad", "hv")}[p.mode]
        sizes = {"out": self.m, "grad": self.m * n, "dout": self.m, "hv": n}
        fail_args = ", ".join(f"{a}, {sizes[a]}" if a else "NULL, 0" for a in arrays)
        lines = [f"int {function}({params})", "{"]
        # an input or a direction's entry that nothing reads is not declared (a warning)
        read = set().union(*(reads(st.value) for st in p.statements),
                           *(reads(e) for e in [*p.values, *p.derivatives, *p.hvp,
                                                *(g for row in p.gradients for g in row)]))
        inputs = [(i, p.variables[name]) for i, name in enumerate(p.inputs)
                  if p.variables[name] in read]
        tangents = [(i, f"vd_{p.variables[name]}") for i, name in enumerate(p.inputs)
                    if f"vd_{p.variables[name]}" in read]
        unused = [] if inputs else ["in"]
        if not n:  # no inputs: no derivatives either
            unused += [param.rpartition("*")[2] for param in params.split(", ")[1:]
                       if not param.endswith("*out")]
        elif p.mode != "reverse" and not tangents:
            unused.append("dir")
        lines += [f"    (void){name};" for name in unused]
        declared: set[str] = set()
        lines += [f"    const double {v} = in[{i}];" for i, v in inputs]
        lines += [f"    const double {v} = dir[{i}];" for i, v in tangents]
        if p.forward:
            lines.append("    // forward sweep")
        for st in p.forward:
            lines.append(self.statement(st, declared, const=True))
            lines.append(f"    if (!isfinite({st.target})) return GC_FAIL({st.node});")
        if p.tangents:
            lines.append("    // tangents along dir")
            lines += [self.statement(st, declared) for st in p.tangents]
        outputs = []
        for i, sweep in enumerate(p.sweeps):
            of = f" of {p.output_names[i]}" if len(p.sweeps) > 1 else ""
            lines.append(f"    // reverse sweep{of}")
            scoped = set(declared)
            block = [self.statement(st, scoped) for st in sweep]
            if p.mode == "hessian":
                block += ["    // the adjoints' tangents: H·dir"]
                block += [self.statement(st, scoped) for st in p.sweep_tangents]
                block += [f"    hv[{j}] = {self.printer.expr(e)};" for j, e in enumerate(p.hvp)]
            block += [f"    grad[{i * n + j}] = {self.printer.expr(e)};"
                      for j, e in enumerate(p.gradients[i])]
            lines += ["    {"] + ["    " + line for line in block] + ["    }"]
        for i, v in enumerate(p.values):
            outputs.append(f"    out[{i}] = {self.printer.expr(v)};")
        if p.mode == "forward":
            outputs += [f"    dout[{i}] = {self.printer.expr(d)};"
                        for i, d in enumerate(p.derivatives)]
        lines += outputs
        checked = {"reverse": ("grad", self.m * n), "forward": ("dout", self.m),
                   "hessian": ("grad", n)}[p.mode]
        checks = [checked] + ([("hv", n)] if p.mode == "hessian" else [])
        status = -1  # the derivatives' entries, numbered on from one array to the next
        for array, size in checks:
            if size:
                lines += [f"    for (int i = 0; i < {size}; i++)",
                          f"        if (!isfinite({array}[i])) return GC_FAIL({status} - i);"]
            status -= size
        lines += ["    return 0;", "}"]
        if any("GC_FAIL(" in line for line in lines):  # one name for the failure's arguments
            lines = [f"#define GC_FAIL(status) gc_fail(status, {fail_args})", *lines,
                     "#undef GC_FAIL"]
        return "\n".join(lines)

    def points(self, params: str) -> str:
        name, n, m = self.name, self.n, self.m
        return "\n".join([
            f"int {name}_points({params})", "{", "    size_t i;", "    int failed = 0;",
            "    for (i = 0; i < count; i++)",
            f"        failed += {name}(in + i * {n}, out + i * {m}, grad + i * {m * n}) != 0;",
            "    return failed;", "}"])

    def hessian(self, params: str) -> str:
        name, n = self.name, self.n
        lines = [f"int {name}({params})", "{", f"    double dir[{max(n, 1)}], "
                 f"hv[{max(n, 1)}];", "    int i, j, status = 0;",
                 f"    for (j = 0; j < {n}; j++) {{",
                 f"        for (i = 0; i < {n}; i++) dir[i] = i == j;",
                 f"        status = {name}_hvp(in, dir, out, grad, hv);",
                 "        if (status) break;",
                 f"        for (i = 0; i < {n}; i++) hess[i * {n} + j] = hv[i];",
                 "    }",
                 "    if (status)",
                 f"        for (i = 0; i < {n * n}; i++) hess[i] = NAN;",
                 "    return status;", "}"]
        if not n:
            lines = [f"int {name}({params})", "{", "    (void)hess;",
                     f"    return {name}_hvp(in, NULL, out, grad, NULL);", "}"]
        return "\n".join(lines)

    def text(self) -> str:
        functions = []
        for function, params, _ in self.signature():
            if function.endswith("_points"):
                functions.append(self.points(params))
            elif self.p.mode == "hessian" and function == self.name:
                functions.append(self.hessian(params))
            else:
                functions.append(self.function(function, params))
        helpers = [_C_HELPERS[h] for h in sorted(self.printer.helpers)]
        if any("gc_fail(" in f for f in functions):  # an unused static function: a warning
            helpers.append(_C_FAIL)
        return "\n".join([*self.comments(), "", "#include <math.h>", "#include <stddef.h>", "",
                          "\n\n".join(helpers + functions)]) + "\n"


_C_FAIL = '''static void gc_nan(double *a, int n)
{
    int i;
    for (i = 0; i < n; i++) a[i] = NAN;
}

static int gc_fail(int status, double *a, int na, double *b, int nb, double *c, int nc)
{
    gc_nan(a, na);
    gc_nan(b, nb);
    gc_nan(c, nc);
    return status;
}'''
