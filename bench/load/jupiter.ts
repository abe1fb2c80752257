// The Jupiter scenario: capability matching under many small requests, the
// way Jupiter's workers acquire work. A backlog of items over 100 distinct
// `requires` signatures sits in one topic; workers of 10 kinds (one kind per
// connection, 10 connections) each keep 32 requests in flight, and every
// request is an acquisition: dequeue of count 1 with the kind's
// `capabilities`, then an ack of what it got (jupiter-worker.ts: the replies
// are read where they lie, not decoded whole). Beside it, on the same server
// and with the same connections and in-flight depth, the `ping` ceiling: how
// many requests per second the server answers when it does no work at all.
// The target is acquisitions/s >= 0.25 of that ceiling. Before the
// acquisitions, one dequeue, its ack and a ping are captured; after the server
// stops, the same client runs the same acquisitions and pings against the
// Jupiter floor (jupiter-floor.ts), which answers with those replies and does
// nothing else: its ratio is the most any server could give this client here.
//
// Signature s (0..99) requires { pool: "p<s % 10>", mem_gb: { gte: 8 * floor(s / 10) } };
// kind k has { pool: "p<k>", mem_gb: 128, os: "linux" }, so each kind may take
// the 10 signatures of its pool (a tenth of the backlog) and the matcher must
// skip the other 90 groups.

import { writeFileSync } from "node:fs";
import { Encoder } from "@msgpack/msgpack";
import type { InProcessBound } from "./jupiter-bound.ts";
import { ackHead, acquireOne, pingOnce } from "./jupiter-worker.ts";
import { OrqConn, makeTemplate } from "./orq-conn.ts";
import { Priorities, type PriorityOrder } from "./priorities.ts";
import type { Reply, RequestTemplate } from "./orq-conn.ts";
import type { Child } from "./processes.ts";
import { readProcessCpuUs, readThreadCpu, threadCpuUsPer } from "./thread-cpu.ts";
import { NAMESPACE, fixedPayload } from "./systems.ts";

export const JUPITER_TOPIC = "jupiter";
/** Distinct `requires` signatures in the backlog (100). */
export const JUPITER_SIGNATURES = 100;
/** Worker kinds, one per connection (10). */
export const JUPITER_KINDS = 10;
/** Requests each connection keeps in flight (32). */
export const JUPITER_IN_FLIGHT = 32;
/** Items per enqueue while loading the backlog: one of each signature. */
const LOAD_BATCH = JUPITER_SIGNATURES;
/** Enqueue requests in flight per connection while loading. */
const LOAD_DEPTH = 16;

export interface JupiterOptions {
  /** Ready items loaded before the acquisitions start (a multiple of 100 is used). */
  items: number;
  /** Longest acquisition run; it ends sooner when the backlog is used up. */
  durationS: number;
  /** Length of the ping-ceiling run. */
  pingDurationS: number;
  /** The server's pid, to read its CPU time (/proc/<pid>/stat) around each run; null skips the CPU figures. */
  serverPid: number | null;
  /** The backlog's priorities (priorities.ts); random 0..1000 unless given. */
  order?: PriorityOrder;
}

