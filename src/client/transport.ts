// The client's connection: one node:net socket (so the client runs on Bun and
// Node), frames both ways through src/protocol, requests pipelined with a
// promise per id, per-request timeouts, and reconnection with exponential
// backoff. After each (re)connect the first frame sent is hello (with the
// token), so later requests on the new connection are authenticated: the
// server starts requests in arrival order. Requests made while disconnected
// wait (their timeout running) and go out after the reconnect; requests that
// were in flight when the connection dropped reject with DISCONNECTED, since
// the client cannot know whether the server carried them out.

import { Socket } from "node:net";
import type { Decoder } from "@msgpack/msgpack";
import { isErrorCode } from "../protocol/error-codes.ts";
import { FrameDecoder, type FrameSink } from "../protocol/frame-decoder.ts";
import { FrameEncoder } from "../protocol/frame-encoder.ts";
import { createReplyDecoder, isPlainMap } from "../protocol/msgpack-codec.ts";
import { protocolVersion, requestIdMax, type WireError } from "../protocol/wire-types.ts";
import { realClientClock, type ClientTimer } from "./client-clock.ts";
import { OrqError, type OrqErrorDetails } from "./orq-error.ts";
import type { ClientOptions } from "./types.ts";

export type WireMap = Record<string, unknown>;

interface Pending {
  op: string;
  resolve(reply: WireMap): void;
  reject(error: OrqError): void;
  /** When the request times out (the clock's milliseconds). */
  deadlineMs: number;
  timeoutMs: number;
  /** The encoded frame while it still waits for a connection; null once written. */
  unsent: Uint8Array | null;
}

type State = "connecting" | "open" | "waiting_to_reconnect" | "closed";

export class Transport implements FrameSink {
  private socket: Socket | null = null;
  private state: State = "connecting";
  private readonly encoder = new FrameEncoder();
  private readonly replyDecoder: Decoder<undefined> = createReplyDecoder();
  private frameDecoder: FrameDecoder;
  private readonly pending = new Map<number, Pending>();
  private outgoing: Uint8Array[] = [];
  private flushScheduled = false;
  private nextId = 1;
  private reconnectAttempt = 0;
  private reconnectTimer: ClientTimer | null = null;
  /** One timer for all request timeouts: it sweeps the pending map while requests are pending. */
  private sweepTimer: ClientTimer | null = null;
  readonly options: Required<Omit<ClientOptions, "token" | "clientName" | "onEvent">> & Pick<ClientOptions, "token" | "clientName" | "onEvent">;

  constructor(options: ClientOptions) {
    this.options = {
      host: options.host ?? "127.0.0.1",
      port: options.port ?? 7420,
      token: options.token,
      clientName: options.clientName,
      helloRequired: options.helloRequired ?? true,
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      reconnect: options.reconnect ?? true,
      reconnectDelayMs: options.reconnectDelayMs ?? 100,
      reconnectDelayMsMax: options.reconnectDelayMsMax ?? 5_000,
      frameBytesMax: options.frameBytesMax ?? 256 * 1024 * 1024,
      clock: options.clock ?? realClientClock,
      trace: options.trace ?? true,
      onEvent: options.onEvent,
    };
    this.frameDecoder = new FrameDecoder(this.options.frameBytesMax, this);
  }

  get isOpen(): boolean {
    return this.state === "open";
  }

  /** First connection: resolves once TCP is up and the hello reply came back. */
  async open(): Promise<WireMap> {
    await this.connectSocket();
    this.state = "open";
    return this.request("hello", this.helloFields(), this.options.connectTimeoutMs, true);
  }

  /** Send one request; resolves with the reply's fields, rejects with OrqError. */
  request(op: string, fields: WireMap, timeoutMs: number = this.options.requestTimeoutMs, front = false): Promise<WireMap> {
    if (this.state === "closed") return Promise.reject(new OrqError("CLOSED", "the client is closed"));
    const id = this.nextId;
    this.nextId = this.nextId >= requestIdMax ? 1 : this.nextId + 1;
    const frame = this.encoder.encode({ ...fields, id, op });
    return new Promise<WireMap>((resolve, reject) => {
      const entry: Pending = { op, resolve, reject, deadlineMs: this.options.clock.nowMs() + timeoutMs, timeoutMs, unsent: frame };
      this.pending.set(id, entry);
      this.armSweep();
      if (this.state === "open") this.write(entry, front);
    });
  }

