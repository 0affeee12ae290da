"""``gradcli explore``: step through the sweeps, the graph beside the trace tables (Textual).

:class:`Walk` is what the app shows, with no terminal in it: the steps of the forward sweep
(node by node) and of the reverse sweep (edge by edge), or in forward mode of each tangent
sweep, and at each step the sentence (``v2 = x * y = 2 * 3 = 6``), the graph drawing with the
node or the edge lit, and how far each table has filled in. :class:`Explorer` is the Textual
app around it: Right and Left step, Home and End jump to the start or the end of the sweep, f and
r choose the mode, the expression and the point can be edited (Enter recomputes), q quits.

>>> w = Walk("x*y + sin(x)", {"x": 2, "y": 3})
>>> w.sentence()
'x = 2 (input)'
>>> w.end()
>>> w.sentence()
'v3 = v1 + v2 = 6 + 0.909297426826 = 6.90929742683'
>>> w.step(1)
>>> w.sentence()
'v̄1 += v̄3 · ∂v3/∂v1 = 1 · 1 = 1'
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError

INSTALL = 'pip install "gradcli[interactive]"'
DIGITS = 6  # significant digits of the tangent rules' coefficients
MAX_NODES = 200  # inputs and operations: past this the drawing is a wall, not a picture
LIT = {"node": "reverse bold", "from": "bold black on yellow", "to": "bold black on cyan",
       "edge": "bold yellow"}
_CORNERS = ("╭", "╔", "+")
_BOTTOMS = ("╰", "╚", "+")


def short(x: float | None) -> str:
    """A number in the tables and the sentences: 12 significant digits, trailing zeros dropped
    (``—`` where the output does not depend on the node)."""
    if x is None:
        return "—"
    if isinstance(x, str):  # an array, previewed already
        return x
    return f"{x:.12g}" if abs(x) < 1e15 else f"{x:.6e}"


@dataclass(frozen=True)
class Step:
    sweep: str  # "forward", "reverse", or in forward mode the input seeded ("tangent x")
    index: int  # the row of that sweep's table


class Walk:
    """The sweeps of ``source`` at ``at`` as steps, in ``mode`` "reverse" or "forward"."""

    def __init__(self, source: str, at: dict, mode: str = "reverse", ascii: bool = False,
                 graph=None):
        from .api import compile_at, evaluate
        from .arraytrace import has_array_values
        self.source, self.at, self.ascii = source, dict(at), ascii
        if graph is None:  # (``graph``: the source compiled at ``at`` already)
            graph = compile_at(source, at)
        if graph.n_outputs > 1:
            raise InputError(f"explore steps through one output; the program has "
                             f"{graph.n_outputs} ({', '.join(graph.output_names)})",
                             hint="keep one bare expression, or assign the others to names")
        self.graph, self.arrays = graph, None
        if has_array_values(graph):  # a step per array operation, and per rule on arrays
            self.result = evaluate(graph, at, float64=True, record=True)
            self.arrays = _ArraySteps(graph, self.result)
            self.trace, self.tangents = self.arrays, None
            self.set_mode(mode)
            return
        size = graph.n_slots - graph.n_const
        if size > MAX_NODES or not size:
            raise InputError(f"explore steps through 1 to {MAX_NODES} inputs and operations; "
                             f"this expression has {size}",
                             hint="for the tables of a larger one: gradcli eval ... --trace")
        self.graph = graph
        self.result = evaluate(graph, at, float64=True)  # the sweeps it steps through
        self.trace = self.result.trace
        self.tangents = evaluate(graph, at, mode="forward").trace if graph.inputs else None
        self.set_mode(mode)

    # -- moving -----------------------------------------------------------------------------------

    def set_mode(self, mode: str) -> None:
        """Reverse mode (the forward sweep, then the reverse sweep) or forward mode (a tangent
        sweep per input); back to the first step."""
        if mode == "forward" and self.tangents is not None:
            n = len(self.tangents.rows)
            self.steps = [Step(f"tangent {name}", i) for name in self.tangents.sweeps
                          for i in range(n)]
        else:
            mode = "reverse"
            self.steps = ([Step("forward", i) for i in range(len(self.trace.forward))]
                          + [Step("reverse", j) for j in range(len(self.trace.contributions))])
        self.mode, self.position = mode, 0

    @property
    def current(self) -> Step:
        return self.steps[self.position]

    def step(self, by: int) -> None:
        self.position = max(0, min(len(self.steps) - 1, self.position + by))

    def _sweep_bounds(self) -> tuple[int, int]:
        sweep = self.current.sweep
        where = [i for i, s in enumerate(self.steps) if s.sweep == sweep]
        return where[0], where[-1]

    def home(self) -> None:
        """The start of this sweep (or of the one before, when already there)."""
        first, _ = self._sweep_bounds()
        if self.position == first and first > 0:
            self.position = first - 1
            first, _ = self._sweep_bounds()
        self.position = first

    def end(self) -> None:
        """The end of this sweep (or of the next, when already there)."""
        _, last = self._sweep_bounds()
        if self.position == last and last + 1 < len(self.steps):
            self.position = last + 1
            _, last = self._sweep_bounds()
        self.position = last

    # -- what is shown --------------------------------------------------------------------------

    def fix(self, text: str) -> str:
        """``text`` as this walk shows it: ASCII (vbar4, dv5/dv4) when asked for."""
        if self.ascii:
            from .views.notation import to_ascii
            return to_ascii(text)
        return text

    def sentence(self) -> str:
        """The step in one line, numbers substituted."""
        from .views.notation import tangent
        adjoint = self.bar
        step = self.current
        if step.sweep == "forward":
            row = self.trace.forward[step.index]
            if self.arrays is not None and row.op != "input":
                return self.fix(f"{row.id} = {_dotted(row.expr)} = {row.value}")
            if row.op == "input":
                return self.fix(f"{row.id} = {short(row.value)} (input)")
            return self.fix(f"{row.id} = {_dotted(row.expr)} = {_dotted(row.step)} = "
                             f"{short(row.value)}")
        if step.sweep == "reverse" and self.arrays is not None:  # a rule acting on arrays
            c = self.trace.contributions[step.index]
            return self.fix(f"{adjoint(c.target)} += {c.local} = {c.contribution} "
                            f"(ḡ = {adjoint(c.source)} = {c.upstream})")
        if step.sweep == "reverse":
            c = self.trace.contributions[step.index]
            return self.fix(f"{adjoint(c.target)} += {adjoint(c.source)} · ∂{c.source}/∂"
                             f"{c.target} = {short(c.upstream)} · {short(c.local)} = "
                             f"{short(c.contribution)}")
        name = step.sweep.split(" ", 1)[1]
        k = self.tangents.sweeps.index(name)
        r = self.tangents.rows[step.index]
        if r.row.op == "input":
            return self.fix(f"{tangent(r.row.id)} = {short(r.tangents[k])} (seed: "
                             f"{tangent(name)} = 1)")
        from .views.columns import tangent_rule
        return self.fix(tangent_rule(r, DIGITS) + f" = {short(r.tangents[k])}")

    def bar(self, node_id: str) -> str:
        """A node's adjoint as the tables write it: ``v̄5``, ``x̄``; an array operation's
        ``ā3``."""
        from .views.notation import adjoint, operation_adjoint
        return (adjoint if self.arrays is None else operation_adjoint)(node_id)

    def title(self) -> str:
        step = self.current
        total = sum(1 for s in self.steps if s.sweep == step.sweep)
        if step.sweep in ("forward", "reverse"):
            what = "forward sweep, node" if step.sweep == "forward" else "reverse sweep, edge"
        else:
            what = f"tangent sweep {self.fix(step.sweep.split(' ', 1)[1])}, node"
        return f"{what} {step.index + 1} of {total}"

    def lit(self) -> dict[str, str]:
        """Node id -> how it is lit at this step."""
        step = self.current
        if step.sweep == "reverse":
            c = self.trace.contributions[step.index]
            return {c.source: "from", c.target: "to"}
        rows = self.trace.forward if step.sweep == "forward" else [r.row for r in
                                                                    self.tangents.rows]
        return {rows[step.index].id: "node"}

    def forward_filled(self) -> int:
        """How many rows of the forward table have their value."""
        step = self.current  # forward mode: the values come with the tangents of each sweep
        return len(self.trace.forward) if step.sweep == "reverse" else step.index + 1

    def adjoints_so_far(self) -> dict[str, float]:
        """Each node's adjoint as summed so far (the output holds its seed from the start)."""
        sums = {self.trace.output: self.trace.seed}
        step = self.current
        if step.sweep != "reverse":
            return {}
        if self.arrays is not None:  # arrays, summed element by element, previewed
            return self.arrays.adjoints_after(step.index)
        for c in self.trace.contributions[:step.index + 1]:
            sums[c.target] = sums.get(c.target, 0.0) + c.contribution
        return sums

    def picture_lines(self):
        """The graph drawing (rich Text) with this step lit, and the region ``(x, y, width,
        height)`` holding the lit boxes, to scroll to."""
        from .views.drawing import draw_with_boxes
        from .views.picture import build_picture
        from .views.layout import styled_text
        graph, result = self.graph, self.result
        if self.arrays is not None:
            picture = self.arrays.picture(self.current.index if self.current.sweep == "reverse"
                                          else None)
            slot = {node.id: k for k, node in enumerate(picture.nodes)}
        else:
            slot = {graph.node_id(s): s for s in range(graph.n_const, graph.n_slots)}
            adjoint = None
            if self.current.sweep == "reverse":
                sums = self.adjoints_so_far()
                adjoint = [sums.get(graph.node_id(s), 0.0) for s in range(graph.n_slots)]
            picture = build_picture(graph, result.values, adjoint=adjoint,
                                    partials=result.partials)
        lines, boxes = draw_with_boxes(picture, 4, self.ascii)
        cells = [[(ch, style) for chunk, style in line for ch in chunk] for line in lines]
        lit, region = self.lit(), None
        for node_id, left, right in boxes:
            if node_id not in lit or node_id not in slot:
                continue
            top, bottom = _box_rows(cells, node_id, left)
            if top is None:
                continue
            for r in range(top, bottom + 1):
                for x in range(left, min(right, len(cells[r]))):
                    cells[r][x] = (cells[r][x][0], "lit:" + lit[node_id])
            box = (left, top, right, bottom + 1)
            region = box if region is None else (min(region[0], left), min(region[1], top),
                                                 max(region[2], right), max(region[3], bottom + 1))
            if lit[node_id] == "from":
                self._light_edge(cells, picture, left, top, bottom)
        lines = []
        for row in cells:  # back to runs of one style; a lit cell's style is rich's own
            runs: list[tuple[str, str]] = []
            for ch, style in row:
                style = LIT[style[4:]] if style.startswith("lit:") else style
                if runs and runs[-1][1] == style:
                    runs[-1] = (runs[-1][0] + ch, style)
                else:
                    runs.append((ch, style))
            lines.append(runs)
        text = styled_text(lines)
        if region is not None:  # every lit box: (x, y, width, height)
            region = (region[0], region[1], region[2] - region[0], region[3] - region[1])
        return text, region

    def _light_edge(self, cells, picture, left: int, top: int, bottom: int):
        """Light the last stretch of this step's edge, into the box of the operation at
        ``left``, ``top``..``bottom``: from its argument port (``▶``) back to the line's turn,
        with the local derivative written on it."""
        c = self.trace.contributions[self.current.index]
        ids = [n.id for n in picture.nodes]
        operation = ids.index(c.source)
        edges = sorted((e for e in picture.edges if e.target == operation),
                       key=lambda e: e.position)
        ports = [r for r in range(top, bottom + 1)
                 if left >= 1 and len(cells[r]) > left - 1 and cells[r][left - 1][0] in "▶>"]
        # The k-th drawn edge into the operation enters at its k-th port; x*x has two.
        seen = [k for k, e in enumerate(edges) if ids[e.source] == c.target]
        done = sum(1 for d in self.trace.contributions[:self.current.index]
                   if d.source == c.source and d.target == c.target)
        if not seen or len(ports) != len(edges):
            return
        row = ports[seen[min(done, len(seen) - 1)]]
        x = left - 1
        while x >= 0 and cells[row][x][1] in ("edge", "label"):
            ch, style = cells[row][x]
            cells[row][x] = (ch, "lit:edge")
            if style == "edge" and ch not in "─-▶>":  # the line's turn: the rest is shared
                break
            x -= 1


