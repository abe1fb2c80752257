"""Request fields both clients build the same way: a dequeue's topics, nack
and extend items, a policy, a schedule, an ack's results, items with the
current trace context. Pure functions: no I/O.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from .framing import without_none
from .tracing import current_trace
from .shapes import Item, ReceiptItem, Topics

__all__ = [
    "without_none",
    "topic_counts",
    "receipt_items",
    "policy_fields",
    "schedule_fields",
    "ack_fields",
    "traced_items",
    "every_page",
]


def topic_counts(topics: Topics) -> List[Dict[str, Any]]:
    """Accept {"topic": count}, [("topic", count)], [{"topic":..., "count":...}] or ["topic"] (count 1)."""
    if isinstance(topics, Mapping):
        return [{"topic": name, "count": count} for name, count in topics.items()]
    result: List[Dict[str, Any]] = []
    for entry in topics:
        if isinstance(entry, str):
            result.append({"topic": entry, "count": 1})
        elif isinstance(entry, Mapping):
            result.append(dict(entry))
        else:
            name, count = entry
            result.append({"topic": name, "count": count})
    return result


def receipt_items(items: Sequence[ReceiptItem]) -> List[Dict[str, Any]]:
    """Accept receipt strings or dicts with a receipt and options."""
    return [{"receipt": entry} if isinstance(entry, str) else without_none(entry) for entry in items]


def policy_fields(
    ns: str,
    topic: str,
    group: Optional[str] = None,
    weight: Optional[int] = None,
    max_leased: Optional[int] = None,
    rate: Union[None, Mapping[str, int], Tuple[int, int]] = None,
    clear: Optional[bool] = None,
) -> Dict[str, Any]:
    """A ``policy`` request's fields: ``rate`` as a dict or a (count, per_ms) pair; ``clear`` sent only when true."""
    if rate is not None and not isinstance(rate, Mapping):
        count, per_ms = rate
        rate = {"count": count, "per_ms": per_ms}
    return without_none(
        {"ns": ns, "topic": topic, "group": group, "weight": weight, "max_leased": max_leased, "rate": rate, "clear": True if clear else None}
    )


def schedule_fields(
    ns: str,
    name: str,
    item: Item,
    cron: Optional[str] = None,
    every_ms: Optional[int] = None,
    timezone: Optional[str] = None,
    catch_up: Optional[str] = None,
) -> Dict[str, Any]:
    """A ``schedule`` request's fields: ``cron`` (5 or 6 fields) or ``every_ms``; the server checks which is given."""
    return without_none(
        {"ns": ns, "name": name, "cron": cron, "every_ms": every_ms, "timezone": timezone, "item": without_none(item), "catch_up": catch_up}
    )


def ack_fields(ns: str, receipts: Sequence[str], results: Optional[Sequence[Optional[bytes]]] = None) -> Dict[str, Any]:
    """An ``ack`` request's fields. ``results`` (one bytes or None per receipt) is sent only when one is not None."""
    receipts = list(receipts)
    fields: Dict[str, Any] = {"ns": ns, "receipts": receipts}
    if results is not None:
        results = list(results)
        if len(results) != len(receipts):
            raise ValueError(f"results has {len(results)} entries for {len(receipts)} receipts")
        if any(result is not None for result in results):
            fields["results"] = results
    return fields


def traced_items(items: Sequence[Item]) -> List[Dict[str, Any]]:
    """Items to enqueue, each given the current trace context as ``trace`` unless it has one (only when OpenTelemetry is present)."""
    trace = current_trace()
    if trace is None:
        return [without_none(item) for item in items]
    return [without_none(item) if item.get("trace") is not None else {**without_none(item), "trace": trace} for item in items]


def every_page(ask: Callable[[Optional[str]], Mapping[str, Any]], field: str) -> Iterator[Any]:
    """Every entry of a paged listing: ``ask(after)`` returns a page {field: [...], "next"}; follows ``next`` until None."""
    after: Optional[str] = None
    while True:
        page = ask(after)
        yield from page[field]
        if page.get("next") is None:
            return
        after = page["next"]
