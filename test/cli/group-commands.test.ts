// Goal: the CLI's fair-sharing commands read their flags as documented:
// `--rate COUNT/PER` (PER in ms, or with a unit) at its bounds and its errors;
// `orq policy` wants a bound or --clear and refuses --clear with a bound and
// --weight without --group; `orq groups --sort backlog` orders by ready +
// delayed + waiting; and the words and tables `policy`, `policies`, `groups`
// and `explain` print. Parsed through commander itself where a flag's parser
// is involved, so the flag spellings are checked too.

import { describe, expect, test } from "bun:test";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { rateArg, UsageError } from "../../src/cli/client-command.ts";
import { explanationBlock, reasonText } from "../../src/cli/commands/explain.ts";
import { byBacklog } from "../../src/cli/commands/groups.ts";
import { policyInput } from "../../src/cli/commands/policy.ts";
import { groupsTable, policiesTable, policyBoundsText, rateText } from "../../src/cli/output.ts";
import type { GroupCounts } from "../../src/client/types.ts";

/** The options commander parses from `args` for a command with the policy flags (no action runs). */
function parsePolicyFlags(args: string[]): Record<string, unknown> {
  const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
  const command = program
    .command("policy")
    .exitOverride()
    .configureOutput({ writeErr: () => undefined })
    .requiredOption("--topic <topic>")
    .option("--group <group>")
    .option("--rate <count/per>", "", rateArg)
    .option("--clear");
  program.parse(["node", "orq", "policy", ...args]);
  return command.opts();
}

describe("--rate", () => {
  test("COUNT/PER with PER in ms, or with a unit", () => {
    expect(rateArg("10/1000")).toEqual({ count: 10, perMs: 1000 });
    expect(rateArg("10/1s")).toEqual({ count: 10, perMs: 1000 });
    expect(rateArg("600/1m")).toEqual({ count: 600, perMs: 60_000 });
    expect(rateArg("5/1500ms")).toEqual({ count: 5, perMs: 1500 });
    expect(rateArg("1/2h")).toEqual({ count: 1, perMs: 7_200_000 });
    expect(rateArg(" 3 / 4 s ")).toEqual({ count: 3, perMs: 4000 });
  });

  test("count and per at 0 (refused), 1 and large; not the form", () => {
    expect(() => rateArg("0/1s")).toThrow(InvalidArgumentError);
    expect(() => rateArg("1/0")).toThrow(InvalidArgumentError);
    expect(() => rateArg("1/0s")).toThrow(InvalidArgumentError);
    expect(rateArg("1/1")).toEqual({ count: 1, perMs: 1 });
    expect(rateArg(`${Number.MAX_SAFE_INTEGER}/1`).count).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => rateArg(`${Number.MAX_SAFE_INTEGER + 2}/1`)).toThrow(InvalidArgumentError);
    for (const bad of ["10", "10/", "/1s", "10/1d", "-1/1s", "1.5/1s", "10 per 1s", "10/1s/2"]) expect(() => rateArg(bad)).toThrow(InvalidArgumentError);
  });

  test("through commander: a bad --rate is its usage error; a good one arrives parsed", () => {
    expect(parsePolicyFlags(["--topic", "t", "--rate", "10/1s"]).rate).toEqual({ count: 10, perMs: 1000 });
    expect(() => parsePolicyFlags(["--topic", "t", "--rate", "ten"])).toThrow(CommanderError);
  });

  test("printed as the flag takes it, in the largest unit that divides it", () => {
    expect(rateText({ count: 10, perMs: 1000 })).toBe("10/1s");
    expect(rateText({ count: 600, perMs: 60_000 })).toBe("600/1m");
    expect(rateText({ count: 1, perMs: 7_200_000 })).toBe("1/2h");
    expect(rateText({ count: 5, perMs: 1500 })).toBe("5/1500ms");
    for (const text of ["10/1s", "600/1m", "1/2h", "5/1500ms", "7/90s"]) expect(rateText(rateArg(text))).toBe(text);
  });
});

