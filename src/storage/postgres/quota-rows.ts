// The namespaces' quota buckets in PostgreSQL (cluster mode, docs/CLUSTER.md
// "Quotas across nodes"): one row per namespace with a quota, holding its
// tokens, refilled at per_minute a minute up to per_minute by the DATABASE's
// clock (now(): one value per statement, so every expression of a draw sees
// the same instant). Nodes draw tokens from a row and hand unused ones back,
// each in one UPDATE ... RETURNING: PostgreSQL's row lock orders concurrent
// draws of a namespace, and the second re-reads the row the first left, so
// the tokens granted over any time never exceed one bucket's worth plus the
// refill over that time. One namespace per statement: a statement touching
// several rows could lock them in another order than another node's and
// deadlock.
//
// refilled_at never goes back (GREATEST), and the refill counts no negative
// time: a draw that waited on the row lock with an earlier now(), or a
// database clock stepped back, refills nothing rather than too much. Grants
// are whole tokens (FLOOR), the fraction stays in the row.

import { type SqlSession } from "./sql-client.ts";

export const createQuotaBucketsSql = `CREATE TABLE IF NOT EXISTS orq_quota_buckets (
   ns text PRIMARY KEY,
   per_minute integer NOT NULL,
   tokens double precision NOT NULL,
   refilled_at timestamptz NOT NULL,
   granted integer NOT NULL DEFAULT 0)`;

/** One draw: `want` tokens of namespace `ns` (negative: hand that many back), for a quota of `perMinute`. */
export interface QuotaDraw {
  ns: string;
  perMinute: number;
  want: number;
}

/** Its answer: tokens granted (the negative `want` of a return), and the tokens the bucket holds after it. */
export interface QuotaGrant {
  granted: number;
  left: number;
}

/** The bucket's tokens now: what it held plus the refill since, at its old rate, capped at the quota asked ($2). */
const refilled = `LEAST($2::float8, b.tokens + GREATEST(0::float8, EXTRACT(EPOCH FROM now() - b.refilled_at)::float8) * b.per_minute / 60.0)`;
/** Whole tokens granted: at most `want` ($3) and what is there; a return's negative `want` as it is. */
const granted = `CASE WHEN $3::integer >= 0 THEN LEAST($3::integer, FLOOR(${refilled})::integer) ELSE $3::integer END`;

const drawSql = `UPDATE orq_quota_buckets AS b SET
   per_minute = $2,
   refilled_at = GREATEST(b.refilled_at, now()),
   granted = ${granted},
   tokens = LEAST($2::float8, ${refilled} - ${granted})
 WHERE b.ns = $1
 RETURNING b.granted, b.tokens`;

/** A namespace's first draw anywhere: its bucket starts full (a minute's worth, the burst the contract allows). */
const createSql = "INSERT INTO orq_quota_buckets (ns, per_minute, tokens, refilled_at) VALUES ($1, $2, $2, now()) ON CONFLICT (ns) DO NOTHING";

/** Draw (or return) tokens in one statement; creates the namespace's bucket first when it has none. */
export async function drawQuotaTokens(client: SqlSession, draw: QuotaDraw): Promise<QuotaGrant> {
  const params = [draw.ns, draw.perMinute, draw.want];
  let rows = await client.query(drawSql, params);
  if (rows.length === 0) {
    await client.query(createSql, [draw.ns, draw.perMinute]);
    rows = await client.query(drawSql, params);
  }
  const row = rows[0];
  if (row === undefined) throw new Error(`no quota bucket for namespace ${JSON.stringify(draw.ns)}`);
  return { granted: Number(row[0]), left: Number(row[1]) };
}
