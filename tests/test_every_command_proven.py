"""Every command keeps eval's promise (issue 38): proven Hessians, several outputs, --expect and
--points as eval, no ``?`` where the number is known, --digits over its whole range.

Each case runs the installed console script (and, for a few, click's CliRunner) and compares
what it prints with mpmath at high precision (``shows``: the truth correctly rounded).
"""

from __future__ import annotations

import json
import subprocess

import mpmath
import pytest

from test_certified import lines, shows

mp = mpmath.mpf


def _run(script, *args):
    return subprocess.run([script, *args], capture_output=True, text=True, encoding="utf-8")


def _second(f, x):
    with mpmath.workdps(80):
        return mpmath.diff(f, mp(x), 2)


HESSIANS = [
    # the table: a Hessian entry that float digits got wrong
    (["atanh(x)", "--at", "x=0.9999999"], lambda: _second(mpmath.atanh, "0.9999999"), 13),
    (["asin(x)", "--at", "x=0.999999999"], lambda: _second(mpmath.asin, "0.999999999"), 13),
    (["cbrt(x^3+1)-x", "--at", "x=3000"],
     lambda: _second(lambda x: mpmath.cbrt(x ** 3 + 1) - x, "3000"), 13),
    (["sinc(x)", "--at", "x=0.5", "--digits", "30"],
     lambda: _second(lambda x: mpmath.sin(x) / x, "0.5"), 30),
    (["sinc(x)", "--at", "x=0"], lambda: mp(-1) / 3, 13),
    (["digamma(x)", "--at", "x=-1e8+0.5"],  # ψ''(x) = ψ''(1 - x) at a half-integer
     lambda: mpmath.psi(2, mp(10) ** 8 + mp("0.5")), 13),
]


@pytest.mark.parametrize("args, truth, digits", HESSIANS, ids=[" ".join(c[0]) for c in HESSIANS])
def test_hessian_entries_are_the_truth(gradcli_script, args, truth, digits):
    done = _run(gradcli_script, "hessian", *args, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    [[entry]] = data["decimal"]["hessian"]
    assert data["digits"] == digits
    with mpmath.workdps(80):
        assert shows(entry, truth(), digits), (entry, mpmath.nstr(truth(), digits + 5))


EVALS = [
    # (arguments of eval, name -> the truth (None: the exact text given), exit code)
    (["sinc(x)", "--at", "x=0"], {"f": "1.000000000000", "∂f/∂x": "0"}, 0),
    (["x^y", "--at", "x=10,y=1e6"], {"f": "1.000000000000e1000000",
                                     "∂f/∂y": lambda: mpmath.log(10) * mp(10) ** 1000000}, 0),
    (["x^y", "--at", "x=10,y=-1e6"], {"f": "1.000000000000e-1000000"}, 0),
    (["erf(x)", "--at", "x=30000"], {"f": "1.000000000000",
                                     "∂f/∂x": lambda: 2 / mpmath.sqrt(mpmath.pi)
                                     * mpmath.exp(-mp(30000) ** 2)}, 0),
    (["exp(x); x", "--at", "x=1000"], {"f1": lambda: mpmath.exp(1000), "f2": "1000.000000000"}, 0),
    (["digamma(x)", "--at", "x=-1e8+0.5"],  # ψ'(x) = π² - ψ'(1 - x) at a half-integer
     {"∂f/∂x": lambda: mpmath.pi ** 2 - mpmath.psi(1, mp(10) ** 8 + mp("0.5"))}, 0),
    (["cosh(x)^2-sinh(x)^2", "--at", "x=3", "--expect", "x=0"], {"f": "1.000000000000"}, 0),
    (["cosh(x)^2-sinh(x)^2", "--at", "x=3", "--expect", "x=1e-30"], {}, 1),
    (["sin(x)", "--at", "x=3", "--expect", "x=cos(x)+1e-13"], {}, 1),
    (["exp(x)", "--at", "x=1000", "--expect", "x=exp(x)"], {}, 0),
]


@pytest.mark.parametrize("args, shown, code", EVALS, ids=[" ".join(c[0]) for c in EVALS])
def test_eval_prints_the_known_number(gradcli_script, args, shown, code):
    done = _run(gradcli_script, "eval", *args)
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    printed = lines(done.stdout)
    with mpmath.workdps(60):
        for name, truth in shown.items():
            if isinstance(truth, str):
                assert printed[name] == truth
            else:
                assert shows(printed[name], truth(), 13), (name, printed[name])


def test_a_formula_wrong_in_a_printed_digit_is_rejected(run):
    right = run("eval", "x*y; x+y", "--at", "x=2,y=3", "--expect", "f1.x=y")
    wrong = run("eval", "x*y; x+y", "--at", "x=2,y=3", "--expect", "f1.x=y+1e-9")
    assert right.exit_code == 0 and wrong.exit_code == 1, wrong.output


def test_digits_past_pythons_integer_string_limit(gradcli_script):
    done = _run(gradcli_script, "eval", "x", "--at", "x=2", "--digits", "4301")
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout)["f"] == "2." + "0" * 4300


def test_products_and_jacobian_where_float64_overflows(run):
    truth = mpmath.exp(1000)
    for extra in ([], ["--mode", "forward"], ["--seed", "f1=1,f2=2"], ["--direction", "x=1"]):
        done = run("eval", "exp(x); x", "--at", "x=1000", "--json", *extra)
        assert done.exit_code == 0, done.output
        data = json.loads(done.stdout)
        assert data["certified"] and data["digits"] == 13
        assert shows(data["decimal"]["values"]["f1"], truth, 13)
        product = data["decimal"].get("jacobian", {}).get("f1", {}).get("x") or next(
            iter(data["decimal"].get("vjp", data["decimal"].get("jvp", {})).values()))
        assert shows(product, truth, 13)


def test_points_rows_where_eval_prints(run, tmp_path):
    points = tmp_path / "p.csv"
    points.write_text("x\n1000\n2\n")
    done = run("eval", "exp(x)", "--points", str(points), "--digits", "13")
    assert done.exit_code == 0, done.output
    row = done.stdout.splitlines()[1].split(",")
    assert shows(row[1], mpmath.exp(1000), 13) and shows(row[2], mpmath.exp(1000), 13)


def test_refusals_say_why_in_words(run):
    done = run("eval", "tan(x)", "--at", "x=pi/2")
    assert done.exit_code == 1
    assert "tan is undefined where a = π/2 + kπ" in done.stderr
