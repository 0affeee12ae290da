"""gradcli graph: the picture's nodes and edges, the terminal drawing, DOT, Mermaid, -o, the cap.

Expected numbers are derived by hand from the seed computation y = log(x) + x*y - sin(y):
v1 = log x, v2 = x*y, v3 = sin y, v4 = v1 + v2, v5 = v4 - v3; local derivatives 1/x, y, x, cos y
on the first layer of edges, 1 and 1 into v4, 1 and -1 into v5; adjoints backwards from v̄5 = 1.
The terminal drawing is checked by following its lines from every box to the arrowheads they
reach, so a test fails if any edge is drawn to the wrong place.
"""

import io
import math
import os
import re
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import drawn
from strategies import cases
from gradcli.api import compile, evaluate
from gradcli.cli import main
from gradcli.errors import DomainError
from gradcli.views.diagrams import dot_string, mermaid_text, record_field, to_dot, to_mermaid
from gradcli.views.picture import build_picture
from gradcli.views.screen import open_screen
from gradcli.views.tables import show_graph

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
    result = evaluate(graph, at)
    return build_picture(graph, result.values, adjoint=result.adjoint, partials=result.partials)


def edge_triples(picture):
    return sorted((picture.nodes[e.source].id, picture.nodes[e.target].id, e.position)
                  for e in picture.edges)


def as_drawn(triples):
    """``triples`` as the left-to-right drawing shows them: a box's only argument line enters
    level with its output, on its second line, which shows no position (read as None)."""
    into = {}
    for _, b, _ in triples:
        into[b] = into.get(b, 0) + 1
    return sorted((a, b, None if into[b] == 1 else p) for a, b, p in triples)


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
    assert sorted((name[a], name[b]) for a, b, _ in edges) == sorted(e[:2] for e in SEED_EDGES)
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


# -- the terminal drawing, read back by following its lines -------------------------------------

def read_drawing(text):
    """Boxes {id: (top, left, height, width, text lines)} and edges [(from id, to id, argument
    position, label)], read back by tests/drawn.py (which checks the drawing's topology)."""
    boxes, edges = drawn.read_drawing(text)
    return boxes, [edge[:4] for edge in edges]


def test_drawing_of_the_seed_example(run):
    result = run("graph", SEED)
    assert result.exit_code == 0, result.output
    boxes, edges = read_drawing(result.stdout)
    assert sorted(boxes) == ["v1", "v2", "v3", "v4", "v5", "x", "y"]  # each node drawn once
    assert sorted((a, b, p) for a, b, p, _ in edges) == as_drawn(SEED_EDGES)
    assert boxes["v2"][4][1] == "x * y" and boxes["x"][4][1] == "input"
    left = {name: box[1] for name, box in boxes.items()}
    assert left["x"] == left["y"] < left["v1"] == left["v2"] == left["v3"] < left["v4"] < left["v5"]
    assert "╔" in result.stdout.splitlines()[boxes["v5"][0]]  # the output: a double border


def test_drawing_shares_x_between_log_and_times(run):
    """x is one box with one output line that branches to log and to *."""
    _, edges = read_drawing(run("graph", SEED).stdout)
    assert sorted((b, p) for a, b, p, _ in edges if a == "x") == [("v1", None), ("v2", 0)]


@pytest.mark.parametrize("x, y", [(2, 3), (2, 5)])
def test_annotated_drawing_shows_data_grad_and_local_derivatives(run, x, y):
    result = run("graph", SEED, "--at", f"x={x},y={y}")
    assert result.exit_code == 0, result.output
    boxes, edges = read_drawing(result.stdout)
    nodes, local = by_hand(x, y)
    for name, (value, adjoint) in nodes.items():
        lines = boxes[name][4]
        assert float(lines[2].removeprefix("data ")) == pytest.approx(value, abs=5e-5)
        assert float(lines[3].removeprefix("grad ")) == pytest.approx(adjoint, abs=5e-5)
    assert len(edges) == 8
    for a, b, p, label in edges:
        assert float(label) == pytest.approx(local[(a, b, 0 if p is None else p)], abs=5e-5)
    assert ("v3", "v5", 1, "-1") in edges  # the subtraction's second edge


def test_drawing_of_x_times_x_has_two_arrows_from_x(run):
    boxes, edges = read_drawing(run("graph", "x*x", "--at", "x=3").stdout)
    assert sorted(edges) == [("x", "v1", 0, "3"), ("x", "v1", 1, "3")]
    assert boxes["v1"][4][2:] == ["data 9", "grad 1"] and boxes["x"][4][3] == "grad 6"


