"""compile() reads a valid program in one pass (the parser's driver with callbacks that make the
tape's nodes, ``graph._Reductions``) and builds exactly the graph that parse + lower builds.

The reference is the two-stage path itself, ``lower(parse_source(source), source)``: every field
of the graph must match (ops, argument slots, depths, constants with their signs, exact recipes,
folds, spans, labels, names, outputs), and where a source is wrong ``compile`` must raise the
reference's error, with its message and span.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import cases, multi_output_cases, programs
from test_parser import DRIVER_CASES, TOKENS

from gradcli.engine import graph as graph_module
from gradcli.engine.graph import compile, lower, one_pass, parse_source
from gradcli.errors import GradcliError
from gradcli.language.ast import Program
from gradcli.language.printer import to_source


FIELDS = ("source", "inputs", "arg0", "arg1", "depth", "output", "labels", "input_spans",
          "outputs", "output_names", "names", "exact", "folds")


def assert_same_graph(got, want):
    for name in FIELDS:
        assert getattr(got, name) == getattr(want, name), name
    assert [id(op) for op in got.ops] == [id(op) for op in want.ops]
    assert list(got.spans) == list(want.spans)
    # constants with their signs: 0.0 and -0.0 are two constants
    assert [(c, math.copysign(1.0, c)) for c in got.constants] == \
        [(c, math.copysign(1.0, c)) for c in want.constants]
    assert got == want


def reference(source):
    """The graph parse + lower give, or their error as (class, message, span)."""
    try:
        return lower(parse_source(source), source)
    except GradcliError as exc:
        return (type(exc), str(exc), getattr(exc, "span", None))


def check(source, *, fast: bool | None = None):
    """compile(source) is the reference, graph or error; ``fast``: whether the one pass itself
    must (True) or must not (False) have built the graph."""
    want = reference(source)
    try:
        got = compile(source)
    except GradcliError as exc:
        got = (type(exc), str(exc), getattr(exc, "span", None))
    if isinstance(want, tuple):
        assert got == want
        assert one_pass(source) is None  # never a graph for a source the reference rejects
    else:
        assert_same_graph(got, want)
        try:
            mine = one_pass(source)
        except GradcliError:  # a limit
            mine = None
        if mine is not None:
            assert_same_graph(mine, want)
        if fast is not None:
            assert (mine is not None) == fast


SOURCES = [
    # (source, whether the one pass builds it)
    ("x*y+sin(x)", True),
    ("a = x; b = a\n\n# comment\nc = b*2;\n b", True),
    ("hypot(x,\n y)", True),
    ("((x)\n)", True),
    ("-x^2 + +y - -z", True),
    ("atan2(x, y*2) + 0.1*3 + pi", True),
    ("x**2**3 / 2^-x", True),
    ("c = 1; c += x; c *= c; c -= 2; c /= y; c", True),
    ("log(x, 2) + log(x)", True),
    ("x; y;", True),
    (";;x\n\n", True),
    ("\\u03b8*2 + θ", True),
    ("c = x\nc -= 3\n", True),
    ("x\r\ny", True),
    ("  x  # a comment\n", True),
    ("x \\\n + y", True),
    ("e*x + e", True),
    ("e = 2; e*x", True),
    ("2*3 + x + 0.1 + 0.1 - 0.0 - -0.0 + 1e-3", True),
    ("-(-(1))*x + sqrt(2)*x", True),
    ("x = 1", True),
    ("x = y\nz = x*x\n", True),
    ("max(x, y)\nmin(x,\n\n y)\n", True),
    # names, calls and operators read again (the one pass keeps an input's id, a row, by the
    # token's text): an input by its two spellings, constants and assigned names never kept
    ("x*y + x*y + y", True),
    ("\\u03b8 + θ + \\u03b8*θ", True),
    ("pi*x + pi + e*e + x*e", True),
    ("c = x\nc = c*2\nc + c*x + x", True),
    ("atan2(x, y) + atan2(y, x) + sin(x) + sin(y)", True),
    ("log(x) + log(x, 2) + log(y, 3) + log(y)", True),
    ("x·y × z ÷ w − v ** 2", True),
    ("hypot(x, y, x)", False),
    ("1e308*10", False),  # a constant that overflows: the lowering's error
    ("f(x, y)", False),
    ("sin x", False),
    ("x + @", False),
    ("1e999*x", False),
    ("x²", False),
    ("sin()", False),
    ("sin(x, y)", False),
    ("sin(log(-1), 2)", False),  # the arity is checked before the argument folds
    ("sin = 2", False),
    ("b += 1", False),
    ("x = x + 1", False),
    ("sin + 1", False),
    ("", False),
    ("  # nothing\n", False),
    ("(x", False),
    ("x)", False),
    ("x\n(y", False),
    ("\\u0020x", False),
    ("log(-1) + x", False),
]


@pytest.mark.parametrize("source,fast", SOURCES)
def test_one_pass_builds_what_parse_and_lower_build(source, fast):
    check(source, fast=fast)


@settings(max_examples=200)
@given(cases(max_statements=4), st.sampled_from(["; ", "\n", " ;\n", "\r\n"]),
       st.sampled_from(["", " ", "\t", "  # note\n"]))
def test_one_pass_agrees_on_generated_programs(case, sep, tail):
    source = sep.join(to_source(alone(stmt)) for stmt in case.program.statements) + tail
    check(source, fast=True)


@settings(max_examples=100)
@given(multi_output_cases())
def test_one_pass_agrees_on_several_outputs(case):
    check(to_source(case.program), fast=True)


@settings(max_examples=200)
@given(programs)
def test_one_pass_agrees_on_any_program_the_grammar_builds(program):
    # mostly meaningless (f() of unknown functions, reading unassigned names): the errors
    check(to_source(program))


@pytest.mark.parametrize("source", DRIVER_CASES)
def test_one_pass_agrees_on_the_parsers_cases(source):
    check(source)


# The parser's token soup, with the other blanks and separators, names that are constants,
# functions or escapes, and assignments: mostly mistakes, some programs.
SOUP = TOKENS + ["\r\n", "\r", "\f", "e", "pi", "a", "a = ", "-=", "/=", "x²", "\\u03b8",
                 "log", "hypot", "0.1", "sqrt(", "\n\n"]


@settings(max_examples=400)
@given(st.lists(st.sampled_from(SOUP), max_size=30))
def test_one_pass_agrees_on_any_token_soup(tokens):
    check("".join(tokens))


def alone(stmt):
    """One statement as a program, to print it alone."""
    return Program((stmt,))


def test_one_pass_reads_a_100000_deep_nesting_without_recursion():
    n = 100_000
    source = "sin(" * n + "x" + ")" * n + " + " + "(" * n + "y" + ")" * n
    graph = one_pass(source)
    assert graph is not None and len(graph.ops) == n + 1
    assert graph.depth[-1] == n + 1


def test_the_one_pass_never_calls_the_parser_for_a_valid_program(monkeypatch):
    def refuse(source, notes=None):
        raise AssertionError("parsed again")
    compile("x")  # the tables loaded
    monkeypatch.setattr(graph_module, "parse_source", refuse)
    assert len(compile("a = x*y; a + sin(a)").ops) == 3  # short or long, the same path
    assert len(compile("a = x*y\n" + "a = a + sin(a)\n" * 30).ops) == 61
    with pytest.raises(AssertionError, match="parsed again"):
        compile("a = x*y; a + ")


@pytest.mark.parametrize("source", ["2x^2 + |y|", "a = sin^2(x)\na*3y", "1/2x + y", "x*y"])
def test_a_graph_compiled_to_be_read_keeps_the_reading_of_its_one_parse(source, monkeypatch):
    """compile(read=True) lowers the parse it prints (the same graph as the one pass), and the
    graph's reading is read_back's: --json's source_read and the trace's "read as" line parse
    nothing again."""
    want_text, want_notes = graph_module.read_back(source)
    calls = []
    real = graph_module.parse_source
    monkeypatch.setattr(graph_module, "parse_source",
                        lambda *args: calls.append(1) or real(*args))
    graph = compile(source, read=True)
    assert graph_module.read_back(graph) == (want_text, want_notes)
    assert len(calls) == 1
    assert_same_graph(graph, reference(source))
    assert compile(source).reading is None  # not asked: no reading kept, one pass


@pytest.mark.parametrize("options", [["--json"], ["--trace"]])
def test_eval_parses_the_source_once_for_json_and_the_trace(options, monkeypatch):
    from click.testing import CliRunner

    from gradcli.cli import main
    calls = []
    real = graph_module.parse_source
    monkeypatch.setattr(graph_module, "parse_source",
                        lambda *args: calls.append(1) or real(*args))
    # a long program (a short one may be parsed again for the reading's warnings: microseconds)
    source = "2x^2 + |y|" + " + x*y" * 2000
    result = CliRunner().invoke(main, ["eval", source, "--at", "x=1,y=-2", *options])
    assert result.exit_code == 0, result.output
    assert "2*x^2 + abs(y) + x*y" in result.output
    assert len(calls) == 1


@pytest.mark.parametrize("source", [source for source, fast in SOURCES if fast] + [
    "sin(" * 300 + "x" + ")" * 300 + " + y*" + "(" * 50 + "z" + ")" * 50,
    "t = x*y\n" + "t = sin(t) + 0.5*x\n" * 200 + "t*y + 2",
    "a = sin(x)*y\nb = x*y + exp(a)\nc = cos(b)\nb*x + 1",  # c is dead
])
def test_the_slots_are_a_stable_sort_by_depth(source):
    """The builder's integer columns are arrays (8 bytes a node), and finish's counting sort
    gives each id the slot Python's stable sort by depth gives (constants, inputs, then the
    operations by depth, each left to right); slot[-1] is -1 (an absent argument)."""
    builder = graph_module._Builder(source)
    assert [type(column).__name__ for column in builder.columns] == ["array"] * 5
    graph_module.reduce(source, graph_module._Reductions(builder))
    depth = builder.columns[0][:builder.count]
    want = sorted(range(builder.count), key=depth.__getitem__)
    order, slot = graph_module._by_depth(builder.columns[0], builder.count)
    assert list(order) == want
    assert [slot[tid] for tid in want] == list(range(builder.count)) and slot[-1] == -1
    graph = compile(source)
    assert graph.arg0.typecode == graph.arg1.typecode == "i"  # 4 bytes an argument
    assert graph.depth.typecode == "i"  # and a depth
    assert_same_graph(graph, reference(source))



def test_a_literal_read_again_is_its_constant_only_where_its_number_is_the_same():
    """The lowering keeps each literal's constant by its text (a program writes 0.5 thousands
    of times); a node whose span shows that text but holds another number (an AST made by hand)
    is its own constant, and so is a zero of the other sign."""
    from gradcli.language.ast import Binary, Num, Var
    source = "x*0.5 + x*0.5 + x*0"

    def times(value, span):
        return Binary("*", Var("x", (0, 1)), Num(value, span))
    tree = Binary("+", Binary("+", Binary("+", times(0.5, (2, 5)), times(0.25, (10, 13))),
                              times(0.0, (18, 19))), times(-0.0, (18, 19)))
    graph = lower(Program((tree,)), source)
    assert [(v, math.copysign(1.0, v)) for v in graph.constants] == \
        [(0.5, 1.0), (0.25, 1.0), (0.0, 1.0), (-0.0, -1.0)]
    assert list(graph.exact.values()) == ["0.5"]  # the 0.5 typed; 0.25 was never written
