// The storage interface the engine depends on. The engine never imports lmdb:
// it talks to a Store through the GroupCommitter (group-commit.ts), which
// buffers writes per shard and commits them in batches.
//
// Implementations: lmdb/lmdb-store.ts (the real one) and memory/memory-store.ts
// (tests, simulation and `orq serve --store memory`); test/storage/store-suite.ts
// is the one suite both pass. memory/memory-namespaces.ts wraps a durable one to
// keep some namespaces in memory beside it.

import type { AckedLogRecord } from "./acked-log.ts";
import type { ItemKey } from "./item-key.ts";
import type { ItemValueBytes } from "./item-record.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord, PolicyRecord, ScheduleRecord } from "./record.ts";

export type { ItemKey } from "./item-key.ts";

/**
 * One shard's writes, applied atomically and in order. A null record
 * deletes; a Uint8Array is an item value already encoded in the current
 * record version (a stored value with its state patched, record-codec.ts's
 * patchItemState), written as it is.
 */
export interface ShardBatch {
  shard: number;
  /**
   * Its item writes as two parallel lists, write i being (keys[i],
   * records[i]). Not an object per write: that would be one JS-heap cell per
   * enqueued item and per ack (docs/decisions/017-patched-writes.md).
   */
  keys: ItemKey[];
  records: Array<ItemRecord | Uint8Array | null>;
}

/** What the LMDB store's ring of recent values has done since start (Store.recentValuesFigures). */
export interface RecentValuesFigures {
  /** Deliveries' reads it answered, and those that went to LMDB. */
  hits: number;
  misses: number;
  /** Bytes of the ring written so far, up to its size: what it adds to the server's memory. */
  bytes: number;
  /** The ring's size (--recent-values-mb). */
  ringBytes: number;
}

/** Everything one commit writes: atomic per shard. */
export interface CommitBatch {
  shards: ShardBatch[];
  /** Outcomes of ended items, keyed by item id; `record: null` deletes (retention over). */
  outcomes: Array<{ id: string; record: OutcomeRecord | null }>;
  /** Present when the meta record changes (e.g. a new key block is reserved). */
  meta: MetaRecord | null;
  /** The items this commit acked, as one acked-log record (acked-log.ts); null or absent when none. */
  acked?: AckedLogRecord | null;
  /** When set, remove acked-log records whose endedAtMs is below it (their retention is over). */
  ackedPurgeBeforeMs?: number | null;
  /**
   * Pauses of topics and groups set (a record) or cleared (null), at most
   * one per (ns, topic, group); absent or empty when no pause changes.
   * Committed with the outcome and meta part: a failure there is reported
   * as `metaError`.
   */
  pauses?: PauseWrite[];
  /** Policies set (a record) or cleared (null), at most one per (ns, topic, group); committed as pauses are. */
  policies?: PolicyWrite[];
  /** Schedules set (a record) or removed (null), at most one per (ns, name); committed as pauses are. */
  schedules?: ScheduleWrite[];
}

/** One pause write of a commit: the pause of (ns, topic, group) becomes `record`, or is deleted (null). */
export interface PauseWrite {
  ns: string;
  topic: string;
  /** null: the topic's own pause. */
  group: string | null;
  record: PauseRecord | null;
}

/** One policy write of a commit: the policy of (ns, topic, group) becomes `record`, or is deleted (null). */
export interface PolicyWrite {
  ns: string;
  topic: string;
  /** null: the topic's own policy; "*": the groups' default. */
  group: string | null;
  record: PolicyRecord | null;
}

/**
 * One schedule write of a commit: the schedule (ns, name) becomes `record`,
 * or is deleted (null). `shard` is the shard the schedule belongs to
 * (scheduleShard): in cluster mode the write is fenced by that shard's
 * ownership, as the tick items written beside it are.
 */
export interface ScheduleWrite {
  ns: string;
  name: string;
  shard: number;
  record: ScheduleRecord | null;
}

/** The one key of a schedule, in every store and in group commit: the namespace's length first, so no two (ns, name) pairs share one. */
export function scheduleKey(ns: string, name: string): string {
  return `${ns.length}:${ns}${name}`;
}

/**
 * The one key of a pause, in every store and in group commit. A topic's own
 * pause keeps the key it had before groups existed (the namespace's length
 * first, so no two (ns, topic) pairs share a key), so stored pauses load
 * under the same key. A group's starts with "g", where a topic's starts
 * with a digit, and then scopeKey's.
 */
export function pauseKey(ns: string, topic: string, group: string | null = null): string {
  return group === null ? `${ns.length}:${ns}${topic}` : `g${scopeKey(ns, topic, group)}`;
}

/** The one key of a policy (a topic's own, a group's, or the default "*"), in every store and in group commit. */
export function policyKey(ns: string, topic: string, group: string | null): string {
  return scopeKey(ns, topic, group);
}

/**
 * A key naming (ns, topic, group) that no other triple shares: the lengths
 * of the namespace and the topic come before each, so what follows the
 * topic is either nothing (group null) or ":" and the group (never empty).
 */
function scopeKey(ns: string, topic: string, group: string | null): string {
  const scope = `${ns.length}:${ns}${topic.length}:${topic}`;
  return group === null ? scope : `${scope}:${group}`;
}

