"""What one parse may spend: the memory cap of its MinerU child and its deadline, from the parsing settings.

One pathological PDF (90,000 vector marks on a page) once grew MinerU to 19.5 GB until the kernel's OOM killer
ended it, and the kernel kills whichever process is largest: the app server or the browser as well. So every
parser child runs under a cap we enforce ourselves, and the caps of all the workers together fit in the budget.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from core.settings.config import ParsingConfig

GB = 1024**3
AUTO_MAX_BYTES = 6 * GB  # the default budget: at most this ...
AUTO_SHARE = 0.40  # ... and at most this share of the machine, leaving room for the app and another worker
# A retry may ask for more than the share, never for more than this part of the machine: the rest is the app's.
RETRY_MAX_SHARE = 0.80


def machine_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * GB  # a platform without sysconf: assume a small machine


def total_budget_bytes(config: ParsingConfig) -> int:
    """All parser children at once: the setting, or min(6 GB, 40% of RAM) when it is 0."""
    if config.memory_gb > 0:
        return int(config.memory_gb * GB)
    return int(min(AUTO_MAX_BYTES, AUTO_SHARE * machine_memory_bytes()))


def child_memory_bytes(config: ParsingConfig, workers: int, override_gb: float = 0.0) -> int:
    """One child's cap: the budget divided by the workers parsing at once, so N workers never add up to more than
    the budget. A per-document override (a retry with its own budget) gets what it asks for, up to what the other
    workers leave of RETRY_MAX_SHARE of the machine (retry_cap)."""
    if override_gb > 0:
        return retry_cap(config, workers, override_gb).memory_bytes
    return total_budget_bytes(config) // max(1, workers)


# Begins the note a retry's document carries when its cap is not what was asked (core.pipeline.ingest_commit puts it
# in the status line): not "MinerU …", which says MinerU was stopped (core.pipeline.documents.mineru_stop).
CAP_NOTE_PREFIX = "parse memory: "


@dataclass(frozen=True)
class RetryCap:
    memory_bytes: int  # the MinerU child's cap for this document
    note: str  # why it is not what was asked ("" when it is)

    def describe(self) -> str:
        """One line for the CLI and the document's message: the cap, and why when it is not the one asked for."""
        return self.note or f"{CAP_NOTE_PREFIX}MinerU's child gets {gigabytes(self.memory_bytes)}, as asked"


def retry_cap(config: ParsingConfig, workers: int, asked_gb: float) -> RetryCap:
    """A retry's cap: what was asked, lower or higher than the usual share (a lower cap holds the child to less and
    takes nothing from the others), but never more than RETRY_MAX_SHARE of the machine less the other workers'
    shares: the rest is the app's. Said, never silent, when that ceiling cuts it."""
    workers = max(1, workers)
    share = total_budget_bytes(config) // workers
    machine = machine_memory_bytes()
    room = int(RETRY_MAX_SHARE * machine) - share * (workers - 1)
    asked = int(asked_gb * GB)
    if asked <= room:
        return RetryCap(asked, "")
    others = "" if workers == 1 else f" less the other worker's {gigabytes(share)}" if workers == 2 else \
        f" less {gigabytes(share)} for each of the {workers - 1} other workers"
    return RetryCap(room, f"{CAP_NOTE_PREFIX}MinerU's child gets {gigabytes(room)}, not the {gigabytes(asked)} "
                          f"asked: at most {RETRY_MAX_SHARE:.0%} of this machine's {gigabytes(machine)}{others}")


def parse_deadline_s(config: ParsingConfig, pages: int) -> float:
    """A base plus a per-page allowance, at most the cap: a 14-page paper gets 60 + 14 × 20 = 340 s, not an hour."""
    return float(min(config.deadline_base_s + config.deadline_per_page_s * max(pages, 1), config.timeout_s))


@dataclass(frozen=True)
class ParseBudget:
    memory_bytes: int  # the MinerU child's cap (its process tree's resident memory); 0: none
    deadline_s: float
    stall_s: float  # no new page for this long counts as stuck; 0: off


def parse_budget(config: ParsingConfig, pages: int, memory_bytes: int) -> ParseBudget:
    return ParseBudget(memory_bytes, parse_deadline_s(config, pages), float(config.stall_s))


def gigabytes(n_bytes: int) -> str:
    """'6 GB', '1.5 GB': how the cap is written in messages."""
    return f"{n_bytes / GB:.1f}".removesuffix(".0") + " GB"


def describe(config: ParsingConfig, workers: int) -> str:
    """One line for `core ingest` and the Settings page: the cap each child gets and the deadline formula."""
    total, child = total_budget_bytes(config), child_memory_bytes(config, workers)
    source = "set in Settings" if config.memory_gb > 0 else (
        f"min({gigabytes(AUTO_MAX_BYTES)}, {AUTO_SHARE:.0%} of {gigabytes(machine_memory_bytes())})")
    per = f"{gigabytes(child)} per parser child ({workers} workers)" if workers > 1 else \
        f"{gigabytes(child)} for the parser child"
    stuck = f"stuck after {config.stall_s} s on one page" if config.stall_s else "no stuck-page limit"
    return (f"parse memory budget {gigabytes(total)} ({source}): {per}; deadline {config.deadline_base_s} s + "
            f"{config.deadline_per_page_s} s per page, at most {config.timeout_s} s; {stuck}")
