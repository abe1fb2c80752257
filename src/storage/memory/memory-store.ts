// An in-memory Store: `orq serve --store memory` serves from it (nothing on
// disk, a restart starts empty), and tests and simulation use it with fault injection: fail the
// commits that touch chosen shards, hold commits (a gate the test opens) or
// delay them (a real timer), and simulate a crash with durableCopy(), which
// keeps only what committed and counts one more boot, as a reopen would. Records are stored encoded with the real record
// codec, so callers can never mutate stored state and every record is checked
// on the way in and out, as with LMDB.

import { assert } from "../../lib/assert.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord, PolicyRecord } from "../record.ts";
import {
  decodeItemRecord,
  decodeMetaRecord,
  decodeOutcomeRecord,
  decodePauseRecord,
  decodePolicyRecord,
  encodeItemRecord,
  encodePauseRecord,
  encodePolicyRecord,
  recordReaders,
  encodeMetaRecord,
  encodeOutcomeRecord,
} from "../record-codec.ts";
import { RECORD_VERSION } from "../record.ts";
import { type AckedLogRecord, ackedLogEndedAtMs, appendAckedLog, decodeAckedLog } from "../acked-log.ts";
import { ByteWriter } from "../byte-cursor.ts";
import { newMetaRecord, nextBoot } from "../store-meta.ts";
import { pauseKey, policyKey } from "../store.ts";
import type { CommitBatch, CommitResult, ItemKey, LoadedShard, Store } from "../store.ts";

/** What one commit carried, for tests that check batching. */
export interface CommitSummary {
  shards: number[];
  items: number;
  /** Item writes that came encoded already (WriteSet.putItemBytes: a patched stored value). */
  itemValues: number;
  outcomes: number;
  /** Entries of the commit's acked-log record. */
  acked: number;
  meta: boolean;
  /** Pause writes (set or cleared); absent when none. */
  pauses?: number;
  /** Policy writes (set or cleared); absent when none. */
  policies?: number;
}

interface DurableState {
  shards: Array<Map<ItemKey, Uint8Array>>;
  outcomes: Map<string, Uint8Array>;
  /** Encoded acked-log records, oldest first. */
  ackedLog: Uint8Array[];
  meta: Uint8Array;
  /** Encoded pause records by store.ts's pauseKey (absent in a state built without any). */
  pauses?: Map<string, Uint8Array>;
  /** Encoded policy records by store.ts's policyKey (absent in a state built without any). */
  policies?: Map<string, Uint8Array>;
}

/** Summaries kept for tests (the oldest are dropped beyond this). */
const commitHistoryMax = 10_000;

export class MemoryStore implements Store {
  readonly shardCount: number;
  private state: DurableState;
  private readonly failures = new Map<number, Error>();
  private gate: { promise: Promise<void>; open: () => void } | null = null;
  private closed = false;
  /** Real-time delay added to every commit (ms); 0 for none. */
  commitDelayMs = 0;
  readonly commitHistory: CommitSummary[] = [];
  /** Whether commits are summarised in commitHistory (tests); the server keeps none. */
  private readonly keepHistory: boolean;

  constructor(options: { shards: number; commitHistory?: boolean }, state?: DurableState) {
    this.keepHistory = options.commitHistory ?? true;
    assert(Number.isSafeInteger(options.shards) && options.shards >= 1, "MemoryStore: shards must be >= 1");
    this.shardCount = options.shards;
    this.state = state ?? {
      shards: Array.from({ length: options.shards }, () => new Map<ItemKey, Uint8Array>()),
      outcomes: new Map(),
      ackedLog: [],
      pauses: new Map(),
      policies: new Map(),
      // A new store is its data dir's first open: boot 1.
      meta: encodeMetaRecord(nextBoot(newMetaRecord(options.shards))),
    };
    this.state.pauses ??= new Map();
    this.state.policies ??= new Map();
    assert(this.state.shards.length === options.shards);
  }

  get meta(): MetaRecord {
    return decodeMetaRecord(this.state.meta);
  }

  /** A new store holding only what has committed, opened once more (boots + 1): a restart after a crash. */
  durableCopy(): MemoryStore {
    return new MemoryStore(
      { shards: this.shardCount },
      {
        shards: this.state.shards.map((items) => new Map(items)),
        outcomes: new Map(this.state.outcomes),
        ackedLog: [...this.state.ackedLog],
        pauses: new Map(this.pauses),
        policies: new Map(this.policies),
        meta: encodeMetaRecord(nextBoot(decodeMetaRecord(this.state.meta))),
      },
    );
  }

