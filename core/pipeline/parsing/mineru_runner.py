"""Run mineru_worker in a child process: memory cap, deadline, stuck detection, progress, CPU time and a readable
error.

The child is kept between PDFs (`--serve`) and reused by the next parse in this process, so mineru's imports are
paid once per process rather than once per paper: 10 shared papers, one compute worker, 110 → ~94 CPU-s. A child
is thrown away (its whole process group killed) on a timeout, when the caller gives up, after a failure, and after
MAX_JOBS papers (mineru is not ours to trust with a process's memory forever).

A child is stopped, and the reason says where (core.pipeline.parsing.budget sets the limits):
- over its memory cap: its own RLIMIT_AS makes an allocation fail, or our MemoryWatch kills its process group;
- past its deadline (base + per page, capped);
- stuck: no new page for `stall_s` seconds (the worker reports each page it starts; the rule applies once it has).
"""
from __future__ import annotations

import atexit
import json
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

from core.pipeline.parsing.budget import gigabytes
from core.pipeline.parsing.memory_watch import MemoryWatch, group_rss
from core.pipeline.parsing.mineru_worker import DONE, ERROR, MEMORY_ENV, PAGE, PARENT_PID_ENV, PROGRESS
from core.settings.workspace import REPO_ROOT

_NOT_READY = re.compile(r"is not ready under (\S+?);")
# stderr lines that are noise rather than the cause of a failure
_NOISE = re.compile(r"^(\s*File \"|\s*\^+\s*$|Traceback|During handling|The above exception|warnings\.warn|"
                    r".*Explicitly closing|.*\| (INFO|DEBUG|WARNING) +\|)")


# How an allocation failure past RLIMIT_AS reads in the child's error line (Python, C++ and Rust allocators)
_OUT_OF_MEMORY = re.compile(r"MemoryError|bad_alloc|memory allocation of \d+ bytes failed|Cannot allocate memory")
STOPPED = ("memory", "deadline", "stuck")  # MineruFailed.stopped: why we stopped it ("" = it failed by itself)


class MineruFailed(Exception):
    """mineru did not produce a content list; str() is the user-facing reason."""

    def __init__(self, message: str, cpu_seconds: float = 0.0, stopped: str = "", peak_rss: int = 0):
        super().__init__(message)
        self.cpu_seconds = cpu_seconds
        self.stopped = stopped  # one of STOPPED, or ""
        self.peak_rss = peak_rss  # bytes, the child's process group at its largest


@dataclass
class MineruRun:
    out_dir: Path  # mineru's own output folder: content_list.json, images/, middle_json.json...
    cpu_seconds: float
    wall_seconds: float
    peak_rss: int = 0  # bytes, the child's process group at its largest during this parse


def _env(mineru_home: Path, tier: str, memory_bytes: int) -> dict[str, str]:
    env = dict(os.environ)
    if memory_bytes:
        env[MEMORY_ENV] = str(memory_bytes)
        # glibc reserves 64 MB of address space per thread arena; RLIMIT_AS counts reservations, so keep them few.
        env.setdefault("MALLOC_ARENA_MAX", "2")
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


MAX_JOBS = 50  # papers one child parses before a fresh one takes over
MAX_IDLE = 2  # children kept waiting in one process (one per thread that parses at once)


@dataclass
class _Child:
    key: tuple[str, str, int]  # (tier, MINERU_HOME, memory cap): a child serves only the settings it started with
    proc: subprocess.Popen
    lines: queue.Queue  # its stdout, line by line; None once it closed
    err: object  # the temporary file its stderr goes to
    jobs: int = 0
    reported_cpu: float = 0.0  # CPU-s its "done" lines accounted for


_idle: list[_Child] = []
_lock = threading.Lock()
_cpu_used = [0.0]  # CPU-s of every mineru child of this process, parsing or gone


def children_cpu_seconds() -> float:
    """CPU-seconds all mineru children of this process have used so far: what RUSAGE_CHILDREN cannot say about a
    child that is still alive (the compute task's CPU accounting adds it to the process's own)."""
    return _cpu_used[0]


def _start(key: tuple[str, str, int]) -> _Child:
    tier, home, memory_bytes = key
    err = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    # A file, not a pipe, for stderr: mineru can log more than a pipe buffer holds before we read it.
    try:
        proc = subprocess.Popen([sys.executable, "-m", "core.pipeline.parsing.mineru_worker", "--serve"],
                                cwd=REPO_ROOT, env=_env(Path(home), tier, memory_bytes), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True)
    except OSError as exc:
        err.close()
        raise MineruFailed(f"cannot start mineru: {exc.strerror or exc}") from None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_pump, args=(proc.stdout, lines), name="papergraph-mineru-out", daemon=True).start()
    return _Child(key, proc, lines, err)


