// The p50 the probes print: the sample at the upper middle of the sorted
// values (for an even count, the larger of the two middle ones), as a
// histogram's p50 reads, not an average of two samples. Sorts a copy.

export function p50(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] ?? Number.NaN;
}
