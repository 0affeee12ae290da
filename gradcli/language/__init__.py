"""Source text <-> AST: the parser (Lark's LALR tables, run by a tight loop), the AST, the printer.

The first stage: it knows nothing of derivatives. Nothing here imports from the stages below it.
``parser`` is compiled by Cython where the install could (setup.py), from the same source.
"""

from .. import compiled  # noqa: F401 - GRADCLI_NO_EXTENSION, read before any module is
