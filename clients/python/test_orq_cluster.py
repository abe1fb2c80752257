"""Goal: the Python cluster client hides a real 3-node orq cluster on
PostgreSQL: keyed items land on their key's shard (the contract's FNV-1a),
batches of ids and receipts reach their owners, a dequeue gathers from every
node, topics are summed over the nodes and paged like a single server's,
dead, redrive, stats and list (list_all too) cover every node,
cancel reaches every owner, acks of deliveries whose node was SIGKILLed
reach the shards' new owners once they take over, and the worker loop
(orq/worker.py) rides through a SIGKILL: every item acked exactly once, no
acked item handled again, nothing left ready or leased.

The cluster comes from test/support/cluster-fixture.ts (PostgreSQL and three
nodes), stopped when its stdin closes; skipped when PostgreSQL is missing.

    /usr/bin/python3 -m unittest -v clients/python/test_orq_cluster.py
"""

import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from orq import ClusterClient, fnv1a32, item_shard, shard_of_group, shard_of_key  # noqa: E402
from orq.cluster_merge import decode_list_cursor, encode_list_cursor, interleave_dead, sum_stats  # noqa: E402
from orq.group_pages import merge_group_pages  # noqa: E402
from orq.topic_pages import merge_topic_pages  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NS = "pycluster"
SHARDS = 6
FIXTURE = None
NODES = []


