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


# Passages as the Search, Ask and Compare pages show them: every tag gone (not only the inline ones above), the
# contents of script-like elements dropped, table cells and line breaks kept apart, Markdown emphasis, headings,
# images, links and code marks read as text. What is left is plain text: pages still escape it for st.markdown
# (md_escape), so a "<" that is not a tag ("p < 0.05") shows as itself.
_HIDDEN = re.compile(r"<\s*(script|style|iframe|object|embed|noscript|template|svg|math|textarea|title|xmp|select)\b"
                     r".*?<\s*/\s*\1\s*>", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_ANY_TAG = re.compile(r"</?[A-Za-z][^<>]*>|<![^<>]*>|<\?[^<>]*>")
_CELL_END = re.compile(r"</\s*t[dh]\s*>", re.IGNORECASE)
_LINE_END = re.compile(r"<\s*br\s*/?>|</\s*(?:p|div|tr|li|h[1-6]|caption)\s*>", re.IGNORECASE)
_MD_IMAGE = re.compile(r"!\[([^\[\]]*)\]\([^()\n]*\)")
_MD_LINK = re.compile(r"\[([^\[\]\n]+)\]\(\s*<?[^()\s<>]*>?(?:\s+\"[^\"\n]*\")?\s*\)")
_MD_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.MULTILINE)
# Spans within a line and of bounded length: an unclosed mark ("*a *b *c" …) is then tried over 300 characters
# from each start, not to the end of the passage (15,000 characters of "*a " took 1.8 s unbounded).
_MD_STRONG = re.compile(r"(?<![\w*_])(\*\*|__)(?=\S)(.{1,300}?)(?<=\S)\1(?![\w*_])")
_MD_EMPH = re.compile(r"(?<![\w*_\\])([*_])(?=[^\s*_])(.{1,300}?)(?<=[^\s*_\\])\1(?![\w*_])")
_MD_CODE = re.compile(r"(`+)(?=\S)(.{1,300}?)(?<=\S)\1")
_SPACES = re.compile(r"[ \t]+")


def _without_tags(text: str) -> str:
    # Removing one tag can join two halves into another ("<<b>script>"): repeat until none is left. Each pass
    # shortens the text, so this ends.
    while True:
        stripped = _ANY_TAG.sub("", _COMMENT.sub("", _HIDDEN.sub("", text)))
        if stripped == text:
            return text
        text = stripped


def strip_markup(text: str) -> str:
    """A passage's text without HTML or Markdown: the words a reader sees on the page, with table cells separated
    by " | " and one line per paragraph, row or break. Never contains an HTML tag, comment or declaration, also
    once entities are decoded ("&lt;b&gt;" is decoded, then removed like any tag)."""
    if not text:
        return ""
    out = _SCRIPT.sub(_script, str(text))
    out = _CELL_END.sub(" | ", out)
    out = _LINE_END.sub("\n", out)
    out = _without_tags(html.unescape(_without_tags(out)))
    out = _MD_IMAGE.sub(lambda m: f"[image: {m.group(1).strip()}]" if m.group(1).strip() else "[image]", out)
    out = _MD_LINK.sub(r"\1", out)
    out = _MD_HEADING.sub("", out)
    out = _MD_CODE.sub(r"\2", out)
    out = _MD_STRONG.sub(r"\2", out)
    out = _MD_EMPH.sub(r"\2", out)
    out = _ESCAPED.sub(r"\1", out)
    # Unescaping "\<" can make a tag again ("\<b>"); a last pass keeps the promise above.
    out = _without_tags(out)
    lines = (_SPACES.sub(" ", line).strip(" |") for line in out.splitlines())
    return "\n".join(line.strip() for line in lines if line.strip())


_LIST_MARK = re.compile(r"^\s{0,3}(?:>\s?|[-*+]\s+(?=\S)|\d{1,3}[.)]\s+(?=[A-Z]))", re.MULTILINE)


def prose_text(text: str) -> str:
    """Running text for a bibliography (an abstract in BibTeX or CSL-JSON): strip_markup's words, without quote
    and list marks, on one line. Underscores and asterisks inside words ("x_i", "p*q") stay: they are the paper's."""
    if not text:
        return ""
    out = _LIST_MARK.sub("", strip_markup(plain_text(text)))
    return re.sub(r"\s+(?=[.,;:!?](?:\s|$))", "", " ".join(out.replace(" | ", " ").split()))
