"""What the benchmark scripts share: CPU time of this process and its children, and a table row."""
from __future__ import annotations

import resource


def cpu() -> float:
    self_, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return self_.ru_utime + self_.ru_stime + children.ru_utime + children.ru_stime


def row(label: str, value) -> None:
    print(f"| {label} | {value} |", flush=True)
