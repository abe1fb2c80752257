// What `wait` and ack results cost, run once per `npm run bench:load` beside
// the socket scenarios so its figures land in the same result file:
// bench/micro/waits-cost.bench.ts (100,000 waits parked at once over 100
// connections, the memory per parked wait and the time from the first ack to
// the last wait answered; the heap per retained acked outcome with no result,
// a 100 B one and a 1 KiB one), in a process of its own, read from the one
// JSON line it ends with. No targets: figures only.

import { join } from "node:path";
import { GROUP_PICK_LABEL } from "./group-pick-bound.ts";
import { ORQ_CHECKOUT_ROOT } from "./processes.ts";

export interface WaitsFigures {
  /** Waits parked at once, over `owners` connections of `perOwner` each, one live item each. */
  parked: number;
  owners: number;
  perOwner: number;
  heapBytes: number;
  perWaitBytes: number;
  receiptsPerAck: number;
  /** From the first ack to the last wait answered. */
  wakeMs: number;
  /** The same acks over as many items with no wait on them. */
  acksAloneMs: number;
  /** (wakeMs - acksAloneMs) / parked, in µs. */
  wakeUsPerWait: number;
  answered: number;
}

export interface RetainedOutcomeFigures {
  /** 0: acked without a result. */
  resultBytes: number;
  items: number;
  /** The median of the rounds' heap growth. */
  heapBytes: number;
  roundsHeapBytes: number[];
  perOutcomeBytes: number;
  perOutcomeBeyondResultBytes: number;
  /** What a result adds to an acked outcome (null without one), and that beyond its own bytes. */
  perResultBytes: number | null;
  perResultBeyondBytes: number | null;
}

export interface WaitsCostFigures {
  waits: WaitsFigures;
  results: { items: number; receiptsPerAck: number; outcomes: RetainedOutcomeFigures[] };
}

export interface WaitsCostOptions {
  /** Waits parked at once, the connections they come from, and the items acked per result size. */
  waits: number;
  owners: number;
  resultItems: number;
}

/**
 * The label its figures go under in a run's results: the group pick's, the
 * engine's own figures in one column (main.ts's runGuarded keeps both).
 */
export const WAITS_COST_LABEL = GROUP_PICK_LABEL;

const BENCH = "waits-cost.bench.ts";
const JSON_PREFIX = "waits-cost-json ";

/** Runs the checkout's waits-cost bench; throws with its last lines when it gives no figures. */
export async function measureWaitsCost(options: WaitsCostOptions): Promise<WaitsCostFigures> {
  const argv = [
    process.execPath, join(ORQ_CHECKOUT_ROOT, "bench", "micro", BENCH),
    "--waits", String(options.waits), "--owners", String(options.owners), "--result-items", String(options.resultItems), "--json",
  ];
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const figures = code === 0 ? parseWaitsCost(out) : null;
  if (figures === null) throw new Error(`${BENCH} gave no figures (exit ${code}): ${(err || out).trim().split("\n").slice(-3).join(" | ")}`);
  return figures;
}

/** The bench's JSON line, or null when it has none. */
export function parseWaitsCost(output: string): WaitsCostFigures | null {
  const line = output.split("\n").find((text) => text.startsWith(JSON_PREFIX));
  return line === undefined ? null : (JSON.parse(line.slice(JSON_PREFIX.length)) as WaitsCostFigures);
}

/** The figures of the outcomes acked with results of `resultBytes` (0: none). */
export function retainedOutcome(figures: WaitsCostFigures | undefined, resultBytes: number): RetainedOutcomeFigures | undefined {
  return figures?.results.outcomes.find((outcome) => outcome.resultBytes === resultBytes);
}