  async close(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    if (this.reconnectTimer !== null) this.options.clock.cancel(this.reconnectTimer);
    if (this.sweepTimer !== null) this.options.clock.cancel(this.sweepTimer);
    this.sweepTimer = null;
    this.failAll("CLOSED", "the client was closed");
    const socket = this.socket;
    this.socket = null;
    if (socket === null || socket.destroyed) return;
    await new Promise<void>((resolve) => {
      socket.once("close", () => resolve());
      socket.end();
      // A real timer, whatever the clock: it only makes sure a peer that never closes cannot hold the process.
      setTimeout(() => socket.destroy(), 1000).unref();
    });
  }

  // FrameSink: replies from the server.

  frame(bytes: Uint8Array, start: number, end: number): boolean {
    let reply: unknown;
    try {
      reply = this.replyDecoder.decode(bytes.subarray(start, end));
    } catch (error) {
      this.protocolFailure(`undecodable reply: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
    if (!isPlainMap(reply) || typeof reply.id !== "number") {
      this.protocolFailure("a reply must be a map with an id");
      return false;
    }
    if (reply.id === 0) {
      // A connection-level error: the server closes next; pending requests fail on close.
      const error = toOrqError(reply.error);
      this.options.onEvent?.({ kind: "disconnected", error });
      return true;
    }
    const entry = this.pending.get(reply.id);
    if (entry === undefined) return true; // timed out earlier: the late reply is dropped
    this.pending.delete(reply.id);
    if (reply.ok === true) entry.resolve(reply);
    else entry.reject(toOrqError(reply.error));
    return true;
  }

  frameTooLarge(lengthBytes: number): void {
    this.protocolFailure(`reply frame of ${lengthBytes} bytes is over the client's frameBytesMax`);
  }

  private helloFields(): WireMap {
    const fields: WireMap = { protocol: protocolVersion };
    if (this.options.token !== undefined) fields.token = this.options.token;
    if (this.options.clientName !== undefined) fields.client = this.options.clientName;
    return fields;
  }

  private connectSocket(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const socket = new Socket();
      socket.setNoDelay(true);
      const clock = this.options.clock;
      const timer = clock.schedule(() => {
        socket.destroy();
        reject(new OrqError("TIMEOUT", `could not connect to ${this.options.host}:${this.options.port} within ${this.options.connectTimeoutMs} ms`));
      }, this.options.connectTimeoutMs);
      const onError = (error: Error): void => {
        clock.cancel(timer);
        reject(new OrqError("DISCONNECTED", `cannot connect to ${this.options.host}:${this.options.port}: ${error.message}`));
      };
      socket.once("error", onError);
      socket.connect(this.options.port, this.options.host, () => {
        clock.cancel(timer);
        socket.off("error", onError);
        this.attach(socket);
        resolve();
      });
    });
  }

  private attach(socket: Socket): void {
    this.socket = socket;
    this.frameDecoder = new FrameDecoder(this.options.frameBytesMax, this);
    socket.on("data", (chunk: Buffer) => this.frameDecoder.push(chunk));
    socket.on("error", () => {
      // "close" follows every error and handles it.
    });
    socket.on("close", () => this.onSocketClosed(socket));
  }

  private onSocketClosed(socket: Socket): void {
    if (this.socket !== socket) return;
    this.socket = null;
    this.outgoing = [];
    if (this.state === "closed") return;
    this.options.onEvent?.({ kind: "disconnected", error: null });
    // In flight when the connection dropped: the outcome is unknown, so say so.
    for (const [id, entry] of this.pending) {
      if (entry.unsent !== null) continue;
      this.pending.delete(id);
      entry.reject(new OrqError("DISCONNECTED", `connection lost before the reply to ${entry.op}; it may or may not have been carried out`));
    }
    if (!this.options.reconnect) {
      this.state = "closed";
      this.failAll("DISCONNECTED", "connection lost and reconnect is off");
      return;
    }
    this.state = "waiting_to_reconnect";
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const baseMs = Math.min(this.options.reconnectDelayMsMax, this.options.reconnectDelayMs * 2 ** Math.min(this.reconnectAttempt, 30));
    // Jitter (50-100% of the delay) spreads the reconnects of many clients after a restart.
    const delayMs = Math.round(baseMs * (0.5 + Math.random() / 2));
    this.reconnectTimer = this.options.clock.schedule(() => void this.reconnect(delayMs), delayMs);
  }

