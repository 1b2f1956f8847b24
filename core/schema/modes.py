"""The query modes: one name each, from the settings file to the engine, the pages, the CLI and saved eval runs.

How each mode retrieves lives in core.query.routes (one route per mode); here is only what every layer may
know: the name (the value stored in settings.json, SQLite and JSON, and typed on the command line) and the
one-line help the pages show.
"""
from __future__ import annotations

from enum import StrEnum


class _Named(StrEnum):
    """A name with a one-line help, stored as its string; an unknown name fails with the names to choose from."""

    help: str

    def __new__(cls, value: str, help: str):
        member = str.__new__(cls, value)
        member._value_ = value
        member.help = help
        return member

    @classmethod
    def _missing_(cls, value: object):
        raise ValueError(f"unknown {cls._what()} {value!r}: choose one of {', '.join(cls)}")

    @classmethod
    def _what(cls) -> str:
        return cls.__name__.lower()


# StrEnum: a mode is its stored string (equal to it, hashed as it, shown as it in an f-string), so modes saved
# before the enum existed, CLI arguments and page widgets need no conversion to be compared with one.
class Mode(_Named):
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

    @classmethod
    def _what(cls) -> str:
        return "query mode"


def help_lines(names: type[_Named]) -> str:
    """Every name with its help, one per line, as a page's help tooltip shows them."""
    return "\n".join(f"- **{name}**: {name.help}" for name in names)


def modes_help() -> str:
    return help_lines(Mode)


class Reader(_Named):
    """How retrieved passages become an answer (core.query.reading): one name from the settings to the answer."""

    AUTO = "auto", ("select with a reading model (the configured LLM, else the embedded model when installed); "
                    "write for explain / compare / summarise questions when the model is fast; else extractive")
    EXTRACTIVE = "extractive", "LLM-free: the learned reader states the sentence that answers, or abstains"
    SELECT = "select", ("the model chooses among the reader's best sentences and copies the short answer; the "
                        "papers' sentences are the answer, verbatim and cited; 'none' abstains")
    WRITE = "write", ("the model writes prose from the passages, checked sentence by sentence; it first runs "
                      "select's 'none' check, so it abstains when no sentence answers")
    # Not chosen in settings: a results question ("best F1 on X", "does A beat B on D") is answered before any reader
    # from the numbers the papers' tables report (core.query.result_answers), and the answer names this reader.
    RESULTS = "results", "computed from the results the papers' tables report, each number cited to its table cell"

    @classmethod
    def choosable(cls) -> list[Reader]:
        """The readers settings, the CLI and the API may choose (results answers are recognised, not chosen)."""
        return [r for r in cls if r is not cls.RESULTS]


def readers_help() -> str:
    return "\n".join(f"- **{name}**: {name.help}" for name in Reader.choosable())
