// The Store on PostgreSQL (cluster mode's store; docs/CLUSTER.md). PostgreSQL
// holds every item durably; this process keeps a copy of the committed
// values of the shards it has loaded (item-cache.ts), because the engine reads
// items synchronously (readItem, readItemBytes, loadShards) and a database
// read is a network round trip. A commit is one PostgreSQL transaction,
// usually a single statement sent in one round trip (commit-sql.ts):
// strict durability runs it with synchronous_commit on, relaxed with it off
// (a crash of PostgreSQL may lose the last commits, an orq crash never). The
// cache changes only after PostgreSQL answered, so reads always see what is
// committed, as with LMDB.
//
// Commits run one at a time in the order they were asked for (the group
// committer sends one at a time anyway). With a ShardFence set (cluster
// mode), every commit share-locks and checks its shards' ownership rows in
// the same statement and leaves out the writes of a shard this node lost.

import { assert } from "../../lib/assert.ts";
import { clusterLimits } from "../../limits.ts";
import type { AckedLogRecord } from "../acked-log.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord, PolicyRecord, ScheduleRecord } from "../record.ts";
import { decodeItemRecord, decodeOutcomeRecord, decodeScheduleRecord, recordReaders } from "../record-codec.ts";
import { StoreOpenError } from "../store.ts";
import type { CommitBatch, CommitResult, Durability, ItemKey, LoadedShard, Store, StoredShard } from "../store.ts";
import { commitStatements, type CommittedValue, encodeCommit, type EncodedCommit, shardOfId, type Statement } from "./commit-statements.ts";
import { type CommitAnswer, type ShardRow, commitSql, failedFence, fencedShards, readCommitAnswer } from "./commit-sql.ts";
import { AckedBlocks, ackedRecordsOf } from "./acked-blocks.ts";
import { CommitCounters, type CommitCounts } from "./commit-counters.ts";
import { ItemCache } from "./item-cache.ts";
import { type EarlyShardRows, readShardRows, readShardRowsEarly, type ShardRows, unchangedSince } from "./shard-rows.ts";
import { type PauseRows, pauseRows } from "./pause-rows.ts";
import { type PolicyRows, policyRows } from "./policy-rows.ts";
import { remoteEnds, type RemoteItemEnd } from "./remote-ends.ts";
import { readScheduleRecords, readScheduleShard, ScheduleRows } from "./schedule-rows.ts";
import { countOpen, ensureSchema } from "./schema.ts";
import { ShardFencedError, type ShardFence } from "./shard-fence.ts";
import { UncertainKeys } from "./uncertain-keys.ts";
import type { RowSnapshot, RowStatements } from "./shared-rows.ts";
import { policySlotStatements } from "./topic-bound-rows.ts";
import { affectedRows, connectSql, int8Value, redactUrl, type SqlClient, type SqlRow } from "./sql-client.ts";

export interface PostgresStoreOptions {
  /** postgres://USER[:PASSWORD]@HOST:PORT/DATABASE */
  url: string;
  /** Shard count to create the schema with, or null to read it from the database (a new one gets shardsDefault). */
  shards: number | null;
  shardsDefault: number;
  durability: Durability;
  /**
   * Item keys reserved for this open alone (cluster mode: nodes allocate keys
   * at once, and a shard that moves must never see a key twice), or null for
   * a single writer, which reserves blocks as LMDB does.
   */
  keyRangePerOpen: number | null;
  /** Load every shard at open (one node serves them all), or none until adoptShard. */
  loadAllShards: boolean;
  /** Label in pg_stat_activity. */
  applicationName: string;
  /**
   * PostgreSQL ends a session of this store that sits inside a transaction
   * for this long (idle_in_transaction_session_timeout), or never when null.
   * Cluster mode sets it below the shard lease: a node paused in the middle
   * of a commit would otherwise keep its shard rows share-locked, and no
   * other node could claim them, for as long as the pause lasts.
   */
  transactionIdleTimeoutMs: number | null;
}

const { storeConnectionsMax, storeConnectTimeoutS: connectTimeoutS } = clusterLimits;

