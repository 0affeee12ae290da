"""Points: ``x=2,y=pi/4`` -> {name: float}, for ``at``, ``direction``, ``grid`` and the Python API.

An array value (``w=[0.5,-1,2]``, ``X=[[1,2],[3,4]]``, ``X=@data.npy``) is held once, by name,
in :attr:`Point.arrays`, its shape in :attr:`Point.shapes`. Read as a mapping, the point gives
one entry per element, named as the lowering names the array's element inputs (``w[0]``,
``X[1,0]``): those are made the first time a scalar path reads them, never by the array nodes.

A value is a number or exactly one constant expression in the language itself (``pi/4``,
``atan2(1, 2)``), evaluated by the same parser and lowering, never by Python's ``eval``. A
statement, an assignment, a ``;`` or an input name in a value is an :class:`InputError` about
the option, whose caret points into the option's text as the user typed it (``x=1;y=2``).
"""

from __future__ import annotations

import math
import os
import re

from .errors import GradcliError, InputError, Span, name_list
from .limits import check_elements

_NAME = r"[^\W\d]\w*\Z"  # compiled on first use (re caches it)
_RULE = "a value is a number or one constant expression (pi/4, atan2(1, 2)), nothing else"


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside parentheses and brackets: ``x=atan2(1,2),w=[1,2]`` -> two parts."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(" or ch == "[":
            depth += 1
        elif ch == ")" or ch == "]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def constant_value(text: str, what: str, option: str | None = None, *, shown: str | None = None,
                   offset: int = 0) -> float:
    """The value of a number or of one constant expression; ``what`` names it in errors, which
    are about ``option`` when one is given.

    ``shown`` is the whole text the user typed (``x=1;y=2``) and ``offset`` where ``text``
    starts in it: an error's caret then points into ``shown``.
    """
    def fail(message: str, span: Span | None = None, hint: str | None = _RULE) -> InputError:
        if span is None or shown is None:
            return InputError(message, hint=hint, option=option)
        return InputError(message, (offset + span[0], offset + span[1]), hint=hint, source=shown,
                          option=option)

    lead = len(text) - len(text.lstrip())
    body = text.strip()
    try:
        value = float(body)
    except ValueError:
        value = None
    if value is None:
        if not body:
            raise fail(f"{what} is missing", (lead, lead + 1), hint=None)
        value = _evaluate(body, what, lambda m, s, h=_RULE: fail(m, (lead + s[0], lead + s[1]), h))
    if not math.isfinite(value):
        raise fail(f"{what} is {body!r}, which is not a finite number", (lead, lead + len(body)),
                   hint=None)
    return value


def one_expression(text: str, what: str, fail):
    """``text`` parsed as exactly one expression (a ``Program`` of one statement that is not an
    assignment); ``fail(message, span, hint[, error class])`` makes the error for anything else
    (the class is the parser's, for a syntax error)."""
    for sep in (";", "\n"):
        at = text.find(sep)
        if at >= 0:
            raise fail(f"{what} is not one expression: it holds {sep!r}, which separates "
                       "statements", (at, at + 1))
    from .engine.graph import parse_source
    from .language.ast import Assign
    try:
        program = parse_source(text)
    except GradcliError as exc:
        raise fail(f"{what} is not an expression: {exc}",
                   exc.span or (0, len(text)), exc.hint, type(exc)) from None
    statement = program.statements[0]
    if len(program.statements) != 1 or isinstance(statement, Assign):
        raise fail(f"{what} is an assignment, not an expression", statement.span)
    return program


def _evaluate(text: str, what: str, fail) -> float:
    """One constant expression's value; ``fail(message, span, hint)`` makes the error."""
    from .engine.graph import lower
    program = one_expression(text, what, lambda m, s, h=_RULE, cls=None: fail(m, s, h or _RULE))
    try:
        graph = lower(program, text)
    except GradcliError as exc:
        raise fail(f"{what} is not a constant expression: {exc}",
                   exc.span or (0, len(text)), exc.hint or _RULE) from None
    if graph.inputs:
        raise fail(f"{what} is not a number: it reads the name {graph.inputs[0]}",
                   graph.input_spans[0],
                   "a value may use numbers, pi, e and functions, not the inputs")
    if graph.output >= graph.n_const:  # cannot happen: a graph without inputs folds to a constant
        raise fail(f"{what} is not a constant expression", (0, len(text)))
    return graph.constants[graph.output]


