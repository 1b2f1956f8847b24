"""What the benchmark scripts share: a workspace to work in, the modes asked of it, CPU time of this process and its
children, a percentile and a table row."""
from __future__ import annotations

import resource
import tempfile
from pathlib import Path


def bench_workspace(path: str | None, prefix: str):
    """The workspace at `path` (reused: what it already indexed is not redone), or a new temporary one; with
    default settings when it has none yet."""
    from core.settings.config import Settings
    from core.settings.workspace import Workspace

    ws = Workspace(Path(path or tempfile.mkdtemp(prefix=prefix))).ensure()
    if not ws.settings_path.exists():
        ws.save_settings(Settings())
    return ws


def cpu() -> float:
    self_, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return self_.ru_utime + self_.ru_stime + children.ru_utime + children.ru_stime


def percentile(values: list[float], q: float) -> float:
    """The q-th value of the sorted values (nearest rank); nan for none."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def row(label: str, value) -> None:
    print(f"| {label} | {value} |", flush=True)


def question_rows(paths: str) -> dict[str, dict]:
    """The questions of one or more JSONL sets (comma-separated paths), by id."""
    import json
    from pathlib import Path

    rows = {}
    for path in paths.split(","):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                rows[q["id"]] = q
    return rows


def choose_modes(lib, wanted: str | None) -> list[str]:
    """The modes asked for ("naive,mix"), or every mode the workspace offers; a mode it does not offer stops the run."""
    from core.query.routes import available_modes

    offered = [m.value for m in available_modes(lib)]
    if not wanted:
        return offered
    modes = [m.strip() for m in wanted.split(",") if m.strip()]
    missing = [m for m in modes if m not in offered]
    if missing:
        raise SystemExit(f"mode(s) {', '.join(missing)} not offered by this workspace; it offers {', '.join(offered)}")
    return modes
