// graphile-worker's side of the PostgreSQL comparison, through its documented
// API (https://worker.graphile.org): WorkerUtils to add jobs, run() with a
// task list to process them, migrations applied before the clock starts.
//   batched: 8 producers call addJobs() with 100 job specs; one worker pool
//            runs with the settings of graphile-worker's own performance page
//            (concurrency 24, pool of 25, localQueue of 500 jobs fetched and
//            locked per query, completions batched with
//            completeJobBatchDelay 0).
//   single:  8 producers call addJob() with one job; the worker pool runs at
//            concurrency 8 with its defaults: each worker fetches one job per
//            query and completes it in its own query.
// Every add_job and add_jobs call also sends a NOTIFY ('jobs:insert'), and a
// notifying transaction holds one cluster-wide lock (PostgreSQL's
// PreCommit_Notify locks "database 0") until after its commit, WAL flush
// included, so notifying commits do not share an fsync:
// one-at-a-time adds ran at about 200/s on this box with 8 producers, where
// a plain query on the same pool ran at about 5,000/s. That is the library as
// shipped, and the figure stands as measured.
// The drain's clock runs from run() until every job's task has run and its
// completion has committed (graphile-worker deletes a completed job, so: until
// the jobs table is empty); a job left in the table after the pool stops
// fails the run. The warm-up's jobs name a task of their own, and its pool
// (started and stopped by the warm-up's drain) knows only that task; the
// timed run's pool knows only the timed task, as it did without a warm-up.

import { Logger, makeWorkerUtils, run, type WorkerUtils } from "graphile-worker";
import { BATCH_ITEMS, DRAIN_STALL_MS, LOOPS, type PairSession, type Phase, type ShapePair, StallWatch, jsonPayload, produce } from "./compare-shapes.ts";

/** The timed run's task identifier, and the warm-up's. */
const TASKS: Record<Phase, string> = { timed: "t", "warm-up": "warm-up" };
/** How often the drain looks at the ledger to see whether it is done. */
const DONE_POLL_MS = 5;

/** Error-level lines only: the library logs every start and stop at info. */
const quietLogger = new Logger(() => (level, message) => {
  if (level === "error") console.error(`graphile-worker: ${message}`);
});

function workerOptions(pair: ShapePair) {
  if (pair === "batched") {
    return { concurrency: 24, maxPoolSize: 25, preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } };
  }
  return { concurrency: LOOPS, maxPoolSize: LOOPS + 2 };
}

/** Jobs still in graphile-worker's table (a completed job is deleted), read on the utilities' pool. */
async function jobsLeft(utils: WorkerUtils): Promise<number> {
  const result = await utils.withPgClient((client) => client.query<{ n: number }>("SELECT count(*)::int AS n FROM graphile_worker._private_jobs"));
  return result.rows[0]!.n;
}

export async function openGraphileSession(url: string, pair: ShapePair): Promise<PairSession> {
  const utils = await makeWorkerUtils({ connectionString: url, maxPoolSize: LOOPS + 2, logger: quietLogger });
  await utils.migrate();
  const perCall = pair === "batched" ? BATCH_ITEMS : 1;
  return {
    enqueue(phase, ledger) {
      const task = TASKS[phase];
      return produce(ledger.items, perCall, async (indexes) => {
        if (pair === "batched") await utils.addJobs(indexes.map((i) => ({ identifier: task, payload: jsonPayload(i) })));
        else await utils.addJob(task, jsonPayload(indexes[0]!));
      });
    },
    async drain(phase, ledger) {
      const watch = new StallWatch(ledger);
      const start = performance.now();
      const runner = await run({
        connectionString: url,
        noHandleSignals: true,
        logger: quietLogger,
        taskList: { [TASKS[phase]]: async (payload) => ledger.record((payload as { i: number }).i) },
        ...workerOptions(pair),
      });
      let endMs: number;
      try {
        while (!ledger.done) {
          watch.check();
          await Bun.sleep(DONE_POLL_MS);
        }
        // A task has run before its completion commits (batched ones later still): the drain ends when the table is empty.
        const deadlineMs = performance.now() + DRAIN_STALL_MS;
        while ((await jobsLeft(utils)) > 0 && performance.now() < deadlineMs) await Bun.sleep(DONE_POLL_MS);
        endMs = performance.now();
      } finally {
        await runner.stop();
      }
      const left = await jobsLeft(utils);
      if (left > 0) throw new Error(`graphile-worker left ${left} jobs in its table after the drain`);
      return ledger.items / ((endMs - start) / 1000);
    },
    async close() {
      await utils.release();
    },
  };
}
