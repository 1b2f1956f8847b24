"""core/presentation/page_view.py: the markdown sanitiser, escaping, local-file resolution, box drawing and table
frames."""

import pytest
from PIL import Image

from core.content import pages
from core.presentation import page_view as pv
from core.schema.records import Chunk, ContentItem, SearchHit
from core.text import safe_markdown as safe_md
from core.text import tables

# ------------------------------------------------------------------------------------------ sanitiser

@pytest.mark.parametrize("md", [
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click]( javascript:alert(1) )",
    "[click](<javascript:alert(1)>)",
    "[click](jav&#x09;ascript:alert(1))",
    "[click](java\tscript:alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<javascript:alert(1)>",
    "[click][x]\n\n[x]: javascript:alert(1)",
    '[click](javascript:alert(1) "title")',
])
def test_sanitiser_removes_script_links(md):
    out = safe_md.sanitize_markdown(md)
    assert "javascript:" not in out.lower().replace("\u200b", "")
    assert "vbscript:" not in out.lower() and "data:text" not in out.lower()
    assert "click" in out or md.startswith("<")


def test_sanitiser_keeps_http_links_and_text():
    out = safe_md.sanitize_markdown("See [the code](https://example.org/x_(y)) and <https://arxiv.org/abs/1>.")
    assert "[the code](https://example.org/x_(y))" in out and "https://arxiv.org/abs/1" in out
    assert safe_md.sanitize_markdown("mail [me](mailto:a@b.c)") == "mail [me](mailto:a@b.c)"


def test_sanitiser_strips_raw_html_and_drops_script_bodies():
    md = ('Intro <b>bold</b> text.<script>alert("x")</script><img src=x onerror=alert(1)>'
          '<iframe src="https://evil"></iframe><!-- hidden --><a href="javascript:x">link</a> end')
    out = safe_md.sanitize_markdown(md)
    assert "<" not in out and "alert" not in out and "hidden" not in out and "onerror" not in out
    assert "Intro bold text." in out and "link end" in out


def test_sanitiser_turns_images_into_text_so_nothing_remote_is_fetched():
    out = safe_md.sanitize_markdown("![tracker](https://evil.example/pixel.png) and ![][ref]\n\n[ref]: https://e/x.png")
    assert "https://evil.example" not in out and "![" not in out
    assert "[image: tracker]" in out


def test_sanitiser_keeps_headings_lists_and_math():
    md = "# Title\n\n## 1 Introduction\n\n- one\n- two\n\n$$\nE = mc^2\n$$\n"
    assert safe_md.sanitize_markdown(md) == md


def test_md_escape_makes_markdown_literal():
    title = "**bold** [x](javascript:alert(1)) ![i](http://e/p.png) :red[hi] $x$ <b>"
    out = safe_md.md_escape(title)
    assert "](" not in out.replace("\\](", "") and "\\*\\*bold\\*\\*" in out and "\\:red\\[hi\\]" in out
    assert "\n" not in safe_md.md_escape("two\nlines")
    assert safe_md.md_escape("a\n\nb", paragraphs=True) == "a\n\nb"


def test_legend_html_escapes_item_types():
    items = [ContentItem(type="<script>alert(1)</script>", page_idx=0), ContentItem(type="text", page_idx=0)]
    out = pv.legend_html(pv.legend(items))
    assert "<script>" not in out and "&lt;script&gt;" in out and "text (1)" in out


# ------------------------------------------------------------------------------------------ local files

def test_safe_local_file_stays_inside_the_parsed_folder(tmp_path):
    parsed = tmp_path / "parsed"
    (parsed / "images").mkdir(parents=True)
    Image.new("RGB", (4, 4)).save(parsed / "images" / "a.png")
    (tmp_path / "secret.png").write_bytes(b"x")
    assert safe_md.safe_local_file(parsed, "images/a.png") == (parsed / "images" / "a.png").resolve()
    for bad in ("../secret.png", "/etc/passwd", "images/../../secret.png", "https://e/x.png",
                "file:///etc/passwd", "images/missing.png", ""):
        assert safe_md.safe_local_file(parsed, bad) is None, bad
    (parsed / "images" / "link.png").symlink_to(tmp_path / "secret.png")
    assert safe_md.safe_local_file(parsed, "images/link.png") is None


def test_markdown_blocks_split_text_local_images_and_tables(tmp_path):
    (tmp_path / "images").mkdir()
    Image.new("RGB", (4, 4)).save(tmp_path / "images" / "fig.jpg")
    md = ("# Paper\n\nText <b>x</b>.\n\n![](images/fig.jpg)\n\nFigure 1: bars.\n\n"
          "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>\n\n"
          "![remote](https://evil/x.png) end")
    blocks = safe_md.markdown_blocks(md, tmp_path)
    assert [b.kind for b in blocks] == ["markdown", "image", "markdown", "table", "markdown"]
    assert blocks[0].text == "# Paper\n\nText x."
    assert blocks[1].path == (tmp_path / "images" / "fig.jpg").resolve()
    assert "[image: remote]" in blocks[4].text and "evil" not in blocks[4].text


def test_table_frame_parses_html_without_rendering_it():
    frame = tables.table_frame("<table><tr><th>Solver</th><th>Accuracy</th></tr>"
                           "<tr><td>Heliotrope<script>x</script></td><td>91.4</td></tr></table>")
    assert list(frame.columns) == ["Solver", "Accuracy"] and frame.iloc[0, 1] == "91.4"
    assert tables.table_frame("<p>not a table</p>") is None
    # MinerU writes header cells as <td>: the first row becomes the header.
    frame = tables.table_frame("<table><tr><td>Solver</td><td>Runtime (s)</td></tr><tr><td>Saffron</td><td>4.1</td>"
                           "</tr></table>")
    assert list(frame.columns) == ["Solver", "Runtime (s)"] and frame.values.tolist() == [["Saffron", "4.1"]]
    assert "a | b" in tables.table_text("<table><tr><td>a</td><td>b</td></tr></table>")


