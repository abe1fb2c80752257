// The scenario shapes, written once over the System interface: pipelined
// enqueue throughput, pipelined drain (take + ack) throughput, steady mixed
// load with end-to-end delay, and sequential round-trip latency. Each returns
// plain figures; main.ts decides which servers they run against.

import type { Histogram } from "hdr-histogram-js";
import { newHistogram, summarize } from "./histogram.ts";
import type { LatencySummary } from "./histogram.ts";
import { MixedLoad, type MixedLoadOptions } from "./mixed-load.ts";
import type { System } from "./systems.ts";

export interface ThroughputFigures {
  items: number;
  seconds: number;
  itemsPerS: number;
  requestsPerS: number;
  /** The server's CPU seconds (user + system) over the run, where the suite measured it (the backlog load and the drain). */
  serverCpuS?: number;
  /** Bytes the server caused to be written to storage over the run (/proc/PID/io write_bytes: pages dirtied), where the suite measured it (the drain). */
  writtenBytes?: number;
}

/** Runs `depth` sequential workers over a shared budget: at most `depth` requests in flight. */
async function pipelined(depth: number, step: () => Promise<boolean>): Promise<void> {
  const worker = async () => {
    while (await step()) {
      // Each step sends one request and waits for its reply; the next starts at once.
    }
  };
  await Promise.all(Array.from({ length: depth }, worker));
}

export interface EnqueueOptions {
  items: number;
  batch: number;
  connections: number;
  depth: number;
}

export async function runEnqueue(system: System, options: EnqueueOptions): Promise<ThroughputFigures> {
  const producers = await Promise.all(Array.from({ length: options.connections }, () => system.openProducer()));
  const requests = Math.ceil(options.items / options.batch);
  const startMs = performance.now();
  await Promise.all(
    producers.map((producer, index) => {
      // Spread the requests: the first (requests % connections) connections send one more.
      let left = Math.floor(requests / options.connections) + (index < requests % options.connections ? 1 : 0);
      return pipelined(options.depth, async () => {
        if (left === 0) return false;
        left--;
        await producer.enqueue(options.batch);
        return true;
      });
    }),
  );
  const seconds = (performance.now() - startMs) / 1000;
  for (const producer of producers) producer.close();
  const items = requests * options.batch;
  return { items, seconds, itemsPerS: items / seconds, requestsPerS: requests / seconds };
}

export interface DrainOptions {
  items: number;
  count: number;
  connections: number;
  depth: number;
}

/** Takes and acks until `items` are done or the queue answers empty. */
export async function runDrain(system: System, options: DrainOptions): Promise<ThroughputFigures> {
  const consumers = await Promise.all(Array.from({ length: options.connections }, () => system.openConsumer()));
  let claimed = 0;
  let taken = 0;
  let requests = 0;
  let empty = false;
  const startMs = performance.now();
  await Promise.all(
    consumers.map((consumer) =>
      pipelined(options.depth, async () => {
        if (empty || claimed >= options.items) return false;
        claimed += options.count;
        requests++;
        const got = await consumer.take(options.count, 0);
        taken += got;
        if (got === 0) empty = true;
        return true;
      }),
    ),
  );
  const seconds = (performance.now() - startMs) / 1000;
  for (const consumer of consumers) consumer.close();
  return { items: taken, seconds, itemsPerS: taken / seconds, requestsPerS: requests / seconds };
}

export interface MixedOptions extends MixedLoadOptions {
  durationS: number;
  /** Seconds the rate is offered before the measured window (mixedWarmupSDefault unless given). */
  warmupS?: number;
}

export interface MixedFigures {
  durationS: number;
  /** Seconds of load before the window, not in `delay` or the rates (JIT warm-up of server and generator). */
  warmupS: number;
  offeredItemsPerS: number;
  enqueuedItemsPerS: number;
  deliveredItemsPerS: number;
  enqueued: number;
  delivered: number;
  /** Enqueue-to-delivery delay of every item sent inside the window. */
  delay: LatencySummary;
  /** The same for items sent during the warm-up, reported apart so it is seen, not hidden. */
  warmupDelay: LatencySummary;
}

/** How long the consumers may take to catch up after the producers stop (10 s). */
const MIXED_TAIL_MS = 10_000;
/**
 * Load offered before the measured window (5 s). A fresh Bun process runs
 * its first seconds of a new load in the interpreter and lower JIT tiers,
 * server and load generator alike (docs/decisions/023-runtime-defaults.md):
 * in a trace at 3,000 items/s the delay tail sat in the first 5 s, and the
 * soak's first 30 s interval had p99 297 ms against 40-110 ms after. beanstalkd, in C, has no such
 * phase; a production server runs warm. Every system gets the same warm-up.
 */
