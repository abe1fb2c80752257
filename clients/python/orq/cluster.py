"""The blocking client for an orq cluster (docs/CLUSTER.md) that hides it.

Given any node's address, ``ClusterClient`` reads the shard map (the
``cluster`` op), sends each request to the node that owns the shards it
names (ids and receipts start with ``<shard>:``: ``ack``, ``nack``,
``extend``, ``get``, ``cancel``, ``explain`` and ``wait``; a grouped item's shard is
``fnv1a32(ns 0x00 topic 0x00 group) % shards``, else a keyed item's is
``fnv1a32(ns 0x00 topic 0x00 key) % shards``, else an ``after`` item's is its
first id's; any other item goes to the nodes in turn), splits batches by owner,
re-reads the map and resends on MOVED or a lost node (sending a shard to the
owner a MOVED named while the map read is older than that answer, as it is
when the node read from is cut off from the database), waits out UNAVAILABLE by
its ``retry_after_ms``, and dequeues from every node (one thread per node for
the long-poll; deliveries that arrive after the first answer are kept for the
next dequeue of the namespace). ``topics``, ``groups``, ``dead``, ``list``,
``stats`` and ``redrive`` ask every node and merge (cluster_merge.py);
``pause``, ``resume``, ``policy``, ``policies``, ``schedule``,
``unschedule`` and ``schedules`` go to one node, the seed while it answers
(every node shares pauses, policies and schedules: they live in the
database, and exactly one node fires a schedule); ``worker()`` runs the
worker loop (worker.py) over the whole cluster. Against a single node it is
a plain client.

    from orq import ClusterClient
    orq = ClusterClient("10.0.0.5", 7420)
    [item_id] = orq.enqueue("default", [{"topic": "emails", "payload": b"hi", "key": "order-17"}])
    for delivery in orq.dequeue("default", {"emails": 10}, wait_ms=1000):
        orq.ack("default", [delivery["receipt"]])
"""

from __future__ import annotations

import random
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from .client import Client
from .cluster_merge import AcrossNodes
from .errors import ConnectionLost, OrqError, error_code
from .fields import every_page, policy_fields, topic_counts
from .group_pages import merge_group_pages
from .key_shard import fnv1a32, item_shard, shard_of_group, shard_of_key
from .topic_pages import merge_topic_pages
from .shapes import Delivery, Item, ItemState, Page, ReceiptItem, Topics
from .waiting import WaitPlan

if TYPE_CHECKING:
    from .worker import Worker

__all__ = ["ClusterClient", "fnv1a32", "shard_of_key", "shard_of_group", "item_shard", "merge_topic_pages", "merge_group_pages"]

# Times one request is re-routed (MOVED, UNAVAILABLE, a lost node) before its
# error is raised: far past a takeover (shard_lease_ms + 2 s).
ROUTE_ATTEMPTS_MAX = 100
# Idle long-poll connections kept per node (4): a dequeue uses one per node,
# and a few more cover long-polls still out from earlier dequeues.
POLLERS_PER_NODE_MAX = 4
# Pause before re-reading the map after a node could not be reached.
LOST_NODE_PAUSE_S = 0.1
# Items with no key, group or `after` sent to one node before the client moves
# on to the next (1,000; the TypeScript client's clientStickyItems): concurrent
# single-item enqueues share that node's commits (docs/decisions/046-sticky-placement.md).
STICKY_ITEMS = 1000
# A call with at least this many such items (100) is a commit's worth by itself: it goes
# to the next node in turn and leaves the sticky node's count alone (clientOwnTurnCallItems).
OWN_TURN_CALL_ITEMS = 100
_ROUTABLE = {"MOVED", "UNAVAILABLE", "CONNECTION_LOST"}


_code = error_code


def _shard_of(text: str) -> int:
    head, sep, _ = text.partition(":")
    return int(head) if sep and head.isdigit() else -1


