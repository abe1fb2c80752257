// A test double of EngineApi for server and op tests: records every call and
// answers with simple canned values, which a test may replace per method.
// Dequeues park when `parkDequeues` is set; tests settle them with
// releaseWaiters() / cancelWaiters() or by resolving `parked` entries.

import type {
  DequeueInput,
  DequeueDone,
  DequeueOutcome,
  EngineApi,
  EnqueueItemInput,
} from "../../src/engine/api.ts";
import type { EngineStats } from "../../src/engine/reads/stats-shape.ts";
import type { Commit } from "../../src/storage/writer.ts";

export interface FakeCall {
  method: string;
  args: unknown[];
}

export interface ParkedDequeue {
  ns: string;
  input: DequeueInput;
  resolve(done: DequeueDone): void;
}

export class FakeEngine implements EngineApi {
  calls: FakeCall[] = [];
  parkDequeues = false;
  parked: ParkedDequeue[] = [];
  /** Returned as Reply.durable by writing ops; null = already durable. */
  durable: () => Promise<void> | null = () => null;
  /** When it gives one, ack's Reply carries this Commit (as the real engine's does) and `durable` is its promise. */
  ackCommit: () => Commit | undefined = () => undefined;
  /** When it gives one, a dequeue's answer carries this Commit (as the real engine's does with lease writes) and `durable` is its promise. */
  dequeueCommit: () => Commit | undefined = () => undefined;
  nextDeadline: number | null = null;
  ticks: number[] = [];
  private nextId = 1;

  private record(method: string, ...args: unknown[]): void {
    this.calls.push({ method, args });
  }

  callsOf(method: string): FakeCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  enqueue(ns: string, items: EnqueueItemInput[], nowMs: number): ReturnType<EngineApi["enqueue"]> {
    this.record("enqueue", ns, items, nowMs);
    const ids = items.map(() => `0:${this.nextId++}`);
    return { ok: true, value: { value: { ids }, durable: this.durable() } };
  }

  dequeue(ns: string, input: DequeueInput, nowMs: number): ReturnType<EngineApi["dequeue"]> {
    // A copy, as the engine keeps none of its input (api.ts): the server reuses one.
    input = { ...input, topics: input.topics.map((t) => ({ ...t })) };
    this.record("dequeue", ns, input, nowMs);
    if (this.parkDequeues && input.waitMs > 0) {
      const waiter = new Promise<DequeueDone>((resolve) => this.parked.push({ ns, input, resolve }));
      const outcome: DequeueOutcome = { ok: true, kind: "parked", waiter };
      return outcome;
    }
    const commit = this.dequeueCommit();
    if (commit === undefined) return { ok: true, kind: "done", deliveries: [], durable: null };
    return {
      ok: true,
      kind: "done",
      deliveries: [],
      commit,
      get durable() {
        return commit.promise();
      },
    };
  }

  cancelWaiters(owner: number): void {
    this.record("cancelWaiters", owner);
    const mine = this.parked.filter((p) => p.input.owner === owner);
    this.parked = this.parked.filter((p) => p.input.owner !== owner);
    for (const p of mine) p.resolve({ ok: true, kind: "done", deliveries: [], durable: null });
  }

  ack(ns: string, receipts: string[], nowMs: number, results: ReadonlyArray<Uint8Array | null> | null = null): ReturnType<EngineApi["ack"]> {
    this.record("ack", ns, receipts, nowMs, results);
    const acked = receipts.length;
    const commit = this.ackCommit();
    if (commit === undefined) return { ok: true, acked, stale: [], durable: this.durable() };
    return {
      ok: true,
      acked,
      stale: [],
      commit,
      get durable() {
        return commit.promise();
      },
    };
  }

  nack(ns: string, items: Parameters<EngineApi["nack"]>[1], nowMs: number): ReturnType<EngineApi["nack"]> {
    this.record("nack", ns, items, nowMs);
    return { ok: true, value: { value: { nacked: items.length, stale: [] }, durable: this.durable() } };
  }

  extend(ns: string, items: Parameters<EngineApi["extend"]>[1], nowMs: number): ReturnType<EngineApi["extend"]> {
    this.record("extend", ns, items, nowMs);
    return { ok: true, value: { value: { extended: items.length, stale: [] }, durable: this.durable() } };
  }

  cancel(ns: string, ids: string[], nowMs: number): ReturnType<EngineApi["cancel"]> {
    this.record("cancel", ns, ids, nowMs);
    return { ok: true, value: { value: { cancelled: 0, missing: ids }, durable: this.durable() } };
  }

