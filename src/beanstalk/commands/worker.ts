// reserve, reserve-with-timeout, reserve-job, delete, release, bury and
// touch: what a worker sends. A reservation is an orq lease of the job's own
// TTR, remembered in the session by its receipt, so only this connection can
// delete, release, bury or touch it. Reserve (reserve-flow.ts) waits with
// parked engine dequeues and answers DEADLINE_SOON in a reservation's last
// second, as beanstalkd does.

import { badFormat, jobIdArg, noArgs } from "../command-args.ts";
import {
  type Answer,
  AnswerError,
  answerOnceDurable,
  answerWhenDurable,
  type CommandContext,
  failureAnswer,
  type PendingAnswer,
  settled,
} from "../command-context.ts";
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

export function deleteJob(ctx: CommandContext): Answer | PendingAnswer {
  const { orqId } = jobIdArg(ctx);
  const { fe, session } = ctx;
  fe.state.countCommand("delete");
  if (orqId === null) return "NOT_FOUND";
  const nowMs = fe.clock.nowMs();
  const deleted = (tube: string): Answer => {
    fe.state.tube(tube).cmdDelete++;
    fe.state.forgetJob(orqId);
    return "DELETED";
  };
  const reservation = session.reservations.get(orqId);
  if (reservation !== undefined) {
    fe.state.reservations.remove(session, reservation);
    const acked = fe.engine.ack(fe.ns, [reservation.receipt], nowMs);
    if (!acked.ok) throw new AnswerError(failureAnswer(acked.failure.kind));
    if (acked.acked === 1) return answerOnceDurable(acked.durable, deleted(reservation.tube));
  }
  // Not reserved here (or its reservation timed out): a ready, delayed or buried job may still be deleted.
  const detail = fe.engine.inspect(fe.ns, orqId, nowMs);
  if (detail === null || detail.state === "leased") return "NOT_FOUND";
  return answerWhenDurable(fe.engine.cancel(fe.ns, [orqId], nowMs), ({ cancelled }) => (cancelled === 1 ? deleted(detail.topic) : "NOT_FOUND"));
}

export function release(ctx: CommandContext): Answer | PendingAnswer {
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
  return answerWhenDurable(fe.engine.nack(fe.ns, [entry], fe.clock.nowMs()), ({ nacked }) => {
    if (nacked !== 1) return "NOT_FOUND";
    const counters = fe.state.job(reservation.orqId);
    counters.releases++;
    counters.delaySeconds = delaySeconds;
    return "RELEASED";
  });
}

export function bury(ctx: CommandContext): Answer | PendingAnswer {
  const digits = ctx.args.u64();
  const priority = digits === null ? null : ctx.args.u32();
  if (digits === null || priority === null || !ctx.args.atEnd()) throw badFormat();
  const { fe, session } = ctx;
  fe.state.countCommand("bury");
  const reservation = reservationOf(ctx, digits);
  if (reservation === null) return "NOT_FOUND";
  fe.state.reservations.remove(session, reservation);
  const entry = { receipt: reservation.receipt, priority: orqPriorityOf(priority), reason: "buried" };
  return answerWhenDurable(fe.engine.deadLetter(fe.ns, [entry], fe.clock.nowMs()), ({ dead }) => {
    if (dead !== 1) return "NOT_FOUND";
    fe.state.job(reservation.orqId).buries++;
    return "BURIED";
  });
}

export function touch(ctx: CommandContext): Answer | PendingAnswer {
  const { digits } = jobIdArg(ctx);
  const { fe } = ctx;
  fe.state.countCommand("touch");
  const reservation = reservationOf(ctx, digits);
  if (reservation === null) return "NOT_FOUND";
  const nowMs = fe.clock.nowMs();
  const result = fe.engine.extend(fe.ns, [{ receipt: reservation.receipt, leaseMs: reservation.ttrMs }], nowMs);
  // The session learns the new deadline now, so a pipelined reserve sees it.
  if (result.ok && result.value.value.extended === 1) fe.state.reservations.extend(reservation, nowMs + reservation.ttrMs);
  else fe.state.reservations.remove(ctx.session, reservation);
  return answerWhenDurable(result, ({ extended }) => (extended === 1 ? "TOUCHED" : "NOT_FOUND"));
}

/** This connection's reservation of the job, or null (the engine still decides whether it is current). */
function reservationOf(ctx: CommandContext, digits: string): Reservation | null {
  const orqId = orqIdOf(digits);
  return orqId === null ? null : (ctx.session.reservations.get(orqId) ?? null);
}
