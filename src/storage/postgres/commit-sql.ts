// A whole store commit as one SQL statement, so that it costs one round
// trip: PostgreSQL runs a lone statement as a transaction of its own, and a
// statement's data-modifying WITH parts commit or fail together. Bun's
// client pipelines only statements with parameters, so BEGIN and COMMIT
// would be an exchange each; this leaves them out.
//
// The statement:
//   WITH held(s, e)  the shards this node holds, at their epochs (a fence), or
//        ok          the shards the commit writes (no fence: all of them)
//        fence       the shards' ownership rows, FOR SHARE (shard-fence.ts)
//        ok          the held shards whose row still names this node at the held epoch
//        w1 .. wN    the writes (commit-statements.ts, acked-blocks.ts), each
//                    writing only shards in `ok`
//   SELECT the fence rows, each part's row count (or (shard, seq) pairs), and
//          each patch's check, which raises (orq_raise) and so fails the whole
//          statement when a patch wrote fewer rows than it named.
// Parameters are renumbered: each part's $n follows the ones before it.

import type { Statement } from "./commit-statements.ts";
import type { ShardFence } from "./shard-fence.ts";
import { int8Value, type SqlRow } from "./sql-client.ts";

/** What the commit statement returned. */
export interface CommitAnswer {
  /** The fence's rows: shard, owner, epoch (none without a fence). */
  fenceRows: Array<[number, string | null, number]>;
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
    ctes.push(
      "held(s, e) AS (SELECT * FROM unnest($1::integer[], $2::bigint[]))",
      "fence AS (SELECT o.shard, o.owner, o.epoch FROM orq_shards AS o WHERE o.shard IN (SELECT s FROM held) FOR SHARE)",
      "ok AS (SELECT f.shard FROM fence AS f JOIN held AS h ON h.s = f.shard WHERE f.owner = $3 AND f.epoch = h.e)",
    );
    select.push("(SELECT array_agg(shard) FROM fence)", "(SELECT array_agg(owner) FROM fence)", "(SELECT array_agg(epoch) FROM fence)");
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
  const answer: CommitAnswer = { fenceRows: [], counts: [], pairs: [] };
  let at = 0;
  if (fenced) {
    const shards = (row[0] ?? []) as unknown[];
    const owners = (row[1] ?? []) as unknown[];
    const epochs = (row[2] ?? []) as unknown[];
    shards.forEach((shard, index) => {
      const owner = owners[index];
      answer.fenceRows.push([Number(shard), owner === null || owner === undefined ? null : String(owner), int8Value(epochs[index])]);
    });
    at = 3;
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

/** The fence's verdict from its rows: the shards of `shards` this node no longer holds, with why. */
export function fencedShards(fence: ShardFence, held: ReadonlyMap<number, number>, shards: readonly number[], rows: CommitAnswer["fenceRows"]): Map<number, string> {
  const fenced = new Map<number, string>();
  for (const shard of shards) if (!held.has(shard)) fenced.set(shard, "not held");
  const seen = new Set<number>();
  for (const [shard, owner, epoch] of rows) {
    seen.add(shard);
    if (owner !== fence.nodeId || epoch !== held.get(shard)) fenced.set(shard, `now ${owner ?? "unowned"} at epoch ${epoch}, held at epoch ${held.get(shard)}`);
  }
  for (const shard of held.keys()) if (!seen.has(shard)) fenced.set(shard, "no shard row");
  return fenced;
}
