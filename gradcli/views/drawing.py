"""The layered drawing of a :class:`~gradcli.views.picture.Picture` on a character grid (no rich here).

Columns are the picture's layers: the inputs on the left, the output on the right. Each node is
a box; an edge leaves its argument's box on the right (``├``) and enters one of the user's
argument ports on the left (``▶``): the first argument on the box's first line, the second on
its third, so ``2 - x`` shows which side x is on; a box with one argument line takes it on its
second line, level with its output. In the gap between two columns each node that feeds the
next column has a vertical track, so a node read twice is drawn once, its line branching
(``┬ ┴ ├ ┤``) to each reader; nodes whose lines are rows apart share a track. An edge that
skips columns is carried through them by a straight line (a "dummy node" of layered graph
drawing, Sugiyama et al. 1981). The order within columns (barycentre sweeps) keeps crossings
few; the rows (least-absolute-deviation isotonic regression towards the median of each item's
lines) put as many boxes as the others allow level with a line they read, and a level line is
drawn straight, with no track.

Where lines meet without joining, they cross (``┼``), and ``┼`` means nothing else: a gap's
tracks are ordered so a line arriving on a row starts right of the track of the line leaving
on it (:func:`_in_order`), and a line with branches above, below and level gets two tracks
(``┴`` and ``┬``). When no order will do, a box moves a row (:func:`_route`); failing that, the
whole drawing takes the rows of old, argument ports on odd rows and output ports on even ones,
where no two horizontal lines of a gap ever share a row, at the price of a step in every line.

:func:`draw_with_boxes` gives lines of ``(text, style)`` runs; ``screen.py`` gives the styles
their colours.
Text is measured by display width (a wide character takes two cells, a combining mark none).
``layout="tb"`` draws one box under another instead (:func:`_draw_top_to_bottom`), for narrow
terminals; with ``ascii`` every character is ASCII.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass

from ..errors import LimitError
from .layout import width_of
from .notation import to_ascii
from .picture import Edge, Picture, edge_text, node_lines

MAX_ITEMS = 20_000  # boxes and carried lines; past this the drawing would be a wall, not a picture
SWEEPS = 4  # rounds of reordering and of levelling; small graphs settle in one or two
SWAP_LIMIT = 80  # items; past this no swaps are tried (each try levels the whole drawing)
NUDGES = 20  # rows moved to untangle lines before falling back to odd/even rows (rarely needed)

# Line cells are stored as sets of directions (bits) and turned into box-drawing characters last.
UP, DOWN, LEFT, RIGHT = 1, 2, 4, 8
CROSSING = 16
GLYPH = {UP: "│", DOWN: "│", UP | DOWN: "│", LEFT: "─", RIGHT: "─", LEFT | RIGHT: "─",
         DOWN | RIGHT: "┌", DOWN | LEFT: "┐", UP | RIGHT: "└", UP | LEFT: "┘",
         UP | DOWN | RIGHT: "├", UP | DOWN | LEFT: "┤", DOWN | LEFT | RIGHT: "┬",
         UP | LEFT | RIGHT: "┴", CROSSING: "┼"}
DOWN_AT = 2  # in the top-to-bottom drawing, the column of the lines straight down between boxes
BOX = {"plain": "╭─╮│╰╯", "output": "╔═╗║╚╝", "hidden": "╭┄╮┆╰╯"}


@dataclass(eq=False)
class Item:
    """One thing in a column: a node's box, or a line carrying a node's value onward."""

    node: int  # the node boxed or carried
    carried: bool
    lines: list[str]  # a box's text ([] for a carried line)
    in_offsets: list[int]  # rows of the argument ports below the top, in argument order
    out_offset: int
    height: int
    top: int = 0  # always even: outputs on even rows, argument ports on odd rows
    order: int = 0  # position in its column

    @property
    def in_rows(self) -> list[int]:
        return [self.top + k for k in self.in_offsets]

    @property
    def out_row(self) -> int:
        return self.top + self.out_offset


@dataclass(eq=False)
class Link:
    """A line across one gap: from an item's output to an argument port of the next column."""

    left: Item
    right: Item
    port: int  # index into right.in_offsets
    label: str = ""  # the local derivative, on the last link of an edge
    arrow: bool = False  # right is a box (not a carried line)


