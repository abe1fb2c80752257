"""Merging several cluster nodes' ``groups`` pages into one page (as
src/client/group-pages.ts). Each node answers for the groups on its own
shards; a group lives on one shard, but while a shard moves two nodes may
both count it, and then its counts are summed. Paged as ``topics`` is
(topic_pages.py): the merged page ends at the smallest last group of a
node that has more, so following ``next`` never skips a group. The items
without a group (``group: None``) sort first under the cursor "".
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

__all__ = ["merge_group_pages"]

_COUNTS = ("ready", "delayed", "waiting", "leased", "dead")


def _cursor(group: Optional[str]) -> str:
    # A group name is at least one byte, so "" names no group but the items without one.
    return "" if group is None else group


def merge_group_pages(pages: Sequence[Mapping[str, Any]], limit: Optional[int] = None) -> Dict[str, Any]:
    """Several nodes' answers to the same ``groups`` page as one page: {"groups": [...], "next": str or None}."""
    merged: Dict[str, Dict[str, Any]] = {}
    known_through: Optional[str] = None
    for page in pages:
        listed = page["groups"]
        if page.get("next") is not None and listed:
            stop = _cursor(listed[-1]["group"])
            if known_through is None or stop < known_through:
                known_through = stop
        for entry in listed:
            total = merged.setdefault(
                _cursor(entry["group"]), {"group": entry["group"], **{count: 0 for count in _COUNTS}, "paused": False}
            )
            for count in _COUNTS:
                total[count] += entry.get(count, 0)
            # A group's pause reaches every node: any node that reports it makes the merged entry paused.
            if entry.get("paused"):
                total["paused"] = True
                if entry.get("paused_until_ms") is not None:
                    total["paused_until_ms"] = entry["paused_until_ms"]
    # Python compares str by code point, which orders UTF-8 the same as bytes.
    ordered = [merged[cursor] for cursor in sorted(merged) if known_through is None or cursor <= known_through]
    if limit is not None and len(ordered) > limit:
        ordered = ordered[:limit]
        return {"groups": ordered, "next": _cursor(ordered[-1]["group"]) if ordered else None}
    return {"groups": ordered, "next": known_through}
