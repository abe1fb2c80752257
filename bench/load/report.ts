// The summary: one table of every figure by system and mode, then the ratio
// of orq to its peer for each scenario that translates, against its target.

import { GROUP_PICK_LABEL, worstPick, type GroupPickFigures } from "./group-pick-bound.ts";
import { retainedOutcome } from "./waits-cost-bound.ts";
import type { LatencySummary } from "./histogram.ts";
import { FLOOR_PAUSE_MS } from "./latency-ops.ts";
import type { MemoryFigures } from "./processes.ts";
import { worstPreferencePick, type PreferencePickFigures } from "./preference-pick-bound.ts";
import type { LocalityPass } from "./locality.ts";
import type { ModeResults } from "./suite.ts";
import { MAIN_SYSTEM, MAIN_USER } from "./thread-cpu.ts";

export interface TargetCheck {
  name: string;
  orq: number | null;
  peer: number | null;
  unit: string;
  /** orq / peer. */
  ratio: number | null;
  /** "atLeast": ratio >= bound is met; "atMost": ratio <= bound is met. */
  kind: "atLeast" | "atMost";
  bound: number;
  status: "met" | "missed" | "not measured";
  /** A second comparison printed beside the first, so a chosen measure never hides the plainer one. */
  also?: string;
}

export type ResultsBySystem = Record<string, ModeResults>;

const bestEnqueue = (mode: ModeResults | undefined) =>
  mode?.enqueue === undefined || mode.enqueue.length === 0 ? null : Math.max(...mode.enqueue.map((row) => row.itemsPerS));

const latencyP50 = (mode: ModeResults | undefined, op: string) => mode?.latency?.ops[op]?.p50Us ?? null;

function check(name: string, orq: number | null, peer: number | null, unit: string, kind: "atLeast" | "atMost", bound: number): TargetCheck {
  const ratio = orq !== null && peer !== null && peer > 0 ? orq / peer : null;
  let status: TargetCheck["status"] = "not measured";
  if (ratio !== null) status = (kind === "atLeast" ? ratio >= bound : ratio <= bound) ? "met" : "missed";
  return { name, orq, peer, unit, ratio, kind, bound, status };
}

export function checkTargets(results: ResultsBySystem): TargetCheck[] {
  const strict = results["orq strict"];
  const binlog = results["beanstalkd binlog"];
  const inMemory = results["beanstalkd in-memory"];
  const floor = results["echo floor"];
  return [
    check("enqueue, orq strict vs beanstalkd binlog (best shape each)", bestEnqueue(strict), bestEnqueue(binlog), "items/s", "atLeast", 3),
    check("drain, orq strict vs beanstalkd in-memory", strict?.drain?.itemsPerS ?? null, inMemory?.drain?.itemsPerS ?? null, "items/s", "atLeast", 2),
    check("ping p50, orq vs echo floor", latencyP50(strict, "ping"), latencyP50(floor, "ping"), "µs", "atMost", 1.5),
    dequeueCheck(strict, floor),
    memoryCheck(strict, inMemory),
    drainMemoryCheck(strict, inMemory),
    jupiterCheck(strict),
    jupiterMemoryCheck(results["orq memory"]),
    check("dequeue-1 p50, orq --store memory vs echo floor", latencyP50(results["orq memory"], "dequeue1"), latencyP50(floor, "ping"), "µs", "atMost", 1.5),
    orderCheck(strict, results["orq strict fifo"]),
    mixedCheck(strict, binlog, results["orq relaxed"]),
    ...groupPickChecks(results[GROUP_PICK_LABEL]?.groupPick),
    noisyCheck(strict, inMemory),
    cappedDrainCheck(strict),
    ...localityChecks(strict, results["orq relaxed"]),
    ...preferencePickChecks(results[GROUP_PICK_LABEL]?.preferencePick),
  ];
}

/** The pick's bounds, in µs, and a group's memory bound, in bytes: the in-process group pick's targets. */
export const GROUP_PICK_P50_US_MAX = 5;
export const GROUP_PICK_P99_US_MAX = 30;
export const GROUP_BYTES_MAX = 160;

