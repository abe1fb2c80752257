// What one item's life costs cluster mode's PostgreSQL: N items (1,000 by
// default) go through enqueue, lease (a patched value, as the engine writes
// it), ack and the purge of their acked outcome, one store commit per step,
// behind a shard fence, on a fresh local PostgreSQL. Prints per step the
// WAL bytes per item (pg_current_wal_lsn() before and after the commit; a
// CHECKPOINT before the enqueue, so its figure holds the full page images),
// the round trips and row writes of the commit and the record bytes sent per
// item (PostgresStore.commitCounts). Not a timing: the figures are the same
// run after run. docs/decisions/036-postgres-writes.md has them.
// Run: ./node_modules/.bin/bun bench/probes/postgres-lifecycle-wal.ts [items]

import { openPostgresStore } from "../../src/storage/postgres/postgres-store.ts";
import { connectSql } from "../../src/storage/postgres/sql-client.ts";
import { ItemStateFields, StoredItemPatcher } from "../../src/storage/stored-item-patch.ts";
import type { CommitBatch } from "../../src/storage/store.ts";
import { startPostgres } from "../../test/support/postgres-server.ts";
import { itemRecord, shardBatch } from "../../test/storage/record-fixtures.ts";

const items = Number(process.argv[2] ?? 1000);
const pg = await startPostgres({ fsync: true });
try {
  const url = await pg.createDatabase("lifecycle_wal");
  const admin = connectSql({ url, maxConnections: 1, connectTimeoutS: 5, settings: {}, applicationName: "orq-probe" });
  const store = await openPostgresStore({ url, shards: 2, shardsDefault: 2, durability: "strict", keyRangePerOpen: null, loadAllShards: true, applicationName: "orq-probe", transactionIdleTimeoutMs: null });
  await admin.query("UPDATE orq_shards SET owner = 'probe', epoch = 1");
  store.fence = { nodeId: "probe", heldEpoch: () => 1, lost: () => {}, suspect: () => {} };
  const keys = Array.from({ length: items }, (_, index) => index + 1);
  const walAt = async () => Number((await admin.query("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"))[0]?.[0]);
  const step = async (name: string, batch: CommitBatch) => {
    const counts = store.commitCounts();
    const wal = await walAt();
    const result = await store.commit(batch);
    if (result.failedShards.size > 0) throw [...result.failedShards.values()][0];
    const walBytes = (await walAt()) - wal;
    const after = store.commitCounts();
    console.log(
      `${name.padEnd(8)} WAL ${(walBytes / items).toFixed(1)} B/item  round trips ${after.roundTrips - counts.roundTrips}  row writes ${after.rowWrites - counts.rowWrites}  record bytes ${((after.valueBytes - counts.valueBytes) / items).toFixed(2)}/item`,
    );
  };
  const payload = new Uint8Array(100).fill(7);
  await admin.query("CHECKPOINT");
  await step("enqueue", { shards: [shardBatch(1, keys.map((key) => ({ key, record: itemRecord({ payload }) })))], outcomes: [], meta: null });
  const fields = new ItemStateFields();
  Object.assign(fields, { state: "leased", deliverAtMs: 1_000, leaseExpiresAtMs: 31_000, attempt: 1, deliveries: 1, leaseBoot: 1 });
  const patcher = new StoredItemPatcher(store);
  await step("lease", { shards: [shardBatch(1, keys.map((key) => ({ key, record: patcher.patched(1, key, fields) as Uint8Array })))], outcomes: [], meta: null });
  const acked = { endedAtMs: 2_000, namespaces: ["billing"], nsIndexes: keys.map(() => 0), shards: keys.map(() => 1), keys };
  await step("ack", { shards: [shardBatch(1, keys.map((key) => ({ key, record: null })))], outcomes: [], meta: null, acked });
  await step("purge", { shards: [], outcomes: [], meta: null, ackedPurgeBeforeMs: 2_001 });
  await store.close();
  await admin.close();
} finally {
  pg.stop();
}