@dataclass(frozen=True)
class _ArrayRow:
    """A row of an array program's forward table, as the scalar trace's rows read: the value
    previewed."""
    id: str
    op: str
    expr: str
    step: str
    value: str


@dataclass(frozen=True)
class _ArrayRule:
    """A rule on arrays as a row of the sweep's table: ``local`` is the rule written out."""
    source: str
    target: str
    equation: str
    upstream: str
    local: str
    local_expr: str
    contribution: str


class _ArraySteps:
    """An array program's trace (gradcli.arraytrace) as the walk steps through it: a step per
    array operation, then per rule; the adjoints summed so far as arrays."""

    def __init__(self, graph, result):
        from .arraytrace import build_array_trace
        from .views.arrays import preview
        adjoint, records = result.sweep
        self.array_trace = t = build_array_trace(graph, result.values, adjoint, records)
        self.preview = lambda values, shape: preview(values, shape, 3, short).replace("\n", "")
        self.forward = [_ArrayRow(r.id, "input" if r.kind == "input" else r.kind, r.expr,
                                  "", self.preview(r.values, r.shape)) for r in t.forward]
        self.contributions = [_ArrayRule(r.source, r.target, r.equation,
                                         self.preview(r.upstream, r.upstream_shape), r.rule, "",
                                         self.preview(r.contribution, r.shape))
                              for r in t.rules]
        self.adjoints = t.adjoints
        self.output, self.seed = t.output, result.seed
        self.shapes = {r.id: r.shape for r in t.forward}

    def _sums(self, index: int) -> dict[str, list]:
        """Each array's adjoint after rule ``index``, element by element (floats)."""
        sums: dict[str, list] = {self.output: [float(self.seed)]}
        for rule in self.array_trace.rules[:index + 1]:
            if rule.contribution is None:
                continue
            got = sums.setdefault(rule.target, [0.0] * len(rule.contribution))
            for j, c in enumerate(rule.contribution):
                got[j] += float(c)
        return sums

    def adjoints_after(self, index: int) -> dict[str, str]:
        return {k: self.preview(v, self.shapes[k]) for k, v in self._sums(index).items()}

    def picture(self, index: int | None):
        """The array graph, each node's adjoint as summed after rule ``index`` (None: the
        forward sweep, no adjoints)."""
        from dataclasses import replace

        from .views.picture import array_picture
        picture = array_picture(self.array_trace)
        sums = self._sums(index) if index is not None else {}
        picture.nodes = [replace(n, adjoint=sums.get(n.id) if index is not None else None)
                         for n in picture.nodes]
        return picture