/**
 * The in-process pick with groups (bench/micro/group-pick.bench.ts): absolute
 * bounds, so each is a ratio against its bound (met at <= 1x). The worst of
 * the two shapes (items spread over groups, groups of one item) is the
 * measure; both ride along.
 */
function groupPickChecks(figures: GroupPickFigures | undefined): TargetCheck[] {
  const shapes = (which: "p50Us" | "p99Us") =>
    (figures?.shapes ?? []).map((shape) => `${shape.shape} (${shape.items} items in ${shape.groups} groups) ${shape.pick[which]} µs over ${shape.picks} picks`).join(", ");
  const p50 = check(`group pick p50, the worse of items over groups and groups of one item, vs ${GROUP_PICK_P50_US_MAX} µs`, worstPick(figures, "p50Us"), GROUP_PICK_P50_US_MAX, "µs", "atMost", 1);
  const p99 = check(`group pick p99, the worse of items over groups and groups of one item, vs ${GROUP_PICK_P99_US_MAX} µs`, worstPick(figures, "p99Us"), GROUP_PICK_P99_US_MAX, "µs", "atMost", 1);
  const memory = figures?.memory ?? null;
  const bytes = check(`memory per group beyond its items (groups of one item vs the same items without groups) vs ${GROUP_BYTES_MAX} bytes`, memory?.perGroupBytes ?? null, GROUP_BYTES_MAX, "B", "atMost", 1);
  if (figures !== undefined) {
    p50.also = shapes("p50Us");
    p99.also = shapes("p99Us");
  }
  if (memory !== null) bytes.also = `engine heap ${mib(memory.withoutGroupsBytes / 1024)} MiB without groups, ${mib(memory.oneEachBytes / 1024)} MiB in ${memory.items} groups; ${num(memory.perSpreadGroupBytes, 1)} B per group of ${memory.spreadGroups} (each item's reference to its group included)`;
  return [p50, p99, bytes];
}

/** The locality scenario's bound on full-fit deliveries, and on its rate against the same stream without `prefers` (issue 52). */
export const LOCALITY_FULL_FIT_SHARE_MIN = 0.95;
export const LOCALITY_RATE_RATIO_MIN = 0.9;

/**
 * The locality scenario (locality.ts), orq strict: the share of deliveries
 * that went to a worker holding the item's repository (as a percentage
 * against 100%, so the ratio is the share), and its acquisitions/s against
 * the same stream without `prefers` on a fresh server in the same run. What
 * an assignment that ignores repositories fits (the pass without `prefers`),
 * and relaxed's figures, ride along.
 */
function localityChecks(strict: ModeResults | undefined, relaxed: ModeResults | undefined): TargetCheck[] {
  const figures = strict?.locality;
  const share = check(
    "locality: deliveries to a worker holding the item's repository (10 kinds, 10 repositories, prefer_wait_ms 50), orq strict",
    figures === undefined ? null : figures.prefers.fullFitShare * 100,
    figures === undefined ? null : 100,
    "%",
    "atLeast",
    LOCALITY_FULL_FIT_SHARE_MIN,
  );
  const rate = check(
    "locality: acquisitions/s with prefers vs the same stream without, orq strict",
    figures?.prefers.acquisitionsPerS ?? null,
    figures?.plain.acquisitionsPerS ?? null,
    "/s",
    "atLeast",
    LOCALITY_RATE_RATIO_MIN,
  );
  const pct = (fraction: number) => `${num(fraction * 100, 1)}%`;
  const other = relaxed?.locality;
  if (figures !== undefined) {
    share.also =
      `without prefers ${pct(figures.plain.fullFitShare)} (an assignment that ignores repositories); ${figures.prefers.acquisitions} acquisitions, ${figures.prefers.emptyDequeues} dequeues empty after their wait` +
      (other === undefined ? "" : `; orq relaxed ${pct(other.prefers.fullFitShare)}, without prefers ${pct(other.plain.fullFitShare)}`);
    const pairs = figures.pairs ?? [];
    rate.also =
      `${num(figures.prefers.acquisitionsPerS)} against ${num(figures.plain.acquisitionsPerS)}/s, the median pass of each` +
      (pairs.length === 0 ? "" : ` of ${pairs.length} alternated pairs (each pair's ratio ${pairs.map((p) => num(p.prefersPerS / p.plainPerS, 2)).join(", ")})`) +
      `, ${figures.prefers.backlog} items kept ready` +
      (other === undefined ? "" : `; orq relaxed ${num(other.prefers.acquisitionsPerS)} against ${num(other.plain.acquisitionsPerS)}/s`);
  }
  return [share, rate];
}

