"""Batch rows you can trust: every row's float64 results kept only where their digits are proven.

The batch engine (:mod:`gradcli.engine.batch`) computes rows in float64; :mod:`gradcli.engine.bounds`
proves how many significant digits of each row are certain. Here the rows that fall short are
recomputed one by one by the certified engine (:func:`gradcli.engine.certify.certify`: ball
arithmetic at rising precision, the inputs taken as the doubles given, exactly), or marked as not
certified. ``gradcli eval --points/--grid`` (:mod:`gradcli.batchio`) and the samples behind
``gradcli plot`` (:mod:`gradcli.sampling`) both go through :func:`certify_rows`; ``--digits N``
asks for decimal text of N digits instead, through :func:`certified_texts`.

>>> import numpy as np
>>> from gradcli.engine.batch import evaluate_columns
>>> from gradcli.engine.graph import compile
>>> g = compile("(1-cos(x))/x^2")
>>> columns = {"x": np.array([1e-8, 1.0])}
>>> r = evaluate_columns(g, columns)
>>> results = [r.values, r.gradient["x"]]
>>> digits, recomputed = certify_rows(g, columns, results, r.errors, ["x"], 10, 2)
>>> results[0].tolist(), digits.tolist(), recomputed
([0.5, 0.45969769413186023], [10, 12], 1)
>>> texts, digits = certified_texts(g, columns, r.errors, ["x"], 20, 2)
>>> [t.tolist() for t in texts]
[['0.49999999999999999583', '0.45969769413186028260'], ['-8.3333333333333334521e-10', '-0.077924403455824058546']]
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .graph import Graph
from .rounding import decimal_text, round_significant

SMALLEST_NORMAL = 2.0 ** -1022


def recompute(graph: Graph, point: Mapping[str, float], wrt: list[str], digits: int):
    """One row by the certified single-point engine (ball arithmetic, issue 22): the row's
    results (each output's value, then its gradient by ``wrt``; output after output) as
    :class:`~gradcli.engine.rounding.Proven` numbers (a float, the exact value correctly rounded;
    ``.text``, its proven digits), and the fewest significant digits proven among them; None
    where that engine is not installed or cannot certify the point. The inputs are the doubles
    given, exactly."""
    try:
        from .certify import certify
    except ImportError:  # not in this build: python-flint, or the engine itself, is missing
        return None
    from ..errors import GradcliError
    singles = [graph] if graph.n_outputs == 1 else [graph.only(i) for i in range(graph.n_outputs)]
    slots = [graph.n_const + graph.inputs.index(name) for name in wrt]
    numbers = []
    try:
        for one in singles:
            result = certify(one, [point[name] for name in graph.inputs], wrt_slots=slots,
                             digits=digits)
            numbers += [result.value, *result.gradient]
    except GradcliError:
        return None
    return numbers, min(int(number.digits) for number in numbers)


def _point(graph: Graph, columns: Mapping[str, object], n: int, r: int) -> dict[str, float]:
    return {name: float(np.broadcast_to(columns[name], (n,))[r]) for name in graph.inputs}


def certify_rows(graph: Graph, columns: Mapping[str, object], results: list, errors, wrt: list[str],
                 min_digits: int, n: int, quick=None, marked: list | None = None):
    """Each row's certain digits (proven over the batch's own float64 operations); rows with
    fewer than ``min_digits`` are recomputed by the certified engine (``results``, the float64
    columns in :func:`recompute`'s order, are updated in place), or marked not certified in
    ``errors`` (their results NaN). The digits per row, and how many rows were recomputed.
    ``quick``: the bounds' :class:`~gradcli.engine.bounds.QuickTest` run beside the batch sweep
    (``watch``); only the rows it left are bounded one by one (the same rows fall short), and
    the digits are None. ``marked``: a list that gets the rows marked not certified."""
    from .bounds import certain_digits
    if quick is None:
        digits = found = certain_digits(graph, columns, wrt=wrt)
        index = None
    else:
        digits, index = None, np.flatnonzero(quick.suspects())
        if not len(index):  # every row proven by the quick test
            return digits, 0
        found = certain_digits(graph, columns, wrt=wrt, rows=index)
    fine = np.equal(errors, None) if index is None else np.equal(errors[index], None)
    short = np.flatnonzero((found < min_digits) & fine)
    for i in short:
        r = i if index is None else int(index[i])
        again = recompute(graph, _point(graph, columns, n, r), wrt, min_digits)
        if again is not None:
            numbers, found[i] = again
            for column, number in zip(results, numbers):
                column[r] = float(number)
            if found[i] >= min_digits:
                continue
            errors[r] = (f"not certified: {int(found[i])} significant digits are certain "
                         f"({min_digits} asked), at the certified engine's highest precision")
        else:
            errors[r] = (f"not certified: {int(found[i])} significant digits are certain in "
                         f"float64 ({min_digits} asked) and the certified engine is not "
                         "available")
        for column in results:
            column[r] = np.nan
        if marked is not None:
            marked.append(int(r))
    return digits, len(short)


def swept(graph: Graph, columns: Mapping[str, object], wrt: list[str], watch=None):
    """The batch engine's sweep of ``columns`` (``watch``: the bounds' quick test, run beside
    it), and its result columns in :func:`recompute`'s order: each output's value, then its
    gradient by ``wrt``, output after output."""
    from .batch import evaluate_columns, jacobian_columns
    if graph.n_outputs == 1:
        result = evaluate_columns(graph, columns, wrt=wrt, watch=watch)
        return result, [result.values] + [result.gradient[name] for name in wrt]
    result = jacobian_columns(graph, columns, wrt=wrt, watch=watch)  # a row of the Jacobian each
    return result, [array for output in result.outputs
                    for array in [result.values[output]] + [result.jacobian[output][name]
                                                            for name in wrt]]


def certified_batch(graph: Graph, columns: Mapping[str, object], wrt: list[str] | None = None,
                    with_digits: bool = False):
    """The batch engine's result (:func:`~gradcli.engine.batch.evaluate_columns` for one output,
    :func:`~gradcli.engine.batch.jacobian_columns` for several) with every row's digits accounted
    for, as ``eval --points`` writes them: each number has at least
    :data:`~gradcli.engine.bounds.MIN_DIGITS` proven significant digits (a row the bound cannot
    vouch for is recomputed by the certified engine), or the row fails as not certified. With
    ``with_digits``, ``result.digits`` holds each row's proven digits (0 for a failed row); that
    bounds every row on its own, which costs about three sweeps more."""
    from .batch import as_columns
    from .bounds import MIN_DIGITS, QuickTest
    from .graph import wrt_names
    wrt = wrt_names(graph, wrt)
    n, arrays = as_columns(graph, columns)
    arrays["\0rows"] = np.broadcast_to(0.0, (n,))  # the row count, when no input is a column
    quick = None if with_digits else QuickTest(graph, arrays, wrt=wrt, enough=MIN_DIGITS)
    result, results = swept(graph, arrays, wrt, quick)
    errors = result.errors
    marked: list[int] = []
    digits, _ = certify_rows(graph, arrays, results, errors, wrt, MIN_DIGITS, n, quick, marked)
    if marked:  # the result keeps its failures by row too
        result.messages = {**result.messages, **{r: errors[r] for r in marked}}
    if with_digits:
        digits = digits.astype(np.int64)
        digits[list(result.messages)] = 0
        result.digits = digits
    return result


def _text_from_bound(value: float, d: int, n: int) -> str | None:
    """``value``'s exact neighbour to ``n`` significant digits, correctly rounded, when every
    number within ``|value|·10^-d`` of it rounds to the same text (the bound proves d digits:
    its error is at most half that); None when the two ends round apart, or the value is too
    small (zero, subnormal) for a relative bound to say anything."""
    if not abs(value) >= SMALLEST_NORMAL or value != value or abs(value) == float("inf"):
        return None
    num, den = value.as_integer_ratio()
    p = 10 ** d  # the ends: value·(1 ∓ 10^-d), as fractions over den·10^d
    den *= p
    a = round_significant(num * (p - 1), den, n)
    if a != round_significant(num * (p + 1), den, n):
        return None
    return decimal_text(*a, n)


def certified_texts(graph: Graph, columns: Mapping[str, object], errors, wrt: list[str],
                    n_digits: int, n: int, values: list | None = None):
    """Every row's results as decimal text of ``n_digits`` significant digits, each proven and
    correctly rounded (``gradcli eval --points/--grid --digits N``): where the float64 bound
    proves enough digits the text is rounded from the double (checked at both ends of the
    bound), otherwise the row is recomputed by the certified engine. A row that engine cannot
    certify to N digits is marked in ``errors`` (its texts None). ``values``: the float64
    result columns (default: computed here). Gives the text columns (object arrays) and the
    digits per row (``n_digits``, or 0 for a failed row)."""
    from .bounds import certain_digits
    if values is None:
        values = swept(graph, columns, wrt)[1]
    bound = certain_digits(graph, columns, wrt=wrt)
    texts = [np.full(n, None, dtype=object) for _ in values]
    digits = np.zeros(n, dtype=np.int64)
    # rows float64 could not hold (exp(1000) overflows a double) are the certified engine's too:
    # their text needs no double
    beyond = [r for r, e in enumerate(errors) if e is not None and "64-bit float" in str(e)]
    for r in sorted([*np.flatnonzero(np.equal(errors, None)), *beyond]):
        row = None
        if errors[r] is None and bound[r] >= n_digits:
            row = [_text_from_bound(float(column[r]), int(bound[r]), n_digits)
                   for column in values]
            if any(text is None for text in row):
                row = None
        if row is None:
            again = recompute(graph, _point(graph, columns, n, r), wrt, n_digits)
            if errors[r] is not None and (again is None or again[1] < n_digits):
                continue  # float64's own error stands
            if again is None or again[1] < n_digits:
                errors[r] = ("not certified: the certified engine is not available" if again
                             is None else f"not certified: {again[1]} significant digits are "
                             f"certain ({n_digits} asked), at the certified engine's highest "
                             "precision")
                continue
            row = [number.text for number in again[0]]
            errors[r] = None
        for column, text in zip(texts, row):
            column[r] = text
        digits[r] = n_digits
    return texts, digits
