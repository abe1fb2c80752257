"""Goal: the parts of the orq package that need no server hold on their own:
the frame decoder turns bytes split at every offset into the same replies and
refuses an oversized or non-reply frame; a request over the server's frame
limit is refused before it is sent; ``wait_for``'s plan batches ids, keeps to
its deadline and stops once every id has settled; an ack's results are sent
only when one is set; a handler's return value becomes a result or an error
event; and, with an OpenTelemetry API on the path (a small stand-in here,
test_support/opentelemetry), enqueue writes the caller's span as ``trace``
and the worker's span continues it; and the worker loop frees a slot when a
handler returns, sending the next dequeue while the ack is unanswered, and
holds at most twice its concurrency in deliveries.

    /usr/bin/python3 -m unittest -v clients/python/test_orq_parts.py
"""

import json
import os
import struct
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import msgpack  # noqa: E402

from orq import OrqError  # noqa: E402
from orq.cluster import ClusterClient  # noqa: E402
from orq.errors import ConnectionLost  # noqa: E402
from orq.fields import ack_fields, schedule_fields, topic_counts, traced_items  # noqa: E402
from orq.framing import FrameDecoder, RequestIds, REQUEST_ID_MAX, encode_request  # noqa: E402
from orq.tracing import tracing_available  # noqa: E402
from orq.waiting import WaitPlan, is_settled  # noqa: E402
from orq.worker import Worker  # noqa: E402
from orq.worker_settings import free_slots, handler_result  # noqa: E402


