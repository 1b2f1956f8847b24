"""Page geometry shared by the builtin parser and OCR: 0-1000 boxes and two-column reading order."""
from __future__ import annotations

from collections.abc import Sequence

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


def to_1000(box: Sequence[float], width: float, height: float) -> list[float]:
    """MinerU's convention: integer-ish coordinates on a 1000 x 1000 grid over the page, clamped."""
    x0, y0, x1, y1 = box
    def scale(v: float, size: float) -> float:
        return float(round(min(1000.0, max(0.0, v * 1000.0 / size))))
    return [scale(x0, width), scale(y0, height), scale(x1, width), scale(y1, height)]


def union(boxes: Sequence[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def reading_order(boxes: Sequence[Box]) -> list[int]:
    """Indices of `boxes` in reading order for one- and two-column pages.

    A box that crosses the middle of the text area (title, full-width figure, single-column paragraph) splits
    the page into bands; inside a band the left column is read before the right one, each top to bottom.
    That is how a human reads a two-column paper with a full-width figure in the middle of the page.
    """
    if not boxes:
        return []
    left, right = min(b[0] for b in boxes), max(b[2] for b in boxes)
    mid = (left + right) / 2
    tol = (right - left) * 0.02
    spanning = sorted((i for i, b in enumerate(boxes) if b[0] < mid - tol and b[2] > mid + tol),
                      key=lambda i: (boxes[i][1], boxes[i][0]))
    span_set = set(spanning)
    cuts = [(boxes[i][1] + boxes[i][3]) / 2 for i in spanning]
    bands: list[list[int]] = [[] for _ in range(len(spanning) + 1)]
    for i, b in enumerate(boxes):
        if i in span_set:
            continue
        cy = (b[1] + b[3]) / 2
        bands[sum(1 for c in cuts if c < cy)].append(i)
    order: list[int] = []
    for k, band in enumerate(bands):
        # Column first (0 = left of the middle), then top to bottom.
        order.extend(sorted(band, key=lambda i: (boxes[i][0] >= mid - tol, boxes[i][1], boxes[i][0])))
        if k < len(spanning):
            order.append(spanning[k])
    return order
