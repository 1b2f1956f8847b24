"""The LLM-free entities, judged blind: sample them, mix two samples without saying which is which, score the marks.

    # graph size per paper and extraction speed of a workspace's graph; each paper's field (core/graph/fields.py, or
    # the manifest's) and entities per 1,000 words, summed per field
    python bench/entities.py sizes WS [--manifest bench/fresh_corpus/manifest.json]
    # rebuild a workspace COPY's graph with the current extractor (parsing is kept; extractions are redone)
    python bench/entities.py rebuild WS
    # 100 entities at random (fixed seed), one source sentence each
    python bench/entities.py sample WS --seed 15 --out /tmp/old.tsv
    # N entities per field (the detected field, or the manifest's), each field's blind file and its key apart
    python bench/entities.py sample WS --per-field 80 --manifest bench/fresh_corpus/manifest.json \
        --out /work/judge38/blind_{field}.tsv --key /work/judge38_keys/key_{field}.tsv
    # while developing: the current extractor over a workspace's chunks in memory (nothing written), a sample
    python bench/entities.py dev WS --seed 7 --n 60
    # dev evidence: earlier rounds' marked rows against the current extractor (terms it keeps, junk it drops, and
    # the type it now gives a kept term against the judge's type_ok of the type it had)
    python bench/entities.py recheck WS bench/entities_blind2.tsv bench/entities_key2.tsv
    # the blind file (both samples shuffled, no version column) and its key
    python bench/entities.py blind /tmp/old.tsv /tmp/new.tsv --out bench/entities_blind.tsv --key bench/entities_key.tsv
    # once someone marked is_term / type_ok (y/n, 1/0) in the blind file: precision and type accuracy per version
    python bench/entities.py score bench/entities_blind.tsv bench/entities_key.tsv
    # the generic-term stop list, from a permissive (old) graph of the shared papers and the frequency list
    python bench/entities.py stoplist WS --out core/graph/data/generic_terms.txt

`sample` draws from the entity nodes a phrase finder made: paper nodes and the table, figure and equation nodes
(named after their caption, not terms; tests/pipeline/test_entity_media.py checks their names) are left out.
"""
from __future__ import annotations

import argparse
import csv
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.text.csv_safe import csv_row  # noqa: E402

COLUMNS = ["id", "entity", "type", "sentence", "is_term", "type_ok"]
# A sentence ends at . ! or ? before a capital, a digit or a bracket, not after an initial ("D. White").
_SENTENCE = re.compile(r"(?<![\s(][A-Z]\.)(?<=[.!?])\s+(?=[A-Z0-9(\[])")


def _open(path: str):
    from core.library import open_library
    from core.settings.workspace import Workspace

    return open_library(Workspace(Path(path)))


def _flat(text: str) -> str:
    """One TSV cell: no tabs or line breaks, at most 400 characters."""
    return " ".join(str(text).split())[:400]


def source_sentence(name: str, description: str) -> str:
    """The first sentence of the description that names the entity, else its first sentence."""
    sentences = [s for line in description.split("\n") for s in _SENTENCE.split(line) if s.strip()]
    low = name.casefold()
    return next((s for s in sentences if low in s.casefold()), sentences[0] if sentences else "")


def _entities(lib) -> list[tuple[str, str, str, str]]:
    """(key, name, type, description) of every entity node but papers, tables, figures and equations, sorted by
    key (a seed gives the same sample)."""
    from core.pipeline.graph.media_entities import MEDIA_ENTITY_TYPES

    return sorted((n.key, n.name, n.type, n.description) for n in lib.graph.all_nodes()
                  if not n.is_paper and n.type not in MEDIA_ENTITY_TYPES)


