// Goal: an `ack` result is kept with the acked outcome for outcomeRetentionMs
// (get answers it, stats count it, a restart within the retention keeps it,
// the retention's end forgets it in memory and in the store), an ack without
// results stays on the compact acked path, and `extend` metadata replaces an
// item's metadata durably (a long job's progress).

import { describe, expect, test } from "bun:test";
import type { EndedItemState, ItemState } from "../../../src/engine/api.ts";
import { Harness, item, unwrap } from "../support/harness.ts";

const retentionMs = 60_000;

function got(h: Harness, id: string): ItemState | EndedItemState | null {
  return unwrap(h.engine.get("n", [id], h.now)).items[0] ?? null;
}

function engineGauges(h: Harness) {
  const engine = h.engine.stats(null, h.now).engine;
  if (engine === undefined) throw new Error("no engine gauges");
  return engine;
}

async function ackedWith(h: Harness, results: Array<Uint8Array | null>): Promise<string[]> {
  const ids = await h.enqueue("n", results.map(() => item("t")));
  const deliveries = await h.dequeue("n", [["t", results.length]]);
  const receipts = ids.map((id) => deliveries.find((d) => d.id === id)!.receipt);
  expect(await h.settleAck(h.engine.ack("n", receipts, h.now, results))).toEqual({ acked: results.length, stale: [] });
  return ids;
}

describe("ack results", () => {
  test("get answers each acked item's result; an ack without one answers none", async () => {
    const h = new Harness({ limits: { outcomeRetentionMs: retentionMs } });
    const [a, b, c] = await ackedWith(h, [Uint8Array.of(1, 2), null, new Uint8Array(0)]);
    expect(got(h, a!)).toEqual({ id: a!, state: "ended", outcome: "acked", result: Uint8Array.of(1, 2) });
    expect(got(h, b!)).toEqual({ id: b!, state: "ended", outcome: "acked" });
    expect(got(h, c!)).toEqual({ id: c!, state: "ended", outcome: "acked", result: new Uint8Array(0) });
    // Another namespace sees nothing of it.
    expect(unwrap(h.engine.get("other", [a!], h.now)).items[0]).toBeNull();
    expect(engineGauges(h)).toMatchObject({ outcomesRetained: 3, resultsRetained: 2, resultsRetainedBytes: 2 });
    h.check();
  });

  test("a plain ack (no results field) keeps its outcome in the compact acked blocks, holding no result", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t")]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    await h.settleAck(h.engine.ack("n", [d!.receipt], h.now));
    expect(got(h, id!)).toEqual({ id: id!, state: "ended", outcome: "acked" });
    expect(engineGauges(h)).toMatchObject({ resultsRetained: 0, resultsRetainedBytes: 0 });
  });

  test("a stale receipt's result is dropped with it; a repeated receipt keeps its first result", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t")]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    const r = await h.settleAck(h.engine.ack("n", ["9:9:9:9", d!.receipt, d!.receipt], h.now, [Uint8Array.of(9), Uint8Array.of(1), Uint8Array.of(2)]));
    expect(r).toEqual({ acked: 1, stale: ["9:9:9:9", d!.receipt] });
    expect(got(h, id!)).toMatchObject({ outcome: "acked", result: Uint8Array.of(1) });
    expect(engineGauges(h)).toMatchObject({ resultsRetained: 1, resultsRetainedBytes: 1 });
  });

  test("results survive a restart within the retention and are forgotten, in memory and the store, when it ends", async () => {
    const h = new Harness({ limits: { outcomeRetentionMs: retentionMs } });
    const [a, b] = await ackedWith(h, [Uint8Array.of(7, 7, 7), null]);
    h.advance(retentionMs - 1);
    await h.restart();
    expect(got(h, a!)).toEqual({ id: a!, state: "ended", outcome: "acked", result: Uint8Array.of(7, 7, 7) });
    expect(got(h, b!)).toEqual({ id: b!, state: "ended", outcome: "acked" });
    expect(engineGauges(h)).toMatchObject({ resultsRetained: 1, resultsRetainedBytes: 3 });
    h.advance(1);
    expect(got(h, a!)).toBeNull();
    expect(engineGauges(h)).toMatchObject({ resultsRetained: 0, resultsRetainedBytes: 0 });
    await h.writer.drain();
    await h.restart();
    expect(got(h, a!)).toBeNull();
    expect([...h.store.loadOutcomes()].map((o) => o.id)).not.toContain(a!);
    h.check();
  });

  test("an item acked with a result satisfies `after`, before and after a restart", async () => {
    const h = new Harness();
    const [dep] = await ackedWith(h, [Uint8Array.of(1)]);
    const [child] = await h.enqueue("n", [item("t", { after: [dep!] })]);
    expect(h.state("n", child!)).toBe("ready");
    await h.restart();
    const [late] = await h.enqueue("n", [item("u", { after: [dep!] })]);
    expect(h.state("n", late!)).toBe("ready");
    h.check();
  });
});

describe("extend metadata", () => {
  test("replaces the item's metadata, as get shows it, and survives a restart; without it the metadata stays", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { metadata: Uint8Array.of(0) })]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    await h.settle(h.engine.extend("n", [{ receipt: d!.receipt, leaseMs: 60_000, metadata: Uint8Array.of(5, 0) }], h.now));
    expect(got(h, id!)).toMatchObject({ state: "leased", metadata: Uint8Array.of(5, 0) });
    await h.settle(h.engine.extend("n", [{ receipt: d!.receipt, leaseMs: 60_000 }], h.now));
    expect(got(h, id!)).toMatchObject({ metadata: Uint8Array.of(5, 0) });
    await h.restart();
    expect(got(h, id!)).toMatchObject({ state: "leased", metadata: Uint8Array.of(5, 0) });
    h.check();
  });
});
