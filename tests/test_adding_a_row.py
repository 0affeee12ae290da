"""Adding a function is one row in ``engine/primitives.py`` plus its line in ``tests/references.py``
(docs/functions.md, "Adding a function"). This test adds the worked example, ``logit``, at run
time, a row defined by other rows, and runs every command on it: eval at 13 and 50 digits and
in float64, hessian, diff, codegen in each language, a batch with proven digits, LaTeX. Each
result is compared with the row's mpmath reference. A row that lacks something fails with a
checklist naming what each failing mode reads from the row.
"""

from __future__ import annotations

import contextlib
import json
import math
import re

import mpmath
import numpy as np
import sympy as sp
from click.testing import CliRunner
from latex_reader import read
from references import REFERENCES, Reference, missing
from test_codegen import CC, compile_c, doubles, load_module

from gradcli.cli import main
from gradcli.engine import primitives
from gradcli.engine.primitives import TABLE, row

# The worked example of docs/functions.md: the row and its reference.
LOGIT = row("logit", 1, None, (lambda m, a, y: 1 / (a * (1 - a)),), "0 < a < 1",
            definition=lambda m, a: m.log(a / (1 - a)))
LOGIT_REFERENCE = Reference(lambda a: mpmath.log(a / (1 - a)), lambda a: sp.log(a / (1 - a)),
                            span=(0.01, 0.99))

SOURCE, X, Y = "{name}(x)*y", 0.3, 2.0  # f = row(x)·y: every first and second derivative used


@contextlib.contextmanager
def added(new_row, reference):
    """The row and its reference in the tables for the block, then gone again."""
    primitives.add(new_row)
    REFERENCES[new_row.name] = reference
    try:
        yield
    finally:
        primitives.remove(new_row.name)
        del REFERENCES[new_row.name]


def _run(*args) -> str:
    done = CliRunner().invoke(main, list(args))
    assert done.exit_code == 0, done.output
    return done.stdout


def _truth(reference):
    """f, its gradient and Hessian at (X, Y) by mpmath, at 80 digits (X, Y the decimals
    typed, as --at reads them)."""
    with mpmath.workdps(80):
        x, y = mpmath.mpf(str(X)), mpmath.mpf(str(Y))
        f, df, d2f = (mpmath.diff(reference.mp, x, n) for n in (0, 1, 2))
        return f * y, [df * y, f], [[d2f * y, df], [df, 0]]


def _correctly_rounded(text: str, want, digits: int) -> None:
    """``text`` is ``want`` to ``digits`` significant digits: within half a unit of the last."""
    with mpmath.workdps(80):
        got = mpmath.mpf(text)
        unit = 0 if want == 0 else mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(abs(want)))
                                                      - digits + 1)
        assert abs(got - want) <= unit / 2 * (1 + mpmath.mpf(10) ** -60), (text, want)


def _close(got: float, want, rel: float = 1e-12) -> None:
    assert abs(got - float(want)) <= rel * max(1.0, abs(float(want))), (got, float(want))


def _eval(source, digits, want):
    out = json.loads(_run("eval", source, "--at", f"x={X},y={Y}", "--digits", str(digits),
                          "--json"))
    assert out["certified"], out
    _correctly_rounded(out["decimal"]["value"], want[0], digits)
    for name, w in zip("xy", want[1]):
        _correctly_rounded(out["decimal"]["gradient"][name], w, digits)


def _float64(source, want):
    out = json.loads(_run("eval", source, "--at", f"x={X},y={Y}", "--float64", "--json"))
    _close(out["value"], want[0])
    for name, w in zip("xy", want[1]):
        _close(out["gradient"][name], w)


def _hessian(source, want):
    out = json.loads(_run("hessian", source, "--at", f"x={X},y={Y}", "--json"))
    for i in range(2):
        for j in range(2):
            _correctly_rounded(out["decimal"]["hessian"][i][j], want[2][i][j], out["digits"])


def _diff(source, want):
    derivatives = json.loads(_run("diff", source, "--json"))["derivatives"]
    for name, w in zip("xy", want[1]):
        out = json.loads(_run("eval", derivatives[name], "--at", f"x={X},y={Y}", "--float64",
                              "--json"))
        _close(out["value"], w)


