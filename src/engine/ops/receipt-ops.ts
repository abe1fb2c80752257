// ack, nack and extend: the ops that name a delivery by its receipt. A
// receipt is good only while its item is leased under that very delivery:
// same delivery count and same boot (state/ids.ts says why the boot). Anything
// else is stale, listed in the reply, and changes nothing.

import type { AckDone, AckOutcome, Reply, Result } from "../api.ts";
import { readReceipt } from "../state/ids.ts";
import type { LiveItem } from "../state/item.ts";
import { closeOp, finishOp, type OpContext, refuseUnhealthyShards } from "./op-context.ts";
import type { Commit } from "../../storage/writer.ts";

export function ack(ctx: OpContext, nsName: string, receipts: string[], nowMs: number, results: ReadonlyArray<Uint8Array | null> | null = null): AckOutcome {
  if (results !== null) return ackWithResults(ctx, nsName, receipts, results, nowMs);
  // An ack is the commonest request: its found items go in a scratch list,
  // no stale list is made unless a receipt is stale, and the answer is one
  // flat object (each would be a JS-heap cell or two per ack:
  // docs/decisions/013-lent-replies-and-scratch.md).
  const found = ctx.scratchFound;
  found.length = 0;
  const stale = leasedByReceipts(ctx, nsName, receipts, found);
  const refused = refuseUnhealthyShards(ctx, found, nowMs);
  if (refused !== null) return refused;
  for (const item of found) ctx.states.endItem(item, "acked", nowMs);
  const acked = found.length;
  found.length = 0;
  return new CommittedAck(acked, stale, closeOp(ctx, nowMs));
}

/** An ack carrying `results` (one per receipt, null for none): each acked item keeps its own with its outcome. */
function ackWithResults(ctx: OpContext, nsName: string, receipts: string[], results: ReadonlyArray<Uint8Array | null>, nowMs: number): AckOutcome {
  const { found, chosen, stale } = leasedByEntries(ctx, nsName, receipts.map((receipt) => ({ receipt })));
  const refused = refuseUnhealthyShards(ctx, found, nowMs);
  if (refused !== null) return refused;
  for (let f = 0; f < found.length; f++) ctx.states.endItem(found[f] as LiveItem, "acked", nowMs, results[chosen[f] as number] ?? null);
  return new CommittedAck(found.length, stale.length === 0 ? noneStale : stale, closeOp(ctx, nowMs));
}

/** An ack's answer (AckDone): `durable` is the commit's promise, made only if read. */
class CommittedAck implements AckDone {
  readonly ok = true;
  constructor(
    readonly acked: number,
    readonly stale: readonly string[],
    readonly commit: Commit,
  ) {}

  get durable(): Promise<void> {
    return this.commit.promise();
  }
}

export function nack(
  ctx: OpContext,
  nsName: string,
  entries: Array<{ receipt: string; delayMs: number | null; metadata: Uint8Array | null; priority?: number | null }>,
  nowMs: number,
): Result<Reply<{ nacked: number; stale: string[] }>> {
  const { found, chosen, stale } = leasedByEntries(ctx, nsName, entries);
  const refused = refuseUnhealthyShards(ctx, found, nowMs);
  if (refused !== null) return refused;
  for (let f = 0; f < found.length; f++) {
    const item = found[f] as LiveItem;
    const entry = entries[chosen[f] as number] as { delayMs: number | null; metadata: Uint8Array | null; priority?: number | null };
    ctx.states.namespaces.get(item.ns)!.counters.nacked++;
    // Kept in memory for good: the store's copy is older until this write commits (ItemBytes.bytesOf).
    if (entry.metadata !== null) item.ensureExtras().metadata = entry.metadata;
    if (item.ttlPassed) {
      ctx.states.endItem(item, "expired", nowMs);
    } else if (item.attempt >= item.maxAttempts) {
      ctx.states.killItem(item, "max_attempts", entry.priority ?? null);
    } else {
      ctx.states.release(item, nowMs + (entry.delayMs ?? 0), nowMs, entry.priority ?? null);
    }
  }
  return finishOp(ctx, { nacked: found.length, stale }, nowMs);
}

