// Goal: the worker loop's lease keeper extends every lease due at once in
// one request, each lease every `everyMs` from when it was taken; a released
// lease is extended no more; a receipt an extend reports stale is lost once:
// its handler is told, it is not extended again, and the others go on; a
// failed extend is reported for each lease it carried; a firing that finds
// nothing kept arms no other, and one timer serves leases kept and released
// in between. A fake client records the extends; the keeper's clock and
// timer are the test's, moved by advance().

import { expect, test } from "bun:test";
import { LeaseKeeper, type LeaseEvent } from "../../src/client/lease-keeper.ts";
import type { Delivery } from "../../src/client/types.ts";

function delivery(n: number): Delivery {
  return { id: `i${n}`, topic: "jobs", priority: 0, payload: new Uint8Array(), metadata: new Uint8Array(), attempt: 1, receipt: `r${n}`, leaseExpiresAtMs: 0, enqueuedAtMs: 0 };
}

function setup(stale: (receipt: string) => boolean = () => false, fail = false) {
  let nowMs = 1_000;
  const extends_: string[][] = [];
  const events: string[] = [];
  const client = {
    async extend(_ns: string, items: Array<{ receipt: string; leaseMs: number }>) {
      extends_.push(items.map((item) => `${item.receipt}@${item.leaseMs}`));
      if (fail) throw new Error("down");
      const gone = items.filter((item) => stale(item.receipt)).map((item) => item.receipt);
      return { extended: items.length - gone.length, stale: gone };
    },
  };
  const emit = (event: LeaseEvent): void => {
    events.push(`${event.kind} ${event.delivery.receipt}`);
  };
  // A fake clock with its timers: advance() runs those that fall due.
  let timers: Array<{ atMs: number; fn: () => void }> = [];
  const keeper = new LeaseKeeper(client, "ns", 30_000, 100, emit, {
    nowMs: () => nowMs,
    after(delayMs, fn) {
      timers.push({ atMs: nowMs + delayMs, fn });
    },
  });
  return {
    keeper,
    extends_,
    events,
    advance(ms: number) {
      nowMs += ms;
      const due = timers.filter((t) => t.atMs <= nowMs);
      timers = timers.filter((t) => t.atMs > nowMs);
      for (const timer of due) timer.fn();
    },
    get armed() {
      return timers.length;
    },
  };
}

/** Lets the extends' answers arrive. */
async function turn(): Promise<void> {
  for (let i = 0; i < 5; i++) await Bun.sleep(0);
}

test("leases due together go in one extend, each renewed everyMs from then", async () => {
  const t = setup();
  const lost: string[] = [];
  t.keeper.keep(delivery(1), () => lost.push("r1"));
  t.keeper.keep(delivery(2), () => lost.push("r2"));
  t.advance(50);
  t.keeper.keep(delivery(3), () => lost.push("r3"));
  await turn();
  expect(t.extends_).toEqual([]); // nothing due yet
  t.advance(50); // r1, r2 due at 1,100; r3 at 1,150
  await turn();
  expect(t.extends_).toEqual([["r1@30000", "r2@30000"]]);
  t.advance(50); // r3 due; r1, r2 renewed to 1,200
  await turn();
  expect(t.extends_).toEqual([["r1@30000", "r2@30000"], ["r3@30000"]]);
  t.keeper.release(delivery(2));
  t.advance(50);
  await turn();
  expect(t.extends_.at(-1)).toEqual(["r1@30000"]);
  expect(t.events.filter((e) => e.startsWith("extended"))).toEqual(["extended r1", "extended r2", "extended r3", "extended r1"]);
  expect(lost).toEqual([]);
  t.keeper.release(delivery(1));
  t.keeper.release(delivery(3));
  expect(t.keeper.size).toBe(0);
  // The pending firing finds nothing and arms no other; a lease kept later arms one again.
  t.advance(100);
  expect(t.armed).toBe(0);
  t.keeper.keep(delivery(4), () => undefined);
  expect(t.armed).toBe(1);
  t.advance(100);
  await turn();
  expect(t.extends_.at(-1)).toEqual(["r4@30000"]);
  t.keeper.release(delivery(4));
});

test("a stale receipt is lost once: its handler is told, it is extended no more, the others go on", async () => {
  const t = setup((receipt) => receipt === "r2");
  const lost: string[] = [];
  for (const n of [1, 2, 3]) t.keeper.keep(delivery(n), () => lost.push(`r${n}`));
  t.advance(100);
  await turn();
  expect(lost).toEqual(["r2"]);
  expect(t.events).toEqual(["extended r1", "lease_lost r2", "extended r3"]);
  t.advance(100);
  await turn();
  expect(t.extends_.at(-1)).toEqual(["r1@30000", "r3@30000"]);
  expect(lost).toEqual(["r2"]);
  t.keeper.release(delivery(1));
  t.keeper.release(delivery(3));
});

test("a lease released while its extend is out is not reported lost when the answer says stale", async () => {
  const t = setup(() => true);
  const lost: string[] = [];
  t.keeper.keep(delivery(1), () => lost.push("r1"));
  t.advance(100);
  t.keeper.release(delivery(1)); // the extend is out; its answer has not come

  await turn();
  expect(t.extends_).toEqual([["r1@30000"]]);
  expect(lost).toEqual([]);
  expect(t.events).toEqual([]);
});

test("a failed extend is reported for each lease it carried, and they are tried again when next due", async () => {
  const t = setup(() => false, true);
  t.keeper.keep(delivery(1), () => undefined);
  t.keeper.keep(delivery(2), () => undefined);
  t.advance(100);
  await turn();
  expect(t.events).toEqual(["error r1", "error r2"]);
  t.advance(100);
  await turn();
  expect(t.extends_.length).toBe(2);
  t.keeper.release(delivery(1));
  t.keeper.release(delivery(2));
});
