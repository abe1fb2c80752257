// The server's pool of output buffers. A connection takes one when a turn
// gives it something to send and gives it back once every byte in it is
// written, so a reply costs a copy into a buffer that already exists instead
// of a fresh frame per reply and a joined buffer per write (each one
// JavaScriptCore garbage the collector and its block warm-up thread pay for
// again). Only a connection whose client reads slowly keeps its buffer between
// turns (its unsent tail), and that is bounded by the connection's output limit.
// Buffers larger than the pooled size (a big reply) are dropped when given back.

import { outputBuffers } from "../limits.ts";

export class OutputBufferPool {
  private readonly free: Uint8Array[] = [];

  constructor(
    /** The size of a pooled buffer: what a connection starts with. */
    readonly bufferBytes: number = outputBuffers.bufferBytes,
    /** Most free buffers kept; more given back are dropped. */
    private readonly pooledMax: number = outputBuffers.pooledMax,
  ) {}

  /** Free buffers kept now (stats and tests). */
  get pooled(): number {
    return this.free.length;
  }

  /** A buffer of at least `minBytes`: a pooled one when that is enough. */
  take(minBytes: number): Uint8Array {
    if (minBytes <= this.bufferBytes) return this.free.pop() ?? new Uint8Array(this.bufferBytes);
    return new Uint8Array(minBytes);
  }

  /** Done with it: kept for the next taker when it is of the pooled size and the pool has room. */
  give(buffer: Uint8Array): void {
    if (buffer.length === this.bufferBytes && this.free.length < this.pooledMax) this.free.push(buffer);
  }
}
