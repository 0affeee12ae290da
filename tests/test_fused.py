"""The one-pass compiler (engine/fused.py) builds exactly the graph that parse + lower builds.

The reference is the two-stage path itself, ``lower(parse_source(source), source)``: the one
pass is an optimisation of it, so every field of the graph must match (ops, argument slots,
depths, constants with their signs, exact recipes, folds, spans, labels, names, outputs), and
where a source is wrong ``compile`` must raise the reference's error, with its message and span.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import cases, multi_output_cases, programs
from test_parser import FAST_CASES, TOKENS

from gradcli.engine import fused
from gradcli.engine.graph import _Builder, compile, lower, parse_source
from gradcli.errors import GradcliError
from gradcli.language.ast import Program
from gradcli.language.printer import to_source

@pytest.fixture(autouse=True)
def one_pass_always(monkeypatch):
    """compile() tries the one pass on every source here, however short."""
    from gradcli.engine import graph as graph_module
    monkeypatch.setattr(graph_module, "ONE_PASS_FROM", 0)


@pytest.fixture(autouse=True, params=["compiled", "columns", "python"])
def loop(request, monkeypatch):
    """Every test three times: the one pass compiled (``_fused.c``, for ASCII text without
    backslashes), the same with the builder's integer columns native (``_fused.Column``, as
    for a large source) and the Python loop (everything else, and installs without a C
    compiler); the graph's columns likewise, compiled for every graph or for none."""
    from gradcli.engine import graph as graph_module
    compiled = request.param != "python"
    monkeypatch.setattr(graph_module, "_COMPILED_FROM", 0 if compiled else float("inf"))
    monkeypatch.setattr(graph_module, "_COLUMNS_FROM",
                        0 if request.param == "columns" else float("inf"))
    if compiled:
        if fused._fused is None:
            pytest.skip("the optional C extension gradcli.engine._fused was not built")
        machine = fused.run_tables(fused._Machine)
        assert machine.compiled is not None, "the shipped tables carry no automata"
    else:
        monkeypatch.setattr(fused, "_fused", None)
        machine = fused.run_tables(fused._Machine)
        assert machine.compiled is None
    monkeypatch.setattr(fused, "_machine", machine)
    return request.param


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


def one_pass(source):
    """The one pass's own graph (None: it left the source to parse + lower)."""
    try:
        return fused.compile_source(source, _Builder(source))
    except GradcliError:
        return None


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
        mine = one_pass(source)
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


@pytest.mark.parametrize("source", FAST_CASES)
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


def _regex_tokens(source: str):
    """The parser's lexer (the grammar's regular expressions): the tokens the parser sees, as
    (terminal, start, end), and whether it stopped at a character no terminal matches."""
    machine = fused.run_tables(fused._Machine)
    names = {g: name for name, g in machine.match_source("").pattern.groupindex.items()}
    out, pos = [], 0
    for m in iter(machine.match_source(source).match, None):
        name = names[m.lastindex]
        if name == "_END_":
            return out, False
        out.append((name, *m.span(m.lastindex)))
        pos = m.end()
    return out, True


def _compiled_tokens(source: str):
    """The compiled lexer's tokens (blanks included: the regular expression eats them after a
    token, the automata read them as tokens of their own), in the same terms."""
    machine = fused.run_tables(fused._Machine)
    found = fused._fused.tokens(source, machine.compiled)
    if found is None:
        return None
    terminals = fused.run_tables(lambda tables: tables["automaton"]["terminals"])
    return [(terminals[t], s, e) for t, s, e in found]


def _kept(tokens):
    """Without the tokens the grammar ignores (blanks are a token of their own for the automata,
    and part of the token before them for the expression)."""
    ignored = fused.run_tables(lambda tables: set(tables["ignore"]))
    return [tok for tok in tokens if tok[0] not in ignored]


ASCII_SOUP = [t for t in SOUP if t.isascii() and "\\" not in t]


def test_the_compiled_lexer_reads_what_the_grammars_expression_reads():
    if fused._fused is None:
        pytest.skip("the Python loop lexes with the expression itself")

    @settings(max_examples=500, derandomize=True)
    @given(st.one_of(st.lists(st.sampled_from(ASCII_SOUP), max_size=30).map("".join),
                     st.text(st.characters(codec="ascii", exclude_characters="\\"),
                             max_size=40)))
    def agree(source):
        want, stuck = _regex_tokens(source)
        got = _compiled_tokens(source)
        if stuck:
            assert got is None
        else:
            assert got is not None
            assert _kept(got) == _kept(want)
    agree()


def test_the_compiled_loop_runs_ascii_text_and_leaves_the_rest(monkeypatch):
    if fused._fused is None:
        pytest.skip("the Python loop runs everything")
    calls = []
    real = fused._fused

    class Counting:
        def __getattr__(self, name):
            return getattr(real, name)

        def run(self, *args):
            calls.append(args[0])
            return real.run(*args)
    monkeypatch.setattr(fused, "_fused", Counting())
    for source in ("x*y + sin(x)", "\\u03b8*x", "θ*x", "x \\\n + y"):
        assert_same_graph(compile(source), reference(source))
    assert calls == ["x*y + sin(x)"]


def test_one_pass_reads_a_100000_deep_nesting_without_recursion():
    n = 100_000
    source = "sin(" * n + "x" + ")" * n + " + " + "(" * n + "y" + ")" * n
    graph = fused.compile_source(source, _Builder(source))
    assert graph is not None and len(graph.ops) == n + 1
    assert graph.depth[-1] == n + 1


