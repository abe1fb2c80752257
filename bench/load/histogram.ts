// Latency summaries from hdr-histogram-js (recorded in nanoseconds, reported
// in microseconds), so percentiles come from a proven implementation rather
// than a sorted array of our own.

import { build } from "hdr-histogram-js";
import type { Histogram } from "hdr-histogram-js";

/** One hour in ns: anything slower is a hang, not a latency. */
const HIGHEST_TRACKABLE_NS = 3_600_000_000_000;

export interface LatencySummary {
  count: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  p999Us: number;
  maxUs: number;
  meanUs: number;
  /**
   * The p50 of each tenth of the samples, in the order taken (the latency
   * scenario): a server still compiling its hot path shows a falling series.
   */
  tenthsP50Us?: number[];
}

export function newHistogram(): Histogram {
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: HIGHEST_TRACKABLE_NS, numberOfSignificantValueDigits: 3 });
}

export function summarize(histogram: Histogram): LatencySummary {
  const us = (ns: number) => Math.round(ns / 10) / 100;
  return {
    count: histogram.totalCount,
    p50Us: us(histogram.getValueAtPercentile(50)),
    p90Us: us(histogram.getValueAtPercentile(90)),
    p99Us: us(histogram.getValueAtPercentile(99)),
    p999Us: us(histogram.getValueAtPercentile(99.9)),
    maxUs: us(histogram.maxValue),
    meanUs: us(histogram.mean),
  };
}
