"""Load on the Ask page: N headless Chromium sessions ask questions of bench/papers_qa.jsonl without pause for a
bounded time, then print per-answer latency p50/p95, errors and answers per minute. Prints a table, asserts
nothing, stops by itself.

    .venv/bin/python bench/load_ask.py [--workspace /tmp/papers-ws] [--sessions 8] [--duration 120] [--mode naive]
    .venv/bin/python bench/load_ask.py --url http://127.0.0.1:8501 …   (an app already running on loopback)

Without --url it serves the app itself (`streamlit run app.py` on a free loopback port, as tests/pages/
test_browser.py does) over the workspace, which should already hold the papers (bench/answers.py builds one).
Drives Debian's /usr/bin/chromium through Playwright (never `playwright install`). One warm-up question is asked
before the clock starts (the app process loads the embedding model then). A question counts as answered when its
heading shows under the form; an error is an exception box, a "could not be answered" warning or no answer within
--answer-timeout seconds.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CHROMIUM = Path("/usr/bin/chromium")
QUESTIONS = Path(__file__).with_name("papers_qa.jsonl")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


class Tally:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: list[str] = []


async def open_ask(page, url: str, mode: str | None) -> None:
    from playwright.async_api import expect

    await page.goto(f"{url}/ask")
    await expect(page.get_by_role("heading", name="Ask", exact=True)).to_be_visible(timeout=60_000)
    if mode:
        await page.get_by_test_id("stRadio").get_by_text(mode, exact=True).first.click()


async def ask_once(page, question: str, timeout_s: float) -> tuple[float, str]:
    """Seconds from the click to the answer's heading, and an error message ("" when it answered)."""
    await page.get_by_label("Question").fill(question)
    started = time.perf_counter()
    await page.get_by_role("button", name="Ask", exact=True).click()
    answered = page.get_by_role("heading", name=question, exact=True)
    failed = page.get_by_test_id("stException").or_(page.get_by_text("could not be answered"))
    try:
        await answered.or_(failed).first.wait_for(state="visible", timeout=timeout_s * 1000)
    except Exception as exc:  # playwright's TimeoutError and a page that went away
        return time.perf_counter() - started, f"no answer in {timeout_s:.0f} s ({type(exc).__name__})"
    seconds = time.perf_counter() - started
    if await failed.count() and await failed.first.is_visible():
        return seconds, "error: " + " ".join((await failed.first.inner_text()).split())[:200]
    return seconds, ""


async def session(browser, url: str, n: int, questions: list[str], deadline: float, args, tally: Tally) -> None:
    context = await browser.new_context(viewport={"width": 1300, "height": 900})
    page = await context.new_page()
    try:
        await open_ask(page, url, args.mode)
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
    except Exception as exc:
        tally.errors.append(f"session {n} stopped: {type(exc).__name__}: {str(exc)[:200]}")
    finally:
        await context.close()


async def load(url: str, questions: list[str], args) -> tuple[Tally, float]:
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
            started = time.monotonic()
            deadline = started + args.duration
            await asyncio.gather(*(session(browser, url, n, questions, deadline, args, tally)
                                   for n in range(args.sessions)))
            elapsed = time.monotonic() - started
        finally:
            await browser.close()
    return tally, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", default="/tmp/papers-ws", help="served when --url is not given")
    parser.add_argument("--url", help="an app already running on a loopback address")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--duration", type=float, default=120, help="seconds of asking (then it stops)")
    parser.add_argument("--answer-timeout", type=float, default=120)
    parser.add_argument("--mode", help="the Ask page's mode to pick (default: the workspace's default mode)")
    parser.add_argument("--split", choices=["dev", "test", "all"], default="all")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 2
    if not 1 <= args.sessions <= 32 or not 0 < args.duration <= 3600:
        print("--sessions is 1–32 and --duration at most 3600 s", file=sys.stderr)
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
              f"{len(questions)} questions", flush=True)
        tally, elapsed = asyncio.run(load(url, questions, args))
    done = len(tally.latencies)
    print()
    print("| sessions | seconds | answers | errors | answers / min | p50 s | p95 s | max s |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {args.sessions} | {elapsed:.0f} | {done} | {len(tally.errors)} | {done / (elapsed / 60):.1f} | "
          f"{pct(tally.latencies, .5):.1f} | {pct(tally.latencies, .95):.1f} | "
          f"{max(tally.latencies, default=float('nan')):.1f} |")
    for error in tally.errors[:10]:
        print(f"  {error}")
    if len(tally.errors) > 10:
        print(f"  … and {len(tally.errors) - 10} more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
