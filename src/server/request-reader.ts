// Reads and checks request fields for the op files. A RequestReader keeps the
// first failure it meets (BAD_REQUEST for a wrong type or an out-of-range
// value, TOO_LARGE for a size or count over its limit), with the field's path
// (`items[3].priority`) and, inside a batch, the item's index. Op files read
// every field, then return `reader.failure` if one was recorded.
//
// Wire rules applied here: nil counts as absent; integer fields take
// MessagePack integers only (a whole float decodes as WholeFloat and is
// refused); bin fields are the decoder's copies (msgpack-codec.ts), not
// views of the network buffer, and are kept as they are.

import { isPlainMap, unmarkFloats } from "../protocol/msgpack-codec.ts";
import { isSharedDecodedMap } from "../protocol/repeated-map-cache.ts";

export type Source = Record<string, unknown>;

/**
 * A request the server refuses before the engine sees it: a field of the
 * wrong type, out of range or too large. It names the wire's field path
 * itself; engine failures name a location instead (wire-field.ts).
 */
export interface RequestFailure {
  code: "BAD_REQUEST" | "TOO_LARGE";
  message: string;
  field: string;
  /** Position in a batch or list. */
  index?: number;
}

export interface IntRange {
  min: number;
  max: number;
  /** Above max: TOO_LARGE (a count) instead of BAD_REQUEST (a value out of range). */
  overMaxTooLarge?: boolean;
}


/** UTF-8 length without encoding when the UTF-16 length already decides it. */
function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

export class RequestReader {
  failure: RequestFailure | null = null;
  private listName: string | null = null;
  private listIndex = 0;

  /** Forget any failure and list position: ready for another request. */
  reset(): void {
    this.failure = null;
    this.listName = null;
    this.listIndex = 0;
  }

  /** Subsequent field paths are `${list}[${index}].${name}` and failures carry `index`. */
  at(listName: string, index: number): void {
    this.listName = listName;
    this.listIndex = index;
  }

  /** Subsequent field paths are `${map}.${name}` (a map field such as a schedule's `item`), with no index. */
  within(mapName: string): void {
    this.listName = mapName;
    this.listIndex = -1;
  }

  /** Back to top-level paths. */
  top(): void {
    this.listName = null;
  }

  path(name: string): string {
    if (this.listName === null) return name;
    if (this.listIndex < 0) return name === "" ? this.listName : `${this.listName}.${name}`;
    return name === "" ? `${this.listName}[${this.listIndex}]` : `${this.listName}[${this.listIndex}].${name}`;
  }

  fail(code: "BAD_REQUEST" | "TOO_LARGE", name: string, message: string): void {
    if (this.failure !== null) return;
    const field = this.path(name);
    const failure: RequestFailure = { code, message: `${field}: ${message}`, field };
    if (this.listName !== null && this.listIndex >= 0) failure.index = this.listIndex;
    this.failure = failure;
  }

  /** An integer field; null when absent. */
  int(source: Source, name: string, range: IntRange): number | null {
    return this.intBetween(source, name, range.min, range.max, range.overMaxTooLarge === true);
  }

  /**
   * int() with its bounds as arguments: for fields read per batch item, where
   * an IntRange literal at the call site would be one object per field per
   * item (six per enqueued item), absent fields included.
   */
  intBetween(source: Source, name: string, min: number, max: number, overMaxTooLarge = false): number | null {
    const value = source[name];
    if (value === undefined || value === null) return null;
    if (typeof value !== "number" || !Number.isInteger(value)) {
      this.fail("BAD_REQUEST", name, "must be an integer");
      return null;
    }
    if (value < min) {
      this.fail("BAD_REQUEST", name, `must be at least ${min}`);
      return null;
    }
    if (value > max) {
      this.fail(overMaxTooLarge ? "TOO_LARGE" : "BAD_REQUEST", name, `must be at most ${max}`);
      return null;
    }
    return value;
  }

  requiredInt(source: Source, name: string, range: IntRange): number | null {
    if (source[name] === undefined || source[name] === null) {
      this.fail("BAD_REQUEST", name, "is required");
      return null;
    }
    return this.int(source, name, range);
  }

  /** A string of bytesMin..bytesMax UTF-8 bytes; longer is TOO_LARGE. Null when absent. */
  string(source: Source, name: string, bytesMin: number, bytesMax: number): string | null {
    const value = source[name];
    if (value === undefined || value === null) return null;
    if (typeof value !== "string") {
      this.fail("BAD_REQUEST", name, "must be a string");
      return null;
    }
    const bytes = value.length > bytesMax ? value.length : utf8Bytes(value);
    if (bytes > bytesMax) {
      this.fail("TOO_LARGE", name, `must be at most ${bytesMax} bytes`);
      return null;
    }
    if (bytes < bytesMin) {
      this.fail("BAD_REQUEST", name, bytesMin === 1 ? "must not be empty" : `must be at least ${bytesMin} bytes`);
      return null;
    }
    return value;
  }

