// Runs the scenarios against one system in one mode (orq strict, beanstalkd
// binlog, ...). Every enqueue run gets a fresh server and data dir; the last
// one (batch 100, 8 connections) leaves `items` ready, and that backlog then
// serves the memory, restart, latency and drain scenarios, in that order
// (drain last because it empties the queue). Mixed load, the noisy
// neighbour and each pass of the capped drain and of locality get servers
// of their own.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { runCappedDrain, type CappedDrainFigures } from "./capped-drain.ts";
import type { LatencySummary } from "./histogram.ts";
import type { CapturedReplies, JupiterFigures, JupiterFloorFigures } from "./jupiter.ts";
import { runJupiterFloor } from "./jupiter.ts";
import { measureInProcessBound } from "./jupiter-bound.ts";
import type { LocalityFigures, LocalityPass } from "./locality.ts";
import { describeThreadCpu } from "./thread-cpu.ts";
import { mixedShape } from "./mixed-load.ts";
import { runNoisyNeighbour, type NoisyFigures } from "./noisy-neighbour.ts";
import type { LoadOptions, Scenario } from "./options.ts";
import { pin, unpin } from "./pinning.ts";
import type { Child, MemoryFigures } from "./processes.ts";
import type { MemoryRange } from "./processes.ts";
import { readCpuS, readMemory, readWriteBytes, sampleMemory, startJupiterFloorChild } from "./processes.ts";
import type { LatencyOp, MixedFigures, ThroughputFigures } from "./runners.ts";
import { mixedWarmupSDefault, runDrain, runEnqueue, runLatency, runMixed } from "./runners.ts";
import type { GroupPickFigures } from "./group-pick-bound.ts";
import type { PreferencePickFigures } from "./preference-pick-bound.ts";
import type { WaitsCostFigures } from "./waits-cost-bound.ts";
import type { ProducerShape, System } from "./systems.ts";

export interface EnqueueRow extends ThroughputFigures {
  batch: number;
  connections: number;
}

export interface RestartFigures {
  /** From spawning the process to its ready banner (or first accepted connection). */
  listeningMs: number;
  /** From spawning the process to the first item taken. */
  firstItemMs: number;
}

export interface ModeResults {
  enqueue?: EnqueueRow[];
  drain?: ThroughputFigures;
  mixed?: MixedFigures;
  latency?: { pinned: boolean; ops: Record<string, LatencySummary> };
  /**
   * atLoadEnd: the moment the load ends; afterLoad: AFTER_LOAD_MS later
   * (before orq's idle collection can have run: it waits a whole quiet
   * second after the last request, and then runs concurrently); afterIdle: after `idleS` seconds
   * with no request (orq's idle GC hint has had its chance); afterRestart:
   * once the restarted server has handed out its first item.
   */
  memory?: { readyItems: number; idleS?: number; atLoadEnd?: MemoryFigures; afterLoad: MemoryFigures; afterIdle?: MemoryFigures; afterRestart?: MemoryFigures };
  /** The server's memory sampled every DRAIN_SAMPLE_MS while the drain ran, and read once when it ended. */
  drainMemory?: { peaks: MemoryRange; afterDrain: MemoryFigures };
  restart?: { readyItems: number; afterStop: RestartFigures; afterCrash: RestartFigures };
  /** Capability-matched acquisitions against the ping ceiling (orq only; jupiter.ts). */
  jupiter?: JupiterFigures;
  /** Small groups' delay with and without one group's flood (noisy-neighbour.ts). */
  noisy?: NoisyFigures;
  /** The drain over 1,000 groups capped at max_leased 8, and a plain drain beside it (orq only; capped-drain.ts). */
  cappedDrain?: CappedDrainFigures;
  /** The in-process pick with groups (group-pick-bound.ts), under its own label: it is the engine's, not a mode's. */
  groupPick?: GroupPickFigures;
  /** The in-process pick with preferences (preference-pick-bound.ts), under the same label. */
  preferencePick?: PreferencePickFigures;
  /** Preferences under a stream: 10 kinds over 10 repositories, with `prefers` and without, each on a fresh server (orq only; locality.ts). */
  locality?: LocalityFigures;
  /** The in-process cost of `wait` and ack results (waits-cost-bound.ts), under the same label. */
  waitsCost?: WaitsCostFigures;
  /** Scenarios of this mode that failed, by name, with the error: the mode's other figures are kept. */
  failures?: Record<string, string>;
}

