"""Rebuild the QA corpus PDF folder from manifest.json.

Each manifest entry names one PDF and where it comes from:
  * repo "shared": copied from <workspace>/shared/<path>;
  * otherwise "owner/name" at a fixed commit: read from a local bare git
    mirror if one exists (``git show COMMIT:PATH``), else downloaded from
    raw.githubusercontent.com.
Every file is checked against its sha256. Stdlib only.

Usage: python build.py [--out DIR] [--mirrors DIR] [--manifest FILE]
"""

import argparse
import hashlib
import json
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORKSPACE = REPO.parent
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def find_git_dir(mirrors: Path, repo: str) -> Path | None:
    """Return a git dir (has HEAD and objects/) inside mirrors/owner+name, if any."""
    root = mirrors / repo.replace("/", "+")
    if not root.is_dir():
        return None
    candidates = [root] + sorted(p.parent for p in root.glob("**/HEAD"))
    for cand in candidates:
        if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return cand
    return None


def from_mirror(git_dir: Path, commit: str, path: str) -> bytes:
    result = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
        capture_output=True,
        check=True,
    )
    return result.stdout


def from_github(repo: str, commit: str, path: str) -> bytes:
    url = RAW_URL.format(repo=repo, commit=commit, path=urllib.parse.quote(path))
    with urllib.request.urlopen(url, timeout=60) as resp:
        return resp.read()


def fetch(entry: dict, mirrors: Path, shared: Path) -> tuple[bytes, str]:
    """Return (bytes, source description) for one manifest entry."""
    if entry["repo"] == "shared":
        src = shared / entry["path"]
        return src.read_bytes(), f"copied {src}"
    git_dir = find_git_dir(mirrors, entry["repo"])
    if git_dir is not None:
        try:
            return from_mirror(git_dir, entry["commit"], entry["path"]), f"mirror {git_dir}"
        except subprocess.CalledProcessError:
            pass  # object missing from this mirror: fall back to the network
    return from_github(entry["repo"], entry["commit"], entry["path"]), "downloaded"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=WORKSPACE / "qa_corpus" / "pdfs")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--manifest", type=Path, default=HERE / "manifest.json")
    parser.add_argument("--shared", type=Path, default=WORKSPACE / "shared",
                        help="root holding corpus/papers/ for the 'shared' entries")
    args = parser.parse_args(argv)

    entries = json.loads(args.manifest.read_text(encoding="utf-8"))
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for entry in entries:
        name = entry["file"]
        target = args.out / name
        if target.is_file() and sha256(target.read_bytes()) == entry["sha256"]:
            print(f"ok      {name} (already present)")
            continue
        try:
            data, source = fetch(entry, args.mirrors, args.shared)
        except Exception as exc:  # noqa: BLE001 - report and continue
            print(f"FAILED  {name}: {exc}")
            failed.append(name)
            continue
        if sha256(data) != entry["sha256"]:
            print(f"FAILED  {name}: sha256 mismatch ({source})")
            failed.append(name)
            continue
        tmp = target.with_suffix(target.suffix + ".part")
        tmp.write_bytes(data)
        tmp.replace(target)
        print(f"ok      {name} ({source})")

    print(f"{len(entries) - len(failed)}/{len(entries)} files in {args.out}")
    if failed:
        print("could not get: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