export function extend(
  ctx: OpContext,
  nsName: string,
  entries: Array<{ receipt: string; leaseMs: number; metadata?: Uint8Array | null }>,
  nowMs: number,
): Result<Reply<{ extended: number; stale: string[] }>> {
  const stale: string[] = [];
  const found: LiveItem[] = [];
  const leases: number[] = [];
  const metadata: Array<Uint8Array | null> = [];
  for (const entry of entries) {
    const item = leasedByReceipt(ctx, nsName, entry.receipt);
    if (item === null) stale.push(entry.receipt);
    else {
      // A receipt named twice: the last lease_ms (and metadata) wins (both count as extended).
      found.push(item);
      leases.push(entry.leaseMs);
      metadata.push(entry.metadata ?? null);
    }
  }
  const refused = refuseUnhealthyShards(ctx, found, nowMs);
  if (refused !== null) return refused;
  for (let i = 0; i < found.length; i++) {
    const item = found[i] as LiveItem;
    // A long job's progress: kept in memory for good, and extendLease writes the whole record with it (ItemBytes.writeItem).
    const progress = metadata[i] as Uint8Array | null;
    if (progress !== null) item.ensureExtras().metadata = progress;
    ctx.states.extendLease(item, nowMs + (leases[i] as number));
  }
  return finishOp(ctx, { extended: found.length, stale }, nowMs);
}

/** The item a receipt names if that delivery is still current: leased, same delivery count, same boot. */
function leasedByReceipt(ctx: OpContext, ns: string, receipt: string): LiveItem | null {
  const parsed = ctx.scratchReceipt;
  if (!readReceipt(receipt, parsed)) return null;
  const item = ctx.states.items.getByKey(parsed.shard, parsed.key);
  if (item === undefined || item.ns !== ns || item.state !== "leased") return null;
  if (item.deliveries !== parsed.deliveries || item.leaseBoot !== parsed.boot) return null;
  return item;
}

/**
 * The items entries' receipts name, each once, with the index of the entry
 * that chose it; a receipt naming no current delivery (or repeating one) is stale.
 */
export function leasedByEntries(ctx: OpContext, ns: string, entries: ReadonlyArray<{ receipt: string }>): { found: LiveItem[]; chosen: number[]; stale: string[] } {
  const stale: string[] = [];
  const found: LiveItem[] = [];
  const chosen: number[] = [];
  ctx.scratchSeen.clear();
  for (let i = 0; i < entries.length; i++) {
    const receipt = (entries[i] as { receipt: string }).receipt;
    const item = leasedByReceipt(ctx, ns, receipt);
    if (item === null || ctx.scratchSeen.has(item)) stale.push(receipt);
    else {
      ctx.scratchSeen.add(item);
      found.push(item);
      chosen.push(i);
    }
  }
  ctx.scratchSeen.clear();
  return { found, chosen, stale };
}

/** What an ack with no stale receipt replies: one shared list, frozen. */
const noneStale: readonly string[] = Object.freeze([]);

/**
 * Puts the items receipts name into `found`, each once, and returns the
 * stale receipts: those naming no current delivery, or repeating one.
 */
function leasedByReceipts(ctx: OpContext, ns: string, receipts: readonly string[], found: LiveItem[]): readonly string[] {
  let stale: string[] | null = null;
  // One receipt (the usual ack) cannot repeat: no set to fill and clear.
  const seen = receipts.length > 1 ? ctx.scratchSeen : null;
  seen?.clear();
  for (const receipt of receipts) {
    const item = leasedByReceipt(ctx, ns, receipt);
    if (item === null || (seen !== null && seen.has(item))) (stale ??= []).push(receipt);
    else {
      seen?.add(item);
      found.push(item);
    }
  }
  seen?.clear();
  return stale ?? noneStale;
}