export interface ModeSpec {
  label: string;
  scenarios: ReadonlySet<Scenario>;
  enqueueItemsSingle: number;
  enqueueItemsBatch: number;
  restartable: boolean;
  start(dataDir: string, logPath: string): Promise<Child>;
  /** The server under load; with a shape, orq's items name its groups in turn (beanstalkd has no groups: one tube), priorities from its streams. */
  system(child: Child, shape?: ProducerShape): System;
  /** Whether the system has groups and policies (orq): the capped drain runs only then. */
  groups: boolean;
  latencyOps(child: Child): Promise<{ ops: LatencyOp[]; close(): void }>;
  /** For mixed load: how long a consumer's take waits, and how many it asks for. */
  takeWaitMs: number;
  mixedTakeCount: number;
  /** The Jupiter scenario against a fresh server, for systems that match capabilities (orq). */
  jupiter?(child: Child): Promise<{ figures: JupiterFigures; replies: CapturedReplies }>;
  /** The locality scenario's two passes, each on a server from `start`, for systems with preferences (orq's durable modes). */
  locality?(start: () => Promise<Child>): Promise<LocalityFigures>;
}

export interface SuiteContext {
  options: LoadOptions;
  tempDir: string;
  log(line: string): void;
  track(child: Child): Child;
}

const ENQUEUE_SHAPES = [
  { batch: 1, connections: 1 },
  { batch: 1, connections: 8 },
  { batch: 100, connections: 1 },
  { batch: 100, connections: 8 },
];
const FIRST_ITEM_TIMEOUT_MS = 120_000;
/** The "a second after the load" reading the memory target uses (the target's measure), taken before any idle collection. */
const AFTER_LOAD_MS = 1000;
/** How often the drain scenario reads the server's memory (200 ms: a few hundred samples over a drain, each a /proc read). */
const DRAIN_SAMPLE_MS = 200;

let dirCounter = 0;
function freshDir(context: SuiteContext, label: string): { dataDir: string; logPath: string } {
  dirCounter++;
  const name = `${label.replaceAll(/[^a-z0-9]+/gi, "-")}-${dirCounter}`;
  const dataDir = join(context.tempDir, name);
  mkdirSync(dataDir, { recursive: true });
  return { dataDir, logPath: join(context.tempDir, `${name}.log`) };
}

/** How long the drain's written bytes may take to stop growing after it (30 s), and how often they are read (250 ms). */
const WRITES_SETTLE_MS = 30_000;
const WRITES_POLL_MS = 250;

/** The server's written bytes once two readings WRITES_POLL_MS apart agree (or WRITES_SETTLE_MS passed). */
async function settledWriteBytes(pid: number): Promise<number> {
  const deadline = performance.now() + WRITES_SETTLE_MS;
  let last = readWriteBytes(pid);
  while (performance.now() < deadline) {
    await Bun.sleep(WRITES_POLL_MS);
    const now = readWriteBytes(pid);
    if (now === last) return now;
    last = now;
  }
  return last;
}

/** The server's CPU time per item (user + system): steadier than a rate on a machine other work is loading. */
const cpuPerItem = (f: ThroughputFigures) =>
  f.serverCpuS === undefined || f.items === 0 ? "unknown" : `${f.serverCpuS.toFixed(1)} s, ${((f.serverCpuS / f.items) * 1e6).toFixed(1)} µs/item`;
const rate = (n: number) => Math.round(n).toLocaleString("en-US");
const mib = (kib: number) => (kib / 1024).toFixed(1);
const describeMemory = (m: MemoryFigures) =>
  `RSS ${mib(m.rssKiB)} MiB (anon ${mib(m.rssAnonKiB)}, file ${mib(m.rssFileKiB)}), private ${mib(m.privateKiB)} MiB` +
  (m.lmdb === undefined || m.lmdb === null ? "" : `; LMDB map resident ${mib(m.lmdb.rssKiB)} MiB (clean ${mib(m.lmdb.cleanKiB)}, dirty ${mib(m.lmdb.dirtyKiB)})`);

