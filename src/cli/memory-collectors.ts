// The collections `orq serve` asks for itself, wired to the real collector,
// timers and /proc readings (docs/OPERATIONS.md, "Memory under load"): one
// full collection after a large recovery, the heap governor while requests
// arrive (src/server/memory-governor.ts, which also unmaps the LMDB map's
// pages, src/cli/mapped-pages.ts) and the idle collection after a burst
// (src/server/idle-gc.ts). `--idle-gc off` turns all of them off.

import { fullGC, heapSize } from "bun:jsc";
import { monotonicStopwatch } from "../lib/clock.ts";
import { IdleGc, type IdleTimers } from "../server/idle-gc.ts";
import type { Logger } from "../server/logger.ts";
import { HeapGovernor } from "../server/memory-governor.ts";
import type { ServeConfig } from "./config.ts";
import { mappedPagesCheck } from "./mapped-pages.ts";

/** Items recovered at or above which start-up runs one full collection: below it recovery's garbage is small. */
const recoveryGcItemsMin = 100_000;

/** `--idle-gc`: off, hint or full (config.ts). */
type IdleGcSetting = ServeConfig["idleGc"];

const unrefTimers: IdleTimers = {
  set: (callback, delayMs) => setTimeout(callback, delayMs).unref(),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

const roundedMs = (ms: number): number => Math.round(ms * 100) / 100;

/**
 * Recovery leaves its garbage behind (decoded records, heap and table growth):
 * about 50 MiB per 1,000,000 items that the idle collection never sees, since
 * it counts requests. Collected once, before the protocol port opens, when a
 * pause (about 0.1-0.3 s at 1,000,000 items) delays no request.
 */
export function collectAfterRecovery(setting: IdleGcSetting, itemCount: number, logger: Logger): void {
  if (setting === "off" || itemCount < recoveryGcItemsMin) return;
  const startedMs = monotonicStopwatch.nowMs();
  Bun.gc(true);
  logger.info("recovery gc", { items: itemCount, blocked_ms: Math.round(monotonicStopwatch.nowMs() - startedMs) });
}

export interface MemoryCollectors {
  /** One request done: the hot path's two counters. */
  noteRequest(): void;
  stop(): void;
}

/**
 * The idle collection and the heap governor; `lmdbDataDir` (null in cluster mode) adds the map-page drops, `liveItems`
 * (the engine's item count) tells the governor a load or a drain has begun while it stands aside.
 */
export function startMemoryCollectors(
  setting: IdleGcSetting,
  lmdbDataDir: string | null,
  liveItems: () => number,
  logger: Logger,
  /** True while a cluster node moves shards in or out: the governor paces no collection then (memory-governor.ts). */
  holdOff?: () => boolean,
): MemoryCollectors {
  // After a burst, a quiet second: ask for a concurrent collection; after ten quiet seconds more, unless memory has
  // already fallen, collect fully. Bun.gc(false) returns in a few ms; Bun.gc(true) blocks until done.
  const idleGc = new IdleGc({
    timers: unrefTimers,
    collect: (kind, requests) => {
      // off never collects; hint skips the blocking stage (an operator who cannot take a pause of up to a few hundred ms).
      if (setting === "off" || (kind === "full" && setting !== "full")) return;
      const startedMs = monotonicStopwatch.nowMs();
      Bun.gc(kind === "full");
      logger.debug("idle gc", { kind, requests, blocked_ms: roundedMs(monotonicStopwatch.nowMs() - startedMs) });
    },
    residentBytes: () => process.memoryUsage.rss(),
  });
  // Under load, a collection whenever the heap has grown by heapGovernor.growthFactor since the last one (standing
  // aside while the live heap holds steady): memory right after a burst does not wait for the idle collection above.
  // Under a small heap (no backlog) it does not pace but collects fully every heapGovernor.smallHeapCollectEveryMs.
  // The same tick unmaps the LMDB map's pages once they have grown by mappedPages.growthBytes (dropped once now, after
  // recovery).
  const mapped = lmdbDataDir !== null && setting !== "off" ? mappedPagesCheck(lmdbDataDir, logger) : undefined;
  const heapGovernor = new HeapGovernor({
    mapped,
    // Once per burst of requests, not per check: which traffic drives the governor, and whether its tick drops map pages.
    onArm: () => logger.debug("heap governor armed", { map_pages: mapped !== undefined }),
    timers: unrefTimers,
    heapBytes: () => process.memoryUsage().heapTotal,
    nowMs: () => monotonicStopwatch.nowMs(),
    liveItems,
    holdOff,
    collect: (heapBytes, reason, freed) => {
      const startedMs = monotonicStopwatch.nowMs();
      const rssBytes = process.memoryUsage.rss();
      // Bun.gc(true) sweeps before it returns and has the allocator purge every free page; fullGC() leaves both to
      // later, so the pages freed are reused instead of faulted back in (memory-governor.ts, "What a collection does").
      if (freed === "return") Bun.gc(true);
      else fullGC();
      // What the collection found live, whether or not it swept (the capacity after fullGC() is the capacity before).
      const liveBytes = heapSize();
      logger.debug("heap gc", {
        heap_bytes: heapBytes,
        reason,
        freed,
        heap_after_bytes: process.memoryUsage().heapTotal,
        live_bytes: liveBytes,
        rss_bytes: rssBytes,
        rss_after_bytes: process.memoryUsage.rss(),
        blocked_ms: roundedMs(monotonicStopwatch.nowMs() - startedMs),
      });
      return liveBytes;
    },
  });
  return {
    noteRequest: () => {
      idleGc.noteRequest();
      if (setting !== "off") heapGovernor.noteRequest();
    },
    stop: () => {
      idleGc.stop();
      heapGovernor.stop();
    },
  };
}
