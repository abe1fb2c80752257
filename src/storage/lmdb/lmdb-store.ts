// The real Store: one LMDB environment in the data dir (data.mdb), one
// sub-database per shard (`shard-000`, ...), plus `outcomes` (item id ->
// OutcomeRecord), `acked` (the acked log, acked-log-db.ts) and `meta` (the
// MetaRecord, and the pauses and policies under their key prefixes). A commit is one LMDB write transaction covering every shard it
// touches, so it is atomic and one fsync covers all shards. Values are
// encoded with record-codec.ts; options live in lmdb-options.ts.

import { join } from "node:path";
import { open } from "lmdb";
import type { Database, RootDatabase } from "lmdb";
import { assert } from "../../lib/assert.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord, PolicyRecord, ScheduleRecord } from "../record.ts";
import type { AckedLogRecord } from "../acked-log.ts";
import { type AckedWrite, AckedLogDb } from "./acked-log-db.ts";
import { type SweptKeys, noSweptKeys } from "./ack-sweep.ts";
import { AckSweeper } from "./ack-sweeper.ts";
import { type CommitPlan, planCommit } from "./commit-plan.ts";
import { CommitSlabs, slabRange } from "./commit-slabs.ts";
import { AckedKeyRanges } from "./acked-key-ranges.ts";
import { ackSweepBounds, recentValues, recentValuesSlots } from "../../limits.ts";
import { RecentValues } from "./recent-values.ts";
import {
  decodeItemRecord,
  decodeMetaRecord,
  recordReaders,
  decodeOutcomeRecord,
  decodePauseRecord,
  decodePolicyRecord,
  decodeScheduleRecord,
  encodeMetaRecord,
} from "../record-codec.ts";
import { metaMismatch, newMetaRecord, nextBoot } from "../store-meta.ts";
import { DeliveryParts, type ItemValueBytes, locateDeliveryParts } from "../item-record.ts";
import { StoreOpenError, pauseKey, policyKey, scheduleKey } from "../store.ts";
import type { CommitBatch, CommitResult, Durability, ItemKey, LoadedShard, RecentValuesFigures, Store } from "../store.ts";
import {
  dataFileName,
  environmentOptions,
  metaDbName,
  metaDbOptions,
  metaKey,
  outcomesDbOptions,
  ackedDbOptions,
  pauseKeyEnd,
  pauseKeyPrefix,
  policyKeyEnd,
  policyKeyPrefix,
  scheduleKeyEnd,
  scheduleKeyPrefix,
  shardDbOptions,
  shardRecoveryDbOptions,
} from "./lmdb-options.ts";
import { dataDirProblem } from "./data-dir-check.ts";
import { lockDataDir, type DataDirLock } from "./data-dir-lock.ts";
import { openError } from "./open-error.ts";
import { commitFailure } from "./commit-failure.ts";

export interface LmdbStoreOptions {
  dataDir: string;
  shards: number;
  durability: Durability;
  /** Acked records left for later deletion after each commit; ackSweepBounds.lagKeys unless a test sets it. */
  ackSweepLagKeys?: number;
  /** Bytes of the ring of recently committed items' delivery parts (recent-values.ts); recentValues.ringBytes unless set, 0 for none. */
  recentValuesBytes?: number;
}

type BinaryDb<K extends string | number> = Database<Uint8Array, K>;

/** Most shards a data dir may have (LMDB keeps a slot per sub-database in every transaction). */
const shardsMax = 4096;

export async function openLmdbStore(options: LmdbStoreOptions): Promise<Store> {
  const { dataDir, shards, durability } = options;
  if (!Number.isSafeInteger(shards) || shards < 1 || shards > shardsMax) {
    throw new StoreOpenError(`--shards must be an integer from 1 to ${shardsMax}, got ${shards}`);
  }
  prepareDataDir(dataDir);
  // Before LMDB opens: a second server must not even read the environment (data-dir-lock.ts).
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dataDir);
  } catch (error) {
    throw openError(dataDir, error);
  }
  let env: RootDatabase<Uint8Array, string>;
  try {
    env = open<Uint8Array, string>(environmentOptions(join(dataDir, dataFileName), shards, durability));
  } catch (error) {
    lock.release();
    throw openError(dataDir, error);
  }
  try {
    const meta = await loadOrCreateMeta(env, dataDir, shards);
    const recentBytes = options.recentValuesBytes ?? recentValues.ringBytes;
    const recent = recentBytes === 0 ? null : new RecentValues(recentBytes, recentValuesSlots(recentBytes));
    return new LmdbStore(env, meta, shards, lock, options.ackSweepLagKeys ?? ackSweepBounds.lagKeys, recent);
  } catch (error) {
    await env.close();
    lock.release();
    throw openError(dataDir, error);
  }
}

