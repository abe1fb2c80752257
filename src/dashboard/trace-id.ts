// The trace id in an item's `trace` (PROTOCOL.md, "Trace context"). The
// clients write a W3C traceparent, `VERSION-TRACEID-PARENTID-FLAGS`, then a
// space and tracestate when there is one; the 32-hex trace id is what a
// tracing backend is searched by, so the item page shows it. Anything else
// is the producer's own format, shown as it is.

/** Version, trace id, parent id and flags, lower-case hex (W3C Trace Context, level 1). */
const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})/;
const allZeros = /^0+$/;

/**
 * The trace id of a W3C traceparent at the start of `trace`, or null when it
 * is not one: version ff, an all-zero trace or parent id, or (version 00)
 * anything after the flags but whitespace and tracestate. A later version
 * may carry more fields after a dash, as the standard allows.
 */
export function traceIdOf(trace: string): string | null {
  const match = traceparentPattern.exec(trace);
  if (match === null) return null;
  const [whole, version, traceId, parentId] = match as unknown as [string, string, string, string];
  if (version === "ff" || allZeros.test(traceId) || allZeros.test(parentId)) return null;
  const next = trace.charAt(whole.length);
  const ends = next === "" || next === " " || next === "\t";
  if (!ends && (version === "00" || next !== "-")) return null;
  return traceId;
}
