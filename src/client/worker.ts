// The worker loop: `client.work(options, handler)` leases items of one topic
// with long-poll dequeues, runs up to `concurrency` handlers at once, keeps
// each lease alive while its handler runs (an extend every leaseMs *
// extendAtFraction, one request for the leases due together:
// lease-keeper.ts), acks when the handler returns (what it returns, bytes or
// a string, is the item's result) and nacks when it throws,
// with an exponential back-off: delay_ms = min(backoffMsMax,
// backoffBaseMs * 2^(attempt - 1)), attempt being the delivery's (1, 2, ...).
//
// A slot frees as its ack or nack leaves, not when the answer comes back: the
// next dequeue goes out in the same turn, so on a server that commits what
// arrived together, one commit carries the ack and the next lease
// (docs/decisions/048-ack-frees-the-slot.md). The deliveries held, handlers
// running and acks or nacks unanswered, stay within twice `concurrency`.
//
// stop() is graceful: no new dequeue starts; a dequeue already waiting on the
// server is let come back (at most waitMs) and what it brought is handled
// like the rest (giving it back with a nack would spend one of its attempts);
// running handlers finish and are acked or nacked; then stop() resolves. A handler whose lease is lost (an extend reported the
// receipt stale: the lease had expired, or the item was cancelled) sees its
// AbortSignal fire; its ack or nack is then stale and reported as an event.
// With @opentelemetry/api installed, each handler runs in a CONSUMER span
// whose parent is the item's `trace` (otel-trace.ts).

import { LeaseKeeper, type LeaseEvent } from "./lease-keeper.ts";
import { OrqError } from "./orq-error.ts";
import { inConsumerSpan, loadOtel } from "./otel-trace.ts";
import type { Delivery, DequeueRequest } from "./types.ts";

export interface WorkOptions {
  ns: string;
  topic: string;
  /** Sent with every dequeue; without it only items without `requires` match. */
  capabilities?: Record<string, unknown>;
  /** Handlers running at once, 1..1000. */
  concurrency: number;
  /** Lease of each delivery, renewed while its handler runs. */
  leaseMs: number;
  /** Long-poll wait of each dequeue (default 5,000 ms); also the longest stop() waits for one in flight. */
  waitMs?: number;
  /** Extend when this fraction of the lease has passed (default 0.5), 0.1..0.9. */
  extendAtFraction?: number;
  /** First nack delay (default 1,000 ms), doubled per attempt. */
  backoffBaseMs?: number;
  /** Largest nack delay (default 300,000 ms = 5 min). */
  backoffMsMax?: number;
  /** Pause after a failed dequeue (default 1,000 ms, or the error's retry_after_ms). */
  errorPauseMs?: number;
  /** Run each handler in an OpenTelemetry CONSUMER span, child of the item's trace (default true; needs @opentelemetry/api). */
  trace?: boolean;
  /** What happened, for logs and tests. Exceptions thrown here are ignored. */
  onEvent?: (event: WorkerEvent) => void;
}

/**
 * What the loop calls: an OrqClient, or an OrqClusterClient (cluster-client.ts)
 * for a whole cluster. Spelled out here rather than picked from OrqClient so the
 * client's files import one way (client.ts -> worker.ts), with no circle back.
 */
export interface WorkerClient {
  dequeue(ns: string, request: DequeueRequest): Promise<Delivery[]>;
  ack(ns: string, receipts: string[], options?: { results?: Array<Uint8Array | string | null | undefined> }): Promise<{ acked: number; stale: string[] }>;
  nack(ns: string, items: Array<{ receipt: string; delayMs?: number }>): Promise<{ nacked: number; stale: string[] }>;
  extend(ns: string, items: Array<{ receipt: string; leaseMs: number; metadata?: Uint8Array | string }>): Promise<{ extended: number; stale: string[] }>;
}

