// The crash loop shared by test/e2e/crash.test.ts and scripts/crash-soak.ts:
// start a real `orq serve` child process, and per round put load on fresh
// topics, SIGKILL the server at a seeded random moment, restart it on the same
// data dir and verify the round (crash-verify.ts). Kill points vary by round:
//  - load:   mid-load, 60..700 ms in, with enqueues, dequeues, acks, nacks and extends in flight;
//  - early:  0..30 ms in, while the first commits are being written;
//  - double: mid-load, then again 0..25 ms after the restart printed its
//            listening line (while recovery's own writes may be in flight).

import { ServerProcess } from "./server-process.ts";
import { CrashClient } from "./crash-client.ts";
import { AckedLedger, RoundModel, type Violation } from "./crash-model.ts";
import { CrashRandom } from "./crash-random.ts";
import { defaultLoadOptions, runLoad, type LoadOptions } from "./crash-load.ts";
import { verifyRound } from "./crash-verify.ts";

export type Durability = "strict" | "relaxed";
export type KillKind = "load" | "early" | "double";

export interface CrashRunOptions {
  seed: number;
  rounds: number;
  /** Number of the first round: with the same seed, round N's schedule is the same whatever rounds ran before it (replay one round). */
  firstRound: number;
  durability: Durability;
  shards: number;
  consumers: number;
  load: LoadOptions;
  log(line: string): void;
}

export interface RoundReport {
  round: number;
  killKind: KillKind;
  killAfterMs: number;
  /** Requests awaiting a reply when the SIGKILL was sent. */
  inFlightAtKill: number;
  enqueueOk: number;
  enqueueUnanswered: number;
  deliveries: number;
  acksOk: number;
  acksUnanswered: number;
  drained: number;
  /** Coverage after the restart: items found leased, replied at_most_once deliveries checked, live keys enqueued again, unanswered enqueues found stored. */
  leasedAtRestart: number;
  atMostOnceDeliveredChecked: number;
  keysReenqueuedLive: number;
  unansweredFoundStored: number;
  nacksOk: number;
  extendsOk: number;
  /** Live items checked after an ok nack; leases found still held after an ok extend. */
  nackedChecked: number;
  extendedChecked: number;
  verifyMs: number;
}

export interface CrashRunSummary {
  seed: number;
  durability: Durability;
  rounds: RoundReport[];
  violations: Violation[];
  totalMs: number;
}

export function crashRunDefaults(partial: Partial<CrashRunOptions> & { seed: number }): CrashRunOptions {
  return {
    rounds: 6,
    firstRound: 0,
    durability: "strict",
    shards: 4,
    consumers: 2,
    load: defaultLoadOptions,
    log: () => {},
    ...partial,
  };
}

const namespace = "crash";

export async function runCrashRounds(options: CrashRunOptions): Promise<CrashRunSummary> {
  const startedMs = performance.now();
  const rng = new CrashRandom(options.seed);
  const ledger = new AckedLedger();
  const reports: RoundReport[] = [];
  const violations: Violation[] = [];
  const server = await ServerProcess.start({ args: ["--shards", String(options.shards), "--durability", options.durability] });
  try {
    for (let round = options.firstRound; round < options.firstRound + options.rounds; round++) {
      const roundRng = rng.fork(round);
      const model = new RoundModel(round, namespace, `r${round}-alo`, `r${round}-amo`);
      const report = await runRound(server, model, ledger, roundRng, options);
      reports.push(report);
      violations.push(...model.violations);
      options.log(
        `round ${round}: kill ${report.killKind} at ${report.killAfterMs} ms (${report.inFlightAtKill} requests in flight); ` +
          `enqueued ok ${report.enqueueOk}, unanswered ${report.enqueueUnanswered}; deliveries ${report.deliveries}; ` +
          `acks ok ${report.acksOk}, unanswered ${report.acksUnanswered}; nacks ok ${report.nacksOk}, extends ok ${report.extendsOk}; after restart: ${report.leasedAtRestart} leased, ` +
          `${report.atMostOnceDeliveredChecked} at_most_once deliveries checked, ${report.keysReenqueuedLive} keys re-enqueued, ` +
          `${report.unansweredFoundStored} unanswered enqueues found stored, ${report.nackedChecked} nacked and ${report.extendedChecked} extended checked, drained ${report.drained}; ` +
          `verify ${report.verifyMs} ms; violations ${model.violations.length}`,
      );
      for (const v of model.violations.slice(0, 20)) options.log(`  VIOLATION ${v.kind}: ${v.detail}`);
      if (model.violations.some((v) => v.kind === "restart-failed")) break;
    }
  } finally {
    await server.cleanup();
  }
  return { seed: options.seed, durability: options.durability, rounds: reports, violations, totalMs: Math.round(performance.now() - startedMs) };
}