# ------------------------------------------------------------------------------------------ drawing

def test_draw_boxes_scales_0_1000_coordinates_and_colours_by_type():
    img = Image.new("RGB", (200, 400), "white")
    items = [ContentItem(type="table", page_idx=0, bbox=[100, 100, 500, 250]),
             ContentItem(type="text", page_idx=0, text_level=1, bbox=[600, 600, 900, 700])]
    out = pv.draw_boxes(img, items, highlight=[100, 800, 900, 900])
    assert out.size == (200, 400)
    assert out.getpixel((20, 60)) == pv.TYPE_COLOURS["table"]  # top-left corner of the table box
    px = out.getpixel((120, 240))  # the heading's box edge (x 600/1000*200, y 600/1000*400)
    assert px == pv.TYPE_COLOURS["heading"]
    assert out.getpixel((100, 316)) == pv.HIGHLIGHT_COLOUR
    assert out.getpixel((5, 5)) == (255, 255, 255)


def test_box_params_round_trip_and_reject_junk():
    assert pv.parse_box_param(pv.box_param([1.2, 2, 300.7, 400])) == [[1, 2, 301, 400]]
    two = [[1, 2, 3, 4], [10, 20, 30, 40]]
    assert pv.parse_box_param(pv.box_param(two)) == two
    for junk in (None, "", "1,2,3", "a,b,c,d", "0,0,2000,10"):
        assert pv.parse_box_param(junk) == []
    assert pv.parse_box_param("1,2,3,4;junk;5,6,7,8") == [[1, 2, 3, 4], [5, 6, 7, 8]]


def _hit(window: str, item_indices: list[int], page: int = 0, bbox=None) -> SearchHit:
    chunk = Chunk(id="c", doc_id="d", index=0, kind="text", text=window, pages=[page], item_indices=item_indices)
    return SearchHit(chunk=chunk, score=0.5, window_text=window, page=page, bbox=bbox)


def test_passage_boxes_are_the_items_the_window_was_read_from():
    items = [
        ContentItem(type="text", page_idx=0, index=0, bbox=[80, 700, 480, 950],
                    text="Earlier work relied on marigold sampling, which stalls on dense graphs of larvae."),
        ContentItem(type="text", page_idx=0, index=1, bbox=[520, 60, 900, 200],
                    text="Our main finding is that the okapi benchmark rewards solvers that respect symmetry."),
        ContentItem(type="text", page_idx=0, index=2, bbox=[520, 220, 900, 400],
                    text="A third paragraph that the window never reached, about something else entirely."),
        ContentItem(type="text", page_idx=1, index=3, bbox=[80, 60, 480, 200],
                    text="Our main finding is that the okapi benchmark rewards solvers on the next page too."),
    ]
    window = ("which stalls on dense graphs of larvae. Our main finding is that the okapi benchmark rewards")
    hit = _hit(window, [0, 1, 2, 3], bbox=[80, 60, 900, 950])
    assert pv.passage_boxes(items, hit) == [items[0].bbox, items[1].bbox]
    assert pv.passage_boxes(items, _hit("nothing in common here", [0, 1], bbox=[1, 2, 3, 4])) == [[1, 2, 3, 4]]
    assert pv.passage_boxes(items, _hit("nothing in common here", [0, 1])) == []


# ------------------------------------------------------------------------------------------ page images

def test_page_images_render_once_and_hit_crops_frame_the_hit(ready_workspace):
    from core.library import open_library
    from core.settings.workspace import Workspace

    lib = open_library(Workspace(ready_workspace.root))
    doc_id = ready_workspace.doc_id
    path = pages.page_image_path(lib, doc_id, 0)
    mtime = path.stat().st_mtime_ns
    assert pages.page_image_path(lib, doc_id, 0) == path and path.stat().st_mtime_ns == mtime
    page = Image.open(path)
    items = pages.load_items(lib, doc_id)
    drawn = pv.page_image_with_boxes(lib, doc_id, 0, items)
    assert drawn.size == page.size and drawn.tobytes() != page.convert("RGB").tobytes()

    one_column = pv.crop_hit(lib, doc_id, 0, [88, 464, 479, 501])
    both_columns = pv.crop_hit(lib, doc_id, 0, [88, 371, 895, 501])
    assert one_column.width < 0.6 * page.width and one_column.height < 0.3 * page.height
    assert both_columns.width > 0.85 * page.width
    assert pv.crop_hit(lib, doc_id, 0, None).size == page.size
    # A passage from the foot of the left column to the head of the right one: the crop starts at its start.
    across = pv.crop_hit(lib, doc_id, 0, [[88, 800, 479, 950], [515, 60, 895, 200]])
    assert across.height < 0.3 * page.height and across.width < 0.6 * page.width

    from core.query.search import search
    (hit,) = search(lib, "purple walrus hypothesis for coherent lattices", top_k=1)
    boxes = pv.hit_boxes(lib, hit)
    walrus = [i.bbox for i in items if "purple walrus" in i.text]
    assert walrus and walrus[0] in boxes and all(b in [i.bbox for i in items] for b in boxes)

    with pytest.raises(pages.PageImageUnavailable, match="page 3 does not exist"):
        pages.page_image_path(lib, doc_id, 2)
    with pytest.raises(pages.PageImageUnavailable, match="without its source PDF"):
        pages.page_image_path(lib, "0" * 64, 0)
