"""Author lists against a judge's truth (bench/authors_judged.jsonl): the whole list exactly right (every name, in
order, whole) and the first author right, on the dev half (the extractor's rules were fitted there) and the test half
(measured only) apart, split as bench/metadata_accuracy.py splits (the first hex digit of the file's sha256).

The extraction is metadata_accuracy's: PyMuPDF's parse of two pages, then core/pipeline/metadata/extract_metadata on
those items and the PDF, cleaned as it is stored (no ingest, no workspace: ~1 s a paper).

    .venv/bin/python bench/authors_accuracy.py --truth bench/authors_judged.jsonl ../shared/corpus/papers \\
        /work/qa_corpus/pdfs
    .venv/bin/python bench/authors_accuracy.py --truth … --misses DIRS…   # every wrong list, extracted vs truth

Names are compared after Unicode (NFKC, one apostrophe, one hyphen) and whitespace normalisation, the spaces
between initials included ("Patrick N. J. Lane" = "Patrick N.J. Lane"); case and accents count. A second, looser
figure folds case and accents too (what an author filter or a citation key sees). A truth line with no authors (a
page cut from a paper, with no byline) counts as right only when the extractor gives none."""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.metadata_accuracy import extract, papers, split_of  # noqa: E402


def normal_name(name: str) -> str:
    text = unicodedata.normalize("NFKC", name)
    text = re.sub(r"[’‘`´]", "'", text)
    text = re.sub(r"[‐‑‒–]", "-", text)
    text = " ".join(text.split())
    return re.sub(r"(?<=\b[A-Z]\.)\s+(?=[A-Z]\.)", "", text)  # "N. J." → "N.J."


def loose_name(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", normal_name(name).casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def score(rows: list[dict], truth: dict[str, dict]) -> dict[tuple[str, str], list[int]]:
    """(measure, column) → [right, judged]; measures: exact list, first author, loose list."""
    table: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        judged = truth.get(row["file"])
        if judged is None:
            continue
        got, want = row["authors"], judged["authors"]
        checks = {
            "full list exactly right": [normal_name(n) for n in got] == [normal_name(n) for n in want],
            "first author right": (normal_name(got[0]) if got else "") == (normal_name(want[0]) if want else ""),
            "full list, case and accents folded": [loose_name(n) for n in got] == [loose_name(n) for n in want],
        }
        for measure, ok in checks.items():
            for column in (split_of(row["sha256"]), "all"):
                table[(measure, column)][0] += ok
                table[(measure, column)][1] += 1
    return table


def print_table(table: dict[tuple[str, str], list[int]]) -> None:
    print("\n| measure | dev | test | all |\n|---|---|---|---|")
    for measure in ("full list exactly right", "first author right", "full list, case and accents folded"):
        cells = []
        for column in ("dev", "test", "all"):
            ok, n = table[(measure, column)]
            cells.append(f"{ok}/{n} = {ok / n:.0%}" if n else "–")
        print(f"| {measure} | " + " | ".join(cells) + " |")


def read_truth(path: Path) -> dict[str, dict]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            j = json.loads(line)
            out[j["file"]] = j
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--truth", type=Path, default=Path(__file__).with_name("authors_judged.jsonl"))
    parser.add_argument("--misses", action="store_true", help="print every list that is not exactly right")
    parser.add_argument("--jsonl", type=Path, help="write the extracted author lists here")
    args = parser.parse_args()
    truth = read_truth(args.truth)
    t = time.perf_counter()
    rows = [extract(pdf) for pdf in papers(args.folders)]
    print(f"{len(rows)} papers in {time.perf_counter() - t:.1f} s; {sum(r['file'] in truth for r in rows)} judged")
    if args.jsonl:
        args.jsonl.write_text("".join(json.dumps({k: r[k] for k in ("file", "sha256", "authors")},
                                                 ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    if args.misses:
        for row in rows:
            want = truth.get(row["file"], {}).get("authors")
            if want is not None and [normal_name(n) for n in row["authors"]] != [normal_name(n) for n in want]:
                print(f"\n[{split_of(row['sha256'])}] {row['file']}  ({row['sources'].get('authors', 'none')})"
                      f"\n   extracted: {'; '.join(row['authors'])}\n   truth:     {'; '.join(want)}")
    print_table(score(rows, truth))


if __name__ == "__main__":
    main()
