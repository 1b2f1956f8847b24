"""Result records (core/pipeline/results) against hand-judged tables: precision and recall of the tuples, per
field and overall, whether each table was rightly read as a results table, and the records read from tables the
judge said report no results (false positives). Also the records as a TSV for a blind precision pass, and the
cost against the ingest.

    .venv/bin/python bench/results_accuracy.py WORKSPACE bench/results_dev.jsonl            # the accuracy tables
    .venv/bin/python bench/results_accuracy.py WORKSPACE JUDGED --dump extracted.tsv        # + the tuples per table
    .venv/bin/python bench/results_accuracy.py WORKSPACE --speed                            # cost vs ingest time

A judged line: {"file", "page" (1-based), "label" ("Table 2"), "is_results", "rows_listed" (the row labels whose
tuples are all listed, "all", or "first N data rows": the table's first N rows holding a number below its header,
counted in order, group rows left out), "tuples": [{"method", "dataset", "metric", "value", "setting", "best"}]}.
Judged files are matched to the workspace's documents by file name, a judged table to an extracted one by page and
label (core.pipeline.results.captions' labels, a " (2)" left out; the only table of the page when no label matches).
Records count for precision only in the table's listed rows (row labels matched by key, exactly, or the first N
data rows).

A tuple is right when its value is equal (numbers parsed from both), its metric and dataset match, and its method
matches. Names match when their keys (core.text.result_names) are equal, or — the lenient fallback — when one
non-empty key contains the other ("SemEval-2017" and "SemEval-2017 task 10", "Acc" and "Top-1 Acc"). A dataset also
matches the suite the caption names when the record keeps it apart ("MAG" under "the SCIDOCS suite": the judged
"SciDocs" is right). A method also matches the row's own label (the first cell of the record's row), so a judge
writing the label as printed and a record naming the column's method (transposed) are compared fairly. An empty
judged name matches only an empty one: a dataset the paper does not name must not be invented.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.content.content_list import load_content_list  # noqa: E402
from core.library import open_library  # noqa: E402
from core.pipeline.results import read_paper_results  # noqa: E402
from core.pipeline.results.captions import table_captions  # noqa: E402
from core.pipeline.results.headers import read_layout  # noqa: E402
from core.pipeline.results.records import _grid  # noqa: E402
from core.pipeline.results.values import is_number_cell  # noqa: E402
from core.schema.records import ContentItem  # noqa: E402
from core.schema.results import ResultRecord  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402
from core.text.result_names import dataset_key, method_key, metric_key  # noqa: E402
from core.text.tables import table_grid  # noqa: E402

FIELDS = ("method", "dataset", "metric", "setting", "best")


def _norm_label(label: str) -> str:
    return re.sub(r"\s*\(\d+\)$", "", label or "").strip().casefold()


def names_match(judged: str, got: str, key) -> bool:
    a, b = key(judged or ""), key(got or "")
    if not a or not b:
        return a == b
    return a == b or a in b or b in a


def _value(v) -> float | None:
    try:
        return float(str(v).replace(",", "").replace("%", "").replace("−", "-").strip())
    except ValueError:
        return None


class Paper:
    """A judged file's document: its items, its records, each table's row labels."""

    def __init__(self, ws: Workspace, doc_id: str):
        self.items: list[ContentItem] = load_content_list(ws.parsed_dir(doc_id) / "content_list.json")
        self.records = read_paper_results(doc_id, self.items)
        by_index = {it.index: it for it in self.items}
        self.tables: dict[int, ContentItem] = {i: it for i, it in by_index.items() if it.type == "table"}
        self.labels = {i: label for i, (label, _) in table_captions(self.items).items()}
        self.row_labels: dict[tuple[int, int], str] = {}
        self.data_rows: dict[int, list[int]] = {}  # table → its data rows in order ("first 6 data rows")
        for i, item in self.tables.items():
            for r, row in enumerate(table_grid(item.table_body).rows):
                self.row_labels[(i, r)] = row[0] if row else ""
            self.data_rows[i] = _data_rows(item)

    def find_table(self, page: int, label: str) -> int | None:
        on_page = [i for i, it in self.tables.items() if it.page_idx + 1 == page]
        for i in on_page:
            if self.labels.get(i) and _norm_label(self.labels[i]) == _norm_label(label):
                return i
        return on_page[0] if len(on_page) == 1 else None


def _data_rows(item: ContentItem) -> list[int]:
    """The table's rows below its header that hold a number (the grid the reader reads), in order."""
    try:
        rows, parsed_header = _grid(item)
        if not rows:
            return []
        layout = read_layout(rows, parsed_header)
    except Exception:
        return []
    return [r for r in layout.body_rows() if any(is_number_cell(c) for c in layout.rows[r][1:])]


