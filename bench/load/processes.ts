// Child processes the load generator measures: the orq server, beanstalkd and
// the echo floor. Each is started on 127.0.0.1 with a free port, is known by
// its pid (for /proc memory figures and CPU pinning), and is stopped by that
// pid alone. Server output goes to a log file in the run's temp folder.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { statCpuUs } from "./thread-cpu.ts";

const REPO_ROOT = join(import.meta.dir, "..", "..");
/** ORQ_BENCH_MAIN runs another checkout's server under this load generator (a before/after comparison on one machine state). */
const ORQ_MAIN = process.env.ORQ_BENCH_MAIN ?? join(REPO_ROOT, "src", "cli", "main.ts");
/** The checkout whose server runs (ORQ_BENCH_MAIN's, else this one): its own benches measure the same code. */
export const ORQ_CHECKOUT_ROOT = join(ORQ_MAIN, "..", "..", "..");
const ECHO_MAIN = join(import.meta.dir, "echo-floor.ts");
const JUPITER_FLOOR_MAIN = join(import.meta.dir, "jupiter-floor.ts");
/** A 1M-item restart replays the whole store; allow it generous time before calling it hung. */
const READY_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 30_000;

export type Durability = "strict" | "relaxed";

export interface Child {
  name: string;
  host: string;
  port: number;
  pid: number;
  proc: Subprocess;
  /** SIGTERM, then SIGKILL if it has not exited in time; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash, for restart-recovery figures. */
  kill(): Promise<void>;
}

export function orqAvailable(): boolean {
  return existsSync(ORQ_MAIN);
}

export function beanstalkdPath(): string | null {
  return Bun.which("beanstalkd");
}

/**
 * `serveFlags` are added to `orq serve`'s arguments (e.g. `--log-level debug`).
 * A flag, not the environment: Bun.spawn without `env` hands the child the
 * environment this process started with, not later changes to process.env.
 */
