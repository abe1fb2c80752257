"""The wire's framing and codec, shared by the blocking and the asyncio
client: every message is a 4-byte big-endian length, then that many bytes
holding one MessagePack map (the contract's "Transport and framing").

``encode_request`` makes one request frame; ``FrameDecoder`` turns received
bytes into replies and does no I/O, so each client only moves bytes (and a
test can feed it one byte at a time).
"""

from __future__ import annotations

import struct
from typing import Any, Dict, List, Mapping, Optional

import msgpack

from .errors import ConnectionLost, OrqError

__all__ = ["PROTOCOL_VERSION", "DEFAULT_PORT", "REPLY_BYTES_MAX", "REQUEST_ID_MAX", "RequestIds", "encode_request", "FrameDecoder"]

PROTOCOL_VERSION = 1
DEFAULT_PORT = 7420
# Largest reply a client accepts. The server's own limit is announced by
# hello (max_frame_bytes, 4 MiB by default); replies can be that large.
REPLY_BYTES_MAX = 64 * 1024 * 1024
# Request ids run from 1 to 2^53-1 (the contract); wrapping is harmless
# because ids only need to be unique among requests in flight.
REQUEST_ID_MAX = 2**53 - 1
_LENGTH = struct.Struct(">I")


class RequestIds:
    """Hands out request ids 1, 2, ... and wraps after ``REQUEST_ID_MAX``."""

    def __init__(self) -> None:
        self._next = 1

    def take(self) -> int:
        request_id = self._next
        self._next = 1 if request_id >= REQUEST_ID_MAX else request_id + 1
        return request_id


def without_none(fields: Mapping[str, Any]) -> Dict[str, Any]:
    """The fields that are not None: the contract treats nil as absent, and leaving the key out keeps frames small."""
    return {key: value for key, value in fields.items() if value is not None}


def encode_request(packer: msgpack.Packer, request_id: int, op: str, fields: Mapping[str, Any], frame_bytes_max: Optional[int]) -> bytes:
    """One request frame. A body over the server's ``max_frame_bytes`` raises FRAME_TOO_LARGE here, before the server closes the connection for it."""
    body = packer.pack({"id": request_id, "op": op, **without_none(fields)})
    if frame_bytes_max is not None and len(body) > frame_bytes_max:
        raise OrqError("FRAME_TOO_LARGE", f"request is {len(body)} bytes, the server accepts {frame_bytes_max}")
    return _LENGTH.pack(len(body)) + body


class FrameDecoder:
    """Received bytes in, whole replies out; a frame may arrive split anywhere."""

    def __init__(self, reply_bytes_max: int = REPLY_BYTES_MAX) -> None:
        self._buffer = bytearray()
        self._reply_bytes_max = reply_bytes_max

    def feed(self, data: bytes) -> List[Dict[str, Any]]:
        """Every reply completed by ``data``. Raises ConnectionLost for a frame that is too long or not a reply."""
        self._buffer += data
        replies: List[Dict[str, Any]] = []
        while len(self._buffer) >= 4:
            (length,) = _LENGTH.unpack_from(self._buffer)
            if length > self._reply_bytes_max:
                raise ConnectionLost(f"reply of {length} bytes exceeds {self._reply_bytes_max}")
            if len(self._buffer) < 4 + length:
                break
            body = bytes(self._buffer[4 : 4 + length])
            del self._buffer[: 4 + length]
            try:
                reply = msgpack.unpackb(body, raw=False)
            except (ValueError, msgpack.UnpackException) as error:
                raise ConnectionLost(f"the server sent a frame that is not MessagePack: {error}") from error
            if not isinstance(reply, dict) or "id" not in reply:
                raise ConnectionLost(f"the server sent a frame that is not a reply: {reply!r}")
            replies.append(reply)
        return replies
