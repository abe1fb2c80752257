// `orq schedule NAME (--cron EXPR | --every-ms N) [--timezone TZ]
// [--catch-up one|none] --topic T [item flags as enqueue has]`: set a
// recurring item (replacing one of the same name) and print its next tick;
// `orq unschedule NAME` removes one. Through the cluster client: on a
// cluster it reaches the node that owns the schedule's shard (the others
// answer MOVED, which it follows).

import type { Command } from "commander";
import { Option } from "commander";
import { clientCommand, intArg, onRun, UsageError } from "../client-command.ts";
import { addItemOptions, itemFromOptions } from "../item-options.ts";
import { isoTime } from "../output.ts";

export function addScheduleCommand(program: Command): void {
  const command = addItemOptions(clientCommand(program, "schedule", "set a recurring item (replacing one of the same name)"))
    .argument("<name>", "the schedule's name, unique in the namespace")
    .option("--cron <expr>", 'a cron expression of 5 or 6 fields (seconds first), e.g. "30 2 * * *"')
    .option("--every-ms <n>", "tick every this many ms (at least 1000)", intArg(1000, Number.MAX_SAFE_INTEGER))
    .option("--timezone <tz>", "the IANA time zone --cron is read in (default UTC)")
    .addOption(new Option("--catch-up <mode>", "ticks missed while the server was down: one item for the latest, or none").choices(["one", "none"]));
  onRun(command, async (session, args, options) => {
    const name = args[0] as string;
    if ((options.cron === undefined) === (options.everyMs === undefined)) throw new UsageError("give exactly one of --cron and --every-ms");
    const client = await session.cluster();
    const set = await client.schedule(session.ns, {
      name,
      cron: options.cron as string | undefined,
      everyMs: options.everyMs as number | undefined,
      timezone: options.timezone as string | undefined,
      catchUp: options.catchUp as "one" | "none" | undefined,
      item: itemFromOptions(options),
    });
    const nextAtMs = typeof set.nextAtMs === "number" ? set.nextAtMs : null;
    return { json: { name, next_at_ms: nextAtMs }, text: nextAtMs === null ? `${name}: no next tick` : `${name}: next ${isoTime(nextAtMs)}` };
  });
}

export function addUnscheduleCommand(program: Command): void {
  const command = clientCommand(program, "unschedule", "remove a schedule").argument("<name>", "the schedule's name");
  onRun(command, async (session, args) => {
    const name = args[0] as string;
    const { removed } = await (await session.cluster()).unschedule(session.ns, name);
    return { json: { removed }, text: removed ? `removed ${name}` : `no schedule ${name}` };
  });
}
