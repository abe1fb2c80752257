// One store commit as SQL: the batch is encoded (and so checked) first, its
// writes collapsed to the last one per (shard, key) and per outcome id (a
// batch applies in order, so only the last write of a key matters, and one
// INSERT ... ON CONFLICT may not touch a row twice), then sent as at most six
// array-bound statements, whatever the batch's size: insert new items, upsert
// the other items written whole, patch items, delete items, upsert outcomes,
// delete outcomes. The values travel as
// one bytea (all of them end to end) with an offset and a length each, which
// the statement cuts apart: Bun sends a bytea[] parameter as text,
// hex-escaping every byte, and that took about twice as long for a 1,000-item
// commit.
//
// A patch is a write whose value differs from the committed one (the store's
// copy, item-cache.ts) only in a prefix: a lease, extend, expiry or nack
// rewrites the record's fixed header (item-record.ts, decision 017) and
// leaves the rest as stored. It is sent as that prefix alone, and PostgreSQL
// overlays it on the stored value (an UPDATE, not an upsert of the whole
// record). The statement names the stored length it expects and must update
// every row it names: a row that is missing or of another length means the
// copy and the database disagree, and the commit fails rather than write a
// value nobody encoded. The bytes are the record codec's either way, so a
// store that loads the row reads the same record the copy holds. A write
// identical to the committed value is sent as nothing.
import { assert } from "../../lib/assert.ts";
import { shardOfIdOrReceipt } from "../../lib/id-grammar.ts";
import { copyItemValue, encodeItemRecord, encodeOutcomeRecord } from "../record-codec.ts";
import type { ItemRecord } from "../record.ts";
import type { CommitBatch, ItemKey } from "../store.ts";

export interface EncodedCommit {
  /** Per shard, the last write of each key: an encoded value, or null to delete. */
  shards: Map<number, Map<ItemKey, Uint8Array | null>>;
  /** The last write of each outcome id. */
  outcomes: Map<string, Uint8Array | null>;
}

export interface Statement {
  text: string;
  params: unknown[];
  /** Bytes of record values the statement carries, for the store's counters. */
  valueBytes?: number;
  /**
   * A patch's check: the statement must write one row for each entry of
   * this (1-based) parameter, a list of shards, that names a shard the
   * fence passed, or the commit fails; unchecked when absent.
   */
  mustWriteShardsParam?: number;
  /** What the commit statement returns of the part: how many rows it wrote (the default), or them as (shard, seq) pairs. */
  returns?: "count" | "pairs";
}

/**
 * The committed value a write is compared with; null when the key's row is
 * not known (a failed commit wrote it, or the shard is not loaded), so it is
 * written whole as an upsert; undefined when the key is known to have no row
 * (a new item), so it is a plain insert.
 */
export type CommittedValue = (shard: number, key: ItemKey) => Uint8Array | null | undefined;


// Each statement is a part of one commit statement (commit-sql.ts): it
// writes only the shards in `ok` (those the fence passed) and returns a row
// per row written.

// A key known to have no row is inserted without ON CONFLICT: a plain insert
// costs PostgreSQL about a third less per row than an upsert's speculative
// insertion (3.5-3.7 against 4.4-5.5 µs a row in batches of 800), and should
// the row exist after all, the unique key fails the whole commit rather than
// overwrite it (docs/decisions/045-insert-new-items.md).
const insertItemsSql = `INSERT INTO orq_items (shard, key, value)
  SELECT s, k, substring($3::bytea FROM o FOR l) FROM unnest($1::integer[], $2::bigint[], $4::integer[], $5::integer[]) AS v(s, k, o, l)
  WHERE v.s IN (SELECT shard FROM ok) RETURNING 1`;
const upsertItemsSql = `INSERT INTO orq_items (shard, key, value)
  SELECT s, k, substring($3::bytea FROM o FOR l) FROM unnest($1::integer[], $2::bigint[], $4::integer[], $5::integer[]) AS v(s, k, o, l)
  WHERE v.s IN (SELECT shard FROM ok)
  ON CONFLICT (shard, key) DO UPDATE SET value = EXCLUDED.value RETURNING 1`;
