"""LaTeX output: `diff --latex`, `--export FILE.tex` (fragment and --standalone document) on
eval --trace, eval --check and hessian. The standalone documents are compiled with a real LaTeX
(pdflatex or lualatex from the distribution: `apt-get install texlive-latex-base
texlive-latex-recommended`, which .ci/run does); without one those tests are skipped, saying why.

Every formula is also read back by a reader of mathematics (tests/latex_reader.py) and must have
the value its source has: a dropped parenthesis changes the value."""

import math
import re
import shutil
import subprocess

import mpmath
import pytest
from hypothesis import given, settings

from gradcli.engine.primitives import CONSTANTS, lookup
from gradcli.engine.graph import format_constant
from gradcli.language.ast import Binary, Call, Num, Unary, Var
from gradcli.language.parser import parse
from gradcli.language.printer import to_source
from gradcli.views import latex
from latex_reader import FUNCTIONS, LatexSyntaxError, read
from strategies import cases

SEED = "log(x)+x*y-sin(y)"


@pytest.fixture(scope="module")
def tex_engine():
    """pdflatex (or lualatex). Tests never install system packages: .ci/run installs texlive
    where apt-get exists; elsewhere these tests are skipped, saying why."""
    for tool in ("pdflatex", "lualatex"):
        if shutil.which(tool):
            return shutil.which(tool)
    pytest.skip("no LaTeX: pdflatex/lualatex not found (apt-get install texlive-latex-base "
                "texlive-latex-recommended, as .ci/run does)")


def compile_tex(engine: str, path) -> None:
    result = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", path.name],
                            cwd=path.parent, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]
    assert path.with_suffix(".pdf").stat().st_size > 1000


# -- formulas: hand-written expected LaTeX ---------------------------------------------------------

EXPRESSIONS = [
    ("1/x", r"\frac{1}{x}"),
    ("-6/x^4", r"-\frac{6}{{x}^{4}}"),
    ("sin(x)^2", r"{\sin\left(x\right)}^{2}"),
    ("2*x*cos(x)", r"2 \, x \, \cos\left(x\right)"),
    ("x*2", r"x \cdot 2"),
    ("(x + 1)*(y - 1)", r"\left(x + 1\right) \, \left(y - 1\right)"),
    ("x - (y - z)", r"x - \left(y - z\right)"),
    ("-(x + 1)", r"-\left(x + 1\right)"),
    ("x^(y - 1)", r"{x}^{y - 1}"),
    ("(x + 1)^2", r"{\left(x + 1\right)}^{2}"),
    ("sigmoid(a*x)", r"\operatorname{sigmoid}\left(a \, x\right)"),
    ("atan2(y, x)", r"\operatorname{atan2}\left(y, x\right)"),
    ("asin(x)", r"\arcsin\left(x\right)"),
    ("sqrt(x^2 + 1)", r"\sqrt{{x}^{2} + 1}"),
    ("abs(θ)", r"\left|\theta\right|"),
    ("pi*x1 + rate", r"\pi \, x_{1} + \mathit{rate}"),
    ("1e-05*x", r"1 \cdot 10^{-5} \, x"),
    # a sign after an operator is grouped; a fraction with a signed numerator is not an atom
    ("x*(-6/y)", r"x \, \left(-\frac{6}{y}\right)"),
    ("a*-b/c", r"\frac{a \, \left(-b\right)}{c}"),
    ("x - -6/y", r"x - \left(-\frac{6}{y}\right)"),
    ("x + -y", r"x + \left(-y\right)"),
    ("--x", r"-\left(-x\right)"),
    ("-6/y*x", r"-\frac{6}{y} \, x"),
    ("(a/b)^2", r"{\left(\frac{a}{b}\right)}^{2}"),
    ("(-x)^2", r"{\left(-x\right)}^{2}"),
    ("x^-2", r"{x}^{-2}"),
    ("x/(-y)", r"\frac{x}{-y}"),
]


@pytest.mark.parametrize("source, expected", EXPRESSIONS)
def test_expression(source, expected):
    assert latex.expression(parse(source).statements[-1]) == expected


# The issue's formulas, read back: each LaTeX has its source's value (and x \, -\frac{6}{y}, the
# old output, reads as x - 6/y, which has not).
@pytest.mark.parametrize("source", ["x*(-6/y)", "a*-b/c", "x - -6/y", "-x^2", "(-x)^2",
                                    "2^-x*3", "-(a*b)/c", "a/b/c", "a/(b/c)", "a - (b - c)",
                                    "-a^b^c", "x*-y*z"])
