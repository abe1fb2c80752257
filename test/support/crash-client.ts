// A minimal pipelined orq client for the crash tests, written from the wire
// contract alone (4-byte big-endian length + one MessagePack map) so the crash
// tests do not depend on the project's own client or protocol code: a bug
// there cannot hide a durability bug. Many requests may be in flight; replies
// are matched by id. When the connection dies (the server was SIGKILLed), every
// pending request rejects with ConnectionLost: its outcome is unknown.

import { Socket } from "node:net";
import { Decoder, Encoder } from "@msgpack/msgpack";

export type Reply = Record<string, unknown> & {
  id: number;
  ok: boolean;
  error?: { code: string; message: string; details?: Record<string, unknown> };
};

/** The request's fate is unknown: the connection closed before its reply. */
export class ConnectionLost extends Error {
  override name = "ConnectionLost";
}

/** Replies are small here; a longer frame means the stream is corrupt. */
const replyFrameBytesMax = 64 * 1024 * 1024;

interface Pending {
  resolve(reply: Reply): void;
  reject(error: Error): void;
}

export class CrashClient {
  private readonly encoder = new Encoder();
  private readonly decoder = new Decoder();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffered: Uint8Array = new Uint8Array(0);
  private lostReason: string | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    // A reset from a killed server is expected; "close" follows and fails the pending requests.
    socket.on("error", (error: Error) => {
      this.lostReason ??= error.message;
    });
    socket.on("close", () => this.failAll(this.lostReason ?? "connection closed"));
  }

  static connect(host: string, port: number): Promise<CrashClient> {
    return new Promise((resolve, reject) => {
      const socket = new Socket();
      socket.setNoDelay(true);
      socket.once("error", reject);
      socket.connect(port, host, () => {
        socket.off("error", reject);
        resolve(new CrashClient(socket));
      });
    });
  }

  get alive(): boolean {
    return this.lostReason === null;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Send one request; resolves with its reply (ok or error), rejects with ConnectionLost. */
  call(op: string, fields: Record<string, unknown>): Promise<Reply> {
    if (this.lostReason !== null) return Promise.reject(new ConnectionLost(this.lostReason));
    const id = this.nextId++;
    const body = this.encoder.encode({ id, op, ...fields });
    const frame = new Uint8Array(4 + body.length);
    new DataView(frame.buffer).setUint32(0, body.length);
    frame.set(body, 4);
    const promise = new Promise<Reply>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.socket.write(frame);
    return promise;
  }

  /** Like call, but an error reply becomes a thrown Error (for the verify phase, where none is expected). */
  async must(op: string, fields: Record<string, unknown>): Promise<Reply> {
    const reply = await this.call(op, fields);
    if (!reply.ok) throw new Error(`${op} failed: ${reply.error?.code} ${reply.error?.message}`);
    return reply;
  }

  close(): void {
    this.lostReason ??= "closed by the test";
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    let bytes: Uint8Array = chunk;
    if (this.buffered.length > 0) {
      const joined = new Uint8Array(this.buffered.length + chunk.length);
      joined.set(this.buffered, 0);
      joined.set(chunk, this.buffered.length);
      bytes = joined;
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let offset = 0;
    while (bytes.length - offset >= 4) {
      const length = view.getUint32(offset);
      if (length > replyFrameBytesMax) {
        this.lostReason = `reply frame of ${length} bytes`;
        this.socket.destroy();
        return;
      }
      if (bytes.length - offset - 4 < length) break;
      const reply = this.decoder.decode(bytes.subarray(offset + 4, offset + 4 + length)) as Reply;
      offset += 4 + length;
      this.dispatch(reply);
    }
    this.buffered = bytes.slice(offset);
  }

  private dispatch(reply: Reply): void {
    const waiter = this.pending.get(reply.id);
    if (waiter === undefined) throw new Error(`reply for unknown request id ${reply.id}: ${JSON.stringify(reply.error ?? reply)}`);
    this.pending.delete(reply.id);
    waiter.resolve(reply);
  }

  private failAll(reason: string): void {
    this.lostReason ??= reason;
    const waiters = [...this.pending.values()];
    this.pending.clear();
    for (const waiter of waiters) waiter.reject(new ConnectionLost(reason));
  }
}
