// The Jupiter scenario's in-process bound: the same acquisitions (dequeue of
// 1 with capabilities, then ack) and pings through the server's request path
// in one process, with no socket, no client and no other process
// (bench/micro/acquisition-path.bench.ts, relaxed, so its figure is the main
// thread's work and not an fsync's wait). Its ping-to-acquisition ratio is
// what the socket scenario's acquisitions/s against its ping ceiling could
// reach if sockets, the client and the machine's other threads cost
// nothing: the scenario's ratio cannot beat it by much, and a target above
// it asks for less work per acquisition, not a faster transport.

import { join } from "node:path";
import { ORQ_CHECKOUT_ROOT } from "./processes.ts";

export interface InProcessBound {
  items: number;
  /** Main-thread µs per acquisition (dequeue 1 with capabilities + ack + its commit), relaxed. */
  acquisitionUs: number;
  /** Main-thread µs per ping through the same path. */
  pingUs: number;
  /** pingUs / acquisitionUs: the scenario's ratio with every cost outside the request path taken away. */
  ratio: number;
}

const BENCH = "acquisition-path.bench.ts";

/** Runs the checkout's acquisition-path bench over `items` acquisitions; null (with the reason logged) when it cannot. */
export async function measureInProcessBound(items: number, log: (line: string) => void): Promise<InProcessBound | null> {
  const proc = Bun.spawn([process.execPath, join(ORQ_CHECKOUT_ROOT, "bench", "micro", BENCH), String(items), "relaxed"], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const bound = code === 0 ? parseBound(out) : null;
  if (bound === null) log(`jupiter in-process bound: ${BENCH} gave no figures (exit ${code}): ${(err || out).trim().split("\n").slice(-3).join(" | ")}`);
  return bound;
}

/** The bench's first line: "relaxed: N acquisitions, X µs each (...); ping Y µs; ratio ping/acquisition R". */
export function parseBound(output: string): InProcessBound | null {
  const match = /(\d+) acquisitions, ([\d.]+) µs each .*; ping ([\d.]+) µs; ratio ping\/acquisition ([\d.]+)/.exec(output);
  if (match === null) return null;
  return { items: Number(match[1]), acquisitionUs: Number(match[2]), pingUs: Number(match[3]), ratio: Number(match[4]) };
}
