// The shape of the op table: each op is data (its namespace rule, whether it
// needs auth, whether it is refused while draining) plus one handler. The
// dispatcher (dispatcher.ts) runs the generic checks once, so handlers only
// decode their own fields, call the engine, and encode the reply.

import type { DequeueInput, EngineApi, Failure } from "../engine/api.ts";
import { assert } from "../lib/assert.ts";
import type { Limits } from "../limits.ts";
import type { OpName } from "../protocol/op-names.ts";
import type { WireClusterMap, WireError } from "../protocol/wire-types.ts";
import type { NamespaceScope, TokenTable } from "./auth.ts";
import type { RequestFailure, RequestReader, Source } from "./request-reader.ts";
import type { Commit } from "../storage/writer.ts";

export interface ServerInfo {
  version: string;
  nodeId: string;
  shards: number;
  /** Cluster mode: the current shard map, for hello and the `cluster` op; null on a single node. */
  clusterMap?: (() => WireClusterMap) | null;
  /** Namespaces kept only in memory (hello's and stats' say so): ["*"] for the whole server (--store memory); absent or empty when none. */
  memoryNamespaces?: readonly string[];
}

/** Per-connection state an op may read or change (hello changes the scope). */
export interface Session {
  readonly connectionId: number;
  /** What this connection may touch; null until a hello with a valid token (when auth is on). */
  scope: NamespaceScope | null;
  /** Set by hello from the token's role: a read-only session may call only ops with changesState false. */
  readOnly: boolean;
}

/**
 * What a handler may use besides its request. The dispatcher fills one in
 * for each request: a handler reads it during its synchronous call and must
 * not keep it (or read it from a later turn); it copies what it needs.
 */
export interface OpContext {
  engine: EngineApi;
  limits: Limits;
  nowMs: number;
  session: Session;
  tokens: TokenTable;
  serverInfo: ServerInfo;
  /** Server-level gauges merged into `stats`. */
  serverStats(): Record<string, number>;
  /**
   * A RequestReader the hot ops (dequeue, ack) reuse instead of building one
   * per request: reset it first, keep nothing of it past the handler (its
   * failure object is fresh each time, so returning that is fine).
   */
  readonly reader: RequestReader;
  /**
   * The reply outcome the hot ops (dequeue, ack) return instead of a fresh
   * one: see LentReply. Filled through lentReply / replyOnCommit.
   */
  readonly lentReply: LentReply;
  /**
   * The input the dequeue handler decodes every request into (its topics
   * list and entries reused): the engine keeps none of its input (api.ts,
   * DequeueInput) and the handler runs to its end synchronously, so no
   * request needs one of its own (docs/decisions/013-lent-replies-and-scratch.md).
   */
  readonly dequeueInput: DequeueInput;
}

/** A dequeue input to decode into (OpContext.dequeueInput). */
export function scratchDequeueInput(): DequeueInput {
  return { topics: [], capabilities: null, waitMs: 0, leaseMs: null, owner: 0 };
}

/**
 * What a handler produced. A failure (request decoding or engine) and a
 * rejected `durable` are turned into wire errors by error-mapping.ts, the one
 * place that does so; `error` is for the protocol-level codes a handler may
 * raise itself (UNAUTHORIZED from hello, BAD_REQUEST from cluster on a single node).
 */
export type OpOutcome =
  | ReplyOutcome
  | { kind: "failure"; failure: Failure | RequestFailure }
  | { kind: "error"; error: WireError }
  | { kind: "parked"; waiter: Promise<OpOutcome> };

export interface ReplyOutcome {
  kind: "reply";
  value: Source;
  durable: Promise<void> | null;
  commit?: Commit | undefined;
}

/**
 * One reply outcome per dispatcher (OpContext's), lent to a handler for its
 * return value instead of a fresh object per request (a JS-heap cell per
 * dequeue and per ack: docs/decisions/013-lent-replies-and-scratch.md). The
 * dispatcher takes its fields out before it does anything else with the
 * request and then clears it (complete()), so it is
 * never read after the request it was filled for: a handler must return it
 * at once, and a parked dequeue's waiter, read in a later turn, settles with
 * a fresh outcome (reply()), never with this one.
 */
export class LentReply implements ReplyOutcome {
  readonly kind = "reply";
  value: Source = noReply;
  durable: Promise<void> | null = null;
  commit: Commit | undefined = undefined;

  /** Drop the last request's reply and commit (they are not kept alive until the next request). */
  clear(): void {
    this.value = noReply;
    this.durable = null;
    this.commit = undefined;
  }
}

const noReply: Source = Object.freeze({});

export type NamespaceRule = "required" | "optional" | "none";

export interface OpSpec {
  /** Whether the request carries `ns`; the dispatcher checks it and the token's scope. */
  namespace: NamespaceRule;
  /** False only for hello and ping: they work before authentication. */
  needsAuth: boolean;
  /** False for every op that starts or changes work: refused with SHUTTING_DOWN while draining. */
  allowedWhileDraining: boolean;
  /** True for every op that changes an item, a topic or a lease: refused (FORBIDDEN) to a read-only token. */
  changesState: boolean;
  handle(request: Source, ns: string | null, ctx: OpContext): OpOutcome;
}

/**
 * An op whose requests must carry `ns`. The dispatcher refuses a request
 * without a valid one before any handler runs, so the handler is given a
 * string, not a `string | null` it would have to assert away.
 */
export interface NamespacedOpSpec extends Omit<OpSpec, "namespace" | "handle"> {
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome;
}

export function namespacedOp(spec: NamespacedOpSpec): OpSpec {
  const { handle, ...flags } = spec;
  return {
    ...flags,
    namespace: "required",
    handle(request: Source, ns: string | null, ctx: OpContext): OpOutcome {
      assert(ns !== null, "a namespaced op ran without the namespace the dispatcher checks");
      return handle(request, ns, ctx);
    },
  };
}

/** Every op of the contract; a missing handler is a type error. */
export type OpTable = Readonly<Record<OpName, OpSpec>>;

export function reply(value: Source, durable: Promise<void> | null = null): OpOutcome {
  return { kind: "reply", value, durable };
}

/** reply(), in the context's lent outcome (LentReply): return it at once. */
export function lentReply(ctx: OpContext, value: Source, durable: Promise<void> | null): OpOutcome {
  return lend(ctx, value, durable, undefined);
}

/**
 * A reply sent once `commit` is durable (an UNAVAILABLE error if it fails),
 * in the context's lent outcome (LentReply): return it at once. The
 * dispatcher listens on the commit (storage/writer.ts), one small object per
 * request, where waiting on a promise takes about nine JS-heap cells
 * (docs/decisions/013-lent-replies-and-scratch.md).
 */
export function replyOnCommit(ctx: OpContext, value: Source, commit: Commit): OpOutcome {
  return lend(ctx, value, null, commit);
}

/** The context's lent outcome, filled for this request. */
function lend(ctx: OpContext, value: Source, durable: Promise<void> | null, commit: Commit | undefined): OpOutcome {
  const outcome = ctx.lentReply;
  outcome.value = value;
  outcome.durable = durable;
  outcome.commit = commit;
  return outcome;
}

export function failed(failure: Failure | RequestFailure): OpOutcome {
  return { kind: "failure", failure };
}
