// pause-tube <tube> <seconds>: no job of the tube is reserved for that long.
// It becomes orq's `pause` of the topic once the engine has it; until then
// the port records the pause for stats-tube only.

import { ArgCursor } from "../arg-cursor.ts";
import { badFormat } from "../command-args.ts";
import type { Answer, CommandContext } from "../command-context.ts";
import { isValidTubeName } from "../tube-names.ts";
import { tubeExists } from "./tubes.ts";

export const pauseTubePrefix = "pause-tube";

export function pauseTube(ctx: CommandContext): Answer {
  // Read as beanstalkd does: a run of name characters after spaces, then the seconds as the rest of the line.
  const args = new ArgCursor(ctx.line, pauseTubePrefix.length);
  const name = args.name();
  const seconds = name === null ? null : args.u32();
  if (name === null || seconds === null || !args.atEnd()) throw badFormat();
  const { fe } = ctx;
  fe.state.countCommand("pause-tube");
  if (!isValidTubeName(name, fe.limits.beanstalkTubeBytesMax)) throw badFormat();
  if (!tubeExists(fe, name)) return "NOT_FOUND";
  // beanstalkd pauses for at least one second, so waiting reserves wake when it ends.
  const pauseSeconds = Math.max(seconds, 1);
  const tube = fe.state.tube(name);
  tube.cmdPauseTube++;
  tube.pauseSeconds = pauseSeconds;
  tube.pausedUntilMs = fe.clock.nowMs() + pauseSeconds * 1000;
  return "PAUSED";
}
