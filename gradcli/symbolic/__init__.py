"""Symbolic derivatives: the table's rules applied to expressions instead of numbers (``expr``),
printed as source text (``printer``), and ``gradcli diff`` built on them (``diff``).

``expr``, ``printer`` and ``diff`` are compiled by Cython where the install could (setup.py): the same
source, a quarter fewer instructions. GRADCLI_NO_SYMBOLIC_EXTENSION=1 runs the .py files
instead, for comparisons (tests/test_symbolic_build.py).
"""

import os

COMPILED = ("expr", "printer", "diff")  # the modules setup.py compiles

if os.environ.get("GRADCLI_NO_SYMBOLIC_EXTENSION"):
    import sys
    from importlib.util import spec_from_file_location

    class _Source:
        """Finds this package's compiled modules as their .py files (an extension module
        would be found first on the path)."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            package, _, module = name.rpartition(".")
            if package != __name__ or module not in COMPILED:
                return None
            return spec_from_file_location(name, os.path.join(__path__[0], module + ".py"))

    sys.meta_path.insert(0, _Source)
