// A process for the ack sweep's crash test (test/storage/lmdb-ack-sweep.test.ts):
// opens the LMDB store in the data dir given as argv[2] with 4 shards, stores
// items 0..7 (key k on shard k % 4), acks 1, 2, 5, 6 and 7 in one commit as the
// engine does (deletes plus one acked-log record), prints "ready" and waits to
// be killed. With a lag of 1,000 keys no acked record has been deleted yet.

import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import type { CommitBatch } from "../../src/storage/store.ts";
import { itemRecord, shardBatch } from "../storage/record-fixtures.ts";

const dataDir = process.argv[2];
if (dataDir === undefined) throw new Error("usage: ack-sweep-child.ts DATA_DIR");
const shards = 4;
const store = await openLmdbStore({ dataDir, shards, durability: "strict", ackSweepLagKeys: 1000 });
const enqueue: CommitBatch = { shards: [], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null };
for (let shard = 0; shard < shards; shard++) enqueue.shards.push(shardBatch(shard, []));
for (let key = 0; key < 8; key++) {
  enqueue.shards[key % shards]?.keys.push(key);
  enqueue.shards[key % shards]?.records.push(itemRecord());
}
await store.commit(enqueue);
const acked = [1, 2, 5, 6, 7];
await store.commit({
  shards: acked.map((key) => shardBatch(key % shards, [{ key, record: null }])),
  outcomes: [],
  meta: null,
  acked: { endedAtMs: 1000, namespaces: ["billing"], nsIndexes: acked.map(() => 0), shards: acked.map((key) => key % shards), keys: acked },
  ackedPurgeBeforeMs: null,
});
process.stdout.write("ready\n");
await new Promise(() => {});
