// peek, peek-ready, peek-delayed, peek-buried, kick and kick-job: looking at
// jobs and moving buried (dead letters) or delayed jobs to ready. All but
// peek and kick-job act on the tube in use. kick moves buried jobs if the
// tube has any, else delayed ones, in batches of limits.idsPerRequestMax
// (each batch one commit, answered once all are durable).

import type { ListableState } from "../../engine/api.ts";
import { badFormat, jobIdArg, noArgs } from "../command-args.ts";
import { type Answer, type CommandContext, settled } from "../command-context.ts";
import { jobIdOf } from "../job-mapping.ts";

const uint32Max = 2 ** 32 - 1;

export function peek(ctx: CommandContext): Answer {
  const { orqId } = jobIdArg(ctx);
  ctx.fe.state.countCommand("peek");
  return orqId === null ? "NOT_FOUND" : found(ctx, orqId);
}

export const peekReady = (ctx: CommandContext): Answer => peekFirst(ctx, "peek-ready", "ready");
export const peekDelayed = (ctx: CommandContext): Answer => peekFirst(ctx, "peek-delayed", "delayed");
export const peekBuried = (ctx: CommandContext): Answer => peekFirst(ctx, "peek-buried", "dead");

function peekFirst(ctx: CommandContext, name: string, state: ListableState): Answer {
  noArgs(ctx, name);
  const { fe, session } = ctx;
  fe.state.countCommand(name);
  const [orqId] = fe.engine.firstIds(fe.ns, session.use, state, 1);
  return orqId === undefined ? "NOT_FOUND" : found(ctx, orqId);
}

function found(ctx: CommandContext, orqId: string): Answer {
  const { fe } = ctx;
  const detail = fe.engine.inspect(fe.ns, orqId, fe.clock.nowMs());
  if (detail === null) return "NOT_FOUND";
  return { line: `FOUND ${jobIdOf(orqId)} ${detail.payload.length}`, body: detail.payload };
}

/** strtoul as beanstalkd's kick reads it: spaces, an optional sign, digits; text after them is ignored. */
function readBound(text: string): number | null {
  const match = /^\s*([+-]?)(\d+)/.exec(text);
  if (match === null) return null;
  const value = Number(match[2]);
  // A negative bound wraps around to a huge unsigned one, as strtoul's does.
  return match[1] === "-" && value !== 0 ? uint32Max : Math.min(value, uint32Max);
}

export async function kick(ctx: CommandContext): Promise<Answer> {
  const bound = readBound(ctx.args.rest());
  if (bound === null) throw badFormat();
  const { fe, session } = ctx;
  fe.state.countCommand("kick");
  const tube = session.use;
  const batchMax = fe.limits.idsPerRequestMax;
  const state: ListableState = fe.engine.firstIds(fe.ns, tube, "dead", 1).length > 0 ? "dead" : "delayed";
  let kicked = 0;
  while (kicked < bound) {
    const ids = fe.engine.firstIds(fe.ns, tube, state, Math.min(bound - kicked, batchMax));
    if (ids.length === 0) break;
    const nowMs = fe.clock.nowMs();
    const moved =
      state === "dead"
        ? (await settled(fe.engine.redrive(fe.ns, tube, ids, nowMs))).redriven
        : (await settled(fe.engine.deliverNow(fe.ns, ids, nowMs))).moved;
    for (const id of ids) fe.state.job(id).kicks++;
    kicked += moved;
    if (moved === 0) break;
  }
  return `KICKED ${kicked}`;
}

export async function kickJob(ctx: CommandContext): Promise<Answer> {
  const { orqId } = jobIdArg(ctx);
  const { fe } = ctx;
  fe.state.countCommand("kick-job");
  if (orqId === null) return "NOT_FOUND";
  const nowMs = fe.clock.nowMs();
  const detail = fe.engine.inspect(fe.ns, orqId, nowMs);
  let moved = 0;
  if (detail?.state === "dead") moved = (await settled(fe.engine.redrive(fe.ns, detail.topic, [orqId], nowMs))).redriven;
  else if (detail?.state === "delayed") moved = (await settled(fe.engine.deliverNow(fe.ns, [orqId], nowMs))).moved;
  if (moved !== 1) return "NOT_FOUND";
  fe.state.job(orqId).kicks++;
  return "KICKED";
}
