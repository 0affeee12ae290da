"""Every ``--json`` object, built from records in this one module (schema: ``docs/json.md``).

Each function takes the plain records a command computed (results, traces, checks, catalogue
rows) and gives a dict of JSON types, keys in a fixed order; non-finite numbers become ``null``
where they can occur (a numerical derivative that could not be estimated). The CLI only calls
one of these and prints ``dumps(...)``.

>>> from gradcli.api import evaluate
>>> data = eval_json(evaluate("x*y", {"x": 2, "y": 3}))
>>> list(data), data["gradient"], data["mode"]
(['source', 'source_read', 'inputs', 'value', 'gradient', 'seed', 'mode', 'certified', 'decimal', 'digits', 'float64', 'float64_digits'], {'x': 3.0, 'y': 2.0}, 'reverse')
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the records are imported only where a trace is written
    from ..records import ForwardRow, TangentTrace, Trace


def dumps(data, indent: int | None = None, ascii: bool = False) -> str:
    """JSON text (one line unless ``indent``); UTF-8 characters (``∂``, ``θ``) kept as they are
    unless ``ascii``."""
    return json.dumps(data, ensure_ascii=ascii, indent=indent)


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _each(entries, f):
    """``f`` of every number of ``entries`` (name -> number), keyed alike; arrays held whole
    (:class:`gradcli.engine.arraynodes.Elements`) stay whole, with no entry per element."""
    mapped = getattr(entries, "mapped", None)
    if mapped is not None:
        return mapped(f)
    return {name: f(x) for name, x in entries.items()}


def _texts(x):
    """Proven numbers (one, or a dict or list of them, nested) as their printed strings."""
    if isinstance(x, (list, tuple)):
        return [_texts(v) for v in x]
    return _each(x, _texts) if hasattr(x, "items") else x.text


def _proven(x) -> list:
    """The proven numbers of ``x`` (as :func:`_texts` reads it), in a flat list."""
    if isinstance(x, (list, tuple)):
        return [n for v in x for n in _proven(v)]
    if hasattr(x, "flat"):  # arrays held whole
        return x.flat()
    return [n for v in x.values() for n in _proven(v)] if hasattr(x, "items") else [x]


def _decimal(**groups) -> dict:
    """``decimal``: each group of proven numbers as its printed strings; ``digits``: how many
    significant digits are proven, the fewest of any number."""
    return {"decimal": {key: _texts(x) for key, x in groups.items()},
            "digits": min(x.digits for x in _proven(list(groups.values())))}


def _number(x: float) -> float | None:
    """A number as JSON: a plain float (a proven one is the exact value correctly rounded to a
    double), ``null`` beyond the double range."""
    return float(x) if math.isfinite(x) else None


def _source(source) -> dict:
    """``source``, the text as given, and ``source_read``, the same program as gradcli read it,
    in the explicit spelling (``2x^2`` -> ``2*x^2``, ``|x|`` -> ``abs(x)``). ``source`` may be
    the graph compiled from it, which may hold that reading already."""
    from ..engine.graph import read_back
    return {"source": getattr(source, "source", source), "source_read": read_back(source)[0]}


def _read(result) -> dict:
    """:func:`_source` of a result: its graph's reading, when it has a graph."""
    graph = getattr(result, "graph", None)
    return _source(result.source if graph is None else graph)


def precision_json(result) -> dict:
    """The keys about digits: ``certified``; for a certified result, ``decimal`` (the printed
    proven strings), ``digits`` (how many significant digits are proven, the fewest of any
    number), ``float64`` (what plain float64 gives, ``null`` where it fails) and
    ``float64_digits`` (how many of the digits float64 gets right)."""
    if not getattr(result, "proven", False):
        return {"certified": False}
    data = {"certified": True, **_decimal(value=result.value, gradient=result.gradient)}
    f64 = result.float64
    if f64 is not None:
        data["float64"] = {"value": None if f64.value is None else _finite(f64.value),
                           "gradient": (None if f64.gradient is None else
                                        _each(f64.gradient, _finite))}
        data["float64_digits"] = {"value": f64.value_digits, "gradient": f64.gradient_digits}
        if f64.error is not None:
            data["float64"]["error"] = f64.error
    return data


