// A raw TCP connection for tests: send any bytes (valid frames or abuse),
// collect decoded reply frames, and wait for a reply by id or for the server
// to close. Uses node:net and the shared frame decoder.

import { Socket } from "node:net";
import { decode } from "@msgpack/msgpack";
import { FrameDecoder } from "../../src/protocol/frame-decoder.ts";
import { FrameEncoder } from "../../src/protocol/frame-encoder.ts";

export type ReplyMap = Record<string, unknown> & { id: number; ok: boolean; error?: { code: string; message: string; details?: Record<string, unknown> } };

export class RawConnection {
  readonly replies: ReplyMap[] = [];
  closed = false;
  private waiters: Array<() => void> = [];
  private readonly encoder = new FrameEncoder();
  private readonly decoder: FrameDecoder;
  private nextId = 1;

  private constructor(readonly socket: Socket) {
    this.decoder = new FrameDecoder(1 << 30, {
      frame: (bytes, start, end) => {
        this.replies.push(decode(bytes.subarray(start, end)) as ReplyMap);
        this.wake();
        return true;
      },
      frameTooLarge: () => {
        throw new Error("reply frame too large");
      },
    });
    socket.on("data", (chunk: Buffer) => this.decoder.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closed = true;
      this.wake();
    });
  }

  static connect(port: number, host = "127.0.0.1"): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = new Socket();
      socket.once("error", reject);
      socket.connect(port, host, () => {
        socket.off("error", reject);
        resolve(new RawConnection(socket));
      });
    });
  }

  /** Send a request map as one frame; fills in `id` when missing. Returns the id. */
  send(request: Record<string, unknown>): number {
    const id = typeof request.id === "number" ? request.id : this.nextId++;
    this.socket.write(this.encoder.encode({ id, ...request }));
    return id;
  }

  sendBytes(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** Send and wait for the reply with that id. */
  async call(request: Record<string, unknown>): Promise<ReplyMap> {
    return this.reply(this.send(request));
  }

  async reply(id: number): Promise<ReplyMap> {
    await this.until(() => this.replies.some((r) => r.id === id), `reply ${id}`);
    return this.replies.find((r) => r.id === id)!;
  }

  /** Resolves once the server has closed the connection. */
  async waitClosed(): Promise<void> {
    await this.until(() => this.closed, "close");
  }

  async until(condition: () => boolean, what: string): Promise<void> {
    while (!condition()) {
      if (this.closed && what !== "close") throw new Error(`connection closed while waiting for ${what}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** A frame header announcing `length` bytes, followed by `body`. */
export function rawFrame(length: number, body: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, length);
  out.set(body, 4);
  return out;
}