def draw_with_boxes(picture: Picture, digits: int = 4, ascii: bool = False, layout: str = "lr"):
    """The drawing as lines of ``(text, style)`` runs (styles: box, output, hidden, unused, id,
    text, edge, label), and where each node's box is: ``(id, first column, end column)``.
    ``layout``: "lr" (inputs on the left) or "tb" (inputs at the top). With ``ascii``, every
    character is ASCII (``+-|`` lines, ``>`` arrowheads)."""
    fix = to_ascii if ascii else (lambda text: text)
    if layout == "tb":
        lines, boxes = _draw_top_to_bottom(picture, digits, fix)
    else:
        lines, boxes = _draw_left_to_right(picture, digits, fix)
    if ascii:
        lines = [[(to_ascii(chunk), style) for chunk, style in line] for line in lines]
    return lines, boxes


def _draw_left_to_right(picture: Picture, digits: int, fix):
    nodes, edges = picture.nodes, picture.edges
    layer_column = {layer: c for c, layer in enumerate(sorted({n.layer for n in nodes}))}
    column_of = [layer_column[n.layer] for n in nodes]
    into: dict[int, list[Edge]] = {}
    farthest: dict[int, int] = {}
    for e in edges:
        into.setdefault(e.target, []).append(e)
        farthest[e.source] = max(farthest.get(e.source, 0), column_of[e.target])
    carries = sum(max(0, far - column_of[s] - 1) for s, far in farthest.items())
    if len(nodes) + carries > MAX_ITEMS:
        raise LimitError(f"the drawing would have {len(nodes) + carries:,} boxes and lines",
                         hint="lower --max-nodes, or use --format dot")

    for straight in (True, False):  # without straight lines, every gap can be routed
        columns, links = _items(picture, digits, fix, column_of, into, farthest, straight)
        _order(columns, links)
        _level(columns, links, straight)
        if straight:
            _swap_for_straight_lines(columns, links)
        gaps = _route(columns, links)
        if gaps is not None:
            break
    height = max(item.top + item.height for column in columns for item in column)
    grid = _Grid(height)
    x = 0
    spans = []
    for c, column in enumerate(columns):
        width = max([3] + [width_of(line) + 4 for item in column for line in item.lines])
        for item in column:
            if item.carried:
                grid.carried_line(x, width, item)
            else:
                grid.box(x, width, item, nodes[item.node], item.node in farthest)
                spans.append((nodes[item.node].id, x, x + width))
        x += width
        if c < len(links):
            x += grid.gap(x, gaps[c])
    return grid.runs(), spans


def _items(picture: Picture, digits: int, fix, column_of, into, farthest, straight: bool):
    """The columns' items (boxes and carried lines) and the links across each gap. A carried
    line is one row that runs straight through its column, or (``straight`` off) enters one row
    above where it leaves, so its ports keep the odd/even rows of the boxes' ports."""
    nodes = picture.nodes
    columns: list[list[Item]] = [[] for _ in range(max(column_of) + 1)]
    box = [_box_item(i, [fix(t) for t in node_lines(node, digits)],
                     [e.position for e in into.get(i, ())], straight)
           for i, node in enumerate(nodes)]
    for i, item in enumerate(box):
        columns[column_of[i]].append(item)
    links: list[list[Link]] = [[] for _ in range(len(columns) - 1)]
    carry: dict[tuple[int, int], Item] = {}
    for s, far in farthest.items():
        for c in range(column_of[s] + 1, far):
            carry[(s, c)] = (Item(s, True, [], [0], 0, 1) if straight
                             else Item(s, True, [], [1], 2, 3))
            columns[c].append(carry[(s, c)])
            left = box[s] if c - 1 == column_of[s] else carry[(s, c - 1)]
            links[c - 1].append(Link(left, carry[(s, c)], 0))
    for t, es in into.items():
        c = column_of[t] - 1
        for port, e in enumerate(es):
            left = box[e.source] if column_of[e.source] == c else carry[(e.source, c)]
            links[c].append(Link(left, box[t], port, fix(edge_text(e, digits)), True))
    return columns, links


