"""Merging several cluster nodes' ``topics`` pages into one page (as
src/client/topic-pages.ts): counts summed per topic, and a ``next`` cursor
that never skips a topic some node has not listed yet.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

__all__ = ["merge_topic_pages"]

_STATES = ("ready", "delayed", "waiting", "leased", "dead")


def merge_topic_pages(pages: Sequence[Mapping[str, Any]], limit: Optional[int] = None) -> Dict[str, Any]:
    """Several nodes' answers to the same ``topics`` page as one page (as src/client/topic-pages.ts).

    A node that has more stops at its last topic; past the smallest such stop
    some node's topics are not known yet, so the merged page ends there (or at
    ``limit``), and ``next`` is where the following page starts.
    """
    merged: Dict[str, Dict[str, Any]] = {}
    known_through: Optional[str] = None
    for page in pages:
        listed = page["topics"]
        if page.get("next") is not None and listed and (known_through is None or listed[-1]["topic"] < known_through):
            known_through = listed[-1]["topic"]
        for entry in listed:
            total = merged.setdefault(entry["topic"], {"topic": entry["topic"], **{state: 0 for state in _STATES}, "paused": False})
            for state in _STATES:
                total[state] += entry.get(state, 0)
            # A pause reaches every node: any node that reports it makes the merged entry paused.
            if entry.get("paused"):
                total["paused"] = True
                if entry.get("paused_until_ms") is not None:
                    total["paused_until_ms"] = entry["paused_until_ms"]
    # Python compares str by code point, which orders UTF-8 the same as bytes.
    ordered = [merged[name] for name in sorted(merged) if known_through is None or name <= known_through]
    if limit is not None and len(ordered) > limit:
        ordered = ordered[:limit]
        return {"topics": ordered, "next": ordered[-1]["topic"] if ordered else None}
    return {"topics": ordered, "next": known_through}
