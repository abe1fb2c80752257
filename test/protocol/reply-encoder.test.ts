// Goal: the hand-written dequeue and ack frames are exactly what the generic
// encoder (@msgpack/msgpack with orq's options) writes for the same reply:
// same bytes, so they decode to the same value, across seeded random
// deliveries (payload sizes at every bin form boundary, non-ASCII strings at
// str form boundaries, integers at every int form boundary including past 32
// bits and below -2^31, floats, empty and long item lists), and the buffer
// is reused without corrupting frames already handed out.

import { describe, expect, test } from "bun:test";
import { FrameEncoder } from "../../src/protocol/frame-encoder.ts";
import { createEncoder, createReplyDecoder } from "../../src/protocol/msgpack-codec.ts";
import { AckReply, DeliveriesReply, type DeliveryFields, deliveryToWire, plainReply, ReplyEncoder } from "../../src/protocol/reply-encoder.ts";
import type { WireDelivery } from "../../src/protocol/wire-types.ts";
import { seededRandom } from "../support/seeded-random.ts";

const generic = createEncoder();
const decoder = createReplyDecoder();

const payloadSizes = [0, 1, 15, 16, 17, 31, 32, 255, 256, 65535, 65536];
// Every int form's edges: fixint, uint8/16/32/64, negative fixint, int8/16/32/64.
const integers = [
  0, 1, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER,
  -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1, -(2 ** 40) - 3, Number.MIN_SAFE_INTEGER,
];
const int32s = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 100, -100, 40_000, -40_000];
const texts = ["", "a", "load", "é", "主题", "emoji 🎉 topic", "x".repeat(31), "x".repeat(32), "é".repeat(16), "é".repeat(127), "é".repeat(128), "y".repeat(255), "y".repeat(256), "z".repeat(70_000), "ü".repeat(40_000)];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

function bytes(random: () => number, size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = Math.floor(random() * 256);
  return out;
}

function delivery(random: () => number): DeliveryFields {
  const metadataText = random() < 0.5 ? "" : pick(random, texts.slice(0, 10));
  return {
    id: random() < 0.8 ? `0f.${Math.floor(random() * 1e12).toString(36)}` : pick(random, texts),
    topic: pick(random, texts),
    priority: pick(random, int32s),
    payload: bytes(random, pick(random, payloadSizes)),
    metadata: random() < 0.3 ? bytes(random, pick(random, payloadSizes)) : new TextEncoder().encode(metadataText),
    attempt: pick(random, integers),
    receipt: random() < 0.8 ? `r.${Math.floor(random() * 1e15).toString(36)}.${Math.floor(random() * 1e6)}` : pick(random, texts),
    leaseExpiresAtMs: random() < 0.7 ? 1_764_000_000_000 + Math.floor(random() * 1e9) : pick(random, integers),
    enqueuedAtMs: random() < 0.7 ? 1_764_000_000_000 + Math.floor(random() * 1e9) : random() < 0.5 ? pick(random, integers) : 1.5 + random(),
  };
}

/** A delivery under the wire's keys in wire order (docs/PROTOCOL.md); the last test checks it key by key. */
const wireOf = deliveryToWire;

/** The generic frame body for the same reply, as a plain map in wire order. */
function genericDeliveries(id: number, items: readonly DeliveryFields[]): Uint8Array {
  return generic.encode({ id, ok: true, items: items.map(wireOf) });
}

function body(frame: Uint8Array): Uint8Array {
  const length = new DataView(frame.buffer, frame.byteOffset).getUint32(0);
  expect(frame.length).toBe(4 + length);
  return frame.subarray(4);
}

function expectSame(hand: Uint8Array, expected: Uint8Array): void {
  const handBody = body(hand);
  expect(decoder.decode(handBody)).toEqual(decoder.decode(expected));
  expect(Buffer.from(handBody).equals(Buffer.from(expected))).toBe(true);
}