def _draw_top_to_bottom(picture: Picture, digits: int, fix):
    """Boxes one under another in tape order (inputs first, the output last), all the same
    width. A box whose first argument is the box just above it takes that line straight down,
    from ``┬`` on the upper box's bottom into ``▼`` on its own top, the local derivative written
    beside it. Any other value read later runs down a track right of the boxes and branches
    left into its readers (``◀``), the local derivative written on the branch. A row holds one
    box, so no two horizontal lines ever share a row; tracks whose rows are apart share a column."""
    nodes, edges = picture.nodes, picture.edges
    if len(nodes) > MAX_ITEMS:
        raise LimitError(f"the drawing would have {len(nodes):,} boxes",
                         hint="lower --max-nodes, or use --format dot")
    into: dict[int, list[Edge]] = {}
    for e in edges:
        into.setdefault(e.target, []).append(e)
    items = [_box_item(i, [fix(t) for t in node_lines(node, digits)],
                       [e.position for e in into.get(i, ())]) for i, node in enumerate(nodes)]
    order = _top_to_bottom_order(picture, into)
    above = {order[k]: order[k - 1] for k in range(1, len(order))}
    down = {t: fix(edge_text(es[0], digits)) for t, es in into.items()
            if es[0].position == 0 and es[0].source == above[t]}  # straight down, and its label
    width = max([3] + [width_of(line) + 4 for item in items for line in item.lines]
                + [width_of(label) + 6 for label in down.values()])
    top = 0
    for i in order:
        items[i].top = top
        top += items[i].height + 1
    readers: dict[int, list[tuple[int, str, bool]]] = {}
    for t, es in into.items():
        for port, e in enumerate(es):  # a port per argument drawn (a constant has none)
            if port or t not in down:
                readers.setdefault(e.source, []).append(
                    (items[t].in_rows[port], fix(edge_text(e, digits)), True))
    nets = [_Net(items[s].out_row, targets) for s, targets in sorted(readers.items())]
    _share_tracks(nets)
    label_width = max((width_of(t[1]) for net in nets for t in net.targets), default=0)
    zone = width + 1  # labels between the arrowheads and the tracks
    first_track = zone + (label_width + 2 if label_width else 0) + 1
    grid = _Grid(max(top - 1, 1))
    for i, item in enumerate(items):
        grid.box(0, width, item, nodes[i], i in readers)
    for t, label in down.items():
        upper = items[above[t]]
        bottom = upper.top + upper.height - 1
        grid.put(bottom, DOWN_AT, "╤" if nodes[above[t]].is_output else "┬",
                 grid.rows[bottom][DOWN_AT][1])
        grid.line(bottom + 1, DOWN_AT, UP | DOWN, -1 - t)
        if label:
            grid.put(bottom + 1, DOWN_AT + 2, label, "label")
        grid.put(items[t].top, DOWN_AT, "▼", "edge")
    for net in nets:
        owner, track = id(net), first_track + 2 * net.track
        lo, hi = net.span()
        grid.hline(net.source_row, width, track, owner)
        for row in range(lo, hi + 1):
            bits = (UP if row > lo else 0) | (DOWN if row < hi else 0)
            grid.line(row, track, bits | (LEFT if row == lo else 0), owner)
        for row, label, _ in net.targets:
            grid.line(row, track, LEFT, owner)
            grid.hline(row, width + 1, track, owner)
            grid.put(row, width, "◀", "edge")
            if label:
                grid.put(row, zone, f" {label} ", "label")
    return grid.runs(), [(node.id, 0, width) for node in nodes]


