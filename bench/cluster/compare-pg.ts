// orq's cluster mode beside the PostgreSQL job queues its users already run,
// pg-boss and graphile-worker, on one local PostgreSQL in one run (issue 54's
// comparison). Each system runs each shape pair on a fresh database:
//   batched: ITEMS items enqueued 100 per call by 8 producers, then drained
//            in batches (what a batch means per system: pg-boss-session.ts,
//            graphile-session.ts, orq-session.ts);
//   single:  ITEMS items enqueued one per call by 8 producers, then drained
//            one at a time (orq and graphile-worker by 8 workers of their
//            own loops, pg-boss by 8 fetch-and-complete loops).
// Items are about 100 bytes. PostgreSQL runs with fsync and synchronous_commit
// on (test/support/postgres-server.ts with fsync: true; synchronous_commit is
// PostgreSQL's default). orq runs with 1, 2 and 3 nodes, each in FIFO order
// (every item at priority 0, as the libraries run here) and with random
// priorities 0..1000. Beside each rate: the WAL the PostgreSQL cluster wrote
// per item over the pair (wal-meter.ts), and whether every item was
// processed exactly once.
// The comparison is of long-running services in their steady state, but
// orq's sessions start fresh node processes whose JIT has seen none of its
// code, while the libraries run in this process, warmed by the pairs before.
// So every pair of every system first runs a warm-up (--warmup-items per
// serving process, as many items as the timed run by default, 0 for none;
// orq's nodes share the items they are sent, so 3 nodes get three times as
// many, and each sees what one node does): once its session is open, the same shape (same producers, consumers, per-call sizes and
// priority order) enqueues and drains that many items on the same database and nodes, under a topic,
// queue or task of its own, all processed exactly once or the pair fails.
// The pair's database is then vacuumed (the warm-up's rows are dead), and
// the WAL mark and the timed enqueue and drain come after it, with the
// database analyzed between them (untimed, its WAL left out); the warm-up's
// items are in no rate, WAL figure or exactly-once count of the timed run
// (docs/decisions/043-comparison-warm-up.md).
// Everything shares this machine's cores: the figures compare costs per item
// on one box, not how each system scales.
//
//   npm run bench:pg-compare                                   # 20,000 items, every system
//   npm run bench:pg-compare -- --items 2000 --warmup-items 500 --nodes 1 --out /tmp/pg.json
//   npm run bench:pg-compare -- --warmup-items 0                # as before the warm-up
//   npm run bench:pg-compare -- --systems orq --orders random --pairs batched
//   npm run bench:pg-compare -- --dsn postgres://user@host/db  # an existing server (its admin database)
//   ORQ_BENCH_MAIN=/other/checkout/src/cli/main.ts npm run bench:pg-compare -- --systems orq
//   npm run bench:pg-compare:page -- bench/results-pg-compare.json --write BENCHMARKS.md

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { SQL } from "bun";
import { startPostgres } from "../../test/support/postgres-server.ts";
import { describeMachine } from "../load/machine.ts";
import type { PriorityOrder } from "../load/priorities.ts";
import type { CompareReport } from "./compare-report.ts";
import { type PairResult, type PairSession, ProcessedLedger, SHAPE_PAIRS, type ShapePair } from "./compare-shapes.ts";
import { openGraphileSession } from "./graphile-session.ts";
import { openOrqSession } from "./orq-session.ts";
import { openPgBossSession } from "./pg-boss-session.ts";
import { WalMeter } from "./wal-meter.ts";

const REPO_ROOT = join(import.meta.dir, "..", "..");

/** One row of the comparison: a system in one configuration. */
interface Contender {
  label: string;
  /** The processes that serve the pair and must each warm up: orq's nodes, or this process for a library. */
  processes: number;
  open(url: string, pair: ShapePair): Promise<PairSession>;
}

function packageVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string };
  return manifest.version;
}

