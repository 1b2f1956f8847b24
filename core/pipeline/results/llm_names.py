"""The LLM pass over result records, only when the workspace has an LLM: a results table whose dataset or metric
the rules left empty is shown to the model with its caption, the sentences citing it and its header, one call per
table; the names it replies are taken only when printed, word for word (case and spacing aside), in that caption or
those sentences: copy, never invent. A name taken fills the records that lack it; they say so (source LLM, and
extra["llm_fields"]). Anything else (no LLM, an error, a reply that is not JSON, a name not printed) keeps the rules'
records as they were: the paper never fails for it. Replies are cached by prompt hash (core.models.llm.cache).

Not called by read_paper_results, which stays pure: the caller that holds a model calls fill_names after it."""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from core.models.llm.base import ChatModel, LLMError
from core.pipeline.results.captions import table_captions
from core.pipeline.results.context import citing_sentences
from core.pipeline.results.values import clean_text
from core.prompts import PROMPTS
from core.schema.records import ContentItem
from core.schema.results import ResultRecord, ResultSource
from core.text.json_reply import key_lookup, read_json_object
from core.text.result_names import dataset_key, is_metric_name, metric_key
from core.text.tables import table_grid

log = logging.getLogger(__name__)

MAX_TABLES = 8  # calls per paper at most
MAX_NAME = 80
MAX_SENTENCES = 6
_FIELD = {"type": "string", "maxLength": MAX_NAME}
RESPONSE_FORMAT: dict[str, Any] = {"type": "json_schema", "json_schema": {"name": "result_table_names", "schema": {
    "type": "object", "required": ["dataset", "metric"], "properties": {"dataset": _FIELD, "metric": _FIELD}}}}


def printed_in(name: str, text: str) -> bool:
    """Whether the name is printed in the text, word for word (case and spacing aside)."""
    words = name.strip(" .,;:\"'").split()
    if not words or len(name) > MAX_NAME:
        return False
    return re.search(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", text, re.I) is not None


def _ask(chat_model: ChatModel, caption: str, sentences: list[str], header: str) -> dict:
    prompt = PROMPTS["result_table_names"].format(caption=caption or "(none)", header=header or "(none)",
                                                   sentences="\n".join(f"- {s}" for s in sentences) or "(none)")
    reply = chat_model.chat([{"role": "user", "content": prompt}], purpose="results", response_format=RESPONSE_FORMAT,
                            max_tokens=80, temperature=0.0)
    return read_json_object(reply.text) or {}


def grounded_names(reply: dict, text: str, methods: set[str]) -> dict[str, str]:
    """The reply's dataset and metric that `text` prints; a dataset that is a metric or one of the table's methods
    is refused (a model reading the wrong column)."""
    out: dict[str, str] = {}
    dataset = key_lookup(reply, "dataset")
    if isinstance(dataset, str) and printed_in(dataset, text) and not is_metric_name(dataset) \
            and dataset_key(dataset) and dataset_key(dataset) not in methods:
        out["dataset"] = " ".join(dataset.split()).strip(" .,;:")
    metric = key_lookup(reply, "metric")
    if isinstance(metric, str) and printed_in(metric, text) and metric_key(metric):
        out["metric"] = " ".join(metric.split()).strip(" .,;:")
    return out


def _fill(record: ResultRecord, names: dict[str, str]) -> ResultRecord:
    changes: dict[str, Any] = {}
    if not record.dataset and names.get("dataset"):
        changes.update(dataset=names["dataset"], dataset_key=dataset_key(names["dataset"]))
    if not record.metric and names.get("metric"):
        changes.update(metric=names["metric"], metric_key=metric_key(names["metric"]))
    if not changes:
        return record
    fields = ",".join(k for k in ("dataset", "metric") if k in changes)
    return replace(record, source=ResultSource.LLM, extra={**record.extra, "llm_fields": fields}, **changes)


def fill_names(chat_model: ChatModel | None, records: Sequence[ResultRecord], items: Sequence[ContentItem],
               doc_id: str = "") -> list[ResultRecord]:
    """The records, with the names the model copied for tables the rules left without a dataset or metric. Never
    raises: a failure keeps the rules' records, logged once for the paper."""
    records = list(records)
    if chat_model is None:
        return records
    todo = list(dict.fromkeys(r.item_index for r in records if not r.dataset or not r.metric))[:MAX_TABLES]
    if not todo:
        return records
    by_index = {it.index: it for it in items}
    captions = table_captions(items)
    found: dict[int, dict[str, str]] = {}
    for index in todo:
        label, caption = captions.get(index, ("", ""))
        sentences = citing_sentences(label, items)[:MAX_SENTENCES]
        grid = table_grid(by_index[index].table_body) if index in by_index else None
        header = " | ".join(clean_text(c) for c in (grid.rows[0] if grid and grid.rows else []))[:400]
        methods = {dataset_key(r.method) for r in records if r.item_index == index}
        try:
            found[index] = grounded_names(_ask(chat_model, caption, sentences, header),
                                          " ".join([caption, *sentences]), methods)
        except LLMError as exc:  # the endpoint is down: the other tables would fail the same way
            log.warning("LLM pass over the results of %s stopped: %s", doc_id[:12], exc)
            break
        except Exception:  # a bug must not cost the paper its records
            log.exception("LLM pass over the results of %s failed", doc_id[:12])
            break
    return [_fill(r, found[r.item_index]) if r.item_index in found else r for r in records]