def _top_to_bottom_order(picture: Picture, into: dict[int, list[Edge]]) -> list[int]:
    """The nodes in an order of evaluation: the inputs first (as on the tape), then each node
    after its arguments, the first argument last where it can be, so it is the box just above
    (a depth-first walk from each node no one reads, the output's last; iterative)."""
    nodes = picture.nodes
    order = [i for i in range(len(nodes)) if not into.get(i)]
    placed = set(order)
    read = {e.source for e in picture.edges}
    roots = [i for i in range(len(nodes)) if i not in read and i != picture.output]
    stack = [(root, False) for root in reversed(roots + [picture.output])]
    while stack:
        i, ready = stack.pop()
        if i in placed:
            continue
        if ready:
            placed.add(i)
            order.append(i)
            continue
        stack.append((i, True))
        stack += [(e.source, False) for e in into.get(i, ())]  # the first argument on top
    return order


def _box_item(node: int, lines: list[str], positions: list[int], level: bool = False) -> Item:
    """A box, its text padded so its ports fit: the output on the second line, the first
    argument on the first line and the second argument on the third (``2 - x``: x on the third).
    With ``level``, a box with one argument line takes it on its second line, level with its
    output, so a chain of functions is one straight line."""
    if level and len(positions) == 1:
        return Item(node, False, lines, [2], 2, len(lines) + 2)
    content = max(len(lines), 3 if 1 in positions else 2)
    lines = lines + [""] * (content - len(lines))
    return Item(node, False, lines, [1 + 2 * p for p in positions], 2, content + 2)


# -- order within columns: few crossings (the barycentre heuristic) ----------------------------

def _crossings(links: list[list[Link]]) -> int:
    """Pairs of links that cross, over all gaps: a link from higher up reaching a lower port."""
    total = 0
    for gap in links:
        ends: list[tuple[int, int]] = []  # ports reached from the items above, sorted
        by_left: dict[int, list[tuple[int, int]]] = {}
        for link in gap:
            by_left.setdefault(link.left.order, []).append((link.right.order, link.port))
        for left in sorted(by_left):
            group = by_left[left]
            total += sum(len(ends) - bisect.bisect_right(ends, end) for end in group)
            for end in group:
                bisect.insort(ends, end)
    return total


def _order(columns: list[list[Item]], links: list[list[Link]]) -> None:
    """Order each column by the mean position of its neighbours, sweeping right then left a
    few times and keeping the order with the fewest crossings. The inputs keep the order of
    their first appearance."""
    for column in columns:
        for k, item in enumerate(column):
            item.order = k
    if len(columns) < 2:
        return
    best, fewest = [list(col) for col in columns], _crossings(links)

    def sweep(c: int, gap: list[Link], from_left: bool) -> None:
        total: dict[int, float] = {}
        count: dict[int, int] = {}
        for link in gap:
            me, other = (link.right, link.left) if from_left else (link.left, link.right)
            position = other.order + (0 if from_left else link.port / 2)
            total[id(me)] = total.get(id(me), 0.0) + position
            count[id(me)] = count.get(id(me), 0) + 1
        columns[c].sort(key=lambda item: (total[id(item)] / count[id(item)] if id(item) in total
                                          else item.order, item.order))
        for k, item in enumerate(columns[c]):
            item.order = k

    for _ in range(SWEEPS):
        for c in range(1, len(columns)):
            sweep(c, links[c - 1], True)
        for c in range(len(columns) - 2, 0, -1):
            sweep(c, links[c], False)
        crossings = _crossings(links)
        if crossings < fewest:
            best, fewest = [list(col) for col in columns], crossings
    for c, column in enumerate(best):
        columns[c] = column
        for k, item in enumerate(column):
            item.order = k


