// The options the PostgreSQL store tests open a store with: a cluster node's
// (its own key range, no shard loaded until adopted), strict, no idle
// timeout; each test names only what it changes.

import type { PostgresStoreOptions } from "../../../src/storage/postgres/postgres-store.ts";

export function storeOptions(url: string, overrides: Partial<PostgresStoreOptions> = {}): PostgresStoreOptions {
  return {
    url,
    shards: null,
    shardsDefault: 2,
    durability: "strict",
    keyRangePerOpen: 1_000,
    loadAllShards: false,
    applicationName: "orq-test",
    transactionIdleTimeoutMs: null,
    ...overrides,
  };
}
