// A connection's outgoing bytes. Replies produced in one event-loop turn are
// copied into one buffer and leave in one socket write (Bun does not
// coalesce: one write per reply is 15x slower,
// docs/decisions/015-output-buffers.md). The buffer comes from the server's
// pool (output-buffers.ts) when the turn's first reply arrives and goes back
// once all of it is written, so no buffer is made per reply or per write. Bun's socket.write may accept only part of the bytes and keeps
// nothing, so the unsent tail stays in the buffer, and whatever is queued
// after it waits behind it until drain. `unsentBytes` lets the connection
// stop reading from a client that does not read its replies.

import { frameHeaderBytes } from "../protocol/frame-decoder.ts";
import { type FrameOutput, writeFrameLength } from "../protocol/frame-encoder.ts";
import type { OutputBufferPool } from "./output-buffers.ts";

/**
 * Up to this many bytes, a frame at the start of a larger buffer (the reply
 * encoder's: every ack reply) is copied byte by byte; past it through a
 * subarray, one JS-heap cell. 30 bytes take 30-40 ns by loop against
 * 100-180 ns through a subarray; at 128 bytes the two are even; at 400 (a
 * dequeue-1 reply) the loop takes 4x longer (docs/decisions/015-output-buffers.md).
 */
const loopCopyBytesMax = 64;

export interface ByteSink {
  /** Writes `byteLength` bytes of `data` from `byteOffset`: bytes accepted (possibly fewer), or -1 when the socket is closed. Keeps nothing. */
  write(data: Uint8Array, byteOffset: number, byteLength: number): number;
}

export class OutputQueue implements FrameOutput {
  /** Bytes [start, end) of buffer are queued; null when nothing is. */
  private buffer: Uint8Array | null = null;
  private start = 0;
  private end = 0;
  /** A write accepted only part: nothing more is written until drain. */
  private waitingForDrain = false;
  private scheduled = false;
  private closed = false;
  /** Made once: a closure per scheduled flush would be one more allocation per turn. */
  private readonly flushTask = (): void => this.flush();

  constructor(
    private readonly sink: ByteSink,
    /** Called after bytes left the queue (the connection may resume reading or finish closing). */
    private readonly onProgress: () => void,
    /** The server's buffers (one pool per listening server). */
    private readonly pool: OutputBufferPool,
    private readonly schedule: (task: () => void) => void = queueMicrotask,
  ) {}

  get unsentBytes(): number {
    return this.end - this.start;
  }

  /** Queue a whole frame (its length prefix included): the first `length` bytes of `bytes`. */
  push(bytes: Uint8Array, length = bytes.length): void {
    if (this.closed) return;
    const at = this.reserve(length);
    const buffer = this.buffer as Uint8Array;
    if (length === bytes.length) buffer.set(bytes, at);
    else if (length <= loopCopyBytesMax) for (let i = 0; i < length; i++) buffer[at + i] = bytes[i] as number;
    else buffer.set(bytes.subarray(0, length), at);
    this.scheduleFlush();
  }

  /** Queue one frame made of `body`: its 4-byte big-endian length, then the body. */
  pushFrame(body: Uint8Array): void {
    if (this.closed) return;
    const length = body.length;
    const at = this.reserve(frameHeaderBytes + length);
    const buffer = this.buffer as Uint8Array;
    writeFrameLength(buffer, at, length);
    buffer.set(body, at + frameHeaderBytes);
    this.scheduleFlush();
  }

  /** Write what is queued, unless an earlier write is still waiting for drain. */
  flush(): void {
    this.scheduled = false;
    if (this.closed || this.waitingForDrain || this.end === this.start) return;
    this.writeOut();
    this.onProgress();
  }

  /** The socket can take more: write the tail and anything queued behind it. */
  drain(): void {
    if (this.closed) return;
    this.waitingForDrain = false;
    if (this.end > this.start) this.writeOut();
    this.onProgress();
  }

  /** Drop everything: the socket is gone. */
  close(): void {
    this.closed = true;
    this.release();
  }

  private scheduleFlush(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(this.flushTask);
  }

  /** Room for `bytes` more at the end of the queue; returns where they go. */
  private reserve(bytes: number): number {
    const buffer = this.buffer;
    if (buffer === null) {
      this.buffer = this.pool.take(bytes);
      this.start = 0;
      this.end = bytes;
      return 0;
    }
    const queued = this.end - this.start;
    if (this.end + bytes <= buffer.length) {
      this.end += bytes;
      return this.end - bytes;
    }
    // Move the queued bytes to the front, into a larger buffer when they and the new ones do not fit.
    const target = queued + bytes <= buffer.length ? buffer : this.pool.take(Math.max(queued + bytes, buffer.length * 2));
    if (target === buffer) buffer.copyWithin(0, this.start, this.end); // copyWithin handles the overlap
    else {
      target.set(buffer.subarray(this.start, this.end), 0);
      this.pool.give(buffer);
    }
    this.buffer = target;
    this.start = 0;
    this.end = queued + bytes;
    return queued;
  }

  private writeOut(): void {
    const buffer = this.buffer as Uint8Array;
    const length = this.end - this.start;
    const written = this.sink.write(buffer, this.start, length);
    if (written < 0) {
      this.close();
      return;
    }
    if (written < length) {
      this.start += written;
      this.waitingForDrain = true;
      return;
    }
    this.release();
  }

  /** Everything queued is gone (written or dropped): the buffer goes back to the pool. */
  private release(): void {
    if (this.buffer !== null) this.pool.give(this.buffer);
    this.buffer = null;
    this.start = 0;
    this.end = 0;
  }
}
