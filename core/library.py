"""A Library is one workspace opened: its settings and its stores. Everything else takes one as an argument."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from core.config import Settings
from core.store.base import ChunkStore, DocumentStore, VectorStore
from core.store.chroma_vectors import ChromaVectorStore, chroma_client
from core.store.sqlite_chunks import SQLiteChunkStore
from core.store.sqlite_db import Database
from core.store.sqlite_documents import SQLiteDocumentStore
from core.workspace import Workspace, default_workspace

WINDOW_COLLECTION = "chunk_windows"


@dataclass
class Library:
    workspace: Workspace
    settings: Settings
    db: Database
    documents: DocumentStore
    chunks: ChunkStore

    @cached_property
    def windows(self) -> VectorStore:
        """Embedding windows of every chunk; opened on first use because importing Chroma takes a second."""
        client = chroma_client(self.settings.store, self.workspace.chroma_dir)
        return ChromaVectorStore(client, WINDOW_COLLECTION)

    def embedder(self):
        from core.embedding import get_embedder

        return get_embedder(self.settings.embedding.model)

    def tokenizer(self):
        from core.embedding import get_tokenizer

        return get_tokenizer(self.settings.embedding.model)


def open_library(workspace: Workspace | None = None) -> Library:
    ws = (workspace or default_workspace()).ensure()
    db = Database(ws.db_path)
    return Library(workspace=ws, settings=ws.settings(), db=db, documents=SQLiteDocumentStore(db),
                   chunks=SQLiteChunkStore(db))
