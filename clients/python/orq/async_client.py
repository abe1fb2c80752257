"""The asyncio client: one ``AsyncClient`` is one TCP connection to one orq
server, with the blocking ``Client``'s methods as coroutines (the same
framing, codec and request fields: framing.py, fields.py).

Any number of tasks may send requests on one client at once: each request
has its own id, one reader task matches replies to them, and a waiting
``dequeue`` or ``wait`` holds up no other request. A reply that does not
come within ``timeout`` seconds (beyond the request's own ``wait_ms``)
closes the connection, as the blocking client does, and every request
still out fails with ``ConnectionLost``.

    import asyncio
    from orq import AsyncClient

    async def main():
        async with await AsyncClient.open("127.0.0.1", 7420) as orq:
            [item_id] = await orq.enqueue("default", [{"topic": "emails", "payload": b"hi"}])
            for delivery in await orq.dequeue("default", {"emails": 10}, wait_ms=1000):
                await orq.ack("default", [delivery["receipt"]])

    asyncio.run(main())
"""

from __future__ import annotations

import asyncio
import builtins
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import msgpack

from .errors import ConnectionLost, OrqError
from .fields import ack_fields, policy_fields, receipt_items, schedule_fields, topic_counts, traced_items
from .framing import DEFAULT_PORT, PROTOCOL_VERSION, FrameDecoder, RequestIds, encode_request
from .shapes import Delivery, Item, ItemState, Page, ReceiptItem, Reply, Topics
from .waiting import WaitPlan

if TYPE_CHECKING:
    from .async_worker import AsyncWorker

__all__ = ["AsyncClient"]

# Bytes asked of the stream per read: a reply larger than this arrives in several.
_READ_BYTES = 1 << 16


