// Ping round trip over loopback: one connection, sequential requests (each
// waits for its reply). Three figures from one run: the floor (a raw client
// against a Bun echo server, bench/ping-echo-server.ts), orq through the same
// raw client (server cost), and orq through the TypeScript client (what an
// application sees). The server and this process are pinned to one CPU with
// taskset when it is available (on this kind of machine a cross-CPU wake-up
// costs tens of microseconds and would dominate the figure).
//
//   ./node_modules/.bin/bun bench/ping-rtt.ts [--count 20000] [--warmup 2000] [--cpu 0] [--pin-all]
//
// Prints p50/p90/p99/p99.9/max in microseconds, as text and as one JSON line.

import { spawn, spawnSync } from "node:child_process";
import { Socket } from "node:net";
import { join } from "node:path";
import { OrqClient } from "../src/client/index.ts";
import { FrameEncoder } from "../src/protocol/frame-encoder.ts";
import { bunPath, ServerProcess } from "../test/support/server-process.ts";

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

const count = argument("count", 20_000);
const warmup = argument("warmup", 2_000);
const cpu = argument("cpu", 0);
const hasTaskset = spawnSync("taskset", ["--version"]).status === 0;
// By default only each process's main thread (its event loop) is pinned: pinning
// every thread (--pin-all) puts the runtime's GC and LMDB helper threads on the
// same CPU, and their preemptions then dominate p99 (measured: p99 ~1 ms
// instead of ~0.1 ms for orq, while the echo floor barely changes).
const pinAllThreads = process.argv.includes("--pin-all");

function pin(pid: number): boolean {
  if (!hasTaskset) return false;
  return spawnSync("taskset", [...(pinAllThreads ? ["-a"] : []), "-p", "-c", String(cpu), String(pid)]).status === 0;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Summary {
  p50_us: number;
  p90_us: number;
  p99_us: number;
  p999_us: number;
  max_us: number;
}

function summarize(samples: Float64Array): Summary {
  samples.sort();
  return {
    p50_us: +percentile(samples, 50).toFixed(1),
    p90_us: +percentile(samples, 90).toFixed(1),
    p99_us: +percentile(samples, 99).toFixed(1),
    p999_us: +percentile(samples, 99.9).toFixed(1),
    max_us: +samples[samples.length - 1]!.toFixed(1),
  };
}

/** Sequential pings with a bare socket: write one 17-byte ping frame, wait for the whole reply frame. */
async function rawPings(port: number): Promise<Summary> {
  const socket = new Socket();
  socket.setNoDelay(true);
  await new Promise<void>((resolve) => socket.connect(port, "127.0.0.1", () => resolve()));
  const frame = new FrameEncoder().encode({ id: 1, op: "ping" });
  let buffered = 0;
  let expected = 0;
  let wake: (() => void) | null = null;
  socket.on("data", (chunk: Buffer) => {
    if (expected === 0 && chunk.length >= 4) expected = 4 + chunk.readUInt32BE(0);
    buffered += chunk.length;
    if (buffered >= expected && wake !== null) {
      const w = wake;
      wake = null;
      w();
    }
  });
  const once = (): Promise<void> =>
    new Promise<void>((resolve) => {
      buffered = 0;
      expected = 0;
      wake = resolve;
      socket.write(frame);
    });
  for (let i = 0; i < warmup; i++) await once();
  const samples = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const start = Bun.nanoseconds();
    await once();
    samples[i] = (Bun.nanoseconds() - start) / 1000;
  }
  socket.destroy();
  return summarize(samples);
}

async function startEcho(): Promise<{ port: number; pid: number; stop(): void }> {
  const child = spawn(bunPath, [join(import.meta.dir, "ping-echo-server.ts")], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      const match = /:(\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
  });
  return { port, pid: child.pid!, stop: () => child.kill("SIGKILL") };
}

const echo = await startEcho();
const server = await ServerProcess.start({ args: ["--log-level", "warn"] });
try {
  const pinned = pin(echo.pid) && pin(server.pid!) && pin(process.pid);
  const floor = await rawPings(echo.port);
  echo.stop();
  const orqRaw = await rawPings(server.port);
  const client = await OrqClient.connect({ port: server.port });
  for (let i = 0; i < warmup; i++) await client.ping();
  const samples = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const start = Bun.nanoseconds();
    await client.ping();
    samples[i] = (Bun.nanoseconds() - start) / 1000;
  }
  await client.close();
  const orqClient = summarize(samples);
  const result = { bench: "ping-rtt", count, warmup, pinned_cpu: pinned ? cpu : null, pinned_threads: pinAllThreads ? "all" : "main", echo_floor: floor, orq_raw_client: orqRaw, orq_ts_client: orqClient };
  const line = (name: string, r: Summary) =>
    `  ${name.padEnd(22)} p50 ${r.p50_us} µs  p90 ${r.p90_us} µs  p99 ${r.p99_us} µs  p99.9 ${r.p999_us} µs  max ${r.max_us} µs`;
  console.log(
    `ping round trip, ${count} sequential pings after ${warmup} warm-up, ${pinned ? `${pinAllThreads ? "all threads" : "main threads"} of all processes pinned to CPU ${cpu}` : "not pinned"}:\n` +
      [line("echo floor (raw)", floor), line("orq, raw client", orqRaw), line("orq, OrqClient", orqClient)].join("\n"),
  );
  console.log(JSON.stringify(result));
} finally {
  echo.stop();
  await server.cleanup();
}
