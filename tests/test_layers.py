"""The package's layers stay true: each stage imports only from the stages before it.

The order is the order data flows in (parse -> AST -> tape -> sweeps -> checks -> views -> faces);
a module may import its own folder's modules and any earlier layer's, never a later one, and the
module import graph has no cycle (not even through imports inside functions). Only the CLI
imports click; only the views and the faces import rich. The API builds records and never imports
a view: the CLI hands the records to the views.
"""

from __future__ import annotations

import ast
import functools
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "gradcli"

# Bottom first. A new module or folder must be given its place here.
LAYERS = [
    ("gradcli.errors", "gradcli.gcpause", "gradcli.grammar", "gradcli.limits", "gradcli.compiled",
     "gradcli.files"),
    ("gradcli.language",),
    ("gradcli.engine",),
    ("gradcli.symbolic", "gradcli.code"),  # code: the adjoint program as source code
    ("gradcli.records", "gradcli.arraytrace"),
    ("gradcli.readers",),  # files of numbers: --points's rows, and --at X=@FILE for points
    ("gradcli.points",),
    ("gradcli.check", "gradcli.sampling"),
    ("gradcli.writers",),
    ("gradcli.batchio",),
    ("gradcli.batchdask",),
    ("gradcli.views",),
    ("gradcli.api", "gradcli.matrices", "gradcli.plotting"),
    ("gradcli.repl", "gradcli.explore"),  # the interactive faces: handed the CLI's runner
    ("gradcli.cli", "gradcli.__main__", "gradcli"),
]
# Third-party packages a layer may not import (at any depth, even lazily).
FORBIDDEN = {
    "click": lambda module: module != "gradcli.cli",
    "rich": lambda module: layer_of(module) < layer_of("gradcli.views"),
    # gradcli codegen writes JAX code; gradcli itself never imports JAX (nor its start-up)
    "jax": lambda module: True,
}


def layer_of(module: str) -> int:
    best = None
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (i, len(prefix))
    if best is None:
        raise AssertionError(f"{module} has no layer: add it to LAYERS in tests/test_layers.py")
    return best[0]


def modules() -> dict[str, pathlib.Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(module: str, path: pathlib.Path) -> set[str]:
    """Every module ``module`` imports, absolute, wherever the import statement stands."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
            # `from . import api` imports a module, not a name
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


@functools.cache  # parsed once per process: every module's test reads the same graph
def internal_graph() -> dict[str, set[str]]:
    mods = modules()
    # The package root is run by every import of a submodule; importing it is never a stage's choice.
    return {m: {t for t in imports(m, p) if t in mods and t not in (m, "gradcli")}
            for m, p in mods.items()}


def design_map() -> set[str]:
    """The modules docs/design.md names in its map: the ``gradcli/`` tree of its ```text block,
    a folder a line ending in ``/``, its files indented under it."""
    page = (PACKAGE.parent / "docs" / "design.md").read_text(encoding="utf-8")
    tree = page.split("\ngradcli/\n", 1)[1].split("```", 1)[0]
    named, folders = set(), []  # folders: (indent, name) of the folders the line is inside
    for line in tree.splitlines():
        stripped = line.lstrip()
        if not stripped or len(line) - len(stripped) < 2:
            continue
        indent = len(line) - len(stripped)
        word = stripped.split()[0]
        if indent < 2 or not (word.endswith("/") or word.endswith(".py")):
            continue  # a description's second line
        while folders and folders[-1][0] >= indent:
            folders.pop()
        parts = ["gradcli"] + [name for _, name in folders]
        if word.endswith("/"):
            folders.append((indent, word[:-1]))
            named.add(".".join(parts + [word[:-1]]))
        else:
            stem = word[:-3]
            named.add(".".join(parts if stem == "__init__" else parts + [stem]))
    return named


def test_design_md_names_every_module():
    """docs/design.md is the map of the code: a module added is a line added there."""
    named = design_map()
    missing = sorted(set(modules()) - named)
    assert not missing, f"docs/design.md does not name {missing}: add a line to its map"
    stale = sorted(named - set(modules()))
    assert not stale, f"docs/design.md names modules that do not exist: {stale}"


def test_every_module_has_a_layer():
    for module in modules():
        layer_of(module)


@pytest.mark.parametrize("module", sorted(modules()))
def test_no_upward_import(module):
    graph = internal_graph()
    own = layer_of(module)
    upward = sorted(t for t in graph[module]
                    if layer_of(t) > own and module != "gradcli")
    assert not upward, f"{module} (layer {own}) imports from a later stage: {upward}"


@pytest.mark.parametrize("module", sorted(modules()))
def test_forbidden_third_party_imports(module):
    used = {name.split(".")[0] for name in imports(module, modules()[module])}
    bad = sorted(lib for lib, forbidden in FORBIDDEN.items() if lib in used and forbidden(module))
    assert not bad, f"{module} must not import {bad}"


# Faces that sit below the views' level in spirit: they hand records out and never draw them.
NO_VIEWS = ("gradcli.api", "gradcli.matrices")


@pytest.mark.parametrize("module", NO_VIEWS)
def test_the_api_imports_no_view(module):
    views = sorted(t for t in internal_graph()[module]
                   if layer_of(t) == layer_of("gradcli.views"))
    assert not views, f"{module} imports views {views}: build records (gradcli.records) instead"


def test_no_import_cycle():
    graph = internal_graph()
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for start in graph:
        if start in state:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        state[start] = 1
        path = [start]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                state[node] = 2
                continue
            if state.get(child) == 1:
                cycle = path[path.index(child):] + [child]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if child not in state:
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(graph[child]))))


def test_the_checker_sees_an_upward_import(tmp_path):
    """The checker itself can fail: an engine module importing a view is reported."""
    path = tmp_path / "reverse.py"
    path.write_text("from ..views.tables import trace_tables\n")
    found = imports("gradcli.engine.reverse", path)
    assert "gradcli.views.tables" in found
    assert layer_of("gradcli.views.tables") > layer_of("gradcli.engine.reverse")
