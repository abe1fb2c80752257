// Goal: the hand-written RequestFrameDecoder gives exactly what the library
// RequestDecoder gives for every frame (same value, same JS types, same key
// order, WholeFloat marks, bins as views of the frame), throws what it throws
// for every frame it refuses (truncated, trailing bytes, depth over the bound
// at limit-1/limit/limit+1, forged lengths, invalid forms), and decodes the
// usual forms itself rather than handing them over (fallbackCount); the same
// holds for a frame given as offsets into a larger chunk.
// Random cases come from a seeded generator; a failure prints its seed.

import { describe, expect, test } from "bun:test";
import { Encoder } from "@msgpack/msgpack";
import { WholeFloat, createRequestDecoder } from "../../src/protocol/msgpack-codec.ts";
import { RequestFrameDecoder } from "../../src/protocol/request-frame-decoder.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { describeDecoded, randomValue } from "./request-frame-cases.ts";

const depthMax = 8;
const options = { depthMax, frameBytesMax: 1 << 20 };
const library = createRequestDecoder(options);
const decoder = new RequestFrameDecoder(options);
const encoders = [new Encoder(), new Encoder({ forceFloat32: true }), new Encoder({ forceIntegerToFloat: true })];
const utf8 = new TextEncoder();

type Outcome = { value: string } | { error: string };

