#!/usr/bin/env bun
// The long crash test: the same loop as test/e2e/crash.test.ts (SIGKILL a real
// server under load, restart on the same data dir, verify every acknowledged
// enqueue, ack, nack, extend and at_most_once delivery), over many kill points.
//
//   bun scripts/crash-soak.ts --rounds 50 --seed 12345 --durability strict
//   bun scripts/crash-soak.ts --durability both --rounds 30
//   bun scripts/crash-soak.ts --seed 12345 --first-round 35 --rounds 1   # replay one round
//
// Prints one line per round and a summary; exits 1 on any violation (with the
// seed to replay), 2 on bad flags.

import { Command, Option } from "commander";
import { crashRunDefaults, runCrashRounds, violationCounts, type CrashRunSummary, type Durability } from "../test/support/crash-harness.ts";
import { randomSeed } from "../test/support/crash-random.ts";

const program = new Command("crash-soak")
  .description("SIGKILL an orq server under load many times and verify what it acknowledged")
  .addOption(new Option("--rounds <n>", "kill points per durability mode").default("40"))
  .addOption(new Option("--seed <n>", "seed (uint32); random when absent"))
  .addOption(new Option("--first-round <n>", "number of the first round (replay round N of a seed: --first-round N --rounds 1)").default("0"))
  .addOption(new Option("--durability <mode>", "strict, relaxed or both").choices(["strict", "relaxed", "both"]).default("strict"))
  .addOption(new Option("--shards <n>", "server --shards").default("4"))
  .addOption(new Option("--consumers <n>", "consumer connections").default("2"))
  .addOption(new Option("--quiet", "print only the summary"))
  .exitOverride();

let flags: { rounds: string; firstRound: string; seed?: string; durability: string; shards: string; consumers: string; quiet?: boolean };
try {
  program.parse(process.argv);
  flags = program.opts();
} catch {
  process.exit(2);
}
const rounds = Number(flags.rounds);
const firstRound = Number(flags.firstRound);
const shards = Number(flags.shards);
const consumers = Number(flags.consumers);
const seed = flags.seed === undefined ? randomSeed() : Number(flags.seed);
for (const [name, value] of [["--rounds", rounds], ["--first-round", firstRound + 1], ["--shards", shards], ["--consumers", consumers], ["--seed", seed]] as const) {
  if (!Number.isSafeInteger(value) || value < (name === "--seed" ? 0 : 1) || (name === "--seed" && value > 0xffff_ffff)) {
    process.stderr.write(`crash-soak: ${name} must be a positive integer (seed: 0..4294967295)\n`);
    process.exit(2);
  }
}
const modes: Durability[] = flags.durability === "both" ? ["strict", "relaxed"] : [flags.durability as Durability];

process.stdout.write(`crash-soak: seed ${seed}, ${rounds} rounds per mode, modes ${modes.join(", ")}, shards ${shards}\n`);
const summaries: CrashRunSummary[] = [];
for (const durability of modes) {
  const summary = await runCrashRounds(
    crashRunDefaults({
      seed,
      rounds,
      firstRound,
      durability,
      shards,
      consumers,
      log: (line) => {
        if (flags.quiet !== true) process.stdout.write(`[${durability}] ${line}\n`);
      },
    }),
  );
  summaries.push(summary);
}

let failed = false;
process.stdout.write("\nsummary\n");
for (const s of summaries) {
  const sum = (pick: (r: CrashRunSummary["rounds"][number]) => number) => s.rounds.reduce((total, r) => total + pick(r), 0);
  const kinds = new Map<string, number>();
  for (const r of s.rounds) kinds.set(r.killKind, (kinds.get(r.killKind) ?? 0) + 1);
  process.stdout.write(
    `  ${s.durability}: ${s.rounds.length} kill points (${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")}), ` +
      `${sum((r) => r.inFlightAtKill)} requests in flight at kills, enqueued ok ${sum((r) => r.enqueueOk)}, ` +
      `unanswered ${sum((r) => r.enqueueUnanswered)}, deliveries ${sum((r) => r.deliveries)}, acks ok ${sum((r) => r.acksOk)}, ` +
      `nacks ok ${sum((r) => r.nacksOk)}, extends ok ${sum((r) => r.extendsOk)}, nacked checked ${sum((r) => r.nackedChecked)}, ` +
      `extended checked ${sum((r) => r.extendedChecked)}, ` +
      `found leased at restart ${sum((r) => r.leasedAtRestart)}, at_most_once deliveries checked ${sum((r) => r.atMostOnceDeliveredChecked)}, ` +
      `keys re-enqueued ${sum((r) => r.keysReenqueuedLive)}, unanswered enqueues found stored ${sum((r) => r.unansweredFoundStored)}, ` +
      `drained after restarts ${sum((r) => r.drained)}, ${(s.totalMs / 1000).toFixed(1)} s; ` +
      `violations ${s.violations.length}${s.violations.length > 0 ? ` (${violationCounts(s.violations)})` : ""}\n`,
  );
  if (s.violations.length > 0) failed = true;
}
if (failed) {
  process.stdout.write(`FAILED: replay with --seed ${seed}\n`);
  process.exit(1);
}
process.stdout.write("ok\n");