def setUpModule():
    global FIXTURE
    bun = os.path.join(REPO, "node_modules", ".bin", "bun")
    FIXTURE = subprocess.Popen(
        [bun, os.path.join(REPO, "test", "support", "cluster-fixture.ts"), "3", str(SHARDS), "1500"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = FIXTURE.stdout.readline()
    info = json.loads(line)
    if "skip" in info:
        tearDownModule()
        raise unittest.SkipTest(info["skip"])
    NODES.extend(info["nodes"])


def tearDownModule():
    if FIXTURE is not None:
        FIXTURE.stdin.close()
        FIXTURE.wait(timeout=60)


def wait_balanced(client, live):
    """Poll the map (a condition, not a clock) until every shard is owned by one of `live`."""
    for _ in range(600):
        client.refresh()
        owners = client._map["owners"]
        if set(owners) == set(live):
            return
        time.sleep(0.05)
    raise AssertionError(f"never balanced over {live}: {client._map}")


def eventually(read, wanted):
    """Poll ``read()`` (a condition, not a clock) until it returns ``wanted``: pauses and policies reach every node within 1 s."""
    got = None
    for _ in range(100):
        got = read()
        if got == wanted:
            return got
        time.sleep(0.05)
    raise AssertionError(f"never {wanted!r}; last {got!r}")


class ClusterClientTest(unittest.TestCase):
    # Numbered: unittest runs them in name order, and the last one kills a node.
    def test_1_fnv1a32_matches_published_vectors(self):
        self.assertEqual(fnv1a32(b""), 0x811C9DC5)
        self.assertEqual(fnv1a32(b"a"), 0xE40C292C)
        self.assertEqual(fnv1a32(b"foobar"), 0xBF9CF968)

    def test_2_routes_keys_ids_and_dequeues_from_every_node(self):
        node = NODES[0]
        with ClusterClient(node["host"], node["port"]) as orq:
            wait_balanced(orq, {"n0", "n1", "n2"})
            keys = [f"key-{i}" for i in range(12)]
            ids = orq.enqueue(NS, [{"topic": "r", "payload": k.encode(), "key": k} for k in keys])
            for item_id, key in zip(ids, keys):
                self.assertEqual(int(item_id.split(":")[0]), shard_of_key(NS, "r", key, SHARDS))
            self.assertEqual(orq.enqueue(NS, [{"topic": "r", "payload": b"again", "key": k} for k in keys]), ids)
            states = orq.get(NS, ids)
            self.assertEqual([s["id"] for s in states], ids)
            taken = []
            for _ in range(50):
                if len(taken) == len(ids):
                    break
                taken += orq.dequeue(NS, {"r": 20}, wait_ms=200)
            self.assertEqual(sorted(d["id"] for d in taken), sorted(ids))
            self.assertEqual(orq.ack(NS, [d["receipt"] for d in taken])["acked"], len(ids))
            # Topics are summed over the nodes; cancel reaches every owner.
            more = orq.enqueue(NS, [{"topic": "r2", "payload": b"c", "key": k} for k in keys])
            self.assertEqual([t for t in orq.topics(NS)["topics"] if t["topic"] == "r2"][0]["ready"], len(keys))
            self.assertEqual(orq.cancel(NS, more), {"cancelled": len(keys), "missing": []})
            self.assertEqual([t for t in orq.topics(NS)["topics"] if t["topic"] == "r2"], [])

    def test_2b_topics_page_over_every_node(self):
        node = NODES[1]
        with ClusterClient(node["host"], node["port"]) as orq:
            names = [f"pg-{letter}" for letter in "abcdefg"]
            # Keys spread each topic's items over the shards, so over the nodes.
            for name in names:
                orq.enqueue(NS, [{"topic": name, "payload": b"p", "key": f"{name}-{i}"} for i in range(4)])
            first = orq.topics(NS, prefix="pg-", limit=3)
            self.assertLessEqual(len(first["topics"]), 3)
            self.assertIsNotNone(first["next"])
            listed = list(orq.topics_all(NS, prefix="pg-", limit=2))
            self.assertEqual([t["topic"] for t in listed], names)
            self.assertEqual({t["ready"] for t in listed}, {4})

    def test_2c_merge_topic_pages_stops_where_a_node_has_more(self):
        def entry(name, ready):
            return {"topic": name, "ready": ready, "delayed": 0, "waiting": 0, "leased": 0, "dead": 0, "paused": False}

        a = {"topics": [entry("a", 1), entry("b", 1)], "next": "b"}
        b = {"topics": [entry("a", 2), entry("c", 1), entry("d", 1)], "next": None}
        # Node a may hold topics between b and d it has not listed: the page ends at b.
        self.assertEqual(merge_topic_pages([a, b]), {"topics": [entry("a", 3), entry("b", 1)], "next": "b"})
        self.assertEqual(merge_topic_pages([b], limit=2), {"topics": [entry("a", 2), entry("c", 1)], "next": "c"})
        paused = dict(entry("a", 0), paused=True, paused_until_ms=5)
        self.assertEqual(merge_topic_pages([{"topics": [paused], "next": None}, b])["topics"][0], dict(entry("a", 2), paused=True, paused_until_ms=5))

    def test_2d_dead_redrive_stats_and_list_cover_every_node(self):
        node = NODES[2]
        with ClusterClient(node["host"], node["port"]) as orq:
            wait_balanced(orq, {"n0", "n1", "n2"})
            owners = orq._map["owners"]
            ids = orq.enqueue(NS, [{"topic": "dl", "payload": b"d", "key": f"dl-{i}", "max_attempts": 1} for i in range(12)])
            self.assertEqual({owners[int(i.split(":")[0])] for i in ids}, {"n0", "n1", "n2"})
            taken = []
            for _ in range(50):
                if len(taken) == len(ids):
                    break
                taken += orq.dequeue(NS, {"dl": 20}, wait_ms=200)
            self.assertEqual(orq.nack(NS, [d["receipt"] for d in taken])["nacked"], len(ids))
            # dead: every node's; with a limit, from the nodes in turn.
            self.assertEqual(sorted(d["id"] for d in orq.dead(NS, "dl")), sorted(ids))
            first_three = orq.dead(NS, "dl", limit=3)
            self.assertEqual({owners[int(d["id"].split(":")[0])] for d in first_three}, {"n0", "n1", "n2"})
            # stats: summed, and per node.
            stats = orq.stats(NS)
            self.assertEqual(stats["merged"]["namespaces"][NS]["topics"]["dl"]["dead"], len(ids))
            self.assertEqual(sorted(n["node_id"] for n in stats["nodes"]), ["n0", "n1", "n2"])
            per_node = [n["stats"]["namespaces"][NS]["topics"].get("dl", {}).get("dead", 0) for n in stats["nodes"]]
            self.assertEqual((sum(per_node), min(per_node) > 0), (len(ids), True))
            # list: pages of 4 under one cursor list every item once.
            listed, after = [], None
            for _ in range(50):
                page = orq.list(NS, "dl", limit=4, after=after)
                listed += [item["id"] for item in page["items"]]
                after = page["next"]
                if after is None:
                    break
            self.assertEqual(sorted(listed), sorted(ids))
            self.assertEqual(sorted(item["id"] for item in orq.list_all(NS, "dl", limit=4)), sorted(ids))
            # redrive: ids on their owners, then every node's rest.
            self.assertEqual(orq.redrive(NS, "dl", ids[:2]), {"redriven": 2})
            self.assertEqual(orq.redrive(NS, "dl"), {"redriven": len(ids) - 2})
            self.assertEqual(orq.dead(NS, "dl"), [])
            self.assertEqual(orq.cancel(NS, ids)["cancelled"], len(ids))
            # The map as read, a ping, one item on its key's shard.
            self.assertEqual(orq.cluster()["owners"], owners)
            self.assertIsInstance(orq.ping(), int)
            one = orq.enqueue_one(NS, "dl", b"x", key="dl-one")
            self.assertEqual(int(one.split(":")[0]), shard_of_key(NS, "dl", "dl-one", SHARDS))
            self.assertEqual(orq.cancel(NS, [one])["cancelled"], 1)

    def test_2e_merges_without_a_server(self):
        self.assertEqual(interleave_dead([[1, 2, 3], [], [4], [5, 6]], 5), [1, 4, 5, 2, 6])
        cursor = {"127.0.0.1:1": "r.0.5.7", "127.0.0.1:2": "done"}
        self.assertEqual(decode_list_cursor(encode_list_cursor(cursor)), cursor)
        # The TypeScript client's format: "c1." + base64url (unpadded) of compact JSON.
        self.assertEqual(encode_list_cursor({"a": "b"}), "c1." + base64.urlsafe_b64encode(b'{"a":"b"}').decode().rstrip("="))
        self.assertIsNone(decode_list_cursor("r.0.5.7"))
        node = {"now_ms": 5, "totals": {"ready": 2, "topics": 1}, "namespaces": {"n": {"topic_count": 1, "topics": {"t": {"ready": 2}}, "quota": {"q": 1}}}}
        other = {"now_ms": 9, "totals": {"ready": 1, "topics": 1}, "namespaces": {"n": {"topic_count": 1, "topics": {"t": {"ready": 1}}, "quota": {"q": 1}}}}
        merged = sum_stats([node, other])
        self.assertEqual(merged["now_ms"], 9)
        self.assertEqual(merged["totals"], {"ready": 3, "topics": 1})
        self.assertEqual(merged["namespaces"]["n"], {"topic_count": 1, "topics": {"t": {"ready": 3}}, "quota": {"q": 1}})

    def test_2f_group_routing_and_merged_groups_without_a_server(self):
        # The vectors test/client/item-shard.test.ts checks: fnv1a32("shop\0emails\0acme") = 0x19403e4c.
        self.assertEqual(fnv1a32(b"shop\0emails\0acme"), 0x19403E4C)
        self.assertEqual(shard_of_group("shop", "emails", "acme", 16), 12)
        self.assertEqual(item_shard("shop", {"topic": "emails", "key": "order-1"}, 16), 4)
        # A group comes before a key and an after id.
        self.assertEqual(item_shard("shop", {"topic": "emails", "key": "order-1", "group": "acme"}, 16), 12)
        self.assertEqual(item_shard("shop", {"topic": "emails", "after": ["3:17"], "group": "acme"}, 16), 12)
        self.assertEqual(item_shard("shop", {"topic": "emails", "after": ["3:17"]}, 16), 3)
        self.assertEqual(item_shard("shop", {"topic": "emails"}, 16), -1)

        def entry(name, ready, **extra):
            return {"group": name, "ready": ready, "delayed": 0, "waiting": 0, "leased": 0, "dead": 0, "paused": False, **extra}

        a = {"groups": [entry(None, 1), entry("a", 1)], "next": "a"}
        b = {"groups": [entry("a", 2), entry("c", 1, paused=True, paused_until_ms=5)], "next": None}
        # The same group on two nodes is summed; the page ends where node a has more.
        self.assertEqual(merge_group_pages([a, b]), {"groups": [entry(None, 1), entry("a", 3)], "next": "a"})
        self.assertEqual(merge_group_pages([b, {"groups": [entry(None, 2)], "next": None}], limit=2), {"groups": [entry(None, 2), entry("a", 2)], "next": "a"})
        self.assertEqual(merge_group_pages([{"groups": [entry(None, 1)], "next": ""}]), {"groups": [entry(None, 1)], "next": ""})
        self.assertEqual(merge_group_pages([b])["groups"][1], entry("c", 1, paused=True, paused_until_ms=5))

    def test_2g_groups_live_on_their_shard_and_merge_over_every_node(self):
        node = NODES[1]
        with ClusterClient(node["host"], node["port"]) as orq:
            wait_balanced(orq, {"n0", "n1", "n2"})
            tenants = [f"tenant-{i}" for i in range(9)]
            items = [{"topic": "fair", "payload": b"f", "group": t, "key": f"{t}-{i}"} for t in tenants for i in range(2)]
            ids = orq.enqueue(NS, items)
            for item_id, item in zip(ids, items):
                self.assertEqual(int(item_id.split(":")[0]), shard_of_group(NS, "fair", item["group"], SHARDS))
            listed = list(orq.groups_all(NS, "fair", limit=2))
            self.assertEqual([(g["group"], g["ready"]) for g in listed], [(t, 2) for t in tenants])
            # Any node stores a policy or a pause; the others hold it within 1 s, so they are read until they do.
            orq.policy(NS, "fair", group="tenant-0", max_leased=1)
            for _ in range(3):
                eventually(lambda: orq.policies(NS, "fair")["policies"], [{"group": "tenant-0", "max_leased": 1}])
            self.assertIsNone(orq.pause(NS, "fair", group="tenant-1"))
            paused = lambda: all("group_paused" in [r["reason"] for r in e["reasons"]] for e in orq.explain(NS, ids[2:4]))  # noqa: E731
            eventually(paused, True)
            self.assertTrue(orq.resume(NS, "fair", group="tenant-1"))
            self.assertEqual(orq.policy(NS, "fair", group="tenant-0", clear=True), {"cleared": True})
            self.assertEqual(orq.cancel(NS, ids)["cancelled"], len(ids))

    def test_2h_items_with_no_shard_stay_on_one_node_then_move_on(self):
        node = NODES[0]
        with self.assertRaises(ValueError):
            ClusterClient(node["host"], node["port"], sticky_items=0)

        def owner_in(client, item_id):
            return client._map["owners"][int(item_id.split(":")[0])]

        with ClusterClient(node["host"], node["port"], sticky_items=3) as orq:
            wait_balanced(orq, {"n0", "n1", "n2"})

            def owner(item_id):
                return owner_in(orq, item_id)

            owners = [owner(orq.enqueue_one(NS, "sticky", b"s%d" % i)) for i in range(9)]
            # Three on one node, three on the next, three on the third: each node in turn, none split.
            runs = [owners[0:3], owners[3:6], owners[6:9]]
            self.assertEqual([len(set(run)) for run in runs], [1, 1, 1], owners)
            self.assertEqual(len({run[0] for run in runs}), 3, owners)
            # A call is never split for it: five items with room for three go to one node together.
            self.assertEqual(len({owner(i) for i in orq.enqueue(NS, [{"topic": "sticky", "payload": b"c"}] * 5)}), 1)
        with ClusterClient(node["host"], node["port"], sticky_items=3) as fresh:
            wait_balanced(fresh, {"n0", "n1", "n2"})

            def owner_fresh(item_id):
                return owner_in(fresh, item_id)

            # A call of 100 is a commit's worth by itself: the next node in turn, while single items keep to theirs.
            first = owner_fresh(fresh.enqueue_one(NS, "sticky", b"f"))
            big = {owner_fresh(i) for i in fresh.enqueue(NS, [{"topic": "sticky", "payload": b"b"}] * 100)}
            second = owner_fresh(fresh.enqueue_one(NS, "sticky", b"g"))
            self.assertEqual(len(big), 1)
            self.assertNotIn(first, big)
            self.assertEqual(second, first)
            taken = []
            for _ in range(50):
                if len(taken) == 116:
                    break
                taken += fresh.dequeue(NS, {"sticky": 200}, wait_ms=200)
            self.assertEqual(fresh.ack(NS, [d["receipt"] for d in taken])["acked"], 116)

    def test_3_acks_reach_the_new_owners_after_a_sigkill(self):
        node = NODES[0]
        # One call per node in turn (sticky_items=1), so the SIGKILLed node holds some of the items.
        with ClusterClient(node["host"], node["port"], sticky_items=1) as orq:
            wait_balanced(orq, {"n0", "n1", "n2"})
            ids = []
            for i in range(12):
                ids += orq.enqueue(NS, [{"topic": "k", "payload": b"x%d" % i}])
            taken = []
            for _ in range(50):
                if len(taken) == len(ids):
                    break
                taken += orq.dequeue(NS, {"k": 20}, wait_ms=200, lease_ms=60_000)
            self.assertEqual(sorted(d["id"] for d in taken), sorted(ids))
            os.kill(NODES[2]["pid"], signal.SIGKILL)
            result = orq.ack(NS, [d["receipt"] for d in taken])
            self.assertEqual(result, {"acked": len(ids), "stale": []})
            self.assertEqual(orq.dequeue(NS, {"k": 20}), [])

    def test_4_a_worker_loop_rides_through_a_sigkill(self):
        # n2 died in test_3; the loop works over n0 and n1, and n1 is killed a third of the way through.
        node = NODES[0]
        with ClusterClient(node["host"], node["port"], sticky_items=1) as orq:
            wait_balanced(orq, {"n0", "n1"})
            total = 60
            ids = []
            for i in range(total):
                ids += orq.enqueue(NS, [{"topic": "w", "payload": b"w%d" % i}])
            changed = threading.Condition()
            acked, stale_acked, handled_after_ack, killed = {}, set(), [], []

            def on_event(event):
                if event["kind"] != "acked":
                    return
                with changed:
                    item_id = event["delivery"]["id"]
                    if event["stale"]:
                        # An ack in flight to n1 when it died may have been committed there without an answer; the
                        # worker's retry on the new owner then finds the receipt stale. get() below checks that the
                        # item really ended acked (a lease that ran out instead would bring the item back).
                        stale_acked.add(item_id)
                    else:
                        acked[item_id] = acked.get(item_id, 0) + 1
                    changed.notify_all()

            def handle(delivery, lease_lost):
                with changed:
                    if delivery["id"] in acked:
                        handled_after_ack.append(delivery["id"])  # an acked item came back
                    if not killed and len(acked) >= total // 3:
                        killed.append(NODES[1]["pid"])
                        os.kill(NODES[1]["pid"], signal.SIGKILL)

            worker = orq.worker(NS, "w", handle, concurrency=4, lease_ms=8_000, wait_ms=300, on_event=on_event).start()
            try:
                with changed:
                    # A bound to give up at, not a timing: past the item leases and a takeover.
                    changed.wait_for(lambda: len(set(acked) | stale_acked) == total, timeout=90)
                    # A stale ack's item may still come back (its lease ran out): wait for the server to say every one ended.
                    for _ in range(90):
                        if {s["state"] for s in orq.get(NS, ids)} == {"ended"} and len(set(acked) | stale_acked) == total:
                            break
                        changed.wait(timeout=1)
            finally:
                worker.stop()
            self.assertEqual(killed, [NODES[1]["pid"]])
            self.assertEqual(sorted(set(acked) | stale_acked), sorted(ids))
            self.assertEqual([item_id for item_id, count in acked.items() if count != 1], [])
            self.assertEqual(handled_after_ack, [])
            # Nothing acked is ready or leased anywhere; every item ended acked.
            self.assertEqual([t for t in orq.topics(NS)["topics"] if t["topic"] == "w"], [])
            self.assertEqual({(s["state"], s["outcome"]) for s in orq.get(NS, ids)}, {("ended", "acked")})


if __name__ == "__main__":
    unittest.main()