_FIRST_ROWS = re.compile(r"^first\s+(\d+)\s+(?:data\s+)?rows?$", re.I)


def _method_ok(t: dict, r: ResultRecord, paper: Paper) -> bool:
    return names_match(t["method"], r.method, method_key) or \
        names_match(t["method"], paper.row_labels.get((r.item_index, r.row), ""), method_key)


def _dataset_ok(t: dict, r: ResultRecord) -> bool:
    return names_match(t["dataset"], r.dataset, dataset_key) or \
        bool(t["dataset"]) and names_match(t["dataset"], r.extra.get("caption_dataset", ""), dataset_key)


def _checks(t: dict, r: ResultRecord, paper: Paper) -> dict[str, bool | None]:
    setting = (t.get("setting") or "").casefold()
    return {"method": _method_ok(t, r, paper), "dataset": _dataset_ok(t, r),
            "metric": names_match(t["metric"], r.metric, metric_key),
            "setting": setting == r.setting.casefold() or bool(setting) and setting in r.setting.casefold(),
            "best": None if t.get("best") is None else bool(t["best"]) == r.best}


def _in_scope(r: ResultRecord, rows_listed, paper: Paper) -> bool:
    if rows_listed in (None, "all", True):
        return True
    if isinstance(rows_listed, str):
        m = _FIRST_ROWS.match(rows_listed.strip())
        if not m:
            raise ValueError(f"rows_listed not understood: {rows_listed!r}")
        return r.row in paper.data_rows.get(r.item_index, [])[:int(m.group(1))]
    keys = {method_key(r.method), method_key(paper.row_labels.get((r.item_index, r.row), ""))}
    return any(method_key(x) in keys for x in rows_listed)  # exact: "Google" is not "Google Scholar"


def score_table(j: dict, records: list[ResultRecord], paper: Paper, totals: dict) -> None:
    scope = [r for r in records if _in_scope(r, j.get("rows_listed"), paper)]
    totals["extracted"] += len(scope)
    totals["judged"] += len(j["tuples"])
    used: set[int] = set()
    for t in j["tuples"]:
        value = _value(t["value"])
        best_i, best_checks, best_n = None, None, -1
        for i, r in enumerate(scope):
            if i in used or value is None or abs(r.value - value) > 1e-6 * max(1.0, abs(value)):
                continue
            checks = _checks(t, r, paper)
            n = sum(bool(v) for k, v in checks.items() if k in ("method", "dataset", "metric"))
            if n > best_n:
                best_i, best_checks, best_n = i, checks, n
        if best_i is None:
            totals["missed"].append((j["file"], j["page"], j["label"], t))
            continue
        used.add(best_i)
        totals["value"] += 1
        for f, ok in best_checks.items():
            if ok is not None:
                totals[f"{f}_seen"] += 1
                totals[f] += int(ok)
        if all(best_checks[f] for f in ("method", "dataset", "metric")):
            totals["right"] += 1
        else:
            totals["wrong"].append((j["file"], j["page"], j["label"], t, scope[best_i]))


def _file_key(name: str) -> str:
    return re.sub(r"_+", "_", name).casefold()


def _pr(right: int, extracted: int, judged: int) -> str:
    p = right / extracted if extracted else 0.0
    r = right / judged if judged else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return f"{p:6.1%} {r:6.1%} {f:6.1%}"