# -- gradcli eval -----------------------------------------------------------------------------

def eval_json(result, trace: Trace | TangentTrace | None = None, check=None) -> dict:
    """``eval --json``: the result (:class:`gradcli.api.Result` or ``ForwardResult``), with its
    trace (``--trace``) and its check (``--check``/``--expect``) when given."""
    data = {**_read(result), "inputs": result.inputs, "value": _number(result.value),
            "gradient": _each(result.gradient, _number),
            "seed": result.seed, "mode": result.mode}
    data.update(precision_json(result))
    if result.mode == "forward" and result.directional is not None:
        del data["gradient"]  # one sweep along a direction: no gradient
        data["direction"] = result.direction
        data["directional"] = result.directional
    if trace is not None:
        data["trace"] = trace_json(trace)
    if check is not None:
        data["check"] = check_json(check)
    return _nested(data, result.graph.arrays, "inputs", "gradient", "decimal.gradient",
                   "float64.gradient", "float64_digits.gradient")


def singular_json(error, source: str | None = None, message: str | None = None,
                  hint: str | None = None) -> dict:
    """``eval --json`` where the value exists but a gradient component does not (a
    :class:`gradcli.errors.SingularGradientError`): the result, ``null`` for each such
    component, ``singular`` (input name -> ``limit``: ``"+inf"``, ``"-inf"`` or null, and the
    ``reason``) and the ``error``, all in one object."""
    from .errors import error_object
    data = eval_json(error.result)
    data["gradient"] = {name: _finite(g) for name, g in data["gradient"].items()}
    data["singular"] = {name: {"limit": None if math.isnan(g) else ("+inf" if g > 0 else "-inf"),
                               "reason": error.reason}
                        for name, g in error.limits.items()}
    data.update(error_object(error, source, message=message, hint=hint))
    return data


def trace_json(trace: Trace | TangentTrace) -> dict:
    """``trace`` of ``eval --json --trace``: reverse mode's three tables, or forward mode's one."""
    from ..records import TangentTrace  # only with --trace: a plain eval --json does not load it
    if isinstance(trace, TangentTrace):  # values with their tangents; no reverse sweep
        forward = []
        for r in trace.rows:
            item = _row_json(r.row)
            if r.row.op != "input":
                item["partials"] = list(r.partials)
            if trace.sweeps == ["direction"]:
                item["tangent"] = r.tangents[0]
            else:
                item["tangents"] = dict(zip(trace.sweeps, r.tangents))
            forward.append(item)
        return {"forward": forward, "output": trace.output}
    return {"forward": [_row_json(row) for row in trace.forward], **_sweep_json(trace),
            "output": trace.output}


def array_trace_json(trace) -> dict:
    """``trace.arrays`` of ``eval --json --trace`` for a program with array values
    (:class:`gradcli.arraytrace.ArrayTrace`): every row's and rule's arrays in full, as nested
    lists of their shapes, beside the preview the table shows."""
    from ..engine.arrays import nested
    from .arrays import preview

    def full(values, shape):
        if values is None:
            return None
        return nested([_number(v) for v in values], shape)
    forward = []
    for row in trace.forward:
        item = {"id": row.id, "kind": row.kind, "expr": row.expr, "source": row.source,
                "args": list(row.args) if row.kind != "input" else [],
                "shape": list(row.shape), "value": full(row.values, row.shape),
                "preview": preview(row.values, row.shape)}
        if row.names:
            item["names"] = list(row.names)
        if row.is_output:
            item["output"] = True
        forward.append(item)
    rules = [{"from": r.source, "to": r.target, "equation": r.equation, "rule": r.rule,
              "upstream": full(r.upstream, r.upstream_shape),
              "contribution": full(r.contribution, r.shape), "shape": list(r.shape)}
             for r in trace.rules]
    adjoints = [{"id": a.id, "shape": list(a.shape), "adjoint": full(a.adjoint, a.shape),
                 "from": list(a.terms)} for a in trace.adjoints]
    return {"forward": forward, "rules": rules, "adjoints": adjoints, "output": trace.output}


