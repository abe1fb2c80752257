// The binary min-heap operations both matching heaps share (tops-heap.ts, one
// per topic; class-heap.ts, one per eligibility class): records of `stride`
// doubles in one Float64Array, in heap order, whose first three doubles are
// the delivery-order key (priority, deliverAtMs, order) and whose fourth is
// the slot, with each slot's heap position kept in an Int32Array. Free
// functions over the arrays, so each heap keeps its own record layout and
// fields and no object is made per operation.

/** The key's three doubles come first in every record; the slot is the fourth. */
const priorityField = 0;
const deliverAtField = 1;
const orderField = 2;
export const recordSlotField = 3;

/** Strict delivery order between the records at heap positions `a` and `b`. */
export function recordLess(records: Float64Array, stride: number, a: number, b: number): boolean {
  const baseA = a * stride;
  const baseB = b * stride;
  const pa = records[baseA + priorityField] as number;
  const pb = records[baseB + priorityField] as number;
  if (pa !== pb) return pa < pb;
  const da = records[baseA + deliverAtField] as number;
  const db = records[baseB + deliverAtField] as number;
  if (da !== db) return da < db;
  return (records[baseA + orderField] as number) < (records[baseB + orderField] as number);
}

/** Swaps the records at two heap positions and fixes their slots' positions. */
function swapRecords(records: Float64Array, positions: Int32Array, stride: number, a: number, b: number): void {
  const baseA = a * stride;
  const baseB = b * stride;
  for (let i = 0; i < stride; i++) {
    const value = records[baseA + i] as number;
    records[baseA + i] = records[baseB + i] as number;
    records[baseB + i] = value;
  }
  positions[records[baseA + recordSlotField] as number] = a;
  positions[records[baseB + recordSlotField] as number] = b;
}

/** Moves the record at `at` up to its place; returns where it ended. */
export function siftRecordUp(records: Float64Array, positions: Int32Array, stride: number, at: number): number {
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (!recordLess(records, stride, at, parent)) break;
    swapRecords(records, positions, stride, at, parent);
    at = parent;
  }
  return at;
}

/** Moves the record at `at` down to its place in a heap of `size` records. */
export function siftRecordDown(records: Float64Array, positions: Int32Array, stride: number, size: number, at: number): void {
  for (;;) {
    const left = 2 * at + 1;
    if (left >= size) return;
    let child = left;
    if (left + 1 < size && recordLess(records, stride, left + 1, left)) child = left + 1;
    if (!recordLess(records, stride, child, at)) return;
    swapRecords(records, positions, stride, at, child);
    at = child;
  }
}
