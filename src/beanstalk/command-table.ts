// The command table, as data: each command's name as beanstalkd matches it (a
// prefix, the trailing space included for commands with arguments, tried in
// beanstalkd's which_cmd order, so `reserve-job 1` is not `reserve`) and its
// handler; its name is the prefix without the space (what stats counts, the
// metrics label it: request-labels.ts). The connection finds the first prefix
// a line starts with; anything else is UNKNOWN_COMMAND. Handlers check their
// own arguments, since beanstalkd's rules differ per command (commands/*.ts).

import { closeAnswer, type Handler } from "./command-context.ts";
import { pauseTube, pauseTubePrefix } from "./commands/pause-tube.ts";
import { kick, kickJob, peek, peekBuried, peekDelayed, peekReady } from "./commands/peek-kick.ts";
import { put, putPrefix, use } from "./commands/producer.ts";
import { stats, statsJob, statsTube } from "./commands/stats.ts";
import { ignore, listTubes, listTubeUsed, listTubesWatched, watch } from "./commands/tubes.ts";
import { bury, deleteJob, release, reserve, reserveJob, reserveWithTimeout, touch } from "./commands/worker.ts";

export interface CommandSpec {
  /** What a line must start with. */
  readonly prefix: string;
  /** The command's name: the prefix without its trailing space. */
  readonly name: string;
  readonly run: Handler;
}

const commands: ReadonlyArray<{ prefix: string; run: Handler }> = [
  { prefix: putPrefix, run: put },
  { prefix: "peek ", run: peek },
  { prefix: "peek-ready", run: peekReady },
  { prefix: "peek-delayed", run: peekDelayed },
  { prefix: "peek-buried", run: peekBuried },
  { prefix: "reserve-with-timeout ", run: reserveWithTimeout },
  { prefix: "reserve-job ", run: reserveJob },
  { prefix: "reserve", run: reserve },
  { prefix: "delete ", run: deleteJob },
  { prefix: "release ", run: release },
  { prefix: "bury ", run: bury },
  { prefix: "kick ", run: kick },
  { prefix: "kick-job ", run: kickJob },
  { prefix: "touch ", run: touch },
  { prefix: "stats-job ", run: statsJob },
  { prefix: "stats-tube ", run: statsTube },
  { prefix: "stats", run: stats },
  { prefix: "use ", run: use },
  { prefix: "watch ", run: watch },
  { prefix: "ignore ", run: ignore },
  { prefix: "list-tubes-watched", run: listTubesWatched },
  { prefix: "list-tube-used", run: listTubeUsed },
  { prefix: "list-tubes", run: listTubes },
  { prefix: "quit", run: () => closeAnswer },
  { prefix: pauseTubePrefix, run: pauseTube },
];

export const commandTable: readonly CommandSpec[] = commands.map(({ prefix, run }) => Object.freeze({ prefix, name: prefix.trimEnd(), run }));

export function findCommand(line: string): CommandSpec | null {
  for (const spec of commandTable) if (line.startsWith(spec.prefix)) return spec;
  return null;
}
