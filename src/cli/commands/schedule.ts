// `orq schedule NAME (--cron EXPR | --every-ms N) [--timezone TZ]
// [--catch-up one|none] --topic T [item flags as enqueue has]`: set a
// recurring item (replacing one of the same name) and print its next tick;
// `orq unschedule NAME` removes one. In cluster mode both follow a MOVED to
// the node that owns the schedule's shard (cli/schedule-routing.ts).

import type { Command } from "commander";
import { Option } from "commander";
import type { EnqueueItem } from "../../client/types.ts";
import { clientCommand, intArg, onRun, UsageError } from "../client-command.ts";
import { addItemOptions, itemFromOptions } from "../item-options.ts";
import { isoTime } from "../output.ts";
import { requestOwner } from "../schedule-routing.ts";

const textEncoder = new TextEncoder();

function bytes(value: Uint8Array | string | undefined): Uint8Array | undefined {
  return typeof value === "string" ? textEncoder.encode(value) : value;
}

/** The schedule's item as the wire takes it (snake_case, bytes as bin); unset fields left out. */
function itemToWire(item: EnqueueItem): Record<string, unknown> {
  const wire: Record<string, unknown> = {
    topic: item.topic,
    priority: item.priority,
    payload: bytes(item.payload),
    metadata: bytes(item.metadata),
    delay_ms: item.delayMs,
    lease_ms: item.leaseMs,
    ttl_ms: item.ttlMs,
    max_attempts: item.maxAttempts,
    delivery: item.delivery,
    group: item.group,
    requires: item.requires,
  };
  for (const field of Object.keys(wire)) if (wire[field] === undefined) delete wire[field];
  return wire;
}

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
    const fields: Record<string, unknown> = { ns: session.ns, name, item: itemToWire(itemFromOptions(options)) };
    if (options.cron !== undefined) fields.cron = options.cron;
    if (options.everyMs !== undefined) fields.every_ms = options.everyMs;
    if (options.timezone !== undefined) fields.timezone = options.timezone;
    if (options.catchUp !== undefined) fields.catch_up = options.catchUp;
    const reply = await requestOwner(session, "schedule", fields);
    const nextAtMs = reply.next_at_ms as number | undefined;
    return { json: { name, next_at_ms: nextAtMs ?? null }, text: nextAtMs === undefined ? `${name}: no next tick` : `${name}: next ${isoTime(nextAtMs)}` };
  });
}

export function addUnscheduleCommand(program: Command): void {
  const command = clientCommand(program, "unschedule", "remove a schedule").argument("<name>", "the schedule's name");
  onRun(command, async (session, args) => {
    const name = args[0] as string;
    const removed = (await requestOwner(session, "unschedule", { ns: session.ns, name })).removed === true;
    return { json: { removed }, text: removed ? `removed ${name}` : `no schedule ${name}` };
  });
}
