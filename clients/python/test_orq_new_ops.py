"""Goal: the ops the contract added for application teams work through both
Python clients against a real orq server: schedules (``schedule``,
``unschedule``, ``schedules``; a tick enqueues the item), ``wait`` and the
``wait_for`` / ``enqueue_and_wait`` helpers, ``ack`` with ``results``
(kept with the outcome, through the worker loops' return values),
``extend`` with ``metadata``, items' ``prefers`` / ``prefer_wait_ms`` and
``trace``; and the cluster client routes ``wait`` to each id's owner and
schedules to one node, in front of a single node and of a real 3-node
cluster on PostgreSQL (test/support/cluster-fixture.ts; skipped without
PostgreSQL).

Waits are on conditions (a parked ``wait`` or ``dequeue``, events), each
with a give-up bound; no assertion depends on how long anything took.

    /usr/bin/python3 -m unittest -v clients/python/test_orq_new_ops.py
"""

import asyncio
import json
import os
import subprocess
import sys
import threading
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from orq import AsyncClient, Client, ClusterClient, OrqError, Worker  # noqa: E402
from test_orq_cluster import REPO, eventually, wait_balanced  # noqa: E402
from test_orq_client import Server  # noqa: E402

NS = "pynewops"
# Longest a test waits for a condition before it fails (not a measured time).
GIVE_UP_S = 60
GIVE_UP_MS = GIVE_UP_S * 1000
TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 vendor=opaque"
server = None


def setUpModule():
    global server
    server = Server()


def tearDownModule():
    server.stop_cleanly()


def fresh(prefix):
    return prefix + "-" + uuid.uuid4().hex[:12]


class SchedulesTest(unittest.TestCase):
    def setUp(self):
        self.orq = Client.open(server.host, server.port, timeout=10)
        self.addCleanup(self.orq.close)

    def test_a_schedule_ticks_lists_and_is_removed(self):
        topic, name = fresh("tick"), fresh("every")
        now_ms = self.orq.ping()
        made = self.orq.schedule(NS, name, {"topic": topic, "payload": b"tick", "priority": 3}, every_ms=1000)
        self.assertEqual(made["name"], name)
        self.assertGreater(made["next_at_ms"], now_ms)
        [listed] = [s for s in self.orq.schedules_all(NS) if s["name"] == name]
        self.assertEqual((listed["every_ms"], listed["timezone"], listed["catch_up"]), (1000, "UTC", "one"))
        self.assertEqual((listed["item"]["topic"], listed["item"]["payload"]), (topic, b"tick"))
        # The first tick enqueues the item: a parked dequeue is woken by it.
        [delivery] = self.orq.dequeue(NS, {topic: 1}, wait_ms=GIVE_UP_MS)
        self.assertEqual((delivery["payload"], delivery["priority"]), (b"tick", 3))
        [state] = self.orq.get(NS, [delivery["id"]])
        self.assertTrue(state["key"].startswith(f"schedule:{name}:"))
        self.orq.ack(NS, [delivery["receipt"]])
        self.assertTrue(self.orq.unschedule(NS, name))
        self.assertFalse(self.orq.unschedule(NS, name))
        self.assertNotIn(name, [s["name"] for s in self.orq.schedules_all(NS)])

    def test_cron_schedules_page_by_name_and_replace(self):
        ns = fresh("cron")
        self.orq.schedule(ns, "b-nightly", {"topic": "t"}, cron="0 3 * * *", timezone="Europe/Paris")
        self.orq.schedule(ns, "a-hourly", {"topic": "t"}, cron="0 * * * *", catch_up="none")
        first = self.orq.schedules(ns, limit=1)
        self.assertEqual([s["name"] for s in first["schedules"]], ["a-hourly"])
        self.assertIsNotNone(first["next"])
        self.assertEqual([s["name"] for s in self.orq.schedules_all(ns, limit=1)], ["a-hourly", "b-nightly"])
        replaced = self.orq.schedule(ns, "a-hourly", {"topic": "t"}, every_ms=60_000)
        [entry] = [s for s in self.orq.schedules_all(ns) if s["name"] == "a-hourly"]
        self.assertEqual((entry.get("every_ms"), entry.get("cron"), entry["next_at_ms"]), (60_000, None, replaced["next_at_ms"]))

    def test_bad_schedules_name_their_field(self):
        for fields, field in (
            ({"cron": "not a cron"}, "cron"),
            ({"cron": "0 3 * * *", "timezone": "Mars/Olympus"}, "timezone"),
            ({"every_ms": 999}, "every_ms"),
        ):
            with self.assertRaises(OrqError) as caught:
                self.orq.schedule(NS, fresh("bad"), {"topic": "t"}, **fields)
            self.assertEqual((caught.exception.code, caught.exception.details.get("field")), ("BAD_REQUEST", field))
        with self.assertRaises(OrqError) as caught:
            self.orq.schedule(NS, fresh("bad"), {"topic": "t", "key": "k"}, every_ms=1000)
        self.assertEqual(caught.exception.code, "BAD_REQUEST")
        self.assertTrue(caught.exception.details.get("field", "").startswith("item"))