  /** Make every commit that touches `shard` fail for that shard until healShard. */
  failShard(shard: number, error: Error = new Error(`injected failure on shard ${shard}`)): void {
    this.checkShard(shard);
    this.failures.set(shard, error);
  }

  healShard(shard: number): void {
    this.checkShard(shard);
    this.failures.delete(shard);
  }

  /** Hold every commit until resumeCommits(); for tests of what happens while one is in flight. */
  pauseCommits(): void {
    if (this.gate !== null) return;
    let open = (): void => {};
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.gate = { promise, open };
  }

  resumeCommits(): void {
    const gate = this.gate;
    this.gate = null;
    gate?.open();
  }

  *loadShards(options: { bytes: boolean } = { bytes: true }): Iterable<LoadedShard> {
    for (let shard = 0; shard < this.shardCount; shard++) {
      const stored = this.state.shards[shard];
      assert(stored !== undefined);
      const keys = [...stored.keys()].sort((a, b) => a - b);
      yield {
        shard,
        items: (function* () {
          for (const key of keys) {
            const bytes = stored.get(key);
            if (bytes !== undefined) yield { key, record: decodeItemRecord(bytes, recordReaders, options.bytes) };
          }
        })(),
      };
    }
  }

  storedCounts(): { items: number; outcomes: number } {
    let items = 0;
    for (const shard of this.state.shards) items += shard.size;
    return { items, outcomes: this.state.outcomes.size };
  }

  *loadOutcomes(): Iterable<{ id: string; record: OutcomeRecord }> {
    for (const [id, bytes] of this.state.outcomes) yield { id, record: decodeOutcomeRecord(bytes) };
  }

  *loadAckedLog(): Iterable<AckedLogRecord> {
    for (const bytes of this.state.ackedLog) yield decodeAckedLog(bytes);
  }

  *loadPauses(): Iterable<PauseRecord> {
    for (const bytes of this.pauses.values()) yield decodePauseRecord(bytes);
  }

  *loadPolicies(): Iterable<PolicyRecord> {
    for (const bytes of this.policies.values()) yield decodePolicyRecord(bytes);
  }

  readItemBytes(shard: number, key: ItemKey): Uint8Array | null {
    this.checkShard(shard);
    const bytes = this.state.shards[shard]?.get(key);
    return bytes === undefined ? null : bytes.slice();
  }

  viewItemBytes(shard: number, key: ItemKey): Uint8Array | null {
    this.checkShard(shard);
    // Values are replaced, never changed in place (commit and putItemValue store them whole).
    return this.state.shards[shard]?.get(key) ?? null;
  }

  readItem(shard: number, key: ItemKey): ItemRecord | null {
    this.checkShard(shard);
    const bytes = this.state.shards[shard]?.get(key);
    return bytes === undefined ? null : decodeItemRecord(bytes);
  }

  /**
   * Store (or delete, null) one item value now, outside any commit: for
   * `--store memory`'s MemoryWriter, which has no commits. The value is
   * kept as given, so the caller must not change it afterwards.
   */
  putItemValue(shard: number, key: ItemKey, value: Uint8Array | null): void {
    this.checkShard(shard);
    const stored = this.state.shards[shard] as Map<ItemKey, Uint8Array>;
    if (value === null) stored.delete(key);
    else stored.set(key, value);
  }

  commit(batch: CommitBatch): Promise<CommitResult> {
    // Encode first, in the caller's turn: a bad record is a programmer error
    // and must throw (stopping the process) before anything applies, not
    // become a rejected commit that looks like a storage failure.
    const shardWrites = batch.shards.map((shardBatch) => {
      this.checkShard(shardBatch.shard);
      return {
        shard: shardBatch.shard,
        items: shardBatch.keys.map((key, index) => {
          const record = shardBatch.records[index] as ItemRecord | Uint8Array | null;
          return { key, bytes: record === null ? null : itemValue(record) };
        }),
      };
    });
    const outcomeWrites = batch.outcomes.map(({ id, record }) => ({ id, bytes: record === null ? null : encodeOutcomeRecord(record) }));
    const metaBytes = batch.meta === null ? null : encodeMetaRecord(batch.meta);
    let ackedBytes: Uint8Array | null = null;
    if (batch.acked != null) {
      const writer = new ByteWriter(64);
      appendAckedLog(writer, batch.acked);
      ackedBytes = writer.finish();
    }
    const pauseWrites = (batch.pauses ?? []).map(({ ns, topic, group, record }) => ({
      key: pauseKey(ns, topic, group),
      bytes: record === null ? null : encodePauseRecord(record),
    }));
    const policyWrites = (batch.policies ?? []).map(({ ns, topic, group, record }) => ({
      key: policyKey(ns, topic, group),
      bytes: record === null ? null : encodePolicyRecord(record),
    }));
    this.remember(batch);
    return this.apply(shardWrites, outcomeWrites, metaBytes, ackedBytes, batch.ackedPurgeBeforeMs ?? null, { pauseWrites, policyWrites });
  }

