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


_SCRIPT_BODY = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_ANY_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9:-]*(?:\s[^<>]*)?/?>|<!--.*?-->", re.DOTALL)
_IMAGE = re.compile(r"!\[([^\[\]]*)\]\([^()\s]*\)")
_ANY_LINK = re.compile(r"\[([^\[\]]+)\]\([^()\s]*\)")
_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3}|_{1,3})(?=\S)(.+?)(?<=\S)\1(?![\w*])", re.DOTALL)
_CODE = re.compile(r"`+([^`]+)`+")
_LINE_MARK = re.compile(r"^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+]\s+(?=\S)|\d{1,3}[.)]\s+(?=[A-Z]))", re.MULTILINE)


def prose_text(text: str) -> str:
    """Running text for a bibliography (an abstract in BibTeX or CSL-JSON): plain_text, then every HTML tag and
    comment, Markdown emphasis, code marks, images, links, headings, quotes and list marks gone, on one line.
    Underscores and asterisks inside words ("x_i", "p*q") stay: they are the paper's text."""
    if not text:
        return ""
    out = plain_text(text)
    for _ in range(2):  # a tag written as an entity ("&lt;b&gt;") is a tag once decoded
        out = html.unescape(_ANY_TAG.sub(" ", _SCRIPT_BODY.sub(" ", out)))
    out = _IMAGE.sub(r"\1", out)
    out = _ANY_LINK.sub(r"\1", out)
    out = _LINE_MARK.sub("", out)
    out = _CODE.sub(r"\1", out)
    out = _EMPHASIS.sub(r"\2", out)
    out = _EMPHASIS.sub(r"\2", out)  # nested: ***a*** or **_a_**
    return re.sub(r"\s+(?=[.,;:!?](?:\s|$))", "", " ".join(out.split()))  # "a <b>link</b> ." → "a link."
