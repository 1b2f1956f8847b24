"""What a parse returns and leaves on disk, whichever backend did the work."""
from __future__ import annotations

import json
import resource
from dataclasses import dataclass, field
from pathlib import Path

from core.content.content_list import save_content_list
from core.schema.records import CONTENT_TYPES, ContentItem

CONTENT_LIST_FILE = "content_list.json"
MARKDOWN_FILE = "markdown.md"
PARSE_INFO_FILE = "parse.json"
IMAGES_DIR = "images"


class ParseError(Exception):
    """A file could not be parsed. str(e) is specific and user-facing: it is shown in the status table."""


@dataclass
class ParseOutput:
    items: list[ContentItem]  # renumbered, reading order, page by page
    backend: str  # "mineru-flash", "mineru-flash+ocr", "builtin", "builtin+ocr", "import"
    pages: int
    markdown: str
    warnings: list[str] = field(default_factory=list)
    cpu_seconds: float = 0.0  # this process (all threads) plus the child processes it waited for
    # MinerU's child: its cap and its process group's peak resident memory, in bytes (0: no child ran)
    memory_cap: int = 0
    child_peak_rss: int = 0


def process_cpu_seconds() -> float:
    """CPU time of the whole process: OCR runs on onnxruntime's own threads, which thread_time() misses."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def has_text(item: ContentItem) -> bool:
    """Whether the item carries words. A document of pictures alone (a scan with OCR off) has nothing to index."""
    if item.type not in CONTENT_TYPES:
        return False
    return bool(item.text.strip() or item.table_body.strip() or item.list_items or item.caption
                or item.extra.get("code_body"))


def write_output(out_dir: Path, output: ParseOutput) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    save_content_list(output.items, out_dir / CONTENT_LIST_FILE)
    (out_dir / MARKDOWN_FILE).write_text(output.markdown, encoding="utf-8")
    info = {"backend": output.backend, "pages": output.pages, "warnings": output.warnings,
            "cpu_seconds": round(output.cpu_seconds, 3)}
    if output.memory_cap or output.child_peak_rss:
        info.update(memory_cap_mb=output.memory_cap >> 20, child_peak_rss_mb=output.child_peak_rss >> 20)
    (out_dir / PARSE_INFO_FILE).write_text(json.dumps(info, indent=1, ensure_ascii=False), encoding="utf-8")


def prune_images(out_dir: Path, items: list[ContentItem]) -> None:
    """Delete image files no item points to (crops of items that OCR replaced, or of a failed backend)."""
    images = out_dir / IMAGES_DIR
    if not images.is_dir():
        return
    keep = {(out_dir / i.img_path).resolve() for i in items if i.img_path}
    for path in images.rglob("*"):
        if path.is_file() and path.resolve() not in keep:
            path.unlink()
