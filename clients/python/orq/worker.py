"""The blocking worker loop for orq's Python clients: a single node's
``Client`` or a cluster's ``ClusterClient`` (the same loop as the TypeScript
client's ``work``; async_worker.py is the asyncio one).

It long-polls one topic, runs up to ``concurrency`` handlers at once (one
thread each), keeps each lease alive while its handler runs (one batched
``extend`` every ``lease_ms * extend_at_fraction``), acks when the handler
returns (what it returned, bytes or None, is the ack's result) and nacks
when it raises (one thread sends them, batching whatever finished while the
previous request was out), with an exponential back-off:
``delay_ms = min(backoff_max_ms, backoff_base_ms * 2 ** (attempt - 1))``.
Each handler runs in an OpenTelemetry consumer span that continues the
item's ``trace`` when OpenTelemetry is importable (tracing.py); the delivery
carries ``trace`` either way.

``connect`` makes a client: the loop makes two, one for its dequeues and one
for the handlers' acks, nacks and extends (neither client is thread-safe).
A plain ``Client`` whose connection was lost is closed and made again by
``connect``; a ``ClusterClient`` (``reconnects = True``) re-routes by itself:
receipts go to their shard's current owner, MOVED, UNAVAILABLE and a lost
node are followed, and a dead node's unexpired receipts are accepted by the
shard's new owner. An ack or nack that still fails with a connection error,
UNAVAILABLE or SHUTTING_DOWN is tried again (``SETTLE_ATTEMPTS_MAX`` times);
if it never lands, the lease expires and the item is delivered again
(at-least-once), never lost.

``stop()`` is graceful: no new dequeue starts; one already waiting is let
come back (at most ``wait_ms``) and what it brought is handled; running
handlers finish and are acked or nacked; then ``run()`` returns.

    from orq import ClusterClient, Worker

    def handle(delivery, lease_lost):  # lease_lost: a threading.Event
        send_email(delivery["payload"])

    Worker(lambda: ClusterClient("10.0.0.5", 7420), "shop", "emails", handle,
           concurrency=8, lease_ms=30_000).run()
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from .errors import OrqError, error_code
from .tracing import consumer_span
from .shapes import Delivery
from .worker_settings import (
    RETRYABLE,
    SETTLE_ATTEMPTS_MAX,
    SETTLE_BATCH_MAX,
    WORK_CONCURRENCY_MAX,
    check_options,
    free_slots,
    handler_result,
    nack_delay_ms,
    retry_hint_ms,
)

__all__ = ["Worker", "nack_delay_ms", "WORK_CONCURRENCY_MAX", "SETTLE_ATTEMPTS_MAX"]

# What a handler is: (delivery, lease_lost) -> bytes or None (the ack's result).
Handler = Callable[[Delivery, threading.Event], Optional[bytes]]
# What the loop reports to on_event: {"kind": "acked" | "nacked" | "extended" | "lease_lost" | "error", ...}.
EventListener = Callable[[Dict[str, Any]], None]


class _Running:
    """One delivery whose handler runs: when its next extend is due, and whether its lease was lost."""

    def __init__(self, delivery: Delivery, extend_due_s: float) -> None:
        self.delivery = delivery
        self.extend_due_s = extend_due_s
        self.lease_lost = threading.Event()
        self.finished = False
        # What the handler raised (None: it returned), once finished.
        self.failure: Optional[BaseException] = None
        # What the handler returned, sent as the ack's result.
        self.result: Optional[bytes] = None


class _Connection:
    """One client made by ``connect``, used under a lock, remade after a lost connection (plain clients only)."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._client: Any = None
        self._lock = threading.Lock()

    def call(self, action: Callable[[Any], Any]) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            client = self._client
            try:
                return action(client)
            except (OrqError, OSError) as error:
                if error_code(error) == "CONNECTION_LOST" and not getattr(client, "reconnects", False):
                    self._client = None
                    client.close()
                raise

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