export interface HandlerContext {
  /** Fires when the lease was lost (an extend found the receipt stale): the work will not count. */
  signal: AbortSignal;
  /**
   * Report progress: replaces the item's metadata (get shows it) and renews
   * the lease, in one extend. Resolves false when the lease was already lost.
   */
  progress(metadata: Uint8Array | string): Promise<boolean>;
}

/**
 * What a handler returns: bytes or a string (sent as UTF-8) become the item's
 * result, given with its ack (get and waitFor return it); nothing, no result.
 * Any other value is not sent.
 */
export type WorkResult = Uint8Array | string | undefined | void;

/** Gets each delivery as the dequeue returned it: its `group` (absent for an item without one) tells a handler whose work it is. */
export type WorkHandler = (delivery: Delivery, context: HandlerContext) => Promise<WorkResult> | WorkResult;

/** What the loop reports; the lease keeper's events (`extended`, `lease_lost`, an extend's `error`) are its own (lease-keeper.ts). */
export type WorkerEvent =
  | { kind: "acked"; delivery: Delivery; stale: boolean }
  | { kind: "nacked"; delivery: Delivery; delayMs: number; error: unknown; stale: boolean }
  | { kind: "error"; during: "dequeue" | "ack" | "nack"; error: unknown; delivery?: Delivery }
  | LeaseEvent;

export interface WorkerHandle {
  /** Graceful stop; resolves once every delivery taken has been acked or nacked. */
  stop(): Promise<void>;
  /** Resolves when the loop has ended (after stop(), or when the client was closed). */
  readonly done: Promise<void>;
  /** Handlers running now. */
  readonly running: number;
}

export const workDefaults = {
  waitMs: 5_000,
  extendAtFraction: 0.5,
  backoffBaseMs: 1_000,
  backoffMsMax: 300_000,
  errorPauseMs: 1_000,
} as const;

/** Largest concurrency (1,000): one dequeue's count limit. */
export const workConcurrencyMax = 1000;

/** The nack delay after a handler threw on delivery `attempt` (1-based). */
export function nackDelayMs(attempt: number, backoffBaseMs: number, backoffMsMax: number): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 52);
  return Math.min(backoffMsMax, backoffBaseMs * 2 ** exponent);
}

function checkOptions(options: WorkOptions): void {
  const bad = (what: string): never => {
    throw new RangeError(`work(): ${what}`);
  };
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1 || options.concurrency > workConcurrencyMax) bad(`concurrency must be 1..${workConcurrencyMax}`);
  if (!Number.isInteger(options.leaseMs) || options.leaseMs < 1) bad("leaseMs must be a positive integer");
  const fraction = options.extendAtFraction ?? workDefaults.extendAtFraction;
  if (!(fraction >= 0.1 && fraction <= 0.9)) bad("extendAtFraction must be 0.1..0.9");
  if (options.waitMs !== undefined && (!Number.isInteger(options.waitMs) || options.waitMs < 0)) bad("waitMs must be a non-negative integer");
}

