"""``gradcli diff --steps``: a derivation (:mod:`gradcli.symbolic.steps`) as a person reads it.

The records name each pending derivative (``D2``); here it is written ``d/dx(x^2)`` (``∂/∂w``
when the expression reads several inputs), and each step's rule gets its textbook name: the
text view is one sheet (the derivative line by line, each line's rule beside it), the LaTeX
view one ``align*`` block, and ``--json`` (:func:`gradcli.views.json.steps_json`) the same
texts with the rule's key, the row it comes from and the local rewrite.
"""

from __future__ import annotations

import re

from ..engine.primitives import CALLED
from .layout import Sheet

_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def operator(wrt: str, partial: bool) -> str:
    """``d/dx`` or, for an expression of several inputs, ``∂/∂x``."""
    return f"∂/∂{wrt}" if partial else f"d/d{wrt}"


def written(text: str, derivation, partial: bool) -> str:
    """A record's text with each pending derivative's name written as ``d/dx(u)``."""
    pending = derivation.pending
    op = operator(derivation.wrt, partial)

    def one(match):
        name = match.group(0)
        return f"{op}({pending[name]})" if name in pending else name
    return _NAME.sub(one, text)


def rule_title(step) -> str:
    """How a textbook names a step's rule: ``product rule``, ``power rule and chain rule``,
    ``rule of sin and chain rule``."""
    from ..symbolic.steps import TITLES
    title = f"rule of {CALLED.get(step.row, step.row)}" if step.rule == "function" else \
        TITLES[step.rule]
    return title + (" and chain rule" if step.chain else "")


def local(step, derivation, partial: bool) -> tuple[str, str]:
    """A step's own rewrite, ``d/dx(u)`` and what the rule makes of it (the simplify step: the
    whole line before and after)."""
    return written(step.before, derivation, partial), written(step.after, derivation, partial)


def steps_sheet(derivation, partial: bool, title: str) -> Sheet:
    """The derivative line by line: ``= line`` and, beside it, the rule and its rewrite."""
    sheet = Sheet(title)
    sheet.add_column("", kind="label")
    sheet.add_column("derivative", kind="formula")
    sheet.add_column("rule", kind="formula")
    sheet.add_row("", written(derivation.start, derivation, partial), "")
    for step in derivation.steps:
        before, after = local(step, derivation, partial)
        why = rule_title(step) if step.rule == "simplify" else \
            f"{rule_title(step)}:\n{before} = {after}"  # (two lines: the table stays narrow)
        sheet.add_row("=", written(step.line, derivation, partial), why)
    return sheet