def _swap_for_straight_lines(columns: list[list[Item]], links: list[list[Link]]) -> None:
    """Swap neighbours in a column where that lets more lines run level without adding a
    crossing (the barycentre order knows crossings, not rows). Small drawings only: each try
    levels the whole drawing again."""
    if sum(len(column) for column in columns) > SWAP_LIMIT:
        return

    def score() -> tuple[int, int]:
        _level(columns, links, True)
        bent = sum(1 for gap in links for link in gap
                   if link.left.out_row != link.right.in_rows[link.port])
        return _crossings(links), bent

    crossings, bent = score()
    improved = True
    while improved:
        improved = False
        for column in columns[1:]:  # the inputs keep their order
            for k in range(len(column) - 1):
                column[k], column[k + 1] = column[k + 1], column[k]
                column[k].order, column[k + 1].order = k, k + 1
                c, b = score()
                if c <= crossings and b < bent:
                    crossings, bent, improved = c, b, True
                else:
                    column[k], column[k + 1] = column[k + 1], column[k]
                    column[k].order, column[k + 1].order = k, k + 1
    _level(columns, links, True)


# -- rows: level each item with its neighbours, keeping the order ------------------------------

def _level(columns: list[list[Item]], links: list[list[Link]], straight: bool) -> None:
    """Give every item its rows: level with the lines it connects to as far as the items around
    it allow (so lines run straight where they can), by rounds of isotonic regression. Without
    ``straight``, tops are even (output ports on even rows, argument ports on odd ones)."""
    for column in columns:
        _settle(column, {}, straight)
    for _ in range(SWEEPS):
        for c in range(1, len(columns)):
            _settle(columns[c], _wishes(links[c - 1], True), straight)
        for c in range(len(columns) - 2, -1, -1):
            _settle(columns[c], _wishes(links[c], False), straight)
    for c in range(1, len(columns)):
        _settle(columns[c], _wishes(links[c - 1], True), straight)
    lowest = min(item.top for column in columns for item in column)
    for column in columns:
        for item in column:
            item.top -= lowest  # without straight, lowest is even, so tops stay even


