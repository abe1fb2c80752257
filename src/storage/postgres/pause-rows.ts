// Paused topics in PostgreSQL (the `pause` op): one row per (ns, topic) in
// orq_pauses, written in the commit that carries the pause. The store keeps
// the rows it knows in memory so `loadPauses` stays synchronous, as the
// engine's recovery expects (an engine rebuild after a shard move reads the
// same copy).
//
// Cluster mode shares pauses between running nodes by polling: every commit
// that writes pauses also raises the one counter in orq_pause_version (in the
// same transaction, so the counter and the rows change together); each node
// reads the counter every clusterLimits.pausePollMs and, when it moved, reads
// every pause row with it in one statement (one snapshot) and hands the rows
// that changed to its engine (read, then reconcile). Polling rather than LISTEN/NOTIFY: a poll
// needs no dedicated connection and survives reconnects and a database
// failover without resubscribing, and costs one indexed read a node.
//
// A delete is conditional on the row this node last saw: a timed pause that
// ends here must not delete a newer pause another node set just before
// (pausing a paused topic replaces its end). With no row seen, it deletes
// whatever is there (a resume of a pause set elsewhere, not polled yet).

import { decodePauseRecord, encodePauseRecord } from "../record-codec.ts";
import type { PauseRecord } from "../record.ts";
import { type CommitBatch, pauseKey } from "../store.ts";
import type { Statement } from "./commit-statements.ts";
import { byteaValue, int8Value, type SqlSession } from "./sql-client.ts";

export const createPausesTableSql = `CREATE TABLE IF NOT EXISTS orq_pauses (
   key text PRIMARY KEY,
   value bytea NOT NULL)`;

export const createPauseVersionSql = [
  `CREATE TABLE IF NOT EXISTS orq_pause_version (
     singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
     version bigint NOT NULL)`,
  "INSERT INTO orq_pause_version (version) VALUES (0) ON CONFLICT DO NOTHING",
];

const bumpVersionSql = "UPDATE orq_pause_version SET version = version + 1 RETURNING version";

/** A pause another node committed: its end (null: until resume), or undefined when the topic was resumed. */
export interface PauseChange {
  ns: string;
  topic: string;
  untilMs: number | null | undefined;
}

/** Every pause row at one moment, with the counter then. */
export interface PauseSnapshot {
  version: number;
  rows: Map<string, Uint8Array>;
}

/** What a pause poll needs of the engine: the topic's pause now (undefined: none). */
export type PausedUntil = (ns: string, topic: string) => number | null | undefined;

/** What a pause poll asks the engine about a topic. */
export interface EnginePauses {
  pausedUntil: PausedUntil;
  /** Whether the engine's own write of the topic's pause has not landed yet (queued, or in a commit). */
  writing(ns: string, topic: string): boolean;
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function untilOf(value: Uint8Array | undefined): number | null | undefined {
  return value === undefined ? undefined : decodePauseRecord(value).untilMs;
}

export class PauseRows {
  /** The rows as this node last saw them: read, polled or written by its own commits. */
  private readonly rows = new Map<string, Uint8Array>();
  /** orq_pause_version when the rows were last read whole. */
  private version = -1;
  /** Keys this node's own commits wrote, with the version each commit made (a snapshot older than that is stale for the key). */
  private readonly ownWrites = new Map<string, number>();

  async load(client: SqlSession): Promise<void> {
    const snapshot = await this.read(client);
    if (snapshot !== null) this.reconcile(snapshot, { pausedUntil: () => undefined, writing: () => false });
  }

  *records(): Iterable<PauseRecord> {
    for (const value of this.rows.values()) yield decodePauseRecord(value);
  }

  /** The statements writing the batch's pauses, and what to remember once they commit (given each statement's rows). */
  statements(batch: CommitBatch): { statements: Statement[]; apply: (results: unknown[][][]) => void } {
    const writes = (batch.pauses ?? []).map(({ ns, topic, record }) => ({ key: pauseKey(ns, topic), value: record === null ? null : encodePauseRecord(record) }));
    if (writes.length === 0) return { statements: [], apply: () => {} };
    const statements: Statement[] = writes.map(({ key, value }) => {
      if (value !== null) {
        return { text: "INSERT INTO orq_pauses (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", params: [key, value] };
      }
      const seen = this.rows.get(key);
      return seen === undefined
        ? { text: "DELETE FROM orq_pauses WHERE key = $1", params: [key] }
        : { text: "DELETE FROM orq_pauses WHERE key = $1 AND value = $2", params: [key, seen] };
    });
    statements.push({ text: bumpVersionSql, params: [] });
    const apply = (results: unknown[][][]): void => {
      const version = int8Value(results[results.length - 1]?.[0]?.[0]);
      for (const { key, value } of writes) {
        if (value === null) this.rows.delete(key);
        else this.rows.set(key, value);
        this.ownWrites.set(key, version);
      }
    };
    return { statements, apply };
  }

  /**
   * Read the pause rows, with the counter, when the counter moved since the
   * last read (null when it did not). Nothing changes until reconcile().
   */
  async read(client: SqlSession): Promise<PauseSnapshot | null> {
    const counter = await client.query("SELECT version FROM orq_pause_version");
    if (counter.length > 0 && int8Value(counter[0]![0]) === this.version) return null;
    const rows = await client.query("SELECT v.version, p.key, p.value FROM orq_pause_version v LEFT JOIN orq_pauses p ON true");
    const snapshot: PauseSnapshot = { version: rows.length === 0 ? 0 : int8Value(rows[0]![0]), rows: new Map() };
    for (const row of rows) if (row[1] !== null) snapshot.rows.set(String(row[1]), byteaValue(row[2]));
    return snapshot;
  }

  /**
   * Take a snapshot as the rows now seen, and return the changes the engine
   * has not made itself. A key is left alone when this node's own commit
   * wrote it after the snapshot (the snapshot is older), or when the
   * engine's own write of it is still on its way, or when the engine's pause
   * differs from the row this node last saw: its own change lands after the
   * snapshot, so it wins there too; the row stays as seen and the next poll
   * reads again. The engine's pause can equal the row seen while its write
   * is on its way (a resume of a pause not polled yet deletes a row this
   * node never saw): applying the snapshot then would change the engine
   * under a write about to undo that in the database, and the two would
   * stay apart. Synchronous, so the changes reach the engine before
   * anything else runs.
   */
  reconcile(snapshot: PauseSnapshot, engine: EnginePauses): PauseChange[] {
    const changes: PauseChange[] = [];
    let unsettled = false;
    for (const key of new Set([...snapshot.rows.keys(), ...this.rows.keys()])) {
      const seen = this.rows.get(key);
      const now = snapshot.rows.get(key);
      if (sameBytes(seen, now)) continue;
      if ((this.ownWrites.get(key) ?? -1) > snapshot.version) continue;
      const record = decodePauseRecord((now ?? seen)!);
      if (engine.writing(record.ns, record.topic) || engine.pausedUntil(record.ns, record.topic) !== untilOf(seen)) {
        // Keep the row as seen: the delete on its way is conditional on it, and must not match a newer pause.
        unsettled = true;
        continue;
      }
      if (now === undefined) this.rows.delete(key);
      else this.rows.set(key, now);
      changes.push({ ns: record.ns, topic: record.topic, untilMs: untilOf(now) });
    }
    for (const [key, written] of this.ownWrites) if (written <= snapshot.version) this.ownWrites.delete(key);
    // With a topic left unsettled, read again at the next poll, whether or not the counter moves.
    if (!unsettled) this.version = snapshot.version;
    return changes;
  }
}
