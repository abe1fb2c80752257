"""What ``wait_for`` asks next, for the blocking and the asyncio client
alike: the ids not yet ended, at most ``ids_per_request_max`` per ``wait``,
each ``wait`` at most ``wait_ms_max`` and never past the caller's deadline.
No I/O: the clients send each request it names and hand back the answer.

An id is settled when its state is ``ended`` (acked, cancelled, expired) or
None (the server does not know it, or forgot its outcome).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from .shapes import ItemState

__all__ = ["WaitPlan", "is_settled", "WAIT_MS_MAX_DEFAULT", "IDS_PER_REQUEST_MAX_DEFAULT"]

# Used when hello did not say (the server's own defaults: 5 minutes, 1,000 ids).
WAIT_MS_MAX_DEFAULT = 5 * 60 * 1000
IDS_PER_REQUEST_MAX_DEFAULT = 1000


def is_settled(state: Optional[ItemState]) -> bool:
    """Whether an item state from ``wait`` or ``get`` will not change any more."""
    return state is None or state.get("state") == "ended"


class WaitPlan:
    """The ``wait`` requests that follow a set of ids until each has ended or the deadline passed."""

    def __init__(self, ids: Sequence[str], timeout_ms: Optional[int], now_s: float, limits: Optional[Dict[str, Any]] = None) -> None:
        limits = limits or {}
        self.ids = list(ids)
        self.states: List[Optional[ItemState]] = [None] * len(self.ids)
        self._wait_ms_max = int(limits.get("wait_ms_max") or WAIT_MS_MAX_DEFAULT)
        self._ids_max = int(limits.get("ids_per_request_max") or IDS_PER_REQUEST_MAX_DEFAULT)
        self._deadline_s = None if timeout_ms is None else now_s + max(0, timeout_ms) / 1000.0
        self._open = list(range(len(self.ids)))
        # Ids asked about at least once: each is, even when the deadline has passed.
        self._asked = [False] * len(self.ids)
        self._batch: List[int] = []

    def next_request(self, now_s: float) -> Optional[Tuple[List[str], int]]:
        """(ids, wait_ms) for the next ``wait``, or None when every id has settled or the time is up."""
        if not self._open:
            return None
        left_ms = self._wait_ms_max if self._deadline_s is None else max(0, int((self._deadline_s - now_s) * 1000))
        if left_ms == 0:
            unasked = [index for index in self._open if not self._asked[index]]
            if not unasked:
                return None
            self._batch = unasked[: self._ids_max]
        else:
            self._batch = self._open[: self._ids_max]
        for index in self._batch:
            self._asked[index] = True
        return [self.ids[index] for index in self._batch], min(left_ms, self._wait_ms_max)

    def take(self, states: Sequence[Optional[ItemState]]) -> None:
        """The answer to the request ``next_request`` named, in its order."""
        if len(states) != len(self._batch):
            raise ValueError(f"wait answered {len(states)} states for {len(self._batch)} ids")
        for index, state in zip(self._batch, states):
            self.states[index] = state
        # An id not asked about yet has no state: it stays open.
        self._open = [index for index in self._open if not self._asked[index] or not is_settled(self.states[index])]