def test_drawing_of_a_program_shows_the_assigned_names(run):
    boxes, edges = read_drawing(run("graph", "c = x*y; c += c + 1; c").stdout)
    assert boxes["v1"][4][0] == "v1 (c#1)" and boxes["v3"][4][0] == "v3 (c#2)"
    assert sorted((a, b, p) for a, b, p, _ in edges) == [
        ("v1", "v2", None), ("v1", "v3", 0), ("v2", "v3", 1), ("x", "v1", 0), ("y", "v1", 1)]


EXPRESSIONS = st.recursive(
    st.sampled_from(["x", "y", "z", "2"]),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["sin", "exp", "tanh", "-"]), inner).map(
            lambda t: f"{t[0]}({t[1]})"),
        st.tuples(inner, inner).map(lambda t: f"hypot({t[0]}, {t[1]})")),
    max_leaves=14)


def check_topology(source, args=(), layout="lr"):
    """Draw ``source`` and read the drawing back (tests/drawn.py checks that lines join, stay
    out of boxes and leave none astray): every edge of the picture, each to its port, no more."""
    try:
        graph = compile(source)
    except DomainError:  # constants folded at lowering: (2 / (2 - 2)) is a division by zero
        assume(False)
    if graph.output < graph.n_const:
        return None  # a constant: nothing to connect
    result = CliRunner().invoke(main, ["graph", "--width", "1000", "--layout", layout,
                                       *args, "--", source])
    assert result.exit_code == 0, result.output
    picture = build_picture(graph)
    boxes, edges = drawn.read_drawing(result.stdout)
    expected = edge_triples(picture)
    only = {b: p for a, b, p in as_drawn(expected) if p is None}  # a box's one argument line ...
    only = {b: p for a, b, p in expected if b in only}  # ... and its position, not drawn
    assert sorted((a, b, only[b] if p is None else p) for a, b, p, _, _ in edges) == expected
    assert len(boxes) == len(picture.nodes)
    return edges


@pytest.mark.filterwarnings("ignore:Generating overly large repr")
@pytest.mark.parametrize("layout", ["lr", "tb"])
@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(source=EXPRESSIONS)
def test_every_edge_is_drawn_to_the_right_port(source, layout):
    check_topology(source, layout=layout)


@pytest.mark.parametrize("layout", ["lr", "tb"])
@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(case=cases(max_statements=3, max_depth=4))
def test_programs_with_shared_values_are_drawn_edge_for_edge(case, layout):
    """Generated programs (assignments, a value read many times, every function) at a point."""
    from gradcli.language.printer import to_source
    at = ",".join(f"{name}={value!r}" for name, value in case.point.items())
    check_topology(to_source(case.program), ("--at", at), layout)


@pytest.mark.parametrize("layout", ["lr", "tb"])
def test_the_case_that_once_drew_an_edge_to_the_wrong_port(layout):
    check_topology("(hypot(x, z) + (z + sin(z)))", ("--at", "x=1,z=2"), layout)


# -- straight lines: bends counted on the drawing, against bounds worked out by hand ---------------
#
# A line leaves a box going right and enters one going right (lr), so a line that is not straight
# bends at least twice. Lower bounds on the bends, from the boxes' shapes: a box's argument ports
# are its lines 1 and 3, two rows apart, while the output ports (line 2) of two boxes in one
# column are at least 5 rows apart and a box's and a carried line's at least 4 (a blank row
# between items), so a box reading two boxes, or a box and a carried line, gets at most one of
# its two lines straight; and one output row is level with at most one of the rows it feeds.

def bends(source, *args):
    result = CliRunner().invoke(main, ["graph", "--width", "1000", *args, "--", source])
    assert result.exit_code == 0, result.output
    _, edges = drawn.read_drawing(result.stdout)
    return {(a, b, p): n for a, b, p, _, n in edges}


@pytest.mark.parametrize("args", [(), ("--at", "x=1"), ("--layout", "tb"),
                                  ("--layout", "tb", "--at", "x=1")])
def test_a_chain_is_drawn_straight(args):
    """sin(cos(exp(x))): each box reads the one before it, so nothing needs to bend."""
    counts = bends("sin(cos(exp(x)))", *args)
    assert sorted(counts) in ([("v1", "v2", p), ("v2", "v3", p), ("x", "v1", p)] for p in (0, None))
    assert sum(counts.values()) == 0


