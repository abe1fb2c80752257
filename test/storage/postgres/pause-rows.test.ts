// Goal: pause rows carry pauses between two stores (two cluster nodes) on one
// real PostgreSQL, as pause-rows.ts says: a read sees nothing until another
// commit moves the counter; reconcile reports the other store's pause and
// resume; a snapshot older than this store's own commit leaves that topic
// alone, and so does one for a topic whose own change is still on the way
// (so an ending timed pause's delete spares a newer pause, and a resume of a
// pause not polled yet is not undone by the poll that reads that pause);
// a delete only removes the row the store saw (a timed pause ending must not
// take a newer pause with it), while a delete of a row never seen removes
// whatever is there (a resume of a pause not polled yet); a group's pause is
// a row of its own, beside its topic's.
// Skipped when PostgreSQL is not installed (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import { enginePauseRows, type EnginePauses } from "../../../src/storage/postgres/pause-rows.ts";
import type { PostgresStore } from "../../../src/storage/postgres/postgres-store.ts";
import type { PauseRecord } from "../../../src/storage/record.ts";
import { postgresAvailable } from "../../support/postgres-server.ts";
import { storeOptions } from "./store-options.ts";
import { storeSession } from "./store-session.ts";

const ns = "default";

/** A topic ("jobs") or a group of one ("jobs/acme"): the scope tests name pauses by. */
function scopeOf(name: string): { topic: string; group: string | null } {
  const [topic, group] = name.split("/");
  return { topic: topic!, group: group ?? null };
}

function nameOf(topic: string, group: string | null): string {
  return group === null ? topic : `${topic}/${group}`;
}

async function writePause(store: PostgresStore, name: string, untilMs: number | null | undefined): Promise<void> {
  const { topic, group } = scopeOf(name);
  const record: PauseRecord | null = untilMs === undefined ? null : { ns, topic, group, untilMs };
  const result = await store.commit({ shards: [], outcomes: [], meta: null, pauses: [{ ns, topic, group, record }] });
  expect(result.metaError).toBeNull();
}

/** The engine as reconcile asks it: its pauses as `engine` holds them, its own writes on the way as `writing` lists them. */
function asked(engine: Map<string, number | null>, writing: ReadonlySet<string> = new Set()): EnginePauses {
  return { pausedUntil: (_ns, topic, group) => engine.get(nameOf(topic, group)), writing: (_ns, topic, group) => writing.has(nameOf(topic, group)) };
}

/** A change as a poll reports it: the scope's name and its pause's end (undefined: resumed). */
interface PauseChange {
  ns: string;
  name: string;
  untilMs: number | null | undefined;
}

/** Read and reconcile, with the engine's pauses as `engine` holds them; returns the changes by name (null: counter unmoved). */
async function poll(store: PostgresStore, engine: Map<string, number | null>, writing?: ReadonlySet<string>): Promise<PauseChange[] | null> {
  const snapshot = await store.readPauses();
  if (snapshot === null) return null;
  const changes = store.pauses.reconcile(snapshot, enginePauseRows(asked(engine, writing)));
  return changes.map(({ scope, record }) => {
    const name = nameOf(scope.topic, scope.group);
    if (record === null) engine.delete(name);
    else engine.set(name, record.untilMs);
    return { ns: scope.ns, name, untilMs: record === null ? undefined : record.untilMs };
  }).sort((x, y) => x.name.localeCompare(y.name));
}

function stored(store: PostgresStore): Array<[string, number | null]> {
  return [...store.loadPauses()].map((record): [string, number | null] => [nameOf(record.topic, record.group), record.untilMs]).sort();
}

