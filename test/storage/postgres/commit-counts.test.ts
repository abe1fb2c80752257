// Goal: the PostgreSQL store counts what each commit costs the database
// (round trips and row writes, commit-counters.ts) for one item's life as
// cluster mode runs it, behind a shard fence: enqueue, a lease written as a
// patched value, an ack, and the purge of the acked outcome once retention
// is over. The expected numbers are decision 036's table: a change of the
// commit's SQL that moves them must update both. A reopen reads the item as
// the last commit left it. Skipped when PostgreSQL is not installed (unless
// ORQ_REQUIRE_POSTGRES=1).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openPostgresStore, type PostgresStore, type PostgresStoreOptions } from "../../../src/storage/postgres/postgres-store.ts";
import type { CommitCounts } from "../../../src/storage/postgres/commit-counters.ts";
import type { ShardFence } from "../../../src/storage/postgres/shard-fence.ts";
import { connectSql } from "../../../src/storage/postgres/sql-client.ts";
import { ItemStateFields, StoredItemPatcher } from "../../../src/storage/stored-item-patch.ts";
import type { CommitBatch } from "../../../src/storage/store.ts";
import { postgresAvailable, releasePostgres, sharedPostgres, type PostgresServer } from "../../support/postgres-server.ts";
import { itemRecord, shardBatch } from "../record-fixtures.ts";

const available = postgresAvailable();

function options(url: string): PostgresStoreOptions {
  return { url, shards: 2, shardsDefault: 2, durability: "strict", keyRangePerOpen: null, loadAllShards: true, applicationName: "orq-test", transactionIdleTimeoutMs: null };
}

/** A fence that holds every shard at epoch 1 as node "n1" (the test sets the shard rows to match). */
const fence: ShardFence = { nodeId: "n1", heldEpoch: () => 1, lost: () => {} };

describe.skipIf(!available)("PostgreSQL commit counts per item lifecycle", () => {
  let pg: PostgresServer;
  const opened: PostgresStore[] = [];

  beforeAll(async () => {
    pg = await sharedPostgres();
  });

  afterAll(async () => {
    for (const store of opened.splice(0)) await store.close();
    await releasePostgres();
  });

  async function fencedStore(): Promise<PostgresStore> {
    const url = await pg.createDatabase("commit_counts");
    const admin = connectSql({ url, maxConnections: 1, connectTimeoutS: 5, settings: {}, applicationName: "orq-test-admin" });
    const store = await openPostgresStore(options(url));
    opened.push(store);
    await admin.query("UPDATE orq_shards SET owner = 'n1', epoch = 1");
    await admin.close();
    store.fence = fence;
    return store;
  }

  /** Commit `batch` and return what it cost. */
  async function cost(store: PostgresStore, batch: CommitBatch): Promise<Omit<CommitCounts, "commits">> {
    const before = store.commitCounts();
    const result = await store.commit(batch);
    expect(result.failedShards.size).toBe(0);
    const after = store.commitCounts();
    expect(after.commits).toBe(before.commits + 1);
    return { roundTrips: after.roundTrips - before.roundTrips, rowWrites: after.rowWrites - before.rowWrites };
  }

  test("enqueue, lease, ack and purge: round trips and row writes of each commit", async () => {
    const store = await fencedStore();
    const enqueued = itemRecord({ enqueuedAtMs: 1_000, deliverAtMs: 1_000 });
    const enqueue = await cost(store, { shards: [shardBatch(1, [{ key: 7, record: enqueued }])], outcomes: [], meta: null });

    const fields = new ItemStateFields();
    Object.assign(fields, { state: "leased", deliverAtMs: 1_000, leaseExpiresAtMs: 31_000, attempt: 1, deliveries: 1, leaseBoot: 1 });
    const patched = new StoredItemPatcher(store).patched(1, 7, fields);
    expect(patched).toBeInstanceOf(Uint8Array);
    const lease = await cost(store, { shards: [shardBatch(1, [{ key: 7, record: patched as Uint8Array }])], outcomes: [], meta: null });
    expect(store.readItem(1, 7)).toEqual({ ...enqueued, state: "leased", leaseExpiresAtMs: 31_000, attempt: 1, deliveries: 1, leaseBoot: 1 });

    const acked = { endedAtMs: 2_000, namespaces: ["billing"], nsIndexes: [0], shards: [1], keys: [7] };
    const ack = await cost(store, { shards: [shardBatch(1, [{ key: 7, record: null }])], outcomes: [], meta: null, acked });
    const purge = await cost(store, { shards: [], outcomes: [], meta: null, ackedPurgeBeforeMs: 2_001 });

    expect({ enqueue, lease, ack, purge }).toEqual({
      enqueue: { roundTrips: 4, rowWrites: 1 },
      lease: { roundTrips: 4, rowWrites: 1 },
      ack: { roundTrips: 4, rowWrites: 2 },
      purge: { roundTrips: 3, rowWrites: 1 },
    });
    expect(store.readItem(1, 7)).toBeNull();
  });
});
