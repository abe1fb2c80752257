// The shared test PostgreSQL for one describe block of the PostgreSQL store
// tests, and what they open on it: stores and admin clients (for rows set or
// changed by hand), all closed after the block, which then lets the server go.
// Call it inside the describe: it registers the block's beforeAll and afterAll.

import { afterAll, beforeAll } from "bun:test";
import { openPostgresStore, type PostgresStore, type PostgresStoreOptions } from "../../../src/storage/postgres/postgres-store.ts";
import { connectSql, type SqlClient } from "../../../src/storage/postgres/sql-client.ts";
import { releasePostgres, sharedPostgres, type PostgresServer } from "../../support/postgres-server.ts";

export interface StoreSession {
  /** The shared server (createDatabase for a fresh database per test). */
  server(): PostgresServer;
  /** A store opened with `options`, closed after the block. */
  open(options: PostgresStoreOptions): Promise<PostgresStore>;
  /** A one-connection client to `url`, closed after the block. */
  admin(url: string): SqlClient;
}

export function storeSession(): StoreSession {
  let pg: PostgresServer | null = null;
  const opened: Array<{ close(): Promise<void> }> = [];
  beforeAll(async () => {
    pg = await sharedPostgres();
  });
  afterAll(async () => {
    for (const each of opened.splice(0)) await each.close();
    await releasePostgres();
  });
  return {
    server: () => {
      if (pg === null) throw new Error("storeSession: the server is not up (call it inside a describe)");
      return pg;
    },
    open: async (options) => {
      const store = await openPostgresStore(options);
      opened.push(store);
      return store;
    },
    admin: (url) => {
      const client = connectSql({ url, maxConnections: 1, connectTimeoutS: 5, settings: {}, applicationName: "orq-test-admin" });
      opened.push(client);
      return client;
    },
  };
}
