"""PubMed abstracts as text documents, for the field-aware graph (issue 38): rebuilt from PubMedQA's expert-labelled
set (ori_pqal.json, 1,000 abstracts, MIT; never committed here) in a git mirror of the pubmedqa/pubmedqa repository.

    python bench/pubmed_abstracts.py --out /tmp/pubmed            # writes /tmp/pubmed/dev/*.md and check/*.md
    python bench/pubmed_abstracts.py --repo /path/to/bare/repo --out DIR
    # after `python -m core ingest DIR/dev/*.md` into a workspace: each question asked LLM-free of its own abstract,
    # with and without the results-first bias (QueryParams.results_first): where the first passage comes from, and
    # the yes/no verdict against PubMedQA's final_decision (its "maybe" rows left out)
    python bench/pubmed_abstracts.py ask WS DIR/dev/questions.jsonl

Each abstract becomes one Markdown document the way PubMed prints a structured abstract: a title line (its PubMed
id; the question is kept out of the text, it is what we ask) and one paragraph per labelled part, "BACKGROUND: …",
"METHODS: …", "RESULTS: …", with the LONG_ANSWER as "CONCLUSIONS: …" (PubMedQA cut the conclusion out of the
context to make it the long answer). Beside the documents, questions.jsonl (id, question, final_decision, file).

The sets, fixed by rule: the ids sorted, then DEV = 60 drawn with random.Random(38), CHECK = 30 drawn with
random.Random(3838) from the rest (disjoint). Use DEV while developing; run CHECK once, at the end.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MIRROR = "/work/.mirror/pubmedqa+pubmedqa/repo"
DEV_N, DEV_SEED = 60, 38
CHECK_N, CHECK_SEED = 30, 3838


def load(repo: str) -> dict[str, dict]:
    text = subprocess.run(["git", "-C", repo, "show", "HEAD:data/ori_pqal.json"], check=True,
                          capture_output=True, text=True).stdout
    return json.loads(text)


def split(ids: list[str]) -> tuple[list[str], list[str]]:
    ids = sorted(ids)
    dev = sorted(random.Random(DEV_SEED).sample(ids, DEV_N))
    rest = [i for i in ids if i not in set(dev)]
    check = sorted(random.Random(CHECK_SEED).sample(rest, CHECK_N))
    return dev, check


def markdown(pmid: str, record: dict) -> str:
    parts = [f"# PMID {pmid}", ""]
    for label, text in zip(record["LABELS"], record["CONTEXTS"]):
        parts += [f"{label}: {' '.join(text.split())}", ""]
    parts += [f"CONCLUSIONS: {' '.join(record['LONG_ANSWER'].split())}", ""]
    return "\n".join(parts)


def write(data: dict[str, dict], ids: list[str], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "questions.jsonl", "w", encoding="utf-8") as q:
        for pmid in ids:
            name = f"pmid_{pmid}.md"
            (folder / name).write_text(markdown(pmid, data[pmid]), encoding="utf-8")
            q.write(json.dumps({"id": pmid, "question": data[pmid]["QUESTION"],
                                "final_decision": data[pmid]["final_decision"], "file": name}) + "\n")


def ask(workspace: str, questions: str) -> None:
    from core.library import open_library
    from core.query.engine import ask as ask_question
    from core.query.records import QueryParams
    from core.settings.workspace import Workspace
    from core.text.structured_abstract import section_kind

    lib = open_library(Workspace(Path(workspace)))
    by_name = {d.filename: d.id for d in lib.documents.list()}
    rows = [json.loads(line) for line in open(questions, encoding="utf-8")]
    print("| results_first | questions | first passage results/conclusions | yes/no stated | right of stated |"
          " right of all yes/no |\n|---:|---:|---:|---:|---:|---:|")
    for lift in (0, 2):
        first = stated = right = asked = 0
        for row in rows:
            doc_id = by_name.get(row["file"])
            if doc_id is None:
                continue
            params = QueryParams.from_config(lib.settings.query, doc_ids=[doc_id], use_llm=False, results_first=lift,
                                             reader="extractive")
            result = ask_question(lib, row["question"], params, save=False)
            sources = result.context.sources
            first += bool(sources) and bool(section_kind(sources[0].section or ""))
            if row["final_decision"] in ("yes", "no"):
                asked += 1
                answer = result.answer
                verdict = answer.short_answer.lower() if answer and answer.answer_type == "yes/no" else ""
                if verdict in ("yes", "no") and not answer.abstained:
                    stated += 1
                    right += verdict == row["final_decision"]
        print(f"| {lift} | {len(rows)} | {first} | {stated}/{asked} | {right}/{stated} | {right}/{asked} |")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "ask":
        ask(sys.argv[2], sys.argv[3])
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", default=MIRROR)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    data = load(args.repo)
    dev, check = split(list(data))
    write(data, dev, Path(args.out) / "dev")
    write(data, check, Path(args.out) / "check")
    print(f"wrote {len(dev)} dev and {len(check)} check abstracts under {args.out}")


if __name__ == "__main__":
    main()
