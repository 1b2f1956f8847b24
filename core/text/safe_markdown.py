"""Paper text made safe for anything that renders markdown or HTML.

Everything a paper contains (text, titles, captions, table HTML, image paths) is untrusted: it could come from
a hostile PDF or an imported MinerU zip. `md_escape` shows a string literally; `sanitize_markdown` keeps a
paper's markdown but removes raw HTML, images and every link that is not http(s) or mailto.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from core.text.plain import strip_markup

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"}

_SAFE_SCHEMES = ("http", "https", "mailto")
_DANGEROUS_ELEMENTS = re.compile(
    r"<\s*(script|style|iframe|object|embed|noscript|template|svg|math|textarea|title|xmp|select)\b.*?"
    r"<\s*/\s*\1\s*>", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^<>\s]*)>")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>|<![^<>]*>|<\?[^<>]*\?>")
# Inline links and images: [text](url "title"), with an optional <url>. Nested brackets one level deep.
_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^<>\n]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"
                   r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)")
_REF_IMAGE = re.compile(r"!\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\s*\[[^\[\]]*\]")
_REF_DEF = re.compile(r"^[ ]{0,3}\[[^\]\n]+\]:[ \t]*(\S+).*$", re.MULTILINE)
_SCRIPT_SCHEME = re.compile(r"(?i)\b(java|vb|live)(\s*)script\s*:")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$])")


def _scheme(url: str) -> str:
    """The scheme of a URL as a browser would read it: entities decoded, whitespace and controls dropped."""
    cleaned = html.unescape(url).strip().strip("<>")
    cleaned = "".join(ch for ch in cleaned if ch > " " and ch != "\x7f")
    match = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*):", cleaned)
    return match.group(1).lower() if match else ""


def is_safe_link(url: str) -> bool:
    return _scheme(url) in _SAFE_SCHEMES


def md_escape(text: str, paragraphs: bool = False) -> str:
    """Untrusted text (a title, a file name, a caption, a passage) shown through something that renders
    markdown: every markdown character escaped, so it reads as the literal string. Whitespace collapses to
    single spaces, except blank-line paragraph breaks when `paragraphs` is set."""
    text = str(text or "")
    if paragraphs:
        parts = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
        return "\n\n".join(_MD_SPECIAL.sub(r"\\\1", p) for p in parts if p)
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def sanitize_markdown(md: str) -> str:
    """Paper markdown made safe for st.markdown: no raw HTML, no images (a remote one would be fetched by the
    reader's browser), and links only to http(s) and mailto; anything else keeps its text and loses its link."""
    md = str(md or "")
    md = _COMMENT.sub("", md)
    md = _DANGEROUS_ELEMENTS.sub("", md)

    def autolink(m: re.Match) -> str:
        url = m.group(1)
        return url if is_safe_link(url) else url.split(":", 1)[-1]

    md = _AUTOLINK.sub(autolink, md)
    md = _TAG.sub("", md)  # what is left of a tag (an unclosed '<script') st.markdown shows as text

    def link(m: re.Match) -> str:
        bang, text, url = m.group(1), m.group(2), m.group(3).strip("<>")
        if bang:
            return f"*[image: {text.strip()}]*" if text.strip() else "*[image]*"
        if is_safe_link(url):
            return f"[{text}]({url.replace(' ', '%20')})"
        return text

    md = _LINK.sub(link, md)
    md = _REF_IMAGE.sub(lambda m: f"*[image: {m.group(1).strip()}]*", md)
    md = _REF_DEF.sub(lambda m: m.group(0) if is_safe_link(m.group(1)) else "", md)
    # Whatever a link syntax we did not model still carries, it cannot carry a script scheme.
    md = _SCRIPT_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}script\u200b:", md)
    return md


def safe_local_file(base_dir: Path, rel: str, suffixes: set[str] | None = IMAGE_SUFFIXES) -> Path | None:
    """A file named by a paper (e.g. `images/x.jpg`) if it really lies inside `base_dir`; None otherwise."""
    rel = html.unescape(str(rel or "")).strip().strip("<>")
    if not rel or _scheme(rel) or rel.startswith(("/", "\\")) or "\x00" in rel:
        return None
    base = Path(base_dir).resolve()
    try:
        path = (base / rel).resolve()
    except (OSError, RuntimeError):
        return None
    if not path.is_relative_to(base) or not path.is_file():
        return None
    if suffixes is not None and path.suffix.lower() not in suffixes:
        return None
    return path


@dataclass
class MarkdownBlock:
    kind: str  # markdown | image | table
    text: str = ""  # sanitised markdown, or an image's alt text
    path: Path | None = None  # image file inside the parsed folder
    table_html: str = ""


_BLOCK = re.compile(r"<table\b.*?</table\s*>|!\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^()\s<>]+)>?\s*\)",
                    re.IGNORECASE | re.DOTALL)


_HEADING = re.compile(r"^(#{1,6})(?=[ \t])", re.MULTILINE)


def demote_headings(md: str, levels: int) -> str:
    """`# Title` → `### Title` for levels=2: a paper's headings nested under the page's own title."""
    return _HEADING.sub(lambda m: "#" * min(6, len(m.group(1)) + levels), md) if levels > 0 else md


def markdown_blocks(md: str, base_dir: Path, demote: int = 0) -> list[MarkdownBlock]:
    """Split MinerU's markdown into sanitised text, local images (shown with st.image) and HTML tables
    (shown as data frames). Images that do not resolve inside `base_dir` become a text placeholder.
    Headings are demoted by `demote` levels."""
    blocks: list[MarkdownBlock] = []
    pending: list[str] = []

    def flush() -> None:
        text = demote_headings(sanitize_markdown("".join(pending)), demote).strip()
        pending.clear()
        if text:
            blocks.append(MarkdownBlock("markdown", text))

    pos = 0
    for m in _BLOCK.finditer(md or ""):
        pending.append(md[pos:m.start()])
        pos = m.end()
        token = m.group(0)
        if token[:1] == "<":
            flush()
            blocks.append(MarkdownBlock("table", table_html=token))
            continue
        path = safe_local_file(base_dir, m.group(2))
        if path is None:
            pending.append(token)  # the sanitiser turns it into "[image: alt]"
            continue
        flush()
        blocks.append(MarkdownBlock("image", text=(m.group(1) or "").strip(), path=path))
    pending.append((md or "")[pos:])
    flush()
    return blocks


def passage_markdown(text: str) -> str:
    """A passage (paper text, untrusted) for st.markdown: its markup stripped (core.text.plain.strip_markup), what
    is left escaped so it reads literally, each line of the passage (a paragraph, a table row) on a line of its
    own."""
    return "  \n".join(md_escape(line) for line in strip_markup(text).splitlines())
