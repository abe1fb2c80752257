// An engine over the real GroupCommitter and a MemoryStore, on a ManualClock,
// with helpers to build inputs, settle commits, and restart from what was
// durable (durableCopy + Engine.recover, a new boot), as a crash and restart would.

import { expect } from "bun:test";
import { ManualClock } from "../../../src/lib/clock.ts";
import { defaultLimits, type Limits } from "../../../src/limits.ts";
import type { AckDone, AckOutcome, DequeueInput, DequeueOutcome, Delivery, EnqueueItemInput, Failure, Reply, Result } from "../../../src/engine/api.ts";
import { Engine } from "../../../src/engine/engine.ts";
import { GroupCommitter } from "../../../src/storage/group-commit.ts";
import { MemoryStore } from "../../../src/storage/memory/memory-store.ts";
import type { Writer } from "../../../src/storage/writer.ts";
import { ShardGate } from "./shard-gate.ts";

export { item } from "./item-input.ts";

export const startMs = 1_700_000_000_000;

export function take(topics: Array<[string, number]>, overrides: Partial<DequeueInput> = {}): DequeueInput {
  return { topics: topics.map(([topic, count]) => ({ topic, count })), capabilities: null, waitMs: 0, leaseMs: null, owner: 1, ...overrides };
}

export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.failure.kind}: ${result.failure.message}`);
  return result.value;
}

/** An ack that did not fail. */
export function ackDone(outcome: AckOutcome): AckDone {
  if (!outcome.ok) throw new Error(`expected ok, got ${outcome.failure.kind}: ${outcome.failure.message}`);
  return outcome;
}

/** A dequeue that did not fail: done or parked. */
export function dequeued(outcome: DequeueOutcome): Exclude<DequeueOutcome, { ok: false }> {
  if (!outcome.ok) throw new Error(`expected ok, got ${outcome.failure.kind}: ${outcome.failure.message}`);
  return outcome;
}

export function failure(result: { ok: true } | { ok: false; failure: Failure }): Failure {
  if (result.ok) throw new Error("expected a failure");
  return result.failure;
}

export class Harness {
  readonly clock = new ManualClock(startMs);
  store: MemoryStore;
  writer: GroupCommitter;
  /** With `shardGate: true`, the engine writes through it and tests may close single shards (a cluster's per-shard availability). */
  gate: ShardGate | null = null;
  engine: Engine;

  constructor(
    readonly options: {
      shards?: number;
      limits?: Partial<Limits>;
      namespaces?: Record<string, { enqueuePerMinute: number | null }>;
      shardGate?: boolean;
    } = {},
  ) {
    this.store = new MemoryStore({ shards: options.shards ?? 4 });
    this.writer = new GroupCommitter(this.store, { clock: this.clock });
    this.engine = this.recover();
  }

  get limits(): Limits {
    return { ...defaultLimits, ...this.options.limits };
  }

  get now(): number {
    return this.clock.nowMs();
  }

  private recover(): Engine {
    let writer: Writer = this.writer;
    if (this.options.shardGate === true) {
      const closed = this.gate?.closed ?? new Set<number>();
      this.gate = new ShardGate(this.writer);
      for (const shard of closed) this.gate.closed.add(shard);
      writer = this.gate;
    }
    return Engine.recover({ store: this.store, writer, limits: this.limits, namespaces: this.options.namespaces ?? {}, nowMs: this.now });
  }

  /** Restart once everything in flight has committed: rebuild the engine from the store (a new boot). */
  async restart(): Promise<void> {
    // As a graceful shutdown does: deferred lease writes first.
    this.engine.flushDeferredWrites();
    await this.writer.drain();
    this.crash();
  }

  /**
   * Crash now and restart: keep only what has committed so far (commits held
   * by pauseCommits are lost), rebuild the engine. The old engine is dropped.
   */
  crash(): void {
    this.store = this.store.durableCopy();
    this.writer = new GroupCommitter(this.store, { clock: this.clock });
    this.engine = this.recover();
  }

  async enqueue(ns: string, items: EnqueueItemInput[]): Promise<string[]> {
    const reply = unwrap(this.engine.enqueue(ns, items, this.now));
    await reply.durable;
    return reply.value.ids;
  }

  /** Dequeue without waiting; the deliveries. */
  async dequeue(ns: string, topics: Array<[string, number]>, overrides: Partial<DequeueInput> = {}): Promise<Delivery[]> {
    const outcome = dequeued(this.engine.dequeue(ns, take(topics, overrides), this.now));
    expect(outcome.kind).toBe("done");
    if (outcome.kind !== "done") return [];
    await outcome.durable;
    return outcome.deliveries;
  }

  async settle<T>(result: Result<Reply<T>>): Promise<T> {
    const reply = unwrap(result);
    await reply.durable;
    return reply.value;
  }

  /** settle() for an ack's flat answer: its count and stale receipts, once durable. */
  async settleAck(outcome: AckOutcome): Promise<{ acked: number; stale: readonly string[] }> {
    const done = ackDone(outcome);
    await done.durable;
    return { acked: done.acked, stale: done.stale };
  }

  advance(ms: number): void {
    this.clock.advance(ms);
    this.engine.tick(this.now);
  }

  state(ns: string, id: string): string | null {
    const got = unwrap(this.engine.get(ns, [id], this.now)).items[0];
    if (got === null || got === undefined) return null;
    return got.state === "ended" ? `ended:${got.outcome}` : got.state;
  }

  check(): void {
    this.engine.checkInvariants();
  }
}
