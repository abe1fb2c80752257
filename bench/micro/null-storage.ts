// A Store and Writer that keep nothing, for the in-process engine benches
// (engine.bench.ts, list.bench.ts): writes are dropped, commits succeed at
// once, and every stored item reads back as one 100-byte-payload record, so
// the figures are the engine's own (the group committer and LMDB are measured
// in the storage benches).

import type { ItemRecord, MetaRecord } from "../../src/storage/record.ts";
import { encodeItemRecord } from "../../src/storage/record-codec.ts";
import type { CommitResult, Store } from "../../src/storage/store.ts";
import type { Commit, WriteSet, Writer } from "../../src/storage/writer.ts";

export function nullStorage(shards: number): { store: Store; writer: Writer; payload: Uint8Array; empty: Uint8Array } {
  const resolved = Promise.resolve();
  const nullCommit: Commit = { listen: (listener) => listener.committed(), promise: () => resolved };
  const nullSet: WriteSet = {
    putItem() {},
    putItemBytes() {},
    deleteItem() {},
    putOutcome() {},
    deleteOutcome() {},
    ackItem() {},
    purgeAckedBefore() {},
    putPause() {},
    deletePause() {},
    putPolicy() {},
    deletePolicy() {},
    putSchedule() {},
    deleteSchedule() {},
    end: () => resolved,
    close: () => nullCommit,
  };
  let nextKey = 0;
  const writer: Writer = {
    begin: () => nullSet,
    nextKey: () => nextKey++,
    writable: () => ({ available: true }),
    allWritable: () => true,
    shardCount: shards,
    drain: () => resolved,
    // Nothing commits, so nothing goes idle after a commit: no read-ahead.
    commitGeneration: 0,
    setIdleListener: () => {},
  };
  const meta: MetaRecord = { formatVersion: 1, shards, nodeId: "bench", keysReservedBelow: 0, boots: 1 };
  const payload = new Uint8Array(100);
  const empty = new Uint8Array(0);
  /** What every stored item reads back as: the engine reads a delivered item's payload from the store. */
  const storedRecord: ItemRecord = {
    ns: "bench", topic: "big", priority: 0, payload, metadata: empty, enqueuedAtMs: 0, deliverAtMs: 0, leaseMs: 30000,
    ttlExpiresAtMs: null, delivery: "at_least_once", maxAttempts: 10, attempt: 0, deliveries: 0, leaseBoot: 0,
    state: "pending", leaseExpiresAtMs: null, deadReason: null, requires: null, after: null, key: null, group: null,
  };
  const storedValue = encodeItemRecord(storedRecord);
  const store: Store = {
    shardCount: shards,
    meta,
    loadShards: () => [],
    loadOutcomes: () => [],
    loadAckedLog: () => [],
    loadPauses: () => [],
    loadPolicies: () => [],
    loadSchedules: () => [],
    storedCounts: () => ({ items: 0, outcomes: 0 }),
    readItem: () => storedRecord,
    readItemBytes: () => storedValue.slice(),
    commit: (): Promise<CommitResult> => Promise.resolve({ failedShards: new Map(), metaError: null }),
    close: () => resolved,
  };
  return { store, writer, payload, empty };
}
