// Where in a request an engine failure lies, in the engine's own terms: which
// of an op's inputs, which item of an enqueue batch, and, inside an item, which
// part (its topic, a position in its `after` list, a place in its `requires`
// map). The engine never formats a field path: the server renders a location
// as the wire's `details.field` and `details.index` (server/wire-field.ts).

import type { MapPath } from "../matching/types.ts";

export type FailureLocation =
  /** The namespace the op names (a new one over namespacesMax). */
  | { readonly kind: "namespace" }
  /** An enqueue's batch as a whole (live items, the namespace quota). */
  | { readonly kind: "batch" }
  /** A pause's topic. */
  | { readonly kind: "topic" }
  /** A dequeue's wait (it may not park). */
  | { readonly kind: "wait" }
  /** A place in a dequeue's capabilities map. */
  | { readonly kind: "capabilities"; readonly at: MapPath }
  /** One item of an enqueue batch, by its index in the batch. */
  | { readonly kind: "item"; readonly index: number; readonly part: ItemPart }
  /** A schedule's name (a new one past the schedules' limits). */
  | { readonly kind: "scheduleName" }
  /** A part of a schedule's item. */
  | { readonly kind: "scheduleItem"; readonly part: ItemPart };

/** The part of one enqueued item a failure is about. */
export type ItemPart =
  | { readonly of: "topic" }
  /** The item's group (a schedule's item in cluster mode may name none). */
  | { readonly of: "group" }
  /** The `after` list, or (position not null) one id in it. */
  | { readonly of: "after"; readonly position: number | null }
  /** A place in the `requires` map (wholeMap: the map itself). */
  | { readonly of: "requires"; readonly at: MapPath }
  /** A place in the `prefers` map (wholeMap: the map itself). */
  | { readonly of: "prefers"; readonly at: MapPath };

export const atNamespace: FailureLocation = Object.freeze({ kind: "namespace" });
export const atBatch: FailureLocation = Object.freeze({ kind: "batch" });
export const atTopic: FailureLocation = Object.freeze({ kind: "topic" });
export const atWait: FailureLocation = Object.freeze({ kind: "wait" });
export const atScheduleName: FailureLocation = Object.freeze({ kind: "scheduleName" });

/** Item `index` of the batch, part `part`. */
export function atItem(index: number, part: ItemPart): FailureLocation {
  return { kind: "item", index, part };
}
