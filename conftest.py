"""pytest's settings for the whole checkout (tests/conftest.py holds the tests' fixtures)."""

from importlib.util import find_spec

from gradcli.compiled import COMPILED

# --doctest-modules imports each gradcli/*.py by its path; a module compiled by Cython (setup.py)
# imports as its extension instead, which pytest refuses for that path. Their docstring
# examples run in tests/test_symbolic_build.py, on the module as imported.
collect_ignore = [name.replace(".", "/") + ".py" for name in COMPILED
                  if not find_spec(name).origin.endswith(".py")]
