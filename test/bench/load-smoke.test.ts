// Goal: keep the load generator (bench/load/main.ts) from rotting. Runs it
// with --quick tiny sizes against a real orq server, and beanstalkd and the
// echo floor when present, and checks the JSON it writes has every
// scenario's figures (the Jupiter scenario's included, and the group
// scenarios': the noisy neighbour, the capped drain, the in-process group
// pick; the preference scenarios: locality and the in-process preference
// pick; and the in-process cost of waits and retained results), all positive.
// No timing assertions: only that each figure exists and is a number above
// zero, and for locality that every item was delivered once and its shares
// are fractions. beanstalkd parts are checked only
// when beanstalkd is installed; orq parts only once src/cli/main.ts exists.

import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const REPO_ROOT = join(import.meta.dir, "..", "..");
const orqPresent = existsSync(join(REPO_ROOT, "src", "cli", "main.ts"));
const beanstalkdPresent = Bun.which("beanstalkd") !== null;
/** The quick run takes 15-45 s on the 2-core build box (more when it is busy); the margin covers a loaded CI machine. */
const RUN_TIMEOUT_MS = 180_000;

interface Latency {
  count: number;
  p50Us: number;
  p99Us: number;
  p999Us: number;
  tenthsP50Us?: number[];
}
interface Throughput {
  items: number;
  itemsPerS: number;
  writtenBytes?: number;
}
interface Drained {
  items: number;
  itemsPerS: number;
}
interface NoisyResults {
  groups: number;
  groupItemsPerS: number;
  floodItems: number;
  alone: Latency;
  flood: Latency;
  floodEnqueue: Drained;
  floodS: number;
  floodDelivered: number;
  smallEnqueued: number;
  smallDelivered: number;
}
interface CappedResults {
  groups: number;
  maxLeased: number;
  policy: Record<string, unknown>;
  plain: { load: Drained; drain: Drained };
  capped: { load: Drained; drain: Drained };
}
interface GroupPickResults {
  items: number;
  signatures: number;
  shapes: Array<{ shape: string; items: number; groups: number; deliveredShare: number; dequeue: Latency; pick: Latency }>;
  memory: { items: number; perGroupBytes: number; withoutGroupsBytes: number; oneEachBytes: number } | null;
}
interface PreferencePickResults {
  items: number;
  signatures: number;
  repos: number;
  shapes: Array<{ shape: string; items: number; preferWaitMs: number; deliveredShare: number; dequeue: Latency; pick: Latency }>;
}
interface LocalityPass {
  prefers: boolean;
  preferWaitMs: number;
  kinds: number;
  acquisitions: number;
  acquisitionsPerS: number;
  fullFit: number;
  fullFitShare: number;
  enqueued: number;
  delivered: number;
  redelivered: number;
  serverFit: Record<string, number> | null;
}
interface WaitsCostResults {
  waits: { parked: number; owners: number; answered: number; perWaitBytes: number; wakeMs: number; wakeUsPerWait: number };
  results: { items: number; outcomes: Array<{ resultBytes: number; perOutcomeBytes: number; perOutcomeBeyondResultBytes: number }> };
}
interface ModeResults {
  locality?: { prefers: LocalityPass; plain: LocalityPass };
  preferencePick?: PreferencePickResults;
  noisy?: NoisyResults;
  waitsCost?: WaitsCostResults;
  cappedDrain?: CappedResults;
  groupPick?: GroupPickResults;
  failures?: Record<string, string>;
  enqueue?: Array<Throughput & { batch: number; connections: number }>;
  drain?: Throughput;
  mixed?: { deliveredItemsPerS: number; delivered: number; delay: Latency; warmupDelay: Latency };
  latency?: { pinned: boolean; ops: Record<string, Latency> };
  memory?: { afterLoad: { rssKiB: number; privateKiB: number; lmdb?: { rssKiB: number; cleanKiB: number; dirtyKiB: number } | null }; afterRestart?: { rssKiB: number } };
  drainMemory?: { peaks: { samples: number; rssMaxKiB: number; rssAnonMaxKiB: number; rssFileMaxKiB: number } };
  restart?: { afterStop: { listeningMs: number; firstItemMs: number }; afterCrash: { listeningMs: number; firstItemMs: number } };
  jupiter?: { items: number; signatures: number; kinds: number; connections: number; inFlightPerConnection: number; acquisitions: number; acquisitionsPerS: number; pingPerS: number;
    clientCpuUsPerAcquisition: number; clientCpuUsPerPing: number;
    serverCpuUsPerAcquisition: number | null; serverThreadsUsPerAcquisition?: Record<string, number> | null; serverThreadsUsPerPing?: Record<string, number> | null;
    floor?: { acquisitionsPerS: number; pingPerS: number; ratio: number; clientCpuUsPerAcquisition: number; clientCpuUsPerPing: number } | null;
    inProcess?: { items: number; acquisitionUs: number; pingUs: number; ratio: number } | null };
}
interface LoadReport {
  options: { priorities: string[] };
  results: Record<string, ModeResults>;
  skipped: Record<string, string>;
  failed: Record<string, string>;
  targets: Array<{ name: string; status: string; ratio: number | null }>;
}