def cmd_stoplist(args) -> None:
    """Terms of the graph that several papers use and whose words are all common English ("training", "title",
    "full text", "PDF"), unless the lexicon knows them or they name a person or organisation: what a phrase finder
    returns from any paper, not what one is about."""
    from core.graph.extract.entity_types import known_type
    from core.graph.extract.spacy import words as W
    from core.graph.extract.terms import rarity

    def a_name(name: str) -> bool:  # "Andrew Head", "TableFormer", "BERTBASE": names, whatever their words
        capitalised = [w for w in name.split() if w[:1].isupper()]
        return (len(capitalised) >= 2 or any(c.isdigit() for c in name) or re.search(r"[a-z][A-Z]", name) is not None
                or name.isupper() and len(name) > 4)

    lib = _open(args.workspace)
    keys = sorted(n.key for n in lib.graph.all_nodes()
                  if not n.is_paper and len(n.doc_ids) >= args.min_papers and rarity(n.key.split()) >= args.min_zipf
                  and n.type not in ("person", "organization", "table", "figure", "equation") and not a_name(n.name)
                  and not known_type(n.key) and n.key not in W.FIELDS and n.key not in W.METRIC_WORDS)
    header = (f"# Generic terms: in >= {args.min_papers} of the shared papers' LLM-free graph and made of words with "
              f"Zipf frequency >= {args.min_zipf}.\n# Generated by `python bench/entities.py stoplist`; one key a "
              f"line (core/graph/extract/terms.py reads it).\n")
    Path(args.out).write_text(header + "\n".join(keys) + "\n", encoding="utf-8")
    print(f"wrote {len(keys)} generic terms to {args.out}")


def _draw(entities: list[tuple[str, str, str, str]], n: int, seed: int) -> list[tuple[str, str, str]]:
    picked = random.Random(seed).sample(entities, min(n, len(entities)))
    return [(name, type_, source_sentence(name, desc)) for _, name, type_, desc in picked]


