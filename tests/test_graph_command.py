"""gradcli graph: the picture's nodes and edges, the terminal drawing, DOT, Mermaid, -o, the cap.

Expected numbers are derived by hand from the seed computation y = log(x) + x*y - sin(y):
v1 = log x, v2 = x*y, v3 = sin y, v4 = v1 + v2, v5 = v4 - v3; local derivatives 1/x, y, x, cos y
on the first layer of edges, 1 and 1 into v4, 1 and -1 into v5; adjoints backwards from v̄5 = 1.
The terminal drawing is checked by following its lines from every box to the arrowheads they
reach, so a test fails if any edge is drawn to the wrong place.
"""

import math
import re

import pytest

from gradcli.api import compile, evaluate_graph
from gradcli.diagrams import dot_string, mermaid_text, record_field, to_dot, to_mermaid
from gradcli.picture import build_picture

SEED = "log(x)+x*y-sin(y)"
SEED_EDGES = [("x", "v1", 0), ("x", "v2", 0), ("y", "v2", 1), ("y", "v3", 0),
              ("v1", "v4", 0), ("v2", "v4", 1), ("v4", "v5", 0), ("v3", "v5", 1)]


def by_hand(x, y):
    """The seed example at (x, y): node -> (value, adjoint), edge -> local derivative."""
    v1, v2, v3 = math.log(x), x * y, math.sin(y)
    v4 = v1 + v2
    v5 = v4 - v3
    a5 = 1.0
    a4, a3 = a5 * 1, a5 * -1
    a1, a2 = a4 * 1, a4 * 1
    ax = a1 / x + a2 * y
    ay = a2 * x + a3 * math.cos(y)
    nodes = {"x": (x, ax), "y": (y, ay), "v1": (v1, a1), "v2": (v2, a2), "v3": (v3, a3),
             "v4": (v4, a4), "v5": (v5, a5)}
    local = {("x", "v1", 0): 1 / x, ("x", "v2", 0): y, ("y", "v2", 1): x,
             ("y", "v3", 0): math.cos(y), ("v1", "v4", 0): 1, ("v2", "v4", 1): 1,
             ("v4", "v5", 0): 1, ("v3", "v5", 1): -1}
    return nodes, local


def annotated(source, at):
    """The picture of ``source`` annotated at the point ``at``."""
    graph = compile(source)
    return build_picture(graph, evaluate_graph(graph, at).values)


def edge_triples(picture):
    return sorted((picture.nodes[e.source].id, picture.nodes[e.target].id, e.position)
                  for e in picture.edges)


# -- the picture (format-independent records) ---------------------------------------------------

def test_seed_example_has_5_operations_2_inputs_8_edges_in_4_layers():
    picture = build_picture(compile(SEED))
    assert picture.count("operation") == 5 and picture.count("input") == 2
    assert len(picture.nodes) == 7 and len(picture.edges) == 8
    assert edge_triples(picture) == sorted(SEED_EDGES)
    assert [[picture.nodes[i].id for i in layer] for layer in picture.layers()] == [
        ["x", "y"], ["v1", "v2", "v3"], ["v4"], ["v5"]]
    assert [n.label for n in picture.nodes] == [
        "input", "input", "log(x)", "x * y", "sin(y)", "v1 + v2", "v4 - v3"]
    assert picture.nodes[picture.output].id == "v5" and not picture.annotated


def test_shared_node_x_times_x_has_two_edges_from_x():
    picture = annotated("x*x", {"x": 3})
    assert edge_triples(picture) == [("x", "v1", 0), ("x", "v1", 1)]
    assert [e.local for e in picture.edges] == [3, 3]  # d(a*b)/da = b, d(a*b)/db = a, a = b = 3
    assert picture.nodes[0].adjoint == 6


@pytest.mark.parametrize("x, y", [(2, 3), (2, 5), (0.5, -1)])
def test_annotations_are_the_values_adjoints_and_local_derivatives(x, y):
    picture = annotated(SEED, {"x": x, "y": y})
    nodes, local = by_hand(x, y)
    for node in picture.nodes:
        value, adjoint = nodes[node.id]
        assert node.value == pytest.approx(value, rel=1e-14)
        assert node.adjoint == pytest.approx(adjoint, rel=1e-14)
    for e in picture.edges:
        key = (picture.nodes[e.source].id, picture.nodes[e.target].id, e.position)
        assert e.local == pytest.approx(local[key], rel=1e-14)


def test_constants_are_inside_operations_and_names_on_their_nodes():
    picture = build_picture(compile("2*x + 1"))
    assert [(n.id, n.kind, n.label) for n in picture.nodes] == [
        ("x", "input", "input"), ("v1", "operation", "2 * x"), ("v2", "operation", "v1 + 1")]
    assert edge_triples(picture) == [("v1", "v2", 0), ("x", "v1", 1)]
    picture = build_picture(compile("c = x*y; c += c + 1; c"))
    assert {n.id: n.names for n in picture.nodes if n.names} == {"v1": ("c#1",), "v3": ("c#2",)}
    picture = build_picture(compile("2*pi + 1"))  # folded: the result is a constant
    assert [(n.id, n.kind) for n in picture.nodes] == [(repr(2 * math.pi + 1), "constant")]
    assert picture.edges == [] and picture.nodes[picture.output].is_output


