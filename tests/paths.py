"""Where the tests find the repository and the shared material beside it (skipped when ../shared is absent)."""
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
APP = str(REPO / "app.py")