def accuracy(ws: Workspace, judged_path: Path, dump: Path | None, verbose: bool) -> None:
    lib = open_library(ws)
    by_name = {}
    for d in lib.documents.list():  # the upload sanitised some names ("a__b.pdf" is stored as "a_b.pdf")
        by_name[d.filename] = by_name[_file_key(d.filename)] = d.id
    papers: dict[str, Paper] = {}
    totals: dict = defaultdict(int, missed=[], wrong=[])
    kinds: Counter = Counter()
    false_pos: list[tuple] = []
    dump_rows: list[list] = []
    for line in judged_path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        j = json.loads(line)
        doc_id = by_name.get(j["file"]) or by_name.get(_file_key(j["file"]))
        if not doc_id:
            print(f"not in the workspace: {j['file']}")
            continue
        paper = papers.setdefault(j["file"], Paper(ws, doc_id))
        index = paper.find_table(j["page"], j["label"])
        records = [r for r in paper.records if r.item_index == index] if index is not None else []
        kinds[(bool(j["is_results"]), bool(records))] += 1
        if index is None:
            print(f"no table found: {j['file']} page {j['page']} {j['label']}")
        for r in records:
            dump_rows.append([j["file"], j["page"], j["label"], r.row, r.col, r.method, r.dataset, r.metric,
                              r.value_text, r.unit, r.setting, r.direction.value, int(r.best)])
        if not j["is_results"]:
            if records:
                false_pos.append((j["file"], j["page"], j["label"], len(records)))
            continue
        score_table(j, records, paper, totals)
    print("\nTables: judged results / not results × read as results / not")
    print(f"  results tables read as results      {kinds[(True, True)]:4}   missed {kinds[(True, False)]:4}")
    print(f"  other tables read as results (FP)   {kinds[(False, True)]:4}   rightly none {kinds[(False, False)]:4}")
    print("\nTuples (precision over records in the judged rows, recall over judged tuples)")
    print(f"  {'field':22} {'prec':>6} {'recall':>6} {'F1':>6}   right/paired")
    print(f"  {'value found':22} {_pr(totals['value'], totals['extracted'], totals['judged'])}")
    for f in FIELDS:
        seen = totals[f"{f}_seen"]
        line = _pr(totals[f], totals["extracted"], totals["judged"]) if f != "best" else " " * 20
        print(f"  {f:22} {line}   {totals[f]}/{seen}")
    print(f"  {'overall (m+d+metric)':22} {_pr(totals['right'], totals['extracted'], totals['judged'])}"
          f"   {totals['right']} right of {totals['judged']} judged, {totals['extracted']} extracted")
    if false_pos:
        print("\nRecords from tables judged not results (false positives):")
        for file, page, label, n in false_pos:
            print(f"  {file} p{page} {label}: {n} records")
    if verbose:
        for file, page, label, t in totals["missed"]:
            print(f"  MISSED {file} p{page} {label}: {t}")
        for file, page, label, t, r in totals["wrong"]:
            print(f"  WRONG  {file} p{page} {label}: judged {t['method']!r}/{t['dataset']!r}/{t['metric']!r} "
                  f"got {r.method!r}/{r.dataset!r}/{r.metric!r} ({r.extra.get('caption_dataset', '')})")
    if dump:
        with dump.open("w", encoding="utf-8", newline="") as f:
            out = csv.writer(f, delimiter="\t")
            out.writerow(["file", "page", "label", "row", "col", "method", "dataset", "metric", "value", "unit",
                          "setting", "direction", "best"])
            out.writerows(dump_rows)
        print(f"\n{len(dump_rows)} extracted tuples of the judged tables written to {dump}")


def speed(ws: Workspace, repeats: int = 3) -> None:
    """read_paper_results per paper (best of `repeats`) against the paper's recorded ingest time."""
    lib = open_library(ws)
    rows, total_read, total_ingest, worst_table = [], 0.0, 0.0, 0.0
    for doc in lib.documents.list():
        path = ws.parsed_dir(doc.id) / "content_list.json"
        ingest = float(doc.timings.get("total_s") or 0.0)
        if not path.exists() or not ingest:
            continue
        items = load_content_list(path)
        tables = sum(1 for it in items if it.type == "table")
        best = min(_timed(doc.id, items) for _ in range(repeats))
        for it in (it for it in items if it.type == "table"):
            worst_table = max(worst_table, _timed(doc.id, [it]))
        total_read += best
        total_ingest += ingest
        rows.append((doc.filename[:40], tables, best * 1000, ingest, best / ingest))
    print(f"{'paper':40} {'tables':>6} {'read ms':>8} {'ingest s':>9} {'ratio':>8}")
    for name, tables, ms, ingest, ratio in sorted(rows, key=lambda r: -r[4]):
        print(f"{name:40} {tables:6} {ms:8.1f} {ingest:9.1f} {ratio:8.4%}")
    if rows:
        print(f"{'all ' + str(len(rows)) + ' papers':40} {sum(r[1] for r in rows):6} {total_read * 1000:8.1f} "
              f"{total_ingest:9.1f} {total_read / total_ingest:8.4%}")
        print(f"slowest single table: {worst_table * 1000:.1f} ms")


def _timed(doc_id: str, items: list[ContentItem]) -> float:
    start = time.perf_counter()
    read_paper_results(doc_id, items)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("judged", type=Path, nargs="?")
    parser.add_argument("--dump", type=Path, help="write the extracted tuples of the judged tables to this TSV")
    parser.add_argument("--speed", action="store_true", help="time read_paper_results against the ingest")
    parser.add_argument("-v", "--verbose", action="store_true", help="list missed and wrong tuples")
    args = parser.parse_args()
    ws = Workspace(args.workspace.resolve())
    if args.judged:
        accuracy(ws, args.judged, args.dump, args.verbose)
    if args.speed:
        speed(ws)


if __name__ == "__main__":
    main()
