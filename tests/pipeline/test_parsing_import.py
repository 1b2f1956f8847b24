"""Importing a MinerU output made elsewhere: a folder or a zip, validated, with unsafe entries refused."""
import json
import os
import zipfile

import pytest

from core.content.content_list import load_content_list
from core.pipeline.parsing import ParseError, import_mineru_output

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 64  # content does not matter: the importer copies bytes

# magic-pdf 1.x spelling (img_caption) and an item type PaperGraph does not model
CONTENT = [
    {"type": "text", "text": "Okapi Benchmarks Revisited", "text_level": 1, "page_idx": 0},
    {"type": "text", "text": "The purple walrus hypothesis holds.", "page_idx": 0},
    {"type": "image", "img_path": "images/fig1.jpg", "img_caption": ["Figure 1: A walrus."], "page_idx": 1},
    {"type": "table", "img_path": "images/tab1.jpg", "table_caption": ["Table 1: Scores."], "page_idx": 2,
     "table_body": "<table><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></table>"},
    {"type": "aside_text", "text": "arXiv:2401.00001", "page_idx": 2},
]


def _mineru_folder(root, content=CONTENT, markdown="# Okapi Benchmarks Revisited\n\nFrom MinerU.\n"):
    (root / "images").mkdir(parents=True)
    (root / "images" / "fig1.jpg").write_bytes(JPEG)
    (root / "images" / "tab1.jpg").write_bytes(JPEG)
    (root / "paper_content_list.json").write_text(json.dumps(content), encoding="utf-8")
    if markdown is not None:
        (root / "paper.md").write_text(markdown, encoding="utf-8")
    return root


def _zip(folder, zip_path, prefix="paper/auto/", extra: dict | None = None):
    with zipfile.ZipFile(zip_path, "w") as zf:
        for path in folder.rglob("*"):
            if path.is_file():
                zf.write(path, prefix + path.relative_to(folder).as_posix())
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return zip_path


def _check(output, out):
    assert output.backend == "import" and output.pages == 3 and output.warnings == []
    assert [i.index for i in output.items] == [0, 1, 2, 3, 4]
    image = output.items[2]
    assert image.caption == "Figure 1: A walrus." and image.source == "import"
    assert (out / image.img_path).read_bytes() == JPEG and (out / output.items[3].img_path).exists()
    assert output.items[4].type == "aside_text"
    assert [i.type for i in load_content_list(out / "content_list.json")] == [i.type for i in output.items]
    assert json.loads((out / "parse.json").read_text())["backend"] == "import"


def test_import_folder(tmp_path):
    src = _mineru_folder(tmp_path / "src")
    output = import_mineru_output(src, tmp_path / "out")
    _check(output, tmp_path / "out")
    assert output.markdown == "# Okapi Benchmarks Revisited\n\nFrom MinerU.\n"  # MinerU's own markdown is kept


def test_import_zip_with_nested_folder_and_no_markdown(tmp_path):
    src = _mineru_folder(tmp_path / "src", markdown=None)
    output = import_mineru_output(_zip(src, tmp_path / "out.zip"), tmp_path / "out")
    _check(output, tmp_path / "out")
    assert output.markdown.startswith("# Okapi Benchmarks Revisited\n")  # generated from the items
    assert "| a | 1 |" in output.markdown


@pytest.mark.parametrize("entry, reason", [
    ("../evil.txt", "it points outside the archive"),
    ("paper/../../evil.txt", "it points outside the archive"),
    ("/etc/evil.txt", "it is an absolute path"),
])
def test_zip_slip_is_refused(tmp_path, entry, reason):
    archive = _zip(_mineru_folder(tmp_path / "src"), tmp_path / "bad.zip", extra={entry: "owned"})
    with pytest.raises(ParseError, match=f"^the archive holds an unsafe entry '{entry}' \\({reason}\\); "
                                         "refusing to import$"):
        import_mineru_output(archive, tmp_path / "out")
    assert not (tmp_path / "evil.txt").exists()


def test_symlink_in_zip_is_refused(tmp_path):
    archive = _zip(_mineru_folder(tmp_path / "src"), tmp_path / "link.zip")
    with zipfile.ZipFile(archive, "a") as zf:
        info = zipfile.ZipInfo("paper/auto/images/passwd.jpg")
        info.external_attr = (0o120777 << 16)  # S_IFLNK
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(ParseError, match="'paper/auto/images/passwd.jpg' \\(it is a symbolic link\\)"):
        import_mineru_output(archive, tmp_path / "out")


def test_folder_images_outside_or_missing_become_a_warning(tmp_path):
    secret = tmp_path / "secret.jpg"
    secret.write_bytes(b"secret")
    content = CONTENT + [
        {"type": "image", "img_path": "../secret.jpg", "page_idx": 2},
        {"type": "image", "img_path": "images/linked.jpg", "page_idx": 2},
        {"type": "image", "img_path": "images/absent.jpg", "page_idx": 2},
    ]
    src = _mineru_folder(tmp_path / "src", content=content)
    os.symlink(secret, src / "images" / "linked.jpg")
    output = import_mineru_output(src, tmp_path / "out")
    assert output.warnings == ["3 images referenced by the content list are missing or unsafe (e.g. ../secret.jpg)"]
    assert [i.img_path for i in output.items[5:]] == ["", "", ""]
    assert not any(p.read_bytes() == b"secret" for p in (tmp_path / "out").rglob("*") if p.is_file())


@pytest.mark.parametrize("content, message", [
    ([{"type": "text", "text": "ok"}, {"text": "no type", "page_idx": 0}],
     "paper_content_list.json: item 1 has no 'type'"),
    ({"pages": []}, "paper_content_list.json: a content list is a JSON array of items, not a dict"),
    ([], "paper_content_list.json is empty: it lists no items"),
])
def test_malformed_imports_say_what_is_wrong(tmp_path, content, message):
    src = _mineru_folder(tmp_path / "src", content=content)
    with pytest.raises(ParseError, match=f"^{message}$"):
        import_mineru_output(src, tmp_path / "out")


def test_no_or_several_content_lists(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ParseError, match="^no content list found"):
        import_mineru_output(tmp_path / "empty", tmp_path / "out")
    src = tmp_path / "two"
    _mineru_folder(src / "a")
    _mineru_folder(src / "b")
    with pytest.raises(ParseError, match="^found 2 content lists in different folders .*import one paper at a time$"):
        import_mineru_output(src, tmp_path / "out")


def test_not_a_zip(tmp_path):
    bogus = tmp_path / "output.zip"
    bogus.write_bytes(b"%PDF-1.7 not a zip")
    with pytest.raises(ParseError, match="^output.zip is neither a folder nor a ZIP archive of MinerU's output$"):
        import_mineru_output(bogus, tmp_path / "out")
