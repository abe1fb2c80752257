// pause-tube <tube> <seconds>: no job of the tube is reserved for that long:
// orq's `pause` of the topic (engine/ops/pause.ts), so MessagePack
// dequeues skip it too, and the pause survives a restart.

import { ArgCursor } from "../arg-cursor.ts";
import { badFormat } from "../command-args.ts";
import { type Answer, type CommandContext, settled } from "../command-context.ts";
import { isValidTubeName } from "../tube-names.ts";
import { tubeExists } from "./tubes.ts";

export const pauseTubePrefix = "pause-tube";

export async function pauseTube(ctx: CommandContext): Promise<Answer> {
  // Read as beanstalkd does: a run of name characters after spaces, then the seconds as the rest of the line.
  const args = new ArgCursor(ctx.line, pauseTubePrefix.length);
  const name = args.name();
  const seconds = name === null ? null : args.u32();
  if (name === null || seconds === null || !args.atEnd()) throw badFormat();
  const { fe } = ctx;
  fe.state.countCommand("pause-tube");
  if (!isValidTubeName(name, fe.limits.beanstalkTubeBytesMax)) throw badFormat();
  if (!tubeExists(fe, name)) return "NOT_FOUND";
  // beanstalkd turns a 0 into the shortest pause it has (1 ns, so waiting reserves are woken); orq's shortest is 1 ms.
  const forMs = seconds === 0 ? 1 : seconds * 1000;
  await settled(fe.engine.pause(fe.ns, name, forMs, fe.clock.nowMs()));
  const tube = fe.state.tube(name);
  tube.cmdPauseTube++;
  tube.pauseSeconds = seconds;
  return "PAUSED";
}
