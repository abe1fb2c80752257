// The checks a crash round runs on the restarted server, against what the
// RoundModel knows for certain. In order:
//  1. every id ever acked with an ok reply (this round and earlier ones) is
//     `ended acked`;
//  2. every item this round knows (enqueue reply or a delivery) is present in
//     a state its history allows (acked ones ended, at_most_once ones whose
//     delivery was replied never ready again, nothing lost); an item whose
//     nack had an ok reply kept that nack (attempt count not behind it, its
//     metadata or a later nack's, not acked unless a later delivery's ack was
//     sent), and a lease still held by a delivery extended with an ok reply
//     ends no earlier than the extend guaranteed;
//  3. every item that may be live is enqueued again with its key: a live item
//     must answer with its own id (idempotency survives the restart), and
//     items whose enqueue reply was lost are found or created this way;
//  4. the topics are drained with long leases, waiting on the server
//     (dequeue wait_ms) past the last pre-crash lease: each expected item is
//     delivered exactly once, at_least_once leases come back, nothing acked
//     and no replied at_most_once delivery comes back, nothing unknown appears;
//  5. afterwards every item of the round has ended and its topics are empty.

import type { CrashClient } from "./crash-client.ts";
import type { AckedLedger, RoundModel, TrackedItem } from "./crash-model.ts";
import { deliveryKey, wireItem, type WireDelivery } from "./crash-load.ts";

/** Ids per get/enqueue request: the contract's 1..1000, with margin. */
const idsPerRequest = 500;
/** Past the last lease, how long to keep waiting for items (server time). */
const leaseSlackMs = 150;
/** Wall-clock bound on the drain: leases here last under a second, so 20 s means an item is not coming back. */
const drainWallMsMax = 20_000;
/** Lease for the drain's own deliveries: long, so nothing is redelivered while the checker acks. */
const drainLeaseMs = 60_000;

type WireState = {
  id: string;
  state: string;
  outcome?: string;
  attempt?: number;
  metadata?: Uint8Array;
  lease_expires_at_ms?: number;
  enqueued_at_ms?: number;
} | null;

const textDecoder = new TextDecoder();

export async function getStates(client: CrashClient, ns: string, ids: string[]): Promise<Map<string, WireState>> {
  const states = new Map<string, WireState>();
  for (let start = 0; start < ids.length; start += idsPerRequest) {
    const chunk = ids.slice(start, start + idsPerRequest);
    const reply = await client.must("get", { ns, ids: chunk });
    const items = reply.items as WireState[];
    chunk.forEach((id, i) => states.set(id, items[i] ?? null));
  }
  return states;
}

/** Step 1: an ok ack is forever (within outcome retention). */
export async function checkLedger(model: RoundModel, ledger: AckedLedger, client: CrashClient): Promise<void> {
  const states = await getStates(client, model.ns, [...ledger.ids].filter((id) => !ledger.reported.has(id)));
  for (const [id, state] of states) {
    if ((state?.state !== "ended" || state.outcome !== "acked") && !ledger.reported.has(id)) {
      ledger.reported.add(id);
      model.violation("acked-lost", `${id} was acked (ok reply) but get answers ${JSON.stringify(state)}`);
    }
  }
}

