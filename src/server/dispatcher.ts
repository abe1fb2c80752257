// Turns one frame body into one request and its reply. The generic checks run
// here, once, in this order, before any handler: decodable map (else
// BAD_FRAME, connection closed), id (else BAD_REQUEST with id 0), op name
// (UNKNOWN_OP), draining (SHUTTING_DOWN), authentication (UNAUTHORIZED),
// namespace shape (BAD_REQUEST/TOO_LARGE on `ns`), scope (FORBIDDEN), and a
// read-only token's role (FORBIDDEN for an op that changes state). The web
// dashboard (src/dashboard/) hands its already-built requests to
// handleRequest, so its auth and scope go through these same checks.
// Replies that wait for durability or a parked dequeue are sent when they
// settle, so later requests are not held up (replies go out of order). A
// reply that waits for a commit (ack) listens on it (CommittedReply) rather
// than on a promise: the listener is called from the commit's own turn. A
// reply is queued before its request counts as finished, so a shutdown that
// waits for idleness never closes a connection ahead of its last replies.
//
// A thrown AssertionError is not an answer: handleFrame rethrows it (the
// server hands it to its fatal handler, which stops the process; fatal.ts),
// and one that rejects a reply's promise goes to the fatal handler directly.
// Anything else thrown is a bug answered INTERNAL (error-mapping.ts).

import type { EngineApi } from "../engine/api.ts";
import { type Clock, monotonicStopwatch } from "../lib/clock.ts";
import { AssertionError, assert } from "../lib/assert.ts";
import type { Limits } from "../limits.ts";
import { isPlainMap } from "../protocol/msgpack-codec.ts";
import { RequestFrameDecoder } from "../protocol/request-frame-decoder.ts";
import { AckReply, DeliveriesReply } from "../protocol/reply-encoder.ts";
import { requestIdMax, type WireError } from "../protocol/wire-types.ts";
import { scopeAllows, type TokenTable } from "./auth.ts";
import { failureToWire, ThrownToWire } from "./error-mapping.ts";
import type { FatalHandler } from "./fatal.ts";
import type { Logger } from "./logger.ts";
import { lookupOp } from "./op-table.ts";
import { LentReply, scratchDequeueInput, type OpContext, type OpOutcome, type ServerInfo, type Session } from "./op-types.ts";
import { RequestReader, type Source } from "./request-reader.ts";
import type { CommitListener } from "../storage/writer.ts";

/** What the dispatcher needs from a connection. */
export interface RequestSource {
  readonly session: Session;
  /** Queue one reply map for sending (dropped if the connection has closed). */
  send(reply: Source): void;
  /** Send an error with id 0, then close: the byte stream cannot be trusted any more. */
  fail(error: WireError): void;
  /** A request whose reply will come later started / finished. */
  requestStarted(): void;
  requestFinished(): void;
  /**
   * False for the server's own background requests (the dashboard's history
   * sampler): they skip onRequestDone, so they neither show in the request
   * metrics nor count as client traffic for the idle collection.
   */
  readonly metered?: boolean;
}

export interface DispatcherOptions {
  engine: EngineApi;
  limits: Limits;
  clock: Clock;
  tokens: TokenTable;
  serverInfo: ServerInfo;
  logger: Logger;
  serverStats(): Record<string, number>;
  /** Called once per answered request (metrics): code is "OK" or the error code; the duration includes any wait. */
  onRequestDone?: (op: string, code: string, durationMs: number) => void;
  /** Stops the process on an AssertionError that rejects a reply's promise (fatal.ts). */
  fatal: FatalHandler;
  /**
   * Test-only (docs/OPERATIONS.md, ORQ_TEST_ASSERT_OP): the op that fails an
   * assertion inside its handler, so an end-to-end test can watch the process
   * stop. Null in production.
   */
  testAssertOp?: string | null;
}

export class Dispatcher {
  private readonly decoder: RequestFrameDecoder;
  private readonly testAssertOp: string | null;
  /**
   * One of each for every request, filled in per request rather than built:
   * handlers run synchronously and keep neither past their return (OpContext
   * says so), so no request allocates its own
   * (docs/decisions/013-lent-replies-and-scratch.md).
   */
  private readonly nsReader = new RequestReader();
  private readonly ctx: OpContext;
  /** Numbers this server's internal errors (error-mapping.ts). */
  private readonly thrown: ThrownToWire;
  draining = false;