function contenders(systems: string[], nodes: number[], orders: PriorityOrder[]): Contender[] {
  const out: Contender[] = [];
  if (systems.includes("orq")) {
    for (const order of orders) {
      for (const count of nodes) {
        const label = `orq, ${count} node${count === 1 ? "" : "s"}${order === "random" ? ", random priorities" : ""}`;
        out.push({ label, processes: count, open: (url, pair) => openOrqSession(url, pair, { nodes: count, order }) });
      }
    }
  }
  if (systems.includes("graphile-worker")) out.push({ label: `graphile-worker ${packageVersion("graphile-worker")}`, processes: 1, open: openGraphileSession });
  if (systems.includes("pg-boss")) out.push({ label: `pg-boss ${packageVersion("pg-boss")}`, processes: 1, open: openPgBossSession });
  return out;
}

/** Enqueues and drains `items` warm-up items in the pair's shape, and fails the pair unless each was processed exactly once. */
async function warmUp(session: PairSession, items: number, url: string): Promise<void> {
  if (items === 0) return;
  const ledger = new ProcessedLedger(items);
  await session.enqueue("warm-up", ledger);
  await session.drain("warm-up", ledger);
  if (ledger.distinct !== items || ledger.duplicates > 0) {
    throw new Error(`warm-up: ${ledger.distinct} of ${items} items processed, ${ledger.duplicates} more than once`);
  }
  // The warm-up's finished rows are dead (or, pg-boss's, completed and then deleted with their queue), and a library
  // whose fetch scans its job table walks them until autovacuum, throttled, gets there: without this, pg-boss's batched
  // drain fell from about 18,000 to 830 jobs/s in two full runs. Vacuum the pair's database, as autovacuum would have
  // in a running service, so the timed run starts clean for every system (decision 043).
  await adminStatement(url, "VACUUM");
}

/**
 * Statistics for the rows the timed enqueue just wrote, as autovacuum's
 * analyze keeps them in a running service. A fresh burst into a table last
 * vacuumed empty leaves the planner believing it holds nothing, and a library
 * whose fetch is planned on that walks the whole table for every batch:
 * pg-boss's batched drain fell to 826-955 jobs/s in three full runs (about
 * 18,000-25,000 otherwise). orq's item statements look rows up by key
 * whatever the statistics say (decision 042); its other parts (the fence, the
 * acked blocks) are planned too, and its drain gained as well. Untimed; its
 * WAL is left out of the pair's figure.
 */
async function analyze(url: string): Promise<void> {
  await adminStatement(url, "ANALYZE");
}

/** Runs one pair on a fresh database, after its warm-up, and measures it. */
async function measurePair(contender: Contender, url: string, pair: ShapePair, counts: { items: number; warmupItems: number }, wal: WalMeter): Promise<PairResult> {
  const { items } = counts;
  const session = await contender.open(url, pair);
  try {
    // Each serving process sees as many warm-up items as a single one would: orq's client spreads them over the nodes,
    // and a third of the warm-up left each of 3 nodes measurably cold (decision 043).
    await warmUp(session, counts.warmupItems * contender.processes, url);
    const ledger = new ProcessedLedger(items);
    const lsn = await wal.mark();
    const enqueuePerS = await session.enqueue("timed", ledger);
    const enqueueWal = await wal.bytesSince(lsn);
    await analyze(url);
    const beforeDrain = await wal.position();
    const drainPerS = await session.drain("timed", ledger);
    const walBytes = enqueueWal + (await wal.bytesSince(beforeDrain));
    return { items, enqueuePerS, drainPerS, walBytesPerItem: walBytes / items, processed: ledger.processed, distinct: ledger.distinct, duplicates: ledger.duplicates };
  } finally {
    await session.close();
  }
}

function perS(rate: number): string {
  return Math.round(rate).toLocaleString("en-US");
}

interface Server {
  adminUrl: string;
  createDatabase(label: string): Promise<string>;
  /** Drops a database made by createDatabase, on a server the run does not own (its own server is removed whole). */
  dropDatabase?(url: string): Promise<void>;
  stop(): void;
}

async function adminStatement(dsn: string, statement: string): Promise<void> {
  const admin = new SQL({ url: dsn, max: 1 });
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.close();
  }
}

