// The load a crash round puts on the server until it is SIGKILLed: pipelined
// enqueues (each item with its own idempotency key) on one connection, and
// dequeue + ack loops on others, acking some deliveries and leaving the rest
// to lease expiry. Every reply is recorded in the RoundModel; a request whose
// connection dies first is counted as unanswered. The few promises that can be
// checked while the server still runs (an at_most_once item delivered twice,
// an acked item delivered again) are checked here.

import type { CrashClient, Reply } from "./crash-client.ts";
import { ConnectionLost } from "./crash-client.ts";
import type { AckedLedger, NackSent, RoundModel, TrackedItem } from "./crash-model.ts";
import type { CrashRandom } from "./crash-random.ts";

export interface LoadOptions {
  /** Lease granted by the load's dequeues: short, so leases expire during and after the round. */
  leaseMs: number;
  /** Enqueue requests in flight on the producer connection. */
  enqueueDepth: number;
  /** Dequeue requests in flight per consumer connection. */
  dequeueDepth: number;
  /** Largest enqueue batch. */
  batchItemsMax: number;
  /** Share of items enqueued at_most_once. */
  atMostOnceShare: number;
  /** Share of deliveries the consumers ack. */
  ackShare: number;
  /** Share of at_least_once deliveries nacked (half with metadata, some with a small delay), and extended. */
  nackShare: number;
  extendShare: number;
}

export const defaultLoadOptions: LoadOptions = {
  leaseMs: 700,
  enqueueDepth: 4,
  dequeueDepth: 2,
  batchItemsMax: 16,
  atMostOnceShare: 0.35,
  ackShare: 0.6,
  nackShare: 0.15,
  extendShare: 0.15,
};

/** Largest nack delay: small, so the drain after the restart is not slowed. */
const nackDelayMsMax = 40;
/** An extend asks for the load's lease plus up to this much, so it outlasts the lease the dequeue gave. */
const extendExtraMsMax = 150;

/** Deliveries are never delivered again this many times in a round; dead letters would only blur the checks. */
export const maxAttemptsForCrash = 1000;

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/** Runs until every connection is lost (the server was killed); never rejects for a lost connection. */
export async function runLoad(
  model: RoundModel,
  ledger: AckedLedger,
  producer: CrashClient,
  consumers: CrashClient[],
  rng: CrashRandom,
  options: LoadOptions,
): Promise<void> {
  const loops: Promise<void>[] = [];
  for (let i = 0; i < options.enqueueDepth; i++) loops.push(enqueueLoop(model, producer, rng.fork(100 + i), options));
  consumers.forEach((consumer, c) => {
    for (let i = 0; i < options.dequeueDepth; i++) loops.push(consumeLoop(model, ledger, consumer, rng.fork(200 + c * 16 + i), options));
  });
  await Promise.all(loops);
}

async function enqueueLoop(model: RoundModel, client: CrashClient, rng: CrashRandom, options: LoadOptions): Promise<void> {
  while (client.alive) {
    const count = rng.int(1, options.batchItemsMax);
    const batch: TrackedItem[] = [];
    for (let i = 0; i < count; i++) batch.push(model.newItem(rng.chance(options.atMostOnceShare) ? "at_most_once" : "at_least_once"));
    let reply: Reply;
    try {
      reply = await client.call("enqueue", { ns: model.ns, items: batch.map(wireItem) });
    } catch (error) {
      if (!(error instanceof ConnectionLost)) throw error;
      model.enqueueUnanswered += count;
      return;
    }
    if (!reply.ok) {
      // Nothing here should fail; stop this worker rather than repeat the error thousands of times.
      model.violation("unexpected-error", `enqueue answered ${reply.error?.code}: ${reply.error?.message}`);
      return;
    }
    const ids = reply.ids as string[];
    if (ids.length !== count) model.violation("bad-reply", `enqueue of ${count} items answered ${ids.length} ids`);
    batch.forEach((item, i) => {
      item.id = ids[i] ?? null;
    });
    model.enqueueRepliesOk += count;
  }
}

/** The wire form of a tracked item: its payload is its key. */
export function wireItem(item: TrackedItem): Record<string, unknown> {
  return {
    topic: item.topic,
    payload: textEncoder.encode(item.key),
    key: item.key,
    delivery: item.delivery,
    max_attempts: maxAttemptsForCrash,
  };
}

