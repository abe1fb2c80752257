"""Where a keyed or grouped item lives in cluster mode (as
src/protocol/key-shard.ts and src/client/item-shard.ts): shard
``fnv1a32(utf8(ns) 0x00 utf8(topic) 0x00 utf8(key)) % shards``, the
contract's FNV-1a (32 bits, offset basis 2166136261, prime 16777619); a
group hashes the same way in place of the key, and its rule comes first.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["fnv1a32", "shard_of_key", "shard_of_group", "item_shard"]


def fnv1a32(data: bytes) -> int:
    """FNV-1a, 32 bits (offset basis 2166136261, prime 16777619)."""
    value = 2166136261
    for byte in data:
        value ^= byte
        value = (value * 16777619) & 0xFFFFFFFF
    return value


def shard_of_key(ns: str, topic: str, key: str, shards: int) -> int:
    """The shard a keyed item lives on in cluster mode."""
    return fnv1a32(ns.encode() + b"\0" + topic.encode() + b"\0" + key.encode()) % shards


def shard_of_group(ns: str, topic: str, group: str, shards: int) -> int:
    """The shard every item of a group lives on in cluster mode (the key's hash, with the group in its place)."""
    return shard_of_key(ns, topic, group, shards)


def item_shard(ns: str, item: Mapping[str, Any], shards: int) -> int:
    """The shard an item to enqueue lives on: its group's, else its key's, else its first ``after`` id's; -1 for any."""
    if item.get("group") is not None:
        return shard_of_group(ns, item["topic"], item["group"], shards)
    if item.get("key") is not None:
        return shard_of_key(ns, item["topic"], item["key"], shards)
    after = item.get("after") or []
    if not after:
        return -1
    head, sep, _ = after[0].partition(":")
    return int(head) if sep and head.isdigit() else -1