export const mixedWarmupSDefault = 5;

/** Offers `rateItemsPerS` for warmupS + durationS while consumers take and ack (mixed-load.ts); figures for the window after the warm-up. */
export async function runMixed(system: System, options: MixedOptions): Promise<MixedFigures> {
  const warmupS = options.warmupS ?? mixedWarmupSDefault;
  const delayHistogram = newHistogram();
  const warmupHistogram = newHistogram();
  let windowStartMs = Number.POSITIVE_INFINITY;
  let endMs = Number.POSITIVE_INFINITY;
  let deliveredInWindow = 0;
  const load = await MixedLoad.open(system, options, (delayMs, nowMs) => {
    const sentInWindow = nowMs - delayMs >= windowStartMs;
    (sentInWindow ? delayHistogram : warmupHistogram).recordValue(Math.max(1, Math.round(delayMs * 1e6)));
    if (nowMs >= windowStartMs && nowMs <= endMs) deliveredInWindow++;
  });
  const startMs = performance.now();
  windowStartMs = startMs + warmupS * 1000;
  endMs = windowStartMs + options.durationS * 1000;
  let enqueuedBeforeWindow = 0;
  const windowTimer = setTimeout(() => (enqueuedBeforeWindow = load.enqueued), warmupS * 1000);
  load.startConsuming();
  await load.produce(startMs, endMs);
  clearTimeout(windowTimer);
  await load.stop(MIXED_TAIL_MS);
  return {
    durationS: options.durationS,
    warmupS,
    offeredItemsPerS: options.rateItemsPerS,
    enqueuedItemsPerS: (load.enqueued - enqueuedBeforeWindow) / options.durationS,
    deliveredItemsPerS: deliveredInWindow / options.durationS,
    enqueued: load.enqueued,
    delivered: load.delivered,
    delay: summarize(delayHistogram),
    warmupDelay: summarize(warmupHistogram),
  };
}

export interface LatencyOp {
  name: string;
  /** Name of the op's first step when it has two (dequeue, then ack): that step is also timed alone. */
  firstStepName?: string;
  /**
   * An untimed sleep before each round trip, in ms: the same request asked
   * after an idle spell, as the strict dequeue of 1 is asked after the ack's
   * fsync (the echo floor's cold round trip).
   */
  pauseMs?: number;
  /** One sequential round trip, or two; resolves with Bun.nanoseconds() at the end of the first step (0 if one step). */
  run(): Promise<number>;
}

/** A run's histogram, and one per tenth of its samples (LatencySummary.tenthsP50Us). */
class TenthsHistogram {
  private readonly whole = newHistogram();
  private readonly tenths: Histogram[] = Array.from({ length: 10 }, () => newHistogram());

  constructor(private readonly samples: number) {}

  record(sample: number, ns: number): void {
    const value = Math.max(1, ns);
    this.whole.recordValue(value);
    (this.tenths[Math.floor((sample * 10) / this.samples)] as Histogram).recordValue(value);
  }

  summary(): LatencySummary {
    const tenthsP50Us = this.tenths.filter((h) => h.totalCount > 0).map((h) => summarize(h).p50Us);
    return { ...summarize(this.whole), tenthsP50Us };
  }
}

/** Runs each op `warmup` times unmeasured, then `samples` times one after another, timing each. */
export async function runLatency(ops: LatencyOp[], samples: number, warmup: number): Promise<Record<string, LatencySummary>> {
  const out: Record<string, LatencySummary> = {};
  for (const op of ops) {
    const pauseMs = op.pauseMs ?? 0;
    for (let i = 0; i < warmup; i++) await op.run();
    const whole = new TenthsHistogram(samples);
    const first = new TenthsHistogram(samples);
    for (let i = 0; i < samples; i++) {
      if (pauseMs > 0) await Bun.sleep(pauseMs);
      const t0 = Bun.nanoseconds();
      const firstEndNs = await op.run();
      const t1 = Bun.nanoseconds();
      whole.record(i, t1 - t0);
      if (firstEndNs > 0) first.record(i, firstEndNs - t0);
    }
    out[op.name] = whole.summary();
    if (op.firstStepName !== undefined) out[op.firstStepName] = first.summary();
  }
  return out;
}