describe("dequeue reply", () => {
  test("empty items", () => {
    const encoder = new ReplyEncoder();
    expectSame(encoder.deliveriesFrame(1, []), genericDeliveries(1, []));
    expect(decoder.decode(body(encoder.deliveriesFrame(7, [])))).toEqual({ id: 7, ok: true, items: [] });
  });

  test("request ids at every int form, including 2^53-1", () => {
    const encoder = new ReplyEncoder();
    for (const id of integers.filter((n) => n >= 1)) expectSame(encoder.deliveriesFrame(id, []), genericDeliveries(id, []));
  });

  test("one field at a time at each edge: payload sizes, integers, strings", () => {
    const encoder = new ReplyEncoder();
    const base = delivery(seededRandom(1));
    const cases: DeliveryFields[] = [];
    for (const size of payloadSizes) {
      cases.push({ ...base, payload: new Uint8Array(size).fill(7) }, { ...base, metadata: new Uint8Array(size).fill(9) });
    }
    for (const n of integers) {
      cases.push({ ...base, attempt: n }, { ...base, leaseExpiresAtMs: n }, { ...base, enqueuedAtMs: n });
    }
    for (const n of int32s) cases.push({ ...base, priority: n });
    for (const f of [0.5, -0.5, 2 ** 53, -(2 ** 53), 1e300, Number.NaN]) cases.push({ ...base, enqueuedAtMs: f });
    for (const text of texts) cases.push({ ...base, id: text }, { ...base, topic: text }, { ...base, receipt: text });
    for (const d of cases) expectSame(encoder.deliveriesFrame(5, [d]), genericDeliveries(5, [d]));
  });

  test("seeded random replies of 1 to 70 items match the generic encoder byte for byte", () => {
    const seed = 0x5eed19;
    const random = seededRandom(seed);
    const encoder = new ReplyEncoder();
    for (let round = 0; round < 60; round++) {
      const count = pick(random, [1, 1, 2, 3, 15, 16, 17, 70]);
      const items = Array.from({ length: count }, () => delivery(random));
      const id = 1 + Math.floor(random() * 2 ** 40);
      const hand = encoder.deliveriesFrame(id, items);
      expectSame(hand, genericDeliveries(id, items));
    }
  });

  test("array16 and array32 headers for long lists (65535 and 65536 items)", () => {
    const encoder = new ReplyEncoder();
    const small = { ...delivery(seededRandom(3)), payload: new Uint8Array(0), metadata: new Uint8Array(0) };
    for (const count of [65535, 65536]) {
      const items = new Array<DeliveryFields>(count).fill(small);
      expectSame(encoder.deliveriesFrame(9, items), genericDeliveries(9, items));
    }
  });

  test("a frame handed out stays intact after the buffer is reused and grown", () => {
    const encoder = new ReplyEncoder();
    const random = seededRandom(11);
    const first = [delivery(random)];
    const frame = encoder.deliveriesFrame(1, first);
    const copy = frame.slice();
    encoder.deliveriesFrame(2, [{ ...delivery(random), payload: new Uint8Array(200_000).fill(1) }]);
    expect(Buffer.from(frame).equals(Buffer.from(copy))).toBe(true);
    expectSame(frame, genericDeliveries(1, first));
  });
});

describe("ack reply", () => {
  test("acked counts and stale lists match the generic encoder", () => {
    const encoder = new ReplyEncoder();
    const random = seededRandom(21);
    for (const acked of [0, 1, 127, 128, 1000, 70_000]) {
      for (const staleCount of [0, 1, 15, 16, 100]) {
        const stale = Array.from({ length: staleCount }, () => (random() < 0.8 ? `r.${Math.floor(random() * 1e15).toString(36)}` : pick(random, texts)));
        const id = 1 + Math.floor(random() * 1e6);
        expectSame(encoder.ackFrame(id, acked, stale), generic.encode({ id, ok: true, acked, stale }));
      }
    }
  });
});

