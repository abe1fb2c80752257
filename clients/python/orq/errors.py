"""The errors both clients raise: an error reply as ``OrqError`` (the
contract's code, message and details), a lost connection as ``ConnectionLost``.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Union

__all__ = ["OrqError", "ConnectionLost", "error_code"]


class OrqError(Exception):
    """An error reply. ``code`` is the contract's code (BAD_REQUEST, TOO_LARGE, ...)."""

    def __init__(self, code: str, message: str, details: Optional[Mapping[str, Any]] = None, request_id: Optional[int] = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details: Dict[str, Any] = dict(details or {})
        self.request_id = request_id

    @property
    def retry_after_ms(self) -> Optional[int]:
        return self.details.get("retry_after_ms")

    @classmethod
    def from_reply(cls, reply: Mapping[str, Any]) -> "OrqError":
        """The error an ``ok: false`` reply (or an id-0 connection error) carries."""
        error = reply.get("error") or {}
        return cls(error.get("code", "INTERNAL"), error.get("message", "no message"), error.get("details"), reply.get("id"))


class ConnectionLost(OrqError):
    """The connection closed or failed; requests still in flight have no reply."""

    def __init__(self, message: str) -> None:
        super().__init__("CONNECTION_LOST", message)


def error_code(error: Union[OrqError, OSError]) -> str:
    """An error's contract code; a socket error is a lost connection."""
    return error.code if isinstance(error, OrqError) else "CONNECTION_LOST"