function expectPositive(value: number | undefined, what: string): void {
  expect({ what, value }).toEqual({ what, value: expect.any(Number) });
  expect({ what, positive: (value ?? 0) > 0 }).toEqual({ what, positive: true });
}

function expectLatency(latency: Latency | undefined, what: string): void {
  expectPositive(latency?.count, `${what}.count`);
  expectPositive(latency?.p50Us, `${what}.p50Us`);
  expectPositive(latency?.p99Us, `${what}.p99Us`);
  expectPositive(latency?.p999Us, `${what}.p999Us`);
}

/** The latency scenario's ops also give one p50 per tenth of their samples. */
function expectRoundTrip(latency: Latency | undefined, what: string): void {
  expectLatency(latency, what);
  // One p50 per tenth of the samples; the whole run's median lies between the smallest and largest of them.
  const tenths = latency?.tenthsP50Us ?? [];
  expect({ what, tenths: tenths.length }).toEqual({ what, tenths: 10 });
  for (const [i, us] of tenths.entries()) expectPositive(us, `${what}.tenthsP50Us[${i}]`);
  const p50 = latency?.p50Us ?? 0;
  const within = p50 >= Math.min(...tenths) * 0.99 && p50 <= Math.max(...tenths) * 1.01;
  expect({ what, p50, tenths, within }).toEqual({ what, p50, tenths, within: true });
}

/** The noisy neighbour's shape: both windows' delays, the flood enqueued and delivered whole, the small groups' counts. */
function expectNoisy(noisy: NoisyResults | undefined, label: string): void {
  expect(noisy).toMatchObject({ groups: 100, groupItemsPerS: 50 });
  expectLatency(noisy?.alone, `${label} noisy: small groups alone`);
  expectLatency(noisy?.flood, `${label} noisy: small groups in the flood`);
  expectPositive(noisy?.floodItems, `${label} noisy: flood items`);
  expectPositive(noisy?.floodEnqueue.itemsPerS, `${label} noisy: flood enqueue items/s`);
  expectPositive(noisy?.floodS, `${label} noisy: flood seconds`);
  expect((noisy?.floodDelivered ?? 0) >= (noisy?.floodItems ?? 1)).toBe(true);
  expectPositive(noisy?.smallEnqueued, `${label} noisy: small items enqueued`);
  expectPositive(noisy?.smallDelivered, `${label} noisy: small items delivered`);
}

function expectQueueFigures(mode: ModeResults | undefined, label: string, restartable: boolean): void {
  expect(mode).toBeDefined();
  if (mode === undefined) return;
  expect((mode.enqueue ?? []).map((row) => `${row.batch}x${row.connections}`)).toEqual(["1x1", "1x8", "100x1", "100x8"]);
  for (const row of mode.enqueue ?? []) expectPositive(row.itemsPerS, `${label} enqueue ${row.batch}x${row.connections}`);
  expectPositive(mode.drain?.itemsPerS, `${label} drain`);
  expectPositive(mode.mixed?.deliveredItemsPerS, `${label} mixed delivered/s`);
  expectLatency(mode.mixed?.delay, `${label} mixed delay`);
  expectLatency(mode.mixed?.warmupDelay, `${label} mixed warm-up delay`);
  for (const op of ["enqueue1", "dequeue1", "dequeue1+ack"]) expectRoundTrip(mode.latency?.ops[op], `${label} latency ${op}`);
  expectPositive(mode.memory?.afterLoad.rssKiB, `${label} rss`);
  expectPositive(mode.memory?.afterLoad.privateKiB, `${label} private`);
  expectPositive(mode.drainMemory?.peaks.samples, `${label} drain memory samples`);
  expectPositive(mode.drainMemory?.peaks.rssMaxKiB, `${label} drain max RSS`);
  expectPositive(mode.drainMemory?.peaks.rssAnonMaxKiB, `${label} drain max anon`);
  if (restartable) {
    expectPositive(mode.restart?.afterStop.listeningMs, `${label} restart listening`);
    expectPositive(mode.restart?.afterStop.firstItemMs, `${label} restart first item`);
    expectPositive(mode.restart?.afterCrash.firstItemMs, `${label} crash restart first item`);
  }
}