// A patch or a delete finds each row by its key through a LATERAL lookup and
// writes it by its ctid, so the only plan is a key lookup per row. Joined
// directly (`FROM unnest(...) WHERE i.key = v.k`), the plan rests on
// orq_items' statistics: analyzed while a drained queue's table was empty,
// they say it holds nothing, and once it refills the planner walks whole
// shards, or the whole table, for every commit (a drain fell to 1,800-6,700
// items/s until autovacuum analyzed again; a `LATERAL` subquery with a
// `LIMIT` is not flattened into a join, so it stays a lookup;
// docs/decisions/042-cluster-commit-cpu.md).
const patchItemsSql = `UPDATE orq_items AS i SET value = overlay(i.value PLACING substring($3::bytea FROM v.o FOR v.l) FROM 1 FOR v.l)
  FROM (SELECT r.row_id, u.o, u.l, u.n FROM unnest($1::integer[], $2::bigint[], $4::integer[], $5::integer[], $6::integer[]) AS u(s, k, o, l, n)
    CROSS JOIN LATERAL (SELECT ctid AS row_id FROM orq_items AS j WHERE j.shard = u.s AND j.key = u.k LIMIT 1) AS r
    WHERE u.s IN (SELECT shard FROM ok)) AS v
  WHERE i.ctid = v.row_id AND length(i.value) = v.n RETURNING 1`;
const deleteItemsSql = `DELETE FROM orq_items WHERE ctid = ANY(ARRAY(
  SELECT r.row_id FROM unnest($1::integer[], $2::bigint[]) AS d(shard, key)
    CROSS JOIN LATERAL (SELECT ctid AS row_id FROM orq_items AS j WHERE j.shard = d.shard AND j.key = d.key LIMIT 1) AS r
    WHERE d.shard IN (SELECT shard FROM ok))) RETURNING 1`;
const upsertOutcomesSql = `INSERT INTO orq_outcomes (id, shard, value)
  SELECT i, s, substring($3::bytea FROM o FOR l) FROM unnest($1::text[], $2::integer[], $4::integer[], $5::integer[]) AS v(i, s, o, l)
  WHERE v.s IN (SELECT shard FROM ok)
  ON CONFLICT (id) DO UPDATE SET shard = EXCLUDED.shard, value = EXCLUDED.value RETURNING 1`;
const deleteOutcomesSql = "DELETE FROM orq_outcomes WHERE id = ANY($1::text[]) AND shard IN (SELECT shard FROM ok) RETURNING 1";

/** Encode and check every record; throws (a programmer error) before anything is sent. */
export function encodeCommit(batch: CommitBatch, shardCount: number): EncodedCommit {
  const shards = new Map<number, Map<ItemKey, Uint8Array | null>>();
  for (const { shard, keys, records } of batch.shards) {
    assert(Number.isSafeInteger(shard) && shard >= 0 && shard < shardCount, `shard ${shard} out of range`);
    let writes = shards.get(shard);
    if (writes === undefined) {
      writes = new Map();
      shards.set(shard, writes);
    }
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index] as ItemKey;
      const record = records[index] as ItemRecord | Uint8Array | null;
      if (record === null) writes.set(key, null);
      // A copy of its own, checked as LMDB's commit checks it.
      else if (record instanceof Uint8Array) writes.set(key, copyItemValue(record));
      else writes.set(key, encodeItemRecord(record));
    }
  }
  const outcomes = new Map<string, Uint8Array | null>();
  for (const { id, record } of batch.outcomes) outcomes.set(id, record === null ? null : encodeOutcomeRecord(record));
  return { shards, outcomes };
}

/** The shard an id or receipt names; any other text is a broken invariant (the engine writes only well-formed ids). */
export function shardOfId(id: string): number {
  const shard = shardOfIdOrReceipt(id);
  if (shard === null) assert(false, `outcome id ${id} names no shard`);
  return shard;
}

/** The statements writing `commit`; puts that only change a prefix of `committed`'s value become patches. */
export function commitStatements(commit: EncodedCommit, committed: CommittedValue): Statement[] {
  const insert = { shards: [] as number[], keys: [] as number[], values: [] as Uint8Array[] };
  const put = { shards: [] as number[], keys: [] as number[], values: [] as Uint8Array[] };
  const patch = { shards: [] as number[], keys: [] as number[], values: [] as Uint8Array[], prefixLengths: [] as number[], lengths: [] as number[] };
  const del = { shards: [] as number[], keys: [] as number[] };
  for (const [shard, writes] of commit.shards) {
    for (const [key, value] of writes) {
      if (value === null) {
        del.shards.push(shard);
        del.keys.push(key);
        continue;
      }
      const base = committed(shard, key);
      if (base === undefined) {
        insert.shards.push(shard);
        insert.keys.push(key);
        insert.values.push(value);
        continue;
      }
      const prefix = base === null ? -1 : changedPrefix(base, value);
      if (prefix === 0) continue;
      if (prefix > 0) {
        patch.shards.push(shard);
        patch.keys.push(key);
        patch.values.push(value);
        patch.prefixLengths.push(prefix);
        patch.lengths.push(value.length);
      } else {
        put.shards.push(shard);
        put.keys.push(key);
        put.values.push(value);
      }
    }
  }
  const statements: Statement[] = [];
  if (insert.keys.length > 0) statements.push(valueStatement(insertItemsSql, [integerArray(insert.shards), integerArray(insert.keys)], insert.values, []));
  if (put.keys.length > 0) statements.push(valueStatement(upsertItemsSql, [integerArray(put.shards), integerArray(put.keys)], put.values, []));
  if (patch.keys.length > 0) {
    const keys = [integerArray(patch.shards), integerArray(patch.keys)];
    statements.push({ ...valueStatement(patchItemsSql, keys, patch.values, [integerArray(patch.lengths)], patch.prefixLengths), mustWriteShardsParam: 1 });
  }
  if (del.keys.length > 0) statements.push({ text: deleteItemsSql, params: [integerArray(del.shards), integerArray(del.keys)] });
  statements.push(...outcomeStatements(commit.outcomes));
  return statements;
}

