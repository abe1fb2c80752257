import type { WireDelivery, WireEndedItemState, WireItemState } from "../protocol/wire-types.ts";
import type { WireMap } from "./transport.ts";
import type { Delivery, EndedItemState, EnqueueItem, ItemState } from "./types.ts";
/** An ended item's `result` (the contract's "Results"), which protocol/wire-types.ts does not spell yet. */
type WireEndedIn = WireEndedItemState & {
    result?: Uint8Array;
};
/** Bytes as sent: a string goes as its UTF-8. */
export declare function bytes(value: Uint8Array | string | undefined): Uint8Array | undefined;
/** One item of an `enqueue` (or a schedule's `item`), snake_case; undefined fields are dropped by the codec. */
export declare function enqueueItemToWire(item: EnqueueItem, trace: string | undefined): WireMap;
/** A schedule's stored `item` read back (the `schedules` reply) as the EnqueueItem it was given as. */
export declare function enqueueItemFromWire(w: WireMap): EnqueueItem;
export declare function deliveryFromWire(d: WireDelivery): Delivery;
export declare function itemStateFromWire(s: WireItemState): ItemState;
/** One entry of a `get` or `wait` reply: a live item, an ended one (with its result, if its ack gave one), or null. */
export declare function anyStateFromWire(s: WireItemState | WireEndedIn | null): ItemState | EndedItemState | null;
export {};