@pytest.mark.parametrize("args", [(), ("--at", "x=2,y=3")])
def test_the_seed_example_bends_no_more_than_it_must(args):
    """x feeds v1 and v2, y feeds v2 and v3 (one straight line each); v4 reads two boxes, v5 a
    box and v3's carried line (one straight line each): at most 4 of the 8 edges are straight,
    so at least 8 bends, and 8 is what the drawing has."""
    counts = bends(SEED, *args)
    assert sorted(counts) == as_drawn(SEED_EDGES)
    assert sum(counts.values()) == 8
    assert sorted(counts.values()) == [0, 0, 0, 0, 2, 2, 2, 2]


@pytest.mark.parametrize("terms", [4, 20])
def test_a_sum_bends_no_more_than_it_must(terms):
    """x1 + ... + xn: n - 1 boxes, each reading two lines of which at most one is straight (v1:
    two input boxes; the others: the box before and a carried input line): n - 1 bent lines,
    2(n - 1) bends at least, and exactly that many drawn, in both the chain and the inputs."""
    names = [f"x{k}" for k in range(1, terms + 1)]
    at = ",".join(f"{name}={k}" for k, name in enumerate(names, 1))
    counts = bends("+".join(names), "--at", at)
    assert len(counts) == 2 * (terms - 1)
    assert sum(counts.values()) == 2 * (terms - 1)
    assert sum(1 for n in counts.values() if n == 0) == terms - 1


def test_a_level_line_with_branches_above_and_below_joins_with_tees_not_a_crossing():
    """z feeds v1 (above), v3 (level, through a carried line) and v2 (below): the junctions are
    ┴ and ┬ on two tracks, never ┼ (which means lines crossing). Once drawn as ┼, and read as
    crossing lines, the branches were lost."""
    out = CliRunner().invoke(main, ["graph", "(hypot(x, z) + (z + sin(z)))"]).stdout
    z_row = next(line for line in out.splitlines() if "│ input ├──┴─┬" in line)
    assert "┼" not in z_row
    check_topology("(hypot(x, z) + (z + sin(z)))")


def test_lines_that_would_run_into_each_other_are_untangled_by_a_row():
    """A gap where a's line leaves on the row where b's arrives and b's leaves where a's
    arrives (rows 6 and 11): no order of their two tracks keeps them apart, since the track on
    the left would carry its line across the other's corner. The items right of the gap move
    down a row from the first such row (6), and then the tracks can be ordered."""
    from gradcli.views import drawing

    def line(top):  # a carried line: one row, in and out on it
        return drawing.Item(0, True, [], [0], 0, 1, top)

    a, b = line(6), line(11)
    right = [line(1), line(6), line(11), line(21)]
    links = [[drawing.Link(a, right[0], 0), drawing.Link(a, right[2], 0),
              drawing.Link(b, right[1], 0), drawing.Link(b, right[3], 0)]]
    with pytest.raises(drawing._Tangled):
        drawing._nets(links[0])
    gaps = drawing._route([[a, b], right], links)
    assert [item.top for item in right] == [1, 7, 12, 22]
    assert sorted((net.source_row, [t[0] for t in net.targets]) for net in gaps[0]) == [
        (6, [1, 12]), (11, [7, 22])]  # no row now has one line leaving and another arriving


@pytest.mark.parametrize("source", ["(hypot((sin((z - 2)) * sin(y)), sin(z)) - (sin(x) - sin(y)))",
                                    SEED])
def test_when_lines_cannot_be_untangled_the_drawing_falls_back_to_odd_and_even_rows(
        monkeypatch, source):
    """When a gap stays tangled, the whole drawing uses the old rows (argument ports on odd
    rows, output ports on even ones), where lines never meet: still correct."""
    from gradcli.views import drawing
    monkeypatch.setattr(drawing, "NUDGES", 0)
    real_level, real_order, modes = drawing._level, drawing._in_order, []

    def level(columns, links, straight):
        modes.append(straight)
        real_level(columns, links, straight)

    def in_order(nets):  # pretend the first gap of a straight drawing tangles
        if modes[-1] and nets:
            raise drawing._Tangled(nets[0].targets[0][0])
        return real_order(nets)

    monkeypatch.setattr(drawing, "_level", level)
    monkeypatch.setattr(drawing, "_in_order", in_order)
    edges = check_topology(source)
    assert modes[0] and not modes[-1]  # tried straight, drew with odd/even rows
    assert all(edge[4] >= 2 for edge in edges)  # the odd/even rows: every line steps


