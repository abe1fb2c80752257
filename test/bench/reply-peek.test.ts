// The load generator's lean reply reading (bench/load/reply-peek.ts) against
// @msgpack/msgpack's encoder: every kind of value is skipped to its exact
// end, and fields are found where the encoder put them.

import { describe, expect, test } from "bun:test";
import { Encoder, ExtensionCodec } from "@msgpack/msgpack";
import { firstElement, isString, isTrue, mapValue, readUint, skipValue } from "../../bench/load/reply-peek.ts";

const extensions = new ExtensionCodec();
class Tagged {
  constructor(readonly bytes: Uint8Array) {}
}
extensions.register({ type: 7, encode: (value) => (value instanceof Tagged ? value.bytes : null), decode: (data) => new Tagged(data) });
const encoder = new Encoder({ extensionCodec: extensions });

/** One of each MessagePack type and size class the encoder makes. */
const samples: Array<[string, unknown]> = [
  ["positive fixint", 5],
  ["negative fixint", -3],
  ["uint 8", 200],
  ["uint 16", 60_000],
  ["uint 32", 4_000_000_000],
  ["uint 64", 2 ** 53 - 1],
  ["int 8", -100],
  ["int 16", -30_000],
  ["int 32", -2_000_000_000],
  ["int 64", -(2 ** 40)],
  ["float 64", 1.5],
  ["nil", null],
  ["true", true],
  ["false", false],
  ["fixstr", "abc"],
  ["str 8", "x".repeat(100)],
  ["str 16", "y".repeat(1_000)],
  ["str 32", "z".repeat(70_000)],
  ["bin 8", new Uint8Array(10).fill(1)],
  ["bin 16", new Uint8Array(1_000).fill(2)],
  ["bin 32", new Uint8Array(70_000).fill(3)],
  ["fixarray", [1, "a", null]],
  ["array 16", Array.from({ length: 20 }, (_, i) => i)],
  ["array 32", Array.from({ length: 70_000 }, () => 0)],
  ["fixmap", { a: 1, b: [2, 3] }],
  ["map 16", Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]))],
  ["nested", { items: [{ receipt: "r", payload: new Uint8Array(3) }], x: { y: { z: [] } } }],
  ["fixext 1", new Tagged(new Uint8Array(1))],
  ["fixext 2", new Tagged(new Uint8Array(2))],
  ["fixext 4", new Tagged(new Uint8Array(4))],
  ["fixext 8", new Tagged(new Uint8Array(8))],
  ["fixext 16", new Tagged(new Uint8Array(16))],
  ["ext 8", new Tagged(new Uint8Array(3))],
  ["ext 16", new Tagged(new Uint8Array(300))],
  ["ext 32", new Tagged(new Uint8Array(70_000))],
];

describe("skipValue", () => {
  for (const [kind, value] of samples) {
    test(`skips a ${kind} to its end, at any offset`, () => {
      const body = encoder.encode(value);
      expect(skipValue(body, 0)).toBe(body.length);
      const framed = new Uint8Array(body.length + 9);
      framed.set(body, 4);
      expect(skipValue(framed, 4)).toBe(4 + body.length);
    });
  }

  test("refuses the one byte that starts no value", () => {
    expect(() => skipValue(new Uint8Array([0xc1]), 0)).toThrow("starts no MessagePack value");
  });
});

describe("reading a reply where it lies", () => {
  const reply = encoder.encode({ id: 70_001, ok: true, items: [{ id: "3:17", topic: "t", payload: new Uint8Array(100), receipt: "3:17:1:abc", attempt: 1 }] });

  test("finds each top-level field, and nothing that is not there", () => {
    expect(readUint(reply, mapValue(reply, 0, "id"))).toBe(70_001);
    expect(isTrue(reply, mapValue(reply, 0, "ok"))).toBe(true);
    expect(mapValue(reply, 0, "error")).toBe(-1);
    // A key nested deeper is not a top-level field.
    expect(mapValue(reply, 0, "receipt")).toBe(-1);
  });

  test("finds the first item's receipt as a string ending where the encoder ended it", () => {
    const itemAt = firstElement(reply, mapValue(reply, 0, "items"));
    const receiptAt = mapValue(reply, itemAt, "receipt");
    expect(isString(reply, receiptAt)).toBe(true);
    const receipt = new TextDecoder().decode(reply.subarray(receiptAt + 1, skipValue(reply, receiptAt)));
    expect(receipt).toBe("3:17:1:abc");
  });

  test("tells an empty array, a false and a non-map apart", () => {
    const empty = encoder.encode({ ok: false, items: [] });
    expect(firstElement(empty, mapValue(empty, 0, "items"))).toBe(-1);
    expect(isTrue(empty, mapValue(empty, 0, "ok"))).toBe(false);
    expect(isTrue(empty, -1)).toBe(false);
    const notMap = encoder.encode([1, 2]);
    expect(mapValue(notMap, 0, "id")).toBe(-1);
    expect(readUint(encoder.encode("7"), 0)).toBe(-1);
  });

  test("reads every unsigned size class", () => {
    for (const value of [0, 127, 128, 255, 256, 65_535, 65_536, 4_294_967_295]) expect(readUint(encoder.encode(value), 0)).toBe(value);
  });
});
