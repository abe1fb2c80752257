// The one file that knows which PostgreSQL driver orq uses: Bun's built-in
// `SQL` client (no dependency, compiled into the binary). Everything else in
// storage/postgres/ talks to the small SqlClient interface below, in plain SQL
// text with $1.. parameters and rows as arrays, so another driver (`postgres`
// on npm, say) could replace this file alone.
//
// Parameter shapes the callers use: numbers, strings, booleans, null,
// Uint8Array (bytea), and plain JS arrays of those for a parameter the SQL
// casts to an array type ($1::bigint[], $2::bytea[]). Result values: int4 as number, int8 as a decimal string
// (int8Value converts), bytea as a Uint8Array (a Buffer), text as string.

import { SQL } from "bun";

export type SqlRow = unknown[];

export interface SqlSession {
  /** Run one statement; rows as arrays of column values, in select order. */
  query(text: string, params?: readonly unknown[]): Promise<SqlRow[]>;
  /**
   * Send several statements at once without waiting for each answer (one
   * round trip inside a transaction); resolves with each one's rows, in order.
   */
  pipeline(statements: ReadonlyArray<{ text: string; params?: readonly unknown[] }>): Promise<SqlRow[][]>;
}

export interface SqlClient extends SqlSession {
  /** Run `work` in one transaction (READ COMMITTED): COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A PostgreSQL URL with its password hidden, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/]+):[^@]*@/, "$1:***@");
}

/** An int8 column value (a decimal string, or a number for small values) as a safe integer. */
export function int8Value(value: unknown): number {
  const n = typeof value === "number" ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`int8 value ${String(value)} is not a safe integer`);
  return n;
}

/** Rows a statement inserted, updated or deleted, read from its result (Bun sets `count` on every result). */
export function affectedRows(result: SqlRow[]): number {
  const count = (result as SqlRow[] & { count?: unknown }).count;
  if (typeof count !== "number") throw new Error("the SQL driver reported no row count");
  return count;
}

/** A bytea column value as the driver gave it, for a caller that copies it at once (a view the driver may reuse). */
export function byteaView(value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new Error(`expected bytea, got ${typeof value}`);
  return value;
}

/** A bytea column value as a plain Uint8Array of its own (not a view into a shared read buffer). */
export function byteaValue(value: unknown): Uint8Array {
  return new Uint8Array(byteaView(value));
}

export interface SqlClientOptions {
  url: string;
  /** Connections in the pool. */
  maxConnections: number;
  /** Seconds to wait for a connection before a query fails. */
  connectTimeoutS: number;
  /** Startup parameters (GUCs) for every connection, e.g. synchronous_commit. */
  settings: Record<string, string>;
  /** PostgreSQL application_name, shown in pg_stat_activity. */
  applicationName: string;
}

class BunSession implements SqlSession {
  constructor(protected readonly sql: SQL) {}

  async query(text: string, params: readonly unknown[] = []): Promise<SqlRow[]> {
    return (await this.sql.unsafe(text, params as unknown[]).values()) as SqlRow[];
  }

  async pipeline(statements: ReadonlyArray<{ text: string; params?: readonly unknown[] }>): Promise<SqlRow[][]> {
    const running = statements.map(({ text, params }) => this.sql.unsafe(text, (params ?? []) as unknown[]).values().execute());
    return (await Promise.all(running)) as SqlRow[][];
  }
}

class BunClient extends BunSession implements SqlClient {
  async transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T> {
    return (await this.sql.begin(async (tx) => await work(new BunSession(tx as unknown as SQL)))) as T;
  }

  async close(): Promise<void> {
    await this.sql.close({ timeout: 0 });
  }
}

export function connectSql(options: SqlClientOptions): SqlClient {
  const sql = new SQL({
    url: options.url,
    max: options.maxConnections,
    connectionTimeout: options.connectTimeoutS,
    idleTimeout: 0,
    prepare: true,
    connection: { ...options.settings, application_name: options.applicationName },
  });
  return new BunClient(sql);
}