export async function verifyRound(model: RoundModel, ledger: AckedLedger, client: CrashClient): Promise<{ drained: number }> {
  const restartedAtMs = (await client.must("ping", {})).now_ms as number;
  await checkLedger(model, ledger, client);
  const known = [...model.items.values()].flatMap((item) => (item.id !== null ? [item.id, ...item.seenIds] : [...item.seenIds]));
  const before = await getStates(client, model.ns, [...new Set(known)]);

  // Step 2, and the list of items to enqueue again.
  const retry: Array<{ item: TrackedItem; expectId: string | null }> = [];
  for (const item of model.items.values()) {
    const id = model.knownId(item);
    if (id === null) {
      retry.push({ item, expectId: null });
      continue;
    }
    const state = before.get(id) ?? null;
    if (state?.state === "leased") model.leasedAtRestart++;
    if (deliveredAtMostOnce(item)) model.atMostOnceDeliveredChecked++;
    const stateOk = checkKnownState(model, item, id, state);
    if (stateOk) checkNackAndExtend(model, item, id, state);
    if (stateOk && state?.state !== "ended" && !deliveredAtMostOnce(item)) retry.push({ item, expectId: id });
  }

  // Step 3.
  const idOfKey = new Map<string, string>();
  const mismatched: Array<{ item: TrackedItem; expectId: string; id: string }> = [];
  for (let start = 0; start < retry.length; start += idsPerRequest) {
    const chunk = retry.slice(start, start + idsPerRequest);
    const reply = await client.must("enqueue", { ns: model.ns, items: chunk.map(({ item }) => wireItem(item)) });
    const ids = reply.ids as string[];
    chunk.forEach(({ item, expectId }, i) => {
      const id = ids[i] as string;
      idOfKey.set(item.key, id);
      if (expectId !== null) model.keysReenqueuedLive++;
      if (expectId !== null && id !== expectId) mismatched.push({ item, expectId, id });
    });
  }
  // The server's clock runs: an at_most_once item found leased may have expired
  // since, which frees its key. Any other new id means the key was forgotten.
  const nowStates = await getStates(client, model.ns, mismatched.map(({ expectId }) => expectId));
  for (const { item, expectId, id } of mismatched) {
    const state = nowStates.get(expectId) ?? null;
    if (item.delivery === "at_most_once" && state?.state === "ended" && state.outcome === "expired") continue;
    model.violation("idempotency-lost", `key ${item.key} is held by live item ${expectId} (now ${JSON.stringify(state)}), but enqueueing it again after the restart made ${id}`);
  }

  const after = await getStates(client, model.ns, [...new Set(idOfKey.values())]);
  const expectDrain = new Map<string, TrackedItem>();
  // Wait past every lease the restart found, at_most_once ones included: they must end, not return.
  let lastLeaseAtMs = 0;
  for (const state of before.values()) if (state?.state === "leased") lastLeaseAtMs = Math.max(lastLeaseAtMs, state.lease_expires_at_ms ?? 0);
  for (const { item } of retry) {
    const id = idOfKey.get(item.key) as string;
    const state = after.get(id) ?? null;
    if (state === null) {
      model.violation("lost-enqueue", `${id} (${item.key}) was just enqueued but get answers null`);
      continue;
    }
    // An unanswered enqueue finds its stored item by key, or (never stored) makes a new one now.
    if (item.id === null && state.state !== "ended" && (state.enqueued_at_ms ?? 0) < restartedAtMs) model.unansweredFoundStored++;
    if (state.state === "ended") {
      if (item.delivery !== "at_most_once" || state.outcome !== "expired") model.violation("ended-unexpectedly", `${id} (${item.key}) is ${JSON.stringify(state)} right after the restart`);
      continue;
    }
    if (state.state === "leased") lastLeaseAtMs = Math.max(lastLeaseAtMs, state.lease_expires_at_ms ?? 0);
    // A leased at_most_once item was delivered (its reply lost): it must end, not come back.
    // A delayed item was nacked with a delay (a few ms): it comes back during the drain.
    if (state.state === "ready" || state.state === "delayed" || (state.state === "leased" && item.delivery === "at_least_once")) expectDrain.set(id, item);
  }

  const drained = await drain(model, ledger, client, expectDrain, lastLeaseAtMs);

  // Step 5.
  const itemOfId = new Map<string, TrackedItem>();
  for (const item of model.items.values()) for (const id of [item.id, ...item.seenIds, idOfKey.get(item.key)]) if (id != null) itemOfId.set(id, item);
  const end = await getStates(client, model.ns, [...itemOfId.keys()]);
  for (const [id, state] of end) {
    const item = itemOfId.get(id) as TrackedItem;
    if (state === null) {
      // Null before the drain was reported by step 2; present then and gone now means an outcome was lost.
      if ((before.get(id) ?? after.get(id) ?? null) !== null) model.violation("lost-enqueue", `${id} (${item.key}) was present after the restart but get answers null after the drain`);
      continue;
    }
    if (state.state !== "ended") model.violation("not-ended", `${id} (${item.key}) is ${JSON.stringify(state)} after the drain`);
    else if (state.outcome !== "acked" && !(state.outcome === "expired" && item.delivery === "at_most_once")) {
      model.violation("ended-unexpectedly", `${id} (${item.key}, ${item.delivery}) ended ${state.outcome}`);
    }
  }
  const topics = await client.must("topics", { ns: model.ns, prefix: `r${model.round}-` });
  for (const counts of topics.topics as Array<Record<string, number | string>>) {
    const { topic, ...rest } = counts;
    if (Object.values(rest).some((n) => n !== 0)) model.violation("topic-not-empty", `${String(topic)} after the drain: ${JSON.stringify(counts)}`);
  }
  await checkLedger(model, ledger, client);
  return { drained };
}

function deliveredAtMostOnce(item: TrackedItem): boolean {
  return item.delivery === "at_most_once" && item.receipts.length > 0;
}

