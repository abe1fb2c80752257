// `npm run bench:load`: the end-to-end load generator. Starts orq (and
// its peers: beanstalkd in memory and with its binlog, and a bare echo floor)
// as child processes on 127.0.0.1 with data under a temp folder, drives each
// over TCP with a lean pipelined driver, prints one line per step to stderr,
// a summary table and the orq/peer ratios to stdout, and writes every figure
// to a JSON file. See BENCHMARKS.md for what each figure means.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { BeanstalkConn } from "./beanstalk-conn.ts";
import { beanstalkLatencyOps, floorLatencyOps, orqLatencyOps } from "./latency-ops.ts";
import { GROUP_PICK_LABEL, measureGroupPick, type GroupPickFigures } from "./group-pick-bound.ts";
import { runJupiter } from "./jupiter.ts";
import { runLocalityPair } from "./locality.ts";
import { measureWaitsCost, retainedOutcome, WAITS_COST_LABEL, type WaitsCostFigures } from "./waits-cost-bound.ts";
import { describeMachine } from "./machine.ts";
import { orqMixedTake } from "./mixed-load.ts";
import type { LoadOptions, Scenario } from "./options.ts";
import { SCENARIOS, SECOND_ORDER_SCENARIOS, parseOptions } from "./options.ts";
import type { PriorityOrder } from "./priorities.ts";
import { OrqConn } from "./orq-conn.ts";
import { pin, unpin } from "./pinning.ts";
import { measurePreferencePick } from "./preference-pick-bound.ts";
import type { Child, Durability } from "./processes.ts";
import { beanstalkdPath, orqAvailable, startBeanstalkd, startEcho, startOrq, startOrqBeanstalk } from "./processes.ts";
import { checkTargets, summaryTable, targetTable } from "./report.ts";
import type { ResultsBySystem } from "./report.ts";
import { runLatency } from "./runners.ts";
import type { ModeResults, ModeSpec, SuiteContext } from "./suite.ts";
import { runMode } from "./suite.ts";
import { beanstalkSystem, openBeanstalk, orqSystem } from "./systems.ts";

const REPO_ROOT = join(import.meta.dir, "..", "..");
const ALL_SCENARIOS = new Set<Scenario>(SCENARIOS);

