"""Names for the wire's maps as both clients return them. They are plain
dicts with the contract's snake_case field names (docs/PROTOCOL.md); the
aliases only say which map a function takes or gives.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["Item", "Delivery", "ItemState", "Reply", "Topics", "ReceiptItem", "Page"]

# An item to enqueue: {"topic", "payload"?, "priority"?, "group"?, "trace"?, ...}.
Item = Mapping[str, Any]
# A delivery: {"id", "topic", "payload", "metadata", "attempt", "receipt", "lease_expires_at_ms", "trace"?, ...}.
Delivery = Dict[str, Any]
# An item state from get, dead, list and wait ({"id", "state": "ended", "outcome", "result"?} once ended).
ItemState = Dict[str, Any]
# A whole ok reply, for ops returned raw (stats).
Reply = Dict[str, Any]
# One page of a listing: {"<entries>": [...], "next": str or None}.
Page = Dict[str, Any]
# A dequeue's topics: {"topic": count}, [("topic", count)], [{"topic", "count"}] or ["topic"].
Topics = Union[Mapping[str, int], Sequence[Union[str, Tuple[str, int], Mapping[str, Any]]]]
# A receipt, or a map {receipt, delay_ms?, metadata?, lease_ms?} for nack and extend.
ReceiptItem = Union[str, Mapping[str, Any]]
