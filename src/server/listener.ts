// The TCP listener both front ends stand on (the MessagePack port, server.ts,
// and the beanstalkd port, beanstalk/beanstalk-server.ts). It accepts
// connections up to limits.connectionsMax, and none once it stops accepting
// (shutdown), numbers them, and routes each socket's events to its
// connection. An AssertionError thrown from any socket event goes to the
// fatal handler (fatal.ts): Bun does not stop on a throw inside a socket
// callback, it hands it to the socket's error callback and carries on, and a
// broken invariant must stop the process whichever port met it.

import type { Socket, TCPSocketListener } from "bun";
import { AssertionError } from "../lib/assert.ts";
import type { FatalHandler } from "./fatal.ts";
import type { Logger } from "./logger.ts";

/** The socket operations a connection uses (Bun's TCP socket). */
export interface ConnectionSocket {
  /** Bytes accepted, or -1 when closed (Bun's socket.write; the offset and length pick a range of `data`). */
  write(data: Uint8Array, byteOffset?: number, byteLength?: number): number;
  end(): void;
  terminate(): void;
  pause?(): unknown;
  resume?(): unknown;
}

/** What the listener drives: one accepted socket's connection. */
export interface ListenedConnection {
  readonly id: number;
  onData(chunk: Uint8Array): void;
  /** The socket takes more bytes again. */
  onDrain(): void;
  /** The socket closed, from either side. */
  onClose(): void;
  /** Shutdown: close once what is queued has been written. */
  closeWhenFlushed(): void;
}

/** Why a new connection is turned away: shutdown has begun, or connectionsMax are open. */
export type RefusalReason = "draining" | "too many connections";

export interface ListenerOptions<C extends ListenedConnection> {
  host: string;
  /** 0 picks a free port; `port` on the listener is the real one. */
  port: number;
  connectionsMax: number;
  /** The front end in log lines and in the fatal handler's context ("orq", "beanstalk"). */
  frontEnd: string;
  logger: Logger;
  fatal: FatalHandler;
  /** The connection for an accepted socket. */
  accept(id: number, socket: ConnectionSocket): C;
  /** The bytes a refused client gets before its socket is closed (the protocol's error), or null for none. */
  refusal(reason: RefusalReason): Uint8Array | null;
  /** After a connection handled a chunk (the MessagePack port re-arms its deadline timer). */
  afterData?(): void;
  /** After a connection's socket closed and it left the listener. */
  closed?(connection: C): void;
}

interface SocketData<C> {
  connection: C | null;
}

export class Listener<C extends ListenedConnection> {
  private readonly listener: TCPSocketListener<SocketData<C>>;
  private readonly open = new Map<number, C>();
  private nextConnectionId = 1;
  private accepting = true;

  constructor(private readonly options: ListenerOptions<C>) {
    // Bun.listen binds synchronously: once this returns, the port accepts connections.
    this.listener = Bun.listen<SocketData<C>>({
      hostname: options.host,
      port: options.port,
      socket: {
        open: (socket) => this.onOpen(socket),
        data: (socket, chunk) => {
          const connection = socket.data.connection;
          if (connection === null) return;
          try {
            connection.onData(chunk);
          } catch (error) {
            this.thrown(error, connection.id);
          }
          options.afterData?.();
        },
        drain: (socket) => {
          const connection = socket.data.connection;
          try {
            connection?.onDrain();
          } catch (error) {
            this.thrown(error, connection?.id);
          }
        },
        close: (socket) => this.onClose(socket),
        error: (socket, error) => {
          const connection = socket.data.connection?.id;
          if (error instanceof AssertionError) this.options.fatal(error, { front_end: options.frontEnd, connection });
          else options.logger.debug("socket error", { front_end: options.frontEnd, connection, error });
        },
      },
      data: { connection: null },
    });
  }

  get host(): string {
    return this.listener.hostname;
  }

  get port(): number {
    return this.listener.port;
  }

  get connectionCount(): number {
    return this.open.size;
  }

  /** The open connections, in the order they were accepted. */
  connections(): IterableIterator<C> {
    return this.open.values();
  }

  /** Shutdown's first step: accept no more connections; the open ones stay. */
  stopAccepting(): void {
    this.accepting = false;
    this.listener.stop(false);
  }

  /** Shutdown's last step: close every connection after its queued output, and the listening socket. */
  close(): void {
    this.accepting = false;
    for (const connection of this.open.values()) connection.closeWhenFlushed();
    this.listener.stop(true);
  }

  private onOpen(socket: Socket<SocketData<C>>): void {
    const { logger, frontEnd } = this.options;
    if (!this.accepting || this.open.size >= this.options.connectionsMax) {
      const reason: RefusalReason = this.accepting ? "too many connections" : "draining";
      const bytes = this.options.refusal(reason);
      if (bytes === null) socket.end();
      else socket.end(bytes);
      logger.warn("connection refused", { front_end: frontEnd, reason, remote: socket.remoteAddress });
      return;
    }
    socket.setNoDelay(true);
    const id = this.nextConnectionId++;
    const connection = this.options.accept(id, socket);
    socket.data = { connection };
    this.open.set(id, connection);
    logger.debug("connection opened", { front_end: frontEnd, connection: id, remote: socket.remoteAddress });
  }

  private onClose(socket: Socket<SocketData<C>>): void {
    const connection = socket.data.connection;
    if (connection === null) return;
    socket.data.connection = null;
    this.open.delete(connection.id);
    try {
      connection.onClose();
    } catch (error) {
      this.thrown(error, connection.id);
    }
    this.options.logger.debug("connection closed", { front_end: this.options.frontEnd, connection: connection.id });
    this.options.closed?.(connection);
  }

  /** A throw from a connection's event: an assertion stops the process; anything else goes on to Bun (the error callback). */
  private thrown(error: unknown, connection: number | undefined): void {
    if (!(error instanceof AssertionError)) throw error;
    this.options.fatal(error, { front_end: this.options.frontEnd, connection });
  }
}