def constant_name(name: str, fail) -> None:
    """A value given to ``e`` or ``pi`` would be silently unused (the source reads the
    constant): ``fail(message, hint)`` makes the InputError that says so."""
    from .engine.primitives import constant_words
    what = constant_words(name)
    if what:
        raise fail(f"{what}; an input cannot be named {name}",
                   f"rename the input in the expression and here, e.g. {name}1 or {name}_")


class Point(dict):
    """A parsed point: name -> value, remembering where each name stood in the option's text
    (``places[name] = (text, span)``) so that a later error about a name can point at it.

    An array value is held once, by name, in :attr:`arrays` (a file's read-only NumPy float64
    array, or a typed literal's numbers as a tuple), with its shape in :attr:`shapes`. Its
    element entries (``w[0]`` -> float), which the scalar paths read, are made the first time
    the point is read as a mapping (see :class:`_Unmade`); the array nodes read :attr:`arrays`
    and :meth:`scalars` and never make them.
    """

    def __init__(self):
        super().__init__()
        self.places: dict[str, tuple[str, Span]] = {}
        # What was typed for each value (``0.1``, ``pi/4``), an element's too (``w[0]``): the
        # certified engine reads the exact number, not its nearest double.
        self.texts: dict[str, str] = {}
        # The array values' shapes (name -> shape); their elements are entries w[0], X[1,0].
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.arrays: dict[str, object] = {}  # name -> its values (see the class's docstring)
        # The arrays whose element entries are not made yet: until then each stands as one
        # entry, its name -> its values, where its elements will go (in the order given).
        self._unmade: list[str] = []

    def add_array(self, name: str, values, shape: tuple[int, ...]) -> None:
        """The array ``name`` of ``shape`` (``values``: a NumPy array of that shape, or a flat
        tuple of floats, row-major), held as it is, read-only; its element entries are made when
        read."""
        if getattr(values, "flags", None) is not None and values.flags.writeable:
            values = values.view()  # read-only here; the caller's array stays as it was
            values.flags.writeable = False
        self.shapes[name] = tuple(shape)
        self.arrays[name] = values
        dict.__setitem__(self, name, values)
        self._unmade.append(name)
        self.__class__ = _Unmade

    def array(self, name: str):
        """The array ``name`` as a read-only NumPy float64 array of its shape."""
        values = self.arrays[name]
        if getattr(values, "shape", None) != self.shapes[name]:
            import numpy as np
            values = np.reshape(np.array(values, dtype=np.float64), self.shapes[name])
            values.flags.writeable = False
            self.arrays[name] = values  # made once
        return values

    def gives(self, name: str) -> bool:
        """Whether the point gives a value to ``name`` (a scalar or a whole array), without
        making element entries."""
        return name in self.arrays or (dict.__contains__(self, name) and not self._element(name))

    def scalars(self) -> dict[str, float]:
        """The scalar values by name, without making any array's element entries."""
        return {name: value for name, value in dict.items(self)
                if name not in self.arrays and not self._element(name)}

    def names(self) -> list[str]:
        """The names given, scalars and arrays, in the order they were given (``w``, not
        ``w[0]``), without making any element entries."""
        names = []
        for key in dict.keys(self):
            owner = self._element(key) or key
            if not names or names[-1] != owner:
                names.append(owner)
        return names

    def _element(self, key: str) -> str | None:
        """The array whose element entry ``key`` is (among those made), or None."""
        if "[" not in key:
            return None
        owner = key.partition("[")[0]
        return owner if owner in self.arrays and owner not in self._unmade else None

    def make_elements(self) -> None:
        """The element entries of every array (``w[0]`` -> float), where the array stands:
        what a scalar path reads. Done once; afterwards the point is a plain mapping."""
        if self._unmade:
            from .engine.arrays import element_entries
            entries = list(dict.items(self))
            dict.clear(self)
            for key, value in entries:
                if key in self._unmade:
                    dict.update(self, element_entries(key, value, self.shapes[key]))
                else:
                    dict.__setitem__(self, key, value)
            self._unmade = []
        self.__class__ = Point

    def typed(self) -> dict[str, object]:
        """What was typed where it is not its double, by name (the certified engine reads the
        exact number): a scalar's text, or for an array the flat list of its elements' texts
        and floats. A file's array was typed nowhere: it is left out, and no entry is made."""
        out = {name: text for name, text in self.texts.items()
               if "[" not in name and name not in self.arrays}
        owners = {key.partition("[")[0] for key in self.texts if "[" in key}
        from .engine.arrays import element_entries
        for name in owners & set(self.arrays):
            out[name] = [self.texts.get(element, value) for element, value
                         in element_entries(name, self.arrays[name], self.shapes[name])]
        return out

    def exact(self, name: str):
        """The value of ``name`` as typed (a string), or its float when not typed."""
        text = self.texts.get(name)
        return self[name] if text is None else text

    def error(self, name: str, message: str, option: str, hint: str | None = None) -> InputError:
        """An InputError about ``name`` (and ``option``) with the caret under the name, when its
        place is known (an element's is its array's)."""
        place = self.places.get(name) or self.places.get(name.partition("[")[0])
        if place is None:
            return InputError(message, hint=hint, option=option, names=(name,))
        return InputError(message, place[1], hint=hint, source=place[0], option=option,
                          names=(name,))


