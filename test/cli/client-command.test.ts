// Goal: the CLI's shared parsing and output helpers: --server forms (host:port,
// [v6]:port, host alone, :port) and their errors at port 0/1/65535/65536;
// integer flags at min-1/min/max/max+1; JSON-object flags; byte fields in
// --json (UTF-8 string vs base64) and for people (quoted, cut, binary).

import { describe, expect, test } from "bun:test";
import { InvalidArgumentError } from "commander";
import { intArg, jsonObjectArg, listArg, parseServerAddress, UsageError } from "../../src/cli/client-command.ts";
import { bytesForHuman, bytesToJson, humanPayloadCharsMax, table } from "../../src/cli/output.ts";

describe("parseServerAddress", () => {
  test("accepted forms", () => {
    expect(parseServerAddress("10.0.0.5:7500")).toEqual({ host: "10.0.0.5", port: 7500 });
    expect(parseServerAddress("queue.internal")).toEqual({ host: "queue.internal", port: 7420 });
    expect(parseServerAddress(":7600")).toEqual({ host: "127.0.0.1", port: 7600 });
    expect(parseServerAddress("[::1]:7420")).toEqual({ host: "::1", port: 7420 });
    expect(parseServerAddress("h:1").port).toBe(1);
    expect(parseServerAddress("h:65535").port).toBe(65535);
  });

  test("refused: port 0 and 65536, not a number, bare IPv6", () => {
    for (const text of ["h:0", "h:65536", "h:port", "::1"]) expect(() => parseServerAddress(text)).toThrow(UsageError);
  });
});

describe("flag parsers", () => {
  test("intArg at min-1, min, max, max+1, and non-integers", () => {
    const parse = intArg(1, 1000);
    expect(() => parse("0")).toThrow(InvalidArgumentError);
    expect(parse("1")).toBe(1);
    expect(parse("1000")).toBe(1000);
    expect(() => parse("1001")).toThrow(InvalidArgumentError);
    for (const bad of ["1.5", "", "1e3", "ten"]) expect(() => parse(bad)).toThrow(InvalidArgumentError);
  });

  test("jsonObjectArg wants an object; listArg splits on commas", () => {
    expect(jsonObjectArg('{"gpu": true}')).toEqual({ gpu: true });
    for (const bad of ["[1]", "null", "3", "{nope"]) expect(() => jsonObjectArg(bad)).toThrow(InvalidArgumentError);
    expect(listArg("a, b,,c")).toEqual(["a", "b", "c"]);
  });
});

describe("output", () => {
  test("bytes in JSON: a string when UTF-8, base64 otherwise", () => {
    expect(bytesToJson("payload", new TextEncoder().encode("héllo"))).toEqual({ payload: "héllo" });
    expect(bytesToJson("payload", new Uint8Array([0xff, 0xfe]))).toEqual({ payload_base64: "//4=" });
    expect(bytesToJson("metadata", new Uint8Array())).toEqual({ metadata: "" });
  });

  test("bytes for people: quoted, cut past the limit, binary summarised", () => {
    expect(bytesForHuman(new TextEncoder().encode("hi"))).toBe('"hi"');
    expect(bytesForHuman(new Uint8Array())).toBe("(empty)");
    const atLimit = "x".repeat(humanPayloadCharsMax);
    expect(bytesForHuman(new TextEncoder().encode(atLimit))).toBe(JSON.stringify(atLimit));
    const over = bytesForHuman(new TextEncoder().encode(`${atLimit}y`));
    expect(over).toBe(`${JSON.stringify(atLimit)}… (${humanPayloadCharsMax + 1} bytes)`);
    expect(bytesForHuman(new Uint8Array([0, 1, 2]))).toBe("(3 bytes, binary) 000102");
  });

  test("tables right-align numbers", () => {
    expect(table(["NAME", "N"], [["a", 5], ["bbb", 12]])).toBe("NAME   N\na      5\nbbb   12");
  });
});
