// Outgoing bytes of one load-generator connection. Everything written in one
// event-loop turn is coalesced into a single `socket.write` (measured earlier: one
// write per frame is 15x slower), and a partial write keeps its unsent tail
// for the `drain` event, because Bun's socket keeps nothing it did not accept.

import type { Socket } from "bun";

const BUFFER_BYTES_INITIAL = 64 * 1024;

export class SocketWriter {
  private bytes = new Uint8Array(BUFFER_BYTES_INITIAL);
  private view = new DataView(this.bytes.buffer);
  private length = 0;
  private flushScheduled = false;
  /** True after a partial write, until the socket says `drain`. */
  private blocked = false;
  private socket: Socket<unknown> | null = null;
  private readonly flushBound = () => this.flush();

  attach(socket: Socket<unknown>): void {
    this.socket = socket;
    this.schedule();
  }

  /** Appends a 4-byte big-endian length and the body; returns the body's offset in the buffer. */
  appendFrame(body: Uint8Array): number {
    return this.appendFrameWithTail(body, body, 0, 0);
  }

  /** Appends one frame of `head` then bytes [tailStart, tailEnd) of `tail`; returns the body's offset in the buffer. */
  appendFrameWithTail(head: Uint8Array, tail: Uint8Array, tailStart: number, tailEnd: number): number {
    const tailBytes = tailEnd - tailStart;
    this.reserve(4 + head.length + tailBytes);
    this.view.setUint32(this.length, head.length + tailBytes);
    const bodyOffset = this.length + 4;
    this.bytes.set(head, bodyOffset);
    // A receipt is a few dozen bytes: a loop beats a subarray and set() at this size.
    const bytes = this.bytes;
    let to = bodyOffset + head.length;
    for (let from = tailStart; from < tailEnd; from++) bytes[to++] = tail[from] as number;
    this.length = to;
    this.schedule();
    return bodyOffset;
  }

  appendBytes(chunk: Uint8Array): void {
    this.reserve(chunk.length);
    this.bytes.set(chunk, this.length);
    this.length += chunk.length;
    this.schedule();
  }

  /** Writes a big-endian uint32 at an absolute offset of bytes already appended (template id patching). */
  patchUint32(offset: number, value: number): void {
    this.view.setUint32(offset, value);
  }

  onDrain(): void {
    this.blocked = false;
    this.flush();
  }

  private reserve(extraBytes: number): void {
    const needed = this.length + extraBytes;
    if (needed <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < needed) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  private schedule(): void {
    if (this.flushScheduled || this.blocked || this.socket === null) return;
    this.flushScheduled = true;
    queueMicrotask(this.flushBound);
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.blocked || this.length === 0 || this.socket === null) return;
    const written = this.socket.write(this.bytes.subarray(0, this.length));
    if (written < 0) {
      // The peer closed: the connection's close handler fails whatever is still waiting for replies.
      this.length = 0;
      this.socket = null;
      return;
    }
    if (written < this.length) {
      this.bytes.copyWithin(0, written, this.length);
      this.length -= written;
      this.blocked = true;
      return;
    }
    this.length = 0;
  }
}