def _codegen(source, want, lang, directory):
    text = _run("codegen", source, "--lang", lang)
    if lang == "c":
        if CC is None:
            return
        lib = compile_c(text, directory, "row_c")
        out, grad = doubles([0.0]), doubles([0.0, 0.0])
        assert lib.f(doubles([X, Y]), out, grad) == 0
        value, gradient = out[0], list(grad)
    elif lang == "jax":  # without JAX installed: every jnp function it calls is NumPy's too
        called = set(re.findall(r"\bjnp\.(\w+)\(", text))
        assert all(hasattr(np, f) for f in called), called - set(dir(np))
        return
    else:
        x, y = (np.array([X, X]), np.array([Y, Y])) if lang == "numpy" else (X, Y)
        value, gradient = load_module(text, directory, f"row_{lang}").f(x, y)
        value, gradient = float(np.ravel(value)[0]), [float(np.ravel(g)[0]) for g in gradient]
    _close(value, want[0])
    for got, w in zip(gradient, want[1]):
        _close(got, w)


def _batch(name, reference):
    lo, hi = reference.span
    rows = json.loads("[" + ",".join(_run(
        "eval", f"{name}(x)", "--grid", f"x={lo}:{hi}:7", "--with-digits", "--json")
        .split("\n")[:-1]) + "]")
    for r in rows:
        with mpmath.workdps(50):
            want = reference.mp(mpmath.mpf(r["x"]))
        assert r["error"] is None, r
        assert r["digits"] >= 10, r  # proven by the batch bounds, not left to certify
        _correctly_rounded(repr(r["f"]), want, r["digits"] - 1)


def _latex(source, want):
    text = _run("diff", source, "--latex")
    rhs = [line.split("&=")[1].rstrip(" \\") for line in text.splitlines() if "&=" in line]
    with mpmath.workdps(30):
        for formula, w in zip(rhs, want[1]):
            _close(float(read(formula, {"x": X, "y": Y})), w)


# What each mode reads from a row: the checklist's words for a failure there.
NEEDS = {
    "reference": "its line in tests/references.py (mpmath and SymPy)",
    "float64": "primal (or definition)",
    "digits": "definition over other rows (or a ball function in engine/ball.py) and partials",
    "hessian": "partials written with m (differentiable: dual numbers), and balls (definition)",
    "diff": "partials written with m",
    "code": "definition (or its spelling: code={...}, a helper's primal in engine/special.py)",
    "batch": "numpy (or definition), and a bound: definition (or engine/bounds.py)",
    "latex": "latex (default \\operatorname{name})",
}


def checklist(name: str, reference: Reference, directory) -> list[str]:
    """Every command run on the row ``name``: a line for each that fails, naming what it reads."""
    source = SOURCE.format(name=name)
    want = _truth(reference)
    lines = [f"[ ] references: {line}" for line in missing({name: TABLE[name]})]
    checks = [
        ("eval --float64", "float64", lambda: _float64(source, want)),
        ("eval (13 digits)", "digits", lambda: _eval(source, 13, want)),
        ("eval --digits 50", "digits", lambda: _eval(source, 50, want)),
        ("hessian", "hessian", lambda: _hessian(source, want)),
        ("diff", "diff", lambda: _diff(source, want)),
        *((f"codegen --lang {lang}", "code",
           lambda lang=lang: _codegen(source, want, lang, directory))
          for lang in ("python", "numpy", "c", "jax")),
        ("eval --grid --with-digits", "batch", lambda: _batch(name, reference)),
        ("diff --latex", "latex", lambda: _latex(source, want)),
    ]
    for what, mode, check in checks:
        try:
            check()
        except Exception as exc:  # noqa: BLE001 -- every failure is a line of the checklist
            words = " ".join(str(exc).split())[:200]
            lines.append(f"[ ] {what}: {type(exc).__name__}: {words}\n    the row needs: "
                         f"{NEEDS[mode]}")
    return lines


def test_a_row_added_at_run_time_works_in_every_command(tmp_path):
    with added(LOGIT, LOGIT_REFERENCE):
        lines = checklist("logit", LOGIT_REFERENCE, tmp_path)
    assert not lines, "the row logit is incomplete:\n" + "\n".join(lines)
    assert "logit" not in TABLE and "logit" not in REFERENCES


def test_a_row_without_a_definition_gets_a_checklist(tmp_path):
    # the same function given only its float primal: no mode can derive its balls or its code
    bare = row("logit", 1, lambda a: math.log(a / (1 - a)), LOGIT.partials, "0 < a < 1")
    with added(bare, Reference(LOGIT_REFERENCE.mp)):
        lines = checklist("logit", LOGIT_REFERENCE, tmp_path)
    text = "\n".join(lines)
    assert "references: logit: give exactly one of sympy= and branch=" in text
    assert "eval (13 digits): " in text and "no ball arithmetic for logit" in text
    assert "codegen --lang python" in text and "the row needs: definition" in text
    assert "eval --float64" not in text and "diff:" not in text, text  # its primal and rule