export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const client = connectSql({
    url: options.url,
    maxConnections: storeConnectionsMax,
    connectTimeoutS,
    settings: {
      synchronous_commit: options.durability === "strict" ? "on" : "off",
      ...(options.transactionIdleTimeoutMs === null ? {} : { idle_in_transaction_session_timeout: String(options.transactionIdleTimeoutMs) }),
    },
    applicationName: options.applicationName,
  });
  try {
    const stored = await ensureSchema(client, { shards: options.shards, shardsDefault: options.shardsDefault });
    const opened = await countOpen(client, options.keyRangePerOpen);
    const meta: MetaRecord = { ...stored, keysReservedBelow: options.keyRangePerOpen === null ? opened.keysBelow : opened.keysFrom, boots: opened.boots };
    const store = new PostgresStore(client, meta, options.keyRangePerOpen === null ? null : opened.keysBelow);
    await store.pauses.load(client);
    await store.policies.load(client);
    if (options.loadAllShards) for (let shard = 0; shard < meta.shards; shard++) await store.adoptShard(shard);
    return store;
  } catch (error) {
    await client.close();
    if (error instanceof StoreOpenError) throw error;
    throw new StoreOpenError(`cannot open PostgreSQL store ${redactUrl(options.url)}: ${(error as Error).message}`);
  }
}

export class PostgresStore implements Store {
  readonly shardCount: number;
  /** Set in cluster mode: every commit checks the ownership of the shards it writes. */
  fence: ShardFence | null = null;
  private currentMeta: MetaRecord;
  private readonly cache: ItemCache;
  /** Acked items as compact blocks per shard (acked-blocks.ts). */
  private readonly acked: AckedBlocks;
  /** The pauses of topics and groups (pause-rows.ts); read at open. */
  readonly pauses: PauseRows = pauseRows();
  /** The policies (policy-rows.ts); read at open. */
  readonly policies: PolicyRows = policyRows();
  /** The schedules of the loaded shards (schedule-rows.ts). */
  private readonly schedules = new ScheduleRows();
  /** Shards read ahead of their claim (readShardAhead), until adopted or let go. */
  private readonly readsAhead = new Map<number, EarlyShardRows>();
  private readonly readsAheadCounts = { kept: 0, readAgain: 0 };
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly counters = new CommitCounters();
  /** Keys a failed commit wrote, whose stored rows may differ from the copy (uncertain-keys.ts). */
  private readonly uncertain = new UncertainKeys();
  /**
   * The committed value a put may be patched against, or undefined for a key
   * with no row (commit-statements.ts): the copy holds every row of a loaded
   * shard, and changes only after PostgreSQL answered, so a certain key it
   * lacks has none.
   */
  private readonly committedValue: CommittedValue = (shard, key) => {
    if (this.uncertain.has(shard, key) || !this.cache.has(shard)) return null;
    return this.cache.get(shard, key);
  };

  constructor(
    private readonly client: SqlClient,
    meta: MetaRecord,
    /** Cluster mode: the end of the key range reserved at open (null: single writer). */
    private readonly keyRangeBelow: number | null,
  ) {
    this.shardCount = meta.shards;
    this.currentMeta = meta;
    this.cache = new ItemCache(meta.shards);
    this.acked = new AckedBlocks(meta.shards);
  }

  get meta(): MetaRecord {
    return { ...this.currentMeta };
  }

  /** Whether the shard's items are loaded (served by this process). */
  hasShard(shard: number): boolean {
    return this.cache.has(shard);
  }

  /**
   * Load one shard's items, outcomes, schedules and acked blocks from the
   * database into this process. In cluster mode, once this node's claim of
   * the shard has committed: a read made ahead of the claim (readShardAhead)
   * is kept when nothing of the shard changed since it began (shard-rows.ts).
   * Returns the read ahead it kept, or null when it read the rows afresh.
   */
  async adoptShard(shard: number): Promise<EarlyShardRows | null> {
    assert(Number.isSafeInteger(shard) && shard >= 0 && shard < this.shardCount, `shard ${shard} out of range`);
    const early = this.readsAhead.get(shard);
    this.readsAhead.delete(shard);
    let rows: ShardRows;
    if (early !== undefined && (await unchangedSince(this.client, shard, early))) {
      rows = early.rows;
      this.readsAheadCounts.kept++;
    } else {
      if (early !== undefined) this.readsAheadCounts.readAgain++;
      rows = await readShardRows(this.client, shard);
    }
    this.cache.adopt(shard, rows.items, rows.outcomes);
    this.schedules.adopt(shard, rows.schedules);
    this.acked.adopt(shard, rows.blocks);
    this.uncertain.forgetShard(shard);
    return early !== undefined && rows === early.rows ? early : null;
  }

  /**
   * Read a shard this node does not hold ahead of claiming it (its owner has
   * stopped renewing its lease): adoptShard keeps the read if the shard did
   * not change in between. One read per shard; a shard held is not read.
   */
  async readShardAhead(shard: number): Promise<void> {
    assert(Number.isSafeInteger(shard) && shard >= 0 && shard < this.shardCount, `shard ${shard} out of range`);
    if (this.cache.has(shard) || this.readsAhead.has(shard)) return;
    const early = await readShardRowsEarly(this.client, shard);
    if (!this.cache.has(shard)) this.readsAhead.set(shard, early);
  }

