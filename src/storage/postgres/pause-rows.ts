// Paused topics in PostgreSQL (the `pause` op): one row per (ns, topic) in
// orq_pauses, written in the commit that carries the pause, and read once
// when the store opens. The store keeps them in memory so `loadPauses` stays
// synchronous, as the engine's recovery expects (an engine rebuild after a
// shard move reads the same copy).

import { decodePauseRecord, encodePauseRecord } from "../record-codec.ts";
import type { PauseRecord } from "../record.ts";
import { type CommitBatch, pauseKey } from "../store.ts";
import type { Statement } from "./commit-statements.ts";
import { byteaValue, type SqlClient } from "./sql-client.ts";

export const createPausesTableSql = `CREATE TABLE IF NOT EXISTS orq_pauses (
   key text PRIMARY KEY,
   value bytea NOT NULL)`;

export class PauseRows {
  private readonly rows = new Map<string, Uint8Array>();

  async load(client: SqlClient): Promise<void> {
    for (const row of await client.query("SELECT key, value FROM orq_pauses")) {
      this.rows.set(String(row[0]), byteaValue(row[1]));
    }
  }

  *records(): Iterable<PauseRecord> {
    for (const value of this.rows.values()) yield decodePauseRecord(value);
  }

  /** The statements writing the batch's pauses, and what to remember once they commit. */
  statements(batch: CommitBatch): { statements: Statement[]; apply: () => void } {
    const writes = (batch.pauses ?? []).map(({ ns, topic, record }) => ({ key: pauseKey(ns, topic), value: record === null ? null : encodePauseRecord(record) }));
    const statements: Statement[] = writes.map(({ key, value }) =>
      value === null
        ? { text: "DELETE FROM orq_pauses WHERE key = $1", params: [key] }
        : { text: "INSERT INTO orq_pauses (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", params: [key, value] },
    );
    const apply = (): void => {
      for (const { key, value } of writes) {
        if (value === null) this.rows.delete(key);
        else this.rows.set(key, value);
      }
    };
    return { statements, apply };
  }
}
