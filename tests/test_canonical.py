"""The canonical form of symbolic expressions (gradcli/symbolic/expr.py): one row per rule, the
issue's examples no longer than sympy.diff's, and linear cost on long and deep input."""

import math

import pytest
import sympy as sp

from gradcli.api import derivatives
from gradcli.symbolic.expr import Sym, fresh_context, symbol
from gradcli.symbolic.printer import text

x_, y_ = sp.symbols("x y")

# Tests that switch a fast path off (monkeypatching the module) to compare it with the general
# path: compiled, expr's functions call each other directly and a patch never reaches them, so
# there they would compare the fast path with itself. They run on the .py source instead:
# tests/test_symbolic_build.py runs them in a process that imports it, and checks that the
# source and the compiled modules give the same derivatives.
FAST_PATH_TESTS = []  # their names, as the decorator below marks them


def on_the_source(test):
    from gradcli.symbolic import expr
    FAST_PATH_TESTS.append(test.__name__)
    return pytest.mark.skipif(not expr.__file__.endswith(".py"), reason=(
        "expr is compiled, so a patch cannot reach its calls: test_symbolic_build runs this on "
        "the .py source"))(test)


def canonical(build) -> str:
    """The printed canonical form of ``build(x, y, z)`` built with Python's operators."""
    with fresh_context():
        x, y, z = (Sym(symbol(n)) for n in "xyz")
        return text(build(x, y, z).node)


# (what is built, its canonical form written by hand)
RULES = [
    # flatten sums and products, fold numeric coefficients
    (lambda x, y, z: 2 * (3 * x ** 2), "6*x^2"),
    (lambda x, y, z: (x + (y + z)) - (z + y), "x"),
    (lambda x, y, z: x * (y * (2 * z)), "2*x*y*z"),
    # canonical order of commutative operands: a*b and b*a are one expression and collect
    (lambda x, y, z: 2 * x * Sym(symbol("c")).__rmul__(1) + 2 * Sym(symbol("c")) * x, "4*c*x"),
    (lambda x, y, z: y * x - x * y, "0"),
    # like terms
    (lambda x, y, z: x + x + 0.5 * x, "5*x/2"),
    (lambda x, y, z: x - x, "0"),
    # powers of one base
    (lambda x, y, z: x * x ** (x - 1), "x^x"),
    (lambda x, y, z: x ** (x - 1 - 1), "x^(x - 2)"),
    (lambda x, y, z: x ** 3 / x ** 8, "1/x^5"),
    (lambda x, y, z: x ** y * x ** (2 * y), "x^(3*y)"),
    (lambda x, y, z: (x ** 2) ** 3, "x^6"),
    (lambda x, y, z: (x ** 2) ** 0.5, "(x^2)^0.5"),  # |x|, not x: not combined
    (lambda x, y, z: x ** x / x, "x^x/x"),  # as SymPy: the constant would grow
    # cancelling: exact where the original is defined (x/x at 0 is undefined; 1 is defined)
    (lambda x, y, z: x / x, "1"),
    (lambda x, y, z: x * y / x, "y"),
    # signs tidied: -(a) + b is b - a; a number times a small sum is distributed
    (lambda x, y, z: -x + y, "y - x"),
    (lambda x, y, z: -(x - y), "y - x"),
    (lambda x, y, z: 2 * (x + 1), "2*x + 2"),
    # products of sums stay unexpanded
    (lambda x, y, z: (x + 1) * (y + 1), "(x + 1)*(y + 1)"),
    (lambda x, y, z: (x + 1) * (x + 1), "(x + 1)^2"),
    # rationals print as fractions or short decimals
    (lambda x, y, z: x / 3, "x/3"),
    (lambda x, y, z: -2 / (3 * y ** 2) * x, "-2*x/(3*y^2)"),
]


@pytest.mark.parametrize("build, expected", RULES)
def test_rules(build, expected):
    assert canonical(build) == expected


def test_functions_odd_and_even_and_exp():
    from gradcli.symbolic.expr import SYMBOLIC as m
    assert canonical(lambda x, y, z: m.sin(-x) + m.cos(-x)) == "cos(x) - sin(x)"
    assert canonical(lambda x, y, z: m.exp(x) * m.exp(-x)) == "1"
    assert canonical(lambda x, y, z: m.exp(x) * m.exp(2 * x)) == "exp(3*x)"
    assert canonical(lambda x, y, z: m.log(1 + 0 * x)) == "0"  # log(1) is exactly 0
    assert canonical(lambda x, y, z: m.sqrt(4 + 0 * x)) == "2"
    assert canonical(lambda x, y, z: m.sqrt(2 + 0 * x)) == "sqrt(2)"
    # an inverse function undone, exact wherever the inner function is defined
    assert canonical(lambda x, y, z: m.cosh(m.acosh(x + 2)) + m.log(m.exp(y))) == "x + y + 2"
    # sigmoid(-a) = 1 - sigmoid(a): 1 - sigmoid(a) is written sigmoid(-a) (no cancellation),
    # and a pair c*r*sigmoid(a) + c*r*sigmoid(-a) is c*r
    assert canonical(lambda x, y, z: 1 - m.sigmoid(x)) == "sigmoid(-x)"
    assert canonical(lambda x, y, z: 2 - 2 * m.sigmoid(-x) + y) == "y + 2*sigmoid(x)"
    assert canonical(lambda x, y, z: 1 + m.sigmoid(x)) == "sigmoid(x) + 1"
    assert canonical(lambda x, y, z: y * m.sigmoid(x) + y * m.sigmoid(-x) + z) == "y + z"
    assert canonical(lambda x, y, z: m.sigmoid(x) + 2 * m.sigmoid(-x)) == \
        "sigmoid(x) + 2*sigmoid(-x)"


