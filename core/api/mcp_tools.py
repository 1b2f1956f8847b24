"""PaperGraph as an MCP server (the official SDK's MCPServer): tools an assistant calls to find, read and cite
passages of the collection, and resources for its papers and pages. Served over stdio (`python -m core mcp`, for
a desktop assistant) or streamable HTTP under /mcp of `python -m core serve`.

Every tool result carries its citations twice: in the text the model reads ([n] paper, page, box, quote) and in
the structured content (`citations`), so the assistant can cite page and region (list_evaluation_runs, which
reports scores rather than the papers, has none). Every tool reads; none changes the workspace (uploads and
deletions are REST's, for an editor's token)."""
from __future__ import annotations

import json
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from core.library import Library
from core.service import ask as ask_service
from core.service import evaluation, graph, papers, passages, search
from core.service import results as results_service
from core.service.errors import ServiceError
from core.service.records import Citation, EvalRunInfo, Record

INSTRUCTIONS = """PaperGraph answers from a collection of scientific papers and cites page-level evidence.
Use search_papers to find passages, ask for a cited answer, get_passage to read around a citation,
graph_neighbours to see what an entity is linked to across papers, graph_path for how two entities connect,
get_paper and cite for metadata and BibTeX; results for the numbers papers report on a dataset (leaderboards);
list_evaluation_runs for which mode scored best on this collection.
Quote the citations ([n] paper, page) when you use a result."""

ASK_DESCRIPTION = """Answer a question from the papers, with citations ([n] markers; each citation gives paper, page,
box and a quote). `reader`: select (a model chooses the sentence that answers; quoted verbatim), write (a model
writes prose, checked against the passages) or extractive (no model); default: the server's. Without a model the
answer is extractive. "No passage answers this directly" means "not found", not a failure.
Choose the mode by the question:
- mix (default, best general choice): passages by meaning and keywords, plus the entity graph.
- naive: one fact stated in one passage ("What F1 does X report on SQuAD?"); fastest.
- local: a question about specific named things (a method, dataset, metric) and their relations.
- global: a theme across papers ("How do papers evaluate scientific document embeddings?").
- hybrid: local + global.
- ppr: two-hop questions whose answer goes through a bridge entity ("Which dataset was used by the model that
  introduced X?").
- community: an overview of the whole collection (needs the graph's community reports).
Modes the workspace cannot run are refused with the reason. `papers` restricts to paper ids; use_llm=false asks for
the extractive answer even when the server has an LLM (faster; quotes only)."""

EVAL_DESCRIPTION = """Saved evaluation runs of this collection: a question set with reference answers asked through
several modes, each scored (EM, F1, contains_reference, Recall@k, MRR, NDCG, evidence_in_context, seconds; RAGAS
when run). Use it when the user asks which mode answers best here, how good retrieval is on this collection, or
about an evaluation's results; not to answer a question about the papers (use ask). Lists the newest `limit` runs
with each mode's mean of every metric (n: answers scored, missing: answers it could not be computed for); give
`run_id` for that run's rows, one per question and mode. Read-only: runs are started from the Evaluate page or
`python -m core eval`."""

RESULTS_DESCRIPTION = """The numbers the papers' tables report, as leaderboards: one per dataset and metric, best
first by the metric's direction, each row with method, value as printed, setting, paper, year and its citation (page,
table, row, column). Use it for "what is the best F1 on X", "which papers report results on Y", "what does method Z
reach on Y"; names are matched as typed (case and punctuation aside). Filters: dataset, metric, method, paper (id
prefix or title words), year ("2020" or "2018-2020"), setting ("test", "zero-shot"), query (words in the names or
captions). An empty result says why (no such dataset, nothing stored)."""

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)


def citation_lines(citations: list[Citation]) -> str:
    lines = []
    for c in citations:
        where = f", page {c.page}" if c.page else ""
        box = f", box {[round(v) for v in c.box]}" if c.box else ""
        lines.append(f"[{c.n}] {c.paper} (paper {c.paper_id[:12]}{where}{box}): \"{c.quote}\"")
    return "\n".join(lines)


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def run_line(run: EvalRunInfo) -> str:
    """A run for a model to read: what, when, how far, then one line per mode with its metric means."""
    lines = [f"run {run.id} \"{run.name}\" on question set {run.question_set!r} ({run.created}): {run.status}, "
             f"{run.done} of {run.total} answers scored" + (f"; {run.message}" if run.message else "")]
    for mode, metrics in run.summary.items():
        lines.append(f"  {mode}: " + ", ".join(f"{name} {_score(m.mean)}" for name, m in metrics.items()))
    return "\n".join(lines)