def test_nodes_the_output_does_not_read_are_drawn_as_unused():
    picture = build_picture(compile("a = x*y; z"))
    assert {n.id: n.live for n in picture.nodes} == {"x": False, "y": False, "z": True,
                                                     "v1": False}
    assert picture.nodes[picture.output].id == "z"


def test_the_cap_keeps_the_nodes_nearest_the_output():
    source = "+".join(["x"] * 100)  # v1 = x + x, v2 = v1 + x, ..., v99 = v98 + x
    picture = build_picture(compile(source), max_nodes=6)
    assert picture.total == 100 and picture.left_out == 94
    shown = [n.id for n in picture.nodes if n.kind != "hidden"]
    assert shown == ["x", "v95", "v96", "v97", "v98", "v99"]
    assert [n.id for n in picture.nodes if n.kind == "hidden"] == ["v94"]
    assert ("v94", "v95", 0) in edge_triples(picture)  # where the left-out part connects
    assert len(build_picture(compile(source), max_nodes=0).nodes) == 100


# -- DOT and Mermaid ----------------------------------------------------------------------------

QUOTED = r'"(?:[^"\\]|\\.)*"'


def check_dot(text):
    """A small structural check of DOT: braces balance outside strings, every statement is a
    node, an edge or a rank group, every edge's ends are declared. Returns (nodes, edges)."""
    depth = 0
    for token in re.split(f"({QUOTED})", text):
        if token.startswith('"'):
            continue
        assert '"' not in token, "an unterminated string"
        for ch in token:
            depth += {"{": 1, "}": -1}.get(ch, 0)
            assert depth >= 0
    assert depth == 0
    lines = text.strip().splitlines()
    assert lines[0] == "digraph gradcli {" and lines[-1] == "}"
    nodes, edges = {}, []
    for line in lines[1:-1]:
        line = line.strip()
        if m := re.fullmatch(rf"(n\d+) \[label=({QUOTED})(, [a-z]+=[\w.]+)*\];", line):
            nodes[m[1]] = m[2]
        elif m := re.fullmatch(rf"(n\d+) -> (n\d+)( \[label=({QUOTED})\])?;", line):
            edges.append((m[1], m[2], m[4]))
        else:
            assert re.fullmatch(r"(rankdir=LR|(node|edge) \[.*\]|\{ rank=same;( n\d+;)+ \}|//.*);?",
                                line), line
    for a, b, _ in edges:
        assert a in nodes and b in nodes
    return nodes, edges


def test_dot_of_the_seed_example():
    dot = to_dot(annotated(SEED, {"x": 2, "y": 3}))
    nodes, edges = check_dot(dot)
    assert len(nodes) == 7 and len(edges) == 8
    name = {n: re.match(r'"\{ (\S+)', label)[1] for n, label in nodes.items()}
    assert sorted((name[a], name[b]) for a, b, _ in edges) == sorted((a, b) for a, b, _ in SEED_EDGES)
    _, local = by_hand(2, 3)
    for a, b, label in edges:
        (want,) = [v for (s, t, _), v in local.items() if (s, t) == (name[a], name[b])]
        assert float(label.strip('"')) == pytest.approx(want, abs=5e-5)
    v5 = next(label for n, label in nodes.items() if name[n] == "v5")
    assert "v4 - v3" in v5 and "data 6.552" in v5 and "grad 1 }" in v5
    assert len(re.findall(r"rank=same", dot)) == 4  # one rank per layer


def test_dot_escapes_record_and_string_syntax():
    assert record_field("a|b{c}<d>\\") == "a\\|b\\{c\\}\\<d\\>\\\\"
    assert dot_string('say "hi" \\') == '"say \\"hi\\" \\\\"'
    nodes, _ = check_dot(to_dot(build_picture(compile("c = x*y; c += c + 1; c"))))
    assert '"{ v1 (c#1) | x * y }"' in nodes.values()


def test_mermaid_of_the_seed_example():
    lines = to_mermaid(annotated(SEED, {"x": 2, "y": 3})).splitlines()
    assert lines[0] == "flowchart LR"
    nodes = dict(re.fullmatch(r'  (n\d+)\["([^"]*)"\]', line).groups()
                 for line in lines if "[" in line)
    edges = [re.fullmatch(r'  (n\d+) -->\|"([^"]*)"\| (n\d+)', line).groups()
             for line in lines if "-->" in line]
    assert len(nodes) == 7 and len(edges) == 8
    assert all(a in nodes and b in nodes for a, _, b in edges)
    assert nodes["n1"] == "y<br/>input<br/>data 3 | grad 2.99"
    assert ("n4", "-1", "n6") in edges  # v3 -> v5, the subtraction's second edge
    assert lines[-2:] == ["  classDef output stroke-width:3px", "  class n6 output"]


def test_mermaid_escapes_what_its_labels_would_read_as_syntax():
    assert mermaid_text('a"b#c<d>&') == "a#34;b#35;c#60;d#62;#38;"
    out = to_mermaid(build_picture(compile("c = x*y; c += 1; c")))
    assert 'n2["v1 (c#35;1)<br/>x * y"]' in out and 'n3["v2 (c#35;2)<br/>v1 + 1"]' in out
