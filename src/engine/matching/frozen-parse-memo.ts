// A parse remembered for frozen maps: the request decoder hands every request
// that repeats a map's bytes (a worker's capabilities, an item's requires or
// prefers) the same frozen map (protocol/repeated-map-cache.ts), and a frozen
// map cannot change, so neither can its parse. Entries are weak: they go with
// the decoder's map. A map that is not frozen is parsed each time; failures
// are never kept. Successful results are handed out again as they are
// (callers only read them).

import type { ParseResult } from "./types.ts";

export class FrozenParseMemo<T> {
  private readonly parsed = new WeakMap<object, ParseResult<T>>();

  constructor(private readonly parse: (raw: Record<string, unknown>) => ParseResult<T>) {}

  of(raw: Record<string, unknown>): ParseResult<T> {
    const frozen = Object.isFrozen(raw);
    if (frozen) {
      const known = this.parsed.get(raw);
      if (known !== undefined) return known;
    }
    const result = this.parse(raw);
    if (frozen && result.ok) this.parsed.set(raw, result);
    return result;
  }
}
