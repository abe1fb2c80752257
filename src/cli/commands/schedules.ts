// `orq schedules`: a namespace's schedules by name, one page (--limit,
// --after) or, with --all, every page: name, cron or period, time zone, next
// and last tick, the last tick's item id. On a cluster any node lists every
// node's (the server reads them from the database).

import type { Command } from "commander";
import type { Schedule } from "../../client/types.ts";
import { clientCommand, intArg, onRun } from "../client-command.ts";
import { isoTime, table } from "../output.ts";

/** Pages fetched by --all at most: a bound on a runaway loop. */
const pagesMax = 1000;

function snakeCase(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** A schedule in the wire's snake_case; the item's bytes (payload, metadata) left out. */
function scheduleToJson(s: Schedule): Record<string, unknown> {
  const item: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(s.item)) if (value !== undefined && !(value instanceof Uint8Array) && field !== "payload" && field !== "metadata") item[snakeCase(field)] = value;
  return { name: s.name, cron: s.cron, every_ms: s.everyMs, timezone: s.timezone, catch_up: s.catchUp, item, next_at_ms: s.nextAtMs, last_at_ms: s.lastAtMs, last_id: s.lastId };
}

function rows(schedules: readonly Schedule[]): Array<Array<string | number>> {
  const time = (ms: number | undefined) => (typeof ms === "number" ? isoTime(ms) : "-");
  return schedules.map((s) => [s.name, s.cron !== undefined ? `cron ${s.cron}` : `every ${String(s.everyMs)} ms`, s.timezone, time(s.nextAtMs), time(s.lastAtMs), s.lastId ?? "-"]);
}

export function addSchedulesCommand(program: Command): void {
  const command = clientCommand(program, "schedules", "list the namespace's schedules")
    .option("--limit <n>", "schedules per page (server default 1000)", intArg(1, 1_000_000))
    .option("--after <name>", "start after this name (the previous page's next)")
    .option("--all", "fetch every page");
  onRun(command, async (session, _args, options) => {
    const client = await session.cluster();
    const schedules: Schedule[] = [];
    let after = options.after as string | undefined;
    let next: string | null = null;
    for (let page = 0; page < pagesMax; page++) {
      const reply = await client.schedules(session.ns, { limit: options.limit as number | undefined, after });
      schedules.push(...reply.schedules);
      next = reply.next;
      if (options.all !== true || next === null) break;
      after = next;
    }
    const more = next === null ? "" : `\nmore: --after ${JSON.stringify(next)}`;
    return {
      json: { schedules: schedules.map(scheduleToJson), next },
      text: schedules.length === 0 ? more.trimStart() : table(["NAME", "WHEN", "TIMEZONE", "NEXT", "LAST", "LAST ID"], rows(schedules)) + more,
      note: schedules.length === 0 ? "no schedules" : undefined,
    };
  });
}
