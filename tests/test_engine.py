"""The engine through the Python API: golden values derived by hand, programs, depth and width."""

import math

import pytest

import gradcli
from gradcli import evaluate
from gradcli.errors import DomainError, InputError, NameLookupError, NumericalError

log, sin, cos, exp = math.log, math.sin, math.cos, math.exp

# (source, point, value, gradient): the expected numbers are derived by hand in each row
# (the chain rule written out with math.*), never copied from gradcli's output.
GOLDEN = [
    ("log(x)+x*y-sin(y)", {"x": 2, "y": 3},
     log(2) + 6 - sin(3), {"x": 1 / 2 + 3, "y": 2 - cos(3)}),
    ("log(x)+x*y-sin(y)", {"x": 2, "y": 5},
     log(2) + 10 - sin(5), {"x": 1 / 2 + 5, "y": 2 - cos(5)}),
    ("x*x", {"x": 3}, 9, {"x": 6}),
    ("x^3^2", {"x": 1.1}, 1.1 ** 9, {"x": 9 * 1.1 ** 8}),
    ("-x^2", {"x": 3}, -9, {"x": -6}),
    ("2^-x", {"x": 1}, 0.5, {"x": -log(2) * 0.5}),
    ("x-y-z", {"x": 1, "y": 2, "z": 3}, -4, {"x": 1, "y": -1, "z": -1}),
    ("x/y/z", {"x": 8, "y": 2, "z": 4}, 1, {"x": 1 / 8, "y": -8 / (2 ** 2 * 4), "z": -8 / (2 * 4 ** 2)}),
    ("x^y", {"x": 2, "y": 3}, 8, {"x": 3 * 4, "y": 8 * log(2)}),
    ("pow(x, 2) + pi*e", {"x": 3}, 9 + math.pi * math.e, {"x": 6}),
    ("y*x", {"x": 2, "y": 5}, 10, {"y": 2, "x": 5}),  # order of first appearance
    ("exp(sin(x))", {"x": 0.5}, exp(sin(0.5)), {"x": exp(sin(0.5)) * cos(0.5)}),
    ("x", {"x": 4}, 4, {"x": 1}),
    ("3", {}, 3, {}),
    ("sigmoid(x)", {"x": 0}, 0.5, {"x": 0.25}),
    ("c = x*y; c += c + 1; c", {"x": 2, "y": 3}, 13, {"x": 6, "y": 4}),
    ("a = x\nb = a*a\nb -= a\nb", {"x": 3}, 6, {"x": 5}),
]


@pytest.mark.parametrize("source, at, value, gradient", GOLDEN)
def test_golden_value_and_gradient(source, at, value, gradient):
    result = evaluate(source, at)
    assert result.value == pytest.approx(value, rel=1e-13, abs=1e-13)
    assert list(result.gradient) == list(gradient)
    for name, g in gradient.items():
        assert result.gradient[name] == pytest.approx(g, rel=1e-13, abs=1e-13)


def test_seed_example_to_twelve_digits():
    result = evaluate("log(x)+x*y-sin(y)", {"x": 2, "y": 3})
    assert f"{result.value:.12f}" == "6.552027172500"
    assert f"{result.gradient['y']:.12f}" == "2.989992496600"
    assert result.gradient["x"] == 3.5


def test_seed_scales_the_gradient():
    result = evaluate("log(x)+x*y-sin(y)", {"x": 2, "y": 3}, seed=-2.5)
    assert result.gradient["x"] == pytest.approx(-2.5 * 3.5)
    assert result.value == pytest.approx(log(2) + 6 - sin(3))


def test_wrt_restricts_the_gradient():
    assert list(evaluate("x*y+z", {"x": 1, "y": 2, "z": 3}, wrt=["z", "x"]).gradient) == ["z", "x"]
    with pytest.raises(InputError):
        evaluate("x*y", {"x": 1, "y": 2}, wrt=["q"])


def test_two_calls_give_the_same_answer():
    graph = gradcli.compile("x*x + sin(x)")
    first = gradcli.evaluate(graph, {"x": 1.3}).gradient
    second = gradcli.evaluate(graph, {"x": 1.3}).gradient
    assert first == second == {"x": pytest.approx(2 * 1.3 + cos(1.3), rel=1e-15)}


# The program from micrograd's README (test_jacobian.py differentiates its c, d, e and g too).
MICROGRAD = """
c = a + b
d = a * b + b**3
c += c + 1
c += 1 + c + (-a)
d += d * 2 + relu(b + a)
d += 3 * d + relu(b - a)
e = c - d
f = e**2
g = f / 2.0
g += 10.0 / f
"""


