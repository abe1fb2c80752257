// The in-process pick with preferences, run once per `npm run bench:load`
// beside the group pick (the `pick` scenario) so its targets land in the same
// result file: bench/micro/preference-pick.bench.ts (1,000,000 items in one
// topic over 100 signatures, each preferring one of 10 repositories with a
// random weight; 10 worker kinds holding one repository each; the pick timed
// inside real dequeues of 1, each delivery acked), in a process of its own,
// read from the one JSON line it ends with.

import { join } from "node:path";
import type { GroupPickOptions, PickPercentiles } from "./group-pick-bound.ts";
import { ORQ_CHECKOUT_ROOT } from "./processes.ts";

export interface PreferencePickShape {
  /** "fit order" (prefer_wait_ms 0) or "held" (every item still in its wait). */
  shape: string;
  items: number;
  preferWaitMs: number;
  deliveredShare: number;
  dequeues: number;
  picks: number;
  dequeue: PickPercentiles;
  pick: PickPercentiles;
}

export interface PreferencePickFigures {
  items: number;
  signatures: number;
  repos: number;
  weights: number[];
  calls: number;
  shapes: PreferencePickShape[];
}

const BENCH = "preference-pick.bench.ts";
const JSON_PREFIX = "preference-pick-json ";

/** Runs the checkout's preference-pick bench (the group pick's sizes, without its groups); throws with its last lines when it gives no figures. */
export async function measurePreferencePick(options: Omit<GroupPickOptions, "groups">): Promise<PreferencePickFigures> {
  const argv = [
    process.execPath, join(ORQ_CHECKOUT_ROOT, "bench", "micro", BENCH),
    "--items", String(options.items), "--calls", String(options.calls), "--warmup", String(options.warmup), "--pass-s", String(options.passS), "--json",
  ];
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const figures = code === 0 ? parsePreferencePick(out) : null;
  if (figures === null) throw new Error(`${BENCH} gave no figures (exit ${code}): ${(err || out).trim().split("\n").slice(-3).join(" | ")}`);
  return figures;
}

/** The bench's JSON line, or null when it has none. */
function parsePreferencePick(output: string): PreferencePickFigures | null {
  const line = output.split("\n").find((text) => text.startsWith(JSON_PREFIX));
  return line === undefined ? null : (JSON.parse(line.slice(JSON_PREFIX.length)) as PreferencePickFigures);
}

/** The worst of the shapes' pick percentile `which` (null when none ran). */
export function worstPreferencePick(figures: PreferencePickFigures | undefined, which: "p50Us" | "p99Us"): number | null {
  if (figures === undefined || figures.shapes.length === 0) return null;
  return Math.max(...figures.shapes.map((shape) => shape.pick[which]));
}
