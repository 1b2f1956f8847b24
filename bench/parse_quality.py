"""Parse-quality counts: how many of the flash tier's known layout mistakes remain after parsing.

Parses every PDF of ../shared/corpus/papers and ../shared/corpus/layouts through the product path (parse_pdf,
MinerU flash; OCR off by default: a scanned page gives flash no equations, headers or tables to get wrong, and
OCR costs ~30 CPU-s a page) into OUT, then counts, per corpus:
  header_equations  an equation item in the top or bottom margin whose text (the PDF's words in its box) repeats
                    on other pages: a running header or footer read as a display equation ("Equation 1")
  loose_crops       an equation item whose box takes in a line of body text (a text item's box overlapping it
                    by more than a third of that line's height): the crop shows neighbouring lines
  merged_cells      a table cell holding two numbers written together ("0.9650.969")
  raw_markup        an item whose text, as the Document page's Items table shows it, holds HTML or LaTeX
                    markup (<td>, \\frac, $…$)
Never run on ../shared/corpus/stress (a document there takes the flash tier to ~20 GB).
Usage:
    python bench/parse_quality.py OUT              # parse (reused when OUT/<corpus>/<name> exists), then count
    python bench/parse_quality.py OUT --count-only # count what OUT holds
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.content.content_list import load_content_list  # noqa: E402
from core.pipeline.parsing import ParseError, parse_pdf  # noqa: E402
from core.pipeline.parsing.layout_repair import _page_lines, _text_in, neighbour_lines  # noqa: E402
from core.presentation.page_view import item_rows  # noqa: E402
from core.settings.config import ParsingConfig  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"
CORPORA = ("papers", "layouts")  # never "stress"
PROBLEMS = ("header_equations", "loose_crops", "merged_cells", "raw_markup")


_MATH_SIGNS = set("=<>±∑∏∫√∂≤≥≈≠×÷→←∈∀∃∞∇^_{}|")
_GLUED_NUMBERS = re.compile(r"(\d+\.\d+){2,}")  # 0.9650.969, 90.0177.2888.57
_MARKUP = re.compile(r"</?(sub|sup|b|i|em|strong|span|br|td|tr|table)\b[^>]*>|\*\*\S|\\[_*#\[\]`$]|\]\(https?:|"
                     r"\$[^$\s][^$]*\$|\\(frac|mathrm|mathbf|left|right|cdot|sum)\b")


def count_problems(items, pdf: Path) -> dict[str, list[str]]:
    """Each problem's examples in one parsed document. The PDF's text layer is read for what the items do not say
    (the words in an equation's box, the lines around it)."""
    import pymupdf

    found: dict[str, list[str]] = {p: [] for p in PROBLEMS}
    with pymupdf.open(pdf) as doc:
        lines = {}
        for item in items:
            if item.type != "equation" or not item.bbox:
                continue
            page = doc[item.page_idx]
            text = _text_in(page, item.bbox)
            if (item.bbox[3] <= 200 or item.bbox[1] >= 850) and text and not (set(text) & _MATH_SIGNS):
                found["header_equations"].append(f"p{item.page_idx + 1} {text[:70]!r}")
            if item.page_idx not in lines:
                lines[item.page_idx] = _page_lines(page)
            if neighbours := neighbour_lines(item, items, lines[item.page_idx]):
                found["loose_crops"].append(f"p{item.page_idx + 1} {item.bbox} takes in {neighbours[0].text[:50]!r}")
    for item in items:
        for cell in re.findall(r">([^<>]+)<", item.table_body or ""):
            for token in cell.split():
                if _GLUED_NUMBERS.fullmatch(token):
                    found["merged_cells"].append(f"p{item.page_idx + 1} {token}")
    for rows in item_rows(items).values():
        for row in rows:
            shown = " ".join(str(row.get(k, "")) for k in ("text", "caption"))
            if match := _MARKUP.search(shown):
                found["raw_markup"].append(f"item {row['#']} p{row['page']}: {match.group(0)!r} in {shown[:60]!r}")
    return found


def parse_corpus(name: str, out: Path, config: ParsingConfig) -> None:
    mineru_home = Path(tempfile.mkdtemp(prefix="papergraph-pq-mineru-"))
    for pdf in sorted((CORPUS / name).glob("*.pdf")):
        target = out / name / pdf.stem
        if (target / "content_list.json").exists() or (target / "FAILED").exists():
            continue
        start = time.monotonic()
        try:
            parsed = parse_pdf(pdf, target, config, mineru_home=mineru_home)
            print(f"  parsed {name}/{pdf.name}: {parsed.pages} p, {len(parsed.items)} items, {parsed.backend}, "
                  f"{time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
        except ParseError as exc:
            target.mkdir(parents=True, exist_ok=True)
            (target / "FAILED").write_text(str(exc), encoding="utf-8")
            print(f"  {name}/{pdf.name}: {exc}", file=sys.stderr, flush=True)


def count_corpus(name: str, out: Path, verbose: bool) -> dict[str, int]:
    totals = dict.fromkeys(PROBLEMS, 0)
    for folder in sorted((out / name).iterdir()):
        if not (folder / "content_list.json").exists():
            continue
        items = load_content_list(folder / "content_list.json")
        found = count_problems(items, CORPUS / name / f"{folder.name}.pdf")
        for problem, examples in found.items():
            totals[problem] += len(examples)
            if verbose:
                for example in examples:
                    print(f"  {name}/{folder.name} {problem}: {example}", file=sys.stderr)
    return totals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder for the parsed output (kept, so counting again is quick)")
    ap.add_argument("--count-only", action="store_true")
    ap.add_argument("--ocr", action="store_true", help="OCR pages without a text layer (slow)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every problem found")
    args = ap.parse_args()
    config = ParsingConfig(backend="mineru", mineru_tier="flash", ocr=args.ocr)
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}")
        return 1
    print("| corpus | " + " | ".join(PROBLEMS) + " |")
    print("|---" * (len(PROBLEMS) + 1) + "|")
    for name in CORPORA:
        if not args.count_only:
            parse_corpus(name, args.out, config)
        totals = count_corpus(name, args.out, args.verbose)
        print(f"| {name} | " + " | ".join(str(totals[p]) for p in PROBLEMS) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
