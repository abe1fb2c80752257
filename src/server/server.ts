// The MessagePack port: its connections on the shared listener (listener.ts),
// the dispatcher they feed, the deadline timer, and graceful shutdown (stop
// accepting, refuse new work, release parked dequeues, wait until every reply
// has been sent, close).

import type { EngineApi } from "../engine/api.ts";
import type { Clock } from "../lib/clock.ts";
import type { Limits } from "../limits.ts";
import { FrameEncoder } from "../protocol/frame-encoder.ts";
import { allNamespaces, type TokenTable } from "./auth.ts";
import { Connection } from "./connection.ts";
import { DeadlineTimer } from "./deadline-timer.ts";
import { Dispatcher, type RequestSource } from "./dispatcher.ts";
import { exitOnFatal, type FatalHandler } from "./fatal.ts";
import { type ConnectionSocket, Listener, type RefusalReason } from "./listener.ts";
import type { Logger } from "./logger.ts";
import type { ServerInfo } from "./op-types.ts";
import { OutputBufferPool } from "./output-buffers.ts";
import type { RequestDone } from "./request-done.ts";
import type { Source } from "./request-reader.ts";

export interface ServerOptions {
  host: string;
  /** 0 picks a free port; `port` on the started server is the real one. */
  port: number;
  engine: EngineApi;
  limits: Limits;
  clock: Clock;
  tokens: TokenTable;
  serverInfo: ServerInfo;
  logger: Logger;
  /** Once per answered request (request-done.ts): the metrics and the memory collectors in `orq serve`. */
  onRequestDone?: RequestDone;
  /** What an AssertionError while serving does; default: log at fatal level and exit 70 (fatal.ts). */
  fatal?: FatalHandler;
  /** Test-only: the op that asserts inside its handler (ORQ_TEST_ASSERT_OP; dispatcher.ts). */
  testAssertOp?: string | null;
}

/** Retry hint sent to a connection refused because the server is full. */
const connectionsFullRetryAfterMs = 1000;

export class OrqServer {
  private readonly listener: Listener<Connection>;
  private readonly dispatcher: Dispatcher;
  private readonly timer: DeadlineTimer;
  private readonly encoder = new FrameEncoder();
  /** Every connection's output buffers come from here (output-buffers.ts). */
  private readonly outputBuffers = new OutputBufferPool();
  private idleWaiters: Array<() => void> = [];
  private closedWaiters: Array<() => void> = [];
  private readonly startedAtMs: number;
  private readonly fatal: FatalHandler;

  private constructor(private readonly options: ServerOptions) {
    this.startedAtMs = options.clock.nowMs();
    this.fatal = options.fatal ?? exitOnFatal(options.logger);
    this.timer = new DeadlineTimer(options.engine, options.clock);
    this.dispatcher = new Dispatcher({
      engine: options.engine,
      limits: options.limits,
      clock: options.clock,
      tokens: options.tokens,
      serverInfo: options.serverInfo,
      logger: options.logger,
      serverStats: () => this.stats(),
      onRequestDone: options.onRequestDone,
      fatal: this.fatal,
      testAssertOp: options.testAssertOp ?? null,
    });
    this.listener = new Listener<Connection>({
      host: options.host,
      port: options.port,
      connectionsMax: options.limits.connectionsMax,
      frontEnd: "orq",
      logger: options.logger,
      fatal: this.fatal,
      accept: (id, socket) => this.accept(id, socket),
      refusal: (reason) => this.refusal(reason),
      afterData: () => this.timer.rearm(),
      closed: (connection) => this.onClosed(connection),
    });
    this.timer.rearm();
  }

  /** Listen: when this returns, the listener accepts connections (Bun.listen binds synchronously). */
  static start(options: ServerOptions): OrqServer {
    return new OrqServer(options);
  }

  get host(): string {
    return this.listener.host;
  }

  get port(): number {
    return this.listener.port;
  }

  get connectionCount(): number {
    return this.listener.connectionCount;
  }

  get draining(): boolean {
    return this.dispatcher.draining;
  }

  /**
   * First step of shutdown: stop accepting connections, answer SHUTTING_DOWN
   * to new work, and answer parked dequeues now with what they have.
   */
  beginDrain(): void {
    if (this.dispatcher.draining) return;
    this.dispatcher.draining = true;
    this.listener.stopAccepting();
    this.options.engine.releaseWaiters();
    this.timer.rearm();
  }

  /**
   * One decoded request from an in-process caller (the web dashboard), through
   * the same dispatcher and checks as a TCP connection's requests.
   */
  handleRequest(source: RequestSource, request: Source): void {
    this.dispatcher.handleRequest(source, request);
    this.timer.rearm();
  }

  /** The engine gained an earlier deadline outside a request (e.g. a lease granted during a tick): re-arm the timer. */
  rearmDeadlines(): void {
    this.timer.rearm();
  }

  /** Resolves when no connection has a reply pending or unsent. */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Resolves when every connection has closed, or after graceMs: a client
   * that ignores the server's FIN must not hold up the exit.
   */
  whenAllClosed(graceMs: number): Promise<void> {
    if (this.listener.connectionCount === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      this.closedWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Last step: close every connection (after its queued output) and the listener. */
  close(): void {
    this.dispatcher.draining = true;
    this.timer.stop();
    this.listener.close();
  }

  /** Server-level gauges (also merged into the `stats` op's reply under `server`). */
  stats(): Record<string, number> {
    let inflight = 0;
    let unsent = 0;
    for (const connection of this.listener.connections()) {
      inflight += connection.inflightCount;
      unsent += connection.unsentBytes;
    }
    return {
      connections: this.listener.connectionCount,
      requests_in_flight: inflight,
      output_bytes_unsent: unsent,
      uptime_ms: this.options.clock.nowMs() - this.startedAtMs,
    };
  }

  private accept(id: number, socket: ConnectionSocket): Connection {
    const scope = this.options.tokens.required ? null : allNamespaces;
    const { limits, logger } = this.options;
    return new Connection(id, socket, scope, limits, this.dispatcher, this.encoder, logger, { onSettled: () => this.checkIdle() }, this.outputBuffers);
  }

  /** A refused client is told why, with id 0, before its socket closes. */
  private refusal(reason: RefusalReason): Uint8Array {
    const error =
      reason === "draining"
        ? { code: "SHUTTING_DOWN", message: "the server is shutting down" }
        : { code: "UNAVAILABLE", message: "too many connections", details: { retry_after_ms: connectionsFullRetryAfterMs } };
    return this.encoder.encode({ id: 0, ok: false, error });
  }

  private onClosed(connection: Connection): void {
    this.options.engine.cancelWaiters(connection.id);
    this.checkIdle();
    if (this.listener.connectionCount === 0 && this.closedWaiters.length > 0) {
      const waiters = this.closedWaiters;
      this.closedWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private isIdle(): boolean {
    for (const connection of this.listener.connections()) if (!connection.idle) return false;
    return true;
  }

  private checkIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