def _row_json(row: ForwardRow) -> dict:
    item = {"id": row.id, "op": row.op, "args": list(row.args), "expr": row.expr,
            "value": row.value}
    if row.names:
        item["name"] = ", ".join(row.names)
    if row.outputs:  # several outputs: the ones this node is
        item["outputs"] = list(row.outputs)
    if row.step:
        item["step"] = row.step
    return item


def _sweep_json(trace: Trace) -> dict:
    """One reverse sweep's contributions and adjoints (with the seeds of a VJP's sweep)."""
    data = {"contributions": [{"from": c.source, "to": c.target, "upstream": c.upstream,
                               "local": c.local, "local_expr": c.local_expr,
                               "contribution": c.contribution}
                              for c in trace.contributions],
            "adjoints": {row.id: row.adjoint for row in trace.adjoints}}
    if trace.seeds:
        data["seeds"] = dict(trace.seeds)
    return data


def check_json(check) -> dict:
    """``check`` of ``eval --check --json``: one row per gradient component (a
    :class:`gradcli.check.Check`)."""
    rows = []
    for r in check.rows:
        item = {"input": r.input, "ad": _number(r.ad), "numeric": _finite(r.numeric),
                "numeric_error": _finite(r.numeric_error), "abs_error": _finite(r.abs_error),
                "rel_error": _finite(r.rel_error), "ok": r.ok, "status": r.status,
                "step": _finite(r.step), "scheme": r.scheme}
        if r.note:
            item["note"] = r.note
        if r.expected is not None:
            e = r.expected
            item["expected"] = {"formula": e.formula, "value": _number(e.value), "ad": _number(e.ad),
                                "abs_error": _finite(e.abs_error), "rel_error": _finite(e.rel_error),
                                "ok": e.ok}
        rows.append(item)
    return _check_summary(check, rows)


def _check_summary(check, rows: list) -> dict:
    """A check's verdict and tolerances, then its ``rows``."""
    return {"ok": check.ok, "rtol": check.rtol, "atol": check.atol, "strict": check.strict,
            "inconclusive": check.inconclusive, "rows": rows}


# -- gradcli eval of several outputs ----------------------------------------------------------

def jacobian_json(result, trace=None, check=None) -> dict:
    """``eval --json`` of a program with several outputs: a :class:`gradcli.api.JacobianResult`
    (``values``, ``jacobian`` output -> input -> number, ``outputs``, ``mode``, ``sweeps``) or a
    ``ProductResult`` (``cotangent`` and ``vjp``, or ``direction`` and ``jvp``)."""
    data = {**_read(result), "inputs": result.point, "outputs": list(result.outputs),
            "values": {o: _number(v) for o, v in result.values.items()}}
    if result.kind == "jacobian":
        data["jacobian"] = {o: {i: _number(x) for i, x in r.items()}
                            for o, r in result.jacobian.items()}
        data["mode"], data["sweeps"] = result.mode, result.sweeps
        data["certified"] = result.proven
        if result.proven:
            data.update(_decimal(values=result.values, jacobian=result.jacobian))
    else:
        data["mode"] = result.mode
        weights, product = ("cotangent", "vjp") if result.kind == "vjp" else ("direction", "jvp")
        data[weights] = dict(result.weights)
        data[product] = {k: _number(x) for k, x in result.product.items()}
        data["certified"] = result.proven
        if result.proven:
            data.update(_decimal(**{"values": result.values, product: result.product}))
    if trace is not None:
        data["trace"] = outputs_trace_json(trace)
    if check is not None:
        data["check"] = jacobian_check_json(check)
    graph = result.graph
    if graph is not None and graph.output_arrays:  # an array output: its elements' shape
        data["output_shapes"] = {name: list(shape) for name, shape in graph.output_arrays.items()}
    if graph is not None and graph.arrays:  # what is keyed by input is nested, as eval's
        data = _nested(data, graph.arrays, "inputs", "vjp", "decimal.vjp")
    return data


