// The beanstalkd-compatible listener (--beanstalk-port): accepts connections
// up to limits.connectionsMax, wires socket events to BeanstalkConnections,
// and holds what they share (the engine, the namespace, FrontEndState). It
// owns no timer: reserves wait on parked engine dequeues, whose timeouts the
// MessagePack server's deadline timer runs (serve.ts starts both on one
// engine). Shutdown: beginDrain stops accepting and answers DRAINING to puts
// (waiting reserves are answered TIMED_OUT when the engine releases its
// waiters); close ends every connection after its queued answers.

import { randomBytes } from "node:crypto";
import type { Socket, TCPSocketListener } from "bun";
import type { Clock } from "../lib/clock.ts";
import type { Limits } from "../limits.ts";
import type { Logger } from "../server/logger.ts";
import { OutputBufferPool } from "../server/output-buffers.ts";
import type { BeanstalkEngine, FrontEnd } from "./command-context.ts";
import { BeanstalkConnection } from "./connection.ts";
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
}

interface SocketData {
  connection: BeanstalkConnection | null;
}

export class BeanstalkServer {
  private readonly listener: TCPSocketListener<SocketData>;
  private readonly connections = new Map<number, BeanstalkConnection>();
  private readonly fe: FrontEnd;
  /** Every connection's output buffers come from here (server/output-buffers.ts). */
  private readonly outputBuffers = new OutputBufferPool();
  private nextConnectionId = 1;

  private constructor(private readonly options: BeanstalkServerOptions) {
    const state = new FrontEndState(options.limits.beanstalkJobCountersMax, options.clock.nowMs(), randomBytes(8).toString("hex"));
    this.fe = { engine: options.engine, ns: options.namespace, limits: options.limits, clock: options.clock, state, version: options.version };
    this.listener = Bun.listen<SocketData>({
      hostname: options.host,
      port: options.port,
      socket: {
        open: (socket) => this.onOpen(socket),
        data: (socket, chunk) => socket.data.connection?.onData(chunk),
        drain: (socket) => socket.data.connection?.onDrain(),
        close: (socket) => this.onClose(socket),
        error: (socket, error) => this.options.logger.debug("beanstalk socket error", { connection: socket.data.connection?.id, error }),
      },
      data: { connection: null },
    });
  }

  static start(options: BeanstalkServerOptions): BeanstalkServer {
    return new BeanstalkServer(options);
  }

  get port(): number {
    return this.listener.port;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Stop accepting; puts answer DRAINING from now on. */
  beginDrain(): void {
    if (this.fe.state.draining) return;
    this.fe.state.draining = true;
    this.listener.stop(false);
  }

  /** End every connection after its queued answers, and the listener. */
  close(): void {
    this.fe.state.draining = true;
    for (const connection of this.connections.values()) connection.closeWhenFlushed();
    this.listener.stop(true);
  }

  private onOpen(socket: Socket<SocketData>): void {
    if (this.connections.size >= this.options.limits.connectionsMax || this.fe.state.draining) {
      socket.end();
      this.options.logger.warn("beanstalk connection refused", { reason: this.fe.state.draining ? "draining" : "too many connections" });
      return;
    }
    socket.setNoDelay(true);
    const id = this.nextConnectionId++;
    const connection = new BeanstalkConnection(id, socket, this.fe, this.options.logger, this.outputBuffers);
    socket.data = { connection };
    this.connections.set(id, connection);
  }

  private onClose(socket: Socket<SocketData>): void {
    const connection = socket.data.connection;
    if (connection === null) return;
    socket.data.connection = null;
    connection.onClose();
    this.connections.delete(connection.id);
  }
}