# The issue's table: gradcli's length before, and sympy.diff's printed length.
ISSUE_TABLE = [
    ("x^2*sin(x)", "x", 2, x_ ** 2 * sp.sin(x_)),
    ("sin(x)*cos(x)", "x", 2, sp.sin(x_) * sp.cos(x_)),
    ("x^x", "x", 2, x_ ** x_),
    ("exp(-x)*sin(x)", "x", 2, sp.exp(-x_) * sp.sin(x_)),
    ("1/x", "x", 3, 1 / x_),
    ("atan2(y,x)", "x", 2, sp.atan2(y_, x_)),
    ("x/(1+x)", "x", 2, x_ / (1 + x_)),
]


@pytest.mark.parametrize("source, name, order, expr", ISSUE_TABLE)
def test_issue_examples_no_longer_than_sympy(source, name, order, expr):
    ours = derivatives(source, [name], order)[name]
    theirs = sp.diff(expr, sp.Symbol(name), order)
    assert len(ours) <= len(str(theirs)), (ours, str(theirs))
    # and the same function: equal at a few points
    for at in ({"x": 0.7, "y": 1.3}, {"x": 1.9, "y": -0.4}):
        from gradcli import evaluate
        got = evaluate(ours, {k: v for k, v in at.items() if k in ours or k == name}).value
        want = float(theirs.subs({x_: at["x"], y_: at["y"]}))
        assert math.isclose(got, want, rel_tol=1e-12), (ours, at)


def test_issue_examples_exact_text():
    assert derivatives("1/x", order=3) == {"x": "-6/x^4"}
    assert derivatives("sin(x)*cos(x)", order=2) == {"x": "-4*cos(x)*sin(x)"}
    assert derivatives("exp(-x)*sin(x)", order=2) == {"x": "-2*cos(x)*exp(-x)"}
    assert derivatives("x^x", order=2) == {"x": "x^x/x + x^x*(log(x) + 1)^2"}


def _sizes(family, n):
    import sys
    import pathlib
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "benchmarks"))
    from families import FAMILIES
    from gradcli.symbolic import expr
    from gradcli.api import compile
    from gradcli.symbolic.diff import derivative, graph_expression
    with fresh_context() as ctx:
        f = graph_expression(compile(FAMILIES[family](n)))
        before = ctx.serial
        derivative(f, "x0")
        return before, ctx.serial - before


@pytest.mark.parametrize("family", ["wide", "deep", "shared"])
def test_linear_in_the_size_of_the_graph(family):
    # nodes built (not seconds): x10 terms builds at most ~x10 nodes, never x100
    small, large = _sizes(family, 200), _sizes(family, 2000)
    assert large[0] <= 11 * small[0] and large[1] <= 11 * max(small[1], 1), (small, large)


def test_long_sum_and_deep_product():
    n = 20_000
    source = " + ".join(f"{i % 7 + 1}*x^{i % 5 + 1}" for i in range(n))
    # like terms across the whole sum: 5 powers remain, coefficients summed exactly
    d = derivatives(source)["x"]
    assert d.count("x") == 4 and "\n" not in d
    deep = "x*(" * 3000 + "x" + ")" * 3000
    assert derivatives(deep) == {"x": "3001*x^3000"}


# docs/diff.md's examples are replayed with every other page's by tests/test_docs.py.


def _product_pairs(seed: int, count: int):
    """Pairs of canonical products (and single factors) built from a pool of bases."""
    import random
    rng = random.Random(seed)
    x, y, z = (Sym(symbol(n)) for n in "xyz")
    from gradcli.symbolic.expr import SYMBOLIC as m
    pool = [x, y, z, x + 1, y - z, m.sin(x), m.cos(y), m.exp(z), m.exp(x + y), m.log(z),
            m.atan(x * y)]
    pairs = []
    for _ in range(count):
        sides = []
        for _ in range(2):
            factor = Sym(rng.choice([1, 2, -3, 0.5]))
            for base in rng.sample(pool, rng.randint(1, 6)):
                factor = factor * base ** rng.choice([1, 1, 2, -1, y])
            sides.append(factor.node)
        pairs.append(sides)
    return pairs