  constructor(private readonly options: DispatcherOptions) {
    this.decoder = new RequestFrameDecoder({ depthMax: options.limits.decodeDepthMax, frameBytesMax: options.limits.frameBytesMax });
    this.testAssertOp = options.testAssertOp ?? null;
    this.thrown = new ThrownToWire(options.logger);
    this.ctx = {
      engine: options.engine,
      limits: options.limits,
      nowMs: 0,
      session: { connectionId: 0, scope: null, readOnly: true },
      tokens: options.tokens,
      serverInfo: options.serverInfo,
      serverStats: options.serverStats,
      reader: new RequestReader(),
      lentReply: new LentReply(),
      dequeueInput: scratchDequeueInput(),
    };
  }

  /** One frame body: bytes [start, end) of `bytes` (the whole array by default), read during this call only. */
  handleFrame(source: RequestSource, bytes: Uint8Array, start = 0, end = bytes.length): void {
    let request: unknown;
    try {
      request = this.decoder.decodeBody(bytes, start, end);
    } catch (error) {
      source.fail({ code: "BAD_FRAME", message: `undecodable frame: ${error instanceof Error ? error.message : String(error)}` });
      return;
    }
    if (!isPlainMap(request)) {
      source.fail({ code: "BAD_FRAME", message: "a frame must hold one MessagePack map" });
      return;
    }
    this.handleRequest(source, request);
  }

  /** One decoded request map: the generic checks, then the op's handler. */
  handleRequest(source: RequestSource, request: Source): void {
    const startMs = this.options.onRequestDone === undefined ? 0 : monotonicStopwatch.nowMs();
    const opLabel = typeof request.op === "string" ? request.op : "unknown";
    const id = request.id;
    if (typeof id !== "number" || !Number.isInteger(id) || id < 1 || id > requestIdMax) {
      this.answer(source, opLabel, startMs, errorReply(0, { code: "BAD_REQUEST", message: "id: must be an integer from 1 to 2^53-1", details: { field: "id" } }));
      return;
    }
    const opName = request.op;
    if (typeof opName !== "string") {
      this.answer(source, opLabel, startMs, errorReply(id, { code: "BAD_REQUEST", message: "op: must be a string", details: { field: "op" } }));
      return;
    }
    const spec = lookupOp(opName);
    if (spec === undefined) {
      this.answer(source, opLabel, startMs, errorReply(id, { code: "UNKNOWN_OP", message: `unknown op ${JSON.stringify(opName.slice(0, 64))}` }));
      return;
    }
    if (this.draining && !spec.allowedWhileDraining) {
      this.answer(source, opLabel, startMs, errorReply(id, { code: "SHUTTING_DOWN", message: "the server is shutting down" }));
      return;
    }
    const session = source.session;
    if (spec.needsAuth && session.scope === null) {
      this.answer(source, opLabel, startMs, errorReply(id, { code: "UNAUTHORIZED", message: "send hello with a valid token first" }));
      return;
    }
    if (spec.changesState && session.readOnly) {
      this.answer(source, opLabel, startMs, errorReply(id, { code: "FORBIDDEN", message: `this token is read-only: it may not use ${opName}` }));
      return;
    }
    let ns: string | null = null;
    if (spec.namespace !== "none") {
      const reader = this.nsReader;
      reader.reset();
      ns =
        spec.namespace === "required"
          ? reader.requiredString(request, "ns", 1, this.options.limits.namespaceBytesMax)
          : reader.string(request, "ns", 1, this.options.limits.namespaceBytesMax);
      if (reader.failure !== null) {
        this.answer(source, opLabel, startMs, errorReply(id, failureToWire(reader.failure)));
        return;
      }
      if (ns !== null && session.scope !== null && !scopeAllows(session.scope, ns)) {
        this.answer(source, opLabel, startMs, errorReply(id, { code: "FORBIDDEN", message: `this token may not use namespace ${JSON.stringify(ns)}` }));
        return;
      }
    }
    const ctx = this.ctx;
    ctx.nowMs = this.options.clock.nowMs();
    ctx.session = session;
    let outcome: OpOutcome;
    try {
      if (opName === this.testAssertOp) assert(false, `test-only assertion in op ${opName} (ORQ_TEST_ASSERT_OP)`);
      outcome = spec.handle(request, ns, ctx);
    } catch (error) {
      // Indexes may be half-changed: no reply, the process stops (fatal.ts).
      if (error instanceof AssertionError) throw error;
      this.answer(source, opLabel, startMs, errorReply(id, this.thrown.map(error, { op: opName, id, connectionId: session.connectionId })));
      return;
    }
    this.complete(source, id, opName, startMs, outcome);
  }

