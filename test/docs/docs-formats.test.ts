// Goal: the docs cannot drift from the program's formats (issue 14). Every
// item id and receipt written in README.md, BENCHMARKS.md and docs/*.md parses
// with the engine's own parsers (two-part ids, four-part receipts); every
// Prometheus metric they name is one a live server exports at /metrics, and
// every orq_* metric it exports is in docs/OPERATIONS.md's table; and the
// `stats` example in docs/PROTOCOL.md has exactly the keys of a live reply, in its order.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseId, parseReceipt } from "../../src/engine/state/ids.ts";
import { RawConnection } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

const repoRoot = resolve(import.meta.dir, "../..");
const docFiles = ["README.md", "BENCHMARKS.md", ...readdirSync(join(repoRoot, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
const docs = docFiles.map((file) => ({ file, text: readFileSync(join(repoRoot, file), "utf8") }));

/** Where a pattern matches, as `file:line: match`. */
function occurrences(pattern: RegExp): Array<{ where: string; match: string }> {
  const found: Array<{ where: string; match: string }> = [];
  for (const { file, text } of docs) {
    text.split("\n").forEach((line, index) => {
      for (const match of line.matchAll(pattern)) found.push({ where: `${file}:${index + 1}`, match: match[0] });
    });
  }
  return found;
}

/**
 * Colon-separated decimals standing alone: ids (`3:17`) and receipts
 * (`3:17:1:1`). Not part of an address (`127.0.0.1:7420`, `:7420`), a time
 * (`T21:58:31`, `01:17 UTC`, the bench pages' run starts) or a word.
 */
const idLike = /(?<![\w.:/-])\d+(?::\d+)+(?![\w.:]| UTC)/g;

let server: ServerProcess | null = null;
let metricsText = "";
let liveStats: Record<string, unknown> = {};

beforeAll(async () => {
  server = await ServerProcess.start();
  const httpPort = Number(/^orq http on .+:(\d+)$/.exec(server.stdoutLines.find((line) => line.startsWith("orq http on")) ?? "")?.[1]);
  // The same requests as the stats example: one item into billing/invoices, then stats.
  const conn = await RawConnection.connect(server.port);
  const enqueued = await conn.call({ id: 1, op: "enqueue", ns: "billing", items: [{ topic: "invoices" }] });
  expect(enqueued.ok).toBe(true);
  liveStats = await conn.call({ id: 2, op: "stats" });
  conn.socket.destroy();
  metricsText = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
});

afterAll(async () => {
  await server?.cleanup();
});

describe("ids and receipts in the docs", () => {
  test("every one parses: two parts with parseId, four with parseReceipt; no other shape", () => {
    const found = occurrences(idLike);
    // The docs show ids and receipts in many places: a scan that finds none is broken.
    expect(found.filter(({ match }) => match.split(":").length === 4).length).toBeGreaterThan(3);
    expect(found.filter(({ match }) => match.split(":").length === 2).length).toBeGreaterThan(3);
    const bad = found.filter(({ match }) => {
      const parts = match.split(":").length;
      if (parts === 2) return parseId(match) === null;
      if (parts === 4) return parseReceipt(match) === null;
      return true;
    });
    expect(bad.map(({ where, match }) => `${where}: ${match}`)).toEqual([]);
  });

  test("the scan tells an old three-part receipt from an id, a receipt and an address", () => {
    const sample = "ack 0:12:1 and 0:12:1:1, get 0:12, at 127.0.0.1:7420 or :7421, at 2026-11-30T21:58:31Z";
    expect([...sample.matchAll(idLike)].map((match) => match[0])).toEqual(["0:12:1", "0:12:1:1", "0:12"]);
    expect(parseReceipt("0:12:1")).toBeNull();
  });
});

/** Names that look like metrics but are not: the dashboard's cookie, cluster mode's tables. */
const notMetrics = new Set([
  "orq_session",
  // Cluster mode's PostgreSQL tables (docs/CLUSTER.md).
  "orq_meta",
  "orq_items",
  "orq_outcomes",
  "orq_shards",
  "orq_nodes",
  "orq_pauses",
  "orq_pause_version",
  "orq_policies",
  "orq_policy_version",
  "orq_rate_buckets",
  "orq_topic_slots",
  "orq_shard_slots",
  "orq_quota_buckets",
  "orq_acked",
]);

describe("metrics named in the docs", () => {
  const families = (): Map<string, string> => {
    const out = new Map<string, string>();
    for (const match of metricsText.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(match[1]!, match[2]!);
    return out;
  };

  test("every metric name in the docs is exported by a live server (a * names a prefix)", () => {
    const exported = families();
    expect(exported.size).toBeGreaterThan(20);
    const named = occurrences(/(?<![\w/.])(?:orq|process|nodejs)_[a-z0-9_]*\*?(?![\w.])/g);
    expect(named.length).toBeGreaterThan(15);
    const unknown = named.filter(({ match }) => {
      if (notMetrics.has(match)) return false;
      if (match.endsWith("*")) return ![...exported.keys()].some((family) => family.startsWith(match.slice(0, -1)));
      if (exported.has(match)) return false;
      const histogram = /^(.+)_(bucket|sum|count)$/.exec(match);
      return !(histogram !== null && exported.get(histogram[1]!) === "histogram");
    });
    expect(unknown.map(({ where, match }) => `${where}: ${match}`)).toEqual([]);
  });

  test("every orq_* metric the server exports has a row in docs/OPERATIONS.md's metrics table", () => {
    const operations = docs.find((doc) => doc.file === "docs/OPERATIONS.md")!.text;
    const rows = new Set([...operations.matchAll(/^\| `(orq_[a-z0-9_]+)` \|/gm)].map((match) => match[1]));
    const orqFamilies = [...families().keys()].filter((family) => family.startsWith("orq_"));
    expect(orqFamilies.length).toBeGreaterThan(10);
    expect(orqFamilies.filter((family) => !rows.has(family))).toEqual([]);
  });
});

describe("the stats example in docs/PROTOCOL.md", () => {
  /** Every key path of a JSON value ("namespaces.billing.topics.invoices.ready", ...), arrays as []. */
  function keyPaths(value: unknown, prefix = ""): string[] {
    if (Array.isArray(value)) return [`${prefix}[]`, ...value.flatMap((element) => keyPaths(element, `${prefix}[]`))];
    if (typeof value !== "object" || value === null) return [];
    return Object.entries(value).flatMap(([key, child]) => [`${prefix}${key}`, ...keyPaths(child, `${prefix}${key}.`)]);
  }

  test("has exactly the keys of a live reply to the same requests", () => {
    const protocol = docs.find((doc) => doc.file === "docs/PROTOCOL.md")!.text;
    const section = protocol.slice(protocol.indexOf("### `stats`"));
    const example = /```json\n([\s\S]*?)\n```/.exec(section)?.[1];
    expect(example).toBeDefined();
    const documented = JSON.parse(example!) as Record<string, unknown>;
    // In order: the example shows the wire's field order (src/server/ops/stats.ts).
    expect(keyPaths(documented)).toEqual(keyPaths(liveStats));
    expect(Object.keys(documented)).toContain("engine");
  });
});