def _wishes(gap: list[Link], from_left: bool) -> dict[int, int]:
    """For each item on one side of a gap, the top that levels one of its ports with the other
    side's: the median over its links (of two, the one nearer where it is), so at least one of
    its lines can run straight, where a mean would bend them all."""
    wishes: dict[int, list[int]] = {}
    items: dict[int, Item] = {}
    for link in gap:
        if from_left:
            me, wish = link.right, link.left.out_row - link.right.in_offsets[link.port]
        else:
            me, wish = link.left, link.right.in_rows[link.port] - link.left.out_offset
        wishes.setdefault(id(me), []).append(wish)
        items[id(me)] = me
    chosen = {}
    for key, values in wishes.items():
        values.sort()
        middle = values[(len(values) - 1) // 2: len(values) // 2 + 1]
        chosen[key] = min(middle, key=lambda v: (abs(v - items[key].top), v))
    return chosen


def _settle(column: list[Item], wishes: dict[int, int], straight: bool = True) -> None:
    """Tops for a column's items, in order, one blank row apart, as many as possible exactly at
    their wishes (items without one stay where they are): the least absolute deviations, by
    pooling adjacent violators into blocks placed at their members' median."""
    offsets, offset = [], 0
    for item in column:
        offsets.append(offset)
        step = item.height + 1
        offset += step + (0 if straight else step & 1)
    blocks: list[list[int]] = []  # each block: its members' wishes less their offsets, sorted
    for item, o in zip(column, offsets):
        blocks.append([wishes.get(id(item), item.top) - o])
        while len(blocks) > 1 and _median(blocks[-2]) > _median(blocks[-1]):
            small, large = sorted((blocks.pop(), blocks.pop()), key=len)
            for v in small:
                bisect.insort(large, v)
            blocks.append(large)
    k = 0
    for block in blocks:
        y = _median(block)
        if not straight:
            y = 2 * round(y / 2)
        for _ in block:
            column[k].top = y + offsets[k]
            k += 1


def _median(values: list[int]) -> int:
    return values[(len(values) - 1) // 2]


def _route(columns: list[list[Item]], links: list[list[Link]]) -> list[list[_Net]] | None:
    """The nets of every gap. Where a gap's tracks cannot be ordered (two lines would run into
    each other), the items right of it from the one with the tangled port down move one row
    down and both gaps beside them are routed again; None if a few such nudges do not do."""
    gaps: list[list[_Net]] = [[] for _ in links]
    pending = set(range(len(links)))
    nudges = NUDGES
    while pending:
        g = min(pending)
        pending.discard(g)
        try:
            gaps[g] = _nets(links[g])
        except _Tangled as tangle:
            if nudges == 0:
                return None
            nudges -= 1
            column = columns[g + 1]
            k = next(k for k, item in enumerate(column) if tangle.row in item.in_rows)
            for item in column[k:]:
                item.top += 1
            pending |= {g} | ({g + 1} if g + 1 < len(links) else set())
    return gaps


class _Tangled(Exception):
    """A gap's lines cannot be drawn apart; moving the port at ``row`` would untangle them."""

    def __init__(self, row: int):
        super().__init__(row)
        self.row = row


def _nets(gap: list[Link]) -> list[_Net]:
    """The gap's lines grouped by the item they leave, each group on a vertical track, tracks in
    a good order; :class:`_Tangled` when no order of tracks draws them apart (:func:`_in_order`).

    A target level with its source is reached by a straight line, on no track. The other targets
    hang off one track; when the source row has targets above, below and level, the ones above
    and the ones below get a track each, so the junctions read ``┴ ┬`` (never ``┼``, a crossing)."""
    groups: dict[int, tuple[int, list[tuple[int, str, bool]]]] = {}
    for link in gap:
        group = groups.setdefault(id(link.left), (link.left.out_row, []))
        group[1].append((link.right.in_rows[link.port], link.label, link.arrow))
    nets = []
    for owner, (row, targets) in groups.items():
        level = [t for t in targets if t[0] == row]
        above = [t for t in targets if t[0] < row]
        below = [t for t in targets if t[0] > row]
        if level:
            nets.append(_Net(row, level, owner=owner, track=None))
        if level and above and below:
            nets += [_Net(row, above, owner=owner), _Net(row, below, owner=owner)]
        elif above or below:
            nets.append(_Net(row, above + below, owner=owner))
    straight = [net for net in nets if net.track is None]
    arranged = _in_order(_arrange([net for net in nets if net.track is not None]))
    _share_tracks(arranged)
    return straight + arranged


def _in_order(nets: list[_Net]) -> list[_Net]:
    """``nets`` reordered, as little as possible, so a net whose source row is another's target
    row has the track to its left: its line then ends (at its track) before the other's begins.
    When those demands go round in a circle: :class:`_Tangled`, naming the highest such row."""
    source_at: dict[int, list[int]] = {}
    for k, net in enumerate(nets):
        source_at.setdefault(net.source_row, []).append(k)
    before: list[list[int]] = [[] for _ in nets]  # before[k]: nets that must precede net k
    for k, net in enumerate(nets):
        for row, _, _ in net.targets:
            before[k] += [j for j in source_at.get(row, ()) if nets[j].owner != net.owner]
    after: list[list[int]] = [[] for _ in nets]
    waiting = [len(b) for b in before]
    for k, b in enumerate(before):
        for j in b:
            after[j].append(k)
    ready = [k for k, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(nets[k])
        for m in after[k]:
            waiting[m] -= 1
            if waiting[m] == 0:
                heapq.heappush(ready, m)
    if len(order) < len(nets):
        placed = {id(net) for net in order}
        sources = {net.source_row for net in nets if id(net) not in placed}
        raise _Tangled(min(row for net in nets if id(net) not in placed
                           for row, _, _ in net.targets if row in sources))
    return order


@dataclass(eq=False)
class _Net:
    """One item's value crossing one gap: from its row on the left to rows on the right."""

    source_row: int
    targets: list[tuple[int, str, bool]]  # (row, label, ends at a box: draw an arrowhead)
    track: int | None = 0  # its vertical track, counted from the left; None: a straight line
    owner: int = 0  # one item's nets in one gap share an owner: their lines may join

    def span(self) -> tuple[int, int]:
        rows = [self.source_row] + [t[0] for t in self.targets]
        return min(rows), max(rows)


def _track_crossings(nets: list[_Net]) -> int:
    """How many crossings the nets make with their tracks in this order (left to right)."""
    total = 0
    spans = [net.span() for net in nets]
    for i, net in enumerate(nets):
        for j, (lo, hi) in enumerate(spans):
            if j < i and lo < net.source_row < hi:  # my source line crosses a track to my left
                total += 1
            if j > i:  # my target lines cross the tracks to my right
                total += sum(1 for row, _, _ in net.targets if lo < row < hi)
    return total


def _arrange(nets: list[_Net]) -> list[_Net]:
    """An order of the tracks with few crossings: the better of two natural orders, then
    swaps of neighbours while they help (only for small gaps: this is quadratic)."""
    if len(nets) < 2:
        return nets
    candidates = [sorted(nets, key=lambda n: n.source_row),
                  sorted(nets, key=lambda n: -n.source_row)]
    if len(nets) > 40:
        return candidates[0]
    best = min(candidates, key=_track_crossings)
    score = _track_crossings(best)
    improved = True
    while improved:
        improved = False
        for i in range(len(best) - 1):
            trial = best[:i] + [best[i + 1], best[i]] + best[i + 2:]
            trial_score = _track_crossings(trial)
            if trial_score < score:
                best, score, improved = trial, trial_score, True
    return best


def _share_tracks(nets: list[_Net]) -> None:
    """Put each net on the leftmost track right of every earlier net whose rows it overlaps:
    nets whose rows are apart never meet, so they may share a track (the gap stays narrow)."""
    if len(nets) > 1000:  # quadratic; a gap this busy is unreadable anyway
        for k, net in enumerate(nets):
            net.track = k
        return
    spans = [net.span() for net in nets]
    for i, (lo, hi) in enumerate(spans):
        nets[i].track = 1 + max((nets[j].track for j, (a, b) in enumerate(spans[:i])
                                 if lo <= b + 1 and a <= hi + 1), default=-1)


class _Grid:
    """Rows of cells; a cell is a character with a style, or a set of line directions."""

    def __init__(self, height: int):
        self.rows: list[dict[int, tuple[str, str]]] = [{} for _ in range(height)]
        # x -> (directions, owner): lines of different owners in one cell are a crossing
        self.lines: list[dict[int, tuple[int, int]]] = [{} for _ in range(height)]

    def put(self, row: int, x: int, text: str, style: str) -> None:
        """Write ``text`` from column x: a wide character takes two cells (the second holds
        ""), a combining mark joins the character before it."""
        cells = self.rows[row]
        for ch in text:
            w = width_of(ch)
            if w == 0 and x - 1 in cells:
                before, before_style = cells[x - 1]
                if before == "" and x - 2 in cells:  # the second cell of a wide character
                    cells[x - 2] = (cells[x - 2][0] + ch, cells[x - 2][1])
                else:
                    cells[x - 1] = (before + ch, before_style)
                continue
            cells[x] = (ch, style)
            if w == 2:
                cells[x + 1] = ("", style)
            x += max(w, 1)

    def line(self, row: int, x: int, bits: int, owner: int) -> None:
        old = self.lines[row].get(x)
        if old is not None and old[1] != owner:
            self.lines[row][x] = (CROSSING, owner)
        else:
            self.lines[row][x] = ((old[0] if old else 0) | bits, owner)

    def hline(self, row: int, x0: int, x1: int, owner: int) -> None:
        """A horizontal line over columns x0..x1-1."""
        for x in range(x0, x1):
            self.line(row, x, LEFT | RIGHT, owner)

    def box(self, x: int, width: int, item: Item, node, has_users: bool) -> None:
        kind = "output" if node.is_output else "hidden" if node.kind == "hidden" else "plain"
        style = "box" if kind == "plain" else kind
        if not node.live and kind != "hidden":
            style = "unused"
        tl, h, tr, v, bl, br = BOX[kind]
        top, inner = item.top, width - 2
        self.put(top, x, tl + h * inner + tr, style)
        for k, text in enumerate(item.lines):
            row = top + 1 + k
            self.put(row, x, v, style)
            pad = " " * (inner - 1 - width_of(text))
            self.put(row, x + 1, " " + text + pad, "id" if k == 0 else "text")
            right = ("╟" if kind == "output" else "├") if has_users and row == item.out_row else v
            self.put(row, x + width - 1, right, style)
        self.put(top + item.height - 1, x, bl + h * inner + br, style)

    def carried_line(self, x: int, width: int, item: Item) -> None:
        owner = -1 - item.node
        if item.in_rows[0] == item.out_row:  # straight through the column
            self.hline(item.out_row, x, x + width, owner)
            return
        middle = x + width // 2
        self.hline(item.in_rows[0], x, middle, owner)
        self.line(item.in_rows[0], middle, LEFT | DOWN, owner)
        self.line(item.out_row, middle, UP | RIGHT, owner)
        self.hline(item.out_row, middle + 1, x + width, owner)

    def gap(self, x: int, nets: list[_Net]) -> int:
        """Draw the nets of one gap starting at column x; return the gap's width."""
        label_width = max((width_of(t[1]) for net in nets for t in net.targets), default=0)
        tracks = 1 + max((net.track for net in nets if net.track is not None), default=-1)
        zone = x + 2 + 2 * tracks  # the label zone starts after the tracks
        width = zone - x + (label_width + 2 if label_width else 0) + 2
        for net in nets:
            owner = net.owner or id(net)
            if net.track is None:  # level: one straight line across the gap
                track = x
            else:
                track = x + 2 + 2 * net.track
                lo, hi = net.span()
                self.hline(net.source_row, x, track, owner)
                self.line(net.source_row, track, LEFT, owner)
                for row in range(lo, hi + 1):
                    self.line(row, track, (UP if row > lo else 0) | (DOWN if row < hi else 0),
                              owner)
            for row, label, arrow in net.targets:
                self.line(row, track, RIGHT if net.track is not None else LEFT | RIGHT, owner)
                self.hline(row, track + 1, x + width - (1 if arrow else 0), owner)
                if label:
                    self.put(row, zone, f" {label} ", "label")
                if arrow:
                    self.put(row, x + width - 1, "▶", "edge")
        return width

    def runs(self) -> list[list[tuple[str, str]]]:
        out = []
        for cells, lines in zip(self.rows, self.lines):
            merged = {x: (GLYPH[bits if bits in GLYPH else CROSSING], "edge")
                      for x, (bits, _) in lines.items()}
            merged.update(cells)  # text (boxes, labels, arrowheads) is drawn over lines
            runs: list[tuple[str, str]] = []
            end = max(merged, default=-1) + 1
            for x in range(end):
                ch, style = merged.get(x, (" ", "text"))
                if runs and runs[-1][1] == style:
                    runs[-1] = (runs[-1][0] + ch, style)
                else:
                    runs.append((ch, style))
            out.append(runs)
        return out
