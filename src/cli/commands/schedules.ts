// `orq schedules`: a namespace's schedules by name, one page (--limit,
// --after) or, with --all, every page: name, cron or period, time zone, next
// and last tick, the last tick's item id. In cluster mode every node's,
// merged by name (cli/schedule-routing.ts).

import type { Command } from "commander";
import { clientCommand, intArg, onRun } from "../client-command.ts";
import { isoTime, table } from "../output.ts";
import { schedulesPage } from "../schedule-routing.ts";

/** Pages fetched by --all at most: a bound on a runaway loop. */
const pagesMax = 1000;

type WireSchedule = Record<string, unknown> & { name: string };

function rows(schedules: readonly WireSchedule[]): Array<Array<string | number>> {
  const time = (ms: unknown) => (typeof ms === "number" ? isoTime(ms) : "-");
  return schedules.map((s) => [
    s.name,
    typeof s.cron === "string" ? `cron ${s.cron}` : `every ${String(s.every_ms)} ms`,
    String(s.timezone),
    time(s.next_at_ms),
    time(s.last_at_ms),
    typeof s.last_id === "string" ? s.last_id : "-",
  ]);
}

export function addSchedulesCommand(program: Command): void {
  const command = clientCommand(program, "schedules", "list the namespace's schedules")
    .option("--limit <n>", "schedules per page (server default 1000)", intArg(1, 1_000_000))
    .option("--after <name>", "start after this name (the previous page's next)")
    .option("--all", "fetch every page");
  onRun(command, async (session, _args, options) => {
    const schedules: WireSchedule[] = [];
    let after = options.after as string | undefined;
    let next: string | null = null;
    for (let page = 0; page < pagesMax; page++) {
      const reply = await schedulesPage(session, { ns: session.ns, limit: options.limit as number | undefined, after });
      schedules.push(...(reply.schedules as WireSchedule[]));
      next = reply.next;
      if (options.all !== true || next === null) break;
      after = next;
    }
    const more = next === null ? "" : `\nmore: --after ${JSON.stringify(next)}`;
    const json = schedules.map(({ item, ...rest }) => ({ ...rest, item: { ...(item as Record<string, unknown>), payload: undefined, metadata: undefined } }));
    return {
      json: { schedules: json, next },
      text: schedules.length === 0 ? more.trimStart() : table(["NAME", "WHEN", "TIMEZONE", "NEXT", "LAST", "LAST ID"], rows(schedules)) + more,
      note: schedules.length === 0 ? "no schedules" : undefined,
    };
  });
}
