"""mineru (flash tier) on a generated paper, run for real in its child process; failures and fallbacks."""
import json
import os
import signal
import time
from pathlib import Path

import pytest

from core.content.content_list import load_content_list
from core.pipeline.parsing import ParseError, mineru_runner, parse_pdf
from core.pipeline.parsing.mineru_runner import MineruFailed, run_mineru
from core.settings.config import ParsingConfig
from tests import pdfs


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    return pdfs.make_paper_pdf(tmp_path_factory.mktemp("pdf") / "paper.pdf")


@pytest.fixture(scope="module")
def parsed(paper, tmp_path_factory):
    root = tmp_path_factory.mktemp("mineru")
    messages: list[str] = []
    output = parse_pdf(paper, root / "out", ParsingConfig(), mineru_home=root / "home", progress=messages.append)
    return output, root / "out", messages


def _text(output) -> str:
    return "\n".join(i.text for i in output.items)


@pytest.mark.slow
def test_backend_and_bookkeeping(parsed):
    output, out, messages = parsed
    assert output.backend == "mineru-flash" and output.pages == 2 and output.warnings == []
    assert output.cpu_seconds > 0.5  # the child's CPU time is counted
    assert [i.index for i in output.items] == list(range(len(output.items)))
    assert any(m.startswith("mineru (flash)") for m in messages)
    info = json.loads((out / "parse.json").read_text())
    assert info["backend"] == "mineru-flash" and info["pages"] == 2 and info["cpu_seconds"] > 0
    assert len(load_content_list(out / "content_list.json")) == len(output.items)
    assert (out / "markdown.md").read_text() == output.markdown
    assert not (out / ".mineru").exists()  # mineru's scratch folder is cleaned up


def test_title_and_section_headings(parsed):
    items = parsed[0].items
    assert [i.text for i in items if i.text_level == 1] == [pdfs.DEFAULT_TITLE]
    headings = [i.text for i in items if i.text_level == 2]
    assert {"Abstract", "1 Introduction", "2 Method", "3 Experiments", "4 Conclusion"} <= set(headings)
    assert parsed[0].markdown.startswith(f"# {pdfs.DEFAULT_TITLE}\n")


def test_table_has_html_body_and_caption(parsed):
    output, out, _ = parsed
    (table,) = [i for i in output.items if i.type == "table"]
    assert table.caption == pdfs.TABLE_CAPTION and table.page_idx == 1
    assert "<table>" in table.table_body and "<td>Heliotrope</td><td>91.4</td>" in table.table_body


def test_figure_has_crop_and_caption(parsed):
    output, out, _ = parsed
    (figure,) = [i for i in output.items if i.type == "image"]
    assert figure.caption == pdfs.FIGURE_CAPTION and figure.page_idx == 0
    assert figure.img_path.startswith("images/") and (out / figure.img_path).stat().st_size > 1000
    assert sorted(p.name for p in (out / "images").iterdir()) == sorted(
        i.img_path.split("/")[-1] for i in output.items if i.img_path)


def test_every_item_has_page_and_box_and_reads_in_column_order(parsed):
    output = parsed[0]
    for item in output.items:
        assert 0 <= item.page_idx < 2 and item.source == "mineru"
        assert item.bbox and all(0 <= v <= 1000 for v in item.bbox)
    text = _text(output)
    # left column before right column, pages in order
    assert text.index("zebrafish larvae") < text.index("purple walrus hypothesis") < text.index("saffron prior")
    assert text.index("saffron prior") < text.index("axolotl regeneration")
    assert any(i.type == "page_number" for i in output.items)


@pytest.mark.slow
def test_tier_without_weights_fails_with_a_clear_message(paper, tmp_path):
    with pytest.raises(ParseError) as err:
        parse_pdf(paper, tmp_path / "out", ParsingConfig(mineru_tier="standard", fallback_to_builtin=False),
                  mineru_home=tmp_path / "home")
    models = tmp_path / "home" / "models"
    assert str(err.value).startswith(f"mineru failed: MinerU tier 'standard' needs model weights that are not "
                                     f"installed in {models}")
    assert str(err.value).endswith("; use the flash tier or install the weights")


