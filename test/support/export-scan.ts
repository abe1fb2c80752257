// What a TypeScript file exports and what it imports from other files, for
// the tidy test's unused-export check (test/tidy.test.ts). Not a parser: it
// reads the statement forms this tree uses (formatted code, so a top-level
// export starts its line), and it reads only code, not comments or strings
// (codeOnly in source-scan.ts says which is which).

import { codeOnly } from "./source-scan.ts";

/** One exported name. */
export interface ExportedName {
  /** 1-based line of its export. */
  line: number;
  /** An interface or type alias (`export type { … }` too), not a value. */
  isType: boolean;
  /** Passed on from another file (`export { a } from "./x.ts"`), not declared here. */
  reexported: boolean;
}

/** One file's exports. */
export interface ExportTable {
  /** Names the file exports (`export function f`, `export { a as b }`, `export { c } from "…"`). */
  names: Map<string, ExportedName>;
  /** Specifiers of `export * from "…"`: every export of those files is one of this file's too. */
  starFrom: string[];
}

/** One use of another file: `names` imported from `spec`, or every export when `all` (an unresolved namespace or dynamic import). */
export interface ImportUse {
  spec: string;
  names: string[];
  all: boolean;
}

const identifier = "[A-Za-z_$][\\w$]*";

/** The statement at `index` is code (not in a comment or string): codeOnly keeps its first character. */
function isCode(code: string, index: number): boolean {
  return code[index] !== " ";
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text[i] === "\n") line++;
  return line;
}

/** The names of an `{ a, b as c, type d }` list: `[local, exported]` pairs. */
function listNames(list: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const part of list.split(",")) {
    const words = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/);
    const local = words[0]?.trim() ?? "";
    if (local === "") continue;
    pairs.push([local, (words[1] ?? local).trim()]);
  }
  return pairs;
}

/** A file's exports (a `.d.ts` file's ambient declarations are not read: it has none of its own). */
export function exportsOf(text: string): ExportTable {
  const code = codeOnly(text);
  const names = new Map<string, ExportedName>();
  const starFrom: string[] = [];
  const declaration = new RegExp(
    `^export\\s+(?:declare\\s+)?(?:default\\s+)?(?:async\\s+)?(?:abstract\\s+)?(function\\*?|class|const|let|var|interface|type|enum|namespace)\\s+(${identifier})`,
    "gm",
  );
  for (const match of text.matchAll(declaration)) {
    if (!isCode(code, match.index)) continue;
    names.set(match[2]!, { line: lineAt(text, match.index), isType: match[1] === "interface" || match[1] === "type", reexported: false });
  }
  for (const match of text.matchAll(/^export\s+(type\s+)?\{([^}]*)\}(\s*from\b)?/gm)) {
    if (!isCode(code, match.index)) continue;
    const line = lineAt(text, match.index);
    for (const part of match[2]!.split(",")) {
      const [local] = listNames(part).map(([, exported]) => exported);
      if (local === undefined) continue;
      names.set(local, { line, isType: match[1] !== undefined || /^\s*type\s/.test(part), reexported: match[3] !== undefined });
    }
  }
  for (const match of text.matchAll(/^export\s+\*\s+from\s+["']([^"']+)["']/gm)) if (isCode(code, match.index)) starFrom.push(match[1]!);
  return { names, starFrom };
}

/** What a file takes from other files: named, default, namespace and dynamic imports, and re-exports. */
export function importsOf(text: string): ImportUse[] {
  const code = codeOnly(text);
  const uses: ImportUse[] = [];
  const from = `from\\s*["']([^"']+)["']`;
  // import { a, b as c } from "x";  import d, { e } from "x";  export { f } from "x"
  for (const match of text.matchAll(new RegExp(`\\b(?:import|export)\\s+(?:type\\s+)?(?:(${identifier})\\s*,\\s*)?\\{([^}]*)\\}\\s*${from}`, "g"))) {
    if (!isCode(code, match.index)) continue;
    const names = listNames(match[2]!).map(([local]) => local);
    if (match[1] !== undefined) names.push("default");
    uses.push({ spec: match[3]!, names, all: false });
  }
  // import d from "x"
  for (const match of text.matchAll(new RegExp(`\\bimport\\s+(?:type\\s+)?(${identifier})\\s+${from}`, "g"))) {
    if (isCode(code, match.index) && match[1] !== "type") uses.push({ spec: match[2]!, names: ["default"], all: false });
  }
  // import * as ns from "x": the names read as ns.name in this file.
  for (const match of text.matchAll(new RegExp(`\\bimport\\s+(?:type\\s+)?\\*\\s+as\\s+(${identifier})\\s+${from}`, "g"))) {
    if (!isCode(code, match.index)) continue;
    const names = [...code.matchAll(new RegExp(`\\b${match[1]!.replace("$", "\\$")}\\.(${identifier})`, "g"))].map((m) => m[1]!);
    uses.push({ spec: match[2]!, names, all: false });
  }
  // const { a, b } = await import("x"); import("x").Name (a type); any other import("x") counts every export.
  for (const match of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    if (!isCode(code, match.index)) continue;
    const before = text.slice(Math.max(0, match.index - 300), match.index);
    const destructured = /(?:const|let)\s*\{([^}]*)\}\s*=\s*(?:await\s+)?$/.exec(before);
    const member = new RegExp(`^\\.(${identifier})`).exec(text.slice(match.index + match[0].length));
    if (destructured !== null) uses.push({ spec: match[1]!, names: listNames(destructured[1]!.replaceAll(":", " as ")).map(([local]) => local), all: false });
    else if (member !== null) uses.push({ spec: match[1]!, names: [member[1]!], all: false });
    else uses.push({ spec: match[1]!, names: [], all: true });
  }
  return uses;
}