  private async apply(
    shardWrites: Array<{ shard: number; items: Array<{ key: number; bytes: Uint8Array | null }> }>,
    outcomeWrites: Array<{ id: string; bytes: Uint8Array | null }>,
    metaBytes: Uint8Array | null,
    ackedBytes: Uint8Array | null,
    purgeBeforeMs: number | null,
    keyed: { pauseWrites: KeyedWrite[]; policyWrites: KeyedWrite[] },
  ): Promise<CommitResult> {
    if (this.gate !== null) await this.gate.promise;
    if (this.commitDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.commitDelayMs));

    const result: CommitResult = { failedShards: new Map(), metaError: null };
    if (this.closed) {
      const error = new Error("store is closed");
      for (const { shard } of shardWrites) result.failedShards.set(shard, error);
      result.metaError = error;
      return result;
    }
    for (const { shard, items } of shardWrites) {
      const failure = this.failures.get(shard);
      if (failure !== undefined) {
        result.failedShards.set(shard, failure);
        continue;
      }
      const stored = this.state.shards[shard];
      assert(stored !== undefined);
      for (const { key, bytes } of items) {
        if (bytes === null) stored.delete(key);
        else stored.set(key, bytes);
      }
    }
    for (const { id, bytes } of outcomeWrites) {
      if (bytes === null) this.state.outcomes.delete(id);
      else this.state.outcomes.set(id, bytes);
    }
    if (metaBytes !== null) this.state.meta = metaBytes;
    if (ackedBytes !== null) this.state.ackedLog.push(ackedBytes);
    if (purgeBeforeMs !== null) {
      // Oldest first, like the LMDB store's key order: stop at the first record still retained.
      let drop = 0;
      while (drop < this.state.ackedLog.length && ackedLogEndedAtMs(this.state.ackedLog[drop] as Uint8Array) < purgeBeforeMs) drop++;
      if (drop > 0) this.state.ackedLog.splice(0, drop);
    }
    applyKeyed(this.pauses, keyed.pauseWrites);
    applyKeyed(this.policies, keyed.policyWrites);
    return result;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private remember(batch: CommitBatch): void {
    if (!this.keepHistory) return;
    if (this.commitHistory.length >= commitHistoryMax) this.commitHistory.shift();
    this.commitHistory.push({
      shards: batch.shards.map((shardBatch) => shardBatch.shard),
      items: batch.shards.reduce((sum, shardBatch) => sum + shardBatch.keys.length, 0),
      itemValues: batch.shards.reduce((sum, shardBatch) => sum + shardBatch.records.filter((record) => record instanceof Uint8Array).length, 0),
      outcomes: batch.outcomes.length,
      acked: batch.acked == null ? 0 : batch.acked.keys.length,
      meta: batch.meta !== null,
      ...(batch.pauses !== undefined && batch.pauses.length > 0 ? { pauses: batch.pauses.length } : {}),
      ...(batch.policies !== undefined && batch.policies.length > 0 ? { policies: batch.policies.length } : {}),
    });
  }

  private get pauses(): Map<string, Uint8Array> {
    return this.state.pauses as Map<string, Uint8Array>;
  }

  private get policies(): Map<string, Uint8Array> {
    return this.state.policies as Map<string, Uint8Array>;
  }

  private checkShard(shard: number): void {
    // The message is built only on failure: this runs on every read.
    if (!(Number.isSafeInteger(shard) && shard >= 0 && shard < this.shardCount)) assert(false, `shard ${shard} out of range`);
  }
}

/** A pause or policy write: its store.ts key and encoded record, or null to delete. */
interface KeyedWrite {
  key: string;
  bytes: Uint8Array | null;
}

function applyKeyed(stored: Map<string, Uint8Array>, writes: readonly KeyedWrite[]): void {
  for (const { key, bytes } of writes) {
    if (bytes === null) stored.delete(key);
    else stored.set(key, bytes);
  }
}

/**
 * The value to store: a record encoded, or an encoded value copied (so the
 * caller cannot change what is stored) after a full decode, which checks it
 * as LMDB's recovery would.
 */
function itemValue(record: ItemRecord | Uint8Array): Uint8Array {
  if (!(record instanceof Uint8Array)) return encodeItemRecord(record);
  const value = record.slice();
  decodeItemRecord(value);
  assert(value[0] === RECORD_VERSION, `MemoryStore: item value of version ${value[0]}`);
  return value;
}
