"""Soak test: ingest a real collection of papers with the local pool at 2 workers, every parser child capped.

The collection (kept out of git; `--collect` rebuilds it into --pdfs): the QA corpus's PDFs (/work/qa_corpus/pdfs,
rebuilt by bench/qa_corpus/build.py on main), ../shared/corpus/{papers,layouts,stress}, and the PDFs of public
repositories' test folders read from their git mirrors (/work/.mirror/<owner>+<name>, made by the session's fetch
tool): REPO_FOLDERS. Files are deduplicated by sha256 and a manifest.json says where each came from.

Prints, per document: pages, parser, wall (claim to commit), CPU-s of its task (MinerU's child included), the
child's peak RSS against its cap, and why it fell back if it did; for the whole run: wall, peak RSS of the whole
process tree (this process, the workers, their MinerU children; sampled twice a second), pages per CPU-second end
to end with the load average, fallbacks by reason, and any OOM-killer line in the kernel log.

Run it once, late and niced: it keeps both cores busy for many minutes.
Usage: nice python bench/soak.py [--collect] [--pdfs DIR] [--workers 2] [--limit N] [--workdir DIR]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHARED = REPO.parent / "shared" / "corpus"
QA_PDFS = Path("/work/qa_corpus/pdfs")
MIRRORS = Path("/work/.mirror")
# (owner/name, folder inside it): public repositories' test PDFs, read from their git mirrors
REPO_FOLDERS = [("allenai/papermage", "tests/fixtures"), ("DS4SD/docling", "tests/data"),
                ("allenai/science-parse", "core/src/test/resources"), ("kermitt2/grobid", "grobid-core/src/test"),
                ("CeON/CERMINE", "cermine-impl/src/test/resources"), ("Future-House/paper-qa", "tests/stub_data")]
DEFAULT_PDFS = REPO.parent / "soak_pdfs"


def _git_dir(repo: str) -> Path | None:
    root = MIRRORS / repo.replace("/", "+")
    for cand in [root / "repo", root, *sorted(p.parent for p in root.glob("**/HEAD"))]:
        if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return cand
    return None


def _mirror_pdfs(repo: str, folder: str) -> list[tuple[str, bytes]]:
    git = _git_dir(repo)
    if git is None:
        return []
    names = subprocess.run(["git", "--git-dir", str(git), "ls-tree", "-r", "--name-only", "HEAD", folder],
                           capture_output=True, text=True).stdout.split("\n")
    out = []
    for name in names:
        if name.lower().endswith(".pdf"):
            data = subprocess.run(["git", "--git-dir", str(git), "show", f"HEAD:{name}"], capture_output=True).stdout
            if data.startswith(b"%PDF"):  # not an LFS pointer
                out.append((f"{repo}:{name}", data))
    return out


def collect(dest: Path) -> list[dict]:
    """Copy every source's PDFs into dest, one per distinct content; write and return the manifest."""
    dest.mkdir(parents=True, exist_ok=True)
    found: list[tuple[str, bytes]] = []
    for folder in [QA_PDFS, SHARED / "papers", SHARED / "layouts", SHARED / "stress"]:
        found += [(str(p), p.read_bytes()) for p in sorted(folder.glob("*.pdf"))] if folder.is_dir() else []
    for repo, folder in REPO_FOLDERS:
        found += _mirror_pdfs(repo, folder)
    manifest, seen = [], set()
    for source, data in found:
        digest = hashlib.sha256(data).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        name = f"{len(manifest):03d}_{Path(source.split(':')[-1]).name}"
        (dest / name).write_bytes(data)
        manifest.append({"file": name, "source": source, "sha256": digest})
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


