"""Goal: the Python worker loop (orq/worker.py) against a real orq server:
handlers run `concurrency` at once, each success is acked once (with what
the handler returned as the ack's result), a failure is
nacked with the exponential back-off and becomes a dead letter after its
max_attempts, a handler that outlasts its lease keeps it (extends), and stop()
lets running handlers finish and be acked. (The cluster case, a node killed
while the loop works, is in test_orq_cluster.py.)

Waits are on conditions (events, barriers), each with a give-up bound; no
assertion depends on how long anything took.

    /usr/bin/python3 -m unittest -v clients/python/test_orq_worker.py
"""

import os
import sys
import threading
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from orq import Client, Worker, nack_delay_ms  # noqa: E402
from test_orq_client import Server  # noqa: E402

NS = "pyworker"
# Longest a test waits for a condition before it fails (not a measured time).
GIVE_UP_S = 60


class Events:
    """Collects the worker's events; lets a test wait for a condition over them."""

    def __init__(self):
        self.list = []
        self.changed = threading.Condition()

    def __call__(self, event):
        with self.changed:
            self.list.append(event)
            self.changed.notify_all()

    def wait_for(self, predicate, what):
        with self.changed:
            if not self.changed.wait_for(lambda: predicate(self.list), timeout=GIVE_UP_S):
                raise AssertionError(f"gave up waiting for {what}: {self.list[-5:]}")

    def of(self, kind):
        with self.changed:
            return [e for e in self.list if e["kind"] == kind]


class WorkerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server()  # one server for the class; it must exit 0 on SIGTERM
        cls.addClassCleanup(cls.server.stop_cleanly)

    def setUp(self):
        server = self.server
        self.orq = Client.open(server.host, server.port, timeout=10)
        self.addCleanup(self.orq.close)
        self.topic = "w-" + uuid.uuid4().hex[:12]

    def test_backoff_doubles_up_to_its_cap(self):
        self.assertEqual([nack_delay_ms(a, 1000, 5000) for a in (0, 1, 2, 3, 4)], [1000, 1000, 2000, 4000, 5000])

    def test_runs_handlers_concurrently_acks_successes_and_nacks_failures_into_dead_letters(self):
        good = self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"ok%d" % i} for i in range(6)])
        [bad] = self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"fail", "max_attempts": 2}])
        together = {"now": 0, "most": 0}
        changed = threading.Condition()

        def handle(delivery, lease_lost):
            if delivery["payload"] == b"fail":
                raise RuntimeError("asked to fail")
            with changed:
                together["now"] += 1
                together["most"] = max(together["most"], together["now"])
                changed.notify_all()
                # Every good handler holds its slot until 3 ran at the same time.
                changed.wait_for(lambda: together["most"] >= 3, timeout=GIVE_UP_S)
                together["now"] -= 1

        events = Events()
        worker = self.orq.worker(NS, self.topic, handle, concurrency=3, wait_ms=200, backoff_base_ms=1, on_event=events).start()
        self.addCleanup(worker.stop)
        events.wait_for(lambda es: len([e for e in es if e["kind"] == "acked"]) == len(good), "every good item acked")
        events.wait_for(lambda es: len([e for e in es if e["kind"] == "nacked"]) == 2, "two nacks of the failing item")
        worker.stop()
        self.assertEqual(together["most"], 3)
        acked = [e["delivery"]["id"] for e in events.of("acked") if not e["stale"]]
        self.assertEqual(sorted(acked), sorted(good))
        nacked = events.of("nacked")
        self.assertEqual([e["delivery"]["id"] for e in nacked], [bad, bad])
        self.assertEqual([e["delay_ms"] for e in nacked], [nack_delay_ms(1, 1, 300_000), nack_delay_ms(2, 1, 300_000)])
        [state] = self.orq.request("get", ns=NS, ids=[bad])["items"]
        self.assertEqual((state["state"], state["dead_reason"]), ("dead", "max_attempts"))
        self.assertEqual(events.of("error"), [])

    def test_what_a_handler_returns_is_acked_and_a_result_that_is_not_bytes_is_reported(self):
        done, odd = self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"done"}, {"topic": self.topic, "payload": b"odd"}])
        sent = []
        real_ack = Client.ack

        def recording_ack(client, ns, receipts, results=None):
            sent.append(list(results or []))
            return real_ack(client, ns, receipts, results)

        def handle(delivery, lease_lost):
            return b"result of " + delivery["payload"] if delivery["payload"] == b"done" else 42

        events = Events()
        worker = Worker(lambda: Client.open(self.server.host, self.server.port), NS, self.topic, handle, wait_ms=100, on_event=events)
        Client.ack = recording_ack
        self.addCleanup(setattr, Client, "ack", real_ack)
        worker.start()
        self.addCleanup(worker.stop)
        events.wait_for(lambda es: len([e for e in es if e["kind"] == "acked"]) == 2, "both items acked")
        worker.stop()
        self.assertEqual(sorted(e["delivery"]["id"] for e in events.of("acked")), sorted([done, odd]))
        self.assertIn(b"result of done", [result for results in sent for result in results])
        [problem] = events.of("error")
        self.assertEqual((problem["during"], problem["delivery"]["id"]), ("result", odd))
        self.assertIsInstance(problem["error"], TypeError)

    def test_a_handler_longer_than_its_lease_keeps_it(self):
        [item_id] = self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"long"}])
        events = Events()

        def handle(delivery, lease_lost):
            # Two extends mean the first lease (lease_ms from the dequeue) has run out by now.
            events.wait_for(lambda es: len([e for e in es if e["kind"] == "extended"]) >= 2, "two extends")
            if lease_lost.is_set():
                raise RuntimeError("lease lost")

        worker = Worker(lambda: Client.open(self.server.host, self.server.port), NS, self.topic, handle, lease_ms=400, wait_ms=100, on_event=events)
        worker.start()
        self.addCleanup(worker.stop)
        events.wait_for(lambda es: any(e["kind"] in ("acked", "nacked") for e in es), "the handler to end")
        worker.stop()
        self.assertEqual([(e["delivery"]["id"], e["stale"]) for e in events.of("acked")], [(item_id, False)])
        self.assertEqual(events.of("lease_lost"), [])
        [state] = self.orq.request("get", ns=NS, ids=[item_id])["items"]
        self.assertEqual((state["state"], state["outcome"]), ("ended", "acked"))

    def test_stop_lets_a_running_handler_finish_and_be_acked(self):
        [item_id] = self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"slow"}])
        started, release = threading.Event(), threading.Event()

        def handle(delivery, lease_lost):
            started.set()
            release.wait(GIVE_UP_S)

        events = Events()
        worker = self.orq.worker(NS, self.topic, handle, wait_ms=100, on_event=events).start()
        self.assertTrue(started.wait(GIVE_UP_S))
        stopper = threading.Thread(target=worker.stop)
        stopper.start()
        self.assertEqual(worker.running, 1)  # stop() waits for it
        release.set()
        stopper.join(GIVE_UP_S)
        self.assertFalse(stopper.is_alive())
        self.assertEqual(worker.running, 0)
        self.assertEqual([e["delivery"]["id"] for e in events.of("acked")], [item_id])
        self.orq.enqueue(NS, [{"topic": self.topic, "payload": b"after stop"}])
        self.assertEqual(len(self.orq.dequeue(NS, {self.topic: 10})), 1)  # the stopped loop took nothing more


if __name__ == "__main__":
    unittest.main(verbosity=2)
