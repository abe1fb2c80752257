"""Where a keyed item lives in cluster mode (as src/protocol/key-shard.ts):
shard ``fnv1a32(utf8(ns) 0x00 utf8(topic) 0x00 utf8(key)) % shards``, the
contract's FNV-1a (32 bits, offset basis 2166136261, prime 16777619).
"""

__all__ = ["fnv1a32", "shard_of_key"]


def fnv1a32(data):
    """FNV-1a, 32 bits (offset basis 2166136261, prime 16777619)."""
    value = 2166136261
    for byte in data:
        value ^= byte
        value = (value * 16777619) & 0xFFFFFFFF
    return value


def shard_of_key(ns, topic, key, shards):
    """The shard a keyed item lives on in cluster mode."""
    return fnv1a32(ns.encode() + b"\0" + topic.encode() + b"\0" + key.encode()) % shards