export interface JupiterFigures {
  items: number;
  signatures: number;
  kinds: number;
  connections: number;
  inFlightPerConnection: number;
  /** Items loaded per second (batches of 100, one of each signature). */
  loadItemsPerS: number;
  acquisitions: number;
  seconds: number;
  /** Dequeues of count 1 that delivered an item, each acked, per second. */
  acquisitionsPerS: number;
  pings: number;
  pingSeconds: number;
  /** Pings answered per second, same connections and in-flight depth: the ceiling. */
  pingPerS: number;
  /**
   * Server CPU time (user + system, all its threads) per acquisition and per
   * ping, in µs: what the ratio is made of, and far steadier than rates on a
   * shared machine. Null when /proc could not be read.
   */
  serverCpuUsPerAcquisition: number | null;
  serverCpuUsPerPing: number | null;
  /**
   * The same server CPU by thread (thread-cpu.ts): the main thread's user and
   * system time apart, then each group of helper threads, in µs per
   * acquisition and per ping, the largest first. Null when /proc could not be read.
   */
  serverThreadsUsPerAcquisition?: Record<string, number> | null;
  serverThreadsUsPerPing?: Record<string, number> | null;
  /**
   * The load generator's own CPU time (this process, all its threads) per
   * acquisition and per ping, in µs: on a machine of two cores it shares
   * them with the server, so what it spends bounds the rate too.
   */
  clientCpuUsPerAcquisition: number;
  clientCpuUsPerPing: number;
  /** The same client against a server that does no work (jupiter-floor.ts), set after the server stops; null when it could not run. */
  floor?: JupiterFloorFigures | null;
  /** The same acquisitions and pings in one process without sockets (jupiter-bound.ts), set after the server stops; null when that bench gave nothing. */
  inProcess?: InProcessBound | null;
}

function cpuUsPer(beforeUs: number | null, afterUs: number | null, count: number): number | null {
  return beforeUs === null || afterUs === null || count === 0 ? null : (afterUs - beforeUs) / count;
}

export function signatureRequires(signature: number): Record<string, unknown> {
  return { pool: `p${signature % JUPITER_KINDS}`, mem_gb: { gte: 8 * Math.floor(signature / JUPITER_KINDS) } };
}

export function kindCapabilities(kind: number): Record<string, unknown> {
  return { pool: `p${kind}`, mem_gb: 128, os: "linux" };
}

/** Runs `depth` loops on each connection until each returns false; resolves when all have. */
async function keepInFlight(conns: OrqConn[], depth: number, step: (conn: OrqConn, index: number) => Promise<boolean>): Promise<void> {
  await Promise.all(
    conns.flatMap((conn, index) =>
      Array.from({ length: depth }, async () => {
        while (await step(conn, index)) {
          // One request (or acquisition) per turn of the loop; the next starts as soon as it is answered.
        }
      }),
    ),
  );
}

/**
 * Reply bodies orq sent in the run, by op ("dequeue" with one delivery,
 * "ack", "ping"), each with `id` first as a uint32: what the Jupiter floor
 * answers with (jupiter-floor.ts).
 */
export type CapturedReplies = Record<"dequeue" | "ack" | "ping", Uint8Array>;

/** What the same client reaches against a server that does no work (jupiter-floor.ts). */
export interface JupiterFloorFigures {
  acquisitionsPerS: number;
  pingPerS: number;
  /** acquisitionsPerS / pingPerS: the most any server could give the scenario's ratio with this client on this machine. */
  ratio: number;
  clientCpuUsPerAcquisition: number;
  clientCpuUsPerPing: number;
  /** The floor process's CPU per acquisition and per ping (framing, one write per turn), in µs; null when /proc could not be read. */
  floorCpuUsPerAcquisition: number | null;
  floorCpuUsPerPing: number | null;
  seconds: number;
}