function pickKillKind(rng: CrashRandom): KillKind {
  const roll = rng.next();
  if (roll < 0.2) return "early";
  if (roll < 0.45) return "double";
  return "load";
}

async function runRound(server: ServerProcess, model: RoundModel, ledger: AckedLedger, rng: CrashRandom, options: CrashRunOptions): Promise<RoundReport> {
  const killKind = pickKillKind(rng);
  const killAfterMs = killKind === "early" ? rng.int(0, 30) : rng.int(60, 700);
  const producer = await CrashClient.connect(server.host, server.port);
  const consumers: CrashClient[] = [];
  for (let i = 0; i < options.consumers; i++) consumers.push(await CrashClient.connect(server.host, server.port));
  const clients = [producer, ...consumers];

  let inFlightAtKill = 0;
  const killed = (async () => {
    await Bun.sleep(killAfterMs); // The kill moment is the thing under test: a real delay is the point.
    inFlightAtKill = clients.reduce((sum, client) => sum + client.inFlight, 0);
    await server.stop("SIGKILL");
  })();
  await runLoad(model, ledger, producer, consumers, rng.fork(1), options.load);
  await killed;
  for (const client of clients) client.close();

  if (!(await restart(server, model))) return report();
  if (killKind === "double") {
    await Bun.sleep(rng.int(0, 25));
    await server.stop("SIGKILL");
    if (!(await restart(server, model))) return report();
  }

  const verifyStartedMs = performance.now();
  const checker = await CrashClient.connect(server.host, server.port);
  let drained = 0;
  try {
    drained = (await verifyRound(model, ledger, checker)).drained;
  } catch (error) {
    // The checker expects no error reply after a restart; one is itself a finding.
    model.violation("checker-error", error instanceof Error ? error.message : String(error));
  } finally {
    checker.close();
  }
  if (model.violations.some((v) => v.kind === "checker-error" || v.kind === "unexpected-error")) {
    // INTERNAL replies name a request id the server logged with the cause: keep those lines with the finding.
    const errors = [...server.stderrLines].filter((line) => line.includes('"level":"error"')).slice(-3);
    for (const line of errors) model.violation("server-log", line.slice(0, 2000));
  }
  return report(drained, Math.round(performance.now() - verifyStartedMs));

  function report(drainedCount = 0, verifyMs = 0): RoundReport {
    return {
      round: model.round,
      killKind,
      killAfterMs,
      inFlightAtKill,
      enqueueOk: model.enqueueRepliesOk,
      enqueueUnanswered: model.enqueueUnanswered,
      deliveries: model.deliveriesReplied,
      acksOk: model.acksOk,
      acksUnanswered: model.acksUnanswered,
      drained: drainedCount,
      leasedAtRestart: model.leasedAtRestart,
      atMostOnceDeliveredChecked: model.atMostOnceDeliveredChecked,
      keysReenqueuedLive: model.keysReenqueuedLive,
      unansweredFoundStored: model.unansweredFoundStored,
      nacksOk: model.nacksOk,
      extendsOk: model.extendsOk,
      nackedChecked: model.nackedChecked,
      extendedChecked: model.extendedChecked,
      verifyMs,
    };
  }
}

/** Start again on the same data dir; a server that cannot recover its own data is the worst violation. */
async function restart(server: ServerProcess, model: RoundModel): Promise<boolean> {
  try {
    await server.restart({ samePort: false });
    return true;
  } catch (error) {
    model.violation("restart-failed", `${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
}

/** One line per violation kind with its count, for summaries. */
export function violationCounts(violations: readonly Violation[]): string {
  const counts = new Map<string, number>();
  for (const v of violations) counts.set(v.kind, (counts.get(v.kind) ?? 0) + 1);
  return [...counts].map(([kind, n]) => `${kind}: ${n}`).join(", ");
}