def _checkout(key: tuple[str, str, int]) -> _Child:
    """An idle child of these settings, or a new one; idle children of other settings are closed."""
    with _lock:
        others = [c for c in _idle if c.key != key or not _alive(c.proc)]
        mine = [c for c in _idle if c not in others]
        _idle[:] = mine[1:]
    for child in others:
        _close(child)
    return mine[0] if mine else _start(key)


def _checkin(child: _Child) -> None:
    # A kept child's memory creeps up paper after paper (soak: ~0.3 GB after its first paper, ~0.7 GB after 90):
    # one holding half its cap between papers is replaced, so an ordinary paper never meets the cap in it.
    cap = child.key[2]
    if cap and group_rss(child.proc.pid) > cap // 2:
        _close(child)
        return
    with _lock:
        if child.jobs < MAX_JOBS and len(_idle) < MAX_IDLE and _alive(child.proc):
            _idle.append(child)
            return
    _close(child)


def _close(child: _Child) -> tuple[int, float]:
    """Kill the child's process group, reap it, count its CPU; its exit code and the CPU-s of its last job."""
    _kill_group(child.proc.pid)
    returncode, lifetime = _reap(child.proc)
    unreported = max(lifetime - child.reported_cpu, 0.0)
    with _lock:
        _cpu_used[0] += unreported
    try:
        child.proc.stdin.close()
    except OSError:
        pass
    child.err.close()
    return returncode, unreported


@atexit.register
def _close_idle() -> None:
    with _lock:
        children, _idle[:] = list(_idle), []
    for child in children:
        _close(child)


def _job_stderr(child: _Child, offset: int) -> str:
    child.err.flush()
    child.err.seek(offset)
    text = child.err.read()
    child.err.seek(0, os.SEEK_END)
    return text


def run_mineru(pdf_path: Path, work_dir: Path, *, tier: str, mineru_home: Path, timeout_s: float,
               progress: Callable[[str], None], memory_bytes: int = 0, stall_s: float = 0.0,
               page_range: str = "all") -> MineruRun:
    """Parse `pdf_path` into `work_dir` in a child process; raise MineruFailed with a specific reason.
    memory_bytes: the child's cap (0: none); timeout_s: its deadline; stall_s: how long one page may take (0: no
    limit); page_range: MinerU's syntax ("1-5,8-14"), page numbers of the whole PDF."""
    try:
        mineru_home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MineruFailed(f"cannot create mineru's home folder {mineru_home}: {exc.strerror}") from None
    key = (tier, str(Path(mineru_home).resolve()), int(memory_bytes))
    job = json.dumps({"pdf": str(Path(pdf_path).resolve()), "out": str(Path(work_dir).resolve()), "tier": tier,
                      "pages": page_range or "all"})
    start = time.monotonic()
    limits = _Limits(start + timeout_s, timeout_s, stall_s)
    for attempt in range(2):
        child = _checkout(key)
        fresh = child.jobs == 0
        offset = os.fstat(child.err.fileno()).st_size
        try:
            with MemoryWatch(child.proc.pid, int(memory_bytes)) as watch:
                child.proc.stdin.write(job + "\n")
                child.proc.stdin.flush()
                outcome = _follow(child.lines, limits, progress, watch)
        except (BrokenPipeError, OSError):
            outcome = None  # it died while idle: below
        except BaseException:
            # The caller gave up (a progress callback raised, Ctrl-C): leave no orphaned mineru behind.
            _close(child)
            raise
        if outcome is None or (outcome.cpu is None and not outcome.said and not outcome.stopped):
            # A kept child that died while idle (it is tied to the thread that started it, which may have ended)
            # has parsed nothing of this PDF: once, try a fresh one.
            stderr = _job_stderr(child, offset)
            returncode, cpu = _close(child)
            if not fresh and attempt == 0:
                continue
            raise MineruFailed(explain_failure("", stderr, tier, mineru_home, returncode), cpu)
        break
    wall = time.monotonic() - start
    if outcome.error and _OUT_OF_MEMORY.search(outcome.error) and memory_bytes:
        outcome.stopped = "memory"  # an allocation failed at the child's RLIMIT_AS
    if outcome.stopped:
        _, cpu = _close(child)
        raise MineruFailed(_stop_reason(outcome, limits, int(memory_bytes)),
                           outcome.cpu if outcome.cpu is not None else cpu, outcome.stopped, watch.peak)
    if outcome.cpu is None or outcome.error:  # it died mid-parse, or said why it failed (and exits)
        stderr = _job_stderr(child, offset)
        returncode, cpu = _close(child)
        # A child that said why exits on its own (code 2): its reason stands, whatever the kill raced it to.
        raise MineruFailed(explain_failure(outcome.error, stderr, tier, mineru_home,
                                           2 if outcome.error else returncode),
                           outcome.cpu if outcome.cpu is not None else cpu, peak_rss=watch.peak)
    child.jobs += 1
    child.reported_cpu += outcome.cpu
    with _lock:
        _cpu_used[0] += outcome.cpu
    _checkin(child)
    if not (Path(work_dir) / "content_list.json").is_file():
        raise MineruFailed("mineru finished without writing a content list", outcome.cpu, peak_rss=watch.peak)
    return MineruRun(Path(work_dir), outcome.cpu, wall, watch.peak)