export async function startOrq(dataDir: string, durability: Durability, logPath: string, serveFlags: readonly string[] = []): Promise<Child> {
  const argv = [
    process.execPath, ...(process.env.ORQ_BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.ORQ_BENCH_CPU_PROF}`] : []), ORQ_MAIN, "serve",
    "--host", "127.0.0.1", "--port", "0", "--http-port", "0", "--ui-port", "off",
    "--data-dir", dataDir, "--shards", "16", "--durability", durability, ...serveFlags,
  ];
  return startWithBanner("orq", argv, /orq listening on ([^\s:]+):(\d+)/, logPath);
}

/** orq with its beanstalkd-compatible port: the child's host and port are that port's (the load talks beanstalkd's protocol to it). */
export async function startOrqBeanstalk(dataDir: string, durability: Durability, logPath: string): Promise<Child> {
  const argv = [
    process.execPath, ORQ_MAIN, "serve",
    "--host", "127.0.0.1", "--port", "0", "--http-port", "0", "--beanstalk-port", "0",
    "--data-dir", dataDir, "--shards", "16", "--durability", durability,
  ];
  return startWithBanner("orq", argv, /orq beanstalk on ([^\s:]+):(\d+)/, logPath);
}

export async function startEcho(logPath: string): Promise<Child> {
  const argv = [process.execPath, ECHO_MAIN, "--host", "127.0.0.1", "--port", "0"];
  return startWithBanner("echo", argv, /echo listening on ([^\s:]+):(\d+)/, logPath);
}

/** The Jupiter floor (jupiter-floor.ts), answering with the reply bodies in `repliesPath`. */
export async function startJupiterFloorChild(repliesPath: string, logPath: string): Promise<Child> {
  const argv = [process.execPath, JUPITER_FLOOR_MAIN, "--host", "127.0.0.1", "--port", "0", "--replies", repliesPath];
  return startWithBanner("jupiter floor", argv, /jupiter floor listening on ([^\s:]+):(\d+)/, logPath);
}

/** `binlogDir` null = in memory; `fsyncMs` null = beanstalkd's default policy (at most every 50 ms). */
export async function startBeanstalkd(binlogDir: string | null, fsyncMs: number | null, logPath: string): Promise<Child> {
  const binary = beanstalkdPath();
  if (binary === null) throw new Error("beanstalkd not installed");
  const port = await freePort();
  const argv = [binary, "-l", "127.0.0.1", "-p", String(port), "-z", "65535"];
  if (binlogDir !== null) argv.push("-b", binlogDir);
  if (fsyncMs !== null) argv.push("-f", String(fsyncMs));
  const proc = Bun.spawn(argv, { stdout: "ignore", stderr: Bun.file(logPath) });
  const deadline = performance.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`beanstalkd exited with ${proc.exitCode}`);
    if (await canConnect(port)) break;
    if (performance.now() > deadline) throw new Error("beanstalkd did not start listening");
    await Bun.sleep(5);
  }
  return makeChild("beanstalkd", "127.0.0.1", port, proc);
}

async function startWithBanner(name: string, argv: string[], banner: RegExp, logPath: string): Promise<Child> {
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: Bun.file(logPath), cwd: REPO_ROOT });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const timer = setTimeout(() => proc.kill("SIGKILL"), READY_TIMEOUT_MS);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      clearTimeout(timer);
      throw new Error(`${name} exited before listening (code ${await proc.exited}); stdout: ${seen.slice(-500)}; log: ${tail(logPath)}`);
    }
    seen += decoder.decode(value, { stream: true });
    const match = banner.exec(seen);
    if (match !== null) {
      clearTimeout(timer);
      void discardRest(reader);
      return makeChild(name, match[1] ?? "127.0.0.1", Number(match[2]), proc);
    }
  }
}

/** Keeps reading stdout so a chatty server never blocks on a full pipe. */
async function discardRest(reader: { read(): Promise<{ done: boolean }> }): Promise<void> {
  for (;;) {
    const { done } = await reader.read();
    if (done) return;
  }
}

function makeChild(name: string, host: string, port: number, proc: Subprocess): Child {
  return {
    name, host, port, pid: proc.pid, proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), STOP_TIMEOUT_MS);
      const code = await proc.exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

function tail(path: string): string {
  if (!existsSync(path)) return "(no log)";
  return readFileSync(path, "utf8").slice(-1500);
}

export async function freePort(): Promise<number> {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

async function canConnect(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    // Refused: the server is not listening yet; the caller retries until its deadline.
    return false;
  }
}

export interface MemoryFigures {
  rssKiB: number;
  /**
   * VmRSS split as /proc/PID/status reports it: RssAnon is anonymous memory
   * (the JS heap, malloc, stacks); RssFile is file-backed pages mapped in,
   * for orq mostly LMDB's data file (page cache the kernel can drop and
   * re-read) and the runtime's own binary. RssShmem is left out (0 here).
   */
  rssAnonKiB: number;
  rssFileKiB: number;
  /** Private_Clean + Private_Dirty from smaps_rollup: what this process alone holds (LMDB's shared map pages excluded). */
  privateKiB: number;
  privateDirtyKiB: number;
  /** orq's LMDB data file as mapped (null for a process that maps none, such as beanstalkd). */
  lmdb?: MappedFileFigures | null;
}

/**
 * One mapped file's pages in a process (/proc/PID/smaps, every mapping whose
 * path ends with the name): for orq, LMDB's data.mdb. Clean pages match the
 * file on disk: under memory pressure the kernel drops them without writing
 * anything and reads them back on the next touch. Dirty pages (a write map
 * not yet synced) would have to be written first.
 */
export interface MappedFileFigures {
  rssKiB: number;
  cleanKiB: number;
  dirtyKiB: number;
}

export function readMappedFile(pid: number, nameSuffix: string): MappedFileFigures | null {
  const path = `/proc/${pid}/smaps`;
  if (!existsSync(path)) return null;
  const figures: MappedFileFigures = { rssKiB: 0, cleanKiB: 0, dirtyKiB: 0 };
  let found = false;
  let inFile = false;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    // A mapping's header: "start-end perms offset dev inode [path]"; its fields follow, one a line.
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      inFile = line.trimEnd().endsWith(nameSuffix);
      found ||= inFile;
      continue;
    }
    if (!inFile) continue;
    const match = /^(\w+):\s+(\d+) kB/.exec(line);
    if (match === null) continue;
    const kiB = Number(match[2]);
    if (match[1] === "Rss") figures.rssKiB += kiB;
    else if (match[1] === "Private_Clean" || match[1] === "Shared_Clean") figures.cleanKiB += kiB;
    else if (match[1] === "Private_Dirty" || match[1] === "Shared_Dirty") figures.dirtyKiB += kiB;
  }
  return found ? figures : null;
}

/**
 * The highest (and lowest) memory of a process while a scenario runs, from
 * /proc/PID/status read every `everyMs`. The drain reads the peaks; the soak
 * reads each interval's troughs too (Infinity when nothing was read).
 */
export interface MemoryRange {
  samples: number;
  rssMaxKiB: number;
  rssAnonMaxKiB: number;
  rssFileMaxKiB: number;
  rssMinKiB: number;
  rssAnonMinKiB: number;
}

/** Reads the process's memory every `everyMs` until stopped; stop() takes a last reading and returns the range. */
export function sampleMemory(pid: number, everyMs: number): { stop(): MemoryRange } {
  const peaks: MemoryRange = { samples: 0, rssMaxKiB: 0, rssAnonMaxKiB: 0, rssFileMaxKiB: 0, rssMinKiB: Infinity, rssAnonMinKiB: Infinity };
  const sample = () => {
    if (!existsSync(`/proc/${pid}/status`)) return;
    const m = readMemory(pid, false);
    peaks.samples++;
    peaks.rssMaxKiB = Math.max(peaks.rssMaxKiB, m.rssKiB);
    peaks.rssAnonMaxKiB = Math.max(peaks.rssAnonMaxKiB, m.rssAnonKiB);
    peaks.rssFileMaxKiB = Math.max(peaks.rssFileMaxKiB, m.rssFileKiB);
    peaks.rssMinKiB = Math.min(peaks.rssMinKiB, m.rssKiB);
    peaks.rssAnonMinKiB = Math.min(peaks.rssAnonMinKiB, m.rssAnonKiB);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}

export function readMemory(pid: number, withRollup = true): MemoryFigures {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rollup = withRollup && existsSync(`/proc/${pid}/smaps_rollup`) ? readFileSync(`/proc/${pid}/smaps_rollup`, "utf8") : "";
  const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
  const privateClean = field(rollup, "Private_Clean");
  const privateDirty = field(rollup, "Private_Dirty");
  return {
    rssKiB: field(status, "VmRSS"),
    rssAnonKiB: field(status, "RssAnon"),
    rssFileKiB: field(status, "RssFile"),
    privateKiB: privateClean + privateDirty,
    privateDirtyKiB: privateDirty,
    ...(withRollup ? { lmdb: readMappedFile(pid, "/data.mdb") } : {}),
  };
}

/** CPU seconds (user + system) the process has used so far, from /proc/PID/stat; 0 once it is gone. */
/** Bytes `pid` caused to be written to storage so far (/proc/PID/io write_bytes, counted as pages are dirtied); 0 where unreadable. */
export function readWriteBytes(pid: number): number {
  try {
    const match = /^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"));
    return match === null ? 0 : Number(match[1]);
  } catch {
    return 0;
  }
}

export function readCpuS(pid: number): number {
  const path = `/proc/${pid}/stat`;
  if (!existsSync(path)) return 0;
  const { userUs, systemUs } = statCpuUs(readFileSync(path, "utf8"));
  return (userUs + systemUs) / 1e6;
}