  /** Shards read ahead and not adopted yet. */
  shardsReadAhead(): number[] {
    return [...this.readsAhead.keys()];
  }

  /** Let go of a read ahead (its owner renewed, or another node claimed the shard). */
  forgetShardAhead(shard: number): void {
    this.readsAhead.delete(shard);
  }

  /** Reads ahead that adoptShard kept, and those it found stale and read again. */
  readAheadCounts(): { kept: number; readAgain: number } {
    return { ...this.readsAheadCounts };
  }

  /** A setting of the store's sessions as PostgreSQL reports it (synchronous_commit is "on" for strict durability). */
  async setting(name: "synchronous_commit" | "idle_in_transaction_session_timeout"): Promise<string> {
    const rows = await this.client.query(`SHOW ${name}`);
    return String(rows[0]?.[0]);
  }

  /** How the items `ids` (on any shard, this node's or not) ended; live ones are left out. */
  remoteEnds(ids: readonly string[]): Promise<Map<string, RemoteItemEnd>> {
    return remoteEnds(this.client, ids);
  }

  /**
   * A loaded shard's state for an engine that takes it on while it runs
   * (Engine.adoptShardInSteps): its items in key order, decoded as they are
   * walked, without payload and metadata.
   */
  storedShard(shard: number): StoredShard {
    assert(this.cache.has(shard), `shard ${shard} is not loaded`);
    const items = this.cache.readInKeyOrder(shard, storedItem);
    return { shard, items, outcomes: storedOutcomes(this.cache.shardOutcomes(shard)), ackedLog: this.acked.records(shard), schedules: [...this.schedules.records(shard)] };
  }

  /**
   * A shard read ahead of its claim, as storedShard hands a loaded one over,
   * from the rows read (an engine may file it while the claim waits:
   * decisions/053), with the read it came from (adoptShard returns the one
   * it keeps); null when none is held. The rows are read in key order.
   */
  storedShardAhead(shard: number): { stored: StoredShard; read: EarlyShardRows } | null {
    const early = this.readsAhead.get(shard);
    if (early === undefined) return null;
    const { items, outcomes, schedules, blocks } = early.rows;
    const stored: StoredShard = {
      shard,
      items: items.read(storedItem),
      outcomes: storedOutcomes(outcomes),
      ackedLog: ackedRecordsOf(blocks.map(({ value }) => value)),
      schedules: [...schedules.values()].map((value) => decodeScheduleRecord(value)),
    };
    return { stored, read: early };
  }

  /** The read ahead of the shard held now (one read per shard; a newer read after one let go is another object), or null. */
  readAheadOf(shard: number): EarlyShardRows | null {
    return this.readsAhead.get(shard) ?? null;
  }

  /** Forget a shard's items (its ownership moved away). */
  dropShard(shard: number): void {
    this.cache.drop(shard);
    this.schedules.drop(shard);
    this.acked.drop(shard);
    this.uncertain.forgetShard(shard);
  }

  *loadShards(options: { bytes: boolean } = { bytes: true }): Iterable<LoadedShard> {
    for (let shard = 0; shard < this.shardCount; shard++) {
      const entries = this.cache.sortedEntries(shard);
      yield { shard, items: entries.map(([key, value]) => ({ key, record: decodeItemRecord(value, recordReaders, options.bytes) })) };
    }
  }

  *loadOutcomes(): Iterable<{ id: string; record: OutcomeRecord }> {
    for (const [id, value] of this.cache.outcomeEntries()) yield { id, record: decodeOutcomeRecord(value) };
  }

  /** The loaded shards' acked blocks (acked-blocks.ts), oldest end first; their shards are not kept, as in the LMDB store's log. */
  loadAckedLog(): Iterable<AckedLogRecord> {
    return this.acked.records();
  }

  loadPauses(): Iterable<PauseRecord> {
    return this.pauses.records();
  }

  loadPolicies(): Iterable<PolicyRecord> {
    return this.policies.records();
  }

  loadSchedules(): Iterable<ScheduleRecord> {
    return this.schedules.records();
  }

  /** Cluster mode: a page of a namespace's schedules on every shard, as committed (schedule-rows.ts). */
  readSchedules(ns: string, after: string | null, limit: number): Promise<ScheduleRecord[]> {
    return readScheduleRecords(this.client, ns, after, limit);
  }

