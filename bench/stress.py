"""The stress PDF (../shared/corpus/stress: page 6 draws 92,680 vector marks and once grew MinerU to 19.5 GB)
through the ingest, one worker, under each way of keeping it bounded:

- cap: every page to MinerU (dense_page_paths 0), a 1.5 GB cap, a 150 s deadline cap: MinerU is stopped, PyMuPDF
  parses the document;
- default: the default settings: the two dense pages go to PyMuPDF, the other twelve to MinerU.

Prints wall time to ready, the MinerU child's peak RSS against its cap, the parser used and the reason stated.
Usage: python bench/stress.py
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

STRESS = REPO.parent / "shared" / "corpus" / "stress" / "bmcbiology_s12915-024-01908-y.pdf"
RUNS = {"cap": {"memory_gb": 1.5, "timeout_s": 150, "dense_page_paths": 0}, "default": {}}


def main() -> int:
    from core.library import open_library
    from core.pipeline.documents import add_pdf
    from core.pipeline.ingest import process_queue
    from core.settings.config import Settings
    from core.settings.workspace import Workspace

    if not STRESS.is_file():
        print(f"{STRESS} is absent")
        return 1
    print(f"load average {'/'.join(f'{v:.1f}' for v in os.getloadavg())}\n")
    print("| run | status | parser | wall to ready s | child peak RSS MB | cap MB | reason stated |")
    print("|---|---|---|---|---|---|---|")
    for name, parsing in RUNS.items():
        ws = Workspace(Path(tempfile.mkdtemp(prefix="papergraph-stress-"))).ensure()
        settings = Settings()
        settings.compute.workers = 1
        for key, value in parsing.items():
            setattr(settings.parsing, key, value)
        ws.save_settings(settings)
        lib = open_library(ws)
        add_pdf(lib, STRESS.name, STRESS.read_bytes())
        start = time.monotonic()
        (doc,) = process_queue(lib)
        wall = time.monotonic() - start
        info = json.loads((ws.parsed_dir(doc.id) / "parse.json").read_text())
        print(f"| {name} | {doc.status.value} | {doc.backend} | {wall:.0f} | {info.get('child_peak_rss_mb')} | "
              f"{info.get('memory_cap_mb')} | {'; '.join(doc.warnings)} |", flush=True)
    return 0


if __name__ == "__main__":  # the compute pool's spawned workers re-import this module
    sys.exit(main())
