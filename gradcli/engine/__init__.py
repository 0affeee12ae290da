"""The engine: the rule table, the tape and its lowering, and the sweeps over it.

``primitives`` is the one table of derivative rules; ``graph`` lowers an AST to the tape;
``partials`` evaluates the rules on it (every node's local partial derivatives, the one place
that does); ``forward`` and ``reverse`` evaluate values and adjoints; ``tangent`` is forward
mode; ``dual`` runs the reverse sweep on dual numbers for Hessians. It imports only ``language`` and knows
nothing of how results are shown (no rich, no click). ``forward`` and ``partials`` (the loops
of every sweep) are compiled by Cython where the install could (setup.py), from the same source.
"""

from .. import compiled  # noqa: F401 - GRADCLI_NO_EXTENSION, read before any module is
