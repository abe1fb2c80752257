// Goal: ItemStates keeps its indexes to itself (REVIEW item 4). Others read
// them through read-only views and queries and change them only through its
// transitions, so a new scheduling feature cannot reach past the transitions
// into an index. A source scan of the class's public members: every public
// field is readonly and of a read-only type (a primitive, `Readonly<…>` or
// a `Readonly…` interface), every public getter returns one, and there is no
// public setter. Methods are the transitions and queries, and pass.

import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { codeOnly } from "../../support/source-scan.ts";

const itemStatesPath = resolve(import.meta.dir, "../../../src/engine/state/item-states.ts");

/** A type a caller cannot change the index through. */
const readOnlyType = /^(number|string|boolean|Readonly<.+>|Readonly[A-Z]\w*(<.+>)?)$/;

/**
 * The public members of `className` in `source` that let a caller change
 * state: fields that are not readonly or not of a read-only type, getters
 * whose type is not read-only, setters. Formatting puts class members at
 * two spaces and constructor parameters at four, which the scan relies on.
 */
function mutablePublicMembers(source: string, className: string): string[] {
  const lines = codeOnly(source).split("\n");
  const start = lines.findIndex((line) => new RegExp(`^export class ${className}\\b`).test(line));
  if (start === -1) return [`class ${className} not found`];
  const found: string[] = [];
  let inConstructorParams = false;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\}/.test(line)) break;
    if (/^ {2}constructor\($/.test(line)) {
      inConstructorParams = true;
      continue;
    }
    if (inConstructorParams) {
      if (/^ {2}\)/.test(line)) inConstructorParams = false;
      else if (/^ {4}\S/.test(line)) {
        const param = line.trim().replace(/,$/, "");
        if (/^(readonly|public)\b/.test(param)) checkField(param.replace(/^public\s+/, ""), found);
      }
      continue;
    }
    if (!/^ {2}\S/.test(line)) continue;
    const member = line.trim();
    if (/^(private|protected|static)\b|^#|^\}|^\)/.test(member)) continue;
    if (/^set\s/.test(member)) {
      found.push(`public setter: ${member}`);
      continue;
    }
    const getter = /^get\s+(\w+)\(\)\s*:\s*(.+?)\s*\{$/.exec(member);
    if (getter !== null) {
      if (!readOnlyType.test(getter[2]!)) found.push(`getter ${getter[1]} returns ${getter[2]}, not a read-only type`);
      continue;
    }
    // A method: a name and its parameter list (maybe generic, maybe a generator).
    if (/^(async\s+)?\*?\s*\w+\s*[<(]/.test(member)) continue;
    checkField(member, found);
  }
  return found;
}

/** A public field `member` (its declaration, from its name on): readonly, and of a read-only type. */
function checkField(member: string, found: string[]): void {
  const field = /^(readonly\s+)?(\w+)\??\s*(?::\s*([^=;]+?))?\s*(=.*)?;?$/.exec(member);
  if (field === null) {
    found.push(`unreadable member: ${member}`);
    return;
  }
  const [, readonly, name, type] = field;
  if (readonly === undefined) found.push(`public field ${name} is not readonly`);
  else if (type === undefined || !readOnlyType.test(type.trim())) found.push(`public field ${name} has type ${type ?? "(inferred)"}, not a read-only type`);
}

describe("ItemStates' public surface", () => {
  test("ItemStates has no public mutable field, getter of a mutable type, or setter", () => {
    expect(mutablePublicMembers(readFileSync(itemStatesPath, "utf8"), "ItemStates")).toEqual([]);
  });

  test("the scan finds each kind of opening, and passes methods, private members and read-only types", () => {
    const source = [
      "export class K {",
      "  private readonly hidden = new Map<string, number>();",
      "  #alsoHidden = 1;",
      "  readonly table = new Map<string, number>();",
      "  count = 0;",
      "  readonly size: number = 0;",
      "  readonly view: ReadonlyMap<string, number>;",
      "  readonly limits: Readonly<Limits>;",
      "  readonly open: Set<string>;",
      "  constructor(",
      "    private readonly writer: Writer,",
      "    reader: Reader,",
      "    readonly boot: number,",
      "    readonly store: Store,",
      "  ) {",
      "    this.view = this.hidden;",
      "  }",
      "  get items(): ReadonlyItemTable {",
      "    return this.table;",
      "  }",
      "  get raw(): Map<string, number> {",
      "    return this.table;",
      "  }",
      "  set listener(f: () => void) {}",
      "  lease(item: Item, nowMs: number): Delivery {",
      "    return this.x;",
      "  }",
      "  *entries(): IterableIterator<number> {}",
      "}",
    ].join("\n");
    expect(mutablePublicMembers(source, "K")).toEqual([
      "public field table has type (inferred), not a read-only type",
      "public field count is not readonly",
      "public field open has type Set<string>, not a read-only type",
      "public field store has type Store, not a read-only type",
      "getter raw returns Map<string, number>, not a read-only type",
      "public setter: set listener(f: () => void) {}",
    ]);
  });
});
