// Random MessagePack-able values for the request-frame decoder's differential
// test (request-frame-decoder.test.ts), and the exact description two decoded
// values are compared by: type, value (Object.is for numbers, so -0 and NaN
// count), WholeFloat marks, key order, and each bin's class and bytes.

import { WholeFloat } from "../../src/protocol/msgpack-codec.ts";

type Random = () => number;

/** Integers at every MessagePack width boundary, both signs. */
const boundaryInts = [
  0, 1, 127, 128, 255, 256, 65_535, 65_536, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1,
  -1, -31, -32, -33, -127, -128, -129, -32_767, -32_768, -32_769, -(2 ** 31), -(2 ** 31) - 1, -(2 ** 32), -(2 ** 53 - 1),
];
const floats = [0.5, -1.25, 1e-300, 1.7976931348623157e308, Number.NaN, -0, Infinity, -Infinity, 8, 3.4028234663852886e38, 0.1];
/** Short strings a request repeats (so the string cache sees hits), and some it does not. */
const vocabulary = ["id", "op", "ns", "dequeue", "ack", "topic", "topics", "capabilities", "pool", "p3", "mem_gb", "linux", "wait_ms", "receipts", ""];
const multiByte = ["é", "✓", "😀", "日本", "\u0080", "\u07ff", "\u0800", "\uffff", "\u{10ffff}", "\ufeff"];
const stringLengths = [1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 199, 200, 201, 250, 300];

export interface RandomValue {
  value: unknown;
  /** False when the value holds a lone surrogate (invalid UTF-8 once encoded), which the fast path hands over. */
  wellFormed: boolean;
}

export function randomValue(random: Random, depthMax: number): RandomValue {
  const state = { wellFormed: true };
  // One level is taken by the frame's own map ({ id, value }) in the test.
  const value = randomAt(random, Math.floor(random() * depthMax), state);
  return { value, wellFormed: state.wellFormed };
}

function pick<T>(random: Random, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)] as T;
}

function randomAt(random: Random, depthLeft: number, state: { wellFormed: boolean }): unknown {
  const kind = Math.floor(random() * (depthLeft > 0 ? 10 : 7));
  switch (kind) {
    case 0:
      return pick(random, boundaryInts) + (random() < 0.5 ? 0 : pick(random, [-1, 0, 1]));
    case 1:
      return random() < 0.5 ? pick(random, floats) : (random() - 0.5) * 10 ** Math.floor(random() * 20);
    case 2:
      return pick(random, [null, true, false]);
    case 3:
      return randomString(random, state);
    case 4:
      return pick(random, vocabulary);
    case 5:
      return randomBin(random);
    case 6:
      return Math.floor(random() * 2 ** 32) - 2 ** 31;
    case 7:
    case 8: {
      const map: Record<string, unknown> = {};
      const size = random() < 0.1 ? 16 + Math.floor(random() * 8) : Math.floor(random() * 5);
      for (let i = 0; i < size; i++) {
        const key = random() < 0.7 ? pick(random, vocabulary) : randomString(random, state, 40);
        if (key === "__proto__") continue;
        map[key] = randomAt(random, depthLeft - 1, state);
      }
      return map;
    }
    default: {
      const size = random() < 0.1 ? 16 + Math.floor(random() * 8) : Math.floor(random() * 5);
      return Array.from({ length: size }, () => randomAt(random, depthLeft - 1, state));
    }
  }
}

function randomString(random: Random, state: { wellFormed: boolean }, lengthMax = Infinity): string {
  const length = Math.min(lengthMax, random() < 0.5 ? Math.floor(random() * 12) : pick(random, stringLengths));
  const style = Math.floor(random() * 4);
  let text = "";
  while (text.length < length) {
    if (style === 0) text += String.fromCharCode(32 + Math.floor(random() * 95));
    else if (style === 1) text += random() < 0.7 ? "a" : pick(random, multiByte);
    else if (style === 2) text += String.fromCharCode(Math.floor(random() * 0x80));
    else if (random() < 0.05) {
      text += String.fromCharCode(0xd800 + Math.floor(random() * 0x800)); // a lone surrogate
      state.wellFormed = false;
    } else text += pick(random, multiByte);
  }
  return text;
}

function randomBin(random: Random): Uint8Array {
  const length = random() < 0.02 ? pick(random, [65_535, 65_536, 70_000]) : pick(random, [0, 1, 5, 100, 255, 256]);
  const bin = new Uint8Array(length);
  for (let i = 0; i < Math.min(length, 64); i++) bin[i] = Math.floor(random() * 256);
  return bin;
}

/** An exact description of a decoded value. Recursive: decoded values are bounded by the decoder's depthMax. */
export function describeDecoded(value: unknown): string {
  if (value === null) return "nil";
  if (value === undefined) return "undefined";
  if (typeof value === "number") return `num:${Object.is(value, -0) ? "-0" : String(value)}`;
  if (typeof value === "string") return `str:${JSON.stringify(value)}`;
  if (typeof value !== "object") return `${typeof value}:${String(value)}`;
  if (value instanceof WholeFloat) return `whole:${Object.is(value.value, -0) ? "-0" : String(value.value)}`;
  if (value instanceof Uint8Array) return `${value.constructor.name}(${Buffer.from(value).toString("hex")})`;
  if (Array.isArray(value)) return `[${value.map(describeDecoded).join(",")}]`;
  if (value instanceof Date) return `Date:${value.getTime()}`;
  const proto = Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null;
  if (proto !== Object.prototype) {
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${k}=${describeDecoded(v)}`);
    return `${proto?.constructor?.name ?? "null-prototype"}{${entries.join(",")}}`;
  }
  const entries = Object.keys(value).map((key) => `${JSON.stringify(key)}:${describeDecoded((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(",")}}`;
}
