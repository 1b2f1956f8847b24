"""Results questions asked of a workspace, scored against the cells that answer them: is the answer right, is it
cited to the cell, and did the computed path (reader `results`) give it.

    .venv/bin/python bench/results_questions.py WORKSPACE [--questions bench/results_dev_questions.jsonl]
                                                [--mode naive] [--ids d01,d02] [--json out.json]

A question line: {"id", "question", "answer", "evidence": [{"file", "page" (1-based), "label" ("Table 2"), "method",
"dataset", "metric", "value"}], "kind": best | value | compare | which_papers | not_reported}. Each question is asked
LLM-free (the extractive reader; the computed answer from the records runs first, as in every face) on a workspace
holding its papers (a copy: never the one being ingested), without saving it to the history.

right   best / value / compare: the answer states every evidence value (the numbers of its text compared
        numerically with the value as printed: "88.30" states 88.3); which_papers: it names every evidence paper
        (a source it cites is that paper, or its text holds the paper's title or file name); not_reported: it
        abstains or states no number.
cited   every evidence cell is cited: a sentence stating the value (which_papers: naming the paper) cites a table
        source of the evidence's paper and page, and says the table's cell ("Table 2, row 3, column 2"); not_reported
        questions have no cell and count as cited when right.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import row  # noqa: E402

KINDS = ("best", "value", "compare", "which_papers", "not_reported")
_NUMBER = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?")


def number(text: str) -> float | None:
    found = _NUMBER.search(str(text).replace("−", "-"))
    if not found:
        return None
    try:
        return float(found.group().replace(",", "").replace("−", "-"))
    except ValueError:
        return None


def numbers(text: str) -> set[float]:
    out = set()
    for m in _NUMBER.finditer(text.replace("−", "-")):
        try:
            out.add(float(m.group().replace(",", "")))
        except ValueError:
            pass
    return out


def _fold(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", text.casefold())


def doc_ids_by_file(lib) -> dict[str, str]:
    """Folded file name → document id (an upload may have sanitised "a__b.pdf" into "a_b.pdf": folding agrees)."""
    return {_fold(d.filename): d.id for d in lib.documents.ready_papers()}


def score(q: dict, result, files: dict[str, str], titles: dict[str, str]) -> dict:
    a = result.answer
    kind = q["kind"]
    text = a.text if a is not None else ""
    abstained = a is None or a.abstained or not text.strip()
    reader = str(getattr(a.reader, "value", a.reader)) if a is not None else ""
    cited_n = [n for s in (a.sentences if a is not None else []) for n in s.citations]
    cited = [result.context.source(n) for n in cited_n]
    stated = numbers(text) if not abstained else set()
    if kind == "not_reported":
        right = abstained or not stated
        return dict(right=right, cited=right, reader=reader, answer=text)
    evidence = q.get("evidence", [])
    if kind == "which_papers":
        papers = {files.get(_fold(e["file"]), "") for e in evidence}
        said = _fold(text)
        named = {d for d in papers if d and (any(s is not None and s.doc_id == d for s in cited)
                                             or _fold(titles.get(d, "")) in said)}
        right = not abstained and bool(papers) and named == papers
        cell = {d for d in papers if any(s is not None and s.doc_id == d and s.kind == "table" for s in cited)}
        return dict(right=right, cited=right and cell == papers and bool(re.search(r"Table \S+, row", text)),
                    reader=reader, answer=text)
    values = [number(e["value"]) for e in evidence]
    right = not abstained and bool(values) and all(v is not None and any(abs(v - s) < 1e-9 for s in stated)
                                                   for v in values)
    cells = 0
    for e, v in zip(evidence, values):
        doc = files.get(_fold(e["file"]), "")
        for sentence in (a.sentences if a is not None else []):
            if v is None or not any(abs(v - s) < 1e-9 for s in numbers(sentence.text)):
                continue
            label = re.escape(e.get("label", "").strip())
            has_cell = bool(re.search(rf"{label}, row \d+, column \d+" if label else r"row \d+, column \d+",
                                      sentence.text))
            table = [result.context.source(n) for n in sentence.citations]
            if has_cell and any(s is not None and s.doc_id == doc and s.page == int(e["page"]) - 1
                                and s.kind == "table" for s in table):
                cells += 1
                break
    return dict(right=right, cited=right and cells == len(evidence), reader=reader, answer=text)


def main() -> int:
    from core.library import open_library
    from core.query.engine import ask
    from core.query.records import QueryParams
    from core.settings.workspace import Workspace

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace")
    parser.add_argument("--questions", default=str(Path(__file__).with_name("results_dev_questions.jsonl")))
    parser.add_argument("--mode", default="naive")
    parser.add_argument("--ids", help="comma-separated question ids to ask (default: all)")
    parser.add_argument("--json", help="write every question's scores and answer here")
    args = parser.parse_args()
    lib = open_library(Workspace(Path(args.workspace)))
    questions = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    if args.ids:
        wanted = set(args.ids.split(","))
        questions = [q for q in questions if q["id"] in wanted]
    files, titles = doc_ids_by_file(lib), lib.documents.ready_titles()
    missing = {e["file"] for q in questions for e in q.get("evidence", []) if _fold(e["file"]) not in files}
    if missing:
        print(f"warning: {len(missing)} evidence files are not ready papers of the workspace: {sorted(missing)}",
              file=sys.stderr)
    scored = []
    for q in questions:
        params = QueryParams.from_config(lib.settings.query, mode=args.mode, use_llm=False)
        result = ask(lib, q["question"], params, save=False)
        scored.append({"id": q["id"], "kind": q["kind"], "question": q["question"], "expected": q["answer"],
                       **score(q, result, files, titles)})
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for s in scored:
        by_kind[s["kind"]].append(s)
    print("| kind | questions | right | cited | from the results reader |\n| --- | --- | --- | --- | --- |")
    for kind in [k for k in KINDS if k in by_kind] + [k for k in by_kind if k not in KINDS]:
        group = by_kind[kind]
        print(f"| {kind} | {len(group)} | {sum(s['right'] for s in group)} | {sum(s['cited'] for s in group)} | "
              f"{sum(s['reader'] == 'results' for s in group)} |")
    n = len(scored)
    right, cited = sum(s["right"] for s in scored), sum(s["cited"] for s in scored)
    print(f"| all | {n} | {right} ({right / max(n, 1):.0%}) | {cited} ({cited / max(n, 1):.0%}) | "
          f"{sum(s['reader'] == 'results' for s in scored)} |")
    print()
    for s in scored:
        if not (s["right"] and s["cited"]):
            what = "wrong" if not s["right"] else "not cited to the cell"
            print(f"- {s['id']} ({s['kind']}, {what}, reader {s['reader']}) {s['question']!r}\n"
                  f"    expected: {s['expected'][:160]!r}\n    answered: {s['answer'][:300]!r}")
    if args.json:
        Path(args.json).write_text(json.dumps({"questions": scored}, indent=1, ensure_ascii=False))
    row("right", f"{right}/{n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
