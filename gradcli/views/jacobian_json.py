"""The ``--json`` objects of programs with several outputs (docs/json.md lists every key).

With one output, ``eval --json`` keeps its keys (``value``, ``gradient``); with several it gives
``values`` (output -> number), ``jacobian`` (output -> input -> number), ``outputs`` (their
order) and ``mode``. A product gives ``vjp`` (input -> number, with the ``cotangent``) or ``jvp``
(output -> number, with the ``direction``) instead of ``jacobian``.
"""

from __future__ import annotations


def jacobian_json(result) -> dict:
    """A :class:`gradcli.api.JacobianResult` as a JSON object."""
    return {"source": result.source, "inputs": result.point, "outputs": list(result.outputs),
            "values": dict(result.values), "jacobian": {o: dict(r) for o, r in
                                                        result.jacobian.items()},
            "mode": result.mode, "sweeps": result.sweeps}


def product_json(result) -> dict:
    """A :class:`gradcli.api.ProductResult` (a VJP or a JVP) as a JSON object."""
    data = {"source": result.source, "inputs": result.point, "outputs": list(result.outputs),
            "values": dict(result.values), "mode": result.mode}
    if result.kind == "vjp":
        data["cotangent"] = dict(result.weights)
        data["vjp"] = dict(result.product)
    else:
        data["direction"] = dict(result.weights)
        data["jvp"] = dict(result.product)
    return data


def row_json(row) -> dict:
    item = {"id": row.id, "op": row.op, "args": list(row.args), "expr": row.expr,
            "value": row.value}
    if row.names:
        item["name"] = ", ".join(row.names)
    if row.outputs:
        item["outputs"] = list(row.outputs)
    return item


def sweep_json(trace) -> dict:
    """One reverse sweep: its contributions and adjoints."""
    data = {"contributions": [{"from": c.source, "to": c.target, "upstream": c.upstream,
                               "local": c.local, "contribution": c.contribution}
                              for c in trace.contributions],
            "adjoints": {row.id: row.adjoint for row in trace.adjoints}}
    if trace.seeds:
        data["seeds"] = dict(trace.seeds)
    return data


def tangent_json(trace) -> list:
    rows = []
    for r in trace.rows:
        item = row_json(r.row)
        if r.row.op != "input":
            item["partials"] = list(r.partials)
        item["tangents"] = dict(zip(trace.sweeps, r.tangents))
        rows.append(item)
    return rows


def jacobian_trace_json(trace) -> dict:
    """A :class:`gradcli.views.trace.JacobianTrace`: ``forward`` (rows, each with its tangent
    per input in forward mode) and, in reverse mode, ``sweeps``: one per output."""
    if trace.mode == "forward":
        return {"forward": tangent_json(trace.tangents), "outputs": trace.outputs}
    return {"forward": [row_json(row) for row in trace.forward],
            "sweeps": [{"output": name, **sweep_json(sweep)} for name, sweep in trace.sweeps],
            "outputs": trace.outputs}


def product_trace_json(trace) -> dict:
    """The one sweep of a VJP (a reverse-sweep trace) or a JVP (a tangent trace)."""
    if hasattr(trace, "sweeps"):
        return {"forward": tangent_json(trace)}
    return {"forward": [row_json(row) for row in trace.forward], **sweep_json(trace)}
