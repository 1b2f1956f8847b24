"""MinerU's item text as a person reads it in a plain table. The flash tier writes an item's text as Markdown with
inline HTML: **bold** run-in headings, <sup>/<sub> for footnote marks and indices, backslash-escaped _ * # [ ],
[url](url) links. A Markdown view renders them; a table cell shows them raw ("**Co-Views** Our co-views…",
"v<sub>A</sub>"). Unicode super- and subscripts keep the difference where they exist (⁸, v₂); letters without
one are written inline (v<sub>A</sub> → vA)."""
from __future__ import annotations

import html
import re

_SUPER = str.maketrans("0123456789+-=()n i", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ ⁱ")
_SUB = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
_SCRIPT = re.compile(r"<(sup|sub)>(.*?)</\1>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"</?(?:sup|sub|b|i|em|strong|span|u|br|p|div)\b[^>]*/?>", re.IGNORECASE)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", re.DOTALL)
_LINK = re.compile(r"\[([^\[\]]+)\]\((https?://[^()\s]+)\)")
_ESCAPED = re.compile(r"\\([_*#\[\]`$\\<>|~])")


def _script(match: re.Match) -> str:
    kind, inner = match.group(1).lower(), match.group(2)
    table, allowed = (_SUPER, "0123456789+-=()ni ") if kind == "sup" else (_SUB, "0123456789+-=()")
    return inner.translate(table) if inner and all(c in allowed for c in inner) else inner


def _link(match: re.Match) -> str:
    label, url = match.group(1), match.group(2)
    return label if label.strip("<> ") == url else f"{label} ({url})"


def plain_text(text: str) -> str:
    """`text` without Markdown emphasis, inline HTML, escapes and link syntax; HTML entities decoded."""
    if not text:
        return ""
    out = _SCRIPT.sub(_script, text)
    out = _TAG.sub("", out)
    out = _BOLD.sub(r"\1", out)
    out = _LINK.sub(_link, out)
    out = _ESCAPED.sub(r"\1", out)
    return html.unescape(out)