class _Unmade(Point):
    """A :class:`Point` holding arrays whose element entries are not made yet. Any read of it as
    a mapping (``p["w[0]"]``, ``in``, iteration, ``items()``, ``dict(p)``, ...) makes them first
    (:meth:`Point.make_elements`), and it is then a plain Point again: a scalar path reads the
    point as it always did, at no cost per read afterwards."""


def _making(method: str):
    def read(self, *args, **kwargs):
        self.make_elements()
        return getattr(self, method)(*args, **kwargs)
    read.__name__ = method
    return read


# Writes that add entries (``p[name] = v``, ``update``) need no elements: they go after them.
for _method in ("__getitem__", "__contains__", "__iter__", "__len__", "__eq__", "__ne__",
                "__repr__", "__reversed__", "__or__", "__ror__", "__reduce_ex__", "keys",
                "values", "items", "get", "copy", "pop", "popitem", "setdefault", "__delitem__",
                "clear"):
    setattr(_Unmade, _method, _making(_method))
del _method
_Unmade.__bool__ = lambda self: True  # it holds an array (never empty) without counting


def parse_point(text: str, option: str = "at") -> Point:
    """``"x=2,y=3"`` -> ``{"x": 2.0, "y": 3.0}``; errors are about ``option`` and point into
    ``text``."""
    point = Point()
    start = 0  # where the current part starts in ``text``

    def error(message, span, hint=None, names=(), fix=()):
        return InputError(message, span, hint=hint, source=text, option=option, names=names,
                          fix=fix)
    parts = _with_file_names(split_top_level(text))
    for index, raw in enumerate(parts):
        lead = len(raw) - len(raw.lstrip())
        part = raw.strip()
        here = start + lead
        start += len(raw) + 1
        if not part:
            if not text.replace(",", "").strip():
                raise InputError(f"{text!r} gives no values", option=option,
                                 hint="write NAME=VALUE pairs: x=2,y=3")
            continue
        span = (here, here + len(part))
        name, eq, value = part.partition("=")
        name = _unescape(name.strip())  # --at \u03b8=1 is θ, as in the expression
        if not eq and point and is_number(part):
            raise _several_values(text, parts, index, here, option, point.names()[-1])
        if not eq:
            left, colon, right = part.partition(":")
            if colon and re.match(_NAME, left.strip()) and right.strip():
                written = f"{left.strip()}={right.strip()}"
                raise error(f"{part}: a name and its value are joined by '='", span,
                            hint=f"write {written}", fix=((span, written),))
            written = f"{part}=2" if re.match(_NAME, part) else None
            raise error(f"{part}: no value for {part}", span,
                        hint=f"write {written}" if written else "write NAME=VALUE, e.g. x=2",
                        fix=((span, written),) if written else ())
        if not name:
            raise error(f"{part}: a value without a name", span,
                        hint="write NAME=VALUE, e.g. x=2")
        if not re.match(_NAME, name):
            raise error(f"{part}: {name!r} is not a valid name",
                        (here, here + len(part.partition("=")[0].rstrip())))
        if point.gives(name):
            raise error(f"gives {name} twice", (here, here + len(name)), names=(name,))
        constant_name(name, lambda message, hint: error(message, (here, here + len(name)), hint,
                                                        (name,)))
        value_at = here + len(part) - len(value)
        if value.lstrip().startswith("@"):
            value_at += len(value) - len(value.lstrip())
            values = file_value(value.strip(), name, option, text, value_at)
            point.places[name] = (text, (here, here + len(name)))
            if values.ndim == 0:  # a .npy file of one number: a scalar input
                point[name] = float(values)
            else:  # checked whole by the reader (finite, the most elements): held as it is
                point.add_array(name, values, values.shape)
            continue
        if value.lstrip().startswith("["):
            value_at += len(value) - len(value.lstrip())
            shape, elements = array_value(value.strip(), f"{name}: the value", option, text,
                                          value_at)
            try:
                check_elements(len(elements), "the value", name)
            except GradcliError as exc:
                raise placed(exc, name, (value_at, value_at + len(value.strip())), text,
                             option) from None
            from .engine.arrays import element_names
            point.add_array(name, tuple(number for number, _ in elements), shape)
            point.places[name] = (text, (here, here + len(name)))
            # each element as typed (a literal is short: it was typed), for the certified engine
            point.texts.update(zip(element_names(name, shape), (typed for _, typed in elements)))
            continue
        point[name] = constant_value(value, f"{name}: the value", option, shown=text,
                                     offset=value_at)
        point.places[name] = (text, (here, here + len(name)))
        point.texts[name] = value.strip()
    return point