class ResultsAndWaitingTest(unittest.TestCase):
    def setUp(self):
        self.orq = Client.open(server.host, server.port, timeout=10)
        self.addCleanup(self.orq.close)
        self.topic = fresh("res")

    def test_a_parked_wait_is_answered_when_the_item_is_acked_with_its_result(self):
        [item_id] = self.orq.enqueue(NS, [{"topic": self.topic}])
        self.assertEqual(self.orq.wait(NS, [item_id], 0)[0]["state"], "ready")
        self.assertEqual(self.orq.wait_for(NS, [item_id], timeout_ms=0)[0]["state"], "ready")
        with Client.open(server.host, server.port, timeout=10) as waiter:
            parked = waiter._send("wait", {"ns": NS, "ids": [item_id], "wait_ms": GIVE_UP_MS})
            [delivery] = self.orq.dequeue(NS, {self.topic: 1})
            self.assertEqual(self.orq.ack(NS, [delivery["receipt"]], results=[b"\x00answer"]), {"acked": 1, "stale": []})
            [state] = waiter._wait(parked, GIVE_UP_MS)["items"]
        self.assertEqual((state["id"], state["state"], state["outcome"], state["result"]), (item_id, "ended", "acked", b"\x00answer"))
        self.assertEqual(self.orq.get(NS, [item_id])[0]["result"], b"\x00answer")

    def test_a_result_over_its_limit_is_too_large_and_none_keeps_no_result(self):
        first, second = self.orq.enqueue(NS, [{"topic": self.topic}, {"topic": self.topic}])
        one, two = self.orq.dequeue(NS, {self.topic: 2})
        with self.assertRaises(OrqError) as caught:
            self.orq.ack(NS, [one["receipt"]], results=[b"x" * (64 * 1024 + 1)])
        self.assertEqual(caught.exception.code, "TOO_LARGE")
        self.assertEqual(self.orq.ack(NS, [one["receipt"], two["receipt"]], results=[b"x" * (64 * 1024), None])["acked"], 2)
        by_id = {state["id"]: state for state in self.orq.get(NS, [first, second])}
        self.assertEqual(len(by_id[one["id"]]["result"]), 64 * 1024)
        self.assertNotIn("result", by_id[two["id"]])

    def test_enqueue_and_wait_returns_what_the_worker_returned(self):
        def handle(delivery, lease_lost):
            return b"handled " + delivery["payload"]

        worker = self.orq.worker(NS, self.topic, handle, concurrency=2, wait_ms=100).start()
        self.addCleanup(worker.stop)
        states = self.orq.enqueue_and_wait(NS, [{"topic": self.topic, "payload": b"a"}, {"topic": self.topic, "payload": b"b"}], timeout_ms=GIVE_UP_MS)
        self.assertEqual([(s["state"], s["outcome"], s["result"]) for s in states], [("ended", "acked", b"handled a"), ("ended", "acked", b"handled b")])

    def test_extend_with_metadata_reports_progress(self):
        [item_id] = self.orq.enqueue(NS, [{"topic": self.topic, "metadata": b"0%"}])
        [delivery] = self.orq.dequeue(NS, {self.topic: 1})
        self.assertEqual(self.orq.extend(NS, [{"receipt": delivery["receipt"], "lease_ms": 60_000, "metadata": b"50%"}])["extended"], 1)
        [state] = self.orq.get(NS, [item_id])
        self.assertEqual((state["state"], state["metadata"]), ("leased", b"50%"))
        self.orq.ack(NS, [delivery["receipt"]])


