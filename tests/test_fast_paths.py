"""The representations chosen for speed keep the engine's behaviour: spans, visit order."""

import math

from gradcli import compile, evaluate
from gradcli.engine.forward import forward
from gradcli.engine.reverse import visit_order


def test_a_dead_statement_is_not_visited_even_where_it_has_no_derivative():
    # sqrt'(0) is infinite; the result does not use a, so the sweep must not visit it
    result = evaluate("a = sqrt(x)\nx*2", {"x": 0.0})
    assert result.gradient == {"x": 2.0}
    graph = compile("a = sqrt(x)\nb = x*2\nb + 1")
    order = [graph.node_id(s) for s in visit_order(graph)]
    assert order == ["v3", "v2"]  # v1 = sqrt(x) is dead; b + 1 is deepest


def test_visit_order_is_deepest_level_first_left_to_right_within_a_level():
    graph = compile("sin(x)*cos(y) + exp(x)")  # levels: [sin, cos, exp], [*], [+]
    assert [graph.node_id(s) for s in visit_order(graph)] == ["v5", "v4", "v1", "v2", "v3"]
    values = forward(graph, [0.3, 0.4])
    assert values[graph.output] == math.sin(0.3) * math.cos(0.4) + math.exp(0.3)


def test_spans_index_like_a_list_of_pairs():
    source = "log(x) + x*y"
    graph = compile(source)
    spans = [graph.spans[k] for k in range(len(graph.ops))]
    assert [source[a:b] for a, b in spans] == ["log(x)", "x*y", "log(x) + x*y"]
    assert len(graph.spans) == 3 and list(graph.spans) == spans