/** The data dir must be a usable directory; create it (and parents) when missing. */
function prepareDataDir(dataDir: string): void {
  let problem: string | null;
  try {
    problem = dataDirProblem(dataDir);
  } catch (error) {
    throw openError(dataDir, error);
  }
  if (problem !== null) throw new StoreOpenError(`cannot open data dir ${dataDir}: ${problem}`);
}

/** Sub-database names orq creates; any other name in the root database means another program's file. */
const orqDbNamePattern = /^(meta|outcomes|acked|shard-\d{3,})$/;

async function loadOrCreateMeta(env: RootDatabase<Uint8Array, string>, dataDir: string, shards: number): Promise<MetaRecord> {
  const rootNames = [...env.getKeys({ limit: shards + 16 })];
  const foreign = rootNames.find((name) => !orqDbNamePattern.test(String(name)));
  if (foreign !== undefined) {
    throw new StoreOpenError(`cannot open data dir ${dataDir}: data.mdb holds a database orq did not write (found "${String(foreign)}")`);
  }
  const metaDb = env.openDB<Uint8Array, string>(metaDbOptions());
  const bytes = metaDb.getBinary(metaKey);
  if (bytes !== undefined) {
    let meta: MetaRecord;
    try {
      meta = decodeMetaRecord(bytes);
    } catch (error) {
      throw new StoreOpenError(`cannot open data dir ${dataDir}: its meta record is unreadable (${(error as Error).message})`);
    }
    const mismatch = metaMismatch(meta, shards);
    if (mismatch !== null) throw new StoreOpenError(`cannot open data dir ${dataDir}: ${mismatch}`);
    return await commitBoot(metaDb, nextBoot(meta));
  }
  // No meta: only a fresh environment (or one that crashed before its first
  // commit, holding empty orq databases) may be initialised.
  for (const name of rootNames) {
    if (name === metaDbName) continue;
    const db = env.openDB<Uint8Array, string>({ name: String(name), encoding: "binary" });
    if (db.getKeysCount({ limit: 1 }) > 0) {
      throw new StoreOpenError(`cannot open data dir ${dataDir}: it holds items but no meta record (damaged data dir)`);
    }
  }
  return await commitBoot(metaDb, nextBoot(newMetaRecord(shards)));
}

/**
 * Write this open's meta record (its boot number) and wait for the commit, as
 * durable as the durability mode makes any commit: the store is handed out
 * only after it, so a crash can never make two opens share a boot.
 */
async function commitBoot(metaDb: BinaryDb<string>, meta: MetaRecord): Promise<MetaRecord> {
  await metaDb.put(metaKey, encodeMetaRecord(meta));
  return meta;
}

class LmdbStore implements Store {
  readonly shardCount: number;
  private currentMeta: MetaRecord;
  private readonly shardDbs: Array<BinaryDb<number>>;
  /** Per shard, the handle recovery reads through (lmdb-options.ts's shardRecoveryDbOptions). */
  private readonly shardHeaderDbs: Array<Database<ItemRecord, number>>;
  private readonly outcomesDb: BinaryDb<string>;
  private readonly ackedLog: AckedLogDb;
  private readonly metaDb: BinaryDb<string>;
  /** Acked items whose records are deleted later, in key order, and when (ack-sweeper.ts). */
  private readonly sweeper: AckSweeper;
  private committedOnce = false;
  private closed = false;
  /** The commit buffer and write list kept between commits (commit-slabs.ts). */
  private readonly slabs = new CommitSlabs();
  /** Scratch for noteLanded: where a value's delivery parts lie. */
  private readonly landedParts = new DeliveryParts();

