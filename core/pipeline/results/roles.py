"""Roles settled after the layout is read: header names that are not names become settings, whether the methods
run across the columns (a table comparing its column headers as methods), and what a group row names."""
from __future__ import annotations

import re

from core.pipeline.results.headers import (
    DATASET,
    GENERIC_GROUP,
    METHOD,
    METRIC,
    SETTING,
    Layout,
    is_setting_name,
    looks_like_a_name,
)
from core.pipeline.results.values import clean_text
from core.text.result_names import dataset_key


def names_to_settings(layout: Layout) -> None:
    """Header cells read as datasets only because they are not metrics become settings when they do not look like
    names (called when the caption or the citing sentences name the table's dataset)."""
    for c, path in layout.col_paths.items():  # the corner's "Subtask →" row keeps its names ("Co-View", "Cite")
        layout.col_paths[c] = [(t, SETTING if role == DATASET and not looks_like_a_name(t)
                                and t not in layout.hinted_names else role) for t, role in path]


_OURS = re.compile(r"\b(?:ours|our (?:method|model|approach|system)|proposed|baselines?)\b", re.I)


_BEATS = r"(?:outperforms?|outperformed|beats|surpasses|improves (?:on|over|upon)|is better than)"


def _compared(name: str, text: str) -> bool:
    """Whether the caption or a citing sentence compares the name as a method: "HMM-T outperforms N-GRAMS"."""
    name = re.escape(name)
    return bool(re.search(rf"(?<![\w-]){name}(?![\w-])\s+(?:\w+\s+)?{_BEATS}|{_BEATS}\s+(?:the\s+)?{name}(?![\w-])",
                          text))


def methods_across(layout: Layout, dataset_keys: set[str], text: str = "") -> bool:
    """Whether the value columns are methods though no header said so: a column headed "Ours" or "Baseline", a
    column header the caption or a citing sentence compares as a method ("HMM-T outperforms N-GRAMS"), or row
    labels that are the datasets the caption or the citing sentences name (and no column header is one)."""
    if layout.transposed or not layout.label_cols:
        return False
    headers = [t for path in layout.col_paths.values() for t, role in path if role in (DATASET, METHOD)]
    if not headers or any(role == METRIC for path in layout.col_paths.values() for _, role in path):
        return False
    if any(_OURS.search(t) for t in headers):
        return True
    if text and any(_compared(t, text) for t in headers):
        return True
    labels = {dataset_key(clean_text(layout.rows[r][c])) for r in layout.body_rows() for c in layout.label_cols}
    return bool(labels & dataset_keys) and not {dataset_key(t) for t in headers} & dataset_keys


def group_role(label: str) -> str:
    """What a group row names: a setting, a dataset (a name that is not "Baselines" or "Our models"), or ""."""
    if is_setting_name(label):
        return SETTING
    if GENERIC_GROUP.search(label) or not re.search(r"[A-Z].*[A-Z0-9]|\d", label):
        return ""
    return DATASET
