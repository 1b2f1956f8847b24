"""Assemble the independent question set: the writers' files → bench/qa_corpus/questions.jsonl, split into dev and
test, and the test split frozen by its hash (bench/qa_corpus/test.sha256).

    python bench/qa_corpus/assemble.py /work/qa_corpus/questions_w1.jsonl … [--check]
    python bench/qa_corpus/assemble.py --dir bench/fresh_corpus --all-test /work/fresh_corpus/questions_f*.jsonl

--dir names another set's folder (its manifest.json; questions.jsonl and test.sha256 are written there); --all-test
makes every question test: the fresh set of this round is read once, at the end, and nothing is fitted on it.

The writers never read the product's code (bench/qa_corpus/WRITING_BRIEF.md says what they were told). Each
question gets the sha256 document id of its paper(s) (manifest.json) and a split: within each (writer, type),
questions are shuffled with a fixed seed and alternate dev / test, so both splits hold every writer and type. The
test rows' canonical JSON is hashed; --check verifies questions.jsonl against the recorded hash and changes nothing.
Fit every weight, threshold and rule on dev alone (bench/reader_train.py reads only dev).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "questions.jsonl"
FROZEN = HERE / "test.sha256"
SEED = 20261204


def test_hash(rows: list[dict]) -> str:
    test = sorted((r for r in rows if r["split"] == "test"), key=lambda r: r["id"])
    text = "\n".join(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in test)
    return hashlib.sha256(text.encode()).hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--dir", type=Path, default=HERE)
    ap.add_argument("--all-test", action="store_true")
    args = ap.parse_args()
    out, frozen = args.dir / OUT.name, args.dir / FROZEN.name
    if args.check:
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
        ok = test_hash(rows) == frozen.read_text().split()[0]
        print("test split matches its frozen hash" if ok else "the test split CHANGED since it was frozen")
        return 0 if ok else 1
    if frozen.exists():
        print(f"{frozen.name} exists: the test split is frozen; remove it only to start a new question set")
        return 1
    sha = {m["file"]: m["sha256"] for m in json.loads((args.dir / "manifest.json").read_text())}
    rows = []
    for path in args.files:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                papers = q["paper"] if isinstance(q.get("paper"), list) else [q["paper"]] if q.get("paper") else []
                papers = papers if q.get("answerable", True) else []  # an off-topic question names no paper
                q["doc_id"] = [sha[p] for p in papers] if len(papers) > 1 else (sha[papers[0]] if papers else "")
                q["writer"] = q["id"].split("-")[0]
                rows.append(q)
    rng = random.Random(SEED)
    groups: dict[tuple, list[dict]] = {}
    for q in rows:
        groups.setdefault((q["writer"], q["type"]), []).append(q)
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda r: r["id"])
        rng.shuffle(members)
        for k, q in enumerate(members):
            q["split"] = "test" if args.all_test or k % 2 else "dev"
    rows.sort(key=lambda r: r["id"])
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    digest = test_hash(rows)
    frozen.write_text(f"{digest}  test split of questions.jsonl (bench/qa_corpus/assemble.py --check)\n")
    for split in ("dev", "test"):
        part = [r for r in rows if r["split"] == split]
        print(f"{split}: {len(part)} questions, {sum(1 for r in part if r['answerable'])} answerable")
    print(f"wrote {out} and {frozen}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
