"""A Zotero database (zotero.sqlite in a Zotero data folder) read without Zotero and without changing it.

Zotero keeps its database locked while it runs, so the file (and a -journal or -wal beside it) is copied first,
each opened without following a symbolic link, and the copy is opened read-only (`mode=ro`). A copy taken while
Zotero was half-way through a write has a hot journal that a read-only connection cannot roll back: that, a damaged
file, or a file that is no Zotero database raises ZoteroUnreadable with what to do, before anything is imported.
The whole database is read into records (core/schema/zotero.py) in one go, so an import never works from half of it.
This is the import's only SQL; core.library hands it to the pipeline (the store contract)."""
from __future__ import annotations

import os
import sqlite3
import stat
import tempfile
from pathlib import Path

from core.schema.zotero import ZoteroAttachment, ZoteroItem, ZoteroLibrary

MAX_DATABASE_BYTES = 4 * 1024 ** 3
NOT_PAPERS = ("note", "annotation")
TABLES = ("items", "itemTypes", "itemData", "itemDataValues", "fields", "creators", "itemCreators", "creatorTypes",
          "itemAttachments", "collections", "collectionItems", "deletedItems")


class ZoteroUnreadable(ValueError):
    """The database cannot be read as a whole; the message says why and what to do."""


def _copy_regular(source: Path, target: Path) -> None:
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)  # a link (ELOOP) is refused, never followed
    with os.fdopen(fd, "rb") as src, open(target, "wb") as out:
        info = os.fstat(src.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ZoteroUnreadable(f"{source.name} is not a regular file")
        if info.st_size > MAX_DATABASE_BYTES:
            raise ZoteroUnreadable(f"{source.name} is {info.st_size / 1024 ** 3:.1f} GB; at most 4 GB is read")
        while chunk := src.read(1 << 20):
            out.write(chunk)


def read_zotero_database(path: Path) -> ZoteroLibrary:
    """Every item, creator, field, attachment and collection of the database at `path` (read from a copy)."""
    with tempfile.TemporaryDirectory(prefix="papergraph-zotero-") as tmp:
        copy = Path(tmp) / "zotero.sqlite"
        try:
            _copy_regular(path, copy)
            for suffix in ("-journal", "-wal", "-shm"):  # a write under way: its journal goes with the copy
                if os.path.lexists(f"{path}{suffix}"):
                    _copy_regular(Path(f"{path}{suffix}"), Path(f"{copy}{suffix}"))
        except FileNotFoundError:
            raise ZoteroUnreadable(f"no {path.name} in {path.parent}: is this a Zotero data folder?") from None
        except OSError as exc:
            why = "a symbolic link (not followed)" if os.path.islink(path) else exc.strerror or str(exc)
            raise ZoteroUnreadable(f"{path.name} cannot be copied: {why}") from None
        conn = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True, timeout=0)
        conn.row_factory = sqlite3.Row
        try:
            data = _read(conn)
            data.locked = _locked(path)
            return data
        except sqlite3.Error as exc:
            raise ZoteroUnreadable(_explain(path, exc)) from None
        finally:
            conn.close()


def _locked(path: Path) -> bool:
    """Whether another program holds the database locked now (Zotero does while it runs), asked read-only and
    without waiting, after the copy was read (a regular file then: _copy_regular refused a link)."""
    try:
        probe = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=0)
    except sqlite3.Error:
        return False
    try:
        probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return False
    except sqlite3.OperationalError as exc:
        return "locked" in str(exc)
    except sqlite3.Error:
        return False
    finally:
        probe.close()


