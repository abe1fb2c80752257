// Goal: the request decoder's cache of `capabilities` maps (repeated-map-cache.ts)
// gives, for the same bytes, the same frozen map each time, equal to what the
// library decodes; decodes anything it may not share (floats, bins, nested
// maps, too long) afresh each time; stays within its entry bound, dropping
// the oldest; and never changes what a frame decodes to (differentially,
// against the library, over repeated and truncated frames).

import { describe, expect, test } from "bun:test";
import { Encoder } from "@msgpack/msgpack";
import { capabilitiesMapCachedBytesMax } from "../../src/limits.ts";
import { createRequestDecoder } from "../../src/protocol/msgpack-codec.ts";
import { RepeatedMapCache, isSharedDecodedMap } from "../../src/protocol/repeated-map-cache.ts";
import { RequestFrameDecoder } from "../../src/protocol/request-frame-decoder.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { describeDecoded } from "./request-frame-cases.ts";

const options = { depthMax: 8, frameBytesMax: 1 << 20 };
const encoder = new Encoder();

function dequeueFrame(capabilities: unknown): Uint8Array {
  return encoder.encode({ id: 1, op: "dequeue", ns: "n", topics: [{ topic: "t", count: 1 }], capabilities, wait_ms: 0 });
}

function capabilitiesOf(decoded: unknown): Record<string, unknown> {
  return (decoded as { capabilities: Record<string, unknown> }).capabilities;
}

describe("the decoder's capabilities cache", () => {
  test("the same bytes give the same frozen, shared map, equal to the library's decoding", () => {
    const decoder = new RequestFrameDecoder(options);
    const library = createRequestDecoder(options);
    const body = dequeueFrame({ pool: "p3", mem_gb: 128, os: "linux", gpu: ["t4", "a100"], big: 2 ** 40, neg: -70000, off: false, none: null });
    const first = capabilitiesOf(decoder.decodeBody(body));
    const second = capabilitiesOf(decoder.decodeBody(body));
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.gpu)).toBe(true);
    expect(isSharedDecodedMap(first)).toBe(true);
    expect(describeDecoded(decoder.decodeBody(body))).toBe(describeDecoded(library.decodeBody(body)));
    expect(decoder.fallbackCount).toBe(0);
  });

  test("different bytes give different maps, each its own", () => {
    const decoder = new RequestFrameDecoder(options);
    const a = capabilitiesOf(decoder.decodeBody(dequeueFrame({ pool: "p1" })));
    const b = capabilitiesOf(decoder.decodeBody(dequeueFrame({ pool: "p2" })));
    expect(a).toEqual({ pool: "p1" });
    expect(b).toEqual({ pool: "p2" });
    expect(capabilitiesOf(decoder.decodeBody(dequeueFrame({ pool: "p1" })))).toBe(a);
  });

  test("maps it may not share are decoded afresh every time, and not frozen", () => {
    const decoder = new RequestFrameDecoder(options);
    const unshareable = [
      { mem_gb: 64.5 }, // a float
      { blob: new Uint8Array(3) }, // a bin: a view of the frame
      { nested: { a: 1 } }, // a nested map
      { long: "x".repeat(capabilitiesMapCachedBytesMax) }, // too long
    ];
    for (const capabilities of unshareable) {
      const body = dequeueFrame(capabilities);
      const first = capabilitiesOf(decoder.decodeBody(body));
      const second = capabilitiesOf(decoder.decodeBody(body));
      expect(second).not.toBe(first);
      expect(Object.isFrozen(first)).toBe(false);
      expect(isSharedDecodedMap(first)).toBe(false);
    }
  });

  test("only the top-level capabilities field is shared", () => {
    const decoder = new RequestFrameDecoder(options);
    const body = encoder.encode({ id: 1, op: "x", nested: { capabilities: { pool: "p" } }, requires: { pool: "p" } });
    const first = decoder.decodeBody(body) as { nested: { capabilities: object }; requires: object };
    const second = decoder.decodeBody(body) as { nested: { capabilities: object }; requires: object };
    expect(second.nested.capabilities).not.toBe(first.nested.capabilities);
    expect(second.requires).not.toBe(first.requires);
  });
});

describe("RepeatedMapCache", () => {
  function put(cache: RepeatedMapCache, value: Record<string, unknown>): Uint8Array {
    const bytes = encoder.encode(value);
    expect(cache.cacheableEnd(bytes, 0, bytes.length)).toBe(bytes.length);
    cache.put(bytes, 0, bytes.length, { ...value });
    return bytes;
  }

  test(`holds at most its bound of entries, dropping the oldest first`, () => {
    const cache = new RepeatedMapCache(4, 512);
    const bodies = Array.from({ length: 10 }, (_, i) => put(cache, { worker: `w${i}` }));
    expect(cache.size).toBe(4);
    for (let i = 0; i < 10; i++) {
      const body = bodies[i] as Uint8Array;
      const found = cache.get(body, 0, body.length);
      if (i < 6) expect(found).toBeUndefined();
      else expect(found).toEqual({ worker: `w${i}` });
    }
  });

  test("bytes at an offset inside a larger buffer are found, and a prefix of cached bytes is not a hit", () => {
    const cache = new RepeatedMapCache(4, 512);
    const body = put(cache, { pool: "p1", os: "linux" });
    const framed = new Uint8Array(body.length + 3);
    framed.set(body, 2);
    expect(cache.get(framed, 2, 2 + body.length)).toEqual({ pool: "p1", os: "linux" });
    expect(cache.get(body, 0, body.length - 1)).toBeUndefined();
  });

  test("cacheableEnd refuses cut-short maps at every length", () => {
    const cache = new RepeatedMapCache(4, 512);
    const body = encoder.encode({ pool: "p1", gpu: ["t4", 3, true], mem: 70000, s: "y".repeat(40) });
    expect(cache.cacheableEnd(body, 0, body.length)).toBe(body.length);
    for (let end = 0; end < body.length; end++) expect(cache.cacheableEnd(body, 0, end)).toBe(-1);
  });
});

describe("decoding with the cache matches the library", () => {
  test("random repeated capabilities frames, whole and truncated, decode alike", () => {
    const seed = 20261202;
    const random = seededRandom(seed);
    const decoder = new RequestFrameDecoder(options);
    const library = createRequestDecoder(options);
    const values: unknown[] = ["linux", "p1", "", 0, 1, -1, 127, 128, -33, 70000, 2 ** 33, -(2 ** 33), true, false, null, "é", ["a", 2], []];
    const pool = Array.from({ length: 12 }, (_, i) => {
      const caps: Record<string, unknown> = {};
      const features = 1 + Math.floor(random() * 4);
      for (let f = 0; f < features; f++) caps[`f${(i + f) % 5}`] = values[Math.floor(random() * values.length)];
      return dequeueFrame(caps);
    });
    const outcome = (decode: () => unknown): string => {
      try {
        return describeDecoded(decode());
      } catch (error) {
        return `error: ${error instanceof Error ? error.message : String(error)}`;
      }
    };
    for (let i = 0; i < 400; i++) {
      const whole = pool[Math.floor(random() * pool.length)] as Uint8Array;
      const body = random() < 0.25 ? whole.subarray(0, Math.floor(random() * whole.length)) : whole;
      expect(outcome(() => decoder.decodeBody(body))).toBe(outcome(() => library.decodeBody(body)));
    }
  });
});
