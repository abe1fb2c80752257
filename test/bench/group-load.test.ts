// Goal: keep the load generator's group load shaped as BENCHMARKS.md says:
// an orq producer opened with groups names them on its items in turn and
// gives every group the same share of its template pool; stamped payloads
// are told from the flood's fixed ones. No server: a fake connection keeps
// what the producer sends.

import { describe, expect, test } from "bun:test";
import { decode } from "@msgpack/msgpack";
import type { OrqConn, Reply, RequestTemplate } from "../../bench/load/orq-conn.ts";
import { Priorities } from "../../bench/load/priorities.ts";
import { GroupCycle, OrqProducer, fixedPayload, groupNames, stampedPayload, stampedSentAtMs } from "../../bench/load/systems.ts";

interface SentItem {
  group?: string;
  priority: number;
}

/** A connection that answers every request at once and keeps the items it was asked to enqueue. */
function recordingConn(sent: SentItem[]): OrqConn {
  const keep = (request: { items?: SentItem[] }) => sent.push(...(request.items ?? []));
  return {
    inFlight: 0,
    callTemplate: async (template: RequestTemplate): Promise<Reply> => {
      keep(decode(template.body) as { items?: SentItem[] });
      return { id: 1, ok: true };
    },
    call: async (request: { items?: SentItem[] }): Promise<Reply> => {
      keep(request);
      return { id: 1, ok: true };
    },
  } as unknown as OrqConn;
}

describe("orq producer with groups", () => {
  test("a batch-100 pool over 1,000 groups gives each group the same share of a round of the pool", async () => {
    const sent: SentItem[] = [];
    const producer = new OrqProducer(recordingConn(sent), new Priorities("random"), new GroupCycle(groupNames("customer", 1000)));
    // The random pool (64 templates) rounds up to 70, seven rounds of the 1,000 names.
    for (let i = 0; i < 70; i++) await producer.enqueue(100);
    const perGroup = new Map<string, number>();
    for (const item of sent) perGroup.set(item.group ?? "", (perGroup.get(item.group ?? "") ?? 0) + 1);
    expect(perGroup.size).toBe(1000);
    expect(new Set(perGroup.values())).toEqual(new Set([7]));
    expect(sent.every((item) => item.priority >= 0 && item.priority <= 1000)).toBe(true);
  });

  test("stamped batches of one name the groups in turn", async () => {
    const sent: SentItem[] = [];
    const producer = new OrqProducer(recordingConn(sent), new Priorities("fifo"), new GroupCycle(groupNames("tenant", 3)));
    for (let i = 0; i < 4; i++) await producer.enqueueStamped(1, 10);
    expect(sent.map((item) => item.group)).toEqual(["tenant-0", "tenant-1", "tenant-2", "tenant-0"]);
    expect(sent.map((item) => item.priority)).toEqual([0, 0, 0, 0]);
  });

  test("without groups, items name none", async () => {
    const sent: SentItem[] = [];
    await new OrqProducer(recordingConn(sent), new Priorities("random")).enqueue(10);
    expect(sent.length).toBe(10);
    expect(sent.some((item) => "group" in item)).toBe(false);
  });
});

describe("stamped payloads", () => {
  test("a stamped payload gives its send time back; the fixed payload gives none", () => {
    expect(stampedSentAtMs(stampedPayload(1234.5))).toBe(1234.5);
    expect(stampedSentAtMs(fixedPayload())).toBeNull();
  });
});
