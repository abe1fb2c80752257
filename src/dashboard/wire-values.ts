// Reading the fields of an op's reply (wire form: snake_case maps, as a TCP
// client decodes them) with their types checked, so the pages that use them
// hold typed values instead of casts. A field of the wrong type reads as
// absent, and a page shows "–" for it: the reply comes from this server's own
// dispatcher, so a wrong type is a bug to see on the page, not a reason to
// refuse the whole page.

export type WireMap = Readonly<Record<string, unknown>>;

export function isWireMap(value: unknown): value is WireMap {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

/** The maps of a list field; anything else in the list is skipped. */
export function wireMaps(value: unknown): WireMap[] {
  return Array.isArray(value) ? value.filter(isWireMap) : [];
}

export function numberField(map: WireMap, name: string): number | undefined {
  const value = map[name];
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

export function stringField(map: WireMap, name: string): string | undefined {
  const value = map[name];
  return typeof value === "string" ? value : undefined;
}

/** A list of strings (`after` ids, failed constraints); other entries are skipped. */
export function stringList(map: WireMap, name: string): string[] {
  const value = map[name];
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === "string") : [];
}