/** Longest changed prefix sent as a patch: the item header (item-record.ts) is 60 bytes; past it a value is written whole. */
const patchPrefixMax = 64;

/**
 * A value's rest past the prefix is compared natively from this many bytes
 * (512) on: below it a loop is cheaper than the two subarrays and the call
 * (a drain's leases of 190-byte values spent 7% of the node's CPU in them;
 * docs/decisions/042-cluster-commit-cpu.md).
 */
const nativeCompareFromBytes = 512;

/**
 * An integer array parameter as PostgreSQL's array text, `{1,2,3}` (the
 * statement casts it): Bun's client quotes each element of a JS array
 * through a regular expression, about 75 ns an element, several arrays an
 * item (docs/decisions/042-cluster-commit-cpu.md).
 */
function integerArray(values: readonly number[]): string {
  return `{${values.join(",")}}`;
}

/**
 * How many leading bytes (at most patchPrefixMax) of `value` differ from
 * `base` when the rest is equal: 0 when the two are identical, -1 when they
 * differ in length or past that prefix, or the value is no longer than it.
 * The rest is compared in a loop when short, natively when long (a payload
 * may be large).
 */
export function changedPrefix(base: Uint8Array, value: Uint8Array): number {
  const length = value.length;
  if (base.length !== length || length <= patchPrefixMax) return -1;
  if (length - patchPrefixMax <= nativeCompareFromBytes) {
    for (let at = patchPrefixMax; at < length; at++) if (base[at] !== value[at]) return -1;
  } else if (Buffer.compare(base.subarray(patchPrefixMax), value.subarray(patchPrefixMax)) !== 0) return -1;
  let end = patchPrefixMax;
  while (end > 0 && base[end - 1] === value[end - 1]) end--;
  return end;
}

function outcomeStatements(outcomes: Map<string, Uint8Array | null>): Statement[] {
  const outcomePut = { ids: [] as string[], shards: [] as number[], values: [] as Uint8Array[] };
  const outcomeDel: string[] = [];
  for (const [id, value] of outcomes) {
    const shard = shardOfId(id);
    if (value === null) outcomeDel.push(id);
    else {
      outcomePut.ids.push(id);
      outcomePut.shards.push(shard);
      outcomePut.values.push(value);
    }
  }
  const statements: Statement[] = [];
  if (outcomePut.ids.length > 0) {
    statements.push(valueStatement(upsertOutcomesSql, [outcomePut.ids, integerArray(outcomePut.shards)], outcomePut.values, []));
  }
  if (outcomeDel.length > 0) statements.push({ text: deleteOutcomesSql, params: [outcomeDel]});
  return statements;
}

/** A statement writing one row per value (or its first `prefixLengths[i]` bytes): `keys` params, then the values joined (offsets, lengths), then `after`. */
export function valueStatement(text: string, keys: unknown[], values: Uint8Array[], after: unknown[], prefixLengths: readonly number[] | null = null): Statement {
  const [bytes, offsets, lengths] = joined(values, prefixLengths);
  return { text, params: [...keys, bytes, integerArray(offsets), integerArray(lengths), ...after], valueBytes: bytes.length };
}

/**
 * The values end to end (or the first `prefixLengths[i]` bytes of each: a
 * patch's changed prefix, copied without a view of it per value), with each
 * one's 1-based offset and length (SQL's substring counts from 1).
 */
function joined(values: Uint8Array[], prefixLengths: readonly number[] | null = null): [Uint8Array, number[], number[]] {
  let total = 0;
  for (let i = 0; i < values.length; i++) total += prefixLengths === null ? (values[i] as Uint8Array).length : (prefixLengths[i] as number);
  const bytes = new Uint8Array(total);
  const offsets: number[] = [];
  const lengths: number[] = [];
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as Uint8Array;
    const length = prefixLengths === null ? value.length : (prefixLengths[i] as number);
    if (length === value.length) bytes.set(value, at);
    else for (let j = 0; j < length; j++) bytes[at + j] = value[j] as number;
    offsets.push(at + 1);
    lengths.push(length);
    at += length;
  }
  return [bytes, offsets, lengths];
}