@on_the_source
def test_two_products_join_as_the_general_path_builds_them(monkeypatch):
    # _join_two merges two canonical factor lists (inserting a short side by bisection): the
    # node it gives is the one the general path canonicalises from scratch
    from gradcli.symbolic import expr
    joined = 0
    with fresh_context():
        one = expr.number(1)
        for p, q in _product_pairs(seed=24, count=300):
            fast = expr._join_two([(p, one), (q, one)])
            if fast is None:
                continue
            joined += 1
            with monkeypatch.context() as patch:
                patch.setattr(expr, "_join_two", lambda items, loose=False: None)
                assert expr.multiply([(p, one), (q, one)]) is fast, (text(p), text(q))
    assert joined > 50


@on_the_source
def test_a_joined_product_hashes_as_one_built_from_scratch(monkeypatch):
    # _join_two makes a product's structural hash (which orders operands when printed) from its
    # sides' kept (base, exponent) hash pairs, and the product's unit from the same pairs: the
    # hashes the general path computes from every factor, in a context of its own
    from gradcli.symbolic import expr
    join_two, joined = expr._join_two, []

    def counted(items, loose=False):
        found = join_two(items, loose)
        joined.append(found is not None)
        return found

    def products(fast: bool) -> list:
        with fresh_context(), monkeypatch.context() as patch:
            patch.setattr(expr, "_join_two", counted if fast else lambda items, loose=False: None)
            one = expr.number(1)
            built = [expr.multiply([(p, one), (q, one)])
                     for p, q in _product_pairs(seed=25, count=300)]
            return [(text(n), n.hash, expr.unit(n).hash if type(n) is expr.Product else None)
                    for n in built]

    assert products(fast=True) == products(fast=False)
    assert sum(joined) > 50


def test_a_loose_product_stands_for_the_node_it_seals_to():
    # multiply(..., loose=True) may give a product outside the context's table (the adjoint
    # sweep's chain-rule products): sealed, it is the node multiply builds; flattened into a
    # product, added into a sum (alone or with others) or scaled, it gives the nodes its
    # sealed node gives; and nothing of it is put in the table
    from gradcli.symbolic import expr
    with fresh_context() as ctx:
        one, z = expr.number(1), symbol("z")
        pairs = _product_pairs(seed=27, count=200)
        loose = 0
        for (p, q), (r, _) in zip(pairs, pairs[1:] + pairs[:1]):
            for items, c in (([(p, one), (q, one)], 1), ([(p, one), (q, one)], -2),
                             ([(p, one)], 3), ([(p, one), (q, one), (z, one)], 1)):
                made = expr.multiply(items, c, loose=True)
                if getattr(made, "serial", None) is None:
                    loose += 1
                    assert made not in ctx.table.values()
                    assert made.coeff != 1 and len(made.factors) <= expr.FLAT
                node = expr.multiply(items, c)
                assert expr.sealed(made) is node
                for k in (1, -1, 2):
                    assert expr.add([(made, k)]) is expr.add([(node, k)])
                    assert expr.add([(made, k), (r, 1)]) is expr.add([(node, k), (r, 1)])
                assert expr.multiply([(made, one), (r, one)]) is \
                    expr.multiply([(node, one), (r, one)])
                assert expr.multiply([(made, one), (z, one), (r, one)], -1) is \
                    expr.multiply([(node, one), (z, one), (r, one)], -1)
                assert expr.multiply([(made, one)], 5) is expr.multiply([(node, one)], 5)
        assert loose > 100


@on_the_source
def test_a_number_times_one_node_as_the_general_path_builds_it(monkeypatch):
    # _scaled (a rule's 2*a, -a, 4*sigmoid(a)) gives the node the general path canonicalises
    # from scratch, with the same structural hash (it orders operands when printed): products
    # (their coefficient multiplied), small sums (distributed), long ones, symbols, functions
    from fractions import Fraction
    from gradcli.symbolic import expr

    def operands():
        x, y = Sym(symbol("x")), Sym(symbol("y"))
        nodes = [n for pair in _product_pairs(seed=26, count=60) for n in pair]
        long_sum, long_product = x, x
        for k in range(1, 20):
            long_sum = long_sum + Sym(symbol(f"z{k}"))
            long_product = long_product * Sym(symbol(f"z{k}"))
        return nodes + [n.node for n in (x, x + y, x - 2 * y + 1, long_sum, long_product,
                                         long_product * 3, x ** 2, expr.SYMBOLIC.exp(x))]

    coefficients = [2, -1, -3, 1, 0, Fraction(1, 2), Fraction(-3, 4)]

    def built(fast: bool) -> list:
        found = []
        with fresh_context(), monkeypatch.context() as patch:
            if not fast:
                patch.setattr(expr, "_scaled", lambda items, coeff, loose=False: None)
                patch.setattr(expr, "_join_two", lambda items, loose=False: None)
            one = expr.number(1)
            for node in operands():
                for c in coefficients:
                    for items, k in (([(node, one)], c), ([(expr.number(c), one), (node, one)], 1),
                                     ([(node, one), (expr.number(c), one)], 1)):
                        n = expr.multiply(items, k)
                        found.append((text(n), n.hash))
        return found

    fast, general = built(fast=True), built(fast=False)
    assert fast == general
    assert len(fast) > 1000