def outputs_trace_json(trace) -> dict:
    """``trace`` with several outputs: a ``JacobianTrace`` (``forward`` rows, then in reverse
    mode ``sweeps``, one per output; in forward mode each row carries its tangent per input), or
    a product's one sweep (a reverse sweep seeded on every output, or a tangent sweep)."""
    from ..records import TangentTrace, Trace
    if isinstance(trace, (Trace, TangentTrace)):  # a product's one sweep
        return trace_json(trace)
    if trace.mode == "forward":
        return {"forward": trace_json(trace.tangents)["forward"], "outputs": trace.outputs}
    return {"forward": [_row_json(row) for row in trace.forward],
            "sweeps": [{"output": name, **_sweep_json(sweep)} for name, sweep in trace.sweeps],
            "outputs": trace.outputs}


def jacobian_check_json(check) -> dict:
    """``check`` with several outputs: one entry per (output, input) of the Jacobian (a
    :class:`gradcli.check.JacobianCheck`)."""
    return _check_summary(check, [{"output": name, **item} for name, c in check.rows.items()
                                  for item in check_json(c)["rows"]])


# -- gradcli hessian --------------------------------------------------------------------------

def hessian_json(result, check=None) -> dict:
    """``hessian --json``: a :class:`gradcli.api.HessianResult`, with its check when given."""
    data = {**_gradient_at(result),
            "hessian": [[_number(x) for x in row] for row in result.hessian],
            "certified": result.proven}
    if result.proven:
        data.update(_decimal(value=result.value, gradient=result.gradient,
                             hessian=result.hessian))
    if check is not None:
        data["check"] = hessian_check_json(check)
    return _nested(data, result.graph.arrays, "inputs", "gradient", "decimal.gradient")


def _gradient_at(result) -> dict:
    """The keys a Hessian's JSON starts with: the source, the point, ``wrt``, the value and
    the gradient."""
    return {**_read(result), "inputs": result.point, "wrt": result.inputs,
            "value": _number(result.value), "gradient": _each(result.gradient, _number)}


def hvp_json(result) -> dict:
    """``hessian --direction --json``: a :class:`gradcli.api.HvpResult`: ``product`` is H·v by
    input (an array input's in its shape, as ``gradient``)."""
    data = {**_gradient_at(result), "direction": result.direction,
            "product": {name: _number(p) for name, p in result.product.items()},
            "certified": result.proven}
    if result.proven:
        data.update(_decimal(value=result.value, gradient=result.gradient,
                             product=result.product))
    return _nested(data, result.graph.arrays, "inputs", "gradient", "direction", "product",
                   "decimal.gradient", "decimal.product")


def _nested(data: dict, arrays: dict, *paths: str) -> dict:
    """``data`` with the entries at ``paths`` (``"inputs"``, ``"decimal.gradient"``; one that
    ``data`` lacks is passed over) keyed by input, an array input's as nested lists of its
    shape, and ``shapes``: as eval's JSON."""
    if not arrays:
        return data
    from ..engine.arrays import nest_entries
    for path in paths:
        *outer, key = path.split(".")
        holder = data.get(outer[0]) if outer else data
        if holder is not None and key in holder:
            holder[key] = nest_entries(holder[key], arrays)
    data["shapes"] = {name: list(shape) for name, shape in arrays.items()}
    return data


def hessians_json(results: dict, checks: dict) -> dict:
    """``hessian --json`` of several outputs: ``outputs`` and ``hessians`` (output -> its
    ``value``, ``gradient``, ``hessian`` and ``check``)."""
    first = next(iter(results.values()))
    hessians = {}
    for name, result in results.items():
        one = hessian_json(result, checks.get(name))
        del one["source"], one["source_read"], one["inputs"], one["wrt"]
        one.pop("shapes", None)
        hessians[name] = one
    data = {**_read(first), "inputs": first.point, "wrt": first.inputs,
            "outputs": list(results), "hessians": hessians}
    return _nested(data, first.graph.arrays, "inputs")


def hessian_check_json(check) -> dict:
    """``check`` of ``hessian --check --json``: one entry per (row, column) of H (a
    :class:`gradcli.check.HessianCheck`)."""
    return _check_summary(check, [{"row": name, "column": item.pop("input"), **item}
                                  for name, c in check.rows.items()
                                  for item in check_json(c)["rows"]])


# -- gradcli diff, codegen, functions -------------------------------------------------------

