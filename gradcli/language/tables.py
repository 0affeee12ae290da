"""Lark's parser as plain data: the lexer's regular expression and the LALR tables.

:func:`tables_from_lark` reads a Lark LALR parser through Lark's own serialization
(``Lark.memo_serialize``, the data ``lark.tools.standalone`` writes into a stand-alone parser)
and returns lists, strings and numbers that ``parser.driver`` runs, shipped as JSON beside the
grammar. What the driver does not reproduce (a lexer callback, a kept placeholder, a rule that
builds a Tree, ...) raises :class:`LarkMismatch`: a Lark that builds such a parser is a failure
for the test suite to find, not a case to paper over at run time.

The tables::

    pattern     one alternation of named groups, one per terminal, in Lark's matching order
    ignore      the terminals the lexer drops (comments, blanks)
    symbols     the terminals and rule names; states and reductions refer to them by index
    states      per state, a string of hex byte pairs (symbol, action): action k < len(states)
                shifts (or goes) to state k, any other reduces by reductions[k - len(states)]
                (bytes, not JSON numbers: a tenth of the time to load)
    reductions  [size, rule] for a unit rule (``?sum: product``: its value is its only child), or
                [size, rule, method, kept]: call the transformer's ``method`` (None for Lark's
                helper rules such as ``__program_star_0``, whose value is a list that is spliced
                into the parent's children) on the children listed by ``kept``, a flat list of
                (index, splice) pairs: Lark's child filter (``_SEP`` is dropped)
    start, end  the state to start in and the state that accepts
"""

from __future__ import annotations

import re



class LarkMismatch(RuntimeError):
    """The installed Lark built a parser the driver cannot run as it stands."""

    def __init__(self, what: str):
        from lark import __version__
        super().__init__(f"gradcli cannot run the parser tables of Lark {__version__}: {what}. "
                         "gradcli is tested with lark>=1.1.9,<2; please report this.")