const runStartMs = performance.now();
function log(line: string): void {
  const elapsedS = ((performance.now() - runStartMs) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench:load ${elapsedS} s] ${line}\n`);
}

/** A pass over the systems in one priority order: its label suffix ("" for the first order) and the scenarios it runs. */
interface OrderPass {
  order: PriorityOrder;
  suffix: string;
  scenarios: ReadonlySet<Scenario>;
}

function orqSpec(options: LoadOptions, durability: Durability, pass: OrderPass): ModeSpec {
  const label = `orq ${durability}${pass.suffix}`;
  return {
    label,
    scenarios: pass.scenarios,
    enqueueItemsSingle: options.itemsSingle,
    enqueueItemsBatch: options.items,
    restartable: true,
    start: (dataDir, logPath) => startOrq(dataDir, durability, logPath),
    system: (child, shape) => orqSystem(label, child.host, child.port, pass.order, shape),
    groups: true,
    latencyOps: async (child) => {
      const conn = await OrqConn.connect(child.host, child.port);
      return { ops: orqLatencyOps(conn), close: () => conn.close() };
    },
    takeWaitMs: orqMixedTake.waitMs,
    mixedTakeCount: orqMixedTake.takeCount,
    jupiter: (child) =>
      runJupiter(child.host, child.port, {
        items: options.jupiterItems,
        durationS: options.jupiterDurationS,
        pingDurationS: options.jupiterPingS,
        serverPid: child.pid,
        order: pass.order,
      }),
    locality: (start) => runLocalityPair(start, { backlog: options.localityBacklog, durationS: options.localityDurationS, order: pass.order }),
  };
}

function beanstalkSpec(options: LoadOptions, mode: "in-memory" | "binlog" | "binlog fsync-always", pass: OrderPass): ModeSpec {
  const label = `beanstalkd ${mode}${pass.suffix}`;
  const fsyncAlways = mode === "binlog fsync-always";
  // The noisy neighbour's contrast is beanstalkd in memory, the drain's peer; the binlog would only repeat it.
  const scenarios = mode === "in-memory" ? pass.scenarios : new Set([...pass.scenarios].filter((scenario) => scenario !== "noisy"));
  return {
    label,
    // fsync on every write runs at a few thousand items/s: only its enqueue rate is worth the wait.
    scenarios: fsyncAlways ? new Set<Scenario>(["enqueue"]) : scenarios,
    enqueueItemsSingle: fsyncAlways ? options.itemsFsyncAlways : options.itemsSingle,
    enqueueItemsBatch: fsyncAlways ? options.itemsFsyncAlways : options.items,
    restartable: mode === "binlog",
    start: (dataDir, logPath) => startBeanstalkd(mode === "in-memory" ? null : dataDir, fsyncAlways ? 0 : null, logPath),
    system: (child, shape) => beanstalkSystem(label, child.host, child.port, pass.order, shape),
    groups: false,
    latencyOps: async (child) => {
      const conn: BeanstalkConn = await openBeanstalk(child.host, child.port);
      return { ops: beanstalkLatencyOps(conn), close: () => conn.close() };
    },
    takeWaitMs: 1000,
    mixedTakeCount: 10,
  };
}

/**
 * orq as Jupiter's in-memory matcher (`--store memory`: nothing on disk, no
 * commit waited for): only the scenarios a store without persistence is for,
 * Jupiter's acquisitions and the latency of one request.
 */
function orqMemorySpec(options: LoadOptions, pass: OrderPass): ModeSpec {
  const spec = orqSpec(options, "relaxed", pass);
  const label = `orq memory${pass.suffix}`;
  return {
    ...spec,
    label,
    scenarios: new Set([...pass.scenarios].filter((scenario) => scenario === "jupiter" || scenario === "latency")),
    restartable: false,
    start: (dataDir, logPath) => startOrq(dataDir, "relaxed", logPath, ["--store", "memory"]),
    system: (child, shape) => orqSystem(label, child.host, child.port, pass.order, shape),
  };
}

/** orq's beanstalkd port under beanstalkd's own load shape (the beanstalkd driver, unchanged), strict durability. */
function orqBeanstalkSpec(options: LoadOptions, pass: OrderPass): ModeSpec {
  const label = `orq beanstalk-port strict${pass.suffix}`;
  return {
    ...beanstalkSpec(options, "binlog", pass),
    label,
    scenarios: new Set<Scenario>(["enqueue", "drain"].filter((s) => pass.scenarios.has(s as Scenario)) as Scenario[]),
    restartable: false,
    start: (dataDir, logPath) => startOrqBeanstalk(dataDir, "strict", logPath),
    system: (child) => beanstalkSystem(label, child.host, child.port, pass.order),
  };
}

async function runFloor(context: SuiteContext): Promise<ModeResults> {
  const child = context.track(await startEcho(join(context.tempDir, "echo.log")));
  const conn = await OrqConn.connect(child.host, child.port);
  const pinned = pin(child.pid) && pin(process.pid);
  try {
    const ops = await runLatency(floorLatencyOps(conn), context.options.latencySamples, context.options.latencyWarmup);
    const ping = ops["ping"];
    if (ping !== undefined) log(`echo floor latency ping${pinned ? " (pinned)" : ""}: p50 ${ping.p50Us} µs, p99 ${ping.p99Us} µs, p99.9 ${ping.p999Us} µs; p50 by tenth ${(ping.tenthsP50Us ?? []).map((us) => us.toFixed(1)).join(" ")}`);
    return { latency: { pinned, ops } };
  } finally {
    unpin(process.pid);
    conn.close();
    await child.stop();
  }
}

/**
 * The engine's picks in one process: with groups (group-pick-bound.ts), then
 * with preferences (preference-pick-bound.ts), under one label. Either may
 * fail alone: its failure is kept in the results and the other's figures stay.
 */
async function runPicks(context: SuiteContext): Promise<ModeResults> {
  const { options } = context;
  const results: ModeResults = {};
  const guard = async (name: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`${name}: FAILED: ${message}`);
      results.failures = { ...results.failures, [name]: message };
    }
  };
  await guard("group pick", async () => {
    results.groupPick = await measureGroupPick({ items: options.pickItems, groups: options.pickGroups, calls: options.pickCalls, warmup: options.pickWarmup, passS: options.pickPassS });
    logGroupPick(results.groupPick);
  });
  await guard("preference pick", async () => {
    const figures = await measurePreferencePick({ items: options.pickItems, calls: options.pickCalls, warmup: options.pickWarmup, passS: options.pickPassS });
    results.preferencePick = figures;
    for (const shape of figures.shapes) {
      log(
        `preference pick, ${shape.shape}: ${shape.items} items, ${figures.signatures} signatures x ${figures.repos} repositories, prefer_wait_ms ${shape.preferWaitMs}; ` +
          `pick p50 ${shape.pick.p50Us} µs, p99 ${shape.pick.p99Us} µs (${shape.picks} calls); dequeue p50 ${shape.dequeue.p50Us} µs, p99 ${shape.dequeue.p99Us} µs (${shape.dequeues} calls)`,
      );
    }
  });
  return results;
}

function logGroupPick(figures: GroupPickFigures): void {
  for (const shape of figures.shapes) {
    log(
      `group pick, ${shape.shape}: ${shape.items} items in ${shape.groups} groups, ${figures.signatures} signatures; ` +
        `pick p50 ${shape.pick.p50Us} µs, p99 ${shape.pick.p99Us} µs (${shape.picks} calls); dequeue p50 ${shape.dequeue.p50Us} µs, p99 ${shape.dequeue.p99Us} µs (${shape.dequeues} calls)`,
    );
  }
  if (figures.memory !== null) log(`group pick: memory per group beyond its item ${figures.memory.perGroupBytes.toFixed(1)} B (${figures.memory.perSpreadGroupBytes.toFixed(1)} B per group of ${figures.memory.spreadGroups})`);
}

/** The cost of `wait` and ack results; a failure is the "waits" scenario's, so the group pick's figures under the same label stay. */
async function runWaitsCost(context: SuiteContext): Promise<ModeResults> {
  const { options } = context;
  let figures: WaitsCostFigures;
  try {
    figures = await measureWaitsCost({ waits: options.waitsParked, owners: options.waitsOwners, resultItems: options.waitsResultItems });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    log(`waits cost: FAILED: ${reason}`);
    return { failures: { waits: reason } };
  }
  const { waits } = figures;
  log(
    `waits: ${waits.parked} parked at once over ${waits.owners} connections, ${waits.perWaitBytes.toFixed(1)} B each; ` +
      `${waits.wakeMs.toFixed(1)} ms from the first ack to the last answered (acks alone ${waits.acksAloneMs.toFixed(1)} ms), ${waits.wakeUsPerWait.toFixed(2)} µs per wait`,
  );
  const bytes = (n: number | null | undefined) => (n == null ? "-" : `${n.toFixed(1)} B`);
  log(
    `retained acked outcome, bytes beyond its result: ${[0, 100, 1024].map((size) => `${size === 0 ? "no result" : `a ${size} B result`} ${bytes(retainedOutcome(figures, size)?.perOutcomeBeyondResultBytes)}`).join(", ")}`,
  );
  return { waitsCost: figures };
}

type RunGuarded = (label: string, run: () => Promise<ModeResults>) => Promise<void>;

/** orq's modes, its beanstalkd port and beanstalkd's modes, in one priority order. */
async function runSystems(context: SuiteContext, pass: OrderPass, runGuarded: RunGuarded, skipped: Record<string, string>): Promise<void> {
  const { options } = context;
  if (options.systems.has("orq")) {
    if (!orqAvailable()) {
      skipped["orq"] = "src/cli/main.ts does not exist yet";
      log("orq: skipped (src/cli/main.ts does not exist yet)");
    } else {
      for (const durability of ["strict", "relaxed"] as const) {
        if (!options.orqModes.has(durability)) continue;
        await runGuarded(`orq ${durability}${pass.suffix}`, () => runMode(context, orqSpec(options, durability, pass)));
      }
      if (options.orqModes.has("memory")) await runGuarded(`orq memory${pass.suffix}`, () => runMode(context, orqMemorySpec(options, pass)));
    }
  }
  // A second order compares orq with beanstalkd in memory, the drain's peer; the rest is read once.
  const firstOrder = pass.suffix === "";
  if (firstOrder && options.systems.has("orq-beanstalk") && orqAvailable()) {
    await runGuarded(`orq beanstalk-port strict${pass.suffix}`, () => runMode(context, orqBeanstalkSpec(options, pass)));
  }
  if (options.systems.has("beanstalkd")) {
    if (beanstalkdPath() === null) {
      skipped["beanstalkd"] = "beanstalkd is not installed (apt-get install beanstalkd)";
      log("beanstalkd: skipped (not installed)");
    } else {
      for (const mode of firstOrder ? (["in-memory", "binlog", "binlog fsync-always"] as const) : (["in-memory"] as const)) {
        await runGuarded(`beanstalkd ${mode}${pass.suffix}`, () => runMode(context, beanstalkSpec(options, mode, pass)));
      }
    }
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options === null) return 0;
  const startedAt = new Date();
  const tempDir = mkdtempSync(join(tmpdir(), "orq-load-"));
  const children = new Set<Child>();
  const context: SuiteContext = {
    options,
    tempDir,
    log,
    track: (child) => {
      children.add(child);
      return child;
    },
  };
  const results: ResultsBySystem = {};
  const skipped: Record<string, string> = {};
  const failed: Record<string, string> = {};
  // One system failing (a server that will not start, say) must not throw away the others' figures.
  // A label run twice (the in-process group pick, then the waits cost) keeps both runs' figures.
  const runGuarded = async (label: string, run: () => Promise<ModeResults>) => {
    try {
      results[label] = { ...results[label], ...(await run()) };
      for (const [scenario, reason] of Object.entries(results[label].failures ?? {})) failed[`${label}: ${scenario}`] = reason;
    } catch (error) {
      failed[label] = error instanceof Error ? error.message : String(error);
      log(`${label}: FAILED: ${failed[label]}`);
      for (const child of children) await child.stop();
      children.clear();
    }
  };
  log(`temp dir ${tempDir}; scenarios ${[...options.only].join(",")}; systems ${[...options.systems].join(",")}`);

  try {
    if (options.systems.has("floor") && options.only.has("latency")) {
      await runGuarded("echo floor", () => runFloor(context));
    }
    // The engine's picks with groups and with preferences, in one process: once per run, not per mode or order.
    if (options.systems.has("orq") && options.only.has("pick") && orqAvailable()) {
      await runGuarded(GROUP_PICK_LABEL, () => runPicks(context));
    }
    // What `wait` and ack results cost, in one process: once per run too.
    if (options.systems.has("orq") && options.only.has("waits") && orqAvailable()) {
      await runGuarded(WAITS_COST_LABEL, () => runWaitsCost(context));
    }
    const passes: OrderPass[] = options.priorities.map((order, index) => ({
      order,
      suffix: index === 0 ? "" : ` ${order}`,
      scenarios: index === 0 ? ALL_SCENARIOS : SECOND_ORDER_SCENARIOS,
    }));
    for (const pass of passes) {
      log(`priorities: ${pass.order}${pass.suffix === "" ? "" : ` (${[...pass.scenarios].join(", ")} only)`}`);
      await runSystems(context, pass, runGuarded, skipped);
    }
  } finally {
    for (const child of children) await child.stop();
    if (!options.keep) rmSync(tempDir, { recursive: true, force: true });
  }

  const targets = checkTargets(results);
  const machine = describeMachine();
  console.log(`\norq load benchmark — ${machine.cpuModel}, ${machine.nproc} vCPU, Bun ${machine.bun}${options.quick ? " (QUICK: tiny sizes, figures are not meaningful)" : ""}\n`);
  console.log(summaryTable(results));
  console.log("\nTargets (orq / peer):\n");
  console.log(targetTable(targets));
  for (const [name, reason] of Object.entries(skipped)) console.log(`\n${name} skipped: ${reason}`);
  for (const [name, reason] of Object.entries(failed)) console.log(`\n${name} FAILED: ${reason.slice(0, 2000)}`);

  const outPath = resolve(options.out ?? join(REPO_ROOT, ".bench-out", `load-${startedAt.toISOString().replaceAll(":", "-")}.json`));
  mkdirSync(dirname(outPath), { recursive: true });
  const report = {
    version: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine,
    options: { ...options, only: [...options.only], systems: [...options.systems] },
    results,
    skipped,
    failed,
    targets,
  };
  writeFileSync(outPath, JSON.stringify(report, null, 2));
  console.log(`\nJSON: ${outPath}`);
  return Object.keys(failed).length === 0 ? 0 : 1;
}

process.exitCode = await main();