class TreeSampler:
    """Peak resident memory of this process and all its descendants, sampled twice a second, and their CPU time:
    each process's own user + system time as last seen (a pool worker is never waited for, so RUSAGE_CHILDREN
    misses it; its children's time is not added twice). A process's last half second before it exits is missed."""

    def __init__(self):
        import psutil

        self.me, self.peak, self._stop = psutil.Process(), 0, threading.Event()
        self._cpu: dict[tuple[int, float], float] = {}  # (pid, start time) → CPU-s last seen
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._sample()
        self._cpu0 = sum(self._cpu.values())

    def cpu_seconds(self) -> float:
        return sum(self._cpu.values()) - self._cpu0

    def _sample(self) -> None:
        import psutil

        total = 0
        for proc in [self.me, *self.me.children(recursive=True)]:
            try:
                with proc.oneshot():
                    total += proc.memory_info().rss
                    times = proc.cpu_times()
                    self._cpu[(proc.pid, proc.create_time())] = times.user + times.system
            except psutil.Error:
                continue
        self.peak = max(self.peak, total)

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self._sample()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def oom_lines() -> str:
    try:
        log = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "dmesg unavailable"
    if log.returncode != 0:
        return f"dmesg unavailable ({log.stderr.strip()[:80]})"
    lines = [ln for ln in log.stdout.splitlines() if "oom" in ln.lower() or "out of memory" in ln.lower()]
    return "\n".join(lines) or "none"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--collect", action="store_true", help="rebuild the PDF folder from the sources first")
    ap.add_argument("--pdfs", default=str(DEFAULT_PDFS))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0, help="at most this many PDFs (0: all)")
    ap.add_argument("--workdir", help="workspace folder (default: a new temporary one, removed afterwards)")
    args = ap.parse_args()

    from bench.common import bench_workspace
    from core.library import open_library
    from core.pipeline.compute import compute_backend
    from core.pipeline.documents import add_document
    from core.pipeline.ingest import process_queue
    from core.pipeline.parsing.budget import describe

    pdf_dir = Path(args.pdfs)
    if args.collect or not (pdf_dir / "manifest.json").exists():
        collect(pdf_dir)
    files = sorted(pdf_dir.glob("*.pdf"))[: args.limit or None]
    ws = bench_workspace(args.workdir, "papergraph-soak-")
    lib = open_library(ws)
    for path in files:
        add_document(lib, path.name, path.read_bytes())
    backend = compute_backend(lib.settings.compute, "local", args.workers)
    print(f"{len(files)} PDFs from {pdf_dir}; {describe(lib.settings.parsing, backend.workers)}", flush=True)
    load0, start = os.getloadavg(), time.monotonic()
    with TreeSampler() as tree:
        done = [lib.documents.get(d.id) or d for d in process_queue(lib, backend=backend)]
        wall = time.monotonic() - start
    backend.close()
    load1 = os.getloadavg()
    total_cpu = tree.cpu_seconds()  # this process, the workers and their MinerU children
    tasks_cpu = sum(d.timings.get("compute_cpu_s", 0.0) for d in done)

    print("\n| document | pages | parser | status | wall s | CPU-s | child peak MB | cap MB | fell back because |")
    print("|---|---|---|---|---|---|---|---|---|")
    pages, fallbacks, over = 0, [], []
    for doc in sorted(done, key=lambda d: d.filename):
        info_path = ws.parsed_dir(doc.id) / "parse.json"
        info = json.loads(info_path.read_text()) if info_path.exists() else {}
        peak, cap = info.get("child_peak_rss_mb", 0), info.get("memory_cap_mb", 0)
        reasons = [w for w in doc.warnings if w.startswith(("MinerU ", "mineru failed")) or "vector marks" in w]
        if reasons:
            fallbacks.append((doc.filename, reasons))
        if cap and peak > cap:
            over.append(doc.filename)
        pages += doc.pages
        print(f"| {doc.filename[:48]} | {doc.pages} | {doc.backend or '-'} | {doc.status.value} | "
              f"{doc.timings.get('total_s', 0):.1f} | {doc.timings.get('compute_cpu_s', 0):.1f} | {peak} | {cap} | "
              f"{'; '.join(r[:90] for r in reasons) or ('-' if doc.status.value == 'ready' else doc.message[:90])} |")
    ready = sum(d.status.value == "ready" for d in done)
    print(f"\n| whole run | value |\n|---|---|\n| documents | {len(done)} ({ready} ready) |\n| pages | {pages} |\n"
          f"| wall | {wall:.0f} s |\n| CPU-s (writer + workers + MinerU children) | {total_cpu:.0f} |\n"
          f"| of which in the documents' tasks | {tasks_cpu:.0f} |\n"
          f"| pages / CPU-s end to end | {pages / max(total_cpu, 1e-9):.2f} |\n"
          f"| pages / wall s | {pages / wall:.2f} |\n| peak RSS of the process tree | {tree.peak >> 20} MB |\n"
          f"| load average before / after (1, 5, 15 min) | {'/'.join(f'{v:.1f}' for v in load0)} → "
          f"{'/'.join(f'{v:.1f}' for v in load1)} |\n| documents whose child exceeded its cap | {len(over)} |\n"
          f"| fell back to PyMuPDF (all or some pages) | {len(fallbacks)} |")
    for name, reasons in fallbacks:
        print(f"- {name}: {' / '.join(reasons)}")
    print(f"\nOOM-killer lines in the kernel log: {oom_lines()}")
    if not args.workdir:
        shutil.rmtree(ws.root, ignore_errors=True)
    return 0


if __name__ == "__main__":  # the local pool's spawned workers re-import this module
    sys.exit(main())