export async function runJupiter(host: string, port: number, options: JupiterOptions): Promise<{ figures: JupiterFigures; replies: CapturedReplies }> {
  const conns = await Promise.all(Array.from({ length: JUPITER_KINDS }, () => OrqConn.connect(host, port)));
  try {
    const loaded = await loadBacklog(conns, options.items, new Priorities(options.order ?? "random"));
    const replies = await captureReplies(conns[0] as OrqConn);
    const threadsBeforeAcquire = readThreadCpu(options.serverPid);
    const cpuBeforeAcquireUs = readProcessCpuUs(options.serverPid);
    const clientBeforeAcquireUs = ownCpuUs();
    const acquired = await acquire(conns, loaded.items - 1, options.durationS);
    const cpuBeforePingUs = readProcessCpuUs(options.serverPid);
    const threadsBeforePing = readThreadCpu(options.serverPid);
    const clientBeforePingUs = ownCpuUs();
    const pinged = await pingCeiling(conns, options.pingDurationS);
    const cpuAfterPingUs = readProcessCpuUs(options.serverPid);
    const threadsAfterPing = readThreadCpu(options.serverPid);
    const clientAfterPingUs = ownCpuUs();
    const figures: JupiterFigures = {
      items: loaded.items,
      signatures: JUPITER_SIGNATURES,
      kinds: JUPITER_KINDS,
      connections: conns.length,
      inFlightPerConnection: JUPITER_IN_FLIGHT,
      loadItemsPerS: loaded.items / loaded.seconds,
      acquisitions: acquired.count,
      seconds: acquired.seconds,
      acquisitionsPerS: acquired.count / acquired.seconds,
      pings: pinged.count,
      pingSeconds: pinged.seconds,
      pingPerS: pinged.count / pinged.seconds,
      serverCpuUsPerAcquisition: cpuUsPer(cpuBeforeAcquireUs, cpuBeforePingUs, acquired.count),
      serverCpuUsPerPing: cpuUsPer(cpuBeforePingUs, cpuAfterPingUs, pinged.count),
      serverThreadsUsPerAcquisition: threadCpuUsPer(threadsBeforeAcquire, threadsBeforePing, acquired.count),
      serverThreadsUsPerPing: threadCpuUsPer(threadsBeforePing, threadsAfterPing, pinged.count),
      clientCpuUsPerAcquisition: (clientBeforePingUs - clientBeforeAcquireUs) / Math.max(1, acquired.count),
      clientCpuUsPerPing: (clientAfterPingUs - clientBeforePingUs) / Math.max(1, pinged.count),
    };
    return { figures, replies };
  } finally {
    for (const conn of conns) conn.close();
  }
}

/**
 * The same acquisitions and pings, from the same client, against the Jupiter
 * floor started by `startFloor` with `replies` written to `repliesPath`.
 * Unbounded acquisitions for `durationS` (the floor never runs out), then
 * pings for as long.
 */
export async function runJupiterFloor(
  replies: CapturedReplies,
  repliesPath: string,
  startFloor: (repliesPath: string) => Promise<Child>,
  durationS: number,
): Promise<JupiterFloorFigures> {
  writeFileSync(repliesPath, new Encoder().encode(replies));
  const floor = await startFloor(repliesPath);
  const conns = await Promise.all(Array.from({ length: JUPITER_KINDS }, () => OrqConn.connect(floor.host, floor.port)));
  try {
    const beforeAcquireUs = ownCpuUs();
    const floorBeforeAcquireUs = readProcessCpuUs(floor.pid);
    const acquired = await acquire(conns, Infinity, durationS);
    const beforePingUs = ownCpuUs();
    const floorBeforePingUs = readProcessCpuUs(floor.pid);
    const pinged = await pingCeiling(conns, durationS);
    const afterPingUs = ownCpuUs();
    const floorAfterPingUs = readProcessCpuUs(floor.pid);
    const acquisitionsPerS = acquired.count / acquired.seconds;
    const pingPerS = pinged.count / pinged.seconds;
    return {
      acquisitionsPerS,
      pingPerS,
      ratio: acquisitionsPerS / pingPerS,
      clientCpuUsPerAcquisition: (beforePingUs - beforeAcquireUs) / Math.max(1, acquired.count),
      clientCpuUsPerPing: (afterPingUs - beforePingUs) / Math.max(1, pinged.count),
      floorCpuUsPerAcquisition: cpuUsPer(floorBeforeAcquireUs, floorBeforePingUs, acquired.count),
      floorCpuUsPerPing: cpuUsPer(floorBeforePingUs, floorAfterPingUs, pinged.count),
      seconds: acquired.seconds,
    };
  } finally {
    for (const conn of conns) conn.close();
    await floor.stop();
  }
}

/** This process's CPU time so far (user + system, all threads), in µs. */
function ownCpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * One dequeue (kind 0), its ack and a ping, each reply encoded again at once
 * with `id` first: inside the reply handler, while its bin fields still view
 * the connection's input (orq-conn.ts's `send`).
 */