def test_issue_formulas_read_back_to_their_value(source):
    point = {"x": 1.5, "y": 0.7, "z": -2.0, "a": 3.0, "b": -1.25, "c": 2.0}
    expr = parse(source).statements[-1]
    with mpmath.workdps(40):
        assert read(latex.expression(expr), point) == pytest.approx(value(expr, point), rel=1e-30)


def test_the_old_output_reads_differently():
    point = {"x": 1.5, "y": 0.7}
    with mpmath.workdps(40):
        assert read(r"x \, -\frac{6}{y}", point) == pytest.approx(1.5 - 6 / 0.7)
    with pytest.raises(LatexSyntaxError):  # a reader finds no product in x - -6/y
        read(r"x - -\frac{6}{y}", point)


_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
        "/": lambda a, b: a / b, "^": lambda a, b: a ** b}


def value(expr, point):
    """The source's own value, from its AST, in mpmath (numbers as the decimals written)."""
    t = type(expr)
    if t is Num:
        return mpmath.mpf(format_constant(expr.value, named=False))
    if t is Var:
        return +getattr(mpmath, expr.name) if expr.name in CONSTANTS else mpmath.mpf(point[expr.name])
    if t is Unary:
        operand = value(expr.operand, point)
        return -operand if expr.op == "-" else operand
    if t is Binary:
        return _OPS[expr.op](value(expr.left, point), value(expr.right, point))
    assert t is Call
    name = lookup(expr.name, len(expr.args)).name
    return FUNCTIONS[name](*[value(a, point) for a in expr.args])


@settings(max_examples=300, deadline=None)
@given(cases(max_statements=0, max_depth=4))
def test_latex_reads_back_to_the_sources_value(case):
    """Precedence: random expressions over the whole catalogue, printed as LaTeX, read back by a
    reader of mathematics, have the value of their source (40 digits, the same decimals)."""
    expr = parse(to_source(case.program.statements[-1])).statements[-1]  # as a user wrote it
    text = latex.expression(expr)
    with mpmath.workdps(40):
        want = value(expr, case.point)
        got = read(text, case.point)
        assert mpmath.almosteq(got, want, rel_eps=mpmath.mpf(10) ** -25,
                               abs_eps=mpmath.mpf(10) ** -30), (text, got, want)


def test_deep_expression_does_not_recurse():
    depth = 20_000
    text = latex.expression(parse("sin(" * depth + "x" + ")" * depth).statements[-1])
    assert text.count(r"\sin") == depth


def test_diff_latex(run):
    out = run("diff", "1/x", "--order", "3", "--latex").output
    assert out == ("\\begin{align*}\n\\frac{\\partial^{3} f}{\\partial x^{3}} &= "
                   "-\\frac{6}{{x}^{4}}\n\\end{align*}\n")
    out = run("diff", SEED, "--latex").output
    assert r"\frac{\partial f}{\partial x} &= \frac{1}{x} + y \\" in out
    assert r"\frac{\partial f}{\partial y} &= x - \cos\left(y\right)" in out
    out = run("diff", "log(1 + exp(w*x + b))", "--wrt", "w", "--latex").output
    assert r"t_{1} &= \exp\left(b + w \, x\right) \\" in out
    assert r"&= \frac{x \, t_{1}}{t_{1} + 1}" in out


def test_latex_numbers_keep_every_digit(run, tmp_path):
    """A formula's numbers are written as printed or typed, not as their doubles: diff's exact
    integers and the constants of the formula eval exports."""
    out = run("diff", "(3*x)^40 + 0.12345678901234567891*y + log(2)*z", "--latex").output
    assert r"486306618362277152040 \, {x}^{39}" in out and "0.12345678901234567891" in out
    assert r"\log\left(2\right)" in out
    path = tmp_path / "t.tex"
    run("eval", "x*0.12345678901234567891 - 2.5e-30/x", "--at", "x=1", "--export", str(path))
    tex = path.read_text(encoding="utf-8")
    assert r"x \cdot 0.12345678901234567891 - \frac{2.5 \cdot 10^{-30}}{x}" in tex


def test_diff_latex_compiles(tex_engine, tmp_path, run):
    body = run("diff", "x^x*sigmoid(θ) + atan2(y, x)/sqrt(x^2 + 1)", "--order", "2",
               "--latex").output
    path = tmp_path / "diff.tex"
    path.write_text(latex.document(body), encoding="utf-8")
    compile_tex(tex_engine, path)


# -- tables: --export FILE.tex ----------------------------------------------------------------------

