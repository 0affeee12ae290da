"""A :class:`~gradcli.views.picture.Picture` as DOT (Graphviz) or Mermaid text, and DOT rendered by
Graphviz's ``dot`` program into SVG, PNG, PDF, ...

Node ids in both texts are ``n0``, ``n1``, ... (the node's index in the picture): the textbook
ids are labels only, so an input that happens to be called ``v1`` or ``end`` breaks nothing.
Each layer is one DOT rank, so Graphviz keeps the layers of the terminal drawing.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from ..errors import FileError, InputError, LimitError
from .picture import Picture, cap_note, edge_text, node_lines
from .screen import write_text

# Graphviz output formats by file suffix (what `-o FILE` accepts)
GRAPHVIZ_SUFFIXES = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".jpg": "jpg", ".jpeg": "jpg",
                     ".gif": "gif", ".ps": "ps", ".eps": "eps"}
DOT_TIMEOUT = 300  # seconds; Graphviz on a huge graph can take minutes, never forever


def dot_string(text: str) -> str:
    """``text`` as a DOT double-quoted string (backslashes and quotes escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def record_field(text: str) -> str:
    """``text`` as literal text of one field of a Graphviz record label."""
    for ch in "\\{}|<>":
        text = text.replace(ch, "\\" + ch)
    return text


def to_dot(picture: Picture, digits: int = 4) -> str:
    """The picture as a Graphviz digraph: record nodes ``{ id | operation | data | grad }``
    (micrograd's ``draw_dot``), edges labelled with their local derivatives."""
    lines = ["digraph gradcli {", "  rankdir=LR;",
             '  node [shape=record, fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];']
    note = cap_note(picture)
    if note:
        lines.append(f"  // {note}")
    for i, node in enumerate(picture.nodes):
        fields = " | ".join(record_field(line) for line in node_lines(node, digits))
        attrs = [f"label={dot_string('{ ' + fields + ' }')}"]
        if node.is_output:
            attrs.append("penwidth=2.5")
        if node.kind == "hidden":
            attrs.append("style=dashed")
        elif not node.live:
            attrs.append("color=gray50, fontcolor=gray50")
        lines.append(f"  n{i} [{', '.join(attrs)}];")
    for layer in picture.layers():
        lines.append("  { rank=same; " + " ".join(f"n{i};" for i in layer) + " }")
    for edge in picture.edges:
        label = edge_text(edge, digits)
        attrs = f" [label={dot_string(label)}]" if label else ""
        lines.append(f"  n{edge.source} -> n{edge.target}{attrs};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def mermaid_text(text: str) -> str:
    """``text`` for inside a Mermaid ``"..."`` label: quotes, ``#`` and HTML as entity codes."""
    return "".join(f"#{ord(ch)};" if ch in '"#&<>' else ch for ch in text)


def to_mermaid(picture: Picture, digits: int = 4) -> str:
    """The picture as a Mermaid flowchart (left to right), for Markdown documents."""
    lines = ["flowchart LR"]
    note = cap_note(picture)
    if note:
        lines.append(f"  %% {note}")
    for i, node in enumerate(picture.nodes):
        text = node_lines(node, digits)
        if node.value is not None and node.adjoint is not None:  # micrograd's "data | grad"
            text = text[:-2] + [f"{text[-2]} | {text[-1]}"]
        label = "<br/>".join(mermaid_text(line) for line in text)
        lines.append(f'  n{i}["{label}"]')
    for edge in picture.edges:
        label = edge_text(edge, digits)
        arrow = f'-->|"{mermaid_text(label)}"|' if label else "-->"
        lines.append(f"  n{edge.source} {arrow} n{edge.target}")
    nodes = picture.nodes
    classes = [("output", "stroke-width:3px", [i for i, n in enumerate(nodes) if n.is_output]),
               ("hidden", "stroke-dasharray:4 4",
                [i for i, n in enumerate(nodes) if n.kind == "hidden"]),
               ("unused", "color:#888,stroke:#888",
                [i for i, n in enumerate(nodes) if not n.live and n.kind != "hidden"])]
    for name, style, members in classes:
        if members:
            lines.append(f"  classDef {name} {style}")
            lines.append(f"  class {','.join(f'n{i}' for i in members)} {name}")
    return "\n".join(lines) + "\n"


def save(picture: Picture, path: str, digits: int = 4) -> None:
    """Write the picture to ``path``, by suffix: DOT text (.dot, .gv), Mermaid (.mmd), or an
    image rendered by Graphviz's ``dot`` (.svg, .png, .pdf, ...)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in (".dot", ".gv"):
        write_text(path, to_dot(picture, digits))
    elif suffix == ".mmd":
        write_text(path, to_mermaid(picture, digits))
    elif suffix in GRAPHVIZ_SUFFIXES:
        render_with_graphviz(to_dot(picture, digits), path, GRAPHVIZ_SUFFIXES[suffix])
    else:
        known = ", ".join(list(GRAPHVIZ_SUFFIXES) + [".dot", ".gv", ".mmd"])
        raise InputError(f"-o {path}: unknown file type", hint=f"use a name ending in {known}")


def render_with_graphviz(dot_text: str, path: str, fmt: str) -> None:
    """Run ``dot -T<fmt>`` on ``dot_text``, its output written to ``path``; without Graphviz,
    say how to get it."""
    program = shutil.which("dot")
    if program is None:
        raise FileError(
            f"-o {path} needs Graphviz's dot program, which is not on PATH",
            hint="install Graphviz (apt-get install graphviz, or brew install graphviz), "
                 "or print DOT text with --format dot > graph.dot (-o graph.dot needs no Graphviz)")
    try:
        done = subprocess.run([program, f"-T{fmt}"], input=dot_text.encode("utf-8"),
                              capture_output=True, timeout=DOT_TIMEOUT)
    except OSError as exc:
        raise FileError(f"cannot run {program}: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise LimitError(f"Graphviz's dot took more than {DOT_TIMEOUT} s",
                         hint="lower --max-nodes") from None
    if done.returncode != 0:
        message = (done.stderr.decode("utf-8", "replace").strip()
                   or f"exit status {done.returncode}")
        raise FileError(f"Graphviz's dot could not write {path}: {message}")
    from ..files import write_atomic
    write_atomic(path, done.stdout)  # dot's output staged and renamed like every file
