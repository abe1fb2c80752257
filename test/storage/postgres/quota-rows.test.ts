// Goal: the namespaces' quota buckets in a real PostgreSQL, as quota-rows.ts
// says: the first draw makes a full bucket (a minute's worth); draws from many
// sessions at once never take more than the bucket held plus the refill by
// the database's clock over the time they ran (and take it all when they ask
// for more); the refill follows the database's clock (moved back here, not
// waited for), in whole tokens; tokens handed back never lift the bucket
// above its quota; a draw with a new quota caps the bucket at it.
// Skipped when PostgreSQL is not installed (unless ORQ_REQUIRE_POSTGRES=1).

import { afterEach, describe, expect, test } from "bun:test";
import { openPostgresStore } from "../../../src/storage/postgres/postgres-store.ts";
import { drawQuotaTokens } from "../../../src/storage/postgres/quota-rows.ts";
import { connectSql, type SqlClient } from "../../../src/storage/postgres/sql-client.ts";
import { postgresAvailable } from "../../support/postgres-server.ts";
import { storeOptions } from "./store-options.ts";
import { storeSession } from "./store-session.ts";

/** Seconds the database's clock moved since `since` (a time it gave). */
async function dbSeconds(client: SqlClient, since: string): Promise<number> {
  const rows = await client.query("SELECT EXTRACT(EPOCH FROM now() - $1::timestamptz)::float8", [since]);
  return Number(rows[0]![0]);
}

describe.skipIf(!postgresAvailable())("quota buckets in PostgreSQL", () => {
  const session = storeSession();
  // Clients of their own (several sessions, a 10 s connect timeout; session.admin's have one session), closed after each test.
  const clients: SqlClient[] = [];

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
  });

  /** A new database with orq's schema, and a client of `connections` sessions on it. */
  async function database(label: string, connections: number): Promise<SqlClient> {
    const url = await session.server().createDatabase(label);
    const store = await openPostgresStore(storeOptions(url));
    await store.close();
    const client = connectSql({ url, maxConnections: connections, connectTimeoutS: 10, settings: {}, applicationName: "orq-test quotas" });
    clients.push(client);
    return client;
  }

  test("the first draw makes a full bucket; concurrent draws take it all and never more than it plus the refill by the database's clock", async () => {
    const client = await database("quota-draws", 8);
    const startedAt = String((await client.query("SELECT now()::text"))[0]![0]);
    expect(await drawQuotaTokens(client, { ns: "q", perMinute: 600, want: 10 })).toEqual({ granted: 10, left: 590 });
    // 40 draws of 25 at once from 8 sessions: 1,000 asked of 590 left.
    const grants = await Promise.all(Array.from({ length: 40 }, () => drawQuotaTokens(client, { ns: "q", perMinute: 600, want: 25 })));
    const total = 10 + grants.reduce((sum, grant) => sum + grant.granted, 0);
    const elapsedS = await dbSeconds(client, startedAt);
    for (const grant of grants) expect(Number.isInteger(grant.granted) && grant.granted >= 0 && grant.granted <= 25).toBe(true);
    expect(total).toBeGreaterThanOrEqual(600);
    expect(total).toBeLessThanOrEqual(600 + elapsedS * 10);
  });

  test("the refill follows the database's clock in whole tokens; hand-backs and a smaller quota never exceed the quota", async () => {
    const client = await database("quota-refill", 2);
    expect((await drawQuotaTokens(client, { ns: "q", perMinute: 60, want: 60 })).granted).toBe(60);
    // Empty, and last refilled 30 s ago by the database's clock: 30 tokens (one a second) are due.
    const movedAt = String((await client.query("UPDATE orq_quota_buckets SET tokens = 0.5, refilled_at = now() - interval '30 seconds' RETURNING now()::text"))[0]![0]);
    const grant = await drawQuotaTokens(client, { ns: "q", perMinute: 60, want: 100 });
    const elapsedS = await dbSeconds(client, movedAt);
    expect(grant.granted).toBeGreaterThanOrEqual(30);
    expect(grant.granted).toBeLessThanOrEqual(Math.floor(30.5 + elapsedS));
    expect(grant.left).toBeGreaterThanOrEqual(0);
    expect(grant.left).toBeLessThan(1); // the fraction stays in the bucket
    // Hand back more than it can hold: capped at the quota.
    expect(await drawQuotaTokens(client, { ns: "q", perMinute: 60, want: -100 })).toEqual({ granted: -100, left: 60 });
    // A node with a smaller quota draws: the bucket is capped at it.
    expect(await drawQuotaTokens(client, { ns: "q", perMinute: 20, want: 0 })).toEqual({ granted: 0, left: 20 });
    expect((await drawQuotaTokens(client, { ns: "q", perMinute: 20, want: 50 })).granted).toBe(20);
    // Another namespace has its own bucket.
    expect(await drawQuotaTokens(client, { ns: "other", perMinute: 5, want: 2 })).toEqual({ granted: 2, left: 3 });
  });
});