class ClusterClient(AcrossNodes):
    """One blocking client over every node of a cluster. Not thread-safe: give each thread its own."""

    # It re-routes and reconnects by itself: the worker loop (worker.py) keeps it after a lost node.
    reconnects = True

    def __init__(
        self, host: str = "127.0.0.1", port: int = 7420, timeout: float = 30.0, token: Optional[str] = None, sticky_items: int = STICKY_ITEMS
    ) -> None:
        if isinstance(sticky_items, bool) or not isinstance(sticky_items, int) or sticky_items < 1:
            raise ValueError(f"sticky_items: must be an integer of 1 or more, got {sticky_items!r}")
        self._seed = f"{host}:{port}"
        self._timeout = timeout
        self._token = token
        self._clients: Dict[str, Client] = {}
        self._map: Optional[Dict[str, Any]] = None
        self._shards = 0
        # Each client starts its turn at a random node, so clients started together spread.
        self._turn = random.randrange(1024)
        # Where items that name no shard go, and how many went there (_sticky_addr).
        self._sticky_items = sticky_items
        self._home: Optional[str] = None
        self._home_items = 0
        # Per shard, (addr, map_version) of the owner the last MOVED for it named: used while the map is older.
        self._moved_to: Dict[int, Tuple[str, int]] = {}
        self._kept: Dict[str, List[Delivery]] = {}
        # Guards what the dequeue threads share: kept deliveries and idle poll connections.
        self._lock = threading.Lock()
        self._pollers: Dict[str, List[Client]] = {}
        self._closed = False
        self.refresh()

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
        with self._lock:
            self._closed = True
            for idle in self._pollers.values():
                for client in idle:
                    client.close()
            self._pollers.clear()

    def __enter__(self) -> "ClusterClient":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def refresh(self) -> None:
        """Read the map from any node that answers (the seed first)."""
        last: Optional[BaseException] = None
        for addr in [self._seed] + [a for a in self._addrs() if a != self._seed]:
            try:
                client = self._client(addr)
                self._shards = (client.server_info or {})["shards"]
                try:
                    self._map = client.request("cluster")["cluster"]
                except OrqError as error:
                    if error.code not in ("BAD_REQUEST", "UNKNOWN_OP"):
                        raise
                    self._map = None  # a single node
                return
            except (OrqError, OSError) as error:
                last = error
                self._forget(addr)
        raise last or ConnectionLost("no node of the cluster answers")

    def cluster(self) -> Optional[Dict[str, Any]]:
        """The shard map as last read ({map_version, node_id, nodes, owners}; refresh() reads it again); None in front of a single node."""
        return self._map

    def ping(self) -> int:
        """Round trip to one node (the seed while it answers); returns its clock."""
        return self._any_node(lambda client: client.ping())

    # -- the contract's operations, routed ------------------------------------

    def enqueue_one(self, ns: str, topic: str, payload: bytes = b"", **fields: Any) -> str:
        """Enqueue one item (Client.enqueue_one) on its node."""
        return self.enqueue(ns, [{"topic": topic, "payload": payload, **fields}])[0]

    def enqueue(self, ns: str, items: Sequence[Item]) -> List[str]:
        """Enqueue a batch, each item on its node (Client.enqueue): ids in request order."""
        ids: List[str] = [""] * len(items)
        entries = list(enumerate(items))

        def shard(entry: Tuple[int, Item]) -> int:
            return -1 if self._map is None else item_shard(ns, entry[1], self._shards)

        def send(client: Client, group: List[Tuple[int, Item]]) -> None:
            for (index, _), item_id in zip(group, client.enqueue(ns, [item for _, item in group])):
                ids[index] = item_id

        self._route(entries, shard, send, sticky=True)
        return ids

    def ack(self, ns: str, receipts: Sequence[str], results: Optional[Sequence[Optional[bytes]]] = None) -> Dict[str, Any]:
        """End deliveries on their owners, each with its result if given (Client.ack). Returns {"acked", "stale"}."""
        total: Dict[str, Any] = {"acked": 0, "stale": []}
        if results is not None and len(results) != len(receipts):
            raise ValueError(f"results has {len(results)} entries for {len(receipts)} receipts")
        paired = list(zip(receipts, [None] * len(receipts) if results is None else results))

        def send(client: Client, group: List[Tuple[str, Optional[bytes]]]) -> None:
            result = client.ack(ns, [receipt for receipt, _ in group], [value for _, value in group])
            total["acked"] += result["acked"]
            total["stale"] += result["stale"]

        self._route(paired, lambda entry: _shard_of(entry[0]), send)
        return total

    def nack(self, ns: str, items: Sequence[ReceiptItem]) -> Dict[str, Any]:
        total = {"nacked": 0, "stale": []}
        entries = [item if isinstance(item, dict) else {"receipt": item} for item in items]

        def send(client: Client, group: List[Dict[str, Any]]) -> None:
            result = client.nack(ns, group)
            total["nacked"] += result["nacked"]
            total["stale"] += result["stale"]

        self._route(entries, lambda item: _shard_of(item["receipt"]), send)
        return total

    def extend(self, ns: str, items: Sequence[ReceiptItem]) -> Dict[str, Any]:
        """Extend leases (with ``metadata``: progress) on their owners. Returns {"extended", "stale"}."""
        total = {"extended": 0, "stale": []}

        def send(client: Client, group: List[Dict[str, Any]]) -> None:
            result = client.extend(ns, group)
            total["extended"] += result["extended"]
            total["stale"] += result["stale"]

        entries = [item if isinstance(item, dict) else {"receipt": item} for item in items]
        self._route(entries, lambda item: _shard_of(item["receipt"]), send)
        return total

    def get(self, ns: str, ids: Sequence[str]) -> List[Optional[ItemState]]:
        """Item states from each id's owner, in request order."""
        items: List[Optional[Dict[str, Any]]] = [None] * len(ids)

        def send(client: Client, group: List[Tuple[int, str]]) -> None:
            reply = client.request("get", ns=ns, ids=[item_id for _, item_id in group])
            for (index, _), state in zip(group, reply["items"]):
                items[index] = state

        self._route(list(enumerate(ids)), lambda entry: _shard_of(entry[1]), send)
        return items

    def cancel(self, ns: str, ids: Sequence[str]) -> Dict[str, Any]:
        """Cancel items wherever they live. Returns {"cancelled": n, "missing": [ids]}."""
        total = {"cancelled": 0, "missing": []}

        def send(client: Client, group: List[str]) -> None:
            reply = client.request("cancel", ns=ns, ids=group)
            total["cancelled"] += reply["cancelled"]
            total["missing"] += reply["missing"]

        self._route(list(ids), _shard_of, send)
        return total

    def explain(self, ns: str, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        """Why each item is not being delivered now, asked of each id's owner: [{id, state, reasons} or None] in request order."""
        items: List[Optional[Dict[str, Any]]] = [None] * len(ids)

        def send(client: Client, group: List[Tuple[int, str]]) -> None:
            for (index, _), explained in zip(group, client.explain(ns, [item_id for _, item_id in group])):
                items[index] = explained

        self._route(list(enumerate(ids)), lambda entry: _shard_of(entry[1]), send)
        return items

    def pause(self, ns: str, topic: str, for_ms: Optional[int] = None, group: Optional[str] = None) -> Optional[int]:
        """Pause a topic (or one group) on the whole cluster: any node writes it, every node holds it within 1 s."""
        return self._any_node(lambda client: client.pause(ns, topic, for_ms=for_ms, group=group))

    def resume(self, ns: str, topic: str, group: Optional[str] = None) -> bool:
        """Lift a topic's (or one group's) pause on the whole cluster. Returns False when it was not paused."""
        return self._any_node(lambda client: client.resume(ns, topic, group=group))

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
        """Set or clear a policy (Client.policy); any node stores it for the whole cluster."""
        fields = policy_fields(ns, topic, group=group, weight=weight, max_leased=max_leased, rate=rate, clear=clear)
        del fields["ns"], fields["topic"]
        return self._any_node(lambda client: client.policy(ns, topic, **fields))

    def policies(self, ns: str, topic: str, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        """One page of a topic's policies: every node holds them all, so one node answers."""
        return self._any_node(lambda client: client.policies(ns, topic, limit=limit, after=after))

    def policies_all(self, ns: str, topic: str, limit: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every policy of a topic, following ``next`` page by page (a generator)."""
        return every_page(lambda after: self.policies(ns, topic, limit=limit, after=after), "policies")

    def wait(self, ns: str, ids: Sequence[str], wait_ms: int = 0) -> List[Optional[ItemState]]:
        """One ``wait`` per owner, in turn, all within ``wait_ms`` of the call: item states in request order.

        An id on a later owner is asked with what is left of ``wait_ms``, so
        the whole call ends within it (plus re-routing); each state is the
        item's at its owner's answer.
        """
        items: List[Optional[ItemState]] = [None] * len(ids)
        deadline_s = time.monotonic() + wait_ms / 1000.0

        def send(client: Client, group: List[Tuple[int, str]]) -> None:
            left_ms = max(0, int((deadline_s - time.monotonic()) * 1000))
            for (index, _), state in zip(group, client.wait(ns, [item_id for _, item_id in group], left_ms)):
                items[index] = state

        self._route(list(enumerate(ids)), lambda entry: _shard_of(entry[1]), send)
        return items

    def wait_for(self, ns: str, ids: Sequence[str], timeout_ms: Optional[int] = None) -> List[Optional[ItemState]]:
        """Item states once every id has ended, or at ``timeout_ms`` (Client.wait_for), asking each id's owner."""
        plan = WaitPlan(ids, timeout_ms, time.monotonic(), self._limits())
        while True:
            asked = plan.next_request(time.monotonic())
            if asked is None:
                return plan.states
            plan.take(self.wait(ns, *asked))

    def enqueue_and_wait(self, ns: str, items: Sequence[Item], timeout_ms: Optional[int] = None) -> List[Optional[ItemState]]:
        """Enqueue items, then wait until each has ended (``wait_for``): their final states, results included."""
        return self.wait_for(ns, self.enqueue(ns, items), timeout_ms)

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
        """Create or replace a schedule (Client.schedule); any node stores it for the whole cluster, and one node fires it."""
        return self._any_node(lambda client: client.schedule(ns, name, item, cron, every_ms, timezone, catch_up))

    def unschedule(self, ns: str, name: str) -> bool:
        """Remove a schedule on the whole cluster. Returns False when there was none of that name."""
        return self._any_node(lambda client: client.unschedule(ns, name))

    def schedules(self, ns: str, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        """One page of the namespace's schedules: every node reads them all, so one node answers."""
        return self._any_node(lambda client: client.schedules(ns, limit=limit, after=after))

    def schedules_all(self, ns: str, limit: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every schedule of the namespace, following ``next`` page by page (a generator)."""
        return every_page(lambda after: self.schedules(ns, limit=limit, after=after), "schedules")

    def _limits(self) -> Optional[Dict[str, Any]]:
        """The seed's hello limits (every node of a cluster has the same), or None before a connection."""
        client = self._clients.get(self._seed)
        return None if client is None or client.server_info is None else client.server_info.get("limits")

    def worker(self, ns: str, topic: str, handler: Callable[..., Optional[bytes]], **options: Any) -> "Worker":
        """A worker loop (orq.Worker) over the whole cluster, on clients of its own; call run() or start()."""
        from .worker import Worker

        addrs = [self._seed] + [addr for addr in self._addrs() if addr != self._seed]
        timeout, token = self._timeout, self._token

        def connect() -> ClusterClient:
            # Any node that answers (the seed may be the one that died).
            last: Optional[BaseException] = None
            for addr in addrs:
                try:
                    host, port = _split(addr)
                    return ClusterClient(host, port, timeout, token)
                except (OrqError, OSError) as error:
                    last = error
            raise last or ConnectionLost("no node of the cluster answers")

        return Worker(connect, ns, topic, handler, **options)

    def dequeue(
        self,
        ns: str,
        topics: Topics,
        capabilities: Optional[Mapping[str, Any]] = None,
        wait_ms: Optional[int] = None,
        lease_ms: Optional[int] = None,
    ) -> List[Delivery]:
        """Lease from every node: the first deliveries to come back; later ones are kept for the next call."""
        room = {entry["topic"]: entry.get("count", 1) for entry in topic_counts(topics)}
        kept, ready = [], []
        with self._lock:
            for delivery in self._kept.get(ns, []):
                if room.get(delivery["topic"], 0) > 0:
                    room[delivery["topic"]] -= 1
                    ready.append(delivery)
                else:
                    kept.append(delivery)
            if ready:
                self._kept[ns] = kept
                return ready
        if self._map is None:
            return self._client(self._seed).dequeue(ns, topics, capabilities, wait_ms, lease_ms)
        answers: List[Tuple[List[Delivery], Optional[BaseException]]] = []
        lost: List[str] = []
        done = threading.Condition()
        addrs = self._addrs()

        def ask(addr: str) -> None:
            deliveries: List[Delivery] = []
            failure: Optional[BaseException] = None
            client: Optional[Client] = None
            try:
                # A connection of the poll pool: the thread must not share the routed clients.
                client = self._take_poller(addr)
                deliveries = client.dequeue(ns, topics, capabilities, wait_ms, lease_ms)
            except (OrqError, OSError) as error:
                # A node gone (refused, cut off) or busy adds nothing this time.
                if _code(error) not in _ROUTABLE:
                    failure = error
                elif _code(error) == "CONNECTION_LOST":
                    lost.append(addr)
            if client is not None:
                self._give_poller(addr, client)
            with done:
                answers.append((deliveries, failure))
                done.notify_all()

        for addr in addrs:
            threading.Thread(target=ask, args=(addr,), daemon=True).start()
        with done:
            while True:
                for deliveries, failure in answers:
                    if failure is not None:
                        raise failure
                first = next((d for d, _ in answers if d), None)
                if first is not None or len(answers) == len(addrs):
                    break
                done.wait()
            taken = first or []
            # Whatever other nodes bring later is kept for the next dequeue.
            threading.Thread(target=self._keep_late, args=(ns, answers, done, len(addrs), taken), daemon=True).start()
        if lost:
            # The map still names a node that is gone: read it again (best effort).
            try:
                self.refresh()
            except (OrqError, OSError):
                pass
        return taken

    # -- routing ---------------------------------------------------------------

    def _any_node(self, ask: Callable[[Client], Any]) -> Any:
        """One request any node answers for the whole cluster (pauses, policies), sent to the same node each time.

        The seed while it answers, else the next in the map: the other nodes
        take a change up within 1 s, so asking one node lets a caller read
        back its own pause, resume or policy at once (a resume sent elsewhere
        could answer False for a pause that node has not seen yet).
        """
        last = None
        for addr in [self._seed] + [a for a in self._addrs() if a != self._seed]:
            try:
                return ask(self._client(addr))
            except (OrqError, OSError) as error:
                code = _code(error)
                if code not in _ROUTABLE or self._map is None:
                    raise
                if code == "CONNECTION_LOST":
                    self._forget(addr)
                last = error
        raise last or ConnectionLost("no node of the cluster answers")

    def _take_poller(self, addr: str) -> Client:
        """An idle long-poll connection to ``addr``, or a new one (a dequeue's thread owns it until it gives it back)."""
        with self._lock:
            idle = self._pollers.get(addr)
            if idle:
                return idle.pop()
        return Client.open(*_split(addr), timeout=self._timeout, token=self._token)

    def _give_poller(self, addr: str, client: Client) -> None:
        """Keep a poll connection for the next dequeue, unless it was lost or this client closed."""
        with self._lock:
            if not client.closed and not self._closed and len(self._pollers.get(addr, [])) < POLLERS_PER_NODE_MAX:
                self._pollers.setdefault(addr, []).append(client)
                return
        client.close()

    def _keep_late(
        self,
        ns: str,
        answers: List[Tuple[List[Delivery], Optional[BaseException]]],
        done: threading.Condition,
        expected: int,
        taken: List[Delivery],
    ) -> None:
        with done:
            while len(answers) < expected:
                done.wait()
            late = [d for deliveries, _ in answers if deliveries and deliveries is not taken for d in deliveries]
        if late:
            with self._lock:
                self._kept.setdefault(ns, []).extend(late)

    def _route(self, entries: List[Any], shard_of_entry: Callable[[Any], int], send: Callable[[Client, List[Any]], None], sticky: bool = False) -> None:
        """Send each entry to its shard's owner (``send(client, entries)`` per node), re-routing on MOVED, UNAVAILABLE and lost nodes.

        Entries that name no shard go to one node for the whole call: with ``sticky``, the client's current home
        (``_sticky_addr``), else the next in turn.
        """
        remaining = entries
        attempt = 0
        while remaining:
            attempt += 1
            groups: Dict[str, List[Any]] = {}
            unplaced: List[Any] = []
            for entry in remaining:
                addr = self._owner_addr(shard_of_entry(entry))
                if addr is None:
                    unplaced.append(entry)
                else:
                    groups.setdefault(addr, []).append(entry)
            if unplaced:
                any_node = self._sticky_addr(len(unplaced)) if sticky else self._next_addr()
                groups.setdefault(any_node, []).extend(unplaced)
            retry: List[Any] = []
            pause_s = 0.0
            for addr, group in groups.items():
                try:
                    send(self._client(addr), group)
                except (OrqError, OSError) as error:
                    code = _code(error)
                    if code not in _ROUTABLE or self._map is None or attempt >= ROUTE_ATTEMPTS_MAX:
                        raise
                    if addr == self._home:
                        # The retry's unplaced entries go elsewhere, and so do the next calls'.
                        self._home = None
                    if code == "UNAVAILABLE":
                        hint_ms = error.retry_after_ms if isinstance(error, OrqError) else None
                        pause_s = max(pause_s, (hint_ms or 100) / 1000.0)
                    elif code != "MOVED":
                        self._forget(addr)
                        pause_s = max(pause_s, LOST_NODE_PAUSE_S)
                    else:
                        details = error.details if isinstance(error, OrqError) else {}
                        if isinstance(details.get("shard"), int) and isinstance(details.get("addr"), str):
                            self._moved_to[details["shard"]] = (details["addr"], int(details.get("map_version") or 0))
                    retry.extend(group)
            remaining = retry
            if remaining:
                time.sleep(pause_s)
                try:
                    self.refresh()
                except (OrqError, OSError):
                    pass

    def _owner_addr(self, shard: int) -> Optional[str]:
        if self._map is None:
            return self._seed
        if shard < 0 or shard >= len(self._map["owners"]):
            return None
        moved = self._moved_to.get(shard)
        if moved is not None and moved[1] > int(self._map.get("map_version") or 0):
            return moved[0]
        owner = self._map["owners"][shard]
        return next((n["addr"] for n in self._map["nodes"] if n["node_id"] == owner), None)

    def _addrs(self) -> List[str]:
        return [self._seed] if self._map is None else [n["addr"] for n in self._map["nodes"]]

    def _next_addr(self) -> str:
        addrs = self._addrs()
        self._turn = (self._turn + 1) % max(1, len(addrs))
        return addrs[self._turn] if addrs else self._seed

    def _sticky_addr(self, items: int) -> str:
        """The node for ``items`` more items that name no shard: the same one until sticky_items went there (a call is
        never split), then the next in turn, as Kafka's sticky partitioner fills one batch before it moves on. A home
        that left the map, or failed a request, is replaced at once. A call of OWN_TURN_CALL_ITEMS or more takes the next
        node in turn for itself."""
        if items >= OWN_TURN_CALL_ITEMS:
            return self._next_addr()
        if self._home is None or self._home_items >= self._sticky_items or self._home not in self._addrs():
            self._home = self._next_addr()
            self._home_items = 0
        self._home_items += items
        return self._home

    def _client(self, addr: str) -> Client:
        client = self._clients.get(addr)
        if client is not None and client.closed:
            self._clients.pop(addr)
            client = None
        if client is None:
            client = Client.open(*_split(addr), timeout=self._timeout, token=self._token)
            self._clients[addr] = client
        return client

    def _forget(self, addr: str) -> None:
        client = self._clients.pop(addr, None)
        if client is not None:
            client.close()


def _split(addr: str) -> Tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return host, int(port)