class PreferencesAndTraceTest(unittest.TestCase):
    def setUp(self):
        self.orq = Client.open(server.host, server.port, timeout=10)
        self.addCleanup(self.orq.close)
        self.topic = fresh("pref")

    def test_prefers_holds_an_item_for_a_worker_that_fits(self):
        [item_id] = self.orq.enqueue(NS, [{"topic": self.topic, "prefers": {"zone": "eu", "gpu": {"gte": 2, "weight": 5}}, "prefer_wait_ms": 3_600_000}])
        [state] = self.orq.get(NS, [item_id])
        self.assertEqual((state["prefers"], state["prefer_wait_ms"]), ({"zone": "eu", "gpu": {"gte": 2, "weight": 5}}, 3_600_000))
        self.assertEqual(self.orq.dequeue(NS, {self.topic: 1}, capabilities={"zone": "us", "gpu": 4}), [])
        self.assertIn("held_for_preferred", [r["reason"] for r in self.orq.explain(NS, [item_id])[0]["reasons"]])
        [delivery] = self.orq.dequeue(NS, {self.topic: 1}, capabilities={"zone": "eu", "gpu": 4})
        self.assertEqual(delivery["id"], item_id)

    def test_trace_travels_with_the_item(self):
        [item_id] = self.orq.enqueue(NS, [{"topic": self.topic, "trace": TRACE}])
        self.assertEqual(self.orq.get(NS, [item_id])[0]["trace"], TRACE)
        self.assertEqual(self.orq.list(NS, self.topic)["items"][0]["trace"], TRACE)
        [delivery] = self.orq.dequeue(NS, {self.topic: 1})
        self.assertEqual(delivery["trace"], TRACE)
        seen = []
        self.orq.ack(NS, [delivery["receipt"]])
        # The worker hands the handler the delivery, trace included.
        self.orq.enqueue(NS, [{"topic": self.topic, "trace": TRACE}])
        done = threading.Event()

        def handle(delivery, lease_lost):
            seen.append(delivery.get("trace"))
            done.set()

        worker = Worker(lambda: Client.open(server.host, server.port), NS, self.topic, handle, wait_ms=100).start()
        self.addCleanup(worker.stop)
        self.assertTrue(done.wait(GIVE_UP_S))
        self.assertEqual(seen, [TRACE])
        with self.assertRaises(OrqError) as caught:
            self.orq.enqueue(NS, [{"topic": self.topic, "trace": "x" * 513}])
        self.assertEqual(caught.exception.code, "TOO_LARGE")


class AsyncNewOpsTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.orq = await AsyncClient.open(server.host, server.port, timeout=10)
        self.topic = fresh("async")

    async def asyncTearDown(self):
        await self.orq.close()

    async def test_a_parked_wait_holds_up_nothing_and_ends_with_the_result(self):
        [item_id] = await self.orq.enqueue(NS, [{"topic": self.topic}])
        parked = asyncio.ensure_future(self.orq.wait_for(NS, [item_id], timeout_ms=GIVE_UP_MS))
        [delivery] = await self.orq.dequeue(NS, {self.topic: 1})  # on the same connection as the parked wait
        await self.orq.ack(NS, [delivery["receipt"]], results=[b"async result"])
        [state] = await asyncio.wait_for(parked, GIVE_UP_S)
        self.assertEqual((state["outcome"], state["result"]), ("acked", b"async result"))

    async def test_enqueue_and_wait_with_the_asyncio_worker(self):
        async def handle(delivery, lease_lost):
            return delivery["payload"].upper()

        worker = self.orq.worker(NS, self.topic, handle, concurrency=2, wait_ms=100)
        running = asyncio.ensure_future(worker.run())
        try:
            states = await self.orq.enqueue_and_wait(NS, [{"topic": self.topic, "payload": b"x"}, {"topic": self.topic, "payload": b"y"}], timeout_ms=GIVE_UP_MS)
        finally:
            worker.stop()
            await asyncio.wait_for(running, GIVE_UP_S)
        self.assertEqual([s["result"] for s in states], [b"X", b"Y"])

    async def test_schedules_and_extend_metadata(self):
        ns = fresh("async-sched")
        made = await self.orq.schedule(ns, "n", {"topic": self.topic}, cron="*/5 * * * *")
        self.assertEqual([s["name"] async for s in self.orq.schedules_all(ns)], ["n"])
        self.assertEqual([s["next_at_ms"] for s in (await self.orq.schedules(ns))["schedules"]], [made["next_at_ms"]])
        self.assertTrue(await self.orq.unschedule(ns, "n"))
        [item_id] = await self.orq.enqueue(NS, [{"topic": self.topic}])
        [delivery] = await self.orq.dequeue(NS, {self.topic: 1})
        await self.orq.extend(NS, [{"receipt": delivery["receipt"], "lease_ms": 60_000, "metadata": b"half"}])
        self.assertEqual((await self.orq.get(NS, [item_id]))[0]["metadata"], b"half")


