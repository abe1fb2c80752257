// Goal: `orq serve --store ...` start-up errors, as the contract says: a
// --store that is neither lmdb nor a postgres:// URL and a --shard-lease-ms
// below 500 exit 2; a database that cannot be reached exits 1 with one line
// (no password in it); an explicit --shards other than the database's exits
// 2; a second live node with the same --node-id exits 1 with one line.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSql } from "../../src/storage/postgres/sql-client.ts";
import { ClusterHarness } from "../support/cluster-harness.ts";
import { postgresAvailable, releasePostgres, sharedPostgres, type PostgresServer } from "../support/postgres-server.ts";
import { bunPath, mainPath } from "../support/server-process.ts";

async function run(args: string[]): Promise<{ code: number; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), "orq-cli-"));
  try {
    const proc = Bun.spawn([bunPath, mainPath, "serve", "--port", "0", "--http-port", "0", ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const code = await proc.exited;
    return { code, stderr: await new Response(proc.stderr).text() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a bad --store or a too-short --shard-lease-ms exits 2", async () => {
  const store = await run(["--store", "mysql://x"]);
  expect(store.code).toBe(2);
  expect(store.stderr).toContain("--store");
  const lease = await run(["--store", "postgres://orq@127.0.0.1:1/x", "--shard-lease-ms", "499"]);
  expect(lease.code).toBe(2);
  expect(lease.stderr).toContain("--shard-lease-ms");
});

describe.skipIf(!postgresAvailable())("cluster start-up against PostgreSQL", () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await sharedPostgres();
  });
  afterAll(() => releasePostgres());

  test("an unreachable database exits 1 with one line and no password", async () => {
    const { code, stderr } = await run(["--store", `postgres://orq:secret@127.0.0.1:${pg.port}/missing_db`]);
    expect(code).toBe(1);
    expect(stderr.trim().split("\n").length).toBe(1);
    expect(stderr).toContain("missing_db");
    expect(stderr).not.toContain("secret");
  });

  test("an explicit --shards unlike the database's exits 2; a live node's id exits 1", async () => {
    const cluster = await ClusterHarness.start({ label: "startup", nodes: 1, shards: 4, leaseMs: 60_000 });
    try {
      const shards = await run(["--store", cluster.url, "--shards", "8", "--node-id", "other"]);
      expect(shards.code).toBe(2);
      expect(shards.stderr).toContain("--shards 4");
      // n0 is alive and renewing. Make its lease look short (as if started with 1 s) so the
      // newcomer's wait for it to age is short; n0 keeps beating every second meanwhile.
      const sql = connectSql({ url: cluster.url, maxConnections: 1, connectTimeoutS: 5, settings: {}, applicationName: "orq-test" });
      await sql.query("UPDATE orq_nodes SET lease_ms = 1500 WHERE node_id = 'n0'");
      await sql.close();
      const twin = await run(["--store", cluster.url, "--node-id", "n0"]);
      expect(twin.code).toBe(1);
      expect(twin.stderr).toContain("node id n0 is in use");
    } finally {
      await cluster.cleanup();
    }
  });
});
