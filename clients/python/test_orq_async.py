"""Goal: the asyncio client and its worker loop against a real orq server:
the ops round-trip as the blocking client's do; many requests from many
tasks share one connection and each gets its own reply; a waiting dequeue
holds up no other request on that connection; an error reply keeps the
connection, a connection-level error or a reply that never comes fails every
request still out; and
the asyncio worker acks successes (what the handler returned is the ack's
result), nacks failures into dead letters, reports a result that is not
bytes, keeps a long handler's lease, and stops gracefully.

Waits are on conditions (events), each with a give-up bound; no assertion
depends on how long anything took.

    /usr/bin/python3 -m unittest -v clients/python/test_orq_async.py
"""

import asyncio
import os
import struct
import sys
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from orq import AsyncClient, AsyncWorker, ConnectionLost, OrqError, nack_delay_ms  # noqa: E402
from test_orq_client import Server  # noqa: E402

NS = "pyasync"
# Longest a test waits for a condition before it fails (not a measured time).
GIVE_UP_S = 60
server = None


def setUpModule():
    global server
    server = Server()


def tearDownModule():
    server.stop_cleanly()


def fresh_topic():
    return "a-" + uuid.uuid4().hex[:12]


class Events:
    """Collects a worker's events; lets a test await a condition over them."""

    def __init__(self):
        self.list = []
        self.changed = asyncio.Event()

    def __call__(self, event):
        self.list.append(event)
        self.changed.set()

    async def wait_for(self, predicate, what):
        async def until():
            while not predicate(self.list):
                self.changed.clear()
                await self.changed.wait()

        try:
            await asyncio.wait_for(until(), GIVE_UP_S)
        except asyncio.TimeoutError:
            raise AssertionError(f"gave up waiting for {what}: {self.list[-5:]}") from None

    def of(self, kind):
        return [e for e in self.list if e["kind"] == kind]


