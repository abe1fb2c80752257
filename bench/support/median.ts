// The median of a list of figures: the middle value, or the mean of the two
// middle ones for an even count (0 for none). For combining runs and the
// soak's end stretches, where an average of the two middle figures is the
// fairer reading.

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}