const describeTenths = (s: LatencySummary) => (s.tenthsP50Us ?? []).map((us) => us.toFixed(1)).join(" ");

export async function runMode(context: SuiteContext, spec: ModeSpec): Promise<ModeResults> {
  const { options, log } = context;
  const results: ModeResults = {};
  const wants = (scenario: Scenario) => spec.scenarios.has(scenario) && options.only.has(scenario);

  if (wants("enqueue")) {
    results.enqueue = [];
    for (const shape of ENQUEUE_SHAPES.slice(0, -1)) {
      const { dataDir, logPath } = freshDir(context, spec.label);
      const child = context.track(await spec.start(dataDir, logPath));
      const items = shape.batch === 1 ? spec.enqueueItemsSingle : spec.enqueueItemsBatch;
      const figures = await runEnqueue(spec.system(child), { items, ...shape, depth: options.depth });
      await child.stop();
      results.enqueue.push({ ...shape, ...figures });
      log(`${spec.label} enqueue batch=${shape.batch} conns=${shape.connections}: ${rate(figures.itemsPerS)} items/s (${figures.items} items, ${figures.seconds.toFixed(2)} s)`);
    }
  }

  const needsBacklog = wants("enqueue") || wants("memory") || wants("latency") || wants("drain");
  if (needsBacklog) {
    const { dataDir, logPath } = freshDir(context, spec.label);
    let child = context.track(await spec.start(dataDir, logPath));
    const shape = ENQUEUE_SHAPES[ENQUEUE_SHAPES.length - 1] ?? { batch: 100, connections: 8 };
    const loadCpuS = readCpuS(child.pid);
    const load = await runEnqueue(spec.system(child), { items: spec.enqueueItemsBatch, ...shape, depth: options.depth });
    load.serverCpuS = readCpuS(child.pid) - loadCpuS;
    log(`${spec.label} enqueue batch=${shape.batch} conns=${shape.connections}: ${rate(load.itemsPerS)} items/s (${load.items} items, ${load.seconds.toFixed(2)} s; server CPU ${cpuPerItem(load)})`);
    if (results.enqueue !== undefined) results.enqueue.push({ ...shape, ...load });

    if (wants("memory")) {
      const atLoadEnd = readMemory(child.pid);
      log(`${spec.label} memory with ${load.items} ready, as the load ends: ${describeMemory(atLoadEnd)}`);
      // --quick's idle wait (0.2 s) is shorter than a second: the first reading then comes at its end too.
      const afterLoadMs = Math.min(AFTER_LOAD_MS, options.idleS * 1000);
      await Bun.sleep(afterLoadMs);
      const afterLoad = readMemory(child.pid);
      log(`${spec.label} memory with ${load.items} ready, ${afterLoadMs} ms after the load: ${describeMemory(afterLoad)}`);
      await Bun.sleep(options.idleS * 1000 - afterLoadMs);
      const afterIdle = readMemory(child.pid);
      log(`${spec.label} memory with ${load.items} ready, after ${options.idleS} s idle: ${describeMemory(afterIdle)}`);
      results.memory = { readyItems: load.items, idleS: options.idleS, atLoadEnd, afterLoad, afterIdle };
      if (spec.restartable) {
        await child.stop();
        const afterStop = await restart(context, spec, dataDir, logPath);
        child = afterStop.child;
        results.memory.afterRestart = readMemory(child.pid);
        log(`${spec.label} memory after a restart: ${describeMemory(results.memory.afterRestart)}`);
        await child.kill();
        const afterCrash = await restart(context, spec, dataDir, logPath);
        child = afterCrash.child;
        results.restart = { readyItems: load.items, afterStop: afterStop.figures, afterCrash: afterCrash.figures };
        log(`${spec.label} restart with ${load.items} ready: after stop ${afterStop.figures.listeningMs.toFixed(0)} ms to listening, ${afterStop.figures.firstItemMs.toFixed(0)} ms to first item; after kill -9 ${afterCrash.figures.listeningMs.toFixed(0)} / ${afterCrash.figures.firstItemMs.toFixed(0)} ms`);
      }
    }

    if (wants("latency")) {
      const { ops, close } = await spec.latencyOps(child);
      const pinned = pin(child.pid) && pin(process.pid);
      try {
        const summaries = await runLatency(ops, options.latencySamples, options.latencyWarmup);
        results.latency = { pinned, ops: summaries };
      } finally {
        unpin(process.pid);
        unpin(child.pid);
        close();
      }
      for (const [name, s] of Object.entries(results.latency.ops)) {
        log(`${spec.label} latency ${name}${pinned ? " (pinned)" : ""}: p50 ${s.p50Us} µs, p99 ${s.p99Us} µs, p99.9 ${s.p999Us} µs; p50 by tenth ${describeTenths(s)}`);
      }
    }

    if (wants("drain")) {
      const sampler = sampleMemory(child.pid, DRAIN_SAMPLE_MS);
      const drainCpuS = readCpuS(child.pid);
      const drainWrittenBytes = readWriteBytes(child.pid);
      const figures = await runDrain(spec.system(child), {
        items: options.items,
        count: 100,
        connections: options.drainConnections,
        depth: options.drainDepth,
      });
      figures.serverCpuS = readCpuS(child.pid) - drainCpuS;
      const peaks = sampler.stop();
      // The acked records' deletes may follow the drain (the store sweeps them once commits stop): count them too.
      figures.writtenBytes = (await settledWriteBytes(child.pid)) - drainWrittenBytes;
      const afterDrain = readMemory(child.pid);
      results.drain = figures;
      results.drainMemory = { peaks, afterDrain };
      const pagesPerItem = figures.items === 0 ? 0 : (figures.writtenBytes ?? 0) / 4096 / figures.items;
      log(`${spec.label} drain: ${rate(figures.itemsPerS)} items/s (${figures.items} items, ${figures.seconds.toFixed(2)} s; server CPU ${cpuPerItem(figures)}; ${pagesPerItem.toFixed(3)} pages written per item)`);
      log(`${spec.label} memory during the drain (${peaks.samples} samples): max RSS ${mib(peaks.rssMaxKiB)} MiB, max anon ${mib(peaks.rssAnonMaxKiB)}, max file ${mib(peaks.rssFileMaxKiB)}; after it: ${describeMemory(afterDrain)}`);
    }
    await child.stop();
  }

  if (wants("mixed")) {
    const { dataDir, logPath } = freshDir(context, spec.label);
    const child = context.track(await spec.start(dataDir, logPath));
    const figures = await runMixed(spec.system(child), {
      durationS: options.durationS,
      // --quick is a smoke test: half a second of warm-up is enough to exercise it.
      warmupS: options.quick ? 0.5 : mixedWarmupSDefault,
      rateItemsPerS: options.rateItemsPerS,
      ...mixedShape,
      takeCount: spec.mixedTakeCount,
      waitMs: spec.takeWaitMs,
    });
    await child.stop();
    results.mixed = figures;
    log(
      `${spec.label} mixed ${options.durationS} s at ${rate(options.rateItemsPerS)}/s offered: ${rate(figures.deliveredItemsPerS)} delivered/s, ` +
        `delay p50 ${(figures.delay.p50Us / 1000).toFixed(2)} ms, p99 ${(figures.delay.p99Us / 1000).toFixed(2)} ms, max ${(figures.delay.maxUs / 1000).toFixed(2)} ms ` +
        `(the ${figures.warmupS} s warm-up before it: p99 ${(figures.warmupDelay.p99Us / 1000).toFixed(2)} ms, max ${(figures.warmupDelay.maxUs / 1000).toFixed(2)} ms)`,
    );
  }
  if (wants("jupiter") && spec.jupiter !== undefined) {
    const { dataDir, logPath } = freshDir(context, spec.label);
    const child = context.track(await spec.start(dataDir, logPath));
    const { figures, replies } = await spec.jupiter(child);
    await child.stop();
    // With no server running: the floor's figures are the client's and the floor's alone, the bound's one process's main thread.
    figures.floor = await measureFloor(context, spec.label, replies);
    figures.inProcess = await measureInProcessBound(options.jupiterInProcessItems, log);
    results.jupiter = figures;
    const bound = figures.inProcess;
    log(
      `${spec.label} jupiter: ${rate(figures.acquisitionsPerS)} acquisitions/s (${figures.acquisitions} in ${figures.seconds.toFixed(2)} s; ` +
        `${figures.kinds} kinds x ${figures.connections} conns x ${figures.inFlightPerConnection} in flight, ${figures.signatures} signatures, ${figures.items} items loaded at ${rate(figures.loadItemsPerS)}/s); ` +
        `ping ceiling ${rate(figures.pingPerS)}/s; ratio ${(figures.acquisitionsPerS / figures.pingPerS).toFixed(3)}` +
        `; client CPU ${figures.clientCpuUsPerAcquisition.toFixed(1)} µs per acquisition, ${figures.clientCpuUsPerPing.toFixed(2)} per ping` +
        (figures.floor == null
          ? ""
          : `; against the Jupiter floor ${rate(figures.floor.acquisitionsPerS)} acquisitions/s, ping ${rate(figures.floor.pingPerS)}/s, ratio ${figures.floor.ratio.toFixed(3)} ` +
            `(client CPU ${figures.floor.clientCpuUsPerAcquisition.toFixed(1)} µs per acquisition, ${figures.floor.clientCpuUsPerPing.toFixed(2)} per ping; ` +
            `floor CPU ${figures.floor.floorCpuUsPerAcquisition?.toFixed(1) ?? "?"} and ${figures.floor.floorCpuUsPerPing?.toFixed(2) ?? "?"})`) +
        (bound === null ? "" : `; in-process bound ${bound.acquisitionUs} µs per acquisition, ${bound.pingUs} per ping, ratio ${bound.ratio}`),
    );
    log(
      `${spec.label} jupiter: server CPU by thread, µs per acquisition: ${describeThreadCpu(figures.serverThreadsUsPerAcquisition)}; ` +
        `per ping: ${describeThreadCpu(figures.serverThreadsUsPerPing)}`,
    );
  }
  if (wants("locality") && spec.locality !== undefined) {
    const run = spec.locality;
    await guarded(context, spec, results, "locality", async () => {
      const figures = await run(async () => {
        const { dataDir, logPath } = freshDir(context, `${spec.label} locality`);
        return context.track(await spec.start(dataDir, logPath));
      });
      results.locality = figures;
      const pass = (name: string, p: LocalityPass) =>
        `${name} ${rate(p.acquisitionsPerS)} acquisitions/s (${p.acquisitions} in ${p.seconds.toFixed(1)} s), ${(p.fullFitShare * 100).toFixed(1)}% to the item's repository, ` +
        `${p.emptyDequeues} dequeues empty after their wait, ${p.delivered} of ${p.enqueued} items delivered (${p.redelivered} again), the rest taken in ${p.drainS.toFixed(2)} s`;
      log(
        `${spec.label} locality (${figures.prefers.kinds} kinds over as many repositories, ${figures.prefers.backlog} kept ready, prefer_wait_ms ${figures.prefers.preferWaitMs}): ` +
          `median passes: ${pass("with prefers", figures.prefers)}; ${pass("without", figures.plain)}; ratio ${(figures.prefers.acquisitionsPerS / figures.plain.acquisitionsPerS).toFixed(3)}` +
          `; pairs ${(figures.pairs ?? []).map((p) => `${rate(p.prefersPerS)}/${rate(p.plainPerS)}`).join(", ")}` +
          (figures.prefers.serverFit === null ? "" : `; the server's count by fit ${JSON.stringify(figures.prefers.serverFit)}`),
      );
    });
  }
  if (wants("noisy")) {
    await guarded(context, spec, results, "noisy", async () => {
      const { dataDir, logPath } = freshDir(context, `${spec.label} noisy`);
      const child = context.track(await spec.start(dataDir, logPath));
      try {
        const figures = await runNoisyNeighbour(
          (shape) => spec.system(child, shape),
          {
            floodItems: options.floodItems,
            groups: options.noisyGroups,
            groupItemsPerS: options.noisyGroupItemsPerS,
            warmupS: options.noisyWarmupS,
            aloneS: options.noisyAloneS,
            floodTimeoutS: FLOOD_TIMEOUT_S,
            takeCount: spec.mixedTakeCount,
            waitMs: spec.takeWaitMs,
          },
          (line) => log(`${spec.label} ${line}`),
        );
        results.noisy = figures;
        const ms = (us: number) => (us / 1000).toFixed(2);
        log(
          `${spec.label} noisy neighbour: ${figures.groups} groups x ${figures.groupItemsPerS}/s; small groups' delay alone p50 ${ms(figures.alone.p50Us)} ms, p99 ${ms(figures.alone.p99Us)} ms (${figures.alone.count} items); ` +
            `with a flood of ${figures.floodItems} (enqueued at ${rate(figures.floodEnqueue.itemsPerS)}/s, delivered within ${figures.floodS.toFixed(2)} s) p50 ${ms(figures.flood.p50Us)} ms, p99 ${ms(figures.flood.p99Us)} ms, max ${ms(figures.flood.maxUs)} ms (${figures.flood.count} items)`,
        );
      } finally {
        await child.stop();
      }
    });
  }

  if (wants("capped") && spec.groups) {
    await guarded(context, spec, results, "capped", async () => {
      const figures = await runCappedDrain(
        {
          start: async () => {
            const { dataDir, logPath } = freshDir(context, `${spec.label} capped`);
            return context.track(await spec.start(dataDir, logPath));
          },
          system: (child, shape) => spec.system(child, shape),
        },
        { items: options.items, depth: options.depth, drainConnections: options.drainConnections, drainDepth: options.drainDepth },
      );
      results.cappedDrain = figures;
      const pass = (name: string, f: CappedDrainFigures["plain"]) => `${name} ${rate(f.drain.itemsPerS)} items/s (${f.drain.items} items; server CPU ${cpuPerItem(f.drain)})`;
      log(
        `${spec.label} capped drain over ${figures.groups} groups, "*" max_leased ${figures.maxLeased} (stored ${JSON.stringify(figures.policy)}): ` +
          `${pass("capped", figures.capped)}; ${pass("plain", figures.plain)}; ratio ${(figures.capped.drain.itemsPerS / figures.plain.drain.itemsPerS).toFixed(3)}`,
      );
    });
  }
  return results;
}

