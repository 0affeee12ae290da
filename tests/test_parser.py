"""The grammar and parser: precedence, associativity, numbers, names, programs, and errors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcli.language.ast import Assign, Binary, Call, Num, Program, Unary, Var
from gradcli.errors import ParseError
from gradcli.language.parser import build_parser, parse

x, y, z = Var("x"), Var("y"), Var("z")


def B(op, a, b):
    return Binary(op, a, b)


def N(v):
    return Num(float(v))


# (source, the single expression it must parse to)
CASES = [
    ("x+y*z", B("+", x, B("*", y, z))),
    ("(x+y)*z", B("*", B("+", x, y), z)),
    ("x-y-z", B("-", B("-", x, y), z)),
    ("x/y/z", B("/", B("/", x, y), z)),
    ("x^3^2", B("^", x, B("^", N(3), N(2)))),
    ("x**3**2", B("^", x, B("^", N(3), N(2)))),
    ("-x^2", Unary("-", B("^", x, N(2)))),
    ("2^-x", B("^", N(2), Unary("-", x))),
    ("+x", Unary("+", x)),
    ("--x", Unary("-", Unary("-", x))),
    ("x*-y", B("*", x, Unary("-", y))),
    ("-x*y", B("*", Unary("-", x), y)),
    ("(-x)^2", B("^", Unary("-", x), N(2))),
    ("2", N(2)), ("2.5", N(2.5)), (".5", N(0.5)), ("5.", N(5)),
    ("1e-3", N(0.001)), ("2.5E+1", N(25)),
    ("θ + x_1", B("+", Var("θ"), Var("x_1"))),
    ("atan2(y, x)", Call("atan2", (y, x))),
    ("f()", Call("f", ())),
    ("sin(cos(x))", Call("sin", (Call("cos", (x,)),))),
    ("(x\n + y)", B("+", x, y)),  # a newline inside parentheses continues the expression
    ("x # a comment", x),
    ("x + \\\n y", B("+", x, y)),  # a backslash continues a line
]


@pytest.mark.parametrize("source, expected", CASES)
def test_expression_parses_to(source, expected):
    assert parse(source) == Program((expected,))


def test_program_statements_and_separators():
    program = parse("a = x; b += a\n\n# comment\nc = b*2;\n b")
    assert program == Program((
        Assign("a", "=", x), Assign("b", "+=", Var("a")),
        Assign("c", "=", B("*", Var("b"), N(2))), Var("b"),
    ))


def test_spans_point_into_the_source():
    expr = parse("1 + log(x)").statements[0]
    assert expr.right.span == (4, 10)
    assert expr.span == (0, 10)


def test_grammar_has_no_conflicts_in_strict_mode():
    # strict=True turns a shift/reduce collision or a terminal clash into an error
    build_parser(strict=True)


def test_deep_nesting_parses_without_recursion():
    depth = 100_000
    program = parse("(" * depth + "x" + ")" * depth)
    assert program.statements[0] == x
    node = parse("-" * 1000 + "x").statements[0]
    for _ in range(1000):
        node = node.operand
    assert node == x


# (source, what the message must contain, what the hint must contain or None)
ERRORS = [
    ("log(x", "expected ')'", "never closed"),
    ("2x", "expected an operator", "write 2*x"),
    ("2(x+1)", "expected an operator", "write 2*(x+1)"),
    ("x)", "unmatched ')'", None),
    ("", "empty", None),
    ("   \n # nothing\n", "empty", None),
    ("x +", "ends too early", None),
    ("x == 2", "unexpected '='", "no comparison"),
    ("x $ y", "unexpected character '$'", None),
    ("sin(x,)", "unexpected ')'", None),
    ("1e999", "too large", None),
    ("x + 1 = 2", "unexpected '='", "plain name"),
]


@pytest.mark.parametrize("source, message, hint", ERRORS)
def test_syntax_errors_say_what_was_expected(source, message, hint):
    with pytest.raises(ParseError) as info:
        parse(source)
    assert message in info.value.message
    if hint:
        assert hint in info.value.hint


def test_syntax_error_span_is_the_offending_column():
    with pytest.raises(ParseError) as info:
        parse("x + 2y")
    assert info.value.span[0] == 5  # the 'y'


# -- the fast loop (parser._fast_parser) against Lark's own loop ---------------------------------

def _flat(node):
    """Every node of an AST with its fields and span, in a fixed order, without recursion."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(reversed(n))
            continue
        if not hasattr(n, "__dataclass_fields__"):
            out.append(n)
            continue
        out.append((type(n).__name__, getattr(n, "span", None), getattr(n, "name_span", None)))
        stack.extend(reversed([getattr(n, f) for f in n.__dataclass_fields__
                               if f not in ("span", "name_span")]))
    return out