def _with_file_names(parts: list[str]) -> list[str]:
    """``X=@a,b.csv,y=2`` split on its commas, a file name's own commas put back: after an
    ``@`` value, a part without ``=`` is more of the file's name, not a pair."""
    joined: list[str] = []
    for part in parts:
        if joined and "=" not in part and joined[-1].partition("=")[2].lstrip().startswith("@"):
            joined[-1] += "," + part
        else:
            joined.append(part)
    return joined


def array_value(text: str, what: str, option: str | None, shown: str,
                offset: int) -> tuple[tuple[int, ...], list[tuple[float, str]]]:
    """``[1, 2]``, ``[[1, pi], [3, 4]]``: the shape and each element's (value, typed text),
    row-major. An element is a number or a constant expression, as a scalar value; a ragged
    array is an InputError with the caret under the row that differs."""
    def fail(message, span, hint=None):
        return InputError(message, (offset + span[0], offset + span[1]), hint=hint,
                          source=shown, option=option)
    from .language.ast import ArrayLit
    program = one_expression(text, what, lambda m, s, h=None, cls=None: fail(m, s, h))
    top = program.statements[0]
    if type(top) is not ArrayLit:
        raise fail(f"{what} is not an array: write [1, 2, 3] or [[1, 2], [3, 4]]",
                   (0, len(text)))
    # Breadth first, one level of nesting at a time: the shape is each level's common length.
    shape, level = [], [top]
    while all(type(item) is ArrayLit for item in level):
        n = len(level[0].items)
        for item in level:
            if len(item.items) != n:
                raise fail(f"{what} is a ragged array: a row of {len(item.items)} where the "
                           f"first has {n}", item.span, "every row has the same length")
        shape.append(n)
        level = [child for item in level for child in item.items]
    nested = next((item for item in level if type(item) is ArrayLit), None)
    if nested is not None:
        raise fail(f"{what} is a ragged array: an array where a number stands beside it",
                   nested.span, "every row has the same length")
    elements = []
    for item in level:
        start, end = item.span
        elements.append((constant_value(text[start:end], f"{what}: an element", option,
                                        shown=shown, offset=offset + start),
                         text[start:end].strip()))
    return tuple(shape), elements