function outcome(decode: () => unknown): Outcome {
  try {
    return { value: describeDecoded(decode()) };
  } catch (error) {
    return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

/** Decodes with both decoders and expects the same outcome; returns whether the new decoder handed the frame over. */
function expectSame(body: Uint8Array, seedNote: string): boolean {
  const fallbacksBefore = decoder.fallbackCount;
  const ours = outcome(() => decoder.decodeBody(body));
  const theirs = outcome(() => library.decodeBody(body));
  if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
    console.error(`decoders differ (${seedNote}) on ${Buffer.from(body).toString("hex")}`);
  }
  expect(ours).toEqual(theirs);
  const fellBack = decoder.fallbackCount > fallbacksBefore;
  // Offsets into a chunk whose bytes around the frame would continue it (a map, a string, an array): the same outcome, so nothing reads past `end`.
  const { chunk, start, end } = amidOtherBytes(body);
  expect(outcome(() => decoder.decodeBody(chunk, start, end))).toEqual(theirs);
  return fellBack;
}

/** The frame at offsets [start, end) of a larger chunk, between bytes that would be read as more MessagePack if the decoder strayed. */
function amidOtherBytes(frame: Uint8Array): { chunk: Uint8Array; start: number; end: number } {
  // Of the frame's own class: bins are copied from it, and a Buffer's copies are Buffers.
  const chunk = Buffer.isBuffer(frame) ? Buffer.alloc(frame.length + 12, 0x81) : new Uint8Array(frame.length + 12).fill(0x81);
  chunk.set([0xa3, 0x61, 0x62, 0x63, 0x92], frame.length + 5);
  chunk.set(frame, 5);
  return { chunk, start: 5, end: 5 + frame.length };
}

/** The frame as the server may hold it: a plain array, or a view at an offset into a larger chunk (a Uint8Array or a Buffer, as a socket gives). */
function asReceived(frame: Uint8Array, random: () => number): Uint8Array {
  const form = Math.floor(random() * 3);
  if (form === 0) return frame;
  const chunk = new Uint8Array(frame.length + 7);
  chunk.set(frame, 5);
  return form === 1 ? chunk.subarray(5, 5 + frame.length) : Buffer.from(chunk.buffer, 5, frame.length);
}

function bytes(...parts: Array<number | string | number[]>): Uint8Array {
  const out: number[] = [];
  for (const part of parts) {
    if (typeof part === "number") out.push(part);
    else if (typeof part === "string") out.push(...utf8.encode(part));
    else out.push(...part);
  }
  return new Uint8Array(out);
}

describe("request-frame decoder against the library decoder", () => {
  test("random values from the library's encoder decode identically, without falling back", () => {
    const seed = Number(process.env.ORQ_TEST_SEED ?? Date.now() % 1_000_000_007);
    const random = seededRandom(seed);
    let fellBack = 0;
    for (let i = 0; i < 3000; i++) {
      const { value, wellFormed } = randomValue(random, depthMax);
      const encoder = encoders[Math.floor(random() * encoders.length)] as Encoder;
      const body = asReceived(encoder.encode({ id: i + 1, value }), random);
      if (expectSame(body, `seed ${seed}, case ${i}`) && wellFormed) fellBack++;
    }
    if (fellBack > 0) console.error(`seed ${seed}: ${fellBack} well-formed frames fell back`);
    expect(fellBack).toBe(0);
  });

  test("random byte changes and truncations: both decode the same value or both throw the same error", () => {
    const seed = Number(process.env.ORQ_TEST_SEED ?? Date.now() % 1_000_000_007);
    const random = seededRandom(seed);
    for (let i = 0; i < 3000; i++) {
      const body = new Encoder().encode(randomValue(random, depthMax).value);
      const changed = body.slice(0, random() < 0.3 ? Math.floor(random() * body.length) : body.length);
      for (let flips = Math.floor(random() * 3); flips > 0 && changed.length > 0; flips--) {
        changed[Math.floor(random() * changed.length)] = Math.floor(random() * 256);
      }
      expectSame(changed, `seed ${seed}, case ${i}`);
    }
  });

  test("forms the encoder never emits decode identically and are decoded without falling back", () => {
    const cases = [
      bytes(0xd9, 3, "abc"), // str8 for a short string
      bytes(0xda, 0, 3, "abc"), // str16
      bytes(0xdb, 0, 0, 0, 3, "abc"), // str32
      bytes(0xcf, 0, 0, 0, 0, 0, 0, 0, 5), // uint64 holding a small value
      bytes(0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), // uint64 max (rounds)
      bytes(0xcf, 0, 0x20, 0, 0, 0, 0, 0, 1), // 2^53 + 1 (rounds)
      bytes(0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe), // int64 -2
      bytes(0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0), // int64 min
      bytes(0xd0, 5), // int8 holding a positive value
      bytes(0xd1, 0x80, 0), // int16 min
      bytes(0xd2, 0x80, 0, 0, 0), // int32 min
      bytes(0xca, 0x41, 0, 0, 0), // float32 8.0
      bytes(0xca, 0x7f, 0xc0, 0, 0), // float32 NaN
      bytes(0xca, 0x80, 0, 0, 0), // float32 -0
      bytes(0xcb, 0x80, 0, 0, 0, 0, 0, 0, 0), // float64 -0
      bytes(0xcb, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0), // float64 Infinity
      bytes(0xde, 0, 1, 0xa1, "a", 1), // map16 of one entry
      bytes(0xdf, 0, 0, 0, 1, 0xa1, "a", 1), // map32 of one entry
      bytes(0xdc, 0, 1, 7), // array16 of one element
      bytes(0xdd, 0, 0, 0, 1, 7), // array32 of one element
      bytes(0xde, 0, 0), // empty map16
      bytes(0xdd, 0, 0, 0, 0), // empty array32
      bytes(0xc4, 0), // empty bin8
      bytes(0xc6, 0, 0, 0, 2, 1, 2), // bin32 of 2 bytes
      bytes(0x83, 5, 0xa1, "a", 0xff, 0xa1, "b", 0xcf, 0, 0, 0, 0, 0, 0, 0, 9, 0xa1, "c"), // integer keys
      bytes(0x82, 0xa1, "b", 1, 0xa1, "b", 2), // a repeated key: the later value wins
      bytes(0x83, 0xa1, "b", 1, 0xa1, "1", 2, 0xa1, "a", 3), // an index-like key sorts first, as in the library
      bytes(0x81, 0xab, "constructor", 1), // an Object.prototype name as a key
      bytes(0xa6, [0xef, 0xbb, 0xbf], "abc"), // a short string with a byte order mark (kept)
      bytes(0xda, 0, 203, [0xef, 0xbb, 0xbf], "a".repeat(200)), // a long string with a byte order mark (stripped)
      bytes(0xda, 0, 201, "é".repeat(100), "a"), // just past the library's JavaScript string threshold
      bytes(0xd9, 200, [0xef, 0xbb, 0xbf], "é".repeat(98), "a"), // at the threshold, with a byte order mark (kept)
      bytes(0xda, 0, 201, [0xef, 0xbb, 0xbf], "é".repeat(98), "ab"), // just past it, with a byte order mark (stripped)
      bytes(0xa4, [0xf0, 0x9f, 0x98, 0x80]), // a four-byte character (a surrogate pair)
      bytes(0xa3, [0xe2, 0x9c, 0x93]), // a three-byte character
    ];
    for (const [index, body] of cases.entries()) expect(expectSame(body, `hand-built case ${index}`)).toBe(false);
    expect(decoder.decodeBody(bytes(0xca, 0x41, 0, 0, 0))).toBeInstanceOf(WholeFloat);
    // A bin is a copy, by either decoder: the connection reuses the frame's buffer, an enqueued payload outlives it.
    const frame = bytes(0x81, 0xa1, "b", 0xc4, 2, 9, 8);
    const bin = (decoder.decodeBody(frame) as { b: Uint8Array }).b;
    const libraryBin = (library.decodeBody(frame) as { b: Uint8Array }).b;
    frame.fill(0);
    expect(bin).toEqual(new Uint8Array([9, 8]));
    expect(libraryBin).toEqual(new Uint8Array([9, 8]));
  });

  test("unusual forms are handed to the library decoder, which decides them", () => {
    const cases = [
      bytes(0xa2, 0xc3, 0x28), // invalid UTF-8 (a lead byte without its continuation)
      bytes(0x92, 0xa1, 0xc3, 0xa1, "x"), // a lead byte that the library completes from the next string
      bytes(0xa2, 0xc0, 0x80), // an overlong form
      bytes(0xa3, 0xed, 0xa0, 0x80), // an encoded surrogate
      bytes(0xa1, 0xff), // a byte that never appears in UTF-8
      bytes(0xda, 0, 210, 0xff, "a".repeat(209)), // a long invalid string (the library replaces, so do we: no fallback needed, same value)
      bytes(0xd4, 5, 1), // fixext 1 of an application type
      bytes(0xd6, 0xff, 0, 0, 0, 1), // a timestamp ext
      bytes(0xc1), // the never-used byte
      bytes(0x81, 0xa9, "__proto__", 1), // __proto__ as a key
      bytes(0x81, 0xc0, 1), // nil as a key
      bytes(0x81, 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 1), // a float key (1.5)
      bytes(0x81, 0xcb, 0x40, 0x20, 0, 0, 0, 0, 0, 0, 1), // a whole float key
      bytes(0x81, 0x91, 1, 1), // an array as a key
    ];
    for (const [index, body] of cases.entries()) expectSame(body, `unusual case ${index}`);
    expect(expectSame(bytes(0xd4, 5, 1), "ext")).toBe(true);
    expect(expectSame(bytes(0xa2, 0xc3, 0x28), "invalid UTF-8")).toBe(true);
  });
});

describe("frames both decoders refuse", () => {
  const request = new Encoder().encode({ id: 7, op: "dequeue", ns: "n", topics: [{ topic: "t", count: 1 }], capabilities: { pool: "p1", mem_gb: 64.5, gpu: true }, p: new Uint8Array(3) });

  test("every truncation of a request throws in both", () => {
    for (let length = 0; length < request.length; length++) {
      const body = request.subarray(0, length);
      expect(() => library.decodeBody(body)).toThrow();
      expect(() => decoder.decodeBody(body)).toThrow();
      expectSame(body, `truncated to ${length}`);
    }
  });

  test("trailing bytes throw in both", () => {
    for (const extra of [[0], [0xc0], [0x81, 0xa1, 0x61, 1]]) {
      const body = bytes([...request], extra);
      expect(() => decoder.decodeBody(body)).toThrow(/Extra/);
      expectSame(body, `trailing ${extra.length}`);
    }
  });

  test(`nesting ${depthMax - 1} and ${depthMax} decode; ${depthMax + 1} throws in both, arrays and maps alike`, () => {
    for (const wrap of [(inner: unknown) => [inner], (inner: unknown) => ({ k: inner })]) {
      for (const depth of [depthMax - 1, depthMax, depthMax + 1]) {
        let value: unknown = 1;
        for (let i = 0; i < depth; i++) value = wrap(value);
        const body = new Encoder().encode(value);
        if (depth > depthMax) expect(() => decoder.decodeBody(body)).toThrow(/nested deeper/);
        else expect(describeDecoded(decoder.decodeBody(body))).toBe(describeDecoded(value));
        expectSame(body, `depth ${depth}`);
      }
    }
    // Empty containers take no level, in both.
    expectSame(new Encoder().encode([[[[[[[[[]]]]]]]]]), "empty innermost");
  });

  test("forged huge lengths throw in both, before allocating", () => {
    const forged = [
      bytes(0xdb, 0xff, 0xff, 0xff, 0xff, "a"), // str32
      bytes(0xc6, 0xff, 0xff, 0xff, 0xff, 1), // bin32
      bytes(0xdd, 0xff, 0xff, 0xff, 0xff, 1), // array32
      bytes(0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, "a", 1), // map32
      bytes(0xdc, 0, 3, 1, 2), // array16 one element short
      bytes(0x82, 0xa1, "a", 1), // fixmap one entry short
      bytes(0xd9, 5, "abc"), // str8 two bytes short
    ];
    for (const [index, body] of forged.entries()) {
      expect(() => decoder.decodeBody(body)).toThrow();
      expectSame(body, `forged case ${index}`);
    }
  });

  test("a string or bin over frameBytesMax is refused by both", () => {
    const small = { depthMax, frameBytesMax: 4 };
    const ours = new RequestFrameDecoder(small);
    const theirs = createRequestDecoder(small);
    for (const body of [bytes(0xa5, "abcde"), bytes(0xc4, 5, 1, 2, 3, 4, 5)]) {
      expect(() => ours.decodeBody(body)).toThrow(/Max length exceeded/);
      expect(() => theirs.decodeBody(body)).toThrow(/Max length exceeded/);
    }
    expect(ours.decodeBody(bytes(0xa4, "abcd"))).toBe("abcd");
  });
});
