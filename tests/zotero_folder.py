"""A Zotero data folder built in a test: zotero.sqlite with the subset of Zotero's own schema (userdata.sql) an import
reads — libraries, items, itemTypes, fields, itemData, itemDataValues, creators, creatorTypes, itemCreators,
itemAttachments, itemNotes, collections, collectionItems, deletedItems — and storage/<KEY>/ files beside it."""
from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE libraries (libraryID INTEGER PRIMARY KEY, type TEXT NOT NULL, editable INT NOT NULL,
    filesEditable INT NOT NULL, version INT NOT NULL DEFAULT 0, storageVersion INT NOT NULL DEFAULT 0,
    lastSync INT NOT NULL DEFAULT 0, archived INT NOT NULL DEFAULT 0);
CREATE TABLE itemTypes (itemTypeID INTEGER PRIMARY KEY, typeName TEXT, templateItemTypeID INT, display INT DEFAULT 1);
CREATE TABLE fields (fieldID INTEGER PRIMARY KEY, fieldName TEXT, fieldFormatID INT);
CREATE TABLE creatorTypes (creatorTypeID INTEGER PRIMARY KEY, creatorType TEXT);
CREATE TABLE items (itemID INTEGER PRIMARY KEY, itemTypeID INT NOT NULL,
    dateAdded TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, dateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, libraryID INT NOT NULL, key TEXT NOT NULL,
    version INT NOT NULL DEFAULT 0, synced INT NOT NULL DEFAULT 0, UNIQUE (libraryID, key),
    FOREIGN KEY (libraryID) REFERENCES libraries(libraryID) ON DELETE CASCADE);
CREATE TABLE itemDataValues (valueID INTEGER PRIMARY KEY, value UNIQUE);
CREATE TABLE itemData (itemID INT, fieldID INT, valueID, PRIMARY KEY (itemID, fieldID),
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE, FOREIGN KEY (fieldID) REFERENCES fields(fieldID),
    FOREIGN KEY (valueID) REFERENCES itemDataValues(valueID));
CREATE TABLE creators (creatorID INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, fieldMode INT,
    UNIQUE (lastName, firstName, fieldMode));
CREATE TABLE itemCreators (itemID INT NOT NULL, creatorID INT NOT NULL, creatorTypeID INT NOT NULL DEFAULT 1,
    orderIndex INT NOT NULL DEFAULT 0, PRIMARY KEY (itemID, creatorID, creatorTypeID, orderIndex),
    UNIQUE (itemID, orderIndex), FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (creatorID) REFERENCES creators(creatorID) ON DELETE CASCADE,
    FOREIGN KEY (creatorTypeID) REFERENCES creatorTypes(creatorTypeID));
CREATE TABLE itemAttachments (itemID INTEGER PRIMARY KEY, parentItemID INT, linkMode INT, contentType TEXT,
    charsetID INT, path TEXT, syncState INT DEFAULT 0, storageModTime INT, storageHash TEXT,
    lastProcessedModificationTime INT, FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (parentItemID) REFERENCES items(itemID) ON DELETE CASCADE);
CREATE TABLE itemNotes (itemID INTEGER PRIMARY KEY, parentItemID INT, note TEXT, title TEXT,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE);
CREATE TABLE collections (collectionID INTEGER PRIMARY KEY, collectionName TEXT NOT NULL,
    parentCollectionID INT DEFAULT NULL, clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL, key TEXT NOT NULL, version INT NOT NULL DEFAULT 0, synced INT NOT NULL DEFAULT 0,
    UNIQUE (libraryID, key), FOREIGN KEY (parentCollectionID) REFERENCES collections(collectionID) ON DELETE CASCADE);
