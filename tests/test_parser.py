"""The grammar and parser: precedence, associativity, numbers, names, programs, and errors."""

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcli.language.ast import Assign, Binary, Call, Num, Program, Unary, Var
from gradcli.errors import ParseError
from gradcli.language.parser import SyntaxFault, build_parser, parse

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
    ("2|x|", "needs an operator", "write 2*|x|"),
    ("|x||y|", "needs an operator", "write |x|*|y|"),
    ("if x > 0 then x else 0", "no control flow", "max(x, 0)"),
    ("x >= 1", "no comparisons", None),
    ("deg = 2", "cannot be assigned", "deg_"),
    ("x)", "unmatched ')'", None),
    ("", "empty", None),
    ("   \n # nothing\n", "empty", None),
    ("x +", "ends too early", None),
    ("x == 2", "no comparisons", None),
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
        parse("x + 2|y|")
    assert info.value.span[0] == 5  # the '|'


# -- the driver (parser.driver) against Lark's own loop ------------------------------------------

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


@functools.cache
def _lark_and_driver():
    """Lark's own parser, and the driver over the tables read from its serialization."""
    from gradcli.language import parser
    return parser.build_parser(), _ast_driver(parser.build_tables())


def _ast_driver(tables):
    """The driver over ``tables`` with the AST's callbacks: source -> AST or SyntaxFault."""
    from gradcli.language import parser
    run = parser.driver(tables)
    return lambda source: run(source, parser._TRANSFORMER)


