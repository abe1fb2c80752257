// Goal: namespace and topic names are data chosen by clients, and `stats`
// keys its maps by them: names that are also the names of Object's own
// properties (`__proto__`, `constructor`, `toString`) come back as entries
// like any other, and none of them changes the reply's other fields.

import { expect, test } from "bun:test";
import { createEncoder } from "../../src/protocol/msgpack-codec.ts";
import { allNamespaces } from "../../src/server/auth.ts";
import type { OpContext } from "../../src/server/op-types.ts";
import { opTable } from "../../src/server/op-table.ts";
import { Harness, item } from "../engine/support/harness.ts";
import { makeOpContext } from "../support/op-context.ts";

const objectNames = ["__proto__", "constructor", "toString"];

function statsOf(h: Harness, ns: string | null): Record<string, unknown> {
  const ctx: OpContext = { ...makeOpContext({ scope: allNamespaces }), engine: h.engine, nowMs: h.now, serverStats: () => ({}) };
  const outcome = opTable.stats.handle({}, ns, ctx);
  if (outcome.kind !== "reply") throw new Error(`stats answered ${outcome.kind}`);
  return outcome.value;
}

test("stats lists namespaces and topics named like Object's own properties", async () => {
  const h = new Harness();
  for (const ns of objectNames) await h.enqueue(ns, objectNames.map((topic) => item(topic)));
  await h.enqueue("plain", [item("jobs")]);

  const reply = statsOf(h, null);
  const namespaces = reply.namespaces as Record<string, Record<string, unknown>>;
  expect(Object.keys(namespaces).sort()).toEqual([...objectNames, "plain"].sort());
  for (const ns of objectNames) {
    const entry = Object.getOwnPropertyDescriptor(namespaces, ns)?.value as Record<string, unknown>;
    expect(entry.ready).toBe(objectNames.length);
    const topics = entry.topics as Record<string, Record<string, unknown>>;
    expect(Object.keys(topics).sort()).toEqual([...objectNames].sort());
    for (const topic of objectNames) expect((Object.getOwnPropertyDescriptor(topics, topic)?.value as Record<string, unknown>).ready).toBe(1);
  }
  expect((reply.totals as Record<string, unknown>).ready).toBe(objectNames.length * objectNames.length + 1);

  // One namespace asked by name, and the reply encodes with every key in it.
  const one = statsOf(h, "__proto__");
  expect(Object.keys(one.namespaces as object)).toEqual(["__proto__"]);
  const bytes = createEncoder().encode(one);
  const text = new TextDecoder("latin1").decode(bytes);
  expect(text.split("__proto__").length - 1).toBe(2);
});