/** The in-process pick with preferences (bench/micro/preference-pick.bench.ts): the group pick's bounds, the worse of its two shapes. */
function preferencePickChecks(figures: PreferencePickFigures | undefined): TargetCheck[] {
  const shapes = (which: "p50Us" | "p99Us") => (figures?.shapes ?? []).map((shape) => `${shape.shape} ${shape.pick[which]} µs over ${shape.picks} picks`).join(", ");
  const p50 = check(`preference pick p50, the worse of fit order and held, vs ${GROUP_PICK_P50_US_MAX} µs`, worstPreferencePick(figures, "p50Us"), GROUP_PICK_P50_US_MAX, "µs", "atMost", 1);
  const p99 = check(`preference pick p99, the worse of fit order and held, vs ${GROUP_PICK_P99_US_MAX} µs`, worstPreferencePick(figures, "p99Us"), GROUP_PICK_P99_US_MAX, "µs", "atMost", 1);
  if (figures !== undefined) {
    p50.also = shapes("p50Us");
    p99.also = shapes("p99Us");
  }
  return [p50, p99];
}

/**
 * The noisy neighbour: the small groups' enqueue-to-delivery p99 while one
 * group floods the topic, against their p99 in the same run without the
 * flood (orq strict). beanstalkd in memory, one tube in strict priority
 * order, rides along as the contrast: its small tenants' items wait behind
 * the flood's.
 */
function noisyCheck(strict: ModeResults | undefined, inMemory: ModeResults | undefined): TargetCheck {
  const orq = strict?.noisy;
  const result = check(
    "noisy neighbour: small groups' p99, enqueue to delivery, during one group's flood vs without it, orq strict",
    orq?.flood.p99Us ?? null,
    orq?.alone.p99Us ?? null,
    "µs",
    "atMost",
    2,
  );
  const ms = (us: number) => num(us / 1000, 1);
  const peer = inMemory?.noisy;
  if (orq !== undefined) {
    result.also =
      `${orq.groups} groups x ${orq.groupItemsPerS}/s beside a flood of ${orq.floodItems} delivered within ${num(orq.floodS, 1)} s; orq strict p99 ${ms(orq.alone.p99Us)} ms alone, ${ms(orq.flood.p99Us)} ms in the flood` +
      (peer === undefined
        ? ""
        : `; beanstalkd in-memory (one tube) p99 ${ms(peer.alone.p99Us)} ms alone, ${ms(peer.flood.p99Us)} ms in the flood (${peer.alone.p99Us > 0 ? (peer.flood.p99Us / peer.alone.p99Us).toFixed(2) : dash}x)`);
  }
  return result;
}

/**
 * The capped drain: the drain over 1,000 groups under a "*" max_leased of 8
 * against a plain drain of as many items, each on a fresh server in the same
 * run (orq strict). The drain scenario's own figure rides along.
 */
function cappedDrainCheck(strict: ModeResults | undefined): TargetCheck {
  const figures = strict?.cappedDrain;
  const result = check(
    `capped drain (1,000 groups, "*" max_leased 8), orq strict vs its plain drain`,
    figures?.capped.drain.itemsPerS ?? null,
    figures?.plain.drain.itemsPerS ?? null,
    "items/s",
    "atLeast",
    0.8,
  );
  if (figures !== undefined) {
    const cpu = (f: typeof figures.plain) => (f.drain.serverCpuS === undefined || f.drain.items === 0 ? dash : num((f.drain.serverCpuS * 1e6) / f.drain.items, 1));
    result.also =
      `${figures.capped.drain.items} items over ${figures.groups} groups; server CPU µs per item ${cpu(figures.capped)} capped, ${cpu(figures.plain)} plain` +
      (strict?.drain === undefined ? "" : `; the drain scenario's ${num(strict.drain.itemsPerS)} items/s`);
  }
  return result;
}

