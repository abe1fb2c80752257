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

/**
 * How one table of token buckets is laid out, for tokenDrawSql: its key
 * columns (bound to $1..$k), the SET clause that stores the rate a draw
 * carries (the capacity is $k+1, the want $k+2, further rate parameters
 * after them), and the tokens a second the row refills at its stored rate.
 * Namespace quotas here, a topic's own rate in topic-bound-rows.ts.
 */
export interface TokenTable {
  table: string;
  keys: string[];
  setRate: string;
  perSecond: string;
}

/** The draw statement of a bucket table: refill to now() at the old rate, grant, store the new rate; RETURNING granted, tokens. */
export function tokenDrawSql(spec: TokenTable): string {
  const cap = `$${spec.keys.length + 1}`;
  const want = `$${spec.keys.length + 2}`;
  // The bucket's tokens now: what it held plus the refill since, at its old rate, capped at the capacity asked.
  const refilled = `LEAST(${cap}::float8, b.tokens + GREATEST(0::float8, EXTRACT(EPOCH FROM now() - b.refilled_at)::float8) * ${spec.perSecond})`;
  // Whole tokens granted: at most `want` and what is there; a return's negative `want` as it is.
  const granted = `CASE WHEN ${want}::integer >= 0 THEN LEAST(${want}::integer, FLOOR(${refilled})::integer) ELSE ${want}::integer END`;
  const where = spec.keys.map((key, i) => `b.${key} = $${i + 1}`).join(" AND ");
  return `UPDATE ${spec.table} AS b SET
   ${spec.setRate},
   refilled_at = GREATEST(b.refilled_at, now()),
   granted = ${granted},
   tokens = LEAST(${cap}::float8, ${refilled} - ${granted})
 WHERE ${where}
 RETURNING b.granted, b.tokens`;
}

/** Run a draw; when the bucket has no row yet, create it (full) and draw again. */
export async function drawTokenRow(
  client: SqlSession,
  draw: { sql: string; params: unknown[] },
  create: { sql: string; params: unknown[] },
  what: string,
): Promise<QuotaGrant> {
  let rows = await client.query(draw.sql, draw.params);
  if (rows.length === 0) {
    await client.query(create.sql, create.params);
    rows = await client.query(draw.sql, draw.params);
  }
  const row = rows[0];
  if (row === undefined) throw new Error(`no token bucket for ${what}`);
  return { granted: Number(row[0]), left: Number(row[1]) };
}

const drawSql = tokenDrawSql({ table: "orq_quota_buckets", keys: ["ns"], setRate: "per_minute = $2", perSecond: "b.per_minute / 60.0" });

/** A namespace's first draw anywhere: its bucket starts full (a minute's worth, the burst the contract allows). */
const createSql = "INSERT INTO orq_quota_buckets (ns, per_minute, tokens, refilled_at) VALUES ($1, $2, $2, now()) ON CONFLICT (ns) DO NOTHING";

/** Draw (or return) tokens in one statement; creates the namespace's bucket first when it has none. */
export async function drawQuotaTokens(client: SqlSession, draw: QuotaDraw): Promise<QuotaGrant> {
  return await drawTokenRow(
    client,
    { sql: drawSql, params: [draw.ns, draw.perMinute, draw.want] },
    { sql: createSql, params: [draw.ns, draw.perMinute] },
    `namespace ${JSON.stringify(draw.ns)}`,
  );
}