def frame(value):
    body = msgpack.packb(value, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


class FramingTest(unittest.TestCase):
    def test_replies_split_at_every_offset_decode_the_same(self):
        replies = [{"id": 1, "ok": True, "ids": ["0:1"]}, {"id": 2, "ok": True, "payload": b"\x00\xff" * 300}, {"id": 3, "ok": False, "error": {"code": "TOO_LARGE", "message": "m"}}]
        stream = b"".join(frame(reply) for reply in replies)
        for cut in range(len(stream) + 1):
            decoder = FrameDecoder()
            got = decoder.feed(stream[:cut]) + decoder.feed(stream[cut:])
            self.assertEqual(got, replies, f"split at {cut}")
        decoder = FrameDecoder()
        one_at_a_time = [reply for byte in stream for reply in decoder.feed(bytes([byte]))]
        self.assertEqual(one_at_a_time, replies)

    def test_a_reply_longer_than_the_bound_is_refused_at_its_header(self):
        body = msgpack.packb({"id": 1, "ok": True, "x": b"a" * 20})
        FrameDecoder(reply_bytes_max=len(body)).feed(struct.pack(">I", len(body)) + body)
        with self.assertRaises(ConnectionLost):
            FrameDecoder(reply_bytes_max=len(body) - 1).feed(struct.pack(">I", len(body)))

    def test_a_frame_that_is_not_a_reply_is_refused(self):
        for value in ([1, 2], {"ok": True}, "text"):
            with self.assertRaises(ConnectionLost):
                FrameDecoder().feed(frame(value))
        with self.assertRaises(ConnectionLost):
            FrameDecoder().feed(struct.pack(">I", 1) + b"\xc1")  # 0xc1 is never valid MessagePack

    def test_requests_are_framed_and_refused_above_the_servers_limit(self):
        packer = msgpack.Packer(use_bin_type=True)
        encoded = encode_request(packer, 7, "ack", {"ns": "a", "receipts": ["r"], "results": None}, None)
        (length,) = struct.unpack(">I", encoded[:4])
        self.assertEqual(length, len(encoded) - 4)
        self.assertEqual(msgpack.unpackb(encoded[4:]), {"id": 7, "op": "ack", "ns": "a", "receipts": ["r"]})
        encode_request(packer, 7, "ack", {"ns": "a"}, length)  # a body at the limit goes
        with self.assertRaises(OrqError) as caught:
            encode_request(packer, 7, "ack", {"ns": "a", "receipts": ["r"]}, length - 1)
        self.assertEqual(caught.exception.code, "FRAME_TOO_LARGE")

    def test_request_ids_wrap_after_the_contracts_maximum(self):
        ids = RequestIds()
        ids._next = REQUEST_ID_MAX - 1
        self.assertEqual([ids.take(), ids.take(), ids.take()], [REQUEST_ID_MAX - 1, REQUEST_ID_MAX, 1])


class FieldsTest(unittest.TestCase):
    def test_ack_results_go_only_when_one_is_set_and_must_match_the_receipts(self):
        self.assertEqual(ack_fields("n", ["a", "b"]), {"ns": "n", "receipts": ["a", "b"]})
        self.assertEqual(ack_fields("n", ["a", "b"], [None, None]), {"ns": "n", "receipts": ["a", "b"]})
        self.assertEqual(ack_fields("n", ["a", "b"], [None, b"r"])["results"], [None, b"r"])
        with self.assertRaises(ValueError):
            ack_fields("n", ["a", "b"], [b"r"])

    def test_topic_counts_and_schedule_fields(self):
        self.assertEqual(topic_counts({"a": 2}), [{"topic": "a", "count": 2}])
        self.assertEqual(topic_counts(["a", ("b", 3)]), [{"topic": "a", "count": 1}, {"topic": "b", "count": 3}])
        fields = schedule_fields("n", "nightly", {"topic": "t", "priority": None}, cron="0 3 * * *")
        self.assertEqual(fields, {"ns": "n", "name": "nightly", "cron": "0 3 * * *", "item": {"topic": "t"}})

    def test_items_keep_their_own_trace_and_get_none_without_opentelemetry(self):
        if tracing_available():
            self.skipTest("OpenTelemetry is installed: the stand-in test below covers it")
        self.assertEqual(traced_items([{"topic": "t", "trace": "given"}, {"topic": "t", "key": None}]), [{"topic": "t", "trace": "given"}, {"topic": "t"}])

    def test_a_handlers_return_value_becomes_the_result(self):
        self.assertEqual(handler_result(None), (None, None))
        self.assertEqual(handler_result(b"done"), (b"done", None))
        self.assertEqual(handler_result(bytearray(b"x")), (b"x", None))
        result, problem = handler_result({"not": "bytes"})
        self.assertIsNone(result)
        self.assertIsInstance(problem, TypeError)


def ended(item_id):
    return {"id": item_id, "state": "ended", "outcome": "acked"}


class WaitPlanTest(unittest.TestCase):
    def test_asks_in_batches_until_every_id_has_settled(self):
        plan = WaitPlan(["a", "b", "c"], None, 0.0, {"ids_per_request_max": 2, "wait_ms_max": 1000})
        self.assertEqual(plan.next_request(0.0), (["a", "b"], 1000))
        plan.take([ended("a"), {"id": "b", "state": "leased"}])
        self.assertEqual(plan.next_request(1.0), (["b", "c"], 1000))
        plan.take([ended("b"), None])  # None: unknown, settled as well
        self.assertIsNone(plan.next_request(2.0))
        self.assertEqual(plan.states, [ended("a"), ended("b"), None])
        self.assertTrue(is_settled(None) and is_settled(ended("x")) and not is_settled({"state": "ready"}))

    def test_keeps_to_its_deadline_but_asks_every_id_once(self):
        plan = WaitPlan(["a", "b", "c"], 1500, 10.0, {"ids_per_request_max": 2, "wait_ms_max": 1000})
        self.assertEqual(plan.next_request(10.0), (["a", "b"], 1000))
        plan.take([{"id": "a", "state": "ready"}, {"id": "b", "state": "ready"}])
        self.assertEqual(plan.next_request(11.0), (["a", "b"], 500))
        plan.take([{"id": "a", "state": "ready"}, {"id": "b", "state": "ready"}])
        # Past the deadline: the id never asked about is asked once, with wait_ms 0.
        self.assertEqual(plan.next_request(11.5), (["c"], 0))
        plan.take([{"id": "c", "state": "ready"}])
        self.assertIsNone(plan.next_request(11.6))
        self.assertEqual([state["id"] for state in plan.states], ["a", "b", "c"])

    def test_a_zero_timeout_asks_once_without_waiting(self):
        plan = WaitPlan(["a"], 0, 5.0)
        self.assertEqual(plan.next_request(5.0), (["a"], 0))
        plan.take([{"id": "a", "state": "ready"}])
        self.assertIsNone(plan.next_request(5.0))

    def test_an_answer_of_the_wrong_length_is_refused(self):
        plan = WaitPlan(["a", "b"], None, 0.0)
        plan.next_request(0.0)
        with self.assertRaises(ValueError):
            plan.take([ended("a")])


STAND_IN_CHECK = r"""
import json, threading
from opentelemetry import trace
from orq import Worker, tracing_available
from orq.fields import traced_items
from orq.tracing import consumer_span

tracer = trace.get_tracer("test")
with tracer.start_as_current_span("producer"):
    [item] = traced_items([{"topic": "t"}])
    [kept] = traced_items([{"topic": "t", "trace": "00-given"}])
outside = traced_items([{"topic": "t"}])[0]
with consumer_span({"id": "0:1", "topic": "emails", "trace": item["trace"]}):
    inside = trace.current_span_name()
print(json.dumps({"available": tracing_available(), "trace": item["trace"], "kept": kept["trace"],
                  "outside": "trace" in outside, "inside": inside, "spans": trace.FINISHED}))
"""


class _FakeNode:
    """A cluster node that serves `owns` and answers MOVED (naming the owner) for any other shard; its map is `stale`."""

    def __init__(self, owns, owners, stale):
        self.owns, self.owners, self.stale, self.acked, self.closed, self.server_info = owns, owners, stale, [], False, {"shards": 2}
        self.asked = 0

    def request(self, op):
        return {"cluster": self.stale}

    def ack(self, ns, receipts, results):
        self.asked += 1
        for receipt in receipts:
            shard = int(receipt.split(":")[0])
            if shard not in self.owns:
                raise OrqError("MOVED", "elsewhere", {"shard": shard, "addr": self.owners[shard], "map_version": 16})
        self.acked += receipts
        return {"acked": len(receipts), "stale": []}


class MovedRoutingTest(unittest.TestCase):
    def test_a_shard_goes_to_the_owner_a_moved_named_while_the_map_read_is_older(self):
        # The seed is cut off from the database: its map (version 14) names no owner for shards 0 and 1,
        # which b and c took over. Sent together to one node, no node could serve them whole.
        stale = {"map_version": 14, "node_id": "a", "nodes": [{"node_id": n, "addr": n} for n in "abc"], "owners": [None, None]}
        owners = {0: "b", 1: "c"}
        nodes = {"a": _FakeNode(set(), owners, stale), "b": _FakeNode({0}, owners, stale), "c": _FakeNode({1}, owners, stale)}
        client = ClusterClient.__new__(ClusterClient)
        client.__dict__.update(_seed="a", _clients={}, _map=stale, _shards=2, _turn=0, _moved_to={}, _closed=False, _home=None, _home_items=0, _sticky_items=1000)
        client._client = lambda addr: nodes[addr]
        self.assertEqual(client.ack("ns", ["0:1:r", "1:2:r"]), {"acked": 2, "stale": []})
        self.assertEqual((nodes["b"].acked, nodes["c"].acked), (["0:1:r"], ["1:2:r"]))

    def test_a_moved_from_the_sticky_node_is_followed_and_the_sticky_node_replaced(self):
        # b is where items that name no shard go (_home) when it answers MOVED: the owner it names is used
        # at once (a is never asked), and the next such items go elsewhere.
        stale = {"map_version": 14, "node_id": "a", "nodes": [{"node_id": n, "addr": n} for n in "abc"], "owners": [None, None]}
        owners = {0: "b", 1: "c"}
        nodes = {"a": _FakeNode(set(), owners, stale), "b": _FakeNode({0}, owners, stale), "c": _FakeNode({1}, owners, stale)}
        client = ClusterClient.__new__(ClusterClient)
        client.__dict__.update(_seed="a", _clients={}, _map=stale, _shards=2, _turn=0, _moved_to={}, _closed=False, _home="b", _home_items=0, _sticky_items=1000)
        client._client = lambda addr: nodes[addr]
        self.assertEqual(client.ack("ns", ["0:1:r", "1:2:r"]), {"acked": 2, "stale": []})
        self.assertEqual((nodes["b"].acked, nodes["c"].acked), (["0:1:r"], ["1:2:r"]))
        self.assertEqual((nodes["a"].asked, client._moved_to), (0, {0: ("b", 16), 1: ("c", 16)}))
        self.assertIsNone(client._home)


class _HeldAcks:
    """A fake client with endless items whose acks are answered only when the test says so."""

    def __init__(self):
        self.lock = threading.Lock()
        self.log = []
        self.delivered = 0
        self.release = threading.Event()
        self.unanswered = 0

    def dequeue(self, ns, topics, capabilities, wait_ms, lease_ms):
        with self.lock:
            [count] = topics.values()
            self.log.append(f"dequeue {count}")
            out = [{"id": f"i{self.delivered + k}", "receipt": f"0:{self.delivered + k}:r", "attempt": 1, "payload": b""} for k in range(count)]
            self.delivered += count
        time.sleep(0.001)
        return out

    def ack(self, ns, receipts, results=None):
        with self.lock:
            self.log.append("ack " + ",".join(receipts))
            self.unanswered += 1
        self.release.wait(10)
        with self.lock:
            self.unanswered -= 1
        return {"acked": len(receipts), "stale": []}

    def close(self):
        pass


def _wait_until(condition, what):
    deadline = time.monotonic() + 10
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.002)


