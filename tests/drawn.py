"""Read a terminal drawing of ``gradcli graph`` back into boxes and edges, checking its topology.

:func:`read_drawing` finds every box (``╭╮╰╯`` or ``╔╗╚╝`` corners), then follows every line
from every box's output ports (``├``/``╟`` on its right side, ``┬``/``╤`` on its bottom) cell by
cell to the arrowheads it reaches (``▶`` into a box on its right, ``◀`` into a box on its left,
``▼`` on a box's top: its first argument), branching at ``┬ ├ ┤ ┴`` and going straight through
``┼`` (a crossing). On the way it asserts that

- a line never enters a box, runs off the drawing or ends in the open;
- every line character joins the one it came from (``─`` is not entered from above);
- an arrowhead enters an argument port: the box's first line (argument 0) or third (argument 1),
  or its second line (then the box's only argument line: its position is given as None);
- every line and arrowhead in the drawing is reached from some box (no stray or lost lines).

Each edge comes back as ``(from id, to id, argument position, label, bends)``, where bends counts
the changes of direction on the path from the output port to the arrowhead (a straight line
between two level ports has 0). Only the Unicode drawing is read (in ASCII a ``+`` is a corner, a
junction and a crossing alike).
"""

from __future__ import annotations

from dataclasses import dataclass

LINES = {"─": "LR", "│": "UD", "┌": "DR", "┐": "DL", "└": "UR", "┘": "UL", "├": "UDR",
         "┤": "UDL", "┬": "DLR", "┴": "ULR", "┼": "UDLR"}
STEP = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
OPPOSITE = {"U": "D", "D": "U", "L": "R", "R": "L"}
ARROWS = {"▶": "R", "◀": "L", "▼": "D"}  # the heading a line has when it reaches the arrowhead


@dataclass
class Box:
    top: int
    left: int
    height: int
    width: int
    lines: list[str]  # the text inside, stripped

    def __getitem__(self, k):  # (top, left, height, width, lines), as the older readers gave
        return (self.top, self.left, self.height, self.width, self.lines)[k]


def read_drawing(text: str):
    """``(boxes, edges)``: ``{id: Box}`` and ``[(from, to, position, label, bends)]``."""
    grid = text.splitlines()
    width = max((len(line) for line in grid), default=0)
    grid = [line.ljust(width) for line in grid]
    boxes: dict[str, Box] = {}
    inside: dict[tuple[int, int], str] = {}
    for r, line in enumerate(grid):
        for c, ch in enumerate(line):
            if ch in "╭╔":
                right = next(k for k in range(c + 1, width) if grid[r][k] in "╮╗")
                bottom = next(k for k in range(r + 1, len(grid)) if grid[k][c] in "╰╚")
                assert grid[bottom][right] in "╯╝", f"box at ({r}, {c}) is not closed"
                lines = [grid[k][c + 1:right].strip() for k in range(r + 1, bottom)]
                name = lines[0].split()[0]
                assert name not in boxes, f"{name} is drawn twice"
                boxes[name] = Box(r, c, bottom - r + 1, right - c + 1, lines)
                for rr in range(r, bottom + 1):
                    for cc in range(c, right + 1):
                        assert (rr, cc) not in inside, f"boxes {name} and {inside[rr, cc]} overlap"
                        inside[(rr, cc)] = name

    def target_port(name: str, r: int, c: int, box_name: str | None) -> tuple[str, int | None]:
        assert box_name is not None, f"an arrowhead at ({r}, {c}) from {name} points at no box"
        box = boxes[box_name]
        offset = r - box.top
        assert offset in (1, 2, 3) and offset < box.height - 1, (
            f"the arrowhead from {name} enters {box_name} on line {offset}, not a port")
        return box_name, None if offset == 2 else (offset - 1) // 2

    edges = []
    reached: set[tuple[int, int]] = set()
    for name, box in boxes.items():
        right = box.left + box.width - 1
        ports = [r for r in range(box.top, box.top + box.height) if grid[r][right] in "├╟"]
        assert len(ports) <= 1, f"{name} has {len(ports)} output ports"
        assert all(r == box.top + 2 for r in ports), f"{name}'s output port is off its second line"
        bottom = box.top + box.height - 1
        downs = [c for c in range(box.left + 1, right) if grid[bottom][c] in "┬╤"]
        assert len(downs) <= 1, f"{name} has {len(downs)} lines down"
        stack = [(r, right + 1, "R", "", 0) for r in ports] + [(bottom + 1, c, "D", "", 0)
                                                               for c in downs]
        seen = set()
        while stack:
            r, c, heading, label, bends = stack.pop()
            assert 0 <= r < len(grid) and 0 <= c < width, f"a line from {name} runs off at ({r}, {c})"
            ch = grid[r][c]
            if ch == "▼":  # on the top border of the box it enters
                target = inside.get((r, c))
                assert heading == "D" and target and boxes[target].top == r, (
                    f"▼ at ({r}, {c}) is not on a box's top, or is reached going {heading}")
                label = grid[r - 1][c + 1:]  # written beside the line, on the row above
                label = label[:min([k for k, x in enumerate(label) if x in LINES] + [len(label)])]
                edges.append((name, inside[r, c], 0, label.strip(), bends))
                reached.add((r, c))
                continue
            assert (r, c) not in inside, f"a line from {name} runs into {inside[r, c]} at ({r}, {c})"
            reached.add((r, c))
            if ch in ARROWS:
                assert heading == ARROWS[ch], f"{ch} at ({r}, {c}) reached heading {heading}"
                dc = 1 if ch == "▶" else -1
                target, port = target_port(name, r, c, inside.get((r, c + dc)))
                edges.append((name, target, port, label.strip(), bends))
                continue
            if ch not in LINES:  # text on a line (a label) is read while going across
                assert heading in "LR", f"a line from {name} ends at {ch!r} ({r}, {c})"
                text = label + ch if heading == "R" else ch + label
                stack.append((r + STEP[heading][0], c + STEP[heading][1], heading, text, bends))
                continue
            assert OPPOSITE[heading] in LINES[ch], f"{ch!r} at ({r}, {c}) does not join"
            if (r, c, heading) in seen:
                continue
            seen.add((r, c, heading))
            exits = heading if ch == "┼" else LINES[ch].replace(OPPOSITE[heading], "")
            for d in exits:
                stack.append((r + STEP[d][0], c + STEP[d][1], d, label, bends + (d != heading)))
    stray = [(r, c) for r, line in enumerate(grid) for c, ch in enumerate(line)
             if (ch in LINES and (r, c) not in inside or ch in ARROWS) and (r, c) not in reached]
    assert not stray, f"lines no box's output reaches, at {stray[:5]}"
    for name in boxes:  # an argument on the second line is the box's only one
        ports = [edge[2] for edge in edges if edge[1] == name]
        assert None not in ports or len(ports) == 1, f"{name}: a line on its second line, and more"
    return boxes, edges


def total_bends(text: str) -> int:
    """The changes of direction over all edges of a drawing (a shared stretch counts per edge)."""
    return sum(edge[4] for edge in read_drawing(text)[1])
