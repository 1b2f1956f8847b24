"""Import a MinerU output made elsewhere (a folder or a .zip) as if PaperGraph had parsed the PDF itself."""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from core.content.content_list import MAX_PAGES, MalformedContentList, load_content_list, renumber
from core.pipeline.parsing.markdown import to_markdown
from core.pipeline.parsing.result import IMAGES_DIR, ParseError, ParseOutput, process_cpu_seconds, write_output

MAX_UNPACKED_BYTES = 2 * 1024**3  # a zip bomb stops here
MAX_ENTRIES = 50_000


class UnsafeImport(ValueError):
    """A MinerU output folder holds something an import must not copy (a symlink, a device, too much)."""


def _regular_entries(root: Path):
    """(path, is_dir) of every entry under `root`, without following links. A symlink anywhere refuses the whole
    folder: `full.md -> /etc/passwd` would otherwise be copied into the workspace and shown as the paper."""
    count, size = 0, 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(dirnames) + sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise UnsafeImport(f"the folder holds a symbolic link '{rel}' (to {os.readlink(path)}); an import "
                                   "copies regular files only: replace the link with the file itself")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise UnsafeImport(f"the folder holds '{rel}', which is not a regular file; refusing to import")
            count += 1
            size += path.lstat().st_size if stat.S_ISREG(mode) else 0
            if count > MAX_ENTRIES or size > MAX_UNPACKED_BYTES:
                raise UnsafeImport(f"the folder holds more than {MAX_ENTRIES} files or 2 GB; import only the "
                                   "paper's MinerU output")
            yield path, stat.S_ISDIR(mode)


def copy_import_folder(src: Path, dest: Path) -> None:
    """Copy a MinerU output folder to `dest` (not yet existing): folders and regular files only, each file opened
    without following links, so nothing outside `src` can reach the workspace. Raises UnsafeImport, leaving no
    `dest` behind."""
    src = Path(src).resolve()
    dest.mkdir(parents=True)
    try:
        for path, is_dir in _regular_entries(src):
            target = dest / path.relative_to(src)
            if is_dir:
                target.mkdir(exist_ok=True)
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # the file may have been swapped for a link since
            with os.fdopen(fd, "rb") as source, target.open("wb") as out:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise UnsafeImport(f"'{path.relative_to(src)}' is not a regular file; refusing to import")
                shutil.copyfileobj(source, out)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _unsafe_reason(name: str) -> str:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or (name[1:3] == ":/" or name[1:3] == ":\\"):
        return "it is an absolute path"
    if ".." in path.parts:
        return "it points outside the archive"
    return ""


def _unpack(zip_path: Path, target: Path) -> None:
    try:
        zf = zipfile.ZipFile(zip_path)
    except zipfile.BadZipFile:
        raise ParseError(f"{zip_path.name} is not a valid ZIP archive") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ENTRIES:
            raise ParseError(f"the archive holds {len(infos)} files, more than the {MAX_ENTRIES} an import accepts")
        if sum(i.file_size for i in infos) > MAX_UNPACKED_BYTES:
            raise ParseError("the archive unpacks to more than 2 GB; import only the paper's MinerU output")
        for info in infos:
            reason = _unsafe_reason(info.filename)
            if not reason and stat.S_ISLNK(info.external_attr >> 16):
                reason = "it is a symbolic link"
            if reason:
                raise ParseError(f"the archive holds an unsafe entry '{info.filename}' ({reason}); refusing to import")
        _refuse_file_folder_clash(infos)
        for info in infos:
            dest = target.joinpath(*PurePosixPath(info.filename.replace("\\", "/")).parts)
            if info.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, dest.open("wb") as out:
                shutil.copyfileobj(src, out)


def _refuse_file_folder_clash(infos: list[zipfile.ZipInfo]) -> None:
    """A zip may hold a file `images` and a file `images/x.jpg`; no folder can hold both, and unpacking would end
    in FileExistsError or IsADirectoryError half-way through. Refused up front, naming both entries."""
    files: dict[tuple[str, ...], str] = {}
    folders: dict[tuple[str, ...], str] = {}
    for info in infos:
        parts = PurePosixPath(info.filename.replace("\\", "/")).parts
        if not info.is_dir():
            files.setdefault(parts, info.filename)
        for depth in range(1, len(parts) if not info.is_dir() else len(parts) + 1):
            folders.setdefault(parts[:depth], info.filename)
    for parts in sorted(files.keys() & folders.keys()):
        raise ParseError(f"the archive holds both a file '{files[parts]}' and a folder of that name (with "
                         f"'{folders[parts]}'); a folder cannot hold both: rename one of them and zip it again")


