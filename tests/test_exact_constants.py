"""A constant is read exactly in one place, :meth:`Graph.exact_constants`: the typed literal (0.1
is 1/10), pi and e, and a constant folded at lowering as its row on its arguments. The
certified engine, the batch bounds and the symbolic form all read it; the expected values here
are mpmath's."""

from __future__ import annotations

import subprocess
from fractions import Fraction

import mpmath
import gradcli
from gradcli.engine.graph import compile


def test_a_folded_sum_3000_deep_is_the_exact_sum_of_the_typed_decimals():
    # in doubles 0.1 + 0.1 + ... (3000 times) is 300.00000000000563; exactly it is 300
    source = "x*(" + "+".join(["0.1"] * 3000) + ")"
    want = sum(Fraction("0.1") for _ in range(3000))
    assert sum(0.1 for _ in range(3000)) != 300  # what the doubles give
    result = gradcli.evaluate(source, {"x": 1.0})
    assert Fraction(result.gradient["x"].text) == want == 300


def test_a_folded_constant_keeps_its_rows():
    # log(2)^0.5 is the square root of ln 2, not of its double
    mpmath.mp.dps = 30
    result = gradcli.evaluate("x*log(2)^0.5", {"x": 1.0}, digits=25)
    text = result.gradient["x"].text
    assert abs(mpmath.mpf(text) - mpmath.sqrt(mpmath.log(2))) < mpmath.mpf(10) ** -24, text


def test_the_constant_that_is_exactly_outside_its_domain_is_spelled_as_typed(run, reported):
    # pi - 5441592653589793 is an integer in doubles (-5441592653589790), not exactly; the base
    # is below 0: exactly, the power is outside pow's domain
    mpmath.mp.dps = 40
    assert -mpmath.e + mpmath.mpf("0.18281828459045") < 0
    assert mpmath.pi - 5441592653589793 != mpmath.floor(mpmath.pi - 5441592653589793)
    source = "x*(-e + 0.18281828459045)^(pi - 5441592653589793)"
    graph = compile(source)
    assert graph.constant_text(graph.folds[-1][0]) == \
        "((-e) + 0.18281828459045) ^ (pi - 5441592653589793)"
    result = run("eval", source, "--at", "x=1")
    reported(result, 2, ["the constant ((-e) + 0.18281828459045) ^ (pi - 5441592653589793) is, "
                         "exactly, outside the domain of pow", "--float64"])


def test_the_console_script_reads_a_folded_constant_exactly(gradcli_script):
    done = subprocess.run([gradcli_script, "eval", "x*(0.1+0.2)", "--at", "x=1"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "∂f/∂x = 0.3000000000000" in done.stdout  # 3/10, not 0.30000000000000004