  /** Queue a reply and tell the metrics hook, if any. Not private: CommittedReply calls it. */
  answer(source: RequestSource, op: string, startMs: number, reply: Source): void {
    source.send(reply);
    const onDone = this.options.onRequestDone;
    if (onDone === undefined || source.metered === false) return;
    const code = reply.ok === true ? "OK" : ((reply.error as WireError).code as string);
    onDone(op, code, monotonicStopwatch.nowMs() - startMs);
  }

  private complete(source: RequestSource, id: number, opName: string, startMs: number, outcome: OpOutcome): void {
    switch (outcome.kind) {
      case "failure":
        this.answer(source, opName, startMs, errorReply(id, failureToWire(outcome.failure)));
        return;
      case "error":
        this.answer(source, opName, startMs, errorReply(id, outcome.error));
        return;
      case "reply": {
        const value = outcome.value;
        const commit = outcome.commit;
        const durable = outcome.durable;
        // The lent outcome is read once, here, and not kept: a later request fills it again (LentReply).
        if (outcome === this.ctx.lentReply) this.ctx.lentReply.clear();
        if (commit !== undefined) {
          source.requestStarted();
          // Called when the commit settles (at once if it has): no promise, no closure.
          commit.listen(new CommittedReply(this, source, id, opName, startMs, value));
          return;
        }
        if (durable === null) {
          this.answer(source, opName, startMs, okReply(id, value));
          return;
        }
        this.answerWhenDurable(source, id, opName, startMs, value, durable);
        return;
      }
      case "parked":
        this.completeWhenSettled(source, id, opName, startMs, outcome.waiter);
        return;
    }
  }

  // The two waits below are methods of their own, not branches of complete():
  // a function that makes a closure allocates the scope it captures on every
  // call, so complete() would pay for one on every immediate reply too.

  /** Reply once `durable` settles (the op's writes are committed). */
  private answerWhenDurable(source: RequestSource, id: number, opName: string, startMs: number, value: Source, durable: Promise<void>): void {
    source.requestStarted();
    durable.then(
      () => {
        this.answer(source, opName, startMs, okReply(id, value));
        source.requestFinished();
      },
      (error: unknown) => this.answerRejected(source, id, opName, startMs, error),
    );
  }

  /** A parked dequeue: complete it with the outcome it settles with. */
  private completeWhenSettled(source: RequestSource, id: number, opName: string, startMs: number, waiter: Promise<OpOutcome>): void {
    source.requestStarted();
    waiter.then(
      (settled) => {
        this.complete(source, id, opName, startMs, settled);
        source.requestFinished();
      },
      (error: unknown) => this.answerRejected(source, id, opName, startMs, error),
    );
  }

  /**
   * A reply's promise rejected, or its commit failed: UNAVAILABLE or
   * INTERNAL, unless it was an assertion, which stops the process. Not
   * private: CommittedReply calls it.
   */
  answerRejected(source: RequestSource, id: number, opName: string, startMs: number, error: unknown): void {
    const connectionId = source.session.connectionId;
    if (error instanceof AssertionError) {
      this.options.fatal(error, { op: opName, request_id: id, connection: connectionId });
      return;
    }
    this.answer(source, opName, startMs, errorReply(id, this.thrown.map(error, { op: opName, id, connectionId })));
    source.requestFinished();
  }
}

/**
 * A reply waiting for its commit (OpOutcome's `commit`): the one object a
 * request allocates to wait, where a promise's `.then` cost two closures,
 * their scope, a derived promise and a reaction (the commit's own promise
 * and resolvers are not made at all).
 */
class CommittedReply implements CommitListener {
  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly source: RequestSource,
    private readonly id: number,
    private readonly opName: string,
    private readonly startMs: number,
    private readonly value: Source,
  ) {}

  committed(): void {
    this.dispatcher.answer(this.source, this.opName, this.startMs, okReply(this.id, this.value));
    this.source.requestFinished();
  }

  failed(error: unknown): void {
    this.dispatcher.answerRejected(this.source, this.id, this.opName, this.startMs, error);
  }
}

function okReply(id: number, value: Source): Source {
  // The hand-encoded replies already hold `ok` and a slot for the id, in wire order.
  if (value instanceof DeliveriesReply || value instanceof AckReply) {
    value.id = id;
    return value;
  }
  return Object.assign({ id, ok: true }, value);
}

function errorReply(id: number, error: WireError): Source {
  return { id, ok: false, error };
}
