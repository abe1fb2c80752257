// Goal: the item page shows an ended item's outcome and its `ack` result
// (escaped text, JSON, or hex with its size for bytes that are not UTF-8;
// none when the ack gave none), and a live item's metadata as its progress.

import { describe, expect, test } from "bun:test";
import { itemPage } from "../../src/dashboard/pages/item.ts";
import { pageFixture, type Fields } from "./page-fixture.ts";

async function rendered(item: Fields): Promise<string> {
  const fixture = pageFixture("/item?ns=shop&id=1-1", { get: () => ({ items: [item] }), explain: () => ({ items: [{ id: "1-1", state: item.state, reasons: [] }] }) });
  return String((await itemPage(fixture.ctx)).live);
}

const ended = (result?: Uint8Array): Fields => ({ id: "1-1", state: "ended", outcome: "acked", ...(result === undefined ? {} : { result }) });

describe("item page: results and progress", () => {
  test("an acked item's result: text escaped, JSON, or hex with its size", async () => {
    const text = await rendered(ended(new TextEncoder().encode("<b>done</b>")));
    expect(text).toContain('data-state="ended">acked</b>');
    expect(text).toContain('<dd id="result">');
    expect(text).toContain("&lt;b&gt;done&lt;/b&gt;");
    expect(text).not.toContain("<b>done</b>");
    expect(await rendered(ended(new TextEncoder().encode('{"answer":42}')))).toContain('<span class="tag">json</span>');
    const binary = await rendered(ended(Uint8Array.of(0xff, 0x00, 0x10)));
    expect(binary).toContain('<span class="tag">hex</span>');
    expect(binary).toContain("ff 00 10");
  });

  test("no result row when the ack gave none, nor for another outcome", async () => {
    expect(await rendered(ended())).not.toContain('id="result"');
    expect(await rendered({ id: "1-1", state: "ended", outcome: "cancelled" })).not.toContain('id="result"');
  });

  test("a live item's metadata is shown as its progress", async () => {
    const item = { id: "1-1", topic: "t", state: "leased", priority: 0, payload: new Uint8Array(0), metadata: new TextEncoder().encode("step 2 of 3"), attempt: 1, deliver_at_ms: 0, enqueued_at_ms: 0, lease_expires_at_ms: 1 };
    const text = await rendered(item);
    expect(text).toContain("<dt>metadata (progress)</dt>");
    expect(text).toContain("step 2 of 3");
  });
});
