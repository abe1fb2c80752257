// A whole store commit as one SQL statement, so that it costs one round
// trip: PostgreSQL runs a lone statement as a transaction of its own, and a
// statement's data-modifying WITH parts commit or fail together. Bun's
// client pipelines only statements with parameters, so BEGIN and COMMIT
// would be an exchange each; this leaves them out.
//
// The statement:
//   WITH ok          with a fence, the ownership rows (shard-fence.ts) of the
//                    shards this node holds that still name it at the epoch it
//                    holds them at, FOR SHARE; without one, the shards the
//                    commit writes
//        w1 .. wN    the writes (commit-statements.ts, acked-blocks.ts), each
//                    writing only shards in `ok`
//   SELECT the shards in `ok` (fenced), each part's row count (or (shard,
//          seq) pairs), and each patch's check, which raises (orq_raise) and
//          so fails the whole statement when a patch wrote fewer rows than it
//          named.
// The fence locks only the rows that pass: a claim that moved a row first
// makes it fail the check (PostgreSQL re-reads a row a committed update
// changed before it locks it), and one that comes after waits for this
// commit. Locking every held row and joining the check in further WITH parts
// cost PostgreSQL about 45 µs more CPU a commit (160-180 against 120-127 µs
// for a fenced one-row insert; docs/decisions/047-one-part-fence.md).
// Parameters are renumbered: each part's $n follows the ones before it.

import type { Statement } from "./commit-statements.ts";
import { int8Value, type SqlRow } from "./sql-client.ts";

/** What the commit statement returned. */
export interface CommitAnswer {
  /** The held shards that passed the fence (none without a fence). */
  okShards: number[];
  /** Per part: rows written. */
  counts: number[];
  /** Per part returning pairs: the (shard, seq) pairs, else empty. */
  pairs: Array<Array<readonly [number, number]>>;
}

/**
 * The one statement writing `parts` to `shards` (every shard any part
 * names). With a fence, the shards it holds (`held`, shard to epoch) are
 * checked; a shard not in `held` is written by no part.
 */
export function commitSql(parts: readonly Statement[], shards: readonly number[], fence: { nodeId: string; held: Map<number, number> } | null): Statement {
  const params: unknown[] = [];
  const ctes: string[] = [];
  const select: string[] = [];
  if (fence === null) {
    params.push(shards);
    ctes.push("ok AS (SELECT s AS shard FROM unnest($1::integer[]) AS s)");
  } else {
    params.push([...fence.held.keys()], [...fence.held.values()], fence.nodeId);
    // Each held shard's epoch is at the shard's place in $1 (held shards are distinct).
    ctes.push(
      "ok AS (SELECT o.shard FROM orq_shards AS o WHERE o.shard = ANY($1::integer[]) AND o.owner = $3 AND o.epoch = ($2::bigint[])[array_position($1::integer[], o.shard)] FOR SHARE)",
    );
    select.push("(SELECT array_agg(shard) FROM ok)");
  }
  let valueBytes = 0;
  parts.forEach((part, index) => {
    const offset = params.length;
    const name = `w${index}`;
    ctes.push(`${name} AS (${part.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)})`);
    params.push(...part.params);
    valueBytes += part.valueBytes ?? 0;
    if (part.returns === "pairs") select.push(`(SELECT count(*) FROM ${name})`, `(SELECT array_agg(shard) FROM ${name})`, `(SELECT array_agg(seq) FROM ${name})`);
    else select.push(`(SELECT count(*) FROM ${name})`);
    if (part.mustWriteShardsParam !== undefined) {
      const named = `(SELECT count(*) FROM unnest($${part.mustWriteShardsParam + offset}::integer[]) AS p(s) WHERE p.s IN (SELECT shard FROM ok))`;
      select.push(`CASE WHEN (SELECT count(*) FROM ${name}) = ${named} THEN 0 ELSE orq_raise('an item patch wrote fewer rows than it named: the stored values differ from this node''s copy') END`);
    }
  });
  return { text: `WITH ${ctes.join(",\n")}\nSELECT ${select.join(", ")}`, params, valueBytes };
}

/** The commit statement's one row, read back in the order commitSql wrote it. */
export function readCommitAnswer(row: SqlRow, parts: readonly Statement[], fenced: boolean): CommitAnswer {
  const answer: CommitAnswer = { okShards: [], counts: [], pairs: [] };
  let at = 0;
  if (fenced) {
    for (const shard of (row[0] ?? []) as unknown[]) answer.okShards.push(Number(shard));
    at = 1;
  }
  for (const part of parts) {
    answer.counts.push(int8Value(row[at++]));
    const pairs: Array<readonly [number, number]> = [];
    if (part.returns === "pairs") {
      const shards = (row[at++] ?? []) as unknown[];
      const seqs = (row[at++] ?? []) as unknown[];
      shards.forEach((shard, index) => pairs.push([Number(shard), int8Value(seqs[index])]));
    }
    answer.pairs.push(pairs);
    if (part.mustWriteShardsParam !== undefined) at++;
  }
  return answer;
}

/** The held shards the fence did not pass. */
export function failedFence(held: ReadonlyMap<number, number>, okShards: readonly number[]): number[] {
  if (okShards.length === held.size) return [];
  const ok = new Set(okShards);
  return [...held.keys()].filter((shard) => !ok.has(shard));
}

/** A shard's ownership row, as read for a fenced shard's message. */
export interface ShardRow {
  owner: string | null;
  epoch: number;
}

/**
 * The fence's verdict: the shards of `shards` this node no longer holds,
 * with why. Each of `lost` (failedFence's) is named with its ownership row
 * as read after the commit (`rows`, for the message alone; null when that
 * read failed).
 */
export function fencedShards(
  held: ReadonlyMap<number, number>,
  shards: readonly number[],
  lost: readonly number[],
  rows: ReadonlyMap<number, ShardRow> | null,
): Map<number, string> {
  const fenced = new Map<number, string>();
  for (const shard of shards) if (!held.has(shard)) fenced.set(shard, "not held");
  for (const shard of lost) {
    const epoch = held.get(shard);
    const row = rows?.get(shard);
    if (rows === null) fenced.set(shard, `no longer this node's at epoch ${epoch}`);
    else fenced.set(shard, row === undefined ? "no shard row" : `now ${row.owner ?? "unowned"} at epoch ${row.epoch}, held at epoch ${epoch}`);
  }
  return fenced;
}