def test_eval_trace_export_fragment(run, tmp_path):
    path = tmp_path / "trace.tex"
    result = run("eval", SEED, "--at", "x=2,y=3", "--trace", "--export", str(path))
    assert result.exit_code == 0 and "Forward evaluation trace" in result.output  # still shown
    tex = path.read_text(encoding="utf-8")
    assert r"\documentclass" not in tex  # a fragment by default
    for piece in (r"\toprule", r"\midrule", r"\bottomrule", r"\caption{Forward evaluation trace}",
                  r"$v_{1} = \log\left(x\right) = \log\left(2\right)$",
                  r"$\frac{1}{x} = 0.5000000000000$", r"$\cos\left(y\right) = -0.9899924966004$",
                  r"\frac{\partial f}{\partial x} &= 3.500000000000"):
        assert piece in tex, piece


def test_eval_trace_export_standalone_compiles(tex_engine, run, tmp_path):
    path = tmp_path / "trace.tex"
    result = run("eval", SEED, "--at", "x=2,y=3", "--trace", "--check", "--export", str(path),
                 "--standalone")
    assert result.exit_code == 0
    tex = path.read_text(encoding="utf-8")
    assert tex.startswith(r"\documentclass") and r"\usepackage{booktabs}" in tex
    assert r"\caption{Gradient check: AD against numerical differentiation}" in tex
    compile_tex(tex_engine, path)


TEACHER = [  # what a teacher exports: the seed example, a wide check with formulas, a long trace
    ["eval", SEED, "--at", "x=2,y=3", "--trace", "--check"],
    ["eval", "x^x*sigmoid(θ) + atan2(y, x)/sqrt(x^2 + 1)", "--at", "x=1.3,y=-0.4,θ=0.25",
     "--trace", "--check", "--expect", "y=x/(x^2 + y^2)/sqrt(x^2 + 1)"],
    ["hessian", "exp(a*b)*c + log(d)*a^3 - sin(b*c*d)", "--at", "a=0.5,b=1.5,c=-2,d=3",
     "--check"],
]


@pytest.mark.parametrize("args", TEACHER, ids=["seed", "wide check", "hessian"])
def test_standalone_export_is_fit_to_publish(tex_engine, gradcli_script, tmp_path, args):
    """Numbers as 8.6\\times10^{-10}, math headers, and no table past the margin (no overfull
    box in pdflatex's log); the first page rendered (pdftoppm) for a person to look at. Run as
    the installed console script, as a teacher would."""
    path = tmp_path / "trace.tex"
    result = subprocess.run([gradcli_script, *args, "--export", path.name, "--standalone"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    tex = path.read_text(encoding="utf-8")
    assert not re.search(r"\d[eE][-+]?\d", tex), "a number in e-notation"
    if "--check" in args:
        assert r"$\pm$ (est.) & $|\text{AD} - \text{num.}|$ & rel.\ error" in tex
        assert r"\times10^{-" in tex
    compile_tex(tex_engine, path)
    log = path.with_suffix(".log").read_text(encoding="latin-1")
    assert "Overfull \\hbox" not in log, log[log.find("Overfull"):][:300]
    if shutil.which("pdftoppm"):
        subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1",
                        str(path.with_suffix(".pdf")), str(tmp_path / "page")], check=True,
                       timeout=120)
        assert (tmp_path / "page-1.png").stat().st_size > 5000


