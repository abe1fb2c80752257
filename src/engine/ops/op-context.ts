// What the engine's op files (enqueue.ts, dequeue.ts, receipt-ops.ts,
// admin-ops.ts) share: the item states, scratch for one request at a time
// (the engine's own, so two engines share nothing), the wake-up of parked dequeues, and the two steps every
// writing op takes — refuse before any change when a shard it must write is
// unhealthy, and end its WriteSet and serve waiters before it replies.

import type { Reply, Result } from "../api.ts";
import type { FailureResult } from "../failures/failures.ts";
import type { ReceiptFields } from "../state/ids.ts";
import type { LiveItem } from "../state/item.ts";
import type { ItemStates } from "../state/item-states.ts";
import { refuseUnwritable } from "../admission/writable-shards.ts";
import type { Commit, CommitListener, Writer } from "../../storage/writer.ts";

export interface OpContext {
  readonly states: ItemStates;
  /** The store's writer: shard health, keys and commits (storage/writer.ts). */
  readonly writer: Writer;
  /** Cleared before and after each use; saves an allocation per request. */
  readonly scratchSeen: Set<unknown>;
  /** An ack's found items; emptied before and after each use. */
  readonly scratchFound: LiveItem[];
  /** One receipt's numbers (leasedByReceipt): the engine is synchronous, one receipt at a time. */
  readonly scratchReceipt: ReceiptFields;
  /** Serve the parked dequeues of topics that gained takeable items during the op. */
  wake(nowMs: number): void;
}

/** Refuse the op (before any change) when a shard it must write is not accepting writes (admission/writable-shards.ts). */
export function refuseUnhealthyShards(ctx: OpContext, items: LiveItem[], nowMs: number): FailureResult | null {
  return refuseUnwritable(ctx.writer, items, nowMs);
}

/** End the op: its writes go to the next commit (the reply waits for it), then waiters are served. */
export function finishOp<T>(ctx: OpContext, value: T, nowMs: number): Result<Reply<T>> {
  return { ok: true, value: new CommitReply(value, closeOp(ctx, nowMs)) };
}

/** finishOp for an op that builds its own flat answer (ack): the Commit its reply waits for. */
export function closeOp(ctx: OpContext, nowMs: number): Commit {
  const commit = ctx.states.closeSet() ?? nothingToCommit;
  ctx.wake(nowMs);
  return commit;
}

/**
 * A Reply whose `commit` is the op's closed WriteSet: the promise behind
 * `durable` is made only if a caller reads it (the dispatcher listens on
 * `commit` for ack instead: storage/writer.ts says why).
 */
class CommitReply<T> implements Reply<T> {
  constructor(
    readonly value: T,
    readonly commit: Commit,
  ) {}

  get durable(): Promise<void> {
    return this.commit.promise();
  }
}

/** The Commit of an op that wrote nothing: durable already, as an empty WriteSet is. */
const nothingToCommit: Commit = {
  listen(listener: CommitListener): void {
    listener.committed();
  },
  promise(): Promise<void> {
    return Promise.resolve();
  },
};
