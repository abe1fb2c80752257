"""Goal: the Python client speaks protocol v1 to a real orq server: every op
it wraps (get, cancel, dead, redrive, stats, list, pause and resume included) round-trips, replies are matched
by id, and error replies surface as OrqError with the contract's code.

Starts one server for the module (from source with the repo's Bun, or the
binary named by ORQ_BINARY) on free ports in a temporary data dir, and stops
it with SIGTERM, which must exit 0.

    /usr/bin/python3 -m unittest -v clients/python/test_orq_client.py
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from orq import Client, OrqError, policy_fields  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LISTENING = re.compile(r"orq listening on (\S+):(\d+)")
START_TIMEOUT_S = 30
NS = "pytest"


class Server:
    """A real orq server process on free ports."""

    def __init__(self):
        self.data_dir = tempfile.mkdtemp(prefix="orq-pytest-")
        binary = os.environ.get("ORQ_BINARY")
        if binary:
            command = [os.path.abspath(binary)]
        else:
            command = [os.path.join(REPO, "node_modules", ".bin", "bun"), os.path.join(REPO, "src", "cli", "main.ts")]
        command += ["serve", "--host", "127.0.0.1", "--port", "0", "--http-port", "0", "--ui-port", "0", "--data-dir", self.data_dir]
        self.process = subprocess.Popen(
            command, cwd=self.data_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.output = []
        self.host, self.port = self._wait_for_listening()
        # Keep draining the output so the server never blocks on a full pipe.
        self._drain = threading.Thread(target=self._drain_output, daemon=True)
        self._drain.start()

    def _wait_for_listening(self):
        timer = threading.Timer(START_TIMEOUT_S, self.process.kill)
        timer.start()
        try:
            for line in self.process.stdout:
                self.output.append(line)
                match = LISTENING.search(line)
                if match:
                    return match.group(1), int(match.group(2))
        finally:
            timer.cancel()
        raise RuntimeError("orq exited before listening:\n" + "".join(self.output))

    def _drain_output(self):
        for line in self.process.stdout:
            self.output.append(line)

    def stop_cleanly(self):
        """Stop with SIGTERM; fail (showing the server's last output) unless it exits 0."""
        code = self.stop()
        if code != 0:
            raise AssertionError(f"orq exited {code} on SIGTERM:\n" + "".join(self.output[-40:]))

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=START_TIMEOUT_S)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            shutil.rmtree(self.data_dir, ignore_errors=True)
        return code


server = None


def setUpModule():
    global server
    server = Server()


def tearDownModule():
    server.stop_cleanly()


def fresh_topic():
    return "t-" + uuid.uuid4().hex[:12]