/** Per shard: did its part of the batch commit? */
export interface CommitResult {
  /** Shards whose writes failed, with the error; empty when all committed. */
  failedShards: Map<number, Error>;
  /** Set when the outcome/meta part failed. */
  metaError: Error | null;
}

export interface LoadedShard {
  shard: number;
  /** Every stored item of the shard, in key order. */
  items: Iterable<{ key: ItemKey; record: ItemRecord }>;
}

/**
 * One shard's stored state, as a cluster node hands it to a running engine
 * that takes the shard on (Engine.adoptShardInSteps; the PostgreSQL store's
 * storedShard). Items come without payload and metadata, as recovery reads
 * them; iterated lazily, so decoding happens in the engine's steps.
 */
export interface StoredShard extends LoadedShard {
  /** The shard's retained outcome records (cancelled, expired, dead, acked with a result). */
  outcomes: Iterable<{ id: string; record: OutcomeRecord }>;
  /** The shard's acked-log records, oldest first. */
  ackedLog: Iterable<AckedLogRecord>;
  /** The shard's schedules. */
  schedules: Iterable<ScheduleRecord>;
}

export interface Store {
  readonly shardCount: number;
  /** The current meta record; `meta.boots` numbers this open (committed before the store was handed out). */
  readonly meta: MetaRecord;
  /**
   * Iterate the stored state, for recovery at start. With `bytes: false` every
   * record's payload and metadata are one shared empty array (record-codec's
   * noBytes): recovery does not keep them, and skipping them saves a copy each.
   */
  loadShards(options?: { bytes: boolean }): Iterable<LoadedShard>;
  loadOutcomes(): Iterable<{ id: string; record: OutcomeRecord }>;
  /** The acked log's records, oldest first (acked-log.ts). */
  loadAckedLog(): Iterable<AckedLogRecord>;
  /** Every stored pause (the `pause` op: topics' and groups'), for recovery at start. */
  loadPauses(): Iterable<PauseRecord>;
  /** Every stored policy (the `policy` op), for recovery at start. */
  loadPolicies(): Iterable<PolicyRecord>;
  /** Every stored schedule (the `schedule` op) of the shards this store serves, for recovery at start. */
  loadSchedules(): Iterable<ScheduleRecord>;
  /**
   * How many items and outcomes the store holds, without reading them (LMDB
   * keeps a count in every B-tree): recovery's progress says how much is left.
   */
  storedCounts(): { items: number; outcomes: number };
  /**
   * One stored item as last committed, or null when the shard holds no such
   * key. The engine keeps payloads and metadata here rather than in memory and
   * reads them back when it delivers or shows an item (an LMDB read through
   * the map costs a microsecond or two).
   */
  readItem(shard: number, key: ItemKey): ItemRecord | null;
  /**
   * One stored item's encoded value as last committed (a copy the caller
   * owns), or null. A lease patches its state fields and writes it back
   * (WriteSet.putItemBytes) without decoding and re-encoding the record.
   */
  readItemBytes(shard: number, key: ItemKey): Uint8Array | null;
  /**
   * The stored value as last committed, not a copy, for a caller that only
   * reads it at once and keeps nothing of it (a delivery copies its payload
   * out): good until the caller's next read or the next commit lands. The
   * in-memory store hands out its own value (035), the LMDB store lmdb-js's
   * read buffer (044). Others leave it out.
   */
  viewItemBytes?(shard: number, key: ItemKey): Uint8Array | null;
  /**
   * A delivery's parts of one stored item (its payload and metadata as
   * copies the caller owns), filled into `into`, when the store has them at
   * hand without reading the item's whole value: the LMDB store's ring of
   * recent values (044). False when it has not (read the value instead).
   */
  readDeliveryBytes?(shard: number, key: ItemKey, into: ItemValueBytes): boolean;
  /**
   * Reads the LMDB store's ring of recently committed values answered and
   * missed since start, and the bytes it holds (recent-values.ts); null
   * when it has none. Other stores leave it out.
   */
  recentValuesFigures?(): RecentValuesFigures | null;
  /**
   * Apply a batch. Resolves when durable per the store's durability mode:
   * strict = fsync'd, relaxed = survives a process crash. Never rejects: a
   * failure is reported per shard in the result. Encodes (and so checks)
   * every record before it returns: a record that breaks an invariant throws
   * an AssertionError from the call itself, never as a rejection.
   */
  commit(batch: CommitBatch): Promise<CommitResult>;
  /**
   * Where the owner of the items (the engine) tells a store that defers the
   * deletes of acked records (LMDB, storage/lmdb/ack-sweep.ts) each shard's
   * lowest live key (Infinity when none): records below it go with their
   * neighbours. Stores that delete at once leave it out.
   */
  setLiveKeyFloor?(floorOf: (shard: number) => number): void;
  /**
   * Bring the stored values of these keys into memory off the main thread
   * (the LMDB store: lmdb-js's prefetch, which reads them on a worker and so
   * takes the page faults there), so that their delivery's readItemBytes
   * finds them resident. A hint: nothing waits for it, and a key that is gone
   * by then costs only its lookup. Stores that keep items in memory leave it out.
   */
  prefetchItems?(shard: number, keys: readonly ItemKey[]): void;
  close(): Promise<void>;
}

export type Durability = "strict" | "relaxed";

/** A failure to open a store: a clear one-line message, and the CLI exits non-zero. */
export class StoreOpenError extends Error {
  override name = "StoreOpenError";
}