def _outcome(run, source):
    from lark.exceptions import UnexpectedInput
    try:
        return _flat(run(source))
    except UnexpectedInput:
        return "syntax error"
    except ParseError as exc:  # raised by a callback, e.g. a number too large
        return exc.message


def _fast_and_lark(source):
    """What the fast loop gives and what Lark's own loop gives: a flattened AST or the error."""
    from gradcli.language import parser
    lark = parser._get_parser()
    tables = parser._tables_from_lark(lark)
    assert tables is not None, "the fast loop must handle the installed Lark"
    fast = parser._fast_parser(tables)
    theirs = _outcome(lark.parse, source)
    if theirs == "syntax error" and fast(source) is parser._FAILED:
        return theirs, theirs  # the fast loop gives up where Lark raises; parse() then asks Lark
    return _outcome(fast, source), theirs


FAST_CASES = [src for src, _ in CASES] + [src for src, _, _ in ERRORS] + [
    "a = x; b += a\n\n# comment\nc = b*2;\n b", "f(x,\n y)\n", "x\r\ny", "((x)\n)", "x;;;y;",
    "  ", "\n\n", "x # c\n # d", "1e999 + x", "x + 1e999 $", "x $ 1e999", "(x\n", "x\\\n+ y",
]


@pytest.mark.parametrize("source", FAST_CASES)
def test_fast_loop_builds_what_lark_builds(source):
    fast, lark = _fast_and_lark(source)
    assert fast == lark


TOKENS = ["x", "y2", "θ", "sin", "atan2", "1", "2.5", ".5", "1e-3", "+", "-", "*", "/", "^", "**",
          "(", ")", ",", "=", "+=", "*=", ";", "\n", " ", "\t", "# note\n", "\\\n", "$", "1e999"]


@given(st.lists(st.sampled_from(TOKENS), max_size=30))
@settings(max_examples=400, deadline=None)
def test_fast_loop_agrees_with_lark_on_any_token_soup(tokens):
    source = "".join(tokens)
    fast, lark = _fast_and_lark(source)
    assert fast == lark


def test_parse_and_lower_restore_the_garbage_collector():
    import gc

    from gradcli.engine.graph import lower
    assert gc.isenabled()
    lower(parse("x*y"))
    with pytest.raises(ParseError):
        parse("x +")
    assert gc.isenabled()  # back on after a success and after an error
    gc.disable()
    try:
        lower(parse("x*y"))
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()


# -- the saved tables --------------------------------------------------------------------------

def _run_parse(cache_dir, source="log(x)+x*y-sin(y)"):
    """Parse in a fresh process with ``cache_dir``: (the repr of the AST, was Lark imported?)."""
    import os
    import subprocess
    import sys
    code = ("import sys; from gradcli.language.parser import parse; p = parse(sys.argv[1]); "
            "print(repr(p.statements)); print('lark' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, source], capture_output=True, text=True,
                         env={**os.environ, "GRADCLI_CACHE_DIR": str(cache_dir)}, check=True)
    ast_repr, lark_imported = out.stdout.splitlines()
    return ast_repr, lark_imported == "True"


def test_saved_tables_spare_a_later_run_lark(tmp_path):
    first, lark_first = _run_parse(tmp_path)
    assert lark_first  # nothing saved yet: Lark builds the tables, which are then saved
    assert len(list(tmp_path.iterdir())) == 1
    second, lark_second = _run_parse(tmp_path)
    assert not lark_second  # the saved tables alone parse valid input
    assert first == second == repr(parse("log(x)+x*y-sin(y)").statements)


def test_damaged_or_stale_tables_are_rebuilt(tmp_path):
    import marshal
    _run_parse(tmp_path)
    (saved,) = tmp_path.iterdir()
    saved.write_bytes(b"not marshal data")
    assert _run_parse(tmp_path) == (repr(parse("log(x)+x*y-sin(y)").statements), True)
    key, tables = marshal.loads(saved.read_bytes())  # rewritten whole
    saved.write_bytes(marshal.dumps((key[:-1] + (key[-1] + 1,), tables)))  # another gradcli
    assert _run_parse(tmp_path)[1]  # a key that does not match is not trusted


def test_an_unwritable_cache_still_parses(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would go")
    ast_repr, _ = _run_parse(blocker / "cache")
    assert ast_repr == repr(parse("log(x)+x*y-sin(y)").statements)


def test_without_usable_tables_lark_parses_everything(monkeypatch):
    from gradcli.language import parser
    monkeypatch.setattr(parser, "_tables_from_lark", lambda lark: None)
    monkeypatch.setattr(parser, "_cache_file", lambda: None)
    monkeypatch.setattr(parser, "_fast", None)
    assert parse("x + 2*y") == Program((B("+", x, B("*", N(2), y)),))
    with pytest.raises(ParseError) as info:
        parse("2x")
    assert "write 2*x" in info.value.hint