def _dotted(text: str) -> str:
    """``x * y`` -> ``x · y``: the textbook's product dot in the sentence."""
    return text.replace(" * ", " · ")


def _box_rows(cells, node_id: str, left: int) -> tuple[int | None, int | None]:
    """The top and bottom row of the box of ``node_id`` whose left side is at ``left``."""
    for r in range(len(cells) - 1):
        if len(cells[r]) > left and cells[r][left][0] in _CORNERS:
            title = "".join(ch for ch, _ in cells[r + 1][left + 2:left + 2 + len(node_id) + 1])
            if title.rstrip() == node_id or title == node_id + " ":
                for b in range(r + 1, len(cells)):
                    if len(cells[b]) > left and cells[b][left][0] in _BOTTOMS:
                        return r, b
    return None, None


# -- the app -----------------------------------------------------------------------------------------

def make_app(walk: Walk):
    """The Textual app around ``walk`` (Textual is imported here, not before)."""
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.containers import Horizontal, ScrollableContainer, Vertical
    from textual.geometry import Region
    from textual.message import Message
    from textual.widgets import DataTable, Footer, Input, Static

    from .views.notation import tangent as dot

    class StepTable(DataTable):
        """A table whose rows are steps: a click on one goes there (the app is told)."""

        class Picked(Message):
            def __init__(self, table: str, row: int):
                super().__init__()
                self.table, self.row = table, row

        def on_click(self, event) -> None:  # (DataTable moves its cursor on a click itself)
            if "row" in event.style.meta and event.style.meta["row"] >= 0:
                self.post_message(self.Picked(self.id, event.style.meta["row"]))

    class GraphView(ScrollableContainer, inherit_bindings=False):
        """The drawing; it scrolls, and leaves the arrow keys to the app."""

        can_focus = True

    class Explorer(App):
        TITLE = "gradcli explore"
        CSS = """
        #bar { height: 3; }
        #expression { width: 2fr; }
        #point { width: 1fr; }
        #main { height: 1fr; }
        GraphView { width: 1fr; border: round $primary; }
        GraphView:focus { border: round $accent; }
        #graph { width: auto; height: auto; }
        #tables { width: 1fr; }
        DataTable { height: 1fr; }
        #step { height: 2; padding: 0 1; background: $boost; }
        """
        BINDINGS = [
            Binding("right", "step(1)", "step"), Binding("left", "step(-1)", "back"),
            Binding("home", "home", "first step", key_display="Home"),
            Binding("end", "end", "last step", key_display="End"),
            Binding("f", "mode('forward')", "forward mode"),
            Binding("r", "mode('reverse')", "reverse mode"),
            Binding("escape", "leave_input", "graph", show=False),
            Binding("q", "quit", "quit"),
        ]

        def __init__(self, walk: Walk):
            super().__init__()
            self.walk = walk
            if walk.ascii:
                self.CSS += "GraphView, GraphView:focus, Input { border: ascii $primary; }"

        def compose(self) -> ComposeResult:
            with Horizontal(id="bar"):
                yield Input(self.walk.source.replace("\n", "; "), id="expression",
                            placeholder="expression")
                yield Input(", ".join(f"{n}={v:g}" for n, v in self.walk.at.items()),
                            id="point", placeholder="x=2, y=3")
            with Horizontal(id="main"):
                with GraphView():
                    yield Static(id="graph")
                with Vertical(id="tables"):
                    yield StepTable(id="forward", cursor_type="row")
                    yield StepTable(id="sweep", cursor_type="row")
                    yield DataTable(id="adjoints", cursor_type="row")
            yield Static(id="step")
            yield Footer()

        def on_mount(self) -> None:
            for table in self.query(DataTable):
                table.can_focus = False
            self.query_one(GraphView).focus()
            self.rebuild()

        # -- filling in ------------------------------------------------------------------------

        def rebuild(self) -> None:
            """New tables for a new expression, point or mode; then show the step."""
            w = self.walk
            fix = w.fix
            forward, sweep, adjoints = (self.query_one(f"#{n}", DataTable)
                                        for n in ("forward", "sweep", "adjoints"))
            for table in (forward, sweep, adjoints):
                table.clear(columns=True)
            forward.add_columns("node", "operation", "value")
            adjoints.display = w.mode != "forward"
            if w.mode == "forward":
                sweep.add_columns("node", "tangent rule",
                                  *[fix(f"v̇ ({dot(n)}=1)") for n in w.tangents.sweeps])
            else:
                sweep.add_columns("from", "to", fix("v̄ up"), "local", "contribution")
                adjoints.add_columns("node", "adjoint", "sum of contributions")
            for row in w.trace.forward:
                forward.add_row(row.id, fix("input" if row.op == "input" else
                                            f"{row.id} = {row.expr}"), "", key=row.id)
            self.show_step()

        def show_step(self) -> None:
            w = self.walk
            fix = w.fix
            forward = self.query_one("#forward", DataTable)
            sweep = self.query_one("#sweep", DataTable)
            filled = w.forward_filled()
            for i, row in enumerate(w.trace.forward):
                forward.update_cell(row.id, forward.ordered_columns[2].key,
                                    short(row.value) if i < filled else "", update_width=True)
            step = w.current
            sweep.clear()
            if w.mode == "forward":
                from .views.columns import tangent_rule
                k = w.tangents.sweeps.index(step.sweep.split(" ", 1)[1])
                for i, r in enumerate(w.tangents.rows[:step.index + 1]):
                    rule = "seed" if r.row.op == "input" else tangent_rule(r, DIGITS)
                    cells = [short(t) if j <= k else "" for j, t in enumerate(r.tangents)]
                    sweep.add_row(r.row.id, fix(rule), *cells)
                forward.move_cursor(row=step.index, animate=False)
                sweep.move_cursor(row=step.index, animate=False)
            else:
                done = step.index + 1 if step.sweep == "reverse" else 0
                for c in w.trace.contributions[:done]:
                    sweep.add_row(fix(c.equation), fix(w.bar(c.target)), short(c.upstream),
                                  fix(f"{c.local_expr} = {short(c.local)}" if c.local_expr and
                                      c.local_expr != short(c.local) else short(c.local)),
                                  short(c.contribution))
                adjoints = self.query_one("#adjoints", DataTable)
                adjoints.clear()
                sums = w.adjoints_so_far()
                terms: dict[str, list[float]] = {}
                for c in w.trace.contributions[:done]:
                    terms.setdefault(c.target, []).append(c.contribution)
                for row in w.trace.adjoints:
                    if row.id in sums:
                        how = ("seed" if row.id == w.trace.output else
                               " + ".join(short(t) for t in terms.get(row.id, [])))
                        adjoints.add_row(fix(w.bar(row.id)), short(sums[row.id]), how,
                                         key=row.id)
                if step.sweep == "reverse":
                    c = w.trace.contributions[step.index]
                    sweep.move_cursor(row=step.index, animate=False)
                    keys = [str(r.key.value) for r in adjoints.ordered_rows]
                    if c.target in keys:
                        adjoints.move_cursor(row=keys.index(c.target), animate=False)
                else:
                    forward.move_cursor(row=step.index, animate=False)
            text, region = w.picture_lines()
            self.drawing = text  # what the graph pane shows, lit (read by the tests)
            self.query_one("#graph", Static).update(text)
            if region is not None:
                self.query_one(GraphView).scroll_to_region(Region(*region), animate=False)
            self.query_one("#step", Static).update(
                f"[b]{w.title()}[/b]  ({w.mode} mode)\n" + _escape(w.sentence()))

        # -- the keys ------------------------------------------------------------------------------

        def action_step(self, by: int) -> None:
            self.walk.step(by)
            self.show_step()

        def action_home(self) -> None:
            self.walk.home()
            self.show_step()

        def action_end(self) -> None:
            self.walk.end()
            self.show_step()

        def action_mode(self, mode: str) -> None:
            self.walk.set_mode(mode)
            self.rebuild()

        def on_step_table_picked(self, event) -> None:
            """A click on a row of the forward table or of the sweep's table: that step."""
            w = self.walk
            if event.table == "forward" and w.mode == "reverse":
                wanted = Step("forward", event.row)
            elif event.table == "sweep":
                wanted = Step("reverse" if w.mode == "reverse" else w.current.sweep, event.row)
            else:
                return
            if wanted in w.steps:
                w.position = w.steps.index(wanted)
                self.show_step()

        def action_leave_input(self) -> None:
            self.query_one(GraphView).focus()

        def on_input_submitted(self, event: Input.Submitted) -> None:
            """A new expression or point: everything is computed again (an error is shown and
            the old walk kept)."""
            from .errors import GradcliError, describe
            from .points import parse_point
            source = self.query_one("#expression", Input).value
            try:
                at = parse_point(self.query_one("#point", Input).value)
                self.walk = Walk(source, at, self.walk.mode, self.walk.ascii)
            except GradcliError as error:
                self.query_one("#step", Static).update(
                    "[b red]not changed:[/] " + _escape(describe(error, source)))
                return
            self.rebuild()
            self.query_one(GraphView).focus()

    return Explorer(walk)


def _escape(text: str) -> str:
    from rich.markup import escape
    return escape(text)


def start(source: str, at: dict, ascii: bool = False, graph=None) -> None:
    """``gradcli explore``: the app, full screen, until q (``graph``: the source compiled at
    ``at`` already, by a caller that said its reading's warnings)."""
    import sys

    from .views.notation import needs_ascii
    walk = Walk(source, at, ascii=ascii or needs_ascii(getattr(sys.stdout, "encoding", None)),
                graph=graph)
    try:
        import textual  # noqa: F401
    except ImportError:
        raise InputError("gradcli explore needs Textual, which is not installed",
                         hint=INSTALL) from None
    if not sys.stdout.isatty():
        raise InputError("gradcli explore is a full-screen app: run it in a terminal",
                         hint="for the tables on standard output: gradcli eval ... --trace")
    make_app(walk).run()
