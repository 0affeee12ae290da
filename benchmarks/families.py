"""The generated workloads of the benchmark, and their translation to Python for the peers.

Three families, each a function of N (the number of terms) returning gradcli source text:

- ``wide``:   a sum of N mixed terms cycling through the catalogue, ``c*f(a*b + k)*(a - b)``;
- ``deep``:   an N-deep nesting ``f(a*(f(a*(...) + b)) + b)`` of bounded functions;
- ``shared``: a program of N assignments, each reading the previous one and earlier names at random,
  with a running ``s += ...`` so names are reassigned as well as reused.

Every generated source is finite and inside every domain at :data:`POINT`, so the whole pipeline
(and every peer) computes a real gradient.
"""

from __future__ import annotations

import random

N_INPUTS = 10
INPUTS = [f"x{i}" for i in range(N_INPUTS)]
POINT = {name: round(0.2 + 0.06 * i, 2) for i, name in enumerate(INPUTS)}  # 0.2 .. 0.74

# (function, arity, constant added to its argument so it stays in the domain for inputs in (0, 1))
CATALOGUE = [
    ("exp", 1, 0.5), ("expm1", 1, 0.5), ("log", 1, 0.5), ("log1p", 1, 0.5), ("log2", 1, 0.5),
    ("log10", 1, 0.5), ("sqrt", 1, 0.5), ("cbrt", 1, 0.5), ("sin", 1, 0.5), ("cos", 1, 0.5),
    ("tan", 1, 0.5), ("asin", 1, 0.1), ("acos", 1, 0.1), ("atan", 1, 0.5), ("sinh", 1, 0.5),
    ("cosh", 1, 0.5), ("tanh", 1, 0.5), ("asinh", 1, 0.5), ("acosh", 1, 1.5), ("atanh", 1, 0.1),
    ("sigmoid", 1, 0.5), ("softplus", 1, 0.5), ("relu", 1, 0.5), ("abs", 1, 0.5),
    ("erf", 1, 0.5), ("sign", 1, 0.5), ("step", 1, 0.5),
    ("pow", 2, 0.5), ("atan2", 2, 0.5), ("hypot", 2, 0.5), ("min", 2, 0.5), ("max", 2, 0.5),
]
BOUNDED = ["sin", "cos", "tanh", "atan", "sigmoid", "erf"]  # finite for any argument


def _pair(i: int) -> tuple[str, str]:
    # 3i+1 and i differ mod 10 for every i, so a - b is never x - x
    return INPUTS[i % N_INPUTS], INPUTS[(3 * i + 1) % N_INPUTS]


def wide(n: int) -> str:
    """A sum of ``n`` terms, each a catalogue function in a product: about 7 nodes per term."""
    terms = []
    for i in range(n):
        name, arity, k = CATALOGUE[i % len(CATALOGUE)]
        a, b = _pair(i)
        c = (i % 7 + 1) / 4
        call = f"{name}({a}*{b} + {k})" if arity == 1 else f"{name}({a}, {b} + {k})"
        term = f"{c:g}*{call}*({a} - {b})"
        terms.append(term if i == 0 else (" - " if i % 3 == 2 else " + ") + term)
    return "".join(terms)


def deep(n: int) -> str:
    """``n`` nested levels ``f(a*( ... ) + b)``: 3 nodes per level, 2n parentheses deep."""
    opens, closes = [], []
    for i in range(n):
        a, b = _pair(i)
        opens.append(f"{BOUNDED[i % len(BOUNDED)]}({a}*(")
        closes.append(f") + {b})")
    return "".join(opens) + INPUTS[n % N_INPUTS] + "".join(reversed(closes))


def shared(n: int, seed: int = 7) -> str:
    """A program of ``n`` assignments reusing earlier names; its result reads every one of them."""
    rng = random.Random(seed)
    lines = ["t0 = x0*x1", "s = 0"]
    for i in range(1, n + 1):
        window = max(0, i - 50)
        u = f"t{rng.randrange(window, i)}"
        w = (f"t{rng.randrange(window, i)}" if rng.random() < 0.7
             else INPUTS[rng.randrange(N_INPUTS)])
        f = BOUNDED[i % len(BOUNDED)]
        lines.append(f"t{i} = {f}(t{i - 1}*{u} + 0.5*{w})")
        if i % 7 == 0:
            lines.append(f"s += {w}*t{i}")
    lines.append(f"t{n} + s")
    return "\n".join(lines)


FAMILIES = {"wide": wide, "deep": deep, "shared": shared}


# -- translation to Python, for the peers (which all start from Python source) ---------------------

def _split_long_sum(expr: str, chunk: int = 200) -> list[str]:
    """A long top-level sum as partial sums of ``chunk`` terms: CPython's compiler recurses on a
    100,000-term ``a + b + ...`` and fails, so the peers get the same sum in bounded pieces."""
    cuts, depth = [0], 0
    for i, ch in enumerate(expr):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and ch in "+-" and i > 0 and expr[i - 1] == " " and expr[i + 1] == " ":
            cuts.append(i)
    terms = [expr[a:b] for a, b in zip(cuts, cuts[1:] + [len(expr)])]
    return ["".join(terms[i:i + chunk]) for i in range(0, len(terms), chunk)]


def to_python(source: str) -> str:
    """A Python function ``f(x0, ..., x9)`` computing the same value as the gradcli ``source``.

    Only the generated families are translated (``^`` -> ``**``, the last statement returned);
    the function names are left to the namespace each peer supplies.
    """
    statements = [s for s in source.replace("^", "**").split("\n") if s.strip()]
    body = []
    for stmt in statements[:-1]:
        body.append(stmt)
    parts = _split_long_sum(statements[-1]) if len(statements[-1]) > 10_000 else [statements[-1]]
    body.append(f"_acc = {parts[0]}")
    body += [f"_acc = _acc + ({p})" for p in parts[1:]]
    body.append("return _acc")
    return f"def f({', '.join(INPUTS)}):\n" + "".join(f"    {line}\n" for line in body)
