"""The REST face: /api/… over the service layer. Each route checks the caller's role, calls one service function
and returns its record as JSON; errors leave as the one shape of core/api/errors.py."""
from __future__ import annotations

import json
import logging
import queue
import threading
import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse, StreamingResponse
from pydantic import BaseModel, Field
from starlette.requests import ClientDisconnect

from core.api.errors import FORBIDDEN, ApiError, body
from core.api.guard import Principal
from core.service import ask as ask_service
from core.service import evaluation, graph, papers, passages, results, search, status
from core.service.errors import INVALID_INPUT, TOO_LARGE, ServiceError
from core.service.ingest import check_upload_name
from core.service.inputs import clean_question
from core.service.records import (
    AskResult,
    EvalRunDetail,
    EvalRunInfo,
    GraphPaths,
    Neighbourhood,
    PaperInfo,
    Passage,
    ResultName,
    ResultsView,
    SearchResult,
    Status,
    UploadResult,
)
from core.service.results_export import export

audit = logging.getLogger("papergraph.audit")
router = APIRouter(prefix="/api")


def caller(request: Request) -> Principal:
    return request.state.principal


def editor(request: Request) -> Principal:
    who = caller(request)
    if not who.is_editor:
        raise ApiError(FORBIDDEN, f"{who.name}'s token is a viewer's: uploading and deleting papers need an editor's")
    return who


Caller = Annotated[Principal, Depends(caller)]
Editor = Annotated[Principal, Depends(editor)]


class AskRequest(BaseModel):
    question: str = Field(description="the question, up to 4,000 characters")
    mode: str | None = Field(None, description="naive, local, global, hybrid, mix, ppr or community; default: the "
                                               "workspace's")
    use_llm: bool = Field(True, description="false: the LLM-free extractive answer even when an LLM is configured")
    reader: str | None = Field(None, description="extractive, select, write or auto; default: the workspace's")
    top_k: int | None = Field(None, description="entities / relations taken from the graph")
    chunk_top_k: int | None = Field(None, description="passages kept")
    papers: list[str] = Field(default_factory=list, description="restrict to these paper ids (or id prefixes)")
    stream: bool = Field(False, description="true: server-sent events (`token` with each `delta` of the answer as it "
                                            "is written, then `result`)")


def _ask_kwargs(request: Request, req: AskRequest) -> dict:
    principal = request.state.principal
    return dict(mode=req.mode, use_llm=req.use_llm, top_k=req.top_k, chunk_top_k=req.chunk_top_k, reader=req.reader,
                owner=ask_service.history_owner(principal.name, bool(principal.token_id)),
                papers=req.papers, save=request.app.state.config.save_history)


@router.get("/status", response_model=Status, summary="The workspace: papers by status, graph size, modes")
def get_status(request: Request, _: Caller):
    return status.status(request.app.state.lib, ingesting=request.app.state.ingest.busy)


@router.get("/papers", response_model=list[PaperInfo], summary="Every paper with its status")
def list_papers(request: Request, _: Caller):
    return papers.list_papers(request.app.state.lib)


@router.get("/papers/{paper_id}", response_model=PaperInfo,
            summary="A paper's metadata and, while it is processed, its stage (poll this after an upload)")
def get_paper(request: Request, paper_id: str, _: Caller):
    return papers.get_paper(request.app.state.lib, paper_id)


@router.delete("/papers/{paper_id}", response_model=PaperInfo, summary="Delete a paper and all derived from it")
def delete_paper(request: Request, paper_id: str, who: Editor):
    info = papers.delete_paper(request.app.state.lib, paper_id)
    audit.info("delete paper %s (%s) by %s", info.id[:12], info.file, who.describe())
    return info


@router.post("/papers", response_model=UploadResult, status_code=202,
             summary="Upload a paper: the raw file as the body, its name in ?filename=; processed in the background",
             openapi_extra={"requestBody": {"content": {"application/octet-stream": {
                 "schema": {"type": "string", "format": "binary"}}}, "required": True}})
async def upload(request: Request, who: Editor, filename: Annotated[str, Query(max_length=1000)]):
    lib, ingest, limit = request.app.state.lib, request.app.state.ingest, request.app.state.config.max_upload_bytes
    check_upload_name(filename)  # before a byte of the body is read
    lib.workspace.staging_dir.mkdir(parents=True, exist_ok=True)
    path = lib.workspace.staging_dir / f"api-upload-{uuid.uuid4().hex}"
    try:
        written = 0
        with open(path, "wb") as out:  # streamed to disk: the body is never held in memory whole
            async for chunk in request.stream():
                written += len(chunk)
                if written > limit:
                    raise ServiceError(TOO_LARGE, f"the file is over the limit of {limit:,} bytes")
                out.write(chunk)
        result = await run_in_threadpool(ingest.add_file, filename, path)
    except ClientDisconnect:
        raise ServiceError(INVALID_INPUT, "the upload was interrupted before its end; nothing was added") from None
    finally:
        path.unlink(missing_ok=True)
    audit.info("upload %s paper %s (%s, %d bytes) by %s", result.outcome, result.paper_id[:12], result.file,
               written, who.describe())
    return result


@router.get("/cite", summary="BibTeX of papers (minimal: title, year when known, file name)")
def cite(request: Request, _: Caller, paper: Annotated[list[str], Query()]):
    return {"bibtex": papers.cite(request.app.state.lib, paper)}


@router.get("/papers/{paper_id}/passage", response_model=Passage,
            summary="The text of a page (1-based), of the items inside a box on it, or of a chunk")
