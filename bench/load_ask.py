"""Load on the Ask page: N headless Chromium sessions ask questions of bench/papers_qa.jsonl without pause for a
bounded time, then print per-answer latency p50/p95, errors and answers per minute. Prints a table, asserts
nothing, stops by itself.

    .venv/bin/python bench/load_ask.py [--workspace /tmp/papers-ws] [--sessions 8] [--duration 120] [--mode naive]
                                       [--think 0]
    .venv/bin/python bench/load_ask.py --url http://127.0.0.1:8501 …   (an app already running on loopback)

Without --url it serves the app itself (`streamlit run app.py` on a free loopback port, as tests/pages/
test_browser.py does) over the workspace, which should already hold the papers (bench/answers.py builds one).
Drives Debian's /usr/bin/chromium through Playwright (never `playwright install`). One warm-up question is asked
before the clock starts (the app process loads the embedding model then), and the clock starts once every session
has its page open. A question counts as answered when its
heading shows under the form and the run is over (no running icon, nothing stale); an error is an exception box,
a "could not be answered" warning or no answer within --answer-timeout seconds.

The wait for an answer is a MutationObserver in the page, not polling: polling every 50 ms (and Playwright's
locator retries) cost the browser ~0.03 CPU-s per second of waiting, about what the app's own page cost while
waiting, which is harness, not researcher.

`--think S` makes each session pause S seconds after an answer before its next question (a researcher reading
it); the latency is still click to answer. The headline is `--think 0`: every session asks without pause.
Besides latency it prints the CPU-seconds per answer of the app's process and of the Chromium processes (which
run on the same cores here, though a researcher's browser would not), split by Chromium process (renderers: the
pages' DOM, style, layout and scripts; the GPU process: compositing, in software here; the browser process), and
the load average before and after: other work on the machine moves these numbers.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from contextlib import nullcontext
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import percentile as pct  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
QUESTIONS = Path(__file__).with_name("papers_qa.jsonl")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# Streamlit's "running" icon is shown and the elements of the run before are marked stale until a run ends.
RUNNING = ("[data-testid=stStatusWidgetRunningIcon], [data-testid=stStatusWidgetRunningManIcon], "
           "[data-stale=true]")
# Resolves "answered" once the question's heading is on the page and the run is over, "failed" once an exception
# box or a "could not be answered" alert is (and the run is over), "timeout" after `ms`. Checked on each DOM change
# (a MutationObserver), never by a timer: the harness should cost the browser nothing while it waits.
ANSWER_OR_FAILURE = """([question, ms]) => new Promise((resolve) => {
  const running = %s;
  const norm = (t) => t.replace(/\\s+/g, ' ').trim();
  const state = () => {
    if (document.querySelector(running)) return '';
    const alerts = [...document.querySelectorAll('[data-testid=stAlert]')];
    if (document.querySelector('[data-testid=stException]')
        || alerts.some(a => a.textContent.includes('could not be answered'))) return 'failed';
    return [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].some(h => norm(h.textContent) === question)
      ? 'answered' : '';
  };
  let timer = null;
  const observer = new MutationObserver(() => { const s = state(); if (s) done(s); });
  const done = (s) => { observer.disconnect(); clearTimeout(timer); resolve(s); };
  timer = setTimeout(() => done('timeout'), ms);
  observer.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  const now = state();
  if (now) done(now);
})""" % json.dumps(RUNNING)


class Tally:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: list[str] = []


class Clock:
    """Starts the run once every session has opened the Ask page: loading Streamlit's page (CPU-seconds of the
    browser each) happens once per researcher, not once per question, so it is kept out of the per-answer figures
    and out of the latencies."""

    def __init__(self, sessions: int, duration: float, on_start) -> None:
        self.waiting = sessions
        self.duration = duration
        self.on_start = on_start
        self.started = asyncio.Event()
        self.start_time = 0.0

    def opened(self) -> None:
        self.waiting -= 1
        if self.waiting == 0:
            self.on_start()
            self.start_time = time.monotonic()
            self.started.set()

    async def deadline(self) -> float:
        await self.started.wait()
        return self.start_time + self.duration


class CpuMeter:
    """CPU-seconds used by the app's process and by this script's Chromium processes while it runs: sampled
    every half second in a thread, so renderers that exit (a session's context closing) still count."""

    def __init__(self, port: int | None) -> None:
        import psutil

        self.psutil = psutil
        self.server = self._server(port)
        self.server_start = self._cpu(self.server) if self.server else 0.0
        self.chromium: dict[int, tuple[float, float]] = {}  # pid -> (first seen, last seen) CPU-seconds
        self.kinds: dict[int, str] = {}  # pid -> renderer, gpu, browser or other
        self.server_end = self.server_start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _server(self, port: int | None):
        if port is None:
            return None
        for proc in self.psutil.process_iter(["cmdline"]):
            cmdline = proc.info["cmdline"] or []
            if "streamlit" in " ".join(cmdline) and str(port) in cmdline:
                return proc
        return None

    def _cpu(self, proc) -> float:
        t = proc.cpu_times()
        return t.user + t.system

    @staticmethod
    def _kind(cmdline: list[str]) -> str:
        kind = next((a.removeprefix("--type=") for a in cmdline if a.startswith("--type=")), "browser")
        return {"renderer": "renderer", "gpu-process": "gpu", "browser": "browser"}.get(kind, "other")

    def _sample(self, first: bool = False) -> None:
        for proc in self.psutil.Process().children(recursive=True):
            try:
                if "chrom" not in proc.name():
                    continue
                cpu = self._cpu(proc)
                if proc.pid not in self.kinds:
                    self.kinds[proc.pid] = self._kind(proc.cmdline())
            except self.psutil.Error:
                continue
            start = self.chromium.get(proc.pid, (cpu if first else 0.0, 0.0))[0]
            self.chromium[proc.pid] = (start, cpu)
        if self.server:
            try:
                self.server_end = self._cpu(self.server)
            except self.psutil.Error:
                pass

    def _poll(self) -> None:
        while not self._stop.wait(0.5):
            self._sample()

    def start(self) -> None:
        self._sample(first=True)
        self._thread.start()

    def stop(self) -> tuple[float, dict[str, float]]:
        """Server CPU-seconds since start (NaN when the app's process was not found) and Chromium's, per kind of
        process (renderer, gpu, browser, other)."""
        self._sample()
        self._stop.set()
        self._thread.join()
        server = self.server_end - self.server_start if self.server else float("nan")
        chromium = dict.fromkeys(("renderer", "gpu", "browser", "other"), 0.0)
        for pid, (start, end) in self.chromium.items():
            chromium[self.kinds.get(pid, "other")] += end - start
        return server, chromium


async def open_ask(page, url: str, mode: str | None) -> None:
    from playwright.async_api import expect

    await page.goto(f"{url}/ask")
    await expect(page.get_by_role("heading", name="Ask", exact=True)).to_be_visible(timeout=60_000)
    if mode:
        await page.get_by_test_id("stRadio").get_by_text(mode, exact=True).first.click()


async def ask_once(page, question: str, timeout_s: float) -> tuple[float, str]:
    """Seconds from the click to the answer's heading, and an error message ("" when it answered)."""
    await page.get_by_label("Question", exact=True).fill(question)  # not a heading about "questions"
    started = time.perf_counter()
    await page.get_by_role("button", name="Ask", exact=True).click()
    failed = page.get_by_test_id("stException").or_(page.get_by_text("could not be answered"))
    # Until the heading shows and the run is over (its sources drawn, nothing left faded as stale): what the
    # researcher reads next, and what the next question is typed into (a form still being redrawn can show twice).
    try:
        outcome = await page.evaluate(ANSWER_OR_FAILURE, [" ".join(question.split()), timeout_s * 1000])
    except Exception as exc:  # a page that went away
        outcome = type(exc).__name__
    seconds = time.perf_counter() - started
    if outcome == "failed" and await failed.count():
        return seconds, "error: " + " ".join((await failed.first.inner_text()).split())[:200]
    if outcome != "answered":
        return seconds, f"no answer in {timeout_s:.0f} s ({outcome})"
    return seconds, ""


async def session(browser, url: str, n: int, questions: list[str], clock: Clock, args, tally: Tally) -> None:
    context = await browser.new_context(viewport={"width": 1300, "height": 900})
    page = await context.new_page()
    try:
        try:
            await open_ask(page, url, args.mode)
        finally:
            clock.opened()
        deadline = await clock.deadline()
        k = n * 7  # sessions start at different places of the set
        while time.monotonic() < deadline:
            question = questions[k % len(questions)]
            k += 1
            seconds, error = await ask_once(page, question, args.answer_timeout)
            if error:
                tally.errors.append(f"session {n}: {question[:60]} — {error}")
                await open_ask(page, url, args.mode)  # a fresh page after a failure
            else:
                tally.latencies.append(seconds)
            if args.think and time.monotonic() + args.think < deadline:
                await asyncio.sleep(args.think)  # reading the answer
    except Exception as exc:
        tally.errors.append(f"session {n} stopped: {type(exc).__name__}: {str(exc)[:200]}")
    finally:
        await context.close()


async def load(url: str, questions: list[str], args) -> tuple[Tally, float, tuple[float, dict[str, float]]]:
    from playwright.async_api import async_playwright

    from tests.pages.test_browser import CHROMIUM_ARGS

    tally = Tally()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            warm = await browser.new_page()
            await open_ask(warm, url, args.mode)
            seconds, error = await ask_once(warm, questions[0], max(args.answer_timeout, 180))
            print(f"warm-up answer: {seconds:.1f} s{' — ' + error if error else ''}", flush=True)
            await warm.close()
            meter = CpuMeter(urlparse(url).port)
            clock = Clock(args.sessions, args.duration, meter.start)
            await asyncio.gather(*(session(browser, url, n, questions, clock, args, tally)
                                   for n in range(args.sessions)))
            elapsed = time.monotonic() - clock.start_time
            cpu = meter.stop()
        finally:
            await browser.close()
    return tally, elapsed, cpu


def _loads(values: tuple[float, float, float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", default="/tmp/papers-ws", help="served when --url is not given")
    parser.add_argument("--url", help="an app already running on a loopback address")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--duration", type=float, default=120, help="seconds of asking (then it stops)")
    parser.add_argument("--answer-timeout", type=float, default=120)
    parser.add_argument("--mode", help="the Ask page's mode to pick (default: the workspace's default mode)")
    parser.add_argument("--split", choices=["dev", "test", "all"], default="all")
    parser.add_argument("--think", type=float, default=0.0,
                        help="seconds a session waits after an answer before its next question (default 0)")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 2
    if not 1 <= args.sessions <= 32 or not 0 < args.duration <= 3600 or not 0 <= args.think <= 600:
        print("--sessions is 1–32, --duration at most 3600 s and --think 0–600 s", file=sys.stderr)
        return 2
    if args.url and urlparse(args.url).hostname not in LOOPBACK:
        print("--url must be a loopback address", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [r["question"] for r in rows if args.split == "all" or r.get("split") == args.split]

    from tests.pages.test_browser import serve_app

    log = Path(args.workspace) / "load_ask-streamlit.log"
    serving = nullcontext(args.url.rstrip("/")) if args.url else serve_app(Path(args.workspace), log)
    with serving as url:
        print(f"app {url} (workspace {args.workspace}); {args.sessions} sessions × {args.duration:.0f} s, "
              f"think {args.think:g} s, {len(questions)} questions", flush=True)
        load_before = os.getloadavg()
        tally, elapsed, (server_cpu, browser_cpu) = asyncio.run(load(url, questions, args))
        load_after = os.getloadavg()
    done = len(tally.latencies)
    print()
    print(f"load average (1, 5, 15 min) before: {_loads(load_before)}; after: {_loads(load_after)}")
    print("| sessions | think s | seconds | answers | errors | answers / min | p50 s | p95 s | max s | "
          "server CPU-s / answer | Chromium CPU-s / answer (renderers + GPU + browser + other) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    per = max(done, 1)
    parts = " + ".join(f"{browser_cpu[k] / per:.3f}" for k in ("renderer", "gpu", "browser", "other"))
    print(f"| {args.sessions} | {args.think:g} | {elapsed:.0f} | {done} | {len(tally.errors)} | "
          f"{done / (elapsed / 60):.1f} | {pct(tally.latencies, .5):.2f} | {pct(tally.latencies, .95):.2f} | "
          f"{max(tally.latencies, default=float('nan')):.2f} | {server_cpu / per:.3f} | "
          f"{sum(browser_cpu.values()) / per:.3f} ({parts}) |")
    for error in tally.errors[:10]:
        print(f"  {error}")
    if len(tally.errors) > 10:
        print(f"  … and {len(tally.errors) - 10} more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
