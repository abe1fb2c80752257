// The beanstalkd-compatible port (--beanstalk-port): its connections on the
// listener the MessagePack port uses too (server/listener.ts: the
// connections cap, an assertion from any socket event stopping the process),
// and what they share (the engine, the namespace, FrontEndState, the output
// buffers, the request-done hook). It owns no timer: reserves wait on parked
// engine dequeues, whose timeouts the MessagePack server's deadline timer
// runs (serve.ts starts both on one engine). Shutdown: beginDrain stops
// accepting and answers DRAINING to puts (waiting reserves are answered
// TIMED_OUT when the engine releases its waiters); close ends every
// connection after its queued answers.

import { randomBytes } from "node:crypto";
import type { Clock } from "../lib/clock.ts";
import type { Limits } from "../limits.ts";
import { exitOnFatal, type FatalHandler } from "../server/fatal.ts";
import { Listener } from "../server/listener.ts";
import type { Logger } from "../server/logger.ts";
import { OutputBufferPool } from "../server/output-buffers.ts";
import type { RequestDone } from "../server/request-done.ts";
import type { BeanstalkEngine, FrontEnd } from "./command-context.ts";
import { BeanstalkConnection, type ConnectionServices } from "./connection.ts";
import { FrontEndState } from "./front-end-state.ts";

export interface BeanstalkServerOptions {
  host: string;
  /** 0 picks a free port; `port` on the started server is the real one. */
  port: number;
  engine: BeanstalkEngine;
  /** The namespace whose topics are the tubes. */
  namespace: string;
  limits: Limits;
  clock: Clock;
  version: string;
  logger: Logger;
  /** What an AssertionError while serving does; default: log at fatal level and exit 70 (server/fatal.ts). */
  fatal?: FatalHandler;
  /** Once per answered command (server/request-done.ts): the metrics and the memory collectors in `orq serve`. */
  onRequestDone?: RequestDone;
  /** Test-only (ORQ_TEST_ASSERT_OP): the command that fails an assertion instead of running. */
  testAssertCommand?: string | null;
}

export class BeanstalkServer {
  private readonly listener: Listener<BeanstalkConnection>;
  private readonly fe: FrontEnd;

  private constructor(options: BeanstalkServerOptions) {
    const state = new FrontEndState(options.limits.beanstalkJobCountersMax, options.clock.nowMs(), randomBytes(8).toString("hex"));
    this.fe = { engine: options.engine, ns: options.namespace, limits: options.limits, clock: options.clock, state, version: options.version };
    const fatal = options.fatal ?? exitOnFatal(options.logger);
    const services: ConnectionServices = {
      logger: options.logger,
      // Every connection's output buffers come from here (server/output-buffers.ts).
      outputBuffers: new OutputBufferPool(),
      fatal,
      onRequestDone: options.onRequestDone ?? null,
      testAssertCommand: options.testAssertCommand ?? null,
    };
    this.listener = new Listener<BeanstalkConnection>({
      host: options.host,
      port: options.port,
      connectionsMax: options.limits.connectionsMax,
      frontEnd: "beanstalk",
      logger: options.logger,
      fatal,
      accept: (id, socket) => new BeanstalkConnection(id, socket, this.fe, services),
      // beanstalkd has no answer for a refused connection: it is closed.
      refusal: () => null,
    });
  }

  static start(options: BeanstalkServerOptions): BeanstalkServer {
    return new BeanstalkServer(options);
  }

  get port(): number {
    return this.listener.port;
  }

  get connectionCount(): number {
    return this.listener.connectionCount;
  }

  /** Stop accepting; puts answer DRAINING from now on. */
  beginDrain(): void {
    if (this.fe.state.draining) return;
    this.fe.state.draining = true;
    this.listener.stopAccepting();
  }

  /** End every connection after its queued answers, and the listener. */
  close(): void {
    this.fe.state.draining = true;
    this.listener.close();
  }
}