class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.orq = await AsyncClient.open(server.host, server.port, timeout=10)

    async def asyncTearDown(self):
        await self.orq.close()

    async def test_hello_and_ping(self):
        info = await self.orq.hello(client="async-test")
        self.assertEqual((info["server"], info["protocol"]), ("orq", 1))
        self.assertEqual(self.orq.memory_namespaces, [])
        self.assertIsInstance(await self.orq.ping(), int)

    async def test_enqueue_dequeue_ack_nack_extend_get_cancel(self):
        topic = fresh_topic()
        first, second, third = await self.orq.enqueue(NS, [{"topic": topic, "payload": b"a", "priority": 1}, {"topic": topic, "payload": b"b", "priority": 2}, {"topic": topic, "priority": 9}])
        self.assertEqual(await self.orq.cancel(NS, [third]), {"cancelled": 1, "missing": []})
        deliveries = await self.orq.dequeue(NS, {topic: 10}, lease_ms=60_000)
        self.assertEqual([(d["id"], d["payload"]) for d in deliveries], [(first, b"a"), (second, b"b")])
        one, two = deliveries
        self.assertEqual(await self.orq.extend(NS, [{"receipt": one["receipt"], "lease_ms": 120_000}]), {"extended": 1, "stale": []})
        self.assertEqual(await self.orq.nack(NS, [{"receipt": two["receipt"], "metadata": b"again"}]), {"nacked": 1, "stale": []})
        self.assertEqual(await self.orq.ack(NS, [one["receipt"]], results=[None]), {"acked": 1, "stale": []})
        self.assertEqual(await self.orq.ack(NS, [one["receipt"]]), {"acked": 0, "stale": [one["receipt"]]})
        states = await self.orq.get(NS, [first, second, third])
        self.assertEqual([(s["state"], s.get("outcome")) for s in states], [("ended", "acked"), ("ready", None), ("ended", "cancelled")])
        self.assertEqual(states[1]["metadata"], b"again")
        self.assertEqual([s["id"] async for s in self.orq.list_all(NS, topic, limit=1)], [second])
        self.assertIn(topic, [t["topic"] async for t in self.orq.topics_all(NS, prefix=topic)])
        self.assertIn("now_ms", await self.orq.stats(NS))

    async def test_many_tasks_share_one_connection(self):
        topic = fresh_topic()
        ids = await asyncio.gather(*(self.orq.enqueue_one(NS, topic, b"%d" % i) for i in range(50)))
        self.assertEqual(len(set(ids)), 50)
        states = await asyncio.gather(*(self.orq.get(NS, [item_id]) for item_id in ids))
        self.assertEqual([s[0]["payload"] for s in states], [b"%d" % i for i in range(50)])

    async def test_a_waiting_dequeue_holds_up_no_other_request(self):
        topic = fresh_topic()
        waiting = asyncio.ensure_future(self.orq.dequeue(NS, {topic: 1}, wait_ms=30_000))
        # On the same connection: these are answered while the dequeue waits, and the enqueue wakes it.
        self.assertIsInstance(await self.orq.ping(), int)
        item_id = await self.orq.enqueue_one(NS, topic, b"wake up")
        [delivery] = await asyncio.wait_for(waiting, GIVE_UP_S)
        self.assertEqual(delivery["id"], item_id)
        await self.orq.ack(NS, [delivery["receipt"]])

    async def test_error_replies_keep_the_connection(self):
        with self.assertRaises(OrqError) as caught:
            await self.orq.enqueue(NS, [{"topic": fresh_topic()}, {"topic": fresh_topic(), "priority": "high"}])
        self.assertEqual((caught.exception.code, caught.exception.details.get("index")), ("BAD_REQUEST", 1))
        with self.assertRaises(OrqError) as caught:
            await self.orq.request("no_such_op")
        self.assertEqual(caught.exception.code, "UNKNOWN_OP")
        with self.assertRaises(OrqError) as caught:
            await self.orq.policy(NS, fresh_topic(), group="g", weight=10_001)
        self.assertEqual(caught.exception.details.get("field"), "weight")
        self.assertIsInstance(await self.orq.ping(), int)
        self.assertFalse(self.orq.closed)

    async def test_a_connection_error_fails_every_request_still_out(self):
        waiting = asyncio.ensure_future(self.orq.dequeue(NS, {fresh_topic(): 1}, wait_ms=30_000))
        await self.orq.ping()  # the dequeue was sent before this ping's reply came
        # A frame that is not MessagePack: the server answers BAD_FRAME with id 0 and closes.
        self.orq._writer.write(struct.pack(">I", 1) + b"\xc1")
        with self.assertRaises(OrqError) as caught:
            await asyncio.wait_for(waiting, GIVE_UP_S)
        self.assertEqual(caught.exception.code, "BAD_FRAME")
        self.assertTrue(self.orq.closed)
        with self.assertRaises(ConnectionLost):
            await self.orq.ping()

    async def test_fair_sharing_ops(self):
        topic = fresh_topic()
        held, free = await self.orq.enqueue(NS, [{"topic": topic, "group": "held"}, {"topic": topic, "group": "free", "priority": 1}])
        self.assertEqual(await self.orq.policy(NS, topic, group="free", rate=(5, 1000)), {"policy": {"group": "free", "rate": {"count": 5, "per_ms": 1000}}})
        self.assertEqual([p.get("group") async for p in self.orq.policies_all(NS, topic, limit=1)], ["free"])
        self.assertIsNone(await self.orq.pause(NS, topic, group="held"))
        self.assertEqual([(g["group"], g["paused"]) async for g in self.orq.groups_all(NS, topic, limit=1)], [("free", False), ("held", True)])
        self.assertIn("group_paused", [r["reason"] for r in (await self.orq.explain(NS, [held]))[0]["reasons"]])
        self.assertEqual([d["id"] for d in await self.orq.dequeue(NS, {topic: 2})], [free])
        self.assertTrue(await self.orq.resume(NS, topic, group="held"))


class SilentServerTest(unittest.IsolatedAsyncioTestCase):
    """A server that accepts and never answers: the client's timeout closes the connection."""

    async def test_a_reply_that_never_comes_closes_the_connection(self):
        accepted = []

        async def accept(reader, writer):
            accepted.append(writer)

        silent = await asyncio.start_server(accept, "127.0.0.1", 0)
        port = silent.sockets[0].getsockname()[1]
        try:
            orq = await AsyncClient.connect("127.0.0.1", port, timeout=0.2)
            other = asyncio.ensure_future(orq.dequeue(NS, {"t": 1}, wait_ms=GIVE_UP_S * 1000))
            with self.assertRaises(ConnectionLost):
                await orq.ping()
            self.assertTrue(orq.closed)
            with self.assertRaises(ConnectionLost):  # the request still out fails with it
                await asyncio.wait_for(other, GIVE_UP_S)
            await orq.close()
        finally:
            for writer in accepted:
                writer.close()
            silent.close()
            await silent.wait_closed()


class AsyncWorkerTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.orq = await AsyncClient.open(server.host, server.port, timeout=10)
        self.topic = fresh_topic()

    async def asyncTearDown(self):
        await self.orq.close()

    async def run_until(self, worker, events, predicate, what):
        running = asyncio.ensure_future(worker.run())
        try:
            await events.wait_for(predicate, what)
        finally:
            worker.stop()
            await asyncio.wait_for(running, GIVE_UP_S)

    async def test_acks_successes_with_results_and_nacks_failures_into_dead_letters(self):
        good = await self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"ok%d" % i} for i in range(6)])
        [bad] = await self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"fail", "max_attempts": 2}])
        [odd] = await self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"odd"}])
        together = {"now": 0, "most": 0}
        three = asyncio.Event()

        async def handle(delivery, lease_lost):
            if delivery["payload"] == b"fail":
                raise RuntimeError("asked to fail")
            if delivery["payload"] == b"odd":
                return {"not": "bytes"}
            together["now"] += 1
            together["most"] = max(together["most"], together["now"])
            if together["most"] >= 3:
                three.set()
            # Every good handler holds its slot until 3 ran at the same time.
            await asyncio.wait_for(three.wait(), GIVE_UP_S)
            together["now"] -= 1
            return b"done " + delivery["payload"]

        events = Events()
        worker = self.orq.worker(NS, self.topic, handle, concurrency=3, wait_ms=200, backoff_base_ms=1, on_event=events)
        self.assertIsInstance(worker, AsyncWorker)
        await self.run_until(
            worker,
            events,
            lambda es: len([e for e in es if e["kind"] == "acked"]) == len(good) + 1 and len([e for e in es if e["kind"] == "nacked"]) == 2,
            "every good item acked and two nacks of the failing one",
        )
        self.assertEqual(together["most"], 3)
        self.assertEqual(sorted(e["delivery"]["id"] for e in events.of("acked") if not e["stale"]), sorted(good + [odd]))
        nacked = events.of("nacked")
        self.assertEqual([e["delivery"]["id"] for e in nacked], [bad, bad])
        self.assertEqual([e["delay_ms"] for e in nacked], [nack_delay_ms(1, 1, 300_000), nack_delay_ms(2, 1, 300_000)])
        [problem] = events.of("error")
        self.assertEqual((problem["during"], problem["delivery"]["id"]), ("result", odd))
        self.assertIsInstance(problem["error"], TypeError)
        [state] = await self.orq.get(NS, [bad])
        self.assertEqual((state["state"], state["dead_reason"]), ("dead", "max_attempts"))

    async def test_a_handler_longer_than_its_lease_keeps_it(self):
        [item_id] = await self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"long"}])
        events = Events()

        async def handle(delivery, lease_lost):
            # Two extends mean the first lease (lease_ms from the dequeue) has run out by now.
            await events.wait_for(lambda es: len([e for e in es if e["kind"] == "extended"]) >= 2, "two extends")
            if lease_lost.is_set():
                raise RuntimeError("lease lost")

        worker = AsyncWorker(lambda: AsyncClient.open(server.host, server.port), NS, self.topic, handle, lease_ms=400, wait_ms=100, on_event=events)
        await self.run_until(worker, events, lambda es: any(e["kind"] in ("acked", "nacked") for e in es), "the handler to end")
        self.assertEqual([(e["delivery"]["id"], e["stale"]) for e in events.of("acked")], [(item_id, False)])
        self.assertEqual(events.of("lease_lost"), [])
        [state] = await self.orq.get(NS, [item_id])
        self.assertEqual((state["state"], state["outcome"]), ("ended", "acked"))

    async def test_stop_lets_a_running_handler_finish_and_be_acked(self):
        [item_id] = await self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"slow"}])
        started, release = asyncio.Event(), asyncio.Event()

        async def handle(delivery, lease_lost):
            started.set()
            await release.wait()

        events = Events()
        worker = self.orq.worker(NS, self.topic, handle, wait_ms=100, on_event=events)
        running = asyncio.ensure_future(worker.run())
        await asyncio.wait_for(started.wait(), GIVE_UP_S)
        worker.stop()
        self.assertEqual(worker.running, 1)
        self.assertFalse(running.done())  # run() waits for the handler
        release.set()
        await asyncio.wait_for(running, GIVE_UP_S)
        self.assertEqual(worker.running, 0)
        self.assertEqual([e["delivery"]["id"] for e in events.of("acked")], [item_id])
        await self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"after stop"}])
        self.assertEqual(len(await self.orq.dequeue(NS, {self.topic: 10})), 1)  # the stopped loop took nothing more


if __name__ == "__main__":
    unittest.main(verbosity=2)