  /** Cluster mode: the shard a stored schedule lives on, or null when there is none (schedule-rows.ts). */
  readScheduleShard(ns: string, name: string): Promise<number | null> {
    return readScheduleShard(this.client, ns, name);
  }

  /** Cluster mode: every pause row, when a commit (of any node) changed them since the last read (shared-rows.ts). */
  async readPauses(): Promise<RowSnapshot | null> {
    return await this.pauses.read(this.client);
  }

  /** Cluster mode: every policy row, when a commit (of any node) changed them since the last read (shared-rows.ts). */
  async readPolicies(): Promise<RowSnapshot | null> {
    return await this.policies.read(this.client);
  }

  /** What the served shards hold in this process (the cache), for recovery's progress line. */
  storedCounts(): { items: number; outcomes: number } {
    return this.cache.counts();
  }

  /** What the commits so far cost the database (commit-counters.ts): commits, round trips, row writes. */
  commitCounts(): CommitCounts {
    return this.counters.snapshot();
  }

  readItemBytes(shard: number, key: ItemKey): Uint8Array | null {
    const value = this.cache.get(shard, key);
    return value === undefined ? null : value.slice();
  }

  readItem(shard: number, key: ItemKey): ItemRecord | null {
    const value = this.cache.get(shard, key);
    return value === undefined ? null : decodeItemRecord(value);
  }

  async commit(batch: CommitBatch): Promise<CommitResult> {
    assert(!this.closed, "commit on a closed store");
    // Encode (and so check) everything first: a bad record is a programmer
    // error and must stop before anything is sent.
    const encoded = encodeCommit(batch, this.shardCount);
    // The pause and policy statements are made when the commit runs: a delete is conditional on the row as the commits before it left it.
    // A topic's own max_leased also moves its slot row (topic-bound-rows.ts), after the policy rows in the same transaction.
    const slots: RowStatements = { statements: policySlotStatements(batch.policies), apply: () => {} };
    const run = this.tail.then(() => this.apply(encoded, batch, [this.pauses.statements(batch.pauses), this.policies.statements(batch.policies), slots]));
    this.tail = run.catch(() => undefined);
    return await run;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail;
    await this.client.close();
  }

  private async apply(encoded: EncodedCommit, batch: CommitBatch, shared: RowStatements[]): Promise<CommitResult> {
    const parts = commitStatements(encoded, this.committedValue);
    const itemParts = parts.length;
    const acked = this.acked.prepare(batch);
    parts.push(...acked.statements);
    // A schedule write is fenced by its shard, as that shard's items are (schedule-rows.ts).
    const scheduleRows = this.schedules.statements(batch.schedules);
    parts.push(...scheduleRows.statements);
    const shards = commitShards(encoded, new Set([...acked.shards, ...scheduleRows.shards]));
    const fence = this.fence;
    const held = new Map<number, number>();
    if (fence !== null) {
      for (const shard of shards) {
        const epoch = fence.heldEpoch(shard);
        if (epoch !== null) held.set(shard, epoch);
      }
    }
    let answer: CommitAnswer | null = null;
    let sharedResults: SqlRow[][] = [];
    try {
      const meta = batch.meta === null ? null : this.metaStatement(batch.meta);
      const others: Statement[] = shared.flatMap((rows) => rows.statements);
      if (meta !== null) others.push(meta);
      const results = await this.send(parts.length === 0 ? null : commitSql(parts, shards, fence === null ? null : { nodeId: fence.nodeId, held }), others);
      if (parts.length > 0) answer = readCommitAnswer(results[0]?.[0] ?? [], parts, fence !== null);
      sharedResults = results.slice(parts.length === 0 ? 0 : 1);
      if (meta !== null && sharedResults[sharedResults.length - 1]?.length !== 1) {
        throw new Error("another process reserved item keys in this database (one database per single-node store)");
      }
    } catch (error) {
      const failure = new Error(`PostgreSQL commit failed: ${(error as Error).message}`, { cause: error });
      const failedShards = new Map<number, Error>();
      for (const shard of shards) failedShards.set(shard, failure);
      this.uncertain.failed(encoded);
      this.acked.failed(acked);
      // Memory made these writes already (an ack ended its item); the database may hold them or not. A cluster
      // node drops the shards, before any reply goes out, and serves them again only as loaded from the database.
      if (fence !== null) for (const shard of held.keys()) fence.suspect(shard, failure.message);
      return { failedShards, metaError: failure };
    }
    const fenced = new Map<number, Error>();
    if (fence !== null && answer !== null) {
      const lost = failedFence(held, answer.okShards);
      const rows = lost.length === 0 ? new Map<number, ShardRow>() : await this.shardRows(lost);
      for (const [shard, why] of fencedShards(held, shards, lost, rows)) fenced.set(shard, new ShardFencedError(shard, why));
    }
    for (const count of answer?.counts ?? []) this.counters.rowWrites += count;
    this.uncertain.committed(encoded, fenced);
    for (const [shard, writes] of encoded.shards) if (!fenced.has(shard)) this.cache.apply(shard, writes);
    this.cache.applyOutcomes(encoded.outcomes, fenced);
    this.acked.committed(acked, acked.purgeAt < 0 ? [] : (answer?.pairs[itemParts + acked.purgeAt] ?? []), fenced);
    let at = 0;
    for (const rows of shared) {
      rows.apply(sharedResults.slice(at, at + rows.statements.length));
      at += rows.statements.length;
    }
    scheduleRows.apply(fenced);
    if (batch.meta !== null) this.currentMeta = { ...batch.meta, boots: this.currentMeta.boots };
    for (const [shard, error] of fenced) fence?.lost(shard, error.message);
    return { failedShards: fenced, metaError: null };
  }

