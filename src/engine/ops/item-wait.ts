// One parked `wait` (ops/item-waits.ts holds them): what it awaits and how
// it answers. A leaf of its own so the deadline union
// (time/engine-deadlines.ts) can name its timeout without importing the
// registry, which imports the item states.

import type { HeapNode } from "../../lib/pairing-heap.ts";
import type { ItemKey } from "../../storage/store.ts";
import type { EndedItemState, ItemState } from "../api.ts";
import type { Deadline, DeadlineKind } from "../time/deadlines.ts";

/** A parked wait's timeout. */
export type ItemWaitDeadline = Deadline<typeof DeadlineKind.ItemWaitTimeout, ItemWait>;

/** Each id's state, as `get` answers it. */
export type ItemStatesAnswer = Array<ItemState | EndedItemState | null>;

export class ItemWait {
  timeoutNode: HeapNode<ItemWaitDeadline> | null = null;
  settled = false;
  constructor(
    readonly owner: number,
    readonly ns: string,
    readonly ids: readonly string[],
    /** Keys of the live items still awaited. */
    readonly keys: Set<ItemKey>,
    readonly resolve: (items: ItemStatesAnswer) => void,
  ) {}
}
