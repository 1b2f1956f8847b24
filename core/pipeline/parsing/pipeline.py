"""parse_pdf: check the file, run mineru (or the builtin parser), OCR what has no text, write the result. A text
document (Markdown, plain text, HTML) stored beside where its PDF would be is read by text_documents instead."""
from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from core.content.content_list import MalformedContentList, load_content_list, renumber
from core.content.sources import text_source
from core.pipeline.parsing.budget import ParseBudget, child_memory_bytes, parse_budget
from core.pipeline.parsing.builtin import parse_builtin
from core.pipeline.parsing.checks import check_pdf
from core.pipeline.parsing.dense_pages import dense_pages, page_range_without
from core.pipeline.parsing.layout_repair import repair_layout
from core.pipeline.parsing.markdown import to_markdown
from core.pipeline.parsing.mineru_runner import MineruFailed, MineruRun, run_mineru
from core.pipeline.parsing.ocr_pass import apply_ocr, diagnose
from core.pipeline.parsing.result import (
    IMAGES_DIR,
    ParseError,
    ParseOutput,
    has_text,
    process_cpu_seconds,
    prune_images,
    write_output,
)
from core.pipeline.parsing.text_documents import parse_text_document
from core.pipeline.parsing.textlayer import PageText
from core.schema.records import ContentItem
from core.settings.config import ParsingConfig

MINERU_SCRATCH = ".mineru"
APPROXIMATE = "parsed with PyMuPDF, tables and formulas are approximate"


def _mineru_items(pdf_path: Path, out_dir: Path, config: ParsingConfig, mineru_home: Path,
                  progress: Callable[[str], None], diagnoses: list[PageText], budget: ParseBudget,
                  page_range: str) -> tuple[list[ContentItem], MineruRun]:
    """Run mineru and move its images into out_dir; raise MineruFailed when it gives nothing usable."""
    scratch = out_dir / MINERU_SCRATCH
    try:
        run = run_mineru(pdf_path, scratch, tier=config.mineru_tier, mineru_home=mineru_home,
                         timeout_s=budget.deadline_s, progress=progress, memory_bytes=budget.memory_bytes,
                         stall_s=budget.stall_s, page_range=page_range)
        try:
            items = load_content_list(scratch / "content_list.json")
        except MalformedContentList as exc:
            raise MineruFailed(f"mineru wrote an unreadable content list: {exc}", run.cpu_seconds) from None
        if not any(has_text(i) for i in items) and any(not d.needs_ocr and not d.blank for d in diagnoses):
            # The text layer has words mineru did not return: let the builtin parser have a go.
            raise MineruFailed("mineru returned no content although the PDF has text", run.cpu_seconds)
        if (scratch / IMAGES_DIR).is_dir():
            shutil.move(str(scratch / IMAGES_DIR), str(out_dir / IMAGES_DIR))
        for item in items:
            item.source = item.source or "mineru"
        return items, run
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _builtin_items(pdf_path: Path, out_dir: Path, report: Callable[[str], None], deadline: float,
                   mineru_error: str, pages: set[int] | None = None) -> list[ContentItem]:
    try:
        return parse_builtin(pdf_path, out_dir, progress=report, deadline=deadline, pages=pages)
    except ParseError:
        raise
    except Exception as exc:  # MuPDF errors on damaged pages: say so instead of crashing the queue
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        if mineru_error:
            raise ParseError(f"mineru failed ({mineru_error}) and the PyMuPDF parser failed too ({reason})") from None
        raise ParseError(f"the PyMuPDF parser failed ({reason})") from None


def _repair(items: list[ContentItem], pdf_path: Path, out_dir: Path) -> list[str]:
    """The flash tier's headers-as-equations, loose equation crops and glued table cells (layout_repair.py). A page
    MuPDF cannot read leaves MinerU's items as they are: the repair is an improvement, never a reason to fail."""
    try:
        repair_layout(items, pdf_path, out_dir)
    except Exception as exc:  # MuPDF raises plain RuntimeErrors on damaged pages
        return [f"layout repair skipped ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"]
    return []


def _empty_reason(pages: int, diagnoses: list[PageText], config: ParsingConfig) -> str:
    many = f"any of the {pages} pages" if pages > 1 else "the only page"
    if all(d.blank for d in diagnoses):
        return f"no text found on {many}: {'they are' if pages > 1 else 'it is'} blank"
    if any(d.needs_ocr for d in diagnoses) and not config.ocr:
        return f"no text found on {many}: no usable text layer (a scan?) and OCR is off in the parsing settings"
    if any(d.needs_ocr for d in diagnoses):
        return f"no text found on {many}: there is no usable text layer and OCR found no text either"
    return f"no text found on {many}: the parser found no text, tables or figures"


