"""The API's ASGI app: REST (/api), OpenAI's chat protocol (/v1) and MCP's streamable HTTP (/mcp) over one
workspace, all behind the guard (core/api/guard.py). One app serves one workspace: nothing names another."""
from __future__ import annotations

import contextlib

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from mcp.server.transport_security import TransportSecuritySettings

from core.api import chat, errors, rest
from core.api.config import ApiConfig, cors_origin
from core.api.guard import Guard
from core.api.mcp_tools import build_mcp
from core.library import Library
from core.service.ingest import Ingest

DESCRIPTION = """Search, ask and read a PaperGraph collection with page-level citations. Every call but /health and
these docs needs `Authorization: Bearer <token>` when the server is reachable from a network (tokens:
`python -m core users token create NAME`); on loopback a token is optional. Errors are
`{"error": {"code": "...", "message": "..."}}`."""


def create_app(lib: Library, config: ApiConfig | None = None) -> FastAPI:
    config = config or ApiConfig()
    mcp = build_mcp(lib, save_history=config.save_history)
    # The guard checks Host and Origin for every route with the app's rule; the SDK's own check would refuse the
    # names PAPERGRAPH_HOSTS adds.
    mcp_routes = mcp.streamable_http_app(
        streamable_http_path="/mcp", max_request_body_size=config.max_body_bytes,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)).routes
    ingest = Ingest(lib)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        ingest.resume()
        async with mcp.session_manager.run():
            yield
        ingest.stop()

    app = FastAPI(title="PaperGraph API", description=DESCRIPTION, version="1", lifespan=lifespan,
                  redoc_url=None)
    app.state.lib, app.state.ingest, app.state.config = lib, ingest, config
    errors.install(app)
    app.include_router(rest.router)
    app.include_router(chat.router)
    app.router.routes.extend(mcp_routes)

    @app.get("/health", summary="Liveness: no workspace data")
    def health():
        return {"ok": True}

    if config.cors_origins:
        # Inside the guard, which has already refused any other origin. Tokens travel in the Authorization header,
        # not cookies: no credentials mode, so a page's script sends the token it was given and nothing ambient.
        app.add_middleware(CORSMiddleware, allow_origins=sorted({cors_origin(o) for o in config.cors_origins}),
                           allow_credentials=False, allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type", "Accept", "Last-Event-ID",
                                          "Mcp-Session-Id", "MCP-Protocol-Version"],
                           expose_headers=["Mcp-Session-Id", "Retry-After", "WWW-Authenticate"], max_age=600)
    app.add_middleware(Guard, config=config)  # added last: outermost, before anything reads the request
    return app
