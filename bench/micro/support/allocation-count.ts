// What stretches of code allocate on JavaScriptCore's heap, for the benches.
// heapStats() counts cells by type over the whole heap, live or not yet
// collected; between two snapshots with no collection in between, the growth
// is what the code allocated, by type, and the growth of heapCapacity is the
// bytes of the blocks it added. After a full collection new cells first fill
// the holes it left, which costs no new block, so the meter runs warm-up
// rounds (charged to nothing) before it charges any: from then on every
// allocated byte is a new block's, and the bytes are exact to a block (16 KiB)
// per phase. A collection (the live count, which only a collection changes,
// moved) spoils the round in which it ran; the caller drops it.
// Strings' character buffers are malloc'd outside this heap and not counted;
// their JSString cells are.

import { heapStats } from "bun:jsc";

/** Allocations charged to one phase (dequeue, ack, ping) over its requests. */
export class AllocationTotals {
  requests = 0;
  cells = 0;
  bytes = 0;
  readonly byType: Record<string, number> = {};

  /** "B bytes, C cells" per request. */
  describe(): string {
    if (this.requests === 0) return "no round without a collection";
    return `${(this.bytes / this.requests).toFixed(0)} bytes, ${(this.cells / this.requests).toFixed(1)} cells`;
  }
}

interface Snapshot {
  liveCells: number;
  capacityBytes: number;
  byType: Record<string, number>;
}

interface Pending {
  totals: AllocationTotals;
  requests: number;
  cells: number;
  bytes: number;
  byType: Record<string, number>;
}

function snapshot(): Snapshot {
  const stats = heapStats();
  return { liveCells: stats.objectCount, capacityBytes: stats.heapCapacity, byType: stats.objectTypeCounts };
}

export class AllocationMeter {
  private last: Snapshot = snapshot();
  private pending: Pending[] = [];
  private spoiled = false;
  /** What one snapshot allocates itself (its result object), subtracted from each charge. */
  private readonly ownCells: number;
  private readonly ownBytes: number;

  constructor() {
    Bun.gc(true);
    let cells = 0;
    let bytes = 0;
    const calls = 64;
    this.last = snapshot();
    for (let i = 0; i < calls; i++) {
      const next = snapshot();
      for (const [type, count] of Object.entries(next.byType)) cells += count - (this.last.byType[type] ?? 0);
      bytes += next.capacityBytes - this.last.capacityBytes;
      this.last = next;
    }
    this.ownCells = cells / calls;
    this.ownBytes = bytes / calls;
  }

  /** A full collection: the next rounds fill its holes and should be charged to nothing. */
  collect(): void {
    Bun.gc(true);
    this.last = snapshot();
    this.spoiled = false;
  }

  /** Charge what was allocated since the last mark to `totals` (null: to nothing) as `requests` requests. */
  mark(totals: AllocationTotals | null, requests = 0): void {
    const next = snapshot();
    if (next.liveCells !== this.last.liveCells) this.spoiled = true;
    if (totals !== null && !this.spoiled) {
      const byType: Record<string, number> = {};
      let cells = 0;
      for (const [type, count] of Object.entries(next.byType)) {
        const grown = count - (this.last.byType[type] ?? 0);
        if (grown === 0) continue;
        byType[type] = grown;
        cells += grown;
      }
      const bytes = next.capacityBytes - this.last.capacityBytes - this.ownBytes;
      this.pending.push({ totals, requests, cells: cells - this.ownCells, bytes, byType });
    }
    this.last = next;
  }

  /** Ends a round: its charges count unless a collection ran inside it. Returns whether they counted. */
  endRound(): boolean {
    const counted = !this.spoiled;
    if (counted) {
      for (const p of this.pending) {
        p.totals.requests += p.requests;
        p.totals.cells += p.cells;
        p.totals.bytes += p.bytes;
        for (const [type, count] of Object.entries(p.byType)) p.totals.byType[type] = (p.totals.byType[type] ?? 0) + count;
      }
    }
    this.pending = [];
    this.spoiled = false;
    return counted;
  }
}

/** Cells per request by type over these phases (their requests summed per `perRequestOf`), largest first. */
export function cellsByType(phases: AllocationTotals[], requests: number): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const phase of phases) for (const [type, count] of Object.entries(phase.byType)) sums[type] = (sums[type] ?? 0) + count;
  const entries = Object.entries(sums)
    .map(([type, sum]) => [type, Number((sum / requests).toFixed(2))] as const)
    .filter(([, perRequest]) => perRequest !== 0)
    .sort((a, b) => b[1] - a[1]);
  return Object.fromEntries(entries);
}