/**
 * The drain in the run's first priority order (random by default) against
 * the same server's drain in FIFO order: what priority order costs a
 * delivery and its ack. The pages each order's drain wrote per item ride along.
 */
function orderCheck(strict: ModeResults | undefined, fifo: ModeResults | undefined): TargetCheck {
  const result = check("drain, orq strict random priorities vs FIFO order", strict?.drain?.itemsPerS ?? null, fifo?.drain?.itemsPerS ?? null, "items/s", "atLeast", 0.7);
  const pages = (mode: ModeResults | undefined) => {
    const drain = mode?.drain;
    return drain?.writtenBytes === undefined || drain.items === 0 ? dash : num(drain.writtenBytes / 4096 / drain.items, 3);
  };
  if (strict?.drain !== undefined && fifo?.drain !== undefined) result.also = `pages written per drained item: random ${pages(strict)}, FIFO ${pages(fifo)}`;
  return result;
}

/**
 * Steady mixed load (20,000 items/s offered): orq strict's enqueue-to-delivery
 * p99 against beanstalkd binlog's in the same run. Both sit on the same disk,
 * and a slow fsync stalls either (orq strict delivers an item once its
 * enqueue is synced; beanstalkd's binlog fsyncs on its one thread), so the
 * warm-up's p99s and relaxed's ride along to show whether a stall hit one side.
 */
function mixedCheck(strict: ModeResults | undefined, binlog: ModeResults | undefined, relaxed: ModeResults | undefined): TargetCheck {
  const orqDelay = strict?.mixed?.delay;
  const peerDelay = binlog?.mixed?.delay;
  const result = check(
    "mixed load p99, enqueue to delivery (20,000 items/s offered), orq strict vs beanstalkd binlog",
    orqDelay?.p99Us ?? null,
    peerDelay?.p99Us ?? null,
    "µs",
    "atMost",
    2,
  );
  if (orqDelay !== undefined && peerDelay !== undefined) {
    const ms = (us: number | undefined) => (us === undefined ? dash : num(us / 1000, 1));
    result.also =
      `orq strict p50 ${ms(orqDelay.p50Us)} ms, p99.9 ${ms(orqDelay.p999Us)} ms; ` +
      `warm-up p99 orq strict ${ms(strict?.mixed?.warmupDelay?.p99Us)} vs beanstalkd binlog ${ms(binlog?.mixed?.warmupDelay?.p99Us)} ms` +
      (relaxed?.mixed === undefined ? "" : `; orq relaxed p99 ${ms(relaxed.mixed.delay.p99Us)} ms`);
  }
  return result;
}

/**
 * The strict dequeue of 1 against the echo floor's back-to-back round trip
 * (the target's measure), with the floor's round trip after an idle spell
 * beside it: each of the scenario's dequeues comes after the previous ack's
 * fsync, and what an idle spell adds to any server's round trip on this
 * machine is not orq's path.
 */
function dequeueCheck(strict: ModeResults | undefined, floor: ModeResults | undefined): TargetCheck {
  const result = check("dequeue-1 p50, orq strict vs echo floor", latencyP50(strict, "dequeue1"), latencyP50(floor, "ping"), "µs", "atMost", 2);
  const cold = latencyP50(floor, "ping after pause");
  if (cold !== null && result.orq !== null && result.peer !== null && result.peer > 0) {
    result.also = `echo floor after ${FLOOR_PAUSE_MS} ms idle: ${cold.toFixed(1)} µs (${(cold / result.peer).toFixed(2)}x its back-to-back p50); orq's dequeue-1 is ${(result.orq / cold).toFixed(2)}x that`;
  }
  return result;
}

/**
 * Jupiter-style acquisitions (dequeue of 1 with capabilities, then ack; 10
 * kinds, 10 connections x 32 in flight, 100 signatures) against the ping
 * ceiling measured with the same connections and depth on the same server:
 * what fraction of a do-nothing server's request rate capability matching keeps.
 */
