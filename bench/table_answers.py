"""Table cells stated as the answer to questions that are not about results: a reader error to watch.

    .venv/bin/python bench/table_answers.py WORKSPACE [--questions bench/papers_qa.jsonl] [--mode naive] [--limit N]

Each question of the set is asked LLM-free (the extractive reader) on a workspace holding its papers (a copy of one,
never the one being ingested). A question is a results question when it is answered from the records (reader
`results`: core.query.result_answers recognised it and the records cover it). For every other question whose answer
is stated (not an abstention), the evidence it states is a table item when the first cited source of its first
sentence is a table: that count, over the non-results questions stated, is the rate this prints, with the questions
it happened to.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import row  # noqa: E402


def main() -> int:
    from core.library import open_library
    from core.query.engine import ask
    from core.query.records import QueryParams
    from core.schema.modes import Reader
    from core.settings.workspace import Workspace

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace")
    parser.add_argument("--questions", default=str(Path(__file__).with_name("papers_qa.jsonl")))
    parser.add_argument("--mode", default="naive")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    lib = open_library(Workspace(Path(args.workspace)))
    questions = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    questions = questions[:args.limit] if args.limit else questions
    results_qs, stated, from_table = 0, 0, []
    for q in questions:
        params = QueryParams.from_config(lib.settings.query, mode=args.mode, use_llm=False)
        answer = ask(lib, q["question"], params, save=False)
        a = answer.answer
        if a is not None and a.reader == Reader.RESULTS:
            results_qs += 1
            continue
        if a is None or a.abstained or not a.sentences or not a.sentences[0].citations:
            continue
        stated += 1
        source = answer.context.source(a.sentences[0].citations[0])
        if source is not None and source.kind == "table":
            from_table.append((q.get("id", ""), q["question"], a.sentences[0].text[:120]))
    print("| measure | value |\n| --- | --- |")
    row("questions", len(questions))
    row("results questions (answered from the records)", results_qs)
    row("other questions answered (stated)", stated)
    row("of those, stated from a table item", len(from_table))
    row("rate", f"{len(from_table) / stated:.3f}" if stated else "–")
    for qid, question, sentence in from_table:
        print(f"- {qid} {question!r} → {sentence!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