  requiredString(source: Source, name: string, bytesMin: number, bytesMax: number): string | null {
    if (source[name] === undefined || source[name] === null) {
      this.fail("BAD_REQUEST", name, "is required");
      return null;
    }
    return this.string(source, name, bytesMin, bytesMax);
  }

  /** A bin field of at most bytesMax bytes (the decoder's own copy: not copied again); null when absent. */
  bin(source: Source, name: string, bytesMax: number): Uint8Array | null {
    const value = source[name];
    if (value === undefined || value === null) return null;
    if (!(value instanceof Uint8Array)) {
      this.fail("BAD_REQUEST", name, "must be bin (bytes)");
      return null;
    }
    if (value.length > bytesMax) {
      this.fail("TOO_LARGE", name, `must be at most ${bytesMax} bytes`);
      return null;
    }
    return value;
  }

  /** An array of countMin..countMax elements (more is TOO_LARGE); null when absent. */
  array(source: Source, name: string, countMin: number, countMax: number): unknown[] | null {
    const value = source[name];
    if (value === undefined || value === null) return null;
    if (!Array.isArray(value)) {
      this.fail("BAD_REQUEST", name, "must be an array");
      return null;
    }
    if (value.length > countMax) {
      this.fail("TOO_LARGE", name, `must hold at most ${countMax} entries`);
      return null;
    }
    if (value.length < countMin) {
      this.fail("BAD_REQUEST", name, `must hold at least ${countMin} entries`);
      return null;
    }
    return value;
  }

  requiredArray(source: Source, name: string, countMin: number, countMax: number): unknown[] | null {
    if (source[name] === undefined || source[name] === null) {
      this.fail("BAD_REQUEST", name, "is required");
      return null;
    }
    return this.array(source, name, countMin, countMax);
  }

  /** An array of strings (ids, receipts) of at most bytesMax bytes each. */
  stringArray(source: Source, name: string, countMin: number, countMax: number, bytesMax: number): string[] | null {
    const list = this.requiredArray(source, name, countMin, countMax);
    if (list === null) return null;
    for (let i = 0; i < list.length; i++) {
      const value = list[i];
      if (typeof value !== "string") {
        this.fail("BAD_REQUEST", `${name}[${i}]`, "must be a string");
        if (this.failure !== null && this.listName === null) this.failure.index = i;
        return null;
      }
      if (value.length > bytesMax && utf8Bytes(value) > bytesMax) {
        this.fail("TOO_LARGE", `${name}[${i}]`, `must be at most ${bytesMax} bytes`);
        if (this.failure !== null && this.listName === null) this.failure.index = i;
        return null;
      }
    }
    return list as string[];
  }

  /** A map of arbitrary values (requires, capabilities): copied, whole floats back to numbers. */
  anyMap(source: Source, name: string): Record<string, unknown> | null {
    const value = source[name];
    if (value === undefined || value === null) return null;
    if (!isPlainMap(value)) {
      this.fail("BAD_REQUEST", name, "must be a map");
      return null;
    }
    // A map the decoder shares between requests is frozen and holds no float or bin: nothing to copy.
    if (isSharedDecodedMap(value)) return value;
    return unmarkFloats(value) as Record<string, unknown>;
  }

  /** A boolean; null when absent. */
  bool(source: Source, name: string): boolean | null {
    const value = source[name];
    if (value === undefined || value === null) return null;
    if (typeof value !== "boolean") {
      this.fail("BAD_REQUEST", name, "must be a boolean");
      return null;
    }
    return value;
  }

  /** A map whose fields the caller reads with this reader (`rate`); null when absent. */
  map(source: Source, name: string): Source | null {
    const value = source[name];
    if (value === undefined || value === null) return null;
    if (!isPlainMap(value)) {
      this.fail("BAD_REQUEST", name, "must be a map");
      return null;
    }
    return value;
  }

  /** One of a fixed set of strings; null when absent. */
  oneOf<T extends string>(source: Source, name: string, choices: readonly T[]): T | null {
    const value = source[name];
    if (value === undefined || value === null) return null;
    if (typeof value !== "string" || !(choices as readonly string[]).includes(value)) {
      this.fail("BAD_REQUEST", name, `must be one of ${choices.map((c) => `"${c}"`).join(", ")}`);
      return null;
    }
    return value as T;
  }

  /** An element of a list that must be a map (`items[3]`). */
  element(value: unknown): Source | null {
    if (!isPlainMap(value)) {
      this.fail("BAD_REQUEST", "", "must be a map");
      return null;
    }
    return value;
  }
}