  constructor(
    private readonly env: RootDatabase<Uint8Array, string>,
    meta: MetaRecord,
    shards: number,
    private readonly lock: DataDirLock,
    ackSweepLagKeys: number,
    /** What a delivery reads of the items committed last (recent-values.ts), asked before LMDB; null when turned off. */
    private readonly recent: RecentValues | null,
  ) {
    this.shardCount = shards;
    this.currentMeta = meta;
    this.shardDbs = Array.from({ length: shards }, (_, shard) => env.openDB<Uint8Array, number>(shardDbOptions(shard)));
    this.shardHeaderDbs = Array.from({ length: shards }, (_, shard) =>
      env.openDB<ItemRecord, number>(shardRecoveryDbOptions(shard, decodeItemHeader)),
    );
    this.outcomesDb = env.openDB<Uint8Array, string>(outcomesDbOptions());
    this.ackedLog = new AckedLogDb(env.openDB<Uint8Array, number>(ackedDbOptions()));
    this.metaDb = env.openDB<Uint8Array, string>(metaDbOptions());
    this.sweeper = new AckSweeper(env, this.shardDbs, ackSweepLagKeys);
  }

  get meta(): MetaRecord {
    return { ...this.currentMeta };
  }

  /**
   * Items whose key the acked log holds are acked records the sweep had not
   * deleted yet: skipped, and queued for deletion when this is recovery's
   * load (before the first commit; later loads find the ones already queued).
   */
  *loadShards(options: { bytes: boolean } = { bytes: true }): Iterable<LoadedShard> {
    const acked = new AckedKeyRanges(this.ackedLog.records());
    for (let shard = 0; shard < this.shardCount; shard++) {
      const live = ({ key }: { key: ItemKey }): boolean => {
        if (acked.rangeCount === 0) return true;
        const ackedAtMs = acked.ackedAtMs(key);
        if (ackedAtMs === null) return true;
        if (!this.committedOnce) this.sweeper.queue.add(shard, key, ackedAtMs);
        return false;
      };
      if (options.bytes) {
        const db = this.shardDbs[shard];
        assert(db !== undefined);
        yield { shard, items: loadItems(db, live) };
      } else {
        const db = this.shardHeaderDbs[shard];
        assert(db !== undefined);
        yield { shard, items: db.getRange({}).filter(live).map(({ key, value }) => ({ key, record: value })) };
      }
    }
  }

  *loadOutcomes(): Iterable<{ id: string; record: OutcomeRecord }> {
    for (const { key, value } of this.outcomesDb.getRange({})) {
      assert(typeof key === "string", "outcome key is not a string");
      yield { id: key, record: decodeOutcomeRecord(value) };
    }
  }

  *loadAckedLog(): Iterable<AckedLogRecord> {
    yield* this.ackedLog.load();
  }

  *loadPauses(): Iterable<PauseRecord> {
    for (const { key, value } of this.metaDb.getRange({ start: pauseKeyPrefix, end: pauseKeyEnd })) {
      const record = decodePauseRecord(value);
      assert(key === pauseKeyPrefix + pauseKey(record.ns, record.topic, record.group), `pause record under the wrong key ${String(key)}`);
      yield record;
    }
  }

  *loadPolicies(): Iterable<PolicyRecord> {
    for (const { key, value } of this.metaDb.getRange({ start: policyKeyPrefix, end: policyKeyEnd })) {
      const record = decodePolicyRecord(value);
      assert(key === policyKeyPrefix + policyKey(record.ns, record.topic, record.group), `policy record under the wrong key ${String(key)}`);
      yield record;
    }
  }

  *loadSchedules(): Iterable<ScheduleRecord> {
    for (const { key, value } of this.metaDb.getRange({ start: scheduleKeyPrefix, end: scheduleKeyEnd })) {
      const record = decodeScheduleRecord(value);
      assert(key === scheduleKeyPrefix + scheduleKey(record.ns, record.name), `schedule record under the wrong key ${String(key)}`);
      yield record;
    }
  }

  storedCounts(): { items: number; outcomes: number } {
    assert(!this.closed, "read on a closed store");
    let items = 0;
    for (const db of this.shardDbs) items += entryCount(db);
    return { items, outcomes: entryCount(this.outcomesDb) };
  }

