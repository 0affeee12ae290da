"""Source text <-> AST: the parser (Lark's LALR tables, run by a tight loop), the AST, the printer.

The first stage: it knows nothing of derivatives. Nothing here imports from the stages below it.
"""
