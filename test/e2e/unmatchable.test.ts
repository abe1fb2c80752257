// Goal: the unmatchable-items report end to end. Against a real `orq serve`,
// items requiring {gpu: "h100"} (and one requiring a camelCase feature) sit
// in a topic that a {gpu: "t4"} worker asks; `stats` reports them per topic,
// with their signatures, in snake_case field names while the `requires` maps
// keep the client's feature names as sent (`gpuModel` stays `gpuModel`).
// A topic nobody asked says `asked: false`. The /metrics scrape carries the
// count as orq_items_unmatchable{ns,topic}. (The wire mapping itself, with
// operator maps in `requires`: test/server/stats-wire.test.ts.)

import { describe, expect, test } from "bun:test";
import { startE2eSession } from "../support/e2e-session.ts";

const session = startE2eSession(["--shards", "2"]);
const { ok } = session;

type Unmatchable = { asked: boolean; askers: number; items: number; signatures: Array<{ requires: Record<string, unknown>; items: number }>; signatures_truncated: boolean };

describe("unmatchable items over the wire", () => {
  test("a t4 worker's topic reports the h100 items it cannot take, with their signatures", async () => {
    const ns = "render";
    const h100 = Array.from({ length: 3 }, () => ({ topic: "frames", requires: { gpu: "h100" } }));
    await ok({ op: "enqueue", ns, items: [...h100, { topic: "frames", requires: { gpuModel: { in: ["b", "a"] } } }, { topic: "frames", requires: { gpu: "t4" } }] });
    await ok({ op: "enqueue", ns, items: [{ topic: "idle", requires: { gpu: "h100" } }] });

    const taken = await ok({ op: "dequeue", ns, topics: [{ topic: "frames", count: 10 }], capabilities: { gpu: "t4" } });
    expect((taken.items as unknown[]).length).toBe(1);

    const stats = await ok({ op: "stats", ns });
    const entry = (stats.namespaces as Record<string, Record<string, any>>)[ns]!;
    const frames = entry.topics.frames.unmatchable as Unmatchable;
    expect(frames).toEqual({
      asked: true,
      askers: 1,
      items: 4,
      signatures: [
        { requires: { gpu: "h100" }, items: 3 },
        { requires: { gpuModel: { in: ["a", "b"] } }, items: 1 },
      ],
      signatures_truncated: false,
    });
    // Nobody asked "idle": it says so, and its ready item is not counted as unmatchable.
    expect(entry.topics.idle.ready).toBe(1);
    expect(entry.topics.idle.unmatchable).toEqual({ asked: false, askers: 0, items: 0, signatures: [], signatures_truncated: false });
    expect(entry.unmatchable).toBe(4);

    // An h100 worker asks too: the h100 items are no longer unmatchable.
    await ok({ op: "dequeue", ns, topics: [{ topic: "frames", count: 1 }], capabilities: { gpu: ["h100"] }, lease_ms: 60_000 });
    const after = await ok({ op: "stats", ns });
    const frames2 = (after.namespaces as Record<string, Record<string, any>>)[ns]!.topics.frames.unmatchable as Unmatchable;
    expect(frames2).toMatchObject({ askers: 2, items: 1, signatures: [{ requires: { gpuModel: { in: ["a", "b"] } }, items: 1 }] });

    // The same count as a Prometheus gauge on the HTTP side port.
    const line = session.server.stdoutLines.find((l) => l.startsWith("orq http on "));
    const match = line === undefined ? null : /^orq http on (.+):(\d+)$/.exec(line);
    expect(match).not.toBeNull();
    const text = await (await fetch(`http://${match![1]}:${match![2]}/metrics`)).text();
    expect(text).toContain('orq_items_unmatchable{ns="render",topic="frames"} 1');
    expect(text).toContain('orq_items_unmatchable{ns="render",topic="idle"} 0');
  });
});
