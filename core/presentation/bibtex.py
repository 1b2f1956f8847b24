"""A library's papers as BibTeX (written with bibtexparser 2) or CSL-JSON: keys like `cohan2020specter`, LaTeX's
special characters escaped in every field, identifiers kept verbatim.

bibtexparser writes what it is given: the escaping is ours (core/text/latex.py), and the BibTeX import reads it back
(core/pipeline/metadata/bib_import.py), so a .bib imported and exported again keeps its metadata."""
from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence

import bibtexparser
from bibtexparser.model import Entry, Field

from core.schema.metadata import PaperMetadata
from core.text.latex import latex_escape
from core.text.plain import prose_text

_STOP = {"a", "an", "the", "on", "of", "in", "for", "to", "and", "with", "towards", "toward", "from", "by", "is",
         "are", "do", "does", "how", "what", "why", "when", "can", "via", "at", "as", "into", "using"}
_VERBATIM = {"doi", "eprint"}  # identifiers: links break if escaped; braces and backslashes are dropped instead
_PROCEEDINGS = re.compile(r"proceedings|conference|workshop|symposium|\b(acl|naacl|eacl|emnlp|neurips|nips|icml|"
                          r"iclr|cvpr|iccv|eccv|aaai|ijcai|kdd|sigir|osdi|sosp|pldi|vldb|sigmod|www)\b", re.I)


def _ascii_word(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower())


def citation_key(meta: PaperMetadata) -> str:
    """family name + year + first significant title word: cohan2020specter (anon / nd when unknown)."""
    family = _ascii_word(meta.first_author_family()) or "anon"
    word = next((w for w in (_ascii_word(w) for w in re.split(r"[\s:\-–—/]+", meta.title)) if w and w not in _STOP),
                "")
    return f"{family}{meta.year or 'nd'}{word}"


def unique_keys(metas: Sequence[PaperMetadata]) -> list[str]:
    """One key per paper; a repeated key gets a, b, c… in order (cohan2020specter, cohan2020spectera)."""
    seen: dict[str, int] = {}
    keys = []
    for meta in metas:
        key = citation_key(meta)
        n = seen.get(key, 0)
        seen[key] = n + 1
        keys.append(key if n == 0 else f"{key}{chr(ord('a') + (n - 1) % 26)}{'' if n <= 26 else n}")
    return keys


def entry_type(meta: PaperMetadata) -> str:
    if meta.venue and _PROCEEDINGS.search(meta.venue):
        return "inproceedings"
    if meta.venue or meta.doi:
        return "article"
    return "misc"


def _fields(meta: PaperMetadata, kind: str) -> list[tuple[str, str]]:
    fields = [("title", meta.title), ("author", " and ".join(meta.authors)),
              ("year", str(meta.year) if meta.year else "")]
    if meta.venue:
        fields.append(("booktitle" if kind == "inproceedings" else "journal" if kind == "article" else "howpublished",
                       meta.venue))
    fields += [("doi", meta.doi)]
    if meta.arxiv:
        fields += [("eprint", meta.arxiv), ("archiveprefix", "arXiv")]
    fields.append(("abstract", prose_text(meta.abstract)))  # the parser's Markdown and HTML are no BibTeX
    return [(k, v) for k, v in fields if v]


def to_bibtex(metas: Sequence[PaperMetadata]) -> str:
    library = bibtexparser.Library()
    for meta, key in zip(metas, unique_keys(metas)):
        kind = entry_type(meta)
        fields = [Field(k, re.sub(r"[{}\\%\s]", "", v) if k in _VERBATIM else latex_escape(v))
                  for k, v in _fields(meta, kind)]
        library.add(Entry(kind, key, fields))
    return bibtexparser.write_string(library)


def _csl_name(name: str) -> dict[str, str]:
    if "," in name:
        family, given = (p.strip() for p in name.split(",", 1))
    else:
        parts = name.split()
        family, given = (parts[-1], " ".join(parts[:-1])) if len(parts) > 1 else (name, "")
    return {"family": family, "given": given} if given else {"family": family}


def to_csl(metas: Sequence[PaperMetadata]) -> str:
    """CSL-JSON (what Zotero, Pandoc and citeproc read)."""
    types = {"inproceedings": "paper-conference", "article": "article-journal", "misc": "article"}
    items = []
    for meta, key in zip(metas, unique_keys(metas)):
        item: dict = {"id": key, "type": types[entry_type(meta)], "title": meta.title}
        if meta.authors:
            item["author"] = [_csl_name(a) for a in meta.authors]
        if meta.year:
            item["issued"] = {"date-parts": [[meta.year]]}
        if meta.venue:
            item["container-title"] = meta.venue
        if meta.doi:
            item["DOI"] = meta.doi
        if meta.arxiv:
            item["URL"] = f"https://arxiv.org/abs/{meta.arxiv}"
            item["number"] = f"arXiv:{meta.arxiv}"
        if prose_text(meta.abstract):
            item["abstract"] = prose_text(meta.abstract)
        items.append(item)
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"