def _inside(path: Path, root: Path) -> bool:
    """True when `path` is a regular file under `root` reached without following any symlink."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return False
    cur = root
    for part in rel.parts:
        cur = cur / part
        if cur.is_symlink():
            return False
    return path.is_file()


def _find_content_list(root: Path) -> Path:
    found = sorted((p for p in root.rglob("*content_list.json") if _inside(p, root)),
                   key=lambda p: (len(p.relative_to(root).parts), str(p)))
    if not found:
        raise ParseError("no content list found: expected a file named content_list.json or "
                         "<name>_content_list.json (MinerU's output folder)")
    folders = {p.parent for p in found}
    if len(folders) > 1:
        names = ", ".join(str(p.relative_to(root)) for p in found[:3])
        raise ParseError(f"found {len(found)} content lists in different folders ({names}…); "
                         "import one paper at a time")
    return found[0]


def _markdown_beside(content_list: Path) -> Path | None:
    stem = content_list.name[: -len("content_list.json")].rstrip("_")
    candidates = sorted(p for p in content_list.parent.glob("*.md") if _inside(p, content_list.parent))
    for md in candidates:
        if md.stem == stem or (not stem and md.stem in ("markdown", "full")):
            return md
    return candidates[0] if len(candidates) == 1 else None


def _copy_images(items, base: Path, out_dir: Path) -> list[str]:
    missing: list[str] = []
    for item in items:
        if not item.img_path:
            continue
        rel = item.img_path.replace("\\", "/")
        source = base.joinpath(*PurePosixPath(rel).parts) if not _unsafe_reason(rel) else None
        if source is None or not _inside(source, base):
            missing.append(item.img_path)
            item.img_path = ""
            continue
        parts = PurePosixPath(rel).parts
        dest_rel = "/".join(parts) if parts[0] == IMAGES_DIR else f"{IMAGES_DIR}/" + "/".join(parts)
        dest = out_dir.joinpath(*PurePosixPath(dest_rel).parts)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
        item.img_path = dest_rel
    return missing


def import_mineru_output(src: Path, out_dir: Path, max_pages: int = MAX_PAGES) -> ParseOutput:
    """Parse a MinerU output folder or zip into `out_dir`; page_idx beyond `max_pages` is refused."""
    cpu0, src = process_cpu_seconds(), Path(src)
    if not src.exists():
        raise ParseError(f"{src.name} does not exist")
    with tempfile.TemporaryDirectory(prefix="papergraph-import-") as tmp:
        root = src.resolve() if src.is_dir() else Path(tmp)
        if not src.is_dir():
            if not zipfile.is_zipfile(src):
                raise ParseError(f"{src.name} is neither a folder nor a ZIP archive of MinerU's output")
            _unpack(src, root)
        # Links here are skipped, never followed (_inside); add_mineru_output refuses them before this runs.
        content_list = _find_content_list(root)
        try:
            items = load_content_list(content_list, max_pages)
        except MalformedContentList as exc:  # some messages name the file already
            reason = str(exc)
            raise ParseError(reason if reason.startswith(content_list.name) else f"{content_list.name}: {reason}") \
                from None
        if not items:
            raise ParseError(f"{content_list.name} is empty: it lists no items")
        for item in items:
            item.source = item.source or "import"
        out_dir.mkdir(parents=True, exist_ok=True)
        missing = _copy_images(items, content_list.parent, out_dir)
        md_path = _markdown_beside(content_list)
        markdown = md_path.read_text(encoding="utf-8", errors="replace") if md_path else to_markdown(items)
    warnings = []
    if missing:
        warnings.append(f"{len(missing)} image{'s' if len(missing) > 1 else ''} referenced by the content list "
                        f"{'are' if len(missing) > 1 else 'is'} missing or unsafe (e.g. {missing[0]})")
    items.sort(key=lambda i: i.page_idx)  # stable: keeps reading order within a page
    output = ParseOutput(items=renumber(items), backend="import", pages=max(i.page_idx for i in items) + 1,
                         markdown=markdown, warnings=warnings, cpu_seconds=process_cpu_seconds() - cpu0)
    write_output(out_dir, output)
    return output


