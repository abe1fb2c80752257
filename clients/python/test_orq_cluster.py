"""Goal: the Python cluster client hides a real 3-node orq cluster on
PostgreSQL: keyed items land on their key's shard (the contract's FNV-1a),
batches of ids and receipts reach their owners, a dequeue gathers from every
node, topics are summed over the nodes, cancel reaches every owner, and acks of deliveries whose node was SIGKILLed reach the shards' new
owners once they take over.

The cluster comes from test/support/cluster-fixture.ts (PostgreSQL and three
nodes), stopped when its stdin closes; skipped when PostgreSQL is missing.

    /usr/bin/python3 -m unittest -v clients/python/test_orq_cluster.py
"""

import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from orq_cluster import ClusterClient, fnv1a32, shard_of_key  # noqa: E402

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
            self.assertEqual([t for t in orq.topics(NS) if t["topic"] == "r2"][0]["ready"], len(keys))
            self.assertEqual(orq.cancel(NS, more), {"cancelled": len(keys), "missing": []})
            self.assertEqual([t for t in orq.topics(NS) if t["topic"] == "r2"], [])

    def test_3_acks_reach_the_new_owners_after_a_sigkill(self):
        node = NODES[0]
        with ClusterClient(node["host"], node["port"]) as orq:
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


if __name__ == "__main__":
    unittest.main()