export function startWorker(client: WorkerClient, options: WorkOptions, handler: WorkHandler): WorkerHandle {
  checkOptions(options);
  const waitMs = options.waitMs ?? workDefaults.waitMs;
  const extendEveryMs = Math.max(1, Math.floor(options.leaseMs * (options.extendAtFraction ?? workDefaults.extendAtFraction)));
  const backoffBaseMs = options.backoffBaseMs ?? workDefaults.backoffBaseMs;
  const backoffMsMax = options.backoffMsMax ?? workDefaults.backoffMsMax;
  const errorPauseMs = options.errorPauseMs ?? workDefaults.errorPauseMs;

  let stopping = false;
  /** Handlers running now. */
  let running = 0;
  /** Acks and nacks sent and not yet answered. */
  let settling = 0;
  const tasks = new Set<Promise<void>>();
  /** Wakes the loop when a slot frees up or stop() is called. */
  let wake: (() => void) | null = null;
  const wakeLoop = (): void => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const emit = (event: WorkerEvent): void => {
    try {
      options.onEvent?.(event);
    } catch (error) {
      // A faulty listener must not break the loop; report it once on the console.
      console.error("orq worker: onEvent threw", error);
    }
  };

  const keeper = new LeaseKeeper(client, options.ns, options.leaseMs, extendEveryMs, emit);

  async function runOne(delivery: Delivery, otel: Awaited<ReturnType<typeof loadOtel>>): Promise<void> {
    const controller = new AbortController();
    keeper.keep(delivery, () => controller.abort(new Error("lease lost")));
    const context: HandlerContext = {
      signal: controller.signal,
      progress: async (metadata) => {
        const result = await client.extend(options.ns, [{ receipt: delivery.receipt, leaseMs: options.leaseMs, metadata }]);
        return result.stale.length === 0;
      },
    };
    const call = async (): Promise<WorkResult> => await handler(delivery, context);
    let failure: { error: unknown } | null = null;
    let value: WorkResult;
    try {
      value = await (otel === null ? call() : inConsumerSpan(otel, delivery, call));
    } catch (error) {
      failure = { error };
    } finally {
      keeper.release(delivery);
    }
    // The request leaves before the slot frees, so the loop's next dequeue follows it in the same turn.
    const delayMs = failure === null ? 0 : nackDelayMs(delivery.attempt, backoffBaseMs, backoffMsMax);
    let settle: Promise<{ stale: string[] }>;
    try {
      settle =
        failure === null
          ? client.ack(options.ns, [delivery.receipt], typeof value === "string" || value instanceof Uint8Array ? { results: [value] } : undefined)
          : client.nack(options.ns, [{ receipt: delivery.receipt, delayMs }]);
    } catch (error) {
      // A client that throws before it returns a promise still frees the slot; the error is reported below.
      settle = Promise.reject(error);
    }
    running--;
    settling++;
    wakeLoop();
    try {
      const result = await settle;
      if (failure === null) emit({ kind: "acked", delivery, stale: result.stale.length > 0 });
      else emit({ kind: "nacked", delivery, delayMs, error: failure.error, stale: result.stale.length > 0 });
    } catch (error) {
      // The lease will expire and the server redeliver: at-least-once holds.
      emit({ kind: "error", during: failure === null ? "ack" : "nack", error, delivery });
    } finally {
      settling--;
    }
  }

  function start(delivery: Delivery, otel: Awaited<ReturnType<typeof loadOtel>>): void {
    running++;
    const task = runOne(delivery, otel).finally(() => {
      tasks.delete(task);
      wakeLoop();
    });
    tasks.add(task);
  }

  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function loop(): Promise<void> {
    const otel = options.trace === false ? null : await loadOtel();
    while (!stopping) {
      // A slot is free once its ack or nack left; held deliveries (running + settling) stay within 2 x concurrency.
      const free = options.concurrency - running - Math.max(0, settling - options.concurrency);
      if (free <= 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      let deliveries: Delivery[];
      try {
        deliveries = await client.dequeue(options.ns, {
          topics: [{ topic: options.topic, count: free }],
          capabilities: options.capabilities,
          waitMs,
          leaseMs: options.leaseMs,
        });
      } catch (error) {
        if (error instanceof OrqError && error.code === "CLOSED") break;
        emit({ kind: "error", during: "dequeue", error });
        const hintMs = error instanceof OrqError ? error.details.retryAfterMs : undefined;
        if (!stopping) await pause(hintMs ?? errorPauseMs);
        continue;
      }
      for (const delivery of deliveries) start(delivery, otel);
    }
    // Let every running handler finish and be acked or nacked.
    while (tasks.size > 0) await Promise.all([...tasks]);
  }

  const done = loop();
  return {
    stop() {
      stopping = true;
      wakeLoop();
      return done;
    },
    done,
    get running() {
      return running;
    },
  };
}
