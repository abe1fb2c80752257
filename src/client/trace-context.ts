// An item's `trace` text (the contract's "Trace context"): W3C Trace Context's
// `traceparent`, then one space and `tracestate` when there is one. Pure text
// work, no OpenTelemetry: otel-trace.ts turns these into spans.
// traceparent is `VV-TRACEID-SPANID-FF` (https://www.w3.org/TR/trace-context/):
// 2, 32, 16 and 2 lowercase hex digits; an all-zero trace or span id is
// invalid, and so is version ff. A later version may append fields after a
// dash, which are ignored, as the W3C spec asks of a version-00 reader.

/** The contract's bound on an item's `trace` (512 bytes, ASCII here): a tracestate that would pass it is left out. */
export const traceBytesMax = 512;

export interface TraceParent {
  traceId: string;
  spanId: string;
  /** The trace flags byte (bit 0: sampled). */
  traceFlags: number;
  /** The raw `tracestate` list, when there is one. */
  traceState?: string;
}

const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const allZero = /^0+$/;

/** The `trace` text for a span context; the tracestate is dropped when it would take the text past traceBytesMax. */
export function formatTrace(parent: TraceParent): string {
  const flags = (parent.traceFlags & 0xff).toString(16).padStart(2, "0");
  const traceparent = `00-${parent.traceId}-${parent.spanId}-${flags}`;
  const state = parent.traceState?.trim() ?? "";
  if (state === "" || traceparent.length + 1 + state.length > traceBytesMax) return traceparent;
  return `${traceparent} ${state}`;
}

/** The span context a `trace` text names, or null when it is not a valid traceparent (then the item has no parent). */
export function parseTrace(text: string): TraceParent | null {
  const space = text.indexOf(" ");
  const traceparent = space < 0 ? text : text.slice(0, space);
  const match = traceparentPattern.exec(traceparent);
  if (match === null) return null;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (allZero.test(traceId!) || allZero.test(spanId!)) return null;
  const parent: TraceParent = { traceId: traceId!, spanId: spanId!, traceFlags: Number.parseInt(flags!, 16) };
  const state = space < 0 ? "" : text.slice(space + 1).trim();
  if (state !== "") parent.traceState = state;
  return parent;
}