def diff_json(source: str, derivatives: dict, order: int, outputs: list[str] | None = None,
              mixed: list[str] | None = None, values: dict | None = None,
              shapes: dict | None = None) -> dict:
    """``diff --json``: the ``source``, input name -> the derivative as source text, and the
    order (``mixed``: the list of names differentiated by, in turn). With several outputs,
    ``derivatives`` is output -> input -> text, and ``outputs`` their order. With ``--at``,
    ``values``: each derivative's value there, keyed as ``derivatives`` (an array input's as
    nested lists); with array inputs, ``shapes``: each one's shape."""
    data: dict = {**_source(source), "derivatives": derivatives}
    if outputs is not None:
        data["outputs"] = outputs
    data.update({"mixed": mixed} if mixed is not None else {"order": order})
    if values is not None:
        data["values"] = values
    if shapes:
        data["shapes"] = {name: list(shape) for name, shape in shapes.items()}
    return data


def steps_json(source: str, derivations: list, partial: bool) -> dict:
    """``diff --steps --json``: for each input differentiated by, the derivation's steps (the
    rule's key and name, the table row it comes from, whether the chain rule joins it, the
    expression it differentiates, its rewrite before and after, and the whole derivative
    after it) and the result, every text in gradcli's syntax with ``d/dx(u)`` for a pending
    derivative."""
    from .steps import local, rule_title, written
    out = []
    for d in derivations:
        steps = []
        for step in d.steps:
            before, after = local(step, d, partial)
            steps.append({"rule": step.rule, "title": rule_title(step), "row": step.row,
                          "chain": step.chain, "of": step.of, "before": before, "after": after,
                          "line": written(step.line, d, partial)})
        out.append({"wrt": d.wrt, "start": written(d.start, d, partial), "steps": steps,
                    "result": d.result})
    return {"source": source, "derivations": out}


def graph_json(picture, source: str, point: dict | None = None) -> dict:
    """``graph --json``: the nodes (in tape order, with their values and adjoints at a point)
    and the edges (argument -> operation, with the local derivative at a point), as drawn."""
    data: dict = _source(source)
    if point is not None:
        data["inputs"] = {name: _number(value) for name, value in point.items()}
    from ..engine.arrays import nested

    def number(x, shape):  # an array operation's node: its elements, nested in its shape
        if shape is None or x is None:
            return _finite(x)
        return nested([_finite(v) for v in x], shape)
    data["nodes"] = [{
        "id": node.id, "kind": node.kind, "label": node.label, "names": list(node.names),
        "output": node.is_output,
        **({"shape": list(node.shape)} if node.shape is not None else {}),
        **({"value": number(node.value, node.shape), "adjoint": number(node.adjoint, node.shape)}
           if picture.annotated else {})} for node in picture.nodes]
    data["edges"] = [{
        "source": picture.nodes[edge.source].id, "target": picture.nodes[edge.target].id,
        "position": edge.position, **({"local": _finite(edge.local)} if picture.annotated else {})}
        for edge in picture.edges]
    data["shown"], data["total"] = len(picture.nodes), picture.total
    return data


def plot_json(source: str, at: dict, columns: dict) -> dict:
    """``plot --json``: the samples, a list per column as ``--format csv`` names them (``x``,
    ``f``, ``df/dx``, …), an undefined sample ``null``; ``inputs``: the values --at fixes."""
    return {**_source(source), "inputs": {name: _number(v) for name, v in at.items()},
            "samples": {name: [_finite(float(v)) for v in values]
                        for name, values in columns.items()}}


def codegen_json(generated, files: list[str]) -> dict:
    """``codegen --json``: a :class:`gradcli.code.Generated`, and the ``files`` written (-o)."""
    data = {**_source(generated.source), "lang": generated.lang, "mode": generated.mode,
            "functions": generated.functions, "parameters": generated.parameters,
            "wrt": generated.wrt, "outputs": generated.outputs, "returns": generated.returns,
            "code": generated.code}
    if generated.header is not None:
        data["header"] = generated.header
    if files:
        data["files"] = files
    return data


def functions_json(rows: list[dict]) -> list[dict]:
    """``functions --json``: the catalogue's rows (:func:`gradcli.views.catalogue.catalogue`)."""
    return rows
