// Goal: while `orq serve` recovers, the event loop turns after every step of
// at most recoveryRecordsPerTurnMax records, so a real HTTP side port answers
// /healthz (200) and /readyz (503, not ready) in the middle of recovery; the
// recovered engine holds every item; progress lines follow the stopwatch.
// A real LMDB store and a real HTTP server; the test's own stopwatch.

import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recoverInTurns } from "../../src/cli/recover-in-turns.ts";
import { RecoveryLog } from "../../src/cli/recovery-log.ts";
import type { Engine } from "../../src/engine/engine.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { defaultLimits } from "../../src/limits.ts";
import { startHttpServer } from "../../src/observability/http-server.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import type { LogFields } from "../../src/server/logger.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import type { CommitBatch } from "../../src/storage/store.ts";
import { pendingItemRecord, shardBatch } from "../storage/record-fixtures.ts";

let dataDir = "";
afterEach(() => {
  if (dataDir !== "") rmSync(dataDir, { recursive: true, force: true });
  dataDir = "";
});

const shards = 2;
const itemsStored = 95;
const recordsPerTurn = 10;

describe("recovery in turns", () => {
  test("/healthz answers and /readyz says not ready between steps; the engine ends with every item", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "orq-recover-turns-"));
    const seed = await openLmdbStore({ dataDir, shards, durability: "relaxed" });
    const batch: CommitBatch = { shards: [shardBatch(0, []), shardBatch(1, [])], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null };
    for (let key = 0; key < itemsStored; key++) {
      batch.shards[key % shards]!.keys.push(key);
      batch.shards[key % shards]!.records.push(pendingItemRecord("ns", "t", key % 7, new Uint8Array([key & 0xff]), 1_700_000_000_000));
    }
    expect((await seed.commit(batch)).failedShards.size).toBe(0);
    await seed.close();

    const store = await openLmdbStore({ dataDir, shards, durability: "relaxed" });
    const stopwatch = new ManualClock(0);
    const writer = new GroupCommitter(store, { clock: stopwatch, stopwatch });
    let engine: Engine | null = null;
    const http = await startHttpServer({ host: "127.0.0.1", port: 0, metrics: createMetrics({ version: "test", processMetrics: false }), isReady: () => engine !== null });
    const lines: Array<{ message: string; fields?: LogFields }> = [];
    const push = (message: string, fields?: LogFields): void => {
      lines.push({ message, fields });
    };
    const logger = { debug: push, info: push, warn: push, error: push, fatal: push };
    const seen: Array<{ healthz: number; readyz: number; readyzBody: string }> = [];
    try {
      const log = new RecoveryLog(logger, store.storedCounts(), stopwatch.nowMs());
      engine = await recoverInTurns(
        { store, writer, limits: { ...defaultLimits, recoveryRecordsPerTurnMax: recordsPerTurn }, namespaces: {}, nowMs: 1_700_000_000_000 },
        {
          log,
          stopwatch,
          turn: async () => {
            stopwatch.advance(400);
            const healthz = await fetch(`http://127.0.0.1:${http.port}/healthz`);
            const readyz = await fetch(`http://127.0.0.1:${http.port}/readyz`);
            seen.push({ healthz: healthz.status, readyz: readyz.status, readyzBody: await readyz.text() });
            await healthz.text();
          },
        },
      );
      // 95 items read and 95 filed, a step per 10 of each: 9 + 9 turns.
      expect(seen).toHaveLength(2 * Math.floor(itemsStored / recordsPerTurn));
      expect(seen.every((s) => s.healthz === 200 && s.readyz === 503 && s.readyzBody === "not ready\n")).toBe(true);
      expect(engine.itemCount).toBe(itemsStored);
      expect((await fetch(`http://127.0.0.1:${http.port}/readyz`)).status).toBe(200);
      // Step n is reported at (n - 1) x 400 ms (the stopwatch moves in the turn after it): a progress
      // line at 1,200 ms (step 4), 2,400 (7), 3,600 (10, the first of the filing phase), 4,800 (13), 6,000 (16).
      const progress = lines.filter((line) => line.message === "recovery progress");
      expect(progress.map((line) => [line.fields?.phase, line.fields?.done])).toEqual([
        ["items", 40],
        ["items", 70],
        ["index", 10],
        ["index", 40],
        ["index", 70],
      ]);
      expect(lines[0]).toEqual({ message: "recovery started", fields: { items: itemsStored, outcomes: 0 } });
      expect(lines.at(-1)).toEqual({ message: "recovered", fields: { items: itemsStored, outcomes: 0, duration_ms: 18 * 400 } });
    } finally {
      await http.stop();
      await writer.drain();
      await store.close();
    }
  });
});
