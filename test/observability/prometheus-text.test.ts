// Goal: the test-side Prometheus text reader is strict, so the scrape tests
// that rely on it would notice a malformed line.

import { describe, expect, test } from "bun:test";
import { findSample, parsePrometheusText } from "./prometheus-text.ts";

describe("parsePrometheusText", () => {
  test("reads comments, labels with escapes, and special values", () => {
    const body = [
      "# HELP x_total A counter.",
      "# TYPE x_total counter",
      'x_total{op="enqueue",topic="a\\"b\\\\c\\nd"} 3',
      "x_gauge 1.5e3",
      'x_bucket{le="+Inf"} +Inf',
      "x_nan NaN 1700000000000",
      "",
    ].join("\n");
    const parsed = parsePrometheusText(body);
    expect(parsed.types.get("x_total")).toBe("counter");
    expect(findSample(parsed, "x_total", { op: "enqueue" })?.labels.topic).toBe('a"b\\c\nd');
    expect(findSample(parsed, "x_gauge")?.value).toBe(1500);
    expect(findSample(parsed, "x_bucket")?.value).toBe(Number.POSITIVE_INFINITY);
    expect(Number.isNaN(findSample(parsed, "x_nan")?.value)).toBe(true);
  });

  test.each([
    ["a name starting with a digit", "1x 1"],
    ["a missing value", "x_total"],
    ["a non-numeric value", "x_total abc"],
    ["an unterminated label value", 'x{a="b} 1'],
    ["an unquoted label value", "x{a=b} 1"],
    ["a duplicate label", 'x{a="1",a="2"} 1'],
    ["a bad escape", 'x{a="\\t"} 1'],
    ["an unknown TYPE", "# TYPE x widget"],
    ["a malformed HELP", "# HELP"],
    ["too many fields", "x 1 2 3"],
  ])("rejects %s", (_, line) => {
    expect(() => parsePrometheusText(line)).toThrow();
  });
});