  setLiveKeyFloor(floorOf: (shard: number) => number): void {
    this.sweeper.setLiveKeyFloor(floorOf);
  }

  readItemBytes(shard: number, key: ItemKey): Uint8Array | null {
    assert(!this.closed, "read on a closed store");
    const db = this.shardDbs[shard];
    if (db === undefined) assert(false, `shard ${shard} out of range`);
    // A copy: getBinaryFast's buffer is reused by lmdb-js's next read. That
    // buffer is larger than the value (lmdb-js sets its `length` to the
    // value's size), so copy only the value's bytes.
    const bytes = db.getBinaryFast(key);
    if (bytes === undefined) return null;
    const length = bytes.length;
    const copy = new Uint8Array(length);
    copy.set(bytes.subarray(0, length));
    return copy;
  }

  readDeliveryBytes(shard: number, key: ItemKey, into: ItemValueBytes): boolean {
    assert(!this.closed, "read on a closed store");
    return this.recent !== null && this.recent.readDelivery(shard, key, into);
  }

  viewItemBytes(shard: number, key: ItemKey): Uint8Array | null {
    assert(!this.closed, "read on a closed store");
    const db = this.shardDbs[shard];
    if (db === undefined) assert(false, `shard ${shard} out of range`);
    // lmdb-js's read buffer, its `length` the value's: good until the next read. It is a Node Buffer, whose
    // slice() is a view, not a copy: a plain Uint8Array over it, so that what readers slice out they own.
    const bytes = db.getBinaryFast(key);
    return bytes === undefined ? null : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  prefetchItems(shard: number, keys: readonly ItemKey[]): void {
    if (this.closed || keys.length === 0) return;
    const db = this.shardDbs[shard];
    if (db === undefined) assert(false, `shard ${shard} out of range`);
    // No copy: lmdb-js encodes every key before prefetch() returns and keeps
    // only its own key buffers, so the caller may reuse its array at once.
    // (lmdb-js types the ids as a mutable array; it only reads them.)
    // Keys the ring of recent values holds are delivered from it, not the map.
    const recent = this.recent;
    const cold = recent === null ? keys : keys.filter((key) => !recent.holds(shard, key));
    if (cold.length > 0) db.prefetch(cold as ItemKey[], ignorePrefetchDone);
  }

  readItem(shard: number, key: ItemKey): ItemRecord | null {
    assert(!this.closed, "read on a closed store");
    const db = this.shardDbs[shard];
    if (db === undefined) assert(false, `shard ${shard} out of range`);
    // getBinaryFast returns a buffer lmdb-js reuses on the next read: the
    // decoder copies what it keeps (payload and metadata are sliced).
    const bytes = db.getBinaryFast(key);
    return bytes === undefined ? null : decodeItemRecord(bytes);
  }

  commit(batch: CommitBatch): Promise<CommitResult> {
    assert(!this.closed, "commit on a closed store");
    this.committedOnce = true;
    // Encoded (and so checked) in the caller's turn: this function is not
    // async (commit-plan.ts says why).
    for (const { shard } of batch.shards) assert(this.shardDbs[shard] !== undefined, `shard ${shard} out of range`);
    const plan = planCommit(batch, this.slabs);
    let acked: AckedWrite;
    try {
      acked = this.ackedLog.prepare(batch.acked, batch.ackedPurgeBeforeMs ?? null, plan.slab);
    } catch (error) {
      this.slabs.release(plan.slab);
      throw error;
    }
    // Before the purge removes acked-log records, the records of their keys go.
    const swept = noSweptKeys();
    if (batch.ackedPurgeBeforeMs != null) this.sweeper.queue.takeAckedBefore(batch.ackedPurgeBeforeMs, swept);
    this.sweeper.takeForCommit(swept);
    return this.transact(batch, plan, acked, swept);
  }

  /** The asynchronous half of commit(): one LMDB write transaction over the encoded values. */
  private async transact(batch: CommitBatch, plan: CommitPlan, acked: AckedWrite, swept: SweptKeys): Promise<CommitResult> {
    const { slab, itemWrites, outcomeWrites, metaBytes, metaKeyWrites } = plan;
    try {
      await this.env.transaction(() => {
        for (let at = 0; at < itemWrites.length; at += 4) {
          const db = this.shardDbs[itemWrites[at] as number] as BinaryDb<number>;
          const key = itemWrites[at + 1] as ItemKey;
          const start = itemWrites[at + 2] as number;
          if (start < 0) db.removeSync(key);
          else db.putSync(key, slabRange(slab, start, itemWrites[at + 3] as number));
        }
        this.sweeper.deleteSwept(swept);
        for (const { id, start, end } of outcomeWrites) {
          if (start < 0) this.outcomesDb.removeSync(id);
          else this.outcomesDb.putSync(id, slabRange(slab, start, end));
        }
        if (metaBytes !== null) this.metaDb.putSync(metaKey, metaBytes);
        this.ackedLog.apply(acked, slab);
        for (const { key, bytes } of metaKeyWrites) {
          if (bytes === null) this.metaDb.removeSync(key);
          else this.metaDb.putSync(key, bytes);
        }
      });
    } catch (error) {
      this.slabs.release(slab);
      this.ackedLog.failed(acked);
      // Nothing was deleted, and this commit's acks did not happen.
      this.sweeper.queue.addAll(swept);
      // One LMDB transaction: when it fails, every shard in it failed.
      const failure = await commitFailure(error);
      const failedShards = new Map<number, Error>();
      for (const { shard } of batch.shards) failedShards.set(shard, failure);
      return { failedShards, metaError: failure };
    }
    this.noteLanded(plan);
    this.slabs.release(slab);
    if (batch.meta !== null) this.currentMeta = { ...batch.meta };
    this.ackedLog.committed(acked);
    this.sweeper.queue.addAll(plan.deferred);
    return { failedShards: new Map(), metaError: null };
  }

  /** The ring of recent values takes what a landed commit wrote: its puts' delivery parts, and no longer its deleted or acked keys. */
  private noteLanded(plan: CommitPlan): void {
    const recent = this.recent;
    if (recent === null) return;
    const { itemWrites, slab, deferred } = plan;
    const bytes = slab.buffer();
    const parts = this.landedParts;
    for (let at = 0; at < itemWrites.length; at += 4) {
      const key = itemWrites[at + 1] as ItemKey;
      const start = itemWrites[at + 2] as number;
      if (start < 0) {
        recent.drop(key);
        continue;
      }
      const value = bytes.subarray(start, itemWrites[at + 3] as number);
      locateDeliveryParts(value, parts);
      recent.put(itemWrites[at] as number, key, value, parts);
    }
    for (const key of deferred.keys) recent.drop(key);
  }

  /** Reads the ring of recent values answered and missed, and the bytes it holds (null without one). */
  recentValuesFigures(): RecentValuesFigures | null {
    const recent = this.recent;
    return recent === null ? null : { hits: recent.hits, misses: recent.misses, bytes: recent.residentBytes, ringBytes: recent.ringBytes };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.sweeper.close();
    await this.env.close();
    // Only after LMDB has closed: the next server may open the environment at once.
    this.lock.release();
  }
}

/** A prefetch's completion: nothing waits for it (Store.prefetchItems). */
function ignorePrefetchDone(): void {}

/** Entries in one sub-database, from its B-tree header (mdb_stat): no scan. lmdb-js types getStats() as `{}`. */
function entryCount(db: BinaryDb<number> | BinaryDb<string>): number {
  const count = (db.getStats() as { entryCount?: unknown }).entryCount;
  assert(typeof count === "number", "lmdb getStats() has no entryCount");
  return count;
}

/** Decodes lazily, one entry at a time: 1,000,000 items never sit in memory twice. */
function loadItems(db: BinaryDb<number>, live: (entry: { key: ItemKey }) => boolean): Iterable<{ key: ItemKey; record: ItemRecord }> {
  // lmdb-js's lazy map over the cursor (measured the same speed as a generator wrapper).
  return db
    .getRange({})
    .filter(live)
    .map(({ key, value }) => ({ key, record: decodeItemRecord(value) }));
}

/** The recovery handle's decoder: a record without payload and metadata, from lmdb-js's shared read buffer. */
function decodeItemHeader(bytes: Uint8Array, length: number): ItemRecord {
  return decodeItemRecord(bytes, recordReaders, false, length);
}
