"""Files of the user's own that hold secrets (API keys, account hashes): read without echoing their content,
written 0600 from the first byte and renamed into place, never inside the repository or a workspace."""
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any


def read_private_json(path: Path, what: str, error: type[Exception]) -> Any:
    """The file's JSON, or {} when there is none. `error` is raised naming the file, never its content."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as exc:
        raise error(f"the {what} {path} cannot be read ({type(exc).__name__})") from None


def _inside(path: Path, folder: Path) -> bool:
    folder = folder.resolve()
    return path == folder or folder in path.parents


def write_private_json(path: Path, data: Any, forbidden: list[Path], refusal: str, error: type[Exception]) -> None:
    """Write `data` to `path` (mode 0600, its folder 0700); `refusal` is raised when the path lies in one of the
    `forbidden` folders (the repository, a workspace: places that get zipped, shared or committed)."""
    resolved = path.resolve()
    if any(_inside(resolved, folder) for folder in forbidden):
        raise error(refusal)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # Created 0600 from the first byte (no chmod window), then renamed over the old file in one step.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
