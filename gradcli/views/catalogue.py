"""The catalogue as plain rows: what ``gradcli functions`` shows, read from the primitive table."""

from __future__ import annotations

from ..engine.arrays import FUNCTIONS as ARRAY_FUNCTIONS
from ..engine.primitives import ALIASES, OVERLOADS, TABLE
from ..symbolic.printer import rule_text


def catalogue() -> list[dict]:
    """One dict per primitive: name, aliases, arity, syntax, derivative rules, domain, note."""
    aliases: dict[str, list[str]] = {}
    for alias, name in ALIASES.items():
        aliases.setdefault(name, []).append(alias)
    rows = []
    for name, prim in TABLE.items():
        params = ["a", "b"][:prim.arity]
        if prim.symbol and prim.arity == 2:
            syntax = f"a {prim.symbol} b" + (", a ** b, pow(a, b)" if name == "pow" else "")
        elif prim.symbol:
            syntax = f"{prim.symbol}a"
        else:
            syntax = ", ".join([f"{short}({', '.join(params)})" for (short, n), row
                                in OVERLOADS.items() if row == name and short not in ALIASES]
                               + [f"{name}({', '.join(params)})"])
        rules = {f"d/d{p}": text for p, text in zip(params, rule_text(name))}
        rows.append({"name": name, "aliases": aliases.get(name, []), "arity": prim.arity,
                     "syntax": syntax, "derivatives": rules, "domain": prim.domain,
                     "note": prim.note})
    # the array functions (docs/arrays.md): their derivatives are those of the rows and base
    # operations they are written with; max and min of several values are the rows above
    for name, function in ARRAY_FUNCTIONS.items():
        rows.append({"name": name, "aliases": [], "arity": function.least,
                     "syntax": function.syntax, "derivatives": {},
                     "domain": "arrays (docs/arrays.md); derivatives by the rows it is "
                               "written with", "note": function.gives})
    return rows