describe.skipIf(!postgresAvailable())("pause rows across stores", () => {
  const session = storeSession();

  async function openTwo(label: string): Promise<[PostgresStore, PostgresStore]> {
    const url = await session.server().createDatabase(label);
    const open = () => session.open(storeOptions(url));
    const first = await open();
    return [first, await open()];
  }

  test("another store's pause and resume arrive once the counter moves; an unmoved counter reads nothing", async () => {
    const [a, b] = await openTwo("pauses1");
    const engineB = new Map<string, number | null>();
    expect(await poll(b, engineB)).toBeNull();
    await writePause(a, "jobs", null);
    await writePause(a, "mail", 5_000);
    expect(await poll(b, engineB)).toEqual([
      { ns, name: "jobs", untilMs: null },
      { ns, name: "mail", untilMs: 5_000 },
    ]);
    expect(await poll(b, engineB)).toBeNull();
    expect(stored(b)).toEqual([["jobs", null], ["mail", 5_000]]);
    await writePause(a, "jobs", undefined);
    expect(await poll(b, engineB)).toEqual([{ ns, name: "jobs", untilMs: undefined }]);
    expect(stored(b)).toEqual([["mail", 5_000]]);
  });

  test("a snapshot older than the store's own commit, or a topic whose own change is on the way, is left alone", async () => {
    const [a, b] = await openTwo("pauses2");
    const engineB = new Map<string, number | null>();
    await writePause(a, "jobs", null);
    const old = await b.readPauses();
    // B's own pause of the same topic commits after that snapshot was read.
    engineB.set("jobs", 7_000);
    await writePause(b, "jobs", 7_000);
    expect(b.pauses.reconcile(old!, enginePauseRows(asked(engineB)))).toEqual([]);
    expect(stored(b)).toEqual([["jobs", 7_000]]);
    // B's timed pause of "jobs" ended in its engine, its delete not committed yet, when A re-pauses the topic:
    // the snapshot leaves B's engine and B's row alone, so B's delete (conditional on its row) spares A's pause.
    engineB.delete("jobs");
    await writePause(a, "jobs", 9_000);
    await writePause(a, "other", null);
    expect(await poll(b, engineB)).toEqual([{ ns, name: "other", untilMs: null }]);
    expect(engineB.has("jobs")).toBe(false);
    expect(stored(b)).toEqual([["jobs", 7_000], ["other", null]]);
    await writePause(b, "jobs", undefined);
    expect(await poll(b, engineB)).toEqual([{ ns, name: "jobs", untilMs: 9_000 }]);
    expect(engineB.get("jobs")).toBe(9_000);
    expect(await poll(b, engineB)).toBeNull();
  });

  test("a topic whose own write is on the way is left alone even when the engine's pause equals the row seen", async () => {
    const [a, b] = await openTwo("pauses4");
    const engineB = new Map<string, number | null>();
    // A pauses; B, which has not polled it, takes a resume (nothing paused in its engine, nothing seen)
    // whose delete is still queued when B's poll reads A's row.
    await writePause(a, "jobs", null);
    expect(await poll(b, engineB, new Set(["jobs"]))).toEqual([]);
    expect(engineB.has("jobs")).toBe(false);
    // The delete lands: the row is gone, and B's engine, left unpaused, agrees with the database.
    await writePause(b, "jobs", undefined);
    expect(await poll(b, engineB)).toEqual([]);
    expect(engineB.has("jobs")).toBe(false);
    expect(stored(b)).toEqual([]);
    expect(await poll(b, engineB)).toBeNull();
  });

  test("a delete removes only the row the store saw; a row never seen is deleted whatever it holds", async () => {
    const [a, b] = await openTwo("pauses3");
    const engineB = new Map<string, number | null>();
    await writePause(a, "jobs", 1_000);
    await poll(b, engineB);
    // A replaces the timed pause; B, not polled since, ends the one it saw.
    await writePause(a, "jobs", null);
    engineB.delete("jobs");
    await writePause(b, "jobs", undefined);
    expect(await poll(b, engineB)).toEqual([{ ns, name: "jobs", untilMs: null }]);
    expect(engineB.get("jobs")).toBeNull();
    // A pause B never saw ("mail") is lifted by B's resume all the same.
    await writePause(a, "mail", null);
    await writePause(b, "mail", undefined);
    const engineA = new Map<string, number | null>([["jobs", null], ["mail", null]]);
    expect(await poll(a, engineA)).toEqual([{ ns, name: "mail", untilMs: undefined }]);
    expect(stored(a)).toEqual([["jobs", null]]);
  });

  test("a group's pause is a row of its own: set, changed and resumed beside its topic's, which it leaves alone", async () => {
    const [a, b] = await openTwo("pauses5");
    const engineB = new Map<string, number | null>();
    await writePause(a, "jobs", null);
    await writePause(a, "jobs/acme", 5_000);
    await writePause(a, "jobs/globex", null);
    expect(await poll(b, engineB)).toEqual([
      { ns, name: "jobs", untilMs: null },
      { ns, name: "jobs/acme", untilMs: 5_000 },
      { ns, name: "jobs/globex", untilMs: null },
    ]);
    await writePause(a, "jobs/acme", undefined);
    await writePause(a, "jobs/globex", 7_000);
    expect(await poll(b, engineB)).toEqual([
      { ns, name: "jobs/acme", untilMs: undefined },
      { ns, name: "jobs/globex", untilMs: 7_000 },
    ]);
    expect(stored(b)).toEqual([["jobs", null], ["jobs/globex", 7_000]]);
    // B's own resume of the group, still on its way, keeps A's newer pause of that group from its engine; the topic is untouched.
    await writePause(a, "jobs/globex", null);
    expect(await poll(b, engineB, new Set(["jobs/globex"]))).toEqual([]);
    expect(engineB.get("jobs/globex")).toBe(7_000);
    expect(engineB.get("jobs")).toBeNull();
  });
});
