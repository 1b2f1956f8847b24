"""`python -m core serve`: the API on one workspace, and `python -m core mcp`: the MCP server over stdio.

Who may call mirrors the app (core.settings.accounts.access_policy, what `core users preflight` asks for
`make run`): on loopback anyone on this machine (a token, when sent, is still checked); served to a network every
call needs a token, and with no account or token to make one from the server refuses to start, unless
--insecure (PAPERGRAPH_INSECURE=1) says to serve everyone as an editor."""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path

from core.api.config import ApiConfig, env_origins
from core.settings.accounts import INSECURE_ENV, Access, access_policy, has_accounts, is_loopback
from core.settings.tokens import has_tokens
from core.settings.workspace import config_dir

log = logging.getLogger("papergraph.api")

REFUSAL = ("refusing to serve the API on {host}: it is reachable from the network and no account or API token "
           "exists to call it with. Create one: `python -m core users add NAME --role editor`, then "
           "`python -m core users token create NAME`. To serve this machine only: --host 127.0.0.1 (the default). "
           "To serve the network without tokens anyway: --insecure (PAPERGRAPH_INSECURE=1).")


def access_for(host: str, insecure: bool, folder: Path | None = None) -> Access:
    env = dict(os.environ)
    if insecure:
        env[INSECURE_ENV] = "1"
    configured = has_accounts() or has_tokens(folder)
    return access_policy(is_loopback(host), configured, env)


def api_config(host: str, port: int, insecure: bool = False, rate_per_minute: int | None = None) -> ApiConfig:
    """The server's configuration, or SystemExit with the refusal."""
    folder = config_dir()
    access = access_for(host, insecure, folder)
    if access == Access.REFUSED:
        raise SystemExit(REFUSAL.format(host=host or "every interface"))
    try:
        config = ApiConfig(host=host, port=port, require_tokens=access == Access.SIGN_IN,
                           insecure=access == Access.INSECURE, config_dir=folder, cors_origins=env_origins())
    except ValueError as exc:  # PAPERGRAPH_TRUSTED_PROXIES or PAPERGRAPH_CORS_ORIGINS names something that is not
        raise SystemExit(f"refusing to serve the API: {exc}") from None
    if rate_per_minute is not None:
        config.token_rate_per_minute = config.address_rate_per_minute = rate_per_minute
    return config


SHUTDOWN_GRACE_S = 5  # calls in flight get this long to end once a stop is asked for; then they are cancelled
STOP_DEADLINE_S = SHUTDOWN_GRACE_S + 5  # after this long stopping, the process ends whatever is still running


def server_config(app, config: ApiConfig, **overrides):
    """uvicorn's settings for the API (`core serve`, and the tests' live servers, so they test these):
    - proxy_headers off: uvicorn would otherwise take X-Forwarded-For from any connection from 127.0.0.1 (its
      default forwarded_allow_ips), so a local process could pose as any address; the guard reads the header itself,
      from the proxies PAPERGRAPH_TRUSTED_PROXIES names only (core.settings.proxies);
    - deadlines on slow clients in the HTTP protocol (core/api/timeouts.py), an idle kept-alive connection closed
      after keep_alive_s, and at most max_connections (then 503); no websockets (the API has none)."""
    import uvicorn

    from core.api.timeouts import protocol

    settings = dict(host=config.host, port=config.port, log_level="warning", proxy_headers=False,
                    server_header=False, timeout_graceful_shutdown=SHUTDOWN_GRACE_S, ws="none",
                    http=protocol(config.head_timeout_s, config.body_grace_s, config.min_body_rate),
                    timeout_keep_alive=config.keep_alive_s, limit_concurrency=config.max_connections)
    return uvicorn.Config(app, **(settings | overrides))


def serve(lib, config: ApiConfig) -> int:
    import uvicorn

    from core.api.app import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if config.insecure:
        log.warning("serving %s without tokens (insecure): anyone who reaches it can upload and delete", config.host)
    print(f"PaperGraph API on http://{config.host}:{config.port} (docs /docs, MCP /mcp, chat /v1) for workspace "
          f"{lib.workspace.root}; tokens {'required' if config.require_tokens else 'optional'}; CORS "
          f"{'for ' + ', '.join(config.cors_origins) if config.cors_origins else 'off'}", file=sys.stderr)
    server = uvicorn.Server(server_config(create_app(lib, config), config))
    threading.Thread(target=_stop_deadline, args=(server,), name="papergraph-api-stop-deadline", daemon=True).start()
    code = 0
    try:
        # On SIGTERM uvicorn stops gracefully, then raises the signal again with its default action: the process
        # ends there, killed by SIGTERM as a supervisor expects. On SIGINT that raise is a KeyboardInterrupt.
        server.run()
    except KeyboardInterrupt:
        code = 130
    except SystemExit as exc:  # uvicorn's own: the app's start-up failed
        code = exc.code if isinstance(exc.code, int) else 1
    # Stopped: end here. Interpreter finalisation would join every non-daemon thread, and a worker thread still in
    # a call (an LLM answer, an embedding) would hold the exit until it returns; the ingest survives any stop.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _stop_deadline(server) -> None:
    """Ends the process STOP_DEADLINE_S after a stop was asked for (SIGTERM, SIGINT), if it is still running.

    Why: uvicorn waits SHUTDOWN_GRACE_S for calls in flight, cancels them, then runs the app's shutdown, which has no
    time limit. A call whose work runs in a worker thread cannot be cancelled: it ends when the thread returns. An
    MCP tool call of a session on the SDK's legacy transport (the protocol Claude Desktop, Cursor and the inspector
    speak) runs in the session manager's task group, and leaving that group waits for its tools' threads: one `ask`
    waiting on a slow LLM held `core serve` for minutes after SIGTERM. The tools now let go of their thread when
    cancelled (core.api.mcp_tools); this deadline covers whatever else may block a stop. Polling, not a signal
    handler: a handler starting a thread could deadlock on the lock of a thread the event loop was starting."""
    while not server.should_exit:
        time.sleep(0.25)
    time.sleep(STOP_DEADLINE_S)
    log.error("still stopping %d s after the signal (a call in progress did not end): exiting now", STOP_DEADLINE_S)
    sys.stderr.flush()
    os._exit(1)


def serve_stdio(lib) -> int:
    from core.api.mcp_tools import build_mcp

    build_mcp(lib).run("stdio")
    return 0
