import type { WireDelivery } from "./wire-types.ts";
/**
 * A delivery as the engine hands it out (engine/api.ts's Delivery has these
 * fields; the protocol layer does not import the engine). The wire's
 * WireDelivery has the same values under snake_case keys.
 */
export interface DeliveryFields {
    id: string;
    topic: string;
    priority: number;
    payload: Uint8Array;
    metadata: Uint8Array;
    attempt: number;
    receipt: string;
    leaseExpiresAtMs: number;
    enqueuedAtMs: number;
    /** Absent for an item without a group. */
    group?: string;
    /** Absent for an item without a trace context. */
    trace?: string;
}
/** A delivery under the wire's keys, in wire order. */
export declare function deliveryToWire(d: DeliveryFields): WireDelivery;
/** A dequeue reply ({id, ok, items} on the wire); the dispatcher sets `id`. */
export declare class DeliveriesReply {
    [field: string]: unknown;
    id: number;
    ok: true;
    deliveries: readonly DeliveryFields[];
    constructor(deliveries: readonly DeliveryFields[]);
    /** The reply as plain wire data, as the hand-written frame encodes it. */
    toWire(): {
        id: number;
        ok: true;
        items: WireDelivery[];
    };
}
/** A reply as plain wire data: a DeliveriesReply's wire map, anything else as it is. */
export declare function plainReply(reply: Record<string, unknown>): Record<string, unknown>;
/** An ack reply; the dispatcher sets `id`. */
export declare class AckReply {
    [field: string]: unknown;
    id: number;
    ok: true;
    acked: number;
    stale: readonly string[];
    constructor(acked: number, stale: readonly string[]);
}
export declare class ReplyEncoder {
    private bytes;
    private view;
    private pos;
    /** The frame of a dequeue reply: a copy the caller keeps. */
    deliveriesFrame(id: number, items: readonly DeliveryFields[]): Uint8Array;
    /**
     * The same frame, left in the encoder's buffer (frameBytes) and good until
     * its next call, for a caller that copies it at once: its length in bytes.
     * No view is made, so this allocates nothing.
     */
    writeDeliveriesFrame(id: number, items: readonly DeliveryFields[]): number;
    /** The frame of an ack reply: a copy the caller keeps. */
    ackFrame(id: number, acked: number, stale: readonly string[]): Uint8Array;
    /** The same frame, left in frameBytes as writeDeliveriesFrame leaves its own: its length in bytes. */
    writeAckFrame(id: number, acked: number, stale: readonly string[]): number;
    /** The buffer the write*Frame calls leave their frame at the start of (it may be replaced by a larger one on a later call). */
    get frameBytes(): Uint8Array;
    private writeDeliveries;
    private writeAck;
    private delivery;
    /** Fill in the length; the frame as a view of the buffer, which the next call reuses. */
    private finish;
    /** Fill in the length; the frame's length in bytes (it starts the buffer). */
    private finishInPlace;
    /** Make room for `more` bytes past pos. Every write below relies on an earlier ensure. */
    private ensure;
    private raw;
    private arrayHeader;
    /** The same form @msgpack/msgpack picks for a number (needs 9 bytes of room). */
    private number;
    private stringHeader;
    /**
     * A str (needs 5 + 3 * length bytes of room). ASCII is written byte by
     * byte with the header taken from the length; at the first non-ASCII code
     * unit it starts over with the UTF-8 length counted and encodeInto.
     */
    private string;
    private nonAsciiString;
    /** A bin (needs 5 + length bytes of room). */
    private bin;
}