  private async reconnect(lastDelayMs: number): Promise<void> {
    this.reconnectTimer = null;
    if (this.state === "closed") return;
    this.reconnectAttempt++;
    try {
      await this.connectSocket();
    } catch (error) {
      if (this.isClosed()) return;
      this.options.onEvent?.({ kind: "reconnect_failed", attempt: this.reconnectAttempt, error: error as Error, delayMs: lastDelayMs });
      this.scheduleReconnect();
      return;
    }
    if (this.isClosed()) {
      this.socket?.destroy();
      return;
    }
    this.state = "open";
    const attempt = this.reconnectAttempt;
    this.reconnectAttempt = 0;
    // hello first; then everything that waited for the connection, in order.
    const hello = this.request("hello", this.helloFields(), this.options.connectTimeoutMs, true);
    hello.catch((error: Error) => this.options.onEvent?.({ kind: "hello_failed", error }));
    for (const entry of this.pending.values()) if (entry.unsent !== null) this.write(entry, false);
    this.options.onEvent?.({ kind: "reconnected", attempt });
  }

  /**
   * Timeouts are checked by one sweep every sweepPeriodMs (a tenth of the
   * request timeout, 10 ms..1 s) instead of one timer per request, so a
   * request fails between its timeout and one period later.
   */
  private armSweep(): void {
    if (this.sweepTimer !== null || this.pending.size === 0) return;
    const periodMs = Math.min(1000, Math.max(10, Math.floor(this.options.requestTimeoutMs / 10)));
    this.sweepTimer = this.options.clock.schedule(() => this.sweep(), periodMs);
  }

  private sweep(): void {
    this.sweepTimer = null;
    const nowMs = this.options.clock.nowMs();
    for (const [id, entry] of this.pending) {
      if (entry.deadlineMs > nowMs) continue;
      this.pending.delete(id);
      entry.reject(new OrqError("TIMEOUT", `${entry.op} got no reply within ${entry.timeoutMs} ms`));
    }
    this.armSweep();
  }

  /** A method, not a field check: close() may run while reconnect() awaits. */
  private isClosed(): boolean {
    return this.state === "closed";
  }

  private write(entry: Pending, front: boolean): void {
    const frame = entry.unsent;
    if (frame === null) return;
    entry.unsent = null;
    if (front) this.outgoing.unshift(frame);
    else this.outgoing.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      // After the turn's promise chains, not the first's: a worker's ack and its next dequeue,
      // a few awaits apart, leave in one write and reach one commit (docs/decisions/048-ack-frees-the-slot.md).
      setImmediate(() => this.flush());
    }
  }

  /** One socket write per turn for everything requested in it (node:net keeps what it cannot send yet). */
  private flush(): void {
    this.flushScheduled = false;
    const socket = this.socket;
    if (socket === null || this.outgoing.length === 0) return;
    const frames = this.outgoing;
    this.outgoing = [];
    socket.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
  }

  private protocolFailure(message: string): void {
    this.options.onEvent?.({ kind: "disconnected", error: new OrqError("BAD_REPLY", message) });
    this.socket?.destroy();
  }

  private failAll(code: "CLOSED" | "DISCONNECTED", message: string): void {
    for (const entry of this.pending.values()) entry.reject(new OrqError(code, message));
    this.pending.clear();
  }
}

function toOrqError(error: unknown): OrqError {
  if (!isPlainMap(error)) return new OrqError("BAD_REPLY", "error reply without an error map");
  const wire = error as unknown as WireError;
  const code = isErrorCode(wire.code) ? wire.code : "INTERNAL";
  const details: OrqErrorDetails = {};
  const raw = wire.details;
  if (raw !== undefined && isPlainMap(raw)) {
    if (typeof raw.field === "string") details.field = raw.field;
    if (typeof raw.index === "number") details.index = raw.index;
    if (typeof raw.retry_after_ms === "number") details.retryAfterMs = raw.retry_after_ms;
    if (typeof raw.request_id === "string") details.requestId = raw.request_id;
    if (typeof raw.shard === "number") details.shard = raw.shard;
    if (typeof raw.node_id === "string") details.nodeId = raw.node_id;
    if (typeof raw.addr === "string") details.addr = raw.addr;
    if (typeof raw.map_version === "number") details.mapVersion = raw.map_version;
  }
  return new OrqError(code, typeof wire.message === "string" ? wire.message : String(wire.code), details);
}