def _write(path: str, rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        for r in rows:
            w.writerow(csv_row(_flat(c) for c in r))


def _read(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


# A manifest's fields (bench/fresh_corpus/manifest.json) as the graph's fields (core/graph/fields.py): "other" for the
# social sciences and food science, which no field's cues are written for.
MANIFEST_FIELDS = {"biology": "life", "medicine": "life", "chemistry": "physical", "physics": "physical",
                   "materials science": "physical", "computer science": "cs"}


def _safe_name(name: str) -> str:
    return re.sub(r"_+", "_", name)


def paper_fields(lib, manifest: str = "") -> dict[str, str]:
    """doc id → field: the manifest's (by file name) when given, else what core/graph/fields.detect_field says from
    the paper's venue and words."""
    import json

    from core.graph.fields import detect_field

    listed = {}
    if manifest:
        # The library stores a file's name made safe ("paperqa__x.pdf" → "paperqa_x.pdf"): compare them so.
        listed = {_safe_name(row["file"]): MANIFEST_FIELDS.get(row["field"], "other")
                  for row in json.loads(Path(manifest).read_text(encoding="utf-8"))}
    out = {}
    metadata = lib.metadata.get_many()
    for doc in lib.documents.ready_papers():
        if _safe_name(doc.filename) in listed:
            out[doc.id] = listed[_safe_name(doc.filename)]
            continue
        venue = metadata[doc.id].venue if doc.id in metadata else ""
        out[doc.id] = detect_field(" ".join(c.text for c in lib.chunks.by_doc(doc.id)), venue)
    return out


def cmd_sample(args) -> None:
    if args.per_field:
        return _sample_per_field(args)
    rows = _draw(_entities(_open(args.workspace)), args.n, args.seed)
    _write(args.out, [["entity", "type", "sentence"], *[list(r) for r in rows]])
    print(f"wrote {len(rows)} entities to {args.out}")


def _sample_per_field(args) -> None:
    """`--per-field N` entities of each field's papers (an entity goes to the field of the first paper that has
    it), each field's blind file (id, entity, type, sentence, is_term, type_ok: `score` reads it) and its key (id,
    version, field, paper) apart, so the files a judge reads say nothing of where an entity came from."""
    from core.pipeline.graph.media_entities import MEDIA_ENTITY_TYPES

    lib = _open(args.workspace)
    fields = paper_fields(lib, args.manifest)
    titles = {d.id: d.display_title for d in lib.documents.ready_papers()}
    by_field: dict[str, list] = {}
    for n in sorted(lib.graph.all_nodes(), key=lambda n: n.key):
        if n.is_paper or n.type in MEDIA_ENTITY_TYPES:
            continue
        docs = [d for d in n.doc_ids if d in fields]
        if docs:
            by_field.setdefault(fields[docs[0]], []).append((n.key, n.name, n.type, n.description, docs[0]))
    wanted = args.fields.split(",") if args.fields else sorted(by_field)
    for name in wanted:
        pool = by_field.get(name, [])
        picked = random.Random(args.seed).sample(pool, min(args.per_field, len(pool)))
        out, key = Path(args.out.format(field=name)), Path(args.key.format(field=name))
        out.parent.mkdir(parents=True, exist_ok=True)
        key.parent.mkdir(parents=True, exist_ok=True)
        _write(str(out), [COLUMNS, *[[str(i), e[1], e[2], source_sentence(e[1], e[3]), "", ""]
                                     for i, e in enumerate(picked, 1)]])
        _write(str(key), [["id", "version", "field", "paper"], *[[str(i), args.version, name, titles.get(e[4], e[4])]
                                                               for i, e in enumerate(picked, 1)]])
        print(f"{name}: {len(picked)} of {len(pool)} entities → {out} (key {key})")


def _extract_in_memory(workspace: str) -> dict[str, tuple[str, str, str, str]]:
    """The current extractor over the workspace's chunks in memory (nothing is written anywhere): merge key →
    (key, name, type, description), and its speed in chunks per CPU-second (the machine is shared: wall time is
    not the extractor's)."""
    from core.graph.merge import normalize_key
    from core.pipeline.graph.build import current_extractor

    lib = _open(workspace)
    extractor = current_extractor(lib)
    found: dict[str, tuple[str, str, str, str]] = {}
    chunks = 0
    docs = [(doc, lib.chunks.by_doc(doc.id)) for doc in lib.documents.ready_papers()]
    list(extractor.extract(docs[0][1][:1]))  # load the spaCy model outside the timing
    cpu, wall = time.process_time(), time.perf_counter()
    for _, doc_chunks in docs:
        chunks += len(doc_chunks)
        for ex in extractor.extract(doc_chunks):
            for e in ex.entities:
                key = normalize_key(e.name)
                found.setdefault(key, (key, e.name, e.type, e.description))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"{workspace}: {len(found)} distinct entities from {chunks} chunks in {cpu:.1f} CPU-s "
          f"({chunks / cpu:.1f} chunks per CPU-second; {wall:.1f} s wall)")
    return found


def cmd_dev(args) -> None:
    """The current extractor over the workspace's chunks in memory: nothing is written anywhere."""
    found = _extract_in_memory(args.workspace)
    for name, type_, sentence in _draw(sorted(found.values()), args.n, args.seed):
        print(f"{type_:12} {name!r:45}  {sentence[:110]}")


def cmd_recheck(args) -> None:
    """Marked rows of earlier rounds against the current extractor (dev evidence, never a round's score): of the
    rows a version wrote, which terms (is_term 1) the extractor still finds and which non-terms it still keeps."""
    from core.graph.merge import normalize_key

    found = _extract_in_memory(args.workspace)
    print("| file | version | terms kept | terms lost | non-terms kept | non-terms dropped | precision of kept | "
          "type same, ok | same, wrong | changed from wrong | changed from ok | type accuracy (low–high) |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    details, changes = [], []
    for blind_path, key_path in zip(args.files[::2], args.files[1::2]):
        version = {r["id"]: r["version"] for r in _read(key_path)}
        for v in sorted(set(version.values())):
            tally = Counter()
            for r in _read(blind_path):
                mark = _mark(r["is_term"])
                if version.get(r["id"]) != v or mark is None:
                    continue
                kept = normalize_key(r["entity"]) in found
                tally[(mark, kept)] += 1
                if mark and kept:  # the type the extractor gives now, against the judge's type_ok of the old one
                    now, ok = found[normalize_key(r["entity"])][2], _mark(r["type_ok"])
                    tally["same ok" if now == r["type"] and ok else "same wrong" if now == r["type"]
                          else "from wrong" if not ok else "from ok"] += 1
                    if now != r["type"]:
                        changes.append(f"{v} {Path(blind_path).name}: {r['entity']!r} {r['type']} → {now} "
                                       f"(type_ok {r['type_ok'] or '-'})")
                if args.show in (v, "all") and mark != kept:
                    what = "LOST term" if mark else "KEPT junk"
                    details.append(f"{v} {Path(blind_path).name}: {what}: {r['entity']!r} ({r['type']})")
            kept_terms, kept_junk = tally[(True, True)], tally[(False, True)]
            share = kept_terms / (kept_terms + kept_junk) if kept_terms + kept_junk else float("nan")
            # Type accuracy of the kept terms: unchanged types keep the judge's mark; a changed type is counted
            # wrong (low) or, when it was wrong before, right (high): read the listed changes to place it.
            low = tally["same ok"] / kept_terms if kept_terms else float("nan")
            high = (tally["same ok"] + tally["from wrong"]) / kept_terms if kept_terms else float("nan")
            print(f"| {Path(blind_path).name} | {v} | {kept_terms} | {tally[(True, False)]} | {kept_junk} | "
                  f"{tally[(False, False)]} | {share:.1%} | {tally['same ok']} | {tally['same wrong']} | "
                  f"{tally['from wrong']} | {tally['from ok']} | {low:.1%}–{high:.1%} |")
    print("\n".join(details))
    print("\ntype changes of kept terms:\n" + "\n".join(changes))


def cmd_rebuild(args) -> None:
    """The graph of the workspace (a copy!) rebuilt with the current extractor: extractions and graph cleared,
    every ready paper's graph stage run again (parsing and chunks are kept)."""
    from core.pipeline.graph.build import clear_graph
    from core.pipeline.graph.stage import process_graph_queue

    lib = _open(args.workspace)
    clear_graph(lib, keep_extractions=False)
    t = time.perf_counter()
    process_graph_queue(lib)
    print(f"graph rebuilt in {time.perf_counter() - t:.1f} s")
    cmd_sizes(args)


def cmd_sizes(args) -> None:
    lib = _open(args.workspace)
    papers = lib.graph_sources.papers()
    fields = paper_fields(lib, getattr(args, "manifest", ""))
    print("| paper | field | words | chunks | entities | per 1000 words | relations | extract s | chunks/s |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|")
    total_chunks = total_s = 0.0
    per_field: dict[str, Counter] = {}
    for doc in sorted(lib.documents.ready_papers(), key=lambda d: d.display_title):
        p = papers.get(doc.id)
        seconds = float(doc.timings.get("graph_extract_s", 0) or 0)
        words = sum(len(c.text.split()) for c in lib.chunks.by_doc(doc.id) if c.kind == "text")
        count = p.entity_count if p else 0
        tally = per_field.setdefault(fields.get(doc.id, "?"), Counter())
        tally.update(papers=1, words=words, entities=count, empty=count == 0)
        total_chunks += doc.chunk_count
        total_s += seconds
        print(f"| {doc.display_title[:50]} | {fields.get(doc.id, '?')} | {words} | {doc.chunk_count} | {count} | "
              f"{1000 * count / words if words else 0:.1f} | {p.relation_count if p else 0} | {seconds:.2f} | "
              f"{doc.chunk_count / seconds if seconds else 0:.1f} |")
    nodes = [n for n in lib.graph.all_nodes() if not n.is_paper]
    types = Counter(n.type for n in nodes)
    edges = sum(1 for _ in lib.graph.edge_outline())
    print(f"| all | {total_chunks:.0f} | {len(nodes)} nodes | {edges} edges | {total_s:.2f} | "
          f"{total_chunks / total_s if total_s else 0:.1f} |")
    print("types: " + ", ".join(f"{t} {c}" for t, c in types.most_common()))
    print("\n| field | papers | without entities | words | entities (per paper, summed) | per paper | "
          "per 1000 words |\n|---|---:|---:|---:|---:|---:|---:|")
    for name, t in sorted(per_field.items()):
        print(f"| {name} | {t['papers']} | {t['empty']} | {t['words']} | {t['entities']} | "
              f"{t['entities'] / t['papers']:.1f} | {1000 * t['entities'] / max(t['words'], 1):.1f} |")


def cmd_blind(args) -> None:
    """Both samples in one file, shuffled with a fixed seed; which version wrote a row is only in the key."""
    rows = [(version, r) for version, path in (("old", args.old), ("new", args.new)) for r in _read(path)]
    random.Random(args.seed).shuffle(rows)
    _write(args.out, [COLUMNS, *[[str(i), r["entity"], r["type"], r["sentence"], "", ""]
                                 for i, (_, r) in enumerate(rows, 1)]])
    _write(args.key, [["id", "version"], *[[str(i), v] for i, (v, _) in enumerate(rows, 1)]])
    print(f"wrote {len(rows)} rows to {args.out} and the key to {args.key}")


def _mark(value: str) -> bool | None:
    v = (value or "").strip().lower()
    if v in ("y", "yes", "1", "true", "x"):
        return True
    if v in ("n", "no", "0", "false"):
        return False
    return None


def score(blind: list[dict[str, str]], key: list[dict[str, str]]) -> dict[str, dict[str, float]]:
    """Per version: rows marked, precision (is_term), type accuracy (type_ok among the rows that are terms)."""
    version = {r["id"]: r["version"] for r in key}
    out: dict[str, dict[str, float]] = {}
    for v in sorted(set(version.values())):
        rows = [r for r in blind if version.get(r["id"]) == v]
        terms = [_mark(r["is_term"]) for r in rows]
        marked = [t for t in terms if t is not None]
        typed = [_mark(r["type_ok"]) for r, t in zip(rows, terms) if t]
        typed = [t for t in typed if t is not None]
        out[v] = {"rows": len(rows), "marked": len(marked),
                  "precision": sum(marked) / len(marked) if marked else float("nan"),
                  "typed": len(typed), "type_accuracy": sum(typed) / len(typed) if typed else float("nan")}
    return out


def cmd_score(args) -> None:
    table = score(_read(args.blind), _read(args.key))
    print("| version | rows | marked | precision | typed | type accuracy |\n|---|---:|---:|---:|---:|---:|")
    for v, s in table.items():
        print(f"| {v} | {s['rows']} | {s['marked']} | {s['precision']:.1%} | {s['typed']} | {s['type_accuracy']:.1%} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("sizes", "rebuild"):
        z = sub.add_parser(name)
        z.add_argument("workspace")
        z.add_argument("--manifest", default="", help="a manifest with each file's field (else: detected)")
    g = sub.add_parser("stoplist")
    g.add_argument("workspace")
    g.add_argument("--min-papers", type=int, default=3)
    g.add_argument("--min-zipf", type=float, default=3.5)
    g.add_argument("--out", default="core/graph/data/generic_terms.txt")
    s = sub.add_parser("sample")
    s.add_argument("workspace")
    s.add_argument("--seed", type=int, default=15)
    s.add_argument("--n", type=int, default=100)
    s.add_argument("--out", required=True, help="with --per-field, {field} in it names each field's file")
    s.add_argument("--per-field", type=int, default=0, help="this many entities of each field's papers")
    s.add_argument("--fields", default="", help="with --per-field: which fields (comma-separated; default all)")
    s.add_argument("--manifest", default="", help="a manifest with each file's field (else: detected)")
    s.add_argument("--key", default="/tmp/key_{field}.tsv", help="with --per-field: each field's key")
    s.add_argument("--version", default="fields38", help="with --per-field: the version named in the keys")
    r = sub.add_parser("recheck")
    r.add_argument("workspace")
    r.add_argument("files", nargs="+", help="marked blind file, its key, [blind, key, ...]")
    r.add_argument("--show", default="new", help="list the disagreements of this version's rows")
    d = sub.add_parser("dev")
    d.add_argument("workspace")
    d.add_argument("--seed", type=int, default=7)
    d.add_argument("--n", type=int, default=60)
    b = sub.add_parser("blind")
    b.add_argument("old")
    b.add_argument("new")
    b.add_argument("--seed", type=int, default=1515)
    b.add_argument("--out", default="bench/entities_blind.tsv")
    b.add_argument("--key", default="bench/entities_key.tsv")
    c = sub.add_parser("score")
    c.add_argument("blind")
    c.add_argument("key")
    args = p.parse_args()
    {"sizes": cmd_sizes, "rebuild": cmd_rebuild, "sample": cmd_sample, "dev": cmd_dev, "blind": cmd_blind,
     "score": cmd_score, "stoplist": cmd_stoplist, "recheck": cmd_recheck}[args.cmd](args)


if __name__ == "__main__":
    main()
