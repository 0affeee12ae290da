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

TOKEN = re.compile(r"\s*(\\left\\lfloor|\\right\\rfloor|\\left\\lceil|\\right\\rceil|\\left\(|"
                   r"\\right\)|\\left\||\\right\||\\operatorname\{\w+\}|\\mathit\{\w+\}|"
                   r"\\[A-Za-z]+'?|\\,|\d+\.?\d*(?:e[+-]?\d+)?|[A-Za-z]|[{}^_+\-,])")

# The functions gradcli names, by their LaTeX spelling, as mpmath computes them.
FUNCTIONS = {
    "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "sec": mpmath.sec,
    "csc": mpmath.csc, "cot": mpmath.cot, "arcsin": mpmath.asin, "arccos": mpmath.acos,
    "arctan": mpmath.atan, "sinh": mpmath.sinh, "cosh": mpmath.cosh, "tanh": mpmath.tanh,
    "exp": mpmath.exp, "log": mpmath.log, "ln": mpmath.log, "min": min, "max": max,
    "Gamma": mpmath.gamma, "psi": mpmath.digamma, "psi'": lambda a: mpmath.polygamma(1, a),
    "asinh": mpmath.asinh, "acosh": mpmath.acosh, "atanh": mpmath.atanh,
    "atan2": mpmath.atan2, "hypot": lambda a, b: mpmath.sqrt(a * a + b * b),
    "expm1": mpmath.expm1, "log1p": mpmath.log1p, "log2": lambda a: mpmath.log(a, 2),
    "log10": mpmath.log10, "cbrt": lambda a: mpmath.sign(a) * mpmath.cbrt(abs(a)),  # real root
    "erf": mpmath.erf, "erfc": mpmath.erfc,
    "sigmoid": lambda a: 1 / (1 + mpmath.exp(-a)), "softplus": lambda a: mpmath.log1p(mpmath.exp(a)),
    "relu": lambda a: max(a, 0), "sign": mpmath.sign, "step": lambda a: 1 if a > 0 else 0,
    "abs": abs, "pow": lambda a, b: a ** b, "sinc": mpmath.sinc, "exp2": lambda a: 2 ** a,
    "trunc": lambda a: mpmath.floor(a) if a >= 0 else mpmath.ceil(a), "round": mpmath.nint,
    "lgamma": lambda a: mpmath.log(abs(mpmath.gamma(a))), "digamma": mpmath.digamma,
    "trigamma": lambda a: mpmath.polygamma(1, a), "gamma": mpmath.gamma,
    "floor": mpmath.floor, "ceil": mpmath.ceil, "mod": lambda a, b: a - b * mpmath.floor(a / b),
}
FUNCTIONS.update({"arcsinh": FUNCTIONS["asinh"], "arccosh": FUNCTIONS["acosh"],
                  "arctanh": FUNCTIONS["atanh"], "arctan2": FUNCTIONS["atan2"],
                  "logistic": FUNCTIONS["sigmoid"]})
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
            return FUNCTIONS[name](*self.arguments())
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