def _lark_outcome(source):
    """What Lark's own loop gives: a flattened AST, or its error as (kind, position, ...)."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken
    try:
        return _flat(_lark_and_driver()[0].parse(source))
    except UnexpectedCharacters as exc:
        return ("character", exc.pos_in_stream)
    except UnexpectedToken as exc:
        tok = exc.token  # at the end, Lark borrows the last token's position: not compared
        return ("token", None if tok.type == "$END" else tok.start_pos, tok.type, str(tok.value),
                frozenset(exc.expected))
    except ParseError as exc:  # raised by a callback, e.g. a number too large
        return exc.message


def _driver_outcome(source):
    """What the driver gives, in the same terms as _lark_outcome."""
    from gradcli.language.parser import SyntaxFault
    try:
        result = _lark_and_driver()[1](source)
    except ParseError as exc:
        return exc.message
    if not isinstance(result, SyntaxFault):
        return _flat(result)
    if result.token_type is None:
        return ("character", result.pos)
    return ("token", None if result.token_type == "$END" else result.pos, result.token_type,
            result.token_value, result.expected)


DRIVER_CASES = [src for src, _ in CASES] + [src for src, _, _ in ERRORS] + [
    "a = x; b += a\n\n# comment\nc = b*2;\n b", "f(x,\n y)\n", "x\r\ny", "((x)\n)", "x;;;y;",
    "  ", "\n\n", "x # c\n # d", "1e999 + x", "x + 1e999 $", "x $ 1e999", "(x\n", "x\\\n+ y",
    "2x^2 sin(x)", "(x+1)(x-1)", "|x|y", "2|x|", "√x²", "30°", "x·y÷z", "−x", "sin^2(x)",
    "f(x,\n y) (z\n)", "x⁻¹",
]


@pytest.mark.parametrize("source", DRIVER_CASES)
def test_the_driver_builds_what_lark_builds(source):
    assert _driver_outcome(source) == _lark_outcome(source)


TOKENS = ["x", "y2", "θ", "sin", "atan2", "1", "2.5", ".5", "1e-3", "+", "-", "*", "/", "^", "**",
          "(", ")", ",", "=", "+=", "*=", ";", "\n", " ", "\t", "# note\n", "\\\n", "$", "1e999",
          # the natural spellings' terminals (docs/language.md, "Writing math naturally")
          "|", "√", "∛", "²", "⁻¹", "°", "·", "×", "÷", "−", "deg", "sin(", "x ("]


@given(st.lists(st.sampled_from(TOKENS), max_size=30))
@settings(max_examples=400, deadline=None)
def test_the_driver_agrees_with_lark_on_any_token_soup(tokens):
    source = "".join(tokens)
    assert _driver_outcome(source) == _lark_outcome(source)


# Characters where the terminals' patterns have their edges (the grammar writes them for speed:
# an ASCII run before the Unicode class of a name, priorities that order the lexer's tries):
# digits of other scripts, letters beyond ASCII, superscripts, escapes, each blank, each sign.
CHARACTERS = list("xyzeE_019.+-*/^=()[],:;'|@#\\ \t\f\r\n²³¹⁰⁹⁻√∛°·⋅×÷−θéß٣ªµ$") + [
    "\\u03b8", "\\U0001d465", "\\u00b2", "\\u", "**", "+=", "1e5", "1e+", "x ("]


@given(st.lists(st.sampled_from(CHARACTERS), max_size=20))
@settings(max_examples=400, deadline=None)
def test_the_driver_agrees_with_lark_on_any_character_soup(characters):
    """Lark's lexer and the driver's read the same tokens, up to where the parse stops."""
    source = "".join(characters)
    assert _driver_outcome(source) == _lark_outcome(source)


@functools.cache
def _shipped_and_fresh():
    from gradcli.language import parser
    shipped = parser.shipped_tables()
    assert shipped["grammar"] == parser.grammar_digest(parser.grammar_text()), (
        "grammar/gradcli.tables.json was not built from this grammar: run python -c \"from "
        "gradcli.language.parser import write_shipped_tables as w; print(w())\"")
    return _ast_driver(shipped["tables"]), _ast_driver(parser.build_tables())


@given(st.one_of(st.sampled_from(DRIVER_CASES),
                 st.lists(st.sampled_from(TOKENS), max_size=30).map("".join)))
@settings(max_examples=300, deadline=None)
def test_the_shipped_tables_parse_as_new_ones_do(source):
    """The tables shipped beside the grammar (the parser's one source: a run needs no Lark) and
    the ones Lark builds now: the same trees and the same errors. (Lark numbers its states in an
    order that changes from run to run, so the two are compared by what they do.)"""
    def outcome(run):
        try:
            result = run(source)
        except ParseError as exc:
            return exc.message
        return result if isinstance(result, SyntaxFault) else _flat(result)
    shipped, fresh = _shipped_and_fresh()
    assert outcome(shipped) == outcome(fresh)


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


# -- the tables from Lark's serialization ------------------------------------------------------

def test_the_tables_are_plain_data():
    from gradcli.language.parser import build_tables
    tables = build_tables()
    assert json.loads(json.dumps(tables, allow_nan=False)) == tables  # JSON, whole
    assert set(tables) == {"pattern", "ignore", "symbols", "states", "reductions", "start", "end"}


@pytest.mark.parametrize("option", ["keep_all_tokens", "propagate_positions"])
def test_a_parser_the_driver_cannot_run_is_an_error(option):
    from gradcli.language import parser
    from gradcli.language.tables import LarkMismatch, tables_from_lark
    lark = build_parser(**{option: True})
    with pytest.raises(LarkMismatch, match=option):
        tables_from_lark(lark, parser._TRANSFORMER, parser._POSTLEX, parser._METHODS)


@pytest.mark.parametrize("grammar, what", [
    ('start: NAME "sin" -> program\nNAME: /[a-z]+/', "also matches NAME"),  # a keyword
    ("start: thing\nthing: NAME\nNAME: /[a-z]+/", "would build a Tree"),
])
def test_a_grammar_the_driver_cannot_run_is_an_error(grammar, what):
    from lark import Lark

    from gradcli.language import parser
    from gradcli.language.tables import LarkMismatch, tables_from_lark
    lark = Lark(grammar, parser="lalr", lexer="basic", transformer=parser._TRANSFORMER,
                postlex=parser._POSTLEX, maybe_placeholders=False)
    with pytest.raises(LarkMismatch, match=what):
        tables_from_lark(lark, parser._TRANSFORMER, parser._POSTLEX, parser._METHODS)


def test_the_tables_follow_larks_terminal_order():
    """Lark tries terminals by priority, longest possible match, longest pattern, then name:
    '**' must be tried before '*' ('x**2' is a power), '+=' before '+'."""
    from gradcli.language.parser import build_tables
    pattern = build_tables()["pattern"]
    assert pattern.index("(?P<POW>") < pattern.index("(?P<STAR>")
    assert pattern.index("(?P<ASSIGN_OP>") < pattern.index("(?P<PLUS>")
    assert parse("x**2") == Program((B("^", x, N(2)),))
    assert parse("a+=1") == Program((Assign("a", "+=", N(1)),))


def test_nodes_compare_and_hash_by_their_fields_not_their_spans():
    """As frozen records would: equal fields are equal nodes wherever they were read; another
    class with the same fields is another node; the repr names the fields, not the span."""
    a = Binary("*", Num(2.0, (0, 1)), Var("x", (2, 3)), (0, 3))
    b = Binary("*", Num(2.0), Var("x"))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Binary("*", Var("x"), Num(2.0))
    assert Var("x") != Call("x", ()) and Num(1.0) != 1.0
    assert Call("sin", (Var("x"),), (0, 6), (0, 3)) == Call("sin", (Var("x"),))
    assert repr(a) == "Binary(op='*', left=Num(value=2.0), right=Var(name='x'))"
    assert parse("2*x ;  y = 2*x") == parse("2 * x\ny=2*x")
