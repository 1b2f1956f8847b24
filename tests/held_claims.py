"""A real writer process that claims work and is killed (SIGKILL) holding the claim: what a crashed app, CLI or
server leaves for the next writer to take up."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from tests.paths import REPO


@contextmanager
def held_claim(script: str, root: Path):
    """Run `script` (python -c; argv[1] is the workspace) until it prints the id it claimed; yield that id while the
    claim is held by the live process, then kill the process holding it."""
    holder = subprocess.Popen([sys.executable, "-c", script, str(root)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        yield holder.stdout.readline().strip()
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        holder.stdout.close()
