"""Points: ``x=2,y=pi/4`` -> {name: float}, for ``--at`` and the Python API.

A value is a number or a constant expression in the language itself (``pi/4``,
``atan2(1, 2)``), evaluated by the same parser and lowering, never by Python's ``eval``.
"""

from __future__ import annotations

import math
import re

from .errors import GradcliError, InputError

_NAME = re.compile(r"[^\W\d]\w*\Z")


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside parentheses: ``x=atan2(1,2),y=3`` -> two parts."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def constant_value(text: str, what: str, option: str | None = None) -> float:
    """The value of a number or constant expression; ``what`` names it in errors, which are
    about ``option`` when one is given."""
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None:
        if not text:
            raise InputError(f"{what} has no value", option=option)
        from .engine.graph import lower
        from .language.parser import parse
        try:
            graph = lower(parse(text), text)
        except GradcliError as exc:
            raise InputError(f"{what}: {text!r} is not a number or constant expression "
                             f"({exc})", option=option) from None
        if graph.inputs:
            raise InputError(f"{what}: {text!r} is not a number: it reads "
                             f"{', '.join(graph.inputs)}",
                             option=option,
                             hint="a value may use numbers, pi, e and functions, not variables")
        if graph.output >= graph.n_const:
            raise InputError(f"{what}: {text!r} is not a constant expression", option=option)
        value = graph.constants[graph.output]
    if not math.isfinite(value):
        raise InputError(f"{what} is {text!r}, which is not a finite number", option=option)
    return value


def parse_point(text: str, option: str = "at") -> dict[str, float]:
    """``"x=2,y=3"`` -> ``{"x": 2.0, "y": 3.0}``; errors name the offending part and ``option``."""
    point: dict[str, float] = {}
    for part in split_top_level(text):
        part = part.strip()
        if not part:
            if not text.replace(",", "").strip():
                raise InputError(f"{text!r} gives no values", option=option,
                                 hint="write NAME=VALUE pairs: x=2,y=3")
            continue
        name, eq, value = part.partition("=")
        name = name.strip()
        if not eq:
            raise InputError(f"{part!r}: no value for {name}", option=option,
                             hint=f"write {name}=2")
        if not name:
            raise InputError(f"{part!r}: a value without a name", option=option, hint="write x=2")
        if not _NAME.match(name):
            raise InputError(f"{part!r}: {name!r} is not a valid name", option=option)
        if name in point:
            raise InputError(f"gives {name} twice", option=option, names=(name,))
        point[name] = constant_value(value, name, option)
    return point


def merge_points(parts: list[dict[str, float]]) -> dict[str, float]:
    """Several points (repeated ``at`` options) into one; a name given twice is an error."""
    merged: dict[str, float] = {}
    for part in parts:
        for name, value in part.items():
            if name in merged:
                raise InputError(f"gives {name} twice", option="at", names=(name,))
            merged[name] = value
    return merged


def parse_grid(text: str, option: str = "grid",
               default_count: int | None = None) -> dict[str, tuple[float, float, int]]:
    """``"x=0:1:101,y=-1:1:21"`` -> ``{"x": (0.0, 1.0, 101), "y": (-1.0, 1.0, 21)}``: for each
    name, ``start:stop:count`` (count values from start to stop inclusive, as numpy.linspace).
    With ``default_count``, the count may be left out (``x=-3:3``, for ``plot --over``) and
    ``default_count`` stands for it."""
    grid: dict[str, tuple[float, float, int]] = {}
    for part in split_top_level(text):
        part = part.strip()
        if not part:
            continue
        name, eq, spec = part.partition("=")
        name = name.strip()
        if not eq or not _NAME.match(name):
            raise InputError(f"{part!r} is not NAME=START:STOP:COUNT", option=option,
                             hint="write x=0:1:101,y=-1:1:21")
        if name in grid:
            raise InputError(f"gives {name} twice", option=option, names=(name,))
        pieces = split_top_level(spec, ":")
        if default_count is not None and len(pieces) == 2:
            start = constant_value(pieces[0], f"the start of {name}", option)
            grid[name] = (start, constant_value(pieces[1], f"the stop of {name}", option),
                          default_count)
            continue
        if len(pieces) != 3:
            raise InputError(f"{part!r}: expected START:STOP:COUNT, three parts", option=option,
                             hint=f"write {name}=0:1:11 for 11 values from 0 to 1")
        start = constant_value(pieces[0], f"the start of {name}", option)
        stop = constant_value(pieces[1], f"the stop of {name}", option)
        try:
            count = int(pieces[2].strip())
        except ValueError:
            count = 0
        if count < 1:
            raise InputError(f"{part!r}: the count {pieces[2].strip()!r} is not a whole number "
                             "of at least 1", option=option)
        grid[name] = (start, stop, count)
    if not grid:
        raise InputError(f"{text!r} gives no ranges", option=option, hint="write x=0:1:101")
    return grid