function jupiterCheck(strict: ModeResults | undefined): TargetCheck {
  const figures = strict?.jupiter;
  const result = check(
    "Jupiter acquisitions (dequeue 1 + capabilities, ack), orq strict vs its ping ceiling (10 conns x 32)",
    figures?.acquisitionsPerS ?? null,
    figures?.pingPerS ?? null,
    "/s",
    "atLeast",
    // Durable, the bound is a floor not to fall below; the ambition is the in-memory mode's (jupiterMemoryCheck).
    0.08,
  );
  if (figures !== undefined) {
    const bound = figures.inProcess;
    const floor = figures.floor;
    result.also =
      `${figures.acquisitions} acquisitions over ${figures.signatures} signatures, ${figures.kinds} kinds` +
      (floor === undefined || floor === null
        ? ""
        : `; the same client against a server that does no work (the Jupiter floor): ${Math.round(floor.acquisitionsPerS)} against ${Math.round(floor.pingPerS)}/s, ratio ${floor.ratio.toFixed(3)}`) +
      (bound === undefined || bound === null ? "" : `; in one process without sockets: ${bound.acquisitionUs} µs per acquisition against ${bound.pingUs} per ping, ratio ${bound.ratio}`);
  }
  return result;
}

/** Jupiter's own mode: the same acquisitions against `orq serve --store memory`, nothing on disk, against its own ping ceiling. */
function jupiterMemoryCheck(memory: ModeResults | undefined): TargetCheck {
  const figures = memory?.jupiter;
  return check("Jupiter acquisitions, orq --store memory vs its ping ceiling (10 conns x 32)", figures?.acquisitionsPerS ?? null, figures?.pingPerS ?? null, "/s", "atLeast", 0.15);
}

/**
 * Memory with the backlog ready, a second after the load (the target's
 * measure: before orq's idle collection can have run): orq's anonymous memory
 * (RssAnon: heap, malloc) against beanstalkd's whole RSS (all anonymous).
 * orq's RssFile is mostly LMDB's mapped data file, page cache the kernel can
 * drop and re-read (clean pages; the LMDB figures in `also` say how many are
 * dirty), which beanstalkd (items in malloc'd memory) has no counterpart of.
 * The plain RSS ratio and the after-idle ratio ride along in `also`.
 */
function memoryCheck(strict: ModeResults | undefined, inMemory: ModeResults | undefined): TargetCheck {
  const orqMemory = strict?.memory?.afterLoad;
  const peerMemory = inMemory?.memory?.afterLoad;
  const result = check(
    "memory with the backlog ready, 1 s after the load: orq strict RssAnon vs beanstalkd in-memory RSS",
    orqMemory?.rssAnonKiB ?? null,
    peerMemory?.rssKiB ?? null,
    "KiB",
    "atMost",
    1,
  );
  if (orqMemory !== undefined && peerMemory !== undefined && peerMemory.rssKiB > 0) {
    const idle = strict?.memory?.afterIdle;
    const peerIdle = inMemory?.memory?.afterIdle ?? peerMemory;
    const lmdb = orqMemory.lmdb;
    result.also =
      `plain RSS ${mib(orqMemory.rssKiB)} vs ${mib(peerMemory.rssKiB)} MiB = ${(orqMemory.rssKiB / peerMemory.rssKiB).toFixed(2)}x` +
      (idle === undefined ? "" : `; after idle RssAnon ${mib(idle.rssAnonKiB)} MiB = ${(idle.rssAnonKiB / peerIdle.rssKiB).toFixed(2)}x`) +
      (lmdb === undefined || lmdb === null ? "" : `; LMDB map resident ${mib(lmdb.rssKiB)} MiB, clean ${mib(lmdb.cleanKiB)}, dirty ${mib(lmdb.dirtyKiB)}`);
  }
  return result;
}

/**
 * RSS during the drain (the peak of samples every 200 ms) against twice
 * beanstalkd's RSS with the same backlog ready (a second after its load).
 */
function drainMemoryCheck(strict: ModeResults | undefined, inMemory: ModeResults | undefined): TargetCheck {
  const peaks = strict?.drainMemory?.peaks;
  const peerReady = inMemory?.memory?.afterLoad;
  const result = check(
    "RSS during the drain, orq strict vs 2x beanstalkd in-memory ready RSS",
    peaks?.rssMaxKiB ?? null,
    peerReady === undefined ? null : peerReady.rssKiB * 2,
    "KiB",
    "atMost",
    1,
  );
  if (peaks !== undefined) {
    result.also = `peak anon ${mib(peaks.rssAnonMaxKiB)} MiB, peak file-backed ${mib(peaks.rssFileMaxKiB)} MiB (${peaks.samples} samples)`;
  }
  return result;
}