class ClusterClientOnOneNodeTest(unittest.TestCase):
    def test_wait_and_schedules_through_the_cluster_client(self):
        topic = fresh("cc")
        with ClusterClient(server.host, server.port, timeout=10) as orq:
            [item_id] = orq.enqueue(NS, [{"topic": topic}])
            self.assertEqual(orq.wait(NS, [item_id], 0)[0]["state"], "ready")
            [delivery] = orq.dequeue(NS, {topic: 1})
            orq.ack(NS, [delivery["receipt"]], results=[b"r"])
            self.assertEqual(orq.wait_for(NS, [item_id])[0]["result"], b"r")
            ns = fresh("cc-sched")
            orq.schedule(ns, "s", {"topic": topic}, every_ms=3_600_000)
            self.assertEqual([s["name"] for s in orq.schedules_all(ns)], ["s"])
            self.assertTrue(orq.unschedule(ns, "s"))


class ClusterNewOpsTest(unittest.TestCase):
    """On 3 nodes: a wait over ids on every owner, results from every node, schedules through any node."""

    SHARDS = 6

    @classmethod
    def setUpClass(cls):
        bun = os.path.join(REPO, "node_modules", ".bin", "bun")
        cls.fixture = subprocess.Popen(
            [bun, os.path.join(REPO, "test", "support", "cluster-fixture.ts"), "3", str(cls.SHARDS), "1500"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        info = json.loads(cls.fixture.stdout.readline())
        if "skip" in info:
            cls.stop_fixture()
            raise unittest.SkipTest(info["skip"])
        cls.nodes = info["nodes"]

    @classmethod
    def tearDownClass(cls):
        cls.stop_fixture()

    @classmethod
    def stop_fixture(cls):
        cls.fixture.stdin.close()
        cls.fixture.wait(timeout=60)

    def test_wait_reaches_every_owner_and_schedules_go_through_any_node(self):
        first, second = self.nodes[0], self.nodes[1]
        with ClusterClient(first["host"], first["port"], timeout=10) as orq, ClusterClient(second["host"], second["port"], timeout=10) as other:
            wait_balanced(orq, {"n0", "n1", "n2"})
            keys = [f"w-{i}" for i in range(12)]
            ids = orq.enqueue(NS, [{"topic": "cw", "payload": k.encode(), "key": k} for k in keys])
            owners = {orq._map["owners"][int(item_id.split(":")[0])] for item_id in ids}
            self.assertEqual(owners, {"n0", "n1", "n2"})
            self.assertEqual({s["state"] for s in orq.wait(NS, ids, 0)}, {"ready"})
            parked = {}
            waiting = threading.Thread(target=lambda: parked.update(states=other.wait_for(NS, ids, timeout_ms=GIVE_UP_MS)))
            waiting.start()
            taken = []
            for _ in range(100):
                if len(taken) == len(ids):
                    break
                taken += orq.dequeue(NS, {"cw": 20}, wait_ms=200)
            self.assertEqual(orq.ack(NS, [d["receipt"] for d in taken], [d["payload"].upper() for d in taken])["acked"], len(ids))
            waiting.join(GIVE_UP_S)
            self.assertFalse(waiting.is_alive())
            self.assertEqual([s["result"] for s in parked["states"]], [k.upper().encode() for k in keys])

            ns = fresh("cluster-sched")
            orq.schedule(ns, "nightly", {"topic": "cw"}, cron="0 3 * * *")
            eventually(lambda: [s["name"] for s in other.schedules_all(ns)], ["nightly"])
            self.assertTrue(other.unschedule(ns, "nightly"))
            eventually(lambda: [s["name"] for s in orq.schedules_all(ns)], [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