describe("bench:load --quick", () => {
  const outDir = mkdtempSync(join(tmpdir(), "orq-load-smoke-"));
  const outPath = join(outDir, "load.json");
  let report: LoadReport | null = null;

  test(
    "runs to completion and writes its JSON",
    async () => {
      const child = Bun.spawn([process.execPath, join(REPO_ROOT, "bench", "load", "main.ts"), "--quick", "--out", outPath], {
        cwd: REPO_ROOT,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [exitCode, stderr] = await Promise.all([child.exited, new Response(child.stderr).text(), new Response(child.stdout).text()]);
      expect({ exitCode, stderr: exitCode === 0 ? "" : stderr.slice(-3000) }).toEqual({ exitCode: 0, stderr: "" });
      report = JSON.parse(readFileSync(outPath, "utf8")) as LoadReport;
      rmSync(outDir, { recursive: true, force: true });
    },
    RUN_TIMEOUT_MS,
  );

  test("has the echo floor's ping round trip, back to back and after an idle pause", () => {
    expectRoundTrip(report?.results["echo floor"]?.latency?.ops["ping"], "floor ping");
    expectRoundTrip(report?.results["echo floor"]?.latency?.ops["ping after pause"], "floor ping after pause");
  });

  test.skipIf(!orqPresent)("has every orq figure, in both durability modes", () => {
    for (const durability of ["strict", "relaxed"]) {
      const mode = report?.results[`orq ${durability}`];
      expectQueueFigures(mode, `orq ${durability}`, true);
      expectRoundTrip(mode?.latency?.ops["ping"], `orq ${durability} ping`);
      // LMDB's data file as mapped: resident pages, of them clean and dirty (dirty may be 0).
      const lmdb = mode?.memory?.afterLoad.lmdb;
      expectPositive(lmdb?.rssKiB, `orq ${durability} LMDB map resident`);
      expect((lmdb?.cleanKiB ?? -1) + (lmdb?.dirtyKiB ?? -1)).toBe(lmdb?.rssKiB ?? 0);
    }
  });

  test.skipIf(!orqPresent)("has orq --store memory's Jupiter acquisitions and latency, and nothing it has no store for", () => {
    const memory = report?.results["orq memory"];
    expectPositive(memory?.jupiter?.acquisitionsPerS, "orq memory jupiter acquisitions/s");
    expectPositive(memory?.jupiter?.pingPerS, "orq memory jupiter ping ceiling");
    expectRoundTrip(memory?.latency?.ops["dequeue1"], "orq memory dequeue1");
    expect(memory?.drain).toBeUndefined();
    expect(memory?.memory).toBeUndefined();
  });

  test.skipIf(!orqPresent)("has the Jupiter scenario in both durability modes: acquisitions and the ping ceiling, at the issue's shape", () => {
    for (const durability of ["strict", "relaxed"]) {
      const jupiter = report?.results[`orq ${durability}`]?.jupiter;
      expect(jupiter).toMatchObject({ signatures: 100, kinds: 10, connections: 10, inFlightPerConnection: 32 });
      expectPositive(jupiter?.items, `orq ${durability} jupiter items`);
      expectPositive(jupiter?.acquisitions, `orq ${durability} jupiter acquisitions`);
      expect((jupiter?.acquisitions ?? 0) <= (jupiter?.items ?? 0)).toBe(true);
      expectPositive(jupiter?.acquisitionsPerS, `orq ${durability} jupiter acquisitions/s`);
      expectPositive(jupiter?.pingPerS, `orq ${durability} jupiter ping ceiling`);
      // The in-process bound beside it: bench/micro/acquisition-path.bench.ts's figures, parsed from its output.
      const bound = jupiter?.inProcess;
      expectPositive(bound?.acquisitionUs, `orq ${durability} jupiter in-process µs per acquisition`);
      expectPositive(bound?.pingUs, `orq ${durability} jupiter in-process µs per ping`);
      expectPositive(bound?.ratio, `orq ${durability} jupiter in-process ratio`);
      expect(bound?.items).toBeGreaterThan(0);
      // The load generator's own CPU, and the same client against the Jupiter floor (bench/load/jupiter-floor.ts).
      expectPositive(jupiter?.clientCpuUsPerAcquisition, `orq ${durability} jupiter client CPU per acquisition`);
      expectPositive(jupiter?.clientCpuUsPerPing, `orq ${durability} jupiter client CPU per ping`);
      const floor = jupiter?.floor;
      expectPositive(floor?.acquisitionsPerS, `orq ${durability} jupiter floor acquisitions/s`);
      expectPositive(floor?.pingPerS, `orq ${durability} jupiter floor ping/s`);
      expect(floor?.ratio).toBeCloseTo((floor?.acquisitionsPerS ?? 0) / (floor?.pingPerS ?? 1), 6);
      expectPositive(floor?.clientCpuUsPerAcquisition, `orq ${durability} jupiter floor client CPU per acquisition`);
      // The server's CPU by thread (bench/load/thread-cpu.ts): read from /proc, every group that spent something, none negative.
      for (const threads of [jupiter?.serverThreadsUsPerAcquisition, jupiter?.serverThreadsUsPerPing]) {
        expect(threads).toBeObject();
        for (const [group, us] of Object.entries(threads ?? {})) expect({ group, positive: us > 0 }).toEqual({ group, positive: true });
      }
      if ((jupiter?.serverCpuUsPerAcquisition ?? 0) > 0) expect(Object.keys(jupiter?.serverThreadsUsPerAcquisition ?? {}).length).toBeGreaterThan(0);
    }
    const target = report?.targets.find((t) => t.name.startsWith("Jupiter acquisitions"));
    expect(target?.status === "met" || target?.status === "missed").toBe(true);
  });

  test.skipIf(!orqPresent)("has the in-process group pick: both shapes' pick and dequeue percentiles, and the memory per group", () => {
    const figures = report?.results["orq in-process"]?.groupPick;
    expect(figures?.signatures).toBe(100);
    expect((figures?.shapes ?? []).map((shape) => shape.shape)).toEqual(["spread", "one each"]);
    for (const shape of figures?.shapes ?? []) {
      expectPositive(shape.items, `group pick ${shape.shape} items`);
      expectPositive(shape.groups, `group pick ${shape.shape} groups`);
      expectPositive(shape.deliveredShare, `group pick ${shape.shape} delivered share`);
      for (const which of ["p50Us", "p99Us"] as const) {
        expectPositive(shape.pick[which], `group pick ${shape.shape} pick ${which}`);
        expectPositive(shape.dequeue[which], `group pick ${shape.shape} dequeue ${which}`);
      }
    }
    // Groups of one item: a group per item.
    expect(figures?.shapes[1]?.groups).toBe(figures?.shapes[1]?.items);
    // A difference of two heap readings: its sign is not the test's business at tiny sizes, only that it was taken.
    expect(typeof figures?.memory?.perGroupBytes).toBe("number");
    expectPositive(figures?.memory?.withoutGroupsBytes, "group pick heap without groups");
    expectPositive(figures?.memory?.oneEachBytes, "group pick heap in groups of one");
  });

  test.skipIf(!orqPresent)("has the in-process preference pick: both shapes' pick and dequeue percentiles", () => {
    const figures = report?.results["orq in-process"]?.preferencePick;
    expect(figures).toMatchObject({ signatures: 100, repos: 10 });
    expect((figures?.shapes ?? []).map((shape) => [shape.shape, shape.preferWaitMs])).toEqual([["fit order", 0], ["held", 60_000]]);
    for (const shape of figures?.shapes ?? []) {
      expectPositive(shape.items, `preference pick ${shape.shape} items`);
      expectPositive(shape.deliveredShare, `preference pick ${shape.shape} delivered share`);
      for (const which of ["p50Us", "p99Us"] as const) {
        expectPositive(shape.pick[which], `preference pick ${shape.shape} pick ${which}`);
        expectPositive(shape.dequeue[which], `preference pick ${shape.shape} dequeue ${which}`);
      }
    }
  });

  test.skipIf(!orqPresent)("has the locality scenario in both durability modes, with prefers and without: every item delivered once, shares that are fractions", () => {
    expect(Object.keys(report?.failed ?? {}).filter((name) => name.endsWith(": locality"))).toEqual([]);
    for (const durability of ["strict", "relaxed"]) {
      const locality = report?.results[`orq ${durability}`]?.locality;
      for (const [name, pass] of [["prefers", locality?.prefers], ["plain", locality?.plain]] as const) {
        const what = `orq ${durability} locality ${name}`;
        expect({ what, prefers: pass?.prefers, preferWaitMs: pass?.preferWaitMs, kinds: pass?.kinds }).toEqual({ what, prefers: name === "prefers", preferWaitMs: name === "prefers" ? 50 : 0, kinds: 10 });
        expectPositive(pass?.acquisitions, `${what} acquisitions`);
        expectPositive(pass?.acquisitionsPerS, `${what} acquisitions/s`);
        // Every item enqueued was delivered, each once: as many deliveries as items, none a second attempt.
        expectPositive(pass?.enqueued, `${what} enqueued`);
        expect({ what, delivered: pass?.delivered, redelivered: pass?.redelivered }).toEqual({ what, delivered: pass?.enqueued, redelivered: 0 });
        const share = pass?.fullFitShare ?? -1;
        expect({ what, share, fraction: share >= 0 && share <= 1 }).toEqual({ what, share, fraction: true });
        expect(pass?.fullFit).toBe(Math.round(share * (pass?.acquisitions ?? 0)));
      }
      // The server counted by fit every delivery of an item with prefers (none in the pass without).
      const fit = locality?.prefers.serverFit ?? {};
      expect(Object.values(fit).reduce((sum, n) => sum + n, 0)).toBe(locality?.prefers.delivered ?? -1);
      expect(Object.values(locality?.plain.serverFit ?? {}).reduce((sum, n) => sum + n, 0)).toBe(0);
    }
    // The memory mode is Jupiter's: no locality there.
    expect(report?.results["orq memory"]?.locality).toBeUndefined();
    for (const start of ["locality: deliveries to a worker holding", "locality: acquisitions/s with prefers"]) {
      const target = report?.targets.find((t) => t.name.startsWith(start));
      expect({ start, status: target?.status === "met" || target?.status === "missed" }).toEqual({ start, status: true });
    }
  });

  test.skipIf(!orqPresent)("has the in-process cost of waits and retained results beside the group pick, each a number", () => {
    expect(Object.keys(report?.failed ?? {}).filter((name) => name.endsWith(": waits"))).toEqual([]);
    const figures = report?.results["orq in-process"]?.waitsCost;
    expect(figures?.waits).toMatchObject({ owners: 100 });
    expectPositive(figures?.waits.parked, "waits parked at once");
    expect(figures?.waits.answered).toBe(figures?.waits.parked);
    // Heap differences and a difference of two timings: their sign is not the test's business at tiny sizes.
    for (const value of [figures?.waits.perWaitBytes, figures?.waits.wakeMs, figures?.waits.wakeUsPerWait]) expect(typeof value).toBe("number");
    expect((figures?.results.outcomes ?? []).map((outcome) => outcome.resultBytes)).toEqual([0, 100, 1024]);
    for (const outcome of figures?.results.outcomes ?? []) expect(typeof outcome.perOutcomeBeyondResultBytes).toBe("number");
    // Under the group pick's label, beside its figures, not in place of them.
    expect(report?.results["orq in-process"]?.groupPick).toBeDefined();
  });

  test.skipIf(!orqPresent)("has the noisy neighbour and the capped drain for orq, in both orders, and no group scenario failed", () => {
    expect(Object.keys(report?.failed ?? {}).filter((name) => name.endsWith(": noisy") || name.endsWith(": capped"))).toEqual([]);
    for (const label of ["orq strict", "orq relaxed", "orq strict fifo", "orq relaxed fifo"]) {
      expectNoisy(report?.results[label]?.noisy, label);
      const capped = report?.results[label]?.cappedDrain;
      expect(capped).toMatchObject({ groups: 1000, maxLeased: 8, policy: { group: "*", max_leased: 8 } });
      for (const pass of ["plain", "capped"] as const) {
        expectPositive(capped?.[pass].load.items, `${label} capped drain: ${pass} load items`);
        expectPositive(capped?.[pass].drain.items, `${label} capped drain: ${pass} drained items`);
        expectPositive(capped?.[pass].drain.itemsPerS, `${label} capped drain: ${pass} items/s`);
      }
    }
  });

  test.skipIf(!beanstalkdPresent)("has the noisy neighbour's contrast: beanstalkd in memory, in both orders", () => {
    for (const label of ["beanstalkd in-memory", "beanstalkd in-memory fifo"]) expectNoisy(report?.results[label]?.noisy, label);
    // beanstalkd has no groups: no capped drain.
    expect(report?.results["beanstalkd in-memory"]?.cappedDrain).toBeUndefined();
  });

  test.skipIf(orqPresent)("says orq was skipped while the server does not exist", () => {
    expect(report?.skipped["orq"]).toContain("src/cli/main.ts");
  });

  test.skipIf(!beanstalkdPresent)("has every beanstalkd figure that translates", () => {
    expectQueueFigures(report?.results["beanstalkd in-memory"], "beanstalkd in-memory", false);
    expectQueueFigures(report?.results["beanstalkd binlog"], "beanstalkd binlog", true);
    const fsyncAlways = report?.results["beanstalkd binlog fsync-always"]?.enqueue ?? [];
    expect(fsyncAlways.length).toBe(4);
    for (const row of fsyncAlways) expectPositive(row.itemsPerS, `beanstalkd fsync-always ${row.batch}x${row.connections}`);
  });

  test.skipIf(!orqPresent)("repeats drain and Jupiter in FIFO order, with the pages the drain wrote", () => {
    expect(report?.options.priorities).toEqual(["random", "fifo"]);
    for (const durability of ["strict", "relaxed"]) {
      const fifo = report?.results[`orq ${durability} fifo`];
      expectPositive(fifo?.drain?.itemsPerS, `orq ${durability} fifo drain`);
      expectPositive(fifo?.jupiter?.acquisitionsPerS, `orq ${durability} fifo jupiter`);
      // The FIFO pass runs nothing else.
      expect(fifo?.enqueue).toBeUndefined();
      expect(fifo?.latency).toBeUndefined();
      expect(fifo?.locality).toBeUndefined();
      expect(typeof report?.results[`orq ${durability}`]?.drain?.writtenBytes).toBe("number");
    }
  });

  test.skipIf(beanstalkdPresent)("says beanstalkd was skipped when it is not installed", () => {
    expect(report?.skipped["beanstalkd"]).toContain("not installed");
  });

  test("checks each target and gives it a status", () => {
    expect(report?.targets.map((t) => t.status).every((s) => s === "met" || s === "missed" || s === "not measured")).toBe(true);
    expect(report?.targets.length).toBe(20);
    // The random-against-FIFO target reads the FIFO pass's drain.
    const order = report?.targets.find((t) => t.name.startsWith("drain, orq strict random priorities vs FIFO"));
    expect(order).toBeDefined();
    if (orqPresent) expect(order?.status).not.toBe("not measured");
    const mixed = report?.targets.find((t) => t.name.startsWith("mixed load p99"));
    expect(mixed).toBeDefined();
    // The group targets: the pick's two bounds and memory, the noisy neighbour, the capped drain.
    for (const start of ["group pick p50", "group pick p99", "memory per group", "noisy neighbour", "capped drain", "Jupiter acquisitions, orq --store memory", "dequeue-1 p50, orq --store memory",
      "locality: deliveries", "locality: acquisitions", "preference pick p50", "preference pick p99"]) {
      expect({ start, found: report?.targets.some((t) => t.name.startsWith(start)) }).toEqual({ start, found: true });
    }
    if (orqPresent && beanstalkdPresent) {
      expect(report?.targets.filter((t) => t.status === "not measured").map((t) => t.name)).toEqual([]);
    }
  });
});
