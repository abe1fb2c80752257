import type { ItemState } from "./types.ts";
/** Every node's dead letters, each node's in its own order (oldest death first), taken from the nodes in turn, at most `limit`. */
export declare function interleaveDead(lists: readonly ItemState[][], limit: number): ItemState[];
/** The cursor of a merged `list` page: each node's own `next`, by address ("done" when that node has no more). */
export type ListCursor = Record<string, string>;
/** A node whose listing has ended (its `next` was null). */
export declare const listDone = "done";
export declare function encodeListCursor(cursor: ListCursor): string;
/** Null for a cursor this client did not make (the caller answers BAD_REQUEST-like usage). */
export declare function decodeListCursor(text: string): ListCursor | null;
/** Ready items first in delivery order (priority, deliver_at_ms), then the rest in enqueue order, as one node lists them. */
export declare function listOrder(a: ItemState, b: ItemState): number;
type Fields = Record<string, unknown>;
/**
 * `stats` replies of several nodes as one: counts and counters summed, flags
 * or'ed, clocks and worker kinds the largest, unmatchable requirement sets
 * summed per set; a namespace's `topic_count` (and `totals.topics`, when
 * every namespace listed all its topics) counts distinct topics.
 */
export declare function sumStats(replies: readonly Fields[]): Fields;
export {};
