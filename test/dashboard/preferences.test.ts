// Goal: the dashboard shows the contract's "Preferences" and "Trace context":
// the item page shows `prefers`, its `prefer_wait_ms` and the trace id of a
// W3C traceparent (else the trace as it is, escaped); the matching view shows
// a topic's deliveries of items with `prefers` by fit and its held items.

import { describe, expect, test } from "bun:test";
import { itemPage } from "../../src/dashboard/pages/item.ts";
import { matchingPage } from "../../src/dashboard/pages/matching.ts";
import { traceIdOf } from "../../src/dashboard/trace-id.ts";
import type { EngineInspector, MatchingView } from "../../src/engine/reads/inspect.ts";
import { pageFixture, type Fields } from "./page-fixture.ts";

const nowMs = Date.UTC(2026, 11, 1, 12, 0, 0);
const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
const traceparent = `00-${traceId}-00f067aa0ba902b7-01`;
const hostile = `<img src=x onerror=alert(1)>`;

describe("traceIdOf", () => {
  test("the trace id of a traceparent, alone or followed by tracestate", () => {
    expect(traceIdOf(traceparent)).toBe(traceId);
    expect(traceIdOf(`${traceparent} congo=t61rcWkgMzE,rojo=00f067aa0ba902b7`)).toBe(traceId);
    // A later version may add fields after a dash.
    expect(traceIdOf(`01-${traceId}-00f067aa0ba902b7-01-extra`)).toBe(traceId);
  });

  test("null for what is not a valid traceparent", () => {
    for (const trace of [
      "",
      "req-17",
      traceId,
      `00-${traceId}-00f067aa0ba902b7-01-extra`,
      `00-${traceId}-00f067aa0ba902b7-01x`,
      `ff-${traceId}-00f067aa0ba902b7-01`,
      `00-${"0".repeat(32)}-00f067aa0ba902b7-01`,
      `00-${traceId}-${"0".repeat(16)}-01`,
      `00-${traceId.toUpperCase()}-00f067aa0ba902b7-01`,
      `00-${traceId.slice(1)}-00f067aa0ba902b7-01`,
    ]) {
      expect(traceIdOf(trace)).toBeNull();
    }
  });
});

describe("the item page", () => {
  const base = { id: "1-1", topic: "render", state: "ready", priority: 0, attempt: 0, enqueued_at_ms: nowMs, deliver_at_ms: nowMs, payload: new Uint8Array(0), metadata: new Uint8Array(0) };

  async function shown(fields: Fields): Promise<string> {
    const fixture = pageFixture("/item?ns=shop&id=1-1", { get: () => ({ items: [{ ...base, ...fields }] }), explain: () => ({ items: [{ id: "1-1", state: "ready", reasons: [] }] }) }, { nowMs });
    return String((await itemPage(fixture.ctx)).live);
  }

  test("prefers as JSON with its wait, and the trace id of a traceparent with the whole context on hover", async () => {
    const text = await shown({ prefers: { zone: { in: ["eu-1"], weight: 5 }, ssd: true }, prefer_wait_ms: 30_000, trace: `${traceparent} rojo=1` });
    expect(text).toContain('<dt>prefers</dt><dd id="prefers"><code>{&quot;zone&quot;:{&quot;in&quot;:[&quot;eu-1&quot;],&quot;weight&quot;:5},&quot;ssd&quot;:true}</code></dd>');
    expect(text).toContain('<dd id="prefer-wait">30,000 ms as ready, for workers that fit every entry</dd>');
    expect(text).toContain(`<dd id="trace"><code data-trace-id="${traceId}" title="${traceparent} rojo=1">${traceId}</code></dd>`);
  });

  test("prefers without a wait; no prefers, no trace", async () => {
    expect(await shown({ prefers: { ssd: true } })).toContain('<dd id="prefer-wait"><span class="muted">none: any worker');
    const plain = await shown({});
    expect(plain).toContain('<dt>prefers</dt><dd id="prefers"><span class="muted">none</span></dd>');
    expect(plain).not.toContain("prefer-wait");
    expect(plain).toContain('<dd id="trace"><span class="muted">none</span></dd>');
  });

  test("a trace that is not a traceparent is shown as it is, as text", async () => {
    expect(await shown({ trace: "req-17" })).toContain('<dd id="trace"><code>req-17</code></dd>');
    const text = await shown({ trace: hostile, prefers: { [hostile]: true } });
    expect(text).not.toContain("<img");
    expect(text).toContain('<dd id="trace"><code>&lt;img src=x onerror=alert(1)&gt;</code></dd>');
  });
});

describe("the matching view", () => {
  const emptyView: MatchingView = {
    topicExists: true,
    fitDeliveries: { full: 0, partial: 0, released: 0 },
    heldItems: 0,
    askWindowMs: 600_000,
    askers: [],
    stuck: [],
    stuckTruncated: false,
  };

  async function shown(view: MatchingView): Promise<{ text: string; asked: unknown[] }> {
    const asked: unknown[] = [];
    const inspector: EngineInspector = {
      matchingView(ns, topic) {
        asked.push([ns, topic]);
        return view;
      },
      idByKey: () => null,
      readySinceMs: (_ns, topics) => topics.map(() => null),
    };
    const script = { topics: () => ({ topics: [{ topic: "render" }] }), stats: () => ({ namespaces: { shop: { topics: {} } } }) };
    const fixture = pageFixture("/matching?ns=shop&topic=render", script, { nowMs, inspector });
    return { text: String((await matchingPage(fixture.ctx)).live), asked };
  }

  test("the topic's deliveries by fit and its held items", async () => {
    const { text, asked } = await shown({ ...emptyView, fitDeliveries: { full: 1200, partial: 3, released: 45 }, heldItems: 7 });
    expect(asked).toEqual([["shop", "render"]]);
    expect(text).toContain('<tr data-fit="full"><td>full</td><td class="num">1,200</td>');
    expect(text).toContain('<tr data-fit="partial"><td>partial</td><td class="num">3</td>');
    expect(text).toContain('<tr data-fit="released"><td>released</td><td class="num">45</td>');
    expect(text).toContain('<p id="held-items">7 ready items are held for workers that fit every');
  });

  test("zeros when no item with prefers was delivered; one held item in the singular; none held: no line", async () => {
    const { text } = await shown(emptyView);
    expect(text).toContain('<tr data-fit="full"><td>full</td><td class="num">0</td>');
    expect(text).not.toContain("held-items");
    expect((await shown({ ...emptyView, heldItems: 1 })).text).toContain("1 ready item is held for workers that fit every <code>prefers</code> entry until its");
  });

  test("a topic with no items has no counts", async () => {
    const { text } = await shown({ ...emptyView, topicExists: false });
    expect(text).not.toContain("fit-deliveries");
  });
});
