// The chart data the overview's uPlot charts fetch (/api/history): one
// namespace's rates or depths over the last hour or day, as uPlot's columns
// (times in seconds first). The caller has checked the namespace scope.

import { counterColumns, stateColumns, type History, type Range } from "./history.ts";

export interface ChartData {
  labels: string[];
  data: number[][];
}

export function historyChart(history: History, ns: string, params: URLSearchParams): ChartData {
  const range: Range = params.get("range") === "day" ? "day" : "hour";
  const rates = params.get("kind") === "rates";
  const series = rates ? history.rates(ns, range) : history.depths(ns, range);
  const labels = rates ? counterColumns.map((c) => (c === "dead" ? "dead-lettered" : c)) : [...stateColumns];
  if (series === null) return { labels, data: [[], ...labels.map(() => [])] };
  return { labels, data: [series.timesMs.map((t) => t / 1000), ...series.columns.map((column) => column.map((v) => Math.round(v * 100) / 100))] };
}
