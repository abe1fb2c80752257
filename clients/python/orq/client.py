"""The blocking client: one ``Client`` is one TCP connection to one orq
server (wire protocol version 1, the contract's every op).

Requests carry an ``id`` chosen here; replies are matched by that id, so
replies that arrive for other requests (after ``pipeline``) are kept until
asked for. Not thread-safe: give each thread its own client. The asyncio
client (async_client.py) has the same methods, awaited.

    from orq import Client
    with Client.open("127.0.0.1", 7420) as orq:
        [item_id] = orq.enqueue("default", [{"topic": "emails", "payload": b"hi"}])
        for delivery in orq.dequeue("default", {"emails": 10}, wait_ms=1000):
            orq.ack("default", [delivery["receipt"]])
"""

from __future__ import annotations

import builtins
import socket
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import msgpack

from .errors import ConnectionLost, OrqError
from .fields import ack_fields, every_page, policy_fields, receipt_items, schedule_fields, topic_counts, traced_items
from .framing import DEFAULT_PORT, PROTOCOL_VERSION, FrameDecoder, RequestIds, encode_request
from .shapes import Delivery, Item, ItemState, Page, ReceiptItem, Reply, Topics
from .waiting import WaitPlan

if TYPE_CHECKING:
    from .worker import Worker

__all__ = ["Client"]

# Bytes asked of the socket per read: a reply larger than this arrives in several.
_READ_BYTES = 1 << 16