def _explain(path: Path, exc: sqlite3.Error) -> str:
    name = getattr(exc, "sqlite_errorname", "")
    if name in ("SQLITE_READONLY_ROLLBACK", "SQLITE_BUSY") or "locked" in str(exc):
        return (f"{path.name} was being written when it was copied (Zotero is running and saving): close Zotero, or "
                "wait a moment, and import again; nothing was imported")
    if name in ("SQLITE_NOTADB", "SQLITE_CORRUPT") or "malformed" in str(exc) or "not a database" in str(exc):
        return f"{path.name} is damaged or not an SQLite database ({exc}); nothing was imported"
    return f"{path.name} cannot be read as a Zotero database ({exc}); nothing was imported"


def _read(conn: sqlite3.Connection) -> ZoteroLibrary:
    check = conn.execute("PRAGMA quick_check").fetchone()[0]
    if check != "ok":
        raise sqlite3.DatabaseError(f"database disk image is malformed: {str(check)[:200]}")
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = [t for t in TABLES if t not in present]
    if missing:
        raise sqlite3.OperationalError(f"not a Zotero database: no table {', '.join(missing)}")
    deleted = {r[0] for r in conn.execute("SELECT itemID FROM deletedItems")}
    feeds = {r[0] for r in conn.execute("SELECT libraryID FROM libraries WHERE type = 'feed'")} \
        if "libraries" in present else set()  # RSS feeds Zotero follows: their items are no one's library
    out = ZoteroLibrary()
    items: dict[int, ZoteroItem] = {}
    for row in conn.execute("SELECT i.itemID, i.key, i.libraryID, t.typeName FROM items i "
                            "JOIN itemTypes t USING (itemTypeID) ORDER BY i.itemID"):
        kind = "feed item" if row["libraryID"] in feeds else row["typeName"]
        if kind in NOT_PAPERS or row["libraryID"] in feeds:
            out.not_papers[kind] = out.not_papers.get(kind, 0) + 1
            continue
        items[row["itemID"]] = ZoteroItem(row["itemID"], str(row["key"]), str(row["typeName"]),
                                          deleted=row["itemID"] in deleted)
    for row in conn.execute("SELECT d.itemID, f.fieldName, v.value FROM itemData d JOIN fields f USING (fieldID) "
                            "JOIN itemDataValues v USING (valueID)"):
        value = row["value"]
        if row["itemID"] in items and value is not None:
            text = value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
            items[row["itemID"]].fields[str(row["fieldName"])] = text
    for row in conn.execute("SELECT ic.itemID, t.creatorType, c.firstName, c.lastName, c.fieldMode "
                            "FROM itemCreators ic JOIN creators c USING (creatorID) "
                            "JOIN creatorTypes t USING (creatorTypeID) ORDER BY ic.itemID, ic.orderIndex"):
        if row["itemID"] in items:
            items[row["itemID"]].creators.append((str(row["creatorType"]), str(row["firstName"] or ""),
                                                  str(row["lastName"] or ""), int(row["fieldMode"] or 0)))
    for row in conn.execute("SELECT a.itemID, a.parentItemID, a.linkMode, a.contentType, a.path, i.key "
                            "FROM itemAttachments a JOIN items i USING (itemID) ORDER BY a.itemID"):
        attachment = ZoteroAttachment(str(row["key"]), str(row["path"] or ""), int(row["linkMode"] or 0),
                                      str(row["contentType"] or ""), deleted=row["itemID"] in deleted)
        parent = items.get(row["parentItemID"]) if row["parentItemID"] is not None else items.get(row["itemID"])
        if parent is not None:
            parent.attachments.append(attachment)
        if row["parentItemID"] is not None:
            items.pop(row["itemID"], None)  # a child attachment is its parent's file, not a paper of its own
    for row in conn.execute("SELECT collectionID, collectionName, parentCollectionID FROM collections"):
        out.collections[row["collectionID"]] = (str(row["collectionName"]), row["parentCollectionID"])
    for row in conn.execute("SELECT collectionID, itemID FROM collectionItems"):
        if row["itemID"] in items:
            items[row["itemID"]].collections.add(row["collectionID"])
    out.items = list(items.values())
    return out
