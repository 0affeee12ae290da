"""The build's one part that pyproject.toml cannot declare: the modules of gradcli/compiled.py
compiled by Cython, from the same Python source, as optional extension modules.

language/parser.py holds the one parser driver: parser.pxd types its loop's positions and
stacks and makes its token an extension type of four fields, so reading a program is the
lexer's matches and the builder's callbacks, not the interpreter's steps between them;
engine/graph.pxd makes the builder those callbacks drive an extension type (emit called directly).
language/ast.pxd makes the AST's nodes extension types, so the code that builds them (the parser's
callbacks), prints them (printer.py: a program's reading) and lowers them reads their fields
directly.

engine/forward.py and partials.py hold the loop of every sweep: forward.pxd and partials.pxd
type their indices as C integers and the tape's argument columns as int32 memoryviews, so the
loop's bookkeeping is C and only the rule-table calls are Python's. engine/certify.pxd does the
same for the certified sweep's forward pass on bare balls (only Arb's operations are calls).
engine/primitives.py (the rule table), engine/special.py (the float primals it names from there)
and engine/ball.py (the balls' functions) are compiled as they are, so the rules and functions
those loops call are C functions, not interpreter frames.

The canonical form and the printer are Python object code (dicts, tuples, small classes): the
interpreter's dispatch is a quarter of ``gradcli diff``'s instructions, and Cython removes it
without a second implementation to keep in step. expr.pxd and diff.pxd, beside the sources,
declare the node classes as extension types and the hot functions' node variables as such, so
the compiled code reads fields and calls functions directly (a further quarter). Where Cython or
a C compiler is missing, the install goes on and the .py files run
(GRADCLI_NO_EXTENSION=1 runs them on demand).
"""

import ast
from pathlib import Path

from setuptools import setup


def listed_modules() -> list:
    """gradcli/compiled.py's COMPILED, as source paths: the one list, read as data (the package
    itself is not importable before it is built)."""
    source = Path(__file__).with_name("gradcli") / "compiled.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    names = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                 and node.targets[0].id == "COMPILED")
    return [name.replace(".", "/") + ".py" for name in ast.literal_eval(names)]


def compiled_modules() -> list:
    try:
        from Cython.Build import cythonize
    except ImportError:  # a build without its build requirements (no isolation): pure Python
        return []
    sources = listed_modules()
    modules = cythonize(sources, build_dir="build/cython", quiet=True, compiler_directives={
        "language_level": 3,
        "annotation_typing": False,  # annotations document; they do not make C types here
        "binding": True,  # functions keep __doc__, __code__ and signatures (doctest, inspect)
        # a None where a .pxd types a node raises AttributeError, as Python does, instead of
        # reading through a null pointer (no cost measured: 864 M -> 865 M on deep 3,000)
        "nonecheck": True,
    })
    for module in modules:
        module.optional = True
        module.extra_compile_args = ["-O2", "-g0"]
    return modules


setup(ext_modules=compiled_modules())