type Cell = string;
const dash = "—";
const num = (n: number | undefined | null, digits = 0): Cell =>
  n === undefined || n === null ? dash : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
/** A server still compiling its dequeue path shows a falling p50 over the run (docs/decisions/023-runtime-defaults.md). */
const firstLastTenth = (s: LatencySummary | undefined): Cell => {
  const tenths = s?.tenthsP50Us;
  if (tenths === undefined || tenths.length === 0) return dash;
  return `${num(tenths[0] as number, 1)} / ${num(tenths[tenths.length - 1] as number, 1)}`;
};
const lat = (s: LatencySummary | undefined): Cell => (s === undefined ? dash : `${num(s.p50Us, 1)} / ${num(s.p99Us, 1)} / ${num(s.p999Us, 1)}`);
const mib = (kib: number | undefined): Cell => (kib === undefined ? dash : num(kib / 1024, 1));
/** Server CPU by thread (thread-cpu.ts) as "main user / main system / every helper thread together". */
const threadSplit = (per: Record<string, number> | null | undefined): Cell => {
  if (per == null) return dash;
  let helpers = 0;
  for (const [group, us] of Object.entries(per)) if (group !== MAIN_USER && group !== MAIN_SYSTEM) helpers += us;
  return `${num(per[MAIN_USER] ?? 0, 1)} / ${num(per[MAIN_SYSTEM] ?? 0, 1)} / ${num(helpers, 1)}`;
};
const pair = (a: number | undefined, b: number | undefined): Cell => (a === undefined || b === undefined ? dash : `${mib(a)} / ${mib(b)}`);

