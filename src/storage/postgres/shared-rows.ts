// Records every node of a cluster holds alike, in PostgreSQL: the pauses
// (pause-rows.ts) and the policies (policy-rows.ts). Each kind has a table
// of rows (key text -> value bytea, one per (ns, topic, group), the key
// being store.ts's key for the kind) written in the commit that carries the
// change, and one counter every such commit raises in the same transaction,
// so the counter and the rows change together. The store keeps the rows it
// knows in memory so `loadPauses` and `loadPolicies` stay synchronous, as
// the engine's recovery expects.
//
// Running nodes share the rows by polling: each node reads the counter every
// clusterLimits.pausePollMs and, when it moved, reads every row with it in
// one statement (one snapshot) and hands the rows that changed to its engine
// (read, then reconcile). Polling rather than LISTEN/NOTIFY: a poll needs no
// dedicated connection and survives reconnects and a database failover
// without resubscribing, and costs one indexed read a node.
//
// A delete is conditional on the row this node last saw: a timed pause that
// ends here must not delete a newer pause another node set just before
// (pausing a paused topic replaces its end), nor a policy clear a newer one.
// With no row seen, it deletes whatever is there (a resume or clear of a
// change made elsewhere, not polled yet).

import type { Statement } from "./commit-statements.ts";
import { byteaValue, int8Value, type SqlSession } from "./sql-client.ts";

/** What a shared row belongs to: the engine is asked about it by these three. */
export interface RowScope {
  ns: string;
  topic: string;
  /** null: the topic's own. */
  group: string | null;
}

/** The tables of one kind of shared row. */
export interface SharedTables {
  /** key text -> value bytea, one row per scope. */
  rows: string;
  /** One counter, raised by every commit that writes rows of the kind. */
  version: string;
}

/** The statements creating a kind's tables (IF NOT EXISTS: run at every open). */
export function createSharedTablesSql(tables: SharedTables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${tables.rows} (
       key text PRIMARY KEY,
       value bytea NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${tables.version} (
       singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
       version bigint NOT NULL)`,
    `INSERT INTO ${tables.version} (version) VALUES (0) ON CONFLICT DO NOTHING`,
  ];
}

/** How a kind's records become rows and back, and the key of each scope. */
export interface RowCodec<R extends RowScope> {
  encode(record: R): Uint8Array;
  decode(value: Uint8Array): R;
  key(ns: string, topic: string, group: string | null): string;
}

/** One write of a commit: the scope's record, or null to delete it. */
export interface RowWrite<R> extends RowScope {
  record: R | null;
}

/** A commit's statements for one kind of row, and what to remember once they committed (given each statement's rows). */
export interface RowStatements {
  statements: Statement[];
  apply(results: unknown[][][]): void;
}

/** A row another node committed: its record now, or null when it was deleted. */
export interface RowChange<R> {
  scope: RowScope;
  record: R | null;
}

/** Every row of a kind at one moment, with its counter then. */
export interface RowSnapshot {
  version: number;
  rows: Map<string, Uint8Array>;
}

/** What a poll asks the engine about one scope. */
export interface EngineRows<R> {
  /** Whether the engine's own write of the scope's row has not landed yet (queued, or in a commit). */
  writing(scope: RowScope): boolean;
  /** Whether the engine holds what `seen` says of the scope (null: no row). */
  holds(scope: RowScope, seen: R | null): boolean;
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class SharedRows<R extends RowScope> {
  /** The rows as this node last saw them: read, polled or written by its own commits. */
  private readonly rows = new Map<string, Uint8Array>();
  /** The counter when the rows were last read whole. */
  private version = -1;
  /** Keys this node's own commits wrote, with the version each commit made (a snapshot older than that is stale for the key). */
  private readonly ownWrites = new Map<string, number>();
  private readonly bumpVersionSql: string;

  constructor(
    private readonly tables: SharedTables,
    private readonly codec: RowCodec<R>,
  ) {
    this.bumpVersionSql = `UPDATE ${tables.version} SET version = version + 1 RETURNING version`;
  }

  async load(client: SqlSession): Promise<void> {
    const snapshot = await this.read(client);
    if (snapshot !== null) this.reconcile(snapshot, { writing: () => false, holds: (_scope, seen) => seen === null });
  }

  *records(): Iterable<R> {
    for (const value of this.rows.values()) yield this.codec.decode(value);
  }

  /** The statements making a commit's writes (none when it has none). */
  statements(rowWrites: ReadonlyArray<RowWrite<R>> | undefined): RowStatements {
    const writes = (rowWrites ?? []).map(({ ns, topic, group, record }) => ({
      key: this.codec.key(ns, topic, group),
      value: record === null ? null : this.codec.encode(record),
    }));
    if (writes.length === 0) return { statements: [], apply: () => {} };
    const { rows } = this.tables;
    const statements: Statement[] = writes.map(({ key, value }) => {
      if (value !== null) {
        return { text: `INSERT INTO ${rows} (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, params: [key, value] };
      }
      const seen = this.rows.get(key);
      return seen === undefined
        ? { text: `DELETE FROM ${rows} WHERE key = $1`, params: [key] }
        : { text: `DELETE FROM ${rows} WHERE key = $1 AND value = $2`, params: [key, seen] };
    });
    statements.push({ text: this.bumpVersionSql, params: [] });
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
   * Read the rows, with the counter, when the counter moved since the last
   * read (null when it did not). Nothing changes until reconcile().
   */
  async read(client: SqlSession): Promise<RowSnapshot | null> {
    const counter = await client.query(`SELECT version FROM ${this.tables.version}`);
    if (counter.length > 0 && int8Value(counter[0]![0]) === this.version) return null;
    const rows = await client.query(`SELECT v.version, r.key, r.value FROM ${this.tables.version} v LEFT JOIN ${this.tables.rows} r ON true`);
    const snapshot: RowSnapshot = { version: rows.length === 0 ? 0 : int8Value(rows[0]![0]), rows: new Map() };
    for (const row of rows) if (row[1] !== null) snapshot.rows.set(String(row[1]), byteaValue(row[2]));
    return snapshot;
  }

  /**
   * Take a snapshot as the rows now seen, and return the changes the engine
   * has not made itself. A key is left alone when this node's own commit
   * wrote it after the snapshot (the snapshot is older), or when the
   * engine's own write of it is still on its way, or when the engine does
   * not hold the row this node last saw: its own change lands after the
   * snapshot, so it wins there too; the row stays as seen and the next poll
   * reads again. The engine can hold the row seen while its write is on its
   * way (a resume of a pause not polled yet deletes a row this node never
   * saw): applying the snapshot then would change the engine under a write
   * about to undo that in the database, and the two would stay apart.
   * Synchronous, so the changes reach the engine before anything else runs.
   */
  reconcile(snapshot: RowSnapshot, engine: EngineRows<R>): Array<RowChange<R>> {
    const changes: Array<RowChange<R>> = [];
    let unsettled = false;
    for (const key of new Set([...snapshot.rows.keys(), ...this.rows.keys()])) {
      const seen = this.rows.get(key);
      const now = snapshot.rows.get(key);
      if (sameBytes(seen, now)) continue;
      if ((this.ownWrites.get(key) ?? -1) > snapshot.version) continue;
      const seenRecord = seen === undefined ? null : this.codec.decode(seen);
      const nowRecord = now === undefined ? null : this.codec.decode(now);
      const { ns, topic, group } = (nowRecord ?? seenRecord)!;
      const scope: RowScope = { ns, topic, group };
      if (engine.writing(scope) || !engine.holds(scope, seenRecord)) {
        // Keep the row as seen: the delete on its way is conditional on it, and must not match a newer row.
        unsettled = true;
        continue;
      }
      if (now === undefined) this.rows.delete(key);
      else this.rows.set(key, now);
      changes.push({ scope, record: nowRecord });
    }
    for (const [key, written] of this.ownWrites) if (written <= snapshot.version) this.ownWrites.delete(key);
    // With a scope left unsettled, read again at the next poll, whether or not the counter moves.
    if (!unsettled) this.version = snapshot.version;
    return changes;
  }
}