def test_a_drawing_too_wide_for_the_terminal_says_where_it_is_cut():
    deep = "x" + "".join(f" + x^{k}" for k in range(2, 12))
    stream = io.StringIO()
    cut = show_graph(build_picture(compile(deep)), 4, screen=open_screen(60, stream=stream))
    assert max(len(line) for line in stream.getvalue().splitlines()) <= 60  # cut, not wrapped
    assert "cut at 60" in cut and "--format dot" in cut  # said on standard error


def test_capped_drawing_says_so(run):
    result = run("graph", "+".join(["x"] * 100), "--max-nodes", "5")
    assert result.exit_code == 0
    boxes, edges = read_drawing(result.stdout)
    assert sorted(boxes) == ["v95", "v96", "v97", "v98", "v99", "x"]
    top, left = boxes["v95"][:2]  # v95 stands for the part left out: a dashed box with …
    assert result.stdout.splitlines()[top + 1][left] == "┆" and boxes["v95"][4][1] == "…"
    assert ("v95", "v96", 0, "") in edges
    assert "showing the 5 nodes nearest the output, of 100" in result.stdout
    assert "--max-nodes 0 shows all" in result.stdout


def test_dot_and_mermaid_are_capped_with_a_note(run):
    source = "+".join(["x"] * 100)
    result = run("graph", source, "--format", "dot")
    nodes, edges = check_dot(result.stdout)
    assert len(nodes) == 41  # the 40 nearest the output, and the one that stands for the rest
    assert "// showing the 40 nodes nearest the output, of 100" in result.stdout
    assert "warning: showing the 40 nodes" in result.stderr
    nodes, edges = check_dot(run("graph", source, "--format", "dot", "--max-nodes", "0").stdout)
    assert len(nodes) == 100 and len(edges) == 2 * 99
    out = run("graph", source, "--format", "mermaid", "--max-nodes", "3").stdout
    assert "%% showing the 3 nodes" in out and "class n1 hidden" in out  # n1 is v97


# -- -o FILE through Graphviz (a fake dot here: Graphviz is not installed) -----------------------

def fake_dot(directory, exit_code=0):
    """A `dot` program that writes its arguments and its input to its output (the -o file, or
    standard output)."""
    script = directory / "dot"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        args = sys.argv[1:]
        if {exit_code}:
            sys.stderr.write("Error: syntax error in line 1")
            sys.exit({exit_code})
        text = " ".join(args) + "\\n" + sys.stdin.read()
        if "-o" in args:
            with open(args[args.index("-o") + 1], "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        """))
    script.chmod(0o755)
    return directory


def test_output_file_is_rendered_by_dot_by_suffix(run, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(fake_dot(tmp_path)))
    target = tmp_path / "g.svg"
    result = run("graph", SEED, "--at", "x=2,y=3", "-o", str(target))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    args, dot_text = target.read_text().split("\n", 1)
    assert args == "-Tsvg"  # its output is staged and renamed into place (gradcli.files)
    nodes, edges = check_dot(dot_text)
    assert len(nodes) == 7 and len(edges) == 8
    run("graph", "x", "-o", str(tmp_path / "g.PDF"))
    assert (tmp_path / "g.PDF").read_text().startswith("-Tpdf")


