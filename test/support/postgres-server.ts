// A real PostgreSQL server for tests, from Debian's binaries
// ($(pg_config --bindir), not on PATH):
//   const pg = await sharedPostgres();               // in beforeAll or a harness
//   const url = await pg.createDatabase("store");    // a fresh database per test
//   ... test against url ...
//   afterAll(() => releasePostgres());               // the last user stops it
// bun runs test files one after another, so each file that uses PostgreSQL
// starts one server (about 2 s) and stops it (pg_ctl -m immediate stop) when
// it is done. A watchdog shell stops the server if the test process dies
// without doing so (bun test fires no "exit" event).
// The server runs from a temp dir on a free loopback port, as the `postgres`
// user via `runuser` when the tests run as root (PostgreSQL refuses root),
// with trust authentication for the `orq` superuser and fsync off (a test
// server's data does not need to survive a power cut; durability of the
// orq side is what the tests check).
//
// A test that stops PostgreSQL under load starts its own with startPostgres()
// (nobody else's tests see it) and uses crash() (pg_ctl -m immediate stop,
// data kept) and restart() (same port, crash recovery) on it.
//
// postgresAvailable() says whether the binaries are installed; tests use it to
// skip, unless ORQ_REQUIRE_POSTGRES=1 (set by .ci/run after installing
// postgresql), which turns a missing PostgreSQL into a failure.

import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";

export interface PostgresServer {
  readonly port: number;
  /** postgres:// URL of the `postgres` maintenance database. */
  readonly adminUrl: string;
  /** Create a fresh database (name made unique) and return its URL. */
  createDatabase(label: string): Promise<string>;
  /** pg_ctl -m immediate stop, keeping the data dir: a crash, as far as clients and recovery can tell; async, so the caller's load goes on meanwhile. */
  crash(): Promise<void>;
  /** Start again after crash(), on the same port and data dir (crash recovery runs first); async as crash(). */
  restart(): Promise<void>;
  /** pg_ctl -m immediate stop, and remove the temp dir. */
  stop(): void;
}

function pgBinDir(): string | null {
  const result = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  if (result.status !== 0 || typeof result.stdout !== "string") return null;
  const dir = result.stdout.trim();
  return existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl")) ? dir : null;
}

const binDir = pgBinDir();
const required = process.env.ORQ_REQUIRE_POSTGRES === "1";

/** Whether tests that need PostgreSQL can run; throws when required but missing. */
export function postgresAvailable(): boolean {
  if (binDir === null && required) throw new Error("ORQ_REQUIRE_POSTGRES=1 but PostgreSQL's binaries (pg_config --bindir) are missing");
  return binDir !== null;
}

const isRoot = process.getuid?.() === 0;

function run(command: string, args: string[]): void {
  const argv = isRoot ? ["-u", "postgres", "--", command, ...args] : args;
  const result = spawnSync(isRoot ? "runuser" : command, argv, { encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.status}): ${result.stderr || result.stdout}`);
  }
}

/** run(), without blocking the test's event loop meanwhile. */
async function runAsync(command: string, args: string[]): Promise<void> {
  const argv = isRoot ? ["-u", "postgres", "--", command, ...args] : args;
  const child = spawn(isRoot ? "runuser" : command, argv, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const status = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${status}): ${output}`);
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A detached shell that waits for this test process to end and then stops the
 * server and removes its dir (a no-op when stop() already did): a killed or
 * crashed test run leaves no PostgreSQL behind.
 */
function startWatchdog(dataDir: string, dir: string): void {
  if (binDir === null) return;
  const stop = `${isRoot ? "runuser -u postgres -- " : ""}${join(binDir, "pg_ctl")} -D ${dataDir} -m immediate -w stop`;
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; if [ -d ${dataDir} ]; then ${stop}; rm -rf ${dir}; fi`;
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
  child.unref();
}

/** Start a new server (about 2 s). Prefer sharedPostgres(). Benchmarks pass fsync: true (a real server's setting). */
export async function startPostgres(options: { fsync?: boolean } = {}): Promise<PostgresServer> {
  if (!postgresAvailable() || binDir === null) throw new Error("PostgreSQL is not installed");
  const dir = mkdtempSync(join(tmpdir(), "orq-pg-"));
  chmodSync(dir, 0o755);
  if (isRoot) {
    const ids = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const gids = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
    chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  const dataDir = join(dir, "data");
  run(join(binDir, "initdb"), ["-D", dataDir, "-U", "orq", "-A", "trust", "--no-sync"]);
  const serverOptions = (port: number) =>
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=${options.fsync === true ? "on" : "off"} -c max_connections=200`;
  const pgCtl = join(binDir, "pg_ctl");
  const startOn = (port: number) => run(pgCtl, ["-D", dataDir, "-l", join(dir, "log"), "-w", "-o", serverOptions(port), "start"]);
  // A port taken between freePort and start makes pg_ctl fail: try a few.
  let port = 0;
  let lastError: unknown = null;
  for (let attempt = 0; attempt < 5 && port === 0; attempt++) {
    const candidate = await freePort();
    try {
      startOn(candidate);
      port = candidate;
    } catch (error) {
      lastError = error;
    }
  }
  if (port === 0) throw lastError instanceof Error ? lastError : new Error("pg_ctl start failed");
  startWatchdog(dataDir, dir);
  const adminUrl = `postgres://orq@127.0.0.1:${port}/postgres`;
  let stopped = false;
  let crashed = false;
  let databases = 0;
  return {
    port,
    adminUrl,
    async createDatabase(label: string): Promise<string> {
      databases++;
      const name = `orq_${label.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}_${process.pid}_${databases}`;
      const admin = new SQL({ url: adminUrl, max: 1 });
      try {
        await admin.unsafe(`CREATE DATABASE "${name}"`);
      } finally {
        await admin.close();
      }
      return `postgres://orq@127.0.0.1:${port}/${name}`;
    },
    async crash(): Promise<void> {
      await runAsync(pgCtl, ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      crashed = true;
    },
    async restart(): Promise<void> {
      await runAsync(pgCtl, ["-D", dataDir, "-l", join(dir, "log"), "-w", "-o", serverOptions(port), "start"]);
      crashed = false;
    },
    stop(): void {
      if (stopped) return;
      stopped = true;
      try {
        if (!crashed) run(pgCtl, ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

let shared: Promise<PostgresServer> | null = null;
let users = 0;

/** The shared server, started on first use; every call must be matched by one releasePostgres(). */
export function sharedPostgres(): Promise<PostgresServer> {
  users++;
  if (shared === null) shared = startPostgres();
  return shared;
}

/** One user is done; the last one stops the server. */
export async function releasePostgres(): Promise<void> {
  if (shared === null || users === 0) return;
  users--;
  if (users > 0) return;
  const server = await shared;
  shared = null;
  server.stop();
}