class AsyncClient:
    """One connection to an orq server, for asyncio."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: float = 30.0) -> None:
        self._reader = reader
        self._writer = writer
        self._timeout = timeout
        self._ids = RequestIds()
        self._pending: Dict[int, "asyncio.Future[Dict[str, Any]]"] = {}
        self._decoder = FrameDecoder()
        self._packer = msgpack.Packer(use_bin_type=True)
        self._closed = False
        # One drain at a time: older asyncio versions refuse concurrent drains.
        self._drain_lock = asyncio.Lock()
        self._reading = asyncio.ensure_future(self._read_replies())
        self.server_info: Optional[Dict[str, Any]] = None
        self._token: Optional[str] = None
        self._peer: Tuple[str, int] = writer.get_extra_info("peername")[:2]

    @classmethod
    async def connect(cls, host: str = "127.0.0.1", port: int = DEFAULT_PORT, timeout: float = 30.0) -> "AsyncClient":
        """Open a TCP connection. ``timeout`` (seconds) bounds each reply wait beyond a request's own ``wait_ms``."""
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        return cls(reader, writer, timeout)

    @classmethod
    async def open(
        cls, host: str = "127.0.0.1", port: int = DEFAULT_PORT, timeout: float = 30.0, token: Optional[str] = None, client: str = "orq-python-asyncio"
    ) -> "AsyncClient":
        """Connect and say hello: a ready client (what the asyncio worker loop's ``connect`` returns)."""
        orq = await cls.connect(host, port, timeout)
        try:
            await orq.hello(token=token, client=client)
        except BaseException:
            await orq.close()
            raise
        return orq

    @property
    def closed(self) -> bool:
        """True once closed, by close() or by a lost connection."""
        return self._closed

    def worker(self, ns: str, topic: str, handler: Callable[..., Awaitable[Optional[bytes]]], **options: Any) -> "AsyncWorker":
        """An asyncio worker loop (orq.AsyncWorker) against this client's server, on a connection of its own; await run()."""
        from .async_worker import AsyncWorker

        (host, port), token, timeout = self._peer, self._token, self._timeout
        return AsyncWorker(lambda: AsyncClient.open(host, port, timeout, token, "orq-python-asyncio-worker"), ns, topic, handler, **options)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    async def close(self) -> None:
        self._lose(ConnectionLost("the connection is closed"))
        if self._reading is not asyncio.current_task():
            await asyncio.gather(self._reading, return_exceptions=True)

    def _lose(self, error: OrqError) -> None:
        """Close the connection and fail every request still out with ``error``."""
        if not self._closed:
            self._closed = True
            self._writer.close()
            if self._reading is not asyncio.current_task():
                self._reading.cancel()
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(error)

    async def _read_replies(self) -> None:
        try:
            while True:
                chunk = await self._reader.read(_READ_BYTES)
                if not chunk:
                    raise ConnectionLost("the server closed the connection")
                for reply in self._decoder.feed(chunk):
                    if reply["id"] == 0:
                        # A connection-level error (BAD_FRAME, FRAME_TOO_LARGE): the server closes the connection after it.
                        raise OrqError.from_reply(reply)
                    future = self._pending.pop(reply["id"], None)
                    if future is not None and not future.done():
                        future.set_result(reply)
        except asyncio.CancelledError:
            return
        except OrqError as error:
            self._lose(error)
        except OSError as error:
            self._lose(ConnectionLost(f"receive failed: {error}"))
        except Exception as error:  # a reader that stopped must not leave requests waiting for their timeout
            self._lose(ConnectionLost(f"reading replies failed: {error!r}"))

    # -- generic requests ------------------------------------------------

    async def request(self, op: str, **fields: Any) -> Reply:
        """Send one request and return its ok reply (a dict); raise OrqError on an error reply."""
        if self._closed:
            raise ConnectionLost("the connection is closed")
        request_id = self._ids.take()
        frame = encode_request(self._packer, request_id, op, fields, (self.server_info or {}).get("max_frame_bytes"))
        future: "asyncio.Future[Dict[str, Any]]" = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._writer.write(frame)
            async with self._drain_lock:
                await self._writer.drain()
        except OSError as error:
            self._lose(ConnectionLost(f"send failed: {error}"))
        try:
            reply = await asyncio.wait_for(future, self._timeout + (fields.get("wait_ms") or 0) / 1000.0)
        except asyncio.TimeoutError as error:
            # As the blocking client: a server this late is taken for gone.
            self._lose(ConnectionLost("timed out waiting for a reply"))
            raise ConnectionLost("timed out waiting for a reply") from error
        finally:
            self._pending.pop(request_id, None)
        if not reply.get("ok"):
            raise OrqError.from_reply(reply)
        return reply

    # -- connection ---------------------------------------------------------

    async def hello(self, token: Optional[str] = None, client: str = "orq-python-asyncio") -> Reply:
        """As ``Client.hello``."""
        reply = await self.request("hello", protocol=PROTOCOL_VERSION, token=token, client=client)
        self.server_info = reply
        self._token = token
        return reply

    @property
    def memory_namespaces(self) -> List[str]:
        """As ``Client.memory_namespaces``."""
        return builtins.list((self.server_info or {}).get("memory_namespaces") or [])

    async def ping(self) -> int:
        return (await self.request("ping"))["now_ms"]

    async def cluster(self) -> Dict[str, Any]:
        return (await self.request("cluster"))["cluster"]

    # -- items -----------------------------------------------------------------

    async def enqueue(self, ns: str, items: Sequence[Item]) -> List[str]:
        """As ``Client.enqueue`` (the current OpenTelemetry context goes as ``trace`` when available)."""
        return (await self.request("enqueue", ns=ns, items=traced_items(items)))["ids"]

    async def enqueue_one(self, ns: str, topic: str, payload: bytes = b"", **fields: Any) -> str:
        return (await self.enqueue(ns, [{"topic": topic, "payload": payload, **fields}]))[0]

    async def dequeue(
        self,
        ns: str,
        topics: Topics,
        capabilities: Optional[Mapping[str, Any]] = None,
        wait_ms: Optional[int] = None,
        lease_ms: Optional[int] = None,
    ) -> List[Delivery]:
        fields = {"ns": ns, "topics": topic_counts(topics), "capabilities": capabilities, "wait_ms": wait_ms, "lease_ms": lease_ms}
        return (await self.request("dequeue", **fields))["items"]

    async def ack(self, ns: str, receipts: Sequence[str], results: Optional[Sequence[Optional[bytes]]] = None) -> Dict[str, Any]:
        reply = await self.request("ack", **ack_fields(ns, receipts, results))
        return {"acked": reply["acked"], "stale": reply["stale"]}

    async def nack(self, ns: str, items: Sequence[ReceiptItem]) -> Dict[str, Any]:
        reply = await self.request("nack", ns=ns, items=receipt_items(items))
        return {"nacked": reply["nacked"], "stale": reply["stale"]}

    async def extend(self, ns: str, items: Sequence[ReceiptItem]) -> Dict[str, Any]:
        reply = await self.request("extend", ns=ns, items=receipt_items(items))
        return {"extended": reply["extended"], "stale": reply["stale"]}

    async def cancel(self, ns: str, ids: Sequence[str]) -> Dict[str, Any]:
        reply = await self.request("cancel", ns=ns, ids=builtins.list(ids))
        return {"cancelled": reply["cancelled"], "missing": reply["missing"]}

    async def get(self, ns: str, ids: Sequence[str]) -> List[Optional[ItemState]]:
        return (await self.request("get", ns=ns, ids=builtins.list(ids)))["items"]

    async def wait(self, ns: str, ids: Sequence[str], wait_ms: int = 0) -> List[Optional[ItemState]]:
        return (await self.request("wait", ns=ns, ids=builtins.list(ids), wait_ms=wait_ms))["items"]

    async def wait_for(self, ns: str, ids: Sequence[str], timeout_ms: Optional[int] = None) -> List[Optional[ItemState]]:
        """As ``Client.wait_for``."""
        plan = WaitPlan(ids, timeout_ms, time.monotonic(), (self.server_info or {}).get("limits"))
        while True:
            asked = plan.next_request(time.monotonic())
            if asked is None:
                return plan.states
            plan.take(await self.wait(ns, *asked))

    async def enqueue_and_wait(self, ns: str, items: Sequence[Item], timeout_ms: Optional[int] = None) -> List[Optional[ItemState]]:
        return await self.wait_for(ns, await self.enqueue(ns, items), timeout_ms)

    # -- reading a namespace -------------------------------------------------

    async def topics(self, ns: str, prefix: Optional[str] = None, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        reply = await self.request("topics", ns=ns, prefix=prefix, limit=limit, after=after)
        return {"topics": reply["topics"], "next": reply.get("next")}

    async def topics_all(self, ns: str, prefix: Optional[str] = None, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        async for entry in _every_page(lambda after: self.topics(ns, prefix=prefix, limit=limit, after=after), "topics"):
            yield entry

    async def list(self, ns: str, topic: str, state: Optional[str] = None, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        reply = await self.request("list", ns=ns, topic=topic, state=state, limit=limit, after=after)
        return {"items": reply["items"], "next": reply.get("next")}

    async def list_all(self, ns: str, topic: str, state: Optional[str] = None, limit: Optional[int] = None) -> AsyncIterator[ItemState]:
        async for entry in _every_page(lambda after: self.list(ns, topic, state=state, limit=limit, after=after), "items"):
            yield entry

    async def dead(self, ns: str, topic: str, limit: Optional[int] = None) -> List[ItemState]:
        return (await self.request("dead", ns=ns, topic=topic, limit=limit))["items"]

    async def redrive(self, ns: str, topic: str, ids: Optional[Sequence[str]] = None) -> Dict[str, Any]:
        reply = await self.request("redrive", ns=ns, topic=topic, ids=None if ids is None else builtins.list(ids))
        return {"redriven": reply["redriven"]}

    async def stats(self, ns: Optional[str] = None) -> Reply:
        return {key: value for key, value in (await self.request("stats", ns=ns)).items() if key not in ("id", "ok")}

    # -- pauses ------------------------------------------------------------------

    async def pause(self, ns: str, topic: str, for_ms: Optional[int] = None, group: Optional[str] = None) -> Optional[int]:
        return (await self.request("pause", ns=ns, topic=topic, group=group, for_ms=for_ms)).get("paused_until_ms")

    async def resume(self, ns: str, topic: str, group: Optional[str] = None) -> bool:
        return (await self.request("resume", ns=ns, topic=topic, group=group))["resumed"]

    # -- fair sharing: policies, groups, explain ---------------------------

    async def policy(
        self,
        ns: str,
        topic: str,
        group: Optional[str] = None,
        weight: Optional[int] = None,
        max_leased: Optional[int] = None,
        rate: Union[None, Mapping[str, int], Tuple[int, int]] = None,
        clear: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """As ``Client.policy``."""
        fields = policy_fields(ns, topic, group=group, weight=weight, max_leased=max_leased, rate=rate, clear=clear)
        reply = await self.request("policy", **fields)
        return {"policy": reply["policy"]} if reply.get("policy") is not None else {"cleared": bool(reply.get("cleared"))}

    async def policies(self, ns: str, topic: str, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        reply = await self.request("policies", ns=ns, topic=topic, limit=limit, after=after)
        return {"policies": reply["policies"], "next": reply.get("next")}

    async def policies_all(self, ns: str, topic: str, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        async for entry in _every_page(lambda after: self.policies(ns, topic, limit=limit, after=after), "policies"):
            yield entry

    async def groups(self, ns: str, topic: str, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        reply = await self.request("groups", ns=ns, topic=topic, limit=limit, after=after)
        return {"groups": reply["groups"], "next": reply.get("next")}

    async def groups_all(self, ns: str, topic: str, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        async for entry in _every_page(lambda after: self.groups(ns, topic, limit=limit, after=after), "groups"):
            yield entry

    async def explain(self, ns: str, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        return (await self.request("explain", ns=ns, ids=builtins.list(ids)))["items"]

    # -- schedules ------------------------------------------------------------

    async def schedule(
        self,
        ns: str,
        name: str,
        item: Item,
        cron: Optional[str] = None,
        every_ms: Optional[int] = None,
        timezone: Optional[str] = None,
        catch_up: Optional[str] = None,
    ) -> Dict[str, Any]:
        """As ``Client.schedule``."""
        reply = await self.request("schedule", **schedule_fields(ns, name, item, cron, every_ms, timezone, catch_up))
        return {"name": reply["name"], "next_at_ms": reply["next_at_ms"]}

    async def unschedule(self, ns: str, name: str) -> bool:
        return (await self.request("unschedule", ns=ns, name=name))["removed"]

    async def schedules(self, ns: str, limit: Optional[int] = None, after: Optional[str] = None) -> Page:
        reply = await self.request("schedules", ns=ns, limit=limit, after=after)
        return {"schedules": reply["schedules"], "next": reply.get("next")}

    async def schedules_all(self, ns: str, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        async for entry in _every_page(lambda after: self.schedules(ns, limit=limit, after=after), "schedules"):
            yield entry


async def _every_page(ask: Callable[[Optional[str]], Awaitable[Mapping[str, Any]]], field: str) -> AsyncIterator[Any]:
    """Every entry of a paged listing, following ``next`` until None (as fields.every_page, awaited)."""
    after: Optional[str] = None
    while True:
        page = await ask(after)
        for entry in page[field]:
            yield entry
        if page.get("next") is None:
            return
        after = page["next"]
