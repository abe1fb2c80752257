// Goal: the request decoder round-trips every value kind, bounds nesting at
// decodeDepthMax (limit-1, limit, limit+1), keeps whole floats apart from
// integers, refuses __proto__ keys, and unmarkFloats restores numbers.

import { describe, expect, test } from "bun:test";
import { Encoder } from "@msgpack/msgpack";
import {
  WholeFloat,
  createEncoder,
  createRequestDecoder,
  isPlainMap,
  unmarkFloats,
} from "../../src/protocol/msgpack-codec.ts";

const depthMax = 32;
const decoder = createRequestDecoder({ depthMax, frameBytesMax: 1 << 20 });
const encoder = createEncoder();

function nestedArrays(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("request decoder", () => {
  test("round trips maps, arrays, strings, bins, ints, negative ints, booleans, nil", () => {
    const value = {
      id: 42,
      op: "enqueue",
      items: [{ topic: "t", priority: -5, payload: new Uint8Array([0, 1, 255]), big: 2 ** 40, ok: true, none: null }],
      text: "héllo ✓",
    };
    expect(decoder.decodeBody(encoder.encode(value))).toEqual(value);
  });

  test("undefined fields are left out by the encoder", () => {
    const decoded = decoder.decodeBody(encoder.encode({ a: 1, b: undefined })) as Record<string, unknown>;
    expect(Object.keys(decoded)).toEqual(["a"]);
  });

  test(`nesting depth ${depthMax - 1} and ${depthMax} decode; ${depthMax + 1} is refused`, () => {
    expect(() => decoder.decodeBody(encoder.encode(nestedArrays(depthMax - 1)))).not.toThrow();
    expect(() => decoder.decodeBody(encoder.encode(nestedArrays(depthMax)))).not.toThrow();
    expect(() => decoder.decodeBody(encoder.encode(nestedArrays(depthMax + 1)))).toThrow(/nested deeper/);
  });

  test("a megabyte of nested array headers fails fast", () => {
    const bytes = new Uint8Array(1 << 20).fill(0x91);
    expect(() => decoder.decodeBody(bytes)).toThrow(/nested deeper/);
  });

  test("the decoder is usable again after a failure", () => {
    expect(() => decoder.decodeBody(new Uint8Array([0xc1]))).toThrow();
    expect(decoder.decodeBody(encoder.encode({ id: 1 }))).toEqual({ id: 1 });
  });

  test("an array header longer than the body is refused before allocating", () => {
    expect(() => decoder.decodeBody(new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff]))).toThrow();
  });

  test("whole floats decode as WholeFloat; fractional floats as numbers; ints as numbers", () => {
    const forced = new Encoder({ forceFloat32: false });
    // 8.5 is encoded as float64 by default; a whole number must be forced into a float encoding by hand.
    const f64 = new Uint8Array([0xcb, 0x40, 0x20, 0, 0, 0, 0, 0, 0]); // float64 8.0
    const f32 = new Uint8Array([0xca, 0x41, 0x00, 0, 0]); // float32 8.0
    expect(decoder.decodeBody(f64)).toBeInstanceOf(WholeFloat);
    expect((decoder.decodeBody(f32) as WholeFloat).value).toBe(8);
    expect(decoder.decodeBody(forced.encode(8.5))).toBe(8.5);
    expect(decoder.decodeBody(forced.encode(8))).toBe(8);
  });

  test("__proto__ keys are refused", () => {
    // fixmap(1) { "__proto__": 1 }
    const bytes = new Uint8Array([0x81, 0xa9, ...new TextEncoder().encode("__proto__"), 0x01]);
    expect(() => decoder.decodeBody(bytes)).toThrow(/__proto__/);
  });

  test("unmarkFloats restores numbers deep inside maps and arrays and copies bins", () => {
    const bin = new Uint8Array([1]);
    const input = { a: new WholeFloat(8), b: [new WholeFloat(1), { c: new WholeFloat(2) }], d: bin, e: "s" };
    const out = unmarkFloats(input) as Record<string, unknown>;
    expect(out).toEqual({ a: 8, b: [1, { c: 2 }], d: new Uint8Array([1]), e: "s" });
    expect(out.d).not.toBe(bin);
  });

  test("unmarkFloats keeps a map's keys in the order they came at every level (get echoes requires as sent)", () => {
    const out = unmarkFloats({ b: 1, a: { d: new WholeFloat(1), c: [{ f: 1, e: 2 }] } }) as Record<string, Record<string, unknown>>;
    expect(Object.keys(out)).toEqual(["b", "a"]);
    expect(Object.keys(out.a!)).toEqual(["d", "c"]);
    expect(Object.keys((out.a!.c as Array<Record<string, unknown>>)[0]!)).toEqual(["f", "e"]);
    expect(out as unknown).toEqual({ b: 1, a: { d: 1, c: [{ f: 1, e: 2 }] } });
  });

  test("isPlainMap accepts decoded maps only", () => {
    expect(isPlainMap({})).toBe(true);
    expect(isPlainMap([])).toBe(false);
    expect(isPlainMap(new Uint8Array(1))).toBe(false);
    expect(isPlainMap(null)).toBe(false);
    expect(isPlainMap(new WholeFloat(1))).toBe(false);
  });
});