export interface WireDelivery {
  id: string;
  topic: string;
  payload: Uint8Array;
  attempt: number;
  receipt: string;
  lease_expires_at_ms: number;
}

export function deliveryKey(delivery: WireDelivery): string {
  return textDecoder.decode(delivery.payload);
}

async function consumeLoop(model: RoundModel, ledger: AckedLedger, client: CrashClient, rng: CrashRandom, options: LoadOptions): Promise<void> {
  const acks: Promise<void>[] = [];
  while (client.alive) {
    let reply: Reply;
    try {
      reply = await client.call("dequeue", {
        ns: model.ns,
        topics: [
          { topic: model.topicAtLeastOnce, count: 8 },
          { topic: model.topicAtMostOnce, count: 8 },
        ],
        wait_ms: 200,
        lease_ms: options.leaseMs,
      });
    } catch (error) {
      if (!(error instanceof ConnectionLost)) throw error;
      break;
    }
    if (!reply.ok) {
      model.violation("unexpected-error", `dequeue answered ${reply.error?.code}: ${reply.error?.message}`);
      break;
    }
    const toAck: Array<{ item: TrackedItem; delivery: WireDelivery }> = [];
    const toNack: Array<{ item: TrackedItem; delivery: WireDelivery; nack: NackSent; wire: Record<string, unknown> }> = [];
    const toExtend: Array<{ item: TrackedItem; delivery: WireDelivery; leaseMs: number }> = [];
    for (const delivery of reply.items as WireDelivery[]) {
      const item = recordDelivery(model, delivery);
      if (item === null) continue;
      // One decision per delivery: an at_most_once nack would make it ready again, which the at_most_once checks forbid.
      const roll = rng.next();
      if (roll < options.ackShare) toAck.push({ item, delivery });
      else if (item.delivery !== "at_least_once") continue;
      else if (roll < options.ackShare + options.nackShare) toNack.push(nackOf(item, delivery, rng));
      else if (roll < options.ackShare + options.nackShare + options.extendShare) {
        toExtend.push({ item, delivery, leaseMs: options.leaseMs + rng.int(50, extendExtraMsMax) });
      }
    }
    if (toAck.length > 0) acks.push(sendAcks(model, ledger, client, toAck));
    if (toNack.length > 0) acks.push(sendNacks(model, client, toNack));
    if (toExtend.length > 0) acks.push(sendExtends(model, client, toExtend, options.leaseMs));
  }
  await Promise.all(acks);
}

/** Check and record one delivery received before the kill; null when it names no tracked item. */
function recordDelivery(model: RoundModel, delivery: WireDelivery): TrackedItem | null {
  model.deliveriesReplied++;
  const key = deliveryKey(delivery);
  const item = model.items.get(key);
  if (item === undefined) {
    model.violation("phantom-item", `delivery ${delivery.id} carries unknown payload ${JSON.stringify(key)}`);
    return null;
  }
  item.seenIds.add(delivery.id);
  if (item.id !== null && item.id !== delivery.id) {
    model.violation("duplicate-item", `key ${key} was enqueued as ${item.id} but delivered as ${delivery.id}`);
  }
  if (item.seenIds.size > 1) model.violation("duplicate-item", `key ${key} delivered under ids ${[...item.seenIds].join(", ")}`);
  if (item.delivery === "at_most_once" && item.receipts.length > 0) {
    model.violation("at-most-once-redelivered", `${delivery.id} (${key}) delivered again (attempt ${delivery.attempt}) before the kill`);
  }
  // Replies from two connections can be read out of order, so only a later attempt proves a redelivery after the ack.
  if (item.ackOk && delivery.attempt > item.ackedAttempt) {
    model.violation("acked-redelivered", `${delivery.id} (${key}) delivered (attempt ${delivery.attempt}) after its ack of attempt ${item.ackedAttempt} succeeded`);
  }
  item.receipts.push(delivery.receipt);
  item.attemptSeenMax = Math.max(item.attemptSeenMax, delivery.attempt);
  return item;
}