/** Databases on an existing server, made and dropped per pair: the DSN names its admin database. */
function existingServer(dsn: string): Server {
  let made = 0;
  return {
    adminUrl: dsn,
    async createDatabase(label: string) {
      const name = `orq_compare_${label}_${process.pid}_${++made}`;
      await adminStatement(dsn, `CREATE DATABASE "${name}"`);
      const url = new URL(dsn);
      url.pathname = `/${name}`;
      return url.toString();
    },
    async dropDatabase(url: string) {
      await adminStatement(dsn, `DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
    },
    stop() {},
  };
}

function parseOptions() {
  const { values } = parseArgs({
    options: {
      items: { type: "string", default: "20000" },
      "warmup-items": { type: "string" },
      nodes: { type: "string", default: "1,2,3" },
      orders: { type: "string", default: "fifo,random" },
      pairs: { type: "string", default: SHAPE_PAIRS.join(",") },
      systems: { type: "string", default: "orq,graphile-worker,pg-boss" },
      dsn: { type: "string" },
      out: { type: "string" },
    },
  });
  const items = Number(values.items);
  if (!Number.isInteger(items) || items < 1) throw new Error(`--items must be a positive integer, got ${values.items}`);
  // As many as the timed run unless told: 2,000 before 20,000 left orq's fresh nodes and this process's first pairs still warming (decision 043).
  const warmupItems = Number(values["warmup-items"] ?? items);
  if (!Number.isInteger(warmupItems) || warmupItems < 0) throw new Error(`--warmup-items must be an integer of 0 or more, got ${values["warmup-items"]}`);
  const list = (text: string) => text.split(",").filter((part) => part.length > 0);
  const nodes = list(values.nodes).map(Number);
  if (nodes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--nodes must list positive integers, got ${values.nodes}`);
  const orders = list(values.orders) as PriorityOrder[];
  if (orders.some((o) => o !== "fifo" && o !== "random")) throw new Error(`--orders takes fifo and random, got ${values.orders}`);
  const pairs = list(values.pairs) as ShapePair[];
  if (pairs.some((p) => !SHAPE_PAIRS.includes(p))) throw new Error(`--pairs takes ${SHAPE_PAIRS.join(" and ")}, got ${values.pairs}`);
  const systems = list(values.systems);
  const unknown = systems.filter((s) => !["orq", "graphile-worker", "pg-boss"].includes(s));
  if (unknown.length > 0) throw new Error(`--systems takes orq, graphile-worker and pg-boss, got ${unknown.join(",")}`);
  const out = values.out ?? join(REPO_ROOT, ".bench-out", `pg-compare-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  return { items, warmupItems, nodes, orders, pairs, systems, dsn: values.dsn, out };
}

async function main(): Promise<void> {
  const options = parseOptions();
  const startedAt = new Date().toISOString();
  const server: Server = options.dsn === undefined ? await startPostgres({ fsync: true }) : existingServer(options.dsn);
  const wal = new WalMeter(server.adminUrl);
  const report: CompareReport = {
    startedAt,
    finishedAt: "",
    machine: describeMachine(),
    postgres: await wal.serverSettings(),
    options: { items: options.items, warmupItems: options.warmupItems, warmupPerProcess: true, nodes: options.nodes, orders: options.orders, pairs: options.pairs, systems: options.systems },
    results: {},
    failed: {},
  };
  console.log(`warm-up: ${options.warmupItems} items per serving process (each orq node, or this process for a library) before each timed run, not counted`);
  try {
    for (const contender of contenders(options.systems, options.nodes, options.orders)) {
      report.results[contender.label] = {};
      for (const pair of options.pairs) {
        const url = await server.createDatabase(pair);
        try {
          const result = await measurePair(contender, url, pair, options, wal);
          report.results[contender.label]![pair] = result;
          console.log(
            `${contender.label}, ${pair}: enqueue ${perS(result.enqueuePerS)}/s, drain ${perS(result.drainPerS)}/s, ` +
              `WAL ${perS(result.walBytesPerItem)} bytes/item, processed ${result.processed} (${result.distinct} distinct) of ${result.items}`,
          );
        } catch (error) {
          report.failed[`${contender.label}, ${pair}`] = error instanceof Error ? error.message : String(error);
          console.error(`${contender.label}, ${pair}: failed: ${String(error)}`);
        }
        await server.dropDatabase?.(url);
      }
    }
  } finally {
    await wal.close();
    server.stop();
  }
  report.finishedAt = new Date().toISOString();
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${options.out}`);
  if (Object.keys(report.failed).length > 0) process.exitCode = 1;
}

if (import.meta.main) await main();