def get_passage(request: Request, paper_id: str, _: Caller, page: int | None = None,
                box: Annotated[str | None, Query(description="x0,y0,x1,y1 in 0-1000 page coordinates")] = None,
                chunk: str | None = None):
    values = None
    if box is not None:
        try:
            values = [float(v) for v in box.split(",")]
        except ValueError:
            values = []  # check_box says what a box is
    return passages.get_passage(request.app.state.lib, paper_id, page=page, box=values, chunk_id=chunk)


@router.get("/search", response_model=SearchResult, summary="Passages matching a query, with page and box")
def search_papers(request: Request, _: Caller, q: str, top_k: int = 5,
                  paper: Annotated[list[str] | None, Query()] = None,
                  kind: Annotated[list[str] | None, Query()] = None):
    return search.search(request.app.state.lib, q, top_k=top_k, papers=paper, kinds=kind)


@router.get("/graph/neighbours", response_model=Neighbourhood,
            summary="An entity, its neighbours in the graph and the passages it comes from")
def neighbours(request: Request, _: Caller, entity: str, limit: int = 20):
    return graph.neighbours(request.app.state.lib, entity, limit)


@router.get("/graph/path", response_model=GraphPaths,
            summary="The shortest paths between two entities, each link with the passage that states it")
def graph_path(request: Request, _: Caller, source: str, target: str, k: int = 3):
    return graph.paths(request.app.state.lib, source, target, k)


@router.get("/eval/runs", response_model=list[EvalRunInfo],
            summary="Saved evaluation runs, newest first, each with every mode's mean of every metric")
def eval_runs(request: Request, _: Caller, limit: int = 20,
              question_set: Annotated[str | None, Query(description="only runs of this set (name or id)")] = None):
    return evaluation.list_runs(request.app.state.lib, limit, question_set)


@router.get("/eval/runs/{run_id}", response_model=EvalRunDetail,
            summary="One evaluation run and its rows, one per question and mode, with every score")
def eval_run(request: Request, run_id: str, _: Caller,
             contexts: Annotated[bool, Query(description="add the passages each answer was given")] = False):
    return evaluation.get_run(request.app.state.lib, run_id, contexts)


_EXPORT_TYPES = {"csv": "text/csv", "markdown": "text/markdown", "latex": "application/x-latex"}


@router.get("/results", response_model=ResultsView,
            summary="Leaderboards of the numbers the papers' tables report, per dataset and metric, best first, "
                    "each row cited to its paper, page and table cell; format=csv|markdown|latex for an export")
def results_board(request: Request, _: Caller, dataset: str | None = None, metric: str | None = None,
                  method: str | None = None, paper: str | None = None, year: str | None = None,
                  setting: str | None = None, q: str | None = None, limit: int = 100,
                  format: Annotated[str, Query(pattern="^(json|csv|markdown|latex)$")] = "json"):
    view = results.leaderboard(request.app.state.lib, dataset=dataset, metric=metric, method=method, paper=paper,
                               year=year, setting=setting, query=q, limit=limit)
    if format == "json":
        return view
    # Text from the papers, escaped for the format; served as an attachment so a browser never renders it.
    return PlainTextResponse(export(view, format), media_type=_EXPORT_TYPES[format],
                             headers={"Content-Disposition": f'attachment; filename="results.{format[:3]}"'})


@router.get("/results/names", response_model=list[ResultName],
            summary="The datasets, metrics or methods the results name, with counts (metrics of one dataset)")
def result_names(request: Request, _: Caller,
                 kind: Annotated[str, Query(pattern="^(dataset|metric|method)$")] = "dataset",
                 dataset: str | None = None):
    return results.names(request.app.state.lib, kind, dataset=dataset)


@router.post("/ask", response_model=AskResult,
             summary="A question answered with citations; `stream: true` for server-sent events",
             responses={200: {"content": {"text/event-stream": {}}}})
def ask(request: Request, req: AskRequest, _: Caller):
    lib = request.app.state.lib
    if not req.stream:
        return ask_service.ask(lib, req.question, **_ask_kwargs(request, req))
    # Checked before the stream starts, so a bad question gets a 4xx, not an error event after a 200.
    clean_question(req.question)
    ask_service.check_mode(lib, req.mode)
    return StreamingResponse(ask_events(lambda on_token: ask_service.ask(lib, req.question, on_token=on_token,
                                                                          **_ask_kwargs(request, req))),
                             media_type="text/event-stream", headers={"Cache-Control": "no-store"})


def sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def run_streaming(work):
    """Run `work(on_token)` in a thread; yield ("token", text so far) as it streams, then ("result", AskResult) or
    ("error", ServiceError)."""
    events: queue.Queue = queue.Queue()

    def target():
        try:
            events.put(("result", work(lambda text: events.put(("token", text)))))
        except ServiceError as exc:
            events.put(("error", exc))
        except Exception as exc:  # noqa: BLE001 - reported to the client as an internal error
            logging.getLogger("papergraph.api").exception("streamed answer failed")
            events.put(("error", ServiceError("internal_error", f"the answer failed ({type(exc).__name__})")))
        events.put(None)

    threading.Thread(target=target, name="papergraph-api-ask", daemon=True).start()
    while (item := events.get()) is not None:
        yield item


def ask_events(work):
    """`token` events carry what the answer grew by (`delta`); `result` the whole AskResult, whose answer may differ
    from the deltas joined (an LLM answer is checked against the passages once written)."""
    sent = ""
    for kind, value in run_streaming(work):
        if kind == "token":
            delta = value[len(sent):] if value.startswith(sent) else value
            sent = value
            if delta:
                yield sse("token", {"delta": delta})
        elif kind == "result":
            yield sse("result", value.to_dict())
        else:
            yield sse("error", body(value.code, value.message))
