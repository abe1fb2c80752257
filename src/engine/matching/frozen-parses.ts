// An enqueued item's `requires` and `prefers`, parsed once per frozen map:
// the request decoder hands every item whose map repeats the bytes of an
// earlier one the same frozen map (protocol/repeated-map-cache.ts), and a
// frozen map cannot change, so neither can its parse. As CapabilitiesParser
// does for a worker's capabilities. Entries are weak: they go with the
// decoder's map. A map that is not frozen is parsed each time; failures are
// never kept. A preference is kept per wait, so items that repeat one share
// one Preference and the registry finds its signature without building keys.

import type { Limits } from "../../limits.ts";
import { parsePrefers } from "./parse-prefers.ts";
import { parseRequires } from "./parse-requires.ts";
import { type ParseResult, Preference, type Requires } from "./types.ts";

interface PrefersEntry {
  readonly result: ParseResult<Preference | null>;
  /** The parsed map's preference for each wait asked for (the first in `result`). */
  readonly byWait: Map<number, Preference>;
}

export class FrozenParses {
  private readonly requires = new WeakMap<object, ParseResult<Requires | null>>();
  private readonly prefers = new WeakMap<object, PrefersEntry>();

  constructor(private readonly limits: Readonly<Limits>) {}

  /** parseRequires, remembered when `raw` is frozen and valid. */
  requiresOf(raw: Record<string, unknown>): ParseResult<Requires | null> {
    const frozen = Object.isFrozen(raw);
    if (frozen) {
      const known = this.requires.get(raw);
      if (known !== undefined) return known;
    }
    const result = parseRequires(raw, this.limits);
    if (frozen && result.ok) this.requires.set(raw, result);
    return result;
  }

  /** parsePrefers and the item's wait as a Preference (null for an empty map), remembered when `raw` is frozen and valid. */
  preferenceOf(raw: Record<string, unknown>, preferWaitMs: number): ParseResult<Preference | null> {
    const frozen = Object.isFrozen(raw);
    const known = frozen ? this.prefers.get(raw) : undefined;
    if (known !== undefined) {
      const parsed = known.result;
      if (!parsed.ok || parsed.value === null) return parsed;
      let preference = known.byWait.get(preferWaitMs);
      if (preference === undefined) {
        preference = new Preference(parsed.value.prefers, preferWaitMs, false);
        known.byWait.set(preferWaitMs, preference);
      }
      return { ok: true, value: preference };
    }
    const parsed = parsePrefers(raw, this.limits);
    if (!parsed.ok) return parsed;
    const preference = parsed.value === null ? null : new Preference(parsed.value, preferWaitMs, false);
    const result: ParseResult<Preference | null> = { ok: true, value: preference };
    if (frozen) this.prefers.set(raw, { result, byWait: new Map(preference === null ? [] : [[preferWaitMs, preference]]) });
    return result;
  }
}
