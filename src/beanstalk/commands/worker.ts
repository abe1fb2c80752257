// reserve, reserve-with-timeout, reserve-job, delete, release, bury and
// touch: what a worker sends. A reservation is an orq lease of the job's own
// TTR, remembered in the session by its receipt, so only this connection can
// delete, release, bury or touch it. Reserve (reserve-flow.ts) waits with
// parked engine dequeues and answers DEADLINE_SOON in a reservation's last
// second, as beanstalkd does.

import { badFormat, jobIdArg, noArgs } from "../command-args.ts";
import { type Answer, type CommandContext, settled } from "../command-context.ts";
import { delayMsOfSeconds, orqIdOf, orqPriorityOf } from "../job-mapping.ts";
import { markWorker, reserveAnswer, reserveFlow } from "../reserve-flow.ts";
import type { Reservation } from "../session.ts";

/**
 * The timeout as beanstalkd 1.12 reads it, with strtol: spaces, a sign, digits
 * (none reads as 0), anything after them ignored; past a 64-bit long is
 * BAD_FORMAT; the value is then cut to a C int, and a negative one waits
 * without end. Returns null for BAD_FORMAT, -1 for no end.
 */
function readTimeoutSeconds(text: string): number | null {
  const match = /^\s*([+-]?)(\d*)/.exec(text);
  const digits = match?.[2] ?? "";
  if (digits.length === 0) return 0;
  const value = BigInt(`${match?.[1] === "-" ? "-" : ""}${digits}`);
  if (value > 2n ** 63n - 1n || value < -(2n ** 63n)) return null;
  const asInt = Number(BigInt.asIntN(32, value));
  return asInt < 0 ? -1 : asInt;
}

export function reserve(ctx: CommandContext): Promise<Answer> {
  noArgs(ctx, "reserve");
  ctx.fe.state.countCommand("reserve");
  return reserveFlow(ctx, null);
}

export function reserveWithTimeout(ctx: CommandContext): Promise<Answer> {
  const seconds = readTimeoutSeconds(ctx.args.rest());
  if (seconds === null) throw badFormat();
  ctx.fe.state.countCommand("reserve-with-timeout");
  return reserveFlow(ctx, seconds < 0 ? null : seconds);
}

export async function reserveJob(ctx: CommandContext): Promise<Answer> {
  const { orqId } = jobIdArg(ctx);
  const { fe } = ctx;
  fe.state.countCommand("reserve-job");
  if (orqId === null) return "NOT_FOUND";
  const { delivery } = await settled(fe.engine.take(fe.ns, orqId, null, fe.clock.nowMs()));
  if (delivery === null) return "NOT_FOUND";
  markWorker(ctx);
  return reserveAnswer(ctx, delivery);
}

export async function deleteJob(ctx: CommandContext): Promise<Answer> {
  const { orqId } = jobIdArg(ctx);
  const { fe, session } = ctx;
  fe.state.countCommand("delete");
  if (orqId === null) return "NOT_FOUND";
  const nowMs = fe.clock.nowMs();
  const reservation = session.reservations.get(orqId);
  let tube: string | null = null;
  if (reservation !== undefined) {
    fe.state.reservations.remove(session, reservation);
    const { acked } = await settled(fe.engine.ack(fe.ns, [reservation.receipt], nowMs));
    if (acked === 1) tube = reservation.tube;
  }
  if (tube === null) {
    // Not reserved here (or its reservation timed out): a ready, delayed or buried job may still be deleted.
    const detail = fe.engine.inspect(fe.ns, orqId, nowMs);
    if (detail === null || detail.state === "leased") return "NOT_FOUND";
    const { cancelled } = await settled(fe.engine.cancel(fe.ns, [orqId], nowMs));
    if (cancelled !== 1) return "NOT_FOUND";
    tube = detail.topic;
  }
  fe.state.tube(tube).cmdDelete++;
  fe.state.forgetJob(orqId);
  return "DELETED";
}

export async function release(ctx: CommandContext): Promise<Answer> {
  const digits = ctx.args.u64();
  const priority = digits === null ? null : ctx.args.u32();
  const delaySeconds = priority === null ? null : ctx.args.u32();
  if (digits === null || priority === null || delaySeconds === null || !ctx.args.atEnd()) throw badFormat();
  const { fe, session } = ctx;
  fe.state.countCommand("release");
  const reservation = reservationOf(ctx, digits);
  if (reservation === null) return "NOT_FOUND";
  fe.state.reservations.remove(session, reservation);
  const entry = { receipt: reservation.receipt, delayMs: delayMsOfSeconds(delaySeconds, fe.limits.delayMsMax), metadata: null, priority: orqPriorityOf(priority) };
  const { nacked } = await settled(fe.engine.nack(fe.ns, [entry], fe.clock.nowMs()));
  if (nacked !== 1) return "NOT_FOUND";
  const counters = fe.state.job(reservation.orqId);
  counters.releases++;
  counters.delaySeconds = delaySeconds;
  return "RELEASED";
}

export async function bury(ctx: CommandContext): Promise<Answer> {
  const digits = ctx.args.u64();
  const priority = digits === null ? null : ctx.args.u32();
  if (digits === null || priority === null || !ctx.args.atEnd()) throw badFormat();
  const { fe, session } = ctx;
  fe.state.countCommand("bury");
  const reservation = reservationOf(ctx, digits);
  if (reservation === null) return "NOT_FOUND";
  fe.state.reservations.remove(session, reservation);
  const entry = { receipt: reservation.receipt, priority: orqPriorityOf(priority), reason: "buried" };
  const { dead } = await settled(fe.engine.deadLetter(fe.ns, [entry], fe.clock.nowMs()));
  if (dead !== 1) return "NOT_FOUND";
  fe.state.job(reservation.orqId).buries++;
  return "BURIED";
}

export async function touch(ctx: CommandContext): Promise<Answer> {
  const { digits } = jobIdArg(ctx);
  const { fe } = ctx;
  fe.state.countCommand("touch");
  const reservation = reservationOf(ctx, digits);
  if (reservation === null) return "NOT_FOUND";
  const nowMs = fe.clock.nowMs();
  const { extended } = await settled(fe.engine.extend(fe.ns, [{ receipt: reservation.receipt, leaseMs: reservation.ttrMs }], nowMs));
  if (extended !== 1) {
    fe.state.reservations.remove(ctx.session, reservation);
    return "NOT_FOUND";
  }
  fe.state.reservations.extend(reservation, nowMs + reservation.ttrMs);
  return "TOUCHED";
}

/** This connection's reservation of the job, or null (the engine still decides whether it is current). */
function reservationOf(ctx: CommandContext, digits: string): Reservation | null {
  const orqId = orqIdOf(digits);
  return orqId === null ? null : (ctx.session.reservations.get(orqId) ?? null);
}