async function captureReplies(conn: OrqConn): Promise<CapturedReplies> {
  const encoder = new Encoder();
  const reencode = (reply: Reply): Uint8Array => {
    if (reply.ok !== true) throw new Error(`jupiter: capture answered ${JSON.stringify(reply)}`);
    const { id, ...rest } = reply;
    return encoder.encode({ id, ...rest });
  };
  const call = (request: Record<string, unknown>): Promise<{ reply: Reply; body: Uint8Array }> =>
    new Promise((resolve, reject) =>
      conn.send(request, (reply) => {
        try {
          resolve({ reply, body: reencode(reply) });
        } catch (error) {
          reject(error);
        }
      }),
    );
  const dequeued = await call({ op: "dequeue", ns: NAMESPACE, topics: [{ topic: JUPITER_TOPIC, count: 1 }], capabilities: kindCapabilities(0), wait_ms: 0 });
  const item = (dequeued.reply.items as Array<{ receipt: string }> | undefined)?.[0];
  if (item === undefined) throw new Error("jupiter: the capture's dequeue delivered nothing");
  const acked = await call({ op: "ack", ns: NAMESPACE, receipts: [item.receipt] });
  const pinged = await call({ op: "ping" });
  return { dequeue: dequeued.body, ack: acked.body, ping: pinged.body };
}

async function loadBacklog(conns: OrqConn[], items: number, priorities: Priorities): Promise<{ items: number; seconds: number }> {
  const payload = fixedPayload();
  // Random priorities come from a pool of templates, used in turn (priorities.ts).
  const templates = Array.from({ length: priorities.poolSize }, () =>
    makeTemplate({
      op: "enqueue",
      ns: NAMESPACE,
      items: Array.from({ length: LOAD_BATCH }, (_, i) => ({ topic: JUPITER_TOPIC, payload, priority: priorities.next(), requires: signatureRequires(i % JUPITER_SIGNATURES) })),
    }),
  );
  let sent = 0;
  let left = Math.max(1, Math.round(items / LOAD_BATCH));
  const requests = left;
  const startMs = performance.now();
  await keepInFlight(conns, LOAD_DEPTH, async (conn) => {
    if (left === 0) return false;
    left--;
    await conn.callTemplate(templates[sent++ % templates.length] as RequestTemplate);
    return true;
  });
  return { items: requests * LOAD_BATCH, seconds: (performance.now() - startMs) / 1000 };
}

async function acquire(conns: OrqConn[], items: number, durationS: number): Promise<{ count: number; seconds: number }> {
  const templates: RequestTemplate[] = conns.map((_, kind) =>
    makeTemplate({ op: "dequeue", ns: NAMESPACE, topics: [{ topic: JUPITER_TOPIC, count: 1 }], capabilities: kindCapabilities(kind), wait_ms: 0 }),
  );
  const ack = ackHead(NAMESPACE);
  let count = 0;
  const startMs = performance.now();
  const endMs = startMs + durationS * 1000;
  const exhausted = new Set<number>();
  await keepInFlight(conns, JUPITER_IN_FLIGHT, async (conn, kind) => {
    if (count >= items || exhausted.has(kind) || performance.now() >= endMs) return false;
    if (!(await acquireOne(conn, templates[kind] as RequestTemplate, ack))) {
      // This kind's tenth of the backlog is used up.
      exhausted.add(kind);
      return false;
    }
    count++;
    return true;
  });
  return { count, seconds: (performance.now() - startMs) / 1000 };
}

async function pingCeiling(conns: OrqConn[], durationS: number): Promise<{ count: number; seconds: number }> {
  const ping = makeTemplate({ op: "ping" });
  let count = 0;
  const startMs = performance.now();
  const endMs = startMs + durationS * 1000;
  await keepInFlight(conns, JUPITER_IN_FLIGHT, async (conn) => {
    if (performance.now() >= endMs) return false;
    await pingOnce(conn, ping);
    count++;
    return true;
  });
  return { count, seconds: (performance.now() - startMs) / 1000 };
}
