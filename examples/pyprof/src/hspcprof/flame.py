"""An exact flame graph as a standalone SVG: each box a calling context, as wide as its total
time (its own time plus its callees'), the outermost frame at the bottom; hovering a box gives
its function, where it is, its calls and its times. Boxes narrower than a tenth of a pixel are
left out (their time stays in their parent's width), so the file stays small."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from hspcprof.stacks import Frame, Stack

WIDTH = 1200.0
ROW = 17
PAD = 10
TITLE = 24
MIN_BOX = 0.1  # pixels


@dataclass
class Box:
    """A node of the tree the stacks make, with its callees' times summed in."""

    frame: Frame
    calls: int = 0
    own: float = 0.0
    width: float = 0.0  # seconds: own plus the children's widths
    children: dict[Frame, Box] = field(default_factory=dict)


def tree(stacks: Sequence[Stack]) -> Box:
    root = Box(Frame("all"))
    for stack in stacks:
        box = root
        for frame in stack.frames:
            box = box.children.setdefault(frame, Box(frame))
        box.calls += stack.calls
        box.own += stack.own
    settle(root)
    return root


def settle(box: Box) -> float:
    box.width = box.own + sum(settle(child) for child in box.children.values())
    return box.width


def colour(frame: Frame) -> str:
    """Warm colours, fixed per function: the same function looks the same in every graph."""
    h = zlib.crc32(frame.label().encode())
    return f"rgb({205 + h % 50},{(h >> 8) % 180 + 40},{(h >> 16) % 55})"


def boxes(root: Box, scale: float) -> list[tuple[float, int, Box]]:
    """(x, depth, box) for every box wide enough to draw, parents before children."""
    out: list[tuple[float, int, Box]] = []
    todo = [(float(PAD), 0, root)]
    while todo:
        x, depth, box = todo.pop()
        out.append((x, depth, box))
        for child in sorted(box.children.values(), key=lambda b: b.frame):
            if child.width * scale >= MIN_BOX:
                todo.append((x, depth + 1, child))
            x += child.width * scale
    return out


def text(box: Box, width: float) -> str:
    fits = int(width // 7)
    name = box.frame.name
    if fits < 3:
        return ""
    return escape(name if len(name) <= fits else f"{name[: fits - 2]}..")


def svg(stacks: Sequence[Stack], title: str) -> str:
    root = tree(stacks)
    scale = (WIDTH - 2 * PAD) / root.width if root.width > 0 else 0.0
    placed = boxes(root, scale)
    rows = 1 + max(depth for _, depth, _ in placed)
    height = TITLE + rows * ROW + PAD
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH:.0f}" height="{height}" '
        f'font-family="Verdana,sans-serif" font-size="11">',
        f'<rect width="100%" height="100%" fill="#f8f8f0"/>'
        f'<text x="{WIDTH / 2:.0f}" y="17" text-anchor="middle" font-size="15">'
        f"{escape(title)}</text>",
    ]
    for x, depth, box in placed:
        width = box.width * scale
        y = height - PAD - (depth + 1) * ROW
        tip = f"{box.frame.label()}: {box.calls} calls, total {box.width * 1e3:.3f} ms, "
        tip += f"own {box.own * 1e3:.3f} ms ({box.width / root.width:.2%})"
        parts.append(
            f'<g><title>{escape(tip)}</title><rect x="{x:.1f}" y="{y}" width="{width:.1f}" '
            f'height="{ROW - 1}" fill="{colour(box.frame)}" rx="2"/>'
            f'<text x="{x + 3:.1f}" y="{y + ROW - 5}">{text(box, width)}</text></g>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
