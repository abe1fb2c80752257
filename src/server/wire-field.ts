// The one place an engine failure's location (engine/failures/failure-location.ts)
// becomes the wire's `details.field` path and `details.index`: the engine says
// which input and which part of it, in its own terms; the wire's names
// (`items[3].requires.gpu.in[2]`, `wait_ms`) are made here. A location inside
// a batch item carries the item's index; every other location carries none.
// The server's own decoding failures name their wire paths directly
// (request-reader.ts): the server speaks the wire.

import type { FailureLocation, ItemPart, MapPath } from "../engine/api.ts";

/** The wire's field path of a location. */
export function wireField(at: FailureLocation): string {
  switch (at.kind) {
    case "namespace":
      return "ns";
    case "batch":
      return "items";
    case "topic":
      return "topic";
    case "wait":
      return "wait_ms";
    case "capabilities":
      return mapField("capabilities", at.at);
    case "item":
      return itemField(`items[${at.index}]`, at.part);
    case "scheduleName":
      return "name";
    case "scheduleItem":
      return itemField("item", at.part);
  }
}

/** The wire's batch index of a location: the item's, or undefined outside a batch item. */
export function wireIndex(at: FailureLocation): number | undefined {
  return at.kind === "item" ? at.index : undefined;
}

function itemField(item: string, part: ItemPart): string {
  switch (part.of) {
    case "topic":
      return `${item}.topic`;
    case "group":
      return `${item}.group`;
    case "after":
      return part.position === null ? `${item}.after` : `${item}.after[${part.position}]`;
    case "requires":
      return mapField(`${item}.requires`, part.at);
    case "prefers":
      return mapField(`${item}.prefers`, part.at);
  }
}

/** `map`, then `.feature`, `.operator` and `[position]` as far as the path goes. */
function mapField(map: string, at: MapPath): string {
  let field = map;
  if (at.feature !== null) field += `.${at.feature}`;
  if (at.operator !== null) field += `.${at.operator}`;
  if (at.position !== null) field += `[${at.position}]`;
  return field;
}
