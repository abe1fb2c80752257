// How reserve and reserve-with-timeout wait, the way beanstalkd's do: take
// the best ready job of the watched tubes now; else answer DEADLINE_SOON when
// a job this connection holds is in its last second (safetyMarginMs), else
// TIMED_OUT when the timeout is spent; else park an engine dequeue on every
// watched tube until a job comes, the timeout ends, or the safety margin of
// the soonest reservation begins, and look again. No timer here: a parked
// dequeue's wait_ms runs on the engine's deadline timer. A parked dequeue
// that hands over more than one job (two watched tubes filled in one turn)
// keeps the best and releases the rest at once.

import type { Delivery, DequeueDone } from "../engine/api.ts";
import { type Answer, AnswerError, type CommandContext, failureAnswer, settled } from "./command-context.ts";
import { jobIdOf, safetyMarginMs } from "./job-mapping.ts";
import type { Session } from "./session.ts";

export function markWorker(ctx: CommandContext): void {
  if (ctx.session.worker) return;
  ctx.session.worker = true;
  ctx.fe.state.workers++;
}

export async function reserveFlow(ctx: CommandContext, timeoutSeconds: number | null): Promise<Answer> {
  const { fe, session } = ctx;
  markWorker(ctx);
  const endMs = timeoutSeconds === null ? Number.POSITIVE_INFINITY : fe.clock.nowMs() + timeoutSeconds * 1000;
  for (;;) {
    const nowMs = fe.clock.nowMs();
    fe.state.sweepReservations(nowMs);
    const ready = await takeBestNow(ctx, nowMs);
    if (ready !== null) return reserveAnswer(ctx, ready);
    if (deadlineSoon(session, nowMs)) return "DEADLINE_SOON";
    if (nowMs >= endMs || fe.state.draining || session.closed) return "TIMED_OUT";
    const soonest = session.soonestReservation();
    const marginAtMs = soonest === null ? Number.POSITIVE_INFINITY : soonest.expiresAtMs - safetyMarginMs;
    const waitMs = Math.max(1, Math.min(endMs - nowMs, marginAtMs - nowMs, fe.limits.waitMsMax));
    const deliveries = await park(ctx, waitMs, nowMs);
    if (session.closed) {
      await releaseAll(ctx, deliveries);
      return "TIMED_OUT";
    }
    if (deliveries.length > 0) return reserveAnswer(ctx, await keepBest(ctx, deliveries));
  }
}

/** Record the reservation and build `RESERVED <id> <bytes>` with the body. */
export function reserveAnswer(ctx: CommandContext, delivery: Delivery): Answer {
  const nowMs = ctx.fe.clock.nowMs();
  const jobId = jobIdOf(delivery.id);
  // The lease was granted at most a moment ago for the job's TTR, a whole number of seconds for a job put here.
  const ttrMs = Math.max(1000, Math.ceil((delivery.leaseExpiresAtMs - nowMs) / 1000) * 1000);
  ctx.fe.state.reservations.add(ctx.session, {
    session: ctx.session,
    node: null,
    orqId: delivery.id,
    jobId,
    tube: delivery.topic,
    receipt: delivery.receipt,
    ttrMs,
    expiresAtMs: delivery.leaseExpiresAtMs,
  });
  return { line: `RESERVED ${jobId} ${delivery.payload.length}`, body: delivery.payload };
}

/** A reservation in its last second (beanstalkd's conndeadlinesoon). */
function deadlineSoon(session: Session, nowMs: number): boolean {
  const soonest = session.soonestReservation();
  return soonest !== null && soonest.expiresAtMs - safetyMarginMs <= nowMs;
}

async function takeBestNow(ctx: CommandContext, nowMs: number): Promise<Delivery | null> {
  const { fe, session } = ctx;
  const topic = fe.engine.bestReadyTopic(fe.ns, session.watch);
  if (topic === null) return null;
  const result = fe.engine.dequeue(fe.ns, { topics: [{ topic, count: 1 }], capabilities: null, waitMs: 0, leaseMs: null, owner: session.owner }, nowMs);
  if (!result.ok) throw new AnswerError(failureAnswer(result.failure.kind));
  if (result.kind !== "done") throw new AnswerError("INTERNAL_ERROR");
  return (await delivered(result))[0] ?? null;
}

async function park(ctx: CommandContext, waitMs: number, nowMs: number): Promise<Delivery[]> {
  const { fe, session } = ctx;
  const topics = session.watch.map((topic) => ({ topic, count: 1 }));
  const result = fe.engine.dequeue(fe.ns, { topics, capabilities: null, waitMs, leaseMs: null, owner: session.owner }, nowMs);
  if (!result.ok) throw new AnswerError(failureAnswer(result.failure.kind));
  if (result.kind === "done") return delivered(result);
  setWaiting(ctx, true);
  try {
    return await delivered(await result.waiter);
  } finally {
    setWaiting(ctx, false);
  }
}

function setWaiting(ctx: CommandContext, waiting: boolean): void {
  const { fe, session } = ctx;
  if (session.waiting === waiting) return;
  session.waiting = waiting;
  const delta = waiting ? 1 : -1;
  fe.state.waiting += delta;
  for (const tube of session.watch) fe.state.tube(tube).waiting += delta;
}

/** Keep the best of several deliveries (priority, then enqueue order) and release the others unchanged. */
async function keepBest(ctx: CommandContext, deliveries: Delivery[]): Promise<Delivery> {
  let best = deliveries[0] as Delivery;
  for (const d of deliveries) if (d.priority < best.priority || (d.priority === best.priority && d.enqueuedAtMs < best.enqueuedAtMs)) best = d;
  await releaseAll(ctx, deliveries.filter((d) => d !== best));
  return best;
}

async function releaseAll(ctx: CommandContext, deliveries: Delivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  const entries = deliveries.map((d) => ({ receipt: d.receipt, delayMs: null, metadata: null }));
  await settled(ctx.fe.engine.nack(ctx.fe.ns, entries, ctx.fe.clock.nowMs()));
}

/** A dequeue's deliveries once their leases are durable (a failed commit answers as `settled` does). */
function delivered(done: DequeueDone): Promise<Delivery[]> {
  return settled({ ok: true, value: { value: done.deliveries, durable: done.durable } });
}