async function sendAcks(
  model: RoundModel,
  ledger: AckedLedger,
  client: CrashClient,
  batch: Array<{ item: TrackedItem; delivery: WireDelivery }>,
): Promise<void> {
  for (const { item, delivery } of batch) {
    item.ackSent = true;
    item.ackSentAttemptMax = Math.max(item.ackSentAttemptMax, delivery.attempt);
  }
  let reply: Reply;
  try {
    reply = await client.call("ack", { ns: model.ns, receipts: batch.map(({ delivery }) => delivery.receipt) });
  } catch (error) {
    if (!(error instanceof ConnectionLost)) throw error;
    model.acksUnanswered += batch.length;
    return;
  }
  if (!reply.ok) {
    model.violation("unexpected-error", `ack answered ${reply.error?.code}: ${reply.error?.message}`);
    return;
  }
  const stale = new Set(reply.stale as string[]);
  let acked = 0;
  for (const { item, delivery } of batch) {
    if (stale.has(delivery.receipt)) continue;
    acked++;
    item.ackOk = true;
    item.ackedAttempt = Math.max(item.ackedAttempt, delivery.attempt);
    ledger.ids.add(delivery.id);
  }
  if (acked !== reply.acked) model.violation("bad-reply", `ack reply says acked ${String(reply.acked)} but ${acked} receipts were not stale`);
  model.acksOk += acked;
}

/** A nack for one delivery: half carry metadata unique to the delivery, some a small delay. */
function nackOf(item: TrackedItem, delivery: WireDelivery, rng: CrashRandom) {
  const metadata = rng.chance(0.5) ? `${item.key}/a${delivery.attempt}` : null;
  const delayMs = rng.chance(0.3) ? rng.int(1, nackDelayMsMax) : null;
  const wire: Record<string, unknown> = { receipt: delivery.receipt };
  if (metadata !== null) wire.metadata = textEncoder.encode(metadata);
  if (delayMs !== null) wire.delay_ms = delayMs;
  const nack: NackSent = { attempt: delivery.attempt, metadata, delayed: delayMs !== null, ok: false };
  return { item, delivery, nack, wire };
}

async function sendNacks(
  model: RoundModel,
  client: CrashClient,
  batch: Array<{ item: TrackedItem; delivery: WireDelivery; nack: NackSent; wire: Record<string, unknown> }>,
): Promise<void> {
  for (const { item, nack } of batch) item.nacks.push(nack);
  let reply: Reply;
  try {
    reply = await client.call("nack", { ns: model.ns, items: batch.map(({ wire }) => wire) });
  } catch (error) {
    if (!(error instanceof ConnectionLost)) throw error;
    model.nacksUnanswered += batch.length;
    return;
  }
  if (!reply.ok) {
    model.violation("unexpected-error", `nack answered ${reply.error?.code}: ${reply.error?.message}`);
    return;
  }
  const stale = new Set(reply.stale as string[]);
  let nacked = 0;
  for (const { delivery, nack } of batch) {
    if (stale.has(delivery.receipt)) continue;
    nacked++;
    nack.ok = true;
  }
  if (nacked !== reply.nacked) model.violation("bad-reply", `nack reply says nacked ${String(reply.nacked)} but ${nacked} receipts were not stale`);
  model.nacksOk += nacked;
}

/**
 * The server's clock at the extend is at least its clock at the dequeue
 * (lease_expires_at_ms - the lease asked for), so an ok extend guarantees a
 * lease end of at least that plus its lease_ms.
 */
async function sendExtends(
  model: RoundModel,
  client: CrashClient,
  batch: Array<{ item: TrackedItem; delivery: WireDelivery; leaseMs: number }>,
  dequeueLeaseMs: number,
): Promise<void> {
  let reply: Reply;
  try {
    reply = await client.call("extend", { ns: model.ns, items: batch.map(({ delivery, leaseMs }) => ({ receipt: delivery.receipt, lease_ms: leaseMs })) });
  } catch (error) {
    if (!(error instanceof ConnectionLost)) throw error;
    return;
  }
  if (!reply.ok) {
    model.violation("unexpected-error", `extend answered ${reply.error?.code}: ${reply.error?.message}`);
    return;
  }
  const stale = new Set(reply.stale as string[]);
  let extended = 0;
  for (const { item, delivery, leaseMs } of batch) {
    if (stale.has(delivery.receipt)) continue;
    extended++;
    const leaseMinMs = delivery.lease_expires_at_ms - dequeueLeaseMs + leaseMs;
    item.extendedLeaseMinByAttempt.set(delivery.attempt, Math.max(item.extendedLeaseMinByAttempt.get(delivery.attempt) ?? 0, leaseMinMs));
  }
  if (extended !== reply.extended) model.violation("bad-reply", `extend reply says extended ${String(reply.extended)} but ${extended} receipts were not stale`);
  model.extendsOk += extended;
}