@pytest.mark.slow
def test_failure_falls_back_to_pymupdf_with_a_warning(paper, tmp_path):
    output = parse_pdf(paper, tmp_path / "out", ParsingConfig(mineru_tier="basic"), mineru_home=tmp_path / "home")
    assert output.backend == "builtin"
    assert output.warnings[0].startswith("mineru failed (MinerU tier 'basic' needs model weights")
    assert output.warnings[0].endswith("; parsed with PyMuPDF instead")
    assert "purple walrus hypothesis" in _text(output)


def test_timeout_kills_mineru(paper, tmp_path):
    # The message is the deadline's (the child was stopped at 1 s), not a parse that finished or failed on its own;
    # that no child outlives it is tests/security/test_orphaned_mineru.py's.
    with pytest.raises(ParseError, match=r"^mineru failed: MinerU stopped at its 1 s deadline( on page [12] of 2)?$"):
        parse_pdf(paper, tmp_path / "out", ParsingConfig(timeout_s=1, fallback_to_builtin=False),
                  mineru_home=tmp_path / "home")


@pytest.mark.slow
def test_a_crash_in_the_child_is_reported_in_one_line(tmp_path):
    broken = pdfs.make_corrupt_pdf(tmp_path / "broken.pdf")
    with pytest.raises(MineruFailed) as err:
        run_mineru(broken, tmp_path / "work", tier="flash", mineru_home=tmp_path / "home", timeout_s=60,
                   progress=lambda _m: None)
    message = str(err.value)
    assert "Traceback" not in message and "\n" not in message and len(message) < 500
    assert "Failed to load document" in message


def test_a_caller_that_gives_up_leaves_no_mineru_behind(paper, tmp_path):
    class Cancelled(Exception):
        pass

    def cancel(message: str) -> None:
        if message.startswith("mineru"):
            raise Cancelled(message)

    home = tmp_path / "home-cancel"
    with pytest.raises(Cancelled):
        parse_pdf(paper, tmp_path / "out", ParsingConfig(), mineru_home=home, progress=cancel)
    time.sleep(0.5)
    survivors = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(home) in (proc / "environ").read_bytes().decode(errors="replace"):
                survivors.append(proc.name)
        except OSError:
            continue
    assert survivors == []


def _idle_pids() -> list[int]:
    return [child.proc.pid for child in mineru_runner._idle]


def test_one_child_parses_paper_after_paper_and_a_dead_one_is_replaced(paper, tmp_path):
    home = tmp_path / "home-kept"

    def parse(n: int) -> float:
        before = mineru_runner.children_cpu_seconds()
        run = run_mineru(paper, tmp_path / f"work{n}", tier="flash", mineru_home=home, timeout_s=120,
                         progress=lambda _m: None)
        assert (run.out_dir / "content_list.json").is_file()
        # What the child used is counted while it lives on (RUSAGE_CHILDREN would say nothing yet); a child closed
        # on the way adds what it used besides its papers.
        assert mineru_runner.children_cpu_seconds() - before >= run.cpu_seconds - 1e-6 and run.cpu_seconds > 0
        return run.cpu_seconds

    first = parse(1)
    (pid,) = _idle_pids()
    second = parse(2)
    assert _idle_pids() == [pid]  # the same process parsed the second paper...
    assert second < first  # ...without mineru's imports again
    os.kill(pid, signal.SIGKILL)  # a kept child dies while idle (e.g. the thread that started it ended)
    time.sleep(0.2)
    parse(3)
    assert _idle_pids() and _idle_pids() != [pid]


@pytest.mark.slow
def test_a_failed_paper_ends_its_child_and_the_next_paper_gets_a_fresh_one(paper, tmp_path):
    home = tmp_path / "home-fail"
    run_mineru(paper, tmp_path / "ok", tier="flash", mineru_home=home, timeout_s=120, progress=lambda _m: None)
    (pid,) = _idle_pids()
    with pytest.raises(MineruFailed, match="Failed to load document"):
        run_mineru(pdfs.make_corrupt_pdf(tmp_path / "broken.pdf"), tmp_path / "bad", tier="flash", mineru_home=home,
                   timeout_s=120, progress=lambda _m: None)
    assert _idle_pids() == []
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    run_mineru(paper, tmp_path / "ok2", tier="flash", mineru_home=home, timeout_s=120, progress=lambda _m: None)
    assert len(_idle_pids()) == 1
