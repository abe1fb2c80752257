// An enqueued item's `requires` and `prefers`, parsed once per frozen map
// (frozen-parse-memo.ts): items of one kind of job repeat the same maps. A
// preference is kept per parsed map and wait, so items that repeat one share
// one Preference and the registry finds its signature without building keys.

import type { Limits } from "../../limits.ts";
import { FrozenParseMemo } from "./frozen-parse-memo.ts";
import { parsePrefers } from "./parse-prefers.ts";
import { parseRequires } from "./parse-requires.ts";
import { type ParseResult, Preference, type Prefers, type Requires } from "./types.ts";

export class FrozenParses {
  private readonly requires: FrozenParseMemo<Requires | null>;
  private readonly prefers: FrozenParseMemo<Prefers | null>;
  /** Per parsed `prefers` (shared while its map is), its Preference for each wait asked for. */
  private readonly preferences = new WeakMap<Prefers, Map<number, Preference>>();

  constructor(limits: Readonly<Limits>) {
    this.requires = new FrozenParseMemo((raw) => parseRequires(raw, limits));
    this.prefers = new FrozenParseMemo((raw) => parsePrefers(raw, limits));
  }

  /** parseRequires, remembered when `raw` is frozen and valid. */
  requiresOf(raw: Record<string, unknown>): ParseResult<Requires | null> {
    return this.requires.of(raw);
  }

  /** parsePrefers and the item's wait as a Preference (null for an empty map), remembered when `raw` is frozen and valid. */
  preferenceOf(raw: Record<string, unknown>, preferWaitMs: number): ParseResult<Preference | null> {
    const parsed = this.prefers.of(raw);
    if (!parsed.ok || parsed.value === null) return parsed as ParseResult<null>;
    let byWait = this.preferences.get(parsed.value);
    if (byWait === undefined) {
      byWait = new Map();
      this.preferences.set(parsed.value, byWait);
    }
    let preference = byWait.get(preferWaitMs);
    if (preference === undefined) {
      preference = new Preference(parsed.value, preferWaitMs, false);
      byWait.set(preferWaitMs, preference);
    }
    return { ok: true, value: preference };
  }
}