def test_micrograd_readme_program():
    # The expected numbers are the ones micrograd's README prints (PyTorch agrees).
    result = evaluate(MICROGRAD, {"a": -4, "b": 2})
    assert result.value == pytest.approx(24.70408163265306, rel=1e-14)
    assert result.gradient["a"] == pytest.approx(138.83381924198252, rel=1e-14)
    assert result.gradient["b"] == pytest.approx(645.5772594752187, rel=1e-14)


def test_assignment_shadows_a_constant_from_then_on():
    # micrograd's program names a variable e; before the assignment e is Euler's number
    result = evaluate("a = e*x; e = 2*x; a + e", {"x": 1})
    assert result.value == pytest.approx(math.e + 2)
    assert result.gradient == {"x": pytest.approx(math.e + 2)}


def test_unused_names_in_the_point_are_ignored():
    assert evaluate("x+1", {"x": 1, "zzz": 5}).gradient == {"x": 1}


def test_deep_nesting_100000():
    depth = 100_000
    result = evaluate("sin(" * depth + "x" + ")" * depth, {"x": 0.5})
    value, derivative = 0.5, 1.0
    for _ in range(depth):
        derivative *= cos(value)
        value = sin(value)
    assert result.value == pytest.approx(value, rel=1e-12)
    assert result.gradient["x"] == pytest.approx(derivative, rel=1e-9)


def test_wide_sum_100000_terms():
    n = 100_000
    source = "+".join(f"{i % 7 + 1}*x*y" for i in range(n))
    result = evaluate(source, {"x": 2, "y": 3})
    total = sum(i % 7 + 1 for i in range(n))
    assert result.value == pytest.approx(total * 6)
    assert result.gradient == {"x": pytest.approx(total * 3), "y": pytest.approx(total * 2)}


def test_shared_program_chain():
    # a long chain of assignments reusing the previous name: d/dx of (x+1)+1... is 1
    source = "a = x\n" + "a = a*1 + 1\n" * 20_000 + "a"
    result = evaluate(source, {"x": 0.5})
    assert result.value == pytest.approx(20_000.5)
    assert result.gradient == {"x": 1.0}


# (source, point, error class, words the message must contain)
ERRORS = [
    ("log(x)", {"x": -1}, DomainError, ["log(-1)", "domain of log"]),
    ("sqrt(x)", {"x": -4}, DomainError, ["sqrt(-4)"]),
    ("1/x", {"x": 0}, DomainError, ["division by zero"]),
    ("asin(x)", {"x": 2}, DomainError, ["asin(2)"]),
    ("log(-1)", {}, DomainError, ["log(-1)"]),
    ("exp(x)", {"x": 1000}, NumericalError, ["exp(1000)", "overflows"]),
    ("x*1e300*1e300", {"x": 1}, NumericalError, ["not a finite number"]),
    ("sqrt(x)", {"x": 0}, NumericalError, ["infinite slope"]),
    ("sinn(x)", {"x": 1}, NameLookupError, ["unknown function sinn"]),
    ("atan2(x)", {"x": 1}, NameLookupError, ["atan2 takes 2 arguments, got 1"]),
    ("sin(x, y)", {"x": 1, "y": 1}, NameLookupError, ["sin takes 1 argument, got 2"]),
    ("x*y", {"x": 1}, InputError, ["no value for input y"]),
    ("x+1", {"x": math.nan}, InputError, ["the value of x is nan", "not a finite number"]),
    ("x", {"x": -math.inf}, InputError, ["the value of x is -inf", "not a finite number"]),
    ("x", {"x": "abc"}, InputError, ["the value of x is not a number: it reads the name abc"]),
    ("y = x + 1; x = 2; y", {"x": 1}, NameLookupError, ["x is an input"]),
    ("c += 1", {}, NameLookupError, ["c, which has no value yet"]),
    ("y = y + 1", {"y": 1}, NameLookupError, ["y is an input"]),
    ("sin + 1", {}, NameLookupError, ["sin is a function"]),
]


# Overflow is float64's alone: certified, exp(1000) is 1.970071114017e434 (test_certified.py).
FLOAT64_ONLY = {"exp(x)", "x*1e300*1e300"}


@pytest.mark.parametrize("source, at, error, words", ERRORS)
def test_errors_name_what_went_wrong(source, at, error, words):
    with pytest.raises(error) as info:
        evaluate(source, at, float64=source in FLOAT64_ONLY)
    for word in words:
        assert word in info.value.message
    assert info.value.span is not None or error is InputError


@pytest.mark.parametrize("seed", [math.nan, math.inf])
def test_a_non_finite_seed_is_bad_input(seed):
    with pytest.raises(InputError) as info:
        evaluate("x*y", {"x": 1, "y": 2}, seed=seed)
    assert "seed" in info.value.message and info.value.exit_code == 2


def test_unknown_function_suggests_the_nearest_name():
    with pytest.raises(NameLookupError) as info:
        evaluate("sinn(x)", {"x": 1})
    assert "sin" in info.value.hint
    assert info.value.span == (0, 4)
