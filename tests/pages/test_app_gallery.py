"""The Gallery page (AppTest on the shared MinerU workspace) and the VLM section of the Settings page."""
from __future__ import annotations

import json

import pytest

from core.library import open_library
from core.models.llm import secrets
from core.settings.workspace import Workspace
from core.text.safe_markdown import md_escape
from tests import pdfs
from tests.pages.app_helpers import run_app, texts
from tests.pages.test_app_settings import save_button


def shown(at) -> str:
    return "\n".join([texts(at.markdown), texts(at.caption), texts(at.title), texts(at.success), texts(at.warning)])


@pytest.mark.slow
def test_gallery_lists_items_with_caption_and_description_side_by_side(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, page="pages/gallery.py")
    page = shown(at)
    assert "Table 1" in page and "Figure 1" in page and "1** table" in page and "1** figure" in page
    assert "Original caption" in page and "Generated description" in page
    assert "not written by a vision" in page  # offline descriptions say so
    assert md_escape("Solver: Heliotrope; Accuracy: 91.4; Runtime (s): 12.7") in page  # a row per line
    assert len(at.get("image")) == 2  # each item's picture
    assert at.dataframe[0].value.columns.tolist() == ["Solver", "Accuracy", "Runtime (s)"]
    assert len(at.get("download_button")) == 1  # the table as CSV

    at.text_input(key="gallery_query").input("okapi benchmark").run()
    page = shown(at)
    assert "#### Table 1" in page and "#### Figure 1" not in page
    at.text_input(key="gallery_query").input("").run()
    at.multiselect(key="gallery_kinds").set_value(["image"]).run()
    assert "#### Figure 1" in shown(at) and "#### Table 1" not in shown(at)


def test_redescribe_button_redoes_one_item(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, page="pages/gallery.py")
    buttons = [b for b in at.button if b.key and b.key.startswith("gallery_redescribe_")]
    assert len(buttons) == 2
    buttons[0].click().run()
    assert not at.exception
    assert "described again" in texts(at.success) and "not written by a vision" in texts(at.success)


@pytest.mark.slow
def test_gallery_escapes_paper_text(monkeypatch, tmp_path):
    from core.pipeline.documents import add_pdf
    from core.pipeline.ingest import process_queue
    from tests.graph_papers import fast_workspace

    ws = fast_workspace(tmp_path / "ws")
    lib = open_library(ws)
    pdf = pdfs.make_paper_pdf(tmp_path / "p.pdf", title="Evil **bold** [link](javascript:alert(1)) <b>x</b>")
    add_pdf(lib, pdf.name, pdf.read_bytes())
    process_queue(lib)
    at = run_app(monkeypatch, ws.root, page="pages/gallery.py")
    headings = [m.value for m in at.markdown if m.value.startswith("####")]
    assert headings and all("\\*\\*bold\\*\\*" in h and "](javascript" not in h for h in headings)


def test_the_vlm_has_its_own_settings_and_key(monkeypatch, tmp_path):
    root = tmp_path / "ws"
    at = run_app(monkeypatch, root, page="pages/settings.py")
    at.selectbox(key="setting_vlm_provider").set_value("openai")
    at.text_input(key="setting_vlm_base_url").input("http://127.0.0.1:9/v1")
    at.text_input(key="setting_vlm_model").input("llava")
    at.text_input(key="setting_vlm_api_key").input("sk-vision-secret")
    save_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    saved = Workspace(root).settings()
    assert (saved.vlm.provider, saved.vlm.model, saved.llm.provider) == ("openai", "llava", "none")
    assert "sk-vision-secret" not in (root / "settings.json").read_text()
    assert secrets.api_key_for("http://127.0.0.1:9/v1") == "sk-vision-secret"
    assert at.text_input(key="setting_vlm_api_key").value == ""

    at.text_input(key="setting_vlm_base_url").input("")
    save_button(at).click().run()
    assert "VLM needs a base URL" in texts(at.error)
    assert json.loads((root / "settings.json").read_text())["vlm"]["base_url"] == "http://127.0.0.1:9/v1"
