"""The modules setup.py compiles with Cython, each from its own .py source (optional: where the
install had no Cython or no C compiler, the .py files run), and the switch that runs the .py
files instead: GRADCLI_NO_EXTENSION=1 (comparisons: tests/test_symbolic_build.py)."""

import os
import sys

COMPILED = ("gradcli.language.ast", "gradcli.language.parser", "gradcli.language.printer",
            "gradcli.engine.graph", "gradcli.engine.forward", "gradcli.engine.partials",
            "gradcli.engine.certify", "gradcli.engine.primitives", "gradcli.engine.special",
            "gradcli.engine.ball",
            "gradcli.symbolic.expr", "gradcli.symbolic.printer", "gradcli.symbolic.diff")


class _Source:
    """Finds the compiled modules as their .py files (an extension module would be found first
    on the path)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in COMPILED:
            return None
        from importlib.util import spec_from_file_location
        package, _, module = name.rpartition(".")
        folder = sys.modules[package].__path__[0]
        return spec_from_file_location(name, os.path.join(folder, module + ".py"))


if os.environ.get("GRADCLI_NO_EXTENSION") and _Source not in sys.meta_path:
    sys.meta_path.insert(0, _Source)
