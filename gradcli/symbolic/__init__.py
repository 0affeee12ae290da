"""Symbolic derivatives: the table's rules applied to expressions instead of numbers (``expr``),
printed as source text (``printer``), and ``gradcli diff`` built on them (``diff``).

``expr``, ``printer`` and ``diff`` are compiled by Cython where the install could (setup.py): the
same source, a quarter fewer instructions (gradcli/compiled.py).
"""

from .. import compiled  # noqa: F401 - GRADCLI_NO_EXTENSION, read before any module is
