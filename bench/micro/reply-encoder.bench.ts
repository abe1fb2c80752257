// The dequeue and ack replies, as the server frames them: the generic path
// (@msgpack/msgpack over the plain reply map, then the copy into a frame)
// against the hand-written ReplyEncoder (keys as precomputed bytes, ASCII
// strings written byte by byte, one reused buffer, one copy out). Dequeue
// replies of 1 and 100 deliveries with 100-byte payloads, 8-byte metadata,
// ASCII ids/receipts/topic and 41-bit timestamps, as the load bench sends.
//
// Expected (2-core build machine), generic -> hand-written: a dequeue of 1
// delivery 1.08 -> 0.26 µs, of 100 deliveries 84.5 -> 18.5 µs, an ack of 100
// 0.22 -> 0.06 µs (docs/decisions/015-output-buffers.md).
// Run: ./node_modules/.bin/bun bench/micro/reply-encoder.bench.ts

import { bench, do_not_optimize, group, run, summary } from "mitata";
import { FrameEncoder } from "../../src/protocol/frame-encoder.ts";
import { type DeliveryFields, deliveryToWire, ReplyEncoder } from "../../src/protocol/reply-encoder.ts";

const payload = new Uint8Array(100).fill(0x78);
const metadata = new Uint8Array(8).fill(0x6d);

function deliveries(count: number): DeliveryFields[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `0f.${(1_000_000_000 + i).toString(36)}`,
    topic: "load",
    priority: i % 10,
    payload,
    metadata,
    attempt: 1,
    receipt: `0f.${(1_000_000_000 + i).toString(36)}.${(123_456 + i).toString(36)}`,
    leaseExpiresAtMs: 1_764_493_200_000 + i,
    enqueuedAtMs: 1_764_493_170_000 + i,
  }));
}

const generic = new FrameEncoder();
const hand = new ReplyEncoder();
const stale: string[] = [];

for (const count of [1, 100]) {
  const items = deliveries(count);
  const plain = { id: 123_456, ok: true, items: items.map(deliveryToWire) };
  const a = generic.encode(plain);
  const b = hand.deliveriesFrame(123_456, items);
  if (!Buffer.from(a).equals(Buffer.from(b))) throw new Error("hand-written frame differs from the generic one");
  summary(() => {
    group(`dequeue reply, ${count} deliver${count === 1 ? "y" : "ies"}, ${a.length} bytes framed`, () => {
      bench("generic (@msgpack/msgpack + frame copy)", () => do_not_optimize(generic.encode(plain)));
      bench("hand-written (ReplyEncoder)", () => do_not_optimize(hand.deliveriesFrame(123_456, items)));
    });
  });
}

const ackPlain = { id: 123_456, ok: true, acked: 100, stale };
summary(() => {
  group("ack reply, 100 acked, none stale", () => {
    bench("generic (@msgpack/msgpack + frame copy)", () => do_not_optimize(generic.encode(ackPlain)));
    bench("hand-written (ReplyEncoder)", () => do_not_optimize(hand.ackFrame(123_456, 100, stale)));
  });
});

await run();
