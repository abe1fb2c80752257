// The request bytes, across every connection, whose replies wait for a
// commit (enqueues, acks and the other writes), and the connections that
// stopped reading because of it. A connection that has such requests stops
// reading while the total is at limits.uncommittedBytesMax; one that has none
// always reads, so a bystander's ping or get is never held up by another
// client's writes, and every writer gets at least one frame in. When commits
// bring the total back under the bound, the waiting connections resume, in a
// microtask: the commit that freed the room finishes answering first.
//
// Why: everything an enqueued item allocates on its way in (its decoded map,
// its record until the commit) lives as long as its commit takes, so a client
// pipelining hundreds of batches left that whole depth's garbage behind, old
// enough to wait for a full collection (BENCHMARKS.md, "Memory"). Bounded
// here, the rest of the pipeline waits in the clients' sockets.

/** A connection that may wait for room (Connection). */
export interface BacklogWaiter {
  /** Room again: read on, if nothing else stops it. */
  resumeReading(): void;
}

export class CommitBacklog {
  private bytes = 0;
  private waiters = new Set<BacklogWaiter>();
  private resumeQueued = false;

  constructor(private readonly limitBytes: number) {}

  /** Request bytes now waiting for a commit. */
  get waitingBytes(): number {
    return this.bytes;
  }

  /** At or over the bound: connections with writes waiting stop reading. */
  get full(): boolean {
    return this.bytes >= this.limitBytes;
  }

  add(bytes: number): void {
    this.bytes += bytes;
  }

  remove(bytes: number): void {
    this.bytes -= bytes;
    if (this.waiters.size > 0 && !this.full && !this.resumeQueued) {
      this.resumeQueued = true;
      queueMicrotask(() => this.resumeWaiters());
    }
  }

  /** `waiter` stopped reading because the backlog is full; it is told once when there is room. */
  waitForRoom(waiter: BacklogWaiter): void {
    this.waiters.add(waiter);
  }

  private resumeWaiters(): void {
    this.resumeQueued = false;
    const waiting = this.waiters;
    this.waiters = new Set();
    // A waiter that reads may fill the backlog again and wait anew: it joins the fresh list.
    for (const waiter of waiting) waiter.resumeReading();
  }
}
