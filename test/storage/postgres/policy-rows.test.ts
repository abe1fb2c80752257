// Goal: policy rows carry policies between two stores (two cluster nodes) on
// one real PostgreSQL, as shared-rows.ts says for every shared row: a read
// sees nothing until another commit moves the policy counter (pause commits
// move only theirs, and the other way round); reconcile reports the other
// store's set, replace and clear of a topic's own, a group's and the default
// ("*") policy; a scope whose own change is on the way, or whose engine
// policy differs from the row seen, is left alone; a clear removes only the
// row the store saw; policies survive a reopen; and the poll that carries
// them runs often enough for the contract's "on every node within 1 s".
// Skipped when PostgreSQL is not installed (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import { clusterLimits } from "../../../src/limits.ts";
import { enginePolicyRows, samePolicy, type EnginePolicies } from "../../../src/storage/postgres/policy-rows.ts";
import type { PostgresStore } from "../../../src/storage/postgres/postgres-store.ts";
import type { PolicyRecord } from "../../../src/storage/record.ts";
import { postgresAvailable } from "../../support/postgres-server.ts";
import { storeOptions } from "./store-options.ts";
import { storeSession } from "./store-session.ts";

const ns = "default";

function options(url: string) {
  return storeOptions(url);
}

/** A scope named as tests name it: "jobs" (the topic's own), "jobs/*" (the default), "jobs/acme" (a group's). */
function scopeOf(name: string): { topic: string; group: string | null } {
  const [topic, group] = name.split("/");
  return { topic: topic!, group: group ?? null };
}

function nameOf(topic: string, group: string | null): string {
  return group === null ? topic : `${topic}/${group}`;
}

function policy(name: string, bounds: Partial<PolicyRecord>): PolicyRecord {
  return { ns, ...scopeOf(name), weight: null, maxLeased: null, rate: null, ...bounds };
}

/** Commit `record` for the scope `name`, or its clear (null). */
async function writePolicy(store: PostgresStore, name: string, record: PolicyRecord | null): Promise<void> {
  const result = await store.commit({ shards: [], outcomes: [], meta: null, policies: [{ ns, ...scopeOf(name), record }] });
  expect(result.metaError).toBeNull();
}

/** The engine as reconcile asks it: its policies as `engine` holds them, its own writes on the way as `writing` lists them. */
function asked(engine: Map<string, PolicyRecord>, writing: ReadonlySet<string> = new Set()): EnginePolicies {
  return { storedPolicy: (_ns, topic, group) => engine.get(nameOf(topic, group)) ?? null, writing: (_ns, topic, group) => writing.has(nameOf(topic, group)) };
}

/** Read and reconcile; the engine takes the changes; returns them by name (null: counter unmoved). */
async function poll(store: PostgresStore, engine: Map<string, PolicyRecord>, writing?: ReadonlySet<string>): Promise<Array<[string, PolicyRecord | null]> | null> {
  const snapshot = await store.readPolicies();
  if (snapshot === null) return null;
  const changes = store.policies.reconcile(snapshot, enginePolicyRows(asked(engine, writing)));
  return changes
    .map(({ scope, record }): [string, PolicyRecord | null] => {
      const name = nameOf(scope.topic, scope.group);
      if (record === null) engine.delete(name);
      else engine.set(name, record);
      return [name, record];
    })
    .sort((x, y) => x[0].localeCompare(y[0]));
}

function stored(store: PostgresStore): string[] {
  return [...store.loadPolicies()].map((record) => nameOf(record.topic, record.group)).sort();
}

describe("the poll's period", () => {
  test("a poll runs at least once a second: a policy or pause set on one node holds on every node within 1 s", () => {
    expect(clusterLimits.pausePollMs).toBeLessThanOrEqual(1_000);
  });
});

describe("samePolicy", () => {
  test("compares the bounds; none equals none only", () => {
    expect(samePolicy(null, null)).toBe(true);
    expect(samePolicy(policy("t", {}), null)).toBe(false);
    expect(samePolicy(policy("t", { maxLeased: 2 }), policy("t", { maxLeased: 2 }))).toBe(true);
    expect(samePolicy(policy("t", { maxLeased: 2 }), policy("t", { maxLeased: 3 }))).toBe(false);
    expect(samePolicy(policy("t/g", { weight: 2 }), policy("t/g", { weight: 1 }))).toBe(false);
    expect(samePolicy(policy("t", { rate: { count: 1, perMs: 5 } }), policy("t", { rate: { count: 1, perMs: 5 } }))).toBe(true);
    expect(samePolicy(policy("t", { rate: { count: 1, perMs: 5 } }), policy("t", { rate: { count: 1, perMs: 6 } }))).toBe(false);
    expect(samePolicy(policy("t", { rate: { count: 1, perMs: 5 } }), policy("t", {}))).toBe(false);
  });
});

