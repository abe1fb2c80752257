// A connection's outgoing bytes. Replies produced in one event-loop turn are
// coalesced into one socket write (Bun does not coalesce: one write per reply
// was 15x slower). Bun's socket.write may accept only part of a buffer and
// keeps nothing, so the unsent tail is kept here and written on drain.
// `unsentBytes` lets the connection stop reading from a client that does not
// read its replies.

export interface ByteSink {
  /** Bytes accepted (possibly fewer than given), or -1 when the socket is closed. */
  write(data: Uint8Array): number;
}

export class OutputQueue {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private tail: Uint8Array | null = null;
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly sink: ByteSink,
    /** Called after bytes left the queue (the connection may resume reading or finish closing). */
    private readonly onProgress: () => void,
    private readonly schedule: (task: () => void) => void = queueMicrotask,
  ) {}

  get unsentBytes(): number {
    return this.pendingBytes + (this.tail === null ? 0 : this.tail.length);
  }

  push(frame: Uint8Array): void {
    if (this.closed) return;
    this.pending.push(frame);
    this.pendingBytes += frame.length;
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.flush());
    }
  }

  /** Write what is queued, unless an earlier tail is still waiting for drain. */
  flush(): void {
    this.scheduled = false;
    if (this.closed || this.tail !== null || this.pendingBytes === 0) return;
    this.writeOut(this.takePending());
    this.onProgress();
  }

  /** The socket can take more: resend the tail, then anything queued since. */
  drain(): void {
    if (this.closed) return;
    if (this.tail !== null) {
      const tail = this.tail;
      this.tail = null;
      this.writeOut(tail);
      if (this.tail !== null) return;
    }
    if (this.pendingBytes > 0) this.writeOut(this.takePending());
    this.onProgress();
  }

  /** Drop everything: the socket is gone. */
  close(): void {
    this.closed = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.tail = null;
  }

  private takePending(): Uint8Array {
    const parts = this.pending;
    const total = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    if (parts.length === 1) return parts[0]!;
    const joined = new Uint8Array(total);
    let offset = 0;
    for (const part of parts) {
      joined.set(part, offset);
      offset += part.length;
    }
    return joined;
  }

  private writeOut(data: Uint8Array): void {
    const written = this.sink.write(data);
    if (written < 0) {
      this.close();
      return;
    }
    if (written < data.length) this.tail = data.subarray(written);
  }
}
