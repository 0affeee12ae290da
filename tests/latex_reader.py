"""A reader of the LaTeX subset gradcli writes, as a reader of mathematics reads it.

It knows nothing of gradcli's printer: it reads ``x \\, -\\frac{6}{y}`` the way a person does
(``x - 6/y``, or a syntax error, never ``x*(-6/y)``), so a formula that drops parentheses reads
back to a different value. SymPy's ``parse_latex`` would be the obvious reference, but it reads
``\\sin(x) + |x|`` as ``sin(x)`` and ``x \\, (a)`` as a function call ``x(a)``.

The grammar (standard precedence; a sign only at the start of a group):

    sum     := [+|-] product ((+|-) product)*
    product := power ((\\, | \\cdot) power)*
    power   := atom [^ {sum}]
    atom    := number | name | {sum} | \\frac{sum}{sum} | \\sqrt{sum} | \\left( sum \\right)
             | \\left| sum \\right| | \\left\\lfloor sum \\right\\rfloor | \\left\\lceil ...
             | function \\left( sum, ... \\right)

Values are computed with mpmath at the working precision the caller sets; numbers are read as
the decimals written.
"""

from __future__ import annotations

import re

import mpmath
from references import REFERENCES

TOKEN = re.compile(r"\s*(\\left\\lfloor|\\right\\rfloor|\\left\\lceil|\\right\\rceil|\\left\(|"
                   r"\\right\)|\\left\||\\right\||\\operatorname\{\w+\}|\\mathit\{\w+\}|"
                   r"\\[A-Za-z]+'?|\\,|\d+\.?\d*(?:e[+-]?\d+)?|[A-Za-z]|[{}^_+\-,])")

# The functions gradcli names, as mpmath computes them (the one table of references), by their
# names and by the usual notation of mathematics (arcsin, Γ, ψ).
FUNCTIONS = {name: ref.mp for name, ref in REFERENCES.items()}
FUNCTIONS.update({"ln": FUNCTIONS["log"], "Gamma": FUNCTIONS["gamma"], "psi": FUNCTIONS["digamma"],
                  "psi'": FUNCTIONS["trigamma"], "logistic": FUNCTIONS["sigmoid"],
                  **{"arc" + name: FUNCTIONS["a" + name] for name in (
                      "sin", "cos", "tan", "sinh", "cosh", "tanh", "tan2")}})
GREEK = {"\\pi": mpmath.pi, "\\theta": "θ"}


class LatexSyntaxError(ValueError):
    pass


class Reader:
    def __init__(self, text: str, point: dict[str, float]):
        self.tokens = tokenize(text)
        self.i = 0
        self.point = point

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else None

    def take(self, want: str | None = None) -> str:
        token = self.peek()
        if token is None or (want is not None and token != want):
            raise LatexSyntaxError(f"expected {want or 'more'} at token {self.i}, got {token!r}")
        self.i += 1
        return token

    def read(self):
        value = self.sum()
        if self.peek() is not None:
            raise LatexSyntaxError(f"unexpected {self.peek()!r} at token {self.i}")
        return value

    def sum(self):
        sign = 1
        if self.peek() in ("-", "+"):
            sign = -1 if self.take() == "-" else 1
        value = sign * self.product()
        while self.peek() in ("-", "+"):
            op = self.take()
            right = self.product()
            value = value - right if op == "-" else value + right
        return value

    def product(self):
        value = self.power()
        while self.peek() in ("\\,", "\\cdot"):
            if self.peek() == "\\," and self.peek(1) in ("-", "+"):
                self.take()  # a thin space before a sign: x \, -y is x - y to a reader
                break
            self.take()
            value = value * self.power()
        return value

    def power(self):
        base = self.atom()
        if self.peek() == "^":
            self.take()
            return base ** self.group()
        return base

    def group(self):
        self.take("{")
        value = self.sum()
        self.take("}")
        return value

    def enclosed(self, close: str):
        value = self.sum()
        self.take(close)
        return value

    def arguments(self) -> list:
        self.take("\\left(")
        args = [self.sum()]
        while self.peek() == ",":
            self.take()
            args.append(self.sum())
        self.take("\\right)")
        return args

    def atom(self):
        token = self.take()
        if re.fullmatch(r"\d+\.?\d*(?:e[+-]?\d+)?", token):
            return mpmath.mpf(token)
        if token == "{":
            return self.enclosed("}")
        if token == "\\left(":
            return self.enclosed("\\right)")
        if token == "\\left|":
            return abs(self.enclosed("\\right|"))
        if token == "\\left\\lfloor":
            return mpmath.floor(self.enclosed("\\right\\rfloor"))
        if token == "\\left\\lceil":
            return mpmath.ceil(self.enclosed("\\right\\rceil"))
        if token == "\\frac":
            top = self.group()
            return top / self.group()
        if token == "\\sqrt":
            return mpmath.sqrt(self.group())
        if token == "\\log" and self.peek() == "_":  # \log_{b}\left(a\right)
            self.take()
            base = self.group()
            (a,) = self.arguments()
            return mpmath.log(a) / mpmath.log(base)
        if token == "\\ln" and self.peek() == "\\left|":  # \ln\left|\Gamma\left(a\right)\right|
            self.take()
            self.take("\\Gamma")
            (a,) = self.arguments()
            self.take("\\right|")
            return mpmath.log(abs(mpmath.gamma(a)))
        name = None
        if token.startswith("\\operatorname{"):
            name = token[len("\\operatorname{"):-1]
        elif token.startswith("\\") and token[1:] in FUNCTIONS:
            name = token[1:]
        if name is not None:
            return (FUNCTIONS.get(name) or REFERENCES[name].mp)(*self.arguments())
        if token in GREEK:
            found = GREEK[token]
            return self.variable(found) if isinstance(found, str) else +found
        if token == "e":
            return mpmath.e
        if token.startswith("\\mathit{"):
            return self.variable(token[len("\\mathit{"):-1])
        if re.fullmatch(r"[A-Za-z]", token):
            return self.variable(token)
        raise LatexSyntaxError(f"unexpected {token!r} at token {self.i - 1}")

    def variable(self, name: str):
        if self.peek() == "_":  # x_{1}
            self.take()
            self.take("{")
            name += self.take()
            self.take("}")
        return mpmath.mpf(self.point[name])


def tokenize(text: str) -> list[str]:
    tokens, at = [], 0
    text = text.rstrip()
    while at < len(text):
        m = TOKEN.match(text, at)
        if not m:
            raise LatexSyntaxError(f"cannot read {text[at:at + 10]!r}")
        tokens.append(m.group(1))
        at = m.end()
    return tokens


def read(latex: str, point: dict[str, float]):
    """The value of a formula in gradcli's LaTeX at ``point`` (mpmath, current precision)."""
    return Reader(latex, point).read()