class WorkerSlotTest(unittest.TestCase):
    def test_free_slots_counts_a_settling_delivery_free_up_to_twice_concurrency(self):
        self.assertEqual(free_slots(4, 0, 0), 4)
        self.assertEqual(free_slots(4, 4, 4), 0)
        self.assertEqual(free_slots(4, 0, 4), 4)  # four acks out: every slot is free
        self.assertEqual(free_slots(4, 1, 5), 3)
        self.assertEqual(free_slots(4, 1, 7), 1)  # six settling: two past concurrency
        self.assertEqual(free_slots(4, 0, 8), 0)  # twice concurrency held: no more

    def test_the_next_dequeue_leaves_while_the_ack_is_unanswered(self):
        fake = _HeldAcks()
        worker = Worker(lambda: fake, "ns", "jobs", lambda delivery, lost: None, concurrency=2, wait_ms=10).start()
        try:
            # Both handlers return at once; their acks are held: the loop takes two more, then stops at four.
            _wait_until(lambda: fake.delivered >= 4 and fake.unanswered >= 1, "four deliveries with acks unanswered")
            time.sleep(0.05)
            self.assertEqual(fake.delivered, 4)
            self.assertEqual(worker.running, 0)
            self.assertEqual([line for line in fake.log if line.startswith("dequeue")], ["dequeue 2", "dequeue 2"])
            fake.release.set()
            _wait_until(lambda: fake.delivered > 4, "more deliveries once the acks are answered")
        finally:
            fake.release.set()
            worker.stop()


class TraceStandInTest(unittest.TestCase):
    def test_enqueue_writes_the_callers_span_and_the_consumer_span_continues_it(self):
        stand_in = os.path.join(HERE, "test_support")
        path = [stand_in, HERE] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), PYTHONDONTWRITEBYTECODE="1")
        run = subprocess.run([sys.executable, "-c", STAND_IN_CHECK], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        got = json.loads(run.stdout)
        self.assertTrue(got["available"])
        producer = next(span for span in got["spans"] if span["name"] == "producer")
        self.assertEqual(got["trace"], f"00-{producer['trace_id']}-{producer['span_id']}-01 vendor=1")
        self.assertEqual(got["kept"], "00-given")
        self.assertFalse(got["outside"], "no span, no trace")
        self.assertEqual(got["inside"], "process emails")
        consumer = next(span for span in got["spans"] if span["name"] == "process emails")
        self.assertEqual(consumer["kind"], "CONSUMER")
        self.assertEqual(consumer["trace_id"], producer["trace_id"])
        self.assertEqual(consumer["parent_span_id"], producer["span_id"])
        self.assertEqual(consumer["attributes"]["messaging.message.id"], "0:1")


if __name__ == "__main__":
    unittest.main()
