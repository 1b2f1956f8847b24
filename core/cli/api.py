"""serve and mcp: the collection for other tools (core/api/). FastAPI, uvicorn and the MCP SDK are imported by
the command that needs them."""
from __future__ import annotations

import argparse

from core.library import Library


def check_serve(args) -> None:
    """Before the workspace is opened (or created): served to a network with nothing to call it with, refuse
    (SystemExit with the reason), as `core users preflight` does for the app."""
    from core.api.serve import api_config

    args.api_config = api_config(args.host, args.port, insecure=args.insecure, rate_per_minute=args.rate_limit)
    args.api_config.save_history = not args.no_history
    args.api_config.cors_origins = list(dict.fromkeys([*(args.cors_origins or []), *args.api_config.cors_origins]))


def cmd_serve(lib: Library, args) -> int:
    from core.api.serve import serve

    return serve(lib, args.api_config)


def cmd_mcp(lib: Library, args) -> int:
    from core.api.serve import serve_stdio

    return serve_stdio(lib)


def _cors_origin(value: str) -> str:
    from core.api.config import cors_origin

    try:
        return cors_origin(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parsers(sub) -> None:
    from core.api.config import DEFAULT_PORT

    p = sub.add_parser("serve", help="the API for other tools: REST (/api, docs at /docs), MCP over streamable HTTP "
                                     "(/mcp) and OpenAI's chat protocol (/v1); tokens: users token create NAME")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this machine only; any "
                                                      "other needs a token on every call)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT)
    p.add_argument("--workspace", help="the workspace folder (default: $PAPERGRAPH_WORKSPACE, else data/)")
    p.add_argument("--insecure", action="store_true", help="served to a network without tokens anyway: anyone who "
                                                          "reaches it may upload and delete")
    p.add_argument("--rate-limit", type=int, dest="rate_limit", help="requests a minute per token and per address "
                                                                     "(default 600 and 1200; 0: no limit)")
    p.add_argument("--no-history", action="store_true", dest="no_history",
                   help="do not keep the questions asked in the workspace's history")
    p.add_argument("--cors-origin", action="append", dest="cors_origins", type=_cors_origin, metavar="ORIGIN",
                   help="a web page whose scripts may call the API, as scheme://host[:port] (repeat for more; no "
                        "wildcard). Without it CORS is off: browsers get 403 from any other origin.")
    p.set_defaults(func=cmd_serve, before_open=check_serve)
    p = sub.add_parser("mcp", help="the MCP server over stdio, for a desktop assistant (Claude Desktop, Cursor…)")
    p.add_argument("--workspace", help="the workspace folder (default: $PAPERGRAPH_WORKSPACE, else data/)")
    p.set_defaults(func=cmd_mcp)