describe("orq policy flags", () => {
  test("bounds become the request; --group passes through, '*' included", () => {
    expect(policyInput({ group: "acme", weight: 3, maxLeased: 2 })).toEqual({ group: "acme", weight: 3, maxLeased: 2, rate: undefined });
    expect(policyInput({ maxLeased: 5, rate: { count: 1, perMs: 1000 } })).toEqual({ group: undefined, weight: undefined, maxLeased: 5, rate: { count: 1, perMs: 1000 } });
    expect(policyInput({ group: "*", weight: 1 }).group).toBe("*");
  });

  test("--clear alone clears; with a bound it is a usage error", () => {
    expect(policyInput({ group: "acme", clear: true })).toEqual({ group: "acme", clear: true });
    expect(policyInput(parsePolicyFlags(["--topic", "t", "--clear"]))).toEqual({ group: undefined, clear: true });
    expect(() => policyInput({ clear: true, maxLeased: 1 })).toThrow(UsageError);
    expect(() => policyInput(parsePolicyFlags(["--topic", "t", "--clear", "--rate", "1/1s"]))).toThrow(UsageError);
  });

  test("no bound and no --clear is a usage error (it would wipe the stored policy); so is --weight without --group", () => {
    expect(() => policyInput({})).toThrow(UsageError);
    expect(() => policyInput({ group: "acme" })).toThrow(UsageError);
    expect(() => policyInput({ weight: 2 })).toThrow(UsageError);
  });

  test("in words and in the policies table", () => {
    expect(policyBoundsText({ group: "acme", weight: 3, maxLeased: 5, rate: { count: 10, perMs: 1000 } })).toBe("weight 3, max leased 5, rate 10/1s");
    expect(policyBoundsText({})).toBe("no bounds");
    expect(policiesTable([{ maxLeased: 10 }, { group: "*", weight: 1 }, { group: "acme", weight: 4, rate: { count: 2, perMs: 60_000 } }])).toBe(
      ["GROUP        WEIGHT  MAX LEASED  RATE", "(topic)      -       10          -", "* (default)  1       -           -", "acme         4       -           2/1m"].join("\n"),
    );
  });
});

function group(name: string | null, ready: number, delayed = 0, waiting = 0, leased = 0): GroupCounts {
  return { group: name, ready, delayed, waiting, leased, dead: 0, paused: false };
}

describe("orq groups", () => {
  test("--sort backlog: most ready + delayed + waiting first; leased and dead do not count; ties keep name order", () => {
    const sorted = byBacklog([group(null, 1), group("a", 0, 0, 0, 50), group("b", 1, 1, 1), group("c", 0, 3), group("d", 2)]);
    expect(sorted.map((g) => g.group)).toEqual(["b", "c", "d", null, "a"]);
  });

  test("the table: the items without a group as (none), a pause by its end", () => {
    const paused = { ...group("acme", 2), paused: true, pausedUntilMs: Date.UTC(2030, 0, 1) };
    const text = groupsTable([group(null, 1), paused, { ...group("globex", 0), paused: true }]);
    expect(text.split("\n")[0]).toBe("GROUP   READY  DELAYED  WAITING  LEASED  DEAD  PAUSED");
    expect(text).toContain("(none)");
    expect(text).toContain("until 2030-01-01T00:00:00.000Z");
    expect(text.split("\n")[3]).toMatch(/^globex .* yes$/);
  });
});

describe("orq explain", () => {
  test("each reason in words", () => {
    const at = Date.UTC(2030, 0, 1);
    const iso = "2030-01-01T00:00:00.000Z";
    expect(reasonText({ reason: "delayed", untilMs: at })).toBe(`delayed until ${iso}`);
    expect(reasonText({ reason: "waiting", after: ["0:1", "2:3"] })).toBe("waiting for 0:1, 2:3 to be acked");
    expect(reasonText({ reason: "leased", untilMs: at })).toBe(`leased until ${iso}`);
    expect(reasonText({ reason: "dead", deadReason: "max_attempts" })).toBe("a dead letter (max_attempts)");
    expect(reasonText({ reason: "topic_paused" })).toBe("topic paused until resumed");
    expect(reasonText({ reason: "group_paused", untilMs: at })).toBe(`group paused until ${iso}`);
    expect(reasonText({ reason: "group_max_leased", leased: 2, max: 2 })).toBe("group at its max leased (2 of 2 leased)");
    expect(reasonText({ reason: "topic_rate", nextAtMs: at })).toBe(`topic out of rate tokens until ${iso}`);
    expect(reasonText({ reason: "held_for_preferred", untilMs: at })).toBe(`held for a worker that fits its prefers until ${iso}`);
    expect(reasonText({ reason: "no_worker", kinds: [{ failed: ["gpu: {gte: 2}"] }, { failed: ["region: eu", "gpu: true"] }] })).toBe(
      "no worker kind that asked may take it: kind 1 fails gpu: {gte: 2}; kind 2 fails region: eu, gpu: true",
    );
    expect(reasonText({ reason: "no_dequeue" })).toBe("no worker asked for this topic recently");
    expect(reasonText({ reason: "behind", ahead: 1 })).toBe("behind 1 item that goes first for every worker kind that may take it");
    expect(reasonText({ reason: "something_new", untilMs: 5 })).toBe('something_new {"until_ms":5}');
  });

  test("an item's block: one `why` line per reason, or first in line", () => {
    expect(explanationBlock({ id: "0:1", state: "ready", reasons: [] })).toBe("id     0:1\nstate  ready\nwhy    first in line for a worker that asked");
    expect(explanationBlock({ id: "0:1", state: "ready", reasons: [{ reason: "no_dequeue" }, { reason: "behind", ahead: 3 }] }).split("\n")).toEqual([
      "id     0:1",
      "state  ready",
      "why    no worker asked for this topic recently",
      "why    behind 3 items that go first for every worker kind that may take it",
    ]);
  });
});
