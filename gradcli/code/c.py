"""Generated code in C99 with ``<math.h>``: ``int f(const double *in, double *out, double
*grad)``, a status for each failure, NaN in every result."""

from __future__ import annotations

from ..symbolic.adjoint import Code, Program, Statement, reads
from .printer import Printer, comment_lines, source_comment, what

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



class C:
    """C99 with <math.h>: ``int f(const double *in, double *out, double *grad)``."""

    def __init__(self, program: Program, name: str, hvp_only: bool):
        self.p, self.name, self.hvp_only = program, name, hvp_only
        self.printer = Printer("c")
        p = program
        # n inputs (in[n]), the derivatives by w of them (--wrt), m outputs
        self.n, self.w, self.m = len(p.inputs), len(p.wrt), len(p.output_names)

    def functions(self) -> list[str]:
        """The functions the code defines, in order."""
        return [function for function, _, _ in self.signature()]

    def signature(self) -> list[tuple[str, str, str]]:
        """(function, parameters, what it does) of each function, in order."""
        name, n, w, m = self.name, self.n, self.w, self.m
        if self.p.mode == "forward":
            return [(name, "const double *in, const double *dir, double *out, double *dout",
                     f"out[{m}]: the values; dout[{m}]: their derivatives along dir[{w}]")]
        if self.p.mode == "hessian":
            functions = [(f"{name}_hvp", "const double *in, const double *dir, double *out, "
                          "double *grad, double *hv",
                          f"out[1]: the value; grad[{w}]: the gradient; hv[{w}]: H·dir")]
            if not self.hvp_only:
                functions.append((name, "const double *in, double *out, double *grad, "
                                  "double *hess", f"out[1], grad[{w}], hess[{w * w}]: the "
                                  "Hessian, row by row"))
            return functions
        return [(name, "const double *in, double *out, double *grad",
                 f"out[{m}]: the values; grad[{m * w}]: " +
                 (f"the Jacobian, row by row ({m} x {w})" if m > 1 else "the gradient")),
                (f"{name}_points", "size_t count, const double *in, double *out, double *grad",
                 f"{name} at count points: in[count * {n}], out[count * {m}], "
                 f"grad[count * {m * w}], row by row; returns the number of points that failed")]

    def comments(self) -> list[str]:
        p = self.p
        lines = comment_lines(f"{self.name}: {what(p)} of", "//")
        lines += comment_lines(source_comment(p), "//")
        lines += comment_lines(f"generated by gradcli codegen --lang c --mode {p.mode}: "
                                "straight-line adjoint code, the comments the ids of --trace.",
                                "//")
        inputs = ", ".join(f"in[{i}] = {n}" for i, n in enumerate(p.inputs)) or "none"
        lines.append(f"// Inputs, in this order: {inputs}.")
        if p.wrt != p.inputs:
            lines.append("// The derivatives are by " + (", ".join(
                f"[{i}] = {n}" for i, n in enumerate(p.wrt)) or "none") + ".")
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
        for function, params, does in self.signature():
            lines += [f"// {does}", f"int {function}({params});"]
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
        p, w = self.p, self.w
        arrays = {"reverse": ("out", "grad", None), "forward": ("out", "dout", None),
                  "hessian": ("out", "grad", "hv")}[p.mode]
        sizes = {"out": self.m, "grad": self.m * w, "dout": self.m, "hv": w}
        fail_args = ", ".join(f"{a}, {sizes[a]}" if a else "NULL, 0" for a in arrays)
        lines = [f"int {function}({params})", "{"]
        # an input or a direction's entry that nothing reads is not declared (a warning)
        read = set().union(*(reads(st.value) for st in p.statements),
                           *(reads(e) for e in [*p.values, *p.derivatives, *p.hvp,
                                                *(g for row in p.gradients for g in row)]))
        inputs = [(i, p.variables[name]) for i, name in enumerate(p.inputs)
                  if p.variables[name] in read]
        tangents = [(i, f"vd_{p.variables[name]}") for i, name in enumerate(p.wrt)
                    if f"vd_{p.variables[name]}" in read]
        unused = [] if inputs else ["in"]
        if not w:  # no inputs to differentiate by: no derivatives either
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
            block += [f"    grad[{i * w + j}] = {self.printer.expr(e)};"
                      for j, e in enumerate(p.gradients[i])]
            lines += ["    {"] + ["    " + line for line in block] + ["    }"]
        for i, v in enumerate(p.values):
            outputs.append(f"    out[{i}] = {self.printer.expr(v)};")
        if p.mode == "forward":
            outputs += [f"    dout[{i}] = {self.printer.expr(d)};"
                        for i, d in enumerate(p.derivatives)]
        lines += outputs
        checked = {"reverse": ("grad", self.m * w), "forward": ("dout", self.m),
                   "hessian": ("grad", w)}[p.mode]
        checks = [checked] + ([("hv", w)] if p.mode == "hessian" else [])
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
        name, n, w, m = self.name, self.n, self.w, self.m
        return "\n".join([
            f"int {name}_points({params})", "{", "    size_t i;", "    int failed = 0;",
            "    for (i = 0; i < count; i++)",
            f"        failed += {name}(in + i * {n}, out + i * {m}, grad + i * {m * w}) != 0;",
            "    return failed;", "}"])

    def hessian(self, params: str) -> str:
        name, n = self.name, self.w  # the Hessian is w x w
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
        for k, (function, params, _) in enumerate(self.signature()):
            if self.p.mode == "reverse" and k == 1:
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

