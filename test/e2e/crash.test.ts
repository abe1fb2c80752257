// Goal: a reply from orq is a promise that survives the server being killed.
// A real `orq serve` process is SIGKILLed at seeded random moments while
// connections pipeline enqueues, dequeues, acks, nacks and extends; it restarts on the same
// data dir and the checker (test/support/crash-verify.ts) holds it to every
// ok reply it sent. Both durability modes survive a process crash (strict
// also survives power loss, which a test cannot cause).
//
// The seed is printed; replay with ORQ_CRASH_SEED=<seed>. The long version is
// scripts/crash-soak.ts. Each group of checks is its own test, so a failure
// names the broken promise.

import { beforeAll, describe, expect, test } from "bun:test";
import { crashRunDefaults, runCrashRounds, type CrashRunSummary, type Durability } from "../support/crash-harness.ts";
import type { Violation } from "../support/crash-model.ts";
import { randomSeed } from "../support/crash-random.ts";

const seed = process.env.ORQ_CRASH_SEED === undefined ? randomSeed() : Number(process.env.ORQ_CRASH_SEED);
/** Kill points per mode: strict matters most (a reply means fsync'd). */
const roundsByMode: Record<Durability, number> = { strict: 8, relaxed: 4 };
/** Each round is about 1-2 s (load, kill, restart, drain past the leases). */
const runTimeoutMs = 90_000;

/** Violation kinds by the promise they break; every kind the checker reports belongs to one group. */
const promises: Record<string, string[]> = {
  "every enqueue with an ok reply is stored exactly once (and keys stay idempotent)": [
    "lost-enqueue",
    "duplicate-item",
    "idempotency-lost",
    "phantom-item",
    "unexpected-delivery",
    "duplicate-delivery",
    "ended-unexpectedly",
    "unexpected-state",
  ],
  "an item whose ack had an ok reply stays acked and is never delivered again": ["acked-lost", "acked-redelivered"],
  "a nack with an ok reply is durable (attempts, metadata, not acked without a later ack); an ok extend's lease survives": ["nack-lost", "extend-lost"],
  "an at_most_once item whose delivery was replied is never delivered again": ["at-most-once-redelivered"],
  "at_least_once items come back after their lease; the topics then drain empty": ["never-returned", "drain-timeout", "not-ended", "topic-not-empty"],
  "receipts issued before the crash are stale after it (they never name a new delivery)": ["receipt-reused", "stale-receipt-accepted", "drain-ack-stale"],
  "the server restarts on its data dir and answers without errors": ["restart-failed", "checker-error", "unexpected-error", "bad-reply", "server-log"],
};

for (const durability of ["strict", "relaxed"] as const) {
  describe(`crash: SIGKILL under load, durability ${durability}`, () => {
    let summary: CrashRunSummary;

    beforeAll(async () => {
      const lines: string[] = [];
      summary = await runCrashRounds(crashRunDefaults({ seed, rounds: roundsByMode[durability], durability, log: (line) => lines.push(line) }));
      console.log(`crash test seed ${seed} (${durability}; replay: ORQ_CRASH_SEED=${seed} bun test test/e2e/crash.test.ts), ${summary.totalMs} ms`);
      for (const line of lines) console.log(`  ${line}`);
    }, runTimeoutMs);

    test("each kill landed with requests in flight", () => {
      expect(summary.rounds.length).toBe(roundsByMode[durability]);
      for (const round of summary.rounds) expect(round.inFlightAtKill).toBeGreaterThan(0);
    });

    for (const [promise, kinds] of Object.entries(promises)) {
      test(promise, () => {
        expect(describeViolations(summary.violations.filter((v) => kinds.includes(v.kind)))).toEqual([]);
      });
    }

    test("every violation the checker found belongs to a named promise", () => {
      const named = new Set(Object.values(promises).flat());
      expect(describeViolations(summary.violations.filter((v) => !named.has(v.kind)))).toEqual([]);
    });
  });
}

/** At most a dozen lines, so a failure stays readable; the seed replays the rest. */
function describeViolations(violations: Violation[]): string[] {
  const lines = violations.slice(0, 12).map((v) => `seed ${seed} round ${v.round} ${v.kind}: ${v.detail}`);
  if (violations.length > 12) lines.push(`... and ${violations.length - 12} more`);
  return lines;
}
