"""What a parse may spend (core.pipeline.parsing.budget): the memory caps of N workers never add up to more than the
budget, the deadline grows with the pages up to its cap, and the pages too dense for MinerU are left out of its
page range."""
from core.pipeline.parsing.budget import (
    AUTO_MAX_BYTES,
    AUTO_SHARE,
    CAP_NOTE_PREFIX,
    GB,
    RETRY_MAX_SHARE,
    child_memory_bytes,
    describe,
    gigabytes,
    machine_memory_bytes,
    parse_deadline_s,
    retry_cap,
    total_budget_bytes,
)
from core.pipeline.parsing.dense_pages import page_range_without
from core.settings.config import ParsingConfig


def test_the_default_budget_is_6_gb_or_40_percent_of_the_machine_whichever_is_less():
    assert total_budget_bytes(ParsingConfig()) == int(min(AUTO_MAX_BYTES, AUTO_SHARE * machine_memory_bytes()))
    assert total_budget_bytes(ParsingConfig(memory_gb=1.5)) == int(1.5 * GB)


def test_n_workers_children_never_add_up_to_more_than_the_budget():
    for memory_gb in (0.0, 1.5, 6.0):
        config = ParsingConfig(memory_gb=memory_gb)
        for workers in range(1, 9):
            assert workers * child_memory_bytes(config, workers) <= total_budget_bytes(config)
        assert child_memory_bytes(config, 1) == total_budget_bytes(config)


def test_a_retry_with_a_larger_budget_gets_it_within_what_the_other_workers_leave():
    config = ParsingConfig(memory_gb=4.0)
    assert child_memory_bytes(config, 2, override_gb=3.0) == 3 * GB
    huge = child_memory_bytes(config, 2, override_gb=10_000.0)
    assert huge + child_memory_bytes(config, 2) <= RETRY_MAX_SHARE * machine_memory_bytes()



def test_a_retry_asking_for_less_than_the_usual_share_gets_what_it_asked():
    # Issue 36: `core retry --memory-gb 1.5` ran under the 3 GB share of 6 GB between two workers, silently. A
    # lower cap takes nothing from the other workers: it is honoured, and nothing needs saying.
    config = ParsingConfig(memory_gb=6.0)
    assert child_memory_bytes(config, 2) == 3 * GB
    assert child_memory_bytes(config, 2, override_gb=1.5) == int(1.5 * GB)
    cap = retry_cap(config, 2, 1.5)
    assert cap.memory_bytes == int(1.5 * GB) and cap.note == ""
    assert cap.describe() == f"{CAP_NOTE_PREFIX}MinerU's child gets 1.5 GB, as asked"


def test_a_retry_asking_for_more_than_the_machine_allows_is_told_what_it_gets_instead():
    config = ParsingConfig(memory_gb=4.0)
    cap = retry_cap(config, 2, 10_000.0)
    machine = machine_memory_bytes()
    assert cap.memory_bytes == int(RETRY_MAX_SHARE * machine) - 2 * GB
    assert cap.note.startswith(f"{CAP_NOTE_PREFIX}MinerU's child gets {gigabytes(cap.memory_bytes)}, not the "
                               f"10000 GB asked: at most 80% of this machine's {gigabytes(machine)} less the "
                               "other worker's 2 GB")
    assert "for each of the 3 other workers" in retry_cap(config, 4, 10_000.0).note
    assert cap.describe() == cap.note


def test_the_deadline_is_a_base_plus_a_per_page_allowance_up_to_its_cap():
    config = ParsingConfig(deadline_base_s=60, deadline_per_page_s=20, timeout_s=1800)
    assert parse_deadline_s(config, 14) == 340  # the stress PDF: not an hour
    assert parse_deadline_s(config, 0) == 80
    assert parse_deadline_s(config, 2000) == 1800


def test_core_ingest_states_the_cap_each_child_gets_and_the_deadline_formula():
    line = describe(ParsingConfig(memory_gb=6.0, stall_s=300), 2)
    assert line.startswith("parse memory budget 6 GB (set in Settings): 3 GB per parser child (2 workers); ")
    assert line.endswith("deadline 60 s + 20 s per page, at most 1800 s; stuck after 300 s on one page")
    assert "of 40%" not in line and "40% of" in describe(ParsingConfig(), 1)


def test_pages_too_dense_for_mineru_are_left_out_of_its_page_range():
    assert page_range_without(14, {5, 6}) == "1-5,8-14"
    assert page_range_without(3, {0}) == "2-3"
    assert page_range_without(3, {2}) == "1-2"
    assert page_range_without(4, {1}) == "1,3-4"
