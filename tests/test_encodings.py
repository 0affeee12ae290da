"""What gradcli prints on a stream that cannot show every character (issue 25): carets stand
under the text as printed, and whatever diff prints reads back into eval in any encoding (a
character the stream cannot show is written \\uXXXX, which the parser reads in a name)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import sympy

from gradcli.errors import ParseError
from gradcli.language.parser import parse

ENCODINGS = ["utf-8", "cp1252", "latin-1", "ascii"]


def script(gradcli_script, *args, encoding="utf-8", input=None):
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    return subprocess.run([gradcli_script, *args], capture_output=True, env=env, input=input,
                          timeout=60)


def caret_under(lines: list[str], text: str) -> bool:
    """Whether the caret line (the one after the source line) starts under ``text`` and is as
    wide as it (these lines hold only ASCII or are counted by the test per character)."""
    source, caret = lines[1], lines[2]
    start = caret.index("^")
    width = len(caret[start:].split(" ")[0])
    return source.index(text) == start and width == len(text)


@pytest.mark.parametrize("encoding, shown", [("cp1252", "log(\\u03b8)"),
                                             ("ascii", "log(\\u03b8)"),
                                             ("utf-8", "log(θ)")])
def test_the_caret_stands_under_the_text_as_printed(gradcli_script, encoding, shown):
    out = script(gradcli_script, "eval", "θ + log(θ)", "--at", "θ=-1", encoding=encoding)
    assert out.returncode == 2
    lines = out.stderr.decode(encoding).splitlines()
    assert lines[0].startswith("domain error: v1: log(-1)")
    assert caret_under(lines, shown), lines


def test_carets_count_two_cells_for_a_wide_character(run):
    lines = run("eval", "漢字 + log(漢字)", "--at", "漢字=-1").stderr.splitlines()
    source, caret = lines[1], lines[2]
    # "  漢字 + " is 2 + 4 + 3 = 9 cells; log(漢字) is 4 + 4 + 1 = 9 cells
    assert caret == " " * 9 + "^" * 9 + " log is undefined here"
    assert source == "  漢字 + log(漢字)"


def test_a_missing_input_hint_on_cp1252_is_an_option_that_works(gradcli_script):
    out = script(gradcli_script, "eval", "θ + ζ", "--at", "θ=0", encoding="cp1252")
    hint = out.stderr.decode("cp1252").splitlines()[-1]
    assert hint == "hint: add --at \\u03b6=1"
    again = script(gradcli_script, "eval", "θ + ζ", "--at", "θ=0", *hint.split()[-2:],
                   encoding="cp1252")
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_what_diff_prints_reads_back_in_every_encoding(gradcli_script, encoding):
    source = "θ^2*sin(φ) + 1/é + 漢*θ"
    printed = script(gradcli_script, "diff", source, "--wrt", "θ", encoding=encoding)
    assert printed.returncode == 0, printed.stderr
    text = printed.stdout.decode(encoding)
    assert ("θ" in text) == (encoding == "utf-8") and ("\\u03b8" in text) != (encoding == "utf-8")
    at = {"θ": 0.5, "φ": 1.25, "é": 2.0, "漢": 3.0}
    back = script(gradcli_script, "eval", "-", "--at", ",".join(f"{k}={v}" for k, v in at.items()),
                  "--json", encoding=encoding, input=printed.stdout)
    assert back.returncode == 0, back.stderr.decode(encoding)
    value = json.loads(back.stdout.decode(encoding))["value"]
    th, ph, e, han = sympy.symbols("θ φ é 漢")
    expected = sympy.diff(th ** 2 * sympy.sin(ph) + 1 / e + han * th, th)
    assert value == pytest.approx(float(expected.subs({th: 0.5, ph: 1.25, e: 2.0, han: 3.0})),
                                  rel=1e-15)


@pytest.mark.parametrize("text, name", [("\\u03b8", "θ"), ("x\\u2081", "x₁"),
                                        ("\\U0001d465", "𝑥"), ("a\\u03b8b", "aθb")])
def test_the_parser_reads_an_escaped_character_in_a_name(text, name):
    assert parse(text).statements[0].name == name


@pytest.mark.parametrize("text, span", [("\\u0020 + 1", (0, 6)), ("x\\u002b1", (1, 7)),
                                        ("\\u0031x", (0, 6))])
def test_an_escape_no_name_may_hold_is_a_syntax_error_under_it(text, span):
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.span == span
    assert "cannot be part of a name" in str(info.value)


def test_the_result_lines_align_as_printed_on_cp1252(gradcli_script):
    out = script(gradcli_script, "eval", "θ^2 + x", "--at", "θ=1,x=2", encoding="cp1252")
    assert out.stdout.decode("cp1252").splitlines() == [
        "f          = 3.000000000000", "df/d\\u03b8 = 2.000000000000",
        "df/dx      = 1.000000000000"]
