"""What ``ClusterClient`` asks every node for and merges (as
src/client/cluster-merge.ts and cluster-client.ts): ``topics``, ``groups``,
``dead``, ``list``, ``stats`` and ``redrive``. Each node answers these for its own
shards only (the contract's "Cluster mode"); docs/CLUSTER.md, "What the
clients merge", gives the rules. ``AcrossNodes`` is a part of
``ClusterClient`` (cluster.py) and uses its routing.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .errors import OrqError
from .fields import every_page
from .group_pages import merge_group_pages
from .topic_pages import merge_topic_pages

__all__ = ["AcrossNodes", "sum_stats", "interleave_dead", "encode_list_cursor", "decode_list_cursor"]

# A merged ``dead`` without a limit stops where one node's would (its page
# maximum, 1,000); a ``list`` page defaults to a node's default (100).
DEAD_DEFAULT = 1000
LIST_DEFAULT = 100
# A node whose listing has ended, in a merged list cursor.
LIST_DONE = "done"
_CURSOR_PREFIX = "c1."
_ROUTABLE = {"MOVED", "UNAVAILABLE", "CONNECTION_LOST"}
# Stats fields where the cluster's value is the largest node's (clocks; worker
# kinds ask every node), and settings every node shares (the first node's).
_LARGEST_OF = {"now_ms", "uptime_ms", "askers"}
_FIRST_OF = {"quota"}
# Requirement sets one unmatchable report lists: the server's own cut.
_SIGNATURES_LISTED_MAX = 20


class AcrossNodes:
    """The ops every node answers for its own shards, asked of every node and merged."""

    # Given by ClusterClient (cluster.py), which holds the map and routes.
    _map: Optional[Dict[str, Any]]
    _seed: str
    _clients: Dict[str, Any]

    def _route(self, entries: List[Any], shard_of_entry: Callable[[Any], int], send: Callable[[Any, List[Any]], None]) -> None:
        raise NotImplementedError

    def _client(self, addr: str) -> Any:
        raise NotImplementedError

    def _addrs(self) -> List[str]:
        raise NotImplementedError

    def _forget(self, addr: str) -> None:
        raise NotImplementedError

    def topics(self, ns: str, prefix: Optional[str] = None, limit: Optional[int] = None, after: Optional[str] = None) -> Dict[str, Any]:
        """One page of every node's topics, counts summed per topic: {"topics": [...], "next": str or None}.

        Paged like a single server's (pass ``next`` as ``after``): every node is
        asked for the same page, and the merged page ends at the smallest last
        topic of a node that has more, so following ``next`` never skips a
        topic some node has not listed yet. A node gone adds nothing.
        """
        answers = self._every_node(lambda client, addr: client.topics(ns, prefix=prefix, limit=limit, after=after))
        return merge_topic_pages([result for _, result, _ in answers if result is not None], limit)

    def topics_all(self, ns: str, prefix: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every topic of the namespace, following ``next`` page by page (a generator)."""
        after = None
        while True:
            page = self.topics(ns, prefix=prefix, limit=limit, after=after)
            yield from page["topics"]
            if page["next"] is None:
                return
            after = page["next"]

    def groups(self, ns: str, topic: str, limit: Optional[int] = None, after: Optional[str] = None) -> Dict[str, Any]:
        """One page of every node's groups of a topic, counts summed per group: {"groups": [...], "next": str or None}.

        Each node answers for the groups on its shards; paged like a single
        server's (pass ``next`` as ``after``), never skipping a group some node
        has not listed yet (group_pages.py). A node gone adds nothing.
        """
        answers = self._every_node(lambda client, addr: client.groups(ns, topic, limit=limit, after=after))
        return merge_group_pages([result for _, result, _ in answers if result is not None], limit)

    def groups_all(self, ns: str, topic: str, limit: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every group of a topic on every node, following ``next`` page by page (a generator)."""
        return every_page(lambda after: self.groups(ns, topic, limit=limit, after=after), "groups")

    def dead(self, ns: str, topic: str, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        """Every node's dead letters of a topic, from the nodes in turn (each node's oldest death first), at most ``limit``."""
        answers = self._every_node(lambda client, addr: client.request("dead", ns=ns, topic=topic, limit=limit)["items"])
        return interleave_dead([result or [] for _, result, _ in answers], DEAD_DEFAULT if limit is None else limit)

    def redrive(self, ns: str, topic: str, ids: Optional[Sequence[str]] = None) -> Dict[str, Any]:
        """Redrive the given dead letters on their owners, or (without ids) every node's. Returns {"redriven": n}."""
        total = {"redriven": 0}
        if ids is not None:

            def send(client: Any, group: List[str]) -> None:
                total["redriven"] += client.request("redrive", ns=ns, topic=topic, ids=group)["redriven"]

            self._route(list(ids), _shard_prefix, send)
        else:
            for _, result, _ in self._every_node(lambda client, addr: client.request("redrive", ns=ns, topic=topic)):
                total["redriven"] += result["redriven"] if result is not None else 0
        return total

    def stats(self, ns: Optional[str] = None) -> Dict[str, Any]:
        """{"merged": the nodes' replies summed, "nodes": [{"node_id", "addr", "stats" or "error"}]}; on a single node merged is its reply."""
        answers = self._every_node(lambda client, addr: _without_envelope(client.request("stats", ns=ns)))
        nodes = []
        for addr, result, error in answers:
            node = {"node_id": self._node_id_of(addr), "addr": addr}
            node.update({"stats": result} if result is not None else {"error": str(error)})
            nodes.append(node)
        replies = [result for _, result, _ in answers if result is not None]
        return {"merged": replies[0] if len(replies) == 1 else sum_stats(replies), "nodes": nodes}

    def list(self, ns: str, topic: str, state: Optional[str] = None, limit: Optional[int] = None, after: Optional[str] = None) -> Dict[str, Any]:
        """One page of a topic's items from every node: {"items", "next"}; each node gives ``limit / nodes`` (at least 1).

        Merged in list order; ``next`` bundles every node's own cursor and is
        the same format the TypeScript client and the CLI use. Paging lists
        each item once while shards stay on their nodes.
        """
        if self._map is None:
            return self._client(self._seed).list(ns, topic, state=state, limit=limit, after=after)
        decoded = {} if after is None else decode_list_cursor(after)
        if decoded is None:
            raise OrqError("BAD_REQUEST", "after: not a cursor of a cluster listing", {"field": "after"})
        cursor: Dict[str, str] = decoded
        per_node = max(1, (LIST_DEFAULT if limit is None else limit) // max(1, len(self._addrs())))

        def ask(client: Any, addr: str) -> Any:
            if cursor.get(addr) == LIST_DONE:
                return {"items": [], "next": None}
            return client.list(ns, topic, state=state, limit=per_node, after=cursor.get(addr))

        answers = self._every_node(ask)
        following = {}
        for addr, result, _ in answers:
            if result is not None:
                following[addr] = result["next"] or LIST_DONE
            elif addr in cursor:
                following[addr] = cursor[addr]
        # A node that did not answer adds nothing: it does not keep the listing going.
        more = any(following.get(addr) != LIST_DONE for addr, result, _ in answers if result is not None)
        items = sorted((item for _, result, _ in answers if result is not None for item in result["items"]), key=_list_order)
        return {"items": items, "next": encode_list_cursor(following) if more else None}

    def list_all(self, ns: str, topic: str, state: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every item of a topic on every node, following ``next`` page by page (a generator)."""
        return every_page(lambda after: self.list(ns, topic, state=state, limit=limit, after=after), "items")

    def _every_node(self, ask: Callable[[Any, str], Any]) -> List[Tuple[str, Any, Optional[BaseException]]]:
        """[(addr, result or None, error or None)] for every node in map order; a node gone or busy answers None."""
        answers: List[Tuple[str, Any, Optional[BaseException]]] = []
        for addr in self._addrs():
            try:
                answers.append((addr, ask(self._client(addr), addr), None))
            except (OrqError, OSError) as error:
                code = error.code if isinstance(error, OrqError) else "CONNECTION_LOST"
                if code not in _ROUTABLE or self._map is None:
                    raise
                if code == "CONNECTION_LOST":
                    self._forget(addr)
                answers.append((addr, None, error))
        return answers

    def _node_id_of(self, addr: str) -> Optional[str]:
        if self._map is None:
            client = self._clients.get(addr)
            return None if client is None else (client.server_info or {}).get("node_id")
        return next((n["node_id"] for n in self._map["nodes"] if n["addr"] == addr), None)


def _shard_prefix(text: str) -> int:
    head, sep, _ = text.partition(":")
    return int(head) if sep and head.isdigit() else -1


def _without_envelope(reply: Dict[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in reply.items() if key not in ("id", "ok")}


def _list_order(item: Dict[str, Any]) -> Tuple[int, int, int, int]:
    """Ready items first by priority and due time, then the rest by enqueue time, as one node lists them."""
    if item["state"] == "ready":
        return (0, item["priority"], item["deliver_at_ms"], item["enqueued_at_ms"])
    return (1, 0, 0, item["enqueued_at_ms"])


def interleave_dead(lists: Sequence[Sequence[Dict[str, Any]]], limit: int) -> List[Dict[str, Any]]:
    """Every node's dead letters, each node's in its own order, taken from the nodes in turn, at most ``limit``."""
    merged: List[Dict[str, Any]] = []
    for index in range(max((len(items) for items in lists), default=0)):
        for items in lists:
            if index < len(items) and len(merged) < limit:
                merged.append(items[index])
    return merged


def encode_list_cursor(cursor: Dict[str, str]) -> str:
    text = json.dumps(cursor, separators=(",", ":")).encode()
    return _CURSOR_PREFIX + base64.urlsafe_b64encode(text).decode().rstrip("=")


def decode_list_cursor(text: str) -> Optional[Dict[str, str]]:
    """The per-node cursors, or None for a string this client (or the TypeScript one) did not make."""
    if not text.startswith(_CURSOR_PREFIX):
        return None
    body = text[len(_CURSOR_PREFIX):]
    try:
        cursor = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        return None
    if not isinstance(cursor, dict) or not all(isinstance(value, str) for value in cursor.values()):
        return None
    return cursor


def sum_stats(replies: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Several nodes' ``stats`` replies as one: counts added, flags or'ed, clocks the largest, requirement sets combined."""
    merged = _merge_maps(replies)
    namespaces = merged.get("namespaces")
    if not isinstance(namespaces, dict):
        return merged
    counted, topics = True, 0
    for ns in namespaces.values():
        # A topic several nodes hold counts once (when none of them cut its list short).
        if isinstance(ns, dict) and isinstance(ns.get("topics"), dict) and ns.get("topics_truncated") is not True:
            ns["topic_count"] = len(ns["topics"])
        else:
            counted = False
        topics += ns.get("topic_count", 0) if isinstance(ns, dict) else 0
    if counted and isinstance(merged.get("totals"), dict) and "topics" in merged["totals"]:
        merged["totals"]["topics"] = topics
    return merged


def _merge_maps(values: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    keys = []
    for value in values:
        keys += [key for key in value if key not in keys]
    return {key: _merge_value(key, [value[key] for value in values if key in value]) for key in keys}


def _merge_value(key: str, values: Sequence[Any]) -> Any:
    present = [value for value in values if value is not None]
    if not present:
        return None
    first = present[0]
    if key in _FIRST_OF:
        return first
    if isinstance(first, bool):
        return any(value is True for value in present)
    if isinstance(first, (int, float)):
        numbers = [value for value in present if isinstance(value, (int, float)) and not isinstance(value, bool)]
        return max(numbers) if key in _LARGEST_OF else sum(numbers)
    if key == "signatures":
        return _merge_signatures([entry for value in present if isinstance(value, list) for entry in value])
    if isinstance(first, list):
        return [entry for value in present if isinstance(value, list) for entry in value]
    if isinstance(first, dict):
        merged = _merge_maps([value for value in present if isinstance(value, dict)])
        # More requirement sets than one report lists: say so, as a node does.
        if isinstance(merged.get("signatures"), list) and len(merged["signatures"]) > _SIGNATURES_LISTED_MAX:
            merged["signatures"] = merged["signatures"][:_SIGNATURES_LISTED_MAX]
            merged["signatures_truncated"] = True
        return merged
    return first


def _merge_signatures(signatures: Sequence[Any]) -> List[Dict[str, Any]]:
    """The same requirement set on several nodes becomes one entry with their items summed; most items first."""
    by_set: Dict[str, Dict[str, Any]] = {}
    for signature in signatures:
        if not isinstance(signature, dict):
            continue
        set_key = json.dumps(signature.get("requires"), sort_keys=True)
        if set_key in by_set:
            by_set[set_key]["items"] += signature.get("items", 0)
        else:
            by_set[set_key] = dict(signature, items=signature.get("items", 0))
    return sorted(by_set.values(), key=lambda entry: -entry["items"])
