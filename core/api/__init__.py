"""PaperGraph reached from other tools: one ASGI app (`python -m core serve`, `make api`) with three faces over the
service layer (core/service/), and the MCP server alone over stdio (`python -m core mcp`).

    app.py       the FastAPI app: the faces mounted behind the guard, the MCP session manager in its lifespan
    guard.py     in front of every request: host names, origins, sizes, who is calling, rate limits
    config.py    ApiConfig: where it listens, whether tokens are required, limits
    errors.py    one JSON error shape, {"error": {"code", "message"}}, with stable codes
    rest.py      /api/…: papers, upload, search, ask (and its server-sent events), passages, graph, cite, status,
                 evaluation runs (read only)
    chat.py      /v1/models and /v1/chat/completions, OpenAI's protocol: the modes are the models
    mcp_tools.py the MCP tools and resources (streamable HTTP under /mcp, or stdio)
    serve.py     the command: the start-up check (no tokens off loopback, no start), uvicorn
"""