/** The longest the noisy neighbour waits for its flood to be delivered (10 minutes: a 1,000,000-item flood drains in seconds to a minute). */
const FLOOD_TIMEOUT_S = 600;

/**
 * Runs one of the group scenarios. Their failure (a server without groups
 * yet, say) is logged and kept in results.failures, so the mode's other
 * figures survive; main.ts reports it as failed.
 */
async function guarded(context: SuiteContext, spec: ModeSpec, results: ModeResults, scenario: Scenario, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    context.log(`${spec.label} ${scenario}: FAILED: ${message}`);
    results.failures = { ...results.failures, [scenario]: message };
  }
}

/** The Jupiter floor (jupiter-floor.ts) answering with `replies`; null, with the reason logged, when it fails. */
async function measureFloor(context: SuiteContext, label: string, replies: CapturedReplies): Promise<JupiterFloorFigures | null> {
  const { dataDir, logPath } = freshDir(context, `${label} jupiter floor`);
  try {
    return await runJupiterFloor(replies, join(dataDir, "replies.msgpack"), async (path) => context.track(await startJupiterFloorChild(path, logPath)), context.options.jupiterPingS);
  } catch (error) {
    context.log(`${label} jupiter floor: FAILED: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}

async function restart(
  context: SuiteContext,
  spec: ModeSpec,
  dataDir: string,
  logPath: string,
): Promise<{ child: Child; figures: RestartFigures }> {
  const t0 = performance.now();
  const child = context.track(await spec.start(dataDir, logPath));
  const listeningMs = performance.now() - t0;
  const consumer = await spec.system(child).openConsumer();
  const deadlineMs = t0 + FIRST_ITEM_TIMEOUT_MS;
  let taken = 0;
  while (taken === 0) {
    if (performance.now() > deadlineMs) throw new Error(`${spec.label}: no item ${FIRST_ITEM_TIMEOUT_MS} ms after restart`);
    taken = await consumer.take(1, 0);
  }
  const firstItemMs = performance.now() - t0;
  consumer.close();
  return { child, figures: { listeningMs, firstItemMs } };
}