  get(ns: string, ids: string[], nowMs: number): ReturnType<EngineApi["get"]> {
    this.record("get", ns, ids, nowMs);
    return { ok: true, value: { items: ids.map(() => null) } };
  }

  wait(ns: string, ids: string[], waitMs: number, owner: number, nowMs: number): ReturnType<EngineApi["wait"]> {
    this.record("wait", ns, ids, waitMs, owner, nowMs);
    return { ok: true, kind: "done", items: ids.map(() => null) };
  }

  topics(ns: string, query: Parameters<EngineApi["topics"]>[1]): ReturnType<EngineApi["topics"]> {
    this.record("topics", ns, query);
    return { topics: [], next: null };
  }

  dead(ns: string, topic: string, limit: number): ReturnType<EngineApi["dead"]> {
    this.record("dead", ns, topic, limit);
    return { items: [] };
  }

  redrive(ns: string, topic: string, ids: string[] | null, nowMs: number): ReturnType<EngineApi["redrive"]> {
    this.record("redrive", ns, topic, ids, nowMs);
    return { ok: true, value: { value: { redriven: 0 }, durable: this.durable() } };
  }

  list(ns: string, topic: string, query: Parameters<EngineApi["list"]>[2], nowMs: number): ReturnType<EngineApi["list"]> {
    this.record("list", ns, topic, query, nowMs);
    return { items: [], next: null };
  }

  pause(ns: string, topic: string, forMs: number | null, nowMs: number): ReturnType<EngineApi["pause"]> {
    this.record("pause", ns, topic, forMs, nowMs);
    return { ok: true, value: { value: { pausedUntilMs: forMs === null ? null : nowMs + forMs }, durable: this.durable() } };
  }

  resume(ns: string, topic: string, nowMs: number): ReturnType<EngineApi["resume"]> {
    this.record("resume", ns, topic, nowMs);
    return { ok: true, value: { value: { resumed: false }, durable: this.durable() } };
  }

  policy(ns: string, input: Parameters<EngineApi["policy"]>[1], nowMs: number): ReturnType<EngineApi["policy"]> {
    this.record("policy", ns, input, nowMs);
    return { ok: true, value: { value: { cleared: false }, durable: this.durable() } };
  }

  schedule(ns: string, input: Parameters<EngineApi["schedule"]>[1], nowMs: number): ReturnType<EngineApi["schedule"]> {
    this.record("schedule", ns, input, nowMs);
    return { ok: true, value: { value: { name: input.name, nextAtMs: null }, durable: this.durable() } };
  }

  unschedule(ns: string, name: string, nowMs: number): ReturnType<EngineApi["unschedule"]> {
    this.record("unschedule", ns, name, nowMs);
    return { ok: true, value: { value: { removed: false }, durable: this.durable() } };
  }

  scheduleList(ns: string, query: Parameters<EngineApi["scheduleList"]>[1]): ReturnType<EngineApi["scheduleList"]> {
    this.record("schedules", ns, query);
    return { schedules: [], next: null };
  }

  policies(ns: string, topic: string, query: Parameters<EngineApi["policies"]>[2]): ReturnType<EngineApi["policies"]> {
    this.record("policies", ns, topic, query);
    return { policies: [], next: null };
  }

  groups(ns: string, topic: string, query: Parameters<EngineApi["groups"]>[2]): ReturnType<EngineApi["groups"]> {
    this.record("groups", ns, topic, query);
    return { groups: [], next: null };
  }

  explain(ns: string, ids: string[], nowMs: number): ReturnType<EngineApi["explain"]> {
    this.record("explain", ns, ids, nowMs);
    return { ok: true, value: { items: ids.map(() => null) } };
  }

  /** An empty view (no namespaces); tests read the filter the op passed from the recorded call. */
  stats(namespaces: string[] | null, nowMs: number): EngineStats {
    this.record("stats", namespaces, nowMs);
    return {
      nowMs,
      totals: { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0, topics: 0, parkedWaiters: 0 },
      counters: { enqueued: 0, delivered: 0, acked: 0, nacked: 0, expired: 0, cancelled: 0, dead: 0, redriven: 0 },
      namespaces: {},
    };
  }

  tick(nowMs: number): void {
    this.ticks.push(nowMs);
    this.nextDeadline = null;
  }

  flushDeferredWrites(): void {
    this.record("flushDeferredWrites");
  }

  nextDeadlineMs(): number | null {
    return this.nextDeadline;
  }

  releaseWaiters(): void {
    this.record("releaseWaiters");
    const all = this.parked;
    this.parked = [];
    for (const p of all) p.resolve({ ok: true, kind: "done", deliveries: [], durable: null });
  }
}