describe("FrameEncoder", () => {
  test("routes DeliveriesReply and AckReply to the hand-written path with the same bytes as their plain maps", () => {
    const frames = new FrameEncoder();
    const items = [delivery(seededRandom(31))];
    const dequeue = new DeliveriesReply(items);
    dequeue.id = 77;
    expectSame(frames.encode(dequeue), genericDeliveries(77, items));
    const ack = new AckReply(3, ["r.1"]);
    ack.id = 78;
    expectSame(frames.encode(ack), generic.encode({ id: 78, ok: true, acked: 3, stale: ["r.1"] }));
    // AckReply is plain data: the generic encoder writes the same map.
    expect(Buffer.from(generic.encode(ack)).equals(Buffer.from(generic.encode({ id: 78, ok: true, acked: 3, stale: ["r.1"] })))).toBe(true);
  });

  test("a DeliveriesReply writes the engine's deliveries under the wire's keys; plainReply is the map the generic encoder writes the same", () => {
    const frames = new FrameEncoder();
    const random = seededRandom(41);
    const items = [delivery(random), delivery(random), delivery(random)];
    const dequeue = new DeliveriesReply(items);
    dequeue.id = 79;
    const plain = plainReply(dequeue);
    expect(plain).toEqual({ id: 79, ok: true, items: items.map(wireOf) });
    const first = items[0]!;
    const wire = (plain.items as WireDelivery[])[0]!;
    expect(Object.keys(wire)).toEqual(["id", "topic", "priority", "payload", "metadata", "attempt", "receipt", "lease_expires_at_ms", "enqueued_at_ms"]);
    expect(Object.values(wire)).toEqual([first.id, first.topic, first.priority, first.payload, first.metadata, first.attempt, first.receipt, first.leaseExpiresAtMs, first.enqueuedAtMs]);
    expectSame(frames.encode(dequeue), generic.encode(plain));
    expect(decoder.decode(body(frames.encode(dequeue)))).toEqual(plain);
    // Anything but a DeliveriesReply is plain already.
    const ack = new AckReply(1, []);
    expect(plainReply(ack)).toBe(ack);
  });

  test("encodeTo hands each frame to its output, the same bytes encode gives, also when the encoder's buffer is reused at once", () => {
    const frames = new FrameEncoder();
    const copies = new FrameEncoder();
    const random = seededRandom(43);
    const received: number[] = [];
    const out = {
      push: (bytes: Uint8Array, length = bytes.length) => received.push(...bytes.subarray(0, length)),
      pushFrame: (body: Uint8Array) => received.push(body.length >>> 24, (body.length >>> 16) & 0xff, (body.length >>> 8) & 0xff, body.length & 0xff, ...body),
    };
    const expected: number[] = [];
    for (let round = 0; round < 20; round++) {
      const dequeue = new DeliveriesReply(Array.from({ length: 1 + (round % 3) }, () => delivery(random)));
      dequeue.id = round + 1;
      const ack = new AckReply(round, round % 2 === 0 ? [] : ["1:2:3:4"]);
      ack.id = 1000 + round;
      const plain = { id: 2000 + round, ok: true, now_ms: 1_700_000_000_000 + round };
      for (const reply of [dequeue, ack, plain]) {
        frames.encodeTo(reply, out);
        expected.push(...copies.encode(reply));
      }
    }
    expect(received).toEqual(expected);
  });

  test("a hand-written frame left in the encoder's buffer holds the bytes of its copy; the copy survives the next call", () => {
    const encoder = new ReplyEncoder();
    const random = seededRandom(47);
    const items = [delivery(random), delivery(random)];
    const copy = encoder.deliveriesFrame(3, items);
    const inPlace = (length: number) => encoder.frameBytes.slice(0, length);
    const sameBytes = (a: Uint8Array, b: Uint8Array) => expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    sameBytes(inPlace(encoder.writeDeliveriesFrame(3, items)), copy);
    const ackCopy = encoder.ackFrame(4, 2, ["9:9:9:9"]);
    sameBytes(inPlace(encoder.writeAckFrame(4, 2, ["9:9:9:9"])), ackCopy);
    encoder.writeDeliveriesFrame(5, [delivery(random)]);
    expectSame(copy, genericDeliveries(3, items));
  });
});