/** Step 2 for one item with a known id; false when a violation was recorded. */
function checkKnownState(model: RoundModel, item: TrackedItem, id: string, state: WireState): boolean {
  const where = `${id} (${item.key}, ${item.delivery}, enqueue ${item.id === null ? "unanswered" : "ok"}, ${item.receipts.length} deliveries, ack ${item.ackOk ? "ok" : item.ackSent ? "unanswered" : "not sent"})`;
  if (state === null) {
    model.violation("lost-enqueue", `${where}: get answers null after the restart`);
    return false;
  }
  if (state.state === "ended") {
    const allowed =
      (state.outcome === "acked" && item.ackSent && item.ackSentAttemptMax > lastNackOkAttempt(item)) ||
      (state.outcome === "expired" && item.delivery === "at_most_once" && !item.ackOk);
    if (!allowed && state.outcome === "acked" && item.ackSent) {
      model.violation("nack-lost", `${where}: ended acked, but its nack of attempt ${lastNackOkAttempt(item)} had an ok reply and no ack of a later delivery was sent`);
      return false;
    }
    if (!allowed) model.violation(item.ackOk ? "acked-lost" : "ended-unexpectedly", `${where}: ended ${state.outcome}`);
    return allowed;
  }
  if (item.ackOk) {
    model.violation("acked-lost", `${where}: acked, but ${state.state} after the restart`);
    return false;
  }
  if (deliveredAtMostOnce(item) && state.state !== "leased") {
    model.violation("at-most-once-redelivered", `${where}: delivered at_most_once, but ${state.state} after the restart`);
    return false;
  }
  if (state.state === "delayed" && item.nacks.some((nack) => nack.delayed)) return true;
  if (state.state !== "ready" && state.state !== "leased") {
    model.violation("unexpected-state", `${where}: ${state.state} after the restart`);
    return false;
  }
  return true;
}

/** `attempt` of the last delivery a nack with an ok reply ended, or 0. */
function lastNackOkAttempt(item: TrackedItem): number {
  let attempt = 0;
  for (const nack of item.nacks) if (nack.ok) attempt = Math.max(attempt, nack.attempt);
  return attempt;
}

/**
 * Step 2 for a live item that was nacked or extended with an ok reply: the
 * nack is durable (attempt count not behind it, its metadata or a later
 * nack's in place), and an extended lease found still held by the same
 * delivery (same attempt) ends no earlier than the extend guaranteed.
 */
function checkNackAndExtend(model: RoundModel, item: TrackedItem, id: string, state: WireState): void {
  if (state === null || state.state === "ended") return;
  const where = `${id} (${item.key}, now ${state.state} attempt ${String(state.attempt)})`;
  const nackAttempt = lastNackOkAttempt(item);
  if (nackAttempt > 0) {
    model.nackedChecked++;
    if ((state.attempt ?? 0) < nackAttempt) model.violation("nack-lost", `${where}: its nack of attempt ${nackAttempt} had an ok reply, but the attempt count went back`);
    let metadataAttempt = 0;
    for (const nack of item.nacks) if (nack.ok && nack.metadata !== null) metadataAttempt = Math.max(metadataAttempt, nack.attempt);
    if (metadataAttempt > 0) {
      // A later nack with metadata may have been applied even if its reply was lost.
      const allowed = item.nacks.filter((nack) => nack.metadata !== null && nack.attempt >= metadataAttempt).map((nack) => nack.metadata as string);
      const metadata = state.metadata === undefined ? "(none)" : textDecoder.decode(state.metadata);
      if (!allowed.includes(metadata)) model.violation("nack-lost", `${where}: metadata ${JSON.stringify(metadata)}, but a nack with an ok reply set ${JSON.stringify(allowed[0])}`);
    }
  }
  const leaseMinMs = item.extendedLeaseMinByAttempt.get(state.attempt ?? 0);
  if (state.state === "leased" && leaseMinMs !== undefined) {
    model.extendedChecked++;
    if ((state.lease_expires_at_ms ?? 0) < leaseMinMs) {
      model.violation("extend-lost", `${where}: leased until ${String(state.lease_expires_at_ms)}, but an extend of this delivery with an ok reply guaranteed at least ${leaseMinMs}`);
    }
  }
}