CREATE TABLE collectionItems (collectionID INT NOT NULL, itemID INT NOT NULL, orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (collectionID, itemID), FOREIGN KEY (collectionID) REFERENCES collections(collectionID),
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE);
CREATE TABLE deletedItems (itemID INTEGER PRIMARY KEY, dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE);
"""
ITEM_TYPES = ["note", "attachment", "annotation", "journalArticle", "conferencePaper", "book", "bookSection",
              "preprint", "report", "thesis", "webpage"]
FIELDS = ["title", "abstractNote", "date", "publicationTitle", "proceedingsTitle", "bookTitle", "conferenceName",
          "DOI", "url", "extra", "archiveID", "pages", "volume"]
CREATOR_TYPES = ["author", "contributor", "editor", "translator", "seriesEditor", "bookAuthor"]


class ZoteroFolder:
    """zotero.sqlite and storage/ under `root`, written as Zotero writes them (user library 1)."""

    def __init__(self, root: Path):
        self.root = root
        (root / "storage").mkdir(parents=True, exist_ok=True)
        self.db = root / "zotero.sqlite"
        self.conn = sqlite3.connect(self.db, isolation_level=None)
        self.conn.executescript(SCHEMA)
        self.conn.execute("INSERT INTO libraries VALUES (1, 'user', 1, 1, 0, 0, 0, 0)")
        for table, names in (("itemTypes", ITEM_TYPES), ("fields", FIELDS), ("creatorTypes", CREATOR_TYPES)):
            self.conn.executemany(f"INSERT INTO {table} VALUES (?, ?{', NULL, 1' if table == 'itemTypes' else ''}"
                                  f"{', NULL' if table == 'fields' else ''})", list(enumerate(names, 1)))

    def _id(self, table: str, column: str, name: str) -> int:
        return self.conn.execute(f"SELECT rowid FROM {table} WHERE {column} = ?", (name,)).fetchone()[0]

    def _item(self, item_type: str, key: str) -> int:
        return self.conn.execute("INSERT INTO items (itemTypeID, libraryID, key) VALUES (?, 1, ?)",
                                 (self._id("itemTypes", "typeName", item_type), key)).lastrowid

    def _set(self, item_id: int, name: str, value: str) -> None:
        self.conn.execute("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)", (value,))
        value_id = self.conn.execute("SELECT valueID FROM itemDataValues WHERE value = ?", (value,)).fetchone()[0]
        self.conn.execute("INSERT INTO itemData VALUES (?, ?, ?)", (item_id, self._id("fields", "fieldName", name),
                                                                   value_id))

    def add_item(self, item_type: str, key: str, fields: dict[str, str],
                 creators: list[tuple[str, str] | str] = (), collection: int | None = None,
                 deleted: bool = False) -> int:
        """creators: ("Given", "Family") for two fields, "Full Name" for one (fieldMode 1), all authors, in order."""
        item_id = self._item(item_type, key)
        for name, value in fields.items():
            self._set(item_id, name, value)
        for order, person in enumerate(creators):
            first, last, mode = (person[0], person[1], 0) if isinstance(person, tuple) else ("", person, 1)
            self.conn.execute("INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, ?)",
                              (first, last, mode))
            creator = self.conn.execute("SELECT creatorID FROM creators WHERE firstName = ? AND lastName = ? AND "
                                        "fieldMode = ?", (first, last, mode)).fetchone()[0]
            self.conn.execute("INSERT INTO itemCreators VALUES (?, ?, 1, ?)", (item_id, creator, order))
        if collection is not None:
            self.conn.execute("INSERT INTO collectionItems VALUES (?, ?, 0)", (collection, item_id))
        if deleted:
            self.conn.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (item_id,))
        return item_id

    def add_attachment(self, parent: int | None, key: str, path: str, link_mode: int = 0,
                       content_type: str = "application/pdf", title: str = "Full Text PDF") -> int:
        item_id = self._item("attachment", key)
        self._set(item_id, "title", title)
        self.conn.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) "
                          "VALUES (?, ?, ?, ?, ?)", (item_id, parent, link_mode, content_type, path))
        return item_id

    def storage(self, key: str) -> Path:
        """storage/<KEY>/, where Zotero keeps an imported attachment's file."""
        folder = self.root / "storage" / key
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def add_note(self, parent: int | None, key: str, text: str) -> int:
        item_id = self._item("note", key)
        self.conn.execute("INSERT INTO itemNotes VALUES (?, ?, ?, '')", (item_id, parent, text))
        return item_id

    def add_collection(self, name: str, key: str, parent: int | None = None) -> int:
        return self.conn.execute("INSERT INTO collections (collectionName, parentCollectionID, libraryID, key) "
                                 "VALUES (?, ?, 1, ?)", (name, parent, key)).lastrowid

    def close(self) -> None:
        self.conn.close()
