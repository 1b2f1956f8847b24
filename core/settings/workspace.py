"""Where a workspace keeps its files. One folder holds everything a collection needs; delete it to start over."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from core.settings.config import Settings, load_settings, save_settings

REPO_ROOT = Path(__file__).resolve().parents[2]  # core/settings/workspace.py → the repository
WORKSPACE_ENV = "PAPERGRAPH_WORKSPACE"


@dataclass(frozen=True)
class Workspace:
    root: Path

    @property
    def db_path(self) -> Path:
        return self.root / "papergraph.sqlite"

    @property
    def settings_path(self) -> Path:
        return self.root / "settings.json"

    @property
    def docs_dir(self) -> Path:
        return self.root / "docs"

    @property
    def chroma_dir(self) -> Path:
        return self.root / "chroma"

    @property
    def staging_dir(self) -> Path:
        # Work in progress lives here and is renamed into docs/ only when complete.
        return self.root / "staging"

    @property
    def mineru_home(self) -> Path:
        return self.root / ".mineru"

    def doc_dir(self, doc_id: str) -> Path:
        return self.docs_dir / doc_id

    def source_pdf(self, doc_id: str) -> Path:
        return self.doc_dir(doc_id) / "source.pdf"

    def parsed_dir(self, doc_id: str) -> Path:
        return self.doc_dir(doc_id) / "parsed"

    def pages_dir(self, doc_id: str) -> Path:
        return self.doc_dir(doc_id) / "pages"

    def ensure(self) -> Workspace:
        for d in (self.root, self.docs_dir, self.staging_dir):
            d.mkdir(parents=True, exist_ok=True)
        return self

    def settings(self, apply_environment: bool = True) -> Settings:
        return load_settings(self.settings_path, apply_environment)

    def save_settings(self, settings: Settings) -> None:
        save_settings(settings, self.settings_path)


def workspace_root() -> Path:
    """Where the workspace is ($PAPERGRAPH_WORKSPACE, else data/ in the repository), without creating it."""
    return Path(os.environ.get(WORKSPACE_ENV) or str(REPO_ROOT / "data")).expanduser().resolve()


def default_workspace() -> Workspace:
    return Workspace(workspace_root()).ensure()


def config_dir() -> Path:
    """The user's own PaperGraph folder (API keys, sign-in accounts): never the workspace, never the repository.
    $PAPERGRAPH_CONFIG_DIR, else $XDG_CONFIG_HOME/papergraph, else ~/.config/papergraph."""
    explicit = os.environ.get("PAPERGRAPH_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".config") / "papergraph"