class Worker:
    """Runs ``handler(delivery, lease_lost)`` for every item of one topic. ``run()`` blocks until ``stop()``."""

    def __init__(
        self,
        connect: Callable[[], Any],
        ns: str,
        topic: str,
        handler: Handler,
        concurrency: int = 1,
        lease_ms: int = 30_000,
        wait_ms: int = 5_000,
        capabilities: Optional[Mapping[str, Any]] = None,
        extend_at_fraction: float = 0.5,
        backoff_base_ms: int = 1_000,
        backoff_max_ms: int = 300_000,
        error_pause_ms: int = 1_000,
        on_event: Optional[EventListener] = None,
    ) -> None:
        check_options(concurrency, lease_ms, wait_ms, extend_at_fraction)
        self.ns, self.topic, self.handler = ns, topic, handler
        self.concurrency, self.lease_ms, self.wait_ms = concurrency, lease_ms, wait_ms
        self.capabilities = capabilities
        self.extend_every_s = max(0.001, lease_ms * extend_at_fraction / 1000.0)
        self.backoff_base_ms, self.backoff_max_ms = backoff_base_ms, backoff_max_ms
        self.error_pause_ms = error_pause_ms
        self.on_event = on_event
        self._dequeuer = _Connection(connect)
        self._settler = _Connection(connect)
        self._state = threading.Condition()
        # Deliveries taken and not yet settled: handlers running, and finished ones whose ack or nack is unanswered.
        self._running: Dict[str, _Running] = {}
        # Handlers running now (the entries of _running not finished).
        self._handlers = 0
        # Finished handlers waiting for their ack or nack, in finishing order.
        self._finished: List[_Running] = []
        self._stopping = threading.Event()
        # Set by run() once it drained: the lease keeper then ends.
        self._ended = False
        self._thread: Optional[threading.Thread] = None

    @property
    def running(self) -> int:
        """Handlers running now."""
        with self._state:
            return self._handlers

    def start(self) -> "Worker":
        """Run the loop in a background thread; returns self."""
        self._thread = threading.Thread(target=self.run, name=f"orq-worker-{self.topic}", daemon=True)
        self._thread.start()
        return self

    def stop(self, wait: bool = True) -> None:
        """Graceful stop. With ``wait`` (and ``start()`` used), returns once every delivery taken was acked or nacked."""
        self._stopping.set()
        with self._state:
            self._state.notify_all()
        if wait and self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def run(self) -> None:
        keeper = threading.Thread(target=self._keep_leases, name="orq-worker-leases", daemon=True)
        settler = threading.Thread(target=self._settle_finished, name="orq-worker-settle", daemon=True)
        keeper.start()
        settler.start()
        try:
            while not self._stopping.is_set():
                with self._state:
                    free = free_slots(self.concurrency, self._handlers, len(self._running))
                    if free <= 0:
                        self._state.wait()
                        continue
                try:
                    deliveries = self._dequeuer.call(
                        lambda client: client.dequeue(
                            self.ns, {self.topic: free}, self.capabilities, self.wait_ms, self.lease_ms
                        )
                    )
                except (OrqError, OSError) as error:
                    self._emit({"kind": "error", "during": "dequeue", "error": error})
                    self._stopping.wait(retry_hint_ms(error, self.error_pause_ms) / 1000.0)
                    continue
                for delivery in deliveries:
                    self._start(delivery)
            # Let every running handler finish and be acked or nacked.
            with self._state:
                while self._running:
                    self._state.wait()
        finally:
            with self._state:
                self._ended = True
                self._state.notify_all()
            keeper.join()
            settler.join()
            self._dequeuer.close()
            self._settler.close()

    # -- one delivery ----------------------------------------------------------

    def _start(self, delivery: Delivery) -> None:
        entry = _Running(delivery, time.monotonic() + self._first_extend_s(delivery))
        with self._state:
            self._running[delivery["receipt"]] = entry
            self._handlers += 1
            self._state.notify_all()
        threading.Thread(target=self._run_one, args=(entry,), daemon=True).start()

    def _first_extend_s(self, delivery: Delivery) -> float:
        """Seconds to the first extend: as usual, or sooner for a delivery whose lease has partly run already.

        A ClusterClient hands out deliveries that a node returned after an
        earlier dequeue's answer; their leases started then. The lease's end
        is by the server's wall clock, so skew only moves this extend earlier
        or later, never past its usual time.
        """
        expires_ms = delivery.get("lease_expires_at_ms")
        if expires_ms is None:
            return self.extend_every_s
        left_s = expires_ms / 1000.0 - time.time()
        return max(0.0, min(self.extend_every_s, left_s - (self.lease_ms / 1000.0 - self.extend_every_s)))

    def _run_one(self, entry: _Running) -> None:
        failure: Optional[BaseException] = None
        returned: Any = None
        try:
            with consumer_span(entry.delivery):
                returned = self.handler(entry.delivery, entry.lease_lost)
        except Exception as error:  # a failed handler is the worker's normal business
            failure = error
        result, problem = handler_result(returned)
        if problem is not None:
            self._emit({"kind": "error", "during": "result", "error": problem, "delivery": entry.delivery})
        with self._state:
            entry.finished = True
            entry.failure = failure
            entry.result = result
            self._handlers -= 1
            self._finished.append(entry)
            self._state.notify_all()

    def _settle_finished(self) -> None:
        """One thread acks and nacks what the handlers finished: everything that finished meanwhile in one request each."""
        while True:
            with self._state:
                while not self._finished and not self._ended:
                    self._state.wait()
                if not self._finished:
                    return
                batch = self._finished[:SETTLE_BATCH_MAX]
                del self._finished[:SETTLE_BATCH_MAX]
            acks = [entry for entry in batch if entry.failure is None]
            nacks = [entry for entry in batch if entry.failure is not None]
            if acks:
                self._settle(acks, "ack")
            if nacks:
                self._settle(nacks, "nack")
            with self._state:
                for entry in batch:
                    del self._running[entry.delivery["receipt"]]
                self._state.notify_all()

    def _settle(self, entries: List[_Running], during: str) -> None:
        ns = self.ns
        if during == "ack":
            receipts = [entry.delivery["receipt"] for entry in entries]
            results = [entry.result for entry in entries]

            def request(client: Any) -> Any:
                return client.ack(ns, receipts, results)
        else:
            delays = {
                entry.delivery["receipt"]: nack_delay_ms(entry.delivery["attempt"], self.backoff_base_ms, self.backoff_max_ms)
                for entry in entries
            }

            def request(client: Any) -> Any:
                return client.nack(ns, [{"receipt": receipt, "delay_ms": delay} for receipt, delay in delays.items()])

        for attempt in range(1, SETTLE_ATTEMPTS_MAX + 1):
            try:
                result = self._settler.call(request)
            except (OrqError, OSError) as error:
                for entry in entries:
                    self._emit({"kind": "error", "during": during, "error": error, "delivery": entry.delivery})
                if error_code(error) not in RETRYABLE or attempt == SETTLE_ATTEMPTS_MAX:
                    return  # the leases will expire and the server deliver the items again
                time.sleep(retry_hint_ms(error, self.error_pause_ms) / 1000.0)
                continue
            stale = set(result["stale"])
            for entry in entries:
                event = {"kind": "acked" if during == "ack" else "nacked", "delivery": entry.delivery, "stale": entry.delivery["receipt"] in stale}
                if during == "nack":
                    event.update(delay_ms=delays[entry.delivery["receipt"]], error=entry.failure)
                self._emit(event)
            return

    # -- leases ------------------------------------------------------------------

    def _keep_leases(self) -> None:
        """One thread extends every lease that is due, in one batch, until the loop has ended."""
        while True:
            with self._state:
                if self._ended:
                    return
                now_s = time.monotonic()
                due = [e for e in self._running.values() if not e.finished and not e.lease_lost.is_set() and e.extend_due_s <= now_s]
                if not due:
                    next_s = min((e.extend_due_s for e in self._running.values()), default=None)
                    self._state.wait(None if next_s is None else max(0.0, next_s - now_s))
                    continue
                for entry in due:
                    entry.extend_due_s = now_s + self.extend_every_s
            items = [{"receipt": e.delivery["receipt"], "lease_ms": self.lease_ms} for e in due]
            try:
                result = self._settler.call(lambda client: client.extend(self.ns, items))
            except (OrqError, OSError) as error:
                self._emit({"kind": "error", "during": "extend", "error": error})
                continue
            stale = set(result["stale"])
            for entry in due:
                with self._state:
                    finished = entry.finished
                if entry.delivery["receipt"] not in stale:
                    self._emit({"kind": "extended", "delivery": entry.delivery, "lease_ms": self.lease_ms})
                elif not finished:
                    entry.lease_lost.set()
                    self._emit({"kind": "lease_lost", "delivery": entry.delivery})

    def _emit(self, event: Dict[str, Any]) -> None:
        if self.on_event is None:
            return
        try:
            self.on_event(event)
        except Exception as error:  # a faulty listener must not break the loop
            print(f"orq worker: on_event raised {error!r}")
