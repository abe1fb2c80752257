// Goal: an item's `trace` text is W3C traceparent, then a space and
// tracestate: formatTrace writes it, parseTrace reads it back and refuses
// what the W3C grammar refuses (so a bad trace never becomes a span's
// parent), and the 512-byte bound drops tracestate rather than passing it.

import { describe, expect, test } from "bun:test";
import { formatTrace, parseTrace, traceBytesMax } from "../../src/client/trace-context.ts";

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
const spanId = "00f067aa0ba902b7";

describe("formatTrace", () => {
  test("writes version 00, the ids and the flags as two hex digits", () => {
    expect(formatTrace({ traceId, spanId, traceFlags: 1 })).toBe(`00-${traceId}-${spanId}-01`);
    expect(formatTrace({ traceId, spanId, traceFlags: 0 })).toBe(`00-${traceId}-${spanId}-00`);
  });

  test("appends tracestate after one space, and leaves an empty one out", () => {
    expect(formatTrace({ traceId, spanId, traceFlags: 1, traceState: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7" })).toBe(
      `00-${traceId}-${spanId}-01 congo=t61rcWkgMzE,rojo=00f067aa0ba902b7`,
    );
    expect(formatTrace({ traceId, spanId, traceFlags: 1, traceState: "" })).toBe(`00-${traceId}-${spanId}-01`);
  });

  test("keeps a tracestate that fits the 512-byte bound (limit - 1, limit) and drops one past it (limit + 1)", () => {
    const traceparent = `00-${traceId}-${spanId}-01`;
    const room = traceBytesMax - traceparent.length - 1;
    for (const length of [room - 1, room]) {
      const text = formatTrace({ traceId, spanId, traceFlags: 1, traceState: `k=${"v".repeat(length - 2)}` });
      expect(text.length).toBe(traceparent.length + 1 + length);
      expect(text.length).toBeLessThanOrEqual(traceBytesMax);
    }
    expect(formatTrace({ traceId, spanId, traceFlags: 1, traceState: `k=${"v".repeat(room - 1)}` })).toBe(traceparent);
  });
});

describe("parseTrace", () => {
  test("reads back what formatTrace writes, with and without tracestate", () => {
    expect(parseTrace(`00-${traceId}-${spanId}-01`)).toEqual({ traceId, spanId, traceFlags: 1 });
    expect(parseTrace(`00-${traceId}-${spanId}-03 a=1,b=2`)).toEqual({ traceId, spanId, traceFlags: 3, traceState: "a=1,b=2" });
  });

  test("refuses what W3C trace context refuses", () => {
    const bad = [
      "",
      "garbage",
      `00-${traceId}-${spanId}`,
      `00-${traceId.toUpperCase()}-${spanId}-01`,
      `00-${"0".repeat(32)}-${spanId}-01`,
      `00-${traceId}-${"0".repeat(16)}-01`,
      `ff-${traceId}-${spanId}-01`,
      `00-${traceId}-${spanId}-01-extra`,
      `00-${traceId.slice(1)}-${spanId}-01`,
      `0-${traceId}-${spanId}-01`,
    ];
    for (const text of bad) expect(parseTrace(text)).toBeNull();
  });

  test("reads a later version's four fields and ignores what it appends", () => {
    expect(parseTrace(`01-${traceId}-${spanId}-01-future`)).toEqual({ traceId, spanId, traceFlags: 1 });
  });
});