class OrqClientTest(unittest.TestCase):
    def setUp(self):
        self.orq = Client.connect(server.host, server.port, timeout=10)
        self.addCleanup(self.orq.close)
        self.orq.hello()

    def test_hello_describes_the_server(self):
        info = self.orq.hello(client="test")
        self.assertEqual(info["server"], "orq")
        self.assertEqual(info["protocol"], 1)
        self.assertGreater(info["max_frame_bytes"], 0)
        self.assertIn("payload_bytes_max", info["limits"])
        # A durable server keeps no namespace in memory only.
        self.assertNotIn("memory_namespaces", info)
        self.assertEqual(self.orq.memory_namespaces, [])

    def test_ping_returns_the_server_clock(self):
        self.assertIsInstance(self.orq.ping(), int)

    def test_enqueue_dequeue_ack(self):
        topic = fresh_topic()
        ids = self.orq.enqueue(
            NS,
            [
                {"topic": topic, "payload": b"\x00second\xff", "priority": 5},
                {"topic": topic, "payload": b"first", "metadata": b"m", "priority": 1},
            ],
        )
        self.assertEqual(len(ids), 2)
        deliveries = self.orq.dequeue(NS, {topic: 10}, lease_ms=60_000)
        self.assertEqual([d["id"] for d in deliveries], [ids[1], ids[0]])
        first = deliveries[0]
        self.assertEqual(first["payload"], b"first")
        self.assertIsInstance(first["payload"], bytes)
        self.assertEqual(first["metadata"], b"m")
        self.assertEqual(first["attempt"], 1)
        self.assertEqual(deliveries[1]["payload"], b"\x00second\xff")
        result = self.orq.ack(NS, [d["receipt"] for d in deliveries])
        self.assertEqual(result, {"acked": 2, "stale": []})
        again = self.orq.ack(NS, [first["receipt"]])
        self.assertEqual(again, {"acked": 0, "stale": [first["receipt"]]})
        self.assertEqual(self.orq.dequeue(NS, {topic: 10}), [])

    def test_nack_redelivers_with_new_metadata(self):
        topic = fresh_topic()
        item_id = self.orq.enqueue_one(NS, topic, b"work", metadata=b"v1")
        [first] = self.orq.dequeue(NS, [topic])
        self.assertEqual(self.orq.nack(NS, [{"receipt": first["receipt"], "metadata": b"v2"}]), {"nacked": 1, "stale": []})
        [second] = self.orq.dequeue(NS, [topic])
        self.assertEqual(second["id"], item_id)
        self.assertEqual(second["attempt"], 2)
        self.assertEqual(second["metadata"], b"v2")
        self.assertNotEqual(second["receipt"], first["receipt"])
        self.assertEqual(self.orq.nack(NS, [first["receipt"]])["stale"], [first["receipt"]])
        self.orq.ack(NS, [second["receipt"]])

    def test_extend_moves_the_lease(self):
        topic = fresh_topic()
        self.orq.enqueue_one(NS, topic, b"x")
        [delivery] = self.orq.dequeue(NS, {topic: 1}, lease_ms=1_000)
        result = self.orq.extend(NS, [{"receipt": delivery["receipt"], "lease_ms": 120_000}])
        self.assertEqual(result, {"extended": 1, "stale": []})
        self.orq.ack(NS, [delivery["receipt"]])
        stale = self.orq.extend(NS, [{"receipt": delivery["receipt"], "lease_ms": 1_000}])
        self.assertEqual(stale, {"extended": 0, "stale": [delivery["receipt"]]})

    def test_capabilities_select_items(self):
        topic = fresh_topic()
        self.orq.enqueue_one(NS, topic, b"gpu job", requires={"gpu": True, "mem_gb": {"gte": 16}})
        self.assertEqual(self.orq.dequeue(NS, {topic: 1}), [])
        self.assertEqual(self.orq.dequeue(NS, {topic: 1}, capabilities={"gpu": True, "mem_gb": 8}), [])
        [delivery] = self.orq.dequeue(NS, {topic: 1}, capabilities={"gpu": True, "mem_gb": 32})
        self.assertEqual(delivery["payload"], b"gpu job")
        self.orq.ack(NS, [delivery["receipt"]])

    def test_waiting_dequeue_is_answered_by_a_later_enqueue(self):
        topic = fresh_topic()
        # Send the long poll first, then enqueue from another connection, then
        # read: no sleeping, the server must wake the parked dequeue.
        waiting_id = self.orq._send("dequeue", {"ns": NS, "topics": [{"topic": topic, "count": 1}], "wait_ms": 10_000})
        with Client.connect(server.host, server.port) as producer:
            producer.hello()
            item_id = producer.enqueue_one(NS, topic, b"wake up")
        reply = self.orq._wait(waiting_id, wait_ms=10_000)
        self.assertEqual([d["id"] for d in reply["items"]], [item_id])
        self.orq.ack(NS, [reply["items"][0]["receipt"]])

    def test_empty_long_poll_returns_an_empty_list(self):
        self.assertEqual(self.orq.dequeue(NS, {fresh_topic(): 1}, wait_ms=1), [])

    def test_pipelined_replies_are_matched_by_id(self):
        topic = fresh_topic()
        results = self.orq.pipeline(
            [("ping", {}), ("enqueue", {"ns": NS, "items": [{"topic": topic}]}), ("nope", {}), ("ping", {})]
        )
        self.assertIn("now_ms", results[0])
        self.assertEqual(len(results[1]["ids"]), 1)
        self.assertIsInstance(results[2], OrqError)
        self.assertEqual(results[2].code, "UNKNOWN_OP")
        self.assertIn("now_ms", results[3])

    def test_errors_raise_with_the_contract_code_and_keep_the_connection(self):
        with self.assertRaises(OrqError) as caught:
            self.orq.enqueue(NS, [{"topic": fresh_topic()}, {"topic": fresh_topic(), "priority": "high"}])
        self.assertEqual(caught.exception.code, "BAD_REQUEST")
        self.assertEqual(caught.exception.details.get("index"), 1)
        self.assertIn("priority", caught.exception.details.get("field", ""))

        limit = self.orq.server_info["limits"]["payload_bytes_max"]
        self.orq.enqueue_one(NS, fresh_topic(), b"x" * limit)
        with self.assertRaises(OrqError) as caught:
            self.orq.enqueue_one(NS, fresh_topic(), b"x" * (limit + 1))
        self.assertEqual(caught.exception.code, "TOO_LARGE")

        with self.assertRaises(OrqError) as caught:
            self.orq.request("no_such_op")
        self.assertEqual(caught.exception.code, "UNKNOWN_OP")
        self.assertIsInstance(self.orq.ping(), int)

    def test_list_pages_through_a_topic_in_order(self):
        topic = fresh_topic()
        ids = self.orq.enqueue(NS, [{"topic": topic, "priority": p, "payload": b"p%d" % p} for p in (3, 1, 2)])
        later = self.orq.enqueue(NS, [{"topic": topic, "delay_ms": 3_600_000}])
        first = self.orq.list(NS, topic, limit=2)
        self.assertEqual([s["id"] for s in first["items"]], [ids[1], ids[2]])
        self.assertEqual(first["items"][0]["payload"], b"p1")
        self.assertIsInstance(first["next"], str)
        rest = self.orq.list(NS, topic, limit=2, after=first["next"])
        self.assertEqual([s["id"] for s in rest["items"]], [ids[0], later[0]])
        self.assertIsNone(rest["next"])
        self.assertEqual([s["id"] for s in self.orq.list_all(NS, topic, limit=1)], [ids[1], ids[2], ids[0], later[0]])
        self.assertEqual([s["state"] for s in self.orq.list(NS, topic, state="delayed")["items"]], ["delayed"])
        self.assertEqual(self.orq.list(NS, fresh_topic()), {"items": [], "next": None})
        with self.assertRaises(OrqError) as caught:
            self.orq.list(NS, topic, limit=1001)
        self.assertEqual(caught.exception.code, "TOO_LARGE")
        self.assertEqual(caught.exception.details["field"], "limit")

    def test_pause_and_resume(self):
        topic = fresh_topic()
        self.orq.enqueue(NS, [{"topic": topic}])
        self.assertIsNone(self.orq.pause(NS, topic))
        self.assertEqual(self.orq.dequeue(NS, {topic: 1}), [])
        [entry] = self.orq.topics(NS, prefix=topic)["topics"]
        self.assertEqual(entry["paused"], True)
        self.assertNotIn("paused_until_ms", entry)
        until = self.orq.pause(NS, topic, for_ms=3_600_000)
        self.assertGreater(until, self.orq.ping())
        self.assertEqual(self.orq.topics(NS, prefix=topic)["topics"][0]["paused_until_ms"], until)
        with self.assertRaises(OrqError) as caught:
            self.orq.pause(NS, topic, for_ms=0)
        self.assertEqual(caught.exception.details["field"], "for_ms")
        self.assertTrue(self.orq.resume(NS, topic))
        self.assertFalse(self.orq.resume(NS, topic))
        self.assertEqual(len(self.orq.dequeue(NS, {topic: 1})), 1)

    def test_get_cancel_dead_redrive_and_stats(self):
        topic = fresh_topic()
        doomed, kept, gone = self.orq.enqueue(NS, [{"topic": topic, "max_attempts": 1}, {"topic": topic, "priority": 5}, {"topic": topic, "priority": 9}])
        states = self.orq.get(NS, [kept, "0:999999999", doomed])
        self.assertEqual([s and s["id"] for s in states], [kept, None, doomed])
        self.assertEqual(states[0]["state"], "ready")
        self.assertEqual(self.orq.cancel(NS, [gone, "0:999999999"]), {"cancelled": 1, "missing": ["0:999999999"]})
        self.assertEqual(self.orq.get(NS, [gone])[0]["outcome"], "cancelled")
        [delivery] = self.orq.dequeue(NS, {topic: 1})
        self.assertEqual(delivery["id"], doomed)
        self.orq.nack(NS, [delivery["receipt"]])
        self.assertEqual([s["id"] for s in self.orq.dead(NS, topic)], [doomed])
        self.assertEqual(self.orq.redrive(NS, topic, ids=[doomed]), {"redriven": 1})
        self.assertEqual(self.orq.dead(NS, topic), [])
        self.assertEqual(self.orq.get(NS, [doomed])[0]["attempt"], 0)
        stats = self.orq.stats(NS)
        self.assertNotIn("ok", stats)
        self.assertIn("now_ms", stats)
        self.assertIn(topic, [t["topic"] for t in self.orq.topics_all(NS, prefix=topic, limit=1)])

    def test_hello_with_the_wrong_protocol_is_rejected(self):
        with self.assertRaises(OrqError) as caught:
            self.orq.request("hello", protocol=99)
        self.assertEqual(caught.exception.code, "BAD_REQUEST")