  /** Ownership rows of shards a commit's fence did not pass, for the message alone (null when they cannot be read). */
  private async shardRows(shards: readonly number[]): Promise<Map<number, ShardRow> | null> {
    try {
      const rows = await this.client.query("SELECT shard, owner, epoch FROM orq_shards WHERE shard = ANY($1::integer[])", [[...shards]]);
      return new Map(rows.map((row) => [Number(row[0]), { owner: row[1] === null || row[1] === undefined ? null : String(row[1]), epoch: int8Value(row[2]) }]));
    } catch {
      return null;
    }
  }

  /**
   * Send a commit: the commit statement alone is one round trip (a
   * transaction of its own, commit-sql.ts); with pause, policy or meta
   * statements, all go in one transaction, pipelined (BEGIN and COMMIT are
   * an exchange each).
   */
  private async send(statement: Statement | null, others: Statement[]): Promise<SqlRow[][]> {
    const all = statement === null ? others : [statement, ...others];
    if (all.length === 0) return [];
    const counters = this.counters;
    counters.commits++;
    for (const each of all) counters.valueBytes += each.valueBytes ?? 0;
    if (others.length === 0 && statement !== null) {
      counters.roundTrips++;
      return [await this.client.query(statement.text, statement.params)];
    }
    counters.roundTrips += 3;
    const results = await this.client.transaction(async (tx) => await tx.pipeline(all));
    for (let index = statement === null ? 0 : 1; index < results.length; index++) counters.rowWrites += affectedRows(results[index] ?? []);
    return results;
  }

  /**
   * The meta write: a new key reservation. A single writer moves it from the
   * value it knows (a row that moved meanwhile means a second writer: the
   * commit fails); a cluster node reserved its whole range at open, so a
   * reservation inside it needs no write, and one beyond it fails.
   */
  private metaStatement(meta: MetaRecord): Statement | null {
    const below = meta.keysReservedBelow;
    if (this.keyRangeBelow !== null) {
      if (below <= this.keyRangeBelow) return null;
      throw new Error(`item keys reserved at open are used up (below ${this.keyRangeBelow}); restart the node to reserve more`);
    }
    return {
      text: "UPDATE orq_meta SET keys_reserved_below = $1::bigint WHERE keys_reserved_below = $2::bigint RETURNING 1",
      params: [below, this.currentMeta.keysReservedBelow],
    };
  }
}

/** Every shard a commit writes: its items', its outcomes', its acked blocks' and its purge's. */
function commitShards(encoded: EncodedCommit, acked: ReadonlySet<number>): number[] {
  const shards = new Set<number>(encoded.shards.keys());
  for (const id of encoded.outcomes.keys()) shards.add(shardOfId(id));
  for (const shard of acked) shards.add(shard);
  return [...shards];
}

/** A stored item as a shard is handed to an engine: decoded in place from its page, without payload and metadata. */
function storedItem(key: ItemKey, bytes: Uint8Array, start: number, end: number): { key: ItemKey; record: ItemRecord } {
  return { key, record: decodeItemRecord(bytes, recordReaders, false, end, start) };
}

/** A shard's outcome rows, decoded as they are walked. */
function* storedOutcomes(values: Iterable<[string, Uint8Array]>): Iterable<{ id: string; record: OutcomeRecord }> {
  for (const [id, value] of values) yield { id, record: decodeOutcomeRecord(value) };
}