/** Step 4: returns how many items were drained. */
async function drain(
  model: RoundModel,
  ledger: AckedLedger,
  client: CrashClient,
  expect: Map<string, TrackedItem>,
  lastLeaseAtMs: number,
): Promise<number> {
  const drained = new Set<string>();
  const wallDeadlineMs = Date.now() + drainWallMsMax;
  for (;;) {
    const nowMs = (await client.must("ping", {})).now_ms as number;
    const missing = [...expect.keys()].filter((id) => !drained.has(id));
    const quietUntilMs = lastLeaseAtMs + leaseSlackMs;
    if (Date.now() > wallDeadlineMs) {
      if (missing.length > 0) model.violation("never-returned", `${missing.length} items never delivered after the restart: ${missing.slice(0, 10).join(", ")}`);
      else model.violation("drain-timeout", "the drain did not settle within its wall-clock bound");
      return drained.size;
    }
    const settled = missing.length === 0 && nowMs >= quietUntilMs;
    // Wait on the server, never on a local timer: the lease deadlines are the server's.
    // A parked dequeue returns as soon as something is delivered, so the waits are upper bounds.
    const waitMs = settled ? 0 : clamp(quietUntilMs - nowMs, missing.length > 0 ? 500 : 1, 2000);
    const reply = await client.must("dequeue", {
      ns: model.ns,
      topics: [
        { topic: model.topicAtLeastOnce, count: 1000 },
        { topic: model.topicAtMostOnce, count: 1000 },
      ],
      wait_ms: waitMs,
      lease_ms: drainLeaseMs,
    });
    const deliveries = reply.items as WireDelivery[];
    if (settled && deliveries.length === 0) return drained.size;
    for (const delivery of deliveries) checkDrained(model, ledger, expect, drained, delivery);
    if (deliveries.length > 0) {
      const takenByOld = await probeOldReceipts(model, client, deliveries);
      const stale: string[] = [];
      for (let start = 0; start < deliveries.length; start += idsPerRequest) {
        const chunk = deliveries.slice(start, start + idsPerRequest);
        const ack = await client.must("ack", { ns: model.ns, receipts: chunk.map((d) => d.receipt) });
        for (const receipt of ack.stale as string[]) if (!takenByOld.has(receipt)) stale.push(receipt);
      }
      if (stale.length > 0) model.violation("drain-ack-stale", `fresh drain receipts reported stale: ${stale.slice(0, 5).join(", ")}`);
      for (const delivery of deliveries) ledger.ids.add(delivery.id);
    }
  }
}

function checkDrained(model: RoundModel, ledger: AckedLedger, expect: Map<string, TrackedItem>, drained: Set<string>, delivery: WireDelivery): void {
  const key = deliveryKey(delivery);
  const item = model.items.get(key);
  const what = `${delivery.id} (${key}, attempt ${delivery.attempt})`;
  if (ledger.ids.has(delivery.id)) model.violation("acked-redelivered", `${what} delivered after the restart, but its ack had an ok reply`);
  else if (item !== undefined && deliveredAtMostOnce(item) && model.knownId(item) === delivery.id) {
    model.violation("at-most-once-redelivered", `${what} delivered after the restart, but an at_most_once delivery of it was replied before the kill`);
  } else if (drained.has(delivery.id)) model.violation("duplicate-delivery", `${what} delivered twice during the drain`);
  else if (!expect.has(delivery.id)) {
    model.violation("unexpected-delivery", `${what} was not expected (key known as ${item === undefined ? "nothing" : String(model.knownId(item))})`);
  }
  if (item !== undefined && item.receipts.includes(delivery.receipt)) {
    model.violation("receipt-reused", `${what}: receipt ${delivery.receipt} was already issued for a delivery before the kill`);
  }
  drained.add(delivery.id);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.ceil(value)));
}

/**
 * A delivery made before the kill has ended (its item was just delivered
 * again, to the checker), so its receipt must be stale. A worker that survived
 * the server crash will send exactly these acks on reconnect. Returns the
 * drain receipts whose delivery an old receipt managed to ack.
 */
async function probeOldReceipts(model: RoundModel, client: CrashClient, deliveries: WireDelivery[]): Promise<Set<string>> {
  const old: Array<{ receipt: string; delivery: WireDelivery }> = [];
  for (const delivery of deliveries) {
    const item = model.items.get(deliveryKey(delivery));
    if (item === undefined || model.knownId(item) !== delivery.id) continue;
    for (const receipt of new Set(item.receipts)) old.push({ receipt, delivery });
  }
  const takenByOld = new Set<string>();
  for (let start = 0; start < old.length; start += idsPerRequest) {
    const chunk = old.slice(start, start + idsPerRequest);
    const reply = await client.must("ack", { ns: model.ns, receipts: chunk.map(({ receipt }) => receipt) });
    const stale = new Set(reply.stale as string[]);
    for (const { receipt, delivery } of chunk) {
      if (stale.has(receipt)) continue;
      takenByOld.add(delivery.receipt);
      model.violation(
        "stale-receipt-accepted",
        `${delivery.id}: receipt ${receipt} from before the kill acked the delivery the restarted server made to another consumer (receipt ${delivery.receipt}, attempt ${delivery.attempt})`,
      );
    }
  }
  return takenByOld;
}
