// Streaming frame parser: turns a byte stream into frame bodies (a 4-byte
// big-endian length, then that many bytes). It does no I/O: the caller pushes
// chunks and receives events through a FrameSink, so tests can feed it one byte
// at a time. It walks offsets within each chunk and hands each frame over as
// the chunk and the frame's offsets in it (not a view: a subarray per frame
// would be a JS-heap cell per request,
// docs/decisions/013-lent-replies-and-scratch.md); only a frame split across
// chunks is copied (into a buffer of the frame's exact size, allocated once),
// never re-concatenated per read.
//
// The sink may ask to stop (frame() returns false): the decoder then keeps the
// unprocessed bytes (copied, since the caller's chunk may be reused) and
// replays them on resume(). This is how a connection stops processing a client
// whose replies it cannot send.

import { assert } from "../lib/assert.ts";

export const frameHeaderBytes = 4;

export interface FrameSink {
  /**
   * One complete frame body: bytes [start, end) of `bytes`, valid only during
   * this call (the chunk is the caller's to reuse). Return false to pause the decoder.
   */
  frame(bytes: Uint8Array, start: number, end: number): boolean;
  /** A header announced a body longer than the maximum; the decoder stops for good. */
  frameTooLarge(lengthBytes: number): void;
}

export class FrameDecoder {
  private readonly header = new Uint8Array(frameHeaderBytes);
  private headerFilled = 0;
  private body: Uint8Array | null = null;
  private bodyFilled = 0;
  private backlog: Uint8Array[] = [];
  private backlogBytesTotal = 0;
  private pausedFlag = false;
  private failed = false;

  constructor(
    private readonly frameBytesMax: number,
    private readonly sink: FrameSink,
  ) {}

  get paused(): boolean {
    return this.pausedFlag;
  }

  /** Bytes received but not yet processed because the sink paused the decoder. */
  get backlogBytes(): number {
    return this.backlogBytesTotal;
  }

  /** Stop for good (the connection is closing): later bytes are ignored. */
  stop(): void {
    this.failed = true;
    this.backlog = [];
    this.backlogBytesTotal = 0;
    this.body = null;
  }

  push(chunk: Uint8Array): void {
    if (this.failed || chunk.length === 0) return;
    if (this.pausedFlag) {
      this.stash(chunk.slice(), false);
      return;
    }
    this.process(chunk, false);
  }

  /** Process stashed bytes until the sink pauses again or the backlog is empty. */
  resume(): void {
    this.pausedFlag = false;
    while (!this.pausedFlag && !this.failed && this.backlog.length > 0) {
      const chunk = this.backlog.shift()!;
      this.backlogBytesTotal -= chunk.length;
      this.process(chunk, true);
    }
  }

  private stash(rest: Uint8Array, atFront: boolean): void {
    if (atFront) this.backlog.unshift(rest);
    else this.backlog.push(rest);
    this.backlogBytesTotal += rest.length;
  }

  /** Returns when the chunk is consumed, the sink paused, or the stream failed. */
  private process(chunk: Uint8Array, fromBacklog: boolean): void {
    let offset = 0;
    const end = chunk.length;
    // Finish a frame begun in an earlier chunk.
    if (this.headerFilled > 0 || this.body !== null) {
      offset = this.continuePartial(chunk);
      if (this.failed || offset < 0) return;
      if (this.body === null && this.headerFilled === 0 && this.pausedFlag) {
        if (offset < end) this.stash(fromBacklog ? chunk.subarray(offset) : chunk.slice(offset), true);
        return;
      }
    }
    // Whole frames inside this chunk: offsets, no copies.
    while (end - offset >= frameHeaderBytes) {
      const length =
        ((chunk[offset]! << 24) >>> 0) + (chunk[offset + 1]! << 16) + (chunk[offset + 2]! << 8) + chunk[offset + 3]!;
      if (length > this.frameBytesMax) {
        this.fail(length);
        return;
      }
      const bodyStart = offset + frameHeaderBytes;
      if (end - bodyStart < length) {
        // The frame continues in a later chunk: copy its start once into a buffer of its final size.
        this.body = new Uint8Array(length);
        this.body.set(chunk.subarray(bodyStart, end));
        this.bodyFilled = end - bodyStart;
        return;
      }
      offset = bodyStart + length;
      if (!this.sink.frame(chunk, bodyStart, offset)) {
        this.pausedFlag = true;
        if (offset < end && !this.failed) this.stash(fromBacklog ? chunk.subarray(offset) : chunk.slice(offset), true);
        return;
      }
      if (this.failed) return;
    }
    if (offset < end) {
      this.header.set(chunk.subarray(offset, end));
      this.headerFilled = end - offset;
    }
  }

  /**
   * Feed the start of a chunk into the partial header or body. Returns the
   * offset where whole-frame parsing may continue, or -1 when the chunk is used up.
   */
  private continuePartial(chunk: Uint8Array): number {
    let offset = 0;
    if (this.body === null) {
      const take = Math.min(frameHeaderBytes - this.headerFilled, chunk.length);
      this.header.set(chunk.subarray(0, take), this.headerFilled);
      this.headerFilled += take;
      offset = take;
      if (this.headerFilled < frameHeaderBytes) return -1;
      this.headerFilled = 0;
      const h = this.header;
      const length = ((h[0]! << 24) >>> 0) + (h[1]! << 16) + (h[2]! << 8) + h[3]!;
      if (length > this.frameBytesMax) {
        this.fail(length);
        return -1;
      }
      if (chunk.length - offset >= length) {
        const bodyEnd = offset + length;
        if (!this.sink.frame(chunk, offset, bodyEnd)) this.pausedFlag = true;
        return bodyEnd;
      }
      this.body = new Uint8Array(length);
      this.bodyFilled = 0;
    }
    const body = this.body;
    assert(body !== null, "partial body expected");
    const take = Math.min(body.length - this.bodyFilled, chunk.length - offset);
    body.set(chunk.subarray(offset, offset + take), this.bodyFilled);
    this.bodyFilled += take;
    offset += take;
    if (this.bodyFilled < body.length) return -1;
    this.body = null;
    this.bodyFilled = 0;
    if (!this.sink.frame(body, 0, body.length)) this.pausedFlag = true;
    return offset;
  }

  private fail(lengthBytes: number): void {
    this.stop();
    this.sink.frameTooLarge(lengthBytes);
  }
}
