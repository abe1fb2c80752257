"""What the blocking and the asyncio worker loop share: their bounds, the
options they check, the nack back-off, and which errors are worth another
try. The loops themselves are worker.py (threads) and async_worker.py.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

from .errors import OrqError

__all__ = [
    "WORK_CONCURRENCY_MAX",
    "SETTLE_ATTEMPTS_MAX",
    "SETTLE_BATCH_MAX",
    "RETRYABLE",
    "nack_delay_ms",
    "free_slots",
    "check_options",
    "retry_hint_ms",
    "handler_result",
]

# Largest concurrency: one dequeue's count limit (count_per_dequeue_max).
WORK_CONCURRENCY_MAX = 1000
# Times an ack or nack is sent before it is given up (its lease then expires
# and the item comes again). A ClusterClient already re-routes each try up to
# 100 times, so this only has to ride out a node restart for a plain Client.
SETTLE_ATTEMPTS_MAX = 5
# Acks (or nacks) sent in one request at most: the server's ids_per_request_max.
SETTLE_BATCH_MAX = 1000
# Errors after which the same request may succeed later.
RETRYABLE = frozenset({"CONNECTION_LOST", "UNAVAILABLE", "SHUTTING_DOWN", "MOVED"})


def nack_delay_ms(attempt: int, backoff_base_ms: int, backoff_max_ms: int) -> int:
    """The nack delay after a handler raised on delivery ``attempt`` (1-based)."""
    exponent = min(max(attempt, 1) - 1, 52)
    return min(backoff_max_ms, backoff_base_ms * 2**exponent)


def free_slots(concurrency: int, handlers: int, held: int) -> int:
    """Items the next dequeue may ask for.

    A slot frees when its handler returns: the ack or nack is sent without
    holding it, so the next dequeue need not wait for the answer
    (docs/decisions/048-ack-frees-the-slot.md). ``held`` counts the
    deliveries taken and not yet settled (``handlers`` of them running); it
    stays within twice ``concurrency``.
    """
    settling = held - handlers
    return concurrency - handlers - max(0, settling - concurrency)


def check_options(concurrency: int, lease_ms: int, wait_ms: int, extend_at_fraction: float) -> None:
    """Raise ValueError for an option out of range (a programmer's error, found before the loop starts)."""
    if not isinstance(concurrency, int) or not 1 <= concurrency <= WORK_CONCURRENCY_MAX:
        raise ValueError(f"concurrency must be 1..{WORK_CONCURRENCY_MAX}")
    if not isinstance(lease_ms, int) or lease_ms < 1:
        raise ValueError("lease_ms must be a positive integer")
    if not 0.1 <= extend_at_fraction <= 0.9:
        raise ValueError("extend_at_fraction must be 0.1..0.9")
    if not isinstance(wait_ms, int) or wait_ms < 0:
        raise ValueError("wait_ms must be a non-negative integer")


def retry_hint_ms(error: Union[OrqError, OSError], otherwise_ms: int) -> int:
    """How long to pause before trying again: the error's ``retry_after_ms``, else ``otherwise_ms``."""
    hint: Optional[int] = error.retry_after_ms if isinstance(error, OrqError) else None
    return hint or otherwise_ms


def handler_result(returned: Any) -> Tuple[Optional[bytes], Optional[TypeError]]:
    """A handler's return value as the ack's result: bytes-like or None.

    Anything else is no result, and a TypeError the loop reports as an
    ``error`` event (the item is acked all the same: the work was done).
    """
    if returned is None or isinstance(returned, bytes):
        return returned, None
    if isinstance(returned, (bytearray, memoryview)):
        return bytes(returned), None
    return None, TypeError(f"a handler returned {type(returned).__name__}; the ack's result must be bytes or None")
