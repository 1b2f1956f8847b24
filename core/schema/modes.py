"""The query modes: one name each, from the settings file to the engine, the pages, the CLI and saved eval runs.

How each mode retrieves lives in core.query.routes (one route per mode); here is only what every layer may
know: the name (the value stored in settings.json, SQLite and JSON, and typed on the command line) and the
one-line help the pages show.
"""
from __future__ import annotations

from enum import StrEnum


# StrEnum: a mode is its stored string (equal to it, hashed as it, shown as it in an f-string), so modes saved
# before the enum existed, CLI arguments and page widgets need no conversion to be compared with one.
class Mode(StrEnum):
    help: str  # what the mode retrieves, in a line: the pages' help text

    NAIVE = "naive", "passages closest to the question (vectors + BM25)"
    LOCAL = "local", "entities named in the question → their relations → their passages"
    GLOBAL = "global", "relations matching the question's themes → their entities → their passages"
    HYBRID = "hybrid", "local + global"
    MIX = "mix", ("naive + local + ppr: passages of vector search, the entity walk and the associative walk "
                  "together, reranked")
    PPR = "ppr", ("associative (HippoRAG 2): personalised PageRank from the question's entities and closest "
                  "passages over passages and entities — finds the second hop through a bridge entity")
    COMMUNITY = "community", "community reports of the graph, mapped and reduced (GraphRAG global search)"

    def __new__(cls, value: str, help: str) -> Mode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.help = help
        return member

    @classmethod
    def _missing_(cls, value: object) -> Mode:
        raise ValueError(f"unknown query mode {value!r}: choose one of {', '.join(cls)}")


def modes_help() -> str:
    """Every mode with its help, one per line, as a page's help tooltip shows them."""
    return "\n".join(f"- **{mode}**: {mode.help}" for mode in Mode)