def test_console_script_exports_the_formula_with_its_parentheses(gradcli_script, tmp_path):
    done = subprocess.run([gradcli_script, "eval", "x*(-6/y)", "--at", "x=1,y=2", "--export",
                           "t.tex"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    tex = (tmp_path / "t.tex").read_text(encoding="utf-8")
    assert tex.startswith("\\begin{align*}\nf(x, y) &= x \\, \\left(-\\frac{6}{y}\\right) \\\\\n"
                          "f &= -3.000000000000 \\\\\n")


def test_scientific_numbers():
    assert [latex.scientific(t) for t in ("8.6e-10", "0.0e+00", "1.5e+20", "-2.0e-05", "inf",
                                          "-inf", "nan", "3.25", "4.0e+00")] == [
        r"8.6\times10^{-10}", "0", r"1.5\times10^{20}", r"-2.0\times10^{-5}", r"\infty",
        r"-\infty", "nan", "3.25", "4.0"]


def test_forward_mode_and_expect_export_compile(tex_engine, run, tmp_path):
    path = tmp_path / "forward.tex"
    assert run("eval", "x^2*y", "--at", "x=2,y=3", "--mode", "forward", "--trace", "--export",
               str(path), "--standalone").exit_code == 0
    compile_tex(tex_engine, path)
    path = tmp_path / "expect.tex"
    assert run("eval", SEED, "--at", "x=2,y=3", "--expect", "x=1/x+y", "--export", str(path),
               "--standalone").exit_code == 0
    assert r"\frac{1}{x} + y = 3.500000000000" in path.read_text(encoding="utf-8")
    compile_tex(tex_engine, path)


def test_hessian_export(tex_engine, run, tmp_path):
    path = tmp_path / "hessian.tex"
    result = run("hessian", SEED, "--at", "x=2,y=3", "--check", "--export", str(path),
                 "--standalone")
    assert result.exit_code == 0 and "Hessian" in result.output
    tex = path.read_text(encoding="utf-8")
    # H = [[-1/x^2, 1], [1, sin(y)]] at (2, 3), by hand
    assert r"$x$ & $-0.2500000000000$ & $1.000000000000$ \\" in tex
    assert r"$y$ & $1.000000000000$ & $0.1411200080599$ \\" in tex
    compile_tex(tex_engine, path)
    fragment = tmp_path / "h.tex"
    run("hessian", "x^2*y", "--at", "x=2,y=3", "--export", str(fragment))
    assert not fragment.read_text(encoding="utf-8").startswith(r"\documentclass")


EXPORTS = [  # every kind of table --export FILE.tex writes, and how many tables
    (["eval", SEED, "--at", "x=2,y=3", "--trace", "--check", "--expect", "x=1/x+y"], 4),
    (["eval", "t = x*y; t + sin(t)", "--at", "x=2,y=3", "--mode", "forward", "--trace"], 1),
    (["eval", "sum((X + b)^2) * c", "--at", "X=[[1,2],[3,4],[5,6]],b=[1,-2],c=3", "--trace"], 3),
    (["hessian", SEED, "--at", "x=2,y=3", "--check"], 3),  # H, then a check per row
]


@pytest.mark.parametrize("args, count", EXPORTS,
                         ids=["trace and check", "tangents", "arrays", "hessian"])
def test_each_latex_row_has_a_cell_per_column(run, tmp_path, args, count):
    """The columns of a table are written once (gradcli/views/columns.py) for the terminal and
    for LaTeX, with some for the terminal alone (names, output marks, tangent rules, float64
    digits): each booktabs row keeps as many cells as its tabular has columns."""
    path = tmp_path / "t.tex"
    result = run(*args, "--export", str(path))
    assert result.exit_code == 0, result.output
    tex = path.read_text(encoding="utf-8")
    tables = re.findall(r"\\begin\{tabular\}\{(\w+)\}\n\\toprule\n(.*?)\n\\midrule\n(.*?)\n"
                        r"\\bottomrule", tex, re.S)
    assert len(tables) == count
    for align, header, body in tables:
        for row in [header, *body.split("\n")]:
            row = re.sub(r"\\begin\{bmatrix\}.*?\\end\{bmatrix\}", "M", row)  # its own &
            assert len(row.removesuffix(r" \\").split(" & ")) == len(align), row


@pytest.mark.parametrize("args, words", [
    (["eval", "x", "--at", "x=1", "--standalone"], ["--standalone", "--export FILE.tex"]),
    (["hessian", "x*y", "--at", "x=1,y=2", "--export", "h.svg"], ["LaTeX only", ".tex"]),
    (["eval", "x", "--at", "x=1", "--export", "t.pdf"], ["unknown file type", ".tex"]),
])
def test_export_errors(run, reported, args, words):
    reported(run(*args), 2, words)


def test_special_characters_are_escaped():
    assert latex.text("50% & $x_1#") == r"50\% \& \$x\_1\#"


def test_installed_script_writes_latex(gradcli_script, tmp_path):
    out = subprocess.run([gradcli_script, "diff", "x^3", "--latex"], capture_output=True,
                         text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ("\\begin{align*}\n\\frac{\\partial f}{\\partial x} &= 3 \\, {x}^{2}\n"
                          "\\end{align*}\n")
    done = subprocess.run([gradcli_script, "eval", "x*y", "--at", "x=2,y=3", "--trace",
                           "--export", "t.tex"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert r"$v_{1} = x \, y = 2 \cdot 3$" in (tmp_path / "t.tex").read_text(encoding="utf-8")


def _doc_runs():
    import pathlib
    import re
    doc = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "latex.md").read_text("utf-8")
    runs = []
    for block in re.findall(r"```console\n(.*?)```", doc, re.S):
        for run_text in re.split(r"^(?=\$ )", block, flags=re.M):
            command, _, output = run_text.partition("\n")
            if command.startswith("$ gradcli"):
                runs.append((command[2:], [line.rstrip() for line in output.splitlines()]))
    return runs


@pytest.mark.parametrize("command, lines", _doc_runs())
def test_docs_examples_are_real_runs(run, command, lines):
    import shlex
    result = run(*shlex.split(command)[1:])
    assert result.exit_code == 0
    assert [line.rstrip() for line in result.output.splitlines()] == lines