def file_value(text: str, name: str, option: str | None, shown: str, offset: int):
    """``@data.npy``, ``@data.csv``, ``@data.csv[price]``, ``@data.parquet[a, b]``: the numbers
    of a file (:func:`gradcli.readers.read_array`) as a NumPy array. A ``[...]`` at the end
    selects columns by name (quoted when a name holds a comma: ``["a, b"]``); any error points
    into ``shown`` (``text`` starts at ``offset`` there): a missing column at its name, the
    rest at the whole value."""
    def fail(message, span, hint=None, fix=()):
        return InputError(f"{name}: {message}", (offset + span[0], offset + span[1]), hint=hint,
                          source=shown, option=option, names=(name,), fix=fix)
    path, columns, spans = text[1:], None, []
    if path.endswith("]") and "[" in path:
        cut = path.rindex("[")
        columns, spans = _column_names(path[cut + 1:-1], 1 + cut + 1, fail)
        path = path[:cut]
    if not path.strip():
        raise fail("no file after '@'", (0, len(text)), "write @data.npy, @data.csv or "
                                                         "@data.csv[column]")
    path = os.path.expanduser(path.strip())

    def missing(column, names):
        span = spans[columns.index(column)]
        close = sorted((c for c in names if c.lower() == column.lower() or is_close(column, c)),
                       key=lambda c: (c.lower() != column.lower(), edit_distance(column, c)))
        shown_names = ", ".join(map(repr, names[:12])) + (", …" if len(names) > 12 else "")
        return fail(f"{path} has no column {column!r}", span,
                    f"did you mean {close[0]!r}?" if close else f"its columns: {shown_names}",
                    ((span, close[0]),) if close else ())
    from .engine.graph import edit_distance, is_close
    from .readers import read_array
    try:
        return read_array(path, name, columns, missing)
    except GradcliError as exc:
        if exc.span is not None:
            raise
        raise placed(exc, name, (offset, offset + len(text)), shown, option) from None


def placed(error: GradcliError, name: str, span: Span, shown: str, option: str | None):
    """``error`` (of the same class) about ``name``'s value, which stands at ``span`` in the
    option's text ``shown``: the message says ``{option} {name}: ...``, the caret points there."""
    return type(error)(f"{name}: {error.sentence}", span, hint=error.hint, source=shown,
                       option=option, names=(name,))


def _column_names(inside: str, start: int, fail) -> tuple[list[str], list[Span]]:
    """The names in ``[a, "b, c"]`` (``inside``: the text between the brackets, at ``start`` in
    the value) and their spans in the value."""
    names, spans, i, n = [], [], 0, len(inside)
    while True:
        j = i + len(inside[i:]) - len(inside[i:].lstrip())
        if j < n and inside[j] in "\"'":
            end = inside.find(inside[j], j + 1)
            if end < 0:
                raise fail("a column name's quote is not closed", (start + j, start + n))
            name, span = inside[j + 1:end], (start + j, start + end + 1)
            k = end + 1 + len(inside[end + 1:]) - len(inside[end + 1:].lstrip())
            if k < n and inside[k] != ",":
                raise fail("a quoted column name is followed by a comma or ']'",
                           (start + k, start + k + 1))
        else:
            k = inside.find(",", j)
            k = n if k < 0 else k
            name = inside[j:k].rstrip()
            span = (start + j, start + j + max(1, len(name)))
        if not name:
            raise fail("a column name is empty", span,
                       "name the columns between the brackets: @data.csv[x, y]")
        names.append(name)
        spans.append(span)
        if k >= n:
            return names, spans
        i = k + 1


