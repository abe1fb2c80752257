// pg-boss's side of the PostgreSQL comparison, through its documented API
// (https://pgboss.io): one queue created with createQueue (standard policy),
// on a pool of LOOPS + 2 connections.
//   batched: 8 producers call insert() with 100 jobs; 8 consumers call
//            fetch({ batchSize: 100 }) and complete() the fetched ids in one
//            call.
//   single:  8 producers call send() with one job; 8 consumers fetch one
//            (batchSize 1) and complete it.
// Supervision (maintenance: expiring, archiving and deleting completed jobs)
// and cron scheduling are off, so the run measures the per-job path; a
// completed job's row stays until maintenance deletes it, and that later
// delete is not in the WAL figure. The warm-up's jobs go to a queue of their
// own, created by the warm-up and deleted (deleteQueue, with its completed
// jobs) once it is drained, so the timed run finds the table as orq and
// graphile-worker leave theirs: finished rows deleted (and then vacuumed,
// compare-pg.ts). The timed run's queue is created at open, as it was
// without a warm-up.

import { PgBoss } from "pg-boss";
import { BATCH_ITEMS, LOOPS, type PairSession, type Phase, type ShapePair, StallWatch, jsonPayload, produce } from "./compare-shapes.ts";

/** The timed run's queue, and the warm-up's. */
const QUEUES: Record<Phase, string> = { timed: "bench", "warm-up": "bench-warm-up" };

export async function openPgBossSession(url: string, pair: ShapePair): Promise<PairSession> {
  const boss = new PgBoss({ connectionString: url, max: LOOPS + 2, supervise: false, schedule: false });
  const errors: unknown[] = [];
  boss.on("error", (error) => errors.push(error));
  await boss.start();
  await boss.createQueue(QUEUES.timed);
  const perCall = pair === "batched" ? BATCH_ITEMS : 1;
  const failIfErrored = () => {
    if (errors.length > 0) throw new Error(`pg-boss reported an error: ${String(errors[0])}`);
  };
  return {
    async enqueue(phase, ledger) {
      const queue = QUEUES[phase];
      if (phase === "warm-up") await boss.createQueue(queue);
      const rate = await produce(ledger.items, perCall, async (indexes) => {
        if (pair === "batched") await boss.insert(queue, indexes.map((i) => ({ data: jsonPayload(i) })));
        else await boss.send(queue, jsonPayload(indexes[0]!));
      });
      failIfErrored();
      return rate;
    },
    async drain(phase, ledger) {
      const queue = QUEUES[phase];
      const watch = new StallWatch(ledger);
      const start = performance.now();
      await Promise.all(
        Array.from({ length: LOOPS }, async () => {
          while (!ledger.done) {
            watch.check();
            const jobs = await boss.fetch<{ i: number }>(queue, { batchSize: perCall });
            if (jobs.length === 0) {
              await Bun.sleep(10);
              continue;
            }
            await boss.complete(queue, jobs.map((job) => job.id));
            for (const job of jobs) ledger.record(job.data.i);
          }
        }),
      );
      const rate = ledger.ratePerS(start);
      failIfErrored();
      if (phase === "warm-up") await boss.deleteQueue(queue);
      return rate;
    },
    async close() {
      await boss.stop({ graceful: false, close: true });
    },
  };
}