def test_the_one_pass_never_calls_the_parser_for_a_valid_program(monkeypatch):
    from gradcli.engine import graph as graph_module

    def refuse(source):
        raise AssertionError("parsed again")
    compile("x")  # the tables loaded
    monkeypatch.setattr(graph_module, "parse_source", refuse)
    assert len(compile("a = x*y; a + sin(a)").ops) == 3
    monkeypatch.undo()  # the threshold too: a long source takes the one pass, a short one not
    long = "a = x*y\n" + "a = a + sin(a)\n" * 30
    assert len(long) >= graph_module.ONE_PASS_FROM
    monkeypatch.setattr(graph_module, "parse_source", refuse)
    assert len(compile(long).ops) == 61
    with pytest.raises(AssertionError, match="parsed again"):
        compile("a = x*y; a + sin(a)")


@pytest.mark.parametrize("source", [source for source, fast in SOURCES if fast] + [
    "sin(" * 300 + "x" + ")" * 300 + " + y*" + "(" * 50 + "z" + ")" * 50,
    "t = x*y\n" + "t = sin(t) + 0.5*x\n" * 200 + "t*y + 2",
    "a = sin(x)*y\nb = x*y + exp(a)\nc = cos(b)\nb*x + 1",  # c is dead
])
def test_the_compiled_columns_are_the_python_ones(source):
    """graph.finish's columns from the C extension and from its Python code, the same graph."""
    from gradcli.engine import graph as graph_module
    if graph_module._compiled("columns") is None:
        pytest.skip("the optional C extension gradcli.engine._fused was not built")
    graph_module._COMPILED_FROM = 0  # the fixture puts it back
    compiled = lower(parse_source(source), source)
    compiled_visit, compiled_live = compiled.visit_order(), compiled.live_nodes()
    graph_module._COMPILED_FROM = float("inf")
    python = lower(parse_source(source), source)
    assert_same_graph(compiled, python)
    assert compiled_visit == python.visit_order()  # the reverse sweep's order, dead nodes left out
    assert compiled_live == python.live_nodes()


def test_a_column_holds_what_a_list_holds():
    """``_fused.Column``, the builder's native column: appends, reads and refuses as a list of
    ints does, down to the 64-bit range."""
    from gradcli.engine import graph as graph_module
    column = graph_module._compiled("Column")
    if column is None:
        pytest.skip("the optional C extension gradcli.engine._fused was not built")
    values = [0, -1, 7, 2**62, -(2**63), 2**63 - 1] + list(range(1000))
    col = column()
    for v in values:
        col.append(v)
    assert len(col) == len(values) and list(col) == values
    assert col[-1] == values[-1] and col[3] == 2**62
    with pytest.raises(IndexError):
        col[len(values)]
    with pytest.raises(TypeError):
        col.append("1")
    with pytest.raises(OverflowError):
        col.append(2**63)
    assert len(col) == len(values)  # a refused append leaves it as it was


def test_a_large_sources_builder_has_native_columns(loop):
    """From _COLUMNS_FROM characters on, the builder's integer columns are Columns (where the
    extension was built), and the graph is the one lists give."""
    from gradcli.engine import graph as graph_module
    if loop != "compiled":
        pytest.skip("the default thresholds, with the extension")
    source = " + ".join(f"sin(x*{i}.5)*y" for i in range(2000))
    assert len(source) >= 16384
    graph_module._COLUMNS_FROM = 16384  # the fixture puts it back
    assert type(graph_module._Builder(source).a0).__name__ == "Column"
    assert type(graph_module._Builder("x*y").a0) is list
    native = compile(source)
    graph_module._COLUMNS_FROM = float("inf")
    assert_same_graph(native, compile(source))


def test_a_stale_build_of_the_extension_is_not_called():
    """An extension built for another calling convention (a source tree's stale build) is set
    aside at import: the Python loop runs, never the wrong C."""
    import importlib
    import sys
    if fused._fused is None:
        pytest.skip("the optional C extension gradcli.engine._fused was not built")
    real = fused._fused
    try:
        real.ABI += 1
        assert importlib.reload(fused)._fused is None
    finally:
        real.ABI -= 1
        importlib.reload(fused)
    assert sys.modules["gradcli.engine.fused"]._fused is real


@pytest.mark.parametrize("damage", ["state", "start", "terminals", "missing"])
def test_automata_out_of_range_are_refused_not_followed(damage):
    """Tables from the user's cache are data a person could edit: automata that name a state
    out of range, or other terminals, leave the source to the Python loop (C follows them
    without checking each step)."""
    if fused._fused is None:
        pytest.skip("the optional C extension gradcli.engine._fused was not built")
    import copy
    tables = copy.deepcopy(fused.run_tables(lambda t: t))
    automaton = tables["automaton"]
    if damage == "state":
        moves = bytearray.fromhex(automaton["next"])
        moves[ord("x")] = len(automaton["accept"]) // 2 + 3  # past the last state
        automaton["next"] = moves.hex()
    elif damage == "start":
        automaton["start"][0] = 10_000
    elif damage == "terminals":
        automaton["terminals"] = automaton["terminals"][::-1]
    else:
        del tables["automaton"]
    machine = fused._Machine(tables)
    assert machine.compiled is None
    source = "x*y + sin(x)"
    builder = _Builder(source)
    fused._machine, keep = machine, fused._machine
    try:
        assert_same_graph(fused.compile_source(source, builder), reference(source))
    finally:
        fused._machine = keep