export function summaryTable(results: ResultsBySystem): string {
  const columns = Object.keys(results);
  const rows: Array<[string, (mode: ModeResults) => Cell]> = [];
  for (const [batch, connections] of [[1, 1], [1, 8], [100, 1], [100, 8]] as const) {
    rows.push([
      `enqueue items/s, batch ${batch}, ${connections} conn`,
      (m) => num(m.enqueue?.find((r) => r.batch === batch && r.connections === connections)?.itemsPerS),
    ]);
  }
  rows.push(["drain (take 100 + ack) items/s", (m) => num(m.drain?.itemsPerS)]);
  rows.push(["drain: server CPU µs / pages written, per item", (m) => (m.drain === undefined || m.drain.items === 0 ? dash : `${num(((m.drain.serverCpuS ?? 0) * 1e6) / m.drain.items, 1)} / ${num((m.drain.writtenBytes ?? 0) / 4096 / m.drain.items, 3)}`)]);
  rows.push(["jupiter: acquisitions/s (dequeue 1 + capabilities, ack)", (m) => num(m.jupiter?.acquisitionsPerS)]);
  rows.push(["jupiter: ping/s, same conns and in-flight", (m) => num(m.jupiter?.pingPerS)]);
  rows.push(["jupiter: server CPU µs per acquisition / per ping", (m) => `${num(m.jupiter?.serverCpuUsPerAcquisition ?? undefined)} / ${num(m.jupiter?.serverCpuUsPerPing ?? undefined)}`]);
  rows.push(["jupiter: server CPU µs per acquisition, main thread user / system / helper threads", (m) => threadSplit(m.jupiter?.serverThreadsUsPerAcquisition)]);
  rows.push(["jupiter: load generator CPU µs per acquisition / per ping", (m) => `${num(m.jupiter?.clientCpuUsPerAcquisition, 1)} / ${num(m.jupiter?.clientCpuUsPerPing, 2)}`]);
  rows.push(["jupiter floor (a server that does no work): acquisitions/s / ping/s", (m) => `${num(m.jupiter?.floor?.acquisitionsPerS)} / ${num(m.jupiter?.floor?.pingPerS)}`]);
  rows.push(["jupiter floor: ratio; load generator CPU µs per acquisition", (m) => `${num(m.jupiter?.floor?.ratio, 3)}; ${num(m.jupiter?.floor?.clientCpuUsPerAcquisition, 1)}`]);
  rows.push(["jupiter: in one process, main-thread µs per acquisition / per ping (relaxed)", (m) => `${num(m.jupiter?.inProcess?.acquisitionUs, 1)} / ${num(m.jupiter?.inProcess?.pingUs, 2)}`]);
  const both = (m: ModeResults, pick: (pass: LocalityPass) => string) => (m.locality === undefined ? dash : `${pick(m.locality.prefers)} / ${pick(m.locality.plain)}`);
  rows.push(["locality: acquisitions/s, with prefers / without", (m) => both(m, (p) => num(p.acquisitionsPerS))]);
  rows.push(["locality: % of deliveries to the item's repository, with prefers / without", (m) => both(m, (p) => num(p.fullFitShare * 100, 1))]);
  rows.push(["locality: dequeues empty after their wait, with prefers / without", (m) => both(m, (p) => num(p.emptyDequeues))]);
  rows.push(["mixed: delivered items/s", (m) => num(m.mixed?.deliveredItemsPerS)]);
  rows.push(["noisy neighbour: small groups' delay alone, p50 / p99 / p99.9 µs", (m) => lat(m.noisy?.alone)]);
  rows.push(["noisy neighbour: small groups' delay in the flood, p50 / p99 / p99.9 µs", (m) => lat(m.noisy?.flood)]);
  rows.push(["noisy neighbour: flood enqueue items/s / s until delivered", (m) => (m.noisy === undefined ? dash : `${num(m.noisy.floodEnqueue.itemsPerS)} / ${num(m.noisy.floodS, 1)}`)]);
  rows.push(["capped drain (1,000 groups, max_leased 8) / plain drain beside it, items/s", (m) => (m.cappedDrain === undefined ? dash : `${num(m.cappedDrain.capped.drain.itemsPerS)} / ${num(m.cappedDrain.plain.drain.itemsPerS)}`)]);
  const pickShape = (m: ModeResults, name: string) => {
    const shape = m.groupPick?.shapes.find((candidate) => candidate.shape === name);
    return shape === undefined ? dash : `${shape.groups}: ${num(shape.pick.p50Us, 2)} / ${num(shape.pick.p99Us, 2)}`;
  };
  rows.push(["group pick, groups: p50 / p99 µs (items over groups)", (m) => pickShape(m, "spread")]);
  rows.push(["group pick, groups: p50 / p99 µs (groups of one item)", (m) => pickShape(m, "one each")]);
  rows.push(["group pick: bytes per group beyond its item", (m) => num(m.groupPick?.memory?.perGroupBytes, 1)]);
  const preferenceShape = (m: ModeResults, name: string) => {
    const shape = m.preferencePick?.shapes.find((candidate) => candidate.shape === name);
    return shape === undefined ? dash : `${num(shape.pick.p50Us, 2)} / ${num(shape.pick.p99Us, 2)}`;
  };
  rows.push(["preference pick: p50 / p99 µs (fit order)", (m) => preferenceShape(m, "fit order")]);
  rows.push(["preference pick: p50 / p99 µs (held)", (m) => preferenceShape(m, "held")]);
  rows.push(["waits parked at once / bytes per parked wait", (m) => (m.waitsCost === undefined ? dash : `${num(m.waitsCost.waits.parked)} / ${num(m.waitsCost.waits.perWaitBytes, 1)}`)]);
  rows.push(["wake: ms from the first ack to the last wait / acks alone; µs per wait", (m) => (m.waitsCost === undefined ? dash : `${num(m.waitsCost.waits.wakeMs, 1)} / ${num(m.waitsCost.waits.acksAloneMs, 1)}; ${num(m.waitsCost.waits.wakeUsPerWait, 2)}`)]);
  rows.push(["retained acked outcome, bytes beyond its result: none / 100 B / 1 KiB", (m) => (m.waitsCost === undefined ? dash : [0, 100, 1024].map((size) => num(retainedOutcome(m.waitsCost, size)?.perOutcomeBeyondResultBytes, 1)).join(" / "))]);
  rows.push(["mixed: delay p50 / p99 / p99.9 µs", (m) => lat(m.mixed?.delay)]);
  rows.push(["mixed: delay in the warm-up before it, p50 / p99 / p99.9 µs", (m) => lat(m.mixed?.warmupDelay)]);
  rows.push(["ping p50 / p99 / p99.9 µs", (m) => lat(m.latency?.ops["ping"])]);
  rows.push([`ping after ${FLOOR_PAUSE_MS} ms idle p50 / p99 / p99.9 µs`, (m) => lat(m.latency?.ops["ping after pause"])]);
  rows.push(["enqueue-1 p50 / p99 / p99.9 µs", (m) => lat(m.latency?.ops["enqueue1"])]);
  rows.push(["dequeue-1 p50 / p99 / p99.9 µs", (m) => lat(m.latency?.ops["dequeue1"])]);
  rows.push(["dequeue-1 + ack p50 / p99 / p99.9 µs", (m) => lat(m.latency?.ops["dequeue1+ack"])]);
  rows.push(["dequeue-1 p50, first / last tenth of the samples µs", (m) => firstLastTenth(m.latency?.ops["dequeue1"])]);
  rows.push(["latency pinned to one CPU", (m) => (m.latency === undefined ? dash : m.latency.pinned ? "yes" : "no")]);
  const memoryRows = (label: string, pick: (m: ModeResults) => MemoryFigures | undefined) => {
    rows.push([`RSS MiB, ${label}`, (m) => mib(pick(m)?.rssKiB)]);
    rows.push([`  RssAnon / RssFile MiB, ${label}`, (m) => pair(pick(m)?.rssAnonKiB, pick(m)?.rssFileKiB)]);
    rows.push([`  private MiB, ${label}`, (m) => mib(pick(m)?.privateKiB)]);
  };
  memoryRows("backlog ready, as the load ends", (m) => m.memory?.atLoadEnd);
  memoryRows("backlog ready, 1 s after the load", (m) => m.memory?.afterLoad);
  memoryRows("backlog ready, after idle", (m) => m.memory?.afterIdle);
  memoryRows("after restart", (m) => m.memory?.afterRestart);
  rows.push(["LMDB map resident / of it dirty MiB, 1 s after the load", (m) => pair(m.memory?.afterLoad.lmdb?.rssKiB, m.memory?.afterLoad.lmdb?.dirtyKiB)]);
  rows.push(["drain: max RSS MiB", (m) => mib(m.drainMemory?.peaks.rssMaxKiB)]);
  rows.push(["  drain: max RssAnon / max RssFile MiB", (m) => pair(m.drainMemory?.peaks.rssAnonMaxKiB, m.drainMemory?.peaks.rssFileMaxKiB)]);
  rows.push(["restart (stop): ms to listening / first item", (m) => (m.restart === undefined ? dash : `${num(m.restart.afterStop.listeningMs)} / ${num(m.restart.afterStop.firstItemMs)}`)]);
  rows.push(["restart (kill -9): ms to listening / first item", (m) => (m.restart === undefined ? dash : `${num(m.restart.afterCrash.listeningMs)} / ${num(m.restart.afterCrash.firstItemMs)}`)]);

  const lines = [`| scenario | ${columns.join(" | ")} |`, `|---|${columns.map(() => "---:").join("|")}|`];
  for (const [name, cell] of rows) {
    const cells = columns.map((column) => {
      const mode = results[column];
      return mode === undefined ? dash : cell(mode);
    });
    if (cells.every((c) => c === dash)) continue;
    lines.push(`| ${name} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

export function targetTable(checks: TargetCheck[]): string {
  const lines = ["| target | orq | peer | ratio | bound | status |", "|---|---:|---:|---:|---:|---|"];
  for (const c of checks) {
    const bound = `${c.kind === "atLeast" ? "≥" : "≤"} ${c.bound}x`;
    const status = c.also === undefined ? c.status : `${c.status} (${c.also})`;
    lines.push(`| ${c.name} | ${num(c.orq, 1)} ${c.unit} | ${num(c.peer, 1)} ${c.unit} | ${c.ratio === null ? dash : `${c.ratio.toFixed(2)}x`} | ${bound} | ${status} |`);
  }
  return lines.join("\n");
}
