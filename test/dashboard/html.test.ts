// Goal: every value interpolated into dashboard markup is escaped unless it
// was built by the same tag, and the byte views (JSON, text, hex) never let
// markup through.

import { describe, expect, test } from "bun:test";
import { bytesBlock, bytesPreview, viewBytes } from "../../src/dashboard/format.ts";
import { escapeText, html, query } from "../../src/dashboard/html.ts";

const hostile = `<img src=x onerror=alert(1)>"'&`;

describe("html", () => {
  test("escapes the five HTML-special characters in every interpolation", () => {
    expect(escapeText(hostile)).toBe("&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;");
    expect(html`<p title="${hostile}">${hostile}</p>`.text).toBe(
      '<p title="&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;">&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;</p>',
    );
  });

  test("nested Html passes through once; arrays join; null, undefined and false vanish", () => {
    const inner = html`<b>${"<i>"}</b>`;
    expect(html`<p>${inner}${[inner, "<"]}${null}${undefined}${false}${0}</p>`.text).toBe("<p><b>&lt;i&gt;</b><b>&lt;i&gt;</b>&lt;0</p>");
  });

  test("query encodes keys and values and drops empty ones", () => {
    expect(query({ ns: "a b&c", topic: "x/y?", empty: "", gone: null })).toBe("?ns=a%20b%26c&topic=x%2Fy%3F");
    expect(query({})).toBe("");
  });
});

describe("byte views", () => {
  test("JSON when it parses, text when UTF-8, hex otherwise, and empty", () => {
    expect(viewBytes(new TextEncoder().encode('{"a":[1,2]}'))).toEqual({ kind: "json", text: '{\n  "a": [\n    1,\n    2\n  ]\n}' });
    expect(viewBytes(new TextEncoder().encode(hostile))).toEqual({ kind: "text", text: hostile });
    expect(viewBytes(new Uint8Array([0xff, 0x00, 0x10]))).toEqual({ kind: "hex", text: "ff 00 10" });
    expect(viewBytes(new Uint8Array(0))).toEqual({ kind: "empty" });
  });

  test("a hostile payload is rendered as escaped text", () => {
    const block = bytesBlock(new TextEncoder().encode(hostile)).text;
    expect(block).not.toContain("<img");
    expect(block).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(bytesPreview(new TextEncoder().encode("x".repeat(100)), 10)).toBe(`${"x".repeat(10)}…`);
  });

  test("long payloads are cut: text at 4 KiB, hex at 1 KiB, with the full size named", () => {
    expect(viewBytes(new Uint8Array(5000).fill(0x61))).toMatchObject({ kind: "text" });
    expect((viewBytes(new Uint8Array(5000).fill(0x61)) as { text: string }).text).toEndWith("… (5000 bytes)");
    const hex = viewBytes(new Uint8Array(2000).fill(0xff)) as { kind: string; text: string };
    expect(hex.kind).toBe("hex");
    expect(hex.text.split(" ").filter((b) => b === "ff")).toHaveLength(1024);
  });
});

describe("words for constraints and durations", () => {
  test("each operator reads as words; a scalar as equality", async () => {
    const { wantsText } = await import("../../src/dashboard/pages/matching.ts");
    expect(wantsText("h100")).toBe('= "h100"');
    expect(wantsText({ gte: 40, lt: 128 })).toBe("≥ 40 and < 128");
    expect(wantsText({ in: ["a", "b"] })).toBe('in ["a","b"]');
    expect(wantsText({ all: ["x"], ne: "y" })).toBe('contains all of ["x"] and ≠ "y"');
    expect(wantsText({ exists: false })).toBe("absent");
  });

  test("durations", async () => {
    const { duration } = await import("../../src/dashboard/format.ts");
    expect(duration(59_400)).toBe("59 s");
    expect(duration(600_000)).toBe("10 min");
    expect(duration(61_000)).toBe("1 min 1 s");
    expect(duration(3_600_000 + 120_000)).toBe("1 h 2 min");
  });
});