def tables_from_lark(lark, transformer, postlex, methods) -> dict:
    """The tables of ``lark`` (built with ``transformer`` and ``postlex``, whose callbacks are
    the names in ``methods``) as plain data; :class:`LarkMismatch` if they need more."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef
    data, memo = lark.memo_serialize([TerminalDef, Rule])

    def deref(item):
        return memo[item["@"]] if isinstance(item, dict) and "@" in item else item

    options = data["options"]
    expected = {"parser": "lalr", "lexer": "basic", "keep_all_tokens": False,
                "maybe_placeholders": False, "propagate_positions": False, "regex": False,
                "g_regex_flags": 0, "use_bytes": False, "start": ["start"]}
    for name, value in expected.items():
        if options.get(name) != value:
            raise LarkMismatch(f"the option {name}={options.get(name)!r}")
    if options.get("lexer_callbacks") or options.get("postlex") is not postlex \
            or options.get("transformer") is not transformer:
        raise LarkMismatch("lexer callbacks, or another post-lexer or transformer")
    frontend = data["parser"]
    lexer_conf, table = frontend["lexer_conf"], frontend["parser"]
    if lexer_conf.get("lexer_type") != "basic" or lexer_conf.get("g_regex_flags") \
            or lexer_conf.get("use_bytes"):
        raise LarkMismatch("a lexer other than the basic one")

    symbols: list[str] = []
    index: dict[str, int] = {}

    def symbol(name) -> int:
        name = str(name)  # Lark 1.1.9 names some symbols with its Token (a str subclass)
        if name not in index:
            index[name] = len(symbols)
            symbols.append(name)
        return index[name]

    reductions: list[list] = []
    rule_index: dict[int, int] = {}

    def reduction(ref) -> int:
        key = ref["@"]
        if key not in rule_index:
            rule_index[key] = len(reductions)
            reductions.append(_reduction(deref(ref), symbol, methods))
        return rule_index[key]

    numbers = table["states"]
    if not all(isinstance(state, int) for state in numbers):
        raise LarkMismatch("LALR states that are not numbered")  # Lark's debug tables
    dense = {state: i for i, state in enumerate(sorted(numbers))}
    tokens = table["tokens"]
    rows = []
    for state in sorted(numbers):
        pairs = []
        for token, (action, arg) in numbers[state].items():
            if action == 0:  # shift, or go to after a reduction
                pairs.append((symbol(tokens[token]), dense[arg]))
            elif action == 1:
                pairs.append((symbol(tokens[token]), ~reduction(arg)))  # numbered once all are
            else:
                raise LarkMismatch(f"the LALR action {action!r}")
        rows.append(pairs)
    if len(symbols) > 256 or len(rows) + len(reductions) > 256:
        raise LarkMismatch("more symbols, states or rules than one byte numbers")
    states = [bytes(v for sym, act in pairs
                    for v in (sym, act if act >= 0 else len(rows) + ~act)).hex()
              for pairs in rows]
    terminals = [deref(t) for t in lexer_conf["terminals"]]
    ordered = _ordered(terminals)
    return {"pattern": "|".join(f"(?P<{t['name']}>{_regexp(t['pattern'])})" for t in ordered),
           "ignore": sorted(map(str, lexer_conf["ignore"])),
           "symbols": symbols, "states": states, "reductions": reductions,
           "start": dense[table["start_states"]["start"]],
           "end": dense[table["end_states"]["start"]]}


def _regexp(pattern: dict) -> str:
    """A terminal's regular expression, as Lark's ``Pattern.to_regexp`` writes it."""
    kind = pattern["__type__"]
    if kind == "PatternStr":
        regexp = re.escape(pattern["value"])
    elif kind == "PatternRE":
        regexp = pattern["value"]
    else:
        raise LarkMismatch(f"a terminal of type {kind}")
    for flag in pattern["flags"]:
        regexp = f"(?{flag}:{regexp})"
    return regexp


def _ordered(terminals: list[dict]) -> list[dict]:
    """The terminals in the order Lark's basic lexer tries them (priority, then the longest
    possible match, then the longest pattern, then the name): the lexer's alternation."""
    def max_width(t):
        p = t["pattern"]
        if p["__type__"] == "PatternStr":
            return len(p["value"])
        width = p.get("_width")
        if not width:
            raise LarkMismatch(f"no width for the terminal {t['name']}")
        return width[1]

    strings = [t for t in terminals if t["pattern"]["__type__"] == "PatternStr"]
    for t in terminals:
        if t["pattern"]["__type__"] != "PatternRE":
            continue
        for s in strings:
            text = s["pattern"]["value"]
            found = re.match(_regexp(t["pattern"]), text)
            if s["priority"] == t["priority"] and found and found.group(0) == text:
                # Lark's lexer then retypes t's matches that equal the string (keywords)
                raise LarkMismatch(f"the string terminal {s['name']} also matches {t['name']}")
    return sorted(terminals, key=lambda t: (-t["priority"], -max_width(t),
                                            -len(t["pattern"]["value"]), str(t["name"])))


def _reduction(rule: dict, symbol, methods) -> list:
    """What Lark's parse-tree builder does when ``rule`` is reduced (see the module docstring)."""
    options = rule["options"]
    if options.get("keep_all_tokens") or options.get("template_source") \
            or options.get("empty_indices"):
        raise LarkMismatch(f"the rule options of {rule['origin']['name']}")
    expansion = rule["expansion"]
    kept = []
    for i, sym in enumerate(expansion):
        terminal = sym["__type__"] == "Terminal"
        if not (terminal and sym.get("filter_out")):
            kept += [i, int(not terminal and str(sym["name"]).startswith("_"))]
    origin = str(rule["origin"]["name"])
    size = len(expansion)
    if options.get("expand1") and not rule.get("alias"):
        if size == 1 and kept == [0, 0]:
            return [size, symbol(origin)]  # a unit rule: the child itself
        raise LarkMismatch(f"a ?rule {origin} that keeps a rule of several children")
    name = str(rule.get("alias") or origin)
    if name.startswith("_"):
        return [size, symbol(origin), None, kept]
    if name not in methods:
        raise LarkMismatch(f"the rule {name}, which would build a Tree")
    return [size, symbol(origin), name, kept]