def array_entries(point: Point, name: str, nested, option: str = "at") -> None:
    """Put the array ``nested`` (lists of lists of numbers or strings, as the Python API is given
    them, or a NumPy array of numbers) into ``point``, held as an array (:meth:`Point.add_array`;
    a NumPy array of numbers is not copied), its shape in ``point.shapes``."""
    if getattr(nested, "dtype", None) is not None and nested.dtype.kind in "biuf":
        if not nested.size:
            raise InputError(f"the value of {name} is an empty array", option=option,
                             names=(name,), hint="give every row the same length, at least 1")
        check_elements(nested.size, f"the value of {name}", name)
        # booleans as numbers; a NaN is refused with the point, by element
        import numpy as np
        point.add_array(name, np.asarray(nested, dtype=np.float64), nested.shape)
        return
    if hasattr(nested, "tolist"):  # a NumPy array of strings or objects: as lists
        nested = nested.tolist()
    shape, level = [], [nested]
    while all(isinstance(item, (list, tuple)) for item in level):
        n = len(level[0])
        if n == 0 or any(len(item) != n for item in level):
            raise InputError(f"the value of {name} is " + ("an empty array" if n == 0 else
                             "a ragged array: its rows differ in length"), option="at",
                             names=(name,), hint="give every row the same length, at least 1")
        shape.append(n)
        level = [child for item in level for child in item]
    if any(isinstance(item, (list, tuple)) for item in level):
        raise InputError(f"the value of {name} is a ragged array: lists beside numbers",
                         option="at", names=(name,))
    check_elements(len(level), f"the value of {name}", name)
    from .engine.arrays import element_names
    if any(isinstance(value, str) for value in level):
        values = []
        for element, value in zip(element_names(name, tuple(shape)), level):
            if isinstance(value, str):
                values.append(constant_value(value, f"the value of {element}"))
                point.texts[element] = value.strip()
            else:
                values.append(value)
        level = values
    point.add_array(name, tuple(level), tuple(shape))


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a float (a header cell, a value without a name)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _several_values(text: str, parts: list[str], index: int, here: int, option: str,
                    name: str) -> InputError:
    """``x=1,2,3``: values without names after ``x=1``, meant as several points. A point has
    one value per name; the hint says how to ask for several points."""
    values = [parts[index - 1].partition("=")[2].strip()]
    for part in parts[index:]:
        if "=" in part or not is_number(part.strip()):
            break
        values.append(part.strip())
    numbers = [float(v) for v in values]
    steps = {round(b - a, 12) for a, b in zip(numbers, numbers[1:])}
    many = (f"--grid {name}={values[0]}:{values[-1]}:{len(values)}"
            if len(steps) == 1 and steps != {0} else "--points FILE (a CSV with a column "
                                                        f"{name})")
    shown = ",".join(values)
    end = here + len(parts[index].strip())
    return InputError(f"gives {name}={shown}: a point has one value per name, and "
                      f"{parts[index].strip()} has no name", (here, end), source=text,
                      option=option, names=(name,),
                      hint=f"for a value of {name} at each of {shown}, use {many}"
                      if option == "at" else f"write one value: {name}={values[0]}")


def merge_points(parts: list[dict[str, float]], option: str = "at") -> Point:
    """Several points (repeated ``at`` options) into one; a name given twice is an error. An
    array is not copied, nor its element entries made."""
    merged = Point()
    for part in parts:
        places = getattr(part, "places", {})
        if isinstance(part, Point):
            scalars, arrays, names = part.scalars(), part.arrays, part.names()
        else:
            scalars, arrays, names = part, {}, list(part)
        for name in names:
            if merged.gives(name):
                message = f"gives {name} twice"
                raise (part.error(name, message, option) if name in places
                       else InputError(message, option=option, names=(name,)))
            if name in arrays:
                merged.add_array(name, arrays[name], part.shapes[name])
            else:
                merged[name] = scalars[name]
            if name in places:
                merged.places[name] = places[name]
        merged.texts.update(getattr(part, "texts", {}))
    return merged


def check_direction(direction, inputs, arrays=None) -> None:
    """A direction names only inputs the source reads, gives an array input (``arrays``: name
    -> shape) an array of its shape, and is not zero everywhere (:class:`InputError` otherwise,
    pointing at the name when ``direction`` is a :class:`Point`)."""
    for name, shape in getattr(direction, "shapes", {}).items():
        if arrays and name in arrays and arrays[name] != shape:
            from .engine.arrays import shape_text
            message = (f"gives {name} the shape {shape_text(shape)}, and the input {name} is "
                       f"{shape_text(arrays[name])}")
            raise (direction.error(name, message, "direction") if isinstance(direction, Point)
                   else InputError(message, option="direction", names=(name,)))
    read = set(inputs)
    for name in direction:
        if name not in read:
            message = f"names {name}, which the expression does not read"
            hint = f"its inputs are: {name_list(inputs) or '(none)'}"
            raise (direction.error(name, message, "direction", hint)
                   if isinstance(direction, Point)
                   else InputError(message, hint=hint, option="direction", names=(name,)))
    if not any(direction.values()):
        raise InputError("is zero in every input, so the derivative along it is 0 by "
                         "definition", option="direction",
                         hint="give at least one input a non-zero tangent, e.g. x=1")


def _unescape(name: str) -> str:
    if "\\" not in name:
        return name
    from .language.parser import unescape_name
    return unescape_name(name)


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
        name = _unescape(name.strip())
        if not eq or not re.match(_NAME, name):
            raise InputError(f"{part!r} is not NAME=START:STOP:COUNT", option=option,
                             hint="write x=0:1:101,y=-1:1:21")
        if name in grid:
            raise InputError(f"gives {name} twice", option=option, names=(name,))
        constant_name(name, lambda message, hint: InputError(message, hint=hint, option=option,
                                                             names=(name,)))
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
