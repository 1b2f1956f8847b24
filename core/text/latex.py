"""Text in and out of BibTeX fields: LaTeX's special characters escaped on the way out (a title holding
`\\input{/etc/passwd}` or `100% of $x_i$` must reach a manuscript as text, not as commands), and read back on the
way in: our own escapes exactly, anything else a .bib may hold (accents `{\\"o}`, `\\emph{…}`, case-protecting
braces) through pylatexenc (bibtexparser's own dependency)."""
from __future__ import annotations

import re

SPECIALS = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_ESCAPED = re.compile(r"\\textbackslash\{\}|\\textasciitilde\{\}|\\textasciicircum\{\}|\\[{}&%$#_]")
_BACK = {v: k for k, v in SPECIALS.items()}


def latex_escape(text: str) -> str:
    text = "".join(c for c in text if c.isprintable())  # no control characters in a .bib
    return "".join(SPECIALS.get(c, c) for c in text)


def latex_unescape(text: str) -> str:
    """The inverse of latex_escape, exactly."""
    return _ESCAPED.sub(lambda m: _BACK[m.group(0)], text)


def latex_to_text(value: str) -> str:
    """A BibTeX field as plain text: latex_escape's escapes undone exactly; between them, LaTeX commands turned into
    the characters they stand for and case-protecting braces dropped."""
    out, last = [], 0
    for m in _ESCAPED.finditer(value):
        out.append(_segment(value[last:m.start()]))
        out.append(_BACK[m.group(0)])
        last = m.end()
    out.append(_segment(value[last:]))
    return " ".join("".join(out).split())


def _segment(text: str) -> str:
    if "\\" not in text:
        return text.replace("{", "").replace("}", "")
    from pylatexenc.latex2text import LatexNodes2Text  # imported only for fields that need it

    return LatexNodes2Text(math_mode="verbatim").latex_to_text(text)
