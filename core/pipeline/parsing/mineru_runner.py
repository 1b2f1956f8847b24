"""Run mineru_worker in a child process: timeout, progress, CPU time and a readable error."""
from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.pipeline.parsing.mineru_worker import ERROR, PARENT_PID_ENV, PROGRESS
from core.settings.workspace import REPO_ROOT

_NOT_READY = re.compile(r"is not ready under (\S+?);")
# stderr lines that are noise rather than the cause of a failure
_NOISE = re.compile(r"^(\s*File \"|\s*\^+\s*$|Traceback|During handling|The above exception|warnings\.warn|"
                    r".*Explicitly closing|.*\| (INFO|DEBUG|WARNING) +\|)")


class MineruFailed(Exception):
    """mineru did not produce a content list; str() is the user-facing reason."""

    def __init__(self, message: str, cpu_seconds: float = 0.0):
        super().__init__(message)
        self.cpu_seconds = cpu_seconds


@dataclass
class MineruRun:
    out_dir: Path  # mineru's own output folder: content_list.json, images/, middle_json.json...
    cpu_seconds: float
    wall_seconds: float


def _env(mineru_home: Path, tier: str) -> dict[str, str]:
    env = dict(os.environ)
    env["MINERU_HOME"] = str(mineru_home)
    env["HF_HUB_OFFLINE"] = "1"  # a hub lookup hangs ~90 s before failing on a machine without internet
    if tier != "flash":
        env["MINERU_MODEL_SOURCE"] = "local"  # fail in about a second when weights are missing
    env[PARENT_PID_ENV] = str(os.getpid())  # the worker checks it: exits if we died before it armed prctl
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _pump(stream, lines: queue.Queue[str | None]) -> None:
    # The pump owns the pipe: it reads until the child (or its killed group) closes it, then closes our end.
    with stream:
        for raw in iter(stream.readline, ""):
            lines.put(raw.rstrip("\n"))
    lines.put(None)


def _last_meaningful(stderr: str) -> str:
    candidates = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not _NOISE.match(ln)]
    return candidates[-1][:400] if candidates else ""


def explain_failure(error_line: str, stderr: str, tier: str, mineru_home: Path, returncode: int) -> str:
    reason = error_line or _last_meaningful(stderr)
    missing = _NOT_READY.search(reason)
    if missing:
        return (f"MinerU tier '{tier}' needs model weights that are not installed in {missing.group(1)}; "
                "use the flash tier or install the weights")
    if returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else str(-returncode)
        hint = " (out of memory?)" if name == "SIGKILL" else ""
        return f"mineru was killed by {name}{hint}" + (f": {reason}" if reason else "")
    return reason or f"mineru exited with code {returncode} without saying why"


def run_mineru(pdf_path: Path, work_dir: Path, *, tier: str, mineru_home: Path, timeout_s: float,
               progress: Callable[[str], None]) -> MineruRun:
    """Parse `pdf_path` into `work_dir` in a child process; raise MineruFailed with a specific reason."""
    try:
        mineru_home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MineruFailed(f"cannot create mineru's home folder {mineru_home}: {exc.strerror}") from None
    cmd = [sys.executable, "-m", "core.pipeline.parsing.mineru_worker", str(Path(pdf_path).resolve()),
           str(Path(work_dir).resolve()), tier]
    start = time.monotonic()
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as err:
        # A file, not a pipe, for stderr: mineru can log more than a pipe buffer holds before we read it.
        try:
            proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=_env(mineru_home, tier), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True)
        except OSError as exc:
            raise MineruFailed(f"cannot start mineru: {exc.strerror or exc}") from None
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        try:
            error_line, timed_out = _follow(proc, lines, start + timeout_s, progress)
        except BaseException:
            # The caller gave up (a progress callback raised, Ctrl-C): leave no orphaned mineru behind.
            _kill_group(proc.pid)
            _reap(proc)
            raise
        returncode, cpu = _reap(proc)
        err.seek(0)
        stderr = err.read()
    wall = time.monotonic() - start
    if timed_out:
        raise MineruFailed(f"mineru did not finish within the {timeout_s:g} s time limit", cpu)
    if returncode != 0 or not (Path(work_dir) / "content_list.json").is_file():
        raise MineruFailed(explain_failure(error_line, stderr, tier, mineru_home, returncode), cpu)
    return MineruRun(Path(work_dir), cpu, wall)


def _follow(proc: subprocess.Popen, lines: queue.Queue[str | None], deadline: float,
            progress: Callable[[str], None]) -> tuple[str, bool]:
    """Relay progress lines until the child closes stdout; return (its error line, whether it timed out)."""
    error_line = ""
    while True:
        try:
            line = lines.get(timeout=max(0.05, min(1.0, deadline - time.monotonic())))
        except queue.Empty:
            if time.monotonic() >= deadline:
                _kill_group(proc.pid)
                return error_line, True
            continue
        if line is None:
            return error_line, False
        if line.startswith(PROGRESS):
            progress(line[len(PROGRESS):])
        elif line.startswith(ERROR):
            error_line = line[len(ERROR):]


def _kill_group(pid: int) -> None:
    # mineru's spawned pool workers share the child's process group (start_new_session made it a leader).
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(proc: subprocess.Popen) -> tuple[int, float]:
    """Wait for the child and return its exit code and CPU seconds, including its own waited-for children."""
    # Wait without reaping, so the pid (= the group id) cannot be reused while we kill pool workers that
    # outlived a crashed parent; then reap and read the CPU time the child and its waited-for children used.
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    _kill_group(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime
