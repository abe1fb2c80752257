// WAL written by the whole PostgreSQL cluster between two points, read with
// pg_current_wal_lsn(). A checkpoint before each mark makes every run start
// from the same state: the first change to each page after a checkpoint logs
// the full page (full_page_writes), and a run measured just after another
// system's checkpoint would otherwise pay less of that than one that was not.
// The count is cluster-wide, so it includes whatever else writes meanwhile
// (a node's shard-lease renewals, a library's own bookkeeping): that is part
// of what the system costs the database.

import { SQL } from "bun";

export class WalMeter {
  private readonly sql: SQL;

  constructor(adminUrl: string) {
    this.sql = new SQL({ url: adminUrl, max: 1 });
  }

  /** Checkpoint, then the current WAL position (an LSN as text). */
  async mark(): Promise<string> {
    await this.sql.unsafe("CHECKPOINT");
    return await this.position();
  }

  /** The current WAL position, without a checkpoint (to leave a span out of a figure). */
  async position(): Promise<string> {
    const rows = (await this.sql.unsafe("SELECT pg_current_wal_lsn()::text AS lsn")) as Array<{ lsn: string }>;
    return rows[0]!.lsn;
  }

  /** Bytes of WAL written since `lsn`. */
  async bytesSince(lsn: string): Promise<number> {
    const rows = (await this.sql.unsafe("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8 AS bytes", [lsn])) as Array<{ bytes: number }>;
    return Number(rows[0]!.bytes);
  }

  /** The server's version and the settings that decide what a commit costs, for the result file. */
  async serverSettings(): Promise<Record<string, string>> {
    const names = ["server_version", "fsync", "synchronous_commit", "full_page_writes", "wal_level"];
    const rows = (await this.sql.unsafe("SELECT name, setting FROM pg_settings WHERE name = ANY($1)", [names])) as Array<{ name: string; setting: string }>;
    return Object.fromEntries(rows.map((row) => [row.name, row.setting]));
  }

  async close(): Promise<void> {
    await this.sql.close();
  }
}