describe.skipIf(!postgresAvailable())("policy rows across stores", () => {
  const session = storeSession();

  async function openTwo(label: string): Promise<[PostgresStore, PostgresStore, string]> {
    const url = await session.server().createDatabase(label);
    const first = await session.open(options(url));
    return [first, await session.open(options(url)), url];
  }

  test("another store's policies arrive once the counter moves, set, replaced and cleared; pause commits leave the policy counter alone", async () => {
    const [a, b] = await openTwo("policies1");
    const engineB = new Map<string, PolicyRecord>();
    expect(await poll(b, engineB)).toBeNull();
    await a.commit({ shards: [], outcomes: [], meta: null, pauses: [{ ns, topic: "jobs", group: null, record: { ns, topic: "jobs", group: null, untilMs: null } }] });
    expect(await poll(b, engineB)).toBeNull();
    const own = policy("jobs", { maxLeased: 10 });
    const fallback = policy("jobs/*", { weight: 2, rate: { count: 5, perMs: 1_000 } });
    const acme = policy("jobs/acme", { weight: 4 });
    await writePolicy(a, "jobs", own);
    await writePolicy(a, "jobs/*", fallback);
    await writePolicy(a, "jobs/acme", acme);
    expect(await poll(b, engineB)).toEqual([
      ["jobs", own],
      ["jobs/*", fallback],
      ["jobs/acme", acme],
    ]);
    expect(await poll(b, engineB)).toBeNull();
    // Policy commits leave the pause counter where B last read it.
    expect(await b.readPauses()).not.toBeNull();
    b.pauses.reconcile((await b.readPauses())!, { writing: () => false, holds: () => true });
    await writePolicy(a, "jobs/acme", policy("jobs/acme", { weight: 1, maxLeased: 3 }));
    expect(await b.readPauses()).toBeNull();
    await writePolicy(a, "jobs", null);
    expect(await poll(b, engineB)).toEqual([
      ["jobs", null],
      ["jobs/acme", policy("jobs/acme", { weight: 1, maxLeased: 3 })],
    ]);
    expect(stored(b)).toEqual(["jobs/*", "jobs/acme"]);
  });

  test("a scope whose own change is on the way, or whose engine policy is not the row seen, is left alone until it settles", async () => {
    const [a, b] = await openTwo("policies2");
    const engineB = new Map<string, PolicyRecord>();
    await writePolicy(a, "jobs/acme", policy("jobs/acme", { weight: 2 }));
    await poll(b, engineB);
    // B sets its own policy of the scope (in its engine at once, its write on the way) while A replaces it.
    engineB.set("jobs/acme", policy("jobs/acme", { weight: 7 }));
    await writePolicy(a, "jobs/acme", policy("jobs/acme", { weight: 3 }));
    expect(await poll(b, engineB, new Set(["jobs/acme"]))).toEqual([]);
    expect(engineB.get("jobs/acme")?.weight).toBe(7);
    // B's write lands after A's: it wins in the database, and the next poll changes nothing in B's engine.
    await writePolicy(b, "jobs/acme", policy("jobs/acme", { weight: 7 }));
    expect(await poll(b, engineB)).toEqual([]);
    expect(engineB.get("jobs/acme")?.weight).toBe(7);
    // A's engine holds the policy A wrote, which B's replaced.
    const engineA = new Map<string, PolicyRecord>([["jobs/acme", policy("jobs/acme", { weight: 3 })]]);
    expect(await poll(a, engineA)).toEqual([["jobs/acme", policy("jobs/acme", { weight: 7 })]]);
  });

  test("a clear removes only the row the store saw; one never seen is removed whatever it holds; policies survive a reopen", async () => {
    const [a, b, url] = await openTwo("policies3");
    const engineB = new Map<string, PolicyRecord>();
    await writePolicy(a, "jobs", policy("jobs", { maxLeased: 1 }));
    await poll(b, engineB);
    // A replaces the policy; B, not polled since, clears the one it saw: A's newer policy stays.
    await writePolicy(a, "jobs", policy("jobs", { maxLeased: 2 }));
    engineB.delete("jobs");
    await writePolicy(b, "jobs", null);
    expect(await poll(b, engineB)).toEqual([["jobs", policy("jobs", { maxLeased: 2 })]]);
    // A policy B never saw is cleared by B all the same.
    await writePolicy(a, "mail/*", policy("mail/*", { maxLeased: 9 }));
    await writePolicy(b, "mail/*", null);
    const reopened = await session.open(options(url));
    expect([...reopened.loadPolicies()]).toEqual([policy("jobs", { maxLeased: 2 })]);
  });
});
