"""Valid Unicode out of untrusted text. JSON can spell a lone surrogate ("\\ud800"); such a string cannot be
encoded as UTF-8, so SQLite, files and terminals would fail on it far from where it came in."""
from __future__ import annotations


def valid_unicode(text: str) -> str:
    """`text` with surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


__all__ = ["valid_unicode"]
