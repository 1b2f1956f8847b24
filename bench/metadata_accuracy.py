"""Offline metadata extraction on folders of real PDFs (core/pipeline/metadata): prints each paper's fields, and
with --judged the accuracy per field against hand judgments (bench/metadata_judged.jsonl), dev and test halves
apart (the rules in core/pipeline/metadata/data/metadata_rules.json were fitted on dev only).

Items come from the fast PyMuPDF parser of our pipeline (parsing/builtin.py, first two pages): the extractor reads
the PDF's first page itself and the items only for the abstract and as a fallback, so MinerU would change little
but the wall time.

    .venv/bin/python bench/metadata_accuracy.py ../shared/corpus/papers /work/qa_corpus/pdfs
    .venv/bin/python bench/metadata_accuracy.py --judged bench/metadata_judged.jsonl DIRS…   # accuracy table
    .venv/bin/python bench/metadata_accuracy.py --jsonl out.jsonl DIRS…   # the fields, to judge by hand

The split: a paper is in the dev half when the first hex digit of its sha256 is even (fixed, blind to content).

bench/metadata_judged_blind.jsonl holds a second, blind judgment of the 43 qa_corpus papers: a judge who never read
the code compared each extracted title, first author, year and DOI/arXiv id (from --jsonl, before the stored value
is cleaned) with the PDF, recording the truth and a reason for every miss.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.pipeline.metadata.extract import extract_metadata  # noqa: E402
from core.pipeline.metadata.refresh import bounded  # noqa: E402
from core.pipeline.parsing.builtin import parse_builtin  # noqa: E402

JUDGED_FIELDS = ("title", "first_author", "year", "doi_arxiv")


def split_of(sha: str) -> str:
    return "dev" if int(sha[0], 16) % 2 == 0 else "test"


def papers(folders: list[str]) -> list[Path]:
    seen, out = set(), []
    for folder in folders:
        for pdf in sorted(Path(folder).glob("*.pdf")):
            sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
            if sha not in seen:  # the shared papers are also in the QA corpus
                seen.add(sha)
                out.append(pdf)
    return out


def extract(pdf: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        items = parse_builtin(pdf, Path(tmp), progress=lambda _: None, pages={0, 1})
    meta = bounded(extract_metadata(items, pdf, pdf.name))  # what is stored and shown: cleaned and within limits
    return {"file": pdf.name, "sha256": hashlib.sha256(pdf.read_bytes()).hexdigest(), "title": meta.title,
            "first_author": meta.authors[0] if meta.authors else "", "authors": meta.authors, "year": meta.year,
            "doi_arxiv": " ".join(x for x in (meta.doi, f"arXiv:{meta.arxiv}" if meta.arxiv else "") if x),
            "venue": meta.venue, "abstract": meta.abstract[:80], "sources": meta.sources}


def accuracy(rows: list[dict], judged_path: Path) -> None:
    """Per field: correct / judged, on the QA corpus's dev and test halves and on the layout fixtures apart. A
    judgment whose extracted value differs from what the extractor gives now is stale and left out (said)."""
    now = {(r["sha256"], f): r[f] for r in rows for f in JUDGED_FIELDS}
    table: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    stale = 0
    for line in judged_path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        j = json.loads(line)
        key = (j["sha256"], j["field"])
        if key not in now:
            continue  # a paper not in the folders given
        if str(j["extracted"] or "") != str(now[key] or ""):
            stale += 1
            continue
        columns = [j["group"]] if j["group"] != "qa_corpus" else [split_of(j["sha256"]), "qa_corpus"]
        for column in columns:
            table[(j["field"], column)][0] += bool(j["correct"])
            table[(j["field"], column)][1] += 1
    columns = ("dev", "test", "qa_corpus", "layouts")
    print("\n| field | QA corpus dev | QA corpus test | QA corpus all | layout fixtures |\n|---|---|---|---|---|")
    for name in JUDGED_FIELDS:
        cells = []
        for column in columns:
            ok, n = table[(name, column)]
            cells.append(f"{ok}/{n} = {ok / n:.0%}" if n else "–")
        print(f"| {name} | " + " | ".join(cells) + " |")
    stems = [r for r in rows if r["title"] and r["title"] == Path(r["file"]).stem]
    print(f"\ntitles equal to the file name: {len(stems)}; papers without a title: "
          f"{sum(1 for r in rows if not r['title'])}")
    if stale:
        print(f"\n{stale} judgments no longer match what the extractor gives: judge those fields again")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--judged", type=Path)
    parser.add_argument("--jsonl", type=Path, help="write the extracted fields here")
    args = parser.parse_args()
    t = time.perf_counter()
    rows = [extract(pdf) for pdf in papers(args.folders)]
    wall = time.perf_counter() - t
    for row in rows:
        print(f"[{split_of(row['sha256'])}] {row['file']}\n   title: {row['title'][:110]}\n   authors: "
              f"{'; '.join(row['authors'][:6])}\n   year: {row['year']}  ids: {row['doi_arxiv']}  venue: "
              f"{row['venue'][:60]}\n   sources: {row['sources']}")
    print(f"\n{len(rows)} papers in {wall:.1f} s (PyMuPDF parse of two pages + extraction)")
    if args.jsonl:
        args.jsonl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    if args.judged:
        accuracy(rows, args.judged)


if __name__ == "__main__":
    main()
