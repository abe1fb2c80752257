/** The contract's bound on an item's `trace` (512 bytes, ASCII here): a tracestate that would pass it is left out. */
export declare const traceBytesMax = 512;
export interface TraceParent {
    traceId: string;
    spanId: string;
    /** The trace flags byte (bit 0: sampled). */
    traceFlags: number;
    /** The raw `tracestate` list, when there is one. */
    traceState?: string;
}
/** The `trace` text for a span context; the tracestate is dropped when it would take the text past traceBytesMax. */
export declare function formatTrace(parent: TraceParent): string;
/** The span context a `trace` text names, or null when it is not a valid traceparent (then the item has no parent). */
export declare function parseTrace(text: string): TraceParent | null;
