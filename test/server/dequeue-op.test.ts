// Goal: the dequeue op decodes every request into one reused input (its
// topics list and entries too), so each request must reach the engine as it
// was sent whatever the one before it held, and a parked dequeue must keep
// the topics it parked on while later requests reuse that input.

import { describe, expect, test } from "bun:test";
import type { DequeueInput } from "../../src/engine/api.ts";
import { DeliveriesReply } from "../../src/protocol/reply-encoder.ts";
import { allNamespaces, TokenTable } from "../../src/server/auth.ts";
import { Dispatcher, type RequestSource } from "../../src/server/dispatcher.ts";
import { silentLogger } from "../../src/server/logger.ts";
import { opTable } from "../../src/server/op-table.ts";
import type { Session } from "../../src/server/op-types.ts";
import type { WireError } from "../../src/protocol/wire-types.ts";
import { Harness, item } from "../engine/support/harness.ts";
import { makeOpContext } from "../support/op-context.ts";

class Replies implements RequestSource {
  readonly session: Session = { connectionId: 5, scope: allNamespaces, readOnly: false };
  sent: Array<Record<string, unknown>> = [];
  send(reply: Record<string, unknown>): void {
    this.sent.push(reply);
  }
  fail(error: WireError): void {
    throw new Error(`connection failed: ${error.code}`);
  }
  requestStarted(): void {}
  requestFinished(): void {}
  /** Ids delivered by the reply to request `id`, or null when it has not been sent. */
  idsOf(id: number): string[] | null {
    const reply = this.sent.find((r) => r.id === id);
    if (reply === undefined) return null;
    if (!(reply instanceof DeliveriesReply)) throw new Error(`request ${id}: ${JSON.stringify(reply)}`);
    return reply.deliveries.map((d) => d.id);
  }
}

const flush = () => new Promise((r) => setImmediate(r));

describe("the dequeue op's reused input", () => {
  test("topic lists of different lengths, one after another, reach the engine as sent", () => {
    const ctx = makeOpContext();
    const requests = [
      { topics: [{ topic: "a", count: 2 }, { topic: "b", count: 3 }], capabilities: { gpu: "a100" }, wait_ms: 10, lease_ms: 500 },
      { topics: [{ topic: "c" }] },
      { topics: [{ topic: "bad", count: 0 }] },
      { topics: [{ topic: "d", count: 4 }, { topic: "e" }, { topic: "f", count: 6 }] },
    ];
    for (const request of requests) opTable.dequeue.handle(request, "ns1", ctx);
    const inputs = ctx.engine.callsOf("dequeue").map((c) => c.args[1] as DequeueInput);
    expect(inputs).toEqual([
      { topics: [{ topic: "a", count: 2 }, { topic: "b", count: 3 }], capabilities: { gpu: "a100" }, waitMs: 10, leaseMs: 500, owner: 7 },
      { topics: [{ topic: "c", count: 1 }], capabilities: null, waitMs: 0, leaseMs: null, owner: 7 },
      { topics: [{ topic: "d", count: 4 }, { topic: "e", count: 1 }, { topic: "f", count: 6 }], capabilities: null, waitMs: 0, leaseMs: null, owner: 7 },
    ]);
  });

  test("a parked dequeue keeps its topics while later requests reuse the input", async () => {
    const h = new Harness();
    const dispatcher = new Dispatcher({
      engine: h.engine,
      limits: h.limits,
      clock: h.clock,
      tokens: new TokenTable([]),
      serverInfo: { version: "test", nodeId: "n", shards: 4 },
      logger: silentLogger,
      serverStats: () => ({}),
      fatal: (error) => {
        throw error;
      },
    });
    const source = new Replies();
    dispatcher.handleRequest(source, { id: 1, op: "dequeue", ns: "n", topics: [{ topic: "a", count: 2 }], wait_ms: 60_000 });
    dispatcher.handleRequest(source, { id: 2, op: "dequeue", ns: "n", topics: [{ topic: "b" }] });
    expect(source.idsOf(1)).toBeNull();
    expect(source.idsOf(2)).toEqual([]);
    const [b] = await h.enqueue("n", [item("b")]);
    dispatcher.handleRequest(source, { id: 3, op: "dequeue", ns: "n", topics: [{ topic: "b", count: 5 }] });
    expect(source.idsOf(3)).toEqual([b as string]);
    const ids = await h.enqueue("n", [item("a"), item("a"), item("a")]);
    await flush();
    expect(source.idsOf(1)).toEqual(ids.slice(0, 2) as string[]);
    h.check();
  });
});