class Client:
    """One connection to an orq server."""

    def __init__(self, sock: socket.socket, timeout: float = 30.0) -> None:
        self._sock = sock
        self._timeout = timeout
        self._ids = RequestIds()
        self._replies: Dict[int, Dict[str, Any]] = {}
        self._decoder = FrameDecoder()
        self._closed = False
        self._packer = msgpack.Packer(use_bin_type=True)
        self.server_info: Optional[Dict[str, Any]] = None
        self._token: Optional[str] = None

    @classmethod
    def connect(cls, host: str = "127.0.0.1", port: int = DEFAULT_PORT, timeout: float = 30.0) -> "Client":
        """Open a TCP connection. ``timeout`` (seconds) bounds each reply wait beyond a request's own ``wait_ms``."""
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(sock, timeout)

    @classmethod
    def open(
        cls, host: str = "127.0.0.1", port: int = DEFAULT_PORT, timeout: float = 30.0, token: Optional[str] = None, client: str = "orq-python"
    ) -> "Client":
        """Connect and say hello: a ready client (what the worker loop's ``connect`` returns)."""
        orq = cls.connect(host, port, timeout)
        try:
            orq.hello(token=token, client=client)
        except Exception:
            orq.close()
            raise
        return orq

    @property
    def closed(self) -> bool:
        """True once closed, by close() or by a lost connection."""
        return self._closed

    def worker(self, ns: str, topic: str, handler: Callable[..., Optional[bytes]], **options: Any) -> "Worker":
        """A worker loop (orq.Worker) against this client's server, on connections of its own; call run() or start()."""
        from .worker import Worker

        host, port = self._sock.getpeername()[:2]
        token, timeout = self._token, self._timeout
        return Worker(lambda: Client.open(host, port, timeout, token, "orq-python-worker"), ns, topic, handler, **options)

    # -- context manager -------------------------------------------------

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._sock.close()

    # -- framing ---------------------------------------------------------

    def _send(self, op: str, fields: Mapping[str, Any]) -> int:
        if self._closed:
            raise ConnectionLost("the connection is closed")
        request_id = self._ids.take()
        frame = encode_request(self._packer, request_id, op, fields, (self.server_info or {}).get("max_frame_bytes"))
        try:
            self._sock.sendall(frame)
        except OSError as error:
            self.close()
            raise ConnectionLost(f"send failed: {error}") from error
        return request_id

    def _receive(self) -> None:
        """Read what the socket has and keep every reply it completes."""
        try:
            chunk = self._sock.recv(_READ_BYTES)
        except socket.timeout as error:
            # A reply may still arrive later and would be matched to the
            # wrong request by a confused caller: drop the connection.
            self.close()
            raise ConnectionLost("timed out waiting for a reply") from error
        except OSError as error:
            self.close()
            raise ConnectionLost(f"receive failed: {error}") from error
        if not chunk:
            self.close()
            raise ConnectionLost("the server closed the connection")
        try:
            replies = self._decoder.feed(chunk)
        except ConnectionLost:
            self.close()
            raise
        for reply in replies:
            if reply["id"] == 0:
                # A connection-level error (BAD_FRAME, FRAME_TOO_LARGE,
                # BAD_REQUEST for a missing id): raise it where it can be seen.
                raise OrqError.from_reply(reply)
            self._replies[reply["id"]] = reply

    def _wait(self, request_id: int, wait_ms: int = 0) -> Dict[str, Any]:
        """Read replies until the one for ``request_id``; keep the others."""
        if self._closed and request_id not in self._replies:
            raise ConnectionLost("the connection is closed")
        self._sock.settimeout(self._timeout + wait_ms / 1000.0)
        while request_id not in self._replies:
            self._receive()
        reply = self._replies.pop(request_id)
        if not reply.get("ok"):
            raise OrqError.from_reply(reply)
        return reply

    # -- generic requests ------------------------------------------------

    def request(self, op: str, **fields: Any) -> Reply:
        """Send one request and return its ok reply (a dict); raise OrqError on an error reply."""
        return self._wait(self._send(op, fields), fields.get("wait_ms") or 0)

    def pipeline(self, requests: Sequence[Tuple[str, Mapping[str, Any]]]) -> List[Union[Reply, OrqError]]:
        """Send every (op, fields) pair before reading any reply; return replies (or OrqError objects) in order."""
        ids = [(self._send(op, fields), fields.get("wait_ms") or 0) for op, fields in requests]
        results: List[Union[Reply, OrqError]] = []
        for request_id, wait_ms in ids:
            try:
                results.append(self._wait(request_id, wait_ms))
            except ConnectionLost:
                raise
            except OrqError as error:
                results.append(error)
        return results

    # -- connection ---------------------------------------------------------

    def hello(self, token: Optional[str] = None, client: str = "orq-python") -> Reply:
        """Say hello (and authenticate with ``token``); returns the server's description, limits included."""
        reply = self.request("hello", protocol=PROTOCOL_VERSION, token=token, client=client)
        self.server_info = reply
        # Kept for worker(), which opens connections of its own with the same token.
        self._token = token
        return reply

    @property
    def memory_namespaces(self) -> List[str]:
        """The namespaces the server keeps in memory only (``["*"]``: all of them), from the last ``hello``; empty when none or before it.

        Their items are lost at a restart of the server."""
        return builtins.list((self.server_info or {}).get("memory_namespaces") or [])

    def ping(self) -> int:
        """Round trip; returns the server's clock (now_ms)."""
        return self.request("ping")["now_ms"]

    def cluster(self) -> Dict[str, Any]:
        """The cluster's shard map ({map_version, node_id, nodes, owners}); BAD_REQUEST on a single node."""
        return self.request("cluster")["cluster"]

    # -- items -----------------------------------------------------------------

    def enqueue(self, ns: str, items: Sequence[Item]) -> List[str]:
        """Enqueue a batch of item dicts (``topic`` required; ``payload``/``metadata`` as bytes). Returns ids in order.

        An item without ``trace`` is given the current OpenTelemetry context when OpenTelemetry is importable.
        """
        return self.request("enqueue", ns=ns, items=traced_items(items))["ids"]

    def enqueue_one(self, ns: str, topic: str, payload: bytes = b"", **fields: Any) -> str:
        """Enqueue one item; the keyword arguments are the contract's item fields (priority=, delay_ms=, requires=, prefers=, ...)."""
        return self.enqueue(ns, [{"topic": topic, "payload": payload, **fields}])[0]

    def dequeue(
        self,
        ns: str,
        topics: Topics,
        capabilities: Optional[Mapping[str, Any]] = None,
        wait_ms: Optional[int] = None,
        lease_ms: Optional[int] = None,
    ) -> List[Delivery]:
        """Lease up to ``count`` ready items per topic. ``wait_ms`` long-polls when nothing is ready. Returns deliveries."""
        fields = {"ns": ns, "topics": topic_counts(topics), "capabilities": capabilities, "wait_ms": wait_ms, "lease_ms": lease_ms}
        return self.request("dequeue", **fields)["items"]

    def ack(self, ns: str, receipts: Sequence[str], results: Optional[Sequence[Optional[bytes]]] = None) -> Dict[str, Any]:
        """End deliveries successfully; ``results`` (bytes or None per receipt) is kept with each outcome.

        Returns {"acked": n, "stale": [receipts that no longer name a delivery]}.
        """
        reply = self.request("ack", **ack_fields(ns, receipts, results))
        return {"acked": reply["acked"], "stale": reply["stale"]}

    def nack(self, ns: str, items: Sequence[ReceiptItem]) -> Dict[str, Any]:
        """Give deliveries back: receipts, or dicts {receipt, delay_ms?, metadata?}. Returns {"nacked", "stale"}."""
        reply = self.request("nack", ns=ns, items=receipt_items(items))
        return {"nacked": reply["nacked"], "stale": reply["stale"]}

    def extend(self, ns: str, items: Sequence[ReceiptItem]) -> Dict[str, Any]:
        """Set leases to end ``lease_ms`` from now: dicts {receipt, lease_ms, metadata?} (metadata: progress). Returns {"extended", "stale"}."""
        reply = self.request("extend", ns=ns, items=receipt_items(items))
        return {"extended": reply["extended"], "stale": reply["stale"]}

    def cancel(self, ns: str, ids: Sequence[str]) -> Dict[str, Any]:
        """Cancel items in any live state. Returns {"cancelled": n, "missing": [ids]}."""
        reply = self.request("cancel", ns=ns, ids=builtins.list(ids))
        return {"cancelled": reply["cancelled"], "missing": reply["missing"]}

    def get(self, ns: str, ids: Sequence[str]) -> List[Optional[ItemState]]:
        """Item states (or None for an unknown id), in request order; an ended item is {id, state: "ended", outcome, result?}."""
        return self.request("get", ns=ns, ids=builtins.list(ids))["items"]

    def wait(self, ns: str, ids: Sequence[str], wait_ms: int = 0) -> List[Optional[ItemState]]:
        """One ``wait``: item states as soon as every id has ended, or when ``wait_ms`` runs out, in request order."""
        return self.request("wait", ns=ns, ids=builtins.list(ids), wait_ms=wait_ms)["items"]

    def wait_for(self, ns: str, ids: Sequence[str], timeout_ms: Optional[int] = None) -> List[Optional[ItemState]]:
        """Item states once every id has ended (``timeout_ms`` None: however long that takes), in request order.

        Sends as many ``wait`` requests as it needs: at most ``wait_ms_max``
        each, at most ``ids_per_request_max`` ids each. Past ``timeout_ms``
        it returns the states as they are (some not ended).
        """
        plan = WaitPlan(ids, timeout_ms, time.monotonic(), (self.server_info or {}).get("limits"))
        while True:
            asked = plan.next_request(time.monotonic())
            if asked is None:
                return plan.states
            plan.take(self.wait(ns, *asked))

    def enqueue_and_wait(self, ns: str, items: Sequence[Item], timeout_ms: Optional[int] = None) -> List[Optional[ItemState]]:
        """Enqueue items, then wait until each has ended (``wait_for``): their final states, results included."""
        return self.wait_for(ns, self.enqueue(ns, items), timeout_ms)

    # -- reading a namespace -------------------------------------------------

    def topics(self, ns: str, prefix: Optional[str] = None, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        """One page of the namespace's topics: {"topics": [...], "next": str or None}.

        Each entry holds its counts by state and ``paused`` (bool), plus
        ``paused_until_ms`` for a pause that ends by itself.
        """
        reply = self.request("topics", ns=ns, prefix=prefix, limit=limit, after=after)
        return {"topics": reply["topics"], "next": reply.get("next")}

    def topics_all(self, ns: str, prefix: Optional[str] = None, limit: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every topic of the namespace, following ``next`` page by page (a generator)."""
        return every_page(lambda after: self.topics(ns, prefix=prefix, limit=limit, after=after), "topics")

    def list(self, ns: str, topic: str, state: Optional[str] = None, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        """One page of a topic's items (read only): {"items": [...], "next": str or None}.

        Ready items come in delivery order, the others in enqueue order;
        ``state`` keeps one state only. Pass ``next`` as ``after`` for the
        next page; a page may be short while ``next`` is set.
        """
        reply = self.request("list", ns=ns, topic=topic, state=state, limit=limit, after=after)
        return {"items": reply["items"], "next": reply.get("next")}

    def list_all(self, ns: str, topic: str, state: Optional[str] = None, limit: Optional[int] = None) -> Iterator[ItemState]:
        """Every item of a topic, following ``next`` page by page (a generator)."""
        return every_page(lambda after: self.list(ns, topic, state=state, limit=limit, after=after), "items")

    def dead(self, ns: str, topic: str, limit: Optional[int] = None) -> List[ItemState]:
        """A topic's dead letters (item states)."""
        return self.request("dead", ns=ns, topic=topic, limit=limit)["items"]

    def redrive(self, ns: str, topic: str, ids: Optional[Sequence[str]] = None) -> Dict[str, Any]:
        """Dead letters back to ready, attempts reset: the given ids, or every one of the topic. Returns {"redriven": n}."""
        reply = self.request("redrive", ns=ns, topic=topic, ids=None if ids is None else builtins.list(ids))
        return {"redriven": reply["redriven"]}

    def stats(self, ns: Optional[str] = None) -> Reply:
        """The server's counters and gauges (docs/PROTOCOL.md), for one namespace or all it may see."""
        return {key: value for key, value in self.request("stats", ns=ns).items() if key not in ("id", "ok")}

    # -- pauses ------------------------------------------------------------------

    def pause(self, ns: str, topic: str, for_ms: Optional[int] = None, group: Optional[str] = None) -> Optional[int]:
        """Stop deliveries from a topic (with ``group``, from that group's items only) for ``for_ms`` (None: until resume).

        Returns when it ends (``paused_until_ms``), or None for a pause until resume.
        """
        return self.request("pause", ns=ns, topic=topic, group=group, for_ms=for_ms).get("paused_until_ms")

    def resume(self, ns: str, topic: str, group: Optional[str] = None) -> bool:
        """Lift a topic's pause (or one group's). Returns False when it was not paused."""
        return self.request("resume", ns=ns, topic=topic, group=group)["resumed"]

    # -- fair sharing: policies, groups, explain ---------------------------

    def policy(
        self,
        ns: str,
        topic: str,
        group: Optional[str] = None,
        weight: Optional[int] = None,
        max_leased: Optional[int] = None,
        rate: Union[None, Mapping[str, int], Tuple[int, int]] = None,
        clear: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """Set the policy of a topic (no ``group``), one group, or every group without its own (``group="*"``).

        It replaces the whole stored policy: a bound not given is no bound.
        ``rate`` is ``{"count": n, "per_ms": ms}`` or a ``(count, per_ms)``
        pair. ``clear=True`` removes the policy instead. Returns
        ``{"policy": {group?, weight?, max_leased?, rate?}}`` as stored, or
        ``{"cleared": bool}``.
        """
        reply = self.request(
            "policy",
            **policy_fields(ns, topic, group=group, weight=weight, max_leased=max_leased, rate=rate, clear=clear),
        )
        return {"policy": reply["policy"]} if reply.get("policy") is not None else {"cleared": bool(reply.get("cleared"))}

    def policies(self, ns: str, topic: str, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        """One page of a topic's policies, its own first, then by group name: {"policies": [...], "next": str or None}."""
        reply = self.request("policies", ns=ns, topic=topic, limit=limit, after=after)
        return {"policies": reply["policies"], "next": reply.get("next")}

    def policies_all(self, ns: str, topic: str, limit: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every policy of a topic, following ``next`` page by page (a generator)."""
        return every_page(lambda after: self.policies(ns, topic, limit=limit, after=after), "policies")

    def groups(self, ns: str, topic: str, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        """One page of a topic's groups with their counts by state: {"groups": [...], "next": str or None}.

        By group name; the items without a group come first as ``group: None``
        (its cursor is ""). Each entry has ``paused`` and, for a pause that
        ends by itself, ``paused_until_ms``.
        """
        reply = self.request("groups", ns=ns, topic=topic, limit=limit, after=after)
        return {"groups": reply["groups"], "next": reply.get("next")}

    def groups_all(self, ns: str, topic: str, limit: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every group of a topic, following ``next`` page by page (a generator)."""
        return every_page(lambda after: self.groups(ns, topic, limit=limit, after=after), "groups")

    def explain(self, ns: str, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        """Why each item is not being delivered right now: [{id, state, reasons} or None], in request order."""
        return self.request("explain", ns=ns, ids=builtins.list(ids))["items"]

    # -- schedules ------------------------------------------------------------

    def schedule(
        self,
        ns: str,
        name: str,
        item: Item,
        cron: Optional[str] = None,
        every_ms: Optional[int] = None,
        timezone: Optional[str] = None,
        catch_up: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Create or replace a schedule that enqueues ``item`` at each tick (``cron`` or ``every_ms``). Returns {"name", "next_at_ms"}."""
        reply = self.request("schedule", **schedule_fields(ns, name, item, cron, every_ms, timezone, catch_up))
        return {"name": reply["name"], "next_at_ms": reply["next_at_ms"]}

    def unschedule(self, ns: str, name: str) -> bool:
        """Remove a schedule. Returns False when there was none of that name."""
        return self.request("unschedule", ns=ns, name=name)["removed"]

    def schedules(self, ns: str, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        """One page of the namespace's schedules by name: {"schedules": [...], "next": str or None}."""
        reply = self.request("schedules", ns=ns, limit=limit, after=after)
        return {"schedules": reply["schedules"], "next": reply.get("next")}

    def schedules_all(self, ns: str, limit: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every schedule of the namespace, following ``next`` page by page (a generator)."""
        return every_page(lambda after: self.schedules(ns, limit=limit, after=after), "schedules")
