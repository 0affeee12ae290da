"""The modules compiled by Cython (setup.py) are their .py source, compiled: the same
derivatives, the same docstring examples, and built from the source as it is now."""

import ast
import doctest
import importlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from gradcli.api import compile
from gradcli.engine.primitives import TABLE
from gradcli.compiled import COMPILED
from gradcli.symbolic.diff import derivatives_of, mixed_partial

MODULES = [importlib.import_module(name) for name in COMPILED]
SOURCES = {m.__name__: Path(m.__file__).parent / (m.__name__.rpartition(".")[2] + ".py")
           for m in MODULES}
BUILT = [m for m in MODULES if not m.__file__.endswith(".py")]
needs_build = pytest.mark.skipif(not BUILT, reason="the modules were not compiled "
                                 "(no Cython or no C compiler at install): the .py files run")


def _docstring_examples(source: str) -> int:
    """How many ``>>>`` examples the docstrings of a module's source hold (module, classes,
    functions)."""
    count = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text:
                count += len(doctest.DocTestParser().get_examples(text))
    return count


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples_pass_on_the_module_as_imported(module):
    # (pytest's --doctest-modules cannot import a compiled module by its .py path: conftest.py)
    tests = doctest.DocTestFinder().find(module)
    found = sum(len(t.examples) for t in tests)
    assert found == _docstring_examples(SOURCES[module.__name__].read_text(encoding="utf-8"))
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0


def test_ci_runs_the_compiled_modules():
    """CI installs with Cython and a compiler (.ci/run): a build that failed there, and so fell
    back to the .py files without a word, fails here instead."""
    if not os.environ.get("CI"):
        pytest.skip("outside CI the build may lack a compiler: the .py files run then")
    assert BUILT == MODULES, [m.__file__ for m in MODULES]


def test_the_package_has_docstring_examples_to_run():
    assert _docstring_examples(SOURCES["gradcli.symbolic.diff"].read_text(encoding="utf-8")) >= 3


@needs_build
@pytest.mark.parametrize("module", BUILT, ids=lambda m: m.__name__)
def test_each_compiled_module_is_built_from_the_source_as_it_is(module):
    """A .py edited after the build would not run (the extension is found first): rebuild with
    ``pip install -e .``."""
    source = SOURCES[module.__name__]
    for part in (source, source.with_suffix(".pxd")):  # (the declarations Cython reads too)
        assert Path(module.__file__).stat().st_mtime >= part.stat().st_mtime, \
            f"{part.name} changed after it was compiled: rebuild with pip install -e ."
    tree = ast.parse(source.read_text(encoding="utf-8"))
    # (a name the module binds again, primitives' _cbrt = math.cbrt where there is one, aside)
    rebound = {target.id for node in tree.body if isinstance(node, ast.Assign)
               for target in node.targets if isinstance(target, ast.Name)}
    functions = [node for node in tree.body
                 if isinstance(node, ast.FunctionDef) and node.name not in rebound]
    assert functions
    for node in functions:  # every function where the source has it
        compiled = getattr(module, node.name)
        compiled = getattr(compiled, "__wrapped__", compiled)  # (a decorated function)
        lines = {node.lineno, *(d.lineno for d in node.decorator_list)}
        assert compiled.__code__.co_firstlineno in lines, node.name


@needs_build
def test_the_fast_paths_match_the_general_path_on_the_python_source():
    """test_canonical's tests that patch a fast path off, run where a patch reaches the calls:
    on the .py source (compiled, they skip)."""
    from tests.test_canonical import FAST_PATH_TESTS
    assert FAST_PATH_TESTS  # (none named would run the whole file)
    env = {**os.environ, "GRADCLI_NO_EXTENSION": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "-rs", *(f"tests/test_canonical.py::{name}" for name in FAST_PATH_TESTS)],
        capture_output=True, text=True, env=env, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(FAST_PATH_TESTS)} passed" in done.stdout, done.stdout  # none skipped


@pytest.mark.parametrize("name, args", [("tail", (None,)), ("reachable", (None,)),
                                        ("unit", (None,)), ("rope", (None, [])),
                                        ("_collect", ({}, None, 1))])
def test_a_missing_node_raises_as_in_python(name, args):
    """Compiled, the .pxd types these parameters as nodes: None still raises AttributeError
    (setup.py's nonecheck), where it would otherwise crash the process."""
    from gradcli.symbolic import expr
    with pytest.raises(AttributeError):
        getattr(expr, name)(*args)


def _corpus() -> list[tuple[str, dict]]:
    """Expressions and how to differentiate them: fixed cases, then random ones over every
    function of the table (seeded: the same every run)."""
    cases = [("log(x)+x*y-sin(y)", {}), ("x^10", {"order": 3}), ("1/x", {"order": 3}),
             ("x^y", {"order": 2}), ("x^(y - 1)*exp(2*x)", {}), ("exp(x*y)", {"mixed": "x,y"}),
             ("x/(1+x)", {"order": 2}), ("sqrt(x^2 + y^2)*atan2(y, x)", {}),
             ("t = x*y\nu = sin(t) + t^2\nu*exp(-t)", {})]
    rng = random.Random(24)
    unary = [name for name, row in TABLE.items() if row.arity == 1 and name.isalpha()]
    for i in range(60):
        expr = rng.choice("xyz")
        for _ in range(rng.randrange(1, 7)):
            a = rng.choice(["x", "y", "z", "0.5", "3"])
            op = rng.random()
            if op < 0.45:
                expr = f"{rng.choice(unary)}({expr}*{a} + 1.5)"
            elif op < 0.6:
                expr = f"({expr})^{rng.choice(['2', '3', '0.5', '-1', 'y'])}"
            else:
                expr = f"{expr} {rng.choice('+-*/')} {a}"
        cases.append((expr, {"order": 2} if i % 5 == 0 else {}))
    deep = "x"
    for i in range(120):  # large enough for the one adjoint sweep (diff.REVERSE_MIN)
        deep = f"{['sin', 'tanh', 'atan'][i % 3]}({'xyz'[i % 3]}*({deep}) + {'yzx'[i % 3]})"
    cases.append((deep, {}))
    return cases


def _derivatives(cases) -> list:
    out = []
    for source, how in cases:
        try:
            graph = compile(source)
        except Exception as exc:  # (a random case outside every domain is compared too)
            out.append(f"compile: {type(exc).__name__}")
            continue
        try:
            if "mixed" in how:
                out.append(mixed_partial(graph, how["mixed"].split(",")))
            else:
                out.append(derivatives_of(graph, list(graph.inputs), how.get("order", 1)))
        except Exception as exc:
            out.append(f"{type(exc).__name__}: {exc}")
    return out


@needs_build
def test_the_python_source_gives_the_compiled_modules_derivatives():
    cases = _corpus()
    script = ("import json, sys\n"
              "from tests.test_symbolic_build import _corpus, _derivatives, MODULES\n"
              "json.dump({'files': [m.__file__ for m in MODULES],\n"
              "           'found': _derivatives(_corpus())}, sys.stdout)\n")
    env = {**os.environ, "GRADCLI_NO_EXTENSION": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, cwd=Path(__file__).parent.parent, check=True)
    python = json.loads(done.stdout)
    assert all(f.endswith(".py") for f in python["files"])  # the source ran there, and here:
    assert all(not m.__file__.endswith(".py") for m in BUILT)
    found = json.loads(json.dumps(_derivatives(cases)))
    assert len(found) == len(cases)
    assert sum(type(f) is dict for f in found) > 40  # most cases have derivatives to compare
    assert python["found"] == found
