"""Whether a table reports results (methods scored on datasets) or something else: dataset statistics,
hyperparameters, notation, patient characteristics, examples. Only a results table gives records.

The evidence, weighed: metric names in the header (or down the rows of a transposed table), words of the caption
("results", "performance", "accuracy of", "ablation", "comparison" for; "statistics", "hyperparameters",
"notation", "characteristics", "examples" against), and how much of the body is numbers.
"""
from __future__ import annotations

import re

from core.pipeline.results.headers import AGGREGATE, METRIC, Layout
from core.pipeline.results.values import clean_text, is_number_cell

_FOR = re.compile(
    r"\b(?:results?|performances?|accurac(?:y|ies)|scores?|evaluations?|evaluated|ablations?|comparisons?|"
    r"compared|comparing|outperform\w*|baselines?|errors?|f1|bleu|rouge|auc|precision|recall|perplexity|"
    r"effects? of|impact of|metrics?|benchmark(?:ing)?|leaderboard|state[- ]of[- ]the[- ]art)\b", re.I)
_AGAINST = re.compile(
    r"\b(?:statistics|stats|hyper-?parameters?|notations?|symbols?|characteristics|demographics?|examples?|"
    r"samples?|overview of (?:the )?datasets?|datasets? (?:used|details|summary|sizes?)|details of|"
    r"summary of (?:the )?datasets?|number of (?:papers|documents|samples|examples|instances|sentences|tokens|"
    r"images)|configurations?|architecture details|(?:training|model) (?:details|settings|configurations?)|"
    r"glossary|definitions?|annotation guidelines|templates?|prompts?|license|list of|distribution of|"
    r"baseline characteristics|inclusion criteria|data ?sets? statistics|corpus statistics|token counts)\b", re.I)
MIN_NUMERIC_SHARE = 0.5  # of the value cells: a table of words ("yes", "full text") reports no results


def numeric_share(layout: Layout) -> float:
    cells = [layout.rows[r][c] for r in layout.body_rows() for c in layout.value_cols]
    filled = [c for c in cells if clean_text(c) and clean_text(c) not in ("-", "–", "—", "n/a", "N/A")]
    return sum(is_number_cell(c) for c in filled) / len(filled) if filled else 0.0


def has_metric(layout: Layout) -> bool:
    if any(role == METRIC for path in layout.col_paths.values() for _, role in path):
        return True
    return layout.transposed and any(role == METRIC for role in layout.label_roles.values())


def is_results_table(layout: Layout, caption: str, row_metrics: int = 0) -> bool:
    """`row_metrics`: how many row labels name a metric (a transposed table's metrics)."""
    if not layout.value_cols or not layout.body_rows() or numeric_share(layout) < MIN_NUMERIC_SHARE:
        return False
    text = re.sub(r"^\s*Table\s+\S+\s*[:.]?", "", caption or "")
    score = 0
    if has_metric(layout) or row_metrics:
        score += 2
    if any(role == AGGREGATE for path in layout.col_paths.values() for _, role in path):
        score += 1
    score += min(len({m.casefold() for m in _FOR.findall(text)}), 2)
    score -= 2 * len({m.casefold() for m in _AGAINST.findall(text)})
    return score > 0
