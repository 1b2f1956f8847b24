"""Whether a table reports results (methods scored on datasets) or something else: dataset statistics,
hyperparameters, notation, patient characteristics, examples. Only a results table gives records.

The evidence, weighed: metric names in the header (or down the rows of a transposed table), words of the caption
("results", "performance", "accuracy of", "ablation", "comparison" for; "statistics", "hyperparameters",
"notation", "characteristics", "examples" against), and how much of the body is numbers.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from core.pipeline.results.headers import AGGREGATE, METRIC, Layout
from core.pipeline.results.values import clean_text, is_number_cell

_FOR = re.compile(
    r"\b(?:results?|performances?|accurac(?:y|ies)|scores?|evaluations?|evaluated|ablations?|comparisons?|"
    r"compared|comparing|outperform\w*|baselines?|errors?|f1|bleu|rouge|auc|precision|recall|perplexity|"
    r"effects? of|impact of|metrics?|(?:higher|lower|larger|smaller) is better|benchmark(?:ing)?|leaderboard|"
    r"state[- ]of[- ]the[- ]art)\b", re.I)
_AGAINST = re.compile(
    r"\b(?:statistics|stats|hyper-?parameters?|notations?|symbols?|characteristics|demographics?|examples?|"
    r"samples?|overview of (?:the )?datasets?|datasets? (?:used|details|summary|sizes?)|details of|"
    r"summary of (?:the )?datasets?|number of (?:papers|documents|samples|examples|instances|sentences|tokens|"
    r"images)|configurations?|architecture details|(?:training|model) (?:details|settings|configurations?)|"
    r"glossary|definitions?|annotation guidelines|templates?|prompts?|license|list of|distribution of|"
    r"baseline characteristics|inclusion criteria|data ?sets? statistics|corpus statistics|token counts|"
    r"model sizes?|number of parameters|parameter counts?)\b", re.I)
_COUNT_HEADER = re.compile(r"^(?:#|%|no\.|num\.?|number|count|size|params|parameters|n\b|total)", re.I)
MIN_NUMERIC_SHARE = 0.5  # of the value cells: a table of words ("yes", "full text") reports no results


def numeric_share(layout: Layout) -> float:
    cells = [layout.rows[r][c] for r in layout.body_rows() for c in layout.value_cols]
    filled = [c for c in cells if clean_text(c) and clean_text(c) not in ("-", "–", "—", "n/a", "N/A")]
    return sum(is_number_cell(c) for c in filled) / len(filled) if filled else 0.0


def has_metric(layout: Layout) -> bool:
    if any(role == METRIC for path in layout.col_paths.values() for _, role in path):
        return True
    return layout.transposed and any(role == METRIC for role in layout.label_roles.values())


_TRAIN = re.compile(r"^(?:#\s*)?(?:train(?:ing)?|train set|training set)$", re.I)
_OURS_ROW = re.compile(r"\b(?:ours|our (?:method|model|approach)|proposed|baselines?)\b", re.I)


def is_results_table(layout: Layout, caption: str, row_metrics: int = 0, sentences: Sequence[str] = ()) -> bool:
    """`row_metrics`: how many row labels name a metric (a transposed table's metrics); `sentences`: the paper's
    sentences citing the table ("Table 2 shows that ours outperforms …" is evidence too)."""
    if not layout.value_cols or not layout.body_rows() or numeric_share(layout) < MIN_NUMERIC_SHARE:
        return False
    text = re.sub(r"^\s*Table\s+\S+\s*[:.]?", "", caption or "")
    score = 0
    if has_metric(layout) or row_metrics:
        score += 2
    if any(role == AGGREGATE for path in layout.col_paths.values() for _, role in path):
        score += 1
    headers = [t for path in layout.col_paths.values() for t, _ in path]
    if headers and not has_metric(layout) and not row_metrics:
        if all(_COUNT_HEADER.match(t) for t in headers):
            return False  # "# papers", "Number of parameters": counts, not scores
        if any(_TRAIN.match(clean_text(t)) for t in headers):
            return False  # "Train | Dev | Test" without a metric: a dataset's sizes; results are not on train
    labels = [clean_text(layout.rows[r][c]) for r in layout.body_rows() for c in layout.label_cols]
    if any(_OURS_ROW.search(t) for t in labels + headers):
        score += 1
    cited = " ".join(sentences[:20])
    score += max(min(len(set(_FOR.findall(cited))), 1) - 2 * len(set(_AGAINST.findall(cited))), -2)
    score += min(len({m.casefold() for m in _FOR.findall(text)}), 2)
    score -= 2 * len({m.casefold() for m in _AGAINST.findall(text)})
    return score > 0
