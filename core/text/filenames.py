"""Upload names are untrusted: they may carry paths (`../`), HTML, control characters or be absurdly long."""
from __future__ import annotations

import re
import unicodedata

_UNSAFE = re.compile(r"[^\w .()+,-]+", re.UNICODE)


def safe_filename(name: str, default: str = "document.pdf", max_len: int = 120) -> str:
    name = unicodedata.normalize("NFC", name or "")
    name = re.split(r"[\\/]", name)[-1]  # keep the last path component only, whatever the separator
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    name = _UNSAFE.sub("_", name).strip(" ._")
    name = re.sub(r"_+", "_", name)
    if not name:
        return default
    if len(name) > max_len:
        stem, dot, ext = name.rpartition(".")
        name = (stem[: max_len - len(ext) - 1] + "." + ext) if dot and len(ext) <= 8 else name[:max_len]
    return name