def result(text: str, record: Record | dict) -> CallToolResult:
    data = record.to_dict() if isinstance(record, Record) else record
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


async def _run(work):
    """`work()` in a worker thread that the call lets go of when it is cancelled (the client cancels, the server
    stops). A thread cannot be interrupted: the SDK runs a sync tool in one that a cancel must wait for, so an `ask`
    waiting on a slow LLM held the session manager's shutdown, and `core serve` ignored SIGTERM until it returned.
    A thread let go of finishes its call unseen; the process may end first."""
    try:
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except ServiceError as exc:
        raise ToolError(f"{exc.code}: {exc.message}") from None


def build_mcp(lib: Library, save_history: bool = True) -> MCPServer:
    server = MCPServer(name="papergraph", title="PaperGraph", instructions=INSTRUCTIONS)

    @server.tool(description="Find passages of the papers matching a query by meaning (not an answer: use ask for "
                             "that). Returns up to top_k passages, each a citation with paper, page, box and the "
                             "matched text. `papers` restricts to paper ids; `kinds` to text, table, image, "
                             "equation.", annotations=READ_ONLY)
    async def search_papers(query: str, top_k: int = 5, papers: list[str] | None = None,
                      kinds: list[str] | None = None) -> CallToolResult:
        found = await _run(lambda: search.search(lib, query, top_k=top_k, papers=papers, kinds=kinds))
        text = citation_lines(found.citations) or "No passage matches (is any paper ready? see get_paper)."
        return result(text, found)

    @server.tool(description=ASK_DESCRIPTION, annotations=READ_ONLY)
    async def ask(question: str, mode: str | None = None, papers: list[str] | None = None,
            use_llm: bool = True, reader: str | None = None) -> CallToolResult:
        answer = await _run(lambda: ask_service.ask(lib, question, mode, papers=papers, use_llm=use_llm, reader=reader,
                                                    save=save_history))
        text = f"{answer.answer}\n\nCitations ({answer.mode} mode):\n{citation_lines(answer.citations)}"
        return result(text, answer)

    @server.tool(description="Read a paper where a citation points: the text of a page (page from 1), only the "
                             "items inside a box on it ([x0, y0, x1, y1], 0-1000 page coordinates, as citations "
                             "give), or a whole passage by its chunk_id. Use it to read around a quote before "
                             "relying on it.", annotations=READ_ONLY)
    async def get_passage(paper_id: str, page: int | None = None, box: list[float] | None = None,
                    chunk_id: str | None = None) -> CallToolResult:
        found = await _run(lambda: passages.get_passage(lib, paper_id, page=page, box=box, chunk_id=chunk_id))
        return result(f"{found.text}\n\nCitation:\n{citation_lines(found.citations)}", found)

    @server.tool(description="A paper's metadata: title, file name, pages, status (ready papers are searchable), "
                             "year when the paper states it. paper_id: the id or its first 6+ characters.",
                 annotations=READ_ONLY)
    async def get_paper(paper_id: str) -> CallToolResult:
        info = await _run(lambda: papers.get_paper(lib, paper_id))
        citation = Citation(n=1, paper_id=info.id, paper=info.title, page=None, box=None, quote=info.title)
        data = {**info.to_dict(), "citations": [citation.to_dict()]}
        return result(json.dumps(info.to_dict(), indent=1) + f"\n\nCitation:\n{citation_lines([citation])}", data)

    @server.tool(description="What an entity (a method, dataset, metric, task, person… named as the papers name "
                             "it) is linked to in the collection's graph: its neighbours with the relation, the papers "
                             "that mention it, and passages it was extracted from (citations). Use it to explore "
                             "connections; use ask for a direct question.", annotations=READ_ONLY)
    async def graph_neighbours(entity: str, limit: int = 20) -> CallToolResult:
        found = await _run(lambda: graph.neighbours(lib, entity, limit))
        lines = [f"{found.name} ({found.type}): {found.description[:300]}", "", "Neighbours:"]
        lines += [f"- {n.name} ({n.type}) — {n.relation}, weight {n.weight:g}" for n in found.neighbours]
        if found.more_neighbours:
            lines.append(f"- … and {found.more_neighbours} more")
        lines += ["", "Citations:", citation_lines(found.citations)]
        return result("\n".join(lines), found)

    @server.tool(description="How two entities are connected across the papers: up to k shortest paths in the "
                             "graph, each link with the passage that states it (citations). Use it for 'what links X "
                             "and Y'; an empty list means the graph does not connect them.", annotations=READ_ONLY)
    async def graph_path(source: str, target: str, k: int = 3) -> CallToolResult:
        found = await _run(lambda: graph.paths(lib, source, target, k))
        lines = [f"{len(found.paths)} path(s) from {found.source} to {found.target}:"]
        for path in found.paths:
            lines.append(" → ".join([path[0].source] + [
                f"{h.target}{f' [{h.citation}]' if h.citation else ''}" for h in path]) if path else "")
        lines += ["", "Citations:", citation_lines(found.citations)]
        return result("\n".join(lines), found)

    @server.tool(description="BibTeX entries for papers by id: title, authors, year, venue, DOI and arXiv id as "
                             "read from each paper's first page (or corrected by its owner); check a field before "
                             "publishing, since what a PDF prints is not always complete.", annotations=READ_ONLY)
    async def cite(paper_ids: list[str]) -> CallToolResult:
        bibtex = await _run(lambda: papers.cite(lib, paper_ids))
        infos = [await _run(lambda p=p: papers.get_paper(lib, p)) for p in paper_ids]
        cites = [Citation(n=i, paper_id=p.id, paper=p.title, page=None, box=None, quote=p.title)
                 for i, p in enumerate(infos, 1)]
        # BibTeX ignores lines outside entries: the citations follow as comments, so the text stays valid BibTeX.
        comments = "\n".join(f"% {line}" for line in citation_lines(cites).splitlines())
        return result(f"{bibtex}\n\n{comments}", {"bibtex": bibtex, "citations": [c.to_dict() for c in cites]})

    @server.tool(description=RESULTS_DESCRIPTION, annotations=READ_ONLY)
    async def results(dataset: str | None = None, metric: str | None = None, method: str | None = None,
                            paper: str | None = None, year: str | None = None, setting: str | None = None,
                            query: str | None = None, limit: int = 20) -> CallToolResult:
        view = await _run(lambda: results_service.leaderboard(
            lib, dataset=dataset, metric=metric, method=method, paper=paper, year=year, setting=setting, query=query,
            limit=limit))
        cites = results_service.citations(view)
        lines, n = [], 0
        for board in view.boards:
            towards = f"{board.direction} is better" if board.direction else "direction not stated"
            lines.append(f"{board.dataset or '(dataset not named)'} — {board.metric} ({towards}):")
            for row in board.rows:
                n += 1
                lines.append(f"  {row.rank}. {row.method}: {row.value_text}"
                             + (f" [{row.setting}]" if row.setting else "") + f" — {row.paper} [{n}]")
        text = "\n".join(lines) or (view.note or "No results match.")
        return result(f"{text}\n\nCitations:\n{citation_lines(cites)}" if cites else text,
                      {**view.to_dict(), "citations": [c.to_dict() for c in cites]})

    @server.tool(description=EVAL_DESCRIPTION, annotations=READ_ONLY)
    async def list_evaluation_runs(run_id: str | None = None, limit: int = 10) -> CallToolResult:
        if run_id is not None:
            detail = await _run(lambda: evaluation.get_run(lib, run_id))
            lines = [run_line(detail.run), ""]
            lines += [f"- {r.question_id} [{r.mode}] {r.question[:120]!r}: "
                      + ", ".join(f"{k} {_score(v)}" for k, v in r.scores.items())
                      + (f" (error: {r.error[:120]})" if r.error else "") for r in detail.rows]
            return result("\n".join(lines), detail)
        runs = await _run(lambda: evaluation.list_runs(lib, limit))
        text = "\n\n".join(run_line(r) for r in runs) or ("No evaluation run is saved in this workspace (runs are "
                                                         "started from the Evaluate page or `python -m core eval`).")
        return result(text, {"runs": [r.to_dict() for r in runs]})

    @server.resource("papergraph://papers", name="papers", mime_type="application/json",
                     description="Every paper of the workspace with its id, title, file, pages and status")
    def paper_list() -> str:
        return json.dumps([p.to_dict() for p in papers.list_papers(lib)], indent=1)

    @server.resource("papergraph://papers/{paper_id}", name="paper", mime_type="application/json",
                     description="One paper's metadata")
    def paper_resource(paper_id: str) -> str:
        return json.dumps(_resource(lambda: papers.get_paper(lib, paper_id)).to_dict(), indent=1)

    @server.resource("papergraph://papers/{paper_id}/pages/{page}", name="page", mime_type="text/plain",
                     description="The text read on one page (from 1) of a paper")
    def page_resource(paper_id: str, page: str) -> str:
        if not page.isdigit():
            raise ResourceError("a page is a number from 1")
        return _resource(lambda: passages.get_passage(lib, paper_id, page=int(page))).text

    return server


def _resource(work) -> Any:
    try:
        return work()
    except ServiceError as exc:
        raise ResourceError(f"{exc.code}: {exc.message}") from None
