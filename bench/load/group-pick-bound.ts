// The in-process pick with fairness groups, run once per `npm run bench:load`
// beside the socket scenarios so its targets land in the same result file:
// bench/micro/group-pick.bench.ts (1,000,000 items over 10,000 groups in one
// topic, and 1,000,000 groups of one item; 100 signatures; the pick timed
// inside real dequeues; the engine heap per group), in a process of its own,
// read from the one JSON line it ends with.

import { join } from "node:path";
import { ORQ_CHECKOUT_ROOT } from "./processes.ts";

export interface PickPercentiles {
  p50Us: number;
  p90Us: number;
  p99Us: number;
  p999Us: number;
}

export interface GroupPickShape {
  /** "spread" (items over groups) or "one each" (a group per item). */
  shape: string;
  items: number;
  groups: number;
  deliveredShare: number;
  /** Dequeues timed whole, and dequeues whose pick was timed: fewer than asked when a pass hit its time bound. */
  dequeues: number;
  picks: number;
  dequeue: PickPercentiles;
  pick: PickPercentiles;
}

export interface GroupPickFigures {
  items: number;
  signatures: number;
  calls: number;
  shapes: GroupPickShape[];
  memory: {
    items: number;
    withoutGroupsBytes: number;
    oneEachBytes: number;
    /** (oneEachBytes - withoutGroupsBytes) / items: a group's cost beyond its item. */
    perGroupBytes: number;
    spreadGroups: number;
    spreadBytes: number;
    perSpreadGroupBytes: number;
  } | null;
}

export interface GroupPickOptions {
  items: number;
  groups: number;
  /** Timed calls per pass, warm-up calls, and the longest a pass may run (seconds). */
  calls: number;
  warmup: number;
  passS: number;
}

/** The label its figures go under in a run's results (report.ts and page.ts read them there). */
export const GROUP_PICK_LABEL = "orq in-process";

const BENCH = "group-pick.bench.ts";
const JSON_PREFIX = "group-pick-json ";

/** Runs the checkout's group-pick bench; throws with its last lines when it gives no figures. */
export async function measureGroupPick(options: GroupPickOptions): Promise<GroupPickFigures> {
  const argv = [
    process.execPath, join(ORQ_CHECKOUT_ROOT, "bench", "micro", BENCH),
    "--items", String(options.items), "--groups", String(options.groups), "--calls", String(options.calls),
    "--warmup", String(options.warmup), "--pass-s", String(options.passS), "--json",
  ];
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const figures = code === 0 ? parseGroupPick(out) : null;
  if (figures === null) throw new Error(`${BENCH} gave no figures (exit ${code}): ${(err || out).trim().split("\n").slice(-3).join(" | ")}`);
  return figures;
}

/** The bench's JSON line, or null when it has none. */
export function parseGroupPick(output: string): GroupPickFigures | null {
  const line = output.split("\n").find((text) => text.startsWith(JSON_PREFIX));
  return line === undefined ? null : (JSON.parse(line.slice(JSON_PREFIX.length)) as GroupPickFigures);
}

/** The worst of the shapes' pick percentile `which` (null when none ran). */
export function worstPick(figures: GroupPickFigures | undefined, which: "p50Us" | "p99Us"): number | null {
  if (figures === undefined || figures.shapes.length === 0) return null;
  return Math.max(...figures.shapes.map((shape) => shape.pick[which]));
}
