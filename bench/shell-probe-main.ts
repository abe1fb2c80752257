// orq's CLI with its engine's dequeue and ack answered by canned replies: a
// probe of what orq's server shell alone costs in the Jupiter scenario
// (BENCHMARKS.md, "Jupiter: the shell alone"). Run it in place of the server
// through ORQ_BENCH_MAIN, e.g.
//   ORQ_BENCH_MAIN=$PWD/bench/shell-probe-main.ts bun bench/load/main.ts --only jupiter --systems orq --orq-modes strict
// A dequeue answers one delivery from the first topic it names, with fresh id
// and receipt strings and a shared 100-byte payload; an ack answers `acked`
// = its receipts' count at once. Neither touches the items, the store or a
// commit. Everything else the server does is as shipped: the framing, request
// decoding (a dequeue's fields are decoded and checked as usual), auth, the
// dispatcher, reply encoding, output buffers and the socket writes. So the
// Jupiter ratio against this server is the most that any engine and store
// could give inside orq's shell on the machine it runs on. Never a server to
// use: the enqueued items stay ready, and acks end nothing.

import type { AckOutcome, DequeueInput, DequeueOutcome } from "../src/engine/api.ts";
import { Engine } from "../src/engine/engine.ts";
import { formatId, formatReceipt } from "../src/engine/ids.ts";

/** The scenario's payload size (bench/load/jupiter.ts loads 100-byte payloads). */
const payload = new Uint8Array(100).fill(7);
const metadata = new Uint8Array(0);
const noStale: readonly string[] = Object.freeze([]);
/** Above the keys the scenario's load gives (about 300,000), and as long as theirs give or take a digit. */
let nextKey = 1_000_000;
/** The server's default shard count: ids and receipts are written by the engine's own formatters, so the ack's bytes are as long as a real one's. */
const shards = 16;

Engine.prototype.dequeue = function cannedDequeue(_ns: string, input: DequeueInput, nowMs: number): DequeueOutcome {
  const key = nextKey++;
  const id = formatId(key % shards, key);
  const topic = input.topics[0]?.topic ?? "";
  const delivery = { id, topic, priority: 0, payload, metadata, attempt: 1, receipt: formatReceipt(id, 1, 1), leaseExpiresAtMs: nowMs + 30_000, enqueuedAtMs: nowMs };
  return { ok: true, kind: "done", deliveries: [delivery], durable: null };
};

Engine.prototype.ack = function cannedAck(_ns: string, receipts: string[], _nowMs: number): AckOutcome {
  return { ok: true, acked: receipts.length, stale: noStale, durable: null };
};

await import("../src/cli/main.ts");
