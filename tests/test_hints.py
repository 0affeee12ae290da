"""Every hint leads somewhere: a hint that proposes a rewrite ("write 2*|x|", "did you mean
sin?") carries it as the error's ``fix``, and applying the fix makes that error go away.

The corpus: the error cases of the suite (tests/test_parser.py, tests/test_cli.py), the rows of
issue 42's table, and texts the fuzzer makes (random token sequences, mutated programs). For
each error whose hint proposes a rewrite, the rewrite is applied to the text it is about (the
source, or the ``--at`` text) and the same error (its message, at the same place) must not come
back.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from gradcli.engine.graph import compile, point_vector
from gradcli.errors import GradcliError
from gradcli.points import parse_point
from strategies import cases, examples

import test_cli
import test_parser

# (source, --at text) pairs whose first error has a hint
ISSUE = [
    ("sin x", "x=1"), ("2 sin x", "x=1"), ("sin^2 x", "x=1"), ("x sin^2 x + 1", "x=1"),
    ("2|x|", "x=1"), ("|x||y|", "x=1,y=2"), ("x|y|", "x=1,y=2"), ("xy", "x=2,y=3"),
    ("xy + 2xy", "x=2,y=3"), ("abc", "a=1,b=2,c=3"), ("sni(x)", "x=1"), ("cso(x)", "x=1"),
    ("sqr(x)", "x=1"), ("lgo(x)", "x=1"), ("atan3(y, x)", "x=1,y=2"), ("deg = 1; deg", ""),
    ("x\\u00b2", "x=1"), ("sqrt^-1(x)", "x=1"), ("asin^-1(x)", "x=1"), ("x", "x:2"),
    ("x + y", "x=1,y"), ("if x > 0 then x else 0", "x=1"), ("softmax(a)", "a=1"),
    ("dot(w, x)", "w=1,x=2"), ("x^2", "x=1,2,3"), ("log(x, 2, 3)", "x=1"), ("sin(x, 2)", "x=1"),
    ("b = a + (a\nc = b^2", "a=1"), ("x = 1; x += 2; y *= 3", ""),
]
SUITE = [(source, "x=1,y=2") for source, _, _ in test_parser.ERRORS] + [
    (args[1], args[args.index("--at") + 1] if "--at" in args else "")
    for args, _, _ in test_cli.ERRORS if args[0] == "eval" and len(args) > 1]
REWRITES = ("write ", "did you mean ")


def first_error(source: str, at: str) -> tuple[GradcliError | None, str]:
    """The first error of ``eval source --at at`` (read, compile, the point's values), and
    which text it is about: "at" or "source"."""
    try:
        point = parse_point(at) if at else {}
    except GradcliError as exc:
        return exc, "at"
    try:
        point_vector(compile(source), point)
    except GradcliError as exc:
        return exc, "source"
    return None, "source"


def applied(text: str, fix) -> str:
    """``text`` with the fix's replacements made (the last first, so spans stay true)."""
    for (start, end), replacement in sorted(fix, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def follow(source: str, at: str) -> int:
    """Apply the first error's fix and check the error does not come back; how many hints
    were followed (0 or 1)."""
    error, where = first_error(source, at)
    if error is None or not (error.hint or "").startswith(REWRITES):
        return 0
    assert error.fix, f"{source!r} --at {at!r}: the hint {error.hint!r} has no fix to apply"
    if where == "at":
        at = applied(at, error.fix)
    else:
        source = applied(source, error.fix)
    again, _ = first_error(source, at)
    assert again is None or (again.message, again.span) != (error.message, error.span), (
        f"after the hint {error.hint!r}: {source!r} --at {at!r} fails the same way")
    return 1


@pytest.mark.parametrize("source, at", ISSUE + SUITE)
def test_a_hint_applied_makes_its_error_go_away(source, at):
    follow(source, at)


def test_the_corpus_has_hints_to_follow():
    followed = sum(follow(source, at) for source, at in ISSUE + SUITE)
    assert followed >= 18  # the issue's rows and the suite's cases, not a vacuous pass


def test_a_hint_that_is_not_a_rewrite_says_where_to_look():
    # no fix to apply: the message says what to use instead
    for source, at, words in [("blorp(a)", "a=1", "`gradcli functions`"),
                              ("if x > 0 then x else 0", "x=1", "max(x, 0)"),
                              ("x^2", "x=1,2,3", "--grid x=1:3:3")]:
        error, _ = first_error(source, at)
        assert words in error.hint and "did you mean" not in error.hint


TOKENS = test_parser.TOKENS + ["2", "x", "sin", "|", "√", "²", "°", "·", "−", "deg", "sin^2",
                               "xy", " "]


@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=12).map("".join))
@settings(max_examples=examples(500), deadline=None)
def test_every_hint_the_fuzzer_finds_leads_somewhere(source):
    follow(source, "x=1,y=2,y2=3,θ=0.5")


@given(st.data())
@settings(max_examples=examples(200), deadline=None)
def test_every_hint_on_a_mutated_program_leads_somewhere(data):
    from gradcli.language.printer import to_source
    case = data.draw(cases(max_statements=2, max_depth=3))
    text = to_source(case.program)
    at = ",".join(f"{name}={value!r}" for name, value in case.point.items())
    cut = data.draw(st.integers(0, len(text)))
    inserted = data.draw(st.sampled_from(["", " ", "|", "x", "sin", "2", ")", "("]))
    follow(text[:cut] + inserted + text[cut + data.draw(st.integers(0, 3)):], at)


# -- warnings: a reading worth a warning carries the rewrite for the other reading -----------------

@pytest.mark.parametrize("source, other", [
    ("1/2x", "1/(2*x)"), ("x/2y", "x/(2*y)"), ("(a+b)/2x", "(a+b)/(2*x)"),
    ("1/2(x+1)", "1/(2*(x+1))"), ("1/(2)(x)", "1/(2*x)"), ("2^3x", "2^(3*x)"),
    ("e^2x", "e^(2*x)"), ("2^-3x", "2^(-3*x)"), ("(x+1)^2x", "(x+1)^(2*x)"),
    ("2^3(x+1)", "2^(3*(x+1))"), ("sin(2^3x)", "sin(2^(3*x))"), ("y + 2^3x^2", "y + 2^(3*x^2)"),
])
def test_a_warnings_fix_gives_the_other_reading_and_no_warning(source, other):
    from gradcli.engine.graph import parse_source, read_back
    (_, text, fix), = read_back(source)[1]
    assert "write " in text
    fixed = applied(source, fix)
    assert read_back(fixed)[1] == [], fixed
    assert parse_source(fixed) == parse_source(other), (fixed, other)
