// Goal: a schedule's ticks stay exact across crashes of a real `orq serve`.
// A schedule ticks every second (catch_up "one"); the server is SIGKILLed at
// a seeded moment within a tick's second, several times, and restarted on its
// data dir. Afterwards: no tick_at_ms has two items (each item's key names
// its tick, and no key repeats), ticks go on after each restart (a tick later
// than the last kill), consecutive ticks are a second apart except across a
// kill (where catch_up "one" gives one item for the latest missed tick), and
// `schedules` shows the last tick and its item's id, as the items say. The
// CLI's schedule, schedules and unschedule commands run against it too.
//
// The seed is printed; replay with ORQ_SCHEDULES_CRASH_SEED=<seed>.

import { afterAll, expect, test } from "bun:test";
import { OrqClient } from "../../src/client/index.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { bunPath, mainPath, ServerProcess } from "../support/server-process.ts";

const seed = process.env.ORQ_SCHEDULES_CRASH_SEED === undefined ? Math.floor(Math.random() * 1_000_000) : Number(process.env.ORQ_SCHEDULES_CRASH_SEED);
const ns = "sched";
const topic = "ticks";
const rounds = 3;

let server: ServerProcess | null = null;
let client: OrqClient | null = null;

afterAll(async () => {
  await client?.close().catch(() => {});
  await server?.cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every item of the topic: its tick (from its key) and id. */
async function ticks(c: OrqClient): Promise<Array<{ tickAtMs: number; id: string }>> {
  const found: Array<{ tickAtMs: number; id: string }> = [];
  let after: unknown;
  for (let page = 0; page < 100; page++) {
    const reply = await c.request("list", { ns, topic, limit: 1000, ...(after === undefined ? {} : { after }) });
    for (const item of reply.items as Array<{ id: string; key?: string }>) {
      const match = /^schedule:every:(\d+)$/.exec(item.key ?? "");
      expect(match).not.toBeNull();
      found.push({ tickAtMs: Number(match![1]), id: item.id });
    }
    after = reply.next;
    if (after === undefined || after === null) break;
  }
  return found.sort((a, b) => a.tickAtMs - b.tickAtMs);
}

/** Wait until the topic holds a tick later than `afterMs` (and `more` ticks in all beyond `count`). */
async function waitForTicks(c: () => OrqClient, afterMs: number, atLeast: number): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const seen = await ticks(c());
    if (seen.length >= atLeast && (seen[seen.length - 1]?.tickAtMs ?? 0) > afterMs) return;
    await sleep(100);
  }
  throw new Error(`no tick after ${afterMs} (want ${atLeast} items)`);
}

async function cli(port: number, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([bunPath, mainPath, ...args, "--server", `127.0.0.1:${port}`, "--ns", ns], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

test(`every_ms 1000 ticks: no tick twice, none lost beyond catch-up, across SIGKILLs (seed ${seed})`, async () => {
  const r = seededRandom(seed);
  console.log(`schedules crash test seed ${seed} (replay: ORQ_SCHEDULES_CRASH_SEED=${seed} bun test test/e2e/schedules-crash.test.ts)`);
  server = await ServerProcess.start({ args: ["--shards", "4"] });
  client = await OrqClient.connect({ port: server.port, clientName: "schedules-crash" });
  const c = () => client as OrqClient;

  const set = await cli(server.port, ["schedule", "every", "--every-ms", "1000", "--topic", topic, "--payload", "tick", "--priority", "3"]);
  expect(set.stderr).toBe("");
  expect(set.code).toBe(0);
  expect(set.stdout).toContain("every: next ");
  await waitForTicks(c, 0, 2);

  const kills: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // Somewhere inside a tick's second, often right around a tick.
    await sleep(Math.floor(r() * 1000));
    kills.push(Date.now());
    await c().close();
    await server.restart({ signal: "SIGKILL" });
    client = await OrqClient.connect({ port: server.port, clientName: "schedules-crash" });
    const before = (await ticks(c())).length;
    await waitForTicks(c, kills[kills.length - 1] as number, before + 2);
  }

  const seen = await ticks(c());
  const keys = new Set(seen.map((t) => t.tickAtMs));
  // No tick produced two items.
  expect(keys.size).toBe(seen.length);
  // Ticks went on after the last kill.
  expect((seen[seen.length - 1]?.tickAtMs ?? 0) > (kills[kills.length - 1] as number)).toBe(true);
  // Every gap is one period, or a whole number of them across a kill (catch-up "one").
  for (let i = 1; i < seen.length; i++) {
    const gap = (seen[i]!.tickAtMs - seen[i - 1]!.tickAtMs) / 1000;
    expect(Number.isInteger(gap) && gap >= 1).toBe(true);
    if (gap > 1) expect(kills.some((k) => k >= seen[i - 1]!.tickAtMs && k <= seen[i]!.tickAtMs)).toBe(true);
  }

  // `schedules` shows the last tick it fired and its item (the list and the reply are read a tick apart at most).
  const listed = await cli(server.port, ["schedules", "--json"]);
  expect(listed.code).toBe(0);
  const schedule = (JSON.parse(listed.stdout) as { schedules: Array<Record<string, unknown>> }).schedules[0]!;
  expect([schedule.name, schedule.every_ms, schedule.timezone, schedule.catch_up]).toEqual(["every", 1000, "UTC", "one"]);
  // The item's fields in snake_case, as set (defaults included).
  expect(schedule.item).toMatchObject({ topic, priority: 3, delivery: "at_least_once", max_attempts: 10 });
  const after = await ticks(c());
  const last = after.find((t) => t.tickAtMs === schedule.last_at_ms);
  expect(last?.id).toBe(schedule.last_id as string);

  const removed = await cli(server.port, ["unschedule", "every"]);
  expect([removed.code, removed.stdout.trim()]).toEqual([0, "removed every"]);
  const none = await c().request("schedules", { ns });
  expect(none.schedules).toEqual([]);
}, 120_000);