@dataclass
class _Limits:
    deadline: float  # time.monotonic() past which the child is stopped
    timeout_s: float
    stall_s: float


@dataclass
class _Outcome:
    error: str = ""  # the child's "error:" line
    cpu: float | None = None  # from its "done:" line; None: it never said it was done
    stopped: str = ""  # one of STOPPED when we stopped it
    said: bool = False  # it said anything at all about this PDF
    page: str = ""  # the page it last started, "6/14"
    stage: str = ""  # what it does on that page: reading, layout
    page_at: float = 0.0  # when it started it (time.monotonic()); 0: it has reported no page yet


def _stop_reason(outcome: _Outcome, limits: _Limits, memory_bytes: int) -> str:
    number, _, last = outcome.page.partition("/")
    where = f" on page {number} of {last}" if outcome.page else ""
    if outcome.stopped == "memory":
        return f"MinerU stopped at {gigabytes(memory_bytes)}{where}"
    if outcome.stopped == "stuck":
        return f"MinerU was stuck{where} for {limits.stall_s:g} s"
    return f"MinerU stopped at its {limits.timeout_s:g} s deadline{where}"


def _follow(lines: queue.Queue[str | None], limits: _Limits, progress: Callable[[str], None],
            watch: MemoryWatch) -> _Outcome:
    """Relay progress lines until the child says it is done or closes stdout, or a limit stops it."""
    outcome = _Outcome()
    while True:
        try:
            line = lines.get(timeout=max(0.05, min(0.5, limits.deadline - time.monotonic())))
        except queue.Empty:
            line = ""
        now = time.monotonic()
        if watch.tripped.is_set():
            outcome.stopped = "memory"  # the watch killed its process group
            return outcome
        if now >= limits.deadline:
            outcome.stopped = "deadline"
            return outcome
        if limits.stall_s and outcome.page_at and now - outcome.page_at > limits.stall_s:
            outcome.stopped = "stuck"
            return outcome
        if line is None:
            return outcome
        if not line:
            continue
        outcome.said = True
        if line.startswith(PAGE):
            page, _, stage = line[len(PAGE):].partition(" ")
            if (page, stage) != (outcome.page, outcome.stage):
                outcome.page, outcome.stage, outcome.page_at = page, stage, now
            number, _, last = page.partition("/")
            progress(f"mineru: {'reading' if stage == 'reading' else 'laying out'} page {number} of {last}")
        elif line.startswith(PROGRESS):
            outcome.page_at = 0.0  # past the pages (assembling, writing): the deadline and the cap still hold
            progress(line[len(PROGRESS):])
        elif line.startswith(ERROR):
            outcome.error = line[len(ERROR):]
        elif line.startswith(DONE):
            try:
                outcome.cpu = float(line[len(DONE):])
            except ValueError:
                outcome.cpu = 0.0
            return outcome


def _kill_group(pid: int) -> None:
    # mineru's spawned pool workers share the child's process group (start_new_session made it a leader).
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _alive(proc: subprocess.Popen) -> bool:
    """Whether the child still runs, without reaping it (Popen.poll would: _reap needs the exit status)."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
    except ChildProcessError:
        return False


def _reap(proc: subprocess.Popen) -> tuple[int, float]:
    """Wait for the child and return its exit code and CPU seconds, including its own waited-for children."""
    # Wait without reaping, so the pid (= the group id) cannot be reused while we kill pool workers that
    # outlived a crashed parent; then reap and read the CPU time the child and its waited-for children used.
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    _kill_group(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime
