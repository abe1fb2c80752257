// The cold dequeue: what a dequeue of 1 costs when it comes after a pause,
// as every dequeue of the load benchmark's strict latency scenario does (the
// client waits about a millisecond for the previous ack's fsync before it
// asks again), set beside round trips that come after the same pause.
//
// Why: the scenario compares that dequeue with the echo floor measured back
// to back, with no pause. A round trip after a pause is slower on this kind
// of machine even when the server does nothing (caches and the scheduler),
// so the comparison mixes two things: what the pause costs any server, and
// what orq's own dequeue path costs when cold. This probe separates them, in
// one run, with every process pinned to CPU 0 as the scenario pins them:
//   - echo floor, back to back, and after a 1 ms sleep;
//   - orq ping, back to back, and after a 1 ms sleep;
//   - orq dequeue 1, right after the previous item's ack (the scenario's shape);
//   - orq dequeue 1, after the ack and a further 1 ms sleep.
// Rows run in turn, in windows of `--window` round trips, for `--rounds`
// rounds; each row prints the p50 of each window and the median of those.
// Read rows against each other within one run: the machine's state moves
// between runs.
//
// Run: ./node_modules/.bin/bun bench/dequeue-cold.ts [--items 300000]
//   [--durability strict|relaxed] [--rounds 6] [--window 1500] [--gap-ms 1]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { OrqConn, makeTemplate } from "./load/orq-conn.ts";
import { pin } from "./load/pinning.ts";
import { type Durability, startEcho, startOrq } from "./load/processes.ts";
import { NAMESPACE, dequeueTemplate, enqueueTemplate } from "./load/systems.ts";
import { p50 } from "./support/p50.ts";

const { values } = parseArgs({
  options: {
    items: { type: "string", default: "300000" },
    durability: { type: "string", default: "strict" },
    rounds: { type: "string", default: "6" },
    window: { type: "string", default: "1500" },
    "gap-ms": { type: "string", default: "1" },
  },
});
const items = Number(values.items);
const durability = values.durability as Durability;
const rounds = Number(values.rounds);
const windowSize = Number(values.window);
const gapMs = Number(values["gap-ms"]);
if (durability !== "strict" && durability !== "relaxed") throw new Error("--durability: strict or relaxed");

/** Enqueue batches of this many items, this many in flight, to fill the queue fast. */
const loadBatch = 100;
const loadInFlight = 16;

const dir = mkdtempSync(join(tmpdir(), "orq-dequeue-cold-"));
const orqChild = await startOrq(join(dir, "data"), durability, join(dir, "orq.log"));
const echoChild = await startEcho(join(dir, "echo.log"));
const orq = await OrqConn.connect(orqChild.host, orqChild.port);
const floor = await OrqConn.connect(echoChild.host, echoChild.port);

try {
  const enqueue = enqueueTemplate(loadBatch);
  const batches = Math.ceil(items / loadBatch);
  await Promise.all(
    Array.from({ length: loadInFlight }, async (_, lane) => {
      for (let i = lane; i < batches; i += loadInFlight) await orq.callTemplate(enqueue);
    }),
  );
  const pinned = pin(orqChild.pid) && pin(echoChild.pid) && pin(process.pid);
  console.log(`${batches * loadBatch} items ready, orq ${durability}, pinned to CPU 0: ${pinned ? "yes" : "no"}; gap ${gapMs} ms; windows of ${windowSize}`);

  const ping = makeTemplate({ op: "ping" });
  const dequeue1 = dequeueTemplate(1, 0);
  const timeUs = async (call: () => Promise<unknown>): Promise<number> => {
    const t0 = Bun.nanoseconds();
    await call();
    return (Bun.nanoseconds() - t0) / 1000;
  };
  /** The dequeue's round trip alone; its ack follows, untimed. */
  const dequeueThenAck = async (): Promise<number> => {
    let reply: Record<string, unknown> = {};
    const us = await timeUs(async () => (reply = await orq.callTemplate(dequeue1)));
    const delivered = (reply.items as Array<{ receipt: string }>)[0];
    if (delivered === undefined) throw new Error("dequeue-cold: the queue ran empty; give more --items");
    await orq.call({ op: "ack", ns: NAMESPACE, receipts: [delivered.receipt] });
    return us;
  };
  const rows: Array<{ label: string; once: () => Promise<number>; windowsP50Us: number[] }> = [
    { label: "echo floor ping, back to back", once: () => timeUs(() => floor.callTemplateRaw(ping)), windowsP50Us: [] },
    { label: `echo floor ping, after ${gapMs} ms asleep`, once: async () => (await Bun.sleep(gapMs), timeUs(() => floor.callTemplateRaw(ping))), windowsP50Us: [] },
    { label: "orq ping, back to back", once: () => timeUs(() => orq.callTemplate(ping)), windowsP50Us: [] },
    { label: `orq ping, after ${gapMs} ms asleep`, once: async () => (await Bun.sleep(gapMs), timeUs(() => orq.callTemplate(ping))), windowsP50Us: [] },
    { label: "orq dequeue 1, right after the last ack", once: dequeueThenAck, windowsP50Us: [] },
    { label: `orq dequeue 1, after the last ack and ${gapMs} ms asleep`, once: async () => (await Bun.sleep(gapMs), dequeueThenAck()), windowsP50Us: [] },
  ];
  for (let round = 0; round < rounds; round++) {
    for (const row of rows) {
      const samples: number[] = [];
      for (let i = 0; i < windowSize; i++) samples.push(await row.once());
      row.windowsP50Us.push(p50(samples));
    }
  }
  for (const row of rows) {
    console.log(`${row.label.padEnd(52)} p50 ${p50(row.windowsP50Us).toFixed(1).padStart(6)} µs   windows: ${row.windowsP50Us.map((us) => us.toFixed(1)).join(" ")}`);
  }
} finally {
  orq.close();
  floor.close();
  await orqChild.stop();
  await echoChild.stop();
  rmSync(dir, { recursive: true, force: true });
}