def _dense_warning(dense: dict[int, int]) -> str:
    pages = sorted(dense)
    named = ", ".join(str(p + 1) for p in pages[:-1]) + (" and " if len(pages) > 1 else "") + str(pages[-1] + 1)
    marks = ", ".join(f"{dense[p]:,}" for p in pages)
    return (f"page{'s' if len(pages) > 1 else ''} {named} draw{'' if len(pages) > 1 else 's'} {marks} vector marks, "
            f"more than MinerU can lay out in bounded memory: {APPROXIMATE.replace('parsed', 'parsed there')}")


def parse_pdf(pdf_path: Path, out_dir: Path, config: ParsingConfig, *, mineru_home: Path,
              progress: Callable[[str], None] | None = None, memory_bytes: int | None = None,
              every_page_to_mineru: bool = False) -> ParseOutput:
    """memory_bytes: the MinerU child's cap (None: the whole budget of the settings, as for one worker);
    every_page_to_mineru: give MinerU the pages too dense for it as well (a retry with a larger budget)."""
    # The ingest asks for docs/<id>/source.pdf; a text document has docs/<id>/source.<md|txt|html> instead.
    text_doc = None if Path(pdf_path).exists() else text_source(Path(pdf_path).parent)
    if text_doc is not None:
        return parse_text_document(text_doc, out_dir, config, progress)
    report = progress or (lambda _msg: None)
    cpu0, start = process_cpu_seconds(), time.monotonic()
    deadline = start + config.timeout_s
    pdf_path, out_dir = Path(pdf_path), Path(out_dir)
    report("checking the PDF")
    pages = check_pdf(pdf_path, config)
    diagnoses = diagnose(pdf_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    warnings: list[str] = []
    items: list[ContentItem] | None = None
    child_cpu, backend, mineru_error, peak = 0.0, "builtin", "", 0
    budget = parse_budget(config, pages, child_memory_bytes(config, 1) if memory_bytes is None else memory_bytes)
    dense: dict[int, int] = {}
    if config.backend == "mineru":
        dense = {} if every_page_to_mineru else dense_pages(pdf_path, config.dense_page_paths)
        if dense:
            warnings.append(_dense_warning(dense))
    if config.backend == "mineru" and len(dense) < pages:
        try:
            items, run = _mineru_items(pdf_path, out_dir, config, Path(mineru_home), report, diagnoses, budget,
                                       page_range_without(pages, set(dense)) if dense else "all")
            child_cpu, peak, backend = run.cpu_seconds, run.peak_rss, f"mineru-{config.mineru_tier}"
            warnings.extend(_repair(items, pdf_path, out_dir))
        except MineruFailed as exc:
            child_cpu, mineru_error, peak = exc.cpu_seconds, str(exc), exc.peak_rss
            if not config.fallback_to_builtin:
                raise ParseError(f"mineru failed: {exc}") from None
            # A stop of ours says where and why in the words of the limit; mineru's own failure is quoted.
            warnings.append(f"{exc}; {APPROXIMATE}" if exc.stopped else
                            f"mineru failed ({exc}); parsed with PyMuPDF instead")
            report(f"{exc}; parsing with PyMuPDF instead" if exc.stopped else
                   "mineru failed; parsing with PyMuPDF instead")
            dense = {}  # PyMuPDF parses every page below
    if items is None:
        items = _builtin_items(pdf_path, out_dir, report, deadline, mineru_error)
    elif dense:
        items += _builtin_items(pdf_path, out_dir, report, deadline, "", pages=set(dense))
        backend += "+builtin"
    items, ocr_warnings, ocr_ran = apply_ocr(pdf_path, items, diagnoses, config, progress=report, deadline=deadline)
    warnings.extend(ocr_warnings)
    if ocr_ran:
        backend += "+ocr"
    if not any(has_text(i) for i in items):
        raise ParseError(_empty_reason(pages, diagnoses, config))
    items = renumber(sorted(items, key=lambda i: i.page_idx))  # stable: keeps reading order within a page
    prune_images(out_dir, items)
    output = ParseOutput(items=items, backend=backend, pages=pages, markdown=to_markdown(items), warnings=warnings,
                         cpu_seconds=process_cpu_seconds() - cpu0 + child_cpu,
                         memory_cap=budget.memory_bytes if config.backend == "mineru" else 0, child_peak_rss=peak)
    write_output(out_dir, output)
    report(f"parsed {pages} pages into {len(items)} items with {backend} in {time.monotonic() - start:.1f} s")
    return output
