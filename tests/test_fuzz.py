"""Bad input, searched for: whatever is typed, gradcli ends with exit 0, 1 or 2 and a message.

Each property drives the real command line through click's CliRunner and checks the outcome
with :func:`ended_cleanly`: exit code 0, 1 or 2; no exception escaped (so no traceback); a
failure says something on stderr; a success prints a result. A few inputs that only a real
process can deliver (raw bytes in argv, stdin and files) go through the installed console script.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gradcli.cli import main
from gradcli.engine.primitives import function_names
from gradcli.language.printer import to_source
from strategies import cases

runner = CliRunner()

# A CliRunner run is cheap: these properties search five times the profile's number of examples.
cheap = settings(max_examples=5 * settings().max_examples)


def ended_cleanly(*args: str, input: str | None = None):
    """Run ``gradcli *args`` and check it ended as every run must; returns the click Result."""
    result = runner.invoke(main, list(args), input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"gradcli {args!r} raised {result.exception!r}") from result.exception
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output)
    assert "Traceback" not in result.output
    if result.exit_code:
        assert result.stderr.strip(), f"exit {result.exit_code} without a message"
    else:
        assert result.stdout.strip()
    return result


def evaluate_source(source: str, *extra: str):
    return ended_cleanly("eval", source, "--at", "x=0.5,y=2,z=-1.5,θ=3", *extra)


# -- text the parser sees ------------------------------------------------------------------------

# Pieces of the language (and near misses), so the search reaches deep into the grammar rather
# than failing at the first character.
TOKENS = (
    ["x", "y", "z", "θ", "a", "b", "pi", "e", "_", "x_1", "0", "1", "2.5", ".5", "5.", "1e3",
     "1e-3", "1e999", "1e309", "9" * 400, "+", "-", "*", "/", "^", "**", "(", ")", ",", "=",
     "+=", "-=", "*=", "/=", "==", ";", "\n", "\r\n", " ", "\t", "\\\n", "#", "# c\n", "$", "@",
     "!", "%", "[", "]", "'", '"', "\x00", "\x0b", "\u00a0", "²", "٣", "𝑥", "é", "\ufeff"]
    + function_names()
)
token_soup = st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)
any_text = st.text(max_size=200)
lenient_bytes = st.tuples(st.binary(max_size=200), st.sampled_from(["replace", "ignore"])).map(
    lambda b: b[0].decode("utf-8", b[1]))


@cheap
@given(token_soup)
@example("x == 2")
@example("(" * 50 + "x")
@example("sin(x,)")
@example("x = ; x")
@example("c += 1")
@example("a = 1\na += a *= 2")
def test_token_soup(source):
    evaluate_source(source)


@cheap
@given(any_text)
@example("")
@example("\x00")
@example("\ufeffx")
def test_random_text(source):
    evaluate_source(source)


@cheap
@given(lenient_bytes)
def test_random_bytes_decoded_leniently(source):
    evaluate_source(source)


@cheap
@given(st.text(st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF) | st.sampled_from("x+1 #"),
               min_size=1, max_size=20))
def test_stray_bytes_are_bad_input(source):
    # A stray byte in argv or stdin reaches Python as a lone surrogate (surrogateescape).
    result = evaluate_source(source)
    if any("\ud800" <= ch <= "\udfff" for ch in source):
        assert result.exit_code == 2 and "not UTF-8 text" in result.stderr


@cheap
@given(st.data(), cases())
def test_truncated_and_mutated_programs(data, case):
    source = to_source(case.program)
    cut = data.draw(st.integers(0, len(source)), label="cut")
    evaluate_source(source[:cut])
    edits = data.draw(st.lists(st.tuples(st.integers(0, len(source)), st.sampled_from(TOKENS)
                                         | st.just("")), min_size=1, max_size=4), label="edits")
    mutated = source
    for index, piece in edits:  # insert a piece, or delete a character when the piece is ""
        mutated = mutated[:index] + piece + mutated[index + (piece == ""):]
    evaluate_source(mutated, "--json")


# -- the point -----------------------------------------------------------------------------------

ABSURD_POINTS = ["x==2", "x=1e999", "x=-1e999", "x=nan", "x=inf", "x=-inf", "x=NaN", ",,,", ",",
                 "", " ", "=2", "=", "x=", "x", "x=1,x=2", "1=2", "x y=2", "x=(", "x=)", "x=1)",
                 "x=((1)", "x=y", "x=nan*0", "x=1e308*10", "x=0/0", "x=log(-1)", "x=exp(1000)",
                 "x=" + "9" * 400, "x=" + "(" * 10_000 + "1" + ")" * 10_000, "é=1", "x\x00=1",
                 "x=1;y=2", "x=2,,,y=3", "x = 2 , y = 3"]


@pytest.mark.parametrize("at", ABSURD_POINTS)
def test_absurd_points(at):
    ended_cleanly("eval", "x*y", "--at", at, "--at", "y=1")


@pytest.mark.parametrize("at", ["x=nan", "x=inf", "x=-inf", "x=1e999", "x=1e308*10", ",,,"])
def test_non_finite_or_empty_points_are_bad_input(at):
    result = ended_cleanly("eval", "x+1", "--at", at)
    assert result.exit_code == 2


@cheap
@given(st.text(max_size=40))
@example("x=" + "1" * 400)
def test_random_points(at):
    ended_cleanly("eval", "x*y+z", "--at", at)


@cheap
@given(st.lists(st.sampled_from(["x", "y", "", " ", "é", "1", "x=1", "x,y"]), max_size=4)
       .map(",".join))
def test_random_wrt(wrt):
    ended_cleanly("eval", "x*y", "--at", "x=2,y=3", "--wrt", wrt)


@pytest.mark.parametrize("seed", ["nan", "inf", "-inf", "1e999"])
def test_non_finite_seed_is_bad_input(seed):
    result = ended_cleanly("eval", "x*y", "--at", "x=2,y=3", "--seed", seed)
    assert result.exit_code == 2 and "seed" in result.stderr


# -- numbers: huge, tiny, and non-finite in the middle of the graph ------------------------------

@cheap
@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(
    ["x*x", "exp(x)", "x*1e308", "1/x", "log(x)", "sqrt(x)", "x^x", "tan(x)", "atan(x)",
     "sinh(x)", "cbrt(x)", "x/1e-300", "asinh(x)", "erf(x)", "hypot(x, x)", "atan2(x, 1)"]))
def test_any_finite_point(value, source):
    result = ended_cleanly("eval", source, "--at", f"x={value!r}", "--json")
    if result.exit_code == 0:
        data = json.loads(result.stdout)
        numbers = [data["value"], *data["gradient"].values()]  # null: beyond the double range
        assert all(x is None or math.isfinite(x) for x in numbers)
        assert data["decimal"]["value"] and all(data["decimal"]["gradient"].values())


# (source, point, words the message must contain): the node that first became non-finite is named
NON_FINITE = [
    ("a = x*1e300; b = a*1e300; b - b", "x=1", ["v2 = 1e+300 * 1e+300 in float64 is inf"]),
    ("x*1e308*10 + 1", "x=1", ["v2", "is inf"]),
    ("exp(x) - exp(x)", "x=710", ["v1", "exp(710) overflows"]),
    ("t = x*1e308*10; x", "x=1", ["v2", "is inf"]),  # even a dead statement may not overflow
    ("x/1e-320", "x=1", ["v1", "is inf"]),
    ("log(x)", "x=1e-320", ["gradient is not finite", "contribution of v1 to x is inf"]),
    ("sqrt(x)", "x=0", ["v1 = sqrt(0)", "infinite slope (+∞)"]),
]


@pytest.mark.parametrize("source, at, words", NON_FINITE)
def test_non_finite_in_the_graph_names_the_node(source, at, words):
    # float64's overflows (--float64); certified, these are finite numbers (test_certified.py)
    float64 = () if source == "sqrt(x)" else ("--float64",)
    result = ended_cleanly("eval", source, "--at", at, *float64)
    assert result.exit_code == 1
    for word in words:
        assert word in result.stderr, result.stderr