def test_dot_and_mermaid_files_need_no_graphviz(run, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot here
    assert run("graph", SEED, "-o", str(tmp_path / "g.dot")).exit_code == 0
    check_dot((tmp_path / "g.dot").read_text())
    assert run("graph", SEED, "-o", str(tmp_path / "g.mmd")).exit_code == 0
    assert (tmp_path / "g.mmd").read_text().startswith("flowchart LR\n")


def test_output_image_without_graphviz_says_how_to_get_it(run, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    result = run("graph", SEED, "-o", str(tmp_path / "g.svg"))
    assert result.exit_code == 2
    assert "needs Graphviz's dot program" in result.stderr
    assert "apt-get install graphviz" in result.stderr and "--format dot" in result.stderr
    assert not (tmp_path / "g.svg").exists()


def test_a_failing_dot_is_reported(run, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(fake_dot(tmp_path, exit_code=1)))
    result = run("graph", SEED, "-o", str(tmp_path / "g.png"))
    assert result.exit_code == 2
    assert "Graphviz's dot could not write" in result.stderr and "syntax error" in result.stderr


# -- input, errors ------------------------------------------------------------------------------

def test_stdin_and_file(run, tmp_path):
    from_stdin = run("graph", "-", "--format", "dot", input="x*x\n").stdout
    program = tmp_path / "p.grad"
    program.write_text("x*x\n")
    assert run("graph", "-f", str(program), "--format", "dot").stdout == from_stdin
    assert len(check_dot(from_stdin)[1]) == 2


def test_a_name_the_expression_does_not_read_is_a_warning(run):
    result = run("graph", "x+1", "--at", "x=1,z=2", "--format", "dot")
    assert result.exit_code == 0 and "warning: z is not read" in result.stderr


GRAPH_ERRORS = [
    (["graph"], 2, ["no expression given", 'gradcli graph "x^2 + y"']),
    (["graph", "log(x"], 2, ["expected ')'"]),
    (["graph", "sinn(x)"], 2, ["unknown function sinn"]),
    (["graph", "x*y", "--at", "x=1"], 2, ["no value for input y", "--at y=1"]),
    (["graph", "log(x)", "--at", "x=-1"], 2, ["log(-1)", "domain of log"]),
    (["graph", "sqrt(x)", "--at", "x=0"], 1, ["sqrt(0)", "infinite slope (+∞)"]),
    (["graph", "x", "--format", "png"], 2, ["'png' is not one of"]),
    (["graph", "x", "-o", "g.bmp"], 2, ["unknown file type", ".svg"]),
    (["graph", "x", "--format", "dot", "-o", "g.dot"], 2, ["give --format or -o, not both"]),
    (["graph", "x", "--max-nodes", "-1"], 2, ["--max-nodes"]),
]


@pytest.mark.parametrize("args, code, words", GRAPH_ERRORS)
def test_bad_input_gets_a_message_and_exit_code(run, reported, args, code, words):
    reported(run(*args), code, words)


def test_deep_nesting_100000_with_the_default_cap(run):
    depth = 100_000
    result = run("graph", "sin(" * depth + "x" + ")" * depth, "--format", "dot")
    assert result.exit_code == 0
    nodes, edges = check_dot(result.stdout)
    assert len(nodes) == 41 and len(edges) == 40


def test_the_docs_show_graph_runs():
    """tests/test_docs.py replays every example; here: the pages draw, and write DOT and Mermaid."""
    from test_docs import ALL_RUNS
    commands = [run.command for run in ALL_RUNS if run.command.startswith("gradcli graph")]
    assert len(commands) >= 5
    assert any("--format dot" in c for c in commands) and any("mermaid" in c for c in commands)


# -- the installed console script ---------------------------------------------------------------

def test_console_script_draws_and_writes_formats(gradcli_script, tmp_path):
    out = subprocess.run([gradcli_script, "graph", SEED, "--at", "x=2,y=3"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    boxes, edges = read_drawing(out.stdout)
    assert len(boxes) == 7 and len(edges) == 8
    out = subprocess.run([gradcli_script, "graph", SEED, "--format", "mermaid"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.stdout.splitlines()[0] == "flowchart LR" and out.stdout.count("-->") == 8


def test_console_script_without_graphviz(gradcli_script, tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))
    out = subprocess.run([gradcli_script, "graph", SEED, "-o", "g.svg"], env=env,
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 2
    assert "apt-get install graphviz" in out.stderr and "Traceback" not in out.stderr


def test_in_an_80_column_terminal_the_readme_graph_is_drawn_top_to_bottom_whole(gradcli_script):
    pexpect = pytest.importorskip("pexpect")
    import re
    child = pexpect.spawn(gradcli_script, ["graph", SEED, "--at", "x=2,y=3"], dimensions=(60, 80),
                          encoding="utf-8", env={**os.environ, "NO_COLOR": "1", "TERM": "xterm"},
                          timeout=60)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.read()).replace("\r", "")
    child.close()
    lines = shown.splitlines()
    assert child.exitstatus == 0, shown
    assert max(map(len, lines)) <= 80 and "cut" not in shown
    assert "║ v5" in shown  # the output node is drawn, not cut off
    assert lines[1].startswith("│ x")  # top to bottom: x's box first, at the top
    wide = subprocess.run([gradcli_script, "graph", SEED, "--at", "x=2,y=3", "--width", "120"],
                          capture_output=True, text=True, encoding="utf-8")
    assert max(map(len, wide.stdout.splitlines())) > 80  # left to right where it fits