class FairSharingTest(unittest.TestCase):
    """Groups, policies, group pauses and explain (the contract's "Fair sharing and limits")."""

    def setUp(self):
        self.orq = Client.open(server.host, server.port, timeout=10)
        self.addCleanup(self.orq.close)

    def test_policy_fields_without_a_server(self):
        self.assertEqual(
            policy_fields("n", "t", group="g", weight=2, max_leased=3, rate=(10, 1000)),
            {"ns": "n", "topic": "t", "group": "g", "weight": 2, "max_leased": 3, "rate": {"count": 10, "per_ms": 1000}},
        )
        self.assertEqual(policy_fields("n", "t", rate={"count": 1, "per_ms": 5}), {"ns": "n", "topic": "t", "rate": {"count": 1, "per_ms": 5}})
        self.assertEqual(policy_fields("n", "t", group="*", clear=True), {"ns": "n", "topic": "t", "group": "*", "clear": True})
        self.assertNotIn("clear", policy_fields("n", "t", clear=False))

    def test_group_travels_with_items_and_deliveries(self):
        topic = fresh_topic()
        grouped, plain = self.orq.enqueue(NS, [{"topic": topic, "group": "acme"}, {"topic": topic}])
        states = self.orq.request("get", ns=NS, ids=[grouped, plain])["items"]
        self.assertEqual(states[0]["group"], "acme")
        self.assertNotIn("group", states[1])
        deliveries = self.orq.dequeue(NS, {topic: 2})
        self.assertEqual({d["id"]: d.get("group") for d in deliveries}, {grouped: "acme", plain: None})

    def test_policy_set_listed_and_cleared(self):
        topic = fresh_topic()
        self.assertEqual(self.orq.policy(NS, topic, max_leased=5), {"policy": {"max_leased": 5}})
        stored = self.orq.policy(NS, topic, group="acme", weight=3, rate=(10, 1000))
        self.assertEqual(stored, {"policy": {"group": "acme", "weight": 3, "rate": {"count": 10, "per_ms": 1000}}})
        self.orq.policy(NS, topic, group="*", weight=1)
        page = self.orq.policies(NS, topic)
        self.assertIsNone(page["next"])
        # The topic's own first, then by group name ("*" sorts before letters).
        self.assertEqual([p.get("group") for p in page["policies"]], [None, "*", "acme"])
        first = self.orq.policies(NS, topic, limit=1)
        self.assertEqual(len(first["policies"]), 1)
        self.assertIsNotNone(first["next"])
        self.assertEqual([p.get("group") for p in self.orq.policies_all(NS, topic, limit=1)], [None, "*", "acme"])
        self.assertEqual(self.orq.policy(NS, topic, group="acme", clear=True), {"cleared": True})
        self.assertEqual(self.orq.policy(NS, topic, group="acme", clear=True), {"cleared": False})
        self.assertEqual([p.get("group") for p in self.orq.policies(NS, topic)["policies"]], [None, "*"])
        with self.assertRaises(OrqError) as caught:
            self.orq.policy(NS, topic, group="acme", weight=10_001)
        self.assertEqual((caught.exception.code, caught.exception.details.get("field")), ("BAD_REQUEST", "weight"))

    def test_groups_count_and_page(self):
        topic = fresh_topic()
        self.orq.enqueue(NS, [{"topic": topic, "group": "b"}, {"topic": topic, "group": "a"}, {"topic": topic, "group": "a"}, {"topic": topic}])
        page = self.orq.groups(NS, topic)
        self.assertEqual([(g["group"], g["ready"]) for g in page["groups"]], [(None, 1), ("a", 2), ("b", 1)])
        self.assertTrue(all(g["paused"] is False for g in page["groups"]))
        self.assertEqual([g["group"] for g in self.orq.groups_all(NS, topic, limit=1)], [None, "a", "b"])

    def test_group_pause_holds_back_only_that_group(self):
        topic = fresh_topic()
        held, free = self.orq.enqueue(NS, [{"topic": topic, "group": "held", "priority": 0}, {"topic": topic, "group": "free", "priority": 1}])
        self.assertIsNone(self.orq.pause(NS, topic, group="held"))
        entry = [g for g in self.orq.groups(NS, topic)["groups"] if g["group"] == "held"][0]
        self.assertTrue(entry["paused"])
        reasons = self.orq.explain(NS, [held])[0]["reasons"]
        self.assertIn("group_paused", [r["reason"] for r in reasons])
        self.assertEqual([d["id"] for d in self.orq.dequeue(NS, {topic: 2})], [free])
        self.assertTrue(self.orq.resume(NS, topic, group="held"))
        self.assertFalse(self.orq.resume(NS, topic, group="held"))
        self.assertEqual([d["id"] for d in self.orq.dequeue(NS, {topic: 2})], [held])

    def test_explain_says_why_in_request_order(self):
        topic = fresh_topic()
        later, leased = self.orq.enqueue(NS, [{"topic": topic, "delay_ms": 3_600_000}, {"topic": topic}])
        [delivery] = self.orq.dequeue(NS, {topic: 1}, lease_ms=60_000)
        self.assertEqual(delivery["id"], leased)
        explained = self.orq.explain(NS, [later, "0:999999999", leased])
        self.assertEqual([e and e["id"] for e in explained], [later, None, leased])
        self.assertEqual(explained[0]["state"], "delayed")
        [delayed] = [r for r in explained[0]["reasons"] if r["reason"] == "delayed"]
        self.assertGreater(delayed["until_ms"], self.orq.ping())
        self.assertIn({"reason": "leased", "until_ms": delivery["lease_expires_at_ms"]}, explained[2]["reasons"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
