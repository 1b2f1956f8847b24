"""Asking and evaluating: ask, eval. The query engine and the evaluation runner are imported by the command
that needs them, so `python -m core docs` does not pay for them."""
from __future__ import annotations

import sys
from pathlib import Path

from core.cli.common import resolve_ids, say
from core.library import Library
from core.query.routes import available_modes, default_modes, unavailable_reason
from core.schema.modes import Mode


def cmd_ask(lib: Library, args) -> int:
    from core.query.engine import QueryError, ask
    from core.query.history import LOCAL_OWNER
    from core.query.records import QueryParams
    from core.query.report import dumps, result_text

    if args.mode and (reason := unavailable_reason(lib, args.mode)):
        print(f"error: {reason}", file=sys.stderr)
        return 2
    try:
        params = QueryParams.from_config(lib.settings.query, mode=args.mode, top_k=args.top_k,
                                         chunk_top_k=args.chunk_top_k, context_only=args.context_only,
                                         rerank=False if args.no_rerank else None,
                                         use_llm=False if args.no_llm else None, reader=args.reader,
                                         doc_ids=resolve_ids(lib, args.paper) or None)
        streamed = []
        on_token = None if args.json or args.context_only else streamed.append
        # Run by the machine's own user: its history is the loopback app's local user's (core.query.history).
        result = ask(lib, args.question, params, on_token=on_token, owner=LOCAL_OWNER)
    except (QueryError, ValueError) as exc:
        say(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(dumps(result))  # JSON escapes control characters itself
    else:
        say(result_text(result), lines=True)  # the answer, passages and titles: LLM and paper text
    return 0


def cmd_eval(lib: Library, args) -> int:
    from core.eval.questions import QuestionSetError, parse_question_set
    from core.eval.report import dumps, run_json, summary_markdown
    from core.eval.runner import EvalOptions, Progress, run_eval, summarise

    path = Path(args.questions)
    try:
        questions = parse_question_set(path.read_bytes(), path.name)
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    except QuestionSetError as exc:  # the messages quote the file's ids and cells
        say(f"error: {exc}", file=sys.stderr)
        for row_error in exc.errors:
            say(f"  {row_error}", file=sys.stderr)
        return 2
    modes = [m.strip() for m in args.modes.split(",") if m.strip()] if args.modes else \
        default_modes(available_modes(lib))
    unknown = [m for m in modes if m not in list(Mode)]
    if unknown or not modes:
        print(f"error: unknown mode(s) {', '.join(unknown) or '(none)'}: choose from {', '.join(Mode)}",
              file=sys.stderr)
        return 2
    if reasons := [r for r in (unavailable_reason(lib, m) for m in modes) if r]:
        print(f"error: {reasons[0]}", file=sys.stderr)
        return 2
    if not lib.documents.ready_papers():
        print("error: no paper is ready in this workspace: ingest some first (python -m core ingest …)",
              file=sys.stderr)
        return 2
    options = EvalOptions(modes=modes, k=args.k, use_llm=not args.no_llm, ragas=not args.no_ragas,
                          ragas_judge=not args.no_judge, rerank=False if args.no_rerank else None,
                          limit=args.limit or 0, answer_style=args.answer_style)
    try:
        options.check()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    store = lib.eval_store
    qset = store.save_set(args.name or path.stem, questions, source=path.name)

    def progress(p: Progress) -> None:
        if not args.quiet:
            eta = f", about {p.eta_s:.0f} s left" if p.eta_s is not None else ""
            print("\r", end="", file=sys.stderr)  # redraws the line: the message itself may quote a question
            say(f"[{p.fraction:4.0%}] {p.message}{eta}   ", end="", file=sys.stderr)
            sys.stderr.flush()

    def started(run) -> None:
        if not args.quiet:
            print(f"run {run.id}: {len(questions)} questions × {len(modes)} modes "
                  f"(cancel from the Evaluate page, or Ctrl-C)", file=sys.stderr)

    try:
        outcome = run_eval(lib, qset, options, on_progress=progress, on_start=started, label=args.label or "")
    except ValueError as exc:
        say(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: the questions finished so far are saved; resume from the Evaluate page",
              file=sys.stderr)
        return 130
    if not args.quiet:
        print(file=sys.stderr)
    if outcome.judge_note:
        say(f"note: {outcome.judge_note}", file=sys.stderr)
    say(summary_markdown(summarise(outcome.results)), lines=True)
    if args.out:
        Path(args.out).write_text(dumps(run_json(store, outcome.run)), encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0
