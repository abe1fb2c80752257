"""The asyncio worker loop: the blocking loop (worker.py) for coroutines.

It long-polls one topic on one ``AsyncClient`` (requests are pipelined, so
the long-poll holds up no ack or extend), runs up to ``concurrency``
handlers at once (one task each), keeps each lease alive while its handler
runs (one batched ``extend`` every ``lease_ms * extend_at_fraction``), acks
when the handler returns (what it returned, bytes or None, is the ack's
result) and nacks when it raises, with the same back-off, batching, retries
and events as the blocking loop (worker_settings.py). Each handler runs in
an OpenTelemetry consumer span continuing the item's ``trace`` when
OpenTelemetry is importable.

``connect`` is a coroutine function making a ready client; a client whose
connection was lost is made again. ``stop()`` is graceful, as the blocking
loop's: the dequeue in flight comes back, running handlers finish and are
acked or nacked, then ``run()`` returns.

    async def handle(delivery, lease_lost):  # lease_lost: an asyncio.Event
        await send_email(delivery["payload"])
        return b"sent"                       # the ack's result (or None)

    worker = AsyncWorker(lambda: AsyncClient.open("127.0.0.1", 7420), "shop", "emails", handle, concurrency=8)
    await worker.run()                       # worker.stop() from elsewhere on the loop
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional

from .async_client import AsyncClient
from .errors import OrqError, error_code
from .tracing import consumer_span
from .shapes import Delivery
from .worker_settings import RETRYABLE, SETTLE_ATTEMPTS_MAX, SETTLE_BATCH_MAX, check_options, free_slots, handler_result, nack_delay_ms, retry_hint_ms

__all__ = ["AsyncWorker", "AsyncHandler"]

# What a handler is: an async (delivery, lease_lost) -> bytes or None (the ack's result).
AsyncHandler = Callable[[Delivery, asyncio.Event], Awaitable[Optional[bytes]]]


class _Running:
    """One delivery whose handler runs: when its next extend is due, and how it ended."""

    def __init__(self, delivery: Delivery, extend_due_s: float) -> None:
        self.delivery = delivery
        self.extend_due_s = extend_due_s
        self.lease_lost = asyncio.Event()
        self.finished = False
        self.failure: Optional[BaseException] = None
        self.result: Optional[bytes] = None
        self.task: Optional["asyncio.Task[None]"] = None


class AsyncWorker:
    """Runs ``await handler(delivery, lease_lost)`` for every item of one topic. ``await run()`` returns after ``stop()``."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[AsyncClient]],
        ns: str,
        topic: str,
        handler: AsyncHandler,
        concurrency: int = 1,
        lease_ms: int = 30_000,
        wait_ms: int = 5_000,
        capabilities: Optional[Mapping[str, Any]] = None,
        extend_at_fraction: float = 0.5,
        backoff_base_ms: int = 1_000,
        backoff_max_ms: int = 300_000,
        error_pause_ms: int = 1_000,
        on_event: Optional[Callable[[Dict[str, Any]], None]] = None,
    ) -> None:
        check_options(concurrency, lease_ms, wait_ms, extend_at_fraction)
        self.ns, self.topic, self.handler = ns, topic, handler
        self.concurrency, self.lease_ms, self.wait_ms = concurrency, lease_ms, wait_ms
        self.capabilities = capabilities
        self.extend_every_s = max(0.001, lease_ms * extend_at_fraction / 1000.0)
        self.backoff_base_ms, self.backoff_max_ms = backoff_base_ms, backoff_max_ms
        self.error_pause_ms = error_pause_ms
        self.on_event = on_event
        self._connect = connect
        self._client: Optional[AsyncClient] = None
        # Deliveries taken and not yet settled: handlers running, and finished ones whose ack or nack is unanswered.
        self._running: Dict[str, _Running] = {}
        # Handlers running now (the entries of _running not finished).
        self._handlers = 0
        # Finished handlers waiting for their ack or nack, in finishing order.
        self._finished: List[_Running] = []
        self._stopping = False
        # Set by run() once it drained: the lease keeper and the settler then end.
        self._ended = False
        # Made inside run(): asyncio objects belong to the loop that runs them.
        self._state: Optional[asyncio.Condition] = None
        self._connecting: Optional[asyncio.Lock] = None

    @property
    def running(self) -> int:
        """Handlers running now."""
        return self._handlers

    def stop(self) -> None:
        """Graceful stop (from a task or a callback on the loop): run() returns once every delivery taken was acked or nacked."""
        self._stopping = True
        if self._state is not None:
            asyncio.ensure_future(self._notify())

    async def run(self) -> None:
        self._state, self._connecting = asyncio.Condition(), asyncio.Lock()
        keeper = asyncio.ensure_future(self._keep_leases())
        settler = asyncio.ensure_future(self._settle_finished())
        try:
            while not self._stopping:
                async with self._state:
                    free = free_slots(self.concurrency, self._handlers, len(self._running))
                    if free <= 0:
                        await self._state.wait()
                        continue
                try:
                    deliveries = await self._call(
                        lambda client: client.dequeue(self.ns, {self.topic: free}, self.capabilities, self.wait_ms, self.lease_ms)
                    )
                except (OrqError, OSError) as error:
                    self._emit({"kind": "error", "during": "dequeue", "error": error})
                    await self._pause(retry_hint_ms(error, self.error_pause_ms))
                    continue
                for delivery in deliveries:
                    self._start(delivery)
                if deliveries:
                    await self._notify()  # the lease keeper learns of new leases
            # Let every running handler finish and be acked or nacked.
            async with self._state:
                await self._state.wait_for(lambda: not self._running)
        finally:
            self._ended = True
            await self._notify()
            await asyncio.gather(keeper, settler, return_exceptions=True)
            if self._client is not None:
                await self._client.close()
                self._client = None

    async def _notify(self) -> None:
        assert self._state is not None
        async with self._state:
            self._state.notify_all()

    async def _pause(self, pause_ms: int) -> None:
        """Sleep ``pause_ms``, or less when stop() is called."""
        assert self._state is not None
        async with self._state:
            try:
                await asyncio.wait_for(self._state.wait_for(lambda: self._stopping), pause_ms / 1000.0)
            except asyncio.TimeoutError:
                pass

    async def _call(self, action: Callable[[AsyncClient], Awaitable[Any]]) -> Any:
        """Run ``action`` on the loop's client, making one first (again after a lost connection)."""
        assert self._connecting is not None
        async with self._connecting:
            if self._client is None or self._client.closed:
                self._client = await self._connect()
            client = self._client
        try:
            return await action(client)
        except (OrqError, OSError) as error:
            if error_code(error) == "CONNECTION_LOST":
                await client.close()
            raise

    # -- one delivery ----------------------------------------------------------

    def _start(self, delivery: Delivery) -> None:
        entry = _Running(delivery, asyncio.get_running_loop().time() + self.extend_every_s)
        self._running[delivery["receipt"]] = entry
        self._handlers += 1
        entry.task = asyncio.ensure_future(self._run_one(entry))

    async def _run_one(self, entry: _Running) -> None:
        failure: Optional[BaseException] = None
        returned: Any = None
        try:
            with consumer_span(entry.delivery):
                returned = await self.handler(entry.delivery, entry.lease_lost)
        except Exception as error:  # a failed handler is the worker's normal business
            failure = error
        result, problem = handler_result(returned)
        if problem is not None:
            self._emit({"kind": "error", "during": "result", "error": problem, "delivery": entry.delivery})
        entry.finished, entry.failure, entry.result = True, failure, result
        self._handlers -= 1
        self._finished.append(entry)
        await self._notify()

    async def _settle_finished(self) -> None:
        """One task acks and nacks what the handlers finished: everything that finished meanwhile in one request each."""
        assert self._state is not None
        while True:
            async with self._state:
                await self._state.wait_for(lambda: bool(self._finished) or self._ended)
                if not self._finished:
                    return
                batch = self._finished[:SETTLE_BATCH_MAX]
                del self._finished[:SETTLE_BATCH_MAX]
            acks = [entry for entry in batch if entry.failure is None]
            nacks = [entry for entry in batch if entry.failure is not None]
            if acks:
                await self._settle(acks, "ack")
            if nacks:
                await self._settle(nacks, "nack")
            for entry in batch:
                del self._running[entry.delivery["receipt"]]
            await self._notify()

    async def _settle(self, entries: List[_Running], during: str) -> None:
        ns = self.ns
        receipts = [entry.delivery["receipt"] for entry in entries]
        results = [entry.result for entry in entries]
        delays = {
            entry.delivery["receipt"]: nack_delay_ms(entry.delivery["attempt"], self.backoff_base_ms, self.backoff_max_ms) for entry in entries
        }

        def request(client: AsyncClient) -> Awaitable[Dict[str, Any]]:
            if during == "ack":
                return client.ack(ns, receipts, results)
            return client.nack(ns, [{"receipt": receipt, "delay_ms": delay} for receipt, delay in delays.items()])

        for attempt in range(1, SETTLE_ATTEMPTS_MAX + 1):
            try:
                outcome = await self._call(request)
            except (OrqError, OSError) as error:
                for entry in entries:
                    self._emit({"kind": "error", "during": during, "error": error, "delivery": entry.delivery})
                if error_code(error) not in RETRYABLE or attempt == SETTLE_ATTEMPTS_MAX:
                    return  # the leases will expire and the server deliver the items again
                await asyncio.sleep(retry_hint_ms(error, self.error_pause_ms) / 1000.0)
                continue
            stale = set(outcome["stale"])
            for entry in entries:
                event = {"kind": "acked" if during == "ack" else "nacked", "delivery": entry.delivery, "stale": entry.delivery["receipt"] in stale}
                if during == "nack":
                    event.update(delay_ms=delays[entry.delivery["receipt"]], error=entry.failure)
                self._emit(event)
            return

    # -- leases ------------------------------------------------------------------

    async def _keep_leases(self) -> None:
        """One task extends every lease that is due, in one batch, until the loop has ended."""
        assert self._state is not None
        loop = asyncio.get_running_loop()
        while True:
            async with self._state:
                if self._ended:
                    return
                now_s = loop.time()
                due = [e for e in self._running.values() if not e.finished and not e.lease_lost.is_set() and e.extend_due_s <= now_s]
                if not due:
                    next_s = min((e.extend_due_s for e in self._running.values() if not e.finished), default=None)
                    try:
                        await asyncio.wait_for(self._state.wait(), None if next_s is None else max(0.0, next_s - now_s))
                    except asyncio.TimeoutError:
                        pass
                    continue
                for entry in due:
                    entry.extend_due_s = now_s + self.extend_every_s
            items = [{"receipt": e.delivery["receipt"], "lease_ms": self.lease_ms} for e in due]
            try:
                outcome = await self._call(lambda client: client.extend(self.ns, items))
            except (OrqError, OSError) as error:
                self._emit({"kind": "error", "during": "extend", "error": error})
                continue
            stale = set(outcome["stale"])
            for entry in due:
                if entry.delivery["receipt"] not in stale:
                    self._emit({"kind": "extended", "delivery": entry.delivery, "lease_ms": self.lease_ms})
                elif not entry.finished:
                    entry.lease_lost.set()
                    self._emit({"kind": "lease_lost", "delivery": entry.delivery})

    def _emit(self, event: Dict[str, Any]) -> None:
        if self.on_event is None:
            return
        try:
            self.on_event(event)
        except Exception as error:  # a faulty listener must not break the loop
            print(f"orq worker: on_event raised {error!r}")
