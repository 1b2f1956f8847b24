"""One error shape for every route of the API: `{"error": {"code": "...", "message": "..."}}`, with a stable code
a client can branch on and a message for a person. Service errors (core/service/errors.py) keep their code; the
HTTP status follows from it."""
from __future__ import annotations

import json
import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from core.service import errors as service

UNAUTHORIZED = "unauthorized"
FORBIDDEN = "forbidden"
RATE_LIMITED = "rate_limited"
INVALID_HOST = "invalid_host"
METHOD_NOT_ALLOWED = "method_not_allowed"
REQUEST_TIMEOUT = "request_timeout"  # the request's head or body did not arrive in time (core/api/timeouts.py)
HEADERS_TOO_LARGE = "headers_too_large"
INTERNAL = "internal_error"

STATUS = {service.INVALID_INPUT: 400, service.NOT_FOUND: 404, service.MODE_UNAVAILABLE: 409, service.CONFLICT: 409,
          service.TOO_LARGE: 413, UNAUTHORIZED: 401, FORBIDDEN: 403, RATE_LIMITED: 429, INVALID_HOST: 421,
          METHOD_NOT_ALLOWED: 405, REQUEST_TIMEOUT: 408, HEADERS_TOO_LARGE: 431, INTERNAL: 500}
_BY_STATUS = {404: service.NOT_FOUND, 405: METHOD_NOT_ALLOWED, 401: UNAUTHORIZED, 403: FORBIDDEN,
              413: service.TOO_LARGE, 429: RATE_LIMITED}


class ApiError(Exception):
    def __init__(self, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.code, self.message, self.headers = code, message, headers or {}


def body(code: str, message: str) -> dict:
    return {"error": {"code": code, "message": message}}


def response(code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    if code == service.TOO_LARGE:  # hang up: the server would otherwise read (and drop) the rest of the body
        headers = {**(headers or {}), "Connection": "close"}
    return JSONResponse(body(code, message), status_code=STATUS.get(code, 400), headers=headers)


def raw(code: str, message: str, headers: dict[str, str] | None = None) -> tuple[int, list, bytes]:
    """Status, headers and bytes of an error, for the guard (pure ASGI, in front of FastAPI)."""
    data = json.dumps(body(code, message)).encode("utf-8")
    pairs = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
             (b"connection", b"close")]
    pairs += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    return STATUS.get(code, 400), pairs, data


def _validation_message(exc: RequestValidationError) -> str:
    problems = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "request"
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(problems) or "the request is not valid"


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError):
        return response(exc.code, exc.message, exc.headers)

    @app.exception_handler(service.ServiceError)
    async def _service(_: Request, exc: service.ServiceError):
        return response(exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError):
        return JSONResponse(body(service.INVALID_INPUT, _validation_message(exc)), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException):
        code = _BY_STATUS.get(exc.status_code, service.INVALID_INPUT if exc.status_code < 500 else INTERNAL)
        message = exc.detail if isinstance(exc.detail, str) else "the request cannot be served"
        return JSONResponse(body(code, message), status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception):
        logging.getLogger("papergraph.api").exception("unexpected error")
        return response(INTERNAL, "the server failed on this request; its log says why")
