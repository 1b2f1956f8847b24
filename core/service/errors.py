"""Errors of the service layer: a stable code (what a client may branch on) and a message for a person. The
faces map codes to their protocol: an HTTP status (core/api/errors.py), an MCP tool error, a chat error."""
from __future__ import annotations

INVALID_INPUT = "invalid_input"  # an argument the operation cannot take (empty, too long, control characters…)
NOT_FOUND = "not_found"  # no such paper, page, chunk or entity in this workspace
MODE_UNAVAILABLE = "mode_unavailable"  # the mode needs something this workspace lacks (a graph, an LLM)
CONFLICT = "conflict"  # the workspace cannot do it now (e.g. its vectors need re-embedding)
TOO_LARGE = "payload_too_large"

CODES = (INVALID_INPUT, NOT_FOUND, MODE_UNAVAILABLE, CONFLICT, TOO_LARGE)


class ServiceError(ValueError):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> ServiceError:
    return ServiceError(INVALID_INPUT, message)


def not_found(message: str) -> ServiceError:
    return ServiceError(NOT_FOUND, message)
